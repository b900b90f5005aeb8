# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# NVMe over Fabrics (RDMA) in the guest, for selftests/vm/nvmeof.sh and
# make bench's NVMe-oF table (tools/bench/nvme.sh): the nvmet and
# nvme-rdma modules, an nvmet target on a null_blk disk (configfs) and
# the host's connection to it, both on the driver under test. Sourced
# after selftests/vm/lib.sh, selftests/verbs/topo.sh and ulp.sh (run, w,
# t, unmod); runs in the guest as root. NVMF_NQN names the subsystem.

NVMF_NQN=${NVMF_NQN:-nqn.2024-01.org.softrc:nvmeof-selftest}
NVMF_HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:$(cat /proc/sys/kernel/random/uuid)
NVMF_CFG=/sys/kernel/config/nvmet
NVMF_NULLB=/sys/kernel/config/nullb/nullb0

# nvmf_modules [nvmet_rdma parameters...]: null_blk, nvmet, nvmet_rdma
# and nvme_rdma loaded, configfs mounted
nvmf_modules() {
	# On a lockdep kernel, the host side runs without NVMe multipath. In
	# 6.1 the multipath head's partition scan work takes the disk's
	# open_mutex, and blkdev_put -> nvme_mpath_remove_disk flushes that
	# work with open_mutex held: lockdep reports "possible circular
	# locking dependency" there on disconnect, whatever the transport (no
	# RDMA frame on either chain), and then switches itself off for the
	# rest of the boot. multipath=N keeps lockdep on for every softrc path
	# nvmeof.sh drives; Debian's kernel (no lockdep) keeps the default.
	if [ -e /proc/lockdep ]; then
		[ -d /sys/module/nvme_core ] ||
			run t 60 modprobe nvme_core multipath=N || return 1
		if [ "$(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null)" != N ]; then
			echo "nvme_core multipath is on under lockdep"
			return 1
		fi
	fi
	# nvmet pulls in configfs, which creates the mount point
	run t 60 modprobe null_blk nr_devices=0 &&
		run t 60 modprobe nvmet &&
		run t 60 modprobe nvmet_rdma "$@" &&
		run t 60 modprobe nvme_rdma || return 1
	mountpoint -q /sys/kernel/config ||
		run mount -t configfs configfs /sys/kernel/config
}

# nvmf_target_up IP [ATTR=VALUE...]: a null_blk disk (64 MiB, memory
# backed, 4 KiB blocks; each ATTR=VALUE another of its configfs
# attributes, or a different value), a subsystem with that namespace, an
# rdma port IP:4420
nvmf_target_up() {
	local s=$NVMF_CFG/subsystems/$NVMF_NQN p=$NVMF_CFG/ports/1 ip=$1 a
	shift

	if [ ! -d $NVMF_NULLB ]; then
		run mkdir $NVMF_NULLB || return 1
		for a in size=64 memory_backed=1 blocksize=4096 "$@" power=1; do
			w "$NVMF_NULLB/${a%%=*}" "${a#*=}" || return 1
		done
	fi
	wait_until 10 test -b /dev/nullb0 || { echo "no /dev/nullb0"; return 1; }
	run mkdir "$s" && w "$s/attr_allow_any_host" 1 &&
		run mkdir "$s/namespaces/1" && w "$s/namespaces/1/device_path" /dev/nullb0 &&
		w "$s/namespaces/1/enable" 1 || return 1
	run mkdir $p && w $p/addr_trtype rdma && w $p/addr_adrfam ipv4 &&
		w $p/addr_traddr "$ip" && w $p/addr_trsvcid 4420 || return 1
	# enabling the port: nvmet-rdma binds and listens an rdma_cm ID
	run ln -s "$s" "$p/subsystems/$NVMF_NQN"
}

# nvmf_target_down: the nvmet configfs tree in reverse order, then the disk
nvmf_target_down() {
	local l ns s p rc=0

	for l in "$NVMF_CFG"/ports/*/subsystems/*; do
		[ -L "$l" ] && { t 60 rm -f "$l" || rc=1; }
	done
	for s in "$NVMF_CFG"/subsystems/*; do
		[ -d "$s" ] || continue
		for ns in "$s"/namespaces/*; do
			[ -d "$ns" ] || continue
			echo 0 >"$ns/enable"
			t 60 rmdir "$ns" || rc=1
		done
		t 60 rmdir "$s" || rc=1
	done
	for p in "$NVMF_CFG"/ports/*; do
		[ -d "$p" ] && { t 60 rmdir "$p" || rc=1; }
	done
	if [ -d $NVMF_NULLB ]; then
		echo 0 >$NVMF_NULLB/power
		rmdir $NVMF_NULLB || rc=1
	fi
	[ "$rc" = 0 ] || echo "nvmet/null_blk configfs teardown left entries"
	return $rc
}

# nvmf_teardown: every connection, the target and the modules gone
nvmf_teardown() {
	local rc=0
	t 60 nvme disconnect-all >/dev/null 2>&1 || rc=1
	nvmf_target_down || rc=1
	unmod nvme_rdma nvmet_rdma nvmet null_blk || rc=1
	return $rc
}

# nvmf_bdev: the block device of our subsystem's namespace (the native
# multipath head when there is one: its parent is the subsystem)
nvmf_bdev() {
	local b n
	for b in /sys/block/nvme*; do
		n=${b##*/}
		[[ $n =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NVMF_NQN" ] || continue
		[ -b "/dev/$n" ] || continue
		echo "/dev/$n"
		return 0
	done
	return 1
}

# nvmf_connect IP QUEUES [nvme connect options...]: connect with QUEUES
# I/O queues (nvme-rdma makes at most one per online CPU), wait for the
# disk
nvmf_connect() {
	local ip=$1 q=$2 src=()
	shift 2
	[ "$ip" = 10.0.0.1 ] || src=(-w 10.0.0.1)
	run t 120 nvme connect -t rdma -a "$ip" -s 4420 -n "$NVMF_NQN" -i "$q" \
		"${src[@]}" -q "$NVMF_HOSTNQN" "$@" || return 1
	wait_until 30 nvmf_bdev || { echo "no namespace block device"; ls /sys/block; return 1; }
	echo "# $(nvmf_bdev) via $ip"
}

nvmf_disconnect() {
	run t 120 nvme disconnect -n "$NVMF_NQN" >/dev/null &&
		wait_until 30 bash -c "! ls /sys/block | grep -qE '^nvme[0-9]+n[0-9]+$'"
}

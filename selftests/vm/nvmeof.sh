#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics, RDMA transport, with both ends on the RDMA driver
# under test (SOFTRC_DRIVER=softrc, default, or rxe): the kernel's own
# RDMA storage stack (nvmet-rdma target, nvme-rdma host; rdma_cm, QP1
# MADs for the CM, fast registration on the host, rdma_rw READ/WRITE on
# the target, kernel SRQs with nvmet_rdma use_srq=1) carrying real block
# I/O that fio checks (crc32c verify). Per topology:
#   - an nvmet target in configfs: one subsystem (allow_any_host), one
#     namespace on a memory-backed null_blk disk (64 MiB), an rdma port on
#     the target address, port 4420
#   - nvme connect (2 I/O queues), fio randrw 4 KiB and 128 KiB with
#     crc32c verify, IOPS and MB/s as diagnostics, nvme disconnect
#   - wire only: the same under netem loss 1 % on both veth ends (on loop
#     softrc's self path never reaches the veth, so netem would not apply)
#   - the same with nvmet_rdma reloaded with use_srq=1 (the target's SRQs
#     are checked in `rdma res show srq`)
#   - `rdma link del` of the target's device in the middle of fio: the host
#     must see errors and try to reconnect (ctrl_loss_tmo bounds it), fio
#     must end, and then disconnect, the nvmet teardown, rmmod nvme_rdma
#     nvmet_rdma and the driver's unload must all return, with no
#     WARNING/BUG/Oops in the kernel log
#
# Kernel ULPs (rdma_cm's kernel users, nvme-rdma, nvmet-rdma) only work in
# init_net, so both topologies live there (not in topo.sh's netns pair):
#   loop: va 10.0.0.1 (s0); host and target both on s0
#   wire: va 10.0.0.1 (s0, host) === vb 10.0.0.2 (s1, target), policy
#         routing across the veth (topo_veth_routing, as topo.sh does for
#         rxe), so the traffic crosses the veth and netem applies
# Every step runs under `timeout` (scaled by SOFTRC_TIME_SCALE): a hung
# kernel path shows as a `not ok`, never as a stuck suite.
set -u
# shellcheck source=selftests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/verbs/topo.sh
. "$REPO/selftests/verbs/topo.sh"
# shellcheck source=selftests/verbs/ulp.sh
. "$REPO/selftests/verbs/ulp.sh"

NQN=nqn.2024-01.org.softrc:nvmeof-selftest
HOSTNQN=nqn.2014-08.org.nvmexpress:uuid:$(cat /proc/sys/kernel/random/uuid)
CFG=/sys/kernel/config/nvmet
NULLB=/sys/kernel/config/nullb/nullb0
FIO_OUT=/tmp/nvmeof.$$.fio
FIO_PID=
# the kernel log before this suite is not ours to judge
KLOG0=$(dmesg | wc -l)

klog_new() {
	dmesg | tail -n +$((KLOG0 + 1))
}

# fio_failed: after a failed fio_verify, the kernel's word on it
fio_failed() {
	klog_new | grep -E 'nvme|nvmet|softrc|rxe' | tail -15 | sed 's/^/# klog: /'
}

nvmf_modules() {
	# On a lockdep kernel, the host side runs without NVMe multipath. In
	# 6.1 the multipath head's partition scan work takes the disk's
	# open_mutex, and blkdev_put -> nvme_mpath_remove_disk flushes that
	# work with open_mutex held: lockdep reports "possible circular
	# locking dependency" there on disconnect, whatever the transport (no
	# RDMA frame on either chain), and then switches itself off for the
	# rest of the boot. multipath=N keeps lockdep on for every softrc path
	# this suite drives; Debian's kernel (no lockdep) keeps the default.
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

# nvme_ios: reads + writes completed on every NVMe disk and path (the
# multipath head does not count its I/O in 6.1)
nvme_ios() {
	cat /sys/class/block/nvme*/stat 2>/dev/null | awk '{ n += $1 + $5 } END { print n + 0 }'
}
export -f nvme_ios

# hang_report: what the host's NVMe stack is doing (KTAP diagnostics)
hang_report() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ -e "$c/state" ] && echo "# $topo: ${c##*/} state $(cat "$c/state")"
	done
	dstate_report
}

# target_up IP: null_blk disk, subsystem, namespace, rdma port IP:4420
target_up() {
	local s=$CFG/subsystems/$NQN p=$CFG/ports/1

	if [ ! -d $NULLB ]; then
		run mkdir $NULLB || return 1
		w $NULLB/size 64 && w $NULLB/memory_backed 1 &&
			w $NULLB/blocksize 4096 && w $NULLB/power 1 || return 1
	fi
	wait_until 10 test -b /dev/nullb0 || { echo "no /dev/nullb0"; return 1; }
	run mkdir "$s" && w "$s/attr_allow_any_host" 1 &&
		run mkdir "$s/namespaces/1" && w "$s/namespaces/1/device_path" /dev/nullb0 &&
		w "$s/namespaces/1/enable" 1 || return 1
	run mkdir $p && w $p/addr_trtype rdma && w $p/addr_adrfam ipv4 &&
		w $p/addr_traddr "$1" && w $p/addr_trsvcid 4420 || return 1
	# enabling the port: nvmet-rdma binds and listens an rdma_cm ID
	run ln -s "$s" "$p/subsystems/$NQN"
}

# target_down: the nvmet configfs tree in reverse order, then the disk
target_down() {
	local l ns s p rc=0

	for l in "$CFG"/ports/*/subsystems/*; do
		[ -L "$l" ] && { t 60 rm -f "$l" || rc=1; }
	done
	for s in "$CFG"/subsystems/*; do
		[ -d "$s" ] || continue
		for ns in "$s"/namespaces/*; do
			[ -d "$ns" ] || continue
			echo 0 >"$ns/enable"
			t 60 rmdir "$ns" || rc=1
		done
		t 60 rmdir "$s" || rc=1
	done
	for p in "$CFG"/ports/*; do
		[ -d "$p" ] && { t 60 rmdir "$p" || rc=1; }
	done
	if [ -d $NULLB ]; then
		echo 0 >$NULLB/power
		rmdir $NULLB || rc=1
	fi
	[ "$rc" = 0 ] || echo "nvmet/null_blk configfs teardown left entries"
	return $rc
}

nvmf_teardown() {
	local rc=0
	t 60 nvme disconnect-all >/dev/null 2>&1 || rc=1
	target_down || rc=1
	unmod nvme_rdma nvmet_rdma nvmet null_blk || rc=1
	return $rc
}

nvmeof_cleanup() {
	if [ -n "$FIO_PID" ]; then
		kill -9 "$FIO_PID" 2>/dev/null
		wait "$FIO_PID" 2>/dev/null
	fi
	netem_clear >/dev/null 2>&1
	nvmf_teardown >/dev/null 2>&1
	topo_cleanup
	rm -f "$FIO_OUT" "$FIO_OUT".*
}
trap nvmeof_cleanup EXIT

# nvmf_bdev: the block device of our subsystem's namespace (the native
# multipath head when there is one: its parent is the subsystem)
nvmf_bdev() {
	local b n
	for b in /sys/block/nvme*; do
		n=${b##*/}
		[[ $n =~ ^nvme[0-9]+n[0-9]+$ ]] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		[ -b "/dev/$n" ] || continue
		echo "/dev/$n"
		return 0
	done
	return 1
}

# host_connect IP [nvme connect options...]: connect, wait for the disk
host_connect() {
	local ip=$1 src=()
	shift
	[ "$ip" = 10.0.0.1 ] || src=(-w 10.0.0.1)
	run t 120 nvme connect -t rdma -a "$ip" -s 4420 -n "$NQN" -i 2 \
		"${src[@]}" -q "$HOSTNQN" "$@" || return 1
	wait_until 30 nvmf_bdev || { echo "no namespace block device"; ls /sys/block; return 1; }
	echo "# $(nvmf_bdev) via $ip"
}

host_disconnect() {
	run t 120 nvme disconnect -n "$NQN" >/dev/null &&
		wait_until 30 bash -c "! ls /sys/block | grep -qE '^nvme[0-9]+n[0-9]+$'"
}

# srq_count: the SRQs of the kernel (nvmet-rdma's) in rdma's resources
srq_count() {
	rdma res show srq 2>/dev/null | grep -c nvmet_rdma
}

# fio_round TOPO LABEL IP: connect, fio 4 KiB and 128 KiB, disconnect
fio_round() {
	local topo=$1 label=$2 ip=$3

	step "$topo: nvme connect -t rdma $ip:4420 -i 2 ($label)" host_connect "$ip" || return 1
	fio_verify "$topo: fio randrw 4k 16M crc32c verify ($label)" "$(nvmf_bdev)" 4k 16M
	fio_verify "$topo: fio randrw 128k 16M crc32c verify ($label)" "$(nvmf_bdev)" 128k 16M
	if [ "$label" = use_srq=1 ]; then
		local n
		n=$(srq_count)
		echo "# $topo: $n nvmet_rdma SRQs in rdma res show srq"
		check "$topo: target uses SRQs (use_srq=1)" test "$n" -gt 0
	fi
	check "$topo: nvme disconnect ($label)" host_disconnect
}

# fio_linkdel TOPO IP VICTIM: fio, then rdma link del VICTIM under it
fio_linkdel() {
	local topo=$1 ip=$2 victim=$3 dev mark rc st n0

	step "$topo: nvme connect (ctrl_loss_tmo 2, reconnect_delay 2)" \
		host_connect "$ip" -l 2 -c 2 || return 1
	dev=$(nvmf_bdev) || return 1
	mark=$(dmesg | wc -l)
	t 300 fio --name=d --filename="$dev" --direct=1 --rw=randrw --bs=4k \
		--size=64M --time_based --runtime=600 --ioengine=libaio \
		--iodepth=8 --numjobs=1 >"$FIO_OUT.d" 2>&1 &
	FIO_PID=$!
	# some I/O done first
	n0=$(nvme_ios)
	wait_until 20 bash -c "[ \$(nvme_ios) -gt $((n0 + 200)) ]"
	echo "# $topo: $(($(nvme_ios) - n0)) I/Os done, deleting $victim"
	check "$topo: rdma link del $victim during fio I/O returns" t 120 rdma link del "$victim"
	# The host allows ctrl_loss_tmo / reconnect_delay reconnect attempts
	# (one here), then deletes the controller and fails its requeued I/O.
	# On loop the address goes with the device and the attempt fails at
	# once; on the wire the target's address still answers ARP but has no
	# RDMA device, so the attempt's CM REQ goes unanswered until the CM
	# gives up (about 100 s, whatever the driver).
	wait_until 180 bash -c "! kill -0 $FIO_PID"
	if kill -0 "$FIO_PID" 2>/dev/null; then
		hang_report
		kill -9 "$FIO_PID" 2>/dev/null
		pkill -9 -P "$FIO_PID" 2>/dev/null
		wait "$FIO_PID"
		st=hung
	else
		wait "$FIO_PID"
		rc=$?
		st="exit $rc"
	fi
	FIO_PID=
	grep -E 'err=|error' "$FIO_OUT.d" | head -3 | sed 's/^/# fio: /'
	echo "# $topo: fio after link del: $st"
	check "$topo: fio ends after the link del (I/O errors, no hang)" \
		bash -c "[ '$st' != hung ] && [ '$st' != 'exit 0' ]"
	dmesg | tail -n +$((mark + 1)) | grep -E 'nvme|nvmet|softrc|rxe' |
		grep -v 'requeuing I/O' | head -30 | sed 's/^/# klog: /'
	check "$topo: host saw errors / reconnect attempts / removal" bash -c \
		"dmesg | tail -n +$((mark + 1)) | grep -qE 'nvme nvme[0-9]+: (starting error recovery|Reconnecting|Failed reconnect|Removing ctrl|resetting controller|I/O .* timeout)'"
	check "$topo: nvme disconnect-all returns" t 120 nvme disconnect-all
	check "$topo: nvmet configfs teardown" target_down
	check "$topo: rmmod nvme_rdma nvmet_rdma" unmod nvme_rdma nvmet_rdma
	check "$topo: rmmod nvmet null_blk" unmod nvmet null_blk
	check "$topo: $SOFTRC_DRIVER unloads" drv_unload
}

# reload_srq: the target torn down, nvmet_rdma back with use_srq=1
reload_srq() {
	target_down && unmod nvmet_rdma &&
		run t 60 modprobe nvmet_rdma use_srq=1 &&
		run grep -q Y /sys/module/nvmet_rdma/parameters/use_srq
}

# drv_unload: the driver's rmmod, under a timeout
drv_unload() {
	case $SOFTRC_DRIVER in
	softrc) unmod softrc ;;
	rxe) unmod rdma_rxe ;;
	esac
}

ktap_header "nvmeof ($SOFTRC_DRIVER)"
if ! command -v nvme >/dev/null || ! command -v fio >/dev/null; then
	echo "1..0 # SKIP nvme-cli or fio not installed (tools/setup/deps.sh)"
	exit 0
fi
if ! modinfo nvmet_rdma >/dev/null 2>&1 || ! modinfo nvme_rdma >/dev/null 2>&1; then
	echo "1..0 # SKIP no nvmet_rdma / nvme_rdma modules"
	exit 0
fi
datapath_gate "nvmeof ($SOFTRC_DRIVER)"

# NVMEOF_TOPOS: the topologies to run (default both)
for topo in ${NVMEOF_TOPOS:-loop wire}; do
	if ! topo_up_initnet "$topo"; then
		not_ok "$topo: topology up ($SOFTRC_DRIVER)"
		topo_down
		continue
	fi
	ip=$IP_B
	echo "# $topo: host $DEV_A (10.0.0.1) -> target $DEV_B ($ip)"
	if ! step "$topo: nvmet modules" nvmf_modules ||
		! step "$topo: nvmet target: null_blk 64M, subsystem, namespace, rdma port $ip:4420" target_up "$ip"; then
		nvmf_teardown >/dev/null 2>&1
		topo_cleanup
		continue
	fi
	fio_round "$topo" default "$ip"

	if [ "$topo" = wire ]; then
		if step "$topo: nvme connect (for netem)" host_connect "$ip"; then
			check "$topo: netem loss 1% on va and vb" netem_set loss 1%
			fio_verify "$topo: fio randrw 4k 4M crc32c verify under netem loss 1%" \
				"$(nvmf_bdev)" 4k 4M
			netem_clear
			check "$topo: nvme disconnect (after netem)" host_disconnect
		fi
	fi

	# nvmet_rdma's use_srq is read when a device is first used: reload it
	check "$topo: target down, nvmet_rdma reloaded with use_srq=1" reload_srq
	if step "$topo: nvmet target again (use_srq=1)" target_up "$ip"; then
		fio_round "$topo" use_srq=1 "$ip"
		fio_linkdel "$topo" "$ip" "$DEV_B"
	fi
	klog_new | grep -E 'WARNING|BUG|Oops' | head -20 | sed 's/^/# klog: /'
	check "$topo: no WARNING/BUG/Oops in the kernel log" \
		bash -c "! dmesg | tail -n +$((KLOG0 + 1)) | grep -qE 'WARNING|BUG|Oops'"
	nvmf_teardown >/dev/null 2>&1
	topo_cleanup
done

ktap_finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# iSCSI Extensions for RDMA, with both ends on the RDMA driver under test
# (SOFTRC_DRIVER=softrc, default, or rxe): the kernel's LIO target with
# its iSER transport (ib_isert: rdma_cm, rdma_rw READ/WRITE of the data)
# and the kernel's iSER initiator (ib_iser: FRWR registration, SEND_WITH_INV
# from the target) under open-iscsi's iscsid. Per topology:
#   - a LIO target through configfs (no targetcli): a 64 MiB ramdisk
#     (rd_mcp) as LUN 0 of one target portal group with open ACLs, its
#     network portal on the target address, port 3260, switched to iSER
#   - iscsid started by hand (the guest has no init system), a node
#     record for the target over the "iser" interface, login: the session
#     runs over iSER (its transport is "iser") and its SCSI disk appears
#   - fio randrw 4 KiB and 128 KiB with crc32c verify on the disk, IOPS
#     and MB/s as diagnostics
#   - logout, the target torn down, the modules and the driver unload,
#     and no WARNING/BUG/Oops in the kernel log since the suite started
#
# Kernel ULPs only work in init_net, so both topologies live there:
#   loop: va 10.0.0.1 (s0); initiator and target both on s0
#   wire: va 10.0.0.1 (s0, initiator) === vb 10.0.0.2 (s1, target), policy
#         routing across the veth (topo_veth_routing)
# Every step runs under `timeout` (scaled by SOFTRC_TIME_SCALE).
set -u
# shellcheck source=selftests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/verbs/topo.sh
. "$REPO/selftests/verbs/topo.sh"
# shellcheck source=selftests/verbs/ulp.sh
. "$REPO/selftests/verbs/ulp.sh"

IQN=iqn.2024-01.org.softrc:iser-selftest
TGT=/sys/kernel/config/target
RD=$TGT/core/rd_mcp_0/disk0
KLOG0=$(dmesg | wc -l)

iser_modules() {
	run t 60 modprobe target_core_mod && run t 60 modprobe iscsi_target_mod &&
		run t 60 modprobe ib_isert && run t 60 modprobe ib_iser &&
		run t 60 modprobe sd_mod || return 1	# no udev loads it
	mountpoint -q /sys/kernel/config ||
		run mount -t configfs configfs /sys/kernel/config
}

# target_up IP: ramdisk, target, LUN 0, open ACLs, iSER portal IP:3260
target_up() {
	local tpg=$TGT/iscsi/$IQN/tpgt_1 np
	np=$tpg/np/$1:3260
	run mkdir -p $RD && w $RD/control rd_pages=16384 && w $RD/enable 1 &&
		run mkdir -p $tpg/lun/lun_0 && run ln -s $RD $tpg/lun/lun_0/disk0 &&
		run mkdir $np && w $np/iser 1 &&
		w $tpg/attrib/authentication 0 && w $tpg/attrib/generate_node_acls 1 &&
		w $tpg/attrib/cache_dynamic_acls 1 &&
		w $tpg/attrib/demo_mode_write_protect 0 && w $tpg/enable 1
}

target_down() {
	local tpg=$TGT/iscsi/$IQN/tpgt_1
	[ -d $tpg ] || return 0
	w $tpg/enable 0
	rmdir $tpg/np/* 2>/dev/null
	rm -f $tpg/lun/lun_0/disk0
	rmdir $tpg/lun/lun_0 $tpg $TGT/iscsi/$IQN 2>/dev/null
	rmdir $RD $TGT/core/rd_mcp_0 2>/dev/null
	# the fabric's own directory holds iscsi_target_mod
	rmdir $TGT/iscsi 2>/dev/null
	! [ -d $TGT/iscsi/$IQN ]
}

# iscsid: the initiator daemon, by hand (no init system in the guest);
# its node records and lock live in the guest's writable overlay
iscsid_up() {
	pgrep -x iscsid >/dev/null && return 0
	mkdir -p /run/lock/iscsi /etc/iscsi/nodes /etc/iscsi/send_targets
	[ -s /etc/iscsi/initiatorname.iscsi ] ||
		echo "InitiatorName=iqn.2004-10.com.ubuntu:01:softrc-selftest" >/etc/iscsi/initiatorname.iscsi
	run iscsid </dev/null >/dev/null 2>&1 && wait_until 10 pgrep -x iscsid
}

iser_up() {
	iser_modules && iscsid_up
}

# login IP: a node record over the iser interface, login, the disk
login() {
	run t 60 iscsiadm -m node -o new -T $IQN -p "$1:3260" -I iser >/dev/null &&
		run t 120 iscsiadm -m node -T $IQN -p "$1:3260" -I iser --login || return 1
	wait_until 30 iscsi_bdev || { echo "no SCSI disk for the session"; return 1; }
}

logout() {
	run t 120 iscsiadm -m node -T $IQN --logout >/dev/null &&
		run t 60 iscsiadm -m node -o delete -T $IQN >/dev/null &&
		wait_until 30 bash -c '! ls /sys/class/iscsi_session/ 2>/dev/null | grep -q session'
}

# iscsi_bdev: the disk of the session (no udev: from sysfs)
iscsi_bdev() {
	local b
	for b in /sys/class/iscsi_session/session*/device/target*/*/block/*; do
		[ -e "$b" ] || continue
		[ -b "/dev/${b##*/}" ] || mknod "/dev/${b##*/}" b \
			"$(cut -d: -f1 "$b/dev")" "$(cut -d: -f2 "$b/dev")"
		echo "/dev/${b##*/}"
		return 0
	done
	return 1
}

# transport_is_iser: the session runs over the iser transport, not tcp
transport_is_iser() {
	local out
	out=$(t 30 iscsiadm -m session) || return 1
	echo "# $out"
	printf '%s\n' "$out" | grep -q "^iser: .*$IQN"
}

iser_teardown() {
	t 60 iscsiadm -m node -T $IQN --logout >/dev/null 2>&1
	t 60 iscsiadm -m node -o delete -T $IQN >/dev/null 2>&1
	pkill -x iscsid
	target_down
	unmod ib_iser ib_isert iscsi_target_mod target_core_user \
		target_core_pscsi target_core_iblock target_core_file target_core_mod
}

iser_cleanup() {
	iser_teardown >/dev/null 2>&1
	topo_cleanup
}
trap iser_cleanup EXIT

ktap_header "iser ($SOFTRC_DRIVER)"
if ! command -v iscsiadm >/dev/null || ! command -v fio >/dev/null; then
	echo "1..0 # SKIP open-iscsi or fio not installed (tools/setup/deps.sh)"
	exit 0
fi
if ! modinfo ib_isert >/dev/null 2>&1 || ! modinfo ib_iser >/dev/null 2>&1; then
	echo "1..0 # SKIP no ib_isert / ib_iser modules"
	exit 0
fi
datapath_gate "iser ($SOFTRC_DRIVER)"

for topo in ${ISER_TOPOS:-loop wire}; do
	if ! topo_up_initnet "$topo"; then
		not_ok "$topo: topology up ($SOFTRC_DRIVER)"
		topo_down
		continue
	fi
	ip=$IP_B
	echo "# $topo: initiator $DEV_A (10.0.0.1) -> target $DEV_B ($ip)"
	if step "$topo: iSER modules, iscsid" iser_up &&
		step "$topo: LIO target: ramdisk 64M, LUN 0, iSER portal $ip:3260" target_up "$ip" &&
		step "$topo: iscsiadm login over iser" login "$ip"; then
		echo "# $topo: disk $(iscsi_bdev)"
		check "$topo: the session's transport is iser" transport_is_iser
		fio_verify "$topo: fio randrw 4k 16M crc32c verify" "$(iscsi_bdev)" 4k 16M
		fio_verify "$topo: fio randrw 128k 16M crc32c verify" "$(iscsi_bdev)" 128k 16M
		check "$topo: logout" logout
	fi
	check "$topo: target teardown, modules unload" iser_teardown
	dmesg | tail -n +$((KLOG0 + 1)) | grep -E 'WARNING|BUG|Oops' | head -20 | sed 's/^/# klog: /'
	check "$topo: no WARNING/BUG/Oops in the kernel log" \
		bash -c "! dmesg | tail -n +$((KLOG0 + 1)) | grep -qE 'WARNING|BUG|Oops'"
	check "$topo: $SOFTRC_DRIVER unloads" topo_cleanup
done

ktap_finish

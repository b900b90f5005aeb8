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
# shellcheck source=selftests/verbs/nvmf.sh
. "$REPO/selftests/verbs/nvmf.sh"

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

# srq_count: the SRQs of the kernel (nvmet-rdma's) in rdma's resources
srq_count() {
	rdma res show srq 2>/dev/null | grep -c nvmet_rdma
}

# fio_round TOPO LABEL IP: connect, fio 4 KiB and 128 KiB, disconnect
fio_round() {
	local topo=$1 label=$2 ip=$3

	step "$topo: nvme connect -t rdma $ip:4420 -i 2 ($label)" nvmf_connect "$ip" 2 || return 1
	fio_verify "$topo: fio randrw 4k 16M crc32c verify ($label)" "$(nvmf_bdev)" 4k 16M
	fio_verify "$topo: fio randrw 128k 16M crc32c verify ($label)" "$(nvmf_bdev)" 128k 16M
	if [ "$label" = use_srq=1 ]; then
		local n
		n=$(srq_count)
		echo "# $topo: $n nvmet_rdma SRQs in rdma res show srq"
		check "$topo: target uses SRQs (use_srq=1)" test "$n" -gt 0
	fi
	check "$topo: nvme disconnect ($label)" nvmf_disconnect
}

# fio_linkdel TOPO IP VICTIM: fio, then rdma link del VICTIM under it
fio_linkdel() {
	local topo=$1 ip=$2 victim=$3 dev mark rc st n0

	step "$topo: nvme connect (ctrl_loss_tmo 2, reconnect_delay 2)" \
		nvmf_connect "$ip" 2 -l 2 -c 2 || return 1
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
	check "$topo: nvmet configfs teardown" nvmf_target_down
	check "$topo: rmmod nvme_rdma nvmet_rdma" unmod nvme_rdma nvmet_rdma
	check "$topo: rmmod nvmet null_blk" unmod nvmet null_blk
	check "$topo: $SOFTRC_DRIVER unloads" drv_unload
}

# reload_srq: the target torn down, nvmet_rdma back with use_srq=1
reload_srq() {
	nvmf_target_down && unmod nvmet_rdma &&
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
		! step "$topo: nvmet target: null_blk 64M, subsystem, namespace, rdma port $ip:4420" nvmf_target_up "$ip"; then
		nvmf_teardown >/dev/null 2>&1
		topo_cleanup
		continue
	fi
	fio_round "$topo" default "$ip"

	if [ "$topo" = wire ]; then
		if step "$topo: nvme connect (for netem)" nvmf_connect "$ip" 2; then
			check "$topo: netem loss 1% on va and vb" netem_set loss 1%
			fio_verify "$topo: fio randrw 4k 4M crc32c verify under netem loss 1%" \
				"$(nvmf_bdev)" 4k 4M
			netem_clear
			check "$topo: nvme disconnect (after netem)" nvmf_disconnect
		fi
	fi

	# nvmet_rdma's use_srq is read when a device is first used: reload it
	check "$topo: target down, nvmet_rdma reloaded with use_srq=1" reload_srq
	if step "$topo: nvmet target again (use_srq=1)" nvmf_target_up "$ip"; then
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

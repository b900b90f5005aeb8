#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What one unprivileged verbs user can do to the kernel, and the limits it
# meets (security review of 0d7acba: F3, F4, F7, F9, H7), with
# selftests/verbs/limits (its KTAP lines become diagnostics here):
#   spin_sq / spin_rq: a thread keeps moving a user ring's producer index
#     while another rings the doorbell (SQ, QP in ERROR) or moves the QP
#     into ERROR (RQ flush): each call does a bounded amount (its longest
#     wall time is reported, not judged: TCG preempts), the soft-lockup
#     detector (watchdog_thresh 2) stays quiet. Needs 2 CPUs (--smp 2).
#     spin_rq also loads selftests/verbs/kmod/softrc_rqflush_test.ko, whose
#     probes count the RQ entries each ERROR flush call takes: at most a
#     fixed budget (1024 here; softrc's is 256), never the ring (0d7acba
#     took all 16K+ queued entries, and more while the producer moved, in
#     one call under the QP lock)
#   overrun: completions into a full CQ: one CQ_ERR, one QP_FATAL, the QP
#     in ERROR, the losses counted (cq_overruns, cq_wc_dropped)
#   udata: QUERY_DEVICE_EX with zeroed driver data
#   resgrow: responder resources are allocated by max_dest_rd_atomic at
#     modify, not at create (the QP's debugfs dump shows them): none at
#     create, then 1, 16 (RESET and a new RTR), 32 (SQD -> SQD with 16
#     live), 4 of 32; READs of a QP to itself at each step, bytes checked
#   srq: selftests/verbs/kmod/softrc_srq_test.ko, a kernel ULP whose
#     SRQ limit event handler posts to the QP at once (H4: the event is no
#     longer dispatched under that QP's lock), then ib_drain_qp() on that
#     SRQ QP, which needs IB_EVENT_QP_LAST_WQE_REACHED (6.10 on: a 60 s
#     wait without it)
#   qpmem: the kernel memory 256 RC QPs took comes back when they are
#     destroyed (tools/bench/qpmem, which make bench runs for its figure)
#   memcg: a large QP's memory is charged to its creator's memory cgroup
#   hold: `rdma link del`, `ip link del` of the netdev and `ip netns del`
#     of the netdev's namespace complete within seconds while a process
#     holds the device open with a PD, MR, CQ and QP; it gets
#     IBV_EVENT_DEVICE_FATAL and exits cleanly
#   caps: softrc loaded with max_qp=8 max_cq=8 max_pd=8 max_mr=8
#     max_srq=4 reports and enforces exactly those, less what the kernel
#     holds already (`rdma resource`: QP1 and its PD and CQ)
#
# Topology:
#   init_net                        | netns softrc-lim
#   s0 -> va 10.0.0.1/24 fd00::1/64 === vb 10.0.0.2/24 fd00::2/64 <- s1
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

LIMITS=$REPO/selftests/verbs/limits
NS=softrc-lim
CG=/sys/fs/cgroup/softrc-limits

cleanup() {
	[ -n "${HOLD_PID:-}" ] && kill -9 "$HOLD_PID" 2>/dev/null
	rdma link del s0 2>/dev/null
	ip netns del $NS 2>/dev/null
	ip link del va 2>/dev/null
	[ -d $CG ] && rmdir $CG 2>/dev/null
	rmmod softrc_rqflush_test 2>/dev/null
	rmmod softrc 2>/dev/null
}
trap cleanup EXIT

ktap_header "limits"
if [ ! -x "$LIMITS" ]; then
	echo "1..0 # SKIP $LIMITS not built (make -C selftests/verbs)"
	exit 0
fi

# lim_up [DEV_NS]: the veth pair, s0 on va; with DEV_NS also s1 on vb
lim_up() {
	ip netns add $NS &&
	ip link add va type veth peer name vb netns $NS &&
	ip addr add 10.0.0.1/24 dev va &&
	ip -6 addr add fd00::1/64 dev va nodad &&
	ip link set va up &&
	ip -n $NS addr add 10.0.0.2/24 dev vb &&
	ip -n $NS -6 addr add fd00::2/64 dev vb nodad &&
	ip -n $NS link set vb up &&
	rdma link add s0 type softrc netdev va &&
	wait_until 5 bash -c '[ "$(port_state s0)" = ACTIVE ]' &&
	wait_until 5 bash -c 'ibv_devinfo -v -d s0 | grep -q "10.0.0.1, RoCE v2"' ||
		return 1
	[ -z "${1:-}" ] && return 0
	ip netns exec $NS rdma link add s1 type softrc netdev vb &&
	wait_until 5 bash -c '[ "$(port_state s1)" = ACTIVE ]'
}

lim_down() {
	rdma link del s0 2>/dev/null
	ip netns del $NS 2>/dev/null
	ip link del va 2>/dev/null
	wait_until 10 bash -c '! ip link show va && ! rdma_dev_exists s0 && ! rdma_dev_exists s1'
}

# section NAME CMD...: one result for a run of the limits program
section() {
	local name=$1 out
	shift
	if out=$(timeout "$(tmo 120)" "$@" 2>&1); then
		printf '%s\n' "$out" | grep -E '^(not )?ok' | sed 's/^/#   /'
		ok "$name"
	else
		printf '%s\n' "$out" | grep -v '^TAP' | sed 's/^/#   /'
		not_ok "$name"
	fi
}

# hold_then NAME GONE_DEV CMD...: a process holds the device open while
# CMD removes it; CMD completes within 10 s, the holder exits 0 (it got
# IBV_EVENT_DEVICE_FATAL) and GONE_DEV is gone (all times scaled to the
# VM's speed)
hold_then() {
	local name=$1 dev=$2 t0 t1 rc out=/tmp/limits-hold.$$
	shift 2
	"$LIMITS" "$dev" hold "$(tmo 30)" >$out 2>&1 &
	HOLD_PID=$!
	if ! wait_until 20 grep -q '^# ready' $out; then
		sed 's/^/#   /' $out
		not_ok "$name: the holder is ready"
		return
	fi
	t0=$(date +%s%N)
	timeout "$(tmo 25)" "$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	if [ $(((t1 - t0) / 1000000)) -lt $((10000 * SOFTRC_TIME_SCALE)) ]; then
		ok "$name: completes while the device is held ($(((t1 - t0) / 1000000)) ms)"
	else
		not_ok "$name: completes while the device is held" "took $(((t1 - t0) / 1000000)) ms"
	fi
	# before the holder gives up (30 s): the removal must not wait for it
	check "$name: $dev is gone within 10 s, the holder still running" \
		wait_until 10 rdma_dev_gone "$dev"
	wait "$HOLD_PID"
	rc=$?
	HOLD_PID=
	grep -E '^(not )?ok' $out | sed 's/^/#   /'
	if [ $rc = 0 ]; then
		ok "$name: the holder got IBV_EVENT_DEVICE_FATAL and exited cleanly"
	else
		not_ok "$name: the holder got IBV_EVENT_DEVICE_FATAL and exited cleanly" "exit $rc"
	fi
	rm -f $out
}

check "load softrc" softrc_load
if ! out=$(lim_up 2>&1); then
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "Bail out! device set-up failed"
	exit 1
fi

# --- F4: CQ overrun ----------------------------------------------------------
section "overrun: one CQ_ERR, one QP_FATAL, QP in ERROR, later completions dropped" "$LIMITS" s0 overrun
check "overrun: counted (cq_overruns >= 1, cq_wc_dropped >= 3)" \
	bash -c '[ "$(counter s0 cq_overruns)" -ge 1 ] && [ "$(counter s0 cq_wc_dropped)" -ge 3 ]'

# --- responder resources follow max_dest_rd_atomic ---------------------------
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
section "resgrow: responder resources follow max_dest_rd_atomic (0, 1, 16, 32, 4)" "$LIMITS" s0 resgrow

# --- QP memory: what 256 RC QPs take, they give back ------------------------
# tools/bench/qpmem (make bench's per-QP figure): the kernel's share of the
# memory 256 QPs took must come back when they, their CQ and PD are gone
# (at least 15/16 of it: qpmem shrinks the per-CPU page lists, which
# otherwise hide up to a quarter of it here)
qpmem_returns() {
	local out per back pcp=/proc/sys/vm/percpu_pagelist_high_fraction
	local old
	old=$(cat $pcp)
	out=$("$REPO/tools/bench/qpmem" s0 256 2>&1) || { echo "$out"; return 1; }
	echo "$out"
	read -r _ _ _ _ per _ back <<<"$out"
	[ "$per" -gt 0 ] && [ "$back" -ge $((per * 256 * 15 / 16)) ] &&
		[ "$(cat $pcp)" = "$old" ]
}
if [ -e /sys/kernel/debug/kmemleak ]; then
	# the debug kernel (make check-debug): KASAN's quarantine keeps freed
	# objects a while, so MemFree neither drops nor comes back in step
	# (6.1: -63232 bytes a QP; 6.12: 85 % back); kmemleak checks for
	# leaks there, after the suites (run_all.sh)
	ok "qpmem: 256 QPs' kernel memory comes back after destroy # SKIP KASAN quarantine on the debug kernel; kmemleak checks leaks"
else
	check "qpmem: 256 QPs' kernel memory comes back after destroy" qpmem_returns
fi

# --- F3: user rings that never stop filling ----------------------------------
if [ "$(nproc)" -ge 2 ]; then
	old_thresh=$(sysctl -n kernel.watchdog_thresh)
	sysctl -qw kernel.watchdog_thresh=2
	sysctl -qw kernel.soft_watchdog=1 2>/dev/null
	n0=$(dmesg | wc -l)
	section "spin_sq: doorbells stay bounded while the SQ producer spins" "$LIMITS" s0 spin_sq 8
	rqf_ko=$KMOD_DIR/softrc_rqflush_test.ko
	rqf=/sys/module/softrc_rqflush_test/parameters
	rqf_on=
	if [ -e "$rqf_ko" ]; then
		# built but not loadable (its probes did not attach) is a failure
		check "spin_rq: softrc_rqflush_test.ko loads (probes attached)" insmod "$rqf_ko" &&
			rqf_on=1
	fi
	section "spin_rq: the ERROR flush stays bounded while the RQ producer spins" "$LIMITS" s0 spin_rq 8
	if [ -n "$rqf_on" ]; then
		rqf_calls=$(cat $rqf/calls) rqf_max=$(cat $rqf/max_entries)
		rmmod softrc_rqflush_test
		check "spin_rq: one flush call takes at most 1024 RQ entries ($rqf_calls calls, at most $rqf_max)" \
			test "$rqf_calls" -gt 0 -a "$rqf_max" -le 1024
	else
		ok "spin_rq: RQ entries per flush call # SKIP softrc_rqflush_test.ko not built"
	fi
	check "spin: no soft lockup or RCU stall reported" \
		bash -c "! dmesg | tail -n +$((n0 + 1)) | grep -E 'soft lockup|rcu.*stall|hard LOCKUP'"
	sysctl -qw kernel.watchdog_thresh="$old_thresh"
else
	ok "spin_sq # SKIP needs 2 CPUs (run.sh --smp 2)"
	ok "spin_rq # SKIP needs 2 CPUs (run.sh --smp 2)"
	ok "spin_rq: RQ entries per flush call # SKIP needs 2 CPUs (run.sh --smp 2)"
fi

# --- H7 --------------------------------------------------------------------
section "udata: QUERY_DEVICE_EX with zeroed driver data" "$LIMITS" s0 udata

# --- H4: the SRQ limit event of a kernel ULP --------------------------------
# softrc_srq_test.ko's handler posts to the QP whose receive hit the limit
srq_kmod() {
	local ko=$KMOD_DIR/softrc_srq_test.ko rc n0 g
	g=$(gid_index s0 10.0.0.1) || return 1
	n0=$(dmesg | wc -l)
	timeout "$(tmo 60)" insmod "$ko" dev=s0 gid="$g" time_scale="$SOFTRC_TIME_SCALE"
	rc=$?
	dmesg | tail -n +$((n0 + 1)) | grep 'softrc_srq_test: ' | sed 's/^.*softrc_srq_test: /#   /'
	rmmod softrc_srq_test 2>/dev/null
	return $rc
}
if [ -e "$KMOD_DIR/softrc_srq_test.ko" ]; then
	if srq_kmod; then
		ok "srq: a kernel handler may post to the QP at once; ib_drain_qp gets Last WQE Reached"
	else
		not_ok "srq: a kernel handler may post to the QP at once; ib_drain_qp gets Last WQE Reached"
	fi
else
	ok "srq limit # SKIP softrc_srq_test.ko not built"
fi

# --- F7: memory cgroup accounting ------------------------------------------
memcg_setup() {
	mountpoint -q /sys/fs/cgroup || mount -t cgroup2 none /sys/fs/cgroup || return 1
	grep -qw memory /sys/fs/cgroup/cgroup.controllers || return 1
	echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
	mkdir -p $CG && [ -e $CG/memory.current ]
}
if memcg_setup >/dev/null 2>&1; then
	section "memcg: a QP's rings and shadows are charged to its creator" \
		sh -c "echo \$\$ >$CG/cgroup.procs && exec \"\$0\" \"\$@\"" \
		"$LIMITS" s0 memcg $CG/memory.current
	echo $$ >/sys/fs/cgroup/cgroup.procs 2>/dev/null
else
	ok "memcg # SKIP no cgroup2 memory controller"
fi

# --- F9: removal while held -------------------------------------------------
hold_then "rdma link del" s0 rdma link del s0
lim_down
check "topology up again" lim_up
hold_then "ip link del of the netdev" s0 ip link del va
lim_down
check "topology up again, s1 in $NS" lim_up ns
hold_then "ip netns del of the netdev's namespace" s1 ip netns del $NS
lim_down

# --- F7: object limits --------------------------------------------------------
check "rmmod" rmmod softrc
check "load softrc max_qp=8 max_cq=8 max_pd=8 max_mr=8 max_srq=4" \
	bash -c "softrc_deps && insmod $SOFTRC_KO max_qp=8 max_cq=8 max_pd=8 max_mr=8 max_srq=4"
check "topology up" lim_up
# what the kernel holds on s0 already (the MAD layer's QP1, its PD and CQ)
# counts against the device's limits too
res_used() {
	rdma resource show s0 | sed -n "s/.* $1 \([0-9]*\).*/\1/p"
}
used="$(res_used qp) $(res_used cq) $(res_used pd) $(res_used mr) $(res_used srq)"
echo "# in use on s0 before (qp cq pd mr srq): $used"
# shellcheck disable=SC2086 # one argument a count
section "caps: the limits reported and enforced" "$LIMITS" s0 caps 8 8 8 8 4 $used
lim_down
check "rmmod at the end" rmmod softrc

ktap_finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# FLUSH (IBTA 1.5 Annex A19) for kernel ULPs, on the loop topology of
# selftests/verbs/topo.sh (s0, both QPs of each pair on it):
#   - ibv_devinfo -v: device_cap_flags_ex bit 38 (IB_UVERBS_DEVICE_FLUSH_
#     GLOBAL) set where the kernel's verbs name FLUSH (6.2 on), clear
#     where they do not (6.1); bit 39 (FLUSH_PERSISTENT) clear on both
#     (softrc has no persistent memory)
#   - selftests/verbs/kmod/softrc_flush_test.ko (built only where the
#     kernel names FLUSH): a kernel ULP's IB_WR_FLUSH succeeds on an MR
#     with IB_ACCESS_FLUSH_GLOBAL (IB_WC_FLUSH), fails IB_WC_REM_ACCESS_ERR
#     for an MR without the right, a bad rkey and a range past the MR,
#     IB_WC_REM_INV_REQ_ERR for a target QP without the right; the
#     responder's counters: rem_access_naks_sent +3, inv_req_naks_sent +1,
#     the requester's rem_access_naks_rcvd +3 and inv_req_naks_rcvd +1
#     (one device: both sides count on s0)
#   - selftests/verbs/flush_user: what rdma-core 44 (no ibv_wr_flush())
#     can do: ibv_reg_mr with the flush rights, and a FLUSH opcode posted
#     through librxe's legacy path, which reaches the user ring's ingest
#     with its FLUSH fields zero and fails in SQ order (its header)
# On a kernel without FLUSH the kernel-ULP cases are "# SKIP" with that
# reason. softrc only (SOFTRC_DRIVER=rxe: the module checks softrc's
# advertising, which rxe's differs from).
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

trap topo_cleanup EXIT

ktap_header "flush ($SOFTRC_DRIVER)"
if [ "$SOFTRC_DRIVER" != softrc ]; then
	echo "1..0 # SKIP softrc's FLUSH advertising and kernel-ULP test"
	exit 0
fi

ko=$KMOD_DIR/softrc_flush_test.ko
# The kernel's verbs name FLUSH from 6.2 on ("RDMA: Extend RDMA kernel
# verbs ABI to support flush"): what this suite expects, decided apart
# from the builds it checks (the kmod Makefile's header test and the
# driver's compile probe)
has_flush=0
[ "$(printf '6.2\n%s\n' "${KVER%%-*}" | sort -V | head -n 1)" = 6.2 ] && has_flush=1

# skip NAME REASON: one test reported as skipped
skip() {
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n $1 # SKIP $2"
}

# flush_kmod NAME: load the module against DEV_A; it runs at load
# (failing the load if a check failed) and logs its cases
flush_kmod() {
	local rc n0
	n0=$(dmesg | wc -l)
	timeout "$(tmo 300)" insmod "$ko" dev="$DEV_A" gid="$GID_A" \
		time_scale="$SOFTRC_TIME_SCALE"
	rc=$?
	dmesg | tail -n +$((n0 + 1)) | grep 'softrc_flush_test: ' |
		sed 's/^.*softrc_flush_test: /#   /'
	rmmod softrc_flush_test 2>/dev/null
	if [ "$rc" = 0 ]; then ok "$1"; else not_ok "$1" "insmod: $rc"; fi
}

if ! topo_up loop; then
	not_ok "loop: topology up ($SOFTRC_DRIVER)"
	topo_down
	ktap_finish
	exit
fi

# device_cap_flags_ex as ibv_devinfo -v prints it (rdma-core 44 names
# neither bit: an unknown flag, but the number is there)
fx=$(ibv_devinfo -v -d "$DEV_A" | awk '/device_cap_flags_ex:/ { print $2; exit }')
check "loop: device_cap_flags_ex ${fx:-?}: FLUSH_GLOBAL (bit 38) is $has_flush" \
	test $(( ${fx:-0} >> 38 & 1 )) = "$has_flush"
check "loop: device_cap_flags_ex ${fx:-?}: no FLUSH_PERSISTENT (bit 39)" \
	test $(( ${fx:-0} >> 39 & 1 )) = 0

check "loop: softrc_flush_test.ko built exactly where the kernel has FLUSH ($has_flush)" \
	test "$([ -e "$ko" ] && echo 1 || echo 0)" = "$has_flush"
if [ "$has_flush" = 0 ]; then
	why="kernel $KVER has no FLUSH in its verbs (IB_WR_FLUSH came with 6.2)"
	skip "loop: kernel ULP IB_WR_FLUSH (softrc_flush_test.ko)" "$why"
	skip "loop: rem_access_naks_sent/_rcvd +3 and inv_req_naks_sent/_rcvd +1" "$why"
else
	ra0=$(counter "$DEV_A" rem_access_naks_sent)
	rr0=$(counter "$DEV_A" rem_access_naks_rcvd)
	ia0=$(counter "$DEV_A" inv_req_naks_sent)
	ir0=$(counter "$DEV_A" inv_req_naks_rcvd)
	flush_kmod "loop: kernel ULP IB_WR_FLUSH (softrc_flush_test.ko)"
	ra=$(counter "$DEV_A" rem_access_naks_sent)
	rr=$(counter "$DEV_A" rem_access_naks_rcvd)
	ia=$(counter "$DEV_A" inv_req_naks_sent)
	ir=$(counter "$DEV_A" inv_req_naks_rcvd)
	check "loop: rem_access_naks_sent ${ra0:-?} -> ${ra:-?} (+3), _rcvd ${rr0:-?} -> ${rr:-?} (+3)" \
		test "$(( ${ra:-0} - ${ra0:-0} )),$(( ${rr:-0} - ${rr0:-0} ))" = 3,3
	check "loop: inv_req_naks_sent ${ia0:-?} -> ${ia:-?} (+1), _rcvd ${ir0:-?} -> ${ir:-?} (+1)" \
		test "$(( ${ia:-0} - ${ia0:-0} )),$(( ${ir:-0} - ${ir0:-0} ))" = 1,1
fi
# the user ring's side, on either kernel
out=$(timeout "$(tmo 120)" "$VERBS_DIR/flush_user" "$DEV_A" "$GID_A" "$has_flush" 2>&1)
rc=$?
while read -r line; do
	case $line in
	"not ok "*) not_ok "loop: user: ${line#not ok }" ;;
	"ok "*) ok "loop: user: ${line#ok }" ;;
	esac
done <<<"$(printf '%s\n' "$out" | sed -n 's/^\(not \)\{0,1\}ok [0-9]* \(.*\)$/\1ok \2/p')"
printf '%s\n' "$out" | grep -Ev '^(not )?ok |^TAP|^1\.\.' | sed 's/^/# loop: user: /'
check "loop: flush_user exit status 0 (got $rc)" test "$rc" = 0
topo_down
ktap_finish

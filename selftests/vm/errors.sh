#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Requester-side error completions, with selftests/verbs/rc_verify -e:
#   badrkey, oob (READ 32 B past the MR end), noaccess-{write,read,atomic}
#     (an MR without that remote right) -> IBV_WC_REM_ACCESS_ERR; WRs
#     before it succeed, the ones after it are IBV_WC_WR_FLUSH_ERR, QP ERR
#   unreachable (the peer QP destroyed) -> IBV_WC_RETRY_EXC_ERR after about
#     retry_cnt x timeout, then flushes, QP in ERR
#   the same with the wire cut (netem loss 100% on both veth ends)
#   rnr (no receive posted, rnr_retry 2) -> IBV_WC_RNR_RETRY_EXC_ERR
#   badlkey (a WRITE whose SGE names a wrong lkey) -> IBV_WC_LOC_PROT_ERR in
#     SQ order: the WRs before it succeed, the ones after it are flushed
#   state: ibv_post_send in RESET and in INIT returns an error
#   nores-{read,atomic}: a READ / FETCH_AND_ADD to a responder whose QP has
#     max_dest_rd_atomic 0 -> IBV_WC_REM_INV_REQ_ERR (NAK invalid request,
#     counted in the responder's inv_req_naks_sent), nothing read back, the
#     target memory unchanged; the rest flushed, QP in ERR
#   selftests/verbs/mw (two QP pairs on DEV_A): memory window binds (type 1
#     and 2B), bind errors -> IBV_WC_MW_BIND_ERR, access through an
#     invalidated or deallocated window -> IBV_WC_REM_ACCESS_ERR,
#     SEND_WITH_INV of an ordinary MR / type 1 MW / another QP's MW ->
#     IBV_WC_REM_INV_REQ_ERR, LOCAL_INV in post order after a 4 MiB WRITE,
#     LOCAL_INV of an ordinary MR -> IBV_WC_LOC_QP_OP_ERR, dereg of an MR
#     with a window bound fails
#   selftests/verbs/kmod/softrc_frwr_test.ko (loop): kernel ULP fast
#     registration (alloc_mr, map_mr_sg, IB_WR_REG_MR), SEND_WITH_INV and
#     LOCAL_INV of the FRMR, their errors
# Each case runs on both topologies. SOFTRC_DRIVER=softrc|rxe.
#
# Topologies (selftests/verbs/topo.sh):
#   wire: netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b
#         (rxe: both ends in init_net, policy routing across the veth)
#   loop: init_net: va 10.0.0.1 (s0), client and server both on s0
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

trap topo_cleanup EXIT

# frwr_suite NAME: load the FRWR test module against DEV_A; it runs at
# load (failing the load if a check failed) and logs its cases
frwr_suite() {
	local ko=$KMOD_DIR/softrc_frwr_test.ko rc n0
	n0=$(dmesg | wc -l)
	insmod "$ko" dev="$DEV_A" gid="$GID_A" time_scale="$SOFTRC_TIME_SCALE"
	rc=$?
	dmesg | tail -n +$((n0 + 1)) | grep 'softrc_frwr_test: ' |
		sed 's/^.*softrc_frwr_test: /#   /'
	rmmod softrc_frwr_test 2>/dev/null
	if [ "$rc" = 0 ]; then ok "$1"; else not_ok "$1"; fi
}

# mw_suite NAME: selftests/verbs/mw on DEV_A; its cases become diagnostics
mw_suite() {
	# shellcheck disable=SC2086 # RUN_A is a command prefix
	prog_result "$1" '^(not )?ok' $RUN_A "$VERBS_DIR/mw" -d "$DEV_A" -g "$GID_A"
}

ktap_header "errors ($SOFTRC_DRIVER)"
[ -x "$RC_VERIFY" ] || { echo "1..0 # SKIP $RC_VERIFY not built"; exit 0; }
datapath_gate "errors ($SOFTRC_DRIVER)"

for topo in wire loop; do
	if ! topo_up $topo; then
		not_ok "$topo: topology up ($SOFTRC_DRIVER)"
		topo_down
		continue
	fi
	for e in badrkey oob noaccess-write noaccess-read noaccess-atomic; do
		rc_pair "$topo: $e -> IBV_WC_REM_ACCESS_ERR, then flushes, QP in ERR" -e $e
	done
	rc_pair "$topo: unreachable peer -> IBV_WC_RETRY_EXC_ERR after ~retry_cnt x timeout" \
		-e unreachable -r 3 -u 14
	rc_pair "$topo: rnr_retry 2, no receive -> IBV_WC_RNR_RETRY_EXC_ERR" -e rnr -R 2
	rc_pair "$topo: badlkey -> IBV_WC_LOC_PROT_ERR after the earlier WRs succeed, then flushes" \
		-e badlkey
	for e in nores-read nores-atomic; do
		n0=$(counter "$DEV_B" inv_req_naks_sent)
		rc_pair "$topo: $e: max_dest_rd_atomic 0 -> IBV_WC_REM_INV_REQ_ERR, nothing moved" \
			-e $e
		[ "$SOFTRC_DRIVER" = softrc ] &&
			check "$topo: $e: the responder NAKed it (inv_req_naks_sent > ${n0:-0})" \
				test "$(counter "$DEV_B" inv_req_naks_sent)" -gt "${n0:-0}"
	done
	check "$topo: post_send in RESET and INIT fails" \
		$RUN_A "$RC_VERIFY" -e state -d "$DEV_A" -g "$GID_A"
	mw_suite "$topo: memory windows, SEND_WITH_INV / LOCAL_INV rules and order"
	[ $topo = loop ] && [ "$SOFTRC_DRIVER" = softrc ] &&
		frwr_suite "$topo: kernel fast registration (alloc_mr, map_mr_sg, IB_WR_REG_MR) and its invalidation"
	if [ $topo = wire ]; then
		netem_set loss 100%
		rc_pair "$topo: wire cut (netem loss 100%) -> IBV_WC_RETRY_EXC_ERR after ~retry_cnt x timeout" \
			-e unreachable -r 2 -u 13
		netem_clear
	fi
	topo_down
done

ktap_finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The extended verbs API through stock librxe: selftests/verbs/wr_ex
# (ibv_create_qp_ex + ibv_wr_*, ibv_create_cq_ex + ibv_start_poll) on
# both topologies of selftests/verbs/topo.sh. SOFTRC_DRIVER=rxe runs the
# same program on Linux rxe, the reference for what librxe expects.
# softrc must offer ATOMIC WRITE (IBTA 1.5) on every kernel
# (WR_EX_ATOMIC_WRITE=1: wr_ex fails rather than skips without it); the
# rejects it answers with (misaligned VA) are checked in rdma statistic.
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
WR_EX=$VERBS_DIR/wr_ex

trap topo_cleanup EXIT

ktap_header "wr_ex ($SOFTRC_DRIVER)"
[ -x "$WR_EX" ] || { echo "1..0 # SKIP $WR_EX not built"; exit 0; }

for topo in loop wire; do
	if ! topo_up $topo; then
		not_ok "$topo: topology up ($SOFTRC_DRIVER)"
		topo_down
		continue
	fi
	aw=0
	if [ "$SOFTRC_DRIVER" = softrc ]; then
		aw=1
		# ibv_devinfo -v: device_cap_flags_ex bit 40 (rdma-core 44
		# prints it as an unknown flag)
		fx=$(ibv_devinfo -v -d "$DEV_A" | awk '/device_cap_flags_ex:/ { print $2; exit }')
		check "$topo: ibv_devinfo -v device_cap_flags_ex ${fx:-?} has ATOMIC_WRITE (bit 40)" \
			test $(( ${fx:-0} >> 40 & 1 )) = 1
		unal0=$(counter "$DEV_B" rx_drop_parse_ATOMIC_VA_UNALIGNED)
		acc0=$(counter "$DEV_B" rem_access_naks_sent)
	fi
	# one process drives both QPs; its KTAP lines become our results
	out=$(WR_EX_ATOMIC_WRITE=$aw timeout "$(tmo 120)" "$WR_EX" "$DEV_A" "$GID_A" "$DEV_B" "$GID_B" 2>&1)
	rc=$?
	while read -r line; do
		case $line in
		"not ok "*) not_ok "$topo: ${line#not ok }" ;;
		*) ok "$topo: ${line#ok }" ;;
		esac
	done <<<"$(printf '%s\n' "$out" | sed -n 's/^\(not \)\{0,1\}ok [0-9]* \(.*\)$/\1ok \2/p')"
	printf '%s\n' "$out" | grep -Ev '^(not )?ok |^TAP|^1\.\.' | sed "s/^/# $topo: /"
	check "$topo: wr_ex exit status 0 (got $rc)" test "$rc" = 0
	if [ "$aw" = 1 ]; then
		# the misaligned ATOMIC WRITE is a parser reject (then NAKed),
		# its bad R_Key and out-of-MR ones remote access NAKs, plus the
		# bad R_Key WRITE: all counted on the responder
		unal=$(counter "$DEV_B" rx_drop_parse_ATOMIC_VA_UNALIGNED)
		acc=$(counter "$DEV_B" rem_access_naks_sent)
		check "$topo: rdma statistic rx_drop_parse_ATOMIC_VA_UNALIGNED ${unal0:-?} -> ${unal:-?} (+1)" \
			test "$(( ${unal:-0} - ${unal0:-0} ))" = 1
		check "$topo: rdma statistic rem_access_naks_sent ${acc0:-?} -> ${acc:-?} (+3)" \
			test "$(( ${acc:-0} - ${acc0:-0} ))" = 3
	fi
	topo_down
done

ktap_finish

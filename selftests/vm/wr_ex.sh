#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The extended verbs API through stock librxe: selftests/verbs/wr_ex
# (ibv_create_qp_ex + ibv_wr_*, ibv_create_cq_ex + ibv_start_poll) on
# both topologies of selftests/verbs/topo.sh. SOFTRC_DRIVER=rxe runs the
# same program on Linux rxe, the reference for what librxe expects.
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
	# one process drives both QPs; its KTAP lines become our results
	out=$(timeout "$(tmo 120)" "$WR_EX" "$DEV_A" "$GID_A" "$DEV_B" "$GID_B" 2>&1)
	rc=$?
	while read -r line; do
		case $line in
		"not ok "*) not_ok "$topo: ${line#not ok }" ;;
		*) ok "$topo: ${line#ok }" ;;
		esac
	done <<<"$(printf '%s\n' "$out" | sed -n 's/^\(not \)\{0,1\}ok [0-9]* \(.*\)$/\1ok \2/p')"
	printf '%s\n' "$out" | grep -Ev '^(not )?ok |^TAP|^1\.\.' | sed "s/^/# $topo: /"
	check "$topo: wr_ex exit status 0 (got $rc)" test "$rc" = 0
	topo_down
done

ktap_finish

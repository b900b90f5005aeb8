#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Memory keys deregistered while work names them (security review F1/F6),
# with selftests/verbs/keys: a READ / SEND whose local MR is deregistered
# while the WQE is queued, an open WRITE and a paced READ whose remote MR
# is deregistered mid-message, each followed by new registrations at the
# same iova (the old key coming back where an index is reused lowest-free):
# the work fails with an error status, the new MR is neither written nor
# read out, and no READ data goes out as zeros. Then the per-device
# counters: mem_errors (engine) counted the failures.
# Each case runs on both topologies. SOFTRC_DRIVER=softrc only (rxe's
# behaviour differs: it re-resolves keys per packet).
#
# Topologies (selftests/verbs/topo.sh):
#   wire: netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b
#         (A on s0, B on s1, one process in rc-a)
#   loop: init_net: va 10.0.0.1 (s0), A and B both on s0
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

trap topo_cleanup EXIT

KEYS=$VERBS_DIR/keys

# mem_errors DEV: the engine's mem_errors counter of DEV (0 if absent)
mem_errors() {
	local v
	v=$(counter "$1" mem_errors)
	echo "${v:-0}"
}

# keys_suite NAME: selftests/verbs/keys, A on DEV_A and B on DEV_B; its
# cases become diagnostics
keys_suite() {
	# shellcheck disable=SC2086 # RUN_A is a command prefix
	prog_result "$1" '^(not )?ok|^# ' \
		$RUN_A "$KEYS" -d "$DEV_A" -g "$GID_A" -D "$DEV_B" -G "$GID_B"
}

ktap_header "keys ($SOFTRC_DRIVER)"
[ -x "$KEYS" ] || { echo "1..0 # SKIP $KEYS not built"; exit 0; }
[ "$SOFTRC_DRIVER" = softrc ] || { echo "1..0 # SKIP softrc only"; exit 0; }
datapath_gate "keys ($SOFTRC_DRIVER)"

for topo in wire loop; do
	if ! topo_up $topo; then
		not_ok "$topo: topology up ($SOFTRC_DRIVER)"
		topo_down
		continue
	fi
	n0=$(mem_errors "$DEV_A")
	[ "$DEV_B" != "$DEV_A" ] && n0=$((n0 + $(mem_errors "$DEV_B")))
	keys_suite "$topo: dereg / re-register with WQEs, a WRITE context and a READ resource outstanding: errors, new MRs untouched"
	n1=$(mem_errors "$DEV_A")
	[ "$DEV_B" != "$DEV_A" ] && n1=$((n1 + $(mem_errors "$DEV_B")))
	if [ "$n1" -gt "$n0" ]; then
		ok "$topo: mem_errors counted the failures ($n0 -> $n1)"
	else
		not_ok "$topo: mem_errors counted the failures ($n0 -> $n1)"
	fi
	topo_down
done

ktap_finish

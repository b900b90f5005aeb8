#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC traffic that is checked byte by byte: selftests/verbs/rc_verify (a
# seeded random mix of every RC operation, sizes 0..1 MiB, SGE lists,
# inline, unsignaled WRs (and an sq_sig_all QP), SEND_WITH_INV of type 2 memory windows; every
# CQE field, byte and atomic result checked), then ibv_rc_pingpong across IB MTUs 256..4096 and sizes
# 1 B..64 KiB. SOFTRC_DRIVER=softrc (default) or rxe picks the driver;
# SOFTRC_TEST_SCALE multiplies the operation counts.
#
# Topologies (selftests/verbs/topo.sh; veth MTU 9000 so IB MTU 4096 fits):
#   wire: netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b
#         (rxe: both ends in init_net, policy routing across the veth)
#   loop: init_net: va 10.0.0.1 (s0), client and server both on s0
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

trap topo_cleanup EXIT

ktap_header "traffic ($SOFTRC_DRIVER)"
[ -x "$RC_VERIFY" ] || { echo "1..0 # SKIP $RC_VERIFY not built"; exit 0; }
datapath_gate "traffic ($SOFTRC_DRIVER)"

n=$((300 * SCALE))
for topo in loop wire; do
	if ! topo_up $topo; then
		not_ok "$topo: topology up ($SOFTRC_DRIVER)"
		topo_down
		continue
	fi
	echo "# $topo: $DEV_A gid $GID_A -> $DEV_B gid $GID_B ($IP_B)"
	# -i mw: SEND_WITH_INV invalidates type 2 MWs bound by the server;
	# the invalidated rkey and IBV_WC_WITH_INV are checked per receive
	rc_pair "$topo: rc_verify $n ops, mtu 1024, seed 1 (PSNs across the 24-bit wrap), SEND_WITH_INV on MWs" \
		-n $n -S 1 -m 1024 -i mw
	rc_pair "$topo: rc_verify $n ops, mtu 4096, seed 2, SEND_WITH_INV on MWs" \
		-n $n -S 2 -m 4096 -i mw
	rc_pair "$topo: rc_verify $n ops, mtu 256, seed 5, up to 64 KiB" \
		-n $n -S 5 -m 256 -M 65536
	# -A: every WR of an sq_sig_all QP completes, signaled or not
	rc_pair "$topo: rc_verify $n ops, mtu 1024, seed 7, sq_sig_all QP, no WR signaled" \
		-n $n -S 7 -m 1024 -A
	for ms in 256:1 512:4096 1024:65536 2048:1000 4096:65536 4096:1 1024:4097; do
		mtu=${ms%:*} size=${ms#*:}
		pp_pair "$topo: ibv_rc_pingpong mtu $mtu size $size" \
			ibv_rc_pingpong -m "$mtu" -s "$size" -n $((20 * SCALE))
	done
	topo_down
done

ktap_finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# UC QPs: selftests/verbs/uc_verify (SENDs and RDMA WRITEs with immediate
# data of 4 KiB at path MTU 1024, so four packets a message: every one
# completes at the sender, every one arrives whole and in order, each
# received message in the next receive WQE; an RDMA READ is refused) and
# stock ibv_uc_pingpong with its buffer check. On the wire also under
# netem loss of single packets (softrc's tx_batch off for it): messages
# that lost a packet are dropped whole (IBTA
# ch. 9.8.4: no NAK, no retry), those after them arrive whole, each still
# in the next receive WQE, and the receiving device counts the dropped
# messages (uc_drop_msgs). SOFTRC_DRIVER=softrc (default) or rxe picks the
# driver; SOFTRC_TEST_SCALE multiplies the message counts.
#
# Topologies (selftests/verbs/topo.sh):
#   wire: netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b;
#         the receiver (server) in rc-b, the sender in rc-a
#   loop: init_net: va 10.0.0.1 (s0), sender and receiver both on s0
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

UC_VERIFY=$VERBS_DIR/uc_verify
trap topo_cleanup EXIT

ktap_header "uc ($SOFTRC_DRIVER)"
[ -x "$UC_VERIFY" ] || { echo "1..0 # SKIP $UC_VERIFY not built"; exit 0; }
datapath_gate "uc ($SOFTRC_DRIVER)"

# uc_pair NAME [uc_verify options...]: the receiver on DEV_B, the sender
# on DEV_A, over a Unix socket; one KTAP line, the sender's results and
# counts as diagnostics
uc_pair_n=0
uc_pair() {
	local name=$1 sock out rc srv
	shift
	uc_pair_n=$((uc_pair_n + 1))
	sock=/tmp/uc_verify.$$.$uc_pair_n.sock
	$RUN_B timeout "$(tmo 120)" "$UC_VERIFY" -s -d "$DEV_B" -g "$GID_B" "$@" "$sock" \
		>/tmp/uc_srv.$$.log 2>&1 &
	srv=$!
	out=$($RUN_A timeout "$(tmo 120)" "$UC_VERIFY" -d "$DEV_A" -g "$GID_A" "$@" "$sock" 2>&1)
	rc=$?
	wait "$srv" || rc=1
	if [ "$rc" = 0 ]; then
		printf '%s\n' "$out" | grep -E '^(ok|# )' | sed 's/^/#   /'
		ok "$name"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		sed 's/^/# server: /' /tmp/uc_srv.$$.log
		not_ok "$name"
	fi
}

n=$((100 * SCALE))
for topo in loop wire; do
	if ! topo_up $topo; then
		not_ok "$topo: topology up ($SOFTRC_DRIVER)"
		topo_down
		continue
	fi
	uc_pair "$topo: uc_verify $n SENDs + $n WRITE_WITH_IMM of 4 KiB, MTU 1024" \
		-n "$n" -S 4096 -m 3
	pp_pair "$topo: ibv_uc_pingpong 4 KiB x $((n / 10)), checked" \
		ibv_uc_pingpong -s 4096 -n $((n / 10)) -c
	if [ "$topo" = wire ]; then
		before=$(counter "$DEV_B" uc_drop_msgs)
		# one packet a skb, so that netem loses single packets of a
		# message (a GSO batch, a whole message, is lost whole)
		batch=/sys/module/softrc/parameters/tx_batch
		[ -w $batch ] && echo 0 >$batch
		netem_set loss 3%
		uc_pair "$topo: loss 3% (packets): uc_verify $n + $n of 4 KiB, the rest whole" \
			-l -n "$n" -S 4096 -m 3
		netem_clear
		[ -w $batch ] && echo 1 >$batch
		after=$(counter "$DEV_B" uc_drop_msgs)
		if [ "$SOFTRC_DRIVER" != softrc ]; then
			ok "$topo: $DEV_B counts dropped UC messages # SKIP rxe has no such counter"
		elif [ -n "$before" ] && [ -n "$after" ] && [ "$after" -gt "$before" ]; then
			ok "$topo: $DEV_B counts dropped UC messages (uc_drop_msgs $before -> $after)"
		else
			not_ok "$topo: $DEV_B counts dropped UC messages" \
				"uc_drop_msgs ${before:-?} -> ${after:-?}"
		fi
		uc_pair "$topo: clean again: uc_verify $n + $n, all arrive" -n "$n" -S 4096 -m 3
	fi
	topo_down
done

ktap_finish

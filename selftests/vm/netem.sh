#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Recovery under a lossy wire: selftests/verbs/rc_verify with `tc netem`
# on both veth ends, first `loss 1%`, then `loss 5% reorder 10% duplicate
# 1% delay 1ms`, then `corrupt 2%`. All data and every CQE must still be
# correct, and the driver's retransmit counter (rdma statistic) must have
# moved; with corruption, softrc's rx_bad_icrc too.
# SOFTRC_DRIVER=softrc|rxe; SOFTRC_TEST_SCALE multiplies the op counts.
#
# Topology (selftests/verbs/topo.sh, wire):
#   netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b
#   (rxe: both ends in init_net, policy routing across the veth)
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

cleanup() {
	netem_clear
	topo_cleanup
}
trap cleanup EXIT

ktap_header "netem ($SOFTRC_DRIVER)"
[ -x "$RC_VERIFY" ] || { echo "1..0 # SKIP $RC_VERIFY not built"; exit 0; }
datapath_gate "netem ($SOFTRC_DRIVER)"

# retransmitted requests: softrc counts them as retransmits; rxe 6.1 as
# completer_retry_err (a timeout or NAK that restarts the send queue)
case $SOFTRC_DRIVER in
softrc) RETX=retransmits ;;
*) RETX=completer_retry_err ;;
esac

# total NAME: counter NAME of both devices, summed
total() {
	echo $(($(counter "$DEV_A" "$1" || echo 0) + $(counter "$DEV_B" "$1" || echo 0)))
}

topo_up wire || { not_ok "wire: topology up"; ktap_finish; exit 1; }
check "rdma statistic lists $RETX" bash -c "rdma statistic show link $DEV_A/1 | grep -qw $RETX"

n=$((200 * SCALE))
# the ACK timeout: 14 (67 ms) at reference speed, longer on a slow VM. On
# the debug kernel (10-30 times slower) a fixed 14 let seven timeouts in a
# row pass without ACK progress while 1 MiB messages were resent:
# RETRY_EXC_ERR with no bug
ack=$(ack_timeout_for 14)
before=$(total "$RETX")
netem_set loss 1%
rc_pair "loss 1%: rc_verify $n ops up to 1 MiB, all data correct" -n $n -S 11 -u "$ack"
after=$(total "$RETX")
check "loss 1%: $RETX went up ($before -> $after)" test "$after" -gt "$before"

before=$after
netem_set loss 5% reorder 10% duplicate 1% delay 1ms
rc_pair "loss 5% reorder 10% duplicate 1% delay 1ms: rc_verify $n ops up to 256 KiB" \
	-n $n -S 12 -u "$ack" -M 262144 -T 150
after=$(total "$RETX")
check "loss 5% ...: $RETX went up ($before -> $after)" test "$after" -gt "$before"

# Flipped bits, which only the ICRC catches (the UDP checksum is 0). At
# MTU 256 a payload is copied into the packet's linear part, where netem
# corrupts, so most flips land in payload: each such packet must be
# dropped (softrc counts it in rx_bad_icrc), never placed, and recovered
# like a lost one; rc_verify checks every byte.
before=$(total "$RETX")
[ "$SOFTRC_DRIVER" = softrc ] && bad0=$(total rx_bad_icrc)
netem_set corrupt 2%
rc_pair "corrupt 2%, mtu 256: rc_verify $n ops up to 64 KiB, all data correct" \
	-n $n -S 14 -u "$ack" -m 256 -M 65536 -T 150
after=$(total "$RETX")
check "corrupt 2%: $RETX went up ($before -> $after)" test "$after" -gt "$before"
if [ "$SOFTRC_DRIVER" = softrc ]; then
	bad1=$(total rx_bad_icrc)
	check "corrupt 2%: rx_bad_icrc went up ($bad0 -> $bad1)" test "$bad1" -gt "$bad0"
fi
netem_clear
echo "# $DEV_A: $(rdma statistic show link "$DEV_A/1" | cut -d' ' -f3-)"
echo "# $DEV_B: $(rdma statistic show link "$DEV_B/1" | cut -d' ' -f3-)"
rc_pair "clean again afterwards: rc_verify $n ops" -n $n -S 13

ktap_finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RC traffic with stock tools: ibv_rc_pingpong and perftest.
#
# Topologies:
#   wire:     netns dp-a: va 10.0.1.1/24 (sa) === vb 10.0.1.2/24 (sb): netns dp-b
#   loopback: init_net:   vl 10.0.2.1/24 (sl), peer vm (carrier only);
#             client and server both on sl
# Veth MTU 9000 so every IB MTU up to 4096 fits.
set -u
. "$(dirname "$0")/lib.sh"

A="ip netns exec dp-a"
B="ip netns exec dp-b"

cleanup() {
	rdma link del sa 2>/dev/null
	rdma link del sb 2>/dev/null
	rdma link del sl 2>/dev/null
	ip netns del dp-a 2>/dev/null
	ip netns del dp-b 2>/dev/null
	ip link del vl 2>/dev/null
	rmmod softrc 2>/dev/null
}
trap cleanup EXIT

# gid_index DEV IPV4: the RoCE v2 GID index of an IPv4 address
gid_index() {
	local g
	for g in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		if [ "$(cat "$g" 2>/dev/null)" = "$(python3 -c '
import ipaddress, sys
b = ipaddress.IPv4Address(sys.argv[1]).packed
print("0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x" % tuple(b))' "$2")" ]; then
			basename "$g"
			return 0
		fi
	done
	return 1
}

# gid6_index DEV IPV6: the RoCE v2 GID index of an IPv6 address
gid6_index() {
	local g want
	want=$(python3 -c '
import ipaddress, sys
print(ipaddress.IPv6Address(sys.argv[1]).exploded)' "$2")
	for g in /sys/class/infiniband/"$1"/ports/1/gids/*; do
		if [ "$(cat "$g" 2>/dev/null)" = "$want" ]; then
			basename "$g"
			return 0
		fi
	done
	return 1
}

# run_pair SERVER_PREFIX CLIENT_PREFIX TIMEOUT SERVER_CMD... -- CLIENT_CMD...
# (the pingpongs' fixed ACK timeout scaled through ack_shim)
run_pair() {
	local sp=$1 cp=$2 t=$3 scmd=() ccmd=() spid rc shim
	shift 3
	while [ "$1" != -- ]; do scmd+=("$1"); shift; done
	shift
	ccmd=("$@")
	t=$(tmo "$t")
	shim=$(ack_shim)
	$sp timeout "$t" $shim "${scmd[@]}" >/tmp/dp-server.log 2>&1 &
	spid=$!
	# the exchange port (ibv_rc_pingpong and perftest: 18515)
	wait_until 20 bash -c "$sp ss -ltnH 'sport = :18515' | grep -q ."
	if ! $cp timeout "$t" $shim "${ccmd[@]}" >/tmp/dp-client.log 2>&1; then
		kill "$spid" 2>/dev/null
		wait "$spid"
		cat /tmp/dp-client.log /tmp/dp-server.log
		return 1
	fi
	wait "$spid"
	rc=$?
	[ $rc -eq 0 ] || cat /tmp/dp-server.log /tmp/dp-client.log
	return $rc
}

ktap_header datapath

check "load softrc.ko" softrc_load
if ! softrc_loaded; then
	ktap_finish
	exit
fi

ip netns add dp-a
ip netns add dp-b
ip link add va netns dp-a mtu 9000 type veth peer name vb netns dp-b mtu 9000
$A ip addr add 10.0.1.1/24 dev va
$B ip addr add 10.0.1.2/24 dev vb
$A ip -6 addr add fd01::1/64 dev va nodad
$B ip -6 addr add fd01::2/64 dev vb nodad
$A ip link set va up
$B ip link set vb up
$A ip link set lo up
$B ip link set lo up
ip link add vl mtu 9000 type veth peer name vm mtu 9000
ip addr add 10.0.2.1/24 dev vl
ip link set vl up
ip link set vm up
ip link set lo up

check "rdma link add sa (netns dp-a)" $A rdma link add sa type softrc netdev va
check "rdma link add sb (netns dp-b)" $B rdma link add sb type softrc netdev vb
check "rdma link add sl (init_net)" rdma link add sl type softrc netdev vl
export -f gid_index gid6_index
check "IPv4 GIDs appear" wait_until 10 bash -c \
	'gid_index sa 10.0.1.1 && gid_index sb 10.0.1.2 && gid_index sl 10.0.2.1'
check "IPv6 GIDs appear" wait_until 10 bash -c \
	'gid6_index sa fd01::1 && gid6_index sb fd01::2'
GA6=$(gid6_index sa fd01::1)
GB6=$(gid6_index sb fd01::2)
GA=$(gid_index sa 10.0.1.1)
GB=$(gid_index sb 10.0.1.2)
GL=$(gid_index sl 10.0.2.1)
echo "# gid indexes: sa $GA sb $GB sl $GL"

# --- ibv_rc_pingpong ---------------------------------------------------------
for mtu in 256 512 1024 2048 4096; do
	check "rc_pingpong wire mtu $mtu 4 KiB" run_pair "$B" "$A" 60 \
		ibv_rc_pingpong -d sb -g "$GB" -m $mtu -s 4096 -n 20 -- \
		ibv_rc_pingpong -d sa -g "$GA" -m $mtu -s 4096 -n 20 10.0.1.2
done
for size in 1 64 1000 65536; do
	check "rc_pingpong wire mtu 1024 size $size" run_pair "$B" "$A" 60 \
		ibv_rc_pingpong -d sb -g "$GB" -m 1024 -s $size -n 20 -- \
		ibv_rc_pingpong -d sa -g "$GA" -m 1024 -s $size -n 20 10.0.1.2
done
check "rc_pingpong wire IPv6 GIDs" run_pair "$B" "$A" 60 \
	ibv_rc_pingpong -d sb -g "$GB6" -s 4096 -n 20 -- \
	ibv_rc_pingpong -d sa -g "$GA6" -s 4096 -n 20 10.0.1.2
check "rc_pingpong wire with completion events (-e)" run_pair "$B" "$A" 60 \
	ibv_rc_pingpong -d sb -g "$GB" -e -s 4096 -n 20 -- \
	ibv_rc_pingpong -d sa -g "$GA" -e -s 4096 -n 20 10.0.1.2
check "srq_pingpong wire (SRQ, 4 QPs)" run_pair "$B" "$A" 60 \
	ibv_srq_pingpong -d sb -g "$GB" -q 4 -s 4096 -n 20 -- \
	ibv_srq_pingpong -d sa -g "$GA" -q 4 -s 4096 -n 20 10.0.1.2
for mtu in 256 1024 4096; do
	check "rc_pingpong loopback mtu $mtu 64 KiB" run_pair "" "" 60 \
		ibv_rc_pingpong -d sl -g "$GL" -m $mtu -s 65536 -n 20 -- \
		ibv_rc_pingpong -d sl -g "$GL" -m $mtu -s 65536 -n 20 127.0.0.1
done

# --- perftest ----------------------------------------------------------------
for t in ib_write_bw ib_read_bw ib_send_bw; do
	check "$t wire 64 KiB" run_pair "$B" "$A" 120 \
		$t -d sb -x "$GB" -s 65536 -n 200 -F -- \
		$t -d sa -x "$GA" -s 65536 -n 200 -F 10.0.1.2
done
check "ib_atomic_bw wire" run_pair "$B" "$A" 120 \
	ib_atomic_bw -d sb -x "$GB" -n 200 -F -- \
	ib_atomic_bw -d sa -x "$GA" -n 200 -F 10.0.1.2
for t in ib_write_lat ib_send_lat ib_read_lat; do
	check "$t wire" run_pair "$B" "$A" 120 \
		$t -d sb -x "$GB" -n 200 -F -- \
		$t -d sa -x "$GA" -n 200 -F 10.0.1.2
done
check "ib_write_bw loopback 64 KiB -q 2" run_pair "" "" 120 \
	ib_write_bw -d sl -x "$GL" -s 65536 -n 200 -q 2 -F -- \
	ib_write_bw -d sl -x "$GL" -s 65536 -n 200 -q 2 -F 127.0.0.1

# --- counters ----------------------------------------------------------------
check "rdma statistic: tx_pkts counted on sa" bash -c \
	'rdma statistic show link sa/1 | grep -Eq "tx_pkts [1-9]"'
check "rdma statistic: no bad ICRC" bash -c \
	'rdma statistic show link sb/1 | grep -Eq "rx_bad_icrc 0"'
# loopback traffic skips the IP stack (tx_self), wire traffic does not
check "rdma statistic: loopback packets went to self (tx_self > 0 on sl)" bash -c \
	'rdma statistic show link sl/1 | grep -Eq "tx_self [1-9]"'
check "rdma statistic: wire packets did not (tx_self 0 on sa)" bash -c \
	'rdma statistic show link sa/1 | grep -Eq "tx_self 0( |$)"'
# wire packets leave in GSO batches (tx.c), unless tx_batch=0
check "rdma statistic: wire packets left in GSO batches (tx_batches > 0 on sa)" \
	test "$(counter sa tx_batches)" -gt 0
batches=$(counter sa tx_batches)
echo 0 >/sys/module/softrc/parameters/tx_batch
check "tx_batch=0: ib_write_bw wire 64 KiB, one skb per packet" run_pair "$B" "$A" 120 \
	ib_write_bw -d sb -x "$GB" -s 65536 -n 100 -F -- \
	ib_write_bw -d sa -x "$GA" -s 65536 -n 100 -F 10.0.1.2
check "tx_batch=0: no batch sent (tx_batches still $batches)" \
	test "$(counter sa tx_batches)" = "$batches"
echo 1 >/sys/module/softrc/parameters/tx_batch
check "tx_batch=1: rc_pingpong wire IPv6 GIDs 64 KiB, mtu 1024, batched" run_pair "$B" "$A" 60 \
	ibv_rc_pingpong -d sb -g "$GB6" -m 1024 -s 65536 -n 20 -c -- \
	ibv_rc_pingpong -d sa -g "$GA6" -m 1024 -s 65536 -n 20 -c 10.0.1.2
check "tx_batch=1: batches again (tx_batches > $batches)" \
	test "$(counter sa tx_batches)" -gt "$batches"

# --- ACKs (Documentation/softrc.rst, "ACKs") -----------------------------------
# ib_write_bw signals one WRITE in 100 (CQ moderation): softrc asks for an
# ACK on those and on every 16th packet, not on every message; with
# ackreq_every_msg=1 it asks on every one, as before
acks_write_bw() {
	run_pair "$B" "$A" 120 \
		ib_write_bw -d sb -x "$GB" -s 64 -n 2000 -F -- \
		ib_write_bw -d sa -x "$GA" -s 64 -n 2000 -F 10.0.1.2
}
# Each AckReq probe (a tail left idle for a probe interval, 1 to 9 ms)
# draws an ACK of its own: how many there are depends on the guest's
# speed (none or one here at full speed, over a hundred on the debug
# kernel, whose messages take milliseconds), so the policy's own ACKs
# are the ACKs less the probes, and the probes are bounded by 50 at full
# speed (SOFTRC_TIME_SCALE times that on a slower guest)
tmo0=$(counter sa timeouts)
acks0=$(counter sb acks_sent)
probes0=$(counter sa ackreq_probes)
check "ACKs: ib_write_bw wire 64 B x 2000" acks_write_bw
acks=$(( $(counter sb acks_sent) - acks0 ))
probes=$(( $(counter sa ackreq_probes) - probes0 ))
check "ACKs: at most one in 8 of the 2000 messages acknowledged besides the $probes AckReq probes' (got $acks)" \
	test $((acks - probes)) -le 250
check "ACKs: at most 50 AckReq probes at full speed, times the time scale ${SOFTRC_TIME_SCALE:-1} (got $probes)" \
	test "$probes" -le $((50 * ${SOFTRC_TIME_SCALE:-1}))
echo 1 >/sys/module/softrc/parameters/ackreq_every_msg
acks0=$(counter sb acks_sent)
check "ackreq_every_msg=1: ib_write_bw wire 64 B x 2000" acks_write_bw
acks1=$(( $(counter sb acks_sent) - acks0 ))
echo 0 >/sys/module/softrc/parameters/ackreq_every_msg
check "ackreq_every_msg=1: over twice the ACKs ($acks1 against $acks)" \
	test "$acks1" -gt $(( 2 * acks ))
check "ACKs: no local ACK timeout in either run (timeouts $tmo0 -> $(counter sa timeouts))" \
	test "$(counter sa timeouts)" = "$tmo0"
check "rdma statistic: still no bad ICRC on either end" bash -c \
	'rdma statistic show link sa/1 | grep -Eq "rx_bad_icrc 0" &&
	 rdma statistic show link sb/1 | grep -Eq "rx_bad_icrc 0"'

# --- the doorbell (Documentation/softrc.rst, "The doorbell") ------------------
# in a ping-pong the receive path of the peer's WRITE leaves the poster's
# new WQE to its doorbell and sends its ACK after the lock; when it pulled
# the WQE, every other post found the QP lock taken while the other CPU
# sent the poster's WQE, and one in five while it built the ACK
waits0=$(counter sl post_lock_waits)
retx0=$(counter sl retransmits)
check "doorbell: ib_write_lat loopback 2 B x 1000" run_pair "" "" 120 \
	ib_write_lat -d sl -x "$GL" -s 2 -n 1000 -F -u 18 -- \
	ib_write_lat -d sl -x "$GL" -s 2 -n 1000 -F -u 18 127.0.0.1
waits=$(( $(counter sl post_lock_waits) - waits0 ))
check "doorbell: under one in 20 of the 2000 posts found the QP lock taken (got $waits)" \
	test "$waits" -lt 100
check "doorbell: no retransmission meanwhile (retransmits $retx0 -> $(counter sl retransmits))" \
	test "$(counter sl retransmits)" = "$retx0"

ktap_finish

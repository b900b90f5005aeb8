#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packet association (security review F2): forged RoCEv2 packets aimed at
# a live RC connection must be dropped before they touch the QP, and
# counted. The victim is an ibv_rc_pingpong pair with -c (the server
# validates what it receives), held still with SIGSTOP once its QPs are
# in RTS (the client stops itself there, before its first SEND);
# tools/inject/softrc-inject sends the forgeries from ordinary
# UDP sockets with valid ICRCs, sweeping the PSN upward from the victim's
# initial rq_psn (`rdma res show qp`, readable by anyone) so that on a
# driver without these checks one of them lands at the expected PSN and
# is executed. Afterwards the pair is resumed and must finish cleanly.
#
# Topologies:
#   wire (selftests/verbs/topo.sh): netns rc-a: va 10.0.0.1 (s0) ===
#        vb 10.0.0.2 (s1): netns rc-b; rc-a also gets 10.0.0.3, a third
#        address on the wire
#   loop (topo.sh): init_net: va 10.0.0.1 (s0), client and server QPs
#        both on s0 (their packets take the self queue, not `lo`)
#
# Injections (each must leave rx_pkts, the engine's receive count, of
# the victim device unchanged, and move exactly one drop counter):
#   wire:  from 10.0.0.3 (wrong source address)      -> rx_drop_addr
#   wire:  from 10.0.0.1 with P_Key 0x1234           -> rx_drop_pkey
#   wire:  user nobody in rc-b, to 10.0.0.2 over lo  -> rx_drop_loopback
#   loop:  user nobody, from 10.0.0.1 (the QPs' own address, so the
#          address check alone would pass it) to 10.0.0.1 over lo
#                                                    -> rx_drop_loopback
# Also (review H1): rc_verify over IPv6 with a flow label above 20 bits.
# And, as a control, two duplicate SENDs from the right peer with P_Key
# 0xffff and 0x7fff (limited member; the QP is a full member) must reach
# the engine (rx_pkts +2, dup_requests +2): the ICRC and the checks are
# right, not just dropping everything.
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

INJECT="$REPO/tools/inject/softrc-inject --udp --op SEND_ONLY"
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
SWEEP=2048
# iterations of the victim pair, all run after the forgeries (its client
# stops itself at RTS, before its first SEND)
PP_N=2000
SRV= CLI=

cleanup() {
	[ -n "$SRV$CLI" ] && kill -CONT $SRV $CLI 2>/dev/null
	[ -n "$SRV$CLI" ] && kill $SRV $CLI 2>/dev/null
	topo_cleanup
}
trap cleanup EXIT

# qp_attr DEV FIELD: FIELD (lqpn, rq-psn, ...) of DEV's RTS QP of ibv_rc_pingpong
qp_attr() {
	rdma res show qp -j 2>/dev/null | /usr/bin/python3 -c '
import json, sys
dev, field = sys.argv[1], sys.argv[2]
for q in json.load(sys.stdin):
    if q.get("ifname") == dev and q.get("state") == "RTS" and \
       q.get("comm") == "ibv_rc_pingpong":
        print(q[field])
        break
else:
    sys.exit(1)' "$1" "$2"
}

# settle DEV...: wait until the devices' rx_pkts stop moving (for 1 s,
# scaled to the VM's speed)
settle() {
	local d before after i
	for i in $(seq 20); do
		before= after=
		for d in "$@"; do before="$before $(counter "$d" rx_pkts)"; done
		sleep "$(tmo 1)"
		for d in "$@"; do after="$after $(counter "$d" rx_pkts)"; done
		[ "$before" = "$after" ] && return 0
	done
	return 1
}

# victim_start PREFIX_B DEV_B GID_B PREFIX_A DEV_A GID_A IP_B: a pingpong
# pair, stopped once both QPs are in RTS and the wire is quiet. The client
# stops itself (the preload shim's SOFTRC_STOP_AT_RTS) as soon as its QP
# is in RTS, before its first SEND: however fast the VM, the pair has not
# begun (a pair stopped from outside could have finished first), and the
# forgeries meet the QPs' initial PSNs. Its ACK timeout (ibv_rc_pingpong
# fixes 14) grows with the VM's slowness through the same shim: on the
# debug kernel the device takes seconds to drop an injected burst, and
# the pair must outlast that.
victim_start() {
	local pb=$1 db=$2 gb=$3 pa=$4 da=$5 ga=$6 ipb=$7 port
	local shim
	shim=$(ack_shim)
	if [ -z "$shim" ]; then
		echo "# victim: no preload shim (selftests/verbs/preload not built)"
		return 1
	fi
	port=$((20000 + RANDOM % 20000))
	$pb $shim ibv_rc_pingpong -d "$db" -g "$gb" -p $port -s 1024 -m 1024 -n $PP_N -c \
		>/tmp/assoc-srv.log 2>&1 &
	SRV=$!
	wait_until 20 bash -c "$pb ss -ltn | grep -q ':$port '" || return 1
	$pa $shim SOFTRC_STOP_AT_RTS=1 ibv_rc_pingpong -d "$da" -g "$ga" -p $port -s 1024 \
		-m 1024 -n $PP_N -c "$ipb" >/tmp/assoc-cli.log 2>&1 &
	CLI=$!
	wait_until 20 grep -q '^State:[[:space:]]*T' /proc/$CLI/status || return 1
	wait_until 20 qp_attr "$db" lqpn && wait_until 20 qp_attr "$da" lqpn || return 1
	kill -STOP $SRV $CLI
	settle "$db" "$da"
}

# victim_failed: why victim_start failed
victim_failed() {
	rdma res show qp | sed 's/^/# qp: /'
	sed 's/^/# server: /' /tmp/assoc-srv.log
	sed 's/^/# client: /' /tmp/assoc-cli.log
}

# victim_finish NAME: resume the pair; both must exit 0 (no error
# completion, every received buffer valid, every iteration done). Not in
# a subshell (check): it waits for this shell's children.
victim_finish() {
	local rc=0 name=$1
	kill -CONT $SRV $CLI
	timeout "$(tmo 120)" tail --pid=$CLI -f /dev/null
	timeout "$(tmo 30)" tail --pid=$SRV -f /dev/null
	# a pair the forgeries broke may wait forever: give up on it
	kill $SRV $CLI 2>/dev/null
	wait $CLI || rc=1
	wait $SRV || rc=1
	SRV= CLI=
	if [ $rc = 0 ]; then
		ok "$name"
		return 0
	fi
	sed 's/^/# server: /' /tmp/assoc-srv.log
	sed 's/^/# client: /' /tmp/assoc-cli.log
	not_ok "$name"
	return 1
}

# inject NAME DEV DROP_COUNTER N PREFIX INJECT_ARGS...: N forged packets
# dropped: DEV's DROP_COUNTER +N, rx_pkts and rx_bad_icrc unchanged
inject() {
	local name=$1 dev=$2 cnt=$3 n=$4 pfx=$5 rx0 d0 i0 rx1 d1 i1 out
	shift 5
	rx0=$(counter "$dev" rx_pkts) d0=$(counter "$dev" "$cnt") i0=$(counter "$dev" rx_bad_icrc)
	if ! out=$($pfx $INJECT "$@" 2>&1); then
		printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "$name" "injector failed"
		return
	fi
	# the drops are counted as the packets arrive: wait for all N
	[ -n "$d0" ] && wait_until 5 bash -c "[ \$((\$(counter $dev $cnt) - $d0)) -ge $n ]"
	rx1=$(counter "$dev" rx_pkts) d1=$(counter "$dev" "$cnt") i1=$(counter "$dev" rx_bad_icrc)
	echo "# $name: $out; rx_pkts $rx0 -> $rx1, $cnt ${d0:-none} -> ${d1:-none}, rx_bad_icrc $i0 -> $i1"
	if [ -n "$d0" ] && [ "$rx1" = "$rx0" ] && [ "$i1" = "$i0" ] &&
	   [ $((d1 - d0)) = "$n" ]; then
		ok "$name"
	else
		not_ok "$name"
	fi
}

ktap_header "assoc"
datapath_gate assoc
command -v setpriv >/dev/null || { echo "1..0 # SKIP no setpriv"; exit 0; }

# --- wire: a third address, a wrong P_Key, a local user over lo ---------------
if topo_up wire; then
	$RUN_A ip addr add 10.0.0.3/24 dev va
	if victim_start "$RUN_B" "$DEV_B" "$GID_B" "$RUN_A" "$DEV_A" "$GID_A" "$IP_B"; then
		qpn=$(qp_attr "$DEV_B" lqpn) psn=$(qp_attr "$DEV_B" rq-psn)
		echo "# victim: $DEV_B QP $qpn, initial rq_psn $psn"
		inject "wire: SENDs from a third address (10.0.0.3) dropped: rx_drop_addr" \
			"$DEV_B" rx_drop_addr $SWEEP "$RUN_A" --src 10.0.0.3 --dst 10.0.0.2 \
			--qpn "$qpn" --psn "$psn" --count $SWEEP
		inject "wire: SENDs from the peer's address with P_Key 0x1234 dropped: rx_drop_pkey" \
			"$DEV_B" rx_drop_pkey $SWEEP "$RUN_A" --src 10.0.0.1 --dst 10.0.0.2 \
			--qpn "$qpn" --psn "$psn" --count $SWEEP --pkey 0x1234
		inject "wire: SENDs of user nobody over lo dropped: rx_drop_loopback" \
			"$DEV_B" rx_drop_loopback $SWEEP "$RUN_B $NOBODY" --dst 10.0.0.2 \
			--qpn "$qpn" --psn "$psn" --count $SWEEP
		# control: the right peer's duplicates are answered
		rx0=$(counter "$DEV_B" rx_pkts) dup0=$(counter "$DEV_B" dup_requests)
		$RUN_A $INJECT --src 10.0.0.1 --dst 10.0.0.2 --qpn "$qpn" \
			--psn $(((psn - 16) & 0xffffff)) --pkey 0xffff >/dev/null
		$RUN_A $INJECT --src 10.0.0.1 --dst 10.0.0.2 --qpn "$qpn" \
			--psn $(((psn - 15) & 0xffffff)) --pkey 0x7fff >/dev/null
		wait_until 5 bash -c "[ \$((\$(counter $DEV_B dup_requests) - $dup0)) -ge 2 ]"
		rx1=$(counter "$DEV_B" rx_pkts) dup1=$(counter "$DEV_B" dup_requests)
		echo "# control: rx_pkts $rx0 -> $rx1, dup_requests $dup0 -> $dup1"
		check "wire: duplicates from the peer with P_Key 0xffff and 0x7fff reach the QP" \
			test $((rx1 - rx0)) = 2 -a $((dup1 - dup0)) = 2
		victim_finish "wire: the victim pair finishes cleanly ($PP_N validated iterations)"
	else
		victim_failed
		not_ok "wire: victim pingpong pair set up"
	fi
	check "wire: no packet of the victim went through lo (rx_drop_loopback on $DEV_A = 0)" \
		test "$(counter "$DEV_A" rx_drop_loopback)" = 0
	# H1: a flow label wider than 20 bits, as modify_qp takes it, must
	# not reach the IPv6 header's version and traffic class
	$RUN_A ip -6 addr add fd02::1/64 dev va nodad
	$RUN_B ip -6 addr add fd02::2/64 dev vb nodad
	if wait_until 10 gid_index "$DEV_A" fd02::1 && wait_until 10 gid_index "$DEV_B" fd02::2; then
		GID_A=$(gid_index "$DEV_A" fd02::1) GID_B=$(gid_index "$DEV_B" fd02::2)
		rc_pair "wire: IPv6 QP path with flow label 0xfff12345 (masked to 20 bits)" \
			-n 50 -T 60 -r 3 -L 0xfff12345
	else
		not_ok "wire: IPv6 GIDs fd02::1 and fd02::2"
	fi
else
	not_ok "wire: topology up"
fi
topo_down

# --- loop: one device, both QPs on it; the forger binds its address --------
if topo_up loop; then
	if victim_start "" "$DEV_B" "$GID_B" "" "$DEV_A" "$GID_A" "$IP_B"; then
		qpn=$(qp_attr "$DEV_B" lqpn) psn=$(qp_attr "$DEV_B" rq-psn)
		echo "# victim: $DEV_B QP $qpn, initial rq_psn $psn"
		inject "loop: SENDs of user nobody from the QPs' own address 10.0.0.1 dropped: rx_drop_loopback" \
			"$DEV_B" rx_drop_loopback $SWEEP "$NOBODY" --src 10.0.0.1 --dst 10.0.0.1 \
			--qpn "$qpn" --psn "$psn" --count $SWEEP
		victim_finish "loop: the victim pair finishes cleanly ($PP_N validated iterations)"
		check "loop: the pair's own packets took the self queue, none came over lo" \
			test "$(counter "$DEV_A" tx_self)" -gt 0 -a \
			"$(counter "$DEV_A" rx_drop_loopback)" = $SWEEP
	else
		victim_failed
		not_ok "loop: victim pingpong pair set up"
	fi
else
	not_ok "loop: topology up"
fi

ktap_finish

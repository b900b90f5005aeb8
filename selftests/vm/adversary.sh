#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Forged packets against live RC connections (the security review's F1,
# F2 and F5, the protocol review's findings 4 and 5). A victim process
# (selftests/verbs/adv_victim) holds one RC connection per case; the
# injector (tools/inject/softrc-inject) forges RoCE v2 packets with a
# valid ICRC from another network namespace (raw socket, any source
# address; or a plain UDP socket from the peer's address) or from an
# unprivileged local UDP socket. After each attack the victim checks that
# nothing happened (no completion, its receive buffers and MRs unchanged,
# QPs RTS) and that the connection still carries a real SEND, WRITE and
# READ with the right data both ways. The attack must also be visible:
# some rx_drop* counter of the victim's device moves (counter names are
# the fixes'; any rx_drop* counts), and rx_bad_icrc stays put (the packet
# was well formed, so the drop was a decision, not an accident).
#
#   wire: netns rc-a: va 10.0.0.1 (s0, victim QP A) === vb 10.0.0.2 (s1, QP B)
#         attackers in rc-b: UDP from 10.0.0.2 (the right address) or raw
#         with source 10.0.0.3 (a wrong one)
#   loop: init_net: va 10.0.0.1 (s0, QPs A and B); vb moved to netns rc-x
#         as 10.0.0.3, the attacker; the right address is 10.0.0.1 itself,
#         which only a local socket can send from
#
# Cases (both topologies unless marked):
#   control (wire): a valid SEND from the right address is delivered, once
#     by UDP and once by raw socket (proves the injector's packets and ICRC)
#   wrong source: SEND_ONLY PSN sweep around the expected PSN; WRITE_ONLY
#     into the victim's remote-writable MR; READ request + FETCH_ADD
#   wrong P_Key (wire): SEND_ONLY at the expected PSN, P_Key 0x1234
#   stale PSNs (wire): duplicate SENDs, WRITE and FETCH_ADD with forged
#     data from the right address: no re-execution, no data change
#   forged NAK (InvReq, PSN of A's outstanding SEND) and forged ACK (that
#     PSN, the next MSN) from a wrong address: ignored, the SEND completes
#     only when the peer really takes it, QP A stays RTS
#   unprivileged local UDP (setpriv nobody): SEND_ONLY to the device's own
#     address at the expected PSN; loop: also a forged ACK
#   F1: READ outstanding, its local MR deregistered and its key index
#     re-registered: the READ response must not land in the new MR
#   huge lengths (wire, right address, path MTU 256, a 4 GiB MR):
#     READ dma_len 0xffffffff and 0x90000000, WRITE_FIRST of 3 GiB: an
#     invalid-request NAK (inv_req_naks_sent), a bounded number of packets
#     (tx_pkts), no memory written
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
SOFTRC_DRIVER=softrc

VICTIM=$VERBS_DIR/adv_victim
INJ=$REPO/tools/inject/softrc-inject
INJ_NOBODY=/tmp/softrc-inject.$$
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"

HUGEPAGES=$(cat /proc/sys/vm/nr_hugepages)
adv_cleanup() {
	vic_stop
	echo "$HUGEPAGES" 2>/dev/null >/proc/sys/vm/nr_hugepages
	topo_down
	ip netns del rc-x 2>/dev/null
	rm -f "$INJ_NOBODY" "$INJ_LOG"
	driver_unload
}
trap adv_cleanup EXIT
# a dead victim must fail its cases, not kill the suite with SIGPIPE
trap '' PIPE

# --- the victim (a coprocess: commands in, answers out) --------------------
VPID="" VIN="" VOUT="" VIC_DEAD=""
vic_stop() {
	[ -n "$VPID" ] || return 0
	echo quit 1>&"$VIN" 2>/dev/null
	# the victim destroys its QPs on exit; a stuck one is killed
	wait_until 20 bash -c "! kill -0 $VPID" || kill "$VPID" 2>/dev/null
	wait "$VPID" 2>/dev/null
	VPID=
}

# vic_read UNTIL [quiet]: relay the victim's lines as diagnostics (quiet:
# not its passing results), evaluate its "state" lines, stop at a line
# starting with UNTIL; VIC_LINE holds it. A line may take 120 s (scaled:
# pinning the 4 GiB MR is slow on the debug kernel)
vic_read() {
	local line
	VIC_LINE=
	while IFS= read -r -t "$(tmo 120)" -u "$VOUT" line; do
		case $line in
		"state "*) eval "${line#state }" ;;
		"$1"*) VIC_LINE=$line; return 0 ;;
		"ok "*) [ -n "${2:-}" ] || printf '#   %s\n' "$line" ;;
		*) printf '#   %s\n' "$line" ;;
		esac
	done
	echo "#   (the victim stopped answering)"
	VIC_DEAD=1
	return 1
}

vic_start() {
	VIC_DEAD=
	coproc VIC { exec $RUN_A "$VICTIM" "$@" 2>&1; }
	# bash forgets VIC once the process ends: keep our own copies
	VPID=$VIC_PID
	exec {VIN}>&"${VIC[1]}" {VOUT}<&"${VIC[0]}"
	vic_read ready quiet
}

# vic CMD...: one victim command; succeeds when it answers "done CMD ok"
vic() {
	[ -z "$VIC_DEAD" ] || return 1
	echo "$*" 1>&"$VIN" || return 1
	vic_read "done" && [ "$VIC_LINE" = "done $1 ok" ]
}

# --- counters ---------------------------------------------------------------
# stats DEV: one `rdma statistic` read into ST_DROP (the sum of every rx_drop*
# counter), ST_ICRC (rx_bad_icrc), ST_TX (tx_pkts), ST_INVREQ
# (inv_req_naks_sent), ST_RNR (rnr_naks_rcvd), ST_DUP (dup_requests)
stats() {
	# (no process substitution: the guest has no /dev/fd)
	read -r ST_DROP ST_ICRC ST_TX ST_INVREQ ST_RNR ST_DUP <<<"$(
		rdma statistic show link "$1/1" | awk '{
			for (i = 1; i < NF; i++) {
				if ($i ~ /^rx_drop/) d += $(i + 1)
				v[$i] = $(i + 1)
			}
		} END {
			print d + 0, v["rx_bad_icrc"] + 0, v["tx_pkts"] + 0,
			      v["inv_req_naks_sent"] + 0, v["rnr_naks_rcvd"] + 0,
			      v["dup_requests"] + 0
		}')"
}

# above NAME VALUE: after a fresh stats of DEV_A, ST_NAME > VALUE
above() {
	local v="ST_$1"
	stats "$DEV_A"
	[ "${!v}" -gt "$2" ]
}

# --- the injectors ----------------------------------------------------------
# (nsenter: a bare setns, lighter than `ip netns exec`, which remounts /sys)
# RIGHT: from the peer's address; WRONG: from another address;
# LOCAL: an unprivileged socket on the victim's own host
wire_injectors() {
	RIGHT="nsenter --net=/run/netns/rc-b $INJ --udp --dst 10.0.0.1"
	RIGHT_RAW="nsenter --net=/run/netns/rc-b $INJ --raw --src 10.0.0.2 --dst 10.0.0.1"
	WRONG="nsenter --net=/run/netns/rc-b $INJ --raw --src 10.0.0.3 --dst 10.0.0.1"
	LOCAL="nsenter --net=/run/netns/rc-a $NOBODY $INJ_NOBODY --udp --dst 10.0.0.1"
}

loop_injectors() {
	RIGHT="" RIGHT_RAW=""
	WRONG="nsenter --net=/run/netns/rc-x $INJ --udp --dst 10.0.0.1"
	LOCAL="$NOBODY $INJ_NOBODY --udp --dst 10.0.0.1"
}

# pair P: the victim's values for pair P in QPN EPSN UNA NMSN VA RKEY
pair() {
	local f v
	for f in QPN EPSN UNA NMSN VA RKEY; do
		v="P$1_A_$f"
		printf -v "$f" %s "${!v:-0}"
	done
}

# psn EXPR: EXPR modulo 2^24
psn() { PSN=$((($*) & 0xffffff)); }

# inj VIA OP [options]: one or more packets for QP A of the current pair;
# the injector's line goes to the log, shown when it fails
INJ_LOG=/tmp/adv-inject.$$.log
inj() {
	local via=$1 op=$2
	shift 2
	if ! $via --op "$op" --qpn "$QPN" "$@" 2>"$INJ_LOG"; then
		sed 's/^/#   /' "$INJ_LOG"
		return 1
	fi
}

# --- case runners -------------------------------------------------------------
# verdict NAME WHY: ok when WHY is empty; every result says how long it took
T_LAST=$SECONDS
verdict() {
	echo "#   ($((SECONDS - T_LAST)) s)"
	T_LAST=$SECONDS
	if [ -z "$2" ]; then ok "$topo: $1"; else not_ok "$topo: $1" "$2"; fi
}

# dropped NAME P ATTACK: ATTACK (a function) forges packets for pair P; they
# must be dropped and counted, the victim untouched and its connection fine
dropped() {
	local name=$1 p=$2 attack=$3 d0 b0 why=
	pair "$p"
	stats "$DEV_A"
	d0=$ST_DROP b0=$ST_ICRC
	$attack || why="injector failed"
	wait_until 3 above DROP "$d0" || why="${why:+$why, }no rx_drop* counter moved"
	[ "$ST_ICRC" = "$b0" ] || why="${why:+$why, }rx_bad_icrc moved"
	vic check "$p" || why="${why:+$why, }victim changed or connection broken"
	verdict "$name" "$why"
}

# stalled NAME P ATTACK: A's SEND of pair P outstanding (B has no receive,
# answers RNR NAK), then ATTACK forges a response to it
stalled() {
	local r0
	stats "$DEV_A"
	r0=$ST_RNR
	if ! vic stall "$2" || ! wait_until 10 above RNR "$r0"; then
		verdict "$1" "A's SEND did not stay outstanding"
		return
	fi
	dropped "$@"
}

# huge NAME P ATTACK: must draw an invalid-request NAK and a bounded number
# of packets, and write nothing
huge() {
	local name=$1 p=$2 attack=$3 t0 n0 t tprev=-1 same=0 why=
	pair "$p"
	stats "$DEV_A"
	t0=$ST_TX n0=$ST_INVREQ
	$attack || why="injector failed"
	wait_until 5 above INVREQ "$n0" || why="${why:+$why, }no invalid-request NAK"
	# until the device is quiet for 0.5 s (scaled to the VM's speed), or
	# clearly streaming (>= 500)
	for _ in $(seq 40); do
		stats "$DEV_A"
		t=$((ST_TX - t0))
		[ "$t" -ge 500 ] && break
		if [ "$t" = "$tprev" ]; then
			same=$((same + 1))
			[ "$same" -ge 2 ] && break
		else
			same=0
		fi
		tprev=$t
		sleep "$(tmo 0.25)"
	done
	echo "#   $t packets sent by $DEV_A"
	[ "$t" -le 8 ] || why="${why:+$why, }$t packets sent, expected a NAK"
	vic quiet "$p" || why="${why:+$why, }victim memory changed"
	# stop whatever A's responder is still sending
	vic err "$p" >/dev/null
	stats "$DEV_A"
	t=$ST_TX
	until sleep "$(tmo 0.3)" && stats "$DEV_A" && [ "$ST_TX" = "$t" ]; do
		t=$ST_TX
	done
	verdict "$name" "$why"
}

# --- attacks (for the current pair) ---------------------------------------------
a_send_sweep() {
	psn "$EPSN - 4"
	inj "$WRONG" SEND_ONLY --psn "$PSN" --count 9 --payload 32 --ackreq
}
a_write() {
	inj "$WRONG" RDMA_WRITE_ONLY --psn "$EPSN" --ackreq --va $((VA + 128)) \
		--rkey "$RKEY" --len 64 --payload 64
}
a_read_fadd() {
	psn "$EPSN + 1"
	inj "$WRONG" RDMA_READ_REQUEST --psn "$EPSN" --ackreq --va "$VA" \
		--rkey "$RKEY" --len 64 &&
		inj "$WRONG" FETCH_ADD --psn "$PSN" --ackreq --va "$VA" \
			--rkey "$RKEY" --swap 0x0101
}
a_pkey() {
	inj "$RIGHT" SEND_ONLY --psn "$EPSN" --pkey 0x1234 --payload 32 --ackreq
}
a_nak() {
	inj "$WRONG" ACKNOWLEDGE --psn "$UNA" --syndrome 0x61 --msn $((NMSN - 1))
}
a_ack() {
	inj "$WRONG" ACKNOWLEDGE --psn "$UNA" --syndrome 0x1f --msn "$NMSN"
}
a_local_send() {
	inj "$LOCAL" SEND_ONLY --psn "$EPSN" --payload 32 --ackreq
}
a_local_ack() {
	inj "$LOCAL" ACKNOWLEDGE --psn "$UNA" --syndrome 0x1f --msn "$NMSN"
}
a_huge_read_max() {
	inj "$RIGHT" RDMA_READ_REQUEST --psn "$EPSN" --ackreq --va "$HUGE_VA" \
		--rkey "$HUGE_RKEY" --len 0xffffffff
}
a_huge_read_9() {
	inj "$RIGHT" RDMA_READ_REQUEST --psn "$EPSN" --ackreq --va "$HUGE_VA" \
		--rkey "$HUGE_RKEY" --len 0x90000000
}
a_huge_write() {
	inj "$RIGHT" RDMA_WRITE_FIRST --psn "$EPSN" --ackreq --va "$HUGE_VA" \
		--rkey "$HUGE_RKEY" --len 0xc0000000 --payload 256
}

# control VIA NAME P: a valid SEND from the right address must arrive
control() {
	pair "$3"
	if inj "$1" SEND_ONLY --psn "$EPSN" --payload 32 --pattern 0xd7 --ackreq &&
		vic recv "$3" 32 0xd7; then
		verdict "$2" ""
	else
		verdict "$2" "the injector's packet was not delivered"
	fi
}

# stale P: duplicates with forged data, from the right address: 62 SENDs
# below the expected PSN, a WRITE at the last real WRITE's PSN (e - 2), a
# FETCH_ADD at the last real READ's (e - 1)
stale() {
	local p=$1 d0 s64 s2 s1 why=""
	pair "$p"
	stats "$DEV_A"
	d0=$ST_DUP
	psn "$EPSN - 64"; s64=$PSN
	psn "$EPSN - 2"; s2=$PSN
	psn "$EPSN - 1"; s1=$PSN
	inj "$RIGHT" SEND_ONLY --psn "$s64" --count 62 --payload 32 --ackreq &&
		inj "$RIGHT" RDMA_WRITE_ONLY --psn "$s2" --ackreq --va "$VA" \
			--rkey "$RKEY" --len 64 --payload 64 &&
		inj "$RIGHT" FETCH_ADD --psn "$s1" --ackreq --va "$VA" --rkey "$RKEY" \
			--swap 1 ||
		why="injector failed"
	wait_until 3 above DUP $((d0 + 63)) ||
		why="${why:+$why, }dup_requests did not count all 64"
	vic check "$p" || why="${why:+$why, }victim changed or connection broken"
	verdict "stale PSNs from the right address: no re-execution, no data change" "$why"
}

f1() {
	local why=
	vic f1 || why="the READ response was placed in the MR now holding the key"
	verdict "F1: READ response for a deregistered, re-registered lkey writes no other MR" "$why"
}

# --- the suite ----------------------------------------------------------------
ktap_header adversary
if [ ! -x "$VICTIM" ] || [ ! -x "$INJ" ]; then
	echo "1..0 # SKIP $VICTIM or $INJ not built (make -C selftests/verbs)"
	exit 0
fi
check "injector: self-test (the core's parser accepts its packets, ICRC verifies)" \
	"$INJ" --self-test
install -m 0755 "$INJ" "$INJ_NOBODY"
check_fails "injector: setpriv nobody really is unprivileged (no raw socket)" \
	$NOBODY "$INJ_NOBODY" --raw --src 10.0.0.3 --dst 10.0.0.1 --op SEND_ONLY --qpn 2 --psn 0

for topo in wire loop; do
	T_LAST=$SECONDS
	if ! topo_up $topo; then
		not_ok "$topo: topology up"
		topo_down
		continue
	fi
	echo "#   $topo: topology up after $((SECONDS - T_LAST)) s"
	T_LAST=$SECONDS
	if [ $topo = wire ]; then
		wire_injectors
		# one huge page makes the 4 GiB MR quick to pin (else shmem)
		echo $((HUGEPAGES + 1)) 2>/dev/null >/proc/sys/vm/nr_hugepages
		vic_start -d "$DEV_A" -g "$GID_A" -D "$DEV_B" -G "$GID_B" -n 13 -H -m 256
	else
		ip netns add rc-x &&
			ip link set vb netns rc-x &&
			ip -n rc-x addr add 10.0.0.3/24 dev vb &&
			ip -n rc-x link set vb up &&
			ip -n rc-x link set lo up
		loop_injectors
		vic_start -d "$DEV_A" -g "$GID_A" -n 7 -m 256
	fi
	echo "#   victim up after $((SECONDS - T_LAST)) s"
	T_LAST=$SECONDS
	if [ -z "$VIC_LINE" ]; then
		not_ok "$topo: victim up (RC connections, MRs, first traffic)"
		vic_stop
		topo_down
		continue
	fi
	if [ $topo = wire ]; then
		control "$RIGHT" "control: a valid SEND by UDP from the peer's address is delivered" 0
		control "$RIGHT_RAW" "control: a valid SEND by raw socket from the peer's address is delivered" 1
		dropped "wrong source address: SEND_ONLY PSN sweep dropped, counted" 2 a_send_sweep
		dropped "wrong source address: WRITE_ONLY dropped, counted" 3 a_write
		dropped "wrong source address: READ request + FETCH_ADD dropped, counted" 4 a_read_fadd
		dropped "wrong P_Key: SEND_ONLY from the right address dropped, counted" 5 a_pkey
		stale 6
		stalled "wrong source address: forged NAK InvReq ignored, QP stays RTS" 7 a_nak
		stalled "wrong source address: forged ACK does not complete the SEND" 8 a_ack
		dropped "unprivileged local UDP: SEND_ONLY to the device address dropped, counted" 9 a_local_send
		f1
		huge "READ dma_len 0xffffffff: NAK invalid request, no stream" 10 a_huge_read_max
		huge "READ dma_len 0x90000000 (pmtu 256): NAK invalid request, no stream" 11 a_huge_read_9
		huge "WRITE_FIRST of 3 GiB: NAK invalid request, nothing written" 12 a_huge_write
	else
		dropped "wrong source address: SEND_ONLY PSN sweep dropped, counted" 0 a_send_sweep
		dropped "wrong source address: WRITE_ONLY dropped, counted" 1 a_write
		dropped "wrong source address: READ request + FETCH_ADD dropped, counted" 2 a_read_fadd
		stalled "wrong source address: forged NAK InvReq ignored, QP stays RTS" 3 a_nak
		stalled "wrong source address: forged ACK does not complete the SEND" 4 a_ack
		dropped "unprivileged local UDP: SEND_ONLY to the device address dropped, counted" 5 a_local_send
		stalled "unprivileged local UDP: forged ACK does not complete the SEND" 6 a_local_ack
		f1
	fi
	vic_stop
	topo_down
	ip netns del rc-x 2>/dev/null
done

ktap_finish

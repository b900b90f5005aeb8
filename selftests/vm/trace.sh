#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The softrc tracepoints (drivers/infiniband/sw/softrc/trace.h), read
# through tracefs: every event fires in a scenario that must produce it,
# with the fields that scenario implies, and the loss-only events stay
# silent on a clean run:
#   formats: the eleven events exist, print opcode/state/reason names
#   disabled: every softrc event off, a pingpong run records nothing
#   clean (loop): ibv_rc_pingpong: pkt_tx/pkt_rx (QPNs from the
#     pingpong's own output, SEND_ONLY and ACKNOWLEDGE), complete
#     (send and recv, SUCCESS, byte_len), qp_state (RESET->INIT->RTR->
#     RTS), timer_arm (retry); retransmit, nak_tx/rx, rnr_wait and
#     timer_expire silent
#   unreachable (loop): rc_verify -e unreachable -r 3: timer_expire
#     retry, retransmit reason=timeout at the PSN the ACK timeout left,
#     status RETRY_EXC_ERR, qp_state RTS->ERR
#   rnr (loop): rc_verify -e rnr -R 2: nak_tx/nak_rx type=rnr_nak, rnr_wait
#     with its wait, timer_arm/timer_expire rnr, retransmit reason=rnr,
#     status RNR_RETRY_EXC_ERR
#   loss (wire, netem loss 5%): rc_verify: nak_tx/nak_rx PSN sequence error
#     NAKs, retransmit reason=nak_seq at the PSN a NAK named, and
#     reason=read_restart for a READ whose response lost packets
#   trace-cmd: the documented `trace-cmd record -e softrc` (if installed)
#
# Topologies (selftests/verbs/topo.sh): loop (s0 on va, both sides) and
# wire (netns rc-a s0 === netns rc-b s1). Tracefs is global: the netns
# do not matter to it.
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

EVENTS="softrc_pkt_tx softrc_pkt_rx softrc_retransmit softrc_nak_tx
softrc_nak_rx softrc_rnr_wait softrc_timer_arm softrc_timer_expire
softrc_qp_state softrc_complete"
LOSS_ONLY="softrc_retransmit softrc_nak_tx softrc_nak_rx softrc_rnr_wait
softrc_timer_expire"
OUT=/tmp/trace.$$

T=
for d in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	[ -d "$d/events" ] && { T=$d; break; }
done
if [ -z "$T" ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null &&
		T=/sys/kernel/tracing
fi

tr_off() {
	[ -n "$T" ] || return 0
	echo 0 > "$T/tracing_on"
	[ -d "$T/events/softrc" ] && echo 0 > "$T/events/softrc/enable"
	echo > "$T/trace"
}

cleanup() {
	tr_off
	netem_clear
	topo_cleanup
	rm -f "$OUT".*
}
trap cleanup EXIT

# tr_start EVENT...: an empty buffer, only these softrc events on ("all":
# every one), tracing on
tr_start() {
	local e
	tr_off
	for e in "$@"; do
		if [ "$e" = all ]; then
			echo 1 > "$T/events/softrc/enable"
		else
			echo 1 > "$T/events/softrc/$e/enable"
		fi
	done
	echo 1 > "$T/tracing_on"
}

# tr_stop NAME: tracing off, the buffer to $OUT.NAME (event lines only)
tr_stop() {
	echo 0 > "$T/tracing_on"
	grep -v '^#' "$T/trace" > "$OUT.$1"
	echo "# $1: $(wc -l < "$OUT.$1") events ($(grep -o 'softrc_[a-z_]*:' "$OUT.$1" |
		sort | uniq -c | awk '{ printf "%s%s %s", s, $2, $1; s = ", " }'))"
}

# lines NAME EVENT [ERE]: the EVENT lines of trace NAME matching ERE
lines() {
	grep " $2: " "$OUT.$1" | grep -E -- "${3:-.}"
}

# has NAME EVENT [ERE] / none NAME EVENT: at least one line / none
has() {
	lines "$@" | grep -q .
}

none() {
	! grep -q " $2: " "$OUT.$1"
}

# field LINE KEY: the value of KEY=value in a trace line
field() {
	printf '%s\n' "$1" | grep -o " $2=[^ ]*" | head -n1 | cut -d= -f2
}

# pp_traced NAME ARGS...: ibv_rc_pingpong between DEV_B (server) and DEV_A,
# client output to $OUT.NAME.client; sets PP_LQPN / PP_RQPN (decimal)
pp_traced() {
	local name=$1 port=$((20000 + RANDOM % 20000)) srv rc shim
	shift
	shim=$(ack_shim)
	# shellcheck disable=SC2086 # RUN_B and shim are command prefixes
	$RUN_B timeout "$(tmo 30)" $shim ibv_rc_pingpong -d "$DEV_B" -g "$GID_B" \
		-p "$port" "$@" > "$OUT.$name.server" 2>&1 &
	srv=$!
	wait_until 20 bash -c "$RUN_B ss -ltn | grep -q ':$port '"
	# shellcheck disable=SC2086
	$RUN_A timeout "$(tmo 30)" $shim ibv_rc_pingpong -d "$DEV_A" -g "$GID_A" \
		-p "$port" "$@" "$IP_B" > "$OUT.$name.client" 2>&1
	rc=$?
	wait "$srv" || rc=1
	PP_LQPN=$(($(sed -n 's/.*local address:.*QPN \(0x[0-9a-f]*\).*/\1/p' "$OUT.$name.client")))
	PP_RQPN=$(($(sed -n 's/.*remote address:.*QPN \(0x[0-9a-f]*\).*/\1/p' "$OUT.$name.client")))
	return $rc
}

ktap_header "trace ($SOFTRC_DRIVER)"
[ "$SOFTRC_DRIVER" = softrc ] || { echo "1..0 # SKIP softrc tracepoints only"; exit 0; }
[ -n "$T" ] || { echo "1..0 # SKIP no tracefs"; exit 0; }
[ -x "$RC_VERIFY" ] || { echo "1..0 # SKIP $RC_VERIFY not built"; exit 0; }
datapath_gate "trace ($SOFTRC_DRIVER)"
echo "# tracefs: $T"

# --- the events and their formats -------------------------------------------
driver_load || { not_ok "softrc loads"; ktap_finish; exit 1; }
missing=
for e in $EVENTS; do
	[ -f "$T/events/softrc/$e/format" ] || missing="$missing $e"
done
check "events/softrc/ holds every event${missing:+ (missing:$missing)}" test -z "$missing"
fmt=$T/events/softrc
check "pkt_tx format: qpn, dqpn, psn, len, opcode, syndrome; opcode names from SOFTRC_OPCODES" \
	bash -c "grep -q 'field:u32 dqpn' $fmt/softrc_pkt_tx/format &&
		grep -q 'field:u8 syndrome' $fmt/softrc_pkt_tx/format &&
		grep -q '{ 0x11, \"ACKNOWLEDGE\" }' $fmt/softrc_pkt_tx/format &&
		grep -q '{ 0x64, \"UD_SEND_ONLY\" }' $fmt/softrc_pkt_tx/format"
check "retransmit format: the four reasons by name" \
	bash -c "grep -q '\"timeout\" }.*\"nak_seq\" }.*\"rnr\" }.*\"read_restart\" }' $fmt/softrc_retransmit/format"
check "qp_state and complete print state, WC opcode and WC status names" \
	bash -c "grep -q '\"RTS\" }' $fmt/softrc_qp_state/format &&
		grep -q '\"RECV_RDMA_WITH_IMM\" }' $fmt/softrc_complete/format &&
		grep -q '\"RNR_RETRY_EXC_ERR\" }' $fmt/softrc_complete/format"

if ! topo_up loop; then
	not_ok "loop: topology up"
	ktap_finish
	exit 1
fi

# --- disabled: nothing recorded ----------------------------------------------
tr_start
pp_traced off -n 20
rc=$?
tr_stop off
check "all softrc events off: a pingpong (rc $rc) records nothing" \
	bash -c "[ $rc = 0 ] && ! grep -q softrc_ $OUT.off"

# --- clean loopback pingpong -----------------------------------------------------
tr_start all
pp_traced clean -n 20 -s 1024
rc=$?
tr_stop clean
check "clean: ibv_rc_pingpong -n 20 -s 1024 passes (QPN $PP_LQPN -> $PP_RQPN)" \
	test "$rc" = 0 -a "$PP_LQPN" -gt 0 -a "$PP_RQPN" -gt 0
check "pkt_tx: client qpn=$PP_LQPN dqpn=$PP_RQPN op=SEND_ONLY len=1024" \
	has clean softrc_pkt_tx " qpn=$PP_LQPN dqpn=$PP_RQPN op=SEND_ONLY psn=[0-9]+ len=1024 "
check "pkt_tx: server's ACKs to the client (op=ACKNOWLEDGE, syndrome an ACK)" \
	has clean softrc_pkt_tx " qpn=$PP_RQPN dqpn=$PP_LQPN op=ACKNOWLEDGE .*syndrome=0x[01][0-9a-f]$"
check "pkt_rx: the server receives qpn=$PP_RQPN op=SEND_ONLY len=1024" \
	has clean softrc_pkt_rx " qpn=$PP_RQPN dqpn=$PP_RQPN op=SEND_ONLY psn=[0-9]+ len=1024 "
check "pkt_rx: the client receives its ACKs (qpn=$PP_LQPN op=ACKNOWLEDGE len=0)" \
	has clean softrc_pkt_rx " qpn=$PP_LQPN dqpn=$PP_LQPN op=ACKNOWLEDGE psn=[0-9]+ len=0 "
# the same PSN the client sent is the one the server received
l=$(lines clean softrc_pkt_tx " qpn=$PP_LQPN .*op=SEND_ONLY" | head -n1)
psn=$(field "$l" psn)
check "pkt_rx: the server saw the client's first PSN ($psn)" \
	has clean softrc_pkt_rx " qpn=$PP_RQPN .*op=SEND_ONLY psn=$psn "
n_tx=$(lines clean softrc_pkt_tx " qpn=$PP_LQPN .*op=SEND_ONLY" | wc -l)
n_rx=$(lines clean softrc_pkt_rx " qpn=$PP_RQPN .*op=SEND_ONLY" | wc -l)
check "pkt_tx/pkt_rx: as many SENDs sent as received ($n_tx, $n_rx), 20 or more" \
	test "$n_tx" = "$n_rx" -a "$n_tx" -ge 20
check "complete: send side, qpn=$PP_LQPN opcode=SEND status=SUCCESS" \
	has clean softrc_complete " qpn=$PP_LQPN queue=send wr_id=0x[0-9a-f]+ opcode=SEND status=SUCCESS"
check "complete: recv side, opcode=RECV status=SUCCESS byte_len=1024" \
	has clean softrc_complete " qpn=$PP_LQPN queue=recv wr_id=0x[0-9a-f]+ opcode=RECV status=SUCCESS byte_len=1024"
for s in "RESET new=INIT" "INIT new=RTR" "RTR new=RTS"; do
	check "qp_state: qpn=$PP_LQPN old=$s" has clean softrc_qp_state " qpn=$PP_LQPN old=$s$"
done
check "timer_arm: qpn=$PP_LQPN timer=retry, expires_ns > 0" \
	bash -c "grep ' softrc_timer_arm: .*qpn=$PP_LQPN timer=retry expires_ns=[1-9]' $OUT.clean"
for e in $LOSS_ONLY; do
	check "clean: $e silent" none clean "$e"
done

# --- unreachable peer: ACK timeouts ----------------------------------------------
tr_start softrc_timer_expire softrc_retransmit softrc_complete softrc_qp_state
rc_pair "unreachable: rc_verify -e unreachable -r 3" -e unreachable -r 3 -u 14
tr_stop unreach
l=$(lines unreach softrc_retransmit "reason=timeout" | head -n1)
q=$(field "$l" qpn)
check "retransmit: reason=timeout on the requester (qpn=${q:-none})" test -n "$q"
n_exp=$(lines unreach softrc_timer_expire " qpn=$q timer=retry" | wc -l)
n_re=$(lines unreach softrc_retransmit " qpn=$q .*reason=timeout" | wc -l)
check "timer_expire: timer=retry, one per timeout retransmit ($n_exp, $n_re), retry_cnt 3" \
	test "$n_exp" -ge 3 -a "$n_re" = 3
check "retransmit: every timeout resends the same PSN" \
	test "$(lines unreach softrc_retransmit " qpn=$q " | grep -o 'psn=[0-9]*' | sort -u | wc -l)" = 1
check "complete: status=RETRY_EXC_ERR on qpn=$q" \
	has unreach softrc_complete " qpn=$q queue=send .*status=RETRY_EXC_ERR"
check "qp_state: qpn=$q old=RTS new=ERR (transport error)" \
	has unreach softrc_qp_state " qpn=$q old=RTS new=ERR$"

# --- receiver not ready ----------------------------------------------------------
tr_start all
rc_pair "rnr: rc_verify -e rnr -R 2" -e rnr -R 2
tr_stop rnr
l=$(lines rnr softrc_rnr_wait | head -n1)
q=$(field "$l" qpn)
psn=$(field "$l" psn)
check "rnr_wait: qpn=${q:-none} psn=${psn:-none} wait_ns=$(field "$l" wait_ns) > 0" \
	bash -c "[ -n '$q' ] && printf '%s\n' '$l' | grep -q 'wait_ns=[1-9]'"
check "nak_rx: the RNR NAK at the requester (qpn=$q psn=$psn type=rnr_nak)" \
	has rnr softrc_nak_rx " qpn=$q psn=$psn syndrome=0x[23][0-9a-f] type=rnr_nak "
check "nak_tx: the responder sent it (psn=$psn type=rnr_nak)" \
	has rnr softrc_nak_tx "psn=$psn syndrome=0x[23][0-9a-f] type=rnr_nak "
check "timer_arm and timer_expire: timer=rnr on qpn=$q" \
	bash -c "grep -q ' softrc_timer_arm: .*qpn=$q timer=rnr' $OUT.rnr &&
		grep -q ' softrc_timer_expire: .*qpn=$q timer=rnr' $OUT.rnr"
check "retransmit: qpn=$q psn=$psn reason=rnr, rnr_retry 2 times" \
	test "$(lines rnr softrc_retransmit " qpn=$q psn=$psn reason=rnr$" | wc -l)" = 2
check "rnr_wait: one per RNR retry (rnr_retry 2: two; the third NAK fails)" \
	test "$(lines rnr softrc_rnr_wait " qpn=$q " | wc -l)" = 2
check "nak_rx: three RNR NAKs at the requester" \
	test "$(lines rnr softrc_nak_rx " qpn=$q .*type=rnr_nak" | wc -l)" = 3
check "complete: status=RNR_RETRY_EXC_ERR on qpn=$q" \
	has rnr softrc_complete " qpn=$q queue=send .*status=RNR_RETRY_EXC_ERR"
check "rnr: no timeout (timer_expire timer=retry silent)" \
	bash -c "! grep -q ' softrc_timer_expire: .*timer=retry' $OUT.rnr"

# --- trace-cmd, as Documentation/softrc.rst shows it -------------------------
if command -v trace-cmd >/dev/null; then
	"$RC_VERIFY" -s -e rnr -R 1 -d "$DEV_B" -g "$GID_B" "$OUT.sock" > /dev/null 2>&1 &
	srv=$!
	(cd /tmp && trace-cmd record -q -o "$OUT.dat" -e softrc:softrc_nak_rx \
		-e softrc:softrc_retransmit -e softrc:softrc_timer_expire \
		-e softrc:softrc_pkt_tx \
		"$RC_VERIFY" -e rnr -R 1 -d "$DEV_A" -g "$GID_A" "$OUT.sock") \
		> "$OUT.tc.log" 2>&1
	wait "$srv"
	trace-cmd report -i "$OUT.dat" > "$OUT.report" 2>&1
	sed 's/^/# trace-cmd: /' "$OUT.tc.log" | head -5
	grep -E 'softrc_(nak_rx|retransmit):' "$OUT.report" | head -4 | sed 's/^/# report: /'
	check "trace-cmd record -e softrc:...: the report names the RNR NAK and its resend" \
		bash -c "grep -q 'softrc_nak_rx:.*type=rnr_nak' $OUT.report &&
			grep -q 'softrc_retransmit:.*reason=rnr' $OUT.report"
	check "trace-cmd report: opcodes by name (op=SEND_ONLY, no op=0x..)" \
		bash -c "grep -q 'softrc_pkt_tx:.* op=SEND_ONLY ' $OUT.report &&
			! grep -q ' op=0x' $OUT.report"
else
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n trace-cmd record # SKIP trace-cmd not installed"
fi
topo_down

# --- a lossy wire ---------------------------------------------------------------
if ! topo_up wire; then
	not_ok "wire: topology up"
	ktap_finish
	exit 1
fi
netem_set loss 5%
tr_start softrc_nak_tx softrc_nak_rx softrc_retransmit softrc_timer_expire
rc_pair "loss 5%: rc_verify 200 ops up to 256 KiB, all data correct" \
	-n 200 -S 21 -M 262144 -u "$(ack_timeout_for 14)" -T 300
tr_stop loss
netem_clear
check "loss: nak_tx, PSN sequence error NAKs (type=nak value=0)" \
	has loss softrc_nak_tx "syndrome=0x60 type=nak value=0$"
check "loss: nak_rx of them at the requester" \
	has loss softrc_nak_rx "syndrome=0x60 type=nak value=0$"
# a seq NAK at PSN p makes the requester go back to p (to an earlier
# READ whose response was lost instead: reason=read_restart)
l=$(lines loss softrc_retransmit "reason=nak_seq" | head -n1)
check "loss: retransmit reason=nak_seq (${l#* softrc_retransmit: })" test -n "$l"
q=$(field "$l" qpn)
psn=$(field "$l" psn)
check "loss: the nak_seq resend starts at the PSN a NAK named (qpn=$q psn=$psn)" \
	has loss softrc_nak_rx " qpn=$q psn=$psn syndrome=0x60 "
# rc_verify's mix has READs: a response lost in the middle of one shows
# as a gap in the responses (an implied NAK), and the requester asks for
# the rest of that READ again
echo "# loss: retransmit reasons: $(lines loss softrc_retransmit | grep -o 'reason=[a-z_]*' | sort | uniq -c | tr -s ' \n' ' ')"
l=$(lines loss softrc_retransmit "reason=read_restart" | head -n1)
check "loss: retransmit reason=read_restart, a lost READ response (${l#* softrc_retransmit: })" \
	test -n "$l"

ktap_finish

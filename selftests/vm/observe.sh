#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Observing a QP: `rdma resource show qp|cq|mr -dd` driver attributes
# and `-r` raw records (decoded by tools/resraw), both of which keep an
# MR's key and iova from readers without CAP_NET_ADMIN, and the debugfs
# dump /sys/kernel/debug/softrc/<dev>/qp/<qpn>, sampled while
# ib_write_bw runs across the veth pair under `tc netem loss`: PSNs and
# retransmits move, the dump parses and names its QP, the file goes with
# its QP and the directory with its device, and a file held open past
# its QP's destruction reads as an error, not a crash, and the device
# directory follows a rename of the device.
#
# Topology (selftests/verbs/topo.sh, wire):
#   netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
OBS=$SELFTEST_DIR/observe.py
RESRAW=$REPO/tools/resraw/softrc-resraw
NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"
DBG=/sys/kernel/debug/softrc

cleanup() {
	[ -n "${hold:-}" ] && kill "$hold" 2>/dev/null
	[ -n "${srv:-}" ] && kill "$srv" 2>/dev/null
	[ -n "${cli:-}" ] && kill "$cli" 2>/dev/null
	wait 2>/dev/null
	netem_clear
	topo_cleanup
}
trap cleanup EXIT

ktap_header observe
datapath_gate observe
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug

# qp_field KEY: KEY of the client's RC QP from the restrack dump
qp_dump() {
	$RUN_A rdma -j -dd resource show qp link "$DEV_A/1" | "$OBS" qp "$QPN"
}
qp_field() {
	qp_dump | sed -n "s/^$1=//p"
}

topo_up wire || { not_ok "wire: topology up"; ktap_finish; exit 1; }
check "debugfs: $DBG/$DEV_A/qp and $DBG/$DEV_B/qp exist" \
	test -d "$DBG/$DEV_A/qp" -a -d "$DBG/$DEV_B/qp"

netem_set loss 2%
secs=$((45 * SOFTRC_TIME_SCALE))
shim=$(ack_shim)
ack=$(ack_timeout_for 14)
$RUN_B timeout $((secs * 3)) $shim ib_write_bw -d "$DEV_B" -x "$GID_B" -s 65536 -D "$secs" \
	-u "$ack" -F >/tmp/obs-srv.log 2>&1 &
srv=$!
wait_until 20 bash -c "$RUN_B ss -ltnH 'sport = :18515' | grep -q ."
$RUN_A timeout $((secs * 3)) $shim ib_write_bw -d "$DEV_A" -x "$GID_A" -s 65536 -D "$secs" \
	-u "$ack" -F 10.0.0.2 >/tmp/obs-cli.log 2>&1 &
cli=$!

QPN=ib_write_bw
if wait_until 30 bash -c "$RUN_A rdma -j -dd resource show qp link $DEV_A/1 | $OBS qp ib_write_bw | grep -qx 'state=RTS'"; then
	QPN=$($RUN_A rdma -j -dd resource show qp link "$DEV_A/1" | "$OBS" qp ib_write_bw | sed -n 's/^lqpn=//p')
	ok "restrack: the client's RC QP $QPN shows the driver attributes (state RTS)"
else
	$RUN_A rdma -dd resource show qp link "$DEV_A/1" | sed 's/^/# /'
	not_ok "restrack: the client's RC QP shows the driver attributes"
	ktap_finish
	exit 1
fi

s1=$(qp_dump)
echo "# sample 1: $(echo $s1)"
for k in sq_psn rq_psn unacked_psn_first unacked_psn_last retry_left rnr_retry_left \
	rd_atomic_outstanding timer retransmits timeouts req_state resp_state; do
	check "restrack: qp -dd has $k" bash -c "printf '%s\n' '$s1' | grep -q '^$k='"
done
check "restrack: timer is off|retry|rnr|retry+rnr" \
	bash -c "printf '%s\n' '$s1' | grep -Eqx 'timer=(off|retry|rnr|retry\+rnr)'"
psn1=$(printf '%s\n' "$s1" | sed -n 's/^sq_psn=//p')
retx1=$(printf '%s\n' "$s1" | sed -n 's/^retransmits=//p')
sq_psn_moved() { [ "$(qp_field sq_psn)" != "$psn1" ]; }
retx_moved() { [ "$(qp_field retransmits)" -gt "$retx1" ]; }
export -f qp_dump qp_field sq_psn_moved retx_moved
export RUN_A DEV_A OBS QPN psn1 retx1
check "restrack: sq_psn moves during traffic (was $psn1)" wait_until 20 sq_psn_moved
check "restrack: retransmits move under netem loss (was $retx1)" wait_until 30 retx_moved
echo "# sample 2: $(qp_dump | grep -E '^(sq_psn|rq_psn|unacked|retry_left|retransmits|timeouts|timer)' | tr '\n' ' ')"

# raw records (-r) decoded by tools/resraw: the same QP, whose raw
# retransmits must lie between two -dd reads taken around it
d1=$(qp_field retransmits)
rq=$($RUN_A rdma -j -r resource show qp link "$DEV_A/1" | "$RESRAW" | grep "^qp qpn=$QPN ")
d2=$(qp_field retransmits)
echo "# raw: $rq"
rr=$(printf '%s\n' "$rq" | tr ' ' '\n' | sed -n 's/^retransmits=//p')
rmax=$(printf '%s\n' "$rq" | tr ' ' '\n' | sed -n 's/^rd_atomic_max=//p')
check "restrack raw: qp -r decodes QP $QPN as an RC QP in state RTS" \
	bash -c "printf '%s\n' '$rq' | grep ' type=2 ' | grep -q ' state=RTS '"
check "restrack raw: its retransmits ($rr) lie between two -dd reads ($d1, $d2)" \
	bash -c "[ -n '$rr' ] && [ '$d1' -le '$rr' ] && [ '$rr' -le '$d2' ]"
check "restrack raw: its rd_atomic_max ($rmax) is -dd's" \
	bash -c "[ -n '$rmax' ] && [ '$rmax' = '$(qp_field rd_atomic_max)' ]"

# debugfs: the same QP, during traffic
f=$DBG/$DEV_A/qp/$QPN
check "debugfs: $f exists" test -f "$f"

# hold the file open across the QP's destruction: a later read fails
# cleanly (debugfs answers -EIO once the file is removed); opened now,
# while traffic surely runs
/usr/bin/python3 - "$f" >/tmp/obs-hold.log 2>&1 <<'PY' &
import os, sys, time
fd = open(sys.argv[1])
first = fd.read()
print("first read", len(first), flush=True)
while os.path.exists(sys.argv[1]):
    time.sleep(0.1)
try:
    fd.seek(0)
    again = fd.read()
    print("read after destroy returned", len(again), "bytes")
except OSError as e:
    print("read after destroy failed:", e.strerror)
PY
hold=$!

wait_until 20 grep -q "first read" /tmp/obs-hold.log
if out=$("$OBS" debugfs "$f" "$QPN" 2>&1); then
	ok "debugfs: the dump of QP $QPN parses during traffic ($(printf '%s\n' "$out" | wc -l) fields)"
else
	printf '%s\n' "$out" | sed 's/^/# /'
	head -40 "$f" | sed 's/^/# dump: /'
	not_ok "debugfs: the dump of QP $QPN parses during traffic"
fi
p1=$(printf '%s\n' "$out" | sed -n 's/^req.psn_next=//p')
check "debugfs: [req] psn_next moves between two reads" \
	wait_until 20 bash -c "[ \"\$($OBS debugfs $f $QPN | sed -n 's/^req.psn_next=//p')\" != '$p1' ]"
check "debugfs: [qp] ib_state is rts" bash -c "printf '%s\n' '$out' | grep -qx 'qp.ib_state=rts'"
# responder resources are allocated by max_dest_rd_atomic at RTR, not
# at create: perftest's WRITE test gives 1 (softrc's maximum is 128)
check "debugfs: [responder_resources] the WRITE QP has the 1 resource it asked for" \
	bash -c "printf '%s\n' '$out' | grep -qx 'responder_resources.nres=1' &&
		printf '%s\n' '$out' | grep -qx 'responder_resources.res_cap=1'"
check "debugfs: [counters] has every engine counter" \
	bash -c "printf '%s\n' '$out' | grep -q '^counters.retransmits=' && printf '%s\n' '$out' | grep -q '^counters.uc_drop_msgs='"

wait "$cli"
rc=$?
cli=
wait "$srv" || rc=1
srv=
if [ "$rc" = 0 ]; then
	ok "ib_write_bw under netem loss finishes"
else
	sed 's/^/# /' /tmp/obs-cli.log /tmp/obs-srv.log
	not_ok "ib_write_bw under netem loss finishes"
fi
sed 's/^/# client: /' /tmp/obs-cli.log | grep -E 'bytes|BW|error|Fail' | head -5
netem_clear

check "debugfs: $f is gone once the QP is destroyed" wait_until 20 test ! -e "$f"
check "restrack: QP $QPN is gone" \
	wait_until 20 bash -c "! $RUN_A rdma resource show qp link $DEV_A/1 lqpn $QPN 2>/dev/null | grep -q ."
wait "$hold"
hold=
sed 's/^/# hold: /' /tmp/obs-hold.log
check "debugfs: a file held open past its QP reads as an error or empty" \
	grep -Eq 'read after destroy (failed|returned 0 bytes)' /tmp/obs-hold.log

# CQs and MRs of a live program: ibv_rc_pingpong keeps them while it runs
# (killed once the checks are done; the timeout only bounds a stray run,
# scaled because the checks below take minutes on a debug kernel)
$RUN_B timeout $((120 * SOFTRC_TIME_SCALE)) $shim ibv_rc_pingpong -d "$DEV_B" -g "$GID_B" \
	-n 1000000 >/dev/null 2>&1 &
srv=$!
wait_until 20 bash -c "$RUN_B rdma resource show qp link $DEV_B/1 | grep -q ibv_rc_pingpong"
cq=$($RUN_B rdma -dd resource show cq dev "$DEV_B" 2>&1)
mr=$($RUN_B rdma -dd resource show mr dev "$DEV_B" 2>&1)
echo "# cq: $(printf '%s\n' "$cq" | grep ibv_rc | head -1)"
echo "# mr: $(printf '%s\n' "$mr" | grep ibv_rc | head -1)"
check "restrack: cq -dd shows ring_slots, ring_used, notify, overrun" \
	bash -c "printf '%s\n' '$cq' | grep ibv_rc_pingpong | grep 'ring_slots' | grep 'ring_used' | grep 'notify' | grep -q 'overrun'"
check "restrack: mr -dd shows kind, key, mr_state, length, users" \
	bash -c "printf '%s\n' '$mr' | grep ibv_rc_pingpong | grep 'kind user' | grep 'key 0x' | grep 'mr_state valid' | grep 'length' | grep -q 'users'"

# raw CQ and MR records of the same program; an MR's key and iova go only
# to CAP_NET_ADMIN, as the core's rkey and lkey
cqd=$($RUN_B rdma -j -dd resource show cq dev "$DEV_B" | "$OBS" res cqn ibv_rc_pingpong)
cqn=$(printf '%s\n' "$cqd" | sed -n 's/^cqn=//p')
slots=$(printf '%s\n' "$cqd" | sed -n 's/^ring_slots=//p')
cqr=$($RUN_B rdma -j -r resource show cq dev "$DEV_B" | "$RESRAW" | grep "^cq cqn=$cqn ")
echo "# raw: $cqr"
check "restrack raw: cq -r decodes CQ $cqn with -dd's ring_slots ($slots), user=1" \
	bash -c "[ -n '$slots' ] && printf '%s\n' '$cqr' | grep -q ' ring_slots=$slots .* user=1\$'"
mrd=$($RUN_B rdma -j -dd resource show mr dev "$DEV_B" | "$OBS" res mrn ibv_rc_pingpong)
mrn=$(printf '%s\n' "$mrd" | sed -n 's/^mrn=//p')
mrkey=$(printf '0x%x' "$(printf '%s\n' "$mrd" | sed -n 's/^key=//p')")
mrlen=$(printf '%s\n' "$mrd" | sed -n 's/^length=//p')
mrr=$($RUN_B rdma -j -r resource show mr dev "$DEV_B" | "$RESRAW" | grep "^mr mrn=$mrn ")
echo "# raw: $mrr"
check "restrack raw: mr -r decodes MR $mrn: user, valid, -dd's key ($mrkey) and length ($mrlen)" \
	bash -c "[ -n '$mrlen' ] && printf '%s\n' '$mrr' | grep -q ' kind=user mr_state=valid .* key=$mrkey iova=0x[0-9a-f]* length=$mrlen '"
mru=$($RUN_B $NOBODY rdma -dd resource show mr dev "$DEV_B" 2>&1)
echo "# mr as nobody: $(printf '%s\n' "$mru" | grep "mrn $mrn ")"
# the same pattern must find all four in root's view, or the check is void
keys_re='(^| )(drv_key|drv_iova|rkey|lkey) '
check "restrack: root's mr -dd has drv_key, drv_iova, rkey and lkey" \
	bash -c "[ \$(printf '%s\n' '$mr' | grep 'mrn $mrn ' | grep -Eo '$keys_re' | wc -l) = 4 ]"
check "restrack: without CAP_NET_ADMIN, mr -dd shows MR $mrn but none of them" \
	bash -c "printf '%s\n' '$mru' | grep 'mrn $mrn ' | grep -q 'kind user' && ! printf '%s\n' '$mru' | grep -Eq '$keys_re'"
# raw dumps are the core's admin-only commands (RDMA_NL_ADMIN_PERM)
$RUN_B $NOBODY rdma -j -r resource show mr dev "$DEV_B" >/tmp/obs-raw-nobody.log 2>&1
rc=$?
echo "# raw as nobody: status $rc, $(head -c 200 /tmp/obs-raw-nobody.log)"
check "restrack raw: without CAP_NET_ADMIN, mr -r is refused" \
	bash -c "[ $rc -ne 0 ] && grep -q 'not permitted' /tmp/obs-raw-nobody.log && ! grep -q data /tmp/obs-raw-nobody.log"

# the device directory follows `rdma dev set NAME name NEW`, QP files
# and all, while ibv_rc_pingpong's QP is live
qpb=$($RUN_B rdma -j resource show qp link "$DEV_B/1" | "$OBS" qp ibv_rc_pingpong | sed -n 's/^lqpn=//p')
REN=obsren0
check "ibv_rc_pingpong (QP $qpb) still runs for the rename checks" kill -0 "$srv"
$RUN_B rdma dev set "$DEV_B" name "$REN"
check "debugfs: rename $DEV_B to $REN moves $DBG/$DEV_B to $DBG/$REN" \
	test -d "$DBG/$REN/qp" -a ! -e "$DBG/$DEV_B"
check "debugfs: QP $qpb's file moved along and still reads" \
	"$OBS" debugfs "$DBG/$REN/qp/$qpb" "$qpb"
$RUN_B rdma dev set "$REN" name "$DEV_B"
check "debugfs: renamed back, $DBG/$DEV_B is there and $DBG/$REN is not" \
	test -d "$DBG/$DEV_B/qp" -a ! -e "$DBG/$REN"

kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null
srv=

# the device directory goes with the device
$RUN_A rdma link del "$DEV_A"
check "debugfs: $DBG/$DEV_A is gone after rdma link del" wait_until 20 test ! -e "$DBG/$DEV_A"
check "debugfs: $DBG/$DEV_B is still there" test -d "$DBG/$DEV_B/qp"
check "no kernel warning, oops or BUG" bash -c "! dmesg | grep -Eq 'WARNING:|BUG:|Oops|general protection'"

ktap_finish

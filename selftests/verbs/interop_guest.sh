#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of selftests/vm/interop.sh, run in both VMs of
# tools/testing/vm/run-pair.sh (SOFTRC_VM_NAME=A|B, NIC eth0, nothing else on the
# link). A is 10.0.0.1 with driver INTEROP_A (softrc|rxe), B is 10.0.0.2
# with INTEROP_B. Both walk the same test list; in each test one side is
# the server (it listens on a port of its own) and the other the client
# (it retries until that port answers), so the two stay in step.
# Prints "INTEROP <test> ok|skip|fail" lines for the host to collect. The
# list: RC (ibv_rc_pingpong, perftest, rc_verify, rc_verify -e
# atomic-write with and without netem), UD and UC
# (ibv_ud_pingpong, ibv_uc_pingpong, ib_send_bw -c UD) and rdma_cm over
# QP1 (rping, ucmatose, udaddy, rdma_server/rdma_client, rstream, perftest
# -R).
#
# Knobs (both VMs get the same environment, so they stay in step):
#   INTEROP_ONLY=ERE      run only the tests whose name matches ERE
#   INTEROP_REPEAT=N      walk the (selected) list N times; names get
#                         " [round i]" when N > 1
#   INTEROP_CM_GATE=0     run perftest -R without the preload/cm_gate.so
#                         shim (see cm() below): shows the race it closes
#   INTEROP_PCAP=fail|all record each test on eth0 (RoCEv2 headers, 128
#                         bytes a frame) and print the capture of a failed
#                         test (all: of every test) on the console as
#                         INTEROP-PCAP lines; interop.sh writes them to
#                         INTEROP_PCAP_DIR as <test>.<A|B>.pcap
#
# Timing: every QP here has a local ACK timeout of at least ACK (18:
# 1.07 s a try, 8.6 s for retry_cnt 7; more on a VM slower than the
# reference, SOFTRC_TIME_SCALE of selftests/vm/lib.sh), perftest through
# -u, rc_verify through -u, ibv_rc_pingpong (which fixes 14 in its source)
# through the preload/ack_timeout.so shim. With 14 (67 ms, 0.54 s in all)
# a TCG guest that its host does not run for half a second looks like a
# dead peer to softrc, which gives up after retry_cnt retries as IBTA
# says (rxe 6.1 never does: it treats retry_cnt 7 as infinite).
# Documentation/interop.rst has the captures that showed it. The other
# waits here are event waits or scaled the same way.
set -u
. "$(dirname "$0")/../vm/lib.sh"

me=$SOFTRC_VM_NAME
if [ "$me" = A ]; then
	ip=10.0.0.1 peer=10.0.0.2 drv=${INTEROP_A:-softrc}
else
	ip=10.0.0.2 peer=10.0.0.1 drv=${INTEROP_B:-rxe}
fi
export SOFTRC_DRIVER=$drv
. "$REPO/selftests/verbs/topo.sh"
dmesg -n 1
dev=$(dev_name 0)
ip addr add $ip/24 dev eth0
ip link set eth0 up
driver_load || { echo "INTEROP load-$drv fail"; exit 1; }
rdma link add "$dev" type "$drv" netdev eth0 || { echo "INTEROP link-add fail"; exit 1; }
wait_until 10 gid_index "$dev" $ip
gid=$(gid_index "$dev" $ip)
wait_until 120 busybox ping -c 1 -W 1 $peer
echo "# $me: $drv device $dev gid $gid, peer $peer"

n=${INTEROP_N:-50}
port=18600
only=${INTEROP_ONLY:-}
# the local ACK timeout: 18, plus log2 of the VM's slowness
ack=$(ack_timeout_for 18)
export SOFTRC_MIN_ACK_TIMEOUT=$ack
shim=$REPO/selftests/verbs/preload/ack_timeout.so
cm_gate=$REPO/selftests/verbs/preload/cm_gate.so
for so in "$shim" "$cm_gate"; do
	[ -f "$so" ] || { echo "INTEROP $so built (make -C selftests/verbs) fail"; exit 1; }
done
pcap_mode=${INTEROP_PCAP:-}
round=

# selected NAME: true when NAME is to run (INTEROP_ONLY)
selected() {
	[ -z "$only" ] || printf '%s\n' "$1" | grep -qE -- "$only"
}

# test_begin NAME / test_end NAME RC: around one test. A failed test
# prints the kernel log lines it produced; with INTEROP_PCAP the test is
# recorded on eth0 (headers only) and the capture of a failed test (all:
# of every test) goes to the console as INTEROP-PCAP lines.
cap_pid=
klog_at=0
test_begin() {
	echo "INTEROP-START $1"
	klog_at=$(dmesg | wc -l)
	[ -n "$pcap_mode" ] || return 0
	rm -f /tmp/interop.pcap /tmp/interop.tcpdump
	tcpdump -Z root -U -s 128 -ni eth0 -w /tmp/interop.pcap udp port 4791 \
		2>/tmp/interop.tcpdump &
	cap_pid=$!
	wait_until 20 grep -qs 'listening on' /tmp/interop.tcpdump ||
		cat /tmp/interop.tcpdump
}
test_end() {
	local name=$1 rc=$2 sum
	[ "$rc" = 0 ] || dmesg | tail -n +$((klog_at + 1)) | head -80 | sed "s/^/# $me: dmesg: /"
	[ -n "$cap_pid" ] || return 0
	kill -INT "$cap_pid"
	wait "$cap_pid"
	cap_pid=
	[ "$rc" != 0 ] || [ "$pcap_mode" = all ] || return 0
	sum=$(sha256sum </tmp/interop.pcap | cut -d' ' -f1)
	echo "INTEROP-PCAP-BEGIN $sum $name"
	base64 -w 76 /tmp/interop.pcap | sed 's/^/INTEROP-PCAP /'
	echo "INTEROP-PCAP-END"
}

# t NAME SERVER(A|B) CMD ARGS...
t() {
	local name=$1$round srv=$2 cmd=$3 gx=-x out rc
	shift 3
	port=$((port + 1))
	selected "$name" || return 0
	test_begin "$name"
	case $cmd in ibv_*) gx=-g ;; esac
	if [ "$srv" = "$me" ]; then
		out=$(LD_PRELOAD=$shim timeout "$(tmo 120)" "$cmd" -d "$dev" $gx "$gid" -p $port "$@" 2>&1)
		rc=$?
	else
		# for up to 120 s (scaled), like the server's timeout
		for _ in $(seq 240); do
			out=$(LD_PRELOAD=$shim timeout "$(tmo 120)" "$cmd" -d "$dev" $gx "$gid" -p $port "$@" $peer 2>&1)
			rc=$?
			# a refused connect means the server is not up yet
			printf '%s' "$out" | grep -qiE "couldn't connect|unable to connect|connection refused|Couldn't connect" || break
			sleep "$(tmo 0.5)"
		done
	fi
	test_end "$name" "$rc"
	if [ "$rc" = 0 ]; then
		echo "INTEROP $name ok"
	else
		printf '%s\n' "$out" | tail -8 | sed "s/^/# $me: /"
		echo "INTEROP $name fail"
	fi
}

# rcv NAME SERVER: rc_verify over TCP, the server on SERVER
rcv() {
	local name=$1$round srv=$2 rc out q=
	port=$((port + 1))
	selected "$name" || return 0
	test_begin "$name"
	[ "$drv" = rxe ] && q=-Q
	if [ "$srv" = "$me" ]; then
		out=$(timeout "$(tmo 180)" "$RC_VERIFY" -s -d "$dev" -g "$gid" -p $port -u $ack $q 2>&1)
	else
		# -i mw: the server binds type 2 MWs, the client's SEND_WITH_INVs
		# invalidate them across the two drivers
		out=$(timeout "$(tmo 180)" "$RC_VERIFY" -d "$dev" -g "$gid" -p $port -n $((4 * n)) -S 21 \
			-i mw -u $ack $peer 2>&1)
	fi
	rc=$?
	test_end "$name" "$rc"
	if [ "$rc" = 0 ]; then
		echo "INTEROP $name ok"
	else
		printf '%s\n' "$out" | grep -v '^# #  ' | tail -12 | sed "s/^/# $me: /"
		echo "INTEROP $name fail"
	fi
}

# cm NAME SERVER(A|B) SERVER_CMD... -- CLIENT_CMD...: an rdma_cm pair;
# in the commands SRV stands for the server's address and PORT for the
# test's port. The server starts first; once its rdma_cm ID listens it
# says so on TCP port PORT+1000, and only then does the client start (an
# early client would be rejected by the CM). CM_LISTEN: the port the
# server listens on, where it is not PORT (udaddy's is fixed).
# CM_GATE=1 (perftest -R): both run under preload/cm_gate.so with a gate
# on TCP port PORT+2000 that is open while the server has an rdma_cm
# listener, and each client rdma_connect() waits for it. perftest -R
# connects twice, and the server creates the second listener only after
# a handshake over the first connection; a client that is faster than a
# loaded server otherwise gets REJ reason 8 (no listener) and perftest's
# retry crashes (Documentation/interop.rst). CM_LISTEN_DELAY="N SECS":
# the server's Nth rdma_listen() comes SECS seconds (scaled) late.
cm() {
	local name=$1$round srv=$2 out rc sync a b addr pid gate
	local -a scmd=() ccmd=()
	shift 2
	port=$((port + 1))
	sync=$((port + 1000))
	gate=$((port + 2000))
	addr=$peer
	[ "$srv" = "$me" ] && addr=$ip
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		a=${1//SRV/$addr}
		scmd+=("${a//PORT/$port}")
		shift
	done
	shift
	for a in "$@"; do
		a=${a//SRV/$addr}
		ccmd+=("${a//PORT/$port}")
	done
	if [ -n "${CM_LISTEN_DELAY:-}" ]; then
		read -r a b <<<"$CM_LISTEN_DELAY"
		scmd=(env "SOFTRC_CM_LISTEN_DELAY=$a $(tmo "$b")" "${scmd[@]}")
	fi
	if [ "${CM_GATE:-0}" = 1 ] && [ "${INTEROP_CM_GATE:-1}" != 0 ]; then
		scmd=(env "LD_PRELOAD=$cm_gate" "SOFTRC_CM_GATE_LISTEN=$gate" "${scmd[@]}")
		ccmd=(env "LD_PRELOAD=$cm_gate" "SOFTRC_CM_GATE_CONNECT=$addr:$gate"
		      "SOFTRC_CM_GATE_SECS=$(tmo 60)" "${ccmd[@]}")
	elif [ -n "${CM_LISTEN_DELAY:-}" ]; then
		scmd=(env "LD_PRELOAD=$cm_gate" "${scmd[@]}")
	fi
	selected "$name" || return 0
	test_begin "$name"
	if [ "$srv" = "$me" ]; then
		timeout "$(tmo 120)" "${scmd[@]}" >/tmp/interop.cm.$$ 2>&1 &
		pid=$!
		wait_until 30 bash -c "rdma res show cm_id | grep 'state LISTEN' | grep -q ':${CM_LISTEN:-$port}'"
		timeout "$(tmo 60)" busybox nc -l -p $sync </dev/null >/dev/null
		wait $pid
		rc=$?
		out=$(cat /tmp/interop.cm.$$)
	else
		wait_until 120 busybox nc $peer $sync </dev/null
		out=$(timeout "$(tmo 120)" "${ccmd[@]}" 2>&1)
		rc=$?
	fi
	test_end "$name" "$rc"
	if [ "$rc" = 0 ]; then
		echo "INTEROP $name ok"
	else
		printf '%s\n' "$out" | tail -8 | sed "s/^/# $me: /"
		echo "INTEROP $name fail"
	fi
}

# ---- ATOMIC WRITE (IBTA 1.5) over the wire --------------------------------
# rc_verify -e atomic-write: the client (requester) posts ATOMIC WRITEs
# mixed with FETCH_AND_ADDs, READs and WRITEs on the same words; the
# results and the server's memory are verified. With netem the client's
# eth0 duplicates 10% of its frames and the server's loses 5% (ACKs and
# READ responses: the client retransmits), so the server (responder)
# sees duplicate requests, ATOMIC WRITEs among them, which it must answer
# without storing again: its duplicate counter (softrc dup_atomic_writes,
# rxe duplicate_request) has to move. rxe before Linux 6.2 has no ATOMIC
# WRITE: where either side is rxe on 6.1 (INTEROP_KVER_A/_B) rc_verify
# says "# SKIP" and the test is "skip"; anywhere else a skip fails.

# aw_lacking: true when a side cannot do ATOMIC WRITE (rxe on 6.1)
aw_lacking() {
	{ [ "${INTEROP_A:-softrc}" = rxe ] && [ "${INTEROP_KVER_A:-6.1}" = 6.1 ]; } ||
		{ [ "${INTEROP_B:-rxe}" = rxe ] && [ "${INTEROP_KVER_B:-6.1}" = 6.1 ]; }
}

# aw_dup_counter: the counter of duplicates this responder answered
# (softrc counts duplicate ATOMIC WRITEs apart, rxe only all duplicates)
aw_dup_counter() {
	if [ "$drv" = softrc ]; then
		echo dup_atomic_writes
	else
		echo duplicate_request
	fi
}

# rcv_aw NAME SERVER [NETEM]: rc_verify -e atomic-write, the server on
# SERVER; NETEM=netem adds the loss and duplication above
rcv_aw() {
	local name=$1$round srv=$2 lossy=${3:-} rc out q='' d0='' d1='' w verdict
	port=$((port + 1))
	selected "$name" || return 0
	test_begin "$name"
	[ "$drv" = rxe ] && q=-Q
	if [ -n "$lossy" ]; then
		if [ "$srv" = "$me" ]; then
			tc qdisc replace dev eth0 root netem loss 5%
		else
			tc qdisc replace dev eth0 root netem duplicate 10%
		fi || echo "# $me: tc netem on eth0 failed"
		d0=$(counter "$dev" "$(aw_dup_counter)")
	fi
	# rxe 6.12 as the requester under netem: no RDMA WRITEs (rc_verify
	# -w; a duplicate WRITE's ACK can complete its READ without data)
	w=''
	[ -n "$lossy" ] && [ "$drv" = rxe ] && w=-w
	if [ "$srv" = "$me" ]; then
		out=$(timeout "$(tmo 180)" "$RC_VERIFY" -s -d "$dev" -g "$gid" -p $port -u $ack $q 2>&1)
	else
		out=$(timeout "$(tmo 180)" "$RC_VERIFY" -d "$dev" -g "$gid" -p $port -n $((4 * n)) \
			-S 31 -e atomic-write $w -B 262144 -M 65536 -u $ack $peer 2>&1)
	fi
	rc=$?
	if [ -n "$lossy" ]; then
		tc qdisc del dev eth0 root 2>/dev/null
		d1=$(counter "$dev" "$(aw_dup_counter)")
		out+=$'\n'"# $drv $(aw_dup_counter): ${d0:-?} -> ${d1:-?}"
		[ "$srv" = "$me" ] &&
			echo "# $me: $name: $drv $(aw_dup_counter) ${d0:-?} -> ${d1:-?}"
		# the responder must have seen (and answered) duplicates
		if [ "$rc" = 0 ] && [ "$srv" = "$me" ] && ! aw_lacking &&
		   ! [ "${d1:-0}" -gt "${d0:-0}" ] 2>/dev/null; then
			out+=$'\n'"# no duplicate request reached this responder under netem"
			rc=1
		fi
	fi
	verdict=ok
	if [ "$rc" = 0 ] && printf '%s\n' "$out" | grep -q '# SKIP'; then
		verdict=skip
		if ! aw_lacking; then
			out+=$'\n'"# skipped, but neither side is rxe on 6.1"
			rc=1
		fi
	elif [ "$rc" = 0 ] && [ "$srv" != "$me" ] && aw_lacking; then
		out+=$'\n'"# ran, but a side is rxe on 6.1 (no ATOMIC WRITE): a stale INTEROP_KVER?"
		rc=1
	fi
	test_end "$name" "$rc"
	if [ "$rc" = 0 ]; then
		echo "INTEROP $name $verdict"
	else
		printf '%s\n' "$out" | grep -v '^# #  ' | tail -12 | sed "s/^/# $me: /"
		echo "INTEROP $name fail"
	fi
}

# aw_tests SERVER: the ATOMIC WRITE tests with SERVER as server
aw_tests() {
	rcv_aw "rc_verify ATOMIC WRITE $((4 * n)) ops, server $1" "$1"
	rcv_aw "rc_verify ATOMIC WRITE $((4 * n)) ops under netem loss and duplication, server $1" "$1" netem
}
# ---- end of ATOMIC WRITE --------------------------------------------------

# tests: the whole list, each test with A and then B as server
tests() {
	local s
	for s in A B; do
		t "ibv_rc_pingpong 4 KiB, server $s" $s ibv_rc_pingpong -s 4096 -n $n
		t "ibv_rc_pingpong 64 KiB mtu 512, server $s" $s ibv_rc_pingpong -s 65536 -m 512 -n $((n / 5))
		t "ib_write_bw 64 KiB, server $s" $s ib_write_bw -s 65536 -n $n -F -u $ack
		t "ib_read_bw 64 KiB -q 2, server $s" $s ib_read_bw -s 65536 -n $n -q 2 -F -u $ack
		t "ib_send_bw 4 KiB, server $s" $s ib_send_bw -s 4096 -n $((2 * n)) -F -u $ack
		t "ib_atomic_bw, server $s" $s ib_atomic_bw -n $((2 * n)) -F -u $ack
		t "ib_write_lat, server $s" $s ib_write_lat -n $((2 * n)) -F -u $ack
		t "ib_read_lat, server $s" $s ib_read_lat -n $((2 * n)) -F -u $ack
		t "ib_send_lat, server $s" $s ib_send_lat -n $((2 * n)) -F -u $ack
		rcv "rc_verify $((4 * n)) ops with SEND_WITH_INV on MWs, server $s" $s
		aw_tests $s
		t "ibv_ud_pingpong 1 KiB, server $s" $s ibv_ud_pingpong -s 1024 -n $n -c
		t "ibv_uc_pingpong 4 KiB, server $s" $s ibv_uc_pingpong -s 4096 -n $n -c
		cm "rping -V, server $s" $s rping -s -a SRV -p PORT -V -C $n -- \
			rping -c -a SRV -p PORT -V -C $n
		cm "ucmatose, server $s" $s ucmatose -b SRV -p PORT -C $((n / 5)) -- \
			ucmatose -s SRV -p PORT -C $((n / 5))
		CM_LISTEN=7174 cm "udaddy, server $s" $s udaddy -b SRV -C $((n / 5)) -- \
			udaddy -s SRV -C $((n / 5))
		cm "rdma_server / rdma_client, server $s" $s rdma_server -s SRV -p PORT -- \
			rdma_client -s SRV -p PORT
		cm "rstream 4 KiB x $((2 * n)) verified, server $s" $s \
			rstream -b SRV -p PORT -S 4096 -C $((2 * n)) -T v -- \
			rstream -s SRV -p PORT -S 4096 -C $((2 * n)) -T v
		CM_GATE=1 cm "ib_send_bw -R 4 KiB, server $s" $s \
			ib_send_bw -R -d "$dev" -x "$gid" -p PORT -s 4096 -n $n -F -u $ack -- \
			ib_send_bw -R -d "$dev" -x "$gid" -p PORT -s 4096 -n $n -F -u $ack SRV
		CM_GATE=1 cm "ib_write_bw -R 64 KiB, server $s" $s \
			ib_write_bw -R -d "$dev" -x "$gid" -p PORT -s 65536 -n $n -F -u $ack -- \
			ib_write_bw -R -d "$dev" -x "$gid" -p PORT -s 65536 -n $n -F -u $ack SRV
		CM_GATE=1 cm "ib_read_lat -R 4 KiB, server $s" $s \
			ib_read_lat -R -d "$dev" -x "$gid" -p PORT -s 4096 -n $n -F -u $ack -- \
			ib_read_lat -R -d "$dev" -x "$gid" -p PORT -s 4096 -n $n -F -u $ack SRV
		# the server's data listener 3 s late: the gate must hold the
		# client's REQ back (without it: REJ 8, then perftest crashes)
		CM_GATE=1 CM_LISTEN_DELAY="2 3" cm "ib_send_bw -R, server's second listen 3 s late, server $s" $s \
			ib_send_bw -R -d "$dev" -x "$gid" -p PORT -s 4096 -n $n -F -u $ack -- \
			ib_send_bw -R -d "$dev" -x "$gid" -p PORT -s 4096 -n $n -F -u $ack SRV
		t "ib_send_bw -c UD 1 KiB, server $s" $s ib_send_bw -c UD -s 1024 -n $((2 * n)) -F
	done
}

rounds=${INTEROP_REPEAT:-1}
for r in $(seq "$rounds"); do
	[ "$rounds" -gt 1 ] && round=" [round $r]"
	tests
done
# ---- FLUSH through kernel verbs (softrc_flush_peer.ko) -------- begin ----
# IB_WR_FLUSH between the two kernels' verbs, selftests/verbs/kmod/
# softrc_flush_peer.ko in both VMs, its parameters exchanged over TCP
# (port 18560 on): "kernel FLUSH, requester X": X's QP flushes 512 bytes
# of the other side's page registered with IB_ACCESS_FLUSH_GLOBAL
# (IB_WC_FLUSH, success, byte_len 512), then its page registered without
# the right (IB_WC_REM_ACCESS_ERR). rxe's kernel requester ignores the
# WR's R_Key, VA and FLUSH fields (its init_send_wr takes only the opcode
# of an IB_WR_FLUSH), so an rxe requester's FLUSH names R_Key 0 and
# placement type 0: any responder NAKs it remote access, and that is what
# is checked when the requester is rxe (softrc, the target, must have
# taken it with rxe's ICRC: rx_flush_icrc_rxe). rxe's FLUSH ICRC is not
# the IBTA's, so a softrc facing rxe sends FLUSH with rxe's
# (flush_icrc_rxe=Y, Documentation/softrc.rst). Skipped unless both
# kernels have FLUSH in their verbs (the module is built only there).
fl_port=18560
fl_got=

# fl_swap MSG: send MSG to the peer and set fl_got to the peer's (A sends
# first); not in a subshell, so that both sides step fl_port alike
fl_swap() {
	local p=$fl_port
	fl_port=$((fl_port + 2))
	fl_got=
	if [ "$me" = A ]; then
		wait_until 120 bash -c "echo '$1' >/dev/tcp/$peer/$p" &&
			fl_got=$(timeout "$(tmo 120)" busybox nc -l -p $((p + 1)) </dev/null)
	else
		fl_got=$(timeout "$(tmo 120)" busybox nc -l -p $p </dev/null)
		wait_until 120 bash -c "echo '$1' >/dev/tcp/$peer/$((p + 1))"
	fi
}

# fl_case REQUESTER(A|B): one direction; both sides print its result
fl_case() {
	local name="kernel FLUSH, requester $1" ko kd can peer_can par
	local r_role=target mine pqpn pgid info res verdict=ok why= rk va rk2 va2
	local peer_drv=${INTEROP_A:-softrc} icrc0=0 icrc nak0=0 nak
	kd=$KMOD_DIR
	[ "${SOFTRC_KVER:-6.1}" != 6.1 ] && kd=$REPO/build/$SOFTRC_KVER/kmod
	ko=$kd/softrc_flush_peer.ko
	can=no
	[ -e "$ko" ] && can=yes
	fl_swap "$can"
	peer_can=$fl_got
	if [ "$can $peer_can" != "yes yes" ]; then
		# both sides must print the same line: name A's answer first
		local ab="$can/$peer_can"
		[ "$me" = B ] && ab="$peer_can/$can"
		echo "INTEROP $name # SKIP FLUSH not in both kernels' verbs (A/B: $ab) ok"
		return
	fi
	[ "$1" = "$me" ] && r_role=requester
	[ "$me" = A ] && peer_drv=${INTEROP_B:-rxe}
	if [ "$drv" = softrc ]; then
		[ "$peer_drv" = rxe ] && echo Y >/sys/module/softrc/parameters/flush_icrc_rxe
		icrc0=$(counter "$dev" rx_flush_icrc_rxe)
		nak0=$(counter "$dev" rem_access_naks_sent)
	fi
	par=/sys/module/softrc_flush_peer/parameters
	insmod "$ko" dev="$dev" gid="$gid" role=$r_role time_scale="$SOFTRC_TIME_SCALE" ||
		{ verdict=fail why="insmod"; }
	mine="$(cat $par/qpn 2>/dev/null) $(cat "/sys/class/infiniband/$dev/ports/1/gids/$gid")"
	fl_swap "$mine"
	read -r pqpn pgid <<<"$fl_got"
	echo "$pqpn 4660 $pgid" >$par/connect 2>/dev/null || { verdict=fail why="$why connect"; }
	info=$(cat $par/info 2>/dev/null)
	fl_swap "${info:--}"
	if [ "$r_role" = requester ]; then
		read -r rk va rk2 va2 <<<"$fl_got"
		echo "${rk:-0} ${va:-0} 512" >$par/flush 2>/dev/null
		res=$(cat $par/result)
		if [ "$drv" = rxe ]; then
			# rxe leaves opcode and byte_len 0 in an error completion
			[ "${res%% *}" = 10 ] || { verdict=fail why="$why flush: $res (want status 10: REM_ACCESS_ERR)"; }
		else
			[ "$res" = "0 8 512" ] || { verdict=fail why="$why flush: $res (want 0 8 512)"; }
			echo "${rk2:-0} ${va2:-0} 64" >$par/flush 2>/dev/null
			res=$(cat $par/result)
			[ "${res% *}" = "10 8" ] || { verdict=fail why="$why no-flush MR: $res (want 10 8: REM_ACCESS_ERR)"; }
		fi
		fl_swap "$verdict"
	else
		# the requester's verdict, unless this side failed already
		fl_swap "-"
		[ "$verdict" = ok ] && verdict=${fl_got:-fail}
		if [ "$drv" = softrc ] && [ "$peer_drv" = rxe ]; then
			icrc=$(counter "$dev" rx_flush_icrc_rxe)
			nak=$(counter "$dev" rem_access_naks_sent)
			[ "${icrc:-0}" -gt "$icrc0" ] && [ "${nak:-0}" -gt "$nak0" ] ||
				{ verdict=fail why="$why rx_flush_icrc_rxe $icrc0 -> $icrc, rem_access_naks_sent $nak0 -> $nak"; }
		fi
	fi
	[ "$drv" = softrc ] && echo N >/sys/module/softrc/parameters/flush_icrc_rxe
	dmesg | grep 'softrc_flush_peer: ' | tail -n 4 | sed "s/^/# $me: /"
	[ "$verdict" = ok ] || rdma statistic show link "$dev"/1 | sed "s/^/# $me: /"
	rmmod softrc_flush_peer 2>/dev/null
	[ -n "$why" ] && echo "# $me: $name:$why"
	echo "INTEROP $name $verdict"
}

if selected "kernel FLUSH"; then
	fl_case A
	fl_case B
fi
# ---- FLUSH through kernel verbs (softrc_flush_peer.ko) ---------- end ----
# softrc's GSO batches (tx.c) reach the peer cut into single packets by
# the software segmentation in front of the virtio NIC: they went out,
# and the peer's completions above show they arrived whole
if [ "$drv" = softrc ]; then
	c=$(rdma statistic show link "$dev"/1)
	if printf '%s\n' "$c" | grep -Eq "tx_batches [1-9]" &&
	   printf '%s\n' "$c" | grep -Eq "rx_bad_icrc 0( |$)"; then
		echo "INTEROP GSO batches segmented for the NIC ok"
	else
		printf '%s\n' "$c" | sed "s/^/# $me: /"
		echo "INTEROP GSO batches segmented for the NIC fail"
	fi
else
	echo "INTEROP GSO batches segmented for the NIC ok"
fi
# Meet before powering off: the peer may still be in its last test, and
# this VM's power-off takes the link away. A listens, B connects.
if [ "$me" = A ]; then
	timeout "$(tmo 600)" busybox nc -l -p 18599 </dev/null >/dev/null
else
	wait_until 600 busybox nc $peer 18599 </dev/null
fi
rc=$?
echo "INTEROP done $([ $rc = 0 ] && echo ok || echo fail)"
exit 0

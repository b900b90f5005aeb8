#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# UD QPs and the GSI QP (QP1): selftests/verbs/ud_verify (SEND and
# SEND_WITH_IMM up to the path MTU, every receive CQE field, the GRH slot's
# IPv4/IPv6 header, ibv_create_ah_from_wc replies, Q_Key drops and
# controlled Q_Keys, oversized sends, short receive buffers, QP state
# rules; on the IPv4 GIDs and, on loop, an IPv6 link-local GID), the
# device's rx_drop_qkey counter after it (softrc), ibv_ud_pingpong and
# ib_send_bw -c UD, then the rdma_cm tools, which need QP1 (MADs for the
# CM) and IP address resolution: rping, ucmatose, udaddy (UD over
# rdma_cm: replies through ibv_create_ah_from_wc), mckey (rdma_cm
# multicast: UD QPs attached to an IP multicast group), rdma_server /
# rdma_client, rstream (rsockets) and perftest -R (ib_write_bw,
# ib_read_lat, ib_send_bw). On loop, first the kernel's view:
# selftests/verbs/kmod/softrc_ud_test.ko (kernel UD QPs, a second GSI QP
# refused, get_netdev) and the device's `parent` sysfs attribute.
# SOFTRC_DRIVER=softrc (default) or rxe picks
# the driver; SOFTRC_TEST_SCALE multiplies the iteration counts.
#
# Topologies (selftests/verbs/topo.sh):
#   wire: netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b;
#         servers run in rc-b, clients in rc-a (rdma_cm IDs are per netns)
#         (rxe: both ends in init_net, policy routing across the veth)
#   loop: init_net: va 10.0.0.1 (s0), client and server both on s0
#
# Every program runs under `timeout`; servers start in the background and
# are waited for (TCP: a listening socket; rdma_cm: a LISTEN cm_id in
# `rdma res show cm_id`), and killed if they outlive their client.
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

UD_VERIFY=$VERBS_DIR/ud_verify
SRV_PIDS=

ud_cleanup() {
	local p
	for p in $SRV_PIDS; do
		kill "$p" 2>/dev/null
	done
	topo_cleanup
}
trap ud_cleanup EXIT

ktap_header "ud ($SOFTRC_DRIVER)"
[ -x "$UD_VERIFY" ] || { echo "1..0 # SKIP $UD_VERIFY not built"; exit 0; }
datapath_gate "ud ($SOFTRC_DRIVER)"

# ud_verify's IBTA checks that rdma_rxe (6.1) does not pass: controlled
# Q_Key (-K), an oversized SEND completing LOC_LEN_ERR (-O), a short receive
# buffer completing LOC_LEN_ERR (-L). See the header of ud_verify.c.
UD_ARGS=
[ "$SOFTRC_DRIVER" = softrc ] && UD_ARGS="-K -O -L"

# srv_start LOG CMD...: CMD in the background in the server's namespace;
# its pid in SRV
srv_start() {
	local log=$1
	shift
	$RUN_B timeout "$(tmo 120)" "$@" >"$log" 2>&1 &
	SRV=$!
	SRV_PIDS="$SRV_PIDS $SRV"
}

# srv_end: wait for SRV (killing it if it is still there after
# SECONDS=$1); its exit status
srv_end() {
	local rc
	wait_until "$1" bash -c "! kill -0 $SRV" || kill "$SRV" 2>/dev/null
	wait "$SRV"
	rc=$?
	SRV_PIDS=${SRV_PIDS/ $SRV/}
	return $rc
}

tcp_listening() {
	$RUN_B ss -ltn | grep -q ":$1 "
}

# cm_listening PORT: an rdma_cm ID listens on PORT (in the server's netns)
cm_listening() {
	$RUN_B rdma res show cm_id 2>/dev/null | grep -E "state LISTEN" | grep -qE ":$1( |$)"
}

# report LABEL TEXT: the KTAP results of a test program, as diagnostics:
# the failed and skipped ones and a count
report() {
	local nok nnot nskip
	nok=$(printf '%s\n' "$2" | grep -cE '^ok ')
	nnot=$(printf '%s\n' "$2" | grep -cE '^not ok ')
	nskip=$(printf '%s\n' "$2" | grep -cE '^ok .*# SKIP')
	printf '%s\n' "$2" | grep -E '^not ok |# SKIP|^Bail out' | sed "s/^/#   $1/"
	printf '#   %s%s passed, %s failed, %s skipped\n' "$1" \
		$((nok - nskip)) "$nnot" "$nskip"
}

# ud_pair NAME GID_A GID_B [ud_verify client options...]: ud_verify's
# server on DEV_B, its client on DEV_A over TCP to IP_B; one KTAP line.
# UD_OUT: the client's output.
ud_pair() {
	local name=$1 ga=$2 gb=$3 port=$((20000 + RANDOM % 20000)) rc
	shift 3
	srv_start /tmp/ud_srv.$$.log "$UD_VERIFY" -s -d "$DEV_B" -g "$gb" -p "$port"
	wait_until 20 tcp_listening "$port"
	UD_OUT=$($RUN_A timeout "$(tmo 120)" "$UD_VERIFY" -d "$DEV_A" -g "$ga" -p "$port" "$@" "$IP_B" 2>&1)
	rc=$?
	srv_end 20 || rc=1
	if [ "$rc" = 0 ]; then
		report "" "$UD_OUT"
		ok "$name"
	else
		printf '%s\n' "$UD_OUT" | sed 's/^/# /'
		sed 's/^/# server: /' /tmp/ud_srv.$$.log
		not_ok "$name"
	fi
	return "$rc"
}

# qkey_counter_check NAME BEFORE: DEV_B's rx_drop_qkey grew by the
# client's "# qkey drops: N" since BEFORE
qkey_counter_check() {
	local name=$1 before=$2 after want
	want=$(printf '%s\n' "$UD_OUT" | sed -n 's/^# qkey drops: \([0-9]*\)$/\1/p')
	after=$(counter "$DEV_B" rx_drop_qkey)
	if [ -n "$want" ] && [ -n "$before" ] && [ -n "$after" ] &&
		[ $((after - before)) -eq "$want" ]; then
		ok "$name"
	else
		not_ok "$name" "rx_drop_qkey ${before:-?} -> ${after:-?}, want +${want:-?}"
	fi
}

# tool_pair NAME CMD ARGS...: a stock server/client pair (ibv_*pingpong,
# perftest) as in topo.sh's pp_pair, under timeout: the server on DEV_B,
# the client on DEV_A connecting to IP_B once the server listens, retried
# while the server is not up yet.
tool_pair() {
	local name=$1 cmd=$2 out rc port gx=-x
	shift 2
	case $cmd in ibv_*) gx=-g ;; esac
	port=$((20000 + RANDOM % 20000))
	srv_start /tmp/ud_tool.$$.log "$cmd" -d "$DEV_B" $gx "$GID_B" -p "$port" "$@"
	# perftest -R listens with rdma_cm (a client that comes too early is
	# rejected, and perftest 4.5 may then crash in librdmacm), else on TCP
	case " $* " in
	*" -R "*) wait_until 20 cm_listening "$port" ;;
	*) wait_until 20 tcp_listening "$port" ;;
	esac
	out=$(for _ in $(seq 20); do
		if $RUN_A timeout "$(tmo 60)" "$cmd" -d "$DEV_A" $gx "$GID_A" -p "$port" "$@" "$IP_B" 2>&1; then
			exit 0
		fi
		kill -0 "$SRV" 2>/dev/null || exit 1
		sleep "$(tmo 0.5)"
	done; exit 1)
	rc=$?
	srv_end 30 || rc=1
	if [ "$rc" = 0 ]; then
		ok "$name"
	else
		pp_report "" "$out"
		pp_report "server: " "$(cat /tmp/ud_tool.$$.log)"
		not_ok "$name"
	fi
}

# cm_pair NAME PORT SERVER_CMD... -- CLIENT_CMD...: an rdma_cm pair: the
# server in the server's netns, started first and waited for (a LISTEN
# cm_id on PORT), the client in the client's; both must exit 0.
cm_pair() {
	local name=$1 port=$2 out rc
	local -a srv=()
	shift 2
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		srv+=("$1")
		shift
	done
	shift
	srv_start /tmp/ud_cm.$$.log "${srv[@]}"
	wait_until 20 cm_listening "$port" ||
		echo "# $name: no LISTEN cm_id on port $port seen"
	out=$(for _ in 1 2 3; do
		if $RUN_A timeout "$(tmo 60)" "$@" 2>&1; then
			exit 0
		fi
		kill -0 "$SRV" 2>/dev/null || exit 1
		sleep "$(tmo 1)"
	done; exit 1)
	rc=$?
	srv_end 30 || rc=1
	if [ "$rc" = 0 ]; then
		ok "$name"
	else
		pp_report "" "$out"
		pp_report "server: " "$(cat /tmp/ud_cm.$$.log)"
		not_ok "$name"
	fi
}

# mckey_pair NAME GROUP: rdma_cm multicast (mckey, UD QPs attached to
# the group): the receiver joins GROUP on IP_B first, then the sender
# joins on 10.0.0.1 and sends; the receiver must get all N messages
mckey_pair() {
	local name=$1 group=$2 out rc
	# line-buffered: its progress is read while it runs
	srv_start /tmp/ud_mc.$$.log stdbuf -oL mckey -m "$group" -b "$IP_B" -C "$n"
	wait_until 20 grep -q 'receiving data transfers' /tmp/ud_mc.$$.log ||
		echo "# $name: the receiver did not join"
	out=$($RUN_A timeout "$(tmo 60)" mckey -m "$group" -s -b 10.0.0.1 -C "$n" 2>&1)
	rc=$?
	srv_end 30 || rc=1
	if [ "$rc" = 0 ]; then
		ok "$name"
	else
		pp_report "" "$out"
		pp_report "receiver: " "$(cat /tmp/ud_mc.$$.log)"
		not_ok "$name"
	fi
}

# ll_addr NS_RUN IF: the IPv6 link-local address of IF
ll_addr() {
	$1 ip -6 -o addr show dev "$2" scope link 2>/dev/null |
		awk '{ sub("/.*", "", $4); print $4; exit }'
}

# kernel_ud NAME: softrc_ud_test.ko against DEV_A (kernel UD QPs as ib_mad
# and ib_cm use them, get_netdev); it runs at load, failing the load if a
# check failed. Then the parent attribute names DEV_A's netdev, as rxe's.
kernel_ud() {
	local ko=$KMOD_DIR/softrc_ud_test.ko rc n0 parent
	n0=$(dmesg | wc -l)
	insmod "$ko" dev="$DEV_A" gid="$GID_A" netdev="$IF_A" \
		time_scale="$SOFTRC_TIME_SCALE"
	rc=$?
	dmesg | tail -n +$((n0 + 1)) | grep 'softrc_ud_test: ' |
		sed 's/^.*softrc_ud_test: /#   /'
	rmmod softrc_ud_test 2>/dev/null
	if [ "$rc" = 0 ]; then ok "$1"; else not_ok "$1"; fi
	parent=$(cat "/sys/class/infiniband/$DEV_A/parent" 2>/dev/null)
	if [ "$parent" = "$IF_A" ]; then
		ok "loop: /sys/class/infiniband/$DEV_A/parent is $IF_A"
	else
		not_ok "loop: /sys/class/infiniband/$DEV_A/parent is $IF_A" "got '$parent'"
	fi
}

n=$((10 * SCALE))
for topo in loop wire; do
	if ! topo_up $topo; then
		not_ok "$topo: topology up ($SOFTRC_DRIVER)"
		topo_down
		continue
	fi
	echo "# $topo: $DEV_A gid $GID_A -> $DEV_B gid $GID_B ($IP_B)"
	[ "$topo" = loop ] && [ "$SOFTRC_DRIVER" = softrc ] &&
		kernel_ud "loop: kernel UD QPs, get_netdev ($DEV_A on $IF_A)"
	args=$UD_ARGS
	# rxe 6.1 leaves the IPv4 header checksum unset (0) on one device's
	# loopback (rxe_loopback skips ip_local_out): not checked there
	[ "$SOFTRC_DRIVER" = rxe ] && [ "$topo" = loop ] && args="-C"
	before=
	[ "$SOFTRC_DRIVER" = softrc ] && before=$(counter "$DEV_B" rx_drop_qkey)
	# shellcheck disable=SC2086
	ud_pair "$topo: ud_verify IPv4 GIDs${args:+ ($args)}" \
		"$GID_A" "$GID_B" $args
	if [ "$SOFTRC_DRIVER" = softrc ]; then
		qkey_counter_check "$topo: $DEV_B rx_drop_qkey counts the Q_Key drops" "$before"
	else
		ok "$topo: rx_drop_qkey counts the Q_Key drops # SKIP rxe has no such counter"
	fi
	# the RoCE v2 GIDs of the veths' IPv6 link-local addresses
	ll_a=$(ll_addr "$RUN_A" "$IF_A")
	ll_b=$ll_a
	[ "$topo" = wire ] && ll_b=$(ll_addr "$RUN_B" "$IF_B")
	if [ -n "$ll_a" ] && [ -n "$ll_b" ] &&
		wait_until 10 gid_index "$DEV_A" "$ll_a" &&
		wait_until 10 gid_index "$DEV_B" "$ll_b"; then
		# shellcheck disable=SC2086
		ud_pair "$topo: ud_verify IPv6 link-local GIDs ($ll_a -> $ll_b)${UD_ARGS:+ ($UD_ARGS)}" \
			"$(gid_index "$DEV_A" "$ll_a")" "$(gid_index "$DEV_B" "$ll_b")" $UD_ARGS
	else
		not_ok "$topo: ud_verify IPv6 link-local GIDs" "no IPv6 GID (${ll_a:-?} ${ll_b:-?})"
	fi

	tool_pair "$topo: ibv_ud_pingpong 1024 B x $n, checked" \
		ibv_ud_pingpong -s 1024 -n "$n" -c
	tool_pair "$topo: ibv_ud_pingpong 1 B x $n" ibv_ud_pingpong -s 1 -n "$n"
	tool_pair "$topo: ib_send_bw -c UD 1024 B" ib_send_bw -c UD -s 1024 -n $((100 * SCALE)) -F

	# rdma_cm: QP1 for the CM MADs, IP addresses for everything else
	p=$((20000 + RANDOM % 20000))
	cm_pair "$topo: rping -C $n -V" $p \
		rping -s -a "$IP_B" -p $p -v -V -C "$n" -- \
		rping -c -a "$IP_B" -p $p -v -V -C "$n"
	p=$((p + 1))
	cm_pair "$topo: ucmatose -C $n" $p \
		ucmatose -b "$IP_B" -p $p -C "$n" -- \
		ucmatose -s "$IP_B" -p $p -C "$n"
	# udaddy's port is fixed (7174; its -p is the port space)
	cm_pair "$topo: udaddy -C $n" 7174 \
		udaddy -b "$IP_B" -C "$n" -- \
		udaddy -s "$IP_B" -C "$n"
	mckey_pair "$topo: mckey: a multicast group of UD QPs, $n messages" 239.1.2.3
	p=$((p + 1))
	cm_pair "$topo: rdma_server / rdma_client" $p \
		rdma_server -s "$IP_B" -p $p -- \
		rdma_client -s "$IP_B" -p $p
	p=$((p + 1))
	cm_pair "$topo: rstream (rsockets) 4 KiB x $((100 * SCALE)), verified" $p \
		rstream -b "$IP_B" -p $p -S 4096 -C $((100 * SCALE)) -T v -- \
		rstream -s "$IP_B" -p $p -S 4096 -C $((100 * SCALE)) -T v
	ack=$(ack_timeout_for 18)
	tool_pair "$topo: ib_write_bw -R 64 KiB" ib_write_bw -R -s 65536 -n $((50 * SCALE)) -F -u "$ack"
	tool_pair "$topo: ib_read_lat -R 4 KiB" ib_read_lat -R -s 4096 -n $((50 * SCALE)) -F -u "$ack"
	tool_pair "$topo: ib_send_bw -R 4 KiB" ib_send_bw -R -s 4096 -n $((100 * SCALE)) -F -u "$ack"
	topo_down
done

ktap_finish

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Traffic topologies for the VM suites, parameterized by the RDMA driver
# (SOFTRC_DRIVER=softrc|rxe). Sourced after selftests/vm/lib.sh; runs in
# the guest as root.
#
#   wire, softrc: two network namespaces joined by a veth pair
#       netns rc-a: va 10.0.0.1/24, device s0  ===  netns rc-b: vb 10.0.0.2/24, device s1
#   wire, rxe (6.1 rxe cannot live in a netns): both ends in init_net with
#       policy routing (topo_veth_routing, also tools/vectors/capture.sh's),
#       so traffic between 10.0.0.1 (va, r0) and 10.0.0.2 (vb, r1) crosses
#       the veth
#   loop: one device (s0 / r0 on va, 10.0.0.1) used by both sides
#
# After topo_up the suite uses:
#   DEV_A DEV_B      client and server devices (the same one for loop)
#   GID_A GID_B      their RoCE v2 IPv4 GID indexes
#   IP_B             the server's address (TCP for pingpong / perftest)
#   RUN_A RUN_B      command prefixes placing a process in its namespace
#   NS_A NS_B        the namespaces ("" = init_net)
#   IF_A IF_B        the veth ends (wire only)

SOFTRC_DRIVER=${SOFTRC_DRIVER:-softrc}
VERBS_DIR=$REPO/selftests/verbs
RC_VERIFY=$VERBS_DIR/rc_verify
# rxe 6.1 puts the kernel value of IB_WC_WITH_INVALIDATE in user CQEs
RC_SRV_ARGS=
[ "$SOFTRC_DRIVER" = rxe ] && RC_SRV_ARGS=-Q
# scale iteration counts: SOFTRC_TEST_SCALE=4 runs four times as much
SCALE=${SOFTRC_TEST_SCALE:-1}

driver_load() {
	case $SOFTRC_DRIVER in
	softrc) softrc_loaded || softrc_load ;;
	rxe) modprobe rdma_rxe ;;
	*) echo "SOFTRC_DRIVER must be softrc or rxe" >&2; return 1 ;;
	esac
}

driver_unload() {
	case $SOFTRC_DRIVER in
	softrc) softrc_unload ;;
	rxe) ! [ -d /sys/module/rdma_rxe ] || rmmod rdma_rxe ;;
	esac
}

# gid_index DEV ADDR: index of the RoCE v2 GID of ADDR, an IPv4 address
# (the GID ::ffff:ADDR) or an IPv6 one
gid_index() {
	local want n
	case $2 in
	*:*) want=$(/usr/bin/python3 -c 'import ipaddress, sys; print(ipaddress.IPv6Address(sys.argv[1]).exploded)' "$2") ;;
	*) want=$(printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x' ${2//./ }) ;;
	esac
	for n in $(seq 0 15); do
		[ "$(cat "/sys/class/infiniband/$1/ports/1/gids/$n" 2>/dev/null)" = "$want" ] &&
			[ "$(cat "/sys/class/infiniband/$1/ports/1/gid_attrs/types/$n" 2>/dev/null)" = "RoCE v2" ] &&
			{ echo "$n"; return 0; }
	done
	return 1
}

dev_name() {
	case $SOFTRC_DRIVER in
	softrc) echo "s$1" ;;
	*) echo "r$1" ;;
	esac
}

topo_wait_gids() {
	wait_until 10 gid_index "$DEV_A" 10.0.0.1 &&
		wait_until 10 gid_index "$DEV_B" "$IP_B" &&
		GID_A=$(gid_index "$DEV_A" 10.0.0.1) &&
		GID_B=$(gid_index "$DEV_B" "$IP_B")
}

# topo_veth_routing: the veth pair va/vb, both ends in init_net, gets
# 10.0.0.1 (va) and 10.0.0.2 (vb), goes up, and traffic between the two
# addresses crosses it instead of lo: look up "local" after the peer
# routes, except for what arrives on the veth, so 10.0.0.2 from 10.0.0.1
# leaves through va (and back through vb). topo_down undoes the rules.
# Also the rxe capture's set-up (tools/vectors/capture.sh).
topo_veth_routing() {
	local d
	for d in all default; do
		sysctl -qw net.ipv4.conf.$d.rp_filter=0 net.ipv4.conf.$d.accept_local=1
	done
	ip addr add 10.0.0.1/24 dev va
	ip addr add 10.0.0.2/24 dev vb
	ip link set va up
	ip link set vb up
	for d in va vb; do
		sysctl -qw net.ipv4.conf.$d.rp_filter=0 net.ipv4.conf.$d.accept_local=1
	done
	ip rule add pref 100 lookup local
	ip rule del pref 0 lookup local
	ip rule add pref 10 iif va lookup local
	ip rule add pref 10 iif vb lookup local
	ip rule add pref 20 to 10.0.0.2 lookup 102
	ip rule add pref 20 to 10.0.0.1 lookup 101
	ip route add 10.0.0.2 dev va src 10.0.0.1 table 102
	ip route add 10.0.0.1 dev vb src 10.0.0.2 table 101
}

# topo_up wire|loop
topo_up() {
	TOPO=$1
	IF_A=va IF_B=vb
	driver_load || return 1
	if [ "$TOPO" = wire ] && [ "$SOFTRC_DRIVER" = softrc ]; then
		NS_A=rc-a NS_B=rc-b
		RUN_A="ip netns exec rc-a" RUN_B="ip netns exec rc-b"
		ip netns add rc-a && ip netns add rc-b || return 1
		ip link add va netns rc-a mtu 9000 type veth peer name vb netns rc-b mtu 9000 || return 1
		$RUN_A ip link set lo up
		$RUN_B ip link set lo up
		$RUN_A ip addr add 10.0.0.1/24 dev va
		$RUN_B ip addr add 10.0.0.2/24 dev vb
		$RUN_A ip link set va up
		$RUN_B ip link set vb up
		DEV_A=$(dev_name 0) DEV_B=$(dev_name 1) IP_B=10.0.0.2
		$RUN_A rdma link add "$DEV_A" type softrc netdev va || return 1
		$RUN_B rdma link add "$DEV_B" type softrc netdev vb || return 1
	elif [ "$TOPO" = wire ]; then
		NS_A= NS_B= RUN_A= RUN_B=
		ip link set lo up
		ip link add va mtu 9000 type veth peer name vb mtu 9000 || return 1
		topo_veth_routing
		DEV_A=$(dev_name 0) DEV_B=$(dev_name 1) IP_B=10.0.0.2
		rdma link add "$DEV_A" type "$SOFTRC_DRIVER" netdev va || return 1
		rdma link add "$DEV_B" type "$SOFTRC_DRIVER" netdev vb || return 1
	else
		NS_A= NS_B= RUN_A= RUN_B=
		ip link set lo up
		ip link add va mtu 9000 type veth peer name vb mtu 9000 || return 1
		ip addr add 10.0.0.1/24 dev va
		ip link set va up
		ip link set vb up
		DEV_A=$(dev_name 0) DEV_B=$DEV_A IP_B=10.0.0.1
		rdma link add "$DEV_A" type "$SOFTRC_DRIVER" netdev va || return 1
	fi
	sysctl -qw net.core.netdev_max_backlog=10000
	topo_wait_gids
}

topo_down() {
	local d
	for d in $(rdma link show 2>/dev/null | sed -n 's/^link \([^/]*\)\/.*/\1/p'); do
		rdma link del "$d" 2>/dev/null
	done
	ip netns del rc-a 2>/dev/null
	ip netns del rc-b 2>/dev/null
	ip link del va 2>/dev/null
	if ip rule show | grep -q 'lookup 102'; then
		ip rule del pref 20 to 10.0.0.2 lookup 102
		ip rule del pref 20 to 10.0.0.1 lookup 101
		ip rule del pref 10 iif va lookup local
		ip rule del pref 10 iif vb lookup local
		ip rule add pref 0 lookup local
		ip rule del pref 100 lookup local
		ip route flush table 101
		ip route flush table 102
	fi
	# wait for the devices to go away before the next topology
	wait_until 10 bash -c '[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]'
}

# The EXIT trap of a suite: topology down, driver unloaded
topo_cleanup() {
	topo_down
	driver_unload
}

# datapath_gate SUITE: softrc only. When a pingpong probe fails AND the
# module cannot even create a QP, the data path is not there yet: print a
# single SKIP and exit the suite. Any other failure is left to the tests.
datapath_gate() {
	local out
	[ "$SOFTRC_DRIVER" = softrc ] || return 0
	topo_up loop || return 0
	if pp_pair_quiet ibv_rc_pingpong -n 5; then
		topo_down
		return 0
	fi
	out=$("$RC_VERIFY" -e state -d "$DEV_A" 2>&1)
	topo_down
	if printf '%s\n' "$out" | grep -q 'Bail out! ibv_create_qp'; then
		echo "ok 1 $1 # SKIP softrc data path not available (no QPs: $(printf '%s\n' "$out" | grep -o 'ibv_create_qp.*'))"
		echo "1..1"
		exit 0
	fi
	return 0
}

pp_pair_quiet() {
	local cmd=$1 port=$((20000 + RANDOM % 20000)) gx=-x srv rc shim
	shift
	case $cmd in ibv_*) gx=-g ;; esac
	shim=$(ack_shim)
	$RUN_B timeout "$(tmo 30)" $shim "$cmd" -d "$DEV_B" $gx "$GID_B" -p "$port" "$@" >/dev/null 2>&1 &
	srv=$!
	# the client gives up at once if the server is not listening yet
	wait_until 20 bash -c "$RUN_B ss -ltn | grep -q ':$port '"
	$RUN_A timeout "$(tmo 30)" $shim "$cmd" -d "$DEV_A" $gx "$GID_A" -p "$port" "$@" "$IP_B" >/dev/null 2>&1
	rc=$?
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
	return $rc
}

# netem_pin_neigh: each veth end's neighbour entry for the other end's
# address made permanent. Modify QP to RTR resolves the peer's MAC with a
# one-second limit (rdma_addr_find_l2_eth_by_grh), shorter than ARP's own
# resend, so a lost ARP request or reply under netem fails the connect with
# ETIMEDOUT; the suites test the transport's recovery, not ARP's.
netem_pin_neigh() {
	local ip_a=10.0.0.1 mac_a mac_b
	[ "$TOPO" = wire ] || return 0
	mac_a=$($RUN_A cat "/sys/class/net/$IF_A/address") &&
		mac_b=$($RUN_B cat "/sys/class/net/$IF_B/address") &&
		$RUN_A ip neigh replace "$IP_B" lladdr "$mac_b" dev "$IF_A" nud permanent &&
		$RUN_B ip neigh replace "$ip_a" lladdr "$mac_a" dev "$IF_B" nud permanent
}

# netem_set ARGS...: the same netem qdisc on both veth ends (wire only),
# the neighbours pinned first
netem_set() {
	netem_pin_neigh &&
		$RUN_A tc qdisc replace dev "$IF_A" root netem "$@" &&
		$RUN_B tc qdisc replace dev "$IF_B" root netem "$@"
}

netem_clear() {
	$RUN_A tc qdisc del dev "$IF_A" root 2>/dev/null
	$RUN_B tc qdisc del dev "$IF_B" root 2>/dev/null
	return 0
}

# rc_pair NAME [rc_verify options...]: the server on DEV_B, the client on
# DEV_A, over a Unix socket (works across the namespaces); one KTAP line.
rc_pair_n=0
rc_pair() {
	local name=$1 sock out rc srv
	shift
	rc_pair_n=$((rc_pair_n + 1))
	sock=/tmp/rc_verify.$$.$rc_pair_n.sock
	$RUN_B "$RC_VERIFY" -s -d "$DEV_B" -g "$GID_B" ${RC_SRV_ARGS:-} "$@" "$sock" >/tmp/rc_srv.$$.log 2>&1 &
	srv=$!
	out=$($RUN_A "$RC_VERIFY" -d "$DEV_A" -g "$GID_A" "$@" "$sock" 2>&1)
	rc=$?
	wait "$srv" || rc=1
	if [ "$rc" = 0 ]; then
		ok "$name"
		printf '%s\n' "$out" | grep -E '^# [0-9]+ ops|^ok [0-9]+ SEND_WITH_INV' | sed 's/^/#   /'
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		sed 's/^/# server: /' /tmp/rc_srv.$$.log
		not_ok "$name"
	fi
	return "$rc"
}

# prog_result NAME KEEP CMD...: one KTAP line for a run of a test program
# (CMD may start with RUN_A or RUN_B, unquoted): if it exits 0, its lines
# matching the ERE KEEP (its own results) become diagnostics; else all of
# its output does.
prog_result() {
	local name=$1 keep=$2 out
	shift 2
	if out=$("$@" 2>&1); then
		printf '%s\n' "$out" | grep -E "$keep" | sed 's/^/#   /'
		ok "$name"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "$name"
	fi
}

# pp_report PREFIX TEXT: a failed tool's output as diagnostics. Its stderr
# (unbuffered) lands before its buffered stdout, so its error lines come
# first (at most 10, wherever they are), then its last 15 lines.
pp_report() {
	printf '%s\n' "$2" | grep -iE 'error|fail|couldn|unable|status [0-9]|syndrom' |
		head -n 10 | sed "s/^/# $1/"
	printf '%s\n' "$2" | tail -15 | sed "s/^/# $1/"
}

# pp_pair NAME CMD [args]: a stock server/client pair (ibv_rc_pingpong,
# perftest): the server on DEV_B, the client on DEV_A connecting to IP_B.
# SRV_ARGS / CLI_ARGS add side-specific options. ACK timeouts below
# ack_timeout_for 14 are raised to it (ack_shim: ibv_rc_pingpong fixes 14).
pp_pair() {
	local name=$1 cmd=$2 out rc srv port gx=-x shim
	shift 2
	case $cmd in ibv_*) gx=-g ;; esac
	shim=$(ack_shim)
	port=$((20000 + RANDOM % 20000))
	$RUN_B $shim "$cmd" -d "$DEV_B" $gx "$GID_B" -p "$port" "$@" ${SRV_ARGS:-} >/tmp/pp_srv.$$.log 2>&1 &
	srv=$!
	# the server needs a moment to listen; the client retries connects
	# (for 10 s, scaled to the VM's speed)
	out=$(for _ in $(seq 40); do
		if $RUN_A $shim "$cmd" -d "$DEV_A" $gx "$GID_A" -p "$port" "$@" ${CLI_ARGS:-} "$IP_B" 2>&1; then
			exit 0
		fi
		kill -0 "$srv" 2>/dev/null || exit 1
		sleep "$(tmo 0.25)"
	done; exit 1)
	rc=$?
	if [ "$rc" = 0 ]; then
		wait "$srv" || rc=1
	else
		kill "$srv" 2>/dev/null
		wait "$srv"
	fi
	PP_OUT=$out
	if [ "$rc" = 0 ]; then
		ok "$name"
	else
		pp_report "" "$out"
		pp_report "server: " "$(cat /tmp/pp_srv.$$.log)"
		not_ok "$name"
	fi
	return "$rc"
}

# --- rdma_cm: selftests/verbs/cm_verify ------------------------------------
CM_VERIFY=$VERBS_DIR/cm_verify

# cm_listening PORT: an rdma_cm ID listens on PORT (in the server's netns)
cm_listening() {
	$RUN_B rdma res show cm_id 2>/dev/null | grep -E "state LISTEN" | grep -qE ":$1( |$)"
}

# res_counts: the QPs and cm_ids of every device, "QP CM_ID"
res_counts() {
	rdma resource show 2>/dev/null | awk '{
		for (i = 1; i < NF; i++) {
			if ($i == "qp") q += $(i + 1)
			if ($i == "cm_id") c += $(i + 1)
		}
	} END { print q + 0, c + 0 }'
}

# cmv_run N OUT [client options...]: one cm_verify pair with N connections,
# the server on DEV_B (IP_B), the client on DEV_A, each under `timeout`
# (its own -T deadline, default 60 + N/8 s a phase, scaled, plus a
# margin); their output in OUT.srv and OUT.cli, each ending with an
# "EXIT status" line. True when both exit 0. CMV_PORT: the port used.
# CMV_ARGS: options for both sides (-m, -z, -T).
cmv_run() {
	local n=$1 out=$2 srv lim rc
	shift 2
	CMV_PORT=$((20000 + RANDOM % 20000))
	lim=$(tmo $((3 * (60 + n / 8) + 60)))
	# shellcheck disable=SC2086 # CMV_ARGS: several options
	{
		$RUN_B timeout "$lim" "$CM_VERIFY" -s -b "$IP_B" -p "$CMV_PORT" -n "$n" \
			${CMV_ARGS:-} 2>&1
		echo "EXIT $?"
	} >"$out.srv" &
	srv=$!
	wait_until 20 cm_listening "$CMV_PORT" ||
		echo "# cm_verify: no LISTEN cm_id on port $CMV_PORT" >>"$out.srv"
	# shellcheck disable=SC2086
	{
		$RUN_A timeout "$lim" "$CM_VERIFY" -a "$IP_B" -p "$CMV_PORT" -n "$n" \
			${CMV_ARGS:-} "$@" 2>&1
		echo "EXIT $?"
	} >"$out.cli"
	wait "$srv"
	rc=0
	grep -qx 'EXIT 0' "$out.srv" || rc=1
	grep -qx 'EXIT 0' "$out.cli" || rc=1
	return $rc
}

# cmv_field FILE KEY: KEY's value on the CMV line of FILE (cm_verify's
# machine-readable summary)
cmv_field() {
	awk -v k="$2" '$1 == "CMV" { for (i = 3; i < NF; i += 2) if ($i == k) print $(i + 1) }' "$1"
}

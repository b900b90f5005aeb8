#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Teardown under traffic, then rmmod: no WARN/BUG (run.sh scans the
# kernel log), nothing leaked (slab object counts come back), the module
# unloads. Cases, each on the wire topology with traffic running:
#   - rc_verify -e destroy: destroy a QP with 64 x 1 MiB WRs in flight
#   - kill -9 an ib_write_bw client mid-run; the device keeps working
#   - rdma link del under traffic (it completes once the users are gone)
#   - ip link del of the netdev under traffic (the device goes with it)
# SOFTRC_DRIVER=softrc|rxe.
#
# Topology (selftests/verbs/topo.sh, wire):
#   netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b
#   (rxe: both ends in init_net, policy routing across the veth)
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

cleanup() {
	kill_traffic
	topo_cleanup
}
trap cleanup EXIT

ktap_header "teardown ($SOFTRC_DRIVER)"
[ -x "$RC_VERIFY" ] || { echo "1..0 # SKIP $RC_VERIFY not built"; exit 0; }
datapath_gate "teardown ($SOFTRC_DRIVER)"

# slab_back BASE: the slab counts (slabs, slab_grown: lib.sh) come back
# to BASE, a snapshot taken after one warm-up cycle (one-time allocations
# are made by then), within 10 s (scaled): frees deferred by RCU and by
# the RDMA core's work items land by then
slab_back() {
	local i

	for ((i = 0; i < 10; i++)); do
		slab_grown "$1" >/dev/null && return 0
		sleep "${SOFTRC_TIME_SCALE:-1}"
	done
	slab_grown "$1"
}

# packets DEV has sent (softrc: tx_pkts, rxe: sent_pkts)
tx_count() {
	rdma statistic show link "$1/1" |
		sed -En 's/.* (tx_pkts|sent_pkts) ([0-9]+).*/\2/p' | head -1 | grep . || echo 0
}
export -f tx_count

TRAFFIC_PIDS=
# traffic_start: a long ib_write_bw pair; waits until bytes move
traffic_start() {
	local port=$((20000 + RANDOM % 20000))
	local before

	before=$(tx_count "$DEV_A")
	# started detached (not our children), so kill -9 is not reported
	( $RUN_B ib_write_bw -d "$DEV_B" -x "$GID_B" -p $port -s 65536 -n 1000000 -F -u 18 >/dev/null 2>&1 &
	  echo $! >/tmp/td-srv.pid )
	# the client gives up at once if the server is not listening yet
	wait_until 20 bash -c "$RUN_B ss -ltn | grep -q ':$port '"
	( $RUN_A ib_write_bw -d "$DEV_A" -x "$GID_A" -p $port -s 65536 -n 1000000 -F -u 18 "$IP_B" >/dev/null 2>&1 &
	  echo $! >/tmp/td-cli.pid )
	TRAFFIC_PIDS="$(cat /tmp/td-srv.pid) $(cat /tmp/td-cli.pid)"
	CLIENT_PID=$(cat /tmp/td-cli.pid)
	wait_until 20 bash -c "[ \$(tx_count $DEV_A) -gt $before ]"
	sleep 1
}

kill_traffic() {
	local p
	for p in $TRAFFIC_PIDS; do kill -9 "$p" 2>/dev/null; done
	wait_until 10 traffic_gone
	TRAFFIC_PIDS=
}

traffic_gone() {
	local p
	for p in $TRAFFIC_PIDS; do kill -0 "$p" 2>/dev/null && return 1; done
	return 0
}

# rdma link del / ip link del wait for the device's users; give the
# driver 3 s to let them go by itself, then kill them
del_under_traffic() {
	local pid
	"$@" >/tmp/td-del.log 2>&1 &
	pid=$!
	wait_until 3 bash -c "! kill -0 $pid" || kill_traffic
	wait_until 30 bash -c "! kill -0 $pid" || return 1
	wait "$pid"
}

check "load $SOFTRC_DRIVER" driver_load
# warm-up: one full cycle so the baseline has the one-time allocations
topo_up wire && pp_pair_quiet ibv_rc_pingpong -n 5
topo_down
base=/tmp/td-slab.base
slabs >$base

topo_up wire || { not_ok "wire: topology up"; ktap_finish; exit 1; }
rc_pair "destroy a QP (and its CQs, MR, PD) with 64 x 1 MiB WRs in flight" -e destroy

traffic_start
check "kill -9 the ib_write_bw client mid-run" bash -c "kill -9 $CLIENT_PID"
check "the server side exits too (its peer is gone)" \
	bash -c "wait_until 30 bash -c '! kill -0 ${TRAFFIC_PIDS%% *}' || { kill -9 ${TRAFFIC_PIDS%% *}; exit 1; }"
kill_traffic
check "the devices still carry traffic afterwards" pp_pair_quiet ibv_rc_pingpong -n 10

traffic_start
check "rdma link del $DEV_A under traffic completes" del_under_traffic $RUN_A rdma link del "$DEV_A"
check "... and $DEV_A is gone" wait_until 10 rdma_dev_gone "$DEV_A"
kill_traffic
topo_down

topo_up wire || { not_ok "wire: topology up again"; ktap_finish; exit 1; }
traffic_start
check "ip link del $IF_B (the netdev) under traffic completes" del_under_traffic $RUN_B ip link del "$IF_B"
check "... and both devices are gone (the veth pair went)" \
	wait_until 10 bash -c "rdma_dev_gone $DEV_A && rdma_dev_gone $DEV_B"
kill_traffic
topo_down

check "rmmod after the teardowns" driver_unload
check "module gone" bash -c "! [ -d /sys/module/softrc ] && ! [ -d /sys/module/rdma_rxe ]"
check "slab object counts are back to the baseline" slab_back $base

ktap_finish

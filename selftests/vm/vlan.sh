#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# RoCE on VLAN and macvlan devices stacked on the netdev of a softrc
# device. The RDMA core gives each address of such an upper device a GID
# of its own; traffic from that GID must leave through that device (on
# the lower veth: an 802.1Q tag, or the macvlan's source MAC) and be
# accepted when it comes back in through one. Per upper device kind:
#   - the GIDs of its addresses appear on both devices
#   - rc_verify (data-verifying RC traffic, SEND/WRITE/READ/atomics),
#     ibv_ud_pingpong and rping (rdma_cm: address resolution picks the
#     upper device's GID) between the two upper devices' GIDs
#   - a capture on the lower veth end vb during that traffic: the RoCE
#     packets carry VLAN 100 (none leaves untagged), or come from the
#     macvlan's MAC (none from va's)
#
# Topology (softrc only: rxe's wire pair lives in init_net):
#   netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b
#     va.100 10.100.0.1/24 (VLAN 100)  vb.100 10.100.0.2/24
#     mva    10.200.0.1/24 (macvlan)   mvb    10.200.0.2/24
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

CAP=/tmp/vlan.$$.cap
trap topo_cleanup EXIT

ktap_header "vlan ($SOFTRC_DRIVER)"
if [ "$SOFTRC_DRIVER" != softrc ]; then
	echo "1..0 # SKIP softrc only (rxe's wire pair shares init_net)"
	exit 0
fi
datapath_gate "vlan ($SOFTRC_DRIVER)"

# upper_up KIND NAME_A NAME_B NET: the upper devices on va and vb, with
# NET.1 and NET.2, up
upper_up() {
	local kind=$1 a=$2 b=$3 net=$4
	if [ "$kind" = vlan ]; then
		$RUN_A ip link add link va name "$a" type vlan id 100 &&
			$RUN_B ip link add link vb name "$b" type vlan id 100
	else
		$RUN_A ip link add link va name "$a" type macvlan mode bridge &&
			$RUN_B ip link add link vb name "$b" type macvlan mode bridge
	fi || return 1
	$RUN_A ip addr add "$net.1/24" dev "$a" &&
		$RUN_B ip addr add "$net.2/24" dev "$b" &&
		$RUN_A ip link set "$a" up && $RUN_B ip link set "$b" up
}

# have_gids NET / no_gids NET: both devices have the GIDs of NET.1 and
# NET.2 / neither has
have_gids() {
	gid_index "$DEV_A" "$1.1" && gid_index "$DEV_B" "$1.2"
}
no_gids() {
	! gid_index "$DEV_A" "$1.1" && ! gid_index "$DEV_B" "$1.2"
}

# capture_start / capture_stop: every frame on vb (link-level headers)
capture_start() {
	$RUN_B timeout "$(tmo 300)" tcpdump -i vb -e -nn -l 'udp port 4791 or (vlan and udp port 4791)' \
		>"$CAP" 2>"$CAP.err" &
	CAP_PID=$!
	wait_until 20 grep -qs 'listening on' "$CAP.err"
}
capture_stop() {
	sleep "$(tmo 0.5)"
	kill -INT "$CAP_PID" 2>/dev/null
	wait "$CAP_PID" 2>/dev/null
}

# rping_pair NAME ADDR: rping -V between the namespaces, to ADDR
rping_pair() {
	local name=$1 addr=$2 port=$((20000 + RANDOM % 20000)) srv rc out
	$RUN_B timeout "$(tmo 60)" rping -s -v -a "$addr" -p $port -V -C 10 \
		>/tmp/vlan_rping.$$.log 2>&1 &
	srv=$!
	wait_until 20 bash -c "$RUN_B rdma res show cm_id | grep 'state LISTEN' | grep -q ':$port'"
	out=$($RUN_A timeout "$(tmo 60)" rping -c -v -a "$addr" -p $port -V -C 10 2>&1)
	rc=$?
	wait "$srv" || rc=1
	if [ "$rc" = 0 ]; then
		ok "$name"
	else
		pp_report "" "$out"
		pp_report "server: " "$(cat /tmp/vlan_rping.$$.log)"
		not_ok "$name"
	fi
}

if ! topo_up wire; then
	not_ok "wire: topology up"
	ktap_finish
	exit 1
fi
for kind in vlan macvlan; do
	if [ $kind = vlan ]; then
		ua=va.100 ub=vb.100 net=10.100.0
	else
		ua=mva ub=mvb net=10.200.0
	fi
	check "$kind: $ua $net.1 on va, $ub $net.2 on vb" upper_up $kind $ua $ub $net
	if ! check "$kind: $DEV_A and $DEV_B have the GIDs of $net.1 and $net.2" \
		wait_until 10 have_gids $net; then
		continue
	fi
	ga=$(gid_index "$DEV_A" $net.1)
	gb=$(gid_index "$DEV_B" $net.2)
	echo "# $kind: $DEV_A gid $ga ($net.1) -> $DEV_B gid $gb ($net.2)"

	capture_start
	GID_A=$ga GID_B=$gb IP_B=$net.2 rc_pair "$kind: rc_verify between the $kind GIDs" -n 200
	GID_A=$ga GID_B=$gb IP_B=$net.2 pp_pair "$kind: ibv_ud_pingpong between the $kind GIDs" \
		ibv_ud_pingpong -s 1024 -n 10
	rping_pair "$kind: rping -V to $net.2 (rdma_cm picks the $kind GID)" $net.2
	capture_stop
	tagged=$(grep -c "vlan 100, .* > $net.2.4791: UDP" "$CAP")
	untagged=$(grep " > $net.2.4791: UDP" "$CAP" | grep -vc "vlan 100")
	mac_a=$($RUN_A cat /sys/class/net/$ua/address)
	from_upper=$(grep -c "^[^ ]* $mac_a > .* > $net.2.4791: UDP" "$CAP")
	from_va=$(grep -c "^[^ ]* $($RUN_A cat /sys/class/net/va/address) > .* > $net.2.4791: UDP" "$CAP")
	echo "# $kind: RoCE frames to $net.2 on vb: $tagged tagged VLAN 100, $untagged untagged," \
		"$from_upper from $ua's MAC $mac_a, $from_va from va's"
	if [ $kind = vlan ]; then
		if [ "$tagged" -gt 0 ] && [ "$untagged" = 0 ]; then
			ok "$kind: the RoCE frames on vb carry VLAN 100, none untagged"
		else
			sed 's/^/# /' "$CAP" | head -10
			not_ok "$kind: the RoCE frames on vb carry VLAN 100, none untagged"
		fi
	elif [ "$from_upper" -gt 0 ] && [ "$from_va" = 0 ]; then
		ok "$kind: the RoCE frames on vb come from $ua's MAC, none from va's"
	else
		sed 's/^/# /' "$CAP" | head -10
		not_ok "$kind: the RoCE frames on vb come from $ua's MAC, none from va's"
	fi
	$RUN_A ip link del $ua
	$RUN_B ip link del $ub
	check "$kind: the GIDs go with the devices" wait_until 10 no_gids $net
done
topo_down

ktap_finish

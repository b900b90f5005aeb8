#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Verbs objects without traffic: selftests/verbs/objects (libibverbs with
# the stock librxe provider) creates, queries and destroys PDs, MRs, CQs,
# SRQs and AHs on a softrc device and checks attributes and errors; its
# KTAP lines are this suite's results. Then the device and module go
# away cleanly (no object leaked: the module's teardown would WARN).
#
# Topology:
#   init_net                        | netns softrc-ns1
#   s0 -> va 10.0.0.1/24 fd00::1/64 === vb 10.0.0.2/24 fd00::2/64
set -u
. "$(dirname "$0")/lib.sh"

OBJECTS=$REPO/selftests/verbs/objects

cleanup() {
	rdma link del s0 2>/dev/null
	ip netns del softrc-ns1 2>/dev/null
	ip link del va 2>/dev/null
	rmmod softrc 2>/dev/null
}
trap cleanup EXIT

if [ ! -x "$OBJECTS" ]; then
	echo "TAP version 13"
	echo "1..0 # SKIP $OBJECTS not built (make -C selftests/verbs)"
	exit 0
fi

setup() {
	softrc_load || return 1
	ip netns add softrc-ns1 &&
	ip link add va type veth peer name vb netns softrc-ns1 &&
	ip addr add 10.0.0.1/24 dev va &&
	ip -6 addr add fd00::1/64 dev va nodad &&
	ip link set va up &&
	ip -n softrc-ns1 addr add 10.0.0.2/24 dev vb &&
	ip -n softrc-ns1 -6 addr add fd00::2/64 dev vb nodad &&
	ip -n softrc-ns1 link set vb up &&
	rdma link add s0 type softrc netdev va &&
	wait_until 5 bash -c '[ "$(port_state s0)" = ACTIVE ]' &&
	wait_until 5 bash -c 'ibv_devinfo -v -d s0 | grep -q "fd00::1, RoCE v2"'
}

if ! out=$(setup 2>&1); then
	echo "TAP version 13"
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "Bail out! device set-up failed"
	exit 1
fi

timeout "$(tmo 120)" "$OBJECTS" s0
rc=$?

# The teardown is part of the result: objects.c destroyed everything.
if ! out=$(rdma link del s0 2>&1 && rmmod softrc 2>&1); then
	printf '%s\n' "$out" | sed 's/^/# /'
	echo "# objects: device removal or rmmod failed"
	rc=1
fi
exit $rc

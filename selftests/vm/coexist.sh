#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# softrc and rdma_rxe both report RDMA_DRIVER_RXE, so they must never
# share a kernel: each direction of the fence, then a clean unload.
#
# Topology: one veth pair in init_net (va <-> vb), used only to show
# that no device can be created while rdma_rxe holds the driver id.
set -u
. "$(dirname "$0")/lib.sh"

cleanup() {
	ip link del va 2>/dev/null
	rmmod softrc 2>/dev/null
	rmmod rdma_rxe 2>/dev/null
}
trap cleanup EXIT

ktap_header coexist

ip link add va type veth peer name vb
ip link set va up
ip link set vb up

check "softrc loads while rdma_rxe is absent" softrc_load
check "rdma link add works" rdma link add s0 type softrc netdev va
check_fails "modprobe rdma_rxe is vetoed while softrc is loaded" modprobe rdma_rxe
check "... and says why in the kernel log" \
	bash -c 'dmesg | grep -q "refusing to let rdma_rxe load"'
check "softrc's device survived the attempt" rdma_dev_exists s0
check "rmmod softrc" bash -c 'rmmod softrc && rdma_dev_gone s0'
check "rdma_rxe loads once softrc is gone" modprobe rdma_rxe
check_fails "insmod softrc is refused while rdma_rxe is loaded" insmod "$SOFTRC_KO"
check "... and says why in the kernel log" \
	bash -c 'dmesg | grep -q "rdma_rxe is loaded and claims the same RDMA driver id"'
check "rxe still works: rdma link add type rxe" \
	bash -c 'rdma link add r0 type rxe netdev va && rdma link del r0'
check "rmmod rdma_rxe" rmmod rdma_rxe
check "softrc loads again after rdma_rxe is gone" softrc_load
check "rmmod softrc" rmmod softrc
ip link del va

ktap_finish

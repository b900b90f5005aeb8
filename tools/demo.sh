#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The softrc demo, run inside the VM by `make demo`: load the module,
# put a veth pair across two network namespaces, create one softrc
# device on each end, show them with the stock rdma tools and run
# ib_write_bw between them.
#
#   netns softrc-a                     netns softrc-b
#   sa -> va 10.0.0.1/24  <== veth ==>  vb 10.0.0.2/24 <- sb
set -eu
repo=$(cd "$(dirname "$0")/.." && pwd -P)

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "load softrc (and the RDMA core modules it needs)"
modprobe ib_core
modprobe ib_uverbs
modprobe udp_tunnel
modprobe ip6_udp_tunnel
insmod "${SOFTRC_KO:-$repo/drivers/infiniband/sw/softrc/softrc.ko}"

step "a veth pair across two network namespaces"
ip netns add softrc-a
ip netns add softrc-b
ip link add va netns softrc-a type veth peer name vb netns softrc-b
ip -n softrc-a addr add 10.0.0.1/24 dev va
ip -n softrc-b addr add 10.0.0.2/24 dev vb
ip -n softrc-a link set va up
ip -n softrc-b link set vb up

step "rdma link add: one softrc device per namespace"
ip netns exec softrc-a rdma link add sa type softrc netdev va
ip netns exec softrc-b rdma link add sb type softrc netdev vb
for i in $(seq 100); do
	rdma link show sa/1 | grep -q ACTIVE && rdma link show sb/1 | grep -q ACTIVE && break
	sleep 0.05
done
rdma link show
rdma dev show

step "ibv_devices / ibv_devinfo -v (stock rdma-core, librxe provider)"
ibv_devices
ip netns exec softrc-a ibv_devinfo -v -d sa | grep -E 'hca_id|transport|node_guid|vendor_id|max_qp:|state|active_mtu|link_layer|GID'

step "ib_write_bw across the veth: server on sb, client on sa (64 KiB)"
gid=$(ip netns exec softrc-b ibv_devinfo -v -d sb | sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:10\.0\.0\.2, RoCE v2/\1/p')
ip netns exec softrc-b ib_write_bw -d sb -x "$gid" -s 65536 -n 2000 -F >/tmp/demo-srv.log 2>&1 &
srv=$!
for i in $(seq 200); do
	ip netns exec softrc-b ss -ltn | grep -q ':18515 ' && break
	sleep 0.05
done
ip netns exec softrc-a ib_write_bw -d sa -x "$gid" -s 65536 -n 2000 -F 10.0.0.2
wait "$srv"

step "clean up"
ip netns del softrc-a
ip netns del softrc-b
for i in $(seq 200); do
	[ -z "$(ls /sys/class/infiniband)" ] && break
	sleep 0.05
done
rmmod softrc
echo "devices removed with their netdevs; softrc unloaded"

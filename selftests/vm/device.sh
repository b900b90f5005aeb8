#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Device creation, queries and removal through stock tools only.
#
# Topology (init_net, plus one namespace for the netns cases):
#
#     init_net                       | netns softrc-ns1
#   s0 -> va 10.0.0.1/24, fd00::1/64 === vb -> s1 (10.0.0.2/24)
#   (lo: rejected)                   |
#
# Each case says what it checks; failures print the command's output.
set -u
. "$(dirname "$0")/lib.sh"

cleanup() {
	ip netns del softrc-ns1 2>/dev/null
	ip link del va 2>/dev/null
	ip link del vc 2>/dev/null
	rmmod softrc 2>/dev/null
	softrc_modtree_restore
}
trap cleanup EXIT

ktap_header device

check "load softrc.ko with its in-kernel dependencies" softrc_load

ip link add va type veth peer name vb
ip addr add 10.0.0.1/24 dev va
ip -6 addr add fd00::1/64 dev va nodad
ip link set va up
ip link set vb up

check "rdma link add s0 type softrc netdev va" rdma link add s0 type softrc netdev va
check "rdma link show: s0 bound to va" bash -c 'rdma link show s0/1 | grep -q "netdev va"'
check "port ACTIVE with carrier" wait_until 5 bash -c '[ "$(rdma link show s0/1 | sed -n "s/.* state \([A-Z]*\) .*/\1/p")" = ACTIVE ]'
check "ibv_devices lists s0 (librxe bound by driver id)" bash -c 'ibv_devices | grep -qw s0'

info=$(ibv_devinfo -v -d s0 2>&1)
check "ibv_devinfo: link_layer Ethernet" grep -q "link_layer:.*Ethernet" <<<"$info"
check "ibv_devinfo: PORT_ACTIVE" grep -q "state:.*PORT_ACTIVE" <<<"$info"
check "ibv_devinfo: RoCE v2 GID for 10.0.0.1" \
	grep -Eq "GID\[ *[0-9]+\]:.*::ffff:10\.0\.0\.1, RoCE v2" <<<"$info"
check "ibv_devinfo: RoCE v2 GID for fd00::1" \
	grep -Eq "GID\[ *[0-9]+\]:.*fd00::1, RoCE v2" <<<"$info"
check "ibv_devinfo: no RoCE v1 GIDs" bash -c '! grep -q "RoCE v1" <<<"$1"' _ "$info"
check "ibv_devinfo: active_mtu 1024 at netdev MTU 1500" \
	grep -Eq "active_mtu:.*1024" <<<"$info"
check "ibv_devinfo: max_mtu 4096" grep -Eq "max_mtu:.*4096" <<<"$info"

# node GUID = EUI-64 of va's MAC (ff:fe inserted, U/L bit flipped)
mac=$(cat /sys/class/net/va/address)
guid=$(python3 -c '
import sys
b = [int(x, 16) for x in sys.argv[1].split(":")]
b[0] ^= 2
e = b[:3] + [0xff, 0xfe] + b[3:]
print(":".join("%02x%02x" % (e[i], e[i + 1]) for i in range(0, 8, 2)))' "$mac")
check "node GUID derived from va's MAC" grep -q "node_guid:.*$guid" <<<"$info"
check "rdma dev show: s0 is a CA" bash -c 'rdma dev show s0 | grep -q "node_type ca"'
check "transport RoCEv2 only (sysfs gid type)" \
	bash -c 'grep -qx "RoCE v2" /sys/class/infiniband/s0/ports/1/gid_attrs/types/1'
check "link layer Ethernet (sysfs)" bash -c '[ "$(port_attr s0 link_layer)" = Ethernet ]'

# MTU follows the netdev: largest IB MTU that fits with the RoCEv2 headers
mtu_is() {
	ip link set va mtu "$1" && ibv_devinfo -d s0 | grep -Eq "active_mtu:.*\($2\)"
}
check "netdev MTU 9000 -> IB MTU 4096" mtu_is 9000 5
check "netdev MTU 4179 -> IB MTU 2048 (4096 + 84 B headers do not fit)" mtu_is 4179 4
check "netdev MTU 4180 -> IB MTU 4096" mtu_is 4180 5
check "netdev MTU 600 -> IB MTU 512" mtu_is 600 2
check "netdev MTU 339 -> port DOWN (not even IB MTU 256 fits)" \
	bash -c 'ip link set va mtu 339 && wait_until 5 bash -c "[ \"\$(port_state s0)\" = DOWN ]"'
ip link set va mtu 1500

# carrier and admin state
check "peer down (no carrier) -> port DOWN" \
	bash -c 'ip link set vb down && wait_until 5 bash -c "[ \"\$(port_state s0)\" = DOWN ]"'
check "peer up -> port ACTIVE" \
	bash -c 'ip link set vb up && wait_until 5 bash -c "[ \"\$(port_state s0)\" = ACTIVE ]"'
check "admin down -> port DOWN, phys_state disabled" \
	bash -c 'ip link set va down && wait_until 5 bash -c "[ \"\$(port_state s0)\" = DOWN ]" && grep -q Disabled /sys/class/infiniband/s0/ports/1/phys_state'
ip link set va up
wait_until 5 bash -c '[ "$(port_state s0)" = ACTIVE ]'

# bad input: clear errors, nothing created
check_fails "second device on va is refused" rdma link add s9 type softrc netdev va
check "... with a message naming the existing device" \
	bash -c 'dmesg | grep -q "va already has softrc device s0"'
check_fails "duplicate name s0 on another netdev is refused" \
	bash -c 'ip link add vc type veth peer name vd && rdma link add s0 type softrc netdev vc'
check "... with the reason in the kernel log (not ENFILE)" \
	bash -c 'dmesg | grep -q "an RDMA device of that name exists"'
check "... and no device was left on vc" bash -c '! rdma link show | grep -q "netdev vc"'
ip link del vc
check_fails "unknown netdev is refused" rdma link add s9 type softrc netdev nosuchdev
check_fails "loopback (non-Ethernet) netdev is refused" rdma link add s9 type softrc netdev lo
check "... with the reason in the kernel log" bash -c 'dmesg | grep -q "on lo: not Ethernet"'
check_fails "rdma link del of an unknown name fails" rdma link del nosuch
check "no stray devices after the bad adds" \
	bash -c '[ "$(ls /sys/class/infiniband | tr "\n" " ")" = "s0 " ]'

# teardown paths
check "ip link del va removes s0" bash -c 'ip link del va && wait_until 10 rdma_dev_gone s0'
ip link add va type veth peer name vb
ip link set va up
ip link set vb up

# network namespaces: the netdev lives in softrc-ns1, the command runs there
ip netns add softrc-ns1
ip link set vb netns softrc-ns1
ip -n softrc-ns1 addr add 10.0.0.2/24 dev vb
ip -n softrc-ns1 link set vb up
check "rdma link add inside a netns" ip netns exec softrc-ns1 rdma link add s1 type softrc netdev vb
check "s1 gets a RoCE v2 GID for the netns address 10.0.0.2" \
	wait_until 5 bash -c 'ibv_devinfo -v -d s1 | grep -Eq "::ffff:10\.0\.0\.2, RoCE v2"'
check "s1 port ACTIVE" wait_until 5 bash -c '[ "$(port_state s1)" = ACTIVE ]'
check "rdma link add for va still works beside s1" rdma link add s0 type softrc netdev va
check "deleting the netns removes s1 and, with its veth peer, s0" \
	bash -c 'ip netns del softrc-ns1 && wait_until 10 rdma_dev_gone s1 && wait_until 10 rdma_dev_gone s0'
ip link add va type veth peer name vb
ip link set va up
ip link set vb up

check "rdma link del removes the device" \
	bash -c 'rdma link add s2 type softrc netdev va && rdma link del s2 && rdma_dev_gone s2'
check "the same netdev can be reused after del" rdma link add s3 type softrc netdev va
check "rmmod with a device present removes it" bash -c 'rmmod softrc && rdma_dev_gone s3'
check "module reloads after rmmod" softrc_load
check "rmmod with no device" rmmod softrc
check "rdma link add autoloads softrc (module alias rdma-link-softrc)" \
	bash -c 'softrc_install_module && rdma link add s4 type softrc netdev va && softrc_loaded'
check "rmmod after autoload" bash -c 'rmmod softrc && rdma_dev_gone s4'
check "the module tree is restored (no overlay, no softrc.ko)" \
	bash -c 'softrc_modtree_restore && ! softrc_modtree_mounted &&
		[ -z "$(find "/lib/modules/$KVER" -name "softrc*")" ]'
ip link del va

ktap_finish

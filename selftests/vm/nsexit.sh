#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A QP transmits while the namespace whose UDP sockets its device sends
# through goes away (security review of 0d7acba, F8), with
# selftests/verbs/kmod/softrc_nsexit_test.ko (see its header): it brings
# nsx0, a "physical" netdev (no rtnl_link_ops: a dying namespace hands it
# back to init_net instead of deleting it). s1 is created on nsx0 in
# netns softrc-nsx; the module connects an RC QP on s1 to 10.0.0.1 (no
# one answers) and holds s1; softrc-nsx is deleted. Its cleanup moves
# nsx0 to init_net (s1 stays: its unregistration waits for the module),
# the module's pernet exit waits until nsx0 is up with 10.0.0.2 again
# (done here), then softrc's exit closes the sockets s1 still uses; at
# each socket release the module holds the closer and puts a SEND's flush
# in the window after the release's RCU wait, then lets both go on.
# 0d7acba read snet->sock4 again in that flush, after the closer had
# cleared it: an oops (the guest panics, in BH). Needs 2 CPUs.
#
# Topology: nsx0 10.0.0.2/24 (s1) in netns softrc-nsx, then in init_net;
# 10.0.0.1 is nobody.
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

NS=softrc-nsx
KO=$KMOD_DIR/softrc_nsexit_test.ko
P=/sys/module/softrc_nsexit_test/parameters

cleanup() {
	rmmod softrc_nsexit_test 2>/dev/null
	ip netns del $NS 2>/dev/null
	wait_until 10 rdma_dev_gone s1
	rmmod softrc 2>/dev/null
}
trap cleanup EXIT

ktap_header "nsexit"
if [ ! -e "$KO" ]; then
	echo "1..0 # SKIP $KO not built (make -C selftests/verbs kmod)"
	exit 0
fi
if [ "$(nproc)" -lt 2 ]; then
	echo "1..0 # SKIP needs 2 CPUs (run.sh --smp 2)"
	exit 0
fi

nsx_up() {
	ip netns add $NS &&
	ip link set nsx0 netns $NS &&
	ip -n $NS addr add 10.0.0.2/24 dev nsx0 &&
	ip -n $NS link set nsx0 up &&
	ip netns exec $NS rdma link add s1 type softrc netdev nsx0 &&
	wait_until 5 bash -c '[ "$(port_state s1)" = ACTIVE ]' &&
	wait_until 5 gid_index s1 10.0.0.2
}

# nsx0 back in init_net (the namespace's cleanup moved it): address, up
nsx_back() {
	wait_until 30 ip link show nsx0 &&
	ip addr add 10.0.0.2/24 dev nsx0 &&
	ip link set nsx0 up
}

param() {
	cat $P/"$1"
}

hold_ms=$((3000 * SOFTRC_TIME_SCALE))
[ $hold_ms -le 10000 ] || hold_ms=10000
check "load softrc" softrc_load
check "softrc_nsexit_test.ko loads (nsx0, probes attached)" \
	insmod "$KO" hold_ms=$hold_ms wait_ms=$((30000 * SOFTRC_TIME_SCALE)) \
		time_scale="$SOFTRC_TIME_SCALE"
check "s1 on nsx0 in $NS" nsx_up
n0=$(dmesg | wc -l)
if ! echo "s1 $(gid_index s1 10.0.0.2)" >$P/connect; then
	dmesg | tail -n +$((n0 + 1)) | grep 'softrc_nsexit_test: ' | sed 's/^.*softrc_nsexit_test: /#   /'
	not_ok "a QP on s1 in RTS towards 10.0.0.1"
	ktap_finish
	exit
fi
ok "a QP on s1 in RTS towards 10.0.0.1"
check "ip netns del $NS" ip netns del $NS
# the namespace's exit runs in the netns cleanup work, after ip returns
check "nsx0 back in init_net, addressed and up; s1 stays (held)" bash -c "$(declare -f nsx_back); nsx_back && rdma_dev_exists s1"
check "$NS's exit closed s1's sockets" wait_until 30 bash -c "[ \$(cat $P/closes) -ge 1 ]"
echo "# softrc_net_ns_exit calls: $(param exits), udp_tunnel_sock_release calls: $(param releases), nsx0 ready: $(param nsx0_ready)"
holds=$(param closer_holds) txh=$(param tx_holds) txr=$(param tx_released)
check "each socket release held with a SEND's flush in its window ($holds releases, $txh flushes held, $txr let go when the closer went on; post $(param post_err))" \
	test "$holds" -ge 1 -a "$txh" -eq "$holds" -a "$txr" -eq "$txh"
check "no oops, BUG or WARN" bash -c "! dmesg | tail -n +$((n0 + 1)) | grep -E 'Oops|BUG:|WARNING:|general protection'"
check "rmmod softrc_nsexit_test, s1 goes" bash -c "rmmod softrc_nsexit_test && wait_until 10 rdma_dev_gone s1"
check "rmmod softrc" rmmod softrc
ktap_finish

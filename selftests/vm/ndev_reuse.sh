#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# A softrc device whose netdev was deleted must never be mistaken for the
# device of a new netdev (security review H5). The RDMA core drops its
# netdev reference (free_netdevs) before it calls dealloc_driver, which
# takes the device off softrc's lists; in between, the netdev may be
# freed and its memory reused by the next netdev created. The module's
# test_dealloc_delay_ms hook holds that window open for seconds, during
# which new veth pairs (likely at the freed addresses, SLUB reusing the
# last freed object) must each take a softrc device without -EEXIST.
set -u
. "$(dirname "$0")/lib.sh"

DELAY=/sys/module/softrc/parameters/test_dealloc_delay_ms
N=4

cleanup() {
	local i
	[ -w $DELAY ] && echo 0 >$DELAY
	for i in $(seq 0 $N); do rdma link del "nr$i" 2>/dev/null; done
	ip link del nra 2>/dev/null
	for i in $(seq 0 $N); do ip link del "nrx$i" 2>/dev/null; done
	wait_until 30 bash -c '[ -z "$(ls /sys/class/infiniband 2>/dev/null)" ]'
	softrc_unload
}
trap cleanup EXIT

ktap_header ndev_reuse
check "load softrc.ko" softrc_load
if ! [ -w $DELAY ]; then
	not_ok "test_dealloc_delay_ms parameter present"
	ktap_finish
	exit
fi

echo 6000 >$DELAY
ip link add nra type veth peer name nrb
check "rdma link add nr0 on nra" rdma link add nr0 type softrc netdev nra
# unregistering nra queues the device's unregistration; dealloc then waits
ip link del nra
check "nra is gone (nr0 now waits in dealloc_driver)" \
	bash -c '! ip link show nra 2>/dev/null'
fails=0
for i in $(seq 1 $N); do
	ip link add "nrx$i" type veth peer name "nry$i"
	if ! out=$(rdma link add "nr$i" type softrc netdev "nrx$i" 2>&1); then
		echo "# rdma link add nr$i on nrx$i: $out"
		fails=$((fails + 1))
	fi
done
dmesg | grep 'already has softrc device' | tail -3 | sed 's/^/# /'
check "$N new netdevs inside the window each take a device (no stale match)" \
	test $fails = 0
echo 0 >$DELAY
check "nr0 finishes unregistering" wait_until 30 rdma_dev_gone nr0

ktap_finish

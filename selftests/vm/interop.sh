#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interop on the wire with Linux rdma_rxe. Runs on the HOST (run_all.sh
# skips it; `make check-interop` runs it): tools/vm/run-pair.sh boots two
# VMs joined by a QEMU socket network, VM A loads INTEROP_A (default
# softrc), VM B INTEROP_B (default rxe; the two drivers cannot share a
# kernel). Then ibv_rc_pingpong, perftest write/read/send/atomic/lat and
# rc_verify, each with A as server and then B as server
# (selftests/verbs/interop_guest.sh). INTEROP_A=rxe validates the pair.
# SOFTRC_KO (a softrc.ko to load instead of the tree's) and
# SOFTRC_VM_FLAVOR_A/_B (tools/vm/run-pair.sh) are passed on: make
# check-debug runs A on the debug kernel.
#
# Topology:
#   VM A: eth0 10.0.0.1/24, device s0|r0 ===(QEMU socket)=== VM B: eth0 10.0.0.2/24, r0
set -u
cd "$(dirname "$0")/../.." || exit 1
a=${INTEROP_A:-softrc}
b=${INTEROP_B:-rxe}
log=$(mktemp /tmp/interop.XXXXXX)
trap 'rm -f "$log"' EXIT

echo "TAP version 13"
echo "# suite: interop (A $a, B $b)"
tools/vm/run-pair.sh --timeout "${INTEROP_TIMEOUT:-900}" --mem 1024 \
	--env INTEROP_A="$a" --env INTEROP_B="$b" --env INTEROP_N="${INTEROP_N:-50}" \
	${SOFTRC_KO:+--env SOFTRC_KO="$SOFTRC_KO"} \
	-- selftests/verbs/interop_guest.sh selftests/verbs/interop_guest.sh >"$log" 2>&1
status=$?
grep -E '^\[[AB]\] # ' "$log"
n=0 failed=0
while IFS= read -r name; do
	n=$((n + 1))
	ra=$(grep -F "[A] INTEROP $name " "$log" | awk '{print $NF}' | tail -1)
	rb=$(grep -F "[B] INTEROP $name " "$log" | awk '{print $NF}' | tail -1)
	if [ "$ra" = ok ] && [ "$rb" = ok ]; then
		echo "ok $n $name"
	else
		failed=$((failed + 1))
		echo "not ok $n $name # A: ${ra:-none}, B: ${rb:-none}"
	fi
done < <(sed -n 's/^\[[AB]\] INTEROP \(.*\) \(ok\|fail\)\r\{0,1\}$/\1/p' "$log" | awk '!seen[$0]++')
n=$((n + 1))
if [ "$status" = 0 ]; then
	echo "ok $n pair run clean (both VMs, kernel logs clean)"
else
	failed=$((failed + 1))
	echo "not ok $n pair run clean # run-pair.sh status $status"
	grep -E 'softrc-vm|WARNING|BUG' "$log" | tail -20 | sed 's/^/# /'
fi
echo "1..$n"
[ "$failed" = 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Interop on the wire with Linux rdma_rxe. Runs on the HOST (run_all.sh
# skips it; `make check-interop` runs it): tools/testing/vm/run-pair.sh boots two
# VMs joined by a QEMU socket network, VM A loads INTEROP_A (default
# softrc), VM B INTEROP_B (default rxe; the two drivers cannot share a
# kernel). Then ibv_rc_pingpong, perftest write/read/send/atomic/lat,
# rc_verify, the UD and UC pingpongs and the rdma_cm tools (over QP1),
# each with A as server and then B as server
# (selftests/verbs/interop_guest.sh). INTEROP_A=rxe validates the pair.
# Each VM runs its own kernel: SOFTRC_KVER_A / SOFTRC_KVER_B (series, 6.1 or
# 6.12, default SOFTRC_KVER, else 6.1) and SOFTRC_VM_FLAVOR_A/_B
# (tools/testing/vm/run-pair.sh; make check-debug runs A on the debug kernel). A
# softrc VM loads SOFTRC_KO_A / SOFTRC_KO_B, default SOFTRC_KO (a softrc.ko
# to load instead of the tree's), default the tree's softrc.ko on 6.1 and
# build/SERIES/mod/drivers/infiniband/sw/softrc/softrc.ko on another series
# (tools/testing/build-modules.sh SERIES build/SERIES, which make KVER=SERIES
# runs). So "softrc on 6.1 vs softrc on 6.12" is
#   INTEROP_B=softrc SOFTRC_KVER_A=6.1 SOFTRC_KVER_B=6.12 selftests/vm/interop.sh
#
# Environment: INTEROP_A, INTEROP_B, INTEROP_N (iterations, 50),
# INTEROP_TIMEOUT (pair run limit, s); the guests also get INTEROP_KVER_A/_B
# (an rxe on 6.1 has no ATOMIC WRITE: those tests may say skip, which
# counts as "# SKIP" here) and INTEROP_CM_GATE; for chasing one test
# INTEROP_ONLY (ERE of test names), INTEROP_REPEAT (rounds),
# INTEROP_PCAP=fail|all with INTEROP_PCAP_DIR (default /tmp/interop-pcap):
# each guest's capture of a failed (all: every) test is written there as
# "<test>.A.pcap" / "<test>.B.pcap" (decode: tools/vectors/decode.py
# --headers). INTEROP_LOG=FILE keeps the whole console log.
# INTEROP_STALL="VM DELAY SECS" (e.g. "B 8 1.5") stops VM's QEMU process for
# SECS seconds, DELAY seconds after each test starts in it: a guest its host
# does not run for a while, as a loaded host does to TCG guests at random
# (Documentation/interop.rst).
#
# Topology:
#   VM A: eth0 10.0.0.1/24, device s0|r0 ===(QEMU socket)=== VM B: eth0 10.0.0.2/24, r0
set -u
cd "$(dirname "$0")/../.." || exit 1
a=${INTEROP_A:-softrc}
b=${INTEROP_B:-rxe}
log=$(mktemp /tmp/interop.XXXXXX)
trap 'rm -f "$log"' EXIT

kver_a=${SOFTRC_KVER_A:-${SOFTRC_KVER:-6.1}}
kver_b=${SOFTRC_KVER_B:-${SOFTRC_KVER:-6.1}}
export SOFTRC_KVER_A=$kver_a SOFTRC_KVER_B=$kver_b

echo "TAP version 13"
echo "# suite: interop (A $a on $kver_a${SOFTRC_VM_FLAVOR_A:+ $SOFTRC_VM_FLAVOR_A}, B $b on $kver_b${SOFTRC_VM_FLAVOR_B:+ $SOFTRC_VM_FLAVOR_B})"
envs=(--env INTEROP_A="$a" --env INTEROP_B="$b" --env INTEROP_N="${INTEROP_N:-50}"
	--env INTEROP_KVER_A="$kver_a" --env INTEROP_KVER_B="$kver_b")
for v in INTEROP_ONLY INTEROP_REPEAT INTEROP_PCAP INTEROP_CM_GATE SOFTRC_TIME_SCALE; do
	[ -n "${!v:-}" ] && envs+=(--env "$v=${!v}")
done
# side_ko SIDE SERIES: the softrc.ko that side loads (empty: the guest's default)
side_ko() {
	local v=SOFTRC_KO_$1
	if [ -n "${!v:-}" ]; then
		echo "${!v}"
	elif [ -n "${SOFTRC_KO:-}" ]; then
		echo "$SOFTRC_KO"
	elif [ "$2" != 6.1 ]; then
		echo "$PWD/build/$2/mod/drivers/infiniband/sw/softrc/softrc.ko"
	fi
}
ko_a=$(side_ko A "$kver_a")
ko_b=$(side_ko B "$kver_b")
[ -n "$ko_a" ] && envs+=(--env-a "SOFTRC_KO=$ko_a")
[ -n "$ko_b" ] && envs+=(--env-b "SOFTRC_KO=$ko_b")
for side in A:$a:$ko_a B:$b:$ko_b; do
	IFS=: read -r s d k <<<"$side"
	if [ "$d" = softrc ] && [ -n "$k" ] && [ ! -f "$k" ]; then
		echo "# VM $s: no $k (make KVER=SERIES builds it)"
	fi
done
tools/testing/vm/run-pair.sh --timeout "${INTEROP_TIMEOUT:-900}" --mem 1024 "${envs[@]}" \
	-- selftests/verbs/interop_guest.sh selftests/verbs/interop_guest.sh >"$log" 2>&1 &
pair=$!

# descendants PID: every process below PID
descendants() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}

# stall_watch VM DELAY SECS: the INTEROP_STALL watcher (until the pair ends)
stall_watch() {
	local vm=$1 delay=$2 secs=$3 line q p
	tail -n +1 -F --pid=$pair "$log" 2>/dev/null | while IFS= read -r line; do
		case $line in "[$vm] INTEROP-START "*) ;; *) continue ;; esac
		q=
		for p in $(descendants $pair); do
			[ "$(cat "/proc/$p/comm" 2>/dev/null)" = qemu-system-x86 ] &&
				tr '\0' ' ' <"/proc/$p/cmdline" | grep -q -- "-name softrc-vm-$vm " && q=$p
		done
		[ -n "$q" ] || continue
		sleep "$delay"
		kill -STOP "$q" 2>/dev/null && echo "# stalled VM $vm for ${secs}s: ${line#*INTEROP-START }"
		sleep "$secs"
		kill -CONT "$q" 2>/dev/null
	done
}
if [ -n "${INTEROP_STALL:-}" ]; then
	# shellcheck disable=SC2086 # three words
	stall_watch $INTEROP_STALL &
fi
wait $pair
status=$?
wait
[ -n "${INTEROP_LOG:-}" ] && grep -av '^\[[AB]\] INTEROP-PCAP ' "$log" >"$INTEROP_LOG"
if [ -n "${INTEROP_PCAP:-}" ]; then
	pdir=${INTEROP_PCAP_DIR:-/tmp/interop-pcap}
	mkdir -p "$pdir"
	# each capture: BEGIN <sha256> <test name>, base64 lines, END
	for side in A B; do
		grep -a "^\[$side\] INTEROP-PCAP-BEGIN " "$log" | while read -r _ _ sum name; do
			f="$pdir/$(printf '%s' "$name" | tr -c 'A-Za-z0-9_.-' _).$side.pcap"
			# the other VM's lines interleave: only this side's count
			awk -v h="[$side] INTEROP-PCAP-BEGIN $sum $name" -v p="[$side] INTEROP-PCAP " \
				-v e="[$side] INTEROP-PCAP-END" '
				$0 == h { on = 1; next }
				on && $0 == e { exit }
				on && index($0, p) == 1 { print substr($0, length(p) + 1) }' "$log" |
				base64 -d >"$f"
			if [ "$(sha256sum <"$f" | cut -d' ' -f1)" = "$sum" ]; then
				echo "# capture $f"
			else
				echo "# capture $f damaged on the console (sha256 differs)"
			fi
		done
	done
fi
grep -E '^\[[AB]\] # ' "$log"
n=0 failed=0
while IFS= read -r name; do
	n=$((n + 1))
	ra=$(grep -F "[A] INTEROP $name " "$log" | awk '{print $NF}' | tail -1)
	rb=$(grep -F "[B] INTEROP $name " "$log" | awk '{print $NF}' | tail -1)
	if [ "$ra" = ok ] && [ "$rb" = ok ]; then
		echo "ok $n $name"
	elif [[ $ra$rb =~ ^(ok|skip)(ok|skip)$ ]]; then
		# a side had no use for the test (e.g. rxe 6.1: no ATOMIC WRITE)
		echo "ok $n $name # SKIP A: $ra, B: $rb"
	else
		failed=$((failed + 1))
		echo "not ok $n $name # A: ${ra:-none}, B: ${rb:-none}"
	fi
done < <(sed -n 's/^\[[AB]\] INTEROP \(.*\) \(ok\|skip\|fail\)\r\{0,1\}$/\1/p' "$log" | awk '!seen[$0]++')
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

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# check-debug.sh - `make check-debug`: every VM suite on the debug kernel.
#
# Runs on the host, as root, for the kernel series SOFTRC_KVER (6.1 or
# 6.12, default 6.1; `make check-debug KVER=6.12`).  Steps:
#   1. tools/testing/vm/debug-kernel.sh: build (or find cached) Debian's source of
#      that series with KASAN, UBSAN, lockdep, DEBUG_ATOMIC_SLEEP,
#      DEBUG_OBJECTS, kmemleak, soft-lockup and hung-task detectors;
#   2. softrc.ko and the test modules (selftests/verbs/kmod) built against
#      it, W=1 -Werror, in copies under build/debug/ (build/debug-6.12/
#      for 6.12; the tree's own softrc.ko stays built for Debian's
#      kernel), and the userspace programs the suites run (make verbs);
#   3. every VM suite on the debug kernel (panic_on_warn), in one guest
#      or in CHECK_DEBUG_JOBS guests side by side, each with the kmemleak
#      scan at the end (selftests/vm/run_all.sh) and its own verdict
#      (finished, kernel log clean);
#   4. interop with rxe: the softrc guest on the debug kernel, the rxe
#      guest on Debian's kernel of the same series.
# Results are KTAP in build/results-debug/ (build/results-debug-6.12/);
# one summary line at the end.
# SOFTRC_VM_SUITES limits step 3 to some suites, CHECK_DEBUG_JOBS sets how
# many guests share them (default 1), CHECK_DEBUG_INTEROP=0
# skips step 4 (both for quick runs; a full run sets neither),
# CHECK_DEBUG_TIMEOUT sets each guest's time limit (see run_group).
# SOFTRC_TIME_SCALE (default 10) multiplies the suites' timeouts: the
# checkers make the guest kernel many times slower than Debian's.
# The times of each step are printed (the first build takes most of it).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
top=$PWD
# the series, for every step below (debug-kernel.sh, the guests, interop)
export SOFTRC_KVER=${SOFTRC_KVER:-6.1}
tools/setup/kernel.sh "$SOFTRC_KVER" release >/dev/null || exit 1
sfx=
[ "$SOFTRC_KVER" = 6.1 ] || sfx=-$SOFTRC_KVER
res=$top/build/results-debug$sfx
out=$top/build/debug$sfx
rm -rf "$res"
mkdir -p "$res"

stamp() { date +%s; }
took() { echo "# check-debug: $1 took $(($(stamp) - $2)) s"; }

t=$(stamp)
tools/setup/deps.sh flex bison bc libelf-dev libssl-dev rsync || exit 1
dk=$(tools/testing/vm/debug-kernel.sh) || { echo "check-debug: debug kernel build failed" >&2; exit 1; }
kd=$dk/build
took "debug kernel (build or cache)" "$t"

# softrc.ko and the test modules from fresh copies of their sources,
# checked to carry the debug kernel's vermagic and symbol CRCs
# (tools/testing/build-modules.sh), and the userspace programs.
t=$(stamp)
if ! { tools/testing/build-modules.sh "$kd" "$out" && make verbs; } >"$res/build.log" 2>&1; then
	tail -n 30 "$res/build.log"
	echo "check-debug: module build failed" >&2
	exit 1
fi
ko=$out/mod/drivers/infiniband/sw/softrc/softrc.ko
took "modules against the debug kernel" "$t"

# The suites, split into CHECK_DEBUG_JOBS groups (default 1), each group
# in a guest of its own, all at once, balanced by each suite's time in
# the last `make check` (build/results/vm.log), else by its length in
# lines. Measured on 2 cores: two 2-vCPU debug guests ran at about 65 %
# of a core each, not the 2 cores they had, so more guests do not make
# the run shorter there; on a larger host they can.
# install.sh is left out: it builds and installs the module the user's
# way (DKMS, make install) and checks packaging, not the module's
# behaviour, which the other suites run on this kernel; the debug tree's
# build in the guest would take most of an hour.
suites=$(selftests/vm/run_all.sh --list | grep -vx install.sh)
suite_cost() {
	local c
	c=$(sed -n "s/^# $1 took \([0-9]*\) s$/\1/p" build/results/vm.log 2>/dev/null | tail -n 1)
	echo "${c:-$(wc -l <"selftests/vm/$1")}"
}
jobs=${CHECK_DEBUG_JOBS:-1}
declare -a group load
for ((i = 0; i < jobs; i++)); do group[i]='' load[i]=0; done
while read -r cost suite; do
	# longest first, each to the least loaded group
	min=0
	for ((i = 1; i < jobs; i++)); do ((load[i] < load[min])) && min=$i; done
	group[min]+=" $suite"
	load[min]=$((load[min] + cost))
done < <(for s in $suites; do
	echo "$(suite_cost "$s") $s"
done | sort -rn)

# The guest's time limit (CHECK_DEBUG_TIMEOUT overrides): 1800 s for
# each of its suites and 600 s to boot, a budget for the whole group. On
# an idle 2-core host the slowest suite took 1977 s (datapath.sh), most
# take 8 to 18 times their time on Debian's kernel.
run_group() {
	local i=$1 n
	n=$(wc -w <<<"${group[i]}")
	SOFTRC_VM_FLAVOR=debug tools/testing/vm/run.sh \
		--timeout "${CHECK_DEBUG_TIMEOUT:-$((600 + 1800 * n))}" \
		--env SOFTRC_KO="$ko" --env SOFTRC_KMOD_DIR="$out/kmod" \
		--env SOFTRC_TIME_SCALE="${SOFTRC_TIME_SCALE:-10}" \
		--env SOFTRC_VM_SUITES="${group[i]# }" \
		-- selftests/vm/run_all.sh 2>&1 |
		# one guest: its console live on the terminal too, as before
		if [ "$jobs" = 1 ]; then tee "$res/vm-$i.log"; else cat >"$res/vm-$i.log"; fi
	echo "${PIPESTATUS[0]}" >"$res/vm-$i.status"
	tools/testing/ktap/vm-ktap "$res/vm-$i.log" "$res/vm-$i.status" >"$res/vm-$i.ktap"
}
t=$(stamp)
for ((i = 0; i < jobs; i++)); do
	[ -n "${group[i]}" ] || continue
	echo "# check-debug: guest $i runs${group[i]}"
	run_group "$i" &
done
wait
for ((i = 0; i < jobs; i++)); do
	[ -f "$res/vm-$i.log" ] && grep -aE '^(ok|not ok) |took' "$res/vm-$i.log" | sed "s/^/[$i] /"
done
took "VM suites on the debug kernel ($jobs guests)" "$t"

[ "${CHECK_DEBUG_INTEROP:-1}" = 0 ] && exec tools/testing/ktap/ktap-summary "$res"/*.ktap
t=$(stamp)
SOFTRC_VM_FLAVOR_A=debug SOFTRC_KO="$ko" INTEROP_TIMEOUT=${INTEROP_TIMEOUT:-3600} \
	SOFTRC_TIME_SCALE="${SOFTRC_TIME_SCALE:-10}" \
	selftests/vm/interop.sh 2>&1 |
	tee "$res/interop.ktap"
rc=${PIPESTATUS[0]}
[ "$rc" -eq 0 ] || echo "not ok 1 interop: step exited with status $rc" | tee -a "$res/interop.ktap"
took "interop (softrc on the $SOFTRC_KVER debug kernel, rxe on Debian's)" "$t"

tools/testing/ktap/ktap-summary "$res"/*.ktap

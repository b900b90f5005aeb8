#!/bin/bash
# tools/testing/harness/vm_harness.sh - self-tests of the QEMU VM harness.
#
# Runs on the host and prints KTAP on stdout; exits non-zero if any test
# fails.  Checks that tools/testing/vm/run.sh reports command status, fails on a
# kernel WARNING, a panic and a timeout even when the command "passed"
# (a panic while booting gets one more boot first),
# that the guest runs the SOFTRC_KVER kernel with its headers, sees the
# repo, cwd and env, can modprobe Debian modules and has the rdma tools,
# that boot is fast enough, and that pair mode links two guests.  VM
# console output goes to per-test logs; the tail of a failing test's log
# is printed as KTAP diagnostics.  About 90 s.
#
# Env: SOFTRC_VM_BOOT_MAX  boot-time limit in seconds on an idle host
#                         (default 10; times the load average per CPU)
#      SOFTRC_HARNESS_KEEP=1  keep the log directory
#      SOFTRC_KVER            the guest kernel series (6.1, the default, or
#                             6.12; tools/testing/vm/lib.sh), for every test
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(cd "$here/../../.." && pwd -P)
run=$repo/tools/testing/vm/run.sh
pair=$repo/tools/testing/vm/run-pair.sh
boot_max=${SOFTRC_VM_BOOT_MAX:-10}

logs=$(mktemp -d "${TMPDIR:-/tmp}/softrc-harness.XXXXXX")
cleanup() { [[ ${SOFTRC_HARNESS_KEEP:-0} == 1 ]] || rm -rf "$logs"; }
trap cleanup EXIT

n=0
pass=0
fail=0
result() { # $1 = 0 for ok, $2 = name, $3 = log to show on failure
	n=$((n + 1))
	if [[ $1 == 0 ]]; then
		pass=$((pass + 1))
		echo "ok $n $2"
	else
		fail=$((fail + 1))
		echo "not ok $n $2"
		[[ -n ${3:-} && -f $3 ]] && tail -n 15 "$3" | sed 's/^/# /'
	fi
}
# vm NAME ARGS... : run run.sh with ARGS, log to $logs/NAME.log, set $st.
vm() {
	local name=$1
	shift
	"$run" "$@" >"$logs/$name.log" 2>&1 </dev/null
	st=$?
	echo "# $name: run.sh status $st" >>"$logs/$name.log"
}

echo "TAP version 13"
echo "# guest kernel: ${SOFTRC_KVER:-6.1}"
echo "1..13"

# The first run may build the cache (download + initramfs); do it up front
# so that cost does not land in a timed test.
if ! "$repo/tools/testing/vm/setup.sh" >"$logs/setup.log" 2>&1; then
	echo "# setup.sh failed:"
	sed 's/^/# /' "$logs/setup.log" | tail -n 20
fi

# (a) a passing command passes
vm true true
result $((st != 0)) run_true_exits_0 "$logs/true.log"

# (b) a failing command fails, and its exact status comes back
vm false false
result $((st == 0)) run_false_fails "$logs/false.log"
vm exit7 'exit 7'
result $((st != 7)) run_exit_7_returns_7 "$logs/exit7.log"

# (c) a kernel WARNING fails the run although the command exits 0
vm warn 'echo "WARNING: injected" >/dev/kmsg; exit 0'
ok=1
[[ $st != 0 ]] && grep -q 'SOFTRC-VM-DMESG-BAD:.*WARNING: injected' "$logs/warn.log" && ok=0
result $ok klog_warning_fails_run "$logs/warn.log"

# (c') so do an RCU stall and a hung task (lines as the kernel prints them)
vm stall 'echo "rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:" >/dev/kmsg
	 echo "INFO: task kworker/0:1:42 blocked for more than 122 seconds." >/dev/kmsg; exit 0'
ok=1
[[ $st != 0 ]] && grep -q 'SOFTRC-VM-DMESG-BAD:.*detected stalls on CPUs' "$logs/stall.log" &&
	grep -q 'SOFTRC-VM-DMESG-BAD:.*blocked for more than 122 seconds' "$logs/stall.log" && ok=0
result $ok klog_stall_and_hung_task_fail_run "$logs/stall.log"

# (c') a kernel panic fails the run with the harness status
vm panic 'echo c >/proc/sysrq-trigger; sleep 30'
ok=1
[[ $st == 125 ]] && grep -q 'guest kernel panic' "$logs/panic.log" && ok=0
result $ok kernel_panic_fails_run "$logs/panic.log"

# (c'') a panic while booting, before the command, gets one more boot
# (rdinit=/nonexistent: no init and no root, so the kernel panics each
# time); the second panic fails the run as a panic
vm bootpanic --append "rdinit=/nonexistent" true
ok=1
[[ $st == 125 ]] && grep -q 'booting once more' "$logs/bootpanic.log" &&
	[[ $(grep -c '^\[ *[0-9.]*\] Kernel panic - not syncing' "$logs/bootpanic.log") == 2 ]] &&
	grep -q 'guest kernel panic' "$logs/bootpanic.log" && ok=0
result $ok boot_panic_boots_once_more "$logs/bootpanic.log"

# (d) a hung command hits the host-side timeout
t0=$SECONDS
vm timeout --timeout 20 sleep 1000
ok=1
[[ $st == 124 ]] && ((SECONDS - t0 < 60)) && ok=0
result $ok timeout_fails_run "$logs/timeout.log"

# (e) the guest sees the repo at the same path, the cwd and the env
cd "$repo/selftests" || exit 1
# shellcheck disable=SC2016 # expanded in the guest
SOFTRC_VM_ENV="HARNESS_A=1 HARNESS_B=two" vm env --env "HARNESS_C=with space" \
	'[ "$PWD" = "'"$repo"'/selftests" ] && [ -x ../tools/testing/vm/run.sh ] &&
	 [ "$HARNESS_A$HARNESS_B" = 1two ] && [ "$HARNESS_C" = "with space" ] &&
	 [ "$HOME" = /root ] && [ "$(id -u)" = 0 ] && ip -o link show lo | grep -q UP'
cd - >/dev/null || exit 1
result $((st != 0)) guest_sees_repo_cwd_env "$logs/env.log"

# (e'') the guest runs the asked-for kernel, whose headers its build link
# names (out-of-tree builds in the guest), and knows its series
series=${SOFTRC_KVER:-6.1}
# shellcheck disable=SC2016 # expanded in the guest
vm kernel --env WANT_REL="$("$repo/tools/setup/kernel.sh" "$series" release)" \
	--env WANT_KDIR="$("$repo/tools/setup/kernel.sh" "$series" kdir)" --env WANT_SERIES="$series" \
	'set -x; [ "$(uname -r)" = "$WANT_REL" ] && [ "$SOFTRC_KVER" = "$WANT_SERIES" ] &&
	 [ "$(readlink "/lib/modules/$WANT_REL/build")" = "$WANT_KDIR" ] &&
	 [ -f "/lib/modules/$WANT_REL/build/Makefile" ]'
result $((st != 0)) "guest_runs_${series}_with_its_headers" "$logs/kernel.log"

# (e') Debian's modules load and the rdma userspace is there
vm mods 'set -e; modprobe ib_core; grep -q "^ib_core " /proc/modules;
	 modprobe rdma_rxe; command -v rdma; command -v ibv_devices; rdma link show'
result $((st != 0)) guest_modprobe_ib_core_and_rdma_tools "$logs/mods.log"

# (f) boot-to-command time as printed by run.sh: the best of the single-VM
# runs above, so one run slowed by a busy host does not fail the check.
# The limit is for an idle host: it grows with the load average per CPU
# (two TCG guests on 2 cores each get half of them, at best).
boots=$(sed -n 's/.*boot to command: \([0-9.]*\) s.*/\1/p' "$logs"/*.log | sort -n)
boot=$(head -n1 <<<"$boots")
load=$(awk -v n="$(nproc)" '{ l = $1 / n; print (l > 1 ? int(l + 0.999) : 1) }' /proc/loadavg)
limit=$((boot_max * load))
echo "# boot to command: best ${boot:-?} s, all: $(tr "\n" " " <<<"$boots")(limit $limit s: load x$load)"
ok=1
[[ -n $boot ]] && awk -v b="$boot" -v m="$limit" 'BEGIN { exit !(b <= m) }' && ok=0
result $ok "boot_time_within_${boot_max}s" "$logs/true.log"

# (g) pair mode: the two guests ping each other
"$pair" --timeout 120 "$here/pair_ping.sh" "$here/pair_ping.sh" >"$logs/pair.log" 2>&1 </dev/null
st=$?
result $((st != 0)) pair_guests_ping_each_other "$logs/pair.log"

echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
((fail == 0))

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-profile: where a message's time goes, stage by stage, on
# softrc and on rdma_rxe (each in its own VM boot). The guest runs under
# BENCH_CLOCK=icount (one vCPU, 8 ns of guest time per instruction), so
# costs are guest instructions and do not depend on the host's speed;
# tools/bench/profile-guest.sh measures a message's cost without perf,
# then samples a second run with `perf record -g` and
# tools/bench/stages.py sorts the samples into stages by call chain.
# Prints one table per path and command: each stage's instructions per
# message and share, per driver. PROF_DRIVERS="softrc rxe",
# PROF_PATHS="wire loop", PROF_ONLY="msg_rate_64B_q8 write_bw_64k"
# (metrics of tools/bench/commands.sh), PROF_N=4 (iteration multiplier),
# PROF_HZ=500 (samples per second of guest time), PROF_SYMS=N lists
# each stage's N costliest functions. The raw guest output is in
# build/bench/profile.DRIVER.log.
# PROF_CLOCK=wall boots the same one-vCPU guest under plain TCG instead:
# costs are then ns of guest time, which is the host's wall time, so
# they move with the host's speed, but the shares say where TCG's time
# goes (a string copy or a table lookup costs more there than its
# instruction count says).
# Caveats: icount counts instructions, not cycles (a `rep stosb` counts
# once per byte, a pclmul as one), and perf's own sampling costs are
# left out of the shares, not out of the time.
set -u
cd "$(dirname "$0")/../.." || exit 1
# the guest runs the host's perf
tools/setup/deps.sh linux-perf || exit 1
out=build/bench
mkdir -p "$out"
: >"$out/stages.txt"
clock=${PROF_CLOCK:-icount}
case $clock in
icount) accel=icount unit="guest instructions" ;;
wall) accel= unit="ns of guest time (TCG wall clock)" ;;
*) echo "bench-profile: PROF_CLOCK must be icount or wall" >&2; exit 1 ;;
esac
for d in ${PROF_DRIVERS:-softrc rxe}; do
	echo "bench-profile: $d ..." >&2
	log=$out/profile.$d.log
	# BENCH_CLOCK=icount: commands.sh's one-vCPU forms of the commands
	SOFTRC_VM_ACCEL=$accel tools/testing/vm/run.sh --timeout "${PROF_TIMEOUT:-3600}" --smp 1 \
		--mem "${BENCH_MEM:-2048}" --env SOFTRC_DRIVER="$d" --env BENCH_CLOCK=icount \
		--env PROF_CLOCK="$clock" --env PROF_UNIT="$unit" \
		${PROF_PATHS:+--env PROF_PATHS="$PROF_PATHS"} \
		${PROF_ONLY:+--env PROF_ONLY="$PROF_ONLY"} \
		${PROF_N:+--env PROF_N="$PROF_N"} ${PROF_HZ:+--env PROF_HZ="$PROF_HZ"} \
		-- tools/bench/profile-guest.sh >"$log" 2>&1 ||
		echo "bench-profile: the $d run failed (status $?), see $log" >&2
	sed -n 's/^\(\(STAGE\|SYM\) .*[0-9]\)\r\{0,1\}$/\1/p' "$log" >>"$out/stages.txt"
done

python3 - "$out/stages.txt" "${PROF_SYMS:-0}" "$unit" <<'PY'
import sys
rows, drivers, keys, syms = {}, [], [], {}
nsyms = int(sys.argv[2])
unit = sys.argv[3]
for line in open(sys.argv[1]):
    if line.startswith("SYM "):
        _, d, path, metric, stage, sym, share = line.split()
        syms.setdefault((d, path, metric, stage), []).append((sym, float(share)))
        continue
    _, d, path, metric, stage, share, cost = line.split()
    if d not in drivers:
        drivers.append(d)
    if (path, metric) not in keys:
        keys.append((path, metric))
    rows.setdefault((path, metric), {}).setdefault(stage, {})[d] = (float(share), float(cost))
for path, metric in keys:
    t = rows[(path, metric)]
    print(f"\n{path} path, {metric}: {unit} per message (share of busy time)")
    print(f"  {'stage':<44}" + "".join(f" {d:>18}" for d in drivers))
    for stage, per in t.items():
        if stage == "samples":
            continue
        cells = "".join(f" {per[d][1]:>9.0f} ({per[d][0] * 100:4.1f}%)" if d in per
                        else f" {'-':>18}" for d in drivers)
        print(f"  {stage.replace('_', ' '):<44}{cells}")
        for d in drivers:
            top = syms.get((d, path, metric, stage), [])[:nsyms]
            if top:
                print(f"      {d}: " + ", ".join(f"{s} {v * 100:.1f}%" for s, v in top))
    tot = t.get("samples", {})
    print(f"  {'total (measured without perf)':<44}" +
          "".join(f" {tot[d][1]:>18.0f}" if d in tot else f" {'-':>18}" for d in drivers))
    print(f"  {'perf samples':<44}" +
          "".join(f" {tot[d][0]:>18.0f}" if d in tot else f" {'-':>18}" for d in drivers))
PY

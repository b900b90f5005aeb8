#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: the same perftest commands on softrc and on Linux rdma_rxe,
# each in its own VM boot of the same size (tools/testing/vm/run.sh, BENCH_SMP
# vCPUs, BENCH_MEM MB), on two paths (tools/bench/guest.sh): loopback (one
# device, client and server on it) and wire (softrc: two devices across a
# veth in two netns; rxe, which cannot use a netns in 6.1: the
# policy-routing topology of tools/vectors/capture.sh). Prints one table
# per path with softrc/rxe ratios. Bandwidths are MB/s, rates Mpps,
# latencies usec (t_typical and p99 at 2 B; for them a ratio below 1 is
# better). Then the cost curves (tools/bench/curves.py; BENCH_CURVES=0
# leaves them out), on BENCH_CURVE_PATHS (default wire), one run a point
# in each boot: bandwidth against message size (64 B to 1 MiB) for
# WRITE, READ and SEND, the 64 B message rate against QPs (1 to 256),
# latency at 4 KiB, the kernel memory of one QP (tools/bench/qpmem), as
# tables and as build/bench/{bandwidth,qps,latency}.{svg,png}.
# Under QEMU TCG consecutive runs of one command differ by up to a half,
# for either driver, so each number is the median of BENCH_RUNS runs
# (default 3) in each of BENCH_ROUNDS boots per driver (default 2), the
# drivers' boots alternating; every run is in build/bench/BOOT.ROUND.log
# and the table says how many runs each median has. BENCH_N multiplies
# the iteration counts; BENCH_DRIVERS="softrc rxe"; BENCH_ONLY="write_lat
# ..." and BENCH_PATHS="wire" run a subset.
# A/B of two softrc builds: BENCH_BASE_KO=path/to/other/softrc.ko adds a
# driver "softrc-base" (that module, same commands) and a
# softrc/softrc-base column: BENCH_DRIVERS defaults to all three then.
# The two builds share each boot, taking turns run by run (guest.sh
# BENCH_KOS): a ratio of two boots' medians moves by more than 10 % on
# TCG noise alone. The A/B column gives the ratio of the medians and a
# bootstrap 90 % interval of it.
# BENCH_CLOCK=icount: instead of wall time, one vCPU whose clock is its
# instruction count (tools/testing/vm/run.sh SOFTRC_VM_ACCEL=icount: 8 ns per
# guest instruction). Every number is then a cost in instructions,
# independent of the host's speed: repeated runs agree to about 1 %,
# where wall-time runs differ by a factor of two. It is the measure for
# an A/B of two builds; it has no write_lat row (see guest.sh), and it
# counts instructions, not cycles (a string copy once per repetition).
# SOFTRC_KVER=SERIES (make bench KVER=SERIES) boots that kernel series for
# both drivers, softrc from build/SERIES/mod (make KVER=SERIES) and that
# kernel's own rdma_rxe; its output goes to build/bench-SERIES (6.1's to
# build/bench).
set -u
cd "$(dirname "$0")/../.." || exit 1
base_ko=${BENCH_BASE_KO:+$(realpath "$BENCH_BASE_KO")}
if [ -n "$base_ko" ]; then
	[ -f "$base_ko" ] || { echo "bench: no module at $BENCH_BASE_KO" >&2; exit 1; }
	drivers=${BENCH_DRIVERS:-softrc softrc-base rxe}
else
	drivers=${BENCH_DRIVERS:-softrc rxe}
fi
series=${SOFTRC_KVER:-6.1}
if [ "$series" = 6.1 ]; then
	ko=drivers/infiniband/sw/softrc/softrc.ko out=build/bench
else
	ko=build/$series/mod/drivers/infiniband/sw/softrc/softrc.ko out=build/bench-$series
fi
[ -f "$ko" ] || { echo "bench: no $ko (make KVER=$series)" >&2; exit 1; }
ko=$(realpath "$ko")
clock=${BENCH_CLOCK:-wall} smp=${BENCH_SMP:-2} accel=${SOFTRC_VM_ACCEL:-}
case $clock in
wall) ;;
icount) smp=1 accel=icount ;;
*) echo "bench: BENCH_CLOCK must be wall or icount" >&2; exit 1 ;;
esac
mkdir -p "$out"
rm -f "$out"/*.log "$out"/*.txt

# the boots: softrc builds together in one, rxe in its own
boots=() kos=
for d in $drivers; do
	case $d in
	softrc) kos+=" softrc=$ko" ;;
	softrc-base) kos+=" softrc-base=$base_ko" ;;
	*) boots+=("$d") ;;
	esac
done
[ -n "$kos" ] && boots=(softrc "${boots[@]}")
: >"$out/runs.txt"
for ((round = 1; round <= ${BENCH_ROUNDS:-2}; round++)); do
	for boot in "${boots[@]}"; do
		echo "bench: $boot, boot $round ..." >&2
		log=$out/$boot.$round.log env=()
		[ "$boot" = softrc ] && env=(--env BENCH_KOS="${kos# }")
		SOFTRC_KVER=$series SOFTRC_VM_ACCEL=$accel tools/testing/vm/run.sh --timeout "${BENCH_TIMEOUT:-1200}" --smp "$smp" \
			--mem "${BENCH_MEM:-2048}" --env SOFTRC_DRIVER="$boot" "${env[@]}" \
			--env BENCH_CLOCK="$clock" \
			--env BENCH_N="${BENCH_N:-1}" --env BENCH_RUNS="${BENCH_RUNS:-3}" \
			--env BENCH_CURVES="${BENCH_CURVES:-1}" \
			--env BENCH_CURVE_PATHS="${BENCH_CURVE_PATHS:-wire}" \
			${BENCH_ONLY:+--env BENCH_ONLY="$BENCH_ONLY"} \
			${BENCH_PATHS:+--env BENCH_PATHS="$BENCH_PATHS"} \
			-- tools/bench/guest.sh >"$log" 2>&1 ||
			echo "bench: the $boot run failed (status $?), see $log" >&2
		sed -n 's/^BENCH \([a-z-]*\) \([a-z]*\) \([a-zA-Z0-9_]*\) \([0-9.a-z]*\)\r\{0,1\}$/\1 \2 \3 \4/p' \
			"$log" >>"$out/runs.txt"
	done
done

# shellcheck disable=SC2086 # one argument a driver
python3 - "$out" "$clock" $drivers <<'PY'
import random, statistics, sys
sys.path.insert(0, "tools/bench")
from curves import load_runs
out, clock, drivers = sys.argv[1], sys.argv[2], sys.argv[3:]
runs = load_runs(out)
res = {k: statistics.median(v) for k, v in runs.items()}
rng = random.Random(1)


def interval(a, b):
    """bootstrap 90 % interval of median(a) / median(b)"""
    if len(a) < 3 or len(b) < 3:
        return None
    r = sorted(statistics.median(rng.choices(a, k=len(a))) /
               statistics.median(rng.choices(b, k=len(b))) for _ in range(2000))
    return r[100], r[1899]
metrics = ["write_bw_64k", "write_bw_4k", "read_bw_64k", "read_bw_4k",
           "send_bw_64k", "send_bw_4k", "msg_rate_64B_q8", "atomic_rate",
           "write_lat", "send_lat", "read_lat",
           "write_lat_p99", "send_lat_p99", "read_lat_p99", "memcpy"]
# perftest prints rates in Mpps; under TCG they are a few thousand per s
units = {"msg_rate_64B_q8": "kpps", "atomic_rate": "kpps"}
units.update({m: "us" for m in metrics if "_lat" in m})
scale = {"kpps": 1000.0}
# columns: every driver's median, then each ratio against the last driver
# (rxe), then softrc/softrc-base when both are there
a = drivers[0]
ref = drivers[-1]
pairs = [(d, ref) for d in drivers[:-1]]
if "softrc" in drivers and "softrc-base" in drivers and ("softrc", "softrc-base") not in pairs:
    pairs.append(("softrc", "softrc-base"))
def spread(v):
    """(max - min) / median of a metric's runs, in per cent"""
    if len(v) < 2 or not statistics.median(v):
        return "-"
    return f"{100 * (max(v) - min(v)) / statistics.median(v):.0f}"
def cell(v, w=10):
    return f"{v:{w}.2f}" if v is not None else f"{'-':>{w}}"
ab = ("softrc", "softrc-base") if ("softrc", "softrc-base") in pairs else None
worse = []
for path in ("loop", "wire"):
    print(f"\n{path} path" + (" (one device)" if path == "loop" else " (two devices across a veth)"))
    head = "".join(f" {d:>11}" for d in drivers)
    head += "".join(f" {x + '/' + y:>{max(12, len(x) + len(y) + 2)}}" for x, y in pairs)
    if ab:
        head += f" {'90% interval':>13}"
    print(f"  {'metric':<18} {'unit':<5}{head} {'runs':>8} {'spread %':>13}")
    for m in metrics:
        k = scale.get(units.get(m), 1.0)
        vals = {d: res.get((d, path, m)) for d in drivers}
        if all(v is None for v in vals.values()):
            continue
        row = "".join(" " + cell(None if vals[d] is None else vals[d] * k, 11) for d in drivers)
        for x, y in pairs:
            w = max(12, len(x) + len(y) + 2)
            r = vals[x] / vals[y] if vals[x] is not None and vals[y] else None
            row += " " + cell(r, w)
        if ab:
            ci = interval(runs.get((ab[0], path, m), []), runs.get((ab[1], path, m), []))
            row += f" {f'{ci[0]:.2f}-{ci[1]:.2f}' if ci else '-':>13}"
            r = vals[ab[0]] / vals[ab[1]] if vals[ab[0]] and vals[ab[1]] else None
            if r is not None and (r > 1.1 if units.get(m) == "us" else r < 0.9):
                worse.append(f"{path} {m} {r:.2f}")
        n = "/".join(str(len(runs.get((d, path, m), []))) for d in drivers)
        sp = "/".join(spread(runs.get((d, path, m), [])) for d in drivers)
        print(f"  {m:<18} {units.get(m, 'MB/s'):<5}{row} {n:>8} {sp:>13}")
    share = []
    for d in drivers:
        mc = res.get((d, path, "memcpy"))
        if mc:
            share.append(f"{d} " + ", ".join(
                f"{op} {100 * res[(d, path, op + '_bw_64k')] / mc:.0f} %"
                for op in ("write", "read", "send") if (d, path, op + "_bw_64k") in res))
    if share:
        print("  64 KiB bandwidth as a share of memcpy in the same boots: " + "; ".join(share))
print("\n(latency: lower is better, so a ratio below 1 favours the first driver;")
print(" each number is the median of the runs counted in the runs column;")
print(" spread is (max - min) / median of those runs, per driver; memcpy is")
print(" tools/bench/memcpy on one vCPU of each boot)")
if clock == "icount":
    print("(icount: one vCPU, guest time 8 ns per instruction executed: these are")
    print(" instruction costs, not speeds; SEND tests wait by events)")
if ab:
    print("softrc more than 10 % worse than softrc-base: " + (", ".join(worse) or "none"))
PY
# the cost curves: tables, and plots under build/bench/ (gnuplot)
if [ "${BENCH_CURVES:-1}" != 0 ]; then
	# shellcheck disable=SC2086 # one argument a driver
	python3 tools/bench/curves.py "$out" $drivers
fi

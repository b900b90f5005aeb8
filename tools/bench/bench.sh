#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: the same perftest commands on softrc and on Linux rdma_rxe,
# each in its own VM boot of the same size (tools/vm/run.sh, BENCH_SMP
# vCPUs, BENCH_MEM MB), on two paths (tools/bench/guest.sh): loopback (one
# device, client and server on it) and wire (softrc: two devices across a
# veth in two netns; rxe, which cannot use a netns in 6.1: the
# policy-routing topology of tools/vectors/capture.sh). Prints one table
# per path with softrc/rxe ratios. Bandwidths are MB/s, rates Mpps,
# latencies usec (t_typical; for them a ratio below 1 is better).
# Under QEMU TCG consecutive runs of one command differ by up to a half,
# for either driver, so each number is the median of BENCH_RUNS runs
# (default 3) in each of BENCH_ROUNDS boots per driver (default 2), the
# drivers' boots alternating; every run is in build/bench/DRIVER.ROUND.log
# and the table says how many runs each median has. BENCH_N multiplies
# the iteration counts; BENCH_DRIVERS="softrc rxe".
set -u
cd "$(dirname "$0")/../.." || exit 1
drivers=${BENCH_DRIVERS:-softrc rxe}
out=build/bench
mkdir -p "$out"

for d in $drivers; do
	: >"$out/$d.txt"
done
for ((round = 1; round <= ${BENCH_ROUNDS:-2}; round++)); do
	for d in $drivers; do
		echo "bench: $d, boot $round ..." >&2
		log=$out/$d.$round.log
		tools/vm/run.sh --timeout "${BENCH_TIMEOUT:-900}" --smp "${BENCH_SMP:-2}" \
			--mem "${BENCH_MEM:-2048}" --env SOFTRC_DRIVER="$d" \
			--env BENCH_N="${BENCH_N:-1}" --env BENCH_RUNS="${BENCH_RUNS:-3}" \
			-- tools/bench/guest.sh >"$log" 2>&1 ||
			echo "bench: the $d run failed (status $?), see $log" >&2
		sed -n 's/^BENCH \([a-z]*\) \([a-zA-Z0-9_]*\) \([0-9.a-z]*\)\r\{0,1\}$/\1 \2 \3/p' "$log" >>"$out/$d.txt"
	done
done

python3 - "$out" $drivers <<'PY'
import statistics, sys
out, drivers = sys.argv[1], sys.argv[2:]
runs = {}
for d in drivers:
    for line in open(f"{out}/{d}.txt"):
        path, metric, val = line.split()
        try:
            v = float(val)
        except ValueError:
            continue
        if v == v:
            runs.setdefault((d, path, metric), []).append(v)
res = {k: statistics.median(v) for k, v in runs.items()}
metrics = ["write_bw_64k", "write_bw_4k", "read_bw_64k", "read_bw_4k",
           "send_bw_64k", "send_bw_4k", "msg_rate_64B_q8", "atomic_rate",
           "write_lat", "send_lat", "read_lat"]
# perftest prints rates in Mpps; under TCG they are a few thousand per s
units = {"msg_rate_64B_q8": "kpps", "atomic_rate": "kpps", "write_lat": "us",
         "send_lat": "us", "read_lat": "us"}
scale = {"kpps": 1000.0}
a, b = (drivers + ["rxe"])[:2] if len(drivers) < 2 else drivers[:2]
for path in ("loop", "wire"):
    print(f"\n{path} path" + (" (one device)" if path == "loop" else " (two devices across a veth)"))
    print(f"  {'metric':<18} {'unit':<5} {a:>10} {b:>10} {a + '/' + b:>12} {'runs':>6}")
    for m in metrics:
        k = scale.get(units.get(m), 1.0)
        va, vb = res.get((a, path, m)), res.get((b, path, m))
        fa = f"{va * k:10.2f}" if va is not None else f"{'-':>10}"
        fb = f"{vb * k:10.2f}" if vb is not None else f"{'-':>10}"
        r = f"{va / vb:12.2f}" if va is not None and vb else f"{'-':>12}"
        n = f"{len(runs.get((a, path, m), []))}/{len(runs.get((b, path, m), []))}"
        print(f"  {m:<18} {units.get(m, 'MB/s'):<5} {fa} {fb} {r} {n:>6}")
print("\n(latency: lower is better, so a ratio below 1 favours " + a + ";")
print(" each number is the median of the runs counted in the last column)")
for d in (a, b):
    v = runs.get((d, "wire", "write_bw_64k"), [])
    print(f"wire write_bw_64k runs, {d}: " + " ".join(f"{x:.1f}" for x in v))
PY

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: the same perftest commands on softrc and on Linux rdma_rxe,
# each in its own VM boot of the same size (tools/vm/run.sh, BENCH_SMP
# vCPUs, BENCH_MEM MB), on two paths (tools/bench/guest.sh): loopback (one
# device, client and server on it) and wire (softrc: two devices across a
# veth in two netns; rxe, which cannot use a netns in 6.1: the
# policy-routing topology of shared/vectors/README.md). Prints one table
# per path with softrc/rxe ratios. Bandwidths are MB/s, rates Mpps,
# latencies usec (t_typical; for them a ratio below 1 is better).
# Each number is the median of BENCH_RUNS runs (default 3; all runs are
# in build/bench/DRIVER.log). BENCH_N multiplies the iteration counts;
# BENCH_DRIVERS="softrc rxe".
set -u
cd "$(dirname "$0")/../.." || exit 1
drivers=${BENCH_DRIVERS:-softrc rxe}
out=build/bench
mkdir -p "$out"

for d in $drivers; do
	echo "bench: $d ..." >&2
	tools/vm/run.sh --timeout "${BENCH_TIMEOUT:-900}" --smp "${BENCH_SMP:-2}" \
		--mem "${BENCH_MEM:-2048}" --env SOFTRC_DRIVER="$d" \
		--env BENCH_N="${BENCH_N:-1}" --env BENCH_RUNS="${BENCH_RUNS:-3}" \
		-- tools/bench/guest.sh >"$out/$d.log" 2>&1 ||
		echo "bench: the $d run failed (status $?), see $out/$d.log" >&2
	sed -n 's/^BENCH \([a-z]*\) \([a-zA-Z0-9_]*\) \([0-9.a-z]*\)\r\{0,1\}$/\1 \2 \3/p' "$out/$d.log" >"$out/$d.txt"
done

python3 - "$out" $drivers <<'PY'
import sys
out, drivers = sys.argv[1], sys.argv[2:]
res = {}
for d in drivers:
    for line in open(f"{out}/{d}.txt"):
        path, metric, val = line.split()
        try:
            res[(d, path, metric)] = float(val)
        except ValueError:
            pass
metrics = ["write_bw_64k", "write_bw_4k", "read_bw_64k", "read_bw_4k",
           "send_bw_64k", "send_bw_4k", "msg_rate_64B_q8", "atomic_rate",
           "write_lat", "send_lat", "read_lat"]
units = {"msg_rate_64B_q8": "Mpps", "atomic_rate": "Mpps", "write_lat": "us",
         "send_lat": "us", "read_lat": "us"}
a, b = (drivers + ["rxe"])[:2] if len(drivers) < 2 else drivers[:2]
for path in ("loop", "wire"):
    print(f"\n{path} path" + (" (one device)" if path == "loop" else " (two devices across a veth)"))
    print(f"  {'metric':<18} {'unit':<5} {a:>10} {b:>10} {a + '/' + b:>12}")
    for m in metrics:
        va, vb = res.get((a, path, m)), res.get((b, path, m))
        fa = f"{va:10.2f}" if va is not None else f"{'-':>10}"
        fb = f"{vb:10.2f}" if vb is not None else f"{'-':>10}"
        r = f"{va / vb:12.2f}" if va is not None and vb else f"{'-':>12}"
        print(f"  {m:<18} {units.get(m, 'MB/s'):<5} {fa} {fb} {r}")
print("\n(latency: lower is better, so a ratio below 1 favours " + a + ")")
PY

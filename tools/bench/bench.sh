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
# A/B of two softrc builds: BENCH_BASE_KO=path/to/other/softrc.ko adds a
# driver "softrc-base" (that module, same guest, same commands) and a
# softrc/softrc-base column: BENCH_DRIVERS defaults to all three then.
set -u
cd "$(dirname "$0")/../.." || exit 1
base_ko=${BENCH_BASE_KO:+$(realpath "$BENCH_BASE_KO")}
if [ -n "$base_ko" ]; then
	[ -f "$base_ko" ] || { echo "bench: no module at $BENCH_BASE_KO" >&2; exit 1; }
	drivers=${BENCH_DRIVERS:-softrc softrc-base rxe}
else
	drivers=${BENCH_DRIVERS:-softrc rxe}
fi
out=build/bench
mkdir -p "$out"

for d in $drivers; do
	: >"$out/$d.txt"
done
for ((round = 1; round <= ${BENCH_ROUNDS:-2}; round++)); do
	for d in $drivers; do
		echo "bench: $d, boot $round ..." >&2
		log=$out/$d.$round.log
		drv=$d ko=()
		if [ "$d" = softrc-base ]; then
			drv=softrc ko=(--env SOFTRC_KO="$base_ko")
		fi
		tools/vm/run.sh --timeout "${BENCH_TIMEOUT:-900}" --smp "${BENCH_SMP:-2}" \
			--mem "${BENCH_MEM:-2048}" --env SOFTRC_DRIVER="$drv" "${ko[@]}" \
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
# columns: every driver's median, then each ratio against the last driver
# (rxe), then softrc/softrc-base when both are there
a = drivers[0]
ref = drivers[-1]
pairs = [(d, ref) for d in drivers[:-1]]
if "softrc" in drivers and "softrc-base" in drivers:
    pairs.append(("softrc", "softrc-base"))
def cell(v, w=10):
    return f"{v:{w}.2f}" if v is not None else f"{'-':>{w}}"
for path in ("loop", "wire"):
    print(f"\n{path} path" + (" (one device)" if path == "loop" else " (two devices across a veth)"))
    head = "".join(f" {d:>11}" for d in drivers)
    head += "".join(f" {x + '/' + y:>{max(12, len(x) + len(y) + 2)}}" for x, y in pairs)
    print(f"  {'metric':<18} {'unit':<5}{head} {'runs':>8}")
    for m in metrics:
        k = scale.get(units.get(m), 1.0)
        vals = {d: res.get((d, path, m)) for d in drivers}
        row = "".join(" " + cell(None if vals[d] is None else vals[d] * k, 11) for d in drivers)
        for x, y in pairs:
            w = max(12, len(x) + len(y) + 2)
            r = vals[x] / vals[y] if vals[x] is not None and vals[y] else None
            row += " " + cell(r, w)
        n = "/".join(str(len(runs.get((d, path, m), []))) for d in drivers)
        print(f"  {m:<18} {units.get(m, 'MB/s'):<5}{row} {n:>8}")
print("\n(latency: lower is better, so a ratio below 1 favours the first driver;")
print(" each number is the median of the runs counted in the last column)")
for d in drivers:
    v = runs.get((d, "wire", "write_bw_64k"), [])
    print(f"wire write_bw_64k runs, {d}: " + " ".join(f"{x:.1f}" for x in v))
PY

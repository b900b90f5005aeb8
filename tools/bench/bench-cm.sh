#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench-cm: rdma_cm connection setup and teardown at scale, softrc
# against Linux rdma_rxe, each in its own VM boot of the same size and
# kernel (tools/testing/vm/run.sh, BENCH_SMP vCPUs, BENCH_MEM MB; never
# both modules in one kernel). In each boot tools/bench/cmscale.sh opens
# N concurrent connections with `ucmatose -c N` between two devices across
# a veth, moves messages on each, and tears them all down, for N in
# CMSCALE_NS (default "64 256 1024"), each CMSCALE_RUNS times (default
# 3). Prints a table of the medians of the connect and the teardown time
# per connection (ms) for each driver and the
# softrc/rxe ratio (lower is better: the target is softrc <= rxe), and
# cmtime's step breakdown (create qp, connect, disconnect, destroy) for
# each. Every boot's log is in OUT/cm.DRIVER.log, OUT build/bench/cm
# (a directory of its own: make bench clears build/bench/*.log).
# BENCH_CM_DRIVERS="softrc rxe"; CMSCALE_PERF=N adds a perf profile of
# ucmatose -c N in each boot (kernel symbols by samples), CMSCALE_GRAPH=N
# a function_graph one of the driver's create/modify/destroy_qp (wall
# time of each callee, sleeps included); both printed after the table.
# SOFTRC_KVER=SERIES boots that kernel series for both drivers; output in
# build/bench/cm (6.1) or build/bench-SERIES/cm.
set -u
cd "$(dirname "$0")/../.." || exit 1
series=${SOFTRC_KVER:-6.1}
if [ "$series" = 6.1 ]; then
	ko=drivers/infiniband/sw/softrc/softrc.ko out=build/bench/cm
else
	ko=build/$series/mod/drivers/infiniband/sw/softrc/softrc.ko out=build/bench-$series/cm
fi
[ -f "$ko" ] || { echo "bench-cm: no $ko (make KVER=$series)" >&2; exit 1; }
ko=$(realpath "$ko")
drivers=${BENCH_CM_DRIVERS:-softrc rxe}
ns=${CMSCALE_NS:-64 256 1024}
mkdir -p "$out"
: >"$out/cm.txt"
for d in $drivers; do
	log=$out/cm.$d.log
	echo "bench-cm: $d ..." >&2
	start=$(date +%s)
	SOFTRC_KVER=$series tools/testing/vm/run.sh --timeout "${BENCH_CM_TIMEOUT:-2400}" \
		--smp "${BENCH_SMP:-2}" --mem "${BENCH_MEM:-3072}" \
		--env SOFTRC_DRIVER="$d" --env SOFTRC_KO="$ko" --env CMSCALE_NS="$ns" \
		${CMSCALE_MSGS:+--env CMSCALE_MSGS="$CMSCALE_MSGS"} \
		${CMSCALE_RUNS:+--env CMSCALE_RUNS="$CMSCALE_RUNS"} \
		${CMSCALE_CMTIME:+--env CMSCALE_CMTIME="$CMSCALE_CMTIME"} \
		${CMSCALE_PERF:+--env CMSCALE_PERF="$CMSCALE_PERF"} \
		${CMSCALE_GRAPH:+--env CMSCALE_GRAPH="$CMSCALE_GRAPH"} \
		-- tools/bench/cmscale.sh >"$log" 2>&1 ||
		echo "bench-cm: the $d run failed (status $?), see $log" >&2
	echo "bench-cm: $d took $(($(date +%s) - start)) s" >&2
	tr -d '\r' <"$log" | sed -n "s/^\(cm_conns_[0-9]* .*\)/$d \1/p" >>"$out/cm.txt"
done

# shellcheck disable=SC2086 # one argument a driver
python3 - "$out" $drivers <<'PY'
import math, sys
out, drivers = sys.argv[1], sys.argv[2:]
res = {}
for line in open(f"{out}/cm.txt"):
    d, key, conn, disc, status = line.split()
    n = int(key.split("_")[-1])
    res[(d, n)] = (float(conn), float(disc), status)
ns = sorted({n for _, n in res})
a, b = drivers[0], drivers[-1]


def cell(v, w):
    return f"{v:{w}.2f}" if v is not None and not math.isnan(v) else f"{'-':>{w}}"


def ratio(x, y):
    return x / y if x is not None and y and not math.isnan(x) and not math.isnan(y) else None


for i, phase in ((0, "connect"), (1, "teardown (disconnect + destroy)")):
    print(f"\nrdma_cm {phase}, ms per connection (wire path; lower is better)")
    head = "".join(f" {d:>10}" for d in drivers)
    if len(drivers) > 1:
        head += f" {a + '/' + b:>11}"
    print(f"  {'N':>6}{head}  status")
    for n in ns:
        v = {d: res[(d, n)][i] if (d, n) in res else None for d in drivers}
        row = "".join(" " + cell(v[d], 10) for d in drivers)
        if len(drivers) > 1:
            row += " " + cell(ratio(v[a], v[b]), 11)
        st = " ".join(f"{d} {res[(d, n)][2] if (d, n) in res else 'missing'}" for d in drivers)
        print(f"  {n:>6}{row}  {st}")
PY
for d in $drivers; do
	echo
	echo "$d: phases and cmtime steps (us / conn is cmtime's last column)"
	tr -d '\r' <"$out/cm.$d.log" | grep -E '^# (cm_runs|cm_stats|cm_phases|cm_res|cmtime|perf|perf_comm|graph)_' | sed 's/^# /  /'
done

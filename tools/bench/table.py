#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench's tables: one per path, every driver's median of each
metric and the ratios of the medians; then the NVMe-oF table
(tools/bench/nvme.sh: fio IOPS by direction, I/O queues and depth per
queue), when there are NVMe-oF runs.

    table.py OUT CLOCK DRIVER...

Reads OUT/runs.txt (tools/bench/guest.sh's "driver path metric value"
lines, collected by tools/bench/bench.sh; curves.load_results). CLOCK is
wall or icount. Ratios are against the last DRIVER (rxe), and
softrc/softrc-base when both are there, with a bootstrap 90 % interval.

A failed run (tools/bench/guest.sh: failed twice, or an impossible
value) is in no median: the runs column counts each driver's good runs,
the failed column its failed ones, and a metric with failures is listed
under the tables. A driver whose every run of a metric failed shows
FAILED, and so do the ratios with it.

ACKs/msg: the responders' ACKs per message in the WRITE and SEND
bandwidth and rate rows (median over the runs), softrc's acks_sent and
rxe's responder sent_pkts (guest.sh acks_now); "-" where there is no
such count (READ and ATOMIC rows, rxe on the loop path). probes/msg,
softrc's AckReq probes per message, where the module counts them.
"""
import os
import random
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from curves import FAILED, load_results  # noqa: E402

METRICS = ["write_bw_64k", "write_bw_4k", "read_bw_64k", "read_bw_4k",
           "send_bw_64k", "send_bw_4k", "msg_rate_64B_q8", "atomic_rate",
           "write_lat", "send_lat", "read_lat",
           "write_lat_p99", "send_lat_p99", "read_lat_p99", "memcpy"]
# perftest prints rates in Mpps; under TCG they are a few thousand per s
UNITS = {"msg_rate_64B_q8": "kpps", "atomic_rate": "kpps"}
UNITS.update({m: "us" for m in METRICS if "_lat" in m})
SCALE = {"kpps": 1000.0}
COUNTS = f"{'runs':>8} {'failed':>8} {'spread %':>13}"
# the NVMe-oF table (tools/bench/nvme.sh): fio 4 KiB random reads and
# writes, I/O queues and queue depth (per queue)
NVME_QUEUES = (2, 8)
NVME = [(f"nvme_{rw}_q{q}_qd{d}", f"rand{rw}", q, d)
        for rw in ("read", "write") for q in NVME_QUEUES for d in (1, 16, 128)]


def main():
    out, clock, drivers = sys.argv[1], sys.argv[2], sys.argv[3:]
    results = load_results(out)
    runs = {k: r["runs"] for k, r in results.items() if r["runs"]}
    res = {k: statistics.median(v) for k, v in runs.items()}
    for k, r in results.items():
        if r["failed"] and not r["runs"]:
            res[k] = FAILED
    rng = random.Random(1)

    def interval(a, b):
        """bootstrap 90 % interval of median(a) / median(b)"""
        if len(a) < 3 or len(b) < 3:
            return None
        r = sorted(statistics.median(rng.choices(a, k=len(a))) /
                   statistics.median(rng.choices(b, k=len(b))) for _ in range(2000))
        return r[100], r[1899]

    # columns: every driver's median, then each ratio against the last
    # driver (rxe), then softrc/softrc-base when both are there
    ref = drivers[-1]
    pairs = [(d, ref) for d in drivers[:-1]]
    if "softrc" in drivers and "softrc-base" in drivers and ("softrc", "softrc-base") not in pairs:
        pairs.append(("softrc", "softrc-base"))

    def spread(v):
        """(max - min) / median of a metric's runs, in per cent"""
        if len(v) < 2 or not statistics.median(v):
            return "-"
        return f"{100 * (max(v) - min(v)) / statistics.median(v):.0f}"

    def cell(v, w=10, digits=2):
        if isinstance(v, str):
            return f"{v:>{w}}"
        return f"{v:{w}.{digits}f}" if v is not None else f"{'-':>{w}}"

    def per_msg(path, m, kind):
        v = [res.get((d, path, f"{m}_{kind}")) for d in drivers]
        return "/".join(f"{x:.3f}" if isinstance(x, float) else "-" for x in v)

    ab = ("softrc", "softrc-base") if ("softrc", "softrc-base") in pairs else None
    worse = []

    def heads():
        """the heads of medians' cells"""
        h = "".join(f" {d:>11}" for d in drivers)
        h += "".join(f" {x + '/' + y:>{max(12, len(x) + len(y) + 2)}}" for x, y in pairs)
        return h + (f" {'90% interval':>13}" if ab else "")

    def medians(path, m, vals, digits=2):
        """a row's cells: each driver's median (vals, with DIGITS decimals),
        the ratios, the A/B interval"""
        row = "".join(" " + cell(vals[d], 11, digits) for d in drivers)
        for x, y in pairs:
            w = max(12, len(x) + len(y) + 2)
            if FAILED in (vals[x], vals[y]):
                r = FAILED
            else:
                r = vals[x] / vals[y] if vals[x] is not None and vals[y] else None
            row += " " + cell(r, w)
        if ab:
            ci = interval(runs.get((ab[0], path, m), []), runs.get((ab[1], path, m), []))
            row += f" {f'{ci[0]:.2f}-{ci[1]:.2f}' if ci else '-':>13}"
            x, y = vals[ab[0]], vals[ab[1]]
            r = x / y if isinstance(x, float) and isinstance(y, float) and y else None
            if r is not None and (r > 1.1 if UNITS.get(m) == "us" else r < 0.9):
                worse.append(f"{path} {m} {r:.2f}")
        return row

    def counts(path, m):
        """a row's last cells: good and failed runs, spread, per driver"""
        n = "/".join(str(len(runs.get((d, path, m), []))) for d in drivers)
        nf = "/".join(str(results.get((d, path, m), {}).get("failed", 0)) for d in drivers)
        sp = "/".join(spread(runs.get((d, path, m), [])) for d in drivers)
        return f"{n:>8} {nf:>8} {sp:>13}"

    failures = []
    for path in ("loop", "wire"):
        if not any(k[1] == path and k[2] in METRICS for k in res):
            continue
        print(f"\n{path} path" + (" (one device)" if path == "loop" else " (two devices across a veth)"))
        probes = any(k[1] == path and k[2].endswith("_probepm") for k in res)
        dw = max(9, 6 * len(drivers) - 1)
        head = heads() + f" {'ACKs/msg':>{dw}}" + (f" {'probes/msg':>{max(10, dw)}}" if probes else "")
        print(f"  {'metric':<18} {'unit':<5}{head} {COUNTS}")
        for m in METRICS:
            k = SCALE.get(UNITS.get(m), 1.0)
            vals = {d: res.get((d, path, m)) for d in drivers}
            if all(v is None for v in vals.values()):
                continue
            vals = {d: v * k if isinstance(v, float) else v for d, v in vals.items()}
            row = medians(path, m, vals)
            row += f" {per_msg(path, m, 'ackpm'):>{dw}}"
            if probes:
                row += f" {per_msg(path, m, 'probepm'):>{max(10, dw)}}"
            print(f"  {m:<18} {UNITS.get(m, 'MB/s'):<5}{row} {counts(path, m)}")
        share = []
        for d in drivers:
            mc = res.get((d, path, "memcpy"))
            if not isinstance(mc, float):
                continue
            bw = [(op, res.get((d, path, op + "_bw_64k"))) for op in ("write", "read", "send")]
            bw = [f"{op} {100 * v / mc:.0f} %" for op, v in bw if isinstance(v, float)]
            if bw:
                share.append(f"{d} " + ", ".join(bw))
        if share:
            print("  64 KiB bandwidth as a share of memcpy in the same boots: " + "; ".join(share))
    if any(k[1] == "wire" and k[2] == m for k in res for m, _, _, _ in NVME):
        print("\nNVMe-oF, wire path (nvme-rdma host, nvmet-rdma target, null_blk; fio 4 KiB")
        print("random, libaio, direct; depth per I/O queue, one job a queue)")
        print(f"  {'fio':<9} {'queues':>6} {'depth':>5} {'unit':<5}{heads()} {COUNTS}")
        for m, rw, q, d in NVME:
            vals = {x: res.get((x, "wire", m)) for x in drivers}
            if all(v is None for v in vals.values()):
                continue
            print(f"  {rw:<9} {q:>6} {d:>5} {'IOPS':<5}{medians('wire', m, vals, 0)} {counts('wire', m)}")
        got = []
        for q in NVME_QUEUES:
            for x in drivers:
                v = res.get((x, "wire", f"nvme_q{q}_ioq"))
                if isinstance(v, float) and v != q:
                    got.append(f"{x} {v:.0f} for {q}")
        if got:
            print("  fewer I/O queues than asked (nvme-rdma makes one a CPU at most:")
            print("  BENCH_NVME_SMP): " + ", ".join(got))
    for (d, path, m), r in sorted(results.items()):
        if r["failed"] or r["retried"]:
            n = len(r["runs"]) + r["failed"]
            failures.append(f"  {d} {path} {m}: {n} run{'s' if n != 1 else ''}, {r['failed']} failed" +
                            (f", {r['retried']} passed on a retry" if r["retried"] else ""))
    print("\n(latency: lower is better, so a ratio below 1 favours the first driver;")
    print(" each number is the median of the good runs counted in the runs column;")
    print(" a failed run is in no median; spread is (max - min) / median of those")
    print(" runs, per driver; ACKs/msg: the responders' ACKs per message, per")
    print(" driver, for WRITE and SEND; memcpy is tools/bench/memcpy on one vCPU")
    print(" of each boot)")
    if failures:
        print("runs that failed (their output: '# FAILED' in " +
              os.path.join(out, "BOOT.ROUND.log") + "):")
        print("\n".join(failures))
    if clock == "icount":
        print("(icount: one vCPU, guest time 8 ns per instruction executed: these are")
        print(" instruction costs, not speeds; SEND tests wait by events)")
    if ab:
        print("softrc more than 10 % worse than softrc-base: " + (", ".join(worse) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

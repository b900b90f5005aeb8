#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""make bench's cost curves: tables on stdout, plots under OUT/.

    curves.py OUT DRIVER...

Reads OUT/runs.txt ("driver path metric value" lines from
tools/bench/guest.sh) and, for the paths the curves ran on, prints
  - bandwidth (MB/s) against message size, WRITE/READ/SEND
  - the 64 B message rate (kpps) against the number of QPs, and the rate
    at each count against the rate at 8 QPs
  - the kernel memory of one RC QP (KiB, tools/bench/qpmem.c) against
    the number of QPs, which stays flat where memory grows linearly
  - latency, typical and p99 (usec), at 2 B and 4 KiB
each number the median of that driver's good runs (FAILED where every
run of it failed: load_results), with the ratio of the first driver to
the last (softrc/rxe). It writes the data and a gnuplot
script into OUT/curves/ and, when gnuplot is installed, renders
OUT/bandwidth.svg, OUT/qps.svg, OUT/qpmem.svg, OUT/latency.svg (and
.png of each).
"""
import os
import shutil
import statistics
import subprocess
import sys

SIZES = [64, 256, 1024, 4096, 16384, 65536, 262144, 1048576]
OPS = ["write", "read", "send"]
QPS = [1, 8, 64, 256, 1024, 4096]  # commands.sh BENCH_QPS
LATS = [(op, sz, key) for op in ["write", "send", "read"]
        for sz, key in [("2B", f"{op}_lat"), ("4KiB", f"{op}_lat_4k")]]


def size_name(s):
    return f"{s >> 20}M" if s >= 1 << 20 else f"{s >> 10}K" if s >= 1024 else f"{s}"


FAILED = "FAILED"


def rate_like(metric):
    """an ACK or probe count per message, where 0 is a real result"""
    return metric.endswith("_ackpm") or metric.endswith("_probepm")


def load_results(out):
    """{(driver, path, metric): {"runs": [values], "failed": n, "retried": n}}
    from OUT/runs.txt. tools/bench/guest.sh writes "failed" for a run that
    failed twice (its output is in the boot's log, "# FAILED") and
    "retried" for one that passed only on its second try. A value that is
    not a positive finite number (nan, inf, 0: older runs.txt files hold
    perftest's 0 of a run whose clock measurement failed, see
    tools/bench/result.sh) is a failed run too: never a median's value,
    always counted. ACKs and probes per message may be 0."""
    res = {}
    with open(os.path.join(out, "runs.txt")) as f:
        for line in f:
            try:
                d, path, metric, val = line.split()
            except ValueError:
                continue
            r = res.setdefault((d, path, metric), {"runs": [], "failed": 0, "retried": 0})
            if val == "retried":
                r["retried"] += 1
                continue
            try:
                v = float(val)
            except ValueError:
                v = float("nan")
            if v == v and v < float("inf") and (v > 0 or (v == 0 and rate_like(metric))):
                r["runs"].append(v)
            else:
                r["failed"] += 1
    return res


def load_runs(out):
    """{(driver, path, metric): [values]} of the good runs (load_results)"""
    return {k: r["runs"] for k, r in load_results(out).items() if r["runs"]}


def load(out):
    """{(driver, path, metric): median}, or FAILED where every run failed"""
    return {k: statistics.median(r["runs"]) if r["runs"] else FAILED
            for k, r in load_results(out).items() if r["runs"] or r["failed"]}


def fmt(v, w=9, p=2):
    if isinstance(v, str):
        return f"{v:>{w}}"
    return f"{v:{w}.{p}f}" if v is not None else f"{'-':>{w}}"


def ratio(a, b):
    if FAILED in (a, b):
        return FAILED
    return a / b if a is not None and b else None


def getter(res, path):
    """get(driver, metric, scale): the median scaled, None, or FAILED"""
    def get(d, m, k=1.0):
        v = res.get((d, path, m))
        return v * k if isinstance(v, float) else v
    return get


def tables(res, path, drivers):
    first, last = drivers[0], drivers[-1]
    rname = f"{first}/{last}"
    get = getter(res, path)

    print(f"\ncost curves, {path} path: bandwidth (MB/s) against message size")
    head = "".join(f" {op + ' ' + d:>13}" for op in OPS for d in drivers)
    head += "".join(f" {op + ' ' + rname:>14}" for op in OPS) if len(drivers) > 1 else ""
    print(f"  {'size':>6}{head}")
    for s in SIZES:
        row = "".join(" " + fmt(get(d, f"curve_{op}_bw_{s}"), 13) for op in OPS for d in drivers)
        if len(drivers) > 1:
            row += "".join(" " + fmt(ratio(get(first, f"curve_{op}_bw_{s}"),
                                           get(last, f"curve_{op}_bw_{s}")), 14) for op in OPS)
        print(f"  {size_name(s):>6}{row}")

    print(f"\ncost curves, {path} path: 64 B WRITE message rate (kpps) and kernel"
          " memory of one QP (KiB) against QPs; 'of 8 QPs' is the rate over the rate at 8")
    print(f"  {'QPs':>6}" + "".join(f" {d:>11}" for d in drivers) +
          (f" {rname:>11}" if len(drivers) > 1 else "") +
          "".join(f" {d + ' of 8':>13}" for d in drivers) +
          "".join(f" {d + ' KiB':>11}" for d in drivers))
    at8 = [get(d, "curve_rate_q8", 1000.0) for d in drivers]
    for q in QPS:
        vals = [get(d, f"curve_rate_q{q}", 1000.0) for d in drivers]
        row = "".join(" " + fmt(v, 11) for v in vals)
        if len(drivers) > 1:
            row += " " + fmt(ratio(vals[0], vals[-1]), 11)
        row += "".join(" " + fmt(ratio(v, b), 13) for v, b in zip(vals, at8))
        row += "".join(" " + fmt(get(d, f"qp_kernel_kib_q{q}"), 11, 1) for d in drivers)
        print(f"  {q:>6}{row}")

    print(f"\nlatency, {path} path (usec; a ratio below 1 favours {first})")
    print(f"  {'test':<10} {'size':>5}" +
          "".join(f" {d + ' typ':>11} {d + ' p99':>11}" for d in drivers) +
          (f" {'typ ' + rname:>12} {'p99 ' + rname:>12}" if len(drivers) > 1 else ""))
    for op, sz, key in LATS:
        typ = [get(d, key) for d in drivers]
        p99 = [get(d, key + "_p99") for d in drivers]
        if all(v is None for v in typ + p99):
            continue
        row = "".join(" " + fmt(t, 11) + " " + fmt(p, 11) for t, p in zip(typ, p99))
        if len(drivers) > 1:
            row += " " + fmt(ratio(typ[0], typ[-1]), 12) + " " + fmt(ratio(p99[0], p99[-1]), 12)
        print(f"  {op + '_lat':<10} {sz:>5}{row}")

    print(f"\nkernel memory of one RC QP (KiB; 128 send and 512 receive WRs):" +
          "".join(f" {d} {fmt(get(d, 'qp_kernel_kib'), 0, 1)}" for d in drivers))


def plot_data(res, path, drivers, cdir):
    get = getter(res, path)
    na = lambda v: f"{v:.4g}" if isinstance(v, float) else "NaN"
    with open(os.path.join(cdir, f"bw.{path}.dat"), "w") as f:
        f.write("# size " + " ".join(f"{op}_{d}" for op in OPS for d in drivers) + "\n")
        for s in SIZES:
            f.write(f"{s} " + " ".join(na(get(d, f"curve_{op}_bw_{s}"))
                                       for op in OPS for d in drivers) + "\n")
    with open(os.path.join(cdir, f"qps.{path}.dat"), "w") as f:
        f.write("# qps " + " ".join(drivers) + "\n")
        for q in QPS:
            f.write(f"{q} " + " ".join(na(get(d, f"curve_rate_q{q}", 1000.0))
                                       for d in drivers) + "\n")
    with open(os.path.join(cdir, f"qpmem.{path}.dat"), "w") as f:
        f.write("# qps " + " ".join(drivers) + "\n")
        for q in QPS:
            f.write(f"{q} " + " ".join(na(get(d, f"qp_kernel_kib_q{q}"))
                                       for d in drivers) + "\n")
    with open(os.path.join(cdir, f"lat.{path}.dat"), "w") as f:
        f.write("# test " + " ".join(f"{d}_typ {d}_p99" for d in drivers) + "\n")
        for op, sz, key in LATS:
            f.write(f'"{op} {sz}" ' + " ".join(f"{na(get(d, key))} {na(get(d, key + '_p99'))}"
                                               for d in drivers) + "\n")


def gnuplot_script(path, drivers, out):
    n = len(drivers)
    s = [f"# make bench cost curves ({path} path); data in curves/*.{path}.dat",
         "set datafile missing 'NaN'", "set grid", "set key top left",
         "set style data linespoints"]
    for term, ext in (("svg size 1200,420 dynamic", "svg"),
                      ("pngcairo size 1200,420", "png")):
        s += [f"set terminal {term}",
              f"set output '{out}/bandwidth.{ext}'",
              "set multiplot layout 1,3 title 'bandwidth against message size, "
              f"{path} path (MB/s)'",
              "set logscale xy 2", "set format x '%.0b%B'", "set xtics rotate by -45",
              "set key top left inside", "set xlabel 'message size (bytes)'"]
        for i, op in enumerate(OPS):
            cols = ", ".join(f"'curves/bw.{path}.dat' using 1:{2 + i * n + j} title '{d}'"
                             for j, d in enumerate(drivers))
            s += [f"set title '{op.upper()}'", f"plot {cols}"]
        s += ["unset multiplot", "unset logscale", "set format x '%g'", "unset title",
              f"set terminal {term.replace('1200,420', '700,420')}",
              f"set output '{out}/qps.{ext}'",
              f"set title '64 B WRITE message rate against QPs, {path} path (kpps)'",
              "set logscale x 2", "set xlabel 'QPs'", "set yrange [0:*]",
              "plot " + ", ".join(f"'curves/qps.{path}.dat' using 1:{2 + j} title '{d}'"
                                  for j, d in enumerate(drivers)),
              f"set output '{out}/qpmem.{ext}'",
              f"set title 'kernel memory of one RC QP against QPs, {path} path (KiB)'",
              "plot " + ", ".join(f"'curves/qpmem.{path}.dat' using 1:{2 + j} title '{d}'"
                                  for j, d in enumerate(drivers)),
              "unset logscale", "unset xlabel", "set yrange [0:*]",
              f"set output '{out}/latency.{ext}'",
              f"set title 'latency, {path} path (usec, lower is better)'",
              "set style data histograms", "set style histogram clustered",
              "set style fill solid 0.6 border -1", "set xtics rotate by -30",
              "set key outside right top", "set offsets 0, 0, graph 0.05, 0",
              "plot " + ", ".join(
                  f"'curves/lat.{path}.dat' using {2 + 2 * j + k}"
                  f"{':xtic(1)' if j == 0 and k == 0 else ''} title '{d} {w}'"
                  for j, d in enumerate(drivers) for k, w in enumerate(("typical", "p99"))),
              "unset xtics", "set xtics", "set key top left", "set offsets",
              "set style data linespoints"]
    return "\n".join(s) + "\n"


def main():
    out, drivers = sys.argv[1], sys.argv[2:]
    res = load(out)
    paths = [p for p in ("wire", "loop")
             if any(k[1] == p and k[2].startswith("curve_") for k in res)]
    if not paths:
        print("\ncost curves: no curve runs in", os.path.join(out, "runs.txt"))
        return 1
    cdir = os.path.join(out, "curves")
    os.makedirs(cdir, exist_ok=True)
    for path in paths:
        tables(res, path, drivers)
        plot_data(res, path, drivers, cdir)
    # the plots show the first path the curves ran on (wire by default)
    script = os.path.join(cdir, "plots.gp")
    with open(script, "w") as f:
        f.write(gnuplot_script(paths[0], drivers, "."))
    need = [f"curve_{op}_bw_{s}" for op in OPS for s in SIZES] + \
        [f"curve_rate_q{q}" for q in QPS] + [k for _, _, k in LATS]
    gaps = [m for m in need if not any(isinstance(res.get((d, paths[0], m)), float)
                                       for d in drivers)]
    if gaps:
        print(f"\ncost curves: no plots, points without a run: {len(gaps)} "
              f"(BENCH_ONLY, or failed runs), e.g. {gaps[0]}")
        return 0
    if not shutil.which("gnuplot"):
        print(f"\ncost curves: no gnuplot (Debian: gnuplot-nox); data and script in {cdir}")
        return 0
    r = subprocess.run(["gnuplot", os.path.abspath(script)], cwd=out, capture_output=True, text=True)
    if r.returncode:
        print(f"\ncost curves: gnuplot failed:\n{r.stderr}")
        return 1
    print(f"\nplots ({paths[0]} path): " +
          ", ".join(os.path.join(out, f"{p}.svg")
                    for p in ("bandwidth", "qps", "qpmem", "latency")))
    return 0


if __name__ == "__main__":
    sys.exit(main())

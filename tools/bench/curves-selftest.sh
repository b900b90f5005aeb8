#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host self-test of tools/bench/curves.py (make bench's cost curves), in
# KTAP: from a made-up runs.txt whose medians and ratios are known, the
# tables must show those numbers, the data files the plotted values, and
# gnuplot (when installed) must render the three plots.
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
dir=$(mktemp -d "${TMPDIR:-/tmp}/softrc-curves.XXXXXX")
trap 'rm -rf "$dir"' EXIT
n=0 fail=0
t() { # NAME CMD...
	local name=$1
	shift
	n=$((n + 1))
	if "$@" >/dev/null 2>&1; then
		echo "ok $n $name"
	else
		echo "not ok $n $name"
		fail=$((fail + 1))
	fi
}

# softrc's runs 1, 2 and 90 (median 2), rxe's one run 0.5 and one 0
# that must be dropped (perftest's impossible 0; kept, the median would
# be 0.25): ratio 4.00;
# latency softrc 3 (p99 6), rxe 4 (p99 12): ratios 0.75 and 0.50
{
	for s in 64 256 1024 4096 16384 65536 262144 1048576; do
		for op in write read send; do
			for v in 1 2 90; do
				echo "softrc wire curve_${op}_bw_$s $v"
			done
			printf 'rxe wire curve_%s_bw_%s 0.5\nrxe wire curve_%s_bw_%s 0.00\n' \
				"$op" "$s" "$op" "$s"
		done
	done
	for q in 1 8 64 256; do
		printf 'softrc wire curve_rate_q%s 0.02\nrxe wire curve_rate_q%s 0.01\n' "$q" "$q"
	done
	for m in write_lat send_lat read_lat write_lat_4k send_lat_4k read_lat_4k; do
		printf 'softrc wire %s 3\nsoftrc wire %s_p99 6\n' "$m" "$m"
		printf 'rxe wire %s 4\nrxe wire %s_p99 12\n' "$m" "$m"
	done
	echo "softrc wire qp_kernel_kib 123.4"
	echo "rxe wire qp_kernel_kib nan"
	echo "softrc wire write_bw_64k 5"
} >"$dir/runs.txt"

echo "TAP version 13"
echo "1..8"
python3 "$here/curves.py" "$dir" softrc rxe >"$dir/out.txt" 2>&1
t "curves.py runs" test -s "$dir/out.txt"
t "bandwidth row: medians 2 and 0.5 (a 0 run dropped), ratio 4.00 for each op" \
	grep -Eq '^ +1M( +2\.00 +0\.50){3}( +4\.00){3}$' "$dir/out.txt"
t "QP rate row: 20 and 10 kpps, ratio 2.00" \
	grep -Eq '^ +256 +20\.00 +10\.00 +2\.00$' "$dir/out.txt"
t "latency row: typical and p99 ratios 0.75 and 0.50" \
	grep -Eq '^ +read_lat +4KiB +3\.00 +6\.00 +4\.00 +12\.00 +0\.75 +0\.50$' "$dir/out.txt"
t "QP memory: softrc 123.4 KiB, rxe's nan left out" \
	grep -Eq 'KiB.*softrc 123\.4 rxe -$' "$dir/out.txt"
t "plot data: the 64 B row holds every op's medians" \
	grep -Eq '^64( 2 0\.5){3}$' "$dir/curves/bw.wire.dat"
if command -v gnuplot >/dev/null; then
	t "gnuplot renders bandwidth, qps and latency (SVG and PNG)" \
		bash -c "cd '$dir' && for p in bandwidth qps latency; do
			grep -q '<svg' \$p.svg && [ -s \$p.png ] || exit 1; done"
else
	n=$((n + 1))
	echo "ok $n gnuplot renders the plots # SKIP no gnuplot"
fi
# a sweep with a hole (BENCH_ONLY, a failed run) gets tables, no plots
grep -v 'curve_read_bw_4096' "$dir/runs.txt" >"$dir/runs.new" && mv "$dir/runs.new" "$dir/runs.txt"
rm -f "$dir"/*.svg
python3 "$here/curves.py" "$dir" softrc rxe >"$dir/out.txt" 2>&1
t "an incomplete sweep: tables, and no plots" bash -c \
	"grep -q 'no plots, points without a run: 1 ' '$dir/out.txt' && grep -Eq '^ +4K +2\.00 +0\.50 +- +- ' '$dir/out.txt' && ! ls '$dir'/*.svg"
[ "$fail" = 0 ]

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tools/bench/bench.sh: runs the benchmark perftest
# commands on SOFTRC_DRIVER (softrc|rxe) over both paths and prints
# "BENCH <path> <metric> <value>" lines. Paths (selftests/verbs/topo.sh):
#   loop: one device, client and server both on it
#   wire: softrc: two devices across a veth in two netns;
#         rxe: two devices across a veth, policy routing in init_net
set -u
. "$(dirname "$0")/../../selftests/vm/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
dmesg -n 1
trap topo_cleanup EXIT

# b PATH METRIC COLUMN TOOL ARGS...: BENCH_RUNS perftest pairs (default
# 3), a "BENCH PATH METRIC VALUE" line each (nan for a failed run); the
# host (bench.sh) takes the median over runs and boots.
b() {
	local path=$1 metric=$2 col=$3 v i
	shift 3
	for ((i = 0; i < ${BENCH_RUNS:-3}; i++)); do
		v=
		if pp_pair "$path $metric" "$@" -F -u 18 >/dev/null; then
			v=$(printf '%s\n' "$PP_OUT" | grep -E '^ +[0-9]+ +[0-9]+ ' | tail -1 | awk -v c="$col" '{ print $c }')
		else
			printf '%s\n' "$PP_OUT" | tail -5 | sed 's/^/# /'
		fi
		echo "BENCH $path $metric ${v:-nan}"
	done
}

n=${BENCH_N:-1}
for path in loop wire; do
	topo_up $path || { echo "# $path: topology failed"; topo_down; continue; }
	# bw columns: #bytes #iter peak avg[MB/s] rate[Mpps]; lat: ... t_typical(5)
	# at least ~50 MB per bandwidth run: shorter runs are mostly noise
	b $path write_bw_64k 4 ib_write_bw -s 65536 -n $((800 * n))
	b $path write_bw_4k 4 ib_write_bw -s 4096 -n $((4000 * n))
	b $path read_bw_64k 4 ib_read_bw -s 65536 -n $((800 * n))
	b $path read_bw_4k 4 ib_read_bw -s 4096 -n $((4000 * n))
	b $path send_bw_64k 4 ib_send_bw -s 65536 -n $((800 * n))
	b $path send_bw_4k 4 ib_send_bw -s 4096 -n $((4000 * n))
	b $path msg_rate_64B_q8 5 ib_write_bw -s 64 -q 8 -n $((500 * n))
	b $path atomic_rate 5 ib_atomic_bw -n $((1000 * n))
	b $path write_lat 5 ib_write_lat -s 8 -n $((500 * n))
	b $path send_lat 5 ib_send_lat -s 8 -n $((500 * n))
	b $path read_lat 5 ib_read_lat -s 8 -n $((500 * n))
	topo_down
done

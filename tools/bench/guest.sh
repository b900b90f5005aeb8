#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tools/bench/bench.sh: runs the benchmark perftest
# commands on SOFTRC_DRIVER (softrc|rxe) over both paths and prints
# "BENCH <driver> <path> <metric> <value>" lines. Paths
# (selftests/verbs/topo.sh):
#   loop: one device, client and server both on it
#   wire: softrc: two devices across a veth in two netns;
#         rxe: two devices across a veth, policy routing in init_net
# BENCH_KOS="NAME=PATH ..." (softrc only) names several softrc modules:
# they take turns in this one boot, a topology and the module reloaded
# at every turn, so that an A/B comparison of two builds sees the same
# host, the same moment and the same guest (under TCG the speed of the
# host drifts by a factor of two within minutes). Each of BENCH_RUNS
# rounds (default 3) runs every command once per module, the modules'
# order reversed every other round.
set -u
. "$(dirname "$0")/../../selftests/vm/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
dmesg -n 1
trap topo_cleanup EXIT

n=${BENCH_N:-1}
# metric column tool args: bw columns are #bytes #iter peak avg[MB/s]
# rate[Mpps]; lat: ... t_typical(5). At least ~50 MB per bandwidth run:
# shorter runs are mostly noise.
commands="write_bw_64k 4 ib_write_bw -s 65536 -n $((800 * n))
write_bw_4k 4 ib_write_bw -s 4096 -n $((4000 * n))
read_bw_64k 4 ib_read_bw -s 65536 -n $((800 * n))
read_bw_4k 4 ib_read_bw -s 4096 -n $((4000 * n))
send_bw_64k 4 ib_send_bw -s 65536 -n $((800 * n))
send_bw_4k 4 ib_send_bw -s 4096 -n $((4000 * n))
msg_rate_64B_q8 5 ib_write_bw -s 64 -q 8 -n $((500 * n))
atomic_rate 5 ib_atomic_bw -n $((1000 * n))
write_lat 5 ib_write_lat -s 8 -n $((500 * n))
send_lat 5 ib_send_lat -s 8 -n $((500 * n))
read_lat 5 ib_read_lat -s 8 -n $((500 * n))"

# b DRIVER PATH METRIC COLUMN TOOL ARGS...: one perftest pair, one
# "BENCH DRIVER PATH METRIC VALUE" line (nan for a failed run); the host
# (bench.sh) takes the medians.
b() {
	local drv=$1 path=$2 metric=$3 col=$4 v=
	shift 4
	if pp_pair "$path $metric" "$@" -F -u 18 >/dev/null; then
		v=$(printf '%s\n' "$PP_OUT" | grep -E '^ +[0-9]+ +[0-9]+ ' | tail -1 | awk -v c="$col" '{ print $c }')
	else
		printf '%s\n' "$PP_OUT" | tail -5 | sed 's/^/# /'
	fi
	echo "BENCH $drv $path $metric ${v:-nan}"
}

# BENCH_CLOCK=icount (bench.sh: one vCPU, time counted in instructions):
# the SEND tests wait for completions by events, so that the vCPU runs
# the sender and receiver in turn; ib_write_lat has no events mode and
# two pollers on one vCPU measure the scheduler's tick, so it is left out.
if [ "${BENCH_CLOCK:-}" = icount ]; then
	commands=$(printf '%s\n' "$commands" | grep -v '^write_lat ' |
		sed 's/ ib_send_\(bw\|lat\) / ib_send_\1 -e /')
fi

kos=${BENCH_KOS:-$SOFTRC_DRIVER=$SOFTRC_KO}
for path in ${BENCH_PATHS:-loop wire}; do
	for ((round = 0; round < ${BENCH_RUNS:-3}; round++)); do
		# shellcheck disable=SC2086 # one word a module
		order=$(printf '%s\n' $kos | if ((round % 2)); then tac; else cat; fi)
		for kv in $order; do
			name=${kv%%=*} SOFTRC_KO=${kv#*=}
			topo_up "$path" || { echo "# $name $path: topology failed"; topo_cleanup; continue; }
			while read -r metric col cmd; do
				[ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" $metric "* ]] || continue
				# shellcheck disable=SC2086 # cmd is a tool and its words
				b "$name" "$path" "$metric" "$col" $cmd
			done <<<"$commands"
			topo_cleanup
		done
	done
done

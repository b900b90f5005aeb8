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

. "$REPO/tools/bench/commands.sh"

# b DRIVER PATH METRICS COLUMNS TOOL ARGS...: one perftest pair, a
# "BENCH DRIVER PATH METRIC VALUE" line for each metric of the
# comma-separated METRICS, read from the matching one of COLUMNS (nan
# for a failed run); the host (bench.sh) takes the medians.
b() {
	local drv=$1 path=$2 metrics=$3 cols=$4 row='' m c i
	shift 4
	if pp_pair "$path ${metrics%%,*}" "$@" -F -u 18 >/dev/null; then
		row=$(printf '%s\n' "$PP_OUT" | grep -E '^ +[0-9]+ +[0-9]+ ' | tail -1)
	else
		printf '%s\n' "$PP_OUT" | tail -5 | sed 's/^/# /'
	fi
	IFS=, read -r -a m <<<"$metrics"
	IFS=, read -r -a c <<<"$cols"
	for i in "${!m[@]}"; do
		echo "BENCH $drv $path ${m[i]} $(awk -v c="${c[i]}" '{ v = $c } END { print v == "" ? "nan" : v }' <<<"$row")"
	done
}

# qpmem DRIVER PATH: the kernel memory an RC QP costs (tools/bench/qpmem.c,
# 256 QPs on the client's device), in KiB
qpmem() {
	local out v=nan
	if out=$($RUN_A "$REPO/tools/bench/qpmem" "$DEV_A" 256 2>&1); then
		v=$(awk '$1 == "QPMEM" { printf "%.1f", $5 / 1024 }' <<<"$out")
	else
		echo "# qpmem: $out"
	fi
	echo "BENCH $1 $2 qp_kernel_kib ${v:-nan}"
}

# memcpy DRIVER PATH: what one vCPU copies per second in this boot
# (tools/bench/memcpy.c), the ceiling the bandwidth rows are read against
memcpy_rate() {
	local v
	v=$("$REPO/tools/bench/memcpy" 1 | awk '$1 == "MEMCPY" { print $3 }')
	echo "BENCH $1 $2 memcpy ${v:-nan}"
}

# the curves run on BENCH_CURVE_PATHS (default wire) in the first round
# of the boot; BENCH_CURVES=0 leaves them out
run_curves() {
	[ "${BENCH_CURVES:-1}" != 0 ] && [ "$round" = 0 ] &&
		[[ " ${BENCH_CURVE_PATHS:-wire} " == *" $path "* ]]
}

kos=${BENCH_KOS:-$SOFTRC_DRIVER=$SOFTRC_KO}
for path in ${BENCH_PATHS:-loop wire}; do
	for ((round = 0; round < ${BENCH_RUNS:-3}; round++)); do
		# shellcheck disable=SC2086 # one word a module
		order=$(printf '%s\n' $kos | if ((round % 2)); then tac; else cat; fi)
		for kv in $order; do
			name=${kv%%=*} SOFTRC_KO=${kv#*=}
			topo_up "$path" || { echo "# $name $path: topology failed"; topo_cleanup; continue; }
			memcpy_rate "$name" "$path"
			list=$commands
			run_curves && list+=$'\n'$curves
			while read -r metric col cmd; do
				[ -n "$metric" ] || continue
				[ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" ${metric%%,*} "* ]] || continue
				# shellcheck disable=SC2086 # cmd is a tool and its words
				b "$name" "$path" "$metric" "$col" $cmd
			done <<<"$list"
			run_curves && qpmem "$name" "$path"
			topo_cleanup
		done
	done
done

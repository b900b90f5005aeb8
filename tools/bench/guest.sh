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
tmp=$(mktemp /tmp/bench.XXXXXX)
trap 'topo_cleanup; rm -f "$tmp" "$tmp".*' EXIT

. "$REPO/tools/bench/commands.sh"
. "$REPO/tools/bench/result.sh"

# bench_pair TOOL ARGS...: one perftest server/client pair, the server on
# DEV_B, the client on DEV_A, each under a time limit (BENCH_RUN_TIMEOUT
# seconds, default 120 times BENCH_N, scaled to the VM's speed). RUN_OUT
# gets the client's output; RUN_SRV the server's. Fails, RUN_WHY saying
# how, when either side exits non-zero or times out.
bench_pair() {
	local cmd=$1 port=$((20000 + RANDOM % 20000)) t srv rc src
	shift
	t=$(tmo "${BENCH_RUN_TIMEOUT:-$((120 * ${BENCH_N:-1}))}")
	RUN_WHY=
	$RUN_B timeout "$t" "$cmd" -d "$DEV_B" -x "$GID_B" -p "$port" "$@" -F -u 18 \
		>"$tmp.srv" 2>&1 &
	srv=$!
	# the client gives up at once if the server is not listening yet
	wait_until 20 bash -c "$RUN_B ss -ltn | grep -q ':$port '"
	RUN_OUT=$($RUN_A timeout "$t" "$cmd" -d "$DEV_A" -x "$GID_A" -p "$port" "$@" -F -u 18 "$IP_B" 2>&1)
	rc=$?
	[ "$rc" = 0 ] || kill "$srv" 2>/dev/null
	wait "$srv"
	src=$?
	RUN_SRV=$(cat "$tmp.srv")
	case $rc in
	0) ;;
	124) RUN_WHY="the client timed out after $t s" ;;
	*) RUN_WHY="the client exited with status $rc" ;;
	esac
	if [ -z "$RUN_WHY" ]; then
		case $src in
		0) ;;
		124) RUN_WHY="the server timed out after $t s" ;;
		*) RUN_WHY="the server exited with status $src" ;;
		esac
	fi
	[ -z "$RUN_WHY" ]
}

# acks_now: "ACKS PROBES" the responders of this path have sent so far.
# softrc: its acks_sent (and ackreq_probes, where the module has that
# counter; "-" where not), summed over the path's devices. rxe has no
# ACK counter: on the wire path the server's device sends nothing but
# responses, so its sent_pkts are the ACKs of a WRITE or SEND run; on the
# loop path requests and ACKs share one device's count: "- -".
acks_now() {
	local devs=$DEV_A d
	[ "$DEV_B" = "$DEV_A" ] || devs+=" $DEV_B"
	if [ "$SOFTRC_DRIVER" != softrc ]; then
		[ "$DEV_B" != "$DEV_A" ] || { echo "- -"; return; }
		devs=$DEV_B
	fi
	for d in $devs; do
		rdma statistic show link "$d/1"
	done | tr -s ' ' '\n' | awk -v drv="$SOFTRC_DRIVER" '
		drv == "softrc" && $0 == "acks_sent" { getline; a += $0; ha = 1 }
		drv == "softrc" && $0 == "ackreq_probes" { getline; p += $0; hp = 1 }
		drv != "softrc" && $0 == "sent_pkts" { getline; a += $0; ha = 1 }
		END { print (ha ? a : "-"), (hp ? p : "-") }'
}

# per_msg BEFORE AFTER MSGS: (AFTER - BEFORE) / MSGS, or "-"
per_msg() {
	awk -v a="$1" -v b="$2" -v n="$3" 'BEGIN {
		if (a == "-" || b == "-" || n <= 0) print "-"
		else printf "%.3f\n", (b - a) / n }'
}

# b DRIVER PATH METRICS COLUMNS TOOL ARGS...: one perftest pair, a
# "BENCH DRIVER PATH METRIC VALUE" line for each metric of the
# comma-separated METRICS, read from the matching one of COLUMNS; the
# host (bench.sh) takes the medians. A run that fails (a side's exit
# status, a timeout, no result row, a value that is not a positive
# number: tools/bench/result.sh) is reported, "# FAILED ..." with the
# tail of its output, and run once more; when that fails too, each metric
# gets the value "failed" (counted, never a median's value); when it
# passes, "retried" as well. A WRITE or SEND bandwidth or rate row also
# gets METRIC_ackpm, the responders' ACKs per message of the run (and
# METRIC_probepm, AckReq probes per message, where softrc counts them):
# the counters' delta over perftest's #iterations (all QPs' messages).
# READ and ATOMIC rows have none: each request has its response, which
# no AckReq policy changes.
b() {
	local drv=$1 path=$2 metrics=$3 cols=$4 try out val acks='' a0 a1 n m i
	shift 4
	IFS=, read -r -a m <<<"$metrics"
	case $1 in ib_write_bw | ib_send_bw) acks=1 ;; esac
	for try in 1 2; do
		[ -z "$acks" ] || a0=$(acks_now)
		if bench_pair "$@"; then
			out=$(printf '%s\n' "$RUN_OUT" | bench_values "$cols") || RUN_WHY=$out
		fi
		if [ -z "$RUN_WHY" ]; then
			read -r -a val <<<"$out"
			for i in "${!m[@]}"; do
				echo "BENCH $drv $path ${m[i]} ${val[i]}"
			done
			[ "$try" = 1 ] || echo "BENCH $drv $path ${m[0]} retried"
			if [ -n "$acks" ]; then
				a1=$(acks_now)
				n=$(printf '%s\n' "$RUN_OUT" | bench_values 2) || n=0
				i=$(per_msg "${a0% *}" "${a1% *}" "$n")
				[ "$i" = - ] || echo "BENCH $drv $path ${m[0]}_ackpm $i"
				i=$(per_msg "${a0#* }" "${a1#* }" "$n")
				[ "$i" = - ] || echo "BENCH $drv $path ${m[0]}_probepm $i"
			fi
			return 0
		fi
		echo "# FAILED $drv $path $metrics (try $try of 2): $RUN_WHY: $*"
		# stderr (unbuffered) lands before the buffered stdout: the
		# client's complaints first, then the tail of its output
		printf '%s\n' "$RUN_OUT" | grep -iE 'error|fail|couldn|unable|correlation' |
			head -5 | sed 's/^/#   /'
		printf '%s\n' "$RUN_OUT" | grep . | tail -8 | sed 's/^/#   /'
		printf '%s\n' "$RUN_SRV" | grep . | tail -4 | sed 's/^/#   server: /'
	done
	for i in "${!m[@]}"; do
		echo "BENCH $drv $path ${m[i]} failed"
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

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

# The run of one benchmark command, its retry and its ACK count:
# tools/bench/result.sh's b, with bench_pair and acks_now below.

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

# qpmem DRIVER PATH: the kernel memory an RC QP costs (tools/bench/qpmem.c
# on the client's device), in KiB: qp_kernel_kib_qN with N QPs for each N
# of the rate curve (BENCH_QPS) from 8 on (one QP's figure is within the
# page lists' noise: 0 to 464 KiB), and qp_kernel_kib, the figure at 256
qpmem() {
	local out v q
	for q in $BENCH_QPS; do
		[ "$q" -ge 8 ] || continue
		v=nan
		if out=$($RUN_A "$REPO/tools/bench/qpmem" "$DEV_A" "$q" 2>&1); then
			v=$(awk '$1 == "QPMEM" { printf "%.1f", $5 / 1024 }' <<<"$out")
		else
			echo "# qpmem $q: $out"
		fi
		echo "BENCH $1 $2 qp_kernel_kib_q$q ${v:-nan}"
		[ "$q" != 256 ] || echo "BENCH $1 $2 qp_kernel_kib ${v:-nan}"
	done
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

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tools/bench/profile.sh: for each benchmark command in
# PROF_ONLY (tools/bench/commands.sh's metrics) on each path in
# PROF_PATHS, one run without perf gives the cost of a message in guest
# instructions (PROF_CLOCK=icount, the default: 8 ns of guest time each)
# or in ns of wall time (PROF_CLOCK=wall: plain TCG, where guest time is
# the host's); a second run under `perf record -g` (cpu-clock samples:
# proportional to instructions under icount, to TCG's wall time
# otherwise) gives the shares of the stages (tools/bench/stages.py).
# Prints "STAGE ..." and "SYM ..." lines for the host.
set -u
. "$(dirname "$0")/../../selftests/vm/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
dmesg -n 1
trap topo_cleanup EXIT
sysctl -qw kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1

BENCH_N=${PROF_N:-4}
. "$REPO/tools/bench/commands.sh"

# cost_per_msg CMD: a message's cost from $PP_OUT, in ns of guest time
# (1000 / Mpps, column 5 of bandwidth and rate tests; for latency tests a
# round trip, twice the one-way t_typical of column 5, in usec) or, under
# icount, in guest instructions (an eighth of that: 8 ns each)
cost_per_msg() {
	local unit=1000
	[ "${PROF_CLOCK:-icount}" = icount ] && unit=125
	printf '%s\n' "$PP_OUT" | grep -E '^ +[0-9]+ +[0-9]+ ' | tail -1 |
		awk -v bw="$([[ $1 == *_bw* ]] && echo 1)" -v u="$unit" \
			'$5 > 0 { printf "%.0f\n", bw ? u / $5 : 2 * u * $5 }'
}

for path in ${PROF_PATHS:-wire loop}; do
	topo_up "$path" || { echo "# $path: topology failed"; exit 1; }
	while read -r metric _ cmd; do
		metric=${metric%%,*}
		[[ " ${PROF_ONLY:-msg_rate_64B_q8 write_bw_64k} " == *" $metric "* ]] || continue
		# shellcheck disable=SC2086 # cmd is a tool and its words
		if ! pp_pair "$path $metric" $cmd -F -u 18 >/dev/null; then
			echo "# $path $metric: run failed"
			continue
		fi
		per=$(cost_per_msg "$cmd")
		echo "# $path $metric: $per ${PROF_UNIT:-instructions} a message"
		rm -f /tmp/prof.on /tmp/prof.off
		perf record -q -a -g -F "${PROF_HZ:-500}" -e cpu-clock -o /tmp/prof.data -- \
			sh -c 'touch /tmp/prof.on; while [ ! -e /tmp/prof.off ]; do sleep 0.5; done' &
		perf_pid=$!
		wait_until 60 test -e /tmp/prof.on
		# shellcheck disable=SC2086
		pp_pair "$path $metric (perf)" $cmd -F -u 18 >/dev/null
		touch /tmp/prof.off
		wait "$perf_pid"
		perf script -i /tmp/prof.data -F comm,ip,sym,dso 2>/dev/null |
			python3 "$REPO/tools/bench/stages.py" "$SOFTRC_DRIVER" "$path" "$metric" "$per"
		rm -f /tmp/prof.data
	done <<<"$commands"
	topo_cleanup
done

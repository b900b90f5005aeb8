#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tools/bench/bench-cm.sh (make bench-cm): how rdma_cm
# connection setup and teardown scale on SOFTRC_DRIVER (softrc|rxe), on
# the wire topology of selftests/verbs/topo.sh (two devices across a veth;
# softrc's in two netns, rxe's in init_net with policy routing). Runs in
# the guest as root (tools/testing/vm/run.sh).
#
# For each N of CMSCALE_NS (default "64 256 1024"), a pair of
# selftests/verbs/cm_verify (CMSCALE_TOOL=cm_verify, the default): the
# server on DEV_B accepts N concurrent connections; on every one the
# client RDMA WRITEs, SENDs CMSCALE_MSGS (default 10) messages of
# CMSCALE_SIZE bytes (default 100) and RDMA READs, the server SENDs as
# many back, and every byte and work completion is checked by the side
# that receives it; then the client disconnects them all and both sides
# destroy their QPs, CQs, MRs, cm_ids and PDs. The program stamps its
# phases (CLOCK_REALTIME, its "CMV" line):
#   connect     from the client's start (before its N cm_ids are created;
#               the process start is left out) to its last ESTABLISHED:
#               address and route resolution, QP creation on both sides,
#               REQ/REP/RTU
#   teardown    from the client's first rdma_disconnect to the later of
#               the two processes' end of destroying: DREQ/DREP, then every
#               connection's resources (also given apart: disc, to the
#               client's last DISCONNECTED; destroy, from there)
# CMSCALE_TOOL=ucmatose times `ucmatose -c N` instead, as before
# cm_verify: it counts each connection's completions but checks neither
# their status nor the bytes; its output is line-buffered and time-stamped
# here (connect: its "connecting" to its last ESTABLISHED, "receiving
# data transfers"; teardown: the server's "disconnecting" to both
# processes' exit).
# Each N runs CMSCALE_RUNS times (default 3). Prints, per N:
#   cm_conns_N CONNECT_MS_PER_CONN DISCONNECT_MS_PER_CONN ok|FAILED
#     (the medians of the runs; FAILED if any run failed)
#   # cm_phases_N.RUN ..., # cm_res_N.RUN ..., # cm_runs_N ... detail lines
#   # cm_stats_N DEV/COUNTER +DELTA: the rdma statistic counters of
#     trouble (retries, drops, NAKs, errors, ...) that moved in N's runs
#   BENCH <driver> wire cm_connect_ms_N VALUE   (and cm_disconnect_ms_N),
#     one a run (nan for a failed one)
# A run is ok when both processes exit 0 (cm_verify: every connection
# connected and verified on both sides, none stuck past its deadline;
# ucmatose: after "data transfers complete") and, after the teardown,
# `rdma resource show` counts as many QPs and cm_ids as before it (nothing
# leaked). The guest's rdma_cm backlog limit (net.rdma_ucm.max_backlog,
# 1024: connection requests queued for a listener but not yet fetched by
# it) is raised to the largest N, so that a burst of requests the server
# is slow to fetch is not refused by the kernel before the driver is
# measured; the open-files limit does not apply (one event channel, no
# completion channels).
# CMSCALE_CMTIME=1 (default) also runs `cmtime -c N` (rdma_cm's own step
# timer: create id, resolve addr/route, create qp, connect, disconnect,
# destroy; no data) and prints its table as "# cmtime_N" lines.
# CMSCALE_PERF=N: one more ucmatose -c N under `perf record -a -g`
# (cpu-clock: CPU time only), and the symbols with most samples as
# "# perf_N" lines, the commands as "# perf_comm_N" lines.
# CMSCALE_GRAPH=N: one more ucmatose -c N under ftrace's function_graph
# tracer, two levels deep from the driver's create_qp, modify_qp and
# destroy_qp (CMSCALE_GRAPH_FNS names others): wall time, sleeps
# included, which cpu-clock samples do not see; "# graph_N FUNCTION
# calls total_ms avg_us" lines, the most costly first (FUNCTION/total:
# a traced function's own calls; the others are its callees).
set -u
. "$(dirname "$0")/../../selftests/vm/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
dmesg -n 1
trap topo_cleanup EXIT
sysctl -qw kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1

msgs=${CMSCALE_MSGS:-10} size=${CMSCALE_SIZE:-100}
drv=$SOFTRC_DRIVER
tool=${CMSCALE_TOOL:-cm_verify}

# stamp: each line of stdin prefixed with the time it was read, in us
stamp() {
	local l
	while IFS= read -r l; do
		printf '%s %s\n' "${EPOCHREALTIME/./}" "$l"
	done
}

# at FILE PATTERN: the stamp of the first line of FILE matching PATTERN
at() {
	awk -v p="$2" 'index($0, p) { print $1; exit }' "$1"
}

# res_back COUNTS: the counts are COUNTS again
# shellcheck disable=SC2317 # invoked by wait_until
res_back() {
	[ "$(res_counts)" = "$1" ]
}

# ucma_run N PREFIX [perf]: one ucmatose -c N pair; its logs
# /tmp/cms.PREFIX.{srv,cli}, the client's start stamp in T0
ucma_run() {
	local n=$1 pfx=$2 port srv lim
	port=$((20000 + RANDOM % 20000))
	# a connection takes up to 0.1 s of TCG time, plus the data
	lim=$(tmo $((120 + n / 4)))
	{
		$RUN_B timeout "$lim" stdbuf -oL ucmatose -b "$IP_B" -p "$port" \
			-c "$n" -C "$msgs" -S "$size" 2>&1
		echo "EXIT $?"
	} | stamp >"/tmp/cms.$pfx.srv" &
	srv=$!
	wait_until 20 cm_listening "$port" ||
		echo "# cm_conns_$n: no LISTEN cm_id on port $port"
	T0=${EPOCHREALTIME/./}
	{
		$RUN_A timeout "$lim" stdbuf -oL ucmatose -s "$IP_B" -p "$port" \
			-c "$n" -C "$msgs" -S "$size" 2>&1
		echo "EXIT $?"
	} | stamp >"/tmp/cms.$pfx.cli"
	wait "$srv"
}

# ms_per A B N: (B - A) us / N in ms, or nan if either is missing
ms_per() {
	awk -v a="$1" -v b="$2" -v n="$3" \
		'BEGIN { if (a == "" || b == "") print "nan"; else printf "%.2f\n", (b - a) / 1000 / n }'
}

# median: the median of the numbers on stdin (nan among them: nan)
median() {
	sort -g | awk '{ v[NR] = $1 } $1 == "nan" { bad = 1 }
		END { if (!NR || bad) print "nan"
		      else printf "%.2f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# cm_report N R BEFORE STATUS CONNECTING CONNECTED DATA_DONE DISC DISCONNECTED
#	DESTROYING END START: a run's phases (ms per connection) and
# BENCH lines on stderr, its "CONNECT TEARDOWN ok|FAILED" on stdout; the
# run fails if the resource counts are not back to BEFORE
cm_report() {
	local n=$1 r=$2 before=$3 status=$4 t_start=$5 t_conn=$6 t_data=$7 t_disc=$8
	local t_discd=$9 t_destroy=${10} t_end=${11} t0=${12} after cms cmd
	after=$(res_counts)
	[ "$after" = "$before" ] || status=FAILED
	cms=$(ms_per "$t_start" "$t_conn" "$n")
	cmd=$(ms_per "$t_disc" "$t_end" "$n")
	echo "# cm_phases_$n.$r ms/conn: connect $cms data $(ms_per "$t_conn" "$t_data" "$n")" \
		"disc $(ms_per "$t_disc" "$t_discd" "$n") destroy $(ms_per "$t_destroy" "$t_end" "$n")" \
		"teardown $cmd; total s $(ms_per "$t0" "$t_end" 1000)" >&2
	echo "# cm_res_$n.$r qp cm_id before: $before, after teardown: $after" >&2
	[ "$status" = ok ] || cms=nan cmd=nan
	echo "BENCH $drv wire cm_connect_ms_$n $cms" >&2
	echo "BENCH $drv wire cm_disconnect_ms_$n $cmd" >&2
	echo "$cms $cmd $status"
}

# cm_one_cmv N R: run R of cm_verify -n N; "CONNECT TEARDOWN ok|FAILED"
# in ms per connection, detail lines before it
cm_one_cmv() {
	local n=$1 r=$2 before o=/tmp/cms.$1 status=ok t_end
	local t0 t_conn t_ver t_disc t_discd
	before=$(res_counts)
	CMV_ARGS="-m $msgs -z $size" cmv_run "$n" "$o" || status=FAILED
	t0=$(cmv_field "$o.cli" t_start) t_conn=$(cmv_field "$o.cli" t_connected)
	t_ver=$(cmv_field "$o.cli" t_verified) t_disc=$(cmv_field "$o.cli" t_disc)
	t_discd=$(cmv_field "$o.cli" t_disc_done)
	t_end=$(cat <(cmv_field "$o.cli" t_end) <(cmv_field "$o.srv" t_end) | sort -n | tail -1)
	[ "$(cmv_field "$o.cli" verified)" = "$n" ] && [ "$(cmv_field "$o.srv" verified)" = "$n" ] ||
		status=FAILED
	if [ "$status" = FAILED ]; then
		grep -E '^(# |cm_verify|Bail|EXIT)' "$o.srv" | tail -12 | sed 's/^/# server: /' >&2
		grep -E '^(# |cm_verify|Bail|EXIT)' "$o.cli" | tail -12 | sed 's/^/# client: /' >&2
	fi
	grep -h '^cm_verify' "$o.cli" "$o.srv" | sed "s/^/# cm_verify_$n.$r /" >&2
	wait_until 10 res_back "$before"
	cm_report "$n" "$r" "$before" "$status" "$t0" "$t_conn" "$t_ver" "$t_disc" \
		"$t_discd" "$t_discd" "$t_end" "$t0"
}

cm_one() {
	if [ "$tool" = ucmatose ]; then
		cm_one_ucma "$@"
	else
		cm_one_cmv "$@"
	fi
}

# cm_one_ucma N R: run R of ucmatose -c N; "CONNECT TEARDOWN ok|FAILED"
# in ms per connection, detail lines before it
cm_one_ucma() {
	local n=$1 r=$2 before t_start t_conn t_done t_disc t_discd t_tc t_end s c
	local status=ok
	before=$(res_counts)
	ucma_run "$n" "$n"
	s=/tmp/cms.$n.srv c=/tmp/cms.$n.cli
	t_conn=$(at "$c" 'receiving data transfers')
	t_done=$(at "$c" 'data transfers complete')
	t_disc=$(at "$s" 'cmatose: disconnecting')
	t_discd=$(at "$s" 'disconnected')
	t_tc=$(at "$s" 'test complete')
	t_end=$(awk '$2 == "EXIT" { print $1 }' "$s" "$c" | sort -n | tail -1)
	if ! grep -q '^[0-9]* EXIT 0$' "$s" || ! grep -q '^[0-9]* EXIT 0$' "$c" ||
		[ -z "$t_done" ] || ! grep -q 'data transfers complete' "$s"; then
		status=FAILED
		sed 's/^[0-9]* /# server: /' "$s" | tail -8 >&2
		sed 's/^[0-9]* /# client: /' "$c" | tail -8 >&2
	fi
	# the teardown is over when the counts are back where they were
	wait_until 10 res_back "$before"
	t_start=$(at "$c" 'cmatose: connecting')
	cm_report "$n" "$r" "$before" "$status" "$t_start" "$t_conn" "$t_done" "$t_disc" \
		"$t_discd" "$t_tc" "$t_end" "$T0"
}

# stats: every device's rdma statistic counters, "DEV/NAME VALUE" lines
stats() {
	rdma statistic show 2>/dev/null |
		awk '$1 == "link" { for (i = 3; i < NF; i += 2) print $2 "/" $i, $(i + 1) }'
}

# stats_delta N BEFORE: the counters that moved since BEFORE (stats
# output), the ones that count trouble (retries, drops, NAKs, timeouts,
# errors, duplicates), as "# cm_stats_N" lines
stats_delta() {
	stats | awk -v n="$1" 'NR == FNR { b[$1] = $2; next }
		$2 - b[$1] > 0 && $1 ~ /retr|drop|nak|tmo|timeout|err|dup|seq|rnr|lost|resend|stall|busy|full/ {
			printf "# cm_stats_%s %s +%d\n", n, $1, $2 - b[$1]
		}' <(printf '%s\n' "$2") -
}

# cm_scale N: CMSCALE_RUNS runs of ucmatose -c N (default 3), the
# medians (a run under TCG can take twice as long as the next)
cm_scale() {
	local n=$1 r out all='' before
	before=$(stats)
	for ((r = 1; r <= ${CMSCALE_RUNS:-3}; r++)); do
		out=$(cm_one "$n" "$r" 2>&1 >/tmp/cms.one)
		printf '%s\n' "$out"
		all+="$(cat /tmp/cms.one)"$'\n'
	done
	echo "# cm_runs_$n connect: $(awk 'NF { printf " %s", $1 }' <<<"$all")," \
		"teardown: $(awk 'NF { printf " %s", $2 }' <<<"$all")"
	echo "cm_conns_$n $(awk 'NF { print $1 }' <<<"$all" | median)" \
		"$(awk 'NF { print $2 }' <<<"$all" | median)" \
		"$(grep -q FAILED <<<"$all" && echo FAILED || echo ok)"
	stats_delta "$n" "$before"
}

# cm_time N: rdma_cm's step timer, no data
cm_time() {
	local n=$1 port srv out
	port=$((20000 + RANDOM % 20000))
	$RUN_B timeout "$(tmo $((120 + n / 4)))" cmtime -b "$IP_B" -p "$port" >/tmp/cms.cmtime.srv 2>&1 &
	srv=$!
	wait_until 20 cm_listening "$port"
	out=$($RUN_A timeout "$(tmo $((120 + n / 4)))" cmtime -s "$IP_B" -p "$port" -c "$n" 2>&1) ||
		echo "# cmtime_$n: failed (status $?)"
	printf '%s\n' "$out" | sed -n '/^step/,$p' | sed "s/^/# cmtime_$n /"
	kill "$srv" 2>/dev/null
	wait "$srv" 2>/dev/null
}

# cm_perf N: ucmatose -c N under perf, the kernel symbols with most
# samples. perf's workload marks its start (perf takes seconds to set up
# under TCG) and ends when told to, when the run is over.
cm_perf() {
	local n=$1 p
	rm -f /tmp/cms.perf.go /tmp/cms.perf.stop
	perf record -q -a -g -F "${CMSCALE_PERF_HZ:-500}" -e cpu-clock \
		-o /tmp/cms.perf.data -- bash -c 'touch /tmp/cms.perf.go
			until [ -e /tmp/cms.perf.stop ]; do sleep 0.1; done' &
	p=$!
	wait_until 60 test -e /tmp/cms.perf.go || echo "# perf_$n: perf did not start"
	ucma_run "$n" perf
	touch /tmp/cms.perf.stop
	wait "$p"
	perf report -i /tmp/cms.perf.data --no-children --sort sym --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9]' | head -"${CMSCALE_PERF_TOP:-40}" | sed "s/^/# perf_$n /"
	perf report -i /tmp/cms.perf.data --no-children --sort comm --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9]' | head -12 | sed "s/^/# perf_comm_$n /"
}

# cm_graph N: ucmatose -c N under function_graph from CMSCALE_GRAPH_FNS,
# each function's and each callee's calls and time. Only the driver
# module's functions and the kernel ones in GRAPH_KERNEL are patched for
# tracing: patching every kernel function in and out under TCG stalls a
# vCPU for minutes (a soft lockup).
GRAPH_KERNEL="synchronize_rcu synchronize_rcu_expedited synchronize_net
	call_rcu kfree_rcu_monitor wait_for_completion
	wait_for_completion_timeout tasklet_kill del_timer_sync
	cancel_work_sync flush_work flush_workqueue kvfree kfree vfree
	kvmalloc_node __kmalloc kmalloc_trace __vmalloc_node_range
	dst_cache_init dst_cache_destroy rdma_destroy_ah_attr
	ib_modify_qp_is_ok _raw_spin_lock_bh _raw_spin_unlock_bh xa_erase
	__xa_alloc_cyclic xa_store debugfs_create_file debugfs_remove
	rdma_restrack_del ib_umem_release"
cm_graph() {
	local n=$1 t=/sys/kernel/tracing p=softrc mod=softrc fns f
	[ "$drv" = rxe ] && p=rxe mod=rdma_rxe
	fns=${CMSCALE_GRAPH_FNS:-${p}_create_qp ${p}_modify_qp ${p}_destroy_qp}
	[ -e $t/trace ] || mount -t tracefs nodev $t 2>/dev/null || t=/sys/kernel/debug/tracing
	echo 0 >$t/tracing_on
	echo nop >$t/current_tracer
	echo ":mod:$mod" >$t/set_ftrace_filter ||
		{ echo "# graph_$n: cannot trace module $mod"; return; }
	for f in $GRAPH_KERNEL; do
		echo "$f" >>$t/set_ftrace_filter 2>/dev/null
	done
	# shellcheck disable=SC2086 # one word a function
	printf '%s\n' $fns >$t/set_graph_function ||
		{ echo "# graph_$n: cannot trace $fns"; return; }
	echo 2 >$t/max_graph_depth
	echo 16384 >$t/buffer_size_kb
	echo function_graph >$t/current_tracer
	echo 0 >$t/options/funcgraph-irqs
	echo 1 >$t/options/funcgraph-tail
	: >$t/trace
	echo 1 >$t/tracing_on
	ucma_run "$n" graph
	echo 0 >$t/tracing_on
	# "  1) ! 15123.456 us |    synchronize_rcu();" for a callee, and at
	# the end of a function that had callees in the trace (the traced
	# ones; a callee when a sleep or an interrupt came between its entry
	# and its return) "... us |  } /* softrc_destroy_qp [softrc] */"
	awk -v n="$n" -v tops=" $fns " '
	match($0, /[0-9]+\.[0-9]+ us +\|/) {
		us = substr($0, RSTART, RLENGTH) + 0
		f = substr($0, RSTART + RLENGTH)
		if (f ~ /^ *\} \/\* /) {
			sub(/^ *\} \/\* /, "", f); sub(/ .*/, "", f)
			if (index(tops, " " f " "))
				f = f "/total"
		} else if (f ~ /\(\);/) {
			sub(/^ */, "", f); sub(/[ (].*/, "", f)
		} else
			next
		c[f]++; t[f] += us
	}
	END { for (f in c) printf "# graph_%s %-34s %7d %10.1f %10.1f\n", n, f, c[f], t[f] / 1000, t[f] / c[f] }
	' $t/trace | sort -k5,5 -g -r | head -"${CMSCALE_GRAPH_TOP:-30}"
	awk '$1 == "overrun:" && $2 > 0 { print "# graph: events lost, " $0 }' $t/per_cpu/cpu*/stats
	echo nop >$t/current_tracer
	: >$t/set_graph_function
	: >$t/set_ftrace_filter
}

topo_up wire || { echo "# cmscale: the wire topology failed"; exit 1; }
echo "# cmscale: $drv, $tool, $DEV_A -> $DEV_B ($IP_B), $msgs x $size B per connection"
# shellcheck disable=SC2086 # one word an N
maxn=$(printf '%s\n' ${CMSCALE_NS:-64 256 1024} 1024 | sort -n | tail -1)
# the sysctl comes with rdma_ucm, loaded on the first open of its device
modprobe rdma_ucm
sysctl -qw net.rdma_ucm.max_backlog="$maxn" ||
	echo "# cmscale: cannot raise net.rdma_ucm.max_backlog to $maxn"
# a first connection resolves the neighbours (some 2 s): not timed
ucma_run 1 warm
grep -q '^[0-9]* EXIT 0$' /tmp/cms.warm.cli || sed 's/^[0-9]* /# warm-up: /' /tmp/cms.warm.cli
for n in ${CMSCALE_NS:-64 256 1024}; do
	cm_scale "$n"
	[ "${CMSCALE_CMTIME:-1}" = 0 ] || cm_time "$n"
done
[ -z "${CMSCALE_PERF:-}" ] || cm_perf "$CMSCALE_PERF"
[ -z "${CMSCALE_GRAPH:-}" ] || cm_graph "$CMSCALE_GRAPH"
exit 0

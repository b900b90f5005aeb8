#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tools/bench/bench-cm.sh (make bench-cm): how rdma_cm
# connection setup and teardown scale on SOFTRC_DRIVER (softrc|rxe), on
# the wire topology of selftests/verbs/topo.sh (two devices across a veth;
# softrc's in two netns, rxe's in init_net with policy routing). Runs in
# the guest as root (tools/testing/vm/run.sh).
#
# For each N of CMSCALE_NS (default "64 256 1024"), `ucmatose -c N`: the
# server on DEV_B accepts N connections, then each side sends
# CMSCALE_MSGS (default 10) messages of CMSCALE_SIZE bytes (default 100)
# on every connection and waits for as many completions on each QP; the
# server disconnects them all, and both sides destroy their QPs, CQs, MRs,
# PDs and cm_ids. Its output is line-buffered and time-stamped here, so the
# phases are timed apart:
#   connect     the client's start to its last ESTABLISHED ("receiving
#               data transfers"): address and route resolution, QP
#               creation on both sides, REQ/REP/RTU
#   disconnect  the server's "disconnecting" to both processes' exit:
#               DREQ/DREP, then destroying every connection's resources
#               (also given apart: disc, to the server's "disconnected";
#               destroy, from its "test complete" to the last exit)
# Prints, per N:
#   cm_conns_N CONNECT_MS_PER_CONN DISCONNECT_MS_PER_CONN ok|FAILED
#   # cm_phases_N ... and # cm_res_N ... detail lines
#   BENCH <driver> wire cm_connect_ms_N VALUE   (and cm_disconnect_ms_N)
# A run is ok when both processes exit 0 after "data transfers complete"
# and, after the teardown, `rdma resource show` counts as many QPs and
# cm_ids as before it (nothing leaked). ucmatose counts each connection's
# completions (every message must arrive) but does not check their status
# or the bytes.
# CMSCALE_CMTIME=1 (default) also runs `cmtime -c N` (rdma_cm's own step
# timer: create id, resolve addr/route, create qp, connect, disconnect,
# destroy; no data) and prints its table as "# cmtime_N" lines.
# CMSCALE_PERF=N: one more ucmatose -c N under `perf record -a -g`
# (cpu-clock), and the top kernel symbols as "# perf_N" lines.
set -u
. "$(dirname "$0")/../../selftests/vm/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
dmesg -n 1
trap topo_cleanup EXIT
sysctl -qw kernel.kptr_restrict=0 kernel.perf_event_paranoid=-1

msgs=${CMSCALE_MSGS:-10} size=${CMSCALE_SIZE:-100}
drv=$SOFTRC_DRIVER

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

# res_counts: the QPs and cm_ids of every device, "QP CM_ID"
res_counts() {
	rdma resource show 2>/dev/null | awk '{
		for (i = 1; i < NF; i++) {
			if ($i == "qp") q += $(i + 1)
			if ($i == "cm_id") c += $(i + 1)
		}
	} END { print q + 0, c + 0 }'
}

# res_back COUNTS: the counts are COUNTS again
# shellcheck disable=SC2317 # invoked by wait_until
res_back() {
	[ "$(res_counts)" = "$1" ]
}

# cm_listening PORT: an rdma_cm ID listens on PORT (server's netns)
# shellcheck disable=SC2317 # invoked by wait_until
cm_listening() {
	$RUN_B rdma res show cm_id 2>/dev/null | grep -E "state LISTEN" | grep -qE ":$1( |$)"
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

cm_scale() {
	local n=$1 before after t_conn t_done t_disc t_discd t_tc t_end s c
	local status=ok cms cmd
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
		sed 's/^[0-9]* /# server: /' "$s" | tail -8
		sed 's/^[0-9]* /# client: /' "$c" | tail -8
	fi
	# the teardown is over when the counts are back where they were
	wait_until 10 res_back "$before"
	after=$(res_counts)
	[ "$after" = "$before" ] || status=FAILED
	cms=$(ms_per "$T0" "$t_conn" "$n")
	cmd=$(ms_per "$t_disc" "$t_end" "$n")
	echo "cm_conns_$n $cms $cmd $status"
	echo "# cm_phases_$n ms/conn: connect $cms data $(ms_per "$t_conn" "$t_done" "$n")" \
		"disc $(ms_per "$t_disc" "$t_discd" "$n") destroy $(ms_per "$t_tc" "$t_end" "$n")" \
		"teardown $cmd; total s $(ms_per "$T0" "$t_end" 1000)"
	echo "# cm_res_$n qp cm_id before: $before, after teardown: $after"
	[ "$status" = ok ] || cms=nan cmd=nan
	echo "BENCH $drv wire cm_connect_ms_$n $cms"
	echo "BENCH $drv wire cm_disconnect_ms_$n $cmd"
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

# cm_perf N: ucmatose -c N under perf, the kernel symbols with most samples
cm_perf() {
	local n=$1 p
	perf record -q -a -g -F "${CMSCALE_PERF_HZ:-500}" -e cpu-clock -o /tmp/cms.perf.data &
	p=$!
	sleep 1
	ucma_run "$n" perf
	kill -INT "$p"
	wait "$p"
	perf report -i /tmp/cms.perf.data --no-children --sort sym --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9]' | head -"${CMSCALE_PERF_TOP:-40}" | sed "s/^/# perf_$n /"
	perf report -i /tmp/cms.perf.data --no-children --sort comm --stdio -g none 2>/dev/null |
		grep -E '^ +[0-9]' | head -12 | sed "s/^/# perf_comm_$n /"
}

topo_up wire || { echo "# cmscale: the wire topology failed"; exit 1; }
echo "# cmscale: $drv, $DEV_A -> $DEV_B ($IP_B), $msgs x $size B per connection"
for n in ${CMSCALE_NS:-64 256 1024}; do
	cm_scale "$n"
	[ "${CMSCALE_CMTIME:-1}" = 0 ] || cm_time "$n"
done
[ -z "${CMSCALE_PERF:-}" ] || cm_perf "$CMSCALE_PERF"
exit 0

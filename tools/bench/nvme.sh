#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of make bench's NVMe-oF table (tools/bench/bench.sh boots it
# on its own, BENCH_NVME_SMP vCPUs): the kernel's nvme-rdma host and
# nvmet-rdma target, both on SOFTRC_DRIVER (softrc|rxe), on the wire
# topology of selftests/vm/nvmeof.sh (init_net; va 10.0.0.1, the host,
# across the veth to vb 10.0.0.2, the target; selftests/verbs/ulp.sh and
# nvmf.sh). Prints "BENCH <driver> wire nvme_<read|write>_q<Q>_qd<D>
# <IOPS>" for fio 4 KiB random reads and writes (libaio, direct I/O) with
# Q = 2 and 8 I/O queues (nvme connect -i) and queue depth D = 1, 16 and
# 128, and "BENCH <driver> wire nvme_q<Q>_ioq <N>", the I/O queues the
# connection got: nvme-rdma makes at most one per online CPU, so the
# guest needs 8 vCPUs for the q8 rows.
#
# Depth is per I/O queue: fio runs one job per queue, pinned to the CPUs
# blk-mq maps to that queue (the path disk's mq/N/cpu_list), each with D
# I/Os in flight, Q x D in all (1024 at q8 qd128, within nvme-rdma's
# default queue_size of 128 a queue). So every queue carries the depth
# its row is named for, and q2 against q8 shows what more queues bring.
# A run is ramp_time 2 s, then 5 s times BENCH_N counted (fio's JSON
# report; tools/bench/result.sh fio_iops reads it, and b runs, checks
# and retries it as it does a perftest run).
#
# The namespace is a null_blk disk of 256 MiB, memory backed. null_blk
# completes a request at once (irqmode 1, softirq: completion_nsec only
# applies to the timer mode), so the disk costs one 4 KiB copy an I/O
# and the transport is what the numbers measure. Its hw_queue_depth
# (default 64) and submit_queues (default 1) are raised to 1024 and one
# a CPU, and it has no I/O scheduler, so the target's disk never queues
# what the transport delivers. BENCH_KOS, BENCH_RUNS and BENCH_ONLY as
# in guest.sh; BENCH_ONLY=nvme runs every NVMe-oF metric.
set -u
. "$(dirname "$0")/../../selftests/vm/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
. "$REPO/selftests/verbs/ulp.sh"
NVMF_NQN=nqn.2024-01.org.softrc:bench
. "$REPO/selftests/verbs/nvmf.sh"
. "$REPO/tools/bench/result.sh"
dmesg -n 1
tmp=$(mktemp /tmp/nvme.XXXXXX)
trap 'nvmf_teardown >/dev/null 2>&1; topo_cleanup; rm -f "$tmp" "$tmp".*' EXIT

secs=$((5 * ${BENCH_N:-1})) ramp=2
BENCH_PARSE=fio_iops

# metrics Q: this queue count's metrics that BENCH_ONLY selects, "metric
# rw depth" a line
metrics() {
	local rw d m
	for rw in read write; do
		for d in 1 16 128; do
			m=nvme_${rw}_q$1_qd$d
			[ -z "${BENCH_ONLY:-}" ] || [[ " $BENCH_ONLY " == *" nvme "* ]] ||
				[[ " $BENCH_ONLY " == *" $m "* ]] || continue
			echo "$m $rw $d"
		done
	done
}

# all_failed NAME WHY METRICS: a step before the runs failed; each of
# METRICS (metrics' lines) is a failed run
all_failed() {
	local m rest
	echo "# FAILED $1 wire nvme: $2"
	while read -r m rest; do
		[ -z "$m" ] || echo "BENCH $1 wire $m failed"
	done <<<"$3"
}

# queue_cpus: the CPU list of each I/O queue of the connection, one a
# line (the path disk's blk-mq map; the multipath head, where there is
# one, has no queues of its own)
queue_cpus() {
	local b q
	for b in /sys/block/nvme*; do
		[ -d "$b/mq" ] || continue
		[ "$(cat "$b/device/subsysnqn" 2>/dev/null)" = "$NVMF_NQN" ] || continue
		for q in "$b"/mq/*/cpu_list; do
			tr -d ' ' <"$q"
		done | grep .
		return
	done
	return 1
}

# live: our controller is connected (not resetting or reconnecting)
live() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(cat "$c/subsysnqn" 2>/dev/null)" = "$NVMF_NQN" ] &&
			[ "$(cat "$c/state" 2>/dev/null)" = live ] && return 0
	done
	return 1
}

# bench_pair fio ARGS...: one fio run on $dev with ARGS and the jobs of
# $jobs, once the controller is live; RUN_OUT its JSON report, RUN_LOG
# what it said on stderr and the kernel's NVMe lines since; fails, RUN_WHY
# saying how, on an exit status, a timeout, or an I/O timeout or
# reconnect of the host during the run: fio sees no error then (the I/O
# is requeued and done after the reconnect), but what it counted is the
# recovery's time, not the transport's (result.sh b's contract)
bench_pair() {
	local lim=$((ramp + secs + 60)) mark rc klog
	RUN_WHY='' RUN_SRV=''
	wait_until 60 live || RUN_WHY="the controller is not live: $(cat /sys/class/nvme/nvme*/state 2>/dev/null | tr '\n' ' ')"
	mark=$(dmesg | wc -l)
	RUN_OUT=$(t "$lim" "$@" --filename="$dev" --ioengine=libaio --direct=1 \
		--bs=4k --time_based --runtime="$secs" --ramp_time="$ramp" \
		--norandommap --randrepeat=0 --group_reporting \
		--output-format=json "${jobs[@]}" 2>"$tmp.err")
	rc=$?
	klog=$(dmesg | tail -n +$((mark + 1)) | grep -E 'nvme|nvmet|softrc|rxe')
	RUN_LOG=$(
		echo "fio exit status $rc"
		cat "$tmp.err"
		tail -6 <<<"$klog" | grep . | sed 's/^/klog: /'
	)
	[ -z "$RUN_WHY" ] || return 1
	case $rc in
	0) ;;
	124) RUN_WHY="fio timed out after $(tmo "$lim") s" ;;
	*) RUN_WHY="fio exited with status $rc" ;;
	esac
	if [ -z "$RUN_WHY" ] && grep -qE 'timeout|Reconnecting|error recovery|resetting' <<<"$klog"; then
		RUN_WHY="the host had an I/O timeout or reconnected during the run (kernel log)"
	fi
	[ -z "$RUN_WHY" ]
}

# connect NAME Q: the host's connection with Q I/O queues (tried twice),
# $dev its disk, $jobs one fio job per queue; prints the queues it got
connect() {
	local try c i=0 out cpus
	for try in 1 2; do
		out=$(nvmf_connect "$IP_B" "$2" 2>&1) && dev=$(nvmf_bdev) &&
			c=$(queue_cpus) && break
		echo "# $1: nvme connect -i $2 (try $try of 2): $out" | head -5
		t 60 nvme disconnect-all >/dev/null 2>&1
		c=
	done
	[ -n "$c" ] || return 1
	jobs=()
	while read -r cpus; do
		jobs+=("--name=q$i" "--cpus_allowed=$cpus")
		i=$((i + 1))
	done <<<"$c"
	echo "# $1: $dev, $i I/O queues on CPUs $(tr '\n' ' ' <<<"$c")"
	[ "$i" = "$2" ] || echo "# $1: asked for $2 I/O queues, got $i ($(nproc) CPUs online)"
	echo "BENCH $1 wire nvme_q$2_ioq $i"
}

if ! command -v nvme >/dev/null || ! command -v fio >/dev/null ||
	! modinfo nvmet_rdma >/dev/null 2>&1 || ! modinfo nvme_rdma >/dev/null 2>&1; then
	nvme_missing="no nvme-cli, fio or nvme-rdma/nvmet-rdma modules (tools/setup/deps.sh)"
fi
kos=${BENCH_KOS:-$SOFTRC_DRIVER=$SOFTRC_KO}
for ((round = 0; round < ${BENCH_RUNS:-3}; round++)); do
	# shellcheck disable=SC2086 # one word a module
	order=$(printf '%s\n' $kos | if ((round % 2)); then tac; else cat; fi)
	for kv in $order; do
		name=${kv%%=*} SOFTRC_KO=${kv#*=}
		list=$(metrics 2; metrics 8)
		[ -n "$list" ] || continue
		if [ -n "${nvme_missing:-}" ]; then
			all_failed "$name" "$nvme_missing" "$list"
			continue
		fi
		# shellcheck disable=SC2119 # nvmet_rdma with its default parameters
		if ! { topo_up_initnet wire && nvmf_modules &&
			nvmf_target_up "$IP_B" size=256 hw_queue_depth=1024 \
				submit_queues="$(nproc)" no_sched=1; } >"$tmp.up" 2>&1; then
			all_failed "$name" "target set-up: $(tail -3 "$tmp.up" | tr '\n' ' ')" "$list"
			nvmf_teardown >/dev/null 2>&1
			topo_cleanup
			continue
		fi
		for q in 2 8; do
			list=$(metrics $q)
			[ -n "$list" ] || continue
			if ! connect "$name" "$q"; then
				all_failed "$name" "nvme connect -i $q failed twice" "$list"
				continue
			fi
			while read -r m rw d; do
				b "$name" wire "$m" "$rw" fio --rw="rand$rw" --iodepth="$d"
			done <<<"$list"
			nvmf_disconnect >/dev/null 2>&1 || echo "# $name: nvme disconnect failed"
		done
		nvmf_teardown >/dev/null 2>&1
		topo_cleanup
	done
done

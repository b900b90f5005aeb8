#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make bench: the same perftest commands on softrc and on Linux rdma_rxe,
# each in its own VM boot of the same size (tools/testing/vm/run.sh, BENCH_SMP
# vCPUs, BENCH_MEM MB), on two paths (tools/bench/guest.sh): loopback (one
# device, client and server on it) and wire (softrc: two devices across a
# veth in two netns; rxe, which cannot use a netns in 6.1: the
# policy-routing topology of tools/vectors/capture.sh). Prints one table
# per path with softrc/rxe ratios. Bandwidths are MB/s, rates Mpps,
# latencies usec (t_typical and p99 at 2 B; for them a ratio below 1 is
# better). Then the cost curves (tools/bench/curves.py; BENCH_CURVES=0
# leaves them out), on BENCH_CURVE_PATHS (default wire), one run a point
# in each boot: bandwidth against message size (64 B to 1 MiB) for
# WRITE, READ and SEND, the 64 B message rate and the kernel memory of
# one QP (tools/bench/qpmem) against the number of QPs (1 to 4096),
# latency at 4 KiB, as tables and as
# build/bench/{bandwidth,qps,qpmem,latency}.{svg,png}. BENCH_MEM (MB,
# default 6144) must hold 4096 QPs on each of two devices.
# Under QEMU TCG consecutive runs of one command differ by up to a half,
# for either driver, so each number is the median of BENCH_RUNS runs
# (default 3) in each of BENCH_ROUNDS boots per driver (default 2), the
# drivers' boots alternating; every run is in build/bench/BOOT.ROUND.log
# and the table says how many runs each median has. A run that fails (an
# exit status, a timeout after BENCH_RUN_TIMEOUT s (default 120 times
# BENCH_N, scaled to the guest's speed), no result, a rate of 0) is reported in the log
# ("# FAILED", with its output) and run again; if it fails again it is
# counted in the table's failed column, listed under the tables, and in
# no median (FAILED where every run failed). The WRITE and SEND rows
# also show the responders' ACKs per message (guest.sh). BENCH_N multiplies
# the iteration counts; BENCH_DRIVERS="softrc rxe"; BENCH_ONLY="write_lat
# ..." and BENCH_PATHS="wire" run a subset.
# NVMe-oF: each round also boots each driver once more, BENCH_NVME_SMP
# vCPUs (default 8: nvme-rdma makes at most one I/O queue a CPU), for
# tools/bench/nvme.sh: nvme-rdma to nvmet-rdma on the wire path (init_net,
# a null_blk namespace), fio 4 KiB random read and write IOPS with 2 and
# 8 I/O queues at queue depth 1, 16 and 128 (per queue), BENCH_RUNS runs
# each, failures as above (their logs: build/bench/BOOT-nvme.ROUND.log);
# table.py prints their table after the others. BENCH_NVME=0 leaves them out, and so do BENCH_CLOCK=icount, a
# BENCH_PATHS without wire and a BENCH_ONLY without an nvme_* metric;
# BENCH_ONLY=nvme runs them alone (no perftest boots).
# rdma_cm: after the rounds, tools/bench/bench-cm.sh times connection
# setup and teardown on the wire path, softrc and rxe each in one more
# boot (cm_verify: BENCH_CM_NS concurrent connections, default 1024,
# every one moving verified data; CMSCALE_RUNS runs, default 3, and
# cmtime's step breakdown); its table follows the others, its logs are
# in build/bench/cm, its runs go to runs.txt as cm_connect_ms_N and
# cm_disconnect_ms_N. BENCH_CM=0 leaves it out, and so do an A/B,
# BENCH_CLOCK=icount, a BENCH_PATHS without wire and a BENCH_ONLY without
# a cm_* metric; BENCH_ONLY=cm runs it alone.
# A/B of two softrc builds: BENCH_BASE_KO=path/to/other/softrc.ko adds a
# driver "softrc-base" (that module, same commands) and a
# softrc/softrc-base column: BENCH_DRIVERS defaults to all three then.
# The two builds share each boot, taking turns run by run (guest.sh
# BENCH_KOS): a ratio of two boots' medians moves by more than 10 % on
# TCG noise alone. The A/B column gives the ratio of the medians and a
# bootstrap 90 % interval of it.
# BENCH_CLOCK=icount: instead of wall time, one vCPU whose clock is its
# instruction count (tools/testing/vm/run.sh SOFTRC_VM_ACCEL=icount: 8 ns per
# guest instruction). Every number is then a cost in instructions,
# independent of the host's speed: repeated runs agree to about 1 %,
# where wall-time runs differ by a factor of two. It is the measure for
# an A/B of two builds; it has no write_lat row (see guest.sh), and it
# counts instructions, not cycles (a string copy once per repetition).
# BENCH_KO_PARAMS="icrc_impl=fold ..." loads every softrc module with
# those parameters: under icount the load-time timing picks the CRC and
# copy of real hardware (pclmul, memcpy: an instruction each), so an
# icount A/B of what TCG in wall time runs (the fold, the word copy)
# forces them.
# SOFTRC_KVER=SERIES (make bench KVER=SERIES) boots that kernel series for
# both drivers, softrc from build/SERIES/mod (make KVER=SERIES) and that
# kernel's own rdma_rxe; its output goes to build/bench-SERIES (6.1's to
# build/bench).
set -u
cd "$(dirname "$0")/../.." || exit 1
base_ko=${BENCH_BASE_KO:+$(realpath "$BENCH_BASE_KO")}
if [ -n "$base_ko" ]; then
	[ -f "$base_ko" ] || { echo "bench: no module at $BENCH_BASE_KO" >&2; exit 1; }
	drivers=${BENCH_DRIVERS:-softrc softrc-base rxe}
else
	drivers=${BENCH_DRIVERS:-softrc rxe}
fi
series=${SOFTRC_KVER:-6.1}
if [ "$series" = 6.1 ]; then
	ko=drivers/infiniband/sw/softrc/softrc.ko out=build/bench
else
	ko=build/$series/mod/drivers/infiniband/sw/softrc/softrc.ko out=build/bench-$series
fi
[ -f "$ko" ] || { echo "bench: no $ko (make KVER=$series)" >&2; exit 1; }
ko=$(realpath "$ko")
clock=${BENCH_CLOCK:-wall} smp=${BENCH_SMP:-2} accel=${SOFTRC_VM_ACCEL:-}
case $clock in
wall) ;;
icount) smp=1 accel=icount ;;
*) echo "bench: BENCH_CLOCK must be wall or icount" >&2; exit 1 ;;
esac
mkdir -p "$out"
rm -f "$out"/*.log "$out"/*.txt

# the boots: softrc builds together in one, rxe in its own
boots=() kos=
for d in $drivers; do
	case $d in
	softrc) kos+=" softrc=$ko" ;;
	softrc-base) kos+=" softrc-base=$base_ko" ;;
	*) boots+=("$d") ;;
	esac
done
[ -n "$kos" ] && boots=(softrc "${boots[@]}")
: >"$out/runs.txt"

# which boots: the perftest ones unless BENCH_ONLY names NVMe-oF or
# rdma_cm metrics alone; the NVMe-oF ones unless BENCH_NVME=0,
# BENCH_CLOCK=icount, BENCH_PATHS without wire or a BENCH_ONLY without an
# NVMe-oF metric; the rdma_cm ones likewise (BENCH_CM=0, cm_*), and not
# in an A/B
perf=1 nvme=1 cm=1
if [ -n "${BENCH_ONLY:-}" ]; then
	perf=0 nvme=0 cm=0
	for m in $BENCH_ONLY; do
		case $m in
		nvme*) nvme=1 ;;
		cm*) cm=1 ;;
		*) perf=1 ;;
		esac
	done
fi
wall_wire=0
[ "$clock" = wall ] && [[ " ${BENCH_PATHS:-wire} " == *" wire "* ]] && wall_wire=1
[ "${BENCH_NVME:-1}" != 0 ] && [ "$wall_wire" = 1 ] || nvme=0
[ "${BENCH_CM:-1}" != 0 ] && [ "$wall_wire" = 1 ] && [ -z "$base_ko" ] || cm=0

# runs_of LOG: LOG's "BENCH driver path metric value" lines into runs.txt
runs_of() {
	sed -n 's/^BENCH \([a-z-]*\) \([a-z]*\) \([a-zA-Z0-9_]*\) \([0-9.a-z]*\)\r\{0,1\}$/\1 \2 \3 \4/p' \
		"$1" >>"$out/runs.txt"
}

# vm BOOT ROUND SMP SCRIPT LOG: one boot for BOOT's driver(s), SCRIPT in
# it; its BENCH lines into runs.txt
vm() {
	local env=()
	echo "bench: $1 (${4##*/}), boot $2 ..." >&2
	[ "$1" = softrc ] && env=(--env BENCH_KOS="${kos# }")
	SOFTRC_KVER=$series SOFTRC_VM_ACCEL=$accel tools/testing/vm/run.sh --timeout "${BENCH_TIMEOUT:-1200}" --smp "$3" \
		--mem "${BENCH_MEM:-6144}" --env SOFTRC_DRIVER="$1" "${env[@]}" \
		--env BENCH_CLOCK="$clock" \
		--env BENCH_N="${BENCH_N:-1}" --env BENCH_RUNS="${BENCH_RUNS:-3}" \
		${BENCH_RUN_TIMEOUT:+--env BENCH_RUN_TIMEOUT="$BENCH_RUN_TIMEOUT"} \
		${BENCH_KO_PARAMS:+--env SOFTRC_KO_PARAMS="$BENCH_KO_PARAMS"} \
		--env BENCH_CURVES="${BENCH_CURVES:-1}" \
		--env BENCH_CURVE_PATHS="${BENCH_CURVE_PATHS:-wire}" \
		${BENCH_ONLY:+--env BENCH_ONLY="$BENCH_ONLY"} \
		${BENCH_PATHS:+--env BENCH_PATHS="$BENCH_PATHS"} \
		-- "$4" >"$5" 2>&1 ||
		echo "bench: the $1 run failed (status $?), see $5" >&2
	runs_of "$5"
}

for ((round = 1; round <= ${BENCH_ROUNDS:-2}; round++)); do
	if [ "$perf" = 1 ]; then
		for boot in "${boots[@]}"; do
			vm "$boot" "$round" "$smp" tools/bench/guest.sh "$out/$boot.$round.log"
		done
	fi
	if [ "$nvme" = 1 ]; then
		for boot in "${boots[@]}"; do
			vm "$boot" "$round" "${BENCH_NVME_SMP:-8}" tools/bench/nvme.sh "$out/$boot-nvme.$round.log"
		done
	fi
done

# rdma_cm connection setup and teardown: bench-cm.sh boots each driver
# once more and prints its table; its runs join runs.txt
if [ "$cm" = 1 ]; then
	SOFTRC_KVER=$series BENCH_CM_DRIVERS="$drivers" \
		CMSCALE_NS="${BENCH_CM_NS:-1024}" tools/bench/bench-cm.sh >"$out/cm-table.txt" ||
		echo "bench: make bench-cm failed (status $?), see $out/cm" >&2
	for d in $drivers; do
		[ -f "$out/cm/cm.$d.log" ] && runs_of "$out/cm/cm.$d.log"
	done
fi

# the tables (tools/bench/table.py)
# shellcheck disable=SC2086 # one argument a driver
python3 tools/bench/table.py "$out" "$clock" $drivers
# the cost curves, when perftest ran: tables, and plots under build/bench/
# (gnuplot); their status is the script's
rc=0
if [ "${BENCH_CURVES:-1}" != 0 ] && [ "$perf" = 1 ]; then
	# shellcheck disable=SC2086 # one argument a driver
	python3 tools/bench/curves.py "$out" $drivers || rc=$?
fi
if [ "$cm" = 1 ]; then
	cat "$out/cm-table.txt"
fi
exit "$rc"

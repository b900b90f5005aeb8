#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host self-test of make bench's host and parsing tools, in KTAP:
# tools/bench/curves.py (the cost curves): from a made-up runs.txt whose
# medians and ratios are known, the tables must show those numbers, the
# data files the plotted values, and gnuplot (when installed) must render
# the three plots; tools/bench/table.py (the per-path tables): failed and
# 0 runs are counted and reported, never a median's value, a metric
# whose every run failed reads FAILED, ACKs per message are shown;
# tools/bench/result.sh (a perftest run's numbers, guest.sh): a 0, an
# inf, a missing result row are failures, with the reason; fio's JSON
# report (nvme.sh, fio_iops): the jobs' IOPS, and a 0, a job's error, no
# report are failures; table.py's NVMe-oF table: medians, a failed run
# counted, a metric whose every run failed, fewer queues than asked.
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
dir=$(mktemp -d "${TMPDIR:-/tmp}/softrc-curves.XXXXXX")
trap 'rm -rf "$dir"' EXIT
n=0 fail=0
t() { # NAME CMD...
	local name=$1
	shift
	n=$((n + 1))
	if "$@" >/dev/null 2>&1; then
		echo "ok $n $name"
	else
		echo "not ok $n $name"
		fail=$((fail + 1))
	fi
}

# softrc's runs 1, 2 and 90 (median 2), rxe's one run 0.5 and one 0
# that must be dropped (perftest's impossible 0; kept, the median would
# be 0.25): ratio 4.00;
# latency softrc 3 (p99 6), rxe 4 (p99 12): ratios 0.75 and 0.50
{
	for s in 64 256 1024 4096 16384 65536 262144 1048576; do
		for op in write read send; do
			for v in 1 2 90; do
				echo "softrc wire curve_${op}_bw_$s $v"
			done
			printf 'rxe wire curve_%s_bw_%s 0.5\nrxe wire curve_%s_bw_%s 0.00\n' \
				"$op" "$s" "$op" "$s"
		done
	done
	for q in 1 8 64 256 1024; do
		printf 'softrc wire curve_rate_q%s 0.02\nrxe wire curve_rate_q%s 0.01\n' "$q" "$q"
		printf 'softrc wire qp_kernel_kib_q%s 200\nrxe wire qp_kernel_kib_q%s 140\n' "$q" "$q"
	done
	printf 'softrc wire curve_rate_q4096 0.016\nrxe wire curve_rate_q4096 0.01\n'
	printf 'softrc wire qp_kernel_kib_q4096 201.5\nrxe wire qp_kernel_kib_q4096 nan\n'
	for m in write_lat send_lat read_lat write_lat_4k send_lat_4k read_lat_4k; do
		printf 'softrc wire %s 3\nsoftrc wire %s_p99 6\n' "$m" "$m"
		printf 'rxe wire %s 4\nrxe wire %s_p99 12\n' "$m" "$m"
	done
	echo "softrc wire qp_kernel_kib 123.4"
	echo "rxe wire qp_kernel_kib nan"
	echo "softrc wire curve_rate_q8 failed"
	echo "softrc wire write_bw_64k 5"
} >"$dir/runs.txt"

echo "TAP version 13"
echo "1..37"
python3 "$here/curves.py" "$dir" softrc rxe >"$dir/out.txt" 2>&1
t "curves.py runs" test -s "$dir/out.txt"
t "bandwidth row: medians 2 and 0.5 (a 0 run dropped), ratio 4.00 for each op" \
	grep -Eq '^ +1M( +2\.00 +0\.50){3}( +4\.00){3}$' "$dir/out.txt"
t "QP rate row: 20 and 10 kpps, ratio 2.00, both at 1.00 of 8 QPs, 200 and 140 KiB" \
	grep -Eq '^ +256 +20\.00 +10\.00 +2\.00 +1\.00 +1\.00 +200\.0 +140\.0$' "$dir/out.txt"
t "4096 QPs: softrc at 0.80 of its 8-QP rate, rxe's memory run failed" \
	grep -Eq '^ +4096 +16\.00 +10\.00 +1\.60 +0\.80 +1\.00 +201\.5 +FAILED$' "$dir/out.txt"
t "latency row: typical and p99 ratios 0.75 and 0.50" \
	grep -Eq '^ +read_lat +4KiB +3\.00 +6\.00 +4\.00 +12\.00 +0\.75 +0\.50$' "$dir/out.txt"
t "QP memory: softrc 123.4 KiB, rxe's one run failed (nan)" \
	grep -Eq 'KiB.*softrc 123\.4 rxe FAILED$' "$dir/out.txt"
t "plot data: the 64 B row holds every op's medians" \
	grep -Eq '^64( 2 0\.5){3}$' "$dir/curves/bw.wire.dat"
if command -v gnuplot >/dev/null; then
	t "gnuplot renders bandwidth, qps, qpmem and latency (SVG and PNG)" \
		bash -c "cd '$dir' && for p in bandwidth qps qpmem latency; do
			grep -q '<svg' \$p.svg && [ -s \$p.png ] || exit 1; done"
else
	n=$((n + 1))
	echo "ok $n gnuplot renders the plots # SKIP no gnuplot"
fi
# a sweep with a hole (BENCH_ONLY, a failed run) gets tables, no plots
grep -v 'curve_read_bw_4096' "$dir/runs.txt" >"$dir/runs.new" && mv "$dir/runs.new" "$dir/runs.txt"
rm -f "$dir"/*.svg
python3 "$here/curves.py" "$dir" softrc rxe >"$dir/out.txt" 2>&1
t "an incomplete sweep: tables, and no plots" bash -c \
	"grep -q 'no plots, points without a run: 1 ' '$dir/out.txt' && grep -Eq '^ +4K +2\.00 +0\.50 +- +- ' '$dir/out.txt' && ! ls '$dir'/*.svg"

# table.py: softrc's atomic runs 50, 60, 70 kpps and one that failed
# twice (guest.sh's "failed") after one that passed on its retry; rxe's
# 40 and 20 and a 0 (perftest's report without a clock: result.sh), whose
# median must be 30, not 20; softrc's 4 KiB WRITE failed in both runs,
# rxe's is 40 MB/s; ACKs per message 1, 0.5, 0.25 (softrc) and 1 (rxe);
# softrc's 64 KiB WRITE: no ACKs, AckReq probes 0.01 and 0.02 a message
mkdir -p "$dir/t"
{
	printf 'softrc wire atomic_rate %s\n' 0.05 0.06 retried 0.07 failed
	printf 'rxe wire atomic_rate %s\n' 0.04 0.000000 0.02
	printf 'softrc wire write_bw_4k %s\n' failed failed
	printf 'softrc wire write_bw_4k_ackpm %s\n' 1.000 0.500 0.250
	printf 'rxe wire write_bw_4k %s\n' 40.0
	printf 'rxe wire write_bw_4k_ackpm %s\n' 1.000
	printf 'softrc wire write_bw_64k %s\n' 200 300
	printf 'softrc wire write_bw_64k_ackpm %s\n' 0.000 0.000
	printf 'softrc wire write_bw_64k_probepm %s\n' 0.010 0.020
	printf 'rxe wire write_bw_64k %s\n' 100 100
} >"$dir/t/runs.txt"
python3 "$here/table.py" "$dir/t" wall softrc rxe >"$dir/t/out.txt" 2>&1
rc=$?
t "table.py runs (status 0), a table for the wire path only" bash -c \
	"[ $rc = 0 ] && grep -q '^wire path' '$dir/t/out.txt' && ! grep -q '^loop path' '$dir/t/out.txt'"
t "table: a failed and a 0 run in no median (60 and 30 kpps, ratio 2.00), counted (runs 3/2, failed 1/1)" \
	grep -Eq '^ +atomic_rate +kpps +60\.00 +30\.00 +2\.00 +-/- +-/- +3/2 +1/1 ' "$dir/t/out.txt"
t "table: a metric whose every run failed reads FAILED, and so does its ratio" \
	grep -Eq '^ +write_bw_4k +MB/s +FAILED +40\.00 +FAILED +0\.500/1\.000 +-/- +0/1 +2/0 ' "$dir/t/out.txt"
t "table: ACKs and AckReq probes per message, 0 a real value" bash -c \
	"grep -Eq '^ +metric .* ACKs/msg +probes/msg +runs' '$dir/t/out.txt' &&
	 grep -Eq '^ +write_bw_64k +MB/s +250\.00 +100\.00 +2\.50 +0\.000/- +0\.015/- +2/2 +0/0 ' '$dir/t/out.txt'"
t "table: the failed runs listed, with the retry" bash -c \
	"grep -q '^  softrc wire atomic_rate: 4 runs, 1 failed, 1 passed on a retry$' '$dir/t/out.txt' &&
	 grep -q '^  rxe wire atomic_rate: 3 runs, 1 failed$' '$dir/t/out.txt' &&
	 grep -q '^  softrc wire write_bw_4k: 2 runs, 2 failed$' '$dir/t/out.txt'"

# result.sh: perftest client outputs, as 4.5 prints them
bw_out() { # MSGRATE [extra stderr line]
	[ -z "${2:-}" ] || echo "$2"
	printf '%s\n' '---------------------------------------------------------------------------------------' \
		'                    Atomic FETCH_AND_ADD BW Test' \
		' Number of qps   : 1		Transport type : IB' \
		' local address: LID 0000 QPN 0x0011 PSN 0x3a1b4c' \
		' GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:00:00:01' \
		' #bytes     #iterations    BW peak[MB/sec]    BW average[MB/sec]   MsgRate[Mpps]'
	printf ' %-7s    %-10s       %-7s            %-7s\t\t   %-7s\n' 8 1000 "$3" "$3" "$1"
}
values_are() { # WANT COLS: bench_values on stdin succeeds with WANT
	local got
	got=$(bench_values "$2") && [ "$got" = "$1" ]
}
fails_with() { # ERE COLS: bench_values on stdin fails, its reason matching ERE
	local got
	! got=$(bench_values "$2") && grep -Eq "$1" <<<"$got"
}
t "result.sh: an atomic run's rate, column 5" \
	bash -c ". '$here/result.sh'; $(declare -f bw_out values_are); bw_out 0.037061 '' 0.30 | values_are 0.037061 5"
t "result.sh: a rate of 0 fails, and says perftest measured no clock" \
	bash -c ". '$here/result.sh'; $(declare -f bw_out fails_with)
		bw_out 0.000000 'Correlation coefficient r^2: 0.41 < 0.9' 0.00 | fails_with 'not a positive number.*CPU clock' 5"
t "result.sh: a bandwidth of 0.00 fails" \
	bash -c ". '$here/result.sh'; $(declare -f bw_out fails_with); bw_out 0.000000 '' 0.00 | fails_with '^column 4 .*\"0\\.00\"' 4"
t "result.sh: a latency row's t_typical and p99" \
	bash -c ". '$here/result.sh'; $(declare -f values_are)
		printf ' #bytes #iterations    t_min[usec]\n 2       500          10.52        190.21      14.37  \t       17.01     \t9.92\t\t116.21 \t\t190.21\n' |
		values_are '14.37 116.21' 5,8"
t "result.sh: an inf latency fails" \
	bash -c ". '$here/result.sh'; $(declare -f fails_with)
		printf ' 2       500          inf        inf      inf  \t       inf     \t-nan\t\tinf \t\tinf\n' | fails_with '\"inf\"' 5,8"
t "result.sh: no result row fails" \
	bash -c ". '$here/result.sh'; $(declare -f fails_with)
		printf ' Couldn'\\''t connect to 10.0.0.2:18515\n' | fails_with '^no result row' 4"
t "result.sh: a missing column fails" \
	bash -c ". '$here/result.sh'; $(declare -f bw_out fails_with); bw_out 0.037061 '' 0.30 | fails_with 'column 9 .*\"\"' 9"

# b (result.sh): the run, its check and its retry, with stubs for the
# guest's bench_pair (client outputs $dir/b/out.1, out.2, ... in turn; no
# file: the client exited 1) and acks_now (2000 more ACKs at each call)
mkdir -p "$dir/b"
cat >"$dir/b/stubs.sh" <<EOF
. '$here/result.sh'
$(declare -f bw_out)
pair_n=0
bench_pair() {
	pair_n=\$((pair_n + 1))
	RUN_SRV="server says bye" RUN_WHY=
	RUN_OUT=\$(cat "$dir/b/out.\$pair_n" 2>/dev/null) || RUN_WHY="the client exited with status 1"
	[ -z "\$RUN_WHY" ]
}
acks_now() {
	local a
	a=\$(cat "$dir/b/acks")
	echo \$((a + 2000)) >"$dir/b/acks"
	echo "\$a -"
}
EOF
bw_out 0.000000 'Correlation coefficient r^2: 0.41 < 0.9' 0.00 >"$dir/b/out.1"
bw_out 0.019471 '' 81.42 >"$dir/b/out.2"
echo 0 >"$dir/b/acks"
bash -c ". '$dir/b/stubs.sh'; b softrc wire write_bw_4k 4 ib_write_bw -s 4096 -n 4000" >"$dir/b/retry.txt" 2>&1
t "b: a run with a rate of 0 is reported, with perftest's complaint" bash -c \
	"grep -q '^# FAILED softrc wire write_bw_4k (try 1 of 2): column 4 .*CPU clock.*: ib_write_bw -s 4096 -n 4000$' '$dir/b/retry.txt' &&
	 grep -q '^#   Correlation coefficient' '$dir/b/retry.txt' && grep -q '^#   server: server says bye$' '$dir/b/retry.txt'"
t "b: ... and run again: its second run's value, marked retried, 2000 ACKs over its 1000 messages" bash -c \
	"[ \"\$(grep ^BENCH '$dir/b/retry.txt')\" = 'BENCH softrc wire write_bw_4k 81.42
BENCH softrc wire write_bw_4k retried
BENCH softrc wire write_bw_4k_ackpm 2.000' ]"
rm -f "$dir"/b/out.*
bash -c ". '$dir/b/stubs.sh'; b softrc wire atomic_rate 5 ib_atomic_bw -n 1000" >"$dir/b/fail.txt" 2>&1
t "b: a command that fails twice is reported twice and is 'failed', nothing else" bash -c \
	"[ \"\$(grep -c '^# FAILED softrc wire atomic_rate (try [12] of 2): the client exited with status 1: ib_atomic_bw -n 1000$' '$dir/b/fail.txt')\" = 2 ] &&
	 [ \"\$(grep ^BENCH '$dir/b/fail.txt')\" = 'BENCH softrc wire atomic_rate failed' ]"
printf ' #bytes #iterations    t_min[usec]\n 2       500          10.52        190.21      14.37  \t       17.01     \t9.92\t\t116.21 \t\t190.21\n' >"$dir/b/out.1"
bash -c ". '$dir/b/stubs.sh'; b rxe loop write_lat,write_lat_p99 5,8 ib_write_lat -s 2 -n 500" >"$dir/b/lat.txt" 2>&1
t "b: a latency row's two metrics, no ACK count" \
	bash -c "[ \"\$(cat '$dir/b/lat.txt')\" = 'BENCH rxe loop write_lat 14.37
BENCH rxe loop write_lat_p99 116.21' ]"

# fio_iops (result.sh): fio 3.33's JSON report, cut to what matters, of
# two jobs (nvme.sh: one a queue), after a line fio wrote first
fio_json() { # READ_IOPS WRITE_IOPS [ERROR]
	local i
	printf '%s\n' "note: a line fio wrote before its report" '{' \
		'  "fio version" : "fio-3.33",' '  "global options" : {' \
		'    "rw" : "randread",' '    "iodepth" : "16"' '  },' '  "jobs" : ['
	for i in 0 1; do
		printf '    {\n      "jobname" : "q%s",\n      "groupid" : 0,\n' "$i"
		printf '      "error" : %s,\n      "job options" : {\n' "${3:-0}"
		printf '        "cpus_allowed" : "%s"\n      },\n' "$i"
		printf '      "read" : {\n        "io_bytes" : 5136384,\n        "iops" : %s,\n' "$1"
		printf '        "runtime" : 5001\n      },\n'
		printf '      "write" : {\n        "io_bytes" : 0,\n        "iops" : %s,\n' "$2"
		printf '        "runtime" : 0\n      }\n    }%s\n' "$([ $i = 1 ] || echo ,)"
	done
	printf '%s\n' '  ],' '  "disk_util" : []' '}'
}
t "fio_iops: the read IOPS of the two jobs, summed, two decimals" \
	bash -c ". '$here/result.sh'; $(declare -f fio_json); [ \"\$(fio_json 250.804000 0.000000 | fio_iops read)\" = 501.61 ]"
t "fio_iops: a run that stalled (0.2 IOPS a job) is 0.40, not a rounded 0" \
	bash -c ". '$here/result.sh'; $(declare -f fio_json); [ \"\$(fio_json 0.199960 0.000000 | fio_iops read)\" = 0.40 ]"
t "fio_iops: a write IOPS of 0 fails, saying so" \
	bash -c ". '$here/result.sh'; $(declare -f fio_json)
		! out=\$(fio_json 250.8 0.000000 | fio_iops write) && [ \"\$out\" = 'write IOPS is 0, not a positive number' ]"
t "fio_iops: a job's error fails, with its errno's name" \
	bash -c ". '$here/result.sh'; $(declare -f fio_json)
		! out=\$(fio_json 250.8 0 5 | fio_iops read) && [ \"\$out\" = 'fio job q0 reports error 5 (Input/output error)' ]"
t "fio_iops: no JSON report (fio failed to start) fails" \
	bash -c ". '$here/result.sh'
		! out=\$(printf 'fio: failed opening /dev/nvme0n1\n' | fio_iops read) && [ \"\$out\" = 'no fio JSON report with jobs in the output' ]"

# b with fio_iops (nvme.sh): a run of 0 IOPS is reported with RUN_LOG
# (fio's stderr), not the JSON, and run again; the second passes
cat >"$dir/b/fio.sh" <<EOF
. '$here/result.sh'
$(declare -f fio_json)
BENCH_PARSE=fio_iops pair_n=0
bench_pair() {
	pair_n=\$((pair_n + 1))
	RUN_SRV='' RUN_WHY='' RUN_LOG="fio exit status 0
fio: io_u error on file /dev/nvme0n1: Input/output error"
	RUN_OUT=\$(if [ \$pair_n = 1 ]; then fio_json 0 0; else fio_json 700 0; fi)
}
EOF
bash -c ". '$dir/b/fio.sh'; b rxe wire nvme_read_q2_qd16 read fio --rw=randread --iodepth=16" >"$dir/b/fio.txt" 2>&1
t "b (fio): 0 IOPS reported with fio's complaint, not its JSON" bash -c \
	"grep -q '^# FAILED rxe wire nvme_read_q2_qd16 (try 1 of 2): read IOPS is 0, not a positive number: fio --rw=randread --iodepth=16$' '$dir/b/fio.txt' &&
	 grep -q '^#   fio: io_u error on file /dev/nvme0n1' '$dir/b/fio.txt' && ! grep -q 'jobname' '$dir/b/fio.txt'"
t "b (fio): ... and run again: its second run's IOPS, marked retried" bash -c \
	"[ \"\$(grep ^BENCH '$dir/b/fio.txt')\" = 'BENCH rxe wire nvme_read_q2_qd16 1400.00
BENCH rxe wire nvme_read_q2_qd16 retried' ]"

# table.py's NVMe-oF table: softrc's read q2 qd16 runs 3000, 1000, 2000
# and one failed, rxe's 1000 and 500 (medians 2000 and 750: ratio 2.67);
# softrc's write q8 qd128 failed in every run, rxe's 400; rxe got 2 of
# the 8 I/O queues it asked for
mkdir -p "$dir/n"
{
	printf 'softrc wire nvme_read_q2_qd16 %s\n' 3000 1000 failed 2000
	printf 'rxe wire nvme_read_q2_qd16 %s\n' 1000 500
	printf 'softrc wire nvme_write_q8_qd128 %s\n' failed failed
	printf 'rxe wire nvme_write_q8_qd128 %s\n' 400
	printf '%s wire nvme_q2_ioq 2\n' softrc rxe
	printf 'softrc wire nvme_q8_ioq 8\nrxe wire nvme_q8_ioq 2\n'
} >"$dir/n/runs.txt"
python3 "$here/table.py" "$dir/n" wall softrc rxe >"$dir/n/out.txt" 2>&1
rc=$?
t "NVMe-oF table: status 0, no path table, its two rows only" bash -c \
	"[ $rc = 0 ] && grep -q '^NVMe-oF, wire path' '$dir/n/out.txt' && ! grep -q '^wire path' '$dir/n/out.txt' &&
	 [ \"\$(grep -cE '^  rand(read|write) ' '$dir/n/out.txt')\" = 2 ]"
t "NVMe-oF table: medians 2000 and 750 IOPS, ratio 2.67, a failed run counted" \
	grep -Eq '^  randread +2 +16 IOPS +2000 +750 +2\.67 +3/2 +1/0 ' "$dir/n/out.txt"
t "NVMe-oF table: a metric whose every run failed reads FAILED, and is listed" bash -c \
	"grep -Eq '^  randwrite +8 +128 IOPS +FAILED +400 +FAILED +0/1 +2/0 ' '$dir/n/out.txt' &&
	 grep -q '^  softrc wire nvme_write_q8_qd128: 2 runs, 2 failed$' '$dir/n/out.txt'"
t "NVMe-oF table: fewer I/O queues than asked are named" \
	grep -q 'rxe 2 for 8$' "$dir/n/out.txt"
t "no NVMe-oF runs (BENCH_NVME=0): no NVMe-oF table" \
	bash -c "! grep -q NVMe '$dir/t/out.txt'"
[ "$fail" = 0 ]

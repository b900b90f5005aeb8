# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# One benchmark command's run, its check and its retry, for
# tools/bench/guest.sh and nvme.sh (in the guest) and
# tools/bench/curves-selftest.sh (on the host, with canned perftest and
# fio output). Sourced; defines bench_values, fio_iops, per_msg and b; b
# needs the caller's bench_pair and acks_now (guest.sh, nvme.sh).
#
# A run is good only when its result row holds a positive finite number
# in every column asked for. perftest 4.5 turns cycles into time with a
# clock rate it measures before each report (get_cpu_mhz(): 200 pairs of
# gettimeofday() and rdtsc, fitted by least squares). When the fit is
# poor (r^2 < 0.9: under QEMU TCG on a busy host, a vCPU descheduled
# during the sampling) it prints "Correlation coefficient r^2: ... <
# 0.9" on stderr and uses a rate of 0. Without -F a bandwidth test
# would stop there ("Can't produce a report", status 1); the bench
# passes -F (no warnings about CPU frequencies), which also lets the
# report go on, so every bandwidth and message rate of that run prints
# as 0, and a latency test (which never stops there) prints inf. That was the "atomic_rate 0.000000" and "curve_read_bw_16384
# 0.00" of the committed runs (Documentation/bench/): a run that did
# its work, with a report that measured nothing. It is no column mix-up:
# ib_atomic_bw's row has the same columns as the other bandwidth tests
# (#bytes #iterations peak average MsgRate), its rate in column 5.

# bench_values COLS: reads a perftest run's output (the client's) on
# stdin; prints the values of the comma-separated result columns COLS of
# its last result row, space-separated. When there is no result row, or
# one of those values is not a positive finite number, it prints why
# instead and returns 1.
bench_values() {
	awk -v cols="$1" '
	/Correlation coefficient r\^2/ { clock = 1 }
	/^ *[0-9]+ +[0-9]+ / { row = $0 }
	END {
		if (row == "") {
			print "no result row in the output"
			exit 1
		}
		n = split(cols, c, ",")
		split(row, f, " ")
		for (i = 1; i <= n; i++) {
			v = f[c[i]]
			if (v !~ /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ || v + 0 <= 0) {
				printf "column %s of the result row is \"%s\", not a positive number", c[i], v
				if (clock)
					printf " (perftest could not measure the CPU clock: r^2 < 0.9, so it reported with a clock rate of 0)"
				print ""
				exit 1
			}
			out = out (i > 1 ? " " : "") v
		}
		print out
	}'
}

# fio_iops RW: reads fio's output (--output-format=json, perhaps after
# lines fio wrote before its report) on stdin; prints the IOPS of
# direction RW (read or write) summed over its jobs, to two decimals (a
# run that stalled on an I/O timeout may do a few I/Os in all: 0.40, not
# a rounded 0). When there is no JSON report, a job reports an error,
# or the IOPS is not a positive number at that precision, it prints why
# instead and returns 1.
fio_iops() {
	python3 -c '
import json, math, os, sys


def fail(why):
    print(why)
    sys.exit(1)


text, rw = sys.stdin.read(), sys.argv[1]
start = 0 if text.startswith("{") else text.find("\n{") + 1
try:
    jobs = json.JSONDecoder().raw_decode(text[start:])[0]["jobs"]
except (ValueError, KeyError, TypeError, IndexError):
    jobs = None
if not jobs:
    fail("no fio JSON report with jobs in the output")
for j in jobs:
    e = j.get("error", 0)
    if e:
        fail("fio job %s reports error %d (%s)" % (j.get("jobname", "?"), e, os.strerror(e)))
try:
    v = sum(float(j[rw]["iops"]) for j in jobs)
except (KeyError, TypeError, ValueError):
    fail("no %s IOPS in the fio report" % rw)
if not (math.isfinite(v) and float("%.2f" % v) > 0):
    fail("%s IOPS is %g, not a positive number" % (rw, v))
print("%.2f" % v)' "$1"
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
# host (bench.sh) takes the medians. The caller's bench_pair TOOL ARGS...
# runs the pair, setting RUN_OUT (the client's output), RUN_SRV (the
# server's) and RUN_WHY (why it failed, if it did); its acks_now prints
# "ACKS PROBES" sent so far, or "-" for either. BENCH_PARSE names the
# function that reads RUN_OUT into values, COLUMNS its argument
# (bench_values, the default, or fio_iops: nvme.sh); RUN_LOG, when
# bench_pair sets it, is what a failure shows instead of RUN_OUT. A run
# that fails (a side's exit status, a timeout, no result row, a value
# that is not a positive number: bench_values) is reported, "# FAILED
# ..." with the tail of its output, and run once more; when that fails
# too, each metric gets the value "failed" (counted, never a median's
# value); when it passes, "retried" as well. A WRITE or SEND bandwidth or rate row also
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
			out=$(printf '%s\n' "$RUN_OUT" | "${BENCH_PARSE:-bench_values}" "$cols") ||
				RUN_WHY=$out
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
		# client's complaints first (5 at most), then the rest of the
		# last 8 lines of its output
		printf '%s\n' "${RUN_LOG:-$RUN_OUT}" | grep . | awk '
			tolower($0) ~ /error|fail|couldn|unable|correlation/ && n < 5 {
				print; n++; seen[$0] = 1
			}
			{ last[NR % 8] = $0 }
			END {
				for (i = NR > 8 ? NR - 7 : 1; i <= NR; i++)
					if (!(last[i % 8] in seen))
						print last[i % 8]
			}' | sed 's/^/#   /'
		printf '%s\n' "$RUN_SRV" | grep . | tail -4 | sed 's/^/#   server: /'
	done
	for i in "${!m[@]}"; do
		echo "BENCH $drv $path ${m[i]} failed"
	done
}

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Reading one perftest run's numbers, for tools/bench/guest.sh (in the
# guest) and tools/bench/curves-selftest.sh (on the host, from canned
# output). Sourced; defines bench_values.
#
# A run is good only when its result row holds a positive finite number
# in every column asked for. perftest 4.5 turns cycles into time with a
# clock rate it measures before each report (get_cpu_mhz(): 200 pairs of
# gettimeofday() and rdtsc, fitted by least squares). When the fit is
# poor (r^2 < 0.9: under QEMU TCG on a busy host, a vCPU descheduled
# during the sampling) it prints "Correlation coefficient r^2: ... <
# 0.9" on stderr and uses a rate of 0; -F (which the bench needs: TCG
# has no cpufreq governor to check) keeps it from failing then, so every
# bandwidth and message rate of that run prints as 0 and every latency
# as inf. That was the "atomic_rate 0.000000" and "curve_read_bw_16384
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

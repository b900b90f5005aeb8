# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The benchmark's perftest commands, one a line: "metric column tool
# args", for tools/bench/guest.sh (make bench) and profile-guest.sh
# (make bench-profile). Sourced in the guest; sets $commands.

n=${BENCH_N:-1}
# metric column tool args: bw columns are #bytes #iter peak avg[MB/s]
# rate[Mpps]; lat: ... t_typical(5). At least ~50 MB per bandwidth run:
# shorter runs are mostly noise.
commands="write_bw_64k 4 ib_write_bw -s 65536 -n $((800 * n))
write_bw_4k 4 ib_write_bw -s 4096 -n $((4000 * n))
read_bw_64k 4 ib_read_bw -s 65536 -n $((800 * n))
read_bw_4k 4 ib_read_bw -s 4096 -n $((4000 * n))
send_bw_64k 4 ib_send_bw -s 65536 -n $((800 * n))
send_bw_4k 4 ib_send_bw -s 4096 -n $((4000 * n))
msg_rate_64B_q8 5 ib_write_bw -s 64 -q 8 -n $((500 * n))
atomic_rate 5 ib_atomic_bw -n $((1000 * n))
write_lat 5 ib_write_lat -s 8 -n $((500 * n))
send_lat 5 ib_send_lat -s 8 -n $((500 * n))
read_lat 5 ib_read_lat -s 8 -n $((500 * n))"

# BENCH_CLOCK=icount (bench.sh: one vCPU, time counted in instructions):
# the SEND tests wait for completions by events, so that the vCPU runs
# the sender and receiver in turn; ib_write_lat has no events mode and
# two pollers on one vCPU measure the scheduler's tick, so it is left out.
if [ "${BENCH_CLOCK:-}" = icount ]; then
	commands=$(printf '%s\n' "$commands" | grep -v '^write_lat ' |
		sed 's/ ib_send_\(bw\|lat\) / ib_send_\1 -e /')
fi

# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The benchmark's perftest commands, one a line: "metric column tool
# args", for tools/bench/guest.sh (make bench) and profile-guest.sh
# (make bench-profile). Sourced in the guest; sets $commands (the table)
# and $curves (make bench's cost curves, tools/bench/curves.py). A line
# may read several columns of the one run: "m1,m2 c1,c2 tool args".

n=${BENCH_N:-1}
# the QP counts of the rate and memory curves (curves.py's QPS)
BENCH_QPS="1 8 64 256 1024 4096"
# metric column tool args: bw columns are #bytes #iter peak avg[MB/s]
# rate[Mpps]; lat: ... t_typical(5) ... 99% percentile(8). At least
# ~50 MB per bandwidth run: shorter runs are mostly noise.
commands="write_bw_64k 4 ib_write_bw -s 65536 -n $((800 * n))
write_bw_4k 4 ib_write_bw -s 4096 -n $((4000 * n))
read_bw_64k 4 ib_read_bw -s 65536 -n $((800 * n))
read_bw_4k 4 ib_read_bw -s 4096 -n $((4000 * n))
send_bw_64k 4 ib_send_bw -s 65536 -n $((800 * n))
send_bw_4k 4 ib_send_bw -s 4096 -n $((4000 * n))
msg_rate_64B_q8 5 ib_write_bw -s 64 -q 8 -n $((500 * n))
atomic_rate 5 ib_atomic_bw -n $((1000 * n))
write_lat,write_lat_p99 5,8 ib_write_lat -s 2 -n $((500 * n))
send_lat,send_lat_p99 5,8 ib_send_lat -s 2 -n $((500 * n))
read_lat,read_lat_p99 5,8 ib_read_lat -s 2 -n $((500 * n))"

# The cost curves: bandwidth against message size (64 B to 1 MiB, 32 MiB
# a point, 200 to 8000 messages), the 64 B message rate against the
# number of QPs (about 4000 messages in all, at least 20 a QP), latency
# (typical and p99) at 4 KiB. One run a point per boot. perftest's CQ
# holds the send depth of every QP and neither driver allows a CQ over
# 32767 entries, so the send depth (-t) is at most 32000 / QPs: 7 at
# 4096 QPs (perftest also lowers it to the iterations, 20 from 256 QPs).
curves=
for op in write read send; do
	for s in 64 256 1024 4096 16384 65536 262144 1048576; do
		i=$((32 * 1048576 / s))
		i=$((i < 200 ? 200 : i > 8000 ? 8000 : i))
		curves+="curve_${op}_bw_$s 4 ib_${op}_bw -s $s -n $((i * n))"$'\n'
	done
done
for q in $BENCH_QPS; do
	i=$((4000 / q < 20 ? 20 : 4000 / q))
	t=$((32000 / q > 128 ? 128 : 32000 / q))
	curves+="curve_rate_q$q 5 ib_write_bw -s 64 -q $q -t $t -n $((i * n))"$'\n'
done
for op in write send read; do
	curves+="${op}_lat_4k,${op}_lat_4k_p99 5,8 ib_${op}_lat -s 4096 -n $((500 * n))"$'\n'
done

# BENCH_CLOCK=icount (bench.sh: one vCPU, time counted in instructions):
# the SEND tests wait for completions by events, so that the vCPU runs
# the sender and receiver in turn; ib_write_lat has no events mode and
# two pollers on one vCPU measure the scheduler's tick, so it is left out.
one_vcpu() {
	printf '%s\n' "$1" | grep -v '^write_lat' |
		sed 's/ ib_send_\(bw\|lat\) / ib_send_\1 -e /'
}
if [ "${BENCH_CLOCK:-}" = icount ]; then
	commands=$(one_vcpu "$commands")
	curves=$(one_vcpu "$curves")
fi

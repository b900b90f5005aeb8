#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The payload loops of crc.c: the CRC of the ICRC (icrc_impl) and the
# receive copy (copy_impl): the module parameters, the choice at load,
# and traffic with each implementation forced (a wrong ICRC would drop
# every data packet and the pingpong would time out; rx_bad_icrc must
# stay 0; rc_verify checks every byte the copy placed). Interop with
# rxe (interop.sh) cross-checks the ICRC against another implementation.
#
# Topology (selftests/verbs/topo.sh): wire, two netns joined by a veth.
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
SOFTRC_DRIVER=softrc

trap topo_cleanup EXIT

ktap_header icrc

param() { cat /sys/module/softrc/parameters/icrc_impl; }

# bad_icrc DEV: the device's rx_bad_icrc counter
bad_icrc() {
	rdma statistic show link "$1"/1 | tr ' ' '\n' |
		sed -n '/^rx_bad_icrc$/{n;p}'
}

softrc_deps
check_fails "icrc_impl=bogus refuses to load" insmod "$SOFTRC_KO" icrc_impl=bogus
check "auto: loads" insmod "$SOFTRC_KO"
check "auto: reads back crypto or table" bash -c '[[ "$(cat /sys/module/softrc/parameters/icrc_impl)" =~ ^(crypto|table)$ ]]'
check "auto: both timed and the choice logged" bash -c \
	'dmesg | grep -q "softrc: icrc: crc32.* ns, crc32_le .* ns per 4 KiB" &&
	 dmesg | grep -q "softrc: icrc: payload CRC by"'
softrc_unload

for impl in crypto table; do
	if ! check "$impl: loads" insmod "$SOFTRC_KO" icrc_impl=$impl; then
		continue
	fi
	check "$impl: reads back $impl" bash -c "[ \"\$(cat /sys/module/softrc/parameters/icrc_impl)\" = $impl ]"
	if topo_up wire; then
		# SENDs from user memory go out as page fragments (CRC over
		# the pages), small ones copied; READ responses too
		pp_pair "$impl: ibv_rc_pingpong 64 KiB, mtu 4096" \
			ibv_rc_pingpong -m 4096 -s 65536 -n 20
		pp_pair "$impl: ibv_rc_pingpong 100 B, mtu 1024" \
			ibv_rc_pingpong -m 1024 -s 100 -n 20
		pp_pair "$impl: ib_read_bw 1 MiB" ib_read_bw -s 1048576 -n 5 -F -u 18
		check "$impl: rx_bad_icrc 0 on both devices" \
			test "$(bad_icrc "$DEV_A")/$(bad_icrc "$DEV_B")" = 0/0
	else
		not_ok "$impl: topology up"
	fi
	topo_down
	softrc_unload
done

# the receive copy (copy_impl): every byte checked by rc_verify
cparam() { cat /sys/module/softrc/parameters/copy_impl; }
check_fails "copy_impl=bogus refuses to load" insmod "$SOFTRC_KO" copy_impl=bogus
check "copy auto: loads" insmod "$SOFTRC_KO"
check "copy auto: reads back memcpy or words" bash -c '[[ "$(cat /sys/module/softrc/parameters/copy_impl)" =~ ^(memcpy|words)$ ]]'
check "copy auto: both timed and the choice logged" bash -c \
	'dmesg | grep -q "softrc: copy: memcpy [0-9]* ns, words [0-9]* ns per 4 KiB" &&
	 dmesg | grep -q "softrc: icrc: payload CRC by .*; copy by \(memcpy\|words\)"'
softrc_unload
for impl in memcpy words; do
	if ! check "copy $impl: loads" insmod "$SOFTRC_KO" copy_impl=$impl; then
		continue
	fi
	check "copy $impl: reads back $impl" bash -c "[ \"\$(cat /sys/module/softrc/parameters/copy_impl)\" = $impl ]"
	if topo_up wire; then
		# odd sizes and offsets: the word copy's tails are exercised
		rc_pair "copy $impl: rc_verify 100 ops up to 64 KiB, every byte checked" \
			-n 100 -S 21 -M 65536
		pp_pair "copy $impl: ibv_rc_pingpong 4097 B, mtu 1024, checked" \
			ibv_rc_pingpong -m 1024 -s 4097 -n 20 -c
	else
		not_ok "copy $impl: topology up"
	fi
	topo_down
	softrc_unload
done

ktap_finish

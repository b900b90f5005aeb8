#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The payload loops of icrc_skb.c and copy.c: the CRC of the ICRC
# (icrc_impl) and the receive copy (copy_impl): the module parameters,
# the choice at load, and traffic with each implementation forced (a
# wrong ICRC would drop every data packet and the pingpong would time
# out; rx_bad_icrc must stay 0; rc_verify checks every byte the copy
# placed). Interop with rxe (interop.sh) cross-checks the ICRC against
# another implementation.
#
# Topology (selftests/verbs/topo.sh): wire, two netns joined by a veth.
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"
SOFTRC_DRIVER=softrc

trap topo_cleanup EXIT

ktap_header icrc

param() { cat /sys/module/softrc/parameters/icrc_impl; }

# auto PARAM NAMES LOG: PARAM=bogus refused; auto loads, reads back one
# of NAMES (a|b) and logs LOG (a grep -e pattern of the timing line)
auto() {
	check_fails "$1=bogus refuses to load" insmod "$SOFTRC_KO" "$1"=bogus
	check "$1 auto: loads" insmod "$SOFTRC_KO"
	check "$1 auto: reads back $2" bash -c \
		"[[ \"\$(cat /sys/module/softrc/parameters/$1)\" =~ ^($2)\$ ]]"
	check "$1 auto: both timed and the choice logged" bash -c \
		"dmesg | grep -q -e '$3' && dmesg | grep -q 'softrc: icrc: payload CRC by .*; copy by '"
	softrc_unload
}

# forced PARAM IMPL TRAFFIC: load with PARAM=IMPL, read it back, run the
# function TRAFFIC NAME on the wire topology, rx_bad_icrc must stay 0
forced() {
	local name="$1=$2"
	if ! check "$name: loads" insmod "$SOFTRC_KO" "$1=$2"; then
		return
	fi
	check "$name: reads back $2" bash -c \
		"[ \"\$(cat /sys/module/softrc/parameters/$1)\" = $2 ]"
	if topo_up wire; then
		$3 "$name"
		check "$name: rx_bad_icrc 0 on both devices" \
			test "$(counter "$DEV_A" rx_bad_icrc)/$(counter "$DEV_B" rx_bad_icrc)" = 0/0
	else
		not_ok "$name: topology up"
	fi
	topo_down
	softrc_unload
}

# SENDs from user memory go out as page fragments (CRC over the pages),
# small ones copied; READ responses too
crc_traffic() {
	pp_pair "$1: ibv_rc_pingpong 64 KiB, mtu 4096" \
		ibv_rc_pingpong -m 4096 -s 65536 -n 20
	pp_pair "$1: ibv_rc_pingpong 100 B, mtu 1024" \
		ibv_rc_pingpong -m 1024 -s 100 -n 20
	pp_pair "$1: ib_read_bw 1 MiB" ib_read_bw -s 1048576 -n 5 -F -u "$(ack_timeout_for 18)"
}

# every byte the copy placed checked; odd sizes and offsets exercise the
# word copy's tails
copy_traffic() {
	rc_pair "$1: rc_verify 100 ops up to 64 KiB, every byte checked" \
		-n 100 -S 21 -M 65536
	pp_pair "$1: ibv_rc_pingpong 4097 B, mtu 1024, checked" \
		ibv_rc_pingpong -m 1024 -s 4097 -n 20 -c
}

softrc_deps
auto icrc_impl "crypto|fold" "softrc: icrc: crc32.* ns, fold .* ns per 4 KiB"
for impl in crypto fold; do
	forced icrc_impl $impl crc_traffic
done
auto copy_impl "memcpy|words" "softrc: copy: memcpy [0-9]* ns, words [0-9]* ns per 4 KiB"
for impl in memcpy words; do
	forced copy_impl $impl copy_traffic
done

ktap_finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Stock perftest over both topologies: ib_write_bw, ib_read_bw,
# ib_send_bw, ib_atomic_bw, ib_write_lat, ib_read_lat, ib_send_lat, with
# sizes up to 1 MiB and -q 1..8. Short runs (-n iterations, never -D);
# -u 18 (a 1 s ACK timeout) so TCG's slowness causes no spurious
# retransmits, raised with the VM's slowness (ack_timeout_for): on the
# debug kernel a loopback ib_read_bw -q 4 of 1 MiB moves about 1 MB/s,
# and a QP's READ can wait behind the others' 48 MiB of responses.
# SOFTRC_DRIVER=softrc|rxe; SOFTRC_TEST_SCALE multiplies -n.
#
# Topologies (selftests/verbs/topo.sh):
#   wire: netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b
#         (rxe: both ends in init_net, policy routing across the veth)
#   loop: init_net: va 10.0.0.1 (s0), client and server both on s0
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

trap topo_cleanup EXIT

ktap_header "perftest ($SOFTRC_DRIVER)"
datapath_gate "perftest ($SOFTRC_DRIVER)"

# pf NAME TOOL ARGS...: one perftest pair; prints its result row
pf() {
	local name=$1
	shift
	if pp_pair "$name" "$@" -F -u "$(ack_timeout_for 18)"; then
		printf '%s\n' "$PP_OUT" | grep -E '^ +[0-9]+ +[0-9]+ ' | tail -1 | sed 's/^ */#   /'
	fi
}

s=$SCALE
for topo in loop wire; do
	if ! topo_up $topo; then
		not_ok "$topo: topology up ($SOFTRC_DRIVER)"
		topo_down
		continue
	fi
	pf "$topo: ib_write_bw 64 KiB" ib_write_bw -s 65536 -n $((100 * s))
	pf "$topo: ib_write_bw 1 MiB -q 2" ib_write_bw -s 1048576 -n $((8 * s)) -q 2
	pf "$topo: ib_write_bw 64 B -q 8" ib_write_bw -s 64 -n $((200 * s)) -q 8
	pf "$topo: ib_read_bw 64 KiB" ib_read_bw -s 65536 -n $((100 * s))
	pf "$topo: ib_read_bw 1 MiB -q 4" ib_read_bw -s 1048576 -n $((8 * s)) -q 4
	pf "$topo: ib_send_bw 4 KiB" ib_send_bw -s 4096 -n $((200 * s))
	pf "$topo: ib_send_bw 1 MiB -q 3" ib_send_bw -s 1048576 -n $((8 * s)) -q 3
	pf "$topo: ib_atomic_bw fetch&add" ib_atomic_bw -A FETCH_AND_ADD -n $((200 * s))
	pf "$topo: ib_atomic_bw cmp&swap -q 2" ib_atomic_bw -A CMP_AND_SWAP -n $((200 * s)) -q 2
	pf "$topo: ib_write_lat 8 B" ib_write_lat -s 8 -n $((200 * s))
	pf "$topo: ib_read_lat 4 KiB" ib_read_lat -s 4096 -n $((100 * s))
	pf "$topo: ib_send_lat 1 MiB" ib_send_lat -s 1048576 -n $((5 * s))
	topo_down
done

ktap_finish

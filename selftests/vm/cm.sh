#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# rdma_cm with verified data: selftests/verbs/cm_verify opens CM_CONNS (64)
# concurrent RC connections between two devices, moves a seeded pattern
# on each (SENDs both ways, an RDMA WRITE and an RDMA READ, every byte and
# work completion checked), disconnects and destroys them all; afterwards
# `rdma resource show` counts as many QPs and cm_ids as before. Then the
# checks themselves: with one byte corrupted on one connection (cm_verify
# -X: a client SEND, the WRITE source, the server's READ source, a server
# SEND) the side that receives it must fail that connection and name the
# byte; and a client with nobody listening on its port gets every
# connection REJECTED, reported with the CM's reason. Make bench-cm (tools/bench/cmscale.sh) and the soak's connect
# cycles (selftests/vm/soak/cm_soak.sh) run the same program at scale.
# SOFTRC_DRIVER=softrc (default) or rxe; runs in the guest as root.
#
# Topology (selftests/verbs/topo.sh, wire):
#   netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b
#   (rxe: both ends in init_net, policy routing across the veth)
set -u
. "$(dirname "$0")/lib.sh"
. "$REPO/selftests/verbs/topo.sh"

trap topo_cleanup EXIT

ktap_header "cm ($SOFTRC_DRIVER)"
[ -x "$CM_VERIFY" ] || { echo "1..0 # SKIP $CM_VERIFY not built"; exit 0; }
datapath_gate "cm ($SOFTRC_DRIVER)"

N=${CM_CONNS:-64}
O=/tmp/cm.$$

# res_back COUNTS: the counts are COUNTS again
res_back() {
	[ "$(res_counts)" = "$1" ]
}

# cmv_report FILE PREFIX: the program's own lines as diagnostics
cmv_report() {
	grep -E '^(# |cm_verify|Bail)' "$1" | grep -v '^# .*: [0-9]* connections, ' |
		head -25 | sed "s/^/#   $2/"
}

if ! topo_up wire; then
	not_ok "wire: topology up ($SOFTRC_DRIVER)"
	ktap_finish
	exit 1
fi
echo "# wire: $DEV_A -> $DEV_B ($IP_B)"
before=$(res_counts)
if cmv_run "$N" "$O.ok"; then
	grep -h '^cm_verify' "$O.ok.cli" "$O.ok.srv" | sed 's/^/#   /'
	ok "cm_verify: $N concurrent connections, every byte of SENDs both ways, a WRITE and a READ verified, all torn down"
else
	cmv_report "$O.ok.cli" "client: "
	cmv_report "$O.ok.srv" "server: "
	not_ok "cm_verify: $N concurrent connections, every byte of SENDs both ways, a WRITE and a READ verified, all torn down"
fi
if [ "$(cmv_field "$O.ok.cli" verified)" = "$N" ] && [ "$(cmv_field "$O.ok.srv" verified)" = "$N" ]; then
	ok "both sides verified $N connections"
else
	not_ok "both sides verified $N connections" \
		"client $(cmv_field "$O.ok.cli" verified), server $(cmv_field "$O.ok.srv" verified)"
fi
if wait_until 10 res_back "$before"; then
	ok "rdma resource: QPs and cm_ids back to $before"
else
	not_ok "rdma resource: QPs and cm_ids back to $before" "now $(res_counts)"
fi

# x_case WHAT SIDE TEXT: one corrupted byte of connection 2 of 4 (-X WHAT)
# makes SIDE fail that connection alone, naming the byte; the other side
# passes
x_case() {
	local what=$1 side=$2 text=$3 other=srv
	[ "$side" = srv ] && other=cli
	cmv_run 4 "$O.x$what" -X "$what"
	if grep -qx 'EXIT 1' "$O.x$what.$side" &&
		grep -qE "^# [a-z]* conn 2: $text 0: byte 128 of 256 is 0x[0-9a-f]{2}, expected 0x" \
			"$O.x$what.$side" &&
		[ "$(cmv_field "$O.x$what.$side" failed)" = 1 ] &&
		grep -qx 'EXIT 0' "$O.x$what.$other"; then
		grep -h "conn 2: $text" "$O.x$what.$side" | sed 's/^/#   /'
		ok "cm_verify -X $what: a corrupted byte of the $text fails that connection"
	else
		cmv_report "$O.x$what.cli" "client: "
		cmv_report "$O.x$what.srv" "server: "
		not_ok "cm_verify -X $what: a corrupted byte of the $text fails that connection"
	fi
}
# no listener on the port: every connection REJECTED with the CM's
# reason, reported, and the client ends at once (no deadline waited out)
nolisten() {
	local port=$((20000 + RANDOM % 20000)) t0=$EPOCHSECONDS rc
	$RUN_A timeout "$(tmo 60)" "$CM_VERIFY" -a "$IP_B" -p "$port" -n 4 -T 30 >"$O.nl" 2>&1
	rc=$?
	if [ "$rc" = 1 ] && [ "$(grep -c '^# client conn [0-3]: REJECTED in state connecting: status 8 ' "$O.nl")" = 4 ] &&
		[ "$(cmv_field "$O.nl" failed)" = 4 ] && [ $((EPOCHSECONDS - t0)) -lt 30 ]; then
		grep -m1 REJECTED "$O.nl" | sed 's/^/#   /'
		ok "no listener: every connection REJECTED (invalid service ID), reported, exit 1"
	else
		sed 's/^/#   /' "$O.nl" | tail -10
		not_ok "no listener: every connection REJECTED (invalid service ID), reported, exit 1" \
			"status $rc after $((EPOCHSECONDS - t0)) s"
	fi
}
nolisten
x_case send srv "client SEND"
x_case write srv "client RDMA WRITE"
x_case read cli "server buffer by RDMA READ"
x_case recv cli "server SEND"
if wait_until 10 res_back "$before"; then
	ok "rdma resource: QPs and cm_ids back to $before after the failed runs"
else
	not_ok "rdma resource: QPs and cm_ids back to $before after the failed runs" "now $(res_counts)"
fi
topo_down
ktap_finish

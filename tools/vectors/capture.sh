#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tools/vectors/capture.sh - capture RoCEv2 RC test vectors from Linux rxe.
#
# Usage (on the host, from anywhere in the repository):
#   tools/vectors/capture.sh [-o OUT.pcap] [-- extra tools/testing/vm/run.sh options]
#
# Boots one throwaway VM (tools/testing/vm/run.sh) that loads only rdma_rxe (never
# softrc: the two cannot share a kernel), puts rxe0 on va (10.0.0.1) and
# rxe1 on vb (10.0.0.2) of a veth pair, with policy routing so that traffic
# to the peer's address leaves through the veth instead of lo, and records
# `tcpdump -ni va udp port 4791` while tools/vectors/rcgen.py drives one RC
# QP pair through every RC opcode, a PSN wrap, RNR NAKs, a PSN sequence
# error NAK and a remote access error NAK.  The guest's writes stay in RAM,
# so the pcap comes back over the console as base64 with its sha256; the
# host checks the sum, writes OUT.pcap (default
# selftests/core/vectors/rxe-rc.pcap) and regenerates its decoded table
# OUT.txt with tools/vectors/decode.py, which also refuses a capture whose
# ICRCs or payload patterns are wrong.
#
# A capture is reproducible in kind, not byte for byte: IP IDs, timestamps,
# buffer addresses, rkeys (and so the ICRCs) differ from run to run, and
# under a loaded TCG host an extra retransmit may show up.  After a new
# capture, run `make -C selftests/core run`: test_vectors reads the new
# pcap and table and checks that every opcode and NAK class is present.
#
# Internal: `capture.sh --guest` is the part that runs inside the VM.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
tmp=

guest() {
	local dir pcap tpid
	REPO=$top
	# shellcheck source=selftests/verbs/topo.sh
	. "$REPO/selftests/verbs/topo.sh"
	dir=$(mktemp -d /tmp/vectors.XXXXXX)
	pcap=$dir/rxe-rc.pcap
	dmesg -n 1 2>/dev/null || true		# no printk between base64 lines

	modprobe rdma_rxe
	ip link set lo up
	ip link add va type veth peer name vb
	# addresses and the policy routing that sends 10.0.0.1 <-> 10.0.0.2
	# through the veth, not lo: the VM suites' rxe wire topology
	topo_veth_routing
	rdma link add rxe0 type rxe netdev va
	rdma link add rxe1 type rxe netdev vb
	# the IPv4-mapped GID (index 1) appears asynchronously
	for _ in $(seq 50); do
		grep -qs '0000:0000:0000:0000:0000:ffff:0a00:0001' \
			/sys/class/infiniband/rxe0/ports/1/gids/1 &&
			grep -qs '0000:0000:0000:0000:0000:ffff:0a00:0002' \
				/sys/class/infiniband/rxe1/ports/1/gids/1 && break
		sleep 0.1
	done
	rdma link show
	cat /sys/class/infiniband/rxe[01]/ports/1/gids/1

	tcpdump -Z root -U -s 0 -ni va -w "$pcap" udp port 4791 2>"$dir/tcpdump.err" &
	tpid=$!
	for _ in $(seq 100); do
		grep -qs 'listening on' "$dir/tcpdump.err" && break
		sleep 0.1
	done
	grep -qs 'listening on' "$dir/tcpdump.err" || { cat "$dir/tcpdump.err"; exit 1; }
	sleep 0.5

	python3 "$here/rcgen.py"

	sleep 0.5
	kill -INT "$tpid"
	wait "$tpid" || true
	cat "$dir/tcpdump.err"
	rdma statistic show link rxe0/1 || true
	rdma statistic show link rxe1/1 || true

	echo "SOFTRC-VECTORS-BEGIN $(sha256sum <"$pcap" | cut -d' ' -f1) $(stat -c %s "$pcap")"
	base64 -w 76 "$pcap" | sed 's/^/SOFTRC-VECTORS-B64 /'
	echo "SOFTRC-VECTORS-END"
}

host() {
	local out=$top/selftests/core/vectors/rxe-rc.pcap sum size got
	if [[ ${1:-} == -o ]]; then
		out=$(realpath -m "$2")
		shift 2
	fi
	[[ ${1:-} == -- ]] && shift
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	# cd: run.sh starts the guest command in the caller's cwd; the base64
	# lines go to the log only
	(cd "$top" && tools/testing/vm/run.sh --smp 1 --timeout 900 --log "$tmp/console.log" "$@" \
		-- tools/vectors/capture.sh --guest) | grep -av '^SOFTRC-VECTORS-B64 '
	read -r _ sum size < <(grep -a '^SOFTRC-VECTORS-BEGIN ' "$tmp/console.log" | tail -n1)
	[[ -n ${sum:-} ]] || { echo "capture.sh: no capture in the console log" >&2; exit 1; }
	sed -n 's/^SOFTRC-VECTORS-B64 //p' "$tmp/console.log" | base64 -d >"$tmp/rxe-rc.pcap"
	got=$(sha256sum <"$tmp/rxe-rc.pcap" | cut -d' ' -f1)
	if [[ $got != "$sum" || $(stat -c %s "$tmp/rxe-rc.pcap") != "$size" ]]; then
		echo "capture.sh: console copy damaged (sha256 $got, want $sum)" >&2
		exit 1
	fi
	python3 "$here/decode.py" "$tmp/rxe-rc.pcap" >"$tmp/rxe-rc.txt"
	mkdir -p "$(dirname "$out")"
	cp "$tmp/rxe-rc.pcap" "$out"
	cp "$tmp/rxe-rc.txt" "${out%.pcap}.txt"
	echo "capture.sh: $out ($size bytes, sha256 $sum), table ${out%.pcap}.txt"
}

if [[ ${1:-} == --guest ]]; then
	guest
else
	host "$@"
fi

#!/bin/bash
# tools/testing/vm/run-pair.sh - boot two softrc VMs joined by a virtual Ethernet link.
#
# Usage:
#   tools/testing/vm/run-pair.sh [--timeout SECS] [--mem MB] [--smp N]
#                        [--env NAME=VAL]... [--env-a NAME=VAL]...
#                        [--env-b NAME=VAL]... [--append ARGS] [--log PREFIX]
#                        [--] CMD_A CMD_B
#   (tools/testing/vm/run.sh --pair ... is the same thing.)
#
# Boots VM "A" and VM "B" at the same time (each one as tools/testing/vm/run.sh
# describes: host / read-only + tmpfs overlay, same cwd) and
# runs CMD_A in A and CMD_B in B (each a /bin/sh -c string).  The two
# guests are connected by a QEMU socket netdev over host loopback
# (A: -netdev socket,listen=127.0.0.1:PORT, B: connect=127.0.0.1:PORT, a
# random free PORT), each with one virtio-net-pci NIC:
#
#   guest  hostname   NIC    MAC
#   A      softrc-A   eth0   52:54:00:5f:00:0a
#   B      softrc-B   eth0   52:54:00:5f:00:0b
#
# virtio_net is loaded and eth0 is up (no address) before the command
# starts; the commands configure addresses themselves.  In each guest the
# environment has SOFTRC_VM_NAME=A|B, SOFTRC_VM_NIC=eth0, SOFTRC_VM_MAC and
# SOFTRC_VM_PEER_MAC, plus --env / SOFTRC_VM_ENV variables (given to both)
# and --env-a / --env-b ones (given to A / B only, after the common ones).
# Nothing else is on the link, so any addresses work; the commands must
# wait for each other themselves (e.g. retry a ping until the peer answers).
#
# Defaults per VM: 1 vCPU (two VMs share the host's cores), 1024 MB,
# timeout 600 s.  Console lines are prefixed "[A] " / "[B] ".
# SOFTRC_KVER_A / SOFTRC_KVER_B pick each guest's kernel series (6.1|6.12,
# default SOFTRC_KVER, else 6.1) and SOFTRC_VM_FLAVOR_A / SOFTRC_VM_FLAVOR_B
# its flavour (release|debug, default SOFTRC_VM_FLAVOR, see lib.sh); a
# debug guest gets at least 2048 MB.
# --log PREFIX writes PREFIX.A.log and PREFIX.B.log.
#
# Exit status: 0 if both runs pass; otherwise A's status if A failed,
# else B's (statuses as in run.sh: 123 kernel log, 124 timeout, 125 harness).
# When one guest fails, the other is stopped PAIR_GRACE (60) seconds later:
# it cannot finish without its peer.
set -euo pipefail

# shellcheck source=tools/testing/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# --- Phase 0: options ----------------------------------------------------------
common=()
env_a=()
env_b=()
smp=1
mem=1024
log=
while (($#)); do
	case $1 in
	--timeout | --env | --append) common+=("$1" "$2"); shift 2 ;;
	--env-a) env_a+=(--env "$2"); shift 2 ;;
	--env-b) env_b+=(--env "$2"); shift 2 ;;
	--smp) smp=$2; shift 2 ;;
	--mem) mem=$2; shift 2 ;;
	--log) log=$2; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit 0 ;;
	--) shift; break ;;
	-*) vm_die "run-pair.sh: unknown option $1" ;;
	*) break ;;
	esac
done
(($# == 2)) || vm_die "run-pair.sh: need exactly two commands, CMD_A and CMD_B"
cmd_a=$1
cmd_b=$2
common+=(--smp "$smp")
flavor_a=${SOFTRC_VM_FLAVOR_A:-$VM_FLAVOR}
flavor_b=${SOFTRC_VM_FLAVOR_B:-$VM_FLAVOR}
kver_a=${SOFTRC_KVER_A:-$VM_SERIES}
kver_b=${SOFTRC_KVER_B:-$VM_SERIES}
side_mem() { # $1 = flavour
	if [[ $1 == debug ]] && ((mem < 2048)); then echo 2048; else echo "$mem"; fi
}
mac_a=52:54:00:5f:00:0a
mac_b=52:54:00:5f:00:0b

# Build the caches once here, not twice in parallel below.
for fk in $(printf '%s\n' "$flavor_a:$kver_a" "$flavor_b:$kver_b" | sort -u); do
	SOFTRC_VM_FLAVOR=${fk%%:*} SOFTRC_KVER=${fk#*:} "$VM_DIR/setup.sh" ||
		vm_die "setup.sh (${fk%%:*}, ${fk#*:}) failed"
done

# --- Phase 1: a free loopback port ---------------------------------------------------
port_in_use() { [[ -n $(ss -Htan "sport = :$1" 2>/dev/null) ]]; }
port=
for _ in $(seq 100); do
	p=$((20000 + RANDOM % 40000))
	if ! port_in_use "$p"; then port=$p; break; fi
done
[[ -n $port ]] || vm_die "no free loopback port found"

pid_a=
pid_b=
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	local p
	for p in $pid_a $pid_b; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# --- Phase 2: boot A (listening side), wait for its socket, then B -------------------
vm_log "pair: link on 127.0.0.1:$port"
SOFTRC_VM_FLAVOR=$flavor_a SOFTRC_KVER=$kver_a "$VM_DIR/run.sh" "${common[@]}" "${env_a[@]}" \
	--mem "$(side_mem "$flavor_a")" --name A ${log:+--log "$log.A.log"} \
	--netdev-listen "$port" --mac "$mac_a" --env "SOFTRC_VM_PEER_MAC=$mac_b" \
	-- "$cmd_a" &
pid_a=$!
for _ in $(seq 300); do
	[[ -n $(ss -Htln "sport = :$port" 2>/dev/null) ]] && break
	kill -0 "$pid_a" 2>/dev/null || break
	sleep 0.1
done
[[ -n $(ss -Htln "sport = :$port" 2>/dev/null) ]] || vm_log "pair: A never listened on $port"
SOFTRC_VM_FLAVOR=$flavor_b SOFTRC_KVER=$kver_b "$VM_DIR/run.sh" "${common[@]}" "${env_b[@]}" \
	--mem "$(side_mem "$flavor_b")" --name B ${log:+--log "$log.B.log"} \
	--netdev-connect "$port" --mac "$mac_b" --env "SOFTRC_VM_PEER_MAC=$mac_a" \
	-- "$cmd_b" &
pid_b=$!

# --- Phase 3: collect both statuses -----------------------------------------------------
# The two guests need each other: once one has failed, the other gets
# PAIR_GRACE seconds (default 60) to finish its output, then it is stopped
# (its status is then that of a host-side kill).
rc_a=
rc_b=
grace=${PAIR_GRACE:-60}
wait -n -p first "$pid_a" "$pid_b" && rc=0 || rc=$?
other=$pid_a
[[ $first == "$pid_a" ]] && other=$pid_b
if ((rc != 0)); then
	vm_log "pair: $([[ $first == "$pid_a" ]] && echo A || echo B) failed (status $rc); the peer has ${grace}s left"
	for _ in $(seq "$grace"); do
		kill -0 "$other" 2>/dev/null || break
		sleep 1
	done
	kill "$other" 2>/dev/null || true
fi
wait "$other" && rc2=0 || rc2=$?
if [[ $first == "$pid_a" ]]; then rc_a=$rc rc_b=$rc2; else rc_b=$rc rc_a=$rc2; fi
pid_a=
pid_b=
if ((rc_a == 0 && rc_b == 0)); then
	vm_log "pair: PASS"
	exit 0
fi
vm_log "pair: FAIL (A status $rc_a, B status $rc_b)"
((rc_a != 0)) && exit "$rc_a"
exit "$rc_b"

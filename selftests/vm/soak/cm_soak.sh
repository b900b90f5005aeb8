#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The soak's connection cycles: SOAK_CM_MINUTES (10) of back-to-back
# cycles of selftests/verbs/cm_verify on the wire topology, each cycle
# SOAK_CM_CONNS (256) concurrent RC connections set up over rdma_cm,
# verified (SENDs both ways, an RDMA WRITE and an RDMA READ, every byte
# and work completion checked; a new seed each cycle), disconnected and
# destroyed. Run by `make soak` after soak.sh (selftests/vm/soak/run.sh);
# runs in the guest as root.
#
# Topology (selftests/verbs/topo.sh, wire):
#   netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b
#
# Verdict (KTAP, exit status 0 only if all pass):
#   - every cycle passed: both processes exit 0, every connection
#     connected and verified on both sides
#   - no stuck connection: every cycle ended within its deadline
#     (cm_verify -T per phase, and `timeout` around each process), and
#     after each one `rdma resource show` (pd, cq, qp, cm_id, mr, ctx of
#     every device) is back to its start within 10 s (scaled)
#   - the kmalloc and skb slab caches did not grow from the end of the
#     first cycle to the end of the last (softrc still loaded: a leak per
#     connection shows here, before rmmod could free it), and after
#     rmmod they are back to the warm-up baseline (teardown.sh's check,
#     slab_grown in lib.sh)
#   - memcg: the cycles run in a cgroup v2 memory cgroup; its charge
#     (memory.current, caches dropped) after the last cycle is within
#     SOAK_CM_MEMCG_KB (8192) of the one after the first (SKIP where no
#     memory controller is available)
#   - softrc unloads; no kernel complaint since the start
# followed by a summary: cycles, connections, and the connect and
# teardown times per connection (median and worst cycle).
set -u
# shellcheck source=selftests/vm/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=selftests/verbs/topo.sh
. "$REPO/selftests/verbs/topo.sh"
# shellcheck source=selftests/vm/soak/verdict.sh
. "$REPO/selftests/vm/soak/verdict.sh"

MINUTES=${SOAK_CM_MINUTES:-10}
CONNS=${SOAK_CM_CONNS:-256}
MEMCG_KB=${SOAK_CM_MEMCG_KB:-8192}
W=/tmp/cm_soak
CG=

cleanup() {
	[ -z "$CG" ] || { echo $$ >/sys/fs/cgroup/cgroup.procs; rmdir "$CG"; } 2>/dev/null
	topo_cleanup
}
trap cleanup EXIT

ktap_header "soak: rdma_cm cycles ($MINUTES min, $CONNS connections a cycle, $SOFTRC_DRIVER)"
[ -x "$CM_VERIFY" ] || { not_ok "cm_verify built"; ktap_finish; exit 1; }
rm -rf "$W" && mkdir -p "$W"
dmesg -n 1
klog0=$(dmesg | wc -l)

# resources: every device's `rdma resource show` line
resources() {
	rdma resource show 2>/dev/null | sort
}

# res_back: the resources are those at the start again
res_back() {
	[ "$(resources)" = "$(cat "$W/res0")" ]
}

# memcg_setup: a memory cgroup for this script and its children (the
# cycles' processes), CG; false if cgroup v2 or its memory controller is
# not there
memcg_setup() {
	local root=/sys/fs/cgroup
	[ -e $root/cgroup.controllers ] || mount -t cgroup2 none $root 2>/dev/null || return 1
	grep -qw memory $root/cgroup.controllers || return 1
	echo +memory >$root/cgroup.subtree_control 2>/dev/null
	mkdir -p $root/cm_soak && [ -e $root/cm_soak/memory.current ] || return 1
	CG=$root/cm_soak
	echo $$ >"$CG/cgroup.procs"
}

# memcg_kb: the cgroup's charge in KiB, page cache and slab caches
# dropped first
memcg_kb() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	echo $(($(cat "$CG/memory.current") / 1024))
}

# --- set-up ---------------------------------------------------------------------
driver_load || { not_ok "$SOFTRC_DRIVER loaded"; ktap_finish; exit 1; }
# warm-up: one cycle, so the slab baseline has the one-time allocations
topo_up wire && cmv_run 16 "$W/warm"
topo_down
slabs >"$W/slab.base"
topo_up wire || { not_ok "wire: topology up"; ktap_finish; exit 1; }
# the first connection resolves the neighbours (seconds): not a cycle
cmv_run 1 "$W/warm" || sed 's/^/# warm-up: /' "$W/warm.cli" | tail -5
# shellcheck disable=SC2016 # expanded by the inner bash
wait_until 10 bash -c '[ "$(rdma res show cm_id 2>/dev/null | wc -l)" = 0 ]'
resources >"$W/res0"
memcg=0
memcg_setup && memcg=1

# slab_top BASE: the three caches that grew most since BASE (a slabs
# snapshot), "name +N" (the trend a leak per cycle shows as)
slab_top() {
	slabs | join "$1" - | awk '$3 > $2 { print $3 - $2, $1 }' | sort -rn | head -3 |
		awk '{ printf "%s +%d ", $2, $1 }'
}

# --- cycles -------------------------------------------------------------------------
T0=$EPOCHSECONDS
T_END=$((T0 + MINUTES * 60))
cycles=0 bad=0 stuck=0 leak=0 worst=0
: >"$W/times"
while [ "$EPOCHSECONDS" -lt "$T_END" ] || [ "$cycles" = 0 ]; do
	cycles=$((cycles + 1))
	c0=$EPOCHSECONDS
	o=$W/c
	if ! cmv_run "$CONNS" "$o" -S "$cycles"; then
		bad=$((bad + 1))
		if [ "$bad" -le 3 ]; then
			echo "# cycle $cycles failed:"
			grep -E '^(# |cm_verify|Bail|EXIT)' "$o.cli" | grep -v ' connections, ' |
				tail -8 | sed 's/^/#   client: /'
			grep -E '^(# |cm_verify|Bail|EXIT)' "$o.srv" | grep -v ' connections, ' |
				tail -8 | sed 's/^/#   server: /'
		fi
		# stuck past its deadline, or killed by timeout (124)
		grep -qE '^EXIT 124$|stuck [1-9]' "$o.cli" "$o.srv" && stuck=$((stuck + 1))
	fi
	[ $((EPOCHSECONDS - c0)) -gt "$worst" ] && worst=$((EPOCHSECONDS - c0))
	# connect and teardown ms/conn of this cycle (client start to last
	# ESTABLISHED; first disconnect to the later end of destroying)
	awk -v n="$CONNS" '$1 == "CMV" { for (i = 3; i < NF; i += 2) v[FILENAME, $i] = $(i + 1) }
		END {
			c = ARGV[1]; s = ARGV[2]; e = v[c, "t_end"]
			if (v[s, "t_end"] > e) e = v[s, "t_end"]
			if (v[c, "t_connected"] && e)
				printf "%.3f %.3f\n", (v[c, "t_connected"] - v[c, "t_start"]) / 1000 / n,
					(e - v[c, "t_disc"]) / 1000 / n
		}' "$o.cli" "$o.srv" >>"$W/times"
	if ! wait_until 10 res_back; then
		leak=$((leak + 1))
		[ "$leak" -le 3 ] && diff "$W/res0" <(resources) | sed "s/^/# cycle $cycles resources: /"
	fi
	if [ "$cycles" = 1 ]; then
		slabs >"$W/slab.c1"
		[ "$memcg" = 0 ] || memcg1=$(memcg_kb)
	fi
	[ $((cycles % 10)) = 0 ] &&
		printf '# [%3d:%02d] %d cycles, %d failed; slab since cycle 1: %s\n' \
			$(((EPOCHSECONDS - T0) / 60)) $(((EPOCHSECONDS - T0) % 60)) \
			"$cycles" "$bad" "$(slab_top "$W/slab.c1")"
done
T1=$EPOCHSECONDS

# --- verdict ---------------------------------------------------------------------------
if [ "$bad" = 0 ]; then
	ok "$cycles cycles of $CONNS connections: every connection connected, verified on both sides, torn down"
else
	not_ok "$cycles cycles of $CONNS connections: every connection connected, verified on both sides, torn down" "$bad failed"
fi
if [ "$stuck" = 0 ] && [ "$leak" = 0 ]; then
	ok "no stuck connection: every cycle ended within its deadline (longest $worst s), rdma resource counts back to the start after each"
else
	not_ok "no stuck connection" "$stuck cycles stuck or killed, $leak with resources left over"
fi
soak_slabs_back "$W/slab.c1" \
	"kmalloc and skb slab caches did not grow from the first cycle to the last"
if [ "$memcg" = 1 ]; then
	memcg2=$(memcg_kb)
	if [ $((memcg2 - memcg1)) -le "$MEMCG_KB" ]; then
		ok "memcg: the cycles' charge $memcg1 KiB after the first, $memcg2 KiB after the last"
	else
		not_ok "memcg: the cycles' charge $memcg1 KiB after the first, $memcg2 KiB after the last" \
			"grew by more than $MEMCG_KB KiB"
		grep -E '^(anon|file|kernel|kernel_stack|pagetables|sock|shmem|slab|slab_reclaimable|slab_unreclaimable|percpu) ' \
			"$CG/memory.stat" | sed 's/^/#   /'
	fi
	echo $$ >/sys/fs/cgroup/cgroup.procs
	rmdir "$CG" && CG=
else
	ok "memcg: the cycles' charge # SKIP no cgroup v2 memory controller"
fi
topo_down
check "$SOFTRC_DRIVER unloads" driver_unload
soak_slabs_back "$W/slab.base" \
	"kmalloc and skb slab object counts back to the baseline after rmmod"
soak_klog "$klog0"

# median and max of column $1 of the times
stat_of() {
	awk -v k="$1" '{ print $k }' "$W/times" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) printf "median %.2f, worst %.2f", v[int((NR + 1) / 2)], v[NR]; else printf "-" }'
}
cat <<EOF
# ============== softrc soak: rdma_cm cycles ==============
# $((T1 - T0)) s ($MINUTES min), $cycles cycles x $CONNS connections = $((cycles * CONNS)) connections set up, verified, torn down ($SOFTRC_DRIVER)
# failed cycles $bad, stuck $stuck, resources left over $leak; longest cycle $worst s
# connect ms/conn: $(stat_of 1); teardown ms/conn: $(stat_of 2)
# verdict: $([ "$ktap_failed" = 0 ] && echo PASS || echo "FAIL ($ktap_failed of $ktap_n checks)")
EOF
ktap_finish

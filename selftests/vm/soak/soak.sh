#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Soak: SOAK_MINUTES (20) of selftests/verbs/rc_verify on two netns links
# under a netem schedule that changes every minute, with QPs destroyed and
# recreated all along and one `rdma link del` / re-add. Run by `make soak`
# (one tools/testing/vm/run.sh boot, selftests/vm/soak/run.sh, before the
# connection cycles of cm_soak.sh); not part of `make check`: run_all.sh runs
# selftests/vm/*.sh, this file is one directory down. Runs in the guest as
# root.
#
# Topology (two veth pairs, selftests/verbs/topo.sh for the first):
#   netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b   link 0
#               vc 10.0.1.1 (s2) === vd 10.0.1.2 (s3)               link 1
#
# Traffic: SOAK_CONNS (64, a multiple of 8) RC connections, so twice as
# many QPs, in 8 groups (link, direction, MTU/message size; see
# group_start): per group one rc_verify server and one client process
# with -q CONNS/8 connections. Each connection is a series of lives of
# SOAK_LIFE (180) seconds (rc_verify -E: a fork per life, so a life's QPs
# are created and destroyed with its processes; the first lives are
# staggered), each life 128-deep SQ and RQ, a seeded mix of SEND/SEND_IMM/
# SEND_INV/WRITE/WRITE_IMM/READ/CAS/FAA to 16 KiB or 32 KiB, every
# receive, READ byte and atomic result checked, the remote memory compared
# with the client's shadow at the end, and a totals line.
#
# Schedule: every SOAK_PHASE seconds (60) the next netem setting goes on
# all four veth ends (loss 0.1..10 %, reorder, duplicate, corrupt, delay up
# to 10 ms). Half way, the pairs on link 1 end their lives, and with link
# 1 quiet its devices s2 and s3 are deleted and added again; its groups
# then start again on the new devices.
#
# Verdict (KTAP, exit status 0 only if all pass):
#   - every life passed on both sides: all bytes verified, rc_verify's
#     totals line has posted == ok (no WR lost or failed), no error of any
#     class
#   - the link was quiet, deleted and re-added
#   - `rdma resource` counts back to their start on every device
#   - softrc unloads, and the kmalloc and skb slab caches are back to
#     their object counts after a warm-up cycle (teardown.sh's check)
#   - no kernel complaint since the start (WARNING, BUG, lockups, stalls..)
# followed by a one-screen summary: ops by opcode, bytes, packets,
# retransmits, NAKs, RNR, drops, errors by class (softrc counter deltas,
# summed over both incarnations of s2 and s3).
#
# Knobs: SOAK_MINUTES SOAK_CONNS SOAK_LIFE SOAK_PHASE SOAK_SEED
# SOAK_TIMEOUT (QP local ACK timeout exponent; default 20, 4.3 s, plus
# one per doubling of SOFTRC_TIME_SCALE, at most 23; see below).
#
# Load: RC has no congestion control (RoCE expects a lossless fabric), and
# under TCG the guest moves a few thousand packets a second in all. Each
# connection therefore keeps at most 64 or 128 KiB in flight (rc_verify
# -B: its rings of local and remote buffer space), some 4000 packets over
# all 64, a queue of about 2 s: below the ACK timeout, so a timeout means
# a lost packet, not a queue. With 1 MiB per connection (tried) the veth
# queues grew past the timeout, every timeout resent whole windows into
# them and QPs ran out of retries: congestion collapse, not a finding.
set -u
# shellcheck source=selftests/vm/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=selftests/verbs/topo.sh
. "$REPO/selftests/verbs/topo.sh"
# shellcheck source=selftests/vm/soak/verdict.sh
. "$REPO/selftests/vm/soak/verdict.sh"

MINUTES=${SOAK_MINUTES:-20}
CONNS=${SOAK_CONNS:-64}
LIFE=${SOAK_LIFE:-180}
PHASE=${SOAK_PHASE:-60}
SEED=${SOAK_SEED:-1}
# the ACK timeout scales with the VM's speed, as the tests' timeouts do
TMO=${SOAK_TIMEOUT:-$(ack_timeout_for 20 23)}
W=/tmp/soak
DEVS="s0 s1 s2 s3"
# a pair that cannot finish within its life plus this is lost (rc_verify -T)
GRACE=240

NETEM=(
	"loss 0.1%"
	"delay 2ms 1ms reorder 10% 50% duplicate 1%"
	"loss 10%"
	"corrupt 2%"
	"loss 1% duplicate 5%"
	"delay 5ms reorder 25% 50%"
	"loss 3% corrupt 1% duplicate 1% delay 1ms reorder 5%"
	"loss 0.5% delay 10ms 5ms"
	"duplicate 10% corrupt 0.1%"
	"loss 5% delay 2ms reorder 20%"
)

GPIDS=()	# "g h client-pid server-pid" of running groups
cleanup() {
	local e g h pc ps
	for e in "${GPIDS[@]}"; do
		read -r g h pc ps <<<"$e"
		kill "$pc" "$ps" 2>/dev/null
	done
	wait 2>/dev/null
	soak_netem_clear
	topo_cleanup
}
trap cleanup EXIT

ktap_header "soak ($MINUTES min, $CONNS connections)"
[ -x "$RC_VERIFY" ] || { not_ok "rc_verify built"; ktap_finish; exit 1; }
rm -rf "$W" && mkdir -p "$W"
# the schedule keeps time ahead of the traffic (rc_verify runs at nice 5)
renice -n -5 $$ >/dev/null
dmesg -n 1
klog0=$(dmesg | wc -l)

# --- kernel-side accounting ----------------------------------------------------
# resources DEV: pd/cq/qp/mr/... counts of `rdma resource show`
resources() {
	rdma resource show "$1" 2>/dev/null | cut -d' ' -f3-
}

# counters DEV FILE: "name value" lines of rdma statistic
counters() {
	rdma statistic show link "$1/1" | tr ' ' '\n' | awk 'NR > 2 && NR % 2 == 1 { n = $0; next } NR > 2 { print n, $0 }' >"$2"
}

# ctr_delta START END: "name delta" lines appended to $W/ctr.delta
ctr_delta() {
	awk 'NR == FNR { v[$1] = $2; next } { print $1, $2 - v[$1] }' "$1" "$2" >>"$W/ctr.delta"
}

# backlog drops of the guest's softnet queues (column 2 of softnet_stat)
softnet_drops() {
	local d n=0
	while read -r _ d _; do
		n=$((n + 16#$d))
	done </proc/net/softnet_stat
	echo "$n"
}

soak_netem_set() {
	# one tc per namespace (-batch): an exec is expensive under TCG
	printf 'qdisc replace dev %s root netem limit 10000 %s\n' va "$*" vc "$*" |
		tc -n rc-a -batch - &&
		printf 'qdisc replace dev %s root netem limit 10000 %s\n' vb "$*" vd "$*" |
		tc -n rc-b -batch -
}

soak_netem_clear() {
	local d
	for d in va vc; do tc -n rc-a qdisc del dev $d root 2>/dev/null; done
	for d in vb vd; do tc -n rc-b qdisc del dev $d root 2>/dev/null; done
	return 0
}

link1_add() {
	$RUN_A rdma link add s2 type softrc netdev vc &&
		$RUN_B rdma link add s3 type softrc netdev vd &&
		wait_until 10 gid_index s2 10.0.1.1 && wait_until 10 gid_index s3 10.0.1.2
}

# The RoCE v2 GID index of each device, in $W/gid.DEV for the groups
gids_save() {
	local d ip
	for d in "$@"; do
		case $d in s0) ip=10.0.0.1 ;; s1) ip=10.0.0.2 ;; s2) ip=10.0.1.1 ;; s3) ip=10.0.1.2 ;; esac
		gid_index "$d" "$ip" >"$W/gid.$d" || return 1
	done
}

# --- set-up -------------------------------------------------------------------------
driver_load || { not_ok "softrc loaded"; ktap_finish; exit 1; }
# warm-up: one cycle, so the slab baseline has the one-time allocations
topo_up wire && pp_pair_quiet ibv_rc_pingpong -n 5
topo_down
slabs >"$W/slab.base"
softnet0=$(softnet_drops)
if topo_up wire &&
	$RUN_A ip link add vc mtu 9000 type veth peer name vd netns rc-b mtu 9000 &&
	$RUN_A ip addr add 10.0.1.1/24 dev vc && $RUN_B ip addr add 10.0.1.2/24 dev vd &&
	$RUN_A ip link set vc up && $RUN_B ip link set vd up && link1_add &&
	gids_save s0 s1 s2 s3; then
	ok "topology: 2 veth links, devices $DEVS"
else
	not_ok "topology: 2 veth links, devices $DEVS"
	ktap_finish
	exit 1
fi
for d in $DEVS; do
	counters "$d" "$W/ctr0.$d"
	resources "$d" >"$W/res0.$d"
done

T0=$EPOCHSECONDS
T_END=$((T0 + MINUTES * 60))
T_DEL=$((T0 + MINUTES * 30))

# --- traffic groups -------------------------------------------------------------------
# Group g (0..7): link g % 2, direction (g / 2) % 2 (1: client in rc-b),
# variant g / 4 (0: MTU 1024, messages to 16 KiB, 64 KiB rings; 1: MTU 4096
# on link 0, 2048 on link 1, messages to 32 KiB, 128 KiB rings). One
# rc_verify server and one client
# process per group, CONNS / 8 connections each, every connection a series
# of LIFE-second lives (rc_verify -q -E: a fork per life, so each life's
# QPs are created and destroyed with its processes; the first lives are
# staggered). Part H (0, or 1 for link 1 after the relink) names the files:
#   $W/grp.{cli,srv}.G.H     the processes' own output: one line per life
#   $W/{cli,srv}.G.H.I.J     life J of connection I
group_start() {
	local g=$1 h=$2 secs=$3 link=$(($1 % 2)) per=$((CONNS / 8)) mtu mx buf
	local run_c=$RUN_A run_s=$RUN_B dev_c dev_s gid_c gid_s pc ps sock=$W/sock.$1.$2
	dev_c=s$((2 * link)) dev_s=s$((2 * link + 1))
	if [ $(((g / 2) % 2)) = 1 ]; then
		dev_c=s$((2 * link + 1)) dev_s=s$((2 * link))
		run_c=$RUN_B run_s=$RUN_A
	fi
	mtu=1024 mx=16384 buf=65536
	[ $((g / 4)) = 1 ] && mtu=$((link == 0 ? 4096 : 2048)) mx=32768 buf=131072
	gid_c=$(<"$W/gid.$dev_c") gid_s=$(<"$W/gid.$dev_s")
	# shellcheck disable=SC2086 # $run_s: a command prefix, or nothing
	nice -n 5 $run_s "$RC_VERIFY" -s -d "$dev_s" -g "$gid_s" -q $per -T $((LIFE + GRACE)) \
		-O "$W/srv.$g.$h" "$sock" >"$W/grp.srv.$g.$h" 2>&1 &
	ps=$!
	# shellcheck disable=SC2086 # $run_c: likewise
	nice -n 5 $run_c "$RC_VERIFY" -d "$dev_c" -g "$gid_c" -q $per -E "$secs" -D "$LIFE" \
		-n 10000 -T $((LIFE + GRACE)) -M $mx -B $buf -m $mtu -u "$TMO" -r 7 -R 7 \
		-S $((SEED * 10000000 + g * 100000 + h * 50000)) -O "$W/cli.$g.$h" "$sock" \
		>"$W/grp.cli.$g.$h" 2>&1 &
	pc=$!
	GPIDS+=("$g $h $pc $ps")
}

# groups_alive LINK: true while a group process of LINK (0, 1, all) runs
groups_alive() {
	local e g h pc ps
	for e in "${GPIDS[@]}"; do
		read -r g h pc ps <<<"$e"
		[ "$1" = all ] || [ $((g % 2)) = "$1" ] || continue
		if kill -0 "$pc" 2>/dev/null || kill -0 "$ps" 2>/dev/null; then
			return 0
		fi
	done
	return 1
}

# groups_reap: wait for the finished group processes, status to $W/grp.rc
groups_reap() {
	local e g h pc ps rest=()
	for e in "${GPIDS[@]}"; do
		read -r g h pc ps <<<"$e"
		if kill -0 "$pc" 2>/dev/null || kill -0 "$ps" 2>/dev/null; then
			rest+=("$e")
			continue
		fi
		wait "$pc"
		echo "cli $g.$h $?" >>"$W/grp.rc"
		wait "$ps"
		echo "srv $g.$h $?" >>"$W/grp.rc"
	done
	GPIDS=("${rest[@]}")
}

# results: one line per client life, "life=G.H.I.J rc=S src=S totals..."
# (src: the status of the server's side of that life, found by its seed;
# "none" while the server has not reported it). One awk for all files:
# every fork and exec costs a lot under TCG.
results() {
	local files=("$W"/grp.srv.* "$W"/grp.cli.* "$W"/cli.*)
	[ -e "${files[0]}" ] || return 0
	awk 'function v(s, a) { split(s, a, "="); return a[2] }
		FNR == 1 { f = FILENAME; sub(/.*\//, "", f) }
		f ~ /^grp\.srv\./ && $2 == "life" { srv[substr(f, 9) " " v($5)] = v($6); next }
		f ~ /^grp\.cli\./ && $2 == "life" {
			n++; L[n] = substr(f, 9) "." v($3) "." v($4)
			S[n] = substr(f, 9) " " v($5); R[n] = v($7); next
		}
		f ~ /^cli\./ && $2 == "totals:" { $1 = ""; $2 = ""; T[substr(f, 5)] = substr($0, 3) }
		END {
			for (i = 1; i <= n; i++)
				print "life=" L[i], "rc=" R[i], "src=" (S[i] in srv ? srv[S[i]] : "none"),
					(L[i] in T ? T[L[i]] : "why=no-totals")
		}' "${files[@]}" 2>/dev/null </dev/null
}

# bad_lives [pending] FILE: the result lines of lives that failed: a
# non-zero exit on either side, no totals, posted != ok, or an error of
# any class ("pending": src=none, the server's report still to come, is
# not a failure yet)
bad_lives() {
	local pend=0
	[ "$1" = pending ] && pend=1 && shift
	awk -v pend=$pend '{
		if (pend && $3 == "src=none") next
		good = $2 == "rc=0" && $3 == "src=0"; p = ""; o = ""
		for (i = 4; i <= NF; i++) {
			split($i, a, "=")
			if (a[1] == "posted") p = a[2]
			else if (a[1] == "ok") o = a[2]
			else if (a[1] == "why" || (a[1] ~ /^err_/ && a[2] != 0)) good = 0
		}
		if (!good || p == "" || p != o) print
	}' "$@"
}

progress() {
	local r=$W/results.now
	results >"$r"
	printf '# [%3d:%02d] %s | lives done %d, failed %d\n' $(((EPOCHSECONDS - T0) / 60)) \
		$(((EPOCHSECONDS - T0) % 60)) "$1" "$(grep -c . "$r")" "$(bad_lives pending "$r" | grep -c .)"
}

# the relink, link 1 quiet: counters and resources kept, s2 and s3
# deleted and added again
relink() {
	local d res_ok=1
	for d in s2 s3; do
		counters "$d" "$W/ctr1.$d"
		ctr_delta "$W/ctr0.$d" "$W/ctr1.$d"
		[ "$(resources "$d")" = "$(cat "$W/res0.$d")" ] || {
			echo "# relink: $d resources $(resources "$d"), at the start $(cat "$W/res0.$d")"
			res_ok=0
		}
	done
	if ! { $RUN_A rdma link del s2 && $RUN_B rdma link del s3 &&
		wait_until 10 rdma_dev_gone s2 && wait_until 10 rdma_dev_gone s3 &&
		link1_add && gids_save s2 s3; }; then
		echo "# relink: rdma link del/add failed"
		return 1
	fi
	for d in s2 s3; do
		counters "$d" "$W/ctr0.$d"
		resources "$d" >"$W/res0.$d"
	done
	[ $res_ok = 1 ]
}

# --- run ------------------------------------------------------------------------------
for g in 0 1 2 3 4 5 6 7; do
	group_start $g 0 $(((g % 2 ? T_DEL : T_END) - EPOCHSECONDS))
done
progress "$CONNS connections started ($((CONNS / 8)) per group)"
phase=0 next=$T0 relink_rc='' relink_t=$T_DEL netem_bad=0
while [ "$EPOCHSECONDS" -lt "$T_END" ] || [ -z "$relink_rc" ]; do
	now=$EPOCHSECONDS
	if [ "$now" -ge "$next" ] && [ "$now" -lt "$T_END" ]; then
		# shellcheck disable=SC2086 # one word per netem argument
		set -- ${NETEM[$((phase % ${#NETEM[@]}))]}
		soak_netem_set "$@" || { echo "# netem $* failed"; netem_bad=$((netem_bad + 1)); }
		progress "netem $((phase + 1)): $*"
		phase=$((phase + 1))
		next=$((T0 + phase * PHASE))
	fi
	groups_reap
	if [ -z "$relink_rc" ] && [ "$now" -ge "$T_DEL" ]; then
		if ! groups_alive 1; then
			progress "link 1 quiet: relink"
			relink_t=$EPOCHSECONDS
			relink
			relink_rc=$?
			if [ $((T_END - EPOCHSECONDS)) -ge 30 ]; then
				for g in 1 3 5 7; do
					group_start $g 1 $((T_END - EPOCHSECONDS))
				done
			fi
			progress "link 1: s2, s3 deleted and re-added (status $relink_rc)"
		elif [ "$now" -ge $((T_DEL + (LIFE + GRACE + 60) * SOFTRC_TIME_SCALE)) ]; then
			progress "link 1 never went quiet"
			relink_rc=1
		fi
	fi
	sleep 1
done
progress "end of the schedule: last lives draining"
while groups_alive all; do
	sleep 1
done
groups_reap
T1=$EPOCHSECONDS
soak_netem_clear
for d in $DEVS; do
	counters "$d" "$W/ctr1.$d"
	ctr_delta "$W/ctr0.$d" "$W/ctr1.$d"
done
softnet1=$(softnet_drops)
results >"$W/results"

# --- verdict ------------------------------------------------------------------------------
# T[key]: the sum of key=N over all lives; C[name]: a counter's delta
# summed over the devices (and both incarnations of s2, s3)
declare -A T C
awk '{ for (i = 4; i <= NF; i++) { split($i, a, "="); s[a[1]] += a[2] } }
	END { for (k in s) print k, s[k] }' "$W/results" >"$W/totals"
while read -r k v; do T[$k]=$v; done <"$W/totals"
awk '{ s[$1] += $2; if ($1 ~ /^rx_drop_parse_/) s["parse"] += $2 } END { for (k in s) print k, s[k] }' \
	"$W/ctr.delta" >"$W/ctr.sum"
while read -r k v; do C[$k]=$v; done <"$W/ctr.sum"
t() { echo "${T[$1]:-0}"; }
c() { echo "${C[$1]:-0}"; }
lives=$(grep -c . "$W/results")
bad=$(bad_lives "$W/results")
grp_bad=$(awk '$3 != 0' "$W/grp.rc")
posted=$(t posted) okops=$(t ok)
errs=0
for cl in retry_exceeded rnr_retry_exceeded bad_status flushed cqe_fields data lost; do
	errs=$((errs + $(t "err_$cl")))
done
aborted=$(grep -c 'why=' "$W/results")
if [ -z "$bad$grp_bad" ] && [ "$lives" -ge "$CONNS" ] && [ "$errs" = 0 ]; then
	ok "$lives lives of $CONNS connections: every byte, CQE, READ and atomic verified"
else
	printf '%s\n' "$bad" | head -10 | sed 's/^/#   /'
	printf '%s\n' "$grp_bad" | head -10 | sed 's/^/#   group /'
	grep -h 'no client' "$W"/grp.srv.* | head -5
	printf '%s\n' "$bad" | head -2 | while read -r life _; do
		f=$W/cli.${life#life=}
		echo "# ---- $f"
		grep -E '^(not ok|# |Bail)' "$f" | grep -v '^#   ' | head -15 | sed 's/^/#   /'
		grep -E '^(not ok|# server|Bail)' "${f/cli./srv.}" | head -5 | sed 's/^/#   /'
	done
	not_ok "$lives lives of $CONNS connections: every byte, CQE, READ and atomic verified"
fi
if [ "$posted" -gt 0 ] && [ "$posted" = "$okops" ]; then
	ok "WRs posted $posted = completed successfully $okops"
else
	not_ok "WRs posted $posted = completed successfully $okops"
fi
if [ "$phase" -gt 0 ] && [ "$netem_bad" = 0 ]; then
	ok "netem: $phase settings applied on va vb vc vd"
else
	not_ok "netem: $netem_bad of $phase settings failed"
fi
if [ "${relink_rc:-1}" = 0 ]; then
	ok "link 1 quiet, s2 and s3 deleted and re-added, traffic resumed"
else
	not_ok "link 1 quiet, s2 and s3 deleted and re-added, traffic resumed"
fi
res_bad=
for d in $DEVS; do
	[ "$(resources "$d")" = "$(cat "$W/res0.$d")" ] ||
		res_bad+=" $d: $(resources "$d") (start $(cat "$W/res0.$d"))"
done
if [ -z "$res_bad" ]; then
	ok "rdma resource counts back to their start on $DEVS"
else
	not_ok "rdma resource counts back to their start:$res_bad"
fi
soak_netem_clear
topo_down
check "softrc unloads" softrc_unload
soak_slabs_back "$W/slab.base" "kmalloc and skb slab object counts back to the baseline"
soak_klog "$klog0"

# --- summary -----------------------------------------------------------------------------
gib=$(awk -v b="$(t bytes)" 'BEGIN { printf "%.2f", b / 1073741824 }')
cat <<EOF
# ================= softrc soak summary =================
# $((T1 - T0)) s ($MINUTES min schedule), $CONNS connections = $((2 * CONNS)) QPs (SQ/RQ 128), $lives lives (QP pairs created, verified, destroyed)
# netem: $phase settings applied, ${#NETEM[@]} in the cycle, $PHASE s each; link del/re-add: s2 s3 at $((relink_t - T0)) s
# QP ACK timeout exponent $TMO (VM speed x$SOFTRC_TIME_SCALE), retry_cnt 7, rnr_retry 7
# ops: SEND $(t SEND)  SEND_IMM $(t SEND_WITH_IMM)  SEND_INV $(t SEND_WITH_INV)  WRITE $(t RDMA_WRITE)  WRITE_IMM $(t RDMA_WRITE_WITH_IMM)
#      READ $(t RDMA_READ)  CAS $(t ATOMIC_CMP_AND_SWP)  FAA $(t ATOMIC_FETCH_AND_ADD)
# WRs posted $posted, completed ok $okops; receives checked $(t recv); $gib GiB, every byte verified
# packets: tx $(c tx_pkts) rx $(c rx_pkts); retransmits $(c retransmits), ACK timeouts $(c timeouts), implied NAKs $(c implied_naks)
# NAKs sent/rcvd: PSN seq $(c seq_naks_sent)/$(c seq_naks_rcvd)  RNR $(c rnr_naks_sent)/$(c rnr_naks_rcvd)  inv req $(c inv_req_naks_sent)/$(c inv_req_naks_rcvd)  rem access $(c rem_access_naks_sent)/$(c rem_access_naks_rcvd)  rem op $(c rem_op_naks_sent)/$(c rem_op_naks_rcvd)
# RNR: NAKs $(c rnr_naks_rcvd), retry exceeded $(c rnr_retry_exceeded); retry exceeded $(c retry_exceeded); credit stalls $(c credit_stalls)
# duplicates answered: $(c dup_requests) (READ $(c dup_reads), atomic $(c dup_atomics)); stale responses $(c drop_dup_resp)
# drops: bad ICRC $(c rx_bad_icrc), out of seq $(c drop_out_of_seq), too old $(c drop_too_old), bad resp $(c drop_bad_resp), QP in error $(c drop_state), malformed $(c drop_malformed), parser $(c parse)
#        unknown QP $(c rx_drop_unknown_qp), state $(c rx_drop_state), short $(c rx_drop_short), tx (route/alloc/xmit) $(c tx_drop_route)/$(c tx_drop_alloc)/$(c tx_drop_xmit), softnet backlog $((softnet1 - softnet0))
# CQ overruns $(c cq_overruns), WCs dropped $(c cq_wc_dropped), mem errors $(c mem_errors)/$(c rx_mem_errors)/$(c tx_mem_errors)
# errors by class: retry_exceeded $(t err_retry_exceeded) rnr_retry_exceeded $(t err_rnr_retry_exceeded) bad_status $(t err_bad_status) flushed $(t err_flushed) cqe_fields $(t err_cqe_fields) data $(t err_data) lost $(t err_lost) aborted $aborted
# verdict: $([ "$ktap_failed" = 0 ] && echo PASS || echo "FAIL ($ktap_failed of $ktap_n checks)")
EOF
ktap_finish

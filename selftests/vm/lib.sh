# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Shared helpers for the VM suites: KTAP output, polling waits, module
# loading and topology set-up. Sourced by each suite; runs in the guest
# as root (tools/testing/vm/run.sh), never on the host.

SELFTEST_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO=$(cd "$SELFTEST_DIR/../.." && pwd -P)
# make check-debug builds both against the debug kernel, out of tree, and
# points these at its copies
SOFTRC_KO=${SOFTRC_KO:-$REPO/drivers/infiniband/sw/softrc/softrc.ko}
KMOD_DIR=${SOFTRC_KMOD_DIR:-$REPO/selftests/verbs/kmod}
KVER=$(uname -r)

# --- KTAP -----------------------------------------------------------------
ktap_n=0
ktap_failed=0

ktap_header() {
	echo "TAP version 13"
	echo "# suite: $1"
}

ok() {
	ktap_n=$((ktap_n + 1))
	echo "ok $ktap_n $1"
}

not_ok() {
	ktap_n=$((ktap_n + 1))
	ktap_failed=$((ktap_failed + 1))
	echo "not ok $ktap_n $1${2:+ # $2}"
}

# check NAME CMD...: one test, passing when CMD succeeds; output on failure
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "$name"
	fi
}

# check_fails NAME CMD...: one test, passing when CMD fails
check_fails() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "$name" "command unexpectedly succeeded"
	else
		printf '%s\n' "$out" | sed 's/^/# /' | head -3
		ok "$name"
	fi
}

ktap_finish() {
	echo "1..$ktap_n"
	[ "$ktap_failed" -eq 0 ]
}

# --- VM speed -------------------------------------------------------------------
# A timeout that decides pass/fail must not expire just because this guest
# runs slowly (TCG, a loaded host): SOFTRC_TIME_SCALE, an integer >= 1, says
# how many times longer than on the reference set-up (TCG, 1 vCPU, idle
# 2-core host) this guest takes for a fixed CPU loop. Every test timeout
# is multiplied by it: wait_until, tmo (shell), time_scale() in
# selftests/verbs/timing.h (C). Measured once and exported, so nested
# suites and the C tests inherit it; set it by hand to override.
SOFTRC_PROBE_REF_US=${SOFTRC_PROBE_REF_US:-80000}

# softrc_speed_probe: print the scale, measured now: the best of 3 runs
# of the loop (one preempted run does not count), at least 1, at most 10
softrc_speed_probe() {
	local best=0 r t0 t1 i us
	for r in 1 2 3; do
		t0=${EPOCHREALTIME/[.,]/}
		i=0
		while [ $i -lt 2000 ]; do i=$((i + 1)); done
		t1=${EPOCHREALTIME/[.,]/}
		us=$((t1 - t0))
		{ [ "$best" = 0 ] || [ "$us" -lt "$best" ]; } && best=$us
	done
	r=$(((best + SOFTRC_PROBE_REF_US - 1) / SOFTRC_PROBE_REF_US))
	[ "$r" -ge 1 ] || r=1
	[ "$r" -le 10 ] || r=10
	echo "$r"
}

if [ -z "${SOFTRC_TIME_SCALE:-}" ]; then
	SOFTRC_TIME_SCALE=$(softrc_speed_probe)
	echo "# VM speed: timeouts x$SOFTRC_TIME_SCALE (SOFTRC_TIME_SCALE)"
fi
export SOFTRC_TIME_SCALE SOFTRC_PROBE_REF_US

# tmo SECONDS: a test timeout of SECONDS (may be fractional) on this VM
tmo() {
	awk -v s="$1" -v k="$SOFTRC_TIME_SCALE" 'BEGIN { printf "%g\n", s * k }'
}

# ack_timeout_for EXP [MAX]: a QP local ACK timeout exponent (4.096 us <<
# EXP) for this VM: one more per doubling of SOFTRC_TIME_SCALE, at most
# MAX (24). A responder on a slow guest may not ACK within EXP without
# any loss, and retry_cnt such expiries end the QP in RETRY_EXC_ERR.
ack_timeout_for() {
	local ack=$1 max=${2:-24} k=1

	while [ "$k" -lt "$SOFTRC_TIME_SCALE" ] && [ "$ack" -lt "$max" ]; do
		k=$((k * 2))
		ack=$((ack + 1))
	done
	echo "$ack"
}

# ack_shim: a command prefix for a stock program whose ACK timeout is
# fixed in its source (ibv_rc_pingpong, ibv_srq_pingpong: 14): the
# preload shim raises it to ack_timeout_for 14 (nothing changes at
# reference speed). Unquoted: $(ack_shim) ibv_rc_pingpong ... Nothing
# where the shim is not built (make bench builds only the module).
ack_shim() {
	local so=$REPO/selftests/verbs/preload/ack_timeout.so

	[ -f "$so" ] || return 0
	echo "env LD_PRELOAD=$so SOFTRC_MIN_ACK_TIMEOUT=$(ack_timeout_for 14)"
}

# --- waits --------------------------------------------------------------------
# wait_until SECONDS CMD...: poll CMD every 50 ms until it succeeds, for
# at most SECONDS (scaled by SOFTRC_TIME_SCALE)
wait_until() {
	local deadline=$(($(date +%s%N) + $1 * ${SOFTRC_TIME_SCALE:-1} * 1000000000))
	shift
	until "$@" >/dev/null 2>&1; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# --- slab accounting --------------------------------------------------------
# slabs: the caches a driver allocates from (kmalloc, skbs) as "name
# active_objs"; process caches (vm_area_struct, task_struct, ...) follow
# whatever else the guest runs. Unused dentries and inodes are dropped
# first and each cache is shrunk (its per-CPU and partial slabs; on the
# debug kernel that also empties KASAN's quarantine of it, where freed
# objects still count as active for a while).
slabs() {
	local f

	sync
	echo 3 >/proc/sys/vm/drop_caches
	for f in /sys/kernel/slab/kmalloc-*/shrink /sys/kernel/slab/skbuff_*/shrink; do
		[ -w "$f" ] && echo 1 >"$f" 2>/dev/null
	done
	awk 'NR > 2 && $1 ~ /^(kmalloc-|kmalloc-cg-|skbuff_)/ { print $1, $2 }' \
		/proc/slabinfo | sort
}

# slab_grown BASE: fails, printing them as KTAP diagnostics, if caches
# grew by more than 256 objects and 25 % since BASE (a slabs snapshot)
slab_grown() {
	slabs | join "$1" - | awk '$3 - $2 > 256 && $3 > $2 * 1.25 { print "#   " $1 ": " $2 " -> " $3; bad = 1 }
		END { exit bad }'
}

# --- module ------------------------------------------------------------------
# The in-kernel modules softrc needs, from the Debian image.
softrc_deps() {
	modprobe ib_core && modprobe ib_uverbs && modprobe udp_tunnel &&
		modprobe ip6_udp_tunnel
}

# SOFTRC_KO_PARAMS: module parameters for every load (tools/bench/bench.sh
# BENCH_KO_PARAMS), e.g. "icrc_impl=fold"
softrc_load() {
	# shellcheck disable=SC2086 # one word a parameter
	softrc_deps && insmod "$SOFTRC_KO" ${SOFTRC_KO_PARAMS:-}
}

softrc_loaded() {
	[ -d /sys/module/softrc ]
}

softrc_unload() {
	! softrc_loaded || rmmod softrc
}

# A writable module tree: an overlay on /lib/modules/$KVER (its own
# tmpfs upper dir: an overlay's upper dir cannot live on the root
# overlay), so depmod can write its index and modules can be installed.
# softrc_modtree_restore takes it away again with all that was written.
# /proc/mounts names the tree by its real path (/usr/lib/modules/... on a
# merged /usr), so softrc_modtree_mounted resolves it first.
softrc_modtree_mounted() {
	grep -q " $(readlink -f "/lib/modules/$KVER") overlay " /proc/mounts
}

softrc_modtree_overlay() {
	local upper=/run/softrc-mods

	softrc_modtree_mounted && return 0
	mkdir -p $upper
	mountpoint -q $upper || mount -t tmpfs softrc-mods $upper || return 1
	mkdir -p $upper/upper $upper/work
	mount -t overlay overlay -o "lowerdir=/lib/modules/$KVER,upperdir=$upper/upper,workdir=$upper/work" \
		"/lib/modules/$KVER"
}

softrc_modtree_restore() {
	if softrc_modtree_mounted; then
		umount "/lib/modules/$KVER" || return 1
	fi
	! mountpoint -q /run/softrc-mods || umount /run/softrc-mods
}

# Make softrc.ko visible to modprobe (for `rdma link add` autoload).
softrc_install_module() {
	softrc_modtree_overlay || return 1
	mkdir -p "/lib/modules/$KVER/extra"
	cp "$SOFTRC_KO" "/lib/modules/$KVER/extra/"
	depmod -a
}

# --- devices --------------------------------------------------------------------
rdma_dev_exists() {
	[ -e "/sys/class/infiniband/$1" ]
}

rdma_dev_gone() {
	! rdma_dev_exists "$1"
}

# port_state DEV: ACTIVE, DOWN, ...
port_state() {
	rdma link show "$1/1" | sed -n 's/.* state \([A-Z_]*\) .*/\1/p'
}

port_attr() {
	cat "/sys/class/infiniband/$1/ports/1/$2"
}

# counter DEV NAME: one counter of `rdma statistic show link DEV/1`
counter() {
	rdma statistic show link "$1/1" | tr ' ' '\n' | awk -v n="$2" '$0 == n { getline; print; exit }'
}

# suites run compound checks as `bash -c '...'`: give them the helpers
export -f wait_until tmo softrc_deps softrc_load softrc_loaded softrc_unload \
	softrc_install_module softrc_modtree_mounted softrc_modtree_overlay softrc_modtree_restore \
	rdma_dev_exists rdma_dev_gone port_state port_attr counter
export SELFTEST_DIR REPO SOFTRC_KO KMOD_DIR KVER

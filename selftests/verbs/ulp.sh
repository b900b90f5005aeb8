# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Helpers for the suites that run the kernel's RDMA ULPs (nvmeof.sh,
# iser.sh): the init_net topology they need, scaled timeouts, steps that
# stop a topology early, module unloading and fio with crc32c verify.
# Sourced after selftests/vm/lib.sh and selftests/verbs/topo.sh; runs in
# the guest as root.

# topo_up_initnet wire|loop: topo_up, but softrc's wire pair in init_net
# (topo.sh's rxe wire topology with the driver under test): kernel ULPs
# only work in init_net
topo_up_initnet() {
	if [ "$1" != wire ] || [ "$SOFTRC_DRIVER" != softrc ]; then
		topo_up "$1"
		return
	fi
	# shellcheck disable=SC2034 # topo.sh's variables, read by its helpers
	TOPO=wire IF_A=va IF_B=vb NS_A='' NS_B='' RUN_A='' RUN_B=''
	driver_load || return 1
	ip link set lo up
	ip link add va mtu 9000 type veth peer name vb mtu 9000 || return 1
	topo_veth_routing
	DEV_A=$(dev_name 0) DEV_B=$(dev_name 1) IP_B=10.0.0.2
	rdma link add "$DEV_A" type softrc netdev va || return 1
	rdma link add "$DEV_B" type softrc netdev vb || return 1
	sysctl -qw net.core.netdev_max_backlog=10000
	topo_wait_gids
}

# dstate_report: every task in uninterruptible sleep with its kernel stack
# (KTAP diagnostics): what a hung kernel path is waiting for
dstate_report() {
	local p
	for p in /proc/[0-9]*; do
		[ "$(awk '{ print $3 }' "$p/stat" 2>/dev/null)" = D ] || continue
		echo "# D task ${p##*/} $(cat "$p/comm" 2>/dev/null):"
		sed 's/^/#   /' "$p/stack" 2>/dev/null | head -16
	done
}

# t SECONDS CMD...: CMD under a scaled timeout (SIGKILL 5 s after TERM).
# A command stuck in the kernel (uninterruptible sleep) outlives SIGKILL,
# and timeout(1) would wait for it for ever: t gives up on it 20 s after
# the kill, prints the D tasks' stacks and returns 124, so a hung kernel
# path is a `not ok` with its stack, never a stuck suite. CMD's output
# goes through files, which a stuck CMD cannot hold open for a caller's
# $(...).
t() {
	local s pid end o e rc
	s=$(tmo "$1")
	shift
	o=$(mktemp) e=$(mktemp)
	timeout -k 5 "$s" "$@" >"$o" 2>"$e" &
	pid=$!
	end=$((SECONDS + ${s%.*} + 25))
	while kill -0 "$pid" 2>/dev/null && ((SECONDS < end)); do
		sleep 0.5
	done
	if kill -0 "$pid" 2>/dev/null; then
		cat "$o"
		cat "$e" >&2
		echo "# hung in the kernel after ${s}s and SIGKILL: $*"
		dstate_report
		rm -f "$o" "$e"
		return 124
	fi
	wait "$pid"
	rc=$?
	cat "$o"
	cat "$e" >&2
	rm -f "$o" "$e"
	return $rc
}

# w FILE VALUE: a configfs/sysfs write that says what failed
w() {
	printf '%s\n' "$2" >"$1" || { echo "write '$2' to $1 failed"; return 1; }
}

# run CMD...: CMD, naming itself if it fails
run() {
	"$@" || { echo "failed ($?): $*"; return 1; }
}

# step NAME CMD...: check, returning whether it passed
step() {
	local f=$ktap_failed
	check "$@"
	[ "$ktap_failed" = "$f" ]
}

# unmod MODULE...: rmmod those loaded, each under a timeout
unmod() {
	local m rc=0
	for m in "$@"; do
		[ -d "/sys/module/$m" ] || continue
		t 60 rmmod "$m" || { echo "rmmod $m failed"; rc=1; }
	done
	return $rc
}

# fio_verify NAME DEV BS SIZE: one fio randrw job with crc32c verify on
# block device DEV (none: "no block device"); passes on exit 0 and no job
# error; IOPS and MB/s as diagnostics (reads include fio's verify pass).
# On failure, fio's output and fio_failed (the suite's own, if defined).
fio_verify() {
	local name=$1 dev=$2 bs=$3 size=$4 out rc json=/tmp/fio.$$.json

	if [ -z "$dev" ]; then
		not_ok "$name" "no block device"
		return 1
	fi
	out=$(t 300 fio --name=v --filename="$dev" --direct=1 --rw=randrw \
		--bs="$bs" --size="$size" --verify=crc32c --ioengine=libaio \
		--iodepth=8 --numjobs=1 --output-format=json \
		--output="$json" 2>&1)
	rc=$?
	if [ "$rc" = 0 ] && fio_report "$name" "$json"; then
		ok "$name"
		return 0
	fi
	printf '%s\n' "$out" | tail -20 | sed 's/^/# /'
	[ -s "$json" ] && grep -iE '"error"|verify' "$json" | head -5 | sed 's/^/# /'
	! declare -F fio_failed >/dev/null || fio_failed
	not_ok "$name" "fio exit $rc"
	return 1
}

# fio_report NAME JSON: the job's figures; fails when it reports an error
fio_report() {
	/usr/bin/python3 - "$1" "$2" <<-'PY'
		import json, sys
		j = json.load(open(sys.argv[2]))["jobs"][0]
		r, w = j["read"], j["write"]
		print("# %s: read %.0f IOPS %.2f MB/s, write %.0f IOPS %.2f MB/s, %d+%d I/Os, %.1f s, error %d"
		      % (sys.argv[1], r["iops"], r["bw_bytes"] / 1e6, w["iops"], w["bw_bytes"] / 1e6,
		         r["total_ios"], w["total_ios"], j["job_runtime"] / 1000.0, j["error"]))
		sys.exit(1 if j["error"] else 0)
	PY
}

#!/bin/bash
# tools/testing/vm/run.sh - run a command as root inside a throwaway QEMU VM.
#
# Usage:
#   tools/testing/vm/run.sh [OPTIONS] [--] CMD...
#   tools/testing/vm/run.sh [OPTIONS] --pair CMD_A CMD_B      (same as run-pair.sh)
#
# Options:
#   --timeout SECS   host-side limit for the whole VM run (default 600,
#                    env SOFTRC_VM_TIMEOUT) on an idle host; expiry fails
#                    with status 124. Multiplied by SOFTRC_HOST_TIME_SCALE:
#                    how many times longer than on an idle host a fixed
#                    CPU loop takes here now (measured unless set, >= 1),
#                    so that a loaded host is not taken for a hung guest
#   --mem MB         guest memory (default 2048; 3072 for the debug kernel)
#   --smp N          guest vCPUs (default 2)
#   --env NAME=VAL   export NAME=VAL to CMD (repeatable); SOFTRC_VM_ENV is
#                    also honoured: SOFTRC_VM_ENV="A=1 B=2" (whitespace
#                    separated, so values cannot contain blanks; use --env)
#   --log FILE       also write the raw guest console to FILE
#   --append ARGS    extra kernel command line (also SOFTRC_VM_APPEND)
#   --name NAME      guest hostname softrc-NAME, console lines prefixed
#                    "[NAME] " (used by pair mode)
#   --netdev-listen PORT | --netdev-connect PORT   add a virtio-net NIC on a
#                    QEMU socket netdev at 127.0.0.1:PORT (pair mode)
#   --mac MAC        MAC of that NIC
#
# What the guest is: Debian's kernel of the series SOFTRC_KVER (6.1, the
# default, or 6.12: tools/setup/kernel.sh list; cached, see setup.sh) with a
# busybox initramfs; the host's / is mounted read-only over virtio-9p with a
# tmpfs overlay on top, so the guest sees the repo and every host binary at
# the same paths, and writes go to RAM only.  /lib/modules/$KVER is the
# extracted Debian module tree (modprobe works; /lib/modules/$KVER/build
# points at that kernel's headers, tools/setup/kernel.sh SERIES kdir), /tmp is a fresh tmpfs (unless the cwd
# is under /tmp), debugfs is at /sys/kernel/debug, lo is up.  No NIC except
# in pair mode.
#
# CMD: a single argument is a shell command string run as
# `/bin/sh -c "CMD"`; several arguments are quoted individually and joined
# (argv semantics).  It runs as root with stdin </dev/null, in the same cwd
# as the caller, with PATH=/usr/local/sbin:...:/bin, HOME=/root,
# SOFTRC_VM=1, SOFTRC_VM_NAME, SOFTRC_KVER (the series), plus the
# --env/SOFTRC_VM_ENV variables.
#
# Exit status: CMD's exit status when the run is otherwise clean; and
#   123  CMD exited 0 but the guest kernel log matched
#        WARNING:|BUG:|Oops|refcount_t:|list_{add,del} corruption|
#        general protection|UBSAN|KASAN|kmemleak reports  (lines are printed;
#        a non-zero CMD status is kept as is)
#   124  host-side timeout
#   125  harness failure: kernel panic, boot failure, guest died without
#        reporting a status, bad usage (a panic while booting, before CMD
#        started, is first retried with one more boot, except in pair mode)
# Status travels on the serial console as a "SOFTRC-VM-EXIT=<n>" line.
# The console is streamed to stdout; harness messages ("softrc-vm: ...",
# including the measured boot time) go to stderr.
#
# Pair mode (--pair / run-pair.sh): two guests A and B, each with one
# virtio-net NIC named eth0 (up, no address), linked to each other only;
# see the header of run-pair.sh.
#
# Boot to CMD takes ~5 s under TCG on an idle 2-core host (the kernel is
# booted as an uncompressed vmlinux via PVH, skipping xz decompression).
# TCG is CPU-bound: with other VMs or builds competing for the cores it
# grows to 10-20 s with 2 vCPUs; --smp 1 suffers much less from that.
#
# Environment: SOFTRC_CACHE (cache root, default ~/.cache/softrc),
# SOFTRC_KVER (guest kernel series, default 6.1; see lib.sh),
# SOFTRC_VM_FLAVOR (release|debug: Debian's kernel or the debug build of
# tools/testing/vm/debug-kernel.sh, see lib.sh),
# SOFTRC_VM_ACCEL (kvm|tcg|icount, default: probe; icount is one TCG
# thread whose clock counts guest instructions, 2^SOFTRC_VM_ICOUNT_SHIFT
# ns each, default 3: time in the guest measures work done, not the
# host's speed; make bench BENCH_CLOCK=icount), SOFTRC_VM_TIMEOUT,
# SOFTRC_VM_ENV, SOFTRC_VM_APPEND.
set -euo pipefail

# shellcheck source=tools/testing/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}"; exit "${1:-0}"; }

# --- Phase 0: options ----------------------------------------------------------
timeout=${SOFTRC_VM_TIMEOUT:-600}
mem=$VM_DEFAULT_MEM
smp=2
logfile=
name=
append=${SOFTRC_VM_APPEND:-}
netdev=
mac=52:54:00:12:34:56
envs=()
for kv in ${SOFTRC_VM_ENV:-}; do envs+=("$kv"); done

pair_args=()
while (($#)); do
	case $1 in
	--timeout) timeout=$2; pair_args+=("$1" "$2"); shift 2 ;;
	--mem) mem=$2; pair_args+=("$1" "$2"); shift 2 ;;
	--smp) smp=$2; pair_args+=("$1" "$2"); shift 2 ;;
	--env) envs+=("$2"); pair_args+=("$1" "$2"); shift 2 ;;
	--log) logfile=$2; shift 2 ;;
	--append) append+=" $2"; pair_args+=("$1" "$2"); shift 2 ;;
	--name) name=$2; shift 2 ;;
	--netdev-listen) netdev="listen=127.0.0.1:$2"; shift 2 ;;
	--netdev-connect) netdev="connect=127.0.0.1:$2"; shift 2 ;;
	--mac) mac=$2; shift 2 ;;
	--pair) shift; exec "$VM_DIR/run-pair.sh" "${pair_args[@]}" "$@" ;;
	-h | --help) usage 0 ;;
	--) shift; break ;;
	-*) echo "run.sh: unknown option $1" >&2; usage 125 >&2 ;;
	*) break ;;
	esac
done
(($# > 0)) || { echo "run.sh: no command given" >&2; usage 125 >&2; }
[[ $timeout =~ ^[0-9]+$ && $mem =~ ^[0-9]+$ && $smp =~ ^[0-9]+$ ]] ||
	vm_die "--timeout/--mem/--smp need integers"

# The host's speed now (the guest measures its own: selftests/vm/lib.sh):
# best of 3 runs of a 2000-step shell loop against its time on an idle
# 2-core host (SOFTRC_HOST_PROBE_REF_US), at least 1, at most 10.
host_time_scale() {
	local best=0 r t0 t1 i us ref=${SOFTRC_HOST_PROBE_REF_US:-12000}
	for r in 1 2 3; do
		t0=${EPOCHREALTIME/[.,]/}
		i=0
		while ((i < 2000)); do i=$((i + 1)); done
		t1=${EPOCHREALTIME/[.,]/}
		us=$((t1 - t0))
		((best == 0 || us < best)) && best=$us
	done
	r=$(((best + ref - 1) / ref))
	((r >= 1)) || r=1
	((r <= 10)) || r=10
	echo "$r"
}
[[ ${SOFTRC_HOST_TIME_SCALE:-} =~ ^[1-9][0-9]*$ ]] || SOFTRC_HOST_TIME_SCALE=$(host_time_scale)
timeout=$((timeout * SOFTRC_HOST_TIME_SCALE))
for kv in "${envs[@]}"; do
	[[ $kv =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || vm_die "bad env assignment '$kv' (want NAME=VALUE)"
done

if (($# == 1)); then
	cmd=$1
else
	cmd=
	for a in "$@"; do cmd+="${cmd:+ }$(vm_shquote "$a")"; done
fi

# --- Phase 1: cache (kernel, modules, base initramfs) -------------------------------
vm_ensure_cache

# --- Phase 2: accelerator ---------------------------------------------------------
# KVM only if the CPU advertises vmx/svm and /dev/kvm opens; else TCG.
accel=${SOFTRC_VM_ACCEL:-}
if [[ -z $accel ]]; then
	accel=tcg
	if grep -qwE 'vmx|svm' /proc/cpuinfo && (: <>/dev/kvm) 2>/dev/null; then
		accel=kvm
	fi
fi
# shellcheck disable=SC2054 # commas belong to QEMU option values
case $accel in
kvm) accel_args=(-accel kvm -cpu host) ;;
tcg) accel_args=(-accel tcg,thread=multi -cpu max) ;;
icount) accel_args=(-accel tcg,thread=single -cpu max -icount "shift=${SOFTRC_VM_ICOUNT_SHIFT:-3},sleep=off") ;;
*) vm_die "SOFTRC_VM_ACCEL must be kvm, tcg or icount" ;;
esac

# --- Phase 3: per-run initramfs (config + command) ----------------------------------
rundir=$(mktemp -d "${TMPDIR:-/tmp}/softrc-vm.XXXXXX")
tpid=
# shellcheck disable=SC2317 # invoked by the EXIT trap
cleanup() {
	if [[ -n $tpid ]] && kill -0 "$tpid" 2>/dev/null; then
		kill "$tpid" 2>/dev/null || true
		wait "$tpid" 2>/dev/null || true
	fi
	wait 2>/dev/null || true
	rm -rf "$rundir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cwd=$PWD
tmpfs=1
[[ $cwd == /tmp || $cwd == /tmp/* ]] && tmpfs=0 # keep host /tmp visible

mkdir -p "$rundir/cpio/softrc"
{
	echo "SOFTRC_KREL=$(vm_shquote "$KVER")"
	echo "SOFTRC_MODDIR=$(vm_shquote "$KMODDIR")"
	echo "SOFTRC_TMPFS=$tmpfs"
	echo "SOFTRC_NIC=$([[ -n $netdev ]] && echo 1 || echo 0)"
	echo "SOFTRC_HOSTNAME=$(vm_shquote "softrc${name:+-$name}")"
	echo "SOFTRC_BAD_KLOG_RE=$(vm_shquote "$BAD_KLOG_RE")"
} >"$rundir/cpio/softrc/conf"
{
	echo "export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	echo "export HOME=/root USER=root LOGNAME=root TERM=dumb SOFTRC_VM=1"
	echo "export SOFTRC_KVER=$(vm_shquote "$VM_SERIES")"
	echo "export SOFTRC_VM_NAME=$(vm_shquote "$name")"
	[[ -n $netdev ]] && echo "export SOFTRC_VM_NIC=eth0 SOFTRC_VM_MAC=$(vm_shquote "$mac")"
	for kv in "${envs[@]}"; do
		echo "export ${kv%%=*}=$(vm_shquote "${kv#*=}")"
	done
	echo "cd $(vm_shquote "$cwd") || { echo 'softrc-vm: cannot cd to $cwd in guest'; exit 125; }"
	echo "exec /bin/sh -c $(vm_shquote "$cmd")"
} >"$rundir/cpio/softrc/cmd.sh"
(cd "$rundir/cpio" && find . -mindepth 1 | cpio -o -H newc --quiet --owner 0:0 >"$rundir/run.cpio")
cat "$BASE_INITRD" "$rundir/run.cpio" >"$rundir/initrd"

# --- Phase 4: QEMU command line -----------------------------------------------------
# Kernel command line: serial console; loglevel=5 hides the boot chatter but
# prints warnings (WARN splats) and worse; panic=-1 + -no-reboot turn a
# panic into QEMU exiting; cryptomgr.notests skips ~0.5 s of crypto
# self-tests under TCG; no_timer_check skips the boot-time check that the
# IO-APIC timer ticks within a busy-wait, which a TCG guest on a loaded
# host fails ("IO-APIC + timer doesn't work!", a panic at 0.07 s);
# tsc=reliable keeps the clocksource watchdog from declaring the TSC
# unstable when the host stalls a vCPU: that flips sched_clock's static
# key, and the live text patching of it (int3) panicked a 6.12 guest
# under multi-threaded TCG ("Oops: int3" in sched_clock_cpu).
# Prefer the uncompressed vmlinux (PVH entry); setup.sh writes an empty file
# when extraction was impossible, then the bzImage is used.
kernel=$KVMLINUX
[[ -s $kernel ]] || kernel=$KIMAGE
# shellcheck disable=SC2054 # commas belong to QEMU option values
qemu=(qemu-system-x86_64 -name "softrc-vm${name:+-$name}"
	-M q35 "${accel_args[@]}" -m "$mem" -smp "$smp"
	-nodefaults -display none -serial stdio -monitor none -no-reboot
	-kernel "$kernel" -initrd "$rundir/initrd"
	-append "console=ttyS0 loglevel=5 panic=-1 rdinit=/init cryptomgr.notests=1 no_timer_check tsc=reliable $VM_APPEND_FLAVOR $append"
	-fsdev local,id=fs0,path=/,security_model=none,readonly=on,multidevs=remap
	-device "virtio-9p-pci,fsdev=fs0,mount_tag=hostroot"
	-device "virtio-rng-pci")
if [[ -n $netdev ]]; then
	qemu+=(-netdev "socket,id=n0,$netdev" -device "virtio-net-pci,netdev=n0,mac=$mac")
fi

# --- Phase 5: boot, stream the console, enforce the timeout --------------------------
log=$rundir/console.log
prefix=${name:+[$name] }
usec() { local t=${EPOCHREALTIME//[.,]/}; echo "$t"; }
t0=$(usec)
vm_log "${prefix}booting $KVER ($VM_FLAVOR, $accel, ${smp} vCPU, ${mem} MB, timeout ${timeout}s = x$SOFTRC_HOST_TIME_SCALE)"

# Console reader: copy each line to stdout (prefixed) and the log, and note
# the boot time when the guest announces the command start.
reader() {
	local line t
	while IFS= read -r line || [[ -n $line ]]; do
		line=${line%$'\r'}
		printf '%s%s\n' "$prefix" "$line"
		printf '%s\n' "$line" >>"$log"
		[[ -n $logfile ]] && printf '%s\n' "$line" >>"$logfile"
		if [[ $line == SOFTRC-VM-START* && ! -f $rundir/boot ]]; then
			t=$(($(usec) - t0))
			printf '%d.%02d' $((t / 1000000)) $((t % 1000000 / 10000)) >"$rundir/boot"
			vm_log "${prefix}boot to command: $(cat "$rundir/boot") s (guest ${line#*uptime=} s)"
		fi
	done
	: >"$rundir/reader.done"
}

# One boot, its console to $log (and --log). A guest that panics while
# booting, before the command started, is booted once more: under QEMU
# TCG a boot can die in the kernel's own code patching (an "Oops: int3"
# in the first seconds, seen once on a loaded host), which says nothing
# about the command. Not in pair mode, where the peer holds the link.
[[ -n $logfile ]] && : >"$logfile"
boots=1
while :; do
	: >"$log"
	rm -f "$rundir/reader.done"
	timeout -k 5 "$timeout" "${qemu[@]}" </dev/null > >(reader) 2>&1 &
	tpid=$!
	qrc=0
	wait "$tpid" || qrc=$?
	tpid=
	# The reader sees EOF once QEMU and timeout are gone; wait for it to
	# drain the pipe so the log is complete before judging it.
	for _ in $(seq 100); do
		[[ -f $rundir/reader.done ]] && break
		sleep 0.1
	done
	if ((boots > 1 || qrc == 124 || qrc == 137)) ||
		[[ -n $netdev || -f $rundir/boot ]] ||
		! grep -aq 'Kernel panic - not syncing' "$log"; then
		break
	fi
	vm_log "${prefix}the guest panicked while booting, before the command: booting once more"
	boots=2
	t0=$(usec)
done

# --- Phase 6: verdict -------------------------------------------------------------------
boot=$(cat "$rundir/boot" 2>/dev/null || echo '?')
fail() { # $1 = status, rest = reason
	local st=$1
	shift
	vm_log "${prefix}FAIL: $*"
	exit "$st"
}

klog_host=$(grep -aE "\[ *[0-9]+\.[0-9]+\] .*($BAD_KLOG_RE)" "$log" | grep -av "^SOFTRC-VM-DMESG-BAD:" || true)
if [[ -n $klog_host ]]; then
	vm_log "${prefix}bad kernel log lines on console:"
	printf '%s\n' "$klog_host" | sed "s/^/softrc-vm: ${prefix}  /" >&2
fi

if ((qrc == 124 || qrc == 137)); then
	fail 124 "host-side timeout after ${timeout}s (boot: $boot s)"
fi
if grep -aq 'Kernel panic - not syncing' "$log"; then
	vm_log "${prefix}$(grep -a -m1 'Kernel panic - not syncing' "$log")"
	fail 125 "guest kernel panic"
fi
if grep -aq 'SOFTRC-VM-INIT-FAIL' "$log"; then
	fail 125 "guest init failed: $(grep -a -m1 'SOFTRC-VM-INIT-FAIL' "$log")"
fi
rc=$(grep -a '^SOFTRC-VM-EXIT=[0-9]*$' "$log" | tail -n1 | cut -d= -f2 || true)
if [[ -z $rc ]]; then
	fail 125 "guest ended without reporting an exit status (qemu status $qrc)"
fi
if grep -aq '^SOFTRC-VM-DMESG=dirty' "$log" || [[ -n $klog_host ]]; then
	((rc != 0)) || rc=123
	fail "$rc" "guest kernel log has bad lines (see SOFTRC-VM-DMESG-BAD above); command status $(grep -a '^SOFTRC-VM-EXIT=' "$log" | tail -n1 | cut -d= -f2)"
fi
if ((rc != 0)); then
	fail "$rc" "command exited with status $rc (boot: $boot s)"
fi
vm_log "${prefix}PASS (boot: $boot s)"
exit 0

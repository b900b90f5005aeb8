# shellcheck shell=bash disable=SC2034 # variables are used by the sourcing scripts
# tools/testing/vm/lib.sh - shared definitions for the softrc QEMU VM harness.
# Sourced by setup.sh, run.sh and run-pair.sh; not executable on its own.

# Directory holding these scripts and the repo root, found from our own path
# so the harness works from any cwd and in any clone location.
VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
REPO_ROOT=$(cd "$VM_DIR/../../.." && pwd -P)
export VM_DIR REPO_ROOT

vm_log() { printf 'softrc-vm: %s\n' "$*" >&2; }
vm_die() { printf 'softrc-vm: ERROR: %s\n' "$*" >&2; exit 125; }

# Guest kernel series (SOFTRC_KVER): one of `tools/setup/kernel.sh list`
# ("6.1 6.12"), default 6.1, Debian 12's own kernel. The old
# SOFTRC_VM_KVER (a release string) still works when it names the release
# of a supported series. VM_SERIES is the series, KVER its release.
KERNEL_SH=$REPO_ROOT/tools/setup/kernel.sh
if [[ -z ${SOFTRC_KVER:-} && -n ${SOFTRC_VM_KVER:-} ]]; then
	for s in $("$KERNEL_SH" list); do
		[[ $("$KERNEL_SH" "$s" release) == "$SOFTRC_VM_KVER" ]] && SOFTRC_KVER=$s
	done
	[[ -n ${SOFTRC_KVER:-} ]] ||
		vm_die "SOFTRC_VM_KVER=$SOFTRC_VM_KVER is no supported kernel's release (use SOFTRC_KVER=$("$KERNEL_SH" list | tr ' ' '|'))"
fi
VM_SERIES=${SOFTRC_KVER:-6.1}
KVER=$("$KERNEL_SH" "$VM_SERIES" release 2>/dev/null) ||
	vm_die "SOFTRC_KVER=$VM_SERIES: not a supported kernel series ($("$KERNEL_SH" list))"

# Guest kernel flavour (SOFTRC_VM_FLAVOR):
#   release  Debian's packaged kernel of the series, fetched as a .deb
#            (tools/setup/kernel.sh SERIES image-pkg), never installed
#   debug    the same source built with KASAN, UBSAN, lockdep, kmemleak and
#            friends by debug-kernel.sh (`make check-debug`); booted with
#            panic_on_warn, so the first warning ends the run
VM_FLAVOR=${SOFTRC_VM_FLAVOR:-release}
KPKG=$("$KERNEL_SH" "$VM_SERIES" image-pkg)

# Cache layout: ${SOFTRC_CACHE:-$HOME/.cache/softrc}/vm-SERIES/
#   *.deb          the downloaded kernel package
#   root/          dpkg-deb -x of it (+ depmod output); its
#                  lib/modules/KVER/build points at the series' headers
#                  (kernel.sh SERIES kdir)
#   vmlinux        the uncompressed kernel ELF, booted via PVH: skips the
#                  bzImage's xz decompression, which takes ~5 s under TCG
#   initramfs.cpio the base initramfs (busybox + boot modules + init)
#   stamp          hash of the inputs the above were built from
# The debug flavour's cache is vm-debug-SERIES/ (see debug-kernel.sh): no
# .deb and no PVH vmlinux, only the bzImage it built (and its release and
# key files) and its modules_install tree. A 6.1 debug kernel still in the
# older vm-debug/ is used when vm-debug-6.1/ has none.
CACHE_ROOT=${SOFTRC_CACHE:-${HOME:-/root}/.cache/softrc}
VM_CACHE=$CACHE_ROOT/vm-$VM_SERIES
VM_DEFAULT_MEM=2048
VM_APPEND_FLAVOR=
case $VM_FLAVOR in
release) ;;
debug)
	VM_CACHE=$CACHE_ROOT/vm-debug-$VM_SERIES
	[[ $VM_SERIES == 6.1 && ! -f $VM_CACHE/release && -f $CACHE_ROOT/vm-debug/release ]] &&
		VM_CACHE=$CACHE_ROOT/vm-debug
	KVER=$(cat "$VM_CACHE/release" 2>/dev/null || echo none)
	VM_DEFAULT_MEM=3072
	# The stall detectors report after 120 s, not 20 to 30 s: a TCG vCPU
	# sharing the host with other guests can go without the host CPU that
	# long (boot's W+X page-table walk was flagged as a 26 s soft lockup,
	# a busy workqueue pool at 40 s): soft lockup (watchdog_thresh x 2),
	# workqueue lockup, RCU stall. The hung-task timeout is 120 s already.
	VM_APPEND_FLAVOR="panic_on_warn=1 kmemleak=on watchdog_thresh=60"
	VM_APPEND_FLAVOR+=" workqueue.watchdog_thresh=120 rcupdate.rcu_cpu_stall_timeout=120"
	;;
*) vm_die "SOFTRC_VM_FLAVOR must be release or debug" ;;
esac
KROOT=$VM_CACHE/root
KIMAGE=$KROOT/boot/vmlinuz-$KVER
KMODDIR=$KROOT/lib/modules/$KVER
KVMLINUX=$VM_CACHE/vmlinux
# debug: no PVH shortcut (KASAN's early boot does not survive it)
[[ $VM_FLAVOR == debug ]] && KIMAGE=$VM_CACHE/bzImage KVMLINUX=$VM_CACHE/bzImage
BASE_INITRD=$VM_CACHE/initramfs.cpio
STAMP=$VM_CACHE/stamp

# Host packages the harness needs (checked with dpkg -s, installed if missing).
VM_HOST_PKGS=(qemu-system-x86 busybox-static kmod cpio zstd xz-utils
	rdma-core ibverbs-utils perftest iproute2 binutils)

# Kernel log patterns that fail a run even when the command passed.
# (kmemleak: its report line, not the boot banner or the command line;
# soft lockups and workqueue lockups say "BUG:", RCU stalls and hung
# tasks do not.)
BAD_KLOG_RE='WARNING:|BUG:|Oops|refcount_t:|list_add corruption|list_del corruption|general protection|UBSAN|KASAN|kmemleak: [0-9]+ new suspected|detected stalls? on CPU|blocked for more than [0-9]+ seconds'

# Boot modules baked into the initramfs, loaded in dependency order by init.
# NIC modules (virtio_net) are only loaded when the VM has a NIC.
VM_BOOT_MODS=(virtio_pci 9pnet_virtio 9p overlay virtio-rng)
VM_NIC_MODS=(virtio_net)

# Hash of everything the cache is built from.  Any edit to the guest-side
# scripts or the builder, or a different kernel, invalidates the cache.
vm_inputs_hash() {
	{
		printf 'kver=%s flavor=%s\n' "$KVER" "$VM_FLAVOR"
		[[ $VM_FLAVOR == debug ]] && cat "$VM_CACHE/key" 2>/dev/null
		cat "$VM_DIR/lib.sh" "$VM_DIR/setup.sh" "$VM_DIR/init" "$VM_DIR/stage2"
	} | sha256sum | cut -d' ' -f1
}

# True when the cache exists and was built from the current inputs.
vm_cache_fresh() {
	[[ -f $STAMP && -f $KIMAGE && -f $KVMLINUX && -f $BASE_INITRD && -f $KMODDIR/modules.dep ]] || return 1
	[[ $(head -n1 "$STAMP") == "inputs=$(vm_inputs_hash)" ]]
}

# Make sure the cache is usable, (re)building it with setup.sh if needed.
vm_ensure_cache() {
	vm_cache_fresh && return 0
	"$VM_DIR/setup.sh" || vm_die "setup.sh failed"
	vm_cache_fresh || vm_die "cache still stale after setup.sh"
}

# Single-quote a string for POSIX sh.
vm_shquote() {
	local s=$1
	printf "'%s'" "${s//\'/\'\\\'\'}"
}

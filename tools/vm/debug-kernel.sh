#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/vm/debug-kernel.sh - build and cache the debug guest kernel.
#
# Builds Debian's linux-source-6.1 (the same version as the headers the
# module is built against) with Debian's own config, trimmed to what the
# VM needs (localmodconfig over the module list below) and with the
# kernel's runtime checkers on: KASAN, UBSAN, lockdep (PROVE_LOCKING),
# DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS, KMEMLEAK, the soft-lockup and
# hung-task detectors.  The VM's boot drivers (virtio, 9p, overlay) are
# built in.  Debug info and module signing are off: they only cost time.
#
# The result lives in ${SOFTRC_CACHE:-~/.cache/softrc}/vm-debug/:
#   build/         the kernel build tree (KDIR for softrc and test modules)
#   root/          modules_install output, /lib/modules/<release>/
#   bzImage        the kernel, booted as a bzImage: with KASAN the PVH entry
#                  (the release flavour's shortcut) triple-faults before
#                  the console is up
#   release        the kernel release string
#   key            hash of what was built: source package version and
#                  the final .config
# Every run configures afresh in a scratch tree (a few seconds); when the
# source version and the resulting .config match the cached build, nothing
# is rebuilt.  A changed config rebuilds from scratch.  The build runs at
# low priority (nice 19) so it yields the CPU to anything else.
#
# Usage: tools/vm/debug-kernel.sh [--force]    prints the cache directory
set -euo pipefail

cache=${SOFTRC_CACHE:-${HOME:-/root}/.cache/softrc}/vm-debug
tarball=/usr/src/linux-source-6.1.tar.xz
base_config=/usr/src/linux-headers-6.1.0-57-amd64/.config
localver=-softrc-debug

log() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

[[ -f $tarball ]] || die "no $tarball (tools/setup/deps.sh installs linux-source-6.1)"
[[ -f $base_config ]] || die "no $base_config (linux-headers-6.1.0-57-amd64)"

srcver=$(dpkg-query -W -f='${Version}' linux-source-6.1)

mkdir -p "$cache"
exec 9>"$cache/.build.lock"
flock 9

# Modules the VM suites load (directly, or through autoload: veth for the
# namespace pair, netem for the lossy links, VLAN and macvlan devices for
# vlan.sh), the RDMA core, rxe for the coexistence test, and the kernel
# ULPs softrc is meant to carry (NVMe-oF, NFS, iSER with its SCSI disk).
mods=(ib_core ib_uverbs ib_umad ib_cm iw_cm rdma_cm rdma_ucm rdma_rxe
	udp_tunnel ip6_udp_tunnel veth sch_netem crc32_generic libcrc32c
	nvme_fabrics nvme_rdma nvmet nvmet_rdma null_blk brd
	rpcrdma nfsd nfs nfsv4 sunrpc
	8021q macvlan ib_iser ib_isert iscsi_target_mod target_core_mod
	scsi_transport_iscsi libiscsi sd_mod)
# Built in, so the initramfs needs to load nothing.
builtin=(VIRTIO VIRTIO_PCI VIRTIO_PCI_LIB VIRTIO_PCI_LIB_LEGACY VIRTIO_NET
	VIRTIO_RING NET_FAILOVER FAILOVER NET_9P NET_9P_VIRTIO 9P_FS OVERLAY_FS
	HW_RANDOM HW_RANDOM_VIRTIO)

src=$cache/src
build=$cache/build
if [[ ! -f $src/.softrc-src || $(cat "$src/.softrc-src") != "$srcver" ]]; then
	log "extracting linux-source-6.1 $srcver"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	echo "$srcver" >"$src/.softrc-src"
fi

log "configuring"
scratch=$cache/config
rm -rf "$scratch"
mkdir -p "$scratch"
cp "$base_config" "$scratch/.config"
printf '%s 0 0\n' "${mods[@]}" | sed '1i Module Size Used_by' >"$cache/lsmod"
kmake() { nice -n 19 make -C "$src" O="$out" "$@"; }
out=$scratch
kmake olddefconfig >/dev/null
{ yes '' || true; } | kmake LSMOD="$cache/lsmod" localmodconfig >/dev/null 2>"$cache/localmodconfig.log"

cfg() { "$src/scripts/config" --file "$scratch/.config" "$@"; }
for o in "${builtin[@]}"; do cfg -e "$o"; done
cfg --set-str LOCALVERSION "$localver" -d LOCALVERSION_AUTO \
	-d MODULE_SIG -d MODULE_SIG_ALL --set-str MODULE_SIG_KEY "" \
	--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS "" \
	-d DEBUG_INFO -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_BTF \
	-e DEBUG_INFO_NONE \
	-e KASAN -e KASAN_GENERIC -e KASAN_OUTLINE -d KASAN_INLINE -e KASAN_VMALLOC \
	-e UBSAN -e UBSAN_BOUNDS -e UBSAN_SHIFT -e UBSAN_DIV_ZERO -e UBSAN_BOOL \
	-e UBSAN_ENUM -d UBSAN_ALIGNMENT -e UBSAN_SANITIZE_ALL \
	-e DEBUG_KERNEL -e LOCKDEP_SUPPORT -e PROVE_LOCKING -e DEBUG_LOCK_ALLOC \
	-e DEBUG_SPINLOCK -e DEBUG_MUTEXES -e DEBUG_RWSEMS -e PROVE_RCU \
	-e DEBUG_ATOMIC_SLEEP -e DEBUG_LIST -e DEBUG_SG \
	-e DEBUG_OBJECTS -e DEBUG_OBJECTS_FREE -e DEBUG_OBJECTS_TIMERS \
	-e DEBUG_OBJECTS_WORK -e DEBUG_OBJECTS_RCU_HEAD \
	-e DEBUG_OBJECTS_PERCPU_COUNTER \
	-e DEBUG_KMEMLEAK --set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 65536 \
	-d DEBUG_KMEMLEAK_DEFAULT_OFF -e DEBUG_KMEMLEAK_AUTO_SCAN \
	-e SOFTLOCKUP_DETECTOR -e DETECT_HUNG_TASK \
	--set-val DEFAULT_HUNG_TASK_TIMEOUT 120 -e WQ_WATCHDOG \
	-e SLUB_DEBUG -e PVH
kmake olddefconfig >/dev/null
for o in KASAN UBSAN PROVE_LOCKING DEBUG_ATOMIC_SLEEP DEBUG_OBJECTS \
	DEBUG_KMEMLEAK SOFTLOCKUP_DETECTOR DETECT_HUNG_TASK PVH \
	VIRTIO_PCI NET_9P_VIRTIO 9P_FS OVERLAY_FS INFINIBAND; do
	grep -q "^CONFIG_$o=[ym]" "$scratch/.config" || die "CONFIG_$o did not stick"
done
grep -q '^CONFIG_RDMA_RXE=m' "$scratch/.config" || die "CONFIG_RDMA_RXE did not stick"

key=$({ echo "$srcver"; cat "$scratch/.config"; } | sha256sum | cut -d' ' -f1)
if [[ ${1:-} != --force && -f $cache/key && $(cat "$cache/key") == "$key" &&
	-s $cache/bzImage && -f $cache/release ]]; then
	rm -rf "$scratch"
	echo "$cache"
	exit 0
fi
# Same config as the build tree has: finish that build (make is
# incremental); another config: start over.
if ! cmp -s "$scratch/.config" "$build/.config"; then
	rm -rf "$build"
	mkdir -p "$build"
	cp "$scratch/.config" "$build/.config"
fi
rm -rf "$scratch"
out=$build

jobs=$(nproc)
log "building (make -j$jobs, nice 19); the first build takes about an hour on 2 cores"
t0=$SECONDS
kmake -j"$jobs" bzImage modules >"$cache/build.log" 2>&1 ||
	{ tail -n 30 "$cache/build.log" >&2; die "kernel build failed (see $cache/build.log)"; }
release=$(kmake -s kernelrelease)
rm -rf "$cache/root"
kmake INSTALL_MOD_PATH="$cache/root" modules_install >>"$cache/build.log" 2>&1 ||
	die "modules_install failed"
rm -f "$cache/root/lib/modules/$release"/{build,source}
ln -s "$build" "$cache/root/lib/modules/$release/build"
cp "$build/arch/x86/boot/bzImage" "$cache/bzImage"
echo "$release" >"$cache/release"
echo "$key" >"$cache/key"
log "built $release in $((SECONDS - t0)) s"
echo "$cache"

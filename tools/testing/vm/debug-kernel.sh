#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/testing/vm/debug-kernel.sh - build and cache the debug guest kernel.
#
# Builds Debian's linux-source-SERIES (SOFTRC_KVER=6.1|6.12, default 6.1:
# the same version as the headers the module is built against, see
# tools/setup/kernel.sh) with Debian's own config, trimmed to what the VM
# needs (localmodconfig over the module list below) and with the kernel's
# runtime checkers on: KASAN, UBSAN, lockdep (PROVE_LOCKING),
# DEBUG_ATOMIC_SLEEP, DEBUG_OBJECTS, KMEMLEAK, the soft-lockup and
# hung-task detectors.  The VM's boot drivers (virtio, 9p, overlay; in
# 6.12 also netfs, which 9p needs) are built in.  Debug info and module
# signing are off: they only cost time.
#
# Every option set below must be a symbol of the series' Kconfig, and
# every setting must survive olddefconfig (the script stops otherwise):
# a renamed or removed option is found when the series is configured,
# not by a kernel that silently lacks a checker.
#
# The result lives in ${SOFTRC_CACHE:-~/.cache/softrc}/vm-debug-SERIES/:
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
# Usage: SOFTRC_KVER=SERIES tools/testing/vm/debug-kernel.sh [--force | --config]
#   prints the cache directory; --force rebuilds even when the cache
#   matches; --config only configures and checks, and prints the path of
#   the resulting .config (left in the cache's config/ directory).
set -euo pipefail

top=$(cd "$(dirname "$0")/../../.." && pwd -P)
series=${SOFTRC_KVER:-6.1}
kernel() { "$top/tools/setup/kernel.sh" "$series" "$@"; }
localver=-softrc-debug

log() { printf 'debug-kernel: %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

case ${1:-} in
'' | --force | --config) ;;
*) die "usage: SOFTRC_KVER=SERIES $0 [--force | --config]" ;;
esac
kernel release >/dev/null || die "SOFTRC_KVER=$series is not a supported series"
cache=${SOFTRC_CACHE:-${HOME:-/root}/.cache/softrc}/vm-debug-$series

# the kernel build's own tools (objtool needs libelf, the certs openssl)
"$top/tools/setup/deps.sh" flex bison bc libelf-dev libssl-dev >&2 ||
	die "build dependencies missing (tools/setup/deps.sh)"
tarball=$(kernel source) || die "no linux-source-$series tarball (tools/setup/kernel.sh $series source)"
base_config=$(kernel kdir)/.config
[[ -f $base_config ]] || die "no $base_config (tools/setup/kernel.sh $series kdir)"
srcver=$(kernel source-version) || die "no version for linux-source-$series"

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
	NET_FAILOVER FAILOVER NET_9P NET_9P_VIRTIO 9P_FS OVERLAY_FS
	HW_RANDOM HW_RANDOM_VIRTIO)
# The boot modules (tools/testing/vm/lib.sh's VM_BOOT_MODS and VM_NIC_MODS) the
# build must have built in, checked in modules.builtin after the build.
boot_mods=(virtio_pci 9pnet 9pnet_virtio 9p overlay virtio_net virtio-rng)

# The checkers, and what is switched off. scripts/config words, checked
# one by one after olddefconfig (see check_settings). Module signing:
# Debian's lockdown LSM selects MODULE_SIG, so the modules are not signed
# (no MODULE_SIG_ALL, no key) and load unsigned (no MODULE_SIG_FORCE).
settings=(--set-str LOCALVERSION "$localver" -d LOCALVERSION_AUTO
	-d MODULE_SIG_FORCE -d MODULE_SIG_ALL --set-str MODULE_SIG_KEY ""
	--set-str SYSTEM_TRUSTED_KEYS "" --set-str SYSTEM_REVOCATION_KEYS ""
	-d DEBUG_INFO -d DEBUG_INFO_DWARF_TOOLCHAIN_DEFAULT -d DEBUG_INFO_BTF
	-e DEBUG_INFO_NONE
	-e KASAN -e KASAN_GENERIC -e KASAN_OUTLINE -d KASAN_INLINE -e KASAN_VMALLOC
	-e UBSAN -e UBSAN_BOUNDS -e UBSAN_SHIFT -e UBSAN_DIV_ZERO -e UBSAN_BOOL
	-e UBSAN_ENUM -d UBSAN_ALIGNMENT
	-e DEBUG_KERNEL -e LOCKDEP_SUPPORT -e PROVE_LOCKING -e DEBUG_LOCK_ALLOC
	-e DEBUG_SPINLOCK -e DEBUG_MUTEXES -e DEBUG_RWSEMS -e PROVE_RCU
	-e DEBUG_ATOMIC_SLEEP -e DEBUG_LIST -e DEBUG_SG
	-e DEBUG_OBJECTS -e DEBUG_OBJECTS_FREE -e DEBUG_OBJECTS_TIMERS
	-e DEBUG_OBJECTS_WORK -e DEBUG_OBJECTS_RCU_HEAD
	-e DEBUG_OBJECTS_PERCPU_COUNTER
	-e DEBUG_KMEMLEAK --set-val DEBUG_KMEMLEAK_MEM_POOL_SIZE 65536
	-d DEBUG_KMEMLEAK_DEFAULT_OFF -e DEBUG_KMEMLEAK_AUTO_SCAN
	-e SOFTLOCKUP_DETECTOR -e DETECT_HUNG_TASK
	--set-val DEFAULT_HUNG_TASK_TIMEOUT 120 -e WQ_WATCHDOG
	-e SLUB_DEBUG -e PVH)
case $series in
6.1)
	# instrument every object (6.9 made that unconditional and dropped
	# the option)
	settings+=(-e UBSAN_SANITIZE_ALL)
	;;
6.12)
	# 9p's file I/O is netfs's since 6.10 (9P_FS selects NETFS_SUPPORT,
	# which holds fscache too): built in with it, or the root is not
	# mounted. The NFS client uses netfs too.
	mods+=(netfs)
	builtin+=(NETFS_SUPPORT)
	boot_mods+=(netfs)
	;;
esac
for o in "${builtin[@]}"; do settings+=(-e "$o"); done
# RDMA_RXE stays a module (coexist.sh loads and unloads it)
module_settings=(INFINIBAND RDMA_RXE)

src=$cache/src
build=$cache/build
if [[ ! -f $src/.softrc-src || $(cat "$src/.softrc-src") != "$srcver" ]]; then
	log "extracting linux-source-$series $srcver"
	rm -rf "$src"
	mkdir -p "$src"
	tar -xJf "$tarball" -C "$src" --strip-components=1
	echo "$srcver" >"$src/.softrc-src"
fi

# The symbols the settings name (the words after -e, -d, --set-*).
setting_names() {
	local i=0
	while ((i < ${#settings[@]})); do
		echo "${settings[i + 1]}"
		case ${settings[i]} in
		--set-*) i=$((i + 3)) ;;
		*) i=$((i + 2)) ;;
		esac
	done
}

# Every symbol the settings name must exist in this source's Kconfig.
check_symbols() {
	local known w missing=()
	known=$(find "$src" -name 'Kconfig*' -type f -print0 |
		xargs -0 sed -n 's/^[[:space:]]*\(menu\)\{0,1\}config[[:space:]]\{1,\}\([A-Za-z0-9_]*\).*/\2/p' |
		sort -u)
	for w in $(setting_names) "${module_settings[@]}"; do
		grep -qxF "$w" <<<"$known" || missing+=("$w")
	done
	((${#missing[@]} == 0)) ||
		die "not in linux-source-$series's Kconfig (renamed or removed?): ${missing[*]}"
}

# Every setting as asked: -e is =y, -d is not set, --set-val is that
# value, --set-str that string if the symbol is visible at all (the
# signing-key strings vanish with their options); the module_settings
# are =m.
check_settings() {
	local c=$1 i=0 op o v bad=()
	while ((i < ${#settings[@]})); do
		op=${settings[i]} o=${settings[i + 1]}
		i=$((i + 2))
		case $op in
		-e) grep -qx "CONFIG_$o=y" "$c" || bad+=("$o=y") ;;
		-d) ! grep -q "^CONFIG_$o=" "$c" || bad+=("$o off") ;;
		--set-val)
			v=${settings[i]} i=$((i + 1))
			grep -qx "CONFIG_$o=$v" "$c" || bad+=("$o=$v")
			;;
		--set-str)
			v=${settings[i]} i=$((i + 1))
			! grep -q "^CONFIG_$o=" "$c" || grep -qxF "CONFIG_$o=\"$v\"" "$c" ||
				bad+=("$o=\"$v\"")
			;;
		*) die "bad setting $op" ;;
		esac
	done
	for o in "${module_settings[@]}"; do
		grep -qx "CONFIG_$o=m" "$c" || bad+=("$o=m")
	done
	grep -q '^CONFIG_LOCALVERSION=' "$c" || bad+=(LOCALVERSION)
	((${#bad[@]} == 0)) || die "did not stick after olddefconfig: ${bad[*]}"
}

check_symbols
log "configuring linux-source-$series $srcver"
scratch=$cache/config
rm -rf "$scratch"
mkdir -p "$scratch"
cp "$base_config" "$scratch/.config"
printf '%s 0 0\n' "${mods[@]}" | sed '1i Module Size Used_by' >"$cache/lsmod"
kmake() { nice -n 19 make -C "$src" O="$out" "$@"; }
out=$scratch
kmake olddefconfig >/dev/null
{ yes '' || true; } | kmake LSMOD="$cache/lsmod" localmodconfig >/dev/null 2>"$cache/localmodconfig.log"
"$src/scripts/config" --file "$scratch/.config" "${settings[@]}"
for o in "${module_settings[@]}"; do "$src/scripts/config" --file "$scratch/.config" -m "$o"; done
kmake olddefconfig >/dev/null
check_settings "$scratch/.config"
if [[ ${1:-} == --config ]]; then
	echo "$scratch/.config"
	exit 0
fi

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

# A build killed between an object's compile and its symbol versions
# (genksyms; from 6.x kept as #SYMVER lines in the object's .cmd file)
# leaves an object make takes as done, and the exports it defines get CRC
# 0 in Module.symvers: the kernel then refuses every module that uses one
# ("no symbol version for snprintf"). Print the compiled objects (not the
# ld -r composites) that export symbols and have no versions.
unversioned_objects() {
	local o c
	find "$out" -name '*.o' ! -name '*.mod.o' ! -name 'built-in.a' \
		! -name 'vmlinux*' ! -name '.*' | while read -r o; do
		c=$(dirname "$o")/.$(basename "$o").cmd
		[ -f "$c" ] && ! grep -q '^#SYMVER' "$c" &&
			! grep -q '^savedcmd_.* := .*ld .* -r ' "$c" &&
			[ "$(nm "$o" 2>/dev/null | grep -c ' __export_symbol_')" != 0 ] &&
			echo "$o"
	done
	return 0
}
zero_crcs() {
	awk '$1 == "0x00000000"' "$out/Module.symvers" 2>/dev/null | wc -l
}

jobs=$(nproc)
log "building linux-source-$series (make -j$jobs, nice 19); the first build takes about an hour on 2 cores"
t0=$SECONDS
kmake -j"$jobs" bzImage modules >"$cache/build.log" 2>&1 ||
	{ tail -n 30 "$cache/build.log" >&2; die "kernel build failed (see $cache/build.log)"; }
if grep -q '^CONFIG_MODVERSIONS=y' "$out/.config" && [ "$(zero_crcs)" != 0 ]; then
	stale=$(unversioned_objects)
	[ -n "$stale" ] || die "$(zero_crcs) exports have no symbol version, and no object was found to rebuild"
	log "$(zero_crcs) exports without a symbol version (an interrupted build): rebuilding ${stale//$'\n'/ }"
	# shellcheck disable=SC2086 # one path a word
	rm -f $stale
	kmake -j"$jobs" bzImage modules >>"$cache/build.log" 2>&1 ||
		{ tail -n 30 "$cache/build.log" >&2; die "kernel build failed (see $cache/build.log)"; }
	[ "$(zero_crcs)" = 0 ] || die "$(zero_crcs) exports still have no symbol version"
fi
release=$(kmake -s kernelrelease)
rm -rf "$cache/root"
kmake INSTALL_MOD_PATH="$cache/root" modules_install >>"$cache/build.log" 2>&1 ||
	die "modules_install failed"
rm -f "$cache/root/lib/modules/$release"/{build,source}
ln -s "$build" "$cache/root/lib/modules/$release/build"

# The boot drivers are built in, and every module the suites load is there.
moddir=$cache/root/lib/modules/$release
for m in "${boot_mods[@]}"; do
	grep -q "/${m//[-_]/[-_]}\.ko\$" "$moddir/modules.builtin" ||
		die "$m is not built in (see $moddir/modules.builtin)"
done
for m in "${mods[@]}"; do
	modprobe -d "$cache/root" -S "$release" --show-depends "$m" >/dev/null 2>&1 ||
		die "$m was not built (not a module of linux-source-$series?)"
done

cp "$build/arch/x86/boot/bzImage" "$cache/bzImage"
echo "$release" >"$cache/release"
echo "$key" >"$cache/key"
log "built $release in $((SECONDS - t0)) s"
echo "$cache"

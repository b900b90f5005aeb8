#!/bin/bash
# tools/testing/vm/setup.sh - build the softrc VM cache (idempotent).
#
# Installs the host packages the harness needs, downloads Debian's
# linux-image package for the guest kernel series SOFTRC_KVER (default 6.1;
# tools/setup/kernel.sh SERIES image-pkg, never installed), extracts it,
# runs depmod on the extracted tree, points its lib/modules/RELEASE/build
# at the series' headers (kernel.sh SERIES kdir), and builds the base
# busybox initramfs.  Everything lands in
# ${SOFTRC_CACHE:-$HOME/.cache/softrc}/vm-SERIES/ (see lib.sh).  A stamp of
# the inputs (guest scripts, this builder, kernel version) decides whether a
# rebuild is needed; run.sh calls this automatically when the stamp is stale.
#
# Usage: tools/testing/vm/setup.sh [--force]
set -euo pipefail

# shellcheck source=tools/testing/vm/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

force=0
[[ ${1:-} == --force ]] && force=1

mkdir -p "$VM_CACHE"

# Serialise concurrent builders (e.g. both halves of a pair, parallel make).
exec 9>"$VM_CACHE/.lock"
flock 9
if ((!force)) && vm_cache_fresh; then
	exit 0
fi

# --- Phase 1: host packages -------------------------------------------------
missing=()
for p in "${VM_HOST_PKGS[@]}"; do
	dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
# Headers let module builds target the guest kernel; optional but wanted.
# 6.1's are a system package; the others kernel.sh extracts under the cache
# (below).
[[ $VM_FLAVOR == debug || $VM_SERIES != 6.1 ]] ||
	dpkg -s "linux-headers-$KVER" >/dev/null 2>&1 || missing+=("linux-headers-$KVER")
if ((${#missing[@]})); then
	vm_log "installing host packages: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends "${missing[@]}" ||
		{ apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; } ||
		vm_die "cannot install ${missing[*]}"
fi

# The debug flavour's kernel is built by debug-kernel.sh (an hour of CPU),
# never implicitly here: only its initramfs is made below.
if [[ $VM_FLAVOR == debug ]]; then
	[[ -s $KIMAGE && -f $KMODDIR/modules.dep ]] ||
		vm_die "no debug kernel in $VM_CACHE: run tools/testing/vm/debug-kernel.sh (make check-debug does)"
	debver=$(cat "$VM_CACHE/key")
else
# --- Phase 2: fetch the kernel package --------------------------------------
shopt -s nullglob
debs=("$VM_CACHE/${KPKG}"_*.deb)
if ((${#debs[@]} == 0)); then
	vm_log "downloading $KPKG"
	"$KERNEL_SH" "$VM_SERIES" download "$VM_CACHE" "$KPKG" ||
		vm_die "kernel.sh $VM_SERIES download $KPKG failed"
	debs=("$VM_CACHE/${KPKG}"_*.deb)
fi
((${#debs[@]} > 0)) || vm_die "no $KPKG .deb in $VM_CACHE"
# Several versions may pile up across mirror updates; use the newest.
deb=$(printf '%s\n' "${debs[@]}" | sort -V | tail -n1)
debver=$(dpkg-deb -f "$deb" Version)

# --- Phase 3: extract + depmod (only when the package changed) --------------
extracted=0
if ((force)) || [[ ! -f $KROOT/.softrc-deb || $(cat "$KROOT/.softrc-deb") != "$debver" ]]; then
	vm_log "extracting $KPKG $debver"
	rm -rf "$KROOT.tmp"
	mkdir -p "$KROOT.tmp"
	dpkg-deb -x "$deb" "$KROOT.tmp"
	depmod -b "$KROOT.tmp" "$KVER"
	echo "$debver" >"$KROOT.tmp/.softrc-deb"
	rm -rf "$KROOT"
	mv "$KROOT.tmp" "$KROOT"
	extracted=1
fi
[[ -f $KIMAGE ]] || vm_die "no kernel image at $KIMAGE"
# The guest bind-mounts this tree over /lib/modules/$KVER; its build link
# names the series' headers, so out-of-tree builds inside the guest work
# (the host's / is the guest's, so the path is the same there).
khdr=$("$KERNEL_SH" "$VM_SERIES" kdir) || vm_die "kernel.sh $VM_SERIES kdir failed"
[[ $(readlink "$KMODDIR/build" 2>/dev/null) == "$khdr" ]] || ln -sfn "$khdr" "$KMODDIR/build"

# --- Phase 4: uncompressed kernel for PVH boot ---------------------------------
# Find the compressed payload inside the bzImage by its magic and unpack it;
# QEMU boots the resulting ELF directly through its PVH note (CONFIG_PVH=y).
# If that fails, leave an empty file: run.sh then boots the bzImage.
extract_vmlinux() {
	local i magic tool off
	local magics=($'\xfd7zXZ' $'\x28\xb5\x2f\xfd' $'\x1f\x8b\x08')
	local tools=('xz -dc --single-stream' 'zstd -dcq' 'gzip -dcq')
	for i in "${!magics[@]}"; do
		magic=${magics[i]} tool=${tools[i]}
		for off in $(LC_ALL=C grep -abo "$magic" "$KIMAGE" 2>/dev/null | cut -d: -f1 | head -n5); do
			# shellcheck disable=SC2086 # $tool is a command plus its flags
			tail -c +$((off + 1)) "$KIMAGE" | $tool >"$KVMLINUX.tmp" 2>/dev/null || true
			if [[ $(head -c4 "$KVMLINUX.tmp" 2>/dev/null) == $'\x7fELF' ]] &&
				LC_ALL=C readelf -n "$KVMLINUX.tmp" 2>/dev/null | grep 'Xen.*0x00000012' >/dev/null; then
				mv "$KVMLINUX.tmp" "$KVMLINUX"
				return 0
			fi
		done
	done
	rm -f "$KVMLINUX.tmp"
	return 1
}
if ((extracted)) || [[ ! -f $KVMLINUX ]]; then
	rm -f "$KVMLINUX"
	extract_vmlinux ||
		{ vm_log "could not extract a PVH vmlinux; booting the bzImage (slower)"; : >"$KVMLINUX"; }
fi
fi # release flavour

# --- Phase 4b: base initramfs -------------------------------------------------
# Layout: /init (busybox sh), /bin/busybox, /softrc/{stage2,mod/*.ko,
# modules.boot,modules.nic}.  run.sh appends a second, per-run cpio with
# /softrc/conf and /softrc/cmd.sh; the kernel unpacks both in order.
vm_log "building initramfs"
stage=$(mktemp -d "$VM_CACHE/initramfs.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage"/{bin,dev,proc,sys,run,tmp,mnt,newroot,softrc/mod}
cp /bin/busybox "$stage/bin/busybox"
install -m 0755 "$VM_DIR/init" "$stage/init"
install -m 0755 "$VM_DIR/stage2" "$stage/softrc/stage2"
if [[ $(id -u) == 0 ]]; then
	mknod -m 0600 "$stage/dev/console" c 5 1
	mknod -m 0666 "$stage/dev/null" c 1 3
fi

# Resolve module dependencies with the host's kmod against the extracted
# tree; record load order (deduplicated) in a list per group. The order is
# modprobe's: on 6.12, where fscache is part of netfs, 9pnet needs netfs
# and gets it first. Compressed modules (6.12's are .ko.xz) are stored
# decompressed, for busybox's insmod.
add_mods() { # $1 = list file, rest = module names
	local list=$1 m line f b
	shift
	: >"$list"
	for m in "$@"; do
		while read -r line; do
			case $line in
			insmod\ *) f=${line#insmod }; f=${f%% *} ;;
			*) continue ;; # builtin
			esac
			b=$(basename "$f")
			b=${b%.xz} b=${b%.zst} b=${b%.gz}
			grep -qxF "$b" "$stage/softrc/modules.boot" "$list" 2>/dev/null && continue
			case $f in
			*.xz) xz -dc "$f" >"$stage/softrc/mod/$b" ;;
			*.zst) zstd -dcq "$f" >"$stage/softrc/mod/$b" ;;
			*.gz) gzip -dc "$f" >"$stage/softrc/mod/$b" ;;
			*) cp "$f" "$stage/softrc/mod/$b" ;;
			esac || vm_die "cannot copy $f into the initramfs"
			echo "$b" >>"$list"
		done < <(modprobe -d "$KROOT" -S "$KVER" --show-depends "$m")
	done
}
add_mods "$stage/softrc/modules.boot" "${VM_BOOT_MODS[@]}"
add_mods "$stage/softrc/modules.nic" "${VM_NIC_MODS[@]}"

(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort |
	cpio -o -H newc --quiet --owner 0:0 >"$BASE_INITRD.tmp")
mv "$BASE_INITRD.tmp" "$BASE_INITRD"

printf 'inputs=%s\ndeb=%s\n' "$(vm_inputs_hash)" "$debver" >"$STAMP"
vm_log "cache ready in $VM_CACHE ($VM_FLAVOR: $KVER $debver)"

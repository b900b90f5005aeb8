#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# build-modules.sh - softrc.ko and the test modules for another kernel,
# built out of the tree from fresh copies of their sources.
#
# Usage: tools/testing/build-modules.sh SERIES|KDIR OUTDIR
#
#   SERIES  a kernel series of tools/setup/kernel.sh list (6.1, 6.12): its
#           headers (kernel.sh SERIES kdir) are the build tree
#   KDIR    or a kernel build tree itself (e.g. the debug kernel's)
#   OUTDIR  where the copies go (created; its mod/ and kmod/ are replaced):
#     OUTDIR/mod/    Kbuild, drivers/, include/, tools/setup/version.sh
#                    (drivers/infiniband/sw/softrc/Kbuild runs it by a
#                    relative path) and VERSION (this tree's version, so
#                    modinfo shows the same one as the tree's build); the
#                    module is OUTDIR/mod/drivers/infiniband/sw/softrc/softrc.ko
#     OUTDIR/kmod/   selftests/verbs/kmod, its *.ko next to the sources
#     OUTDIR/build.log  the build's output
# The VM suites take them as SOFTRC_KO and SOFTRC_KMOD_DIR.
#
# Both builds are W=1 with warnings as errors. Then every .ko is checked
# to be built for KDIR's kernel: its vermagic names KDIR's release, and
# each symbol CRC it carries (modversions) equals KDIR's Module.symvers
# entry for that symbol, at least one of them when KDIR's kernel has
# CONFIG_MODVERSIONS (a stale *.mod.c once carried another kernel's CRCs:
# "disagrees about version of symbol module_layout"; *.mod.c are never
# copied, and the copies are fresh every time).
#
# Exit status: 0 when both built and passed the checks; 1 otherwise (the
# tail of build.log or the failing check on stderr); 2 on bad usage.
set -euo pipefail
cd "$(dirname "$0")/../.." || exit 1
# the same build from make (make KVER=6.12) as from a shell: none of the
# caller's make variables or goals leak into kbuild's
unset MAKEFLAGS MAKEOVERRIDES MFLAGS MAKELEVEL
top=$PWD

log() { printf 'build-modules: %s\n' "$*" >&2; }
die() { log "$*"; exit 1; }
usage() { sed -n 's/^# Usage: //p' "$0" >&2; exit 2; }

(($# == 2)) || usage
target=$1 out=$2
if [[ " $(tools/setup/kernel.sh list) " == *" $target "* ]]; then
	kd=$(tools/setup/kernel.sh "$target" kdir) || die "no headers for $target"
elif [[ -f $target/Makefile ]]; then
	kd=$(cd "$target" && pwd -P)
else
	log "'$target' is neither a kernel series ($(tools/setup/kernel.sh list)) nor a kernel build tree"
	usage
fi
rel=$(sed -n 's/^#define UTS_RELEASE "\(.*\)"/\1/p' "$kd/include/generated/utsrelease.h" 2>/dev/null) ||
	true
[[ -n $rel ]] || die "$kd has no include/generated/utsrelease.h (not a prepared kernel build tree)"
command -v rsync >/dev/null || tools/setup/deps.sh rsync >&2 || die "no rsync"

mkdir -p "$out"
out=$(cd "$out" && pwd -P)
rm -rf "$out/mod" "$out/kmod"
mkdir -p "$out/mod/tools/setup" "$out/kmod"
rsync -a --exclude='*.mod.c' --exclude=softrc_probes.h --include='*/' --include='*.[ch]' --include='*.mk' --include=Kbuild \
	--include=Makefile --exclude='*' Kbuild drivers include "$out/mod/"
cp tools/setup/version.sh "$out/mod/tools/setup/"
tools/setup/version.sh >"$out/mod/VERSION"
rsync -a --exclude='*.mod.c' --include='*.[ch]' --include=Makefile --exclude='*' \
	selftests/verbs/kmod/ "$out/kmod/"

log "building against $rel ($kd) in $out"
if ! { make -C "$kd" M="$out/mod" W=1 KCFLAGS=-Werror modules &&
	make -C "$out/kmod" KDIR="$kd"; } >"$out/build.log" 2>&1; then
	tail -n 30 "$out/build.log" >&2
	die "build against $rel failed (whole log: ${out#"$top"/}/build.log)"
fi

ko=$out/mod/drivers/infiniband/sw/softrc/softrc.ko
modversions=0
grep -q '^CONFIG_MODVERSIONS=y' "$kd/include/config/auto.conf" 2>/dev/null && modversions=1
n=0
for m in "$ko" "$out"/kmod/*.ko; do
	[[ -f $m ]] || die "${m#"$top"/} was not built"
	v=$(modinfo -F vermagic "$m" | cut -d' ' -f1)
	[[ $v == "$rel" ]] || die "${m#"$top"/}: vermagic '$v', not $rel"
	# "bad matched": CRCs that differ from KDIR's, and how many agree
	read -r bad matched < <(modprobe --dump-modversions "$m" | awk '
		function norm(c) { c = tolower(c); sub(/^0x0*/, "", c); return c }
		NR == FNR { crc[$2] = norm($1); next }
		!($2 in crc) { next }
		crc[$2] == norm($1) { ok++; next }
		{ bad++; print "build-modules: CRC of " $2 ": " $1 ", not 0x" crc[$2] > "/dev/stderr" }
		END { print bad + 0, ok + 0 }' "$kd/Module.symvers" -)
	((bad == 0)) || die "${m#"$top"/}: $bad symbol CRCs are not $rel's (above)"
	((matched > 0 || !modversions)) ||
		die "${m#"$top"/}: no symbol CRC of $rel's Module.symvers in it (CONFIG_MODVERSIONS is on)"
	n=$((n + 1))
done
log "$n modules built for $rel: ${ko#"$top"/}, ${out#"$top"/}/kmod/*.ko"

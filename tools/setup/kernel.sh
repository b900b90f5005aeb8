#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/setup/kernel.sh - the kernels softrc supports, and where their
# Debian packages come from.
#
#   kernel.sh list                   the series, oldest first: "6.1 6.12"
#   kernel.sh SERIES release         the release string (uname -r)
#   kernel.sh SERIES kdir            the kernel build tree (headers); made
#                                    ready first, so the path always works
#   kernel.sh SERIES download DIR PKG...   apt-get download PKGs into DIR
#                                    from the suite that carries SERIES
#   kernel.sh SERIES source          the linux-source tarball's path
#   kernel.sh SERIES source-version  that tarball's Debian package version
#   kernel.sh SERIES image-pkg       the linux-image package's name
#
# 6.1 is Debian 12's own kernel: its packages come from the machine's apt
# sources, and the headers are installed (tools/setup/deps.sh).
#
# 6.12 is Debian 12's bookworm-backports kernel, built with Debian 12's
# gcc-12. The suite is added the way a Debian 12 user adds it, on the
# mirror the machine's own sources name, but in a private apt state under
# the cache (a sources file, lists and archives of its own), so the
# system's apt configuration is never touched. Its headers, common headers
# and kbuild packages are extracted into one root there, never installed;
# the headers' Makefile names the common tree by its absolute /usr/src
# path, which is rewritten to the extracted copy, and
# root/lib/modules/RELEASE/build points at the result.
#
# Cache: ${SOFTRC_CACHE:-~/.cache/softrc}/kernels/RELEASE/ and apt-bpo/.
set -euo pipefail

cache=${SOFTRC_CACHE:-${HOME:-/root}/.cache/softrc}
SERIES=(6.1 6.12)

die() { printf 'kernel.sh: %s\n' "$*" >&2; exit 1; }

release_of() {
	case $1 in
	6.1) echo 6.1.0-57-amd64 ;;
	6.12) echo 6.12.95+deb12-amd64 ;;
	*) die "unknown kernel series '$1' (supported: ${SERIES[*]})" ;;
	esac
}

# The private apt state for bookworm-backports: the URI is the first one
# of the machine's Debian sources (deb822 or one-line format).
bpo=$cache/apt-bpo
bpo_opts() {
	echo "-o Dir::Etc::SourceList=$bpo/sources.list -o Dir::Etc::SourceParts=/dev/null" \
		"-o Dir::State::Lists=$bpo/lists -o Dir::Cache=$bpo/cache" \
		"-o Debug::NoDropPrivs=true -o APT::Sandbox::User=root"
}
bpo_ready() {
	local uri
	[[ -s $bpo/lists/.updated ]] && return 0
	uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' \
		/etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v security | head -n1)
	[[ -n $uri ]] || uri=$(awk '$1 == "deb" && $3 ~ /^bookworm$/ { print $2; exit }' \
		/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null)
	[[ -n $uri ]] || die "no Debian mirror in /etc/apt/sources*"
	mkdir -p "$bpo/lists/partial" "$bpo/cache/archives/partial"
	echo "deb $uri bookworm-backports main" >"$bpo/sources.list"
	# shellcheck disable=SC2046 # the options are separate words
	apt-get $(bpo_opts) update >"$bpo/update.log" 2>&1 ||
		{ cat "$bpo/update.log" >&2; die "apt-get update of bookworm-backports failed"; }
	date +%s >"$bpo/lists/.updated"
}

# download SERIES DIR PKG...
download() {
	local s=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	if [[ $s == 6.1 ]]; then
		(cd "$dir" && apt-get download "$@" 2>/dev/null) ||
			{ apt-get update >/dev/null && (cd "$dir" && apt-get download "$@"); }
	else
		bpo_ready
		# shellcheck disable=SC2046
		(cd "$dir" && apt-get $(bpo_opts) download "$@" 2>"$bpo/download.log") || {
			rm -f "$bpo/lists/.updated"
			bpo_ready
			(cd "$dir" && apt-get $(bpo_opts) download "$@")
		}
	fi
}

kdir() {
	local s=$1 rel root hdr stamp
	rel=$(release_of "$s")
	if [[ $s == 6.1 ]]; then
		hdr=/usr/src/linux-headers-$rel
		[[ -f $hdr/Makefile ]] || "$(dirname "$0")/deps.sh" >&2
		echo "$hdr"
		return
	fi
	root=$cache/kernels/$rel
	hdr=$root/usr/src/linux-headers-$rel
	stamp=$root/.softrc-headers
	if [[ ! -f $stamp ]]; then
		local ver=${rel%-amd64} debs
		mkdir -p "$cache"
		exec 8>"$cache/.kernels.lock"
		flock 8
		if [[ ! -f $stamp ]]; then
			rm -rf "$root" "$root.debs"
			download "$s" "$root.debs" "linux-headers-$rel" \
				"linux-headers-$ver-common" "linux-kbuild-$ver" >&2
			mkdir -p "$root"
			for debs in "$root.debs"/*.deb; do dpkg-deb -x "$debs" "$root"; done
			rm -rf "$root.debs"
			sed -i "s|^include /usr/src/|include $root/usr/src/|" "$hdr/Makefile"
			ln -sfn "$hdr" "$root/lib/modules/$rel/build"
			ln -sfn "$root/usr/src/linux-headers-$ver-common" \
				"$root/lib/modules/$rel/source"
			[[ -f $hdr/Module.symvers ]] || die "no headers in $hdr"
			touch "$stamp"
		fi
	fi
	echo "$hdr"
}

source_tarball() {
	local s=$1 t dir
	t=/usr/src/linux-source-$s.tar.xz
	if [[ $s == 6.1 ]]; then
		[[ -f $t ]] || "$(dirname "$0")/deps.sh" >&2
		echo "$t"
		return
	fi
	dir=$cache/kernels/linux-source-$s
	t=$dir/usr/src/linux-source-$s.tar.xz
	if [[ ! -f $t ]]; then
		rm -rf "$dir"
		download "$s" "$dir.debs" "linux-source-$s" >&2
		mkdir -p "$dir"
		dpkg-deb -x "$dir.debs/linux-source-${s}_"*.deb "$dir"
		dpkg-deb -f "$dir.debs/linux-source-${s}_"*.deb Version >"$dir/.softrc-version"
		rm -rf "$dir.debs"
		[[ -f $t ]] || die "linux-source-$s has no $t"
	fi
	echo "$t"
}

# The version of the package the tarball came from: dpkg's for 6.1 (an
# installed package), the stamp source_tarball leaves for the others (an
# extraction from before the stamp existed: the package changelog's first
# entry, which is the package's version).
source_version() {
	local s=$1 dir
	source_tarball "$s" >/dev/null
	if [[ $s == 6.1 ]]; then
		dpkg-query -W -f='${Version}\n' "linux-source-$s"
		return
	fi
	dir=$cache/kernels/linux-source-$s
	if [[ ! -s $dir/.softrc-version ]]; then
		zcat "$dir/usr/share/doc/linux-source-$s/changelog.Debian.gz" 2>/dev/null |
			sed -n '1s/^linux (\([^)]*\)).*/\1/p' >"$dir/.softrc-version.new"
		[[ -s $dir/.softrc-version.new ]] ||
			die "no version for linux-source-$s in $dir (remove it to download again)"
		mv "$dir/.softrc-version.new" "$dir/.softrc-version"
	fi
	cat "$dir/.softrc-version"
}

[[ $# -ge 1 ]] || die "usage: kernel.sh list | SERIES release|kdir|source|source-version|image-pkg|download DIR PKG..."
case $1 in
list) echo "${SERIES[*]}"; exit 0 ;;
esac
s=$1
release_of "$s" >/dev/null
case ${2:-} in
release) release_of "$s" ;;
image-pkg) echo "linux-image-$(release_of "$s")" ;;
kdir) kdir "$s" ;;
source) source_tarball "$s" ;;
source-version) source_version "$s" ;;
download) [[ $# -ge 4 ]] || die "download needs DIR and packages"; download "$s" "$3" "${@:4}" ;;
*) die "unknown request '${2:-}'" ;;
esac

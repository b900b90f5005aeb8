#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/testing/compat-check.sh [FILE...]: kernel differences live in
# drivers/infiniband/sw/softrc/compat.h alone (Documentation/compat.rst).
# Fails, naming each line, where a module or kernel test module source
# tests a kernel version (LINUX_VERSION_CODE, KERNEL_VERSION()) or a
# compile probe's HAVE_* macro outside compat.h and the probes themselves.
# With no FILE, checks the git-tracked sources; part of `make style`.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -eq 0 ]; then
	mapfile -t files < <(git ls-files 'drivers/*.[ch]' 'include/*.h' \
		'selftests/verbs/kmod/*.[ch]')
	set -- "${files[@]}"
fi
bad=$(for f in "$@"; do
	case $f in
	*/softrc/compat.h | */softrc/compat/*.c) continue ;;
	esac
	grep -HnE '\b(LINUX_VERSION_CODE|KERNEL_VERSION[[:space:]]*\(|HAVE_[A-Z0-9_]+)' "$f" || true
done)
if [ -n "$bad" ]; then
	printf '%s\n' "$bad" | sed 's/^/compat-check: kernel difference outside compat.h: /' >&2
	exit 1
fi

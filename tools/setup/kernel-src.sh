#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Extract the few files softrc uses from Debian's linux-source-6.1 into
# the cache (never into the repo): checkpatch.pl and its data files, and
# the kselftest headers. Prints the directory holding them.
set -euo pipefail

tarball=/usr/src/linux-source-6.1.tar.xz
cache=${SOFTRC_CACHE:-$HOME/.cache/softrc}/linux-src
stamp=$cache/.stamp
want=$(stat -c '%s-%Y' "$tarball")

if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
	rm -rf "$cache"
	mkdir -p "$cache"
	tar -xJf "$tarball" -C "$cache" --strip-components=1 \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch \
		linux-source-6.1/tools/testing/selftests/kselftest.h \
		linux-source-6.1/tools/testing/selftests/kselftest_harness.h \
		>&2
	echo "$want" >"$stamp"
fi
echo "$cache"

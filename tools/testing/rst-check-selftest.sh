#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The test of tools/testing/rst-check.sh, in KTAP: on a copy of
# Documentation/ it must fail when a counter's description is missing
# and when a page renders with a warning, and pass on the copy as is.
set -u
here=$(cd "$(dirname "$0")" && pwd -P)
dir=$(mktemp -d "${TMPDIR:-/tmp}/softrc-rst.XXXXXX")
trap 'rm -rf "$dir"' EXIT
n=0
t() { # NAME CMD...
	local name=$1
	shift
	n=$((n + 1))
	if "$@" >/dev/null 2>&1; then echo "ok $n $name"; else echo "not ok $n $name"; fi
}
fresh() {
	rm -rf "$dir/doc" && cp -r "$here/../../Documentation" "$dir/doc"
}
check() {
	RST_CHECK_DOCS=$dir/doc "$here/rst-check.sh"
}

echo "TAP version 13"
echo "1..3"
fresh
t "rst-check passes on an untouched copy" check
# shellcheck disable=SC2016 # the backquotes are RST, not a shell expansion
sed -i '/^``tx_self``$/,+2d' "$dir/doc/counters.rst"
t "rst-check fails when counters.rst lacks tx_self" eval '! check'
fresh
printf '\nSee nowhere_ for more.\n' >>"$dir/doc/counters.rst"
t "rst-check fails on a docutils error (a link to no target)" eval '! check'

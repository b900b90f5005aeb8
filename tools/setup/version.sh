#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Print softrc's version: the VERSION file at the top of the tree when
# there is one (a DKMS source copy, a tarball), else from git describe:
# a tag vX.Y gives X.Y, commits after it +N.gHASH, and a tree with
# uncommitted changes .dirty; with no tag, 0+gHASH. The result has no
# '-' or '/', so it can be a DKMS PACKAGE_VERSION and a path component.
# Prints "unknown" outside a git tree without VERSION.
top=$(cd "$(dirname "$0")/../.." && pwd -P)
if [ -r "$top/VERSION" ]; then
	cat "$top/VERSION"
	exit 0
fi
d=$(git -C "$top" describe --tags --match 'v[0-9]*' --always --dirty \
	--abbrev=12 2>/dev/null) || { echo unknown; exit 0; }
case $d in
v[0-9]*) d=${d#v} ;;
*) d=0-g$d ;;
esac
# 1.2-5-gabc-dirty -> 1.2+5.gabc.dirty; 0-gabc-dirty -> 0+gabc.dirty
echo "$d" | sed -e 's/-/+/' -e 's/-/./g'

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make dkms-uninstall: remove every softrc version DKMS knows (whatever
# tree installed it), for each kernel it was built for, and its source
# copy in /usr/src. Fails, saying which, if a version is still in the
# DKMS tree afterwards.
set -u
tree=/var/lib/dkms
rc=0
for v in $(dkms status -m softrc 2>/dev/null | sed -n 's|^softrc/\([^,:]*\).*|\1|p' | sort -u); do
	# "softrc/V, KERNEL, ARCH: state" for each build; "softrc/V: added" alone
	builds=$(dkms status -m softrc -v "$v" |
		sed -n 's|^softrc/[^,]*, \([^,]*\), \([^:]*\):.*|\1/\2|p')
	if [ -n "$builds" ]; then
		for k in $builds; do
			dkms remove -m softrc -v "$v" -k "$k" || rc=1
		done
	else
		dkms remove -m softrc -v "$v" --all || rc=1
	fi
	if [ -e "$tree/softrc/$v" ]; then
		echo "dkms-uninstall: softrc/$v is still in $tree" >&2
		rc=1
	fi
	rm -rf "/usr/src/softrc-$v"
done
exit $rc

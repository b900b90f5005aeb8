#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs every VM suite in this directory, in one guest boot (by
# `make check` through tools/testing/vm/run.sh). Each suite prints KTAP; kernel
# messages stay off the console so they cannot split a result line
# (run.sh still scans the whole kernel log when we are done).
set -u
cd "$(dirname "$0")" || exit 1

# The suites, in order: SOFTRC_VM_SUITES, else every script here but the
# helpers and interop.sh (two VMs: `make check-interop`). --list prints
# them and exits (on the host, for tools/testing/check-debug.sh).
suites() {
	local s
	for s in ${SOFTRC_VM_SUITES:-*.sh}; do
		case $s in lib.sh | run_all.sh | interop.sh) ;; *) echo "$s" ;; esac
	done
}
if [ "${1:-}" = --list ]; then
	suites
	exit 0
fi

dmesg -n 1
# the VM speed probe once for every suite (SOFTRC_TIME_SCALE, lib.sh)
. ./lib.sh
rc=0

# On a kmemleak kernel (make check-debug) forget what boot left behind, so
# the scan at the end judges only what the suites did; no periodic scans
# meanwhile (a scan of guest memory takes minutes under TCG).
leaks=/sys/kernel/debug/kmemleak
if [ -w $leaks ]; then
	echo scan=off >$leaks
	echo clear >$leaks
fi
for suite in $(suites); do
	t0=$(date +%s)
	./"$suite" || rc=1
	echo "# $suite took $(($(date +%s) - t0)) s"
	# a suite must leave no softrc state behind for the next one
	if [ -d /sys/module/softrc ]; then
		echo "# $suite left softrc loaded"
		rmmod softrc || rc=1
	fi
done

# kmemleak: an object is reported once it has been unreferenced for 5 s
# and two scans agree, so scan, wait out the minimum age, scan again.
if [ -w $leaks ]; then
	echo "TAP version 13"
	echo "# suite: kmemleak"
	t0=$(date +%s)
	echo scan >$leaks
	sleep 6
	echo scan >$leaks
	if grep -q 'unreferenced object' $leaks; then
		sed 's/^/# /' $leaks | head -200
		echo "not ok 1 kmemleak: no unreferenced objects after the suites"
		rc=1
	else
		echo "ok 1 kmemleak: no unreferenced objects after the suites"
	fi
	echo "1..1"
	echo "# kmemleak scans took $(($(date +%s) - t0)) s"
fi
exit $rc

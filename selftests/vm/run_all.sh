#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs every VM suite in this directory, in one guest boot (by
# `make check` through tools/vm/run.sh). Each suite prints KTAP; kernel
# messages stay off the console so they cannot split a result line
# (run.sh still scans the whole kernel log when we are done).
set -u
cd "$(dirname "$0")" || exit 1
dmesg -n 1
# the VM speed probe once for every suite (SOFTRC_TIME_SCALE, lib.sh)
. ./lib.sh
rc=0
for suite in ${SOFTRC_VM_SUITES:-*.sh}; do
	case $suite in lib.sh | run_all.sh | interop.sh) continue ;; esac
	./"$suite" || rc=1
	# a suite must leave no softrc state behind for the next one
	if [ -d /sys/module/softrc ]; then
		echo "# $suite left softrc loaded"
		rmmod softrc || rc=1
	fi
done
exit $rc

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# `make soak` in one guest boot: soak.sh (SOAK_MINUTES of data-verifying
# RC traffic under netem, QPs and devices re-created), then cm_soak.sh
# (SOAK_CM_MINUTES of rdma_cm connect/verify/disconnect cycles). A
# duration of 0 leaves that part out. Each prints its own KTAP; the exit
# status is 0 only if both passed. Runs in the guest as root.
set -u
cd "$(dirname "$0")" || exit 1
rc=0
if [ "${SOAK_MINUTES:-20}" != 0 ]; then
	./soak.sh || rc=1
fi
if [ "${SOAK_CM_MINUTES:-10}" != 0 ]; then
	./cm_soak.sh || rc=1
fi
exit $rc

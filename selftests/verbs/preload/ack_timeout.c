// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ack_timeout.so - LD_PRELOAD shim for a verbs program whose QP local
 * ACK timeout is fixed in its source (ibv_rc_pingpong: 14, 67 ms a try,
 * about 0.5 s for all of retry_cnt 7). With SOFTRC_MIN_ACK_TIMEOUT=N in
 * the environment, an ibv_modify_qp() that sets IBV_QP_TIMEOUT below N
 * sets N instead (0 = infinite stays 0). Nothing else changes: the
 * program's own traffic and checks run as written. Used by
 * selftests/verbs/interop_guest.sh so that a VM stalled by its host
 * (TCG, a loaded machine) is not taken for a lost peer.
 *
 * With SOFTRC_STOP_AT_RTS=1 the process also stops itself (SIGSTOP) once
 * an ibv_modify_qp() to RTS has succeeded, before it can post anything on
 * that QP: a test (selftests/vm/assoc.sh) then has a connected, idle QP
 * for as long as it needs, whatever the speed of the machine, and SIGCONT
 * lets the program go on as written.
 *
 * Runs in user space, in the process of the program it is preloaded into.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

typedef int (*modify_qp_fn)(struct ibv_qp *, struct ibv_qp_attr *, int);

int ibv_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int mask)
{
	static modify_qp_fn real;
	const char *min = getenv("SOFTRC_MIN_ACK_TIMEOUT");
	const char *stop = getenv("SOFTRC_STOP_AT_RTS");
	struct ibv_qp_attr a = *attr;
	int ret;

	if (!real)
		real = (modify_qp_fn)dlvsym(RTLD_NEXT, "ibv_modify_qp", "IBVERBS_1.1");
	if (!real)
		return EINVAL;
	if (min && (mask & IBV_QP_TIMEOUT) && a.timeout && a.timeout < atoi(min))
		a.timeout = (uint8_t)(atoi(min) > 31 ? 31 : atoi(min));
	ret = real(qp, &a, mask);
	if (!ret && stop && atoi(stop) == 1 && (mask & IBV_QP_STATE) &&
	    a.qp_state == IBV_QPS_RTS)
		raise(SIGSTOP);
	return ret;
}

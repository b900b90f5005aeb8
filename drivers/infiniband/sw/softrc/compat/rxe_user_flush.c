// SPDX-License-Identifier: GPL-2.0
/*
 * HAVE_RXE_USER_FLUSH: the rxe user ABI names the FLUSH fields of a send
 * WQE (struct rxe_send_wr's wr.flush: remote_addr, length, rkey, type,
 * level), which librxe of rdma-core 45 on fills for ibv_wr_flush().
 * Upstream: "RDMA/rxe: Extend rxe user ABI to support flush" (v6.2).
 */
#include <linux/stddef.h>
#include <rdma/rdma_user_rxe.h>

int softrc_probe(void);
int softrc_probe(void)
{
	return offsetof(struct rxe_send_wr, wr.flush.level);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * HAVE_IB_FLUSH: the kernel's verbs name FLUSH (IBTA 1.5): IB_WR_FLUSH,
 * IB_WC_FLUSH, the IB_ACCESS_FLUSH_* rights of an MR or QP and the
 * IB_DEVICE_FLUSH_* capabilities, so a kernel ULP can post one, register
 * memory it may be aimed at, and read its completion.
 * Upstream: "RDMA: Extend RDMA user ABI to support flush" and "RDMA:
 * Extend RDMA kernel verbs ABI to support flush" (v6.2).
 */
#include <rdma/ib_verbs.h>

int softrc_probe(void);
int softrc_probe(void)
{
	return IB_WR_FLUSH + IB_WC_FLUSH + IB_ACCESS_FLUSH_GLOBAL +
	       IB_ACCESS_FLUSH_PERSISTENT + !!IB_DEVICE_FLUSH_GLOBAL +
	       !!IB_DEVICE_FLUSH_PERSISTENT;
}

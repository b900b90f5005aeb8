// SPDX-License-Identifier: GPL-2.0
/*
 * HAVE_IB_ATOMIC_WRITE: the kernel's verbs name ATOMIC WRITE
 * (IB_WR_ATOMIC_WRITE, IB_WC_ATOMIC_WRITE, IB_DEVICE_ATOMIC_WRITE), so a
 * kernel ULP can post one and read its completion.
 * Upstream: "RDMA: Extend RDMA user ABI to support atomic write" and
 * "RDMA: Extend RDMA kernel verbs ABI to support atomic write" (v6.2).
 */
#include <rdma/ib_verbs.h>

int softrc_probe(void);
int softrc_probe(void)
{
	return IB_WR_ATOMIC_WRITE + IB_WC_ATOMIC_WRITE + !!IB_DEVICE_ATOMIC_WRITE;
}

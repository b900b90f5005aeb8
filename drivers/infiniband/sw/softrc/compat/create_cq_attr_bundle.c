// SPDX-License-Identifier: GPL-2.0
/*
 * HAVE_CREATE_CQ_ATTR_BUNDLE: ib_device_ops.create_cq takes the uverbs
 * attribute bundle (the udata is inside it); before, a struct ib_udata *.
 * Upstream: "RDMA: Pass entire uverbs attr bundle to create cq
 * function"
 * (v6.11).
 */
#include <rdma/ib_verbs.h>

static int softrc_probe_create_cq(struct ib_cq *cq,
				  const struct ib_cq_init_attr *attr,
				  struct uverbs_attr_bundle *attrs)
{
	return 0;
}

const struct ib_device_ops softrc_probe_ops = {
	.create_cq = softrc_probe_create_cq,
};

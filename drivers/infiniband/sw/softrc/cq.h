/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Completion queues: kernel CQs (slots hold struct ib_wc, polled through
 * poll_cq) and user CQs (slots hold struct ib_uverbs_wc in a ring mapped
 * by librxe, which polls it without system calls).
 *
 * softrc_cq_post() is the data path's entry: any context, never sleeps.
 */
#ifndef SOFTRC_CQ_H
#define SOFTRC_CQ_H

#include <linux/interrupt.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "compat.h"
#include "queue.h"

/*
 * wc_flags as user space defines them (IBV_WC_*): bits 2 and 3 are the
 * other way round from the kernel's IB_WC_WITH_INVALIDATE/IB_WC_IP_CSUM_OK.
 */
enum softrc_uwc_flags {
	SOFTRC_UWC_GRH		= 1 << 0,
	SOFTRC_UWC_WITH_IMM	= 1 << 1,
	SOFTRC_UWC_IP_CSUM_OK	= 1 << 2,
	SOFTRC_UWC_WITH_INV	= 1 << 3,
};

/**
 * struct softrc_cq - a completion queue
 * @ibcq:	the core's CQ (core-allocated); ibcq.cqe is the usable depth
 * @q:		the ring (swapped by resize under @lock)
 * @lock:	serializes producers (softrc_cq_post), the kernel consumer
 *		(poll_cq), arming and resize; taken with IRQs saved
 * @notify:	0, IB_CQ_SOLICITED or IB_CQ_NEXT_COMP: what arms the next
 *		completion event (@lock)
 * @overrun:	the CQ overran and is in error: completions are dropped
 *		(@lock; set once, never cleared)
 * @is_user:	a user CQ: ib_uverbs_wc slots, comp_handler called inline
 * @comp_task:	runs a kernel CQ's comp_handler outside the data path's
 *		locks (the handler may poll or post)
 */
struct softrc_cq {
	struct ib_cq ibcq;
	struct softrc_queue q;
	spinlock_t lock;	/* see above */
	u8 notify;
	bool overrun;
	bool is_user;
	struct tasklet_struct comp_task;
};

static inline struct softrc_cq *to_scq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct softrc_cq, ibcq);
}

int softrc_cq_post(struct softrc_cq *cq, const struct ib_wc *wc, bool solicited);

/* ib_device_ops */
int softrc_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		     struct softrc_create_cq_arg *arg);
int softrc_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata);
int softrc_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc);
int softrc_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags);
int softrc_resize_cq(struct ib_cq *ibcq, int cqe, struct ib_udata *udata);

#endif /* SOFTRC_CQ_H */

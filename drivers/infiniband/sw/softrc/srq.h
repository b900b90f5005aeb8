/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Shared receive queues (IB_SRQT_BASIC). The ring holds struct
 * rxe_recv_wqe slots; user space (librxe) or post_srq_recv produces,
 * the data path consumes with softrc_srq_pop().
 */
#ifndef SOFTRC_SRQ_H
#define SOFTRC_SRQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "queue.h"

struct softrc_rwqe;

/**
 * struct softrc_srq - a shared receive queue
 * @ibsrq:	the core's SRQ (core-allocated)
 * @q:		the ring (swapped by a resize under @lock)
 * @lock:	serializes the consumer (softrc_srq_pop), kernel producers
 *		(post_srq_recv), limit arming and resize; IRQs saved
 * @max_wr:	usable depth of @q
 * @max_sge:	SGEs per WQE; a slot holds that many
 * @limit:	armed limit, 0 when disarmed (@lock)
 * @limit_event: bit 0: a limit event is due, not yet delivered
 * @srq_num:	index in the device's SRQ xarray, reported to user space
 * @is_user:	the ring is mapped by user space
 */
struct softrc_srq {
	struct ib_srq ibsrq;
	struct softrc_queue q;
	spinlock_t lock;	/* see above */
	u32 max_wr;
	u32 max_sge;
	u32 limit;
	unsigned long limit_event;
	u32 srq_num;
	bool is_user;
};

static inline struct softrc_srq *to_ssrq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct softrc_srq, ibsrq);
}

int softrc_srq_pop(struct softrc_srq *srq, struct softrc_rwqe *out);
void softrc_srq_deliver_event(struct softrc_srq *srq);

/* ib_device_ops */
int softrc_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		      struct ib_udata *udata);
int softrc_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		      enum ib_srq_attr_mask mask, struct ib_udata *udata);
int softrc_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr);
int softrc_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata);
int softrc_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr);

#endif /* SOFTRC_SRQ_H */

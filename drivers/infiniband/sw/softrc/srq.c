// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared receive queues: create, modify (resize, limit), query, destroy,
 * post_srq_recv for kernel consumers, and softrc_srq_pop() for the data
 * path.
 *
 * Context: create/modify/query/destroy run in process context and may
 * sleep (not while holding the SRQ lock). softrc_srq_pop and
 * post_srq_recv run in any context and never sleep; they take only the
 * SRQ's lock, with IRQs saved. The limit event is dispatched without the
 * lock; when softrc_srq_pop() finds it due (under a QP's lock, often in
 * softirq) it is only marked, and softrc_srq_deliver_event() sends it
 * once the QP lock is dropped. Touches the SRQ, its ring, the device's
 * SRQ xarray and the ucontext's mmap table.
 *
 * A user SRQ's ring is written by user space at any time: each WQE is
 * read once into the caller's struct softrc_rwqe and only that copy is
 * validated and used.
 */
#include <rdma/rdma_user_rxe.h>
#include <rdma/uverbs_ioctl.h>

#include "softrc.h"
#include "srq.h"

static u32 softrc_srq_elem_size(u32 max_sge)
{
	return sizeof(struct rxe_recv_wqe) + max_sge * sizeof(struct rxe_sge);
}

static void softrc_srq_limit_event(struct softrc_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	ibdev_dbg(srq->ibsrq.device, "srq %u: limit reached\n", srq->srq_num);
	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/* Disarm and report whether the limit event is due (fewer WQEs than it). */
static bool softrc_srq_limit_due(struct softrc_srq *srq)
{
	lockdep_assert_held(&srq->lock);
	if (!srq->limit || softrc_queue_count(&srq->q) >= srq->limit)
		return false;
	srq->limit = 0;
	return true;
}

/**
 * softrc_srq_pop() - take the oldest receive WQE
 * @srq:	the SRQ
 * @out:	filled with a kernel copy of the WQE
 *
 * Consumes the WQE even when it is invalid; then @out->wr_id is the
 * WQE's and @out holds no SGEs. When the limit is armed and fewer WQEs
 * than it remain, disarms it and marks IB_EVENT_SRQ_LIMIT_REACHED due:
 * the caller holds a QP lock, and a ULP's handler may post to that QP,
 * so the caller delivers it after unlocking (softrc_srq_deliver_event()).
 *
 * Context: any; never sleeps.
 * Return: 0; -ENOENT if the SRQ is empty; -EINVAL if the WQE has more
 * SGEs than the SRQ allows or its lengths overflow 32 bits.
 */
int softrc_srq_pop(struct softrc_srq *srq, struct softrc_rwqe *out)
{
	struct rxe_recv_wqe *w;
	unsigned long flags;
	u64 length = 0;
	int err = 0;
	u32 n, i;

	spin_lock_irqsave(&srq->lock, flags);
	w = softrc_queue_consumer_slot(&srq->q);
	if (!w) {
		spin_unlock_irqrestore(&srq->lock, flags);
		return -ENOENT;
	}
	out->wr_id = READ_ONCE(w->wr_id);
	n = READ_ONCE(w->dma.num_sge);
	if (n > srq->max_sge)
		n = 0, err = -EINVAL;
	for (i = 0; i < n; i++) {
		out->sge[i].addr = READ_ONCE(w->dma.sge[i].addr);
		out->sge[i].length = READ_ONCE(w->dma.sge[i].length);
		out->sge[i].lkey = READ_ONCE(w->dma.sge[i].lkey);
		length += out->sge[i].length;
	}
	if (length > U32_MAX)
		n = 0, length = 0, err = -EINVAL;
	out->num_sge = n;
	out->length = length;
	softrc_queue_consumer_advance(&srq->q);
	if (softrc_srq_limit_due(srq))
		set_bit(0, &srq->limit_event);
	spin_unlock_irqrestore(&srq->lock, flags);
	return err;
}

/**
 * softrc_srq_deliver_event() - send a limit event softrc_srq_pop() marked
 * @srq:	the SRQ
 *
 * Context: any, with no QP or SRQ lock held; never sleeps.
 */
void softrc_srq_deliver_event(struct softrc_srq *srq)
{
	if (test_and_clear_bit(0, &srq->limit_event))
		softrc_srq_limit_event(srq);
}

/* Write one kernel receive WR into a ring slot. */
static void softrc_srq_fill(struct rxe_recv_wqe *w, const struct ib_recv_wr *wr)
{
	u32 length = 0;
	int i;

	w->wr_id = wr->wr_id;
	w->reserved = 0;
	w->padding = 0;
	for (i = 0; i < wr->num_sge; i++) {
		w->dma.sge[i].addr = wr->sg_list[i].addr;
		w->dma.sge[i].length = wr->sg_list[i].length;
		w->dma.sge[i].lkey = wr->sg_list[i].lkey;
		length += wr->sg_list[i].length;
	}
	w->dma.length = length;
	w->dma.resid = length;
	w->dma.cur_sge = 0;
	w->dma.num_sge = wr->num_sge;
	w->dma.sge_offset = 0;
	w->dma.reserved = 0;
}

/* ib_device_ops.post_srq_recv: kernel SRQs (user space posts to its ring) */
int softrc_post_srq_recv(struct ib_srq *ibsrq, const struct ib_recv_wr *wr,
			 const struct ib_recv_wr **bad_wr)
{
	struct softrc_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	void *slot;
	int err = 0;

	if (srq->is_user) {
		*bad_wr = wr;
		return -EOPNOTSUPP;
	}
	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		if (wr->num_sge < 0 || wr->num_sge > srq->max_sge) {
			err = -EINVAL;
			break;
		}
		slot = softrc_queue_producer_slot(&srq->q);
		if (!slot) {
			err = -ENOMEM;
			break;
		}
		softrc_srq_fill(slot, wr);
		softrc_queue_producer_advance(&srq->q);
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}

/* A ring of *@max_wr WQEs; exported into *@mi for a user SRQ. */
static int softrc_srq_ring(struct softrc_srq *srq, struct softrc_queue *q,
			   u32 *max_wr, struct ib_udata *udata,
			   struct mminfo *mi)
{
	struct softrc_dev *sdev = to_sdev(srq->ibsrq.device);
	struct softrc_ucontext *uc;
	int err;

	err = softrc_queue_init(sdev, q, max_wr,
				softrc_srq_elem_size(srq->max_sge));
	if (err || !srq->is_user)
		return err;
	uc = rdma_udata_to_drv_context(udata, struct softrc_ucontext, ibuc);
	err = softrc_queue_export(q, &uc->ibuc, mi);
	if (err)
		softrc_queue_free(q);
	return err;
}

int softrc_create_srq(struct ib_srq *ibsrq, struct ib_srq_init_attr *init,
		      struct ib_udata *udata)
{
	struct softrc_dev *sdev = to_sdev(ibsrq->device);
	struct softrc_srq *srq = to_ssrq(ibsrq);
	struct ib_srq_attr *attr = &init->attr;
	struct rxe_create_srq_resp resp = {};
	u32 max_wr = attr->max_wr;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (max_wr < 1 || max_wr > SOFTRC_MAX_SRQ_WR ||
	    attr->max_sge > SOFTRC_MAX_SGE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;

	srq->is_user = !!udata;
	srq->max_sge = max_t(u32, attr->max_sge, 1);
	srq->limit = 0;		/* created disarmed: srq_limit is ignored */
	spin_lock_init(&srq->lock);

	if (!softrc_count_get(&sdev->num_srq, sdev->caps.max_srq))
		return -ENOMEM;
	err = xa_alloc(&sdev->srq_xa, &srq->srq_num, NULL,
		       XA_LIMIT(1, SOFTRC_MAX_SRQ), GFP_KERNEL);
	if (err) {
		atomic_dec(&sdev->num_srq);
		return err == -EBUSY ? -ENOMEM : err;
	}
	err = softrc_srq_ring(srq, &srq->q, &max_wr, udata, &resp.mi);
	if (err)
		goto err_num;
	srq->max_wr = max_wr;
	if (udata) {
		resp.srq_num = srq->srq_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	err = xa_err(xa_store(&sdev->srq_xa, srq->srq_num, srq, GFP_KERNEL));
	if (err)
		goto err_ring;
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = 0;
	ibdev_dbg(ibsrq->device, "srq %u: %u x %u SGEs, %s\n", srq->srq_num,
		  srq->max_wr, srq->max_sge, srq->is_user ? "user" : "kernel");
	return 0;

err_ring:
	softrc_queue_free(&srq->q);
err_num:
	xa_erase(&sdev->srq_xa, srq->srq_num);
	atomic_dec(&sdev->num_srq);
	return err;
}

/*
 * Resize to @max_wr. A user SRQ gets a new ring whose mminfo goes to the
 * address in the command (struct rxe_modify_srq_cmd); librxe holds its
 * ring lock across the call and maps the new ring on success.
 */
static int softrc_srq_resize(struct softrc_srq *srq, u32 max_wr,
			     struct ib_udata *udata)
{
	struct rxe_modify_srq_cmd cmd = {};
	struct mminfo mi = {};
	struct softrc_queue q;
	int err;

	if (max_wr < 1 || max_wr > SOFTRC_MAX_SRQ_WR)
		return -EINVAL;
	if (srq->is_user) {
		if (udata->inlen < sizeof(cmd))
			return -EINVAL;
		err = ib_copy_from_udata(&cmd, udata, sizeof(cmd));
		if (err)
			return err;
	}
	err = softrc_srq_ring(srq, &q, &max_wr, udata, &mi);
	if (err)
		return err;
	if (srq->is_user &&
	    copy_to_user(u64_to_user_ptr(cmd.mmap_info_addr), &mi, sizeof(mi))) {
		err = -EFAULT;
		goto err_free;
	}

	/* -EINVAL: more WQEs queued than fit */
	err = softrc_queue_replace(&srq->q, &q, &srq->lock);
	if (!err)
		srq->max_wr = max_wr;
	return err;

err_free:
	softrc_queue_free(&q);
	return err;
}

/*
 * ib_device_ops.modify_srq. Arming the limit while fewer WQEs than the
 * limit are queued reports the event at once (as hardware does), so the
 * event never depends on a later receive.
 */
int softrc_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
		      enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct softrc_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;
	bool event;
	u32 depth;
	int err;

	if (mask & ~(IB_SRQ_MAX_WR | IB_SRQ_LIMIT))
		return -EINVAL;
	depth = mask & IB_SRQ_MAX_WR ? attr->max_wr : srq->max_wr;
	if ((mask & IB_SRQ_LIMIT) && attr->srq_limit > depth)
		return -EINVAL;

	if (mask & IB_SRQ_MAX_WR) {
		err = softrc_srq_resize(srq, attr->max_wr, udata);
		if (err)
			return err;
	}
	if (mask & IB_SRQ_LIMIT) {
		spin_lock_irqsave(&srq->lock, flags);
		srq->limit = attr->srq_limit;
		event = softrc_srq_limit_due(srq);
		spin_unlock_irqrestore(&srq->lock, flags);
		if (event)
			softrc_srq_limit_event(srq);
	}
	return 0;
}

int softrc_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	struct softrc_srq *srq = to_ssrq(ibsrq);
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/* The RDMA core destroys an SRQ only once no QP uses it. */
int softrc_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	struct softrc_srq *srq = to_ssrq(ibsrq);

	xa_erase(&to_sdev(ibsrq->device)->srq_xa, srq->srq_num);
	softrc_queue_free(&srq->q);
	atomic_dec(&to_sdev(ibsrq->device)->num_srq);
	return 0;
}

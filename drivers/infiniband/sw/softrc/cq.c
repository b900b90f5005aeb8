// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion queues: create, destroy, resize, poll (kernel consumers),
 * arming (req_notify_cq), and softrc_cq_post() for the data path.
 *
 * Context: create/destroy/resize run in process context and may sleep.
 * softrc_cq_post, poll_cq and req_notify_cq run in any context (softirq,
 * timers, process, even hard IRQ for poll) and never sleep; they take
 * only the CQ's lock, with IRQs saved. The completion handler is called
 * without that lock: inline for user CQs (uverbs' handler only queues an
 * event and wakes the channel), from a tasklet for kernel CQs (a ULP's
 * handler may poll the CQ or post to a QP whose lock our caller holds).
 * Touches the CQ, its ring and the ucontext's mmap table.
 */
#include <rdma/rdma_user_rxe.h>
#include <rdma/uverbs_ioctl.h>

#include "softrc.h"
#include "cq.h"

static u32 softrc_wc_flags_to_user(int flags)
{
	u32 uflags = 0;

	if (flags & IB_WC_GRH)
		uflags |= SOFTRC_UWC_GRH;
	if (flags & IB_WC_WITH_IMM)
		uflags |= SOFTRC_UWC_WITH_IMM;
	if (flags & IB_WC_WITH_INVALIDATE)
		uflags |= SOFTRC_UWC_WITH_INV;
	if (flags & IB_WC_IP_CSUM_OK)
		uflags |= SOFTRC_UWC_IP_CSUM_OK;
	return uflags;
}

/* Write @wc into a user ring slot in the user ABI's encoding. */
static void softrc_wc_to_user(struct ib_uverbs_wc *uwc, const struct ib_wc *wc)
{
	uwc->wr_id = wc->wr_id;
	uwc->status = wc->status;
	uwc->opcode = wc->opcode;
	uwc->vendor_err = wc->vendor_err;
	uwc->byte_len = wc->byte_len;
	if (wc->wc_flags & IB_WC_WITH_INVALIDATE)
		uwc->ex.invalidate_rkey = wc->ex.invalidate_rkey;
	else
		uwc->ex.imm_data = wc->ex.imm_data;
	uwc->qp_num = wc->qp ? wc->qp->qp_num : 0;
	uwc->src_qp = wc->src_qp;
	uwc->wc_flags = softrc_wc_flags_to_user(wc->wc_flags);
	uwc->pkey_index = wc->pkey_index;
	uwc->slid = wc->slid;
	uwc->sl = wc->sl;
	uwc->dlid_path_bits = wc->dlid_path_bits;
	uwc->port_num = wc->port_num;
	uwc->reserved = 0;
}

static void softrc_cq_call_handler(struct softrc_cq *cq)
{
	if (cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

static void softrc_cq_comp_task(struct tasklet_struct *t)
{
	struct softrc_cq *cq = from_tasklet(cq, t, comp_task);

	softrc_cq_call_handler(cq);
}

/* The CQ overran: its one IB_EVENT_CQ_ERR (called once, without the lock). */
static void softrc_cq_overflow(struct softrc_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ibcq.device,
		.element.cq = &cq->ibcq,
		.event = IB_EVENT_CQ_ERR,
	};

	ibdev_dbg(cq->ibcq.device, "cq overrun (%d entries): in error\n",
		  cq->ibcq.cqe);
	softrc_dev_count(to_sdev(cq->ibcq.device), SOFTRC_DEVCNT_cq_overruns);
	if (cq->ibcq.event_handler)
		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
}

/**
 * softrc_cq_post() - add one completion
 * @cq:		the CQ
 * @wc:		the completion in the kernel's encoding (wc->qp set)
 * @solicited:	the message asked for a solicited event
 *
 * Fires the completion handler if the CQ was armed for this completion:
 * any completion after IB_CQ_NEXT_COMP; after IB_CQ_SOLICITED a
 * solicited one or one in error. Arming lasts for one event.
 *
 * A completion that finds the CQ full overruns it: the CQ enters the
 * error state for good (@overrun) and raises IB_EVENT_CQ_ERR once; that
 * completion and every later one are dropped and counted, so a CQ that
 * keeps overflowing costs no event allocations (uverbs queues one per
 * event). What the ring holds can still be polled. The caller moves the
 * QP whose completion was lost to ERROR with IB_EVENT_QP_FATAL (IBTA
 * ch. 11 asynchronous errors: a CQ overrun is a CQ error; the work queue
 * whose completion it lost can no longer complete correctly).
 *
 * Context: any; never sleeps.
 * Return: 0, or -ENOSPC if the completion was dropped.
 */
int softrc_cq_post(struct softrc_cq *cq, const struct ib_wc *wc, bool solicited)
{
	unsigned long flags;
	bool fire, first;
	void *slot;

	spin_lock_irqsave(&cq->lock, flags);
	slot = cq->overrun ? NULL : softrc_queue_producer_slot(&cq->q);
	if (unlikely(!slot)) {
		first = !cq->overrun;
		cq->overrun = true;
		spin_unlock_irqrestore(&cq->lock, flags);
		softrc_dev_count(to_sdev(cq->ibcq.device),
				 SOFTRC_DEVCNT_cq_wc_dropped);
		if (first)
			softrc_cq_overflow(cq);
		return -ENOSPC;
	}
	if (cq->is_user)
		softrc_wc_to_user(slot, wc);
	else
		memcpy(slot, wc, sizeof(*wc));
	softrc_queue_producer_advance(&cq->q);

	fire = cq->notify == IB_CQ_NEXT_COMP ||
	       (cq->notify == IB_CQ_SOLICITED &&
		(solicited || wc->status != IB_WC_SUCCESS));
	if (fire)
		cq->notify = 0;
	spin_unlock_irqrestore(&cq->lock, flags);

	if (fire) {
		if (cq->is_user)
			softrc_cq_call_handler(cq);
		else
			tasklet_schedule(&cq->comp_task);
	}
	return 0;
}

/* ib_device_ops.poll_cq: kernel CQs (user CQs are polled in user space) */
int softrc_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	struct softrc_cq *cq = to_scq(ibcq);
	unsigned long flags;
	struct ib_wc *slot;
	int n = 0;

	if (cq->is_user)
		return -EINVAL;
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && (slot = softrc_queue_consumer_slot(&cq->q))) {
		wc[n++] = *slot;
		softrc_queue_consumer_advance(&cq->q);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/*
 * ib_device_ops.req_notify_cq. NEXT_COMP covers SOLICITED, so an armed
 * NEXT_COMP is not narrowed. With IB_CQ_REPORT_MISSED_EVENTS, returns 1
 * if completions are already waiting.
 */
int softrc_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	struct softrc_cq *cq = to_scq(ibcq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && softrc_queue_count(&cq->q))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

/* A ring for @cqe completions; exported into *@mi for a user CQ. */
static int softrc_cq_ring(struct softrc_cq *cq, struct softrc_queue *q,
			  u32 *cqe, struct ib_udata *udata, struct mminfo *mi)
{
	struct softrc_dev *sdev = to_sdev(cq->ibcq.device);
	struct softrc_ucontext *uc;
	int err;

	err = softrc_queue_init(sdev, q, cqe, cq->is_user ?
				sizeof(struct ib_uverbs_wc) : sizeof(struct ib_wc));
	if (err || !cq->is_user)
		return err;
	q->to_user = true;
	uc = rdma_udata_to_drv_context(udata, struct softrc_ucontext, ibuc);
	err = softrc_queue_export(q, &uc->ibuc, mi);
	if (err)
		softrc_queue_free(q);
	return err;
}

int softrc_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
		     struct softrc_create_cq_arg *arg)
{
	struct ib_udata *udata = softrc_create_cq_udata(arg);
	struct softrc_dev *sdev = to_sdev(ibcq->device);
	struct softrc_cq *cq = to_scq(ibcq);
	struct rxe_create_cq_resp resp = {};
	u32 cqe = attr->cqe;
	int err;

	if (attr->flags)
		return -EOPNOTSUPP;
	if (cqe < 1 || cqe > SOFTRC_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	if (!softrc_count_get(&sdev->num_cq, sdev->caps.max_cq))
		return -ENOMEM;

	cq->is_user = !!udata;
	spin_lock_init(&cq->lock);
	tasklet_setup(&cq->comp_task, softrc_cq_comp_task);
	err = softrc_cq_ring(cq, &cq->q, &cqe, udata, &resp.mi);
	if (err)
		goto err_count;
	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_ring;
	}
	ibcq->cqe = cqe;
	ibdev_dbg(ibcq->device, "cq: %u entries, %s\n", cqe,
		  cq->is_user ? "user" : "kernel");
	return 0;

err_ring:
	softrc_queue_free(&cq->q);
err_count:
	atomic_dec(&sdev->num_cq);
	return err;
}

/*
 * The RDMA core destroys a CQ only once no QP uses it, so no
 * softrc_cq_post can be running or start; a scheduled handler is waited
 * for.
 */
int softrc_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct softrc_cq *cq = to_scq(ibcq);

	tasklet_kill(&cq->comp_task);
	softrc_queue_free(&cq->q);
	atomic_dec(&to_sdev(ibcq->device)->num_cq);
	return 0;
}

/*
 * ib_device_ops.resize_cq: a new ring holding the pending completions.
 * A user CQ gets a new mmap cookie (librxe unmaps the old ring and maps
 * the new one, holding its CQ lock across the call).
 */
int softrc_resize_cq(struct ib_cq *ibcq, int cqe_req, struct ib_udata *udata)
{
	struct softrc_cq *cq = to_scq(ibcq);
	struct rxe_resize_cq_resp resp = {};
	struct softrc_queue q;
	u32 cqe = cqe_req;
	int err;

	if (cqe_req < 1 || cqe_req > SOFTRC_MAX_CQE)
		return -EINVAL;
	if (udata && udata->outlen < sizeof(resp))
		return -EINVAL;
	err = softrc_cq_ring(cq, &q, &cqe, udata, &resp.mi);
	if (err)
		return err;
	if (udata) {
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err)
			goto err_free;
	}

	/* -EINVAL: more completions pending than fit */
	err = softrc_queue_replace(&cq->q, &q, &cq->lock);
	if (!err)
		ibcq->cqe = cqe;
	return err;

err_free:
	softrc_queue_free(&q);
	return err;
}

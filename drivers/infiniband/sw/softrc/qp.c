// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs: create/modify/query/destroy with the IBTA state machine of
 * each type (RC, UD, and the GSI QP: UD at the alias QPN 1, one per
 * device, kernel only), the QPN table, and the posting paths (kernel WR
 * lists, the user SQ/RQ rings of the rxe ABI, SRQs) that feed the
 * protocol engine.
 *
 * Context: the verbs run in process context and may sleep, except under
 * qp->lock. softrc_qp_rq_refill, softrc_qp_run_tx and softrc_qp_push_wc
 * run with qp->lock held, in process context (BH off) or softirq;
 * softrc_qp_drain_comps runs without it, in any context.
 *
 * Touches: the QP, its shadow rings and user rings, MRs through mr.h
 * (lookups only), the CQs through softrc_cq_post, SRQs through
 * softrc_srq_pop. User-ring contents are copied into kernel memory once
 * and validated there; nothing read back from a ring is trusted.
 */
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/vmalloc.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/rdma_user_rxe.h>
#include <rdma/uverbs_ioctl.h>

#include "compat.h"
#include "qp.h"
#include "net.h"
#include "queue.h"
#include "mr.h"
#include "cq.h"
#include "srq.h"
#include "ah.h"
#include "trace.h"
#include "dump.h"

#define SOFTRC_QPN_MIN		2	/* QPN 0 and 1 are reserved */
#define SOFTRC_QPN_MAX		0xffffff
#define SOFTRC_RQ_FEED_DEPTH	2	/* engine RQ slots fed on demand */
#define SOFTRC_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED | \
				 IB_SEND_SOLICITED | IB_SEND_INLINE)
#define SOFTRC_QP_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | SOFTRC_QP_ACCESS_FLUSH)

/* Source of softrc_qp.uid. */
static atomic64_t softrc_qp_uids = ATOMIC64_INIT(0);

/* ---- QPN table ---------------------------------------------------- */

/* RCU lookup + reference; NULL if unknown, not yet built or dying. */
struct softrc_qp *softrc_qp_get(struct softrc_dev *sdev, u32 qpn)
{
	struct softrc_qp *qp;

	rcu_read_lock();
	qp = xa_load(&sdev->dp->qp_xa, qpn);
	if (qp && !refcount_inc_not_zero(&qp->ref))
		qp = NULL;
	rcu_read_unlock();
	return qp;
}

void softrc_qp_put(struct softrc_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->released);
}

/* May a received packet be handed to the engine? (RTR and later) */
bool softrc_qp_rx_ok(const struct softrc_qp *qp)
{
	return !qp->dying && qp->state != IB_QPS_RESET &&
	       qp->state != IB_QPS_INIT;
}

/* ---- completions -------------------------------------------------- */

/* Queue one completion; the caller holds qp->lock. */
void softrc_qp_push_wc(struct softrc_qp *qp, const struct softrc_pwc *pwc)
{
	u32 prod = qp->pwc_prod;

	lockdep_assert_held(&qp->lock);
	/* acquire: the drainer is done with the slot before we reuse it */
	if (prod - smp_load_acquire(&qp->pwc_cons) >= qp->pwc_size) {
		/* cannot happen with the sizing in create; never overwrite */
		pr_err_ratelimited("qp %u: completion queue overrun\n",
				   qp->ibqp.qp_num);
		return;
	}
	qp->pwc[prod & (qp->pwc_size - 1)] = *pwc;
	/* release: the entry is written before the drainer can see it */
	smp_store_release(&qp->pwc_prod, prod + 1);
}

/* Hand one completion to its CQ. Return: 0, or -ENOSPC if the CQ lost it. */
static int softrc_qp_post_one(struct softrc_qp *qp,
			      const struct softrc_pwc *e)
{
	bool recv = e->flags & SOFTRC_PWC_RECV;
	struct ib_cq *cq = recv ? qp->ibqp.recv_cq : qp->ibqp.send_cq;
	struct ib_wc wc = {
		.wr_id = e->wr_id,
		.status = e->status,
		.opcode = e->opcode,
		.byte_len = e->byte_len,
		.qp = &qp->ibqp,
		.port_num = 1,
	};

	if (e->flags & SOFTRC_PWC_GRH) {
		/* what ib_init_ah_attr_from_wc() needs to answer (ib_cm) */
		wc.wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
		wc.network_hdr_type = e->flags & SOFTRC_PWC_IPV6 ?
				      RDMA_NETWORK_IPV6 : RDMA_NETWORK_IPV4;
		wc.src_qp = e->src_qp;
	}
	/* ib_cm answers from the GID of this VLAN (get_sgid_attr_from_eth) */
	if (e->flags & SOFTRC_PWC_VLAN) {
		wc.wc_flags |= IB_WC_WITH_VLAN;
		wc.vlan_id = e->vlan_id;
	}
	if (e->flags & SOFTRC_PWC_IMM) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = (__force __be32)e->ex;
	} else if (e->flags & SOFTRC_PWC_INV) {
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = e->ex;
	}
	return softrc_cq_post(to_scq(cq), &wc, e->flags & SOFTRC_PWC_SOLICITED);
}

/*
 * At most this many user ring entries (SQ pull, RQ flush) or pending
 * completions (drain) per call; the TX tasklet continues with the rest.
 * One ring's worth (up to 16K entries) per call under a BH-off lock took
 * seconds under QEMU TCG: long enough for the soft-lockup detector.
 */
#define SOFTRC_RING_BUDGET	256

/*
 * Room in the pending-completion ring for one more completion of a WQE
 * taken from a user ring, keeping free what the engine's flush of its SQ
 * and RQ needs when the QP enters ERROR (softrc_qp_init_pwc sizes the
 * ring for that plus several rings' worth).
 */
static bool softrc_qp_pwc_room(struct softrc_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	/* acquire: as in softrc_qp_push_wc */
	return qp->pwc_size - (qp->pwc_prod - smp_load_acquire(&qp->pwc_cons)) >
	       qp->sq_depth + qp->rq_depth + 1;
}

/*
 * More work than one call may do (a user ring that keeps filling, a full
 * pending-completion ring): the TX tasklet continues it. Under qp->lock,
 * so a destroy (dying, then tasklet_kill) never sees it scheduled after.
 */
static void softrc_qp_resched(struct softrc_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (!qp->dying)
		tasklet_schedule(&qp->tx_task);
}

/*
 * A CQ overran and lost one of this QP's completions: the QP cannot
 * complete its work correctly any more. It enters ERROR (the rest of its
 * WQEs flush) and reports IB_EVENT_QP_FATAL, once. Called without
 * qp->lock or comp_lock.
 */
static void softrc_qp_cq_fatal(struct softrc_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = IB_EVENT_QP_FATAL,
	};
	bool report;

	if (test_and_set_bit(SOFTRC_QP_CQ_FATAL, &qp->cq_lost))
		return;
	spin_lock_bh(&qp->lock);
	report = !qp->dying;
	if (report && qp->state != IB_QPS_RESET && qp->state != IB_QPS_ERR) {
		ibdev_dbg(qp->ibqp.device, "qp %u: completion lost to a CQ overrun: error\n",
			  qp->ibqp.qp_num);
		softrc_core_set_error(&qp->core);
		softrc_qp_run_tx(qp);
	}
	spin_unlock_bh(&qp->lock);
	if (report && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/*
 * Hand queued completions to the CQs, in order, without qp->lock. Whoever
 * holds comp_lock drains; a caller that finds it taken (another CPU, or a
 * completion handler posting to this QP from inside the drain) leaves its
 * entries to the holder, which looks again after unlocking.
 */
/* An affiliated asynchronous event of the QP (IBTA 11.6.3), without locks. */
static void softrc_qp_event(struct softrc_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/*
 * At most one queue's worth (what one call under qp->lock may push) per
 * call: other CPUs may keep pushing while we drain; the rest goes to the
 * TX tasklet. Also delivers the events the QP lock deferred: an SRQ
 * limit event, and the fatal error of a QP whose completion a CQ overrun
 * lost.
 */
void softrc_qp_drain_comps(struct softrc_qp *qp)
{
	u32 cons, budget = SOFTRC_RING_BUDGET;

	if (qp->srq)
		softrc_srq_deliver_event(qp->srq);
	do {
		if (!spin_trylock_bh(&qp->comp_lock))
			return;
		cons = qp->pwc_cons;
		/* acquire: pairs with the release in softrc_qp_push_wc */
		while (budget && cons != smp_load_acquire(&qp->pwc_prod)) {
			if (softrc_qp_post_one(qp, &qp->pwc[cons & (qp->pwc_size - 1)]))
				set_bit(SOFTRC_QP_CQ_LOST, &qp->cq_lost);
			/* release: the slot is read before the producer reuses it */
			smp_store_release(&qp->pwc_cons, ++cons);
			budget--;
		}
		spin_unlock_bh(&qp->comp_lock);
		if (test_bit(SOFTRC_QP_CQ_LOST, &qp->cq_lost))
			softrc_qp_cq_fatal(qp);
		/* acquire: entries pushed while we held comp_lock */
	} while (budget && cons != smp_load_acquire(&qp->pwc_prod));
	if (!budget) {
		spin_lock_bh(&qp->lock);
		softrc_qp_resched(qp);
		spin_unlock_bh(&qp->lock);
	}
	/* after the completions of the WQEs that drained */
	if (test_and_clear_bit(SOFTRC_QP_EV_SQ_DRAINED, &qp->events))
		softrc_qp_event(qp, IB_EVENT_SQ_DRAINED);
	/*
	 * Last WQE Reached: after the flush completion of the SRQ WQE that
	 * was in progress, so that a consumer who polls the CQ empty after
	 * the event (ib_drain_qp() on an SRQ QP from 6.10 on) finds it. With
	 * completions still queued, the TX tasklet delivers them and then
	 * comes back here.
	 */
	if (budget && !qp->dying &&
	    test_and_clear_bit(SOFTRC_QP_EV_LAST_WQE, &qp->events))
		softrc_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

static void softrc_qp_push_send_err(struct softrc_qp *qp, u64 wr_id,
				    u8 opcode, u8 status)
{
	struct softrc_pwc e = {
		.wr_id = wr_id,
		.status = status,
		.opcode = opcode,
	};

	softrc_qp_push_wc(qp, &e);
}

static void softrc_qp_push_recv_err(struct softrc_qp *qp, u64 wr_id, u8 status)
{
	struct softrc_pwc e = {
		.wr_id = wr_id,
		.status = status,
		.opcode = IB_WC_RECV,
		.flags = SOFTRC_PWC_RECV,
	};

	softrc_qp_push_wc(qp, &e);
}

/*
 * ERROR: receive WQEs in the user RQ ring complete as flushed. User space
 * may move the producer index for ever: one call takes at most the WQEs
 * there on entry, at most SOFTRC_RING_BUDGET, and what the
 * pending-completion ring has room for; the TX tasklet continues with the
 * rest.
 */
void softrc_qp_flush_user_rq(struct softrc_qp *qp)
{
	struct rxe_recv_wqe *r;
	u32 n;

	lockdep_assert_held(&qp->lock);
	if (!qp->urq)
		return;
	n = min_t(u32, softrc_queue_count(qp->urq), SOFTRC_RING_BUDGET);
	while (n-- && softrc_qp_pwc_room(qp) &&
	       (r = softrc_queue_consumer_slot(qp->urq))) {
		softrc_qp_push_recv_err(qp, READ_ONCE(r->wr_id),
					IB_WC_WR_FLUSH_ERR);
		softrc_queue_consumer_advance(qp->urq);
	}
	if (softrc_queue_count(qp->urq))
		softrc_qp_resched(qp);
}

/* ---- memory checks at post time ------------------------------------ */

/*
 * Is @sge good for @access? Then *@pin is its MR, pinned for the life of
 * the WQE (the data path reaches the memory only through it), or NULL
 * when there is nothing to pin: an empty SGE, or on a kernel QP the local
 * DMA key (kernel virtual addresses) or a fast-register MR, which an
 * earlier WR may register and which is checked in full at every use.
 */
static int softrc_qp_lkey_pin(struct softrc_qp *qp, const struct ib_sge *sge,
			      int access, struct softrc_mr **pin)
{
	*pin = NULL;
	if (!qp->is_user && sge->lkey == qp->sdev->ib_dev.local_dma_lkey)
		return 0;	/* kernel virtual address (virt DMA) */
	if (!sge->length)
		return 0;
	if (!qp->is_user && softrc_mr_fast_index(qp->sdev, sge->lkey))
		return 0;
	*pin = softrc_lkey_pin(qp->sdev, qp->ibqp.pd, sge->lkey, sge->addr,
			       sge->length, access);
	return *pin ? 0 : -EINVAL;
}

static void softrc_qp_unpin_list(struct softrc_mr **pins, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (pins[i]) {
			softrc_mr_unpin(pins[i]);
			pins[i] = NULL;
		}
	}
}

/* Send shadow @slot is free (completed, flushed, reused, reset). */
void softrc_qp_sq_unpin(struct softrc_qp *qp, u32 slot)
{
	lockdep_assert_held(&qp->lock);
	softrc_qp_unpin_list(softrc_qp_sq_pins(qp, slot), qp->max_sge);
}

/* Receive shadow @slot is free. */
void softrc_qp_rq_unpin(struct softrc_qp *qp, u32 slot)
{
	lockdep_assert_held(&qp->lock);
	softrc_qp_unpin_list(softrc_qp_rq_pins(qp, slot), qp->max_recv_sge);
}

/* Every pin of the QP: the engine's and the shadows' (reset, destroy). */
static void softrc_qp_unpin_all(struct softrc_qp *qp)
{
	u32 i;

	lockdep_assert_held(&qp->lock);
	if (qp->core.ops)
		softrc_core_release(&qp->core);
	for (i = 0; i < qp->sq_depth; i++)
		softrc_qp_sq_unpin(qp, i);
	for (i = 0; i < qp->rq_depth; i++)
		softrc_qp_rq_unpin(qp, i);
}

/* Sum of SGE lengths, or -EINVAL past the message size limit. */
static s64 softrc_sge_total(const struct ib_sge *sge, u32 n)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < n; i++)
		sum += sge[i].length;
	return sum > SOFTRC_MAX_MSG_SIZE ? -EINVAL : (s64)sum;
}

/* Check and pin @n SGEs into @pins; on failure nothing stays pinned. */
static int softrc_sges_pin(struct softrc_qp *qp, const struct ib_sge *sge,
			   u32 n, int access, struct softrc_mr **pins)
{
	u32 i;

	for (i = 0; i < n; i++) {
		if (softrc_qp_lkey_pin(qp, &sge[i], access, &pins[i])) {
			softrc_qp_unpin_list(pins, i);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- receive side ---------------------------------------------------- */

/* Validate a receive shadow (@bad: already known bad) and post it. */
static int softrc_qp_post_rwqe(struct softrc_qp *qp, u32 slot, bool bad)
{
	struct softrc_rwqe *r = softrc_qp_rwqe(qp, slot);
	s64 len = bad ? -EINVAL : softrc_sge_total(r->sge, r->num_sge);
	int ret;

	softrc_qp_rq_unpin(qp, slot);
	if (len < 0 ||
	    softrc_sges_pin(qp, r->sge, r->num_sge, IB_ACCESS_LOCAL_WRITE,
			    softrc_qp_rq_pins(qp, slot))) {
		/* a bad SGE list: any data fails the WQE (LOC_PROT_ERR) */
		set_bit(slot, qp->rq_bad);
		len = 0;
	} else {
		clear_bit(slot, qp->rq_bad);
	}
	r->length = len;
	ret = softrc_core_post_recv(&qp->core, r->wr_id, r->length);
	WARN_ON_ONCE(ret >= 0 && ret != slot);
	return ret;
}

static u32 softrc_qp_rq_next_slot(struct softrc_qp *qp)
{
	return qp->core.resp.rq_tail & (qp->rq_depth - 1);
}

/*
 * Copy one WQE of the user RQ ring into shadow @slot. Return: 1 copied,
 * 0 ring empty, -EINVAL copied but impossible (too many SGEs).
 */
static int softrc_qp_pop_user_rq(struct softrc_qp *qp, u32 slot)
{
	struct softrc_rwqe *r = softrc_qp_rwqe(qp, slot);
	struct rxe_recv_wqe *u = softrc_queue_consumer_slot(qp->urq);
	int ret = 1;
	u32 n;

	if (!u)
		return 0;
	r->wr_id = READ_ONCE(u->wr_id);
	n = READ_ONCE(u->dma.num_sge);
	if (n > qp->max_recv_sge) {
		n = 0;
		ret = -EINVAL;
	}
	r->num_sge = n;
	memcpy(r->sge, u->dma.sge, n * sizeof(r->sge[0]));
	softrc_queue_consumer_advance(qp->urq);
	return ret;
}

/*
 * Before a receive-consuming request reaches the engine: make sure its
 * RQ holds a WQE, taking one from the user RQ ring or the SRQ. Kernel RQs
 * post straight into the engine and need nothing here.
 */
void softrc_qp_rq_refill(struct softrc_qp *qp)
{
	u32 slot;
	int ret;

	lockdep_assert_held(&qp->lock);
	if (qp->core.resp.rq_tail != qp->core.resp.rq_head ||
	    (!qp->srq && !qp->urq))
		return;
	slot = softrc_qp_rq_next_slot(qp);
	if (qp->srq)
		ret = softrc_srq_pop(qp->srq, softrc_qp_rwqe(qp, slot)) ? 0 : 1;
	else
		ret = softrc_qp_pop_user_rq(qp, slot);
	if (ret)
		softrc_qp_post_rwqe(qp, slot, ret < 0);
}

/*
 * The QP lock for a post verb. Kernel ULPs may post with hard IRQs off
 * (ib_mad posts QP1's sends and receives under spin_lock_irqsave): bottom
 * halves cannot run then anyway, and must not be re-enabled (that is a
 * bug with IRQs off), so the lock is taken without the toggle, and what
 * needs bottom halves (transmitting through the stack: VLAN and macvlan
 * devices drop what comes with IRQs off; handing completions to the CQs)
 * is left to the TX tasklet.
 * Return: true if the caller may transmit and complete inline.
 */
static bool softrc_qp_lock_post(struct softrc_qp *qp)
	__acquires(&qp->lock)
{
	if (irqs_disabled()) {
		spin_lock(&qp->lock);
		return false;
	}
	spin_lock_bh(&qp->lock);
	return true;
}

static void softrc_qp_unlock_post(struct softrc_qp *qp, bool inline_ok)
	__releases(&qp->lock)
{
	lockdep_assert_held(&qp->lock);
	if (!inline_ok) {
		tasklet_schedule(&qp->tx_task);
		spin_unlock(&qp->lock);
		return;
	}
	spin_unlock_bh(&qp->lock);
	softrc_qp_drain_comps(qp);
}

int softrc_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr)
{
	struct softrc_qp *qp = to_sqp(ibqp);
	bool inline_ok;
	int err = 0;

	if (qp->srq || qp->is_user) {
		*bad_wr = wr;
		return -EINVAL;
	}
	inline_ok = softrc_qp_lock_post(qp);
	for (; wr; wr = wr->next) {
		u32 slot;

		if (qp->state == IB_QPS_RESET || wr->num_sge > qp->max_recv_sge) {
			err = -EINVAL;
			break;
		}
		if (qp->state == IB_QPS_ERR) {
			softrc_qp_push_recv_err(qp, wr->wr_id, IB_WC_WR_FLUSH_ERR);
			continue;
		}
		if (qp->core.resp.rq_tail - qp->core.resp.rq_head >=
		    qp->max_recv_wr) {
			err = -ENOMEM;
			break;
		}
		slot = softrc_qp_rq_next_slot(qp);
		softrc_qp_rwqe(qp, slot)->wr_id = wr->wr_id;
		softrc_qp_rwqe(qp, slot)->num_sge = wr->num_sge;
		memcpy(softrc_qp_rwqe(qp, slot)->sge, wr->sg_list,
		       wr->num_sge * sizeof(*wr->sg_list));
		if (softrc_qp_post_rwqe(qp, slot, false) < 0) {
			err = -ENOMEM;
			break;
		}
	}
	softrc_qp_unlock_post(qp, inline_ok);
	if (err)
		*bad_wr = wr;
	return err;
}

/* ---- send side ------------------------------------------------------ */

/**
 * struct softrc_swr - a send WR in one shape, from either source
 * @wr:		what the engine gets
 * @sge:	local SGEs (not inline)
 * @inline_data: inline bytes (@inl)
 * @num_sge:	entries of @sge
 * @opcode:	IB_WR_*
 * @flags:	IB_SEND_*
 * @inv_rkey:	LOCAL_INV: R_Key to invalidate
 * @bind:	BIND_MW: the request (user QPs only)
 * @reg:	IB_WR_REG_MR: MR, key and access (kernel QPs only)
 * @ah:		UD: the destination's address handle (kernel WR), or
 * @ah_num:	UD: its number (user WQE; found and checked at post)
 */
struct softrc_swr {
	struct softrc_send_wr wr;
	struct softrc_ah *ah;
	u32 ah_num;
	const struct ib_sge *sge;
	const void *inline_data;
	u32 num_sge;
	u32 opcode;
	u32 flags;
	u32 inv_rkey;
	struct softrc_mw_bind bind;
	struct softrc_reg_req reg;
};

static bool softrc_wr_opcode_ok(const struct softrc_qp *qp, u32 opcode)
{
	bool uc = qp->ibqp.qp_type == IB_QPT_UC;

	if (softrc_qp_is_ud(qp))
		return opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM;
	switch (opcode) {
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_SEND_WITH_INV:
		/* UC has no responder resources and no invalidation */
		return !uc;
	case SOFTRC_ABI_WR_ATOMIC_WRITE:
		/*
		 * RC only; a kernel ULP only where the kernel names it
		 * (compat.h): on 6.1 its completion opcode would be
		 * IB_WC_MASKED_COMP_SWAP's value
		 */
		return !uc && (qp->is_user || SOFTRC_KERNEL_HAS_ATOMIC_WRITE);
	case SOFTRC_ABI_WR_FLUSH:
		/*
		 * RC only, and only where the kernel names FLUSH (compat.h):
		 * elsewhere the device does not offer it, to ULPs or users
		 */
		return !uc && SOFTRC_KERNEL_HAS_FLUSH;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
	case IB_WR_REG_MR:
		return true;
	default:
		return false;
	}
}

static u8 softrc_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_REG_MR:
		return IB_WC_REG_MR;
	case SOFTRC_ABI_WR_ATOMIC_WRITE:
		return SOFTRC_ABI_WC_ATOMIC_WRITE;
	case SOFTRC_ABI_WR_FLUSH:
		/* 6.1's value 8 is IB_WC_REG_MR: a refused FLUSH is a SEND there */
		return SOFTRC_KERNEL_HAS_FLUSH ? SOFTRC_ABI_WC_FLUSH : IB_WC_SEND;
	default:
		return IB_WC_SEND;
	}
}

/* Sends local bytes (gathered, or inline): no local write access needed. */
static bool softrc_wr_is_inline_op(u32 opcode)
{
	return opcode == IB_WR_RDMA_WRITE || opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
	       opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM ||
	       opcode == IB_WR_SEND_WITH_INV || opcode == SOFTRC_ABI_WR_ATOMIC_WRITE;
}

/*
 * A UD WR's destination, resolved into s->wr and the shadow of the next
 * SQ slot: the address handle's path, copied at post (the AH may be
 * destroyed while the WR is queued); the AH must be of the QP's PD. A user
 * WQE names its AH by number only: the address vector librxe also copies into
 * the WQE is the user's to forge, so it is never read.
 * Return: 0, or -EINVAL (no such AH, another PD's).
 */
static int softrc_swr_ud_dest(struct softrc_qp *qp, struct softrc_swr *s)
{
	struct softrc_core_qp *c = &qp->core;
	struct softrc_path *p = &qp->sqs[c->req.tail & (qp->sq_depth - 1)].local.ud;
	struct softrc_dev *sdev = qp->sdev;
	const struct softrc_av *av;
	struct softrc_ah *ah;
	unsigned long flags;
	int err = 0;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	ah = s->ah;
	if (!ah && s->ah_num)
		ah = xa_load(&sdev->ah_xa, s->ah_num);
	if (!ah || ah->ibah.pd != qp->ibqp.pd) {
		err = -EINVAL;
		goto out;
	}
	av = &ah->av;
	memset(p, 0, sizeof(*p));
	p->ipv6 = av->net_type == SOFTRC_NET_IPV6;
	if (p->ipv6) {
		p->saddr.v6 = av->saddr.v6;
		p->daddr.v6 = av->daddr.v6;
	} else {
		p->saddr.v4 = av->saddr.v4.s_addr;
		p->daddr.v4 = av->daddr.v4.s_addr;
	}
	p->tos = av->tclass;
	p->ttl = av->hop_limit ? av->hop_limit : 64;
	p->flow_label = av->flow_label;
	p->ifindex = av->ifindex;
	p->sport = rdma_get_udp_sport(av->flow_label, qp->ibqp.qp_num,
				      s->wr.dqpn);
out:
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	/* QP1 sends with the QP1 Q_Key whatever the WR says (§13.5.3) */
	if (qp->ibqp.qp_type == IB_QPT_GSI)
		s->wr.qkey = IB_QP1_QKEY;
	return err;
}

/*
 * Check a send WR against the QP's limits and the memory it names, and
 * pin its SGEs' MRs into @pins. Return: 0, or the completion status of a
 * bad WR (nothing pinned).
 */
static u8 softrc_swr_check(struct softrc_qp *qp, struct softrc_swr *s,
			   struct softrc_mr **pins)
{
	u32 op = s->opcode;
	s64 len;

	if (!softrc_wr_opcode_ok(qp, op))
		return IB_WC_LOC_QP_OP_ERR;
	if (softrc_qp_is_ud(qp) && softrc_swr_ud_dest(qp, s))
		return IB_WC_LOC_QP_OP_ERR;
	if (op == IB_WR_LOCAL_INV || op == IB_WR_BIND_MW || op == IB_WR_REG_MR) {
		/* local: no data; BIND_MW from users, REG_MR from ULPs only */
		if ((op == IB_WR_BIND_MW && !qp->is_user) ||
		    (op == IB_WR_REG_MR && (qp->is_user || !s->reg.mr)))
			return IB_WC_LOC_QP_OP_ERR;
		s->num_sge = 0;
		s->wr.length = 0;
		s->flags &= ~IB_SEND_INLINE;
		return 0;
	}
	/*
	 * FLUSH names a remote range only: no local data, so no SGE is
	 * pinned (a ULP's SGEs only give the length, as rxe takes it), and
	 * it takes a responder resource at the peer, like a READ
	 */
	if (op == SOFTRC_ABI_WR_FLUSH) {
		if (!qp->attr.max_rd_atomic)
			return IB_WC_LOC_QP_OP_ERR;
		if (s->flags & IB_SEND_INLINE)
			return IB_WC_LOC_QP_OP_ERR;
		if (s->sge) {
			if (s->num_sge > qp->max_sge)
				return IB_WC_LOC_LEN_ERR;
			len = softrc_sge_total(s->sge, s->num_sge);
			if (len < 0)
				return IB_WC_LOC_LEN_ERR;
			s->wr.length = len;
		}
		s->sge = NULL;
		s->num_sge = 0;
		return 0;
	}
	/* ATOMIC WRITE takes a responder resource at the peer, like a READ */
	if (op == SOFTRC_ABI_WR_ATOMIC_WRITE && !qp->attr.max_rd_atomic)
		return IB_WC_LOC_QP_OP_ERR;
	if (op == SOFTRC_ABI_WR_ATOMIC_WRITE && (s->flags & IB_SEND_INLINE) &&
	    s->wr.length != SOFTRC_ATOMIC_WRITE_BYTES)
		return IB_WC_LOC_LEN_ERR;
	if (s->flags & IB_SEND_INLINE) {
		if (!softrc_wr_is_inline_op(op))
			return IB_WC_LOC_QP_OP_ERR;
		if (s->wr.length > qp->max_inline)
			return IB_WC_LOC_LEN_ERR;
		return 0;
	}
	if (s->num_sge > qp->max_sge)
		return IB_WC_LOC_LEN_ERR;
	len = softrc_sge_total(s->sge, s->num_sge);
	if (len < 0)
		return IB_WC_LOC_LEN_ERR;
	s->wr.length = len;
	if (op == IB_WR_ATOMIC_CMP_AND_SWP || op == IB_WR_ATOMIC_FETCH_AND_ADD) {
		if (len != 8 || s->num_sge != 1 || (s->wr.remote_addr & 7))
			return IB_WC_LOC_LEN_ERR;
		if (!qp->attr.max_rd_atomic)
			return IB_WC_LOC_QP_OP_ERR;
	}
	/* the 8 bytes, gathered (an unaligned VA is the responder's to NAK) */
	if (op == SOFTRC_ABI_WR_ATOMIC_WRITE && len != SOFTRC_ATOMIC_WRITE_BYTES)
		return IB_WC_LOC_LEN_ERR;
	if (op == IB_WR_RDMA_READ && !qp->attr.max_rd_atomic)
		return IB_WC_LOC_QP_OP_ERR;
	if (softrc_sges_pin(qp, s->sge, s->num_sge,
			    softrc_wr_is_inline_op(op) ? 0 : IB_ACCESS_LOCAL_WRITE,
			    pins))
		return IB_WC_LOC_PROT_ERR;
	return 0;
}

static bool softrc_swr_signaled(struct softrc_qp *qp, const struct softrc_swr *s)
{
	return qp->sig_all || (s->flags & IB_SEND_SIGNALED);
}

/* A WR the engine cannot take (it is in ERROR): it completes at once. */
static void softrc_qp_fail_wr(struct softrc_qp *qp, const struct softrc_swr *s,
			      u8 status)
{
	softrc_core_set_error(&qp->core);
	softrc_qp_push_send_err(qp, s->wr.wr_id, softrc_wc_opcode(s->opcode),
				status);
}

/*
 * A user WR that failed its checks takes its place in the SQ as a
 * SOFTRC_WR_REFUSED WQE: the WRs before it finish as they would have, then
 * it completes with @status and the QP enters ERROR (in SQ order, as the
 * engine runs local WQEs). Only if the engine takes no WQE (ERROR) does it
 * complete at once.
 */
static int softrc_qp_post_refused(struct softrc_qp *qp, struct softrc_swr *s,
				  u8 status)
{
	struct softrc_core_qp *c = &qp->core;
	struct softrc_sq_shadow *sh = &qp->sqs[c->req.tail & (qp->sq_depth - 1)];
	struct softrc_send_wr wr = {
		.wr_id = s->wr.wr_id,
		.opcode = SOFTRC_WR_REFUSED,
		.send_flags = SOFTRC_SEND_SIGNALED,
	};
	int ret;

	sh->opcode = s->opcode;
	sh->flags = SOFTRC_SQS_SIGNALED | SOFTRC_SQS_REFUSED;
	sh->num_sge = 0;
	sh->length = 0;
	sh->local.refused.status = status;
	sh->local.refused.wc_opcode = softrc_wc_opcode(s->opcode);
	ret = softrc_core_post_send(c, &wr);
	if (ret == SOFTRC_E_FULL)
		return -ENOMEM;
	if (ret < 0)
		softrc_qp_fail_wr(qp, s, ret == SOFTRC_E_STATE ?
				  IB_WC_WR_FLUSH_ERR : status);
	return 0;
}

/*
 * Copy the local side into the shadow of the engine's next SQ slot and
 * post the WR. Return: 0, -ENOMEM (SQ full), or -EINVAL (bad WR; a user
 * WR has then been failed with a completion instead).
 */
static int softrc_qp_post_swr(struct softrc_qp *qp, struct softrc_swr *s)
{
	struct softrc_core_qp *c = &qp->core;
	u32 slot = c->req.tail & (qp->sq_depth - 1);
	struct softrc_sq_shadow *sh = &qp->sqs[slot];
	u8 status;
	int ret;

	if (c->req.tail - c->req.head >= qp->max_send_wr)
		return -ENOMEM;
	softrc_qp_sq_unpin(qp, slot);	/* an unsignaled WQE's, at reuse */
	status = softrc_swr_check(qp, s, softrc_qp_sq_pins(qp, slot));
	if (status) {
		if (!qp->is_user)
			return -EINVAL;
		return softrc_qp_post_refused(qp, s, status);
	}
	sh->opcode = s->opcode;
	if (s->opcode == IB_WR_LOCAL_INV)
		sh->local.inv_rkey = s->inv_rkey;
	else if (s->opcode == IB_WR_BIND_MW)
		sh->local.bind = s->bind;
	else if (s->opcode == IB_WR_REG_MR)
		sh->local.reg = s->reg;
	sh->length = s->wr.length;
	sh->flags = softrc_swr_signaled(qp, s) ? SOFTRC_SQS_SIGNALED : 0;
	if (s->flags & IB_SEND_INLINE) {
		sh->flags |= SOFTRC_SQS_INLINE;
		sh->num_sge = 0;
		softrc_net_copy(softrc_qp_sq_sge(qp, slot), s->inline_data,
				s->wr.length);
	} else {
		sh->num_sge = s->num_sge;
		memcpy(softrc_qp_sq_sge(qp, slot), s->sge,
		       s->num_sge * sizeof(*s->sge));
	}
	s->wr.opcode = s->opcode;
	/* the engine's flags, by name; SIGNALED as decided above (sq_sig_all) */
	s->wr.send_flags = (s->flags & IB_SEND_FENCE ? SOFTRC_SEND_FENCE : 0) |
			   (sh->flags & SOFTRC_SQS_SIGNALED ? SOFTRC_SEND_SIGNALED : 0) |
			   (s->flags & IB_SEND_SOLICITED ? SOFTRC_SEND_SOLICITED : 0);
	ret = softrc_core_post_send(c, &s->wr);
	if (ret < 0) {
		softrc_qp_sq_unpin(qp, slot);
		if (ret == SOFTRC_E_FULL)
			return -ENOMEM;
		if (!qp->is_user)
			return -EINVAL;
		if (ret == SOFTRC_E_STATE)
			softrc_qp_fail_wr(qp, s, IB_WC_WR_FLUSH_ERR);
		else
			return softrc_qp_post_refused(qp, s, IB_WC_LOC_QP_OP_ERR);
		return 0;
	}
	WARN_ON_ONCE(ret != slot);
	return 0;
}

static void softrc_swr_from_ib(struct softrc_qp *qp, struct softrc_swr *s,
			       const struct ib_send_wr *wr)
{
	memset(s, 0, sizeof(*s));
	s->wr.wr_id = wr->wr_id;
	s->opcode = wr->opcode;
	s->flags = wr->send_flags;
	s->sge = wr->sg_list;
	s->num_sge = wr->num_sge;
	/*
	 * u32: SOFTRC_ABI_WR_ATOMIC_WRITE and SOFTRC_ABI_WR_FLUSH are no 6.1
	 * enum ib_wr_opcode values
	 */
	switch ((u32)wr->opcode) {
	case SOFTRC_ABI_WR_FLUSH:
		/*
		 * FLUSH from a ULP (6.2+): the kernel's verbs have no FLUSH
		 * WR of their own (rxe reads nothing but the opcode), so
		 * softrc takes an ib_rdma_wr naming the range's start and
		 * R_Key, its length the total of the SGEs (as rxe's), and
		 * asks for placement type GLOBAL at selectivity RANGE: the
		 * only type the device offers, and no field selects another
		 */
		s->wr.remote_addr = rdma_wr(wr)->remote_addr;
		s->wr.rkey = rdma_wr(wr)->rkey;
		s->wr.flush_type = SOFTRC_FLUSH_GLOBAL;
		s->wr.flush_level = SOFTRC_FLUSH_RANGE;
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_RDMA_READ:
	case SOFTRC_ABI_WR_ATOMIC_WRITE:
		/*
		 * ATOMIC WRITE from a ULP: an ib_rdma_wr naming the target,
		 * the 8 bytes in its SGEs (or inline), as an RDMA WRITE's
		 */
		s->wr.remote_addr = rdma_wr(wr)->remote_addr;
		s->wr.rkey = rdma_wr(wr)->rkey;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		s->wr.remote_addr = atomic_wr(wr)->remote_addr;
		s->wr.rkey = atomic_wr(wr)->rkey;
		s->wr.compare_add = atomic_wr(wr)->compare_add;
		s->wr.swap = atomic_wr(wr)->swap;
		break;
	default:
		break;
	}
	if (wr->opcode == IB_WR_SEND_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
		s->wr.imm = wr->ex.imm_data;
	if (wr->opcode == IB_WR_SEND_WITH_INV)
		s->wr.inv_rkey = wr->ex.invalidate_rkey;
	if (wr->opcode == IB_WR_LOCAL_INV)
		s->inv_rkey = wr->ex.invalidate_rkey;
	if (softrc_qp_is_ud(qp)) {
		s->ah = to_sah(ud_wr(wr)->ah);
		s->wr.dqpn = ud_wr(wr)->remote_qpn & SOFTRC_PSN_MASK;
		s->wr.qkey = ud_wr(wr)->remote_qkey;
	}
	if (wr->opcode == IB_WR_REG_MR) {
		s->reg.mr = reg_wr(wr)->mr;
		s->reg.key = reg_wr(wr)->key;
		s->reg.access = reg_wr(wr)->access;
	}
}

/* Kernel inline data: gather the SGEs (kernel virtual addresses). */
static int softrc_kernel_inline(struct softrc_qp *qp, struct softrc_swr *s,
				u8 *buf)
{
	u32 i, off = 0;

	for (i = 0; i < s->num_sge; i++) {
		if (s->sge[i].length > qp->max_inline - off)
			return -EINVAL;
		memcpy(buf + off, (void *)(uintptr_t)s->sge[i].addr,
		       s->sge[i].length);
		off += s->sge[i].length;
	}
	s->wr.length = off;
	s->inline_data = buf;
	return 0;
}

static int softrc_post_send_kernel(struct softrc_qp *qp,
				   const struct ib_send_wr *wr,
				   const struct ib_send_wr **bad_wr)
{
	struct softrc_swr s;
	int err = 0;

	for (; wr; wr = wr->next) {
		softrc_swr_from_ib(qp, &s, wr);
		if (qp->state == IB_QPS_ERR) {
			softrc_qp_push_send_err(qp, wr->wr_id,
						softrc_wc_opcode(wr->opcode),
						IB_WC_WR_FLUSH_ERR);
			continue;
		}
		if ((wr->send_flags & IB_SEND_INLINE) && wr->num_sge &&
		    softrc_wr_is_inline_op(wr->opcode) &&
		    softrc_kernel_inline(qp, &s, qp->sq_scratch)) {
			err = -EINVAL;
			break;
		}
		err = softrc_qp_post_swr(qp, &s);
		if (err)
			break;
	}
	if (err)
		*bad_wr = wr;
	return err;
}

/* Convert a copied user send WQE; false if its shape is impossible. */
static void softrc_swr_from_user(struct softrc_qp *qp, struct softrc_swr *s,
				 const struct rxe_send_wqe *u)
{
	memset(s, 0, sizeof(*s));
	s->wr.wr_id = u->wr.wr_id;
	s->opcode = u->wr.opcode;
	s->flags = u->wr.send_flags & SOFTRC_SEND_FLAGS;
	switch (s->opcode) {
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		s->wr.remote_addr = u->wr.wr.atomic.remote_addr;
		s->wr.rkey = u->wr.wr.atomic.rkey;
		s->wr.compare_add = u->wr.wr.atomic.compare_add;
		s->wr.swap = u->wr.wr.atomic.swap;
		break;
	case IB_WR_BIND_MW:
		/* librxe: ibv_bind_mw (type 1) and IBV_WR_BIND_MW (type 2) */
		s->bind.addr = u->wr.wr.mw.addr;
		s->bind.length = u->wr.wr.mw.length;
		s->bind.mr_lkey = u->wr.wr.mw.mr_lkey;
		s->bind.mw_rkey = u->wr.wr.mw.mw_rkey;
		s->bind.rkey = u->wr.wr.mw.rkey;
		s->bind.access = u->wr.wr.mw.access;
		break;
	default:
		s->wr.remote_addr = u->wr.wr.rdma.remote_addr;
		s->wr.rkey = u->wr.wr.rdma.rkey;
		break;
	}
	if (softrc_qp_is_ud(qp)) {
		s->ah_num = u->wr.wr.ud.ah_num;
		s->wr.dqpn = u->wr.wr.ud.remote_qpn & SOFTRC_PSN_MASK;
		s->wr.qkey = u->wr.wr.ud.remote_qkey;
	}
	s->wr.imm = u->wr.ex.imm_data;
	if (s->opcode == IB_WR_SEND_WITH_INV)
		s->wr.inv_rkey = u->wr.ex.invalidate_rkey;
	s->inv_rkey = u->wr.ex.invalidate_rkey;
	/*
	 * librxe's ATOMIC WRITE keeps its 8 bytes in the WQE's inline area
	 * (rxe's dma.atomic_wr, which 6.1's rdma_user_rxe.h does not name),
	 * whatever the flags say; the WQE is at least an SGE larger than
	 * struct rxe_send_wqe, so they are within the copy.
	 */
	if (s->opcode == SOFTRC_ABI_WR_ATOMIC_WRITE) {
		s->flags |= IB_SEND_INLINE;
		s->num_sge = 0;
	}
	/*
	 * librxe's FLUSH (rdma-core 45 on): the target and the FETH values
	 * in wr.flush, the range's length in dma.length, no SGEs; where the
	 * rxe ABI lacks them it is refused (softrc_wr_opcode_ok)
	 */
	if (s->opcode == SOFTRC_ABI_WR_FLUSH) {
		if (softrc_user_flush_wr(u, &s->wr.remote_addr, &s->wr.rkey,
					 &s->wr.flush_type, &s->wr.flush_level))
			s->wr.length = u->dma.length;
		s->flags &= ~IB_SEND_INLINE;
		s->num_sge = 0;
		s->sge = NULL;
		return;
	}
	if (s->flags & IB_SEND_INLINE) {
		/* validated against max_inline in softrc_swr_check */
		s->wr.length = u->dma.length;
		s->inline_data = u->dma.inline_data;
	} else {
		/* an impossible count is caught by softrc_swr_check */
		s->num_sge = u->dma.num_sge;
		s->sge = (const struct ib_sge *)u->dma.sge;
	}
}

/*
 * The doorbell: copy new WQEs of the user SQ ring into kernel memory and
 * post them while the engine has room. In ERROR they complete flushed,
 * taking no engine room, so only the ring bounds the loop, and user space
 * may move its producer index for ever: one call takes at most the WQEs
 * there on entry, at most SOFTRC_RING_BUDGET, and what the pending-completion
 * ring has room for (each may complete); the TX tasklet continues.
 */
static void softrc_qp_pull_usq(struct softrc_qp *qp)
{
	u32 esize = softrc_queue_elem_size(qp->usq);
	struct softrc_core_qp *c = &qp->core;
	struct rxe_send_wqe *u = qp->sq_scratch;
	struct softrc_swr s;
	void *slot;
	u32 n;

	lockdep_assert_held(&qp->lock);
	n = min_t(u32, softrc_queue_count(qp->usq), SOFTRC_RING_BUDGET);
	while (c->req.tail - c->req.head < qp->max_send_wr) {
		if (!n-- || !softrc_qp_pwc_room(qp)) {
			/* budget spent with WQEs left: continue later */
			if (softrc_queue_count(qp->usq))
				softrc_qp_resched(qp);
			break;
		}
		slot = softrc_queue_consumer_slot(qp->usq);
		if (!slot)
			break;
		softrc_net_copy(u, slot, esize);
		softrc_queue_consumer_advance(qp->usq);
		softrc_swr_from_user(qp, &s, u);
		if (qp->state == IB_QPS_ERR) {
			softrc_qp_push_send_err(qp, s.wr.wr_id,
						softrc_wc_opcode(s.opcode),
						IB_WC_WR_FLUSH_ERR);
			continue;
		}
		if (s.num_sge > qp->max_sge) {
			softrc_qp_post_refused(qp, &s, IB_WC_LOC_LEN_ERR);
			continue;
		}
		softrc_qp_post_swr(qp, &s);
	}
}

/* SQD: once the SQ has drained, queue the event if it was asked for. */
static void softrc_qp_check_drained(struct softrc_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->sqd_seen || !softrc_core_sq_drained(&qp->core))
		return;
	qp->sqd_seen = true;
	if (qp->attr.en_sqd_async_notify)
		set_bit(SOFTRC_QP_EV_SQ_DRAINED, &qp->events);
}

/*
 * Pull the user SQ and let the engine transmit, up to the budget: in RTS
 * requests and responses; in SQD the same, with the engine draining (the
 * WQEs already started finish, SQD_DRAINED follows); in RTR/SQE
 * responses only (READ responses are paced through here).
 * Return: the engine's steps; SOFTRC_TX_BUDGET means it has more to send.
 */
static u32 softrc_qp_tx_engine(struct softrc_qp *qp)
{
	u32 n;

	if (qp->usq && (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD ||
			qp->state == IB_QPS_ERR))
		softrc_qp_pull_usq(qp);
	/* ERROR: user RQ WQEs posted since (or left by a bounded flush) */
	if (qp->state == IB_QPS_ERR)
		softrc_qp_flush_user_rq(qp);
	switch (qp->state) {
	case IB_QPS_RTS:
		return softrc_core_tx(&qp->core, softrc_now(), SOFTRC_TX_BUDGET);
	case IB_QPS_SQD:
		/* the engine drains: started WQEs finish, none starts */
		n = softrc_core_tx(&qp->core, softrc_now(), SOFTRC_TX_BUDGET);
		softrc_qp_check_drained(qp);
		return n;
	case IB_QPS_RTR:
	case IB_QPS_SQE:
		/* the requester is quiet, the responder still answers */
		return softrc_core_tx_resp(&qp->core, SOFTRC_TX_BUDGET);
	default:
		return 0;
	}
}

/*
 * End of every engine call under the QP lock: transmit what the engine
 * has (the tasklet continues a full budget), then send the batch this
 * and the calls before it built, so no batch outlives the lock.
 */
void softrc_qp_run_tx(struct softrc_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (!qp->dying && softrc_qp_tx_engine(qp) >= SOFTRC_TX_BUDGET)
		tasklet_schedule(&qp->tx_task);
	softrc_net_flush(qp);
}

static void softrc_qp_tx_task(struct tasklet_struct *t)
{
	struct softrc_qp *qp = from_tasklet(qp, t, tx_task);

	spin_lock_bh(&qp->lock);
	softrc_qp_run_tx(qp);
	spin_unlock_bh(&qp->lock);
	softrc_qp_drain_comps(qp);
}

int softrc_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr)
{
	struct softrc_qp *qp = to_sqp(ibqp);
	bool inline_ok = softrc_qp_lock_post(qp);
	int err = 0;

	if (qp->state == IB_QPS_RESET || qp->state == IB_QPS_INIT ||
	    qp->state == IB_QPS_RTR) {
		err = -EINVAL;
		if (wr)
			*bad_wr = wr;
	} else if (!qp->is_user) {
		err = softrc_post_send_kernel(qp, wr, bad_wr);
	}
	if (inline_ok && (!err || !qp->is_user))
		softrc_qp_run_tx(qp);
	softrc_qp_unlock_post(qp, inline_ok);
	return err;
}

/* ---- engine life cycle ---------------------------------------------- */

static u32 softrc_port_pmtu(struct softrc_dev *sdev)
{
	return ib_mtu_enum_to_int(softrc_mtu_from_netdev(READ_ONCE(sdev->ndev->mtu)));
}

/*
 * Remote operations the QP does not enable, as SOFTRC_ACCESS_* bits (the
 * same values as IB_ACCESS_REMOTE_* and IB_ACCESS_FLUSH_*, which
 * softrc_glue_mr_check() relies on too). A kernel without FLUSH never
 * lets a QP have the flush bits (SOFTRC_QP_ACCESS), so there every FLUSH
 * request is an invalid request, as for a device that does not know it.
 */
static u16 softrc_qp_remote_deny(const struct softrc_qp *qp)
{
	return ~qp->attr.qp_access_flags & (IB_ACCESS_REMOTE_WRITE |
					    IB_ACCESS_REMOTE_READ |
					    IB_ACCESS_REMOTE_ATOMIC |
					    SOFTRC_ACCESS_FLUSH_GLOBAL |
					    SOFTRC_ACCESS_FLUSH_PERSISTENT);
}

/*
 * (Re)start the engine from scratch: creation and RESET.
 * Return: 0, or -EINVAL if the engine refused the attributes or storage.
 */
static int softrc_qp_core_reset(struct softrc_qp *qp)
{
	struct softrc_core_attr ca = {
		.transport = softrc_qp_transport(qp),
		.qkey = qp->attr.qkey,
		.sqpn = qp->ibqp.qp_num,
		.pmtu = qp->pmtu,
		.sq_psn = qp->attr.sq_psn,
		.rq_psn = qp->attr.rq_psn,
		.dqpn = qp->attr.dest_qp_num,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.timeout = qp->attr.timeout,
		.retry_cnt = qp->attr.retry_cnt,
		.rnr_retry = qp->attr.rnr_retry,
		.min_rnr_timer = qp->attr.min_rnr_timer,
		.max_rd_atomic = qp->attr.max_rd_atomic,
		.no_credits = true,
		.clock_slack_ns = softrc_now_slack(),
		.remote_deny = softrc_qp_remote_deny(qp),
	};
	struct softrc_core_storage st = {
		.sq = qp->core_sq,
		.sq_depth = qp->sq_depth,
		.rq = qp->core_rq,
		.rq_depth = qp->rq_depth,
		.res = qp->core_res,
		.nres = qp->attr.max_dest_rd_atomic,
		.res_cap = SOFTRC_MAX_RD_ATOMIC,
	};

	lockdep_assert_held(&qp->lock);
	/* the WQEs and responder resources are discarded: so are their pins */
	softrc_qp_unpin_all(qp);
	return softrc_core_qp_init(&qp->core, &softrc_glue_ops, qp, &ca, &st) ?
	       -EINVAL : 0;
}

/* Attributes the engine reads live; PSNs only before the first packet. */
static void softrc_qp_core_apply(struct softrc_qp *qp, int mask,
				 enum ib_qp_state new)
{
	struct softrc_core_qp *c = &qp->core;

	lockdep_assert_held(&qp->lock);
	/* UD: messages up to the port's MTU, as it is now */
	if (softrc_qp_is_ud(qp))
		qp->pmtu = softrc_port_pmtu(qp->sdev);
	c->attr.pmtu = qp->pmtu;
	c->attr.qkey = qp->attr.qkey;
	c->attr.dqpn = qp->attr.dest_qp_num;
	c->attr.timeout = qp->attr.timeout;
	c->attr.retry_cnt = qp->attr.retry_cnt;
	c->attr.rnr_retry = qp->attr.rnr_retry;
	c->attr.min_rnr_timer = qp->attr.min_rnr_timer;
	c->attr.max_rd_atomic = qp->attr.max_rd_atomic;
	c->attr.remote_deny = softrc_qp_remote_deny(qp);
	if ((mask & IB_QP_RQ_PSN) && new == IB_QPS_RTR) {
		c->attr.rq_psn = qp->attr.rq_psn;
		c->resp.epsn = qp->attr.rq_psn;
	}
	if ((mask & IB_QP_SQ_PSN) && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD) {
		c->attr.sq_psn = qp->attr.sq_psn;
		c->req.psn_next = qp->attr.sq_psn;
		c->req.una = qp->attr.sq_psn;
		c->req.cur_psn = qp->attr.sq_psn;
	}
	if (mask & IB_QP_RETRY_CNT)
		c->req.retry_left = qp->attr.retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		c->req.rnr_left = qp->attr.rnr_retry;
	/* checked against SOFTRC_MAX_RD_ATOMIC = res_cap: cannot fail */
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		softrc_core_set_max_dest_rd_atomic(c,
						   qp->attr.max_dest_rd_atomic);
}

/* ---- attributes -------------------------------------------------- */

/* Copy a GID as an IPv6 address; false if it is IPv4-mapped. */
static bool softrc_gid_to_ip6(const union ib_gid *gid, struct in6_addr *a6)
{
	memcpy(a6, gid->raw, sizeof(*a6));
	return !ipv6_addr_v4mapped(a6);
}

static int softrc_path_from_ah(struct softrc_qp *qp,
			       const struct rdma_ah_attr *ah,
			       struct softrc_path *av)
{
	const struct ib_global_route *grh;
	bool sv6, dv6;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) ||
	    (rdma_ah_get_port_num(ah) && rdma_ah_get_port_num(ah) != 1))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (!grh->sgid_attr ||
	    grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	sv6 = softrc_gid_to_ip6(&grh->sgid_attr->gid, &av->saddr.v6);
	dv6 = softrc_gid_to_ip6(&grh->dgid, &av->daddr.v6);
	if (sv6 != dv6)
		return -EINVAL;
	if (!sv6) {
		/* IPv4-mapped: the address is the last 4 bytes */
		av->saddr.v4 = av->saddr.v6.s6_addr32[3];
		av->daddr.v4 = av->daddr.v6.s6_addr32[3];
	}
	av->ipv6 = sv6;
	av->tos = grh->traffic_class;
	av->ttl = grh->hop_limit ? grh->hop_limit : 64;
	av->flow_label = grh->flow_label & 0xfffff;
	av->ifindex = softrc_gid_ifindex(grh->sgid_attr);
	return 0;
}

/*
 * Every attribute in @mask within its range; -EINVAL otherwise. A Q_Key
 * with bit 31 set is a controlled one (IBTA Vol 1 §10.2.4): only a
 * privileged consumer may give it to a QP (QP1's is one), -EPERM.
 */
static int softrc_qp_check_attr(struct softrc_qp *qp,
				const struct ib_qp_attr *attr, int mask,
				struct ib_udata *udata)
{
	if ((mask & IB_QP_QKEY) && (attr->qkey & BIT(31)) && udata &&
	    !capable(CAP_NET_RAW))
		return -EPERM;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SOFTRC_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096 ||
	     ib_mtu_enum_to_int(attr->path_mtu) > softrc_port_pmtu(qp->sdev)))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_SQ_PSN) && (attr->sq_psn & ~SOFTRC_PSN_MASK))
		return -EINVAL;
	if ((mask & IB_QP_RQ_PSN) && (attr->rq_psn & ~SOFTRC_PSN_MASK))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && (attr->dest_qp_num & ~SOFTRC_PSN_MASK))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SOFTRC_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SOFTRC_MAX_RD_ATOMIC)
		return -EINVAL;
	if (mask & IB_QP_ALT_PATH)
		return -EOPNOTSUPP;	/* no automatic path migration */
	return 0;
}

static void softrc_qp_save_attr(struct softrc_qp *qp,
				const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU) {
		a->path_mtu = attr->path_mtu;
		qp->pmtu = ib_mtu_enum_to_int(attr->path_mtu);
	}
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_AV)
		rdma_replace_ah_attr(&a->ah_attr, &attr->ah_attr);
}

/* Apply a state change; returns with the engine in step. */
static void softrc_qp_transition(struct softrc_qp *qp, int mask,
				 enum ib_qp_state new)
{
	enum ib_qp_state old = qp->state;

	lockdep_assert_held(&qp->lock);
	if (old != new)
		trace_softrc_qp_state(qp, old, new);
	switch (new) {
	case IB_QPS_RESET:
		qp->state = IB_QPS_RESET;
		qp->attr.sq_psn = 0;
		/* every attribute was checked when set; create passed this */
		WARN_ON_ONCE(softrc_qp_core_reset(qp));
		break;
	case IB_QPS_ERR:
		qp->state = IB_QPS_ERR;
		softrc_core_set_error(&qp->core);
		break;
	default:
		softrc_qp_core_apply(qp, mask, new);
		/* RTS -> SQD drains; SQD -> RTS resumes (IBTA ch. 10.3) */
		if (new == IB_QPS_SQD && qp->state != IB_QPS_SQD)
			qp->sqd_seen = false;
		softrc_core_sq_drain(&qp->core, new == IB_QPS_SQD);
		qp->state = new;
		if (new == IB_QPS_SQD)
			softrc_qp_check_drained(qp);
		break;
	}
}

int softrc_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		     int mask, struct ib_udata *udata)
{
	struct softrc_qp *qp = to_sqp(ibqp);
	enum ib_qp_state cur, new;
	struct softrc_path av;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	err = softrc_qp_check_attr(qp, attr, mask, udata);
	if (err)
		return err;
	if (mask & IB_QP_AV) {
		err = softrc_path_from_ah(qp, &attr->ah_attr, &av);
		if (err)
			return err;
	}

	spin_lock_bh(&qp->lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (cur != qp->state ||
	    !ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out;
	}
	if (qp->dying) {
		err = -EINVAL;
		goto out;
	}
	softrc_qp_save_attr(qp, attr, mask);
	if (mask & IB_QP_AV) {
		qp->av = av;
		dst_cache_reset(&qp->dst_cache);
	}
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN))
		qp->av.sport = rdma_get_udp_sport(qp->av.flow_label,
						  qp->ibqp.qp_num,
						  qp->attr.dest_qp_num);
	softrc_qp_transition(qp, mask, new);
	softrc_qp_run_tx(qp);
out:
	spin_unlock_bh(&qp->lock);
	softrc_qp_drain_comps(qp);
	return err;
}

int softrc_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_qp_init_attr *init)
{
	struct softrc_qp *qp = to_sqp(ibqp);

	spin_lock_bh(&qp->lock);
	*attr = qp->attr;
	/* no reference for the caller: it reads the GID index */
	attr->ah_attr.grh.sgid_attr = NULL;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = qp->state == IB_QPS_SQD &&
			    !softrc_core_sq_drained(&qp->core);
	spin_unlock_bh(&qp->lock);
	attr->cap.max_send_wr = qp->max_send_wr;
	attr->cap.max_send_sge = qp->max_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->max_recv_wr;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->max_recv_sge;

	memset(init, 0, sizeof(*init));
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->cap = attr->cap;
	init->port_num = 1;
	return 0;
}

/* ---- create / destroy ----------------------------------------------- */

static int softrc_qp_check_init(struct ib_qp_init_attr *init,
				struct ib_udata *udata)
{
	struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		/* the MAD layer's, on our one port */
		if (udata || (init->port_num && init->port_num != 1))
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (cap->max_send_wr > SOFTRC_MAX_QP_WR ||
	    cap->max_send_sge > SOFTRC_MAX_SGE ||
	    cap->max_inline_data > SOFTRC_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > SOFTRC_MAX_QP_WR ||
			   cap->max_recv_sge > SOFTRC_MAX_SGE))
		return -EINVAL;
	return 0;
}

/* Size the send side and allocate its rings; caps are written back. */
static int softrc_qp_init_sq(struct softrc_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 area = max3(cap->max_send_sge * (u32)sizeof(struct ib_sge),
			cap->max_inline_data, (u32)sizeof(struct ib_sge));
	u32 n = max(cap->max_send_wr, 1u);
	int err;

	qp->sq_area = area;
	qp->max_sge = area / sizeof(struct ib_sge);
	qp->max_inline = area;
	if (qp->is_user) {
		qp->usq = kzalloc(sizeof(*qp->usq), GFP_KERNEL_ACCOUNT);
		if (!qp->usq)
			return -ENOMEM;
		err = softrc_queue_init(qp->sdev, qp->usq, &n,
					sizeof(struct rxe_send_wqe) + area);
		if (err) {
			kfree(qp->usq);
			qp->usq = NULL;
			return err;
		}
		qp->sq_scratch = kmalloc(softrc_queue_elem_size(qp->usq),
					 GFP_KERNEL_ACCOUNT);
	} else {
		n = roundup_pow_of_two(n + 1) - 1;
		qp->sq_scratch = kmalloc(area, GFP_KERNEL_ACCOUNT);
	}
	/* sizes follow the caps: charged to the creator's memory cgroup */
	qp->max_send_wr = n;
	qp->sq_depth = roundup_pow_of_two(n);
	qp->core_sq = kvcalloc(qp->sq_depth, sizeof(*qp->core_sq),
			       GFP_KERNEL_ACCOUNT);
	qp->sqs = kvcalloc(qp->sq_depth, sizeof(*qp->sqs), GFP_KERNEL_ACCOUNT);
	qp->sq_data = kvcalloc(qp->sq_depth, area, GFP_KERNEL_ACCOUNT);
	qp->sq_pins = kvcalloc((size_t)qp->sq_depth * qp->max_sge,
			       sizeof(*qp->sq_pins), GFP_KERNEL_ACCOUNT);
	if (!qp->sq_scratch || !qp->core_sq || !qp->sqs || !qp->sq_data ||
	    !qp->sq_pins)
		return -ENOMEM;
	cap->max_send_wr = qp->max_send_wr;
	cap->max_send_sge = qp->max_sge;
	cap->max_inline_data = qp->max_inline;
	return 0;
}

/* Size the receive side: kernel RQ, user RQ ring, or SRQ. */
static int softrc_qp_init_rq(struct softrc_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 nsge = cap->max_recv_sge;
	u32 n = max(cap->max_recv_wr, 1u);
	int err;

	if (init->srq) {
		qp->srq = to_ssrq(init->srq);
		nsge = SOFTRC_MAX_SGE;
		qp->rq_depth = SOFTRC_RQ_FEED_DEPTH;
		qp->max_recv_wr = SOFTRC_RQ_FEED_DEPTH;
	} else if (qp->is_user) {
		qp->urq = kzalloc(sizeof(*qp->urq), GFP_KERNEL_ACCOUNT);
		if (!qp->urq)
			return -ENOMEM;
		err = softrc_queue_init(qp->sdev, qp->urq, &n,
					sizeof(struct rxe_recv_wqe) +
					nsge * sizeof(struct rxe_sge));
		if (err) {
			kfree(qp->urq);
			qp->urq = NULL;
			return err;
		}
		qp->rq_depth = SOFTRC_RQ_FEED_DEPTH;
		qp->max_recv_wr = n;
	} else {
		n = roundup_pow_of_two(n + 1) - 1;
		qp->rq_depth = n + 1;
		qp->max_recv_wr = n;
	}
	qp->max_recv_sge = nsge;
	qp->rq_stride = ALIGN(offsetof(struct softrc_rwqe, sge) +
			      nsge * sizeof(struct ib_sge), 8);
	qp->core_rq = kvcalloc(qp->rq_depth, sizeof(*qp->core_rq),
			       GFP_KERNEL_ACCOUNT);
	qp->rq_data = kvcalloc(qp->rq_depth, qp->rq_stride, GFP_KERNEL_ACCOUNT);
	qp->rq_bad = bitmap_zalloc(qp->rq_depth, GFP_KERNEL_ACCOUNT);
	qp->rq_pins = kvcalloc((size_t)qp->rq_depth * max(nsge, 1u),
			       sizeof(*qp->rq_pins), GFP_KERNEL_ACCOUNT);
	if (!qp->core_rq || !qp->rq_data || !qp->rq_bad || !qp->rq_pins)
		return -ENOMEM;
	if (!init->srq) {
		cap->max_recv_wr = qp->max_recv_wr;
		cap->max_recv_sge = nsge;
	}
	return 0;
}

static int softrc_qp_init_pwc(struct softrc_qp *qp)
{
	u32 n = 4 * (qp->sq_depth + qp->rq_depth) + 64;

	if (qp->urq)
		n += 2 * qp->max_recv_wr;
	qp->pwc_size = roundup_pow_of_two(n);
	qp->pwc = kvcalloc(qp->pwc_size, sizeof(*qp->pwc), GFP_KERNEL_ACCOUNT);
	return qp->pwc ? 0 : -ENOMEM;
}

static void softrc_qp_free(struct softrc_qp *qp)
{
	/* run_tx sends every batch before the QP lock is dropped */
	WARN_ON_ONCE(qp->tx_batch.head);
	if (qp->usq) {
		softrc_queue_free(qp->usq);
		kfree(qp->usq);
	}
	if (qp->urq) {
		softrc_queue_free(qp->urq);
		kfree(qp->urq);
	}
	kfree(qp->sq_scratch);
	kvfree(qp->core_sq);
	kvfree(qp->sqs);
	kvfree(qp->sq_data);
	kvfree(qp->sq_pins);
	kvfree(qp->core_rq);
	kvfree(qp->rq_pins);
	kvfree(qp->rq_data);
	bitmap_free(qp->rq_bad);
	kvfree(qp->pwc);
	kvfree(qp->core_res);
	if (qp->tx_frag.page)
		put_page(qp->tx_frag.page);
	dst_cache_destroy(&qp->dst_cache);
}

static int softrc_qp_export(struct softrc_qp *qp, struct ib_udata *udata)
{
	struct softrc_ucontext *uc = rdma_udata_to_drv_context(udata,
					struct softrc_ucontext, ibuc);
	struct rxe_create_qp_resp resp = {};
	int err;

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	err = softrc_queue_export(qp->usq, &uc->ibuc, &resp.sq_mi);
	if (!err && qp->urq)
		err = softrc_queue_export(qp->urq, &uc->ibuc, &resp.rq_mi);
	if (err)
		return err;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

int softrc_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		     struct ib_udata *udata)
{
	struct softrc_qp *qp = to_sqp(ibqp);
	struct softrc_dev *sdev = to_sdev(ibqp->device);
	u32 qpn;
	int err;

	err = softrc_qp_check_init(init, udata);
	if (err)
		return err;
	if (!softrc_count_get(&sdev->num_qp, sdev->caps.max_qp))
		return -ENOMEM;
	/* the rxe ABI sends no create_qp command data; ignore any */
	qp->sdev = sdev;
	qp->uid = atomic64_inc_return(&softrc_qp_uids);
	qp->is_user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;
	qp->pmtu = ib_mtu_enum_to_int(IB_MTU_1024);
	qp->attr.path_mtu = IB_MTU_1024;
	if (softrc_qp_is_ud(qp))
		qp->pmtu = softrc_port_pmtu(sdev);
	qp->attr.port_num = 1;
	spin_lock_init(&qp->lock);
	qp->tx_ip_id = get_random_u32();
	spin_lock_init(&qp->comp_lock);
	refcount_set(&qp->ref, 1);
	init_completion(&qp->released);
	tasklet_setup(&qp->tx_task, softrc_qp_tx_task);
	softrc_timers_init(qp);
	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err)
		goto err_count;

	err = softrc_qp_init_sq(qp, init);
	if (!err)
		err = softrc_qp_init_rq(qp, init);
	if (!err)
		err = softrc_qp_init_pwc(qp);
	if (!err) {
		qp->core_res = kvcalloc(SOFTRC_MAX_RD_ATOMIC,
					sizeof(*qp->core_res), GFP_KERNEL_ACCOUNT);
		if (!qp->core_res)
			err = -ENOMEM;
	}
	if (err)
		goto err_free;

	/* a reserved (NULL) entry until the QP is built; QP1 is the alias */
	if (init->qp_type == IB_QPT_GSI) {
		qpn = 1;
		err = xa_insert(&sdev->dp->qp_xa, qpn, NULL, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic(&sdev->dp->qp_xa, &qpn, NULL,
				      XA_LIMIT(SOFTRC_QPN_MIN, SOFTRC_QPN_MAX),
				      &sdev->dp->qp_next, GFP_KERNEL);
	}
	if (err < 0)
		goto err_free;
	ibqp->qp_num = qpn;
	spin_lock_bh(&qp->lock);
	err = softrc_qp_core_reset(qp);
	spin_unlock_bh(&qp->lock);
	if (err)
		goto err_qpn;

	if (udata) {
		err = softrc_qp_export(qp, udata);
		if (err)
			goto err_qpn;
	}
	/* fully built: now the receive path may find it */
	softrc_stats_qp_new(qp);
	xa_store(&sdev->dp->qp_xa, qpn, qp, GFP_KERNEL);
	softrc_debugfs_qp_add(qp);
	return 0;

err_qpn:
	xa_erase(&sdev->dp->qp_xa, qpn);
err_free:
	softrc_qp_free(qp);
err_count:
	atomic_dec(&sdev->num_qp);
	return err;
}

int softrc_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct softrc_qp *qp = to_sqp(ibqp);

	softrc_debugfs_qp_del(qp);
	spin_lock_bh(&qp->lock);
	qp->dying = true;
	spin_unlock_bh(&qp->lock);

	/* no new receive-path users, then wait for the running ones */
	softrc_mcast_qp_gone(qp);
	xa_erase(&qp->sdev->dp->qp_xa, ibqp->qp_num);
	synchronize_rcu();
	softrc_timers_stop(qp);
	tasklet_kill(&qp->tx_task);
	softrc_qp_put(qp);
	wait_for_completion(&qp->released);

	/* nothing runs the engine any more: drop what it and the shadows hold */
	spin_lock_bh(&qp->lock);
	softrc_qp_unpin_all(qp);
	spin_unlock_bh(&qp->lock);

	softrc_stats_qp_dead(qp);
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	softrc_qp_free(qp);
	atomic_dec(&qp->sdev->num_qp);
	return 0;
}

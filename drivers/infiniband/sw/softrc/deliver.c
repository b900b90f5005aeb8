// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completion delivery: the QP's ring of pending completions (pwc), filled
 * under qp->lock and handed to the CQs after it is dropped, so a CQ's
 * handler may post to the QP again; and the QP's affiliated asynchronous
 * events (IBTA 11.6.3), delivered behind the completions queued before
 * them: SQ drained, last WQE reached, and the fatal error of a QP whose
 * completion a CQ overrun lost.
 *
 * Context: softrc_qp_push_wc, softrc_qp_pwc_room and
 * softrc_qp_check_drained run with qp->lock held (the verbs with BH off,
 * softirq RX, timers, the TX tasklet). softrc_qp_drain_comps runs
 * without it in any of those contexts; it tries qp->comp_lock and hands
 * completions to the CQs under that alone (order: Documentation/softrc.rst,
 * "Locking").
 *
 * Touches: the QP's pwc ring and event bits, its CQs through
 * softrc_cq_post(), its SRQ's limit event, the consumer's event handlers
 * (called without locks), and the engine only to fail the QP
 * (softrc_eng_set_error) after a lost completion.
 */
#include "qp.h"
#include "deliver.h"
#include "post.h"
#include "cq.h"
#include "srq.h"

/* Queue one completion; the caller holds qp->lock. */
void softrc_qp_push_wc(struct softrc_qp *qp, const struct softrc_pwc *pwc)
{
	u32 prod = qp->pwc_prod;

	lockdep_assert_held(&qp->lock);
	/* acquire: the drainer is done with the slot before we reuse it */
	if (WARN_ONCE(prod - smp_load_acquire(&qp->pwc_cons) >= qp->pwc_size,
		      "softrc: qp %u: pending completions overrun\n",
		      qp->ibqp.qp_num))
		return;	/* cannot happen (softrc_qp_pwc_room); never overwrite */
	qp->pwc[prod & (qp->pwc_size - 1)] = *pwc;
	/* release: the entry is written before the drainer can see it */
	smp_store_release(&qp->pwc_prod, prod + 1);
}

/*
 * Hand one completion to its CQ, with qp->comp_lock held (the one
 * drainer). Return: 0, or -ENOSPC if the CQ lost it.
 */
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

	lockdep_assert_held(&qp->comp_lock);
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
 * Room in the pending-completion ring for one more completion: of a WQE
 * about to enter the engine, or of a WR that completes without it. Every
 * WQE the engine holds completes at most once (a flush included), so
 * the ring never overruns while queued + held + the new one fit: each
 * path that adds a WQE to the engine or pushes a completion of its own
 * asks first (Documentation/softrc.rst, "Pending completions").
 */
bool softrc_qp_pwc_room(struct softrc_qp *qp)
{
	u32 held = softrc_eng_sq_used(&qp->core) + softrc_eng_rq_used(&qp->core);

	lockdep_assert_held(&qp->lock);
	/* acquire: as in softrc_qp_push_wc */
	return qp->pwc_prod - smp_load_acquire(&qp->pwc_cons) + held <
	       qp->pwc_size;
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
		softrc_eng_set_error(&qp->core);
		softrc_qp_run_tx(qp);
	}
	spin_unlock_bh(&qp->lock);
	if (report && qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

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
 * Hand queued completions to the CQs, in order, without qp->lock. Whoever
 * holds comp_lock drains; a caller that finds it taken (another CPU, or a
 * completion handler posting to this QP from inside the drain) leaves its
 * entries to the holder, which looks again after unlocking, once.
 *
 * At most one queue's worth (what one call under qp->lock may push) and
 * two looks per call: other CPUs may keep pushing while we drain, and so
 * may the TX tasklet in the softirqs each unlock runs (a user ring that
 * keeps filling in ERROR); the rest goes to the TX tasklet. Also
 * delivers the events the QP lock deferred: an SRQ limit event, and the
 * fatal error of a QP whose completion a CQ overrun lost.
 */
void softrc_qp_drain_comps(struct softrc_qp *qp)
{
	u32 cons, budget = SOFTRC_RING_BUDGET, rounds = 2;
	bool left;

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
		left = cons != smp_load_acquire(&qp->pwc_prod);
	} while (budget && --rounds && left);
	if (!budget || left) {
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
	if (!left && !qp->dying &&
	    test_and_clear_bit(SOFTRC_QP_EV_LAST_WQE, &qp->events))
		softrc_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/* SQD: once the SQ has drained, queue the event if it was asked for. */
void softrc_qp_check_drained(struct softrc_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->sqd_seen || !softrc_eng_sq_drained(&qp->core))
		return;
	qp->sqd_seen = true;
	if (qp->attr.en_sqd_async_notify)
		set_bit(SOFTRC_QP_EV_SQ_DRAINED, &qp->events);
}

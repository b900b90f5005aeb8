// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The posting paths that feed the engine: the kernel's post_send and
 * post_recv; the user SQ and RQ rings of the rxe ABI (the doorbell pulls
 * the SQ; a user RQ or an SRQ feeds the engine one WQE at a time as
 * requests arrive; in ERROR the user RQ flushes); and the TX run that
 * ends every engine call under the QP lock (softrc_qp_run_tx, or
 * softrc_qp_run_tx_answer after a request's receive, and the TX tasklet
 * that continues them).
 *
 * Context: post_send and post_recv run in process context, possibly with
 * hard IRQs off (ib_mad; see softrc_qp_lock_post()); the TX tasklet in
 * softirq, taking qp->lock itself; everything else with qp->lock held,
 * from the verbs, softirq RX, the timers or the tasklet.
 *
 * Touches: the QP's shadow rings and user rings, the engine's SQ and RQ
 * (softrc_eng_post_send/recv, softrc_eng_tx), SRQs through
 * softrc_srq_pop, the transmit batch through softrc_net_flush, and the
 * pending completions of WRs that fail or flush at post (deliver.c).
 * User-ring contents are copied into kernel memory once and validated
 * there (wr.c); nothing read back from a ring is trusted.
 */
#include <rdma/rdma_user_rxe.h>

#include "qp.h"
#include "timers.h"
#include "post.h"
#include "wr.h"
#include "deliver.h"
#include "tx.h"
#include "copy.h"
#include "queue.h"
#include "srq.h"

/*
 * More work than one call may do (a user ring that keeps filling, a full
 * pending-completion ring): the TX tasklet continues it. Under qp->lock,
 * so a destroy (dying, then tasklet_kill) never sees it scheduled after.
 */
void softrc_qp_resched(struct softrc_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (!qp->dying)
		tasklet_schedule(&qp->tx_task);
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
	ret = softrc_eng_post_recv(&qp->core, r->wr_id, r->length);
	WARN_ON_ONCE(ret >= 0 && ret != slot);
	return ret;
}

static u32 softrc_qp_rq_next_slot(struct softrc_qp *qp)
{
	return softrc_eng_rq_next(&qp->core) & (qp->rq_depth - 1);
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
	/* no room for its completion yet: no WQE, the request is RNR NAKed */
	if (softrc_eng_rq_used(&qp->core) ||
	    (!qp->srq && !qp->urq) || !softrc_qp_pwc_room(qp))
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
	if (!spin_trylock_bh(&qp->lock)) {
		/* another context runs this QP: counted, it should be rare */
		softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_post_lock_waits);
		spin_lock_bh(&qp->lock);
	}
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
		/* a full RQ, or its completion has no room yet */
		if (softrc_eng_rq_used(&qp->core) >= qp->max_recv_wr ||
		    !softrc_qp_pwc_room(qp)) {
			err = -ENOMEM;
			break;
		}
		if (qp->state == IB_QPS_ERR) {
			softrc_qp_push_recv_err(qp, wr->wr_id, IB_WC_WR_FLUSH_ERR);
			continue;
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

static bool softrc_swr_signaled(struct softrc_qp *qp, const struct softrc_swr *s)
{
	return qp->sig_all || (s->flags & IB_SEND_SIGNALED);
}

/* A WR the engine cannot take (it is in ERROR): it completes at once. */
static void softrc_qp_fail_wr(struct softrc_qp *qp, const struct softrc_swr *s,
			      u8 status)
{
	softrc_eng_set_error(&qp->core);
	softrc_qp_push_send_err(qp, s->wr.wr_id, softrc_wr_wc_opcode(s->opcode),
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
	u32 slot = softrc_eng_sq_next(&qp->core) & (qp->sq_depth - 1);
	struct softrc_sq_shadow *sh = &qp->sqs[slot];
	struct softrc_eng_send_wr wr = {
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
	sh->local.refused.wc_opcode = softrc_wr_wc_opcode(s->opcode);
	ret = softrc_eng_post_send(&qp->core, &wr);
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
	u32 slot = softrc_eng_sq_next(&qp->core) & (qp->sq_depth - 1);
	struct softrc_sq_shadow *sh = &qp->sqs[slot];
	u8 status;
	int ret;

	if (softrc_eng_sq_used(&qp->core) >= softrc_qp_sq_cap(qp))
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
	ret = softrc_eng_post_send(&qp->core, &s->wr);
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

static int softrc_post_send_kernel(struct softrc_qp *qp,
				   const struct ib_send_wr *wr,
				   const struct ib_send_wr **bad_wr)
{
	struct softrc_swr s;
	int err = 0;

	for (; wr; wr = wr->next) {
		softrc_swr_from_ib(qp, &s, wr);
		/* its completion must have room (as a full SQ: -ENOMEM) */
		if (!softrc_qp_pwc_room(qp)) {
			err = -ENOMEM;
			break;
		}
		if (qp->state == IB_QPS_ERR) {
			softrc_qp_push_send_err(qp, wr->wr_id,
						softrc_wr_wc_opcode(wr->opcode),
						IB_WC_WR_FLUSH_ERR);
			continue;
		}
		if ((wr->send_flags & IB_SEND_INLINE) && wr->num_sge &&
		    softrc_wr_is_inline_op(wr->opcode) &&
		    softrc_swr_kernel_inline(qp, &s, qp->sq_scratch)) {
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
	struct rxe_send_wqe *u = qp->sq_scratch;
	struct softrc_swr s;
	void *slot;
	u32 n;

	lockdep_assert_held(&qp->lock);
	n = min_t(u32, softrc_queue_count(qp->usq), SOFTRC_RING_BUDGET);
	while (softrc_eng_sq_used(&qp->core) < softrc_qp_sq_cap(qp)) {
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
						softrc_wr_wc_opcode(s.opcode),
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

/*
 * Pull the user SQ (if @pull) and let the engine transmit, up to the
 * budget: in RTS requests and responses; in SQD the same, with the engine
 * draining (the WQEs already started finish, SQD_DRAINED follows); in
 * RTR/SQE responses only (READ responses are paced through here).
 * Return: the engine's steps; SOFTRC_TX_BUDGET means it has more to send.
 */
static u32 softrc_qp_tx_engine(struct softrc_qp *qp, bool pull)
{
	u32 n;

	if (pull && qp->usq &&
	    (qp->state == IB_QPS_RTS || qp->state == IB_QPS_SQD ||
	     qp->state == IB_QPS_ERR))
		softrc_qp_pull_usq(qp);
	/* ERROR: user RQ WQEs posted since (or left by a bounded flush) */
	if (qp->state == IB_QPS_ERR)
		softrc_qp_flush_user_rq(qp);
	switch (qp->state) {
	case IB_QPS_RTS:
		return softrc_eng_tx(&qp->core, softrc_now(), SOFTRC_TX_BUDGET);
	case IB_QPS_SQD:
		/* the engine drains: started WQEs finish, none starts */
		n = softrc_eng_tx(&qp->core, softrc_now(), SOFTRC_TX_BUDGET);
		softrc_qp_check_drained(qp);
		return n;
	case IB_QPS_RTR:
	case IB_QPS_SQE:
		/* the requester is quiet, the responder still answers */
		return softrc_eng_tx_resp(&qp->core, SOFTRC_TX_BUDGET);
	default:
		return 0;
	}
}

static void softrc_qp_tx(struct softrc_qp *qp, bool pull)
{
	lockdep_assert_held(&qp->lock);
	if (!qp->dying && softrc_qp_tx_engine(qp, pull) >= SOFTRC_TX_BUDGET)
		tasklet_schedule(&qp->tx_task);
	softrc_net_flush(qp);
}

/*
 * End of every engine call under the QP lock: transmit what the engine
 * has (the tasklet continues a full budget), then send the batch this
 * and the calls before it built, so no batch outlives the lock.
 */
void softrc_qp_run_tx(struct softrc_qp *qp)
{
	softrc_qp_tx(qp, true);
}

/*
 * The same at the end of a request's receive in RTS (rx.c), except that
 * the user SQ ring is left to its doorbell: the responder's answer and
 * what the engine already holds go out, no WQE is taken from the ring.
 * In a ping-pong the peer's request is what its application waited for,
 * and its next WQE is in the ring a moment later, its doorbell spinning
 * on this lock; pulled here, that WQE would be sent by this CPU while the
 * poster's CPU waits (Documentation/softrc.rst, "The doorbell").
 *
 * No WQE is stranded: every WQE user space writes is followed by its
 * doorbell (the rxe ABI's POST_SEND command), which pulls what the engine
 * has room for. Room that opens later opens on a response (an RC WQE
 * retires on its ACK or response, whose receive pulls), on a timer,
 * or in a transmit that completes WQEs as it sends them (UD, UC, local
 * operations): one that frees a full engine SQ has taken a step per WQE,
 * a whole budget (SOFTRC_TX_BUDGET >= the engine SQ of a user QP), and
 * so has scheduled the TX tasklet, which pulls.
 */
void softrc_qp_run_tx_answer(struct softrc_qp *qp)
{
	softrc_qp_tx(qp, qp->state != IB_QPS_RTS);
}

void softrc_qp_tx_task(struct tasklet_struct *t)
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

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * QP life cycle and the entry points of the RC engine: init, post,
 * packet dispatch, timers, the ERROR transition and its flush.
 *
 * Context: called with the QP lock held by the glue; softirq or process
 * context; never sleeps. Touches the struct softrc_eng_qp and the rings
 * the caller provided; everything else goes through qp->ops.
 */
#include "internal.h"

#define SOFTRC__CNT_NAME(n) #n,
const char *const softrc_eng_counter_names[] = {
	SOFTRC_CORE_COUNTERS(SOFTRC__CNT_NAME)
};

#undef SOFTRC__CNT_NAME

/* softrc_eng_counter_values() reads them as an array */
static_assert(sizeof(struct softrc_eng_counters) ==
	      SOFTRC_CORE_NR_COUNTERS * sizeof(u64));
/* softrc_eng_init() clears all but the counters: they come last */
static_assert(offsetof(struct softrc_eng_qp, cnt) +
	      sizeof(struct softrc_eng_counters) ==
	      sizeof(struct softrc_eng_qp));

const char *const softrc_eng_state_names[SOFTRC_QPS_NR] = {
	[SOFTRC_QPS_RTS] = "RTS",
	[SOFTRC_QPS_ERROR] = "ERROR",
};

static bool softrc_pow2(u32 n)
{
	return n && !(n & (n - 1));
}

static bool softrc_pmtu_ok(u32 pmtu)
{
	return pmtu >= 256 && pmtu <= 4096 && softrc_pow2(pmtu);
}

int softrc_eng_init(struct softrc_eng_qp *qp,
		    const struct softrc_eng_ops *ops, void *ctx,
			const struct softrc_eng_attr *attr,
			const struct softrc_eng_storage *st)
{
	u32 res_cap = st->res_cap ? st->res_cap : st->nres;

	if (!softrc_pmtu_ok(attr->pmtu) || !softrc_pow2(st->sq_depth) ||
	    !softrc_pow2(st->rq_depth) || attr->retry_cnt > 7 ||
	    attr->rnr_retry > 7 || attr->min_rnr_timer > 31 ||
	    attr->timeout > 31 || st->nres > res_cap ||
	    (attr->transport != SOFTRC_OPCODE_RC &&
	     attr->transport != SOFTRC_OPCODE_UC &&
	     attr->transport != SOFTRC_OPCODE_UD))
		return SOFTRC_E_INVAL;

	/* everything but the counters, which carry on across a reset */
	memset(qp, 0, offsetof(struct softrc_eng_qp, cnt));
	qp->ops = ops;
	qp->ctx = ctx;
	qp->attr = *attr;
	if (!qp->attr.ackreq_every)
		qp->attr.ackreq_every = 16;
	if (!qp->attr.ackreq_probe_ns)
		qp->attr.ackreq_probe_ns = 1000000;
	if (!qp->attr.max_unacked || qp->attr.max_unacked > SOFTRC_PSN_WINDOW / 2)
		qp->attr.max_unacked = 128;
	qp->st = *st;
	qp->st.res_cap = res_cap;
	memset(st->sq, 0, sizeof(*st->sq) * st->sq_depth);
	memset(st->rq, 0, sizeof(*st->rq) * st->rq_depth);
	if (res_cap)
		memset(st->res, 0, sizeof(*st->res) * res_cap);

	qp->state = SOFTRC_QPS_RTS;
	qp->req.state = SOFTRC_REQ_READY;
	qp->req.psn_next = attr->sq_psn & SOFTRC_PSN_MASK;
	qp->req.una = qp->req.psn_next;
	qp->req.cur_psn = qp->req.psn_next;
	qp->req.ackreq_psn = softrc_psn_add(qp->req.psn_next, SOFTRC_PSN_MASK);
	qp->req.next_ssn = 1;
	qp->req.retry_left = attr->retry_cnt;
	qp->req.rnr_left = attr->rnr_retry;
	qp->resp.state = SOFTRC_RESP_IDLE;
	qp->resp.epsn = attr->rq_psn & SOFTRC_PSN_MASK;
	return 0;
}

static int softrc_check_wr(const struct softrc_eng_qp *qp,
			   const struct softrc_eng_send_wr *wr)
{
	/* UD sends messages only; one above the PMTU fails in SQ order */
	if (qp->attr.transport == SOFTRC_OPCODE_UD)
		return wr->opcode == SOFTRC_WR_SEND ||
		       wr->opcode == SOFTRC_WR_SEND_WITH_IMM ||
		       (wr->opcode == SOFTRC_WR_REFUSED && !wr->length) ?
		       0 : SOFTRC_E_INVAL;
	/* UC: no READ, atomics or SEND_WITH_INV (no responder resources) */
	if (qp->attr.transport == SOFTRC_OPCODE_UC &&
	    (softrc_wr_takes_res(wr->opcode) ||
	     wr->opcode == SOFTRC_WR_SEND_WITH_INV))
		return SOFTRC_E_INVAL;
	switch (wr->opcode) {
	case SOFTRC_WR_RDMA_WRITE:
	case SOFTRC_WR_RDMA_WRITE_WITH_IMM:
	case SOFTRC_WR_SEND:
	case SOFTRC_WR_SEND_WITH_IMM:
	case SOFTRC_WR_SEND_WITH_INV:
		break;
	case SOFTRC_WR_RDMA_READ:
		if (!qp->attr.max_rd_atomic)
			return SOFTRC_E_INVAL;
		break;
	case SOFTRC_WR_ATOMIC_CMP_AND_SWP:
	case SOFTRC_WR_ATOMIC_FETCH_AND_ADD:
	case SOFTRC_WR_ATOMIC_WRITE:
		if (!qp->attr.max_rd_atomic || wr->length != 8)
			return SOFTRC_E_INVAL;
		break;
	case SOFTRC_WR_FLUSH:
		/* a placement type of the defined ones, a defined level */
		if (!qp->attr.max_rd_atomic || !wr->flush_type ||
		    (wr->flush_type & ~SOFTRC_FLUSH_TYPES) ||
		    wr->flush_level > SOFTRC_FLUSH_MR)
			return SOFTRC_E_INVAL;
		break;
	case SOFTRC_WR_LOCAL_INV:
	case SOFTRC_WR_BIND_MW:
	case SOFTRC_WR_REG_MR:
	case SOFTRC_WR_REFUSED:
		if (wr->length)
			return SOFTRC_E_INVAL;
		break;
	default:
		return SOFTRC_E_INVAL;
	}
	/*
	 * The message size limit (C9-94), and a READ reserves all its PSNs
	 * at once: at most SOFTRC_READ_MAX_PSNS, which the responder
	 * enforces too (a READ of 2^31 bytes at PMTU 256 would fill the
	 * whole 2^23 window by itself).
	 */
	if (wr->length > SOFTRC_MAX_MSG_LEN)
		return SOFTRC_E_INVAL;
	if (wr->opcode == SOFTRC_WR_RDMA_READ &&
	    softrc_eng_read_npkts(wr->length, qp->attr.pmtu) > SOFTRC_READ_MAX_PSNS)
		return SOFTRC_E_INVAL;
	return 0;
}

int softrc_eng_post_send(struct softrc_eng_qp *qp,
			 const struct softrc_eng_send_wr *wr)
{
	struct softrc_eng_send_wqe *w;
	int err;

	if (qp->state == SOFTRC_QPS_ERROR)
		return SOFTRC_E_STATE;
	err = softrc_check_wr(qp, wr);
	if (err)
		return err;
	/* a READ's response PSNs must fit below the window (req.c) */
	if (wr->opcode == SOFTRC_WR_RDMA_READ &&
	    softrc_eng_wqe_npkts(wr, qp->attr.pmtu) > SOFTRC_REQ_MAX_SPAN)
		return SOFTRC_E_INVAL;
	if (qp->req.tail - qp->req.head >= qp->st.sq_depth)
		return SOFTRC_E_FULL;

	w = softrc_sq_wqe(qp, qp->req.tail);
	memset(w, 0, sizeof(*w));
	w->wr = *wr;
	w->state = SOFTRC_WQE_POSTED;
	if (!softrc_wr_is_local(wr->opcode)) {
		/* only messages count in the MSN (C9-147/148) */
		w->ssn = qp->req.next_ssn;
		w->npkts = softrc_eng_wqe_npkts(wr, qp->attr.pmtu);
		qp->req.next_ssn = softrc_psn_add(qp->req.next_ssn, 1);
	}
	return softrc_sq_slot(qp, qp->req.tail++);
}

int softrc_eng_post_recv(struct softrc_eng_qp *qp, u64 wr_id, u32 length)
{
	struct softrc_eng_recv_wqe *r;
	u32 idx = qp->resp.rq_tail;

	if (qp->state == SOFTRC_QPS_ERROR)
		return SOFTRC_E_STATE;
	if (idx - qp->resp.rq_head >= qp->st.rq_depth)
		return SOFTRC_E_FULL;
	r = &qp->st.rq[idx & (qp->st.rq_depth - 1)];
	r->wr_id = wr_id;
	r->length = length;
	qp->resp.rq_tail++;
	return idx & (qp->st.rq_depth - 1);
}

void softrc_eng_rx(struct softrc_eng_qp *qp, const struct softrc_pkt *pkt,
		   void *rx, u64 now)
{
	qp->cnt.rx_pkts++;
	if (qp->state == SOFTRC_QPS_ERROR) {
		qp->cnt.drop_state++;
		return;
	}
	if (qp->attr.transport == SOFTRC_OPCODE_UD)
		softrc_eng_ud_rx(qp, pkt, rx);
	else if (softrc_pkt_has(pkt, SOFTRC_OPF_REQ))
		softrc_eng_resp_rx(qp, pkt, rx);
	else
		softrc_eng_comp_rx(qp, pkt, rx, now);
}

/*
 * A packet softrc_parse() rejected with its BTH fields valid: a malformed
 * request at the expected PSN is an invalid request (NAK, ERROR); any
 * other is dropped.
 */
void softrc_eng_rx_invalid(struct softrc_eng_qp *qp,
			   const struct softrc_pkt *pkt)
{
	qp->cnt.rx_pkts++;
	qp->cnt.drop_malformed++;
	if (qp->state == SOFTRC_QPS_ERROR || !pkt->op ||
	    qp->attr.transport != SOFTRC_OPCODE_RC ||
	    !softrc_pkt_has(pkt, SOFTRC_OPF_REQ) ||
	    pkt->psn != qp->resp.epsn)
		return;
	softrc_eng_resp_invalid(qp, pkt);
}

void softrc_eng_rx_flush(struct softrc_eng_qp *qp)
{
	if (qp->state != SOFTRC_QPS_ERROR)
		softrc_eng_resp_flush(qp);
}

/*
 * softrc_eng_rx_flush(), except that a coalesced ACK with nothing before
 * it (no NAK held, no response queued) is not sent but written to @ack,
 * counted as sent, for the glue to send itself: after its lock, so that
 * the completions of the burst are handed over first.
 * Return: true if @ack holds an ACK to send.
 */
bool softrc_eng_rx_flush_ack(struct softrc_eng_qp *qp, struct softrc_pkt *ack)
{
	if (qp->state == SOFTRC_QPS_ERROR)
		return false;
	return softrc_eng_resp_take_ack(qp, ack);
}

void softrc_eng_timer_set(struct softrc_eng_qp *qp, enum softrc_eng_timer_id id,
			  u64 deadline)
{
	if (qp->req.deadline[id] == deadline)
		return;
	qp->req.deadline[id] = deadline;
	qp->ops->timer(qp->ctx, id, deadline);
}

static void softrc_retry_fired(struct softrc_eng_qp *qp, u64 now);
static void softrc_rnr_fired(struct softrc_eng_qp *qp, u64 now);

static void (*const softrc_timer_fired[SOFTRC_TIMER_NR])(struct softrc_eng_qp *,
							 u64) = {
	[SOFTRC_TIMER_RETRY] = softrc_retry_fired,
	[SOFTRC_TIMER_RNR] = softrc_rnr_fired,
	[SOFTRC_TIMER_ACKREQ] = softrc_eng_req_probe_fired,
};

void softrc_eng_timer(struct softrc_eng_qp *qp, enum softrc_eng_timer_id id,
		      u64 now)
{
	u64 deadline = qp->req.deadline[id];

	if (qp->state == SOFTRC_QPS_ERROR || !deadline)
		return;
	if (now < deadline) {
		/* fired early (coarse glue timer): ask again */
		qp->ops->timer(qp->ctx, id, deadline);
		return;
	}
	qp->req.deadline[id] = 0;
	if (qp->ops->timer_expired)
		qp->ops->timer_expired(qp->ctx, id);
	softrc_timer_fired[id](qp, now);
}

/* Local ACK timeout: back to the oldest unacknowledged PSN (§9.7.6.1.3). */
static void softrc_retry_fired(struct softrc_eng_qp *qp, u64 now)
{
	struct softrc_eng_req *req = &qp->req;
	u64 dur;

	if (req->una == req->psn_next || req->state != SOFTRC_REQ_READY)
		return;
	qp->cnt.timeouts++;
	if (!req->retry_left) {
		softrc_eng_comp_fail_at(qp, req->una, SOFTRC_WC_RETRY_EXC_ERR);
		return;
	}
	req->retry_left--;
	req->gbn_active = false;
	softrc_eng_req_retransmit(qp, req->una, SOFTRC_RETRY_timeout);
	dur = softrc_eng_ack_timeout_ns(qp->attr.timeout);
	softrc_eng_timer_set(qp, SOFTRC_TIMER_RETRY,
			     softrc_eng_req_deadline(qp, now, dur));
}

/* RNR back-off over: resend from the RNR NAK's PSN. */
static void softrc_rnr_fired(struct softrc_eng_qp *qp, u64 now)
{
	struct softrc_eng_req *req = &qp->req;
	u32 psn = req->rnr_psn;
	u64 dur;

	if (req->state != SOFTRC_REQ_RNR_WAIT)
		return;
	req->state = SOFTRC_REQ_READY;
	if (softrc_psn_lt(psn, req->una))
		psn = req->una;
	softrc_eng_req_retransmit(qp, psn, SOFTRC_RETRY_rnr);
	if (req->una != req->psn_next && qp->attr.timeout) {
		dur = softrc_eng_ack_timeout_ns(qp->attr.timeout);
		softrc_eng_timer_set(qp, SOFTRC_TIMER_RETRY,
				     softrc_eng_req_deadline(qp, now, dur));
	}
}

static void softrc_flush_sq(struct softrc_eng_qp *qp)
{
	struct softrc_eng_cqe cqe;

	while (qp->req.head != qp->req.tail) {
		struct softrc_eng_send_wqe *w = softrc_sq_wqe(qp, qp->req.head);

		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = w->wr.wr_id;
		cqe.status = SOFTRC_WC_WR_FLUSH_ERR;
		cqe.opcode = softrc_eng_wc_opcode_of(w->wr.opcode);
		cqe.slot = softrc_sq_slot(qp, qp->req.head);
		qp->req.head++;
		qp->ops->complete(qp->ctx, &cqe);
	}
	qp->req.cur = qp->req.head;
}

static void softrc_flush_rq(struct softrc_eng_qp *qp)
{
	struct softrc_eng_cqe cqe;

	while (qp->resp.rq_head != qp->resp.rq_tail) {
		u32 slot = qp->resp.rq_head & (qp->st.rq_depth - 1);

		memset(&cqe, 0, sizeof(cqe));
		cqe.wr_id = qp->st.rq[slot].wr_id;
		cqe.status = SOFTRC_WC_WR_FLUSH_ERR;
		cqe.opcode = SOFTRC_WC_RECV;
		cqe.flags = SOFTRC_CQE_RECV;
		cqe.slot = slot;
		qp->resp.rq_head++;
		qp->ops->complete(qp->ctx, &cqe);
	}
}

void softrc_eng_enter_error(struct softrc_eng_qp *qp)
{
	if (qp->state == SOFTRC_QPS_ERROR)
		return;
	qp->state = SOFTRC_QPS_ERROR;
	qp->req.state = SOFTRC_REQ_ERROR;
	qp->resp.state = SOFTRC_RESP_ERROR;
	/*
	 * Queued READ responses, ATOMIC ACKs and held ACKs/NAKs are
	 * abandoned; the responder resources and the open WRITE let go of
	 * their pins.
	 */
	softrc_eng_resp_release_pins(qp);
	qp->resp.rd_pend = 0;
	qp->resp.nak_held = 0;
	qp->resp.fatal_held = 0;
	qp->resp.ack_held = false;
	qp->resp.ack_pending = false;
	softrc_eng_timer_set(qp, SOFTRC_TIMER_RETRY, 0);
	softrc_eng_timer_set(qp, SOFTRC_TIMER_RNR, 0);
	softrc_eng_timer_set(qp, SOFTRC_TIMER_ACKREQ, 0);
	softrc_flush_sq(qp);
	softrc_flush_rq(qp);
	qp->ops->qp_error(qp->ctx);
}

void softrc_eng_set_error(struct softrc_eng_qp *qp)
{
	softrc_eng_enter_error(qp);
}

/*
 * Drop every pin the engine holds (the open WRITE's, the READ
 * resources'): the glue calls it before it resets the engine with
 * softrc_eng_init() and when it destroys the QP. ERROR drops them too.
 */
void softrc_eng_release(struct softrc_eng_qp *qp)
{
	softrc_eng_resp_release_pins(qp);
}

/*
 * Responder packets wait for softrc_eng_tx() or softrc_eng_tx_resp():
 * queued READ responses / ATOMIC ACKs, or an ACK/NAK held behind them.
 */
bool softrc_eng_tx_pending(const struct softrc_eng_qp *qp)
{
	return qp->resp.rd_pend || qp->resp.ack_held;
}

/*
 * Nothing left to do: every WQE completed, no timer armed, no response
 * waiting to be transmitted.
 */
/*
 * SQ drain (the SQD state, IBTA ch. 10.3): with @on, the
 * requester starts no WQE that has not started yet (local ones
 * included), but every message already started is sent to its end,
 * retried and completed as usual. Off again (SQD -> RTS), the queued WQEs
 * go out in order.
 */
void softrc_eng_sq_drain(struct softrc_eng_qp *qp, bool on)
{
	qp->req.drain = on;
}

/* Draining, and every started WQE has completed: the SQ is drained. */
bool softrc_eng_sq_drained(const struct softrc_eng_qp *qp)
{
	const struct softrc_eng_req *req = &qp->req;

	return req->drain &&
	       (req->head == req->tail ||
		qp->st.sq[softrc_sq_slot(qp, req->head)].state ==
		SOFTRC_WQE_POSTED);
}

bool softrc_eng_idle(const struct softrc_eng_qp *qp)
{
	return qp->req.head == qp->req.tail &&
	       !qp->req.deadline[SOFTRC_TIMER_RETRY] &&
	       !qp->req.deadline[SOFTRC_TIMER_RNR] &&
	       !softrc_eng_tx_pending(qp);
}

/**
 * softrc_eng_modify() - apply a modify_qp to a running engine
 * @qp:		the QP
 * @mod:	the new values and which of them to apply
 *
 * The fields of SOFTRC_MODIFY_PATH are read live; SOFTRC_MODIFY_SQ_PSN
 * is meant for before the first packet (the glue applies it only before
 * RTS), SOFTRC_MODIFY_RQ_PSN for the move to RTR.
 *
 * Return: 0, or SOFTRC_E_INVAL if max_dest_rd_atomic exceeds the
 * resource storage (everything else is applied nonetheless).
 */
int softrc_eng_modify(struct softrc_eng_qp *qp,
		      const struct softrc_eng_modify *mod)
{
	const struct softrc_eng_attr *a = &mod->attr;

	if (mod->mask & SOFTRC_MODIFY_PATH) {
		qp->attr.pmtu = a->pmtu;
		qp->attr.qkey = a->qkey;
		qp->attr.dqpn = a->dqpn;
		qp->attr.timeout = a->timeout;
		qp->attr.retry_cnt = a->retry_cnt;
		qp->attr.rnr_retry = a->rnr_retry;
		qp->attr.min_rnr_timer = a->min_rnr_timer;
		qp->attr.max_rd_atomic = a->max_rd_atomic;
		qp->attr.remote_deny = a->remote_deny;
	}
	if (mod->mask & SOFTRC_MODIFY_RQ_PSN) {
		qp->attr.rq_psn = a->rq_psn;
		qp->resp.epsn = a->rq_psn;
	}
	if (mod->mask & SOFTRC_MODIFY_SQ_PSN) {
		qp->attr.sq_psn = a->sq_psn;
		qp->req.psn_next = a->sq_psn;
		qp->req.una = a->sq_psn;
		qp->req.cur_psn = a->sq_psn;
		qp->req.ackreq_psn = softrc_psn_add(a->sq_psn, SOFTRC_PSN_MASK);
	}
	if (mod->mask & SOFTRC_MODIFY_RETRY_CNT)
		qp->req.retry_left = a->retry_cnt;
	if (mod->mask & SOFTRC_MODIFY_RNR_RETRY)
		qp->req.rnr_left = a->rnr_retry;
	if (mod->mask & SOFTRC_MODIFY_MAX_DEST_RD_ATOMIC)
		return softrc_eng_set_max_dest_rd_atomic(qp,
							  mod->max_dest_rd_atomic);
	return 0;
}

/**
 * softrc_eng_snapshot() - copy the engine's state for an observer
 * @qp:		the QP (its lock held by the caller)
 * @snap:	filled completely
 * @res:	room for @res_max responder resources, filled with the first
 *		of them (snap->res_cap says how many)
 * @res_max:	entries of @res
 */
void softrc_eng_snapshot(const struct softrc_eng_qp *qp,
			 struct softrc_engine_snapshot *snap,
			  struct softrc_eng_rd_res *res, u32 res_max)
{
	u32 n = qp->st.res_cap < res_max ? qp->st.res_cap : res_max;

	snap->state = qp->state;
	snap->attr = qp->attr;
	snap->sq_depth = qp->st.sq_depth;
	snap->rq_depth = qp->st.rq_depth;
	snap->nres = qp->st.nres;
	snap->res_cap = n;
	snap->req = qp->req;
	snap->resp = qp->resp;
	snap->cnt = qp->cnt;
	if (qp->st.res && n)
		memcpy(res, qp->st.res, n * sizeof(*res));
}

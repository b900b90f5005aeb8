// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completer: ACK, NAK, READ response and ATOMIC ACK processing at the
 * requester, WQE retirement and send completions.
 *
 * Context: called with the QP lock held by the glue; softirq or process
 * context; never sleeps. Touches qp->req and the send ring; READ data is
 * placed through ops->place, atomic results through ops->atomic_result,
 * completions leave through ops->complete.
 *
 * Retirement (IBTA §9.7.7.1.1): WQEs retire oldest first, in
 * post order; a SEND/WRITE retires once an ACK PSN covers its last packet
 * or an AETH MSN covers its SSN; a READ/ATOMIC only once its response is
 * complete, and nothing behind it may pass it. An ACK or response whose
 * PSN lies past an unanswered READ/ATOMIC means that response was lost:
 * implied NAK, go back to it. An ATOMIC_WRITE (IBTA 1.5) retires like a
 * WRITE (an ACK, NAK or response past it, or the MSN, says the responder
 * executed it) or by its own response, a zero-length READ RESPONSE ONLY
 * at its PSN (rxe's answer); it holds one of max_rd_atomic until then.
 * A FLUSH (IBTA 1.5) retires the same way, by the same response.
 */
#include "internal.h"

u8 softrc_eng_wc_opcode_of(u8 wr_opcode)
{
	switch (wr_opcode) {
	case SOFTRC_WR_RDMA_WRITE:
	case SOFTRC_WR_RDMA_WRITE_WITH_IMM:
		return SOFTRC_WC_RDMA_WRITE;
	case SOFTRC_WR_RDMA_READ:
		return SOFTRC_WC_RDMA_READ;
	case SOFTRC_WR_ATOMIC_CMP_AND_SWP:
		return SOFTRC_WC_COMP_SWAP;
	case SOFTRC_WR_ATOMIC_FETCH_AND_ADD:
		return SOFTRC_WC_FETCH_ADD;
	case SOFTRC_WR_LOCAL_INV:
		return SOFTRC_WC_LOCAL_INV;
	case SOFTRC_WR_BIND_MW:
		return SOFTRC_WC_BIND_MW;
	case SOFTRC_WR_REG_MR:
		return SOFTRC_WC_REG_MR;
	case SOFTRC_WR_ATOMIC_WRITE:
		return SOFTRC_WC_ATOMIC_WRITE;
	case SOFTRC_WR_FLUSH:
		return SOFTRC_WC_FLUSH;
	default:
		return SOFTRC_WC_SEND;
	}
}

/*
 * @w is done (answered, acknowledged or failed): a started WQE that took
 * a responder resource gives its share of max_rd_atomic back, once.
 */
static void softrc_comp_wqe_done(struct softrc_eng_qp *qp,
				 struct softrc_eng_send_wqe *w)
{
	if (w->state == SOFTRC_WQE_ACTIVE && softrc_wr_takes_res(w->wr.opcode) &&
	    qp->req.rd_out)
		qp->req.rd_out--;
	w->state = SOFTRC_WQE_DONE;
}

/*
 * Hand the completion of the send WQE @w, in SQ slot @slot, to the glue
 * with @status; a successful one carries the message's length. RC, UC
 * (retirement) and UD (sent) completions all leave through here.
 */
void softrc_eng_comp_send_cqe(struct softrc_eng_qp *qp,
			      const struct softrc_eng_send_wqe *w, u32 slot, u8 status)
{
	struct softrc_eng_cqe cqe;

	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = w->wr.wr_id;
	cqe.status = status;
	cqe.opcode = softrc_eng_wc_opcode_of(w->wr.opcode);
	cqe.slot = slot;
	cqe.byte_len = status ? 0 : w->wr.length;
	qp->ops->complete(qp->ctx, &cqe);
}

/*
 * Hand the head WQE to the CQ (if signaled or failed) and free its slot.
 * A local WQE that failed completes with its own status.
 */
static void softrc_comp_complete_head(struct softrc_eng_qp *qp, u8 status)
{
	struct softrc_eng_req *req = &qp->req;
	struct softrc_eng_send_wqe *w = softrc_sq_wqe(qp, req->head);
	u32 slot = softrc_sq_slot(qp, req->head);

	softrc_comp_wqe_done(qp, w);
	req->head++;
	if (status == SOFTRC_WC_SUCCESS)
		status = w->status;
	if (status == SOFTRC_WC_SUCCESS &&
	    !(w->wr.send_flags & SOFTRC_SEND_SIGNALED))
		return;
	softrc_eng_comp_send_cqe(qp, w, slot, status);
}

/*
 * Retire every WQE at the head that is done, in post order. A failed
 * local WQE completes in error and moves the QP to ERROR (flushing what
 * follows it).
 */
void softrc_eng_comp_retire(struct softrc_eng_qp *qp)
{
	struct softrc_eng_req *req = &qp->req;
	u8 status;

	while (req->head != req->tail) {
		struct softrc_eng_send_wqe *w = softrc_sq_wqe(qp, req->head);

		if (w->state == SOFTRC_WQE_ACTIVE &&
		    !softrc_wr_is_rd_atomic(w->wr.opcode) &&
		    softrc_psn_le(w->ssn, req->msn)) {
			/* the responder completed it: MSN covers its SSN */
			u32 end = softrc_psn_add(softrc_wqe_last_psn(w), 1);

			softrc_comp_wqe_done(qp, w);
			if (softrc_psn_gt(end, req->una))
				req->una = end;
		}
		if (w->state != SOFTRC_WQE_DONE)
			break;
		status = w->status;
		softrc_comp_complete_head(qp, SOFTRC_WC_SUCCESS);
		if (status) {
			softrc_eng_enter_error(qp);
			return;
		}
	}
}

/*
 * Everything before @limit was received. Mark the SEND/WRITE WQEs it
 * covers done and move una, but never past an unanswered READ/ATOMIC:
 * if @limit lies past one, return true with *@resume = the PSN of its
 * first missing response packet (an implied NAK: Documentation/
 * softrc.rst, "Protocol decisions").
 */
static bool softrc_comp_ack_upto(struct softrc_eng_qp *qp, u32 limit,
				 u32 *resume)
{
	struct softrc_eng_req *req = &qp->req;
	bool implied = false;
	u32 i;

	for (i = req->head; i != req->tail; i++) {
		struct softrc_eng_send_wqe *w = softrc_sq_wqe(qp, i);

		if (w->state == SOFTRC_WQE_POSTED)
			break;
		if (w->state == SOFTRC_WQE_DONE)
			continue;
		if (softrc_wr_is_rd_atomic(w->wr.opcode)) {
			u32 q = softrc_psn_add(w->first_psn, w->resp_pkts);

			if (softrc_psn_lt(q, limit)) {
				implied = true;
				*resume = q;
				limit = q;
			}
			break;
		}
		if (!softrc_psn_lt(softrc_wqe_last_psn(w), limit))
			break;
		softrc_comp_wqe_done(qp, w);
	}
	if (softrc_psn_gt(limit, req->una))
		req->una = limit;
	return implied;
}

/* MSN and credits from any AETH (C9-149: valid in every AETH). */
static void softrc_comp_aeth(struct softrc_eng_qp *qp,
			     const struct softrc_pkt *pkt)
{
	struct softrc_eng_req *req = &qp->req;
	u8 syn = pkt->syndrome;

	if (softrc_psn_gt(pkt->msn, req->msn))
		req->msn = pkt->msn;
	if (softrc_syndrome_type(syn) != SOFTRC_AETH_ACK)
		return;
	if (softrc_syndrome_value(syn) == SOFTRC_AETH_CREDIT_INVALID) {
		req->credits_valid = false;
		return;
	}
	req->credits_valid = true;
	req->lsn = softrc_psn_add(pkt->msn,
				  softrc_eng_credit_value(softrc_syndrome_value(syn)));
}

/*
 * The WQE holding @psn fails with @status: earlier acknowledged WQEs
 * complete normally, earlier unanswered READ/ATOMICs are flushed, then
 * the QP enters ERROR and flushes the rest.
 */
void softrc_eng_comp_fail_at(struct softrc_eng_qp *qp, u32 psn, u8 status)
{
	struct softrc_eng_req *req = &qp->req;

	if (status == SOFTRC_WC_RETRY_EXC_ERR)
		qp->cnt.retry_exceeded++;
	else if (status == SOFTRC_WC_RNR_RETRY_EXC_ERR)
		qp->cnt.rnr_retry_exceeded++;
	softrc_eng_comp_retire(qp);
	while (req->head != req->tail) {
		struct softrc_eng_send_wqe *w = softrc_sq_wqe(qp, req->head);
		bool hit = w->state == SOFTRC_WQE_POSTED ||
			   softrc_psn_in(psn, w->first_psn, w->npkts);

		if (w->state == SOFTRC_WQE_DONE) {
			softrc_comp_complete_head(qp, SOFTRC_WC_SUCCESS);
			continue;
		}
		softrc_comp_complete_head(qp, hit ? status :
					  SOFTRC_WC_WR_FLUSH_ERR);
		if (hit)
			break;
	}
	softrc_eng_enter_error(qp);
}

/* What a response asks of the requester once retirement is done. */
struct softrc_comp_res {
	bool retry;
	bool rnr;
	u32 psn;
	u8 why;
};

static void softrc_comp_ack(struct softrc_eng_qp *qp,
			    const struct softrc_pkt *pkt,
			    struct softrc_comp_res *res, u64 now)
{
	qp->cnt.acks_rcvd++;
	if (softrc_comp_ack_upto(qp, softrc_psn_add(pkt->psn, 1), &res->psn)) {
		qp->cnt.implied_naks++;
		res->retry = true;
	}
}

/*
 * RNR NAK: everything before its PSN was received (retired first, like an
 * ACK); the wait itself is softrc_comp_rnr_wait(), after that progress
 * reset the retry counters, so the RNR NAK's own retry is counted.
 */
static void softrc_comp_rnr(struct softrc_eng_qp *qp,
			    const struct softrc_pkt *pkt,
			    struct softrc_comp_res *res, u64 now)
{
	struct softrc_eng_req *req = &qp->req;

	qp->cnt.rnr_naks_rcvd++;
	if (softrc_comp_ack_upto(qp, pkt->psn, &res->psn)) {
		qp->cnt.implied_naks++;
		res->retry = true;
		return;
	}
	/* the same RNR NAK again (duplicated): no second back-off */
	if (req->state == SOFTRC_REQ_RNR_WAIT && req->rnr_psn == pkt->psn &&
	    req->una == pkt->psn)
		return;
	res->rnr = true;
}

/*
 * Wait for the RNR timer (IBTA table 45), spending one RNR retry (7 is
 * infinite); none left is RNR_RETRY_EXC_ERR.
 */
static void softrc_comp_rnr_wait(struct softrc_eng_qp *qp,
				 const struct softrc_pkt *pkt, u64 now)
{
	struct softrc_eng_req *req = &qp->req;
	u64 wait = softrc_eng_rnr_timer_ns(softrc_syndrome_value(pkt->syndrome));

	if (qp->attr.rnr_retry != 7) {
		if (!req->rnr_left) {
			softrc_eng_comp_fail_at(qp, pkt->psn,
						SOFTRC_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		req->rnr_left--;
	}
	req->state = SOFTRC_REQ_RNR_WAIT;
	req->rnr_psn = pkt->psn;
	req->gbn_active = false;
	softrc_eng_timer_set(qp, SOFTRC_TIMER_RETRY, 0);
	softrc_eng_timer_set(qp, SOFTRC_TIMER_RNR,
			     softrc_eng_req_deadline(qp, now, wait));
	if (qp->ops->rnr_wait)
		qp->ops->rnr_wait(qp->ctx, pkt->psn, wait);
}

static const u8 softrc_nak_status[] = {
	[SOFTRC_NAK_INVALID_REQ] = SOFTRC_WC_REM_INV_REQ_ERR,
	[SOFTRC_NAK_REMOTE_ACCESS] = SOFTRC_WC_REM_ACCESS_ERR,
	[SOFTRC_NAK_REMOTE_OP_ERR] = SOFTRC_WC_REM_OP_ERR,
	[SOFTRC_NAK_INVALID_RD_REQ] = SOFTRC_WC_REM_INV_REQ_ERR,
};

static void softrc_comp_nak(struct softrc_eng_qp *qp,
			    const struct softrc_pkt *pkt,
			    struct softrc_comp_res *res, u64 now)
{
	u8 code = softrc_syndrome_value(pkt->syndrome);

	switch (code) {
	case SOFTRC_NAK_PSN_SEQ_ERR:
		qp->cnt.seq_naks_rcvd++;
		res->psn = pkt->psn;
		res->why = SOFTRC_RETRY_nak_seq;
		/* past a READ/ATOMIC whose response was lost: that first */
		if (softrc_comp_ack_upto(qp, pkt->psn, &res->psn)) {
			qp->cnt.implied_naks++;
			res->why = SOFTRC_RETRY_read_restart;
		}
		res->retry = true;
		return;
	case SOFTRC_NAK_INVALID_REQ:
	case SOFTRC_NAK_INVALID_RD_REQ:
		qp->cnt.inv_req_naks_rcvd++;
		break;
	case SOFTRC_NAK_REMOTE_ACCESS:
		qp->cnt.rem_access_naks_rcvd++;
		break;
	case SOFTRC_NAK_REMOTE_OP_ERR:
		qp->cnt.rem_op_naks_rcvd++;
		break;
	default:
		qp->cnt.drop_bad_resp++;
		return;
	}
	/*
	 * Past an unanswered READ/ATOMIC, the NAK says its response was sent
	 * and lost: implied NAK, resend it first (like any response past it).
	 * Failing here would complete that earlier WQE in error although the
	 * responder executed it.
	 */
	if (softrc_comp_ack_upto(qp, pkt->psn, &res->psn)) {
		qp->cnt.implied_naks++;
		res->retry = true;
		return;
	}
	softrc_eng_comp_fail_at(qp, pkt->psn, softrc_nak_status[code]);
}

/* Is @pkt the right READ response packet for @w (length and position)? */
static bool softrc_comp_read_ok(struct softrc_eng_qp *qp,
				const struct softrc_eng_send_wqe *w,
				const struct softrc_pkt *pkt)
{
	u32 off = w->resp_pkts * qp->attr.pmtu;
	bool last = w->resp_pkts + 1 == w->npkts;

	if (w->wr.opcode != SOFTRC_WR_RDMA_READ ||
	    !softrc_pkt_has(pkt, SOFTRC_OPF_READ))
		return false;
	if (last)
		return softrc_pkt_has(pkt, SOFTRC_OPF_LAST) &&
		       pkt->payload_len == w->wr.length - off;
	return !softrc_pkt_has(pkt, SOFTRC_OPF_LAST) &&
	       pkt->payload_len == qp->attr.pmtu;
}

/* 0, or SOFTRC_E_MEM: the WQE's buffer went away after it was posted. */
static int softrc_comp_read_data(struct softrc_eng_qp *qp,
				 struct softrc_eng_send_wqe *w, u32 idx,
				 const struct softrc_pkt *pkt, void *rx)
{
	struct softrc_eng_buf dst = {
		.kind = SOFTRC_BUF_SEND_WQE,
		.slot = softrc_sq_slot(qp, idx),
		.addr = (u64)w->resp_pkts * qp->attr.pmtu,
		.len = pkt->payload_len,
	};

	if (dst.len && qp->ops->place(qp->ctx, &dst, rx, pkt->payload_off))
		return SOFTRC_E_MEM;
	return 0;
}

/* First WQE at or after the head that is not yet done. */
static u32 softrc_comp_first_open(struct softrc_eng_qp *qp)
{
	u32 i;

	for (i = qp->req.head; i != qp->req.tail; i++)
		if (softrc_sq_wqe(qp, i)->state != SOFTRC_WQE_DONE)
			break;
	return i;
}

/*
 * ATOMIC_WRITE's and FLUSH's own answer: a READ RESPONSE ONLY without
 * payload (rxe 6.2+, the AETH an ACK); any other response at its PSN is
 * bad.
 */
static bool softrc_comp_empty_resp_ok(const struct softrc_pkt *pkt)
{
	return pkt->opcode == SOFTRC_OP_RDMA_READ_RESPONSE_ONLY &&
	       !pkt->payload_len;
}

/*
 * READ response, ATOMIC ACK or an ATOMIC_WRITE's or FLUSH's response: it
 * also acknowledges everything before.
 */
static void softrc_comp_response(struct softrc_eng_qp *qp,
				 const struct softrc_pkt *pkt, void *rx,
				 struct softrc_comp_res *res)
{
	struct softrc_eng_req *req = &qp->req;
	struct softrc_eng_send_wqe *w;
	int err;
	u32 idx;

	if (softrc_comp_ack_upto(qp, pkt->psn, &res->psn)) {
		qp->cnt.implied_naks++;
		res->retry = true;
		return;
	}
	idx = softrc_comp_first_open(qp);
	w = softrc_sq_wqe(qp, idx);
	if (req->una != pkt->psn || idx == req->tail ||
	    w->state != SOFTRC_WQE_ACTIVE ||
	    !softrc_wr_takes_res(w->wr.opcode)) {
		qp->cnt.drop_bad_resp++;
		return;
	}
	if (softrc_wr_is_empty_resp(w->wr.opcode)) {
		if (!softrc_comp_empty_resp_ok(pkt)) {
			qp->cnt.drop_bad_resp++;
			return;
		}
		err = 0;
	} else if (softrc_wr_is_atomic(w->wr.opcode)) {
		if (pkt->opcode != SOFTRC_OP_ATOMIC_ACKNOWLEDGE) {
			qp->cnt.drop_bad_resp++;
			return;
		}
		err = qp->ops->atomic_result(qp->ctx, softrc_sq_slot(qp, idx),
					     pkt->orig);
	} else {
		if (!softrc_comp_read_ok(qp, w, pkt)) {
			qp->cnt.drop_bad_resp++;
			return;
		}
		err = softrc_comp_read_data(qp, w, idx, pkt, rx);
	}
	if (err) {
		/* never SUCCESS for data that was not placed */
		qp->cnt.mem_errors++;
		softrc_eng_comp_fail_at(qp, pkt->psn, SOFTRC_WC_LOC_PROT_ERR);
		return;
	}
	w->resp_pkts++;
	req->una = softrc_psn_add(pkt->psn, 1);
	if (w->resp_pkts == w->npkts)
		softrc_comp_wqe_done(qp, w);
}

/*
 * A response-side packet (ACK, NAK, READ response, ATOMIC ACK) arrived.
 * Only PSNs in [una, psn_next) can mean anything; older ones are stale
 * duplicates, newer ones answer nothing we sent.
 */
void softrc_eng_comp_rx(struct softrc_eng_qp *qp, const struct softrc_pkt *pkt,
			void *rx, u64 now)
{
	struct softrc_eng_req *req = &qp->req;
	/* a retry is an implied NAK's, unless a sequence error NAK says */
	struct softrc_comp_res res = { .why = SOFTRC_RETRY_read_restart };
	u32 una = req->una;

	if (softrc_psn_lt(pkt->psn, req->una)) {
		qp->cnt.drop_dup_resp++;
		return;
	}
	if (!softrc_psn_lt(pkt->psn, req->psn_next)) {
		qp->cnt.drop_bad_resp++;
		return;
	}
	/*
	 * An MSN past the last message sent to its end claims a completion
	 * the responder cannot have made (C9-148): a bogus packet, dropped
	 * whole (retiring by it would move una past psn_next and wedge).
	 */
	if (softrc_pkt_has(pkt, SOFTRC_H_AETH) &&
	    softrc_psn_gt(pkt->msn, req->sent_ssn)) {
		qp->cnt.drop_bad_resp++;
		return;
	}
	if (softrc_pkt_has(pkt, SOFTRC_H_AETH))
		softrc_comp_aeth(qp, pkt);

	if (pkt->opcode != SOFTRC_OP_ACKNOWLEDGE)
		softrc_comp_response(qp, pkt, rx, &res);
	else if (softrc_syndrome_type(pkt->syndrome) == SOFTRC_AETH_ACK)
		softrc_comp_ack(qp, pkt, &res, now);
	else if (softrc_syndrome_type(pkt->syndrome) == SOFTRC_AETH_RNR_NAK)
		softrc_comp_rnr(qp, pkt, &res, now);
	else if (softrc_syndrome_type(pkt->syndrome) == SOFTRC_AETH_NAK)
		softrc_comp_nak(qp, pkt, &res, now);
	else
		qp->cnt.drop_bad_resp++;

	if (qp->state == SOFTRC_QPS_ERROR)
		return;
	softrc_eng_comp_retire(qp);
	if (qp->state == SOFTRC_QPS_ERROR)
		return;		/* a failed local WQE retired */
	if (req->una != una)
		softrc_eng_req_progress(qp, now);
	if (res.rnr)
		softrc_comp_rnr_wait(qp, pkt, now);
	if (res.retry && qp->state != SOFTRC_QPS_ERROR)
		softrc_eng_req_retry_from(qp, res.psn, now, res.why);
}

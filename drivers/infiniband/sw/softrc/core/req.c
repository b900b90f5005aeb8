// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Requester: segmentation of send WQEs into packets at the path MTU,
 * PSN assignment, go-back-N retransmission and the retry/RNR timers.
 *
 * Context: called with the QP lock held by the glue; softirq or process
 * context; never sleeps. Touches qp->req and the send ring; packets leave
 * through ops->xmit with a payload reference into the WQE's SGEs (the
 * engine never copies payload).
 *
 * Replay state is the WQE ring itself: every unacknowledged packet can be
 * rebuilt from (WQE, PSN) because a message's packets are fixed by its
 * first PSN and the path MTU (the send ring is the replay buffer:
 * Documentation/softrc.rst, "The protocol core").
 */
#include "internal.h"

const char *const softrc_eng_req_state_names[SOFTRC_REQ_NR] = {
	[SOFTRC_REQ_READY] = "READY",
	[SOFTRC_REQ_RNR_WAIT] = "RNR_WAIT",
	[SOFTRC_REQ_ERROR] = "ERROR",
};

/* IBTA §9.7.6.1.3: local ACK timeout = 4.096 us * 2^timeout; 0 = none. */
u64 softrc_eng_ack_timeout_ns(u8 timeout)
{
	if (!timeout)
		return 0;
	return 4096ull << (timeout & 31);
}

/* IBTA table 45 (RNR NAK timer field), in units of 10 us; 0 = 655.36 ms. */
static const u32 softrc_rnr_10us[32] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192,
	12288, 16384, 24576, 32768, 49152,
};

u64 softrc_eng_rnr_timer_ns(u8 code)
{
	return (u64)softrc_rnr_10us[code & 31] * 10000;
}

/* PSNs a message uses: READ reserves one per response packet (§9.7.2). */
u32 softrc_eng_wqe_npkts(const struct softrc_eng_send_wr *wr, u32 pmtu)
{
	/* a FLUSH's length is the remote range's: one packet either way */
	if (softrc_wr_is_atomic(wr->opcode) || wr->opcode == SOFTRC_WR_FLUSH ||
	    !wr->length)
		return 1;
	return (wr->length + pmtu - 1) / pmtu;
}

/*
 * Deadline @dur ns after @now (0 = none). @now may lag real time by up to
 * attr.clock_slack_ns (a coarse glue clock): adding it keeps every timer
 * at or above its IBTA minimum (9.7.6.1.3, table 45) in real time.
 */
u64 softrc_eng_req_deadline(const struct softrc_eng_qp *qp, u64 now, u64 dur)
{
	return dur ? now + dur + qp->attr.clock_slack_ns : 0;
}

static u64 softrc_req_timeout(struct softrc_eng_qp *qp, u64 now)
{
	return softrc_eng_req_deadline(qp, now,
				   softrc_eng_ack_timeout_ns(qp->attr.timeout));
}

/* Rewind the send cursor to @psn: go-back-N (softrc.rst, req.c). */
void softrc_eng_req_go_back(struct softrc_eng_qp *qp, u32 psn)
{
	struct softrc_eng_req *req = &qp->req;
	u32 i;

	for (i = req->head; i != req->tail; i++) {
		struct softrc_eng_send_wqe *w = softrc_sq_wqe(qp, i);

		if (w->state == SOFTRC_WQE_POSTED)
			break;
		if (w->state == SOFTRC_WQE_DONE ||
		    !softrc_psn_in(psn, w->first_psn, w->npkts))
			continue;
		req->cur = i;
		req->cur_psn = psn;
		req->cur_off = softrc_wr_is_atomic(w->wr.opcode) ? 0 :
			(u32)softrc_psn_diff(psn, w->first_psn) * qp->attr.pmtu;
		return;
	}
	req->cur = i;
	req->cur_off = 0;
	req->cur_psn = req->psn_next;
}

/* Go back to @psn to send it again, and tell the glue why. */
void softrc_eng_req_retransmit(struct softrc_eng_qp *qp, u32 psn,
			       enum softrc_eng_retry_reason why)
{
	qp->req.probing = false;
	softrc_eng_req_go_back(qp, psn);
	if (qp->ops->retransmit)
		qp->ops->retransmit(qp->ctx, psn, why);
}

/* The oldest unacknowledged PSN moved: reset retries, restart the timer. */
void softrc_eng_req_progress(struct softrc_eng_qp *qp, u64 now)
{
	struct softrc_eng_req *req = &qp->req;

	req->retry_left = qp->attr.retry_cnt;
	req->rnr_left = qp->attr.rnr_retry;
	req->gbn_active = false;
	if (softrc_psn_lt(req->cur_psn, req->una))
		softrc_eng_req_go_back(qp, req->una);
	if (req->una == req->psn_next)
		softrc_eng_timer_set(qp, SOFTRC_TIMER_RETRY, 0);
	else if (req->state == SOFTRC_REQ_READY)
		softrc_eng_timer_set(qp, SOFTRC_TIMER_RETRY,
				     softrc_req_timeout(qp, now));
}

/*
 * Sequence-error NAK or implied NAK: go back to @psn, spending one retry
 * like a timeout does (retry_cnt, §9.7.6.1.3). A second trigger for the
 * same PSN before any progress is the same loss seen again and is
 * ignored.
 */
void softrc_eng_req_retry_from(struct softrc_eng_qp *qp, u32 psn, u64 now,
			       enum softrc_eng_retry_reason why)
{
	struct softrc_eng_req *req = &qp->req;

	if (req->gbn_active && req->gbn_psn == psn)
		return;
	if (!req->retry_left) {
		softrc_eng_comp_fail_at(qp, psn, SOFTRC_WC_RETRY_EXC_ERR);
		return;
	}
	req->retry_left--;
	req->gbn_active = true;
	req->gbn_psn = psn;
	softrc_eng_req_retransmit(qp, psn, why);
	softrc_eng_timer_set(qp, SOFTRC_TIMER_RETRY, softrc_req_timeout(qp, now));
}

/* Credit check for a receive-consuming message (table 44). */
static bool softrc_req_has_credit(const struct softrc_eng_qp *qp,
				  const struct softrc_eng_send_wqe *w)
{
	const struct softrc_eng_req *req = &qp->req;

	if (!softrc_wr_consumes_recv(w->wr.opcode) || !req->credits_valid)
		return true;
	return softrc_psn_le(w->ssn, req->lsn);
}

/*
 * May the POSTED WQE @w start? Fence waits for every earlier READ/ATOMIC
 * (ATOMIC_WRITE and FLUSH included), max_rd_atomic bounds outstanding ones (each
 * takes a responder resource at the peer), credits bound
 * receive-consuming messages. Returns 1 = go, 2 = go as a credit probe,
 * 3 = wait for credits, after an AckReq probe (softrc_req_probe), 0 = wait.
 */
static int softrc_req_may_start(struct softrc_eng_qp *qp,
				const struct softrc_eng_send_wqe *w)
{
	struct softrc_eng_req *req = &qp->req;

	if ((w->wr.send_flags & SOFTRC_SEND_FENCE) && req->rd_out)
		return 0;
	if (softrc_wr_takes_res(w->wr.opcode) &&
	    req->rd_out >= qp->attr.max_rd_atomic)
		return 0;
	if (softrc_req_has_credit(qp, w))
		return 1;
	qp->cnt.credit_stalls++;
	if (req->una != req->psn_next)
		/* the ACK that brings credits must be asked for: now */
		return req->tail_unreq && req->cur_psn == req->psn_next ? 3 : 0;
	/* nothing in flight: one packet with AckReq draws an ACK (credits) */
	qp->cnt.credit_probes++;
	return 2;
}

static u8 softrc_send_opcode(const struct softrc_eng_send_wr *wr, bool first,
			     bool last)
{
	bool imm = wr->opcode == SOFTRC_WR_SEND_WITH_IMM;
	bool inv = wr->opcode == SOFTRC_WR_SEND_WITH_INV;

	if (first && last)
		return imm ? SOFTRC_OP_SEND_ONLY_WITH_IMMEDIATE :
		       inv ? SOFTRC_OP_SEND_ONLY_WITH_INVALIDATE :
			     SOFTRC_OP_SEND_ONLY;
	if (first)
		return SOFTRC_OP_SEND_FIRST;
	if (!last)
		return SOFTRC_OP_SEND_MIDDLE;
	return imm ? SOFTRC_OP_SEND_LAST_WITH_IMMEDIATE :
	       inv ? SOFTRC_OP_SEND_LAST_WITH_INVALIDATE : SOFTRC_OP_SEND_LAST;
}

static u8 softrc_write_opcode(const struct softrc_eng_send_wr *wr, bool first,
			      bool last)
{
	bool imm = wr->opcode == SOFTRC_WR_RDMA_WRITE_WITH_IMM;

	if (first && last)
		return imm ? SOFTRC_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
			     SOFTRC_OP_RDMA_WRITE_ONLY;
	if (first)
		return SOFTRC_OP_RDMA_WRITE_FIRST;
	if (!last)
		return SOFTRC_OP_RDMA_WRITE_MIDDLE;
	return imm ? SOFTRC_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE :
		     SOFTRC_OP_RDMA_WRITE_LAST;
}

static void softrc_req_pkt_init(struct softrc_eng_qp *qp,
				struct softrc_pkt *pkt, u8 opcode)
{
	const struct softrc_eng_req *req = &qp->req;

	memset(pkt, 0, sizeof(*pkt));
	/* a UC code is the RC one plus the transport bits (opcode.h) */
	pkt->opcode = opcode | qp->attr.transport;
	pkt->op = softrc_opcode_get(pkt->opcode);
	pkt->pkey = qp->attr.pkey;
	pkt->dqpn = qp->attr.dqpn;
	pkt->psn = req->cur_psn;
}

/* One SEND/WRITE packet: RETH on FIRST/ONLY only (§9.4). */
static u32 softrc_req_build_data(struct softrc_eng_qp *qp,
				 struct softrc_eng_send_wqe *w,
				 struct softrc_pkt *pkt, struct softrc_eng_buf *pl)
{
	struct softrc_eng_req *req = &qp->req;
	const struct softrc_eng_send_wr *wr = &w->wr;
	u32 left = wr->length - req->cur_off;
	u32 plen = left < qp->attr.pmtu ? left : qp->attr.pmtu;
	bool first = !req->cur_off, last = plen == left;
	bool write = wr->opcode == SOFTRC_WR_RDMA_WRITE ||
		     wr->opcode == SOFTRC_WR_RDMA_WRITE_WITH_IMM;

	softrc_req_pkt_init(qp, pkt, write ? softrc_write_opcode(wr, first, last) :
				     softrc_send_opcode(wr, first, last));
	if (softrc_pkt_has(pkt, SOFTRC_H_RETH)) {
		pkt->va = wr->remote_addr;
		pkt->rkey = wr->rkey;
		pkt->dma_len = wr->length;
	}
	pkt->imm = wr->imm;
	pkt->inv_rkey = wr->inv_rkey;
	pkt->se = last && (wr->send_flags & SOFTRC_SEND_SOLICITED);
	/* more AckReqs: softrc_req_send_one(), the probe for an idle tail */
	pkt->ackreq = last && qp->attr.transport == SOFTRC_OPCODE_RC &&
		      ((wr->send_flags & SOFTRC_SEND_SIGNALED) ||
		       qp->attr.ackreq_msg);
	pkt->payload_len = plen;
	pl->kind = plen ? SOFTRC_BUF_SEND_WQE : SOFTRC_BUF_NONE;
	pl->slot = softrc_sq_slot(qp, req->cur);
	pl->addr = req->cur_off;
	pl->len = plen;

	req->cur_off += plen;
	return 1;
}

/* READ request, possibly resuming from the middle of its response. */
static u32 softrc_req_build_read(struct softrc_eng_qp *qp,
				 struct softrc_eng_send_wqe *w,
				 struct softrc_pkt *pkt)
{
	struct softrc_eng_req *req = &qp->req;
	u32 k = (u32)softrc_psn_diff(req->cur_psn, w->first_psn);

	softrc_req_pkt_init(qp, pkt, SOFTRC_OP_RDMA_READ_REQUEST);
	pkt->va = w->wr.remote_addr + req->cur_off;
	pkt->rkey = w->wr.rkey;
	pkt->dma_len = w->wr.length - req->cur_off;
	pkt->ackreq = true;
	return w->npkts - k;
}

static u32 softrc_req_build_atomic(struct softrc_eng_qp *qp,
				   struct softrc_eng_send_wqe *w,
				   struct softrc_pkt *pkt)
{
	bool cas = w->wr.opcode == SOFTRC_WR_ATOMIC_CMP_AND_SWP;

	softrc_req_pkt_init(qp, pkt, cas ? SOFTRC_OP_COMPARE_SWAP :
					   SOFTRC_OP_FETCH_ADD);
	pkt->va = w->wr.remote_addr;
	pkt->rkey = w->wr.rkey;
	pkt->dma_len = 8;
	pkt->swap_add = cas ? w->wr.swap : w->wr.compare_add;
	pkt->compare = cas ? w->wr.compare_add : 0;
	pkt->ackreq = true;
	return 1;
}

/*
 * ATOMIC WRITE (IBTA 1.5 A19.4): RETH and the 8 bytes as payload, from
 * the slot's SGEs (the glue keeps a user WQE's value there, inline), so a
 * retransmission sends the same bytes again.
 */
static u32 softrc_req_build_atomic_write(struct softrc_eng_qp *qp,
					 struct softrc_eng_send_wqe *w,
					 struct softrc_pkt *pkt,
					 struct softrc_eng_buf *pl)
{
	softrc_req_pkt_init(qp, pkt, SOFTRC_OP_ATOMIC_WRITE);
	pkt->va = w->wr.remote_addr;
	pkt->rkey = w->wr.rkey;
	pkt->dma_len = SOFTRC_ATOMIC_WRITE_BYTES;
	pkt->payload_len = SOFTRC_ATOMIC_WRITE_BYTES;
	pkt->ackreq = true;
	pl->kind = SOFTRC_BUF_SEND_WQE;
	pl->slot = softrc_sq_slot(qp, qp->req.cur);
	pl->addr = 0;
	pl->len = SOFTRC_ATOMIC_WRITE_BYTES;
	return 1;
}

/*
 * FLUSH (IBTA 1.5 A19.4.1): FETH (placement type, selectivity level) and
 * RETH (the range; the whole region at level MR, where rxe ignores VA
 * and length), no payload (oA19-2); one PSN, AckReq as for every request
 * that ends a message.
 */
static u32 softrc_req_build_flush(struct softrc_eng_qp *qp,
				  struct softrc_eng_send_wqe *w,
				  struct softrc_pkt *pkt)
{
	softrc_req_pkt_init(qp, pkt, SOFTRC_OP_FLUSH);
	pkt->flush_type = w->wr.flush_type;
	pkt->flush_level = w->wr.flush_level;
	pkt->va = w->wr.remote_addr;
	pkt->rkey = w->wr.rkey;
	pkt->dma_len = w->wr.length;
	pkt->ackreq = true;
	return 1;
}

/*
 * the PSN window is 2^23. The peer's responder takes
 * [epsn - 2^23, epsn) as duplicates, and epsn <= psn_next; our own PSN
 * comparisons are signed 24-bit differences against una. So the span
 * [una, psn_next) must stay below 2^23 (SOFTRC_REQ_MAX_SPAN): then every
 * retransmission from una is a duplicate or the expected PSN there,
 * never "future". SEND/WRITE grow the span by one PSN a packet
 * (max_unacked <= 2^22 bounds them); a READ takes all its response PSNs
 * at once, so a WQE starts only if its PSNs fit. With nothing
 * outstanding any WQE fits (post rejects a larger READ), so the
 * requester never wedges here.
 */
static bool softrc_req_fits(const struct softrc_eng_qp *qp,
			    const struct softrc_eng_send_wqe *w)
{
	const struct softrc_eng_req *req = &qp->req;
	u32 span = (req->psn_next - req->una) & SOFTRC_PSN_MASK;
	u32 need = w->wr.opcode == SOFTRC_WR_RDMA_READ ? w->npkts : 1;

	return span + need <= SOFTRC_REQ_MAX_SPAN;
}

/* Start the POSTED WQE at the cursor: assign its first PSN. */
static void softrc_req_start(struct softrc_eng_qp *qp,
			     struct softrc_eng_send_wqe *w)
{
	struct softrc_eng_req *req = &qp->req;

	w->state = SOFTRC_WQE_ACTIVE;
	w->first_psn = req->psn_next;
	w->resp_pkts = 0;
	req->cur_psn = req->psn_next;
	req->cur_off = 0;
	if (softrc_wr_takes_res(w->wr.opcode))
		req->rd_out++;
}

/*
 * UC: no ACK will come. A message is done once its last packet is out;
 * it completes in SQ order, and nothing stays outstanding (IBTA ch. 9.8.3:
 * no retries, no timer).
 */
static void softrc_req_uc_sent(struct softrc_eng_qp *qp,
			       struct softrc_eng_send_wqe *w, bool last)
{
	struct softrc_eng_req *req = &qp->req;

	req->una = req->psn_next;
	if (!last)
		return;
	w->state = SOFTRC_WQE_DONE;
	softrc_eng_comp_retire(qp);
}

/* Build and send the packet at the cursor, then advance the cursor. */
static void softrc_req_send_one(struct softrc_eng_qp *qp,
				struct softrc_eng_send_wqe *w, bool probe, u64 now)
{
	bool uc = qp->attr.transport == SOFTRC_OPCODE_UC;
	struct softrc_eng_req *req = &qp->req;
	struct softrc_eng_buf pl = { .kind = SOFTRC_BUF_NONE };
	struct softrc_pkt pkt;
	bool again;
	u32 used, end;

	if (w->wr.opcode == SOFTRC_WR_RDMA_READ)
		used = softrc_req_build_read(qp, w, &pkt);
	else if (softrc_wr_is_atomic(w->wr.opcode))
		used = softrc_req_build_atomic(qp, w, &pkt);
	else if (w->wr.opcode == SOFTRC_WR_ATOMIC_WRITE)
		used = softrc_req_build_atomic_write(qp, w, &pkt, &pl);
	else if (w->wr.opcode == SOFTRC_WR_FLUSH)
		used = softrc_req_build_flush(qp, w, &pkt);
	else
		used = softrc_req_build_data(qp, w, &pkt, &pl);

	/*
	 * Besides the builders' AckReqs (the end of a signaled message, every
	 * READ, atomic and FLUSH): AckReq at least every N packets, on the
	 * last the window allows, on the end of the newest WQE of a full SQ
	 * (no WQE can follow until an ACK frees a slot), on a credit probe,
	 * and on a packet sent again that is the newest (after a timeout, a
	 * NAK or for an AckReq probe): nothing follows it until it is
	 * acknowledged. UC: never (no ACK ever comes).
	 */
	end = softrc_psn_add(pkt.psn, used);
	again = softrc_psn_lt(pkt.psn, req->psn_next);
	if (!uc &&
	    (probe || ++req->since_ackreq >= qp->attr.ackreq_every ||
	     (u32)softrc_psn_diff(end, req->una) >= qp->attr.max_unacked ||
	     (req->tail - req->head >= qp->st.sq_depth &&
	      req->cur + 1 == req->tail &&
	      softrc_pkt_has(&pkt, SOFTRC_OPF_LAST)) ||
	     (again && end == req->psn_next)))
		pkt.ackreq = true;
	if (pkt.ackreq) {
		req->since_ackreq = 0;
		req->ackreq_psn = softrc_psn_add(end, SOFTRC_PSN_MASK);
	}

	if (again && req->probing)
		req->probing = false;	/* counted as ackreq_probes */
	else if (again)
		qp->cnt.retransmits++;
	req->cur_psn = end;
	if (softrc_psn_gt(end, req->psn_next))
		req->psn_next = end;
	if (end == req->psn_next && !uc)
		req->tail_unreq = !pkt.ackreq;
	req->tx_since_arm = true;
	if (softrc_pkt_has(&pkt, SOFTRC_OPF_LAST) ||
	    softrc_wr_is_rd_atomic(w->wr.opcode)) {
		req->cur++;
		req->cur_off = 0;
		if (softrc_psn_gt(w->ssn, req->sent_ssn))
			req->sent_ssn = w->ssn;
	}
	if (probe)
		req->wait_idle = true;
	if (!uc && !req->deadline[SOFTRC_TIMER_RETRY])
		softrc_eng_timer_set(qp, SOFTRC_TIMER_RETRY,
				     softrc_req_timeout(qp, now));
	if (qp->ops->xmit(qp->ctx, &pkt, &pl)) {
		/* the payload's memory went away after the post */
		qp->cnt.mem_errors++;
		softrc_eng_comp_fail_at(qp, pkt.psn, SOFTRC_WC_LOC_PROT_ERR);
		return;
	}
	qp->cnt.tx_pkts++;
	if (uc)
		softrc_req_uc_sent(qp, w, softrc_pkt_has(&pkt, SOFTRC_OPF_LAST));
}

/*
 * The POSTED local WQE at the cursor (LOCAL_INV, BIND_MW): run it now, in
 * SQ order, once a fence is satisfied (IBTA 9.5: a fenced WR waits for
 * earlier READ/ATOMICs). It uses no PSN. It completes through
 * retirement, so never before an earlier WQE. A failed one keeps the
 * cursor: nothing behind it is sent, and the QP enters ERROR when it
 * retires.
 */
static bool softrc_req_local(struct softrc_eng_qp *qp,
			     struct softrc_eng_send_wqe *w)
{
	struct softrc_eng_req *req = &qp->req;

	if ((w->wr.send_flags & SOFTRC_SEND_FENCE) && req->rd_out)
		return false;
	qp->cnt.local_ops++;
	w->status = qp->ops->local(qp->ctx, softrc_sq_slot(qp, req->cur));
	w->state = SOFTRC_WQE_DONE;
	if (w->status)
		qp->cnt.local_errors++;
	else
		req->cur++;
	softrc_eng_comp_retire(qp);
	return true;
}

/*
 * AckReq probe: the newest PSN went without AckReq, so the responder
 * will not acknowledge it (IBTA 9.7.5.1: it answers only requests that
 * ask), and the requester has nothing to send that would ask. Send the
 * newest packet again, now with AckReq (softrc_req_send_one()): a
 * duplicate, which the responder acknowledges without executing it
 * again (9.9.2.1), and its ACK covers every PSN before it.
 */
static bool softrc_req_probe(struct softrc_eng_qp *qp)
{
	struct softrc_eng_req *req = &qp->req;

	qp->cnt.ackreq_probes++;
	softrc_eng_req_go_back(qp, softrc_psn_add(req->psn_next, SOFTRC_PSN_MASK));
	req->probing = true;
	return true;
}

/*
 * When to look for an idle tail next: one probe interval from @now
 * (attr.ackreq_probe_ns, at most half the local ACK timeout), and never
 * later than that interval before the retry timer: an unacknowledged
 * PSN must draw its ACK from a probe, not from a timeout.
 */
static u64 softrc_req_probe_at(const struct softrc_eng_qp *qp, u64 now)
{
	u64 tmo = softrc_eng_ack_timeout_ns(qp->attr.timeout);
	u64 retry = qp->req.deadline[SOFTRC_TIMER_RETRY];
	u64 iv = qp->attr.ackreq_probe_ns, at;

	if (tmo && tmo / 2 < iv)
		iv = tmo / 2;
	at = softrc_eng_req_deadline(qp, now, iv);
	if (retry && retry < at + iv)
		at = retry > iv ? retry - iv : 0;
	return at > now ? at : now;
}

/*
 * The AckReq probe timer fired. A request went out since it was set, or
 * an earlier packet's AckReq is still unanswered (its ACK is on its way,
 * and the requester may well be waiting for it to post more): look again
 * one interval later, if that is still before the retry timer. Else
 * probe, unless an ACK came for the newest PSN meanwhile. A go-back-N
 * under way resends the newest PSN with AckReq anyway.
 */
void softrc_eng_req_probe_fired(struct softrc_eng_qp *qp, u64 now)
{
	struct softrc_eng_req *req = &qp->req;
	u64 at;

	if (!req->tail_unreq || req->una == req->psn_next ||
	    req->state != SOFTRC_REQ_READY || req->cur_psn != req->psn_next)
		return;
	if (req->tx_since_arm || !softrc_psn_lt(req->ackreq_psn, req->una)) {
		at = softrc_req_probe_at(qp, now);
		if (at > now) {
			req->tx_since_arm = false;
			softrc_eng_timer_set(qp, SOFTRC_TIMER_ACKREQ, at);
			return;
		}
	}
	softrc_req_probe(qp);
}

/* READY: send the next packet if allowed; false when nothing to send. */
static bool softrc_req_step_ready(struct softrc_eng_qp *qp, u64 now)
{
	struct softrc_eng_req *req = &qp->req;
	struct softrc_eng_send_wqe *w;
	int go = 1;

	if (req->wait_idle && !softrc_psn_lt(req->cur_psn, req->psn_next)) {
		/* a credit probe is out: nothing new until it is answered */
		if (req->una != req->psn_next)
			return false;
		req->wait_idle = false;
	}
	if (req->cur == req->tail ||
	    (u32)softrc_psn_diff(req->cur_psn, req->una) >= qp->attr.max_unacked)
		return false;
	w = softrc_sq_wqe(qp, req->cur);
	if (w->state == SOFTRC_WQE_DONE) {
		if (w->status)
			return false;	/* a failed local WQE: go no further */
		/* answered (or run locally) while we were rewinding: skip */
		req->cur++;
		req->cur_off = 0;
		return true;
	}
	if (w->state == SOFTRC_WQE_POSTED && req->drain)
		return false;	/* SQD: nothing new starts */
	if (w->state == SOFTRC_WQE_POSTED && softrc_wr_is_local(w->wr.opcode))
		return softrc_req_local(qp, w);
	if (w->state == SOFTRC_WQE_POSTED) {
		if (!softrc_req_fits(qp, w))
			return false;
		go = softrc_req_may_start(qp, w);
		if (go == 3)
			return softrc_req_probe(qp);
		if (!go)
			return false;
		softrc_req_start(qp, w);
	}
	softrc_req_send_one(qp, w, go == 2, now);
	return true;
}

static bool softrc_req_step_wait(struct softrc_eng_qp *qp, u64 now)
{
	return false;
}

static bool (*const softrc_req_step[SOFTRC_REQ_NR])(struct softrc_eng_qp *,
						    u64) = {
	[SOFTRC_REQ_READY] = softrc_req_step_ready,
	[SOFTRC_REQ_RNR_WAIT] = softrc_req_step_wait,
	[SOFTRC_REQ_ERROR] = softrc_req_step_wait,
};

/*
 * The requester stopped with its newest PSN sent without AckReq and not
 * acknowledged: unless more requests go out first, probe after
 * attr.ackreq_probe_ns (softrc_eng_req_probe_fired()). The timer is
 * set once and looks again when it fires, so a busy QP touches it about
 * once an interval, not once a packet.
 */
static void softrc_req_idle_tail(struct softrc_eng_qp *qp, u64 now)
{
	struct softrc_eng_req *req = &qp->req;

	if (!req->tail_unreq || req->deadline[SOFTRC_TIMER_ACKREQ] ||
	    req->una == req->psn_next || req->state != SOFTRC_REQ_READY)
		return;
	req->tx_since_arm = false;
	/* at @now (the retry timer is that close): it fires at once */
	softrc_eng_timer_set(qp, SOFTRC_TIMER_ACKREQ,
			     softrc_req_probe_at(qp, now));
}

/*
 * Transmit up to @budget packets: queued responder packets (READ
 * responses, ATOMIC ACKs) and requests (new ones and retransmissions).
 *
 * Sharing: responses go first with half the budget (rounded up), since
 * the peer is waiting on them and a long READ response must not starve
 * our own requests; the requester takes what is left; responses then get
 * whatever the requester did not use. Neither side starves the other.
 *
 * Returns the number of steps taken (packets, plus requester steps that
 * skip an already answered WQE); less than @budget means both sides are
 * blocked or done (nothing to send, window/credit/fence wait, RNR wait,
 * ERROR), @budget means call again.
 */
u32 softrc_eng_tx(struct softrc_eng_qp *qp, u64 now, u32 budget)
{
	u32 n;

	if (qp->attr.transport == SOFTRC_OPCODE_UD)
		return qp->state == SOFTRC_QPS_ERROR ? 0 : softrc_eng_ud_tx(qp, budget);
	n = softrc_eng_tx_resp(qp, budget - budget / 2);

	while (n < budget && softrc_req_step[qp->req.state](qp, now))
		n++;
	softrc_req_idle_tail(qp, now);
	return n + softrc_eng_tx_resp(qp, budget - n);
}

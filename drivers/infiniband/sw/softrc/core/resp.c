// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Responder: PSN check, request validation, reassembly, execution,
 * duplicate handling, ACK/NAK generation and receive completions.
 *
 * Context: called with the QP lock held by the glue; softirq or process
 * context; never sleeps. Touches qp->resp, the receive ring and the
 * responder resources; memory goes through ops->mr_check, ops->place and
 * ops->atomic, responses leave through ops->xmit (READ data named by
 * R_Key and VA: the glue reads memory at transmit time).
 *
 * Rules (IBTA Vol 1 §9.7; Documentation/softrc.rst, "The protocol core"
 * and "Protocol decisions"):
 *  - three-way PSN check against the expected PSN [§9.7.2];
 *  - a gap draws one sequence-error NAK until the expected PSN arrives;
 *  - duplicates [C9-105 for SEND]: SEND/WRITE are acknowledged again without
 *    re-execution or receive WQE consumption; a READ is answered again by
 *    re-reading memory from the duplicate PSN on; an ATOMIC replays the
 *    saved original value; an ATOMIC WRITE is answered again from its
 *    resource, never stored again (IBTA 1.5 A19: a newer value may be
 *    there by now); one without its saved resource is dropped;
 *  - ATOMIC WRITE (IBTA 1.5, as rxe 6.2+): needs remote write on the QP
 *    and the R_Key, 8 bytes at an 8-byte aligned VA (the parser checks
 *    length and alignment), placed by ops->atomic_write as one 64-bit
 *    store; it takes a responder resource like an ATOMIC, counts in the
 *    MSN when executed, and is answered by a zero-length READ RESPONSE
 *    ONLY at its PSN, queued in order with READ responses and ATOMIC
 *    ACKs;
 *  - FLUSH (IBTA 1.5 A19, as rxe 6.2+): each placement type it names
 *    (none: no right asked, as rxe) must be enabled on the QP
 *    (IB_ACCESS_FLUSH_GLOBAL / _PERSISTENT in IB_QP_ACCESS_FLAGS), else
 *    invalid request; the R_Key must grant the
 *    same flush rights on the RETH range (selectivity level RANGE) or
 *    just name the region (level MR, no range: as rxe), else remote
 *    access; ops->flush then orders every earlier placement (placement
 *    is synchronous here, so the requests before it are placed already).
 *    It takes a responder resource, counts in the MSN, is answered like
 *    ATOMIC WRITE, and a duplicate is answered from its resource, never
 *    executed again;
 *  - MSN counts each new message once: SEND/WRITE at LAST/ONLY, READ and
 *    ATOMIC when validated (early increment) [C9-147/148];
 *  - ACKs are coalesced: an AckReq'd (or duplicate) request marks an ACK
 *    pending, sent at softrc_eng_rx_flush() or before any other response;
 *  - responses leave in PSN order [IBTA 9.5]: READ responses and ATOMIC
 *    ACKs are queued (the responder resources, in ring order, plus a
 *    cursor) and sent at most SOFTRC_RESP_INLINE packets from the rx call,
 *    the rest from softrc_eng_tx*() within the budget; an ACK or a
 *    sequence/RNR NAK found behind queued responses is held until they
 *    are out (or dropped when a later READ/ATOMIC response covers it);
 *    later requests are executed meanwhile (only a fenced WR waits for an
 *    earlier READ, IBTA 9.5 / 10.8.3.3);
 *  - a duplicate READ/ATOMIC restarts the queue at its resource and PSN
 *    when that is before the cursor (the requester went back: everything
 *    from there is needed again), extends the queue when it is past it,
 *    and is already covered otherwise; one from inside a READ response
 *    (not its first PSN) always restarts there, so that PSN goes out as a
 *    FIRST;
 *  - AETH credits: the number of free receive WQEs (IBTA table 44
 *    encoding), or 31 ("no credit information", as rxe) with
 *    attr.no_credits;
 *  - invalid request, remote access and remote operational errors NAK the
 *    request and move the QP to ERROR; behind queued responses the NAK
 *    waits until they are out (responses in request order, IBTA 9.5),
 *    later requests are dropped meanwhile;
 *  - a RETH DMA length above 2^31 (C9-94) or a READ of more than
 *    SOFTRC_READ_MAX_PSNS response packets is an invalid request;
 *  - responder resources (max_dest_rd_atomic of them) are recycled
 *    oldest first and retired once their PSNs leave the duplicate window;
 *    a READ/ATOMIC with no resource configured, or one that would recycle
 *    a resource whose response has not gone out once (the requester then
 *    has more outstanding than max_dest_rd_atomic), is an invalid request;
 *  - keys: a WRITE, READ or ATOMIC R_Key is checked once per message
 *    (ops->mr_check) and the pin it returns is what every later access
 *    goes through: the open WRITE context holds it until LAST, a READ
 *    resource until it is released (replays included), an ATOMIC only
 *    while it executes; every pin is dropped once, through
 *    softrc_resp_res_release() / softrc_eng_resp_write_end(), and all of them
 *    when the QP enters ERROR or is reset;
 *  - memory that went away between the check and a use fails the message
 *    (AETH NAK codes, §9.3.5: 2 remote access, 3 remote operational
 *    error; as rxe): a WRITE, ATOMIC or READ (response
 *    or replay) is NAKed remote access; a SEND whose receive buffer is
 *    gone is NAKed remote operational error and its receive completes
 *    LOC_PROT_ERR (a responder-side local problem the requester did not
 *    cause). Never an ACK, never zeros for READ data.
 */
#include "internal.h"

const char *const softrc_eng_resp_state_names[SOFTRC_RESP_NR] = {
	[SOFTRC_RESP_IDLE] = "IDLE",
	[SOFTRC_RESP_IN_SEND] = "IN_SEND",
	[SOFTRC_RESP_IN_WRITE] = "IN_WRITE",
	[SOFTRC_RESP_ERROR] = "ERROR",
};

/* IBTA table 44: AETH credit count encoding (31 = invalid). */
static const u16 softrc_credit_tab[31] = {
	0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
	384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
	16384, 24576, 32768,
};

u32 softrc_eng_credit_value(u8 code)
{
	return code < 31 ? softrc_credit_tab[code] : 0;
}

/* Largest code whose credit value does not exceed @wqes. */
u8 softrc_eng_credit_code(u32 wqes)
{
	u8 c = 0;

	while (c < 30 && softrc_credit_tab[c + 1] <= wqes)
		c++;
	return c;
}

static u32 softrc_resp_free_wqes(const struct softrc_eng_qp *qp)
{
	u32 n = qp->resp.rq_tail - qp->resp.rq_head;

	if (qp->resp.state == SOFTRC_RESP_IN_SEND && n)
		n--;
	return n;
}

static u8 softrc_resp_ack_syndrome(const struct softrc_eng_qp *qp)
{
	if (qp->attr.no_credits)
		return SOFTRC_AETH_ACK | SOFTRC_AETH_CREDIT_INVALID;
	return SOFTRC_AETH_ACK | softrc_eng_credit_code(softrc_resp_free_wqes(qp));
}

void softrc_eng_resp_pkt_init(struct softrc_eng_qp *qp,
			      struct softrc_pkt *pkt, u8 opcode, u32 psn)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = opcode;
	pkt->op = softrc_opcode_get(opcode);
	pkt->pkey = qp->attr.pkey;
	pkt->dqpn = qp->attr.dqpn;
	pkt->psn = psn;
	pkt->msn = qp->resp.msn;
	pkt->syndrome = softrc_resp_ack_syndrome(qp);
}

/* 0, or SOFTRC_E_MEM: @pl's memory is gone and nothing was sent. */
int softrc_eng_resp_xmit(struct softrc_eng_qp *qp,
			 const struct softrc_pkt *pkt,
			 const struct softrc_eng_buf *pl)
{
	static const struct softrc_eng_buf none = { .kind = SOFTRC_BUF_NONE };

	if (qp->ops->xmit(qp->ctx, pkt, pl ? pl : &none))
		return SOFTRC_E_MEM;
	qp->cnt.tx_pkts++;
	return 0;
}

void softrc_eng_resp_send_aeth(struct softrc_eng_qp *qp, u8 syndrome,
			       u32 psn)
{
	struct softrc_pkt pkt;

	softrc_eng_resp_pkt_init(qp, &pkt, SOFTRC_OP_ACKNOWLEDGE, psn);
	if (softrc_syndrome_type(syndrome) != SOFTRC_AETH_ACK)
		pkt.syndrome = syndrome;
	softrc_eng_resp_xmit(qp, &pkt, NULL);
}

/*
 * The held fatal NAK (invalid request, remote access or remote
 * operational error) for epsn, which acknowledges everything before it;
 * then ERROR.
 */
static void softrc_resp_send_fatal(struct softrc_eng_qp *qp)
{
	u8 nak = softrc_syndrome_value(qp->resp.fatal_held);

	qp->resp.fatal_held = 0;
	if (nak == SOFTRC_NAK_INVALID_REQ)
		qp->cnt.inv_req_naks_sent++;
	else if (nak == SOFTRC_NAK_REMOTE_ACCESS)
		qp->cnt.rem_access_naks_sent++;
	else
		qp->cnt.rem_op_naks_sent++;
	softrc_eng_resp_send_aeth(qp, SOFTRC_AETH_NAK | nak, qp->resp.epsn);
	softrc_eng_enter_error(qp);
}

/*
 * Send the held fatal NAK (then ERROR), else the held NAK (it
 * acknowledges everything before epsn), else the coalesced ACK (it covers
 * epsn - 1). True if a packet left.
 */
bool softrc_eng_resp_send_ctl(struct softrc_eng_qp *qp)
{
	struct softrc_eng_resp *resp = &qp->resp;
	u8 nak = resp->nak_held;

	if (resp->fatal_held) {
		softrc_resp_send_fatal(qp);
		return true;
	}
	resp->ack_held = false;
	resp->nak_held = 0;
	if (nak) {
		resp->ack_pending = false;
		softrc_eng_resp_send_aeth(qp, nak, resp->epsn);
		return true;
	}
	if (!resp->ack_pending)
		return false;
	resp->ack_pending = false;
	qp->cnt.acks_sent++;
	softrc_eng_resp_send_aeth(qp, SOFTRC_AETH_ACK,
				  softrc_psn_add(resp->epsn, SOFTRC_PSN_MASK));
	return true;
}

/* Send the coalesced ACK, if one is due, unless responses are queued. */
void softrc_eng_resp_flush(struct softrc_eng_qp *qp)
{
	struct softrc_eng_resp *resp = &qp->resp;

	if (resp->rd_pend) {
		resp->ack_held = resp->ack_pending || resp->nak_held ||
				 resp->fatal_held;
		return;
	}
	softrc_eng_resp_send_ctl(qp);
}

/*
 * The coalesced ACK into @ack instead of out through ops->xmit, when it
 * is all there is to send (no fatal or sequence NAK held, no response
 * queued); anything else is flushed as softrc_eng_resp_flush() does.
 * The ACK counts as sent: the glue sends it.
 */
bool softrc_eng_resp_take_ack(struct softrc_eng_qp *qp, struct softrc_pkt *ack)
{
	struct softrc_eng_resp *resp = &qp->resp;

	if (resp->rd_pend || resp->fatal_held || resp->nak_held ||
	    !resp->ack_pending) {
		softrc_eng_resp_flush(qp);
		return false;
	}
	resp->ack_held = false;
	resp->ack_pending = false;
	qp->cnt.acks_sent++;
	qp->cnt.tx_pkts++;
	softrc_eng_resp_pkt_init(qp, ack, SOFTRC_OP_ACKNOWLEDGE,
				 softrc_psn_add(resp->epsn, SOFTRC_PSN_MASK));
	return true;
}

/* A sequence-error or RNR NAK for epsn, in PSN order. */
static void softrc_resp_nak_epsn(struct softrc_eng_qp *qp, u8 syndrome)
{
	struct softrc_eng_resp *resp = &qp->resp;

	resp->nak_sent = true;
	if (resp->rd_pend) {
		resp->nak_held = syndrome;
		resp->ack_held = true;
		return;
	}
	softrc_eng_resp_flush(qp);
	softrc_eng_resp_send_aeth(qp, syndrome, resp->epsn);
}

/*
 * A new READ/ATOMIC is about to be answered: the pending ACK goes first,
 * or, behind queued responses, is dropped (the new response acknowledges
 * everything before it, and in order).
 */
void softrc_eng_resp_ack_before(struct softrc_eng_qp *qp)
{
	if (!qp->resp.rd_pend) {
		softrc_eng_resp_flush(qp);
		return;
	}
	qp->resp.ack_pending = false;
	qp->resp.ack_held = false;
}

static void softrc_resp_complete_recv(struct softrc_eng_qp *qp, u8 status,
				      const struct softrc_pkt *pkt, u32 len)
{
	u32 slot = qp->resp.rq_head & (qp->st.rq_depth - 1);
	struct softrc_eng_cqe cqe;

	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = qp->st.rq[slot].wr_id;
	cqe.status = status;
	cqe.flags = SOFTRC_CQE_RECV;
	cqe.slot = slot;
	cqe.opcode = softrc_pkt_has(pkt, SOFTRC_OPF_WRITE) ?
		     SOFTRC_WC_RECV_RDMA_WITH_IMM : SOFTRC_WC_RECV;
	if (!status) {
		cqe.byte_len = len;
		if (pkt->se)
			cqe.flags |= SOFTRC_CQE_SOLICITED;
		if (softrc_pkt_has(pkt, SOFTRC_H_IMMDT)) {
			cqe.flags |= SOFTRC_CQE_WITH_IMM;
			cqe.imm = pkt->imm;
		}
		if (softrc_pkt_has(pkt, SOFTRC_H_IETH)) {
			cqe.flags |= SOFTRC_CQE_WITH_INV;
			cqe.inv_rkey = pkt->inv_rkey;
		}
	}
	qp->resp.rq_head++;
	qp->ops->complete(qp->ctx, &cqe);
}

static bool softrc_resp_is_uc(const struct softrc_eng_qp *qp)
{
	return qp->attr.transport == SOFTRC_OPCODE_UC;
}

/*
 * UC (IBTA ch. 9.8.3, 9.8.4): nothing is ever NAKed or retried. The
 * message in progress is dropped: a SEND's receive WQE stays at the head
 * for the next message, a WRITE's context lets go of its R_Key pin, and
 * the packets that still belong to it are dropped in IDLE until a FIRST
 * or ONLY opens the next message.
 */
static void softrc_resp_uc_drop(struct softrc_eng_qp *qp)
{
	struct softrc_eng_resp *resp = &qp->resp;

	qp->cnt.uc_drop_msgs++;
	softrc_eng_resp_write_end(qp);
	resp->offset = 0;
	resp->state = SOFTRC_RESP_IDLE;
}

/*
 * Fatal request error: fail the receive WQE the message holds (if
 * @recv_status), NAK the request and move the QP to ERROR (which flushes
 * the rest). Responses already owed to earlier requests go first (IBTA
 * 9.5: in request order; the NAK's MSN counts them as done): behind them
 * the NAK is held, every later request is dropped, and ERROR comes once
 * the NAK is out.
 */
void softrc_eng_resp_fail(struct softrc_eng_qp *qp,
			  const struct softrc_pkt *pkt, u8 nak,
			  u8 recv_status)
{
	struct softrc_eng_resp *resp = &qp->resp;

	/*
	 * UC: what the receiver cannot hold (too long for its WQE, memory
	 * gone) fails that WQE and the QP, without a NAK; whatever else the
	 * sender got wrong (a bad R_Key, a malformed message) only drops
	 * the message, and the PSN moves on past it.
	 */
	if (softrc_resp_is_uc(qp)) {
		if (recv_status == SOFTRC_WC_LOC_LEN_ERR ||
		    recv_status == SOFTRC_WC_LOC_PROT_ERR) {
			softrc_eng_resp_write_end(qp);
			if (resp->rq_head != resp->rq_tail)
				softrc_resp_complete_recv(qp, recv_status, pkt,
							  0);
			softrc_eng_enter_error(qp);
			return;
		}
		softrc_resp_uc_drop(qp);
		softrc_eng_resp_epsn_add(qp, 1);
		return;
	}
	if (recv_status && resp->rq_head != resp->rq_tail)
		softrc_resp_complete_recv(qp, recv_status, pkt, 0);
	if (!resp->rd_pend)
		softrc_eng_resp_flush(qp);	/* the coalesced ACK first */
	resp->fatal_held = SOFTRC_AETH_NAK | nak;
	resp->state = SOFTRC_RESP_ERROR;
	if (resp->rd_pend) {
		/* the NAK covers the ACK or NAK held for an earlier PSN */
		resp->nak_held = 0;
		resp->ack_pending = false;
		resp->ack_held = true;
		return;
	}
	softrc_resp_send_fatal(qp);
}

/* The open WRITE's pin is done with (LAST, RNR'd ONLY, new context). */
void softrc_eng_resp_write_end(struct softrc_eng_qp *qp)
{
	void *pin = qp->resp.pin;

	qp->resp.pin = NULL;
	if (pin)
		qp->ops->key_put(qp->ctx, pin);
}

/*
 * No receive WQE: RNR NAK with our min_rnr_timer (table 45). UC has no
 * RNR: the message is dropped (IBTA ch. 9.8.4).
 */
static void softrc_resp_rnr(struct softrc_eng_qp *qp)
{
	if (softrc_resp_is_uc(qp)) {
		qp->cnt.drop_no_recv++;
		softrc_resp_uc_drop(qp);
		softrc_eng_resp_epsn_add(qp, 1);
		return;
	}
	qp->cnt.rnr_naks_sent++;
	softrc_resp_nak_epsn(qp, SOFTRC_AETH_RNR_NAK | qp->attr.min_rnr_timer);
}

/*
 * Is the operation enabled on the QP? Checked for every length: a
 * zero-length READ/WRITE checks no R_Key, but the QP's enables still
 * apply (as rxe; a zero-length WRITE with immediate would otherwise
 * complete a receive on a QP without remote write).
 */
bool softrc_eng_resp_enabled(const struct softrc_eng_qp *qp, u32 access)
{
	return !(qp->attr.remote_deny & access);
}

/* Payload length rules per position (§9.7); false = invalid request. */
static bool softrc_resp_len_ok(const struct softrc_eng_qp *qp,
			       const struct softrc_pkt *pkt)
{
	u32 pos = pkt->op->flags & SOFTRC_OPF_POS_MASK;
	u32 len = pkt->payload_len;

	if (pos == SOFTRC_OPF_ONLY)
		return len <= qp->attr.pmtu;
	if (pos == SOFTRC_OPF_LAST)
		return len && len <= qp->attr.pmtu;
	return len == qp->attr.pmtu;
}

/* One request packet executed: advance, ack if asked, close at LAST. */
static void softrc_resp_advance(struct softrc_eng_qp *qp,
				const struct softrc_pkt *pkt)
{
	struct softrc_eng_resp *resp = &qp->resp;

	softrc_eng_resp_epsn_add(qp, 1);
	if (softrc_pkt_has(pkt, SOFTRC_OPF_LAST)) {
		resp->msn = softrc_psn_add(resp->msn, 1);
		resp->state = SOFTRC_RESP_IDLE;
	}
	if (pkt->ackreq && !softrc_resp_is_uc(qp))
		resp->ack_pending = true;
}

static void softrc_resp_send_data(struct softrc_eng_qp *qp,
				  const struct softrc_pkt *pkt, void *rx)
{
	struct softrc_eng_resp *resp = &qp->resp;
	u32 slot = resp->rq_head & (qp->st.rq_depth - 1);
	struct softrc_eng_buf dst = {
		.kind = SOFTRC_BUF_RECV_WQE,
		.slot = slot,
		.addr = resp->offset,
		.len = pkt->payload_len,
	};

	if (!softrc_resp_len_ok(qp, pkt)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ,
				     SOFTRC_WC_LOC_LEN_ERR);
		return;
	}
	if ((u64)resp->offset + dst.len > qp->st.rq[slot].length) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ,
				     SOFTRC_WC_LOC_LEN_ERR);
		return;
	}
	/*
	 * An R_Key that cannot be invalidated is the sender's invalid
	 * request: NAK it, and the receive WQE says so too
	 * (REM_INV_REQ_ERR, as rxe's class J; it is no local protection
	 * error of the receive WQE's own buffers).
	 */
	if (softrc_pkt_has(pkt, SOFTRC_OPF_INV) &&
	    qp->ops->invalidate(qp->ctx, pkt->inv_rkey)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ,
				     SOFTRC_WC_REM_INV_REQ_ERR);
		return;
	}
	if (dst.len && qp->ops->place(qp->ctx, &dst, rx, pkt->payload_off)) {
		/* the receive buffer went away after it was posted */
		qp->cnt.mem_errors++;
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_REMOTE_OP_ERR,
				     SOFTRC_WC_LOC_PROT_ERR);
		return;
	}
	resp->offset += dst.len;
	if (softrc_pkt_has(pkt, SOFTRC_OPF_LAST))
		softrc_resp_complete_recv(qp, SOFTRC_WC_SUCCESS, pkt,
					  resp->offset);
	softrc_resp_advance(qp, pkt);
}

/* SEND_FIRST / SEND_ONLY*: take the receive WQE, or RNR NAK. */
static void softrc_resp_start_send(struct softrc_eng_qp *qp,
				   const struct softrc_pkt *pkt, void *rx)
{
	if (qp->resp.rq_head == qp->resp.rq_tail) {
		softrc_resp_rnr(qp);
		return;
	}
	qp->resp.offset = 0;
	if (!softrc_pkt_has(pkt, SOFTRC_OPF_LAST))
		qp->resp.state = SOFTRC_RESP_IN_SEND;
	softrc_resp_send_data(qp, pkt, rx);
}

static void softrc_resp_write_data(struct softrc_eng_qp *qp,
				   const struct softrc_pkt *pkt, void *rx)
{
	struct softrc_eng_resp *resp = &qp->resp;
	bool last = softrc_pkt_has(pkt, SOFTRC_OPF_LAST);
	struct softrc_eng_buf dst = {
		.kind = SOFTRC_BUF_MR,
		.rkey = resp->rkey,
		.addr = resp->va,
		.len = pkt->payload_len,
		.pin = resp->pin,
	};

	/* the context closes exactly at LAST (softrc.rst, "The protocol core") */
	if (!softrc_resp_len_ok(qp, pkt) || dst.len > resp->remaining ||
	    (last && dst.len != resp->remaining) ||
	    (!last && dst.len == resp->remaining)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ, 0);
		return;
	}
	/* WRITE with immediate consumes a receive WQE at LAST/ONLY */
	if (last && softrc_pkt_has(pkt, SOFTRC_OPF_RECV) &&
	    resp->rq_head == resp->rq_tail) {
		if (resp->state == SOFTRC_RESP_IDLE)
			softrc_eng_resp_write_end(qp);	/* ONLY: checked again */
		softrc_resp_rnr(qp);
		return;
	}
	if (dst.len && qp->ops->place(qp->ctx, &dst, rx, pkt->payload_off)) {
		qp->cnt.mem_errors++;
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_REMOTE_ACCESS, 0);
		return;
	}
	if (last)
		softrc_eng_resp_write_end(qp);
	resp->va += dst.len;
	resp->remaining -= dst.len;
	if (last && softrc_pkt_has(pkt, SOFTRC_OPF_RECV))
		softrc_resp_complete_recv(qp, SOFTRC_WC_SUCCESS, pkt,
					  resp->offset);
	softrc_resp_advance(qp, pkt);
}

/* RDMA_WRITE_FIRST / _ONLY*: set up the context from the RETH (§9.3.3). */
static void softrc_resp_start_write(struct softrc_eng_qp *qp,
				    const struct softrc_pkt *pkt, void *rx)
{
	struct softrc_eng_resp *resp = &qp->resp;

	/* C9-94: a message is at most 2^31 bytes */
	if (!softrc_eng_resp_enabled(qp, SOFTRC_ACCESS_REMOTE_WRITE) ||
	    pkt->dma_len > SOFTRC_MAX_MSG_LEN) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ, 0);
		return;
	}
	softrc_eng_resp_write_end(qp);
	/* one bounds/permission check covers the whole message (ops->mr_check) */
	if (pkt->dma_len && qp->ops->mr_check(qp->ctx, pkt->rkey, pkt->va,
					      pkt->dma_len,
					      SOFTRC_ACCESS_REMOTE_WRITE,
					      &resp->pin)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_REMOTE_ACCESS, 0);
		return;
	}
	resp->va = pkt->va;
	resp->rkey = pkt->rkey;
	resp->remaining = pkt->dma_len;
	resp->offset = pkt->dma_len;	/* byte_len of a WRITE_WITH_IMM */
	if (!softrc_pkt_has(pkt, SOFTRC_OPF_LAST))
		resp->state = SOFTRC_RESP_IN_WRITE;
	softrc_resp_write_data(qp, pkt, rx);
}

/* IDLE: only a FIRST or ONLY may open a message. */
static void softrc_resp_step_idle(struct softrc_eng_qp *qp,
				  const struct softrc_pkt *pkt, void *rx)
{
	u32 flags = pkt->op->flags;

	if (!(flags & SOFTRC_OPF_FIRST) && softrc_resp_is_uc(qp)) {
		/* the rest of a dropped message: resynchronising */
		qp->cnt.drop_out_of_seq++;
		softrc_eng_resp_epsn_add(qp, 1);
		return;
	}
	if (!(flags & SOFTRC_OPF_FIRST)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ, 0);
		return;
	}
	if (flags & SOFTRC_OPF_SEND)
		softrc_resp_start_send(qp, pkt, rx);
	else if (flags & SOFTRC_OPF_WRITE)
		softrc_resp_start_write(qp, pkt, rx);
	else if (flags & SOFTRC_OPF_READ)
		softrc_eng_resp_read(qp, pkt);
	else if (flags & SOFTRC_OPF_ATOMIC_WRITE)
		softrc_eng_resp_atomic_write(qp, pkt, rx);
	else if (flags & SOFTRC_OPF_FLUSH)
		softrc_eng_resp_flush_req(qp, pkt);
	else
		softrc_eng_resp_atomic(qp, pkt);
}

/*
 * UC, a message open: a packet of another message at the expected PSN
 * (its FIRST or ONLY: the sender gave up on the open one) drops the open
 * message and starts the new one; anything else just drops it. False
 * for RC.
 */
static bool softrc_resp_uc_restart(struct softrc_eng_qp *qp,
				   const struct softrc_pkt *pkt, void *rx)
{
	if (!softrc_resp_is_uc(qp))
		return false;
	softrc_resp_uc_drop(qp);
	softrc_resp_step_idle(qp, pkt, rx);
	return true;
}

/* IN_SEND: SEND_MIDDLE or SEND_LAST* of the open message. */
static void softrc_resp_step_send(struct softrc_eng_qp *qp,
				  const struct softrc_pkt *pkt, void *rx)
{
	u32 flags = pkt->op->flags;

	if (!(flags & SOFTRC_OPF_SEND) || (flags & SOFTRC_OPF_FIRST)) {
		if (softrc_resp_uc_restart(qp, pkt, rx))
			return;
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ,
				     SOFTRC_WC_REM_INV_REQ_ERR);
		return;
	}
	softrc_resp_send_data(qp, pkt, rx);
}

/* IN_WRITE: RDMA_WRITE_MIDDLE or _LAST* of the open message. */
static void softrc_resp_step_write(struct softrc_eng_qp *qp,
				   const struct softrc_pkt *pkt, void *rx)
{
	u32 flags = pkt->op->flags;

	if (!(flags & SOFTRC_OPF_WRITE) || (flags & SOFTRC_OPF_FIRST)) {
		if (softrc_resp_uc_restart(qp, pkt, rx))
			return;
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ, 0);
		return;
	}
	softrc_resp_write_data(qp, pkt, rx);
}

static void softrc_resp_step_error(struct softrc_eng_qp *qp,
				   const struct softrc_pkt *pkt, void *rx)
{
	qp->cnt.drop_state++;
}

static void (*const softrc_resp_step[SOFTRC_RESP_NR])(struct softrc_eng_qp *,
						       const struct softrc_pkt *,
						       void *) = {
	[SOFTRC_RESP_IDLE] = softrc_resp_step_idle,
	[SOFTRC_RESP_IN_SEND] = softrc_resp_step_send,
	[SOFTRC_RESP_IN_WRITE] = softrc_resp_step_write,
	[SOFTRC_RESP_ERROR] = softrc_resp_step_error,
};

void softrc_eng_resp_invalid(struct softrc_eng_qp *qp,
			     const struct softrc_pkt *pkt)
{
	if (qp->resp.fatal_held)
		return;		/* a fatal NAK is on its way already */
	softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ,
			     qp->resp.state == SOFTRC_RESP_IN_SEND ?
			     SOFTRC_WC_REM_INV_REQ_ERR : 0);
}

void softrc_eng_resp_rx(struct softrc_eng_qp *qp, const struct softrc_pkt *pkt,
			void *rx)
{
	struct softrc_eng_resp *resp = &qp->resp;

	if (resp->fatal_held) {
		qp->cnt.drop_state++;	/* ERROR once the held NAK is out */
		return;
	}
	/*
	 * UC has no duplicates and no NAKs: any other PSN means packets were
	 * lost; the open message is dropped and the expected PSN taken from
	 * this packet, which opens a message only if it is a FIRST or ONLY
	 * (IBTA ch. 9.8.4).
	 */
	if (softrc_resp_is_uc(qp) && pkt->psn != resp->epsn) {
		qp->cnt.drop_out_of_seq++;
		if (resp->state != SOFTRC_RESP_IDLE)
			softrc_resp_uc_drop(qp);
		resp->epsn = pkt->psn;
	}
	switch (softrc_psn_classify(pkt->psn, resp->epsn)) {
	case SOFTRC_PSN_EXPECTED:
		resp->nak_sent = false;
		resp->nak_held = 0;	/* the gap it named is filled */
		softrc_resp_step[resp->state](qp, pkt, rx);
		break;
	case SOFTRC_PSN_DUPLICATE:
		softrc_eng_resp_duplicate(qp, pkt);
		break;
	case SOFTRC_PSN_FUTURE:
		qp->cnt.drop_out_of_seq++;
		if (resp->nak_sent)
			break;
		qp->cnt.seq_naks_sent++;
		softrc_resp_nak_epsn(qp, SOFTRC_AETH_NAK | SOFTRC_NAK_PSN_SEQ_ERR);
		break;
	}
}

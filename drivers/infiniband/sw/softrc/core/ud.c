// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The UD transport: user and kernel UD QPs and the GSI QP (QP1), whose
 * MADs carry ib_cm's and rdma_cm's connection setup.
 *
 * Context: as the rest of the engine: called with the QP lock held by the
 * glue, softirq or process context; never sleeps. Touches the struct
 * softrc_eng_qp, its rings and qp->ops.
 *
 * A UD message is one packet: SEND ONLY, with or without immediate data,
 * and a DETH (IBTA Vol 1 §9.2.1, §9.3.3). There is no connection, so no
 * PSN check, no ACK, no retry and no RNR NAK (ch. 9.8):
 *  - send: the WQEs go out in post order, each to the address and QP the
 *    glue keeps for its slot (the WR's address handle), and complete as
 *    soon as they are handed to the network. A message above the path MTU
 *    (the port's) completes with a local length error, as does memory
 *    that went away a local protection error; either moves the QP to
 *    ERROR, as a failed RC WQE does.
 *  - receive: the glue has matched the packet to the QP (P_Key, Q_Key);
 *    the oldest receive WQE takes the 40-byte GRH slot (on RoCE it is
 *    always there: the IP header the packet came with), then the
 *    payload. With no WQE posted the message is dropped and counted (UD
 *    has no RNR); a message larger than its WQE completes it with a local
 *    length error and the QP stays usable: one oversized datagram from
 *    anywhere must not take a GSI QP down.
 */
#include "internal.h"

/* The Q_Key a send uses: the QP's own when the WR's has bit 31 set. */
static u32 softrc_ud_qkey(const struct softrc_eng_qp *qp,
			  const struct softrc_eng_send_wr *wr)
{
	return (wr->qkey & BIT(31)) ? qp->attr.qkey : wr->qkey;
}

/* Send the head WQE's message. Return: its completion status. */
static u8 softrc_ud_send(struct softrc_eng_qp *qp, struct softrc_eng_send_wqe *w,
			 u32 slot)
{
	const struct softrc_eng_send_wr *wr = &w->wr;
	bool imm = wr->opcode == SOFTRC_WR_SEND_WITH_IMM;
	struct softrc_eng_buf payload = {
		.kind = SOFTRC_BUF_SEND_WQE,
		.slot = slot,
		.len = wr->length,
	};
	struct softrc_pkt pkt = {
		.opcode = imm ? SOFTRC_OP_UD_SEND_ONLY_WITH_IMMEDIATE :
				SOFTRC_OP_UD_SEND_ONLY,
		.se = !!(wr->send_flags & SOFTRC_SEND_SOLICITED),
		.pkey = qp->attr.pkey,
		.dqpn = wr->dqpn,
		.psn = qp->req.psn_next,
		.qkey = softrc_ud_qkey(qp, wr),
		.sqpn = qp->attr.sqpn,
		.imm = wr->imm,
		.payload_len = wr->length,
	};

	if (wr->opcode == SOFTRC_WR_REFUSED)
		return qp->ops->local(qp->ctx, slot);
	if (wr->length > qp->attr.pmtu)
		return SOFTRC_WC_LOC_LEN_ERR;
	pkt.op = softrc_opcode_get(pkt.opcode);
	/* the PSN only counts packets: the receiver checks none (ch. 9.8) */
	qp->req.psn_next = softrc_psn_add(qp->req.psn_next, 1);
	if (qp->ops->xmit(qp->ctx, &pkt, &payload)) {
		qp->cnt.mem_errors++;
		return SOFTRC_WC_LOC_PROT_ERR;
	}
	qp->cnt.tx_pkts++;
	return SOFTRC_WC_SUCCESS;
}

/**
 * softrc_eng_ud_tx() - send queued UD messages
 * @qp:		a UD QP in RTS (or SQD: then none, as UD has nothing in flight)
 * @budget:	most messages to send
 *
 * Return: messages sent (or failed); @budget means there may be more.
 */
u32 softrc_eng_ud_tx(struct softrc_eng_qp *qp, u32 budget)
{
	struct softrc_eng_req *req = &qp->req;
	u32 n;

	for (n = 0; n < budget && req->head != req->tail && !req->drain; n++) {
		u32 slot = softrc_sq_slot(qp, req->head);
		struct softrc_eng_send_wqe *w = softrc_sq_wqe(qp, req->head);
		u8 status = softrc_ud_send(qp, w, slot);

		w->state = SOFTRC_WQE_DONE;
		req->head++;
		req->cur = req->head;
		if (!status && !(w->wr.send_flags & SOFTRC_SEND_SIGNALED))
			continue;
		softrc_eng_comp_send_cqe(qp, w, slot, status);
		if (status) {
			softrc_eng_enter_error(qp);
			return n + 1;
		}
	}
	return n;
}

/**
 * softrc_eng_ud_rx() - one UD packet the glue matched to @qp
 * @qp:		a UD QP in RTR, RTS or SQD, not in ERROR
 * @pkt:	the parsed packet (UD SEND ONLY, with its DETH)
 * @rx:		the glue's receive context, handed back to ops->place*
 */
void softrc_eng_ud_rx(struct softrc_eng_qp *qp, const struct softrc_pkt *pkt,
		      void *rx)
{
	struct softrc_eng_resp *resp = &qp->resp;
	u32 len = SOFTRC_GRH_BYTES + pkt->payload_len;
	struct softrc_eng_buf dst = { .kind = SOFTRC_BUF_RECV_WQE };
	struct softrc_eng_cqe cqe;
	u32 slot;

	if (resp->rq_head == resp->rq_tail) {
		qp->cnt.drop_no_recv++;
		return;
	}
	slot = resp->rq_head & (qp->st.rq_depth - 1);
	memset(&cqe, 0, sizeof(cqe));
	cqe.wr_id = qp->st.rq[slot].wr_id;
	cqe.opcode = SOFTRC_WC_RECV;
	cqe.flags = SOFTRC_CQE_RECV;
	cqe.slot = slot;
	resp->rq_head++;
	if (len > qp->st.rq[slot].length) {
		qp->cnt.ud_len_errors++;
		cqe.status = SOFTRC_WC_LOC_LEN_ERR;
		qp->ops->complete(qp->ctx, &cqe);
		return;
	}
	dst.slot = slot;
	dst.len = SOFTRC_GRH_BYTES;
	if (!qp->ops->place_grh(qp->ctx, &dst, rx)) {
		dst.addr = SOFTRC_GRH_BYTES;
		dst.len = pkt->payload_len;
		if (dst.len && qp->ops->place(qp->ctx, &dst, rx,
					      pkt->payload_off))
			cqe.status = SOFTRC_WC_LOC_PROT_ERR;
	} else {
		cqe.status = SOFTRC_WC_LOC_PROT_ERR;
	}
	if (cqe.status) {
		qp->cnt.mem_errors++;
	} else {
		cqe.byte_len = len;
		cqe.flags |= SOFTRC_CQE_GRH;
		if (pkt->se)
			cqe.flags |= SOFTRC_CQE_SOLICITED;
		cqe.src_qp = pkt->sqpn;
		cqe.rx = rx;
		if (softrc_pkt_has(pkt, SOFTRC_H_IMMDT)) {
			cqe.flags |= SOFTRC_CQE_WITH_IMM;
			cqe.imm = pkt->imm;
		}
	}
	qp->ops->complete(qp->ctx, &cqe);
}

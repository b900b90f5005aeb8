/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The engine's private declarations, shared by the core's own files
 * (engine.c, req.c, resp.c, resp_res.c, comp.c, ud.c) and the host
 * suites in selftests/core, which test them. No module file includes it: the
 * module sees core/engine.h alone (`make style` checks it).
 *
 * Context: as engine.h: called with the QP lock held, never sleeps.
 */
#ifndef SOFTRC_CORE_INTERNAL_H
#define SOFTRC_CORE_INTERNAL_H

#include "engine.h"

/* Most PSNs outstanding at the requester: below the 2^23 window (req.c). */
#define SOFTRC_REQ_MAX_SPAN	(SOFTRC_PSN_WINDOW - 1)

/* READ response packets the rx call of a READ may send before pacing. */
#define SOFTRC_RESP_INLINE	16

/* Largest message and RETH DMA length (IBTA C9-94: 2^31 bytes). */
#define SOFTRC_MAX_MSG_LEN	BIT(31)

/*
 * PSNs one READ may reserve: half the 2^23 window. The requester starts a
 * WQE only while fewer than max_unacked (<= 2^22) PSNs are outstanding,
 * so a READ never pushes the outstanding span to the window edge, and
 * the oldest unacknowledged PSN always stays a duplicate at the
 * responder. At PMTU 256 this caps a READ at 1 GiB; from PMTU 512 on,
 * SOFTRC_MAX_MSG_LEN is the tighter bound.
 */
#define SOFTRC_READ_MAX_PSNS	(SOFTRC_PSN_WINDOW / 2)

/* ud.c: the UD transport (one packet per message, no ACK) */
u32 softrc_eng_ud_tx(struct softrc_eng_qp *qp, u32 budget);
void softrc_eng_ud_rx(struct softrc_eng_qp *qp, const struct softrc_pkt *pkt,
		      void *rx);

/* req.c */
u64 softrc_eng_ack_timeout_ns(u8 timeout);
u64 softrc_eng_rnr_timer_ns(u8 code);
u32 softrc_eng_wqe_npkts(const struct softrc_eng_send_wr *wr, u32 pmtu);

/* resp.c */
void softrc_eng_resp_rx(struct softrc_eng_qp *qp, const struct softrc_pkt *pkt,
			void *rx);
void softrc_eng_resp_flush(struct softrc_eng_qp *qp);
bool softrc_eng_resp_take_ack(struct softrc_eng_qp *qp, struct softrc_pkt *ack);
void softrc_eng_resp_invalid(struct softrc_eng_qp *qp,
			     const struct softrc_pkt *pkt);
u8 softrc_eng_credit_code(u32 wqes);
u32 softrc_eng_credit_value(u8 code);
void softrc_eng_resp_pkt_init(struct softrc_eng_qp *qp, struct softrc_pkt *pkt,
			      u8 opcode, u32 psn);
int softrc_eng_resp_xmit(struct softrc_eng_qp *qp, const struct softrc_pkt *pkt,
			 const struct softrc_eng_buf *pl);
void softrc_eng_resp_send_aeth(struct softrc_eng_qp *qp, u8 syndrome, u32 psn);
bool softrc_eng_resp_send_ctl(struct softrc_eng_qp *qp);
void softrc_eng_resp_ack_before(struct softrc_eng_qp *qp);
void softrc_eng_resp_fail(struct softrc_eng_qp *qp,
			  const struct softrc_pkt *pkt, u8 nak, u8 recv_status);
void softrc_eng_resp_write_end(struct softrc_eng_qp *qp);
bool softrc_eng_resp_enabled(const struct softrc_eng_qp *qp, u32 access);

/* resp_res.c: the responder resources and the response queue */
u32 softrc_eng_read_npkts(u32 len, u32 pmtu);
void softrc_eng_resp_res_release_all(struct softrc_eng_qp *qp);
void softrc_eng_resp_release_pins(struct softrc_eng_qp *qp);
void softrc_eng_resp_epsn_add(struct softrc_eng_qp *qp, u32 n);
void softrc_eng_resp_read(struct softrc_eng_qp *qp,
			  const struct softrc_pkt *pkt);
void softrc_eng_resp_atomic(struct softrc_eng_qp *qp,
			    const struct softrc_pkt *pkt);
void softrc_eng_resp_atomic_write(struct softrc_eng_qp *qp,
				  const struct softrc_pkt *pkt, void *rx);
void softrc_eng_resp_flush_req(struct softrc_eng_qp *qp,
			       const struct softrc_pkt *pkt);
void softrc_eng_resp_duplicate(struct softrc_eng_qp *qp,
			       const struct softrc_pkt *pkt);

/* comp.c */
void softrc_eng_comp_rx(struct softrc_eng_qp *qp, const struct softrc_pkt *pkt,
			void *rx, u64 now);

/* internal, shared by the stage files */
void softrc_eng_enter_error(struct softrc_eng_qp *qp);
void softrc_eng_timer_set(struct softrc_eng_qp *qp, enum softrc_eng_timer_id id,
			  u64 deadline);
void softrc_eng_req_go_back(struct softrc_eng_qp *qp, u32 psn);
void softrc_eng_req_progress(struct softrc_eng_qp *qp, u64 now);
void softrc_eng_req_retry_from(struct softrc_eng_qp *qp, u32 psn, u64 now,
			       enum softrc_eng_retry_reason why);
void softrc_eng_req_retransmit(struct softrc_eng_qp *qp, u32 psn,
			       enum softrc_eng_retry_reason why);
u64 softrc_eng_req_deadline(const struct softrc_eng_qp *qp, u64 now, u64 dur);
void softrc_eng_req_probe_fired(struct softrc_eng_qp *qp, u64 now);
void softrc_eng_comp_fail_at(struct softrc_eng_qp *qp, u32 psn, u8 status);
void softrc_eng_comp_retire(struct softrc_eng_qp *qp);
void softrc_eng_comp_send_cqe(struct softrc_eng_qp *qp,
			      const struct softrc_eng_send_wqe *w, u32 slot, u8 status);
u8 softrc_eng_wc_opcode_of(u8 wr_opcode);

static inline struct softrc_eng_send_wqe *softrc_sq_wqe(struct softrc_eng_qp *qp,
							u32 idx)
{
	return &qp->st.sq[idx & (qp->st.sq_depth - 1)];
}

static inline u32 softrc_sq_slot(const struct softrc_eng_qp *qp, u32 idx)
{
	return idx & (qp->st.sq_depth - 1);
}

/* Answered by a response carrying data: READ and the AtomicETH atomics. */
static inline bool softrc_wr_is_rd_atomic(u8 opcode)
{
	return opcode == SOFTRC_WR_RDMA_READ ||
	       opcode == SOFTRC_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == SOFTRC_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * Takes a responder resource at the peer, so it counts in max_rd_atomic
 * (req.rd_out) and a fence waits for it: the READ/ATOMICs, ATOMIC_WRITE
 * (IBTA 1.5; rxe counts it the same way) and FLUSH (IBTA 1.5 A19: the
 * responder keeps a resource for it, as rxe's does). Both are
 * acknowledged like a WRITE, though: any ACK covering the PSN completes
 * them, so no implied NAK stops at them.
 */
static inline bool softrc_wr_takes_res(u8 opcode)
{
	return softrc_wr_is_rd_atomic(opcode) ||
	       opcode == SOFTRC_WR_ATOMIC_WRITE || opcode == SOFTRC_WR_FLUSH;
}

/* Answered by a zero-length READ RESPONSE ONLY (IBTA 1.5, as rxe). */
static inline bool softrc_wr_is_empty_resp(u8 opcode)
{
	return opcode == SOFTRC_WR_ATOMIC_WRITE || opcode == SOFTRC_WR_FLUSH;
}

static inline bool softrc_wr_is_atomic(u8 opcode)
{
	return opcode == SOFTRC_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == SOFTRC_WR_ATOMIC_FETCH_AND_ADD;
}

/* Executed by the requester itself: no packet, no PSN, no SSN. */
static inline bool softrc_wr_is_local(u8 opcode)
{
	return opcode == SOFTRC_WR_LOCAL_INV || opcode == SOFTRC_WR_BIND_MW ||
	       opcode == SOFTRC_WR_REG_MR || opcode == SOFTRC_WR_REFUSED;
}

static inline bool softrc_wr_consumes_recv(u8 opcode)
{
	return opcode == SOFTRC_WR_SEND || opcode == SOFTRC_WR_SEND_WITH_IMM ||
	       opcode == SOFTRC_WR_SEND_WITH_INV ||
	       opcode == SOFTRC_WR_RDMA_WRITE_WITH_IMM;
}

static inline u32 softrc_wqe_last_psn(const struct softrc_eng_send_wqe *w)
{
	return softrc_psn_add(w->first_psn, w->npkts - 1);
}

#endif /* SOFTRC_CORE_INTERNAL_H */

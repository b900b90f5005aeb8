/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * wr.c: a send WR in one shape from either source, translated and
 * checked for the engine, and the pins of the SGEs beside the engine's
 * ring slots.
 *
 * Context: with qp->lock held, except softrc_wr_wc_opcode() and
 * softrc_wr_is_inline_op().
 */
#ifndef SOFTRC_WR_H
#define SOFTRC_WR_H

#include <rdma/ib_verbs.h>

#include "qp.h"

struct rxe_send_wqe;

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
	struct softrc_eng_send_wr wr;
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

/* the pins of a shadow slot's SGEs */
void softrc_qp_sq_unpin(struct softrc_qp *qp, u32 slot);
void softrc_qp_rq_unpin(struct softrc_qp *qp, u32 slot);
s64 softrc_sge_total(const struct ib_sge *sge, u32 n);
int softrc_sges_pin(struct softrc_qp *qp, const struct ib_sge *sge,
		    u32 n, int access, struct softrc_mr **pins);

/* send WRs */
u8 softrc_wr_wc_opcode(u32 wr_opcode);
bool softrc_wr_is_inline_op(u32 opcode);
u8 softrc_swr_check(struct softrc_qp *qp, struct softrc_swr *s,
		    struct softrc_mr **pins);
void softrc_swr_from_ib(struct softrc_qp *qp, struct softrc_swr *s,
			const struct ib_send_wr *wr);
int softrc_swr_kernel_inline(struct softrc_qp *qp, struct softrc_swr *s,
			     u8 *buf);
void softrc_swr_from_user(struct softrc_qp *qp, struct softrc_swr *s,
			  const struct rxe_send_wqe *u);

#endif /* SOFTRC_WR_H */

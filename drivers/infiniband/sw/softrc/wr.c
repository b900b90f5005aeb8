// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Work requests on their way to the engine: a send WR from a kernel ULP
 * or a copied user WQE translated into one shape (struct softrc_swr) and
 * the engine's, and checked against the QP's limits and the memory it
 * names; and the SGE bookkeeping beside the engine's ring slots: the MRs
 * pinned for the SGEs of each send and receive shadow, from post until
 * the slot is free.
 *
 * Context: with qp->lock held (the post verbs, the user-ring ingest in
 * any of the QP's contexts), except softrc_wr_wc_opcode() and
 * softrc_wr_is_inline_op(), which read nothing but their argument.
 *
 * Touches: the WR being translated, the shadow slots' pins, MRs through
 * mr.h (lookups and pins only), the device's AH table (a UD WR's
 * destination). A user WQE is read from its kernel copy only.
 */
#include <rdma/ib_mad.h>
#include <rdma/rdma_user_rxe.h>

#include "compat.h"
#include "qp.h"
#include "wr.h"
#include "mr.h"
#include "ah.h"

#define SOFTRC_SEND_FLAGS	(IB_SEND_FENCE | IB_SEND_SIGNALED | \
				 IB_SEND_SOLICITED | IB_SEND_INLINE)

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

/* Sum of SGE lengths, or -EINVAL past the message size limit. */
s64 softrc_sge_total(const struct ib_sge *sge, u32 n)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < n; i++)
		sum += sge[i].length;
	return sum > SOFTRC_MAX_MSG_SIZE ? -EINVAL : (s64)sum;
}

/* Check and pin @n SGEs into @pins; on failure nothing stays pinned. */
int softrc_sges_pin(struct softrc_qp *qp, const struct ib_sge *sge,
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

/* ---- send WRs ------------------------------------------------------- */

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

u8 softrc_wr_wc_opcode(u32 wr_opcode)
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
bool softrc_wr_is_inline_op(u32 opcode)
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
	u32 slot = softrc_eng_sq_next(&qp->core) & (qp->sq_depth - 1);
	struct softrc_path *p = &qp->sqs[slot].local.ud;
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

/* A send WR's SGE total into s->wr.length; -EINVAL: too many, too long. */
static int softrc_swr_sge_length(struct softrc_qp *qp, struct softrc_swr *s)
{
	s64 len;

	if (s->num_sge > qp->max_sge)
		return -EINVAL;
	len = softrc_sge_total(s->sge, s->num_sge);
	if (len < 0)
		return -EINVAL;
	s->wr.length = len;
	return 0;
}

/*
 * Check a send WR against the QP's limits and the memory it names, and
 * pin its SGEs' MRs into @pins. Return: 0, or the completion status of a
 * bad WR (nothing pinned).
 */
u8 softrc_swr_check(struct softrc_qp *qp, struct softrc_swr *s,
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
		if (s->sge && softrc_swr_sge_length(qp, s))
			return IB_WC_LOC_LEN_ERR;
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
	if (softrc_swr_sge_length(qp, s))
		return IB_WC_LOC_LEN_ERR;
	len = s->wr.length;
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

void softrc_swr_from_ib(struct softrc_qp *qp, struct softrc_swr *s,
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
int softrc_swr_kernel_inline(struct softrc_qp *qp, struct softrc_swr *s,
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

/* Convert a copied user send WQE (softrc_swr_check() refuses a bad shape). */
void softrc_swr_from_user(struct softrc_qp *qp, struct softrc_swr *s,
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

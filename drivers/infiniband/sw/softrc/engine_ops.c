// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The engine's callbacks (struct softrc_eng_ops): packets out, memory
 * checks and payload placement, atomics, invalidation, completions,
 * timers and the ERROR transition.
 *
 * Context: every callback runs inside an engine call, so with qp->lock
 * held (asserted), in process context with BH off or in softirq; none
 * sleeps. The receive context @rx is the struct softrc_rx (rx.h) of the
 * packet being processed; ops->complete finds it in the CQE (cqe->rx) of
 * a receive that a packet completed with a GRH.
 *
 * Touches: MRs and MWs (mr.h, mw.h, mem.h: R_Key checks that return pins,
 * accesses through the pins the engine or the shadows hold, invalidate,
 * bind; memory references dropped before returning), the QP's
 * send/receive shadows,
 * its pending-completion queue (handed to the CQs after the lock is
 * dropped), its timers, and the transmit path of tx.c. Tracepoints
 * (trace.h): pkt_tx, nak_tx, complete, qp_state (transport error),
 * retransmit, rnr_wait and timer_expire.
 */
#include <linux/ipv6.h>
#include <linux/skbuff.h>
#include <net/ip.h>

#include "qp.h"
#include "timers.h"
#include "post.h"
#include "wr.h"
#include "deliver.h"
#include "engine_ops.h"
#include "rx.h"
#include "tx.h"
#include "copy.h"
#include "mr.h"
#include "mw.h"
#include "mem.h"
#include "core/engine.h"
#include "trace.h"

static struct softrc_qp *softrc_glue_qp(void *ctx)
{
	struct softrc_qp *qp = ctx;

	lockdep_assert_held(&qp->lock);
	return qp;
}

/* ---- memory helpers ----------------------------------------------- */

/*
 * Move @len bytes between local key memory (@lkey, @va) and @buf, or from
 * the skb when @skb is set. @mr is the MR the post pinned for this SGE:
 * the access goes through it, never through a new lookup of @lkey. Only
 * a kernel QP has SGEs without a pin: the device's local DMA key (kernel
 * virtual addresses) and fast-register MRs (registered by an earlier WR,
 * so checked in full at every use). -EFAULT if the memory went away.
 */
static int softrc_glue_lkey_io(struct softrc_qp *qp, u32 lkey,
			       struct softrc_mr *mr, u64 va, void *buf,
			       struct sk_buff *skb, int skb_off, u32 len,
			       enum softrc_copy_dir dir)
{
	void *p = (void *)(uintptr_t)va;
	int err;

	if (!mr && qp->is_user)
		return -EFAULT;
	if (!mr && lkey == qp->sdev->ib_dev.local_dma_lkey) {
		if (skb)
			return softrc_skb_copy_bits(skb, skb_off, p, len) ?
			       -EFAULT : 0;
		if (dir == SOFTRC_TO_MR)
			softrc_net_copy(p, buf, len);
		else
			softrc_net_copy(buf, p, len);
		return 0;
	}
	if (mr && !softrc_mr_enter(mr))
		return -EFAULT;
	if (!mr) {
		mr = softrc_mr_get(qp->sdev, lkey);
		if (!mr)
			return -EFAULT;
		if (softrc_mr_check(mr, qp->ibqp.pd, lkey, va, len,
				    dir == SOFTRC_TO_MR ?
				    IB_ACCESS_LOCAL_WRITE : 0)) {
			softrc_mr_put(mr);
			return -EFAULT;
		}
	}
	if (skb)
		err = softrc_mr_copy_skb(mr, va, skb, skb_off, len);
	else
		err = softrc_mr_copy(mr, va, buf, len, dir);
	softrc_mr_put(mr);
	return err ? -EFAULT : 0;
}

/**
 * struct softrc_sge_cursor - a walk over @len bytes of an SGE list
 * @sge:	the list
 * @pin:	the MR pinned for each SGE (NULL entries: see lkey_io)
 * @nsge:	its length
 * @i:		current SGE
 * @off:	byte offset in it
 * @len:	bytes still to visit; non-zero after the walk means the list
 *		was too short
 */
struct softrc_sge_cursor {
	const struct ib_sge *sge;
	struct softrc_mr *const *pin;
	u32 nsge;
	u32 i;
	u64 off;
	u32 len;
};

/* Start a walk at byte @off of the list, for @len bytes. */
static void softrc_sge_seek(struct softrc_sge_cursor *c,
			    const struct ib_sge *sge,
			    struct softrc_mr *const *pin, u32 nsge, u64 off,
			    u32 len)
{
	c->sge = sge;
	c->pin = pin;
	c->nsge = nsge;
	c->len = len;
	for (c->i = 0; c->i < nsge && off >= sge[c->i].length; c->i++)
		off -= sge[c->i].length;
	c->off = off;
}

/*
 * The next non-empty piece (@lkey, its pinned @mr, @va, @n); false when
 * the walk is over.
 */
static bool softrc_sge_next(struct softrc_sge_cursor *c, u32 *lkey,
			    struct softrc_mr **mr, u64 *va, u32 *n)
{
	const struct ib_sge *s;

	for (; c->len && c->i < c->nsge; c->i++, c->off = 0) {
		s = &c->sge[c->i];
		*n = min_t(u64, c->len, s->length - c->off);
		if (!*n)
			continue;
		*lkey = s->lkey;
		*mr = c->pin[c->i];
		*va = s->addr + c->off;
		c->len -= *n;
		c->i++;
		c->off = 0;
		return true;
	}
	return false;
}

/*
 * Walk an SGE list from byte @off for @len bytes, moving each piece
 * between the SGE's memory and @buf (or the skb at @skb_off).
 */
static int softrc_glue_sge_io(struct softrc_qp *qp, const struct ib_sge *sge,
			      struct softrc_mr *const *pin, u32 nsge, u64 off,
			      u8 *buf, struct sk_buff *skb, int skb_off,
			      u32 len, enum softrc_copy_dir dir)
{
	struct softrc_sge_cursor c;
	struct softrc_mr *mr;
	u32 lkey, n;
	u64 va;
	int err;

	softrc_sge_seek(&c, sge, pin, nsge, off, len);
	while (softrc_sge_next(&c, &lkey, &mr, &va, &n)) {
		err = softrc_glue_lkey_io(qp, lkey, mr, va, buf, skb, skb_off,
					  n, dir);
		if (err)
			return err;
		if (buf)
			buf += n;
		skb_off += n;
	}
	return c.len ? -EFAULT : 0;
}

/*
 * Fill @dst with the payload the engine names (TX). -EFAULT: its memory
 * went away since the check (the engine fails the message).
 */
int softrc_glue_fill(struct softrc_qp *qp, const struct softrc_eng_buf *pl, u8 *dst)
{
	struct softrc_sq_shadow *sh;
	struct softrc_mr *mr;
	int err;

	switch (pl->kind) {
	case SOFTRC_BUF_SEND_WQE:
		sh = &qp->sqs[pl->slot];
		if (sh->flags & SOFTRC_SQS_INLINE) {
			if (pl->addr + pl->len > sh->length)
				return -EFAULT;
			softrc_net_copy(dst, (u8 *)softrc_qp_sq_sge(qp, pl->slot) +
					pl->addr, pl->len);
			return 0;
		}
		return softrc_glue_sge_io(qp, softrc_qp_sq_sge(qp, pl->slot),
					  softrc_qp_sq_pins(qp, pl->slot),
					  sh->num_sge, pl->addr, dst, NULL, 0,
					  pl->len, SOFTRC_FROM_MR);
	case SOFTRC_BUF_MR:
		mr = softrc_pin_enter(pl->pin);
		if (!mr)
			return -EFAULT;
		err = softrc_mr_copy(mr, pl->addr, dst, pl->len, SOFTRC_FROM_MR);
		softrc_mr_put(mr);
		return err ? -EFAULT : 0;
	default:
		return -EFAULT;
	}
}

/* May @pl go out as MR page fragments? (user memory, not inline) */
bool softrc_glue_can_frag(struct softrc_qp *qp, const struct softrc_eng_buf *pl)
{
	if (pl->kind == SOFTRC_BUF_MR)
		return qp->is_user;
	return pl->kind == SOFTRC_BUF_SEND_WQE && qp->is_user &&
	       !(qp->sqs[pl->slot].flags & SOFTRC_SQS_INLINE);
}

/*
 * Attach @len bytes at @va of @mr (entered: a memory reference held) as
 * fragments. Only a user MR's pinned pages: never a DMA or
 * fast-register MR's kernel addresses. The pages are shared with user
 * space, which may write them at any time (SKBFL_SHARED_FRAG warns
 * in-place writers further down).
 */
static int softrc_glue_frag_range(struct softrc_mr *mr, u64 va, u32 len,
				  struct sk_buff *skb)
{
	struct skb_shared_info *sh = skb_shinfo(skb);
	struct page *page;
	u32 off, n;
	int err;

	if (mr->is_dma || mr->is_fast || !mr->pages)
		return -E2BIG;		/* copy instead */
	sh->flags |= SKBFL_SHARED_FRAG;
	while (len) {
		/* one fragment stays free for the pad + ICRC trailer */
		if (sh->nr_frags >= MAX_SKB_FRAGS - 1)
			return -E2BIG;
		err = softrc_mr_page(mr, va, &page, &off, &n);
		if (err)
			return -EFAULT;
		n = min(n, len);
		get_page(page);
		skb_fill_page_desc(skb, sh->nr_frags, page, off, n);
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
		va += n;
		len -= n;
	}
	return 0;
}

/*
 * TX without a copy: attach the payload @pl names as page fragments of
 * its MRs (through the pins the check or the post took); the ICRC is
 * computed over the finished skb (icrc_skb.c). -E2BIG if it needs more
 * fragments than an skb has or is not user memory (the caller copies
 * instead); -EFAULT if the memory went away.
 */
int softrc_glue_frags(struct softrc_qp *qp, const struct softrc_eng_buf *pl,
		      struct sk_buff *skb)
{
	struct softrc_sge_cursor c;
	struct softrc_mr *mr;
	u32 lkey, n;
	u64 va;
	int err;

	if (pl->kind == SOFTRC_BUF_MR) {
		mr = softrc_pin_enter(pl->pin);
		if (!mr)
			return -EFAULT;
		err = softrc_glue_frag_range(mr, pl->addr, pl->len, skb);
		softrc_mr_put(mr);
		return err;
	}
	softrc_sge_seek(&c, softrc_qp_sq_sge(qp, pl->slot),
			softrc_qp_sq_pins(qp, pl->slot),
			qp->sqs[pl->slot].num_sge, pl->addr, pl->len);
	while (softrc_sge_next(&c, &lkey, &mr, &va, &n)) {
		/* user SGEs are always pinned (zero-copy is user QPs only) */
		if (!mr || !softrc_mr_enter(mr))
			return -EFAULT;
		err = softrc_glue_frag_range(mr, va, n, skb);
		softrc_mr_put(mr);
		if (err)
			return err;
	}
	return c.len ? -EFAULT : 0;
}

/* ---- the callbacks ------------------------------------------------- */

static int softrc_glue_xmit(void *ctx, const struct softrc_pkt *pkt,
			    const struct softrc_eng_buf *payload)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);

	if (softrc_net_xmit(qp, pkt, payload) == -EFAULT)
		return SOFTRC_E_MEM;
	trace_softrc_pkt_tx(qp, pkt);
	trace_softrc_nak_tx(qp, pkt);
	return 0;
}

/*
 * An R_Key check for one message: the QP's access flags, then the MR's
 * or the bound MW's range and rights (IBTA 10.6.7), and a pin on what
 * passed, which the engine keeps and hands back with every use.
 */
static int softrc_glue_mr_check(void *ctx, u32 rkey, u64 va, u32 len,
				u32 access, void **pin)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);
	int err;

	/* the QP must allow the operation too (IB_QP_ACCESS_FLAGS) */
	if ((access & qp->attr.qp_access_flags) != access)
		return -EACCES;
	*pin = softrc_rkey_pin(qp->sdev, rkey, qp->ibqp.pd, qp->uid,
			       qp->is_user, va, len, access, &err);
	return *pin ? 0 : err;
}

static void softrc_glue_key_put(void *ctx, void *pin)
{
	softrc_glue_qp(ctx);
	softrc_pin_put(pin);
}

/*
 * UD: the receive buffer's 40-byte GRH slot holds the IP header the
 * packet came with (IPv6 whole; IPv4 in the last 20 bytes, as RoCEv2
 * defines it), which ib_init_ah_attr_from_wc() and
 * ibv_create_ah_from_wc() read the peer's address from. The IPv4 checksum
 * is computed afresh: the consumer verifies it to tell IPv4 from IPv6,
 * and a packet of the self path never had one.
 */
static int softrc_glue_place_grh(void *ctx, const struct softrc_eng_buf *dst,
				 void *rx)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);
	struct sk_buff *skb = ((struct softrc_rx *)rx)->skb;
	struct softrc_rwqe *rw = softrc_qp_rwqe(qp, dst->slot);
	u8 grh[SOFTRC_GRH_BYTES] = {};
	struct iphdr *iph;

	if (ip_hdr(skb)->version == 6) {
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	} else {
		iph = (struct iphdr *)(grh + SOFTRC_GRH_BYTES - sizeof(*iph));
		memcpy(iph, ip_hdr(skb), sizeof(*iph));
		iph->ihl = sizeof(*iph) >> 2;	/* options are not copied */
		iph->check = 0;
		iph->check = ip_fast_csum(iph, iph->ihl);
	}
	if (!softrc_glue_sge_io(qp, rw->sge, softrc_qp_rq_pins(qp, dst->slot),
				rw->num_sge, dst->addr, grh, NULL, 0,
				SOFTRC_GRH_BYTES, SOFTRC_TO_MR))
		return 0;
	softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_rx_mem_errors);
	return SOFTRC_E_MEM;
}

static int softrc_glue_place(void *ctx, const struct softrc_eng_buf *dst,
			     void *rx, u32 pkt_off)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);
	struct softrc_rx *r = rx;
	int off = r->bth_off + pkt_off;
	struct softrc_rwqe *rw;
	struct softrc_mr *mr;
	int err = -EFAULT;

	switch (dst->kind) {
	case SOFTRC_BUF_RECV_WQE:
		rw = softrc_qp_rwqe(qp, dst->slot);
		err = softrc_glue_sge_io(qp, rw->sge,
					 softrc_qp_rq_pins(qp, dst->slot),
					 rw->num_sge, dst->addr, NULL, r->skb,
					 off, dst->len, SOFTRC_TO_MR);
		break;
	case SOFTRC_BUF_SEND_WQE:
		err = softrc_glue_sge_io(qp, softrc_qp_sq_sge(qp, dst->slot),
					 softrc_qp_sq_pins(qp, dst->slot),
					 qp->sqs[dst->slot].num_sge, dst->addr,
					 NULL, r->skb, off, dst->len,
					 SOFTRC_TO_MR);
		break;
	case SOFTRC_BUF_MR:
		mr = softrc_pin_enter(dst->pin);
		if (mr) {
			err = softrc_mr_copy_skb(mr, dst->addr, r->skb, off,
						 dst->len);
			softrc_mr_put(mr);
		}
		break;
	default:
		break;
	}
	if (!err)
		return 0;
	softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_rx_mem_errors);
	return SOFTRC_E_MEM;
}

static int softrc_glue_atomic(void *ctx, void *pin, u64 va, bool cmp_swap,
			      u64 swap_add, u64 compare, u64 *orig)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);
	struct softrc_mr *mr = softrc_pin_enter(pin);
	int err = -EFAULT;

	if (mr) {
		err = softrc_mr_atomic(mr, va, cmp_swap, swap_add, compare,
				       orig);
		softrc_mr_put(mr);
	}
	if (!err)
		return 0;
	softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_rx_mem_errors);
	return SOFTRC_E_MEM;
}

/* ATOMIC WRITE: the packet's 8 payload bytes, stored as one word. */
static int softrc_glue_atomic_write(void *ctx, void *pin, u64 va, void *rx,
				    u32 pkt_off)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);
	struct softrc_rx *r = rx;
	struct softrc_mr *mr;
	int err = -EFAULT;
	u64 value;

	if (softrc_skb_copy_bits(r->skb, r->bth_off + pkt_off, &value,
				 sizeof(value)))
		goto out;
	mr = softrc_pin_enter(pin);
	if (mr) {
		err = softrc_mr_atomic_write(mr, va, value);
		softrc_mr_put(mr);
	}
out:
	if (!err)
		return 0;
	softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_rx_mem_errors);
	return SOFTRC_E_MEM;
}

/*
 * FLUSH: every earlier placement of this responder was a synchronous
 * copy under the QP lock, so what is left is to order those stores
 * before the answer the requester will act on (rxe: the same barrier).
 * Placement type GLOBAL is all an MR here can grant (compat.h); the
 * memory must still be there.
 */
static int softrc_glue_flush(void *ctx, void *pin, u8 type)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);
	struct softrc_mr *mr = softrc_pin_enter(pin);

	if (!mr) {
		softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_rx_mem_errors);
		return SOFTRC_E_MEM;
	}
	/* the placements before this FLUSH, before its answer goes out */
	wmb();
	softrc_mr_put(mr);
	return 0;
}

static int softrc_glue_atomic_result(void *ctx, u32 slot, u64 orig)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);
	const struct ib_sge *sge = softrc_qp_sq_sge(qp, slot);

	if (qp->sqs[slot].num_sge == 1 &&
	    !softrc_glue_lkey_io(qp, sge->lkey, softrc_qp_sq_pins(qp, slot)[0],
				 sge->addr, &orig, NULL, 0, sizeof(orig),
				 SOFTRC_TO_MR))
		return 0;
	softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_rx_mem_errors);
	return SOFTRC_E_MEM;
}

/* SEND_WITH_INV: only a type 2 MW bound through this QP (IBTA 10.6.7). */
static int softrc_glue_invalidate(void *ctx, u32 rkey)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);

	return softrc_mem_invalidate(qp->sdev, qp->ibqp.pd, qp->uid,
				     rkey, true);
}

/*
 * A local WQE reached in SQ order: LOCAL_INV or IB_WR_REG_MR (an error is
 * a local QP operation error, as rxe) or BIND_MW (a memory window bind
 * error).
 */
static u8 softrc_glue_local(void *ctx, u32 slot)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);
	const struct softrc_sq_shadow *sh = &qp->sqs[slot];

	if (sh->flags & SOFTRC_SQS_REFUSED)
		return sh->local.refused.status;
	switch (sh->opcode) {
	case IB_WR_LOCAL_INV:
		if (softrc_mem_invalidate(qp->sdev, qp->ibqp.pd,
					  qp->uid, sh->local.inv_rkey,
					  false))
			return IB_WC_LOC_QP_OP_ERR;
		return IB_WC_SUCCESS;
	case IB_WR_BIND_MW:
		if (softrc_mw_bind(qp->sdev, qp->ibqp.pd, qp->uid,
				   &sh->local.bind))
			return IB_WC_MW_BIND_ERR;
		return IB_WC_SUCCESS;
	case IB_WR_REG_MR:
		if (softrc_mr_fast_reg(to_smr(sh->local.reg.mr), qp->ibqp.pd,
				       sh->local.reg.key, sh->local.reg.access))
			return IB_WC_LOC_QP_OP_ERR;
		return IB_WC_SUCCESS;
	default:
		return IB_WC_LOC_QP_OP_ERR;
	}
}

/*
 * The kernel's completion opcode of the engine's: the same number but for
 * REG_MR, whose kernel value moved (8 on 6.1, 10 from 6.2 on, where
 * FLUSH and ATOMIC WRITE took 8 and 9), and FLUSH, whose engine value is
 * its own (a FLUSH only runs where the kernel names it). ATOMIC WRITE and
 * FLUSH are the uverbs values (verbs.c ties them to the kernel's where
 * the kernel has them).
 */
static_assert((int)SOFTRC_WC_SEND == (int)IB_WC_SEND);
static_assert((int)SOFTRC_WC_RDMA_WRITE == (int)IB_WC_RDMA_WRITE);
static_assert((int)SOFTRC_WC_RDMA_READ == (int)IB_WC_RDMA_READ);
static_assert((int)SOFTRC_WC_COMP_SWAP == (int)IB_WC_COMP_SWAP);
static_assert((int)SOFTRC_WC_FETCH_ADD == (int)IB_WC_FETCH_ADD);
static_assert((int)SOFTRC_WC_BIND_MW == (int)IB_WC_BIND_MW);
static_assert((int)SOFTRC_WC_LOCAL_INV == (int)IB_WC_LOCAL_INV);
static_assert((int)SOFTRC_WC_RECV == (int)IB_WC_RECV);
static_assert((int)SOFTRC_WC_RECV_RDMA_WITH_IMM == (int)IB_WC_RECV_RDMA_WITH_IMM);

static u8 softrc_glue_wc_opcode(u8 opcode)
{
	if (opcode == SOFTRC_WC_FLUSH)
		return SOFTRC_ABI_WC_FLUSH;
	return opcode == SOFTRC_WC_REG_MR ? IB_WC_REG_MR : opcode;
}

/*
 * A receive completion with a GRH takes the IP family and VLAN from the
 * receive context of the packet that completed it (cqe->rx); the engine
 * marks a solicited one.
 */
static void softrc_glue_complete(void *ctx, const struct softrc_eng_cqe *cqe)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);
	const struct softrc_rx *rx = cqe->rx;
	struct softrc_pwc e = {
		.wr_id = cqe->wr_id,
		.status = cqe->status,
		.opcode = softrc_glue_wc_opcode(cqe->opcode),
		.byte_len = cqe->byte_len,
	};

	/* the slot is free: its SGEs' pins go (an unsignaled one's at reuse) */
	if (cqe->flags & SOFTRC_CQE_RECV)
		softrc_qp_rq_unpin(qp, cqe->slot);
	else
		softrc_qp_sq_unpin(qp, cqe->slot);
	if (cqe->flags & SOFTRC_CQE_RECV) {
		e.flags = SOFTRC_PWC_RECV;
		if (test_bit(cqe->slot, qp->rq_bad) &&
		    cqe->status == IB_WC_LOC_LEN_ERR)
			e.status = IB_WC_LOC_PROT_ERR;
		if (cqe->flags & SOFTRC_CQE_SOLICITED)
			e.flags |= SOFTRC_PWC_SOLICITED;
		if (cqe->flags & SOFTRC_CQE_GRH) {
			e.flags |= SOFTRC_PWC_GRH;
			if (rx && rx->ipv6)
				e.flags |= SOFTRC_PWC_IPV6;
			if (rx && rx->vlan != 0xffff) {
				e.flags |= SOFTRC_PWC_VLAN;
				e.vlan_id = rx->vlan;
			}
			e.src_qp = cqe->src_qp;
		}
		if (cqe->flags & SOFTRC_CQE_WITH_IMM) {
			e.flags |= SOFTRC_PWC_IMM;
			e.ex = (__force u32)cqe->imm;
		} else if (cqe->flags & SOFTRC_CQE_WITH_INV) {
			e.flags |= SOFTRC_PWC_INV;
			e.ex = cqe->inv_rkey;
		}
	} else {
		const struct softrc_sq_shadow *sh = &qp->sqs[cqe->slot];

		if (cqe->status == IB_WC_SUCCESS &&
		    !(sh->flags & SOFTRC_SQS_SIGNALED))
			return;
		if (cqe->status == IB_WC_SUCCESS)
			e.byte_len = sh->length;
		if (sh->flags & SOFTRC_SQS_REFUSED)
			e.opcode = sh->local.refused.wc_opcode;
		if (sh->opcode == IB_WR_SEND_WITH_IMM ||
		    sh->opcode == IB_WR_RDMA_WRITE_WITH_IMM)
			e.flags |= SOFTRC_PWC_IMM;
	}
	trace_softrc_complete(qp, &e);
	softrc_qp_push_wc(qp, &e);
}

static void softrc_glue_timer(void *ctx, enum softrc_eng_timer_id id, u64 deadline)
{
	softrc_timers_arm(softrc_glue_qp(ctx), id, deadline);
}

/*
 * The engine entered ERROR (a fatal completion or remote error, or a
 * modify to ERR), once per entry. Receive WQEs still in a user RQ ring
 * flush too. A transport error is reported through the failed completion
 * (IBTA o10-2.2: the error completion is the notification). A QP on an
 * SRQ takes no more WQEs from it, and its WQE in progress has just been
 * flushed: that is the Last WQE Reached event (IBTA 11.6.3.1, 10.2.9.5),
 * delivered by softrc_qp_drain_comps() behind that completion.
 */
static void softrc_glue_qp_error(void *ctx)
{
	struct softrc_qp *qp = softrc_glue_qp(ctx);

	if (qp->state != IB_QPS_ERR)
		trace_softrc_qp_state(qp, qp->state, IB_QPS_ERR);
	qp->state = IB_QPS_ERR;
	softrc_qp_flush_user_rq(qp);
	if (qp->srq)
		set_bit(SOFTRC_QP_EV_LAST_WQE, &qp->events);
}

static void softrc_glue_retransmit(void *ctx, u32 psn,
				   enum softrc_eng_retry_reason why)
{
	trace_softrc_retransmit(softrc_glue_qp(ctx), psn, why);
}

static void softrc_glue_rnr_wait(void *ctx, u32 psn, u64 wait_ns)
{
	trace_softrc_rnr_wait(softrc_glue_qp(ctx), psn, wait_ns);
}

static void softrc_glue_timer_expired(void *ctx, enum softrc_eng_timer_id id)
{
	trace_softrc_timer_expire(softrc_glue_qp(ctx), id);
}

const struct softrc_eng_ops softrc_glue_ops = {
	.xmit = softrc_glue_xmit,
	.mr_check = softrc_glue_mr_check,
	.key_put = softrc_glue_key_put,
	.place = softrc_glue_place,
	.place_grh = softrc_glue_place_grh,
	.atomic = softrc_glue_atomic,
	.atomic_result = softrc_glue_atomic_result,
	.atomic_write = softrc_glue_atomic_write,
	.flush = softrc_glue_flush,
	.invalidate = softrc_glue_invalidate,
	.local = softrc_glue_local,
	.complete = softrc_glue_complete,
	.timer = softrc_glue_timer,
	.qp_error = softrc_glue_qp_error,
	.retransmit = softrc_glue_retransmit,
	.rnr_wait = softrc_glue_rnr_wait,
	.timer_expired = softrc_glue_timer_expired,
};

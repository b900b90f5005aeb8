// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Deterministic two-endpoint simulator for the RC engine (see sim.h).
 *
 * Context: host user space only; single-threaded; uses libc and malloc.
 * Plays the glue's part: serialises the packets the engine builds into
 * real bytes (headers, payload, pad, ICRC over a fake IPv4/UDP header),
 * carries them over a lossy link with a virtual clock, checks the ICRC,
 * parses, and feeds them back; implements the memory, completion and
 * timer callbacks; checks wire invariants as packets leave.
 */
#include <stdlib.h>
#include <string.h>
#include "sim.h"
#include "parse.h"
#include "icrc.h"

struct sim_pkt {
	u64 t;
	u64 seq;
	int dst;
	u32 len;
	u8 data[];
};

u64 sim_rand(struct sim *sim)
{
	u64 z = (sim->rng += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

double sim_randf(struct sim *sim)
{
	return (sim_rand(sim) >> 11) * (1.0 / 9007199254740992.0);
}

static u64 sim_mix(u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Coarse: tick k reads k * tick - r_k, r_k in [0, tick) fixed per tick
 * (the timekeeping remainder): monotonic, lagging by less than 2 ticks.
 */
u64 sim_glue_now(struct sim *sim)
{
	u64 k, r;

	if (!sim->tick_ns)
		return sim->now;
	k = sim->now / sim->tick_ns;
	r = sim_mix(k ^ 0x7e57c10c) % sim->tick_ns;
	return k * sim->tick_ns > r ? k * sim->tick_ns - r : 0;
}

static void sim_violation(struct sim *sim, const char *msg, u64 a, u64 b)
{
	if (!sim->violations++)
		snprintf(sim->why, sizeof(sim->why), "%s (%llx, %llx) at t=%llu",
			 msg, (unsigned long long)a, (unsigned long long)b,
			 (unsigned long long)sim->now);
}

static void sim_touch(struct sim_ep *ep, const u8 *p, u32 len)
{
	u64 off;
	u32 i;

	if (p < ep->mem || p >= ep->mem + ep->mem_len)
		return;
	off = p - ep->mem;
	for (i = 0; i < len; i++)
		if (ep->touch[off + i] < 255)
			ep->touch[off + i]++;
}

static void *sim_grow(void *p, u32 *cap, u32 need, size_t elem)
{
	if (need <= *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	if (*cap < need)
		*cap = need;
	p = realloc(p, *cap * elem);
	if (!p)
		abort();
	return p;
}

/* ---- memory ---- */

static struct sim_mr *sim_mr_find(struct sim_ep *ep, u32 rkey)
{
	int i;

	for (i = 0; i < ep->nmr; i++)
		if (ep->mr[i].rkey == rkey && ep->mr[i].valid)
			return &ep->mr[i];
	return NULL;
}

static u8 sim_scratch[8192];

static u8 *sim_buf_ptr(struct sim_ep *ep, const struct softrc_eng_buf *b)
{
	struct sim *sim = ep->sim;
	struct sim_mr *mr;
	u64 off;

	switch (b->kind) {
	case SOFTRC_BUF_SEND_WQE:
		off = ep->sq_local[b->slot] + b->addr;
		break;
	case SOFTRC_BUF_RECV_WQE:
		if (b->addr + b->len > ep->rq[b->slot].length)
			sim_violation(sim, "recv overflow", b->addr, b->len);
		off = ep->rq_local[b->slot] + b->addr;
		break;
	case SOFTRC_BUF_MR:
		mr = b->pin;	/* what mr_check approved, never a new lookup */
		if (!mr || !mr->valid || mr->rkey != b->rkey || b->addr < mr->va || b->addr + b->len > mr->va + mr->len) {
			sim_violation(sim, "MR access out of bounds", b->rkey,
				      b->addr);
			return sim_scratch;
		}
		off = mr->off + (b->addr - mr->va);
		break;
	default:
		return sim_scratch;
	}
	if (off + b->len > ep->mem_len) {
		sim_violation(sim, "memory out of bounds", off, b->len);
		return sim_scratch;
	}
	return ep->mem + off;
}

/* ---- engine callbacks ---- */

static void sim_enqueue(struct sim *sim, struct sim_pkt *p);

static void sim_check_wire(struct sim_ep *ep, const struct softrc_pkt *pkt)
{
	struct softrc_eng_qp *qp = &ep->qp;
	struct sim *sim = ep->sim;

	if (softrc_pkt_has(pkt, SOFTRC_OPF_REQ)) {
		if (softrc_psn_diff(pkt->psn, qp->req.una) < 0 ||
		    !softrc_psn_lt(pkt->psn, qp->req.psn_next))
			sim_violation(sim, "request PSN outside window", pkt->psn,
				      qp->req.una);
		if (((qp->req.psn_next - qp->req.una) & SOFTRC_PSN_MASK) >=
		    SOFTRC_PSN_WINDOW)
			sim_violation(sim, "outstanding PSNs reach 2^23",
				      qp->req.una, qp->req.psn_next);
		if (sim->now < ep->rnr_quiet_until)
			sim_violation(sim, "request before the RNR wait ended",
				      pkt->psn, ep->rnr_quiet_until - sim->now);
		return;
	}
	if (softrc_psn_gt(pkt->psn, qp->resp.epsn))
		sim_violation(sim, "response PSN past expected", pkt->psn,
			      qp->resp.epsn);
	if (softrc_pkt_has(pkt, SOFTRC_H_AETH)) {
		if (ep->msn_seen && softrc_psn_lt(pkt->msn, ep->last_msn))
			sim_violation(sim, "MSN went backwards", pkt->msn,
				      ep->last_msn);
		ep->msn_seen = true;
		ep->last_msn = pkt->msn;
	}
}

static void sim_fill_l3(u8 *l3, u32 len)
{
	u32 ip_len = len;

	memset(l3, 0, SIM_L3_BYTES);
	l3[0] = 0x45;
	l3[2] = ip_len >> 8;
	l3[3] = ip_len;
	l3[8] = 64;
	l3[9] = 17;
	l3[12] = 10; l3[15] = 1;	/* 10.0.0.1 -> 10.0.0.2 */
	l3[16] = 10; l3[19] = 2;
	l3[20] = 0xc0; l3[21] = 0x00;	/* UDP src 49152 */
	l3[22] = SOFTRC_ROCEV2_UDP_PORT >> 8;
	l3[23] = SOFTRC_ROCEV2_UDP_PORT & 0xff;
	l3[24] = (len - 20) >> 8;
	l3[25] = (len - 20);
}

/*
 * A cheap stand-in for the ICRC (for speed in long random runs): linear
 * over GF(2), so any single flipped bit changes it.
 */
static u32 sim_fast_csum(const u8 *p, u32 len)
{
	u64 h = 0x243f6a8885a308d3ull, w;
	u32 i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = ((h << 7) | (h >> 57)) ^ w;
	}
	for (; i < len; i++)
		h = ((h << 7) | (h >> 57)) ^ p[i];
	return (u32)(h ^ (h >> 32));
}

static u32 sim_trailer(struct sim *sim, const u8 *l3, u32 len)
{
	if (sim->fast_csum)
		return sim_fast_csum(l3 + SIM_L3_BYTES, len - SIM_L3_BYTES);
	return softrc_eng_icrc_calc(l3, false, len);
}

/* @extra: bytes appended after the pad (2 makes a malformed packet). */
static struct sim_pkt *sim_serialise(struct sim_ep *ep,
				     const struct softrc_pkt *pkt,
				     const struct softrc_eng_buf *pl, u32 extra)
{
	u32 plen = pkt->payload_len, pad = softrc_padcnt(plen) + extra;
	u32 hlen = pkt->op->hdr_len;
	u32 len = SIM_L3_BYTES + hlen + plen + pad + SOFTRC_ICRC_BYTES;
	struct sim_pkt *p = malloc(sizeof(*p) + len);
	u8 *bth;

	if (!p)
		abort();
	p->len = len;
	p->dst = !ep->id;
	bth = p->data + SIM_L3_BYTES;
	sim_fill_l3(p->data, len);
	if (softrc_eng_build_hdrs(pkt, bth) != hlen)
		sim_violation(ep->sim, "build_hdrs length", pkt->opcode, hlen);
	if (plen)
		memcpy(bth + hlen, sim_buf_ptr(ep, pl), plen);
	memset(bth + hlen + plen, 0, pad);
	softrc_icrc_put(p->data + len - SOFTRC_ICRC_BYTES,
			sim_trailer(ep->sim, p->data, len - SOFTRC_ICRC_BYTES));
	return p;
}

static struct sim_pkt *sim_clone(const struct sim_pkt *p)
{
	struct sim_pkt *c = malloc(sizeof(*c) + p->len);

	if (!c)
		abort();
	memcpy(c, p, sizeof(*c) + p->len);
	return c;
}

static bool sim_is_response(const struct softrc_pkt *pkt)
{
	return !softrc_pkt_has(pkt, SOFTRC_OPF_REQ);
}

static int sim_xmit(void *ctx, const struct softrc_pkt *pkt,
		    const struct softrc_eng_buf *pl)
{
	struct sim_ep *ep = ctx;
	struct sim *sim = ep->sim;
	struct sim_link *l = &sim->link;
	struct sim_pkt *p;
	bool drop = false, corrupt = false;

	sim_check_wire(ep, pkt);
	if (pl->kind != SOFTRC_BUF_NONE && pl->len != pkt->payload_len)
		sim_violation(sim, "payload ref length", pl->len,
			      pkt->payload_len);
	sim->wire_pkts++;
	if (l->malform > 0 && sim_randf(sim) < l->malform) {
		sim->malformed++;
		p = sim_serialise(ep, pkt, pl, 2);
	} else {
		p = sim_serialise(ep, pkt, pl, 0);
	}
	if (sim->filter && sim->filter(sim, ep->id, pkt, sim->filter_arg))
		drop = true;
	if (l->loss > 0 && sim_randf(sim) < l->loss)
		drop = true;
	if (l->ack_loss > 0 && sim_is_response(pkt) &&
	    sim_randf(sim) < l->ack_loss)
		drop = true;
	if (!drop && l->corrupt > 0 && sim_randf(sim) < l->corrupt) {
		u32 bit = sim_rand(sim) % ((p->len - SIM_L3_BYTES) * 8);

		p->data[SIM_L3_BYTES + bit / 8] ^= 1u << (bit % 8);
		corrupt = true;
	}
	if (sim->trace_on) {
		sim->trace = sim_grow(sim->trace, &sim->trace_cap,
				      sim->ntrace + 1, sizeof(*sim->trace));
		sim->trace[sim->ntrace++] = (struct sim_trace){
			.t = sim->now, .src = ep->id, .pkt = *pkt,
			.dropped = drop, .corrupted = corrupt,
		};
	}
	if (sim->print)
		fprintf(stderr,
			"%10llu ep%d %-32s psn %06x%s syn %02x msn %u len %u va %llx dma %u%s%s\n",
			(unsigned long long)sim->now, ep->id,
			softrc_eng_opcode_name(pkt->opcode), pkt->psn,
			pkt->ackreq ? " A" : "  ", pkt->syndrome, pkt->msn,
			pkt->payload_len, (unsigned long long)pkt->va,
			pkt->dma_len, drop ? " DROP" : "",
			corrupt ? " CORRUPT" : "");
	if (drop) {
		sim->wire_drops++;
		free(p);
		return 0;
	}
	p->t = sim->now + l->delay_ns;
	if (l->reorder > 0 && sim_randf(sim) < l->reorder)
		p->t += 1 + sim_rand(sim) % (l->jitter_ns + 1);
	if (l->dup > 0 && sim_randf(sim) < l->dup) {
		struct sim_pkt *c = sim_clone(p);

		c->t += 1 + sim_rand(sim) % (l->jitter_ns + 1);
		sim->wire_dups++;
		sim_enqueue(sim, c);
	}
	sim_enqueue(sim, p);
	return 0;
}

static int sim_mr_check(void *ctx, u32 rkey, u64 va, u32 len, u32 access,
			void **pin)
{
	struct sim_ep *ep = ctx;
	struct sim_mr *mr = sim_mr_find(ep, rkey);

	if (!mr || va < mr->va || va + len > mr->va + mr->len ||
	    va + len < va || (mr->access & access) != access)
		return -1;
	ep->pins++;
	*pin = mr;
	return 0;
}

static void sim_key_put(void *ctx, void *pin)
{
	struct sim_ep *ep = ctx;

	if (!pin || !ep->pins)
		sim_violation(ep->sim, "pin put twice", ep->id, 0);
	else
		ep->pins--;
}

static int sim_place(void *ctx, const struct softrc_eng_buf *dst, void *rx,
		     u32 pkt_off)
{
	struct sim_ep *ep = ctx;

	u8 *p = sim_buf_ptr(ep, dst);

	memcpy(p, (u8 *)rx + pkt_off, dst->len);
	sim_touch(ep, p, dst->len);
	ep->placed += dst->len;
	return 0;
}

/* the 8-byte word at @va of the pinned MR @pin, in @ep's memory */
static u8 *sim_word(struct sim_ep *ep, void *pin, u64 va)
{
	struct sim_mr *mr = pin;
	struct softrc_eng_buf b = {
		.kind = SOFTRC_BUF_MR, .rkey = mr->rkey, .addr = va, .len = 8,
		.pin = pin,
	};

	return sim_buf_ptr(ep, &b);
}

static int sim_atomic(void *ctx, void *pin, u64 va, bool cmp_swap,
		      u64 swap_add, u64 compare, u64 *orig)
{
	struct sim_ep *ep = ctx;
	u8 *p = sim_word(ep, pin, va);
	u64 v, n;

	memcpy(&v, p, 8);
	n = cmp_swap ? (v == compare ? swap_add : v) : v + swap_add;
	memcpy(p, &n, 8);
	sim_touch(ep, p, 8);
	ep->atomics++;
	*orig = v;
	return 0;
}

/* ATOMIC WRITE: the 8 payload bytes into the word, in one piece */
static int sim_atomic_write(void *ctx, void *pin, u64 va, void *rx,
			    u32 pkt_off)
{
	struct sim_ep *ep = ctx;
	u8 *p = sim_word(ep, pin, va);

	if (va & 7)
		sim_violation(ep->sim, "atomic write unaligned", va, 0);
	memcpy(p, (u8 *)rx + pkt_off, 8);
	sim_touch(ep, p, 8);
	ep->atomic_writes++;
	return 0;
}

/*
 * FLUSH: the engine approved the range (or region) and every earlier
 * request is placed; record how much had been placed by then.
 */
static int sim_flush(void *ctx, void *pin, u8 type)
{
	struct sim_ep *ep = ctx;

	if (!pin)
		sim_violation(ep->sim, "flush without pin", type, 0);
	if (ep->flushes < SIM_MAX_FLUSH)
		ep->flush_placed[ep->flushes] = ep->placed;
	ep->flushes++;
	return 0;
}

static int sim_atomic_result(void *ctx, u32 slot, u64 orig)
{
	struct sim_ep *ep = ctx;
	struct softrc_eng_buf b = {
		.kind = SOFTRC_BUF_SEND_WQE, .slot = slot, .addr = 0, .len = 8,
	};

	u8 *p = sim_buf_ptr(ep, &b);

	memcpy(p, &orig, 8);
	sim_touch(ep, p, 8);
	return 0;
}

static int sim_invalidate(void *ctx, u32 rkey)
{
	struct sim_ep *ep = ctx;
	struct sim_mr *mr = sim_mr_find(ep, rkey);

	if (mr)
		mr->valid = false;
	ep->inval = sim_grow(ep->inval, &ep->inval_cap, ep->ninval + 1,
			     sizeof(*ep->inval));
	ep->inval[ep->ninval++] = rkey;
	return 0;
}

static void sim_complete(void *ctx, const struct softrc_eng_cqe *cqe)
{
	struct sim_ep *ep = ctx;

	ep->cqe = sim_grow(ep->cqe, &ep->cqe_cap, ep->ncqe + 1,
			   sizeof(*ep->cqe));
	if (ep->sim->print)
		fprintf(stderr, "%10llu ep%d CQE %s wr_id %llu status %u op %u len %u\n",
			(unsigned long long)ep->sim->now, ep->id,
			cqe->flags & SOFTRC_CQE_RECV ? "recv" : "send",
			(unsigned long long)cqe->wr_id, cqe->status,
			cqe->opcode, cqe->byte_len);
	ep->cqe[ep->ncqe].c = *cqe;
	ep->cqe[ep->ncqe].t = ep->sim->now;
	ep->ncqe++;
}

/*
 * The minimum of timer @id as armed now: the IBTA's for the retry and
 * RNR timers (9.7.6.1.3, table 45); none for the AckReq probe, which
 * may go at any time (softrc.rst, "ACKs").
 */
static u64 sim_timer_min(struct sim_ep *ep, enum softrc_eng_timer_id id)
{
	if (id == SOFTRC_TIMER_RETRY)
		return softrc_eng_ack_timeout_ns(ep->qp.attr.timeout);
	if (id == SOFTRC_TIMER_ACKREQ)
		return 0;
	return softrc_eng_rnr_timer_ns(softrc_syndrome_value(ep->rx_syndrome));
}

static const char *const sim_timer_low[SOFTRC_TIMER_NR] = {
	[SOFTRC_TIMER_RETRY] = "retry timer armed below its IBTA minimum",
	[SOFTRC_TIMER_RNR] = "RNR timer armed below its IBTA minimum",
	[SOFTRC_TIMER_ACKREQ] = "AckReq probe timer armed below its interval",
};

/*
 * A new deadline must lie at least the IBTA minimum after the exact time
 * it is armed at, whatever the glue clock said (re-asking for the same
 * deadline after an early expiry is not a new one).
 */
static void sim_timer(void *ctx, enum softrc_eng_timer_id id, u64 deadline)
{
	struct sim_ep *ep = ctx;
	struct sim *sim = ep->sim;

	ep->deadline[id] = deadline;
	if (!deadline || deadline == ep->armed[id]) {
		ep->armed[id] = deadline;
		return;
	}
	ep->armed[id] = deadline;
	ep->arm_min[id] = sim->now + sim_timer_min(ep, id);
	if (deadline < ep->arm_min[id])
		sim_violation(sim, sim_timer_low[id], ep->arm_min[id] - deadline,
			      id);
}

static void sim_qp_error(void *ctx)
{
	struct sim_ep *ep = ctx;

	ep->errored = true;
}

static const struct softrc_eng_ops sim_ops = {
	.xmit = sim_xmit,
	.mr_check = sim_mr_check,
	.key_put = sim_key_put,
	.place = sim_place,
	.atomic = sim_atomic,
	.atomic_result = sim_atomic_result,
	.atomic_write = sim_atomic_write,
	.flush = sim_flush,
	.invalidate = sim_invalidate,
	.complete = sim_complete,
	.timer = sim_timer,
	.qp_error = sim_qp_error,
};

/* ---- event queue (binary heap on (t, seq)) ---- */

static bool sim_before(const struct sim_pkt *a, const struct sim_pkt *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void sim_enqueue(struct sim *sim, struct sim_pkt *p)
{
	u32 i;

	p->seq = sim->seq++;
	sim->heap = sim_grow(sim->heap, &sim->heap_cap, sim->nheap + 1,
			     sizeof(*sim->heap));
	i = sim->nheap++;
	while (i && sim_before(p, sim->heap[(i - 1) / 2])) {
		sim->heap[i] = sim->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	sim->heap[i] = p;
}

static struct sim_pkt *sim_pop(struct sim *sim)
{
	struct sim_pkt *top = sim->heap[0], *last = sim->heap[--sim->nheap];
	u32 i = 0;

	for (;;) {
		u32 c = 2 * i + 1;

		if (c >= sim->nheap)
			break;
		if (c + 1 < sim->nheap && sim_before(sim->heap[c + 1], sim->heap[c]))
			c++;
		if (!sim_before(sim->heap[c], last))
			break;
		sim->heap[i] = sim->heap[c];
		i = c;
	}
	if (sim->nheap)
		sim->heap[i] = last;
	return top;
}

/* ---- set-up ---- */

void sim_init(struct sim *sim, const struct softrc_eng_attr *attr,
	      u64 mem_len, u64 seed)
{
	int i;

	memset(sim, 0, sizeof(*sim));
	sim->rng = seed;
	sim->link.delay_ns = 2000;
	for (i = 0; i < 2; i++) {
		struct sim_ep *ep = &sim->ep[i];
		struct softrc_eng_attr a = *attr;
		struct softrc_eng_storage st = {
			.sq = ep->sq, .sq_depth = SIM_SQ_DEPTH,
			.rq = ep->rq, .rq_depth = SIM_RQ_DEPTH,
			.res = ep->res, .nres = SIM_NRES,
		};

		ep->sim = sim;
		ep->id = i;
		ep->mem_len = mem_len ? mem_len : 8;
		ep->mem = calloc(1, ep->mem_len);
		ep->touch = calloc(1, ep->mem_len);
		if (!ep->mem || !ep->touch)
			abort();
		a.dqpn = 0x11 + !i;
		if (i) {
			a.sq_psn = attr->rq_psn;
			a.rq_psn = attr->sq_psn;
		}
		if (softrc_eng_init(&ep->qp, &sim_ops, ep, &a, &st))
			abort();
	}
}

void sim_free(struct sim *sim)
{
	int i;

	for (i = 0; i < 2; i++) {
		free(sim->ep[i].mem);
		free(sim->ep[i].touch);
		free(sim->ep[i].cqe);
		free(sim->ep[i].inval);
	}
	while (sim->nheap)
		free(sim_pop(sim));
	free(sim->heap);
	free(sim->defer);
	free(sim->trace);
}

static u64 sim_va_base(int ep)
{
	return ep ? 0x5a0000001000ull : 0x7f0000000000ull;
}

u32 sim_add_mr(struct sim *sim, int ep, u32 rkey, u64 off, u32 len,
	       u32 access)
{
	struct sim_ep *e = &sim->ep[ep];
	struct sim_mr *mr = &e->mr[e->nmr++];

	mr->rkey = rkey;
	mr->off = off;
	mr->len = len;
	mr->va = sim_va_base(ep) + off;
	mr->access = access;
	mr->valid = true;
	return rkey;
}

u64 sim_va(struct sim *sim, int ep, u32 rkey, u64 off)
{
	return sim_va_base(ep) + off;
}

int sim_post_send(struct sim *sim, int ep, const struct softrc_eng_send_wr *wr,
		  u64 local_off)
{
	struct sim_ep *e = &sim->ep[ep];
	int slot = softrc_eng_post_send(&e->qp, wr);

	if (slot >= 0)
		e->sq_local[slot] = local_off;
	return slot;
}

int sim_post_recv(struct sim *sim, int ep, u64 wr_id, u32 len, u64 local_off)
{
	struct sim_ep *e = &sim->ep[ep];
	int slot = softrc_eng_post_recv(&e->qp, wr_id, len);

	if (slot >= 0) {
		e->rq_local[slot] = local_off;
		e->nrecv_posted++;
	}
	return slot;
}

void sim_post_recv_at(struct sim *sim, int ep, u64 t, u64 wr_id, u32 len,
		      u64 local_off)
{
	sim->defer = sim_grow(sim->defer, &sim->defer_cap, sim->ndefer + 1,
			      sizeof(*sim->defer));
	sim->defer[sim->ndefer++] = (struct sim_defer){
		.t = t, .ep = ep, .wr_id = wr_id, .len = len, .off = local_off,
	};
}

/* ---- the event loop ---- */

void sim_kick(struct sim *sim)
{
	u32 budget = sim->tx_budget ? sim->tx_budget : ~0u, n;
	int i;

	for (i = 0; i < 2; i++) {
		struct softrc_eng_qp *qp = &sim->ep[i].qp;

		do {
			u64 before = sim->wire_pkts;

			n = softrc_eng_tx(qp, sim_glue_now(sim), budget);
			if (sim->wire_pkts - before > budget)
				sim_violation(sim, "tx sent more than its budget",
					      sim->wire_pkts - before, budget);
		} while (n >= budget);
		if (softrc_eng_tx_pending(qp))
			sim_violation(sim, "tx stopped below budget with work pending",
				      n, budget);
	}
}

u64 sim_next_event(struct sim *sim)
{
	u64 t = ~0ull;
	u32 i;
	int e, id;

	if (sim->nheap)
		t = sim->heap[0]->t;
	for (e = 0; e < 2; e++)
		for (id = 0; id < SOFTRC_TIMER_NR; id++)
			if (sim->ep[e].deadline[id] && sim->ep[e].deadline[id] < t)
				t = sim->ep[e].deadline[id];
	for (i = 0; i < sim->ndefer; i++)
		if (sim->defer[i].t < t)
			t = sim->defer[i].t;
	return t;
}

/*
 * A response-side packet, with the RNR checks: rnr_retry n allows n
 * RNR waits since una last moved, the (n + 1)th RNR NAK fails the WQE
 * (7 = never); a duplicated RNR NAK during the wait is not a new one.
 * Once waiting, no request may leave before the NAK's RNR time (exact).
 */
static void sim_deliver_resp(struct sim *sim, struct sim_ep *ep,
			     const struct softrc_pkt *pkt, void *rx)
{
	struct softrc_eng_qp *qp = &ep->qp;
	u32 una = qp->req.una;
	u8 state = qp->req.state;
	u64 exc = qp->cnt.rnr_retry_exceeded;
	bool rnr = pkt->opcode == SOFTRC_OP_ACKNOWLEDGE &&
		   softrc_syndrome_type(pkt->syndrome) == SOFTRC_AETH_RNR_NAK;
	bool waits;

	ep->rx_syndrome = pkt->syndrome;
	softrc_eng_rx(qp, pkt, rx, sim_glue_now(sim));
	if (qp->req.una != una)
		ep->rnr_rounds = 0;
	waits = qp->req.state == SOFTRC_REQ_RNR_WAIT &&
		(state != SOFTRC_REQ_RNR_WAIT || qp->req.una != una);
	if (!rnr || (!waits && qp->cnt.rnr_retry_exceeded == exc))
		return;
	ep->rnr_rounds++;
	if (waits)
		ep->rnr_quiet_until = sim->now +
			softrc_eng_rnr_timer_ns(softrc_syndrome_value(pkt->syndrome));
	if (qp->cnt.rnr_retry_exceeded != exc &&
	    (qp->attr.rnr_retry == 7 ||
	     ep->rnr_rounds != qp->attr.rnr_retry + 1u))
		sim_violation(sim, "RNR retries miscounted", ep->rnr_rounds,
			      qp->attr.rnr_retry);
}

static void sim_deliver(struct sim *sim, struct sim_pkt *p)
{
	struct sim_ep *ep = &sim->ep[p->dst];
	u8 *bth = p->data + SIM_L3_BYTES;
	u32 blen = p->len - SIM_L3_BYTES;
	struct softrc_pkt pkt;
	int status;

	if (sim_trailer(sim, p->data, p->len - SOFTRC_ICRC_BYTES) !=
	    softrc_icrc_get(p->data + p->len - SOFTRC_ICRC_BYTES)) {
		sim->crc_drops++;
		return;
	}
	status = softrc_parse(bth, blen, blen, ep->qp.attr.pmtu, &pkt);
	if (status != SOFTRC_PARSE_OK) {
		u64 naks = ep->qp.cnt.inv_req_naks_sent;
		bool held = ep->qp.resp.fatal_held;

		/* as the glue: with the BTH valid the engine decides */
		sim->parse_drops++;
		if (status > SOFTRC_PARSE_RESV7_SET)
			softrc_eng_rx_invalid(&ep->qp, &pkt);
		/* sent now, or held behind queued READ responses */
		ep->malformed_naks += ep->qp.cnt.inv_req_naks_sent - naks +
				      (!held && ep->qp.resp.fatal_held);
		return;
	}
	if (softrc_pkt_has(&pkt, SOFTRC_OPF_REQ)) {
		softrc_eng_rx(&ep->qp, &pkt, bth, sim_glue_now(sim));
		return;
	}
	sim_deliver_resp(sim, ep, &pkt, bth);
}

/* Post the deferred receives that are due, keeping their order. */
static void sim_run_defers(struct sim *sim)
{
	u32 i, j = 0;

	for (i = 0; i < sim->ndefer; i++) {
		struct sim_defer d = sim->defer[i];

		if (d.t > sim->now)
			sim->defer[j++] = d;
		else
			sim_post_recv(sim, d.ep, d.wr_id, d.len, d.off);
	}
	sim->ndefer = j;
}

/*
 * The hrtimer fires at the deadline on the exact clock; when the engine
 * acts on it (a timeout, the end of an RNR wait), that must be no
 * earlier than the IBTA minimum after the timer was armed.
 */
static void sim_fire(struct sim *sim, struct sim_ep *ep,
		     enum softrc_eng_timer_id id)
{
	struct softrc_eng_qp *qp = &ep->qp;
	u64 timeouts = qp->cnt.timeouts, min = ep->arm_min[id];
	u64 probes = qp->cnt.ackreq_probes;
	u8 state = qp->req.state;
	bool acted;

	softrc_eng_timer(qp, id, sim->now);
	if (id == SOFTRC_TIMER_RETRY)
		acted = qp->cnt.timeouts != timeouts;
	else if (id == SOFTRC_TIMER_ACKREQ)
		acted = qp->cnt.ackreq_probes != probes;
	else
		acted = state == SOFTRC_REQ_RNR_WAIT &&
			qp->req.state != SOFTRC_REQ_RNR_WAIT;
	if (!acted)
		return;
	sim->timer_fires++;
	if (sim->now < min)
		sim_violation(sim, "timer fired before its IBTA minimum",
			      min - sim->now, id);
}

bool sim_step(struct sim *sim)
{
	u64 t = sim_next_event(sim);
	bool got[2] = { false, false };
	int e, id;

	if (t == ~0ull)
		return false;
	if (t > sim->now)
		sim->now = t;
	while (sim->nheap && sim->heap[0]->t <= sim->now) {
		struct sim_pkt *p = sim_pop(sim);

		got[p->dst] = true;
		sim_deliver(sim, p);
		free(p);
	}
	for (e = 0; e < 2; e++)
		if (got[e])
			softrc_eng_rx_flush(&sim->ep[e].qp);
	sim_run_defers(sim);
	for (e = 0; e < 2; e++) {
		for (id = 0; id < SOFTRC_TIMER_NR; id++) {
			struct sim_ep *ep = &sim->ep[e];

			if (!ep->deadline[id] || ep->deadline[id] > sim->now)
				continue;
			ep->deadline[id] = 0;
			sim_fire(sim, ep, id);
		}
	}
	sim_kick(sim);
	return true;
}

bool sim_run(struct sim *sim, u64 max_ns)
{
	sim_kick(sim);
	while (sim_step(sim))
		if (sim->now > max_ns)
			return false;
	return true;
}

void sim_run_until(struct sim *sim, u64 t)
{
	sim_kick(sim);
	while (sim_next_event(sim) <= t)
		sim_step(sim);
	if (sim->now < t)
		sim->now = t;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Seeded random scenarios for the simulator and the invariants checked
 * after each run:
 *  - every posted WR completes exactly once, in post order, with a status
 *    the scenario allows: success, or a first error with a cause (the
 *    injected bad WR's NAK status, RETRY_EXC_ERR on a lossy link or with
 *    the peer in ERROR, RNR_RETRY_EXC_ERR with rnr_retry < 7, the NAK of
 *    a malformed packet), then WR_FLUSH_ERR for every later WR; a flush
 *    first only when the QP's own responder failed it;
 *  - random retry_cnt / rnr_retry; RNR retries counted exactly, no
 *    request during an RNR wait, no timer below its IBTA minimum on
 *    exact time while the glue clock is coarse (checked in sim.c);
 *  - placed bytes equal sent bytes (SEND, WRITE, READ, ATOMIC WRITE),
 *    atomics return the original value and change the cell as specified;
 *  - every memory byte is written at most once (SEND/WRITE/ATOMIC and
 *    READ data executed exactly once, never re-placed by a duplicate);
 *  - receive completions match the peer's receive-consuming WRs in order
 *    (length, immediate, invalidated R_Key);
 *  - MSN monotonic and PSNs inside the window (checked on the wire);
 *  - no softrc_eng_tx() call sends more than its budget, and a call
 *    below budget leaves nothing pending (checked in sim_kick());
 *  - no QP left hung: all done, or in ERROR.
 *
 * Context: host user space only.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "sim.h"

#define SCN_MAX_WR	256
#define SCN_RKEY(ep)	(0x100u + (ep))
#define SCN_BAD_RKEY	0xbad0bad0u

struct scn_wr {
	int src;
	struct softrc_eng_send_wr wr;
	u64 local_off;
	u64 remote_off;
	u64 recv_off;
	u32 recv_len;
	int recv_idx;
	u64 init;
	bool bad;
	bool unposted;		/* second half not posted: QP already in ERROR */
};

struct scn {
	struct sim sim;
	struct scn_wr w[SCN_MAX_WR];
	int n;
	int per_ep[2][SCN_MAX_WR];	/* WR index by (ep, post order) */
	int nper[2];
	int recv_of[2][SCN_MAX_WR];	/* consuming WR by (dst ep, recv idx) */
	int nrecv[2];
	u64 bump[2];
	bool lossy, injected;
	int inj;
	bool cycle;		/* SIM_SCN_PSN_CYCLE run */
};

u32 sim_scn_flags;

static const u8 scn_ops[] = {
	SOFTRC_WR_SEND, SOFTRC_WR_SEND_WITH_IMM, SOFTRC_WR_SEND_WITH_INV,
	SOFTRC_WR_RDMA_WRITE, SOFTRC_WR_RDMA_WRITE_WITH_IMM,
	SOFTRC_WR_RDMA_READ, SOFTRC_WR_ATOMIC_CMP_AND_SWP,
	SOFTRC_WR_ATOMIC_FETCH_AND_ADD, SOFTRC_WR_ATOMIC_WRITE,
};

static u64 scn_alloc(struct scn *s, int ep, u32 len)
{
	u64 off = s->bump[ep];

	s->bump[ep] += ((u64)len + 15) & ~7ull;
	return off;
}

static u32 scn_len(struct sim *sim, u64 *total, bool big)
{
	u32 r = sim_rand(sim) % 100, len;

	if (!big && r >= 88)
		r = sim_rand(sim) % 88;
	if (r < 55)
		len = sim_rand(sim) % 65;
	else if (r < 88)
		len = sim_rand(sim) % 8193;
	else if (r < 99)
		len = sim_rand(sim) % 65537;
	else
		len = sim_rand(sim) % (1u << 20) + 1;
	if (*total + len > (2u << 20))
		len = sim_rand(sim) % 65;
	*total += len;
	return len;
}

static void scn_gen_wr(struct scn *s, struct scn_wr *w, bool bidir, bool big,
		       u64 *total)
{
	struct sim *sim = &s->sim;
	int dst;
	u32 len;

	w->src = bidir ? (int)(sim_rand(sim) & 1) : 0;
	dst = !w->src;
	w->wr.opcode = scn_ops[sim_rand(sim) % ARRAY_SIZE(scn_ops)];
	len = softrc_wr_is_atomic(w->wr.opcode) ||
	      w->wr.opcode == SOFTRC_WR_ATOMIC_WRITE ? 8 :
	      scn_len(sim, total, big);
	w->wr.length = len;
	w->wr.wr_id = s->nper[w->src];
	w->local_off = scn_alloc(s, w->src, len ? len : 8);
	w->wr.imm = (__be32)sim_rand(sim);
	w->wr.rkey = SCN_RKEY(dst);
	w->recv_idx = -1;
	if (sim_randf(sim) < 0.7)
		w->wr.send_flags |= SOFTRC_SEND_SIGNALED;
	if (sim_randf(sim) < 0.1)
		w->wr.send_flags |= SOFTRC_SEND_FENCE;
	if (sim_randf(sim) < 0.2)
		w->wr.send_flags |= SOFTRC_SEND_SOLICITED;
	if (softrc_wr_consumes_recv(w->wr.opcode)) {
		w->recv_len = w->wr.opcode == SOFTRC_WR_RDMA_WRITE_WITH_IMM ? 0 :
			      len + (sim_rand(sim) % 3 ? sim_rand(sim) % 64 : 0);
		w->recv_off = scn_alloc(s, dst, w->recv_len ? w->recv_len : 8);
		w->recv_idx = s->nrecv[dst];
		s->recv_of[dst][s->nrecv[dst]++] = w - s->w;
	}
	if (w->wr.opcode == SOFTRC_WR_SEND_WITH_INV)
		w->wr.inv_rkey = 0x50000 + (u32)(w - s->w);
	if (w->wr.opcode != SOFTRC_WR_SEND && w->wr.opcode != SOFTRC_WR_SEND_WITH_IMM &&
	    w->wr.opcode != SOFTRC_WR_SEND_WITH_INV) {
		w->remote_off = scn_alloc(s, dst, len ? len : 8);
		w->wr.remote_addr = sim_va(sim, dst, w->wr.rkey, w->remote_off);
	}
	if (softrc_wr_is_atomic(w->wr.opcode)) {
		w->init = sim_rand(sim);
		w->wr.compare_add = sim_rand(sim) % 4 ? w->init : w->init + 1;
		w->wr.swap = sim_rand(sim);
		if (w->wr.opcode == SOFTRC_WR_ATOMIC_FETCH_AND_ADD)
			w->wr.compare_add = sim_rand(sim);
	}
	s->per_ep[w->src][s->nper[w->src]++] = w - s->w;
}

/* Make WR @w fail at the responder: a bad R_Key or a too-small receive. */
static void scn_inject(struct scn *s, struct scn_wr *w)
{
	w->bad = true;
	if (w->recv_idx >= 0 && w->wr.opcode != SOFTRC_WR_RDMA_WRITE_WITH_IMM &&
	    w->wr.length > 0) {
		w->recv_len = w->wr.length - 1;
		return;
	}
	if (w->wr.remote_addr && w->wr.length) {	/* 0 bytes: no check */
		w->wr.rkey = SCN_BAD_RKEY;
		return;
	}
	w->bad = false;
}

static void scn_setup(struct scn *s, u64 seed, struct softrc_eng_attr *attr,
		      bool *late)
{
	struct sim *sim = &s->sim;
	struct sim_link *l = &sim->link;
	bool bidir, big;
	u64 total = 0;
	int i;

	sim->rng = seed;
	memset(attr, 0, sizeof(*attr));
	attr->pmtu = 256u << (sim_rand(sim) % 5);
	attr->sq_psn = sim_rand(sim) % 2 ? 0xffffff - sim_rand(sim) % 512 :
					   sim_rand(sim) & SOFTRC_PSN_MASK;
	attr->rq_psn = sim_rand(sim) % 2 ? 0xffffff - sim_rand(sim) % 64 :
					   sim_rand(sim) & SOFTRC_PSN_MASK;
	attr->timeout = 6 + sim_rand(sim) % 3;
	attr->retry_cnt = 7;
	attr->rnr_retry = 7;
	attr->min_rnr_timer = 1 + sim_rand(sim) % 6;
	attr->max_rd_atomic = 1 + sim_rand(sim) % SIM_NRES;
	attr->ackreq_every = sim_rand(sim) % 2 ? 0 : 1 + sim_rand(sim) % 32;
	attr->no_credits = sim_rand(sim) % 2;
	attr->max_unacked = sim_rand(sim) % 3 ? 0 : 2 + sim_rand(sim) % 64;

	if (sim_rand(sim) % 10 >= 3) {
		l->loss = sim_randf(sim) * 0.2;
		l->ack_loss = sim_rand(sim) % 2 ? sim_randf(sim) * 0.1 : 0;
		l->dup = sim_rand(sim) % 2 ? sim_randf(sim) * 0.05 : 0;
		l->reorder = sim_rand(sim) % 2 ? sim_randf(sim) * 0.1 : 0;
		l->corrupt = sim_rand(sim) % 2 ? sim_randf(sim) * 0.02 : 0;
	}
	l->delay_ns = 1000 + sim_rand(sim) % 4000;
	l->jitter_ns = sim_rand(sim) % 20000;
	s->lossy = l->loss > 0 || l->ack_loss > 0 || l->corrupt > 0;

	bidir = sim_rand(sim) % 2;
	big = sim_rand(sim) % 8 == 0;	/* messages over 8 KiB allowed */
	*late = sim_rand(sim) % 6 == 0;
	s->n = 1 + sim_rand(sim) % (sim_rand(sim) % 4 ? 24 : 128);
	s->bump[0] = 64;
	s->bump[1] = 64;
	for (i = 0; i < s->n; i++)
		scn_gen_wr(s, &s->w[i], bidir, big, &total);
	if (total > (256u << 10)) {
		/* go-back-N over megabytes at 20 % loss: keep runs short */
		l->loss /= 10;
		l->ack_loss /= 10;
	}
	s->inj = -1;
	if (sim_rand(sim) % 30 == 0) {
		s->inj = sim_rand(sim) % s->n;
		scn_inject(s, &s->w[s->inj]);
		s->injected = s->w[s->inj].bad;
		if (!s->injected)
			s->inj = -1;
	}
	/* retries: often the maximum (7), else any count, RNR 7 = infinite */
	attr->retry_cnt = sim_rand(sim) % 2 ? 7 : sim_rand(sim) % 8;
	attr->rnr_retry = sim_rand(sim) % 2 ? 7 : sim_rand(sim) % 8;
	/* the glue clock: exact, or coarse with ticks of 1 us .. 1 ms */
	sim->tick_ns = sim_rand(sim) % 2 ? 0 : 1000 + sim_rand(sim) % 1000000;
	attr->clock_slack_ns = 2 * sim->tick_ns;
	/* rarely, packets a parser rejects (BTH valid: rx_invalid) */
	if (s->lossy && sim_rand(sim) % 8 == 0)
		l->malform = sim_randf(sim) * 0.01;
	s->cycle = (sim_scn_flags & SIM_SCN_PSN_CYCLE) && sim_rand(sim) % 4 == 0;
}

static const u32 scn_budgets[] = { 0, 1, 3, 16, 64 };

static void scn_post_sends(struct scn *s, int e, int from, int to)
{
	int i;

	for (i = from; i < to; i++) {
		struct scn_wr *w = &s->w[s->per_ep[e][i]];

		if (sim_post_send(&s->sim, e, &w->wr, w->local_off) < 0)
			s->sim.violations++;
	}
}

static void scn_start(struct scn *s, const struct softrc_eng_attr *attr,
		      bool late, u64 seed)
{
	struct sim *sim = &s->sim;
	struct sim_link link = sim->link;
	u64 mem = s->bump[0] > s->bump[1] ? s->bump[0] : s->bump[1];
	u64 tick = sim->tick_ns;
	int e, i;

	sim_init(sim, attr, mem, seed ^ 0x5eed);
	sim->link = link;
	sim->tick_ns = tick;
	sim->fast_csum = seed % 4 != 0;	/* real ICRC in a quarter of runs */
	/* the glue's tx budget: unlimited, or small to pace READ responses */
	sim->tx_budget = scn_budgets[(seed / 4) % ARRAY_SIZE(scn_budgets)];
	for (e = 0; e < 2; e++) {
		struct sim_ep *ep = &sim->ep[e];

		for (i = 0; i < (int)ep->mem_len; i += 8) {
			u64 r = sim_rand(sim);

			memcpy(ep->mem + i, &r, ep->mem_len - i < 8 ?
			       ep->mem_len - i : 8);
		}
		sim_add_mr(sim, e, SCN_RKEY(e), 0, ep->mem_len,
			   SOFTRC_ACCESS_REMOTE_WRITE | SOFTRC_ACCESS_REMOTE_READ |
			   SOFTRC_ACCESS_REMOTE_ATOMIC);
	}
	for (i = 0; i < s->n; i++) {
		struct scn_wr *w = &s->w[i];

		if (softrc_wr_is_atomic(w->wr.opcode))
			memcpy(sim->ep[!w->src].mem + w->remote_off, &w->init, 8);
	}
	for (e = 0; e < 2; e++) {
		u64 t = 0;

		for (i = 0; i < s->nrecv[e]; i++) {
			struct scn_wr *w = &s->w[s->recv_of[e][i]];

			if (late && sim_rand(sim) % 2) {
				/* never 0: then a later receive would be posted first */
				t += 1 + sim_rand(sim) % 200000;
				sim_post_recv_at(sim, e, t, i, w->recv_len,
						 w->recv_off);
			} else if (t) {
				sim_post_recv_at(sim, e, t, i, w->recv_len,
						 w->recv_off);
			} else {
				sim_post_recv(sim, e, i, w->recv_len, w->recv_off);
			}
		}
		scn_post_sends(s, e, 0, s->cycle ? s->nper[e] / 2 : s->nper[e]);
	}
}

/*
 * As if 2^24 - n zero-length WRITEs had passed: both directions come back
 * to the PSNs they started the run with (SSN/MSN move by as many), with
 * the responders' READ/ATOMIC resources of the first half still saved.
 */
static void scn_fast_forward(struct scn *s)
{
	struct sim *sim = &s->sim;
	int e;

	for (e = 0; e < 2; e++) {
		struct softrc_eng_qp *q = &sim->ep[e].qp, *r = &sim->ep[!e].qp;
		u32 n = (q->attr.sq_psn - q->req.psn_next) & SOFTRC_PSN_MASK;

		q->req.psn_next = q->attr.sq_psn;
		q->req.una = q->req.psn_next;
		q->req.cur_psn = q->req.psn_next;
		r->resp.epsn = q->req.psn_next;
		q->req.next_ssn = softrc_psn_add(q->req.next_ssn, n);
		q->req.sent_ssn = softrc_psn_add(q->req.sent_ssn, n);
		q->req.msn = softrc_psn_add(q->req.msn, n);
		q->req.lsn = softrc_psn_add(q->req.lsn, n);
		r->resp.msn = softrc_psn_add(r->resp.msn, n);
		sim->ep[!e].last_msn = softrc_psn_add(sim->ep[!e].last_msn, n);
	}
}

/* SIM_SCN_PSN_CYCLE: the first half settled; a PSN cycle, then the rest. */
static void scn_second_half(struct scn *s)
{
	struct sim *sim = &s->sim;
	bool ok = !sim->ep[0].errored && !sim->ep[1].errored;
	int e, i;

	if (ok)
		scn_fast_forward(s);
	for (e = 0; e < 2; e++) {
		if (ok) {
			scn_post_sends(s, e, s->nper[e] / 2, s->nper[e]);
			continue;
		}
		for (i = s->nper[e] / 2; i < s->nper[e]; i++)
			s->w[s->per_ep[e][i]].unposted = true;
	}
}

static int scn_fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

static bool scn_eq(const u8 *a, const u8 *b, u32 n)
{
	return !n || !memcmp(a, b, n);
}

static bool scn_once(const u8 *t, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (t[i] != 1)
			return false;
	return true;
}

/* Data of a successful WR landed exactly once where it should. */
static int scn_check_data(struct scn *s, struct scn_wr *w, char *why, size_t len)
{
	struct sim_ep *src = &s->sim.ep[w->src], *dst = &s->sim.ep[!w->src];
	u32 n = w->wr.length;
	u64 exp;

	switch (w->wr.opcode) {
	case SOFTRC_WR_RDMA_WRITE:
	case SOFTRC_WR_RDMA_WRITE_WITH_IMM:
		if (!scn_eq(dst->mem + w->remote_off, src->mem + w->local_off, n) ||
		    !scn_once(dst->touch + w->remote_off, n))
			return scn_fail(why, len,
					"WRITE wr %llu data", (unsigned long long)w->wr.wr_id);
		break;
	case SOFTRC_WR_RDMA_READ:
		if (!scn_eq(src->mem + w->local_off, dst->mem + w->remote_off, n) ||
		    !scn_once(src->touch + w->local_off, n))
			return scn_fail(why, len,
					"READ wr %llu data", (unsigned long long)w->wr.wr_id);
		break;
	case SOFTRC_WR_ATOMIC_CMP_AND_SWP:
	case SOFTRC_WR_ATOMIC_FETCH_AND_ADD:
		exp = w->wr.opcode == SOFTRC_WR_ATOMIC_FETCH_AND_ADD ?
		      w->init + w->wr.compare_add :
		      w->init == w->wr.compare_add ? w->wr.swap : w->init;
		if (memcmp(src->mem + w->local_off, &w->init, 8) ||
		    memcmp(dst->mem + w->remote_off, &exp, 8) ||
		    !scn_once(dst->touch + w->remote_off, 8))
			return scn_fail(why, len,
					"ATOMIC wr %llu result", (unsigned long long)w->wr.wr_id);
		break;
	case SOFTRC_WR_ATOMIC_WRITE:
		/* the 8 bytes as posted, stored once (a duplicate never) */
		if (!scn_eq(dst->mem + w->remote_off, src->mem + w->local_off, 8) ||
		    !scn_once(dst->touch + w->remote_off, 8))
			return scn_fail(why, len, "ATOMIC WRITE wr %llu data",
					(unsigned long long)w->wr.wr_id);
		break;
	default:
		break;
	}
	return 0;
}

/* The responder of @e failed a request: fatal NAK sent, QP in ERROR. */
static bool scn_resp_failed(struct scn *s, int e)
{
	const struct softrc_eng_counters *c = &s->sim.ep[e].qp.cnt;

	return c->inv_req_naks_sent + c->rem_access_naks_sent +
	       c->rem_op_naks_sent;
}

/* Post-order index of ep @e's injected bad WR, or -1. */
static int scn_bad_idx(struct scn *s, int e)
{
	if (s->inj < 0 || s->w[s->inj].src != e)
		return -1;
	return (int)s->w[s->inj].wr.wr_id;
}

/*
 * May the first error completion of ep @e be @st, for its @k-th WR @w?
 * Only with a cause; every later WR is flushed (IBTA: WR_FLUSH_ERR only
 * after the first error completion), and a flush comes first only when
 * the QP's own responder failed (nothing on the send side did).
 */
static bool scn_first_error_ok(struct scn *s, int e, u32 k, struct scn_wr *w,
			       u8 st)
{
	struct sim_ep *ep = &s->sim.ep[e], *peer = &s->sim.ep[!e];
	int bad = scn_bad_idx(s, e);

	switch (st) {
	case SOFTRC_WC_RETRY_EXC_ERR:
		if (s->lossy)
			return true;
		if (!peer->errored)
			return false;
		/*
		 * Clean link, the peer failed on our bad WR: everything
		 * before it was executed and answered first (IBTA 9.5),
		 * so it must succeed. Needs the held fatal NAK (finding 2).
		 */
		return !(sim_scn_flags & SIM_SCN_HELD_NAK) || bad < 0 ||
		       (u32)bad <= k || !scn_resp_failed(s, !e);
	case SOFTRC_WC_RNR_RETRY_EXC_ERR:
		return ep->qp.attr.rnr_retry != 7;
	case SOFTRC_WC_REM_ACCESS_ERR:
		return w->bad;
	case SOFTRC_WC_REM_INV_REQ_ERR:
		return w->bad || peer->malformed_naks;
	case SOFTRC_WC_WR_FLUSH_ERR:
		return ep->errored && scn_resp_failed(s, e);
	default:
		return false;
	}
}

/* Send side of endpoint @e: completions and data. */
static int scn_check_sends(struct scn *s, int e, char *why, size_t len)
{
	struct sim_ep *ep = &s->sim.ep[e];
	u32 c = 0, k;
	bool failed = false;

	for (k = 0; k < (u32)s->nper[e]; k++) {
		struct scn_wr *w = &s->w[s->per_ep[e][k]];
		const struct softrc_eng_cqe *cqe = NULL;

		if (w->unposted)
			continue;
		while (c < ep->ncqe && (ep->cqe[c].c.flags & SOFTRC_CQE_RECV))
			c++;
		if (c < ep->ncqe && ep->cqe[c].c.wr_id == k)
			cqe = &ep->cqe[c++].c;
		if (cqe && cqe->status != SOFTRC_WC_SUCCESS) {
			if (!failed && !scn_first_error_ok(s, e, k, w, cqe->status))
				return scn_fail(why, len, "ep%d wr %u: status %u not allowed", e, k,
					 cqe->status);
			if (failed && cqe->status != SOFTRC_WC_WR_FLUSH_ERR)
				return scn_fail(why, len, "ep%d wr %u: %u after the first error", e,
					 k, cqe->status);
			failed = true;
			continue;
		}
		if (failed)
			return scn_fail(why, len,
					"ep%d wr %u: no error completion after an error", e, k);
		if (!cqe && (w->wr.send_flags & SOFTRC_SEND_SIGNALED))
			return scn_fail(why, len, "ep%d wr %u: signaled WR never completed", e, k);
		if (cqe && !(w->wr.send_flags & SOFTRC_SEND_SIGNALED))
			return scn_fail(why, len, "ep%d wr %u: unsignaled success completed", e, k);
		if (w->bad)
			return scn_fail(why, len, "ep%d wr %u: injected error succeeded", e, k);
		if (cqe && cqe->opcode != softrc_eng_wc_opcode_of(w->wr.opcode))
			return scn_fail(why, len, "ep%d wr %u: opcode %u", e, k, cqe->opcode);
		if (scn_check_data(s, w, why, len))
			return -1;
	}
	for (; c < ep->ncqe; c++)
		if (!(ep->cqe[c].c.flags & SOFTRC_CQE_RECV))
			return scn_fail(why, len,
					"ep%d: extra or out-of-order send completion %llu",
				 e, (unsigned long long)ep->cqe[c].c.wr_id);
	return 0;
}

static int scn_check_recv(struct scn *s, int e, const struct softrc_eng_cqe *cqe,
			  char *why, size_t len)
{
	struct scn_wr *w = &s->w[s->recv_of[e][cqe->wr_id]];
	struct sim_ep *ep = &s->sim.ep[e], *src = &s->sim.ep[!e];
	bool wimm = w->wr.opcode == SOFTRC_WR_RDMA_WRITE_WITH_IMM;
	bool imm = wimm || w->wr.opcode == SOFTRC_WR_SEND_WITH_IMM;
	bool inv = w->wr.opcode == SOFTRC_WR_SEND_WITH_INV;

	if (cqe->byte_len != w->wr.length ||
	    cqe->opcode != (wimm ? SOFTRC_WC_RECV_RDMA_WITH_IMM : SOFTRC_WC_RECV) ||
	    !!(cqe->flags & SOFTRC_CQE_WITH_IMM) != imm ||
	    (imm && cqe->imm != w->wr.imm) ||
	    !!(cqe->flags & SOFTRC_CQE_WITH_INV) != inv ||
	    (inv && cqe->inv_rkey != w->wr.inv_rkey))
		return scn_fail(why, len, "ep%d recv %llu: completion fields", e,
			 (unsigned long long)cqe->wr_id);
	if (!wimm && (!scn_eq(ep->mem + w->recv_off, src->mem + w->local_off,
			      w->wr.length) ||
		      !scn_once(ep->touch + w->recv_off, w->wr.length)))
		return scn_fail(why, len,
				"ep%d recv %llu: data", e, (unsigned long long)cqe->wr_id);
	return 0;
}

/* Receive side of endpoint @e: in order, matching the peer's WRs. */
static int scn_check_recvs(struct scn *s, int e, char *why, size_t len)
{
	struct sim_ep *ep = &s->sim.ep[e];
	u64 next = 0;
	bool failed = false;
	u32 c;

	for (c = 0; c < ep->ncqe; c++) {
		const struct softrc_eng_cqe *cqe = &ep->cqe[c].c;

		if (!(cqe->flags & SOFTRC_CQE_RECV))
			continue;
		if (cqe->wr_id != next++)
			return scn_fail(why, len, "ep%d: recv completion %llu out of order", e,
				 (unsigned long long)cqe->wr_id);
		if (cqe->status == SOFTRC_WC_SUCCESS) {
			if (failed)
				return scn_fail(why, len, "ep%d: recv success after error", e);
			if (scn_check_recv(s, e, cqe, why, len))
				return -1;
			continue;
		}
		/*
		 * The first error: the too-short receive of a bad SEND, or
		 * a malformed request mid-SEND; flushes need the QP in
		 * ERROR, and after the first error only flushes follow.
		 */
		if (cqe->status == SOFTRC_WC_WR_FLUSH_ERR ? !ep->errored :
		    failed || !(cqe->status == SOFTRC_WC_LOC_LEN_ERR ?
				s->w[s->recv_of[e][cqe->wr_id]].bad :
				cqe->status == SOFTRC_WC_REM_INV_REQ_ERR &&
				ep->malformed_naks))
			return scn_fail(why, len, "ep%d recv %llu: status %u", e,
				 (unsigned long long)cqe->wr_id, cqe->status);
		failed = true;
	}
	if (ep->errored && next != ep->nrecv_posted)
		return scn_fail(why, len, "ep%d: QP in ERROR with receives not flushed", e);
	return 0;
}

/* An error completion other than a flush, or its responder failed. */
static bool scn_error_cause(struct scn *s, int e)
{
	struct sim_ep *ep = &s->sim.ep[e];
	u32 c;

	for (c = 0; c < ep->ncqe; c++)
		if (ep->cqe[c].c.status != SOFTRC_WC_SUCCESS &&
		    ep->cqe[c].c.status != SOFTRC_WC_WR_FLUSH_ERR)
			return true;
	return scn_resp_failed(s, e);
}

static int scn_check(struct scn *s, char *why, size_t len)
{
	struct sim *sim = &s->sim;
	int e;
	u64 i;

	if (sim->violations)
		return scn_fail(why, len, "%s", sim->why);
	for (e = 0; e < 2; e++) {
		struct sim_ep *ep = &sim->ep[e];

		if (!ep->errored && !softrc_eng_idle(&ep->qp))
			return scn_fail(why, len,
					"ep%d hung: head %u tail %u una %x next %x state %s",
				 e, ep->qp.req.head, ep->qp.req.tail,
				 ep->qp.req.una, ep->qp.req.psn_next,
				 softrc_eng_req_state_names[ep->qp.req.state]);
		if (ep->errored && !scn_error_cause(s, e))
			return scn_fail(why, len, "ep%d in ERROR without cause", e);
		for (i = 0; i < ep->mem_len; i++)
			if (ep->touch[i] > 1)
				return scn_fail(why, len, "ep%d: byte %llu written %u times", e,
					 (unsigned long long)i, ep->touch[i]);
		if (scn_check_sends(s, e, why, len) ||
		    scn_check_recvs(s, e, why, len))
			return -1;
	}
	return 0;
}

int sim_random_scenario(u64 seed, bool verbose, struct sim_scn_stats *st,
			char *why, size_t len)
{
	struct scn *s = calloc(1, sizeof(*s));
	struct softrc_eng_attr attr;
	bool late, quiet;
	int ret, e;

	if (!s)
		abort();
	scn_setup(s, seed, &attr, &late);
	scn_start(s, &attr, late, seed);
	if (verbose)
		fprintf(stderr,
			"# seed %llu: %d WRs pmtu %u psn %x/%x loss %.3f ack %.3f dup %.3f reord %.3f corrupt %.3f malform %.3f late %d inj %d credits %d rd %u retry %u rnr %u tick %llu cycle %d\n",
			(unsigned long long)seed, s->n, attr.pmtu, attr.sq_psn,
			attr.rq_psn, s->sim.link.loss, s->sim.link.ack_loss,
			s->sim.link.dup, s->sim.link.reorder,
			s->sim.link.corrupt, s->sim.link.malform, late, s->inj,
			!attr.no_credits, attr.max_rd_atomic, attr.retry_cnt,
			attr.rnr_retry, (unsigned long long)s->sim.tick_ns,
			s->cycle);
	s->sim.print = verbose && getenv("SOFTRC_SIM_PRINT");
	quiet = sim_run(&s->sim, 60ull * 1000 * 1000 * 1000);
	if (quiet && s->cycle) {
		scn_second_half(s);
		quiet = sim_run(&s->sim, s->sim.now + 60ull * 1000 * 1000 * 1000);
	}
	if (!quiet) {
		snprintf(why, len, "did not settle within 60 s virtual");
		ret = -1;
	} else {
		ret = scn_check(s, why, len);
	}
	if (st) {
		st->wrs += s->n;
		st->pkts += s->sim.wire_pkts;
		for (e = 0; e < 2; e++) {
			st->bytes += s->sim.ep[e].placed;
			st->retry_exc += s->sim.ep[e].qp.cnt.retry_exceeded;
			st->rnr_exc += s->sim.ep[e].qp.cnt.rnr_retry_exceeded;
		}
		st->malformed += s->sim.malformed;
		st->timer_fires += s->sim.timer_fires;
		st->errors_injected += s->injected;
	}
	sim_free(&s->sim);
	free(s);
	return ret;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Recording glue for hand-driven engine unit tests (see coretest.h).
 *
 * Context: host user space only.
 */
#include <stdlib.h>
#include <string.h>
#include "coretest.h"

static int ct_xmit(void *ctx, const struct softrc_pkt *pkt,
		   const struct softrc_eng_buf *pl)
{
	struct ct *t = ctx;
	const struct ct_pin *p = pl->pin;

	/* payload through a pin whose memory is gone, or a failing gather */
	if ((pl->kind == SOFTRC_BUF_MR && (!p || !p->held || p->gone)) ||
	    (pl->kind == SOFTRC_BUF_SEND_WQE && t->gather_fail)) {
		t->xmit_fails++;
		return SOFTRC_E_MEM;
	}
	if (t->ntx < CT_MAX) {
		t->tx[t->ntx] = *pkt;
		t->txpl[t->ntx] = *pl;
	}
	t->ntx++;
	return 0;
}

static int ct_mr_check(void *ctx, u32 rkey, u64 va, u32 len, u32 access,
		       void **pin)
{
	struct ct *t = ctx;

	t->mr_checks++;
	t->last_check_len = len;
	t->last_check_access = access;
	if (t->mr_fail || t->npin == CT_MAX)
		return -1;
	t->pin[t->npin].rkey = rkey;
	t->pin[t->npin].held = true;
	*pin = &t->pin[t->npin++];
	t->pins++;
	return 0;
}

static void ct_key_put(void *ctx, void *pin)
{
	struct ct *t = ctx;
	struct ct_pin *p = pin;

	if (!p || p < t->pin || p >= t->pin + t->npin || !p->held) {
		t->bad_puts++;
		return;
	}
	p->held = false;
	t->pins--;
}

void ct_pins_gone(struct ct *t)
{
	int i;

	for (i = 0; i < t->npin; i++)
		t->pin[i].gone = true;
}

static int ct_place_cb(void *ctx, const struct softrc_eng_buf *dst, void *rx,
		       u32 pkt_off)
{
	struct ct *t = ctx;
	const struct ct_pin *p = dst->pin;

	if (t->place_fail)
		return SOFTRC_E_MEM;
	if (dst->kind == SOFTRC_BUF_MR && (!p || !p->held || p->gone))
		return SOFTRC_E_MEM;
	if (t->nplace < CT_MAX) {
		t->place[t->nplace].dst = *dst;
		t->place[t->nplace].pkt_off = pkt_off;
	}
	t->nplace++;
	return 0;
}

/* UD: the GRH slot, recorded as a placement at CT_GRH_OFF */
static int ct_place_grh(void *ctx, const struct softrc_eng_buf *dst, void *rx)
{
	return ct_place_cb(ctx, dst, rx, CT_GRH_OFF);
}

/* ops->atomic, atomic_write and flush fail: set to, or memory not held. */
static bool ct_mem_fails(const struct ct *t, const void *pin)
{
	const struct ct_pin *p = pin;

	return t->atomic_fail || !p || !p->held || p->gone;
}

static int ct_atomic(void *ctx, void *pin, u64 va, bool cmp_swap,
		     u64 swap_add, u64 compare, u64 *orig)
{
	struct ct *t = ctx;
	u64 v = t->mem;

	if (ct_mem_fails(t, pin))
		return SOFTRC_E_MEM;
	t->mem = cmp_swap ? (v == compare ? swap_add : v) : v + swap_add;
	t->natomic++;
	*orig = v;
	return 0;
}

/* records the store (the test packets carry no bytes) */
static int ct_atomic_write(void *ctx, void *pin, u64 va, void *rx, u32 pkt_off)
{
	struct ct *t = ctx;

	if (ct_mem_fails(t, pin))
		return SOFTRC_E_MEM;
	t->natomic_write++;
	t->aw_va = va;
	t->aw_off = pkt_off;
	return 0;
}

/* records the flush: how many ran, the last one's placement type */
static int ct_flush(void *ctx, void *pin, u8 type)
{
	struct ct *t = ctx;

	if (ct_mem_fails(t, pin))
		return SOFTRC_E_MEM;
	t->nflush++;
	t->flush_type = type;
	return 0;
}

static int ct_atomic_result(void *ctx, u32 slot, u64 orig)
{
	struct ct *t = ctx;

	if (t->result_fail)
		return SOFTRC_E_MEM;
	t->atomic_result = orig;
	t->nresult++;
	return 0;
}

static int ct_invalidate(void *ctx, u32 rkey)
{
	struct ct *t = ctx;

	if (t->ninval < 16)
		t->inval[t->ninval] = rkey;
	t->ninval++;
	return rkey == 0xdeadu ? -1 : 0;
}

static u8 ct_local(void *ctx, u32 slot)
{
	struct ct *t = ctx;

	if (t->nlocal < 16)
		t->local_slot[t->nlocal] = slot;
	t->nlocal++;
	return t->local_fail;
}

static void ct_complete(void *ctx, const struct softrc_eng_cqe *cqe)
{
	struct ct *t = ctx;

	if (t->ncqe < CT_MAX)
		t->cqe[t->ncqe] = *cqe;
	t->ncqe++;
}

static void ct_timer(void *ctx, enum softrc_eng_timer_id id, u64 deadline)
{
	struct ct *t = ctx;

	t->deadline[id] = deadline;
	t->timer_calls++;
}

static void ct_qp_error(void *ctx)
{
	struct ct *t = ctx;

	t->errored = true;
}

static void ct_retransmit(void *ctx, u32 psn, enum softrc_eng_retry_reason why)
{
	struct ct *t = ctx;

	if (t->nretx < 16) {
		t->retx_psn[t->nretx] = psn;
		t->retx_why[t->nretx] = why;
	}
	t->nretx++;
}

static void ct_rnr_wait(void *ctx, u32 psn, u64 wait_ns)
{
	struct ct *t = ctx;

	t->rnr_psn = psn;
	t->rnr_wait_ns = wait_ns;
	t->nrnr++;
}

static void ct_timer_expired(void *ctx, enum softrc_eng_timer_id id)
{
	struct ct *t = ctx;

	t->nexpired[id]++;
}

static const struct softrc_eng_ops ct_ops = {
	.xmit = ct_xmit,
	.mr_check = ct_mr_check,
	.key_put = ct_key_put,
	.place = ct_place_cb,
	.place_grh = ct_place_grh,
	.atomic = ct_atomic,
	.atomic_result = ct_atomic_result,
	.atomic_write = ct_atomic_write,
	.flush = ct_flush,
	.invalidate = ct_invalidate,
	.local = ct_local,
	.complete = ct_complete,
	.timer = ct_timer,
	.qp_error = ct_qp_error,
	.retransmit = ct_retransmit,
	.rnr_wait = ct_rnr_wait,
	.timer_expired = ct_timer_expired,
};

void ct_attr_default(struct softrc_eng_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->pmtu = 1024;
	attr->sq_psn = 1000;
	attr->rq_psn = 5000;
	attr->dqpn = 0x12;
	attr->pkey = 0xffff;
	attr->timeout = 10;
	attr->retry_cnt = 7;
	attr->rnr_retry = 7;
	attr->min_rnr_timer = 5;
	attr->max_rd_atomic = 4;
}

void ct_init(struct ct *t, const struct softrc_eng_attr *attr)
{
	struct softrc_eng_attr a;
	struct softrc_eng_storage st = {
		.sq = t->sq, .sq_depth = 64, .rq = t->rq, .rq_depth = 64,
		.res = t->res, .nres = 4,
	};

	memset(t, 0, sizeof(*t));
	if (!attr) {
		ct_attr_default(&a);
		attr = &a;
	}
	if (softrc_eng_init(&t->qp, &ct_ops, t, attr, &st))
		abort();
}

void ct_init_pmtu(struct ct *t, u32 pmtu)
{
	struct softrc_eng_attr attr;

	ct_attr_default(&attr);
	attr.pmtu = pmtu;
	ct_init(t, &attr);
}

void ct_init_deny(struct ct *t, u32 remote_deny)
{
	struct softrc_eng_attr attr;

	ct_attr_default(&attr);
	attr.remote_deny = remote_deny;
	ct_init(t, &attr);
}

static struct softrc_pkt ct_pkt(u8 opcode, u32 psn)
{
	struct softrc_pkt p;

	memset(&p, 0, sizeof(p));
	p.opcode = opcode;
	p.op = softrc_opcode_get(opcode);
	p.psn = psn & SOFTRC_PSN_MASK;
	p.pkey = 0xffff;
	p.payload_off = p.op ? p.op->hdr_len : 12;
	return p;
}

struct softrc_pkt ct_req(u8 opcode, u32 psn, u32 payload_len, bool ackreq)
{
	struct softrc_pkt p = ct_pkt(opcode, psn);

	p.payload_len = payload_len;
	p.ackreq = ackreq;
	p.rkey = 0x77;
	p.va = 0x10000;
	if (p.op && (p.op->flags & (SOFTRC_OPF_ATOMIC | SOFTRC_OPF_ATOMIC_WRITE)))
		p.dma_len = 8;
	return p;
}

struct softrc_pkt ct_ack(u32 psn, u8 syndrome, u32 msn)
{
	struct softrc_pkt p = ct_pkt(SOFTRC_OP_ACKNOWLEDGE, psn);

	p.syndrome = syndrome;
	p.msn = msn;
	return p;
}

struct softrc_pkt ct_resp(u8 opcode, u32 psn, u32 payload_len, u32 msn)
{
	struct softrc_pkt p = ct_pkt(opcode, psn);

	p.payload_len = payload_len;
	p.msn = msn;
	p.syndrome = SOFTRC_AETH_ACK | SOFTRC_AETH_CREDIT_INVALID;
	return p;
}

void ct_rx(struct ct *t, const struct softrc_pkt *pkt, u64 now)
{
	static u8 rxbuf[8192];

	softrc_eng_rx(&t->qp, pkt, rxbuf, now);
}

void ct_rx_req(struct ct *t, u8 op, u32 psn, u32 len, bool ackreq, u32 dma)
{
	struct softrc_pkt p = ct_req(op, psn, len, ackreq);

	p.dma_len = dma;
	ct_rx(t, &p, 0);
}

struct softrc_eng_send_wr ct_wr(const struct ct *t, u8 opcode, u32 len, u8 flags)
{
	struct softrc_eng_send_wr wr = {
		.wr_id = 0x100 + t->qp.req.tail,
		.opcode = opcode,
		.length = len,
		.send_flags = flags,
		.remote_addr = 0x20000,
		.rkey = 0x55,
	};

	return wr;
}

int ct_post(struct ct *t, u8 opcode, u32 len, u8 flags)
{
	struct softrc_eng_send_wr wr = ct_wr(t, opcode, len, flags);

	wr.compare_add = 1;
	wr.swap = 2;
	return softrc_eng_post_send(&t->qp, &wr);
}

int ct_count_tx(const struct ct *t, u8 opcode)
{
	int i, n = 0;

	for (i = 0; i < t->ntx && i < CT_MAX; i++)
		n += t->tx[i].opcode == opcode;
	return n;
}

bool ct_last_is_nak(const struct ct *t, u8 code, u32 psn)
{
	const struct softrc_pkt *p = &t->tx[t->ntx - 1];

	return t->ntx && p->opcode == SOFTRC_OP_ACKNOWLEDGE &&
	       p->syndrome == (SOFTRC_AETH_NAK | code) && p->psn == psn;
}

bool ct_is_rd_reply(const struct softrc_pkt *p, u32 psn)
{
	return p->opcode == SOFTRC_OP_RDMA_READ_RESPONSE_ONLY &&
	       p->psn == psn && !p->payload_len &&
	       softrc_syndrome_type(p->syndrome) == SOFTRC_AETH_ACK;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * mw: memory windows, invalidation and local-operation order, through
 * stock libibverbs + librxe, on one device with pairs of RC QPs connected
 * to each other (A and B). Each case checks the work completions and
 * what the peer can still do with the key afterwards:
 *   - type 1 (ibv_bind_mw) and type 2 (IBV_WR_BIND_MW) binds; WRITE and
 *     READ through the window; the key byte changes per bind
 *   - bind to an MR without IBV_ACCESS_MW_BIND -> IBV_WC_MW_BIND_ERR;
 *     a type 2 MW already bound -> IBV_WC_MW_BIND_ERR
 *   - access outside the window -> IBV_WC_REM_ACCESS_ERR at the requester
 *   - SEND_WITH_INV of a bound type 2 MW: IBV_WC_WITH_INV and the rkey in
 *     the receive completion; a WRITE through it afterwards ->
 *     IBV_WC_REM_ACCESS_ERR; of an ordinary MR's rkey or a type 1 MW's ->
 *     IBV_WC_REM_INV_REQ_ERR; of an MW bound through another QP -> error
 *   - LOCAL_INV after a 4 MiB WRITE completes after it (post order); of
 *     an ordinary MR -> IBV_WC_LOC_QP_OP_ERR
 *   - dereg of an MR with a window bound -> error; dealloc of a bound
 *     window succeeds and its rkey stops working; a type 2 MW whose QP
 *     was destroyed serves no later QP
 *
 * Usage: mw -d DEV -g GID_INDEX. Prints KTAP; exits non-zero on failure.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "rc_conn.h"
#include "timing.h"

#define BUF_SIZE	(8u << 20)
#define BIG		(BUF_SIZE / 2)	/* a whole MR */

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static union ibv_gid gid;
static int gid_idx;

/* One side of a pair: QP, CQ, a buffer with two MRs on it. */
struct side {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	uint8_t *buf;
	struct ibv_mr *mr;	/* all rights + MW_BIND */
	struct ibv_mr *plain;	/* all rights, no MW_BIND */
};

struct pair {
	struct side a, b;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for one completion on @cq; false on timeout (20 s, scaled). */
static bool poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double end = now() + tmo(20);
	int n;

	while (now() < end) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n > 0)
			return true;
		if (n < 0)
			break;
	}
	memset(wc, 0, sizeof(*wc));
	wc->status = IBV_WC_GENERAL_ERR;
	wc->wr_id = ~0ull;
	return false;
}

/*
 * Each pair starts at new PSNs, so a late packet of a destroyed pair can
 * never fit a new pair that reuses its QPNs.
 */
static uint32_t next_psn = 100;

static int to_rts(struct ibv_qp *qp, uint32_t dqpn, uint32_t psn)
{
	struct rc_conn c = {
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_MW_BIND,
		.mtu = IBV_MTU_1024, .dqpn = dqpn, .dgid = gid,
		.sgid_index = gid_idx, .rq_psn = psn, .sq_psn = psn,
		.rd_atomic = 4, .min_rnr_timer = 12, .timeout = timeout_exp(14),
		.retry_cnt = 7, .rnr_retry = 7,
	};

	return rc_qp_to_rts(qp, &c) ? -1 : 0;
}

static int side_init(struct side *s)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	memset(s, 0, sizeof(*s));
	s->cq = ibv_create_cq(ctx, 256, NULL, NULL, 0);
	s->buf = calloc(1, BUF_SIZE);
	if (!s->cq || !s->buf)
		return -1;
	s->mr = ibv_reg_mr(pd, s->buf, BUF_SIZE / 2, rw | IBV_ACCESS_MW_BIND);
	s->plain = ibv_reg_mr(pd, s->buf + BUF_SIZE / 2, BUF_SIZE / 2, rw);
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd, &ia);
	return s->mr && s->plain && s->qp ? 0 : -1;
}

static void side_fini(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	if (s->plain)
		ibv_dereg_mr(s->plain);
	if (s->cq)
		ibv_destroy_cq(s->cq);
	free(s->buf);
}

static bool pair_up(struct pair *p)
{
	next_psn = (next_psn + 0x10000) & 0xffffff;
	if (side_init(&p->a) || side_init(&p->b) ||
	    to_rts(p->a.qp, p->b.qp->qp_num, next_psn) ||
	    to_rts(p->b.qp, p->a.qp->qp_num, next_psn)) {
		printf("Bail out! cannot set up a QP pair: %s\n", strerror(errno));
		exit(1);
	}
	return true;
}

static void pair_down(struct pair *p)
{
	side_fini(&p->a);
	side_fini(&p->b);
}

static int post(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	wr->send_flags |= IBV_SEND_SIGNALED;
	return ibv_post_send(qp, wr, &bad);
}

/* RDMA WRITE/READ of @len bytes from @s's buffer to (@rkey, @va). */
static enum ibv_wc_status rdma(struct side *s, enum ibv_wr_opcode op,
			       uint32_t rkey, uint64_t va, uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf, .length = len, .lkey = s->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = 1, .opcode = op,
		.wr.rdma = { .remote_addr = va, .rkey = rkey },
	};
	struct ibv_wc wc;

	if (post(s->qp, &wr))
		return IBV_WC_GENERAL_ERR;
	poll1(s->cq, &wc);
	return wc.status;
}

/* Type 2 bind through @s's QP: the new rkey, or 0 with *st set. */
static uint32_t bind2(struct side *s, struct ibv_mw *mw, struct ibv_mr *mr,
		      uint64_t off, uint64_t len, int access,
		      enum ibv_wc_status *st)
{
	struct ibv_send_wr wr = {
		.wr_id = 2, .opcode = IBV_WR_BIND_MW,
	};
	struct ibv_wc wc;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)mr->addr + off;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	*st = IBV_WC_GENERAL_ERR;
	if (post(s->qp, &wr))
		return 0;
	poll1(s->cq, &wc);
	*st = wc.status;
	if (wc.status == IBV_WC_SUCCESS && wc.opcode != IBV_WC_BIND_MW)
		*st = IBV_WC_GENERAL_ERR;
	return wc.status == IBV_WC_SUCCESS ? wr.bind_mw.rkey : 0;
}

/* B sends a SEND_WITH_INV of @rkey to A; A's receive completion in *rwc. */
static enum ibv_wc_status send_inv(struct pair *p, uint32_t rkey,
				   struct ibv_wc *rwc)
{
	struct ibv_sge rs = {
		.addr = (uintptr_t)p->a.buf, .length = 64, .lkey = p->a.mr->lkey,
	};
	struct ibv_recv_wr rwr = { .wr_id = 9, .sg_list = &rs, .num_sge = 1 };
	struct ibv_sge ss = {
		.addr = (uintptr_t)p->b.buf, .length = 16, .lkey = p->b.mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 3, .sg_list = &ss, .num_sge = 1,
		.opcode = IBV_WR_SEND_WITH_INV, .invalidate_rkey = rkey,
	};
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc;

	if (ibv_post_recv(p->a.qp, &rwr, &rbad) || post(p->b.qp, &wr))
		return IBV_WC_GENERAL_ERR;
	poll1(p->b.cq, &wc);
	poll1(p->a.cq, rwc);
	return wc.status;
}

static uint64_t va_of(struct side *s, uint64_t off)
{
	return (uintptr_t)s->buf + off;
}

static void test_type2(void)
{
	struct pair p;
	struct ibv_mw *mw;
	struct ibv_wc rwc;
	enum ibv_wc_status st;
	uint32_t rkey;

	pair_up(&p);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	if (!ok(mw, "type 2: alloc_mw"))
		return;
	ok(mw->rkey && (mw->rkey >> 8) != (p.a.mr->rkey >> 8) &&
	   (mw->rkey >> 8) != (p.a.plain->rkey >> 8),
	   "type 2: rkey %#x shares the key space with the MRs, index distinct",
	   mw->rkey);
	rkey = bind2(&p.a, mw, p.a.mr, 4096, 8192,
		     IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, &st);
	ok(rkey && st == IBV_WC_SUCCESS && (rkey >> 8) == (mw->rkey >> 8),
	   "type 2: IBV_WR_BIND_MW completes (IBV_WC_BIND_MW), rkey %#x", rkey);
	memset(p.b.buf, 0x5c, 8192);
	ok(rdma(&p.b, IBV_WR_RDMA_WRITE, rkey, va_of(&p.a, 4096), 8192) ==
	   IBV_WC_SUCCESS && p.a.buf[4096] == 0x5c && p.a.buf[4096 + 8191] == 0x5c &&
	   p.a.buf[4095] == 0 && p.a.buf[4096 + 8192] == 0,
	   "type 2: 8 KiB WRITE through the window lands exactly there");
	ok(rdma(&p.b, IBV_WR_RDMA_READ, rkey, va_of(&p.a, 4096), 100) ==
	   IBV_WC_SUCCESS, "type 2: READ through the window");
	bind2(&p.a, mw, p.a.mr, 0, 4096, IBV_ACCESS_REMOTE_WRITE, &st);
	ok(st == IBV_WC_MW_BIND_ERR,
	   "type 2: bind of an MW already bound -> IBV_WC_MW_BIND_ERR (%s)",
	   ibv_wc_status_str(st));
	ok(!ibv_dealloc_mw(mw), "type 2: dealloc a bound window");
	pair_down(&p);

	/* SEND_WITH_INV, then the key is dead */
	pair_up(&p);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	rkey = bind2(&p.a, mw, p.a.mr, 0, 65536, IBV_ACCESS_REMOTE_WRITE, &st);
	ok(rkey, "inv: bind a type 2 MW (%s)", ibv_wc_status_str(st));
	errno = 0;
	ok(ibv_dereg_mr(p.a.mr) != 0,
	   "inv: dereg of an MR with a window bound fails (errno %d)", errno);
	st = send_inv(&p, rkey, &rwc);
	ok(st == IBV_WC_SUCCESS && rwc.status == IBV_WC_SUCCESS &&
	   (rwc.wc_flags & IBV_WC_WITH_INV) && rwc.invalidated_rkey == rkey &&
	   rwc.opcode == IBV_WC_RECV && rwc.byte_len == 16,
	   "inv: SEND_WITH_INV: receive has IBV_WC_WITH_INV and rkey %#x (got %#x flags %#x)",
	   rkey, rwc.invalidated_rkey, rwc.wc_flags);
	st = rdma(&p.b, IBV_WR_RDMA_WRITE, rkey, va_of(&p.a, 0), 64);
	ok(st == IBV_WC_REM_ACCESS_ERR,
	   "inv: WRITE through the invalidated MW -> IBV_WC_REM_ACCESS_ERR (%s)",
	   ibv_wc_status_str(st));
	ok(!ibv_dealloc_mw(mw), "inv: dealloc the invalidated MW");
	pair_down(&p);
}

static void test_errors(void)
{
	enum ibv_wc_status st;
	struct ibv_mw *mw;
	struct ibv_wc rwc;
	struct pair p, q;
	uint32_t rkey;

	pair_up(&p);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	bind2(&p.a, mw, p.a.plain, 0, 4096, IBV_ACCESS_REMOTE_WRITE, &st);
	ok(st == IBV_WC_MW_BIND_ERR,
	   "err: bind to an MR without IBV_ACCESS_MW_BIND -> IBV_WC_MW_BIND_ERR (%s)",
	   ibv_wc_status_str(st));
	pair_down(&p);

	pair_up(&p);
	rkey = bind2(&p.a, mw, p.a.mr, 0, 4096, IBV_ACCESS_REMOTE_WRITE, &st);
	st = rdma(&p.b, IBV_WR_RDMA_WRITE, rkey, va_of(&p.a, 4000), 200);
	ok(rkey && st == IBV_WC_REM_ACCESS_ERR,
	   "err: WRITE crossing the window end -> IBV_WC_REM_ACCESS_ERR (%s)",
	   ibv_wc_status_str(st));
	ibv_dealloc_mw(mw);	/* unbinds: the MR can go */
	pair_down(&p);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);

	pair_up(&p);
	st = send_inv(&p, p.a.plain->rkey, &rwc);
	ok(st == IBV_WC_REM_INV_REQ_ERR && rwc.status != IBV_WC_SUCCESS,
	   "err: SEND_WITH_INV of an ordinary MR's rkey -> IBV_WC_REM_INV_REQ_ERR (%s), receive %s",
	   ibv_wc_status_str(st), ibv_wc_status_str(rwc.status));
	pair_down(&p);

	/* type 2 MW bound through pair p's A; pair q's A may not use it */
	pair_up(&p);
	pair_up(&q);
	rkey = bind2(&p.a, mw, p.a.mr, 0, 4096, IBV_ACCESS_REMOTE_WRITE, &st);
	ok(rkey, "err: bind a type 2 MW through pair 1 (%s)",
	   ibv_wc_status_str(st));
	st = rdma(&q.b, IBV_WR_RDMA_WRITE, rkey, va_of(&p.a, 0), 8);
	ok(st == IBV_WC_REM_ACCESS_ERR,
	   "err: a type 2 MW serves only the QP it was bound through (%s)",
	   ibv_wc_status_str(st));
	pair_down(&q);
	pair_up(&q);
	st = send_inv(&q, rkey, &rwc);
	ok(st == IBV_WC_REM_INV_REQ_ERR,
	   "err: SEND_WITH_INV through another QP -> IBV_WC_REM_INV_REQ_ERR (%s)",
	   ibv_wc_status_str(st));
	pair_down(&q);
	ok(rdma(&p.b, IBV_WR_RDMA_WRITE, rkey, va_of(&p.a, 0), 8) ==
	   IBV_WC_SUCCESS, "err: ... and the window still works on its own QP");
	ok(!ibv_dealloc_mw(mw), "err: dealloc of a bound type 2 window succeeds");
	st = rdma(&p.b, IBV_WR_RDMA_WRITE, rkey, va_of(&p.a, 0), 8);
	ok(st == IBV_WC_REM_ACCESS_ERR,
	   "err: WRITE through a deallocated window -> IBV_WC_REM_ACCESS_ERR (%s)",
	   ibv_wc_status_str(st));
	ok(!ibv_dereg_mr(p.a.mr), "err: the MR deregisters once the window is gone");
	p.a.mr = NULL;
	pair_down(&p);
}

/* A type 2 MW bound through a destroyed QP serves no QP created later. */
static void test_qp_gone(void)
{
	enum ibv_wc_status st;
	struct ibv_mw *mw;
	struct pair p, q;
	uint32_t rkey;

	pair_up(&p);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	rkey = bind2(&p.a, mw, p.a.mr, 0, 4096, IBV_ACCESS_REMOTE_WRITE, &st);
	ok(rkey, "qp gone: bind a type 2 MW (%s)", ibv_wc_status_str(st));
	ibv_destroy_qp(p.a.qp);
	ibv_destroy_qp(p.b.qp);
	p.a.qp = p.b.qp = NULL;
	pair_up(&q);
	st = rdma(&q.b, IBV_WR_RDMA_WRITE, rkey, va_of(&p.a, 0), 8);
	ok(st == IBV_WC_REM_ACCESS_ERR,
	   "qp gone: its window serves no new QP -> IBV_WC_REM_ACCESS_ERR (%s)",
	   ibv_wc_status_str(st));
	ok(!ibv_dealloc_mw(mw), "qp gone: dealloc the window");
	pair_down(&q);
	pair_down(&p);
}

/* Type 1 bind through ibv_bind_mw (librxe posts a BIND_MW WQE). */
static bool bind1(struct side *s, struct ibv_mw *mw, struct ibv_mr *mr,
		  uint64_t len, enum ibv_wc_status *st)
{
	struct ibv_mw_bind b = {
		.wr_id = 11, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = { .mr = mr, .addr = (uintptr_t)mr->addr,
			       .length = len,
			       .mw_access_flags = IBV_ACCESS_REMOTE_WRITE },
	};
	struct ibv_wc wc;

	*st = IBV_WC_GENERAL_ERR;
	if (ibv_bind_mw(s->qp, mw, &b) || !poll1(s->cq, &wc))
		return false;
	*st = wc.status;
	return wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_BIND_MW &&
	       wc.wr_id == 11;
}

static void test_type1(void)
{
	enum ibv_wc_status st;
	struct ibv_mw *mw;
	struct ibv_wc rwc;
	struct pair p;
	uint32_t old;

	pair_up(&p);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	if (!ok(mw, "type 1: alloc_mw")) {
		pair_down(&p);
		return;
	}
	old = mw->rkey;
	ok(bind1(&p.a, mw, p.a.mr, 4096, &st) && mw->rkey != old &&
	   (mw->rkey >> 8) == (old >> 8),
	   "type 1: ibv_bind_mw completes, key byte changes (%#x)", old);
	ok(rdma(&p.b, IBV_WR_RDMA_WRITE, mw->rkey, va_of(&p.a, 0), 4096) ==
	   IBV_WC_SUCCESS, "type 1: WRITE through the window");
	ok(bind1(&p.a, mw, p.a.mr, 0, &st),
	   "type 1: zero-length bind (unbind) completes (%s)", ibv_wc_status_str(st));
	ok(rdma(&p.b, IBV_WR_RDMA_WRITE, mw->rkey, va_of(&p.a, 0), 8) ==
	   IBV_WC_REM_ACCESS_ERR, "type 1: no access after a zero-length bind");
	pair_down(&p);

	pair_up(&p);
	old = mw->rkey;
	ok(bind1(&p.a, mw, p.a.mr, 4096, &st), "type 1: rebind on another QP");
	ok(rdma(&p.b, IBV_WR_RDMA_WRITE, old, va_of(&p.a, 0), 8) ==
	   IBV_WC_REM_ACCESS_ERR, "type 1: the previous rkey is dead after a bind");
	ok(!ibv_dealloc_mw(mw), "type 1: dealloc a bound window");
	pair_down(&p);

	pair_up(&p);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	ok(mw && bind1(&p.a, mw, p.a.mr, 4096, &st), "type 1: bind a new one");
	st = send_inv(&p, mw->rkey, &rwc);
	ok(st == IBV_WC_REM_INV_REQ_ERR,
	   "type 1: SEND_WITH_INV of a type 1 MW -> IBV_WC_REM_INV_REQ_ERR (%s)",
	   ibv_wc_status_str(st));
	ibv_dealloc_mw(mw);
	pair_down(&p);

	pair_up(&p);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_1);
	bind1(&p.a, mw, p.a.plain, 4096, &st);
	ok(st == IBV_WC_MW_BIND_ERR,
	   "type 1: bind to an MR without MW_BIND -> IBV_WC_MW_BIND_ERR (%s)",
	   ibv_wc_status_str(st));
	ok(!ibv_dealloc_mw(mw), "type 1: dealloc");
	pair_down(&p);
}

/* LOCAL_INV after a large WRITE completes after it, in post order. */
static void test_local_inv(void)
{
	struct ibv_sge sge;
	struct ibv_send_wr w, li;
	struct ibv_wc wc[2];
	enum ibv_wc_status st;
	struct ibv_mw *mw;
	struct pair p;
	uint32_t rkey;

	pair_up(&p);
	mw = ibv_alloc_mw(pd, IBV_MW_TYPE_2);
	rkey = bind2(&p.a, mw, p.a.mr, 0, 4096, IBV_ACCESS_REMOTE_WRITE, &st);
	ok(rkey, "local_inv: bind a type 2 MW (%s)", ibv_wc_status_str(st));
	sge = (struct ibv_sge){ .addr = (uintptr_t)p.a.buf, .length = BIG,
				.lkey = p.a.mr->lkey };
	w = (struct ibv_send_wr){
		.wr_id = 1, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.wr.rdma = { .remote_addr = (uintptr_t)p.b.buf, .rkey = p.b.mr->rkey },
	};
	li = (struct ibv_send_wr){
		.wr_id = 2, .opcode = IBV_WR_LOCAL_INV, .invalidate_rkey = rkey,
	};
	memset(wc, 0, sizeof(wc));
	if (!post(p.a.qp, &w) && !post(p.a.qp, &li)) {
		poll1(p.a.cq, &wc[0]);
		poll1(p.a.cq, &wc[1]);
	}
	ok(wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS &&
	   wc[0].opcode == IBV_WC_RDMA_WRITE &&
	   wc[1].wr_id == 2 && wc[1].status == IBV_WC_SUCCESS &&
	   wc[1].opcode == IBV_WC_LOCAL_INV,
	   "local_inv: after a 4 MiB WRITE it completes second (wr_id %lu %s, %lu %s)",
	   (unsigned long)wc[0].wr_id, ibv_wc_status_str(wc[0].status),
	   (unsigned long)wc[1].wr_id, ibv_wc_status_str(wc[1].status));
	st = rdma(&p.b, IBV_WR_RDMA_WRITE, rkey, va_of(&p.a, 0), 8);
	ok(st == IBV_WC_REM_ACCESS_ERR,
	   "local_inv: WRITE through the invalidated MW -> IBV_WC_REM_ACCESS_ERR (%s)",
	   ibv_wc_status_str(st));
	ibv_dealloc_mw(mw);
	pair_down(&p);

	pair_up(&p);
	li.invalidate_rkey = p.a.plain->rkey;
	memset(wc, 0, sizeof(wc));
	if (!post(p.a.qp, &li))
		poll1(p.a.cq, &wc[0]);
	ok(wc[0].status == IBV_WC_LOC_QP_OP_ERR && wc[0].opcode == IBV_WC_LOCAL_INV,
	   "local_inv: of an ordinary MR -> IBV_WC_LOC_QP_OP_ERR (%s)",
	   ibv_wc_status_str(wc[0].status));
	pair_down(&p);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	const char *dev = NULL;
	struct ibv_device_attr da;
	int i, n, ch;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((ch = getopt(argc, argv, "d:g:")) != -1) {
		if (ch == 'd')
			dev = optarg;
		else if (ch == 'g')
			gid_idx = atoi(optarg);
	}
	printf("TAP version 13\n# suite: mw\n");
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!dev || !strcmp(ibv_get_device_name(list[i]), dev))
			break;
	if (!list || i == n) {
		printf("Bail out! no device %s\n", dev ? dev : "");
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx || ibv_query_device(ctx, &da) ||
	    ibv_query_gid(ctx, 1, gid_idx, &gid)) {
		printf("Bail out! cannot open %s\n", ibv_get_device_name(list[i]));
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	ok(da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B &&
	   da.device_cap_flags & IBV_DEVICE_MEM_WINDOW && da.max_mw > 0,
	   "device: type 1 and 2B memory windows advertised, max_mw %d",
	   da.max_mw);
	test_type2();
	test_errors();
	test_qp_gone();
	test_type1();
	test_local_inv();
	ok(!ibv_dealloc_pd(pd), "pd: nothing left on it");
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ktap_done();
}

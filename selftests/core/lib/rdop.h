/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Scenarios shared by the suites of the operations that hold a responder
 * resource and are answered by a zero-length READ RESPONSE ONLY (FLUSH,
 * ATOMIC WRITE; IBTA 1.5 Annex A19): the same steps and checks, run for
 * the operation a struct ct_rdop describes. Each one takes the test's
 * _metadata, so its EXPECT/ASSERT fail the calling TEST(); the caller
 * adds the checks of its own operation.
 *
 * Include after kselftest_harness.h and coretest.h.
 *
 * Context: host user space only.
 */
#ifndef SOFTRC_SELFTEST_RDOP_H
#define SOFTRC_SELFTEST_RDOP_H

#include "coretest.h"
#include "sim.h"

/* the harness compares int literals with the engine's u32/u64 fields */
#pragma GCC diagnostic ignored "-Wsign-compare"

struct ct_rdop {
	u8 op;			/* SOFTRC_OP_* on the wire */
	u8 wc;			/* SOFTRC_WC_* of its completion */
	u32 byte_len;		/* the completion's byte_len */
	/* posts one signaled or not, as @flags says */
	int (*post)(struct ct *t, u8 flags);
	/* the responder side receives one at @psn */
	void (*rx)(struct ct *t, u32 psn);
	/* how many the responder ran (flushes, stores) */
	int (*ran)(const struct ct *t);
	/* the responder's count of duplicates of it answered again */
	u64 (*dups)(const struct ct *t);
};

#define CT_RD_RESP(psn, len, msn) \
	ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, psn, len, msn)

/* ---- requester ---------------------------------------------------- */

/* @t fresh, @n of them posted signaled and sent (as far as they may go). */
static inline void ct_rdop_sent(struct __test_metadata *_metadata,
				const struct ct_rdop *o, struct ct *t, int n)
{
	int i;

	ct_init(t, NULL);
	for (i = 0; i < n; i++)
		ASSERT_LE(0, o->post(t, SOFTRC_SEND_SIGNALED));
	softrc_eng_tx(&t->qp, 0, 16);
}

/* RC only, and it takes a responder resource: else refused at post. */
static inline void ct_rdop_post_refused(struct __test_metadata *_metadata,
					const struct ct_rdop *o)
{
	struct softrc_eng_attr a;
	struct ct t;

	ct_attr_default(&a);
	a.max_rd_atomic = 0;		/* it takes a responder resource */
	ct_init(&t, &a);
	EXPECT_EQ(SOFTRC_E_INVAL, o->post(&t, 0));

	ct_attr_default(&a);
	a.transport = SOFTRC_OPCODE_UC;	/* RC only */
	ct_init(&t, &a);
	EXPECT_EQ(SOFTRC_E_INVAL, o->post(&t, 0));
}

/* Each one holds one of max_rd_atomic (4) until it is answered. */
static inline void ct_rdop_max_rd_atomic(struct __test_metadata *_metadata,
					 const struct ct_rdop *o)
{
	struct softrc_pkt r;
	struct ct t;

	ct_rdop_sent(_metadata, o, &t, 5);
	EXPECT_EQ(4, t.ntx);
	EXPECT_EQ(4, t.qp.req.rd_out);
	r = CT_RD_RESP(1000, 0, 1);
	ct_rx(&t, &r, 0);
	EXPECT_EQ(3, t.qp.req.rd_out);
	softrc_eng_tx(&t.qp, 0, 16);
	ASSERT_EQ(5, t.ntx);
	EXPECT_EQ(1004, t.tx[4].psn);
	EXPECT_EQ(4, t.qp.req.rd_out);
}

/* A fenced WR (@wr, sent as @wire) waits for an earlier one's answer. */
static inline void ct_rdop_fence_waits(struct __test_metadata *_metadata,
				       const struct ct_rdop *o, u8 wr, u8 wire)
{
	struct softrc_pkt r;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, o->post(&t, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, wr, 64,
			     SOFTRC_SEND_SIGNALED | SOFTRC_SEND_FENCE));
	softrc_eng_tx(&t.qp, 0, 16);
	EXPECT_EQ(1, t.ntx);
	r = CT_RD_RESP(1000, 0, 1);
	ct_rx(&t, &r, 0);
	softrc_eng_tx(&t.qp, 0, 16);
	ASSERT_EQ(2, t.ntx);
	EXPECT_EQ(wire, t.tx[1].opcode);
}

/* The zero-length READ RESPONSE ONLY completes it; @t as it ends. */
static inline void ct_rdop_comp_by_response(struct __test_metadata *_metadata,
					    const struct ct_rdop *o, struct ct *t)
{
	struct softrc_pkt r;

	ct_rdop_sent(_metadata, o, t, 1);
	r = CT_RD_RESP(1000, 0, 1);
	ct_rx(t, &r, 0);
	ASSERT_EQ(1, t->ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t->cqe[0].status);
	EXPECT_EQ(o->wc, t->cqe[0].opcode);
	EXPECT_EQ(o->byte_len, t->cqe[0].byte_len);
	EXPECT_EQ(0, t->qp.req.rd_out);
	EXPECT_EQ(1001, t->qp.req.una);
	EXPECT_EQ(0, t->qp.cnt.drop_bad_resp);
	EXPECT_EQ(0, t->deadline[SOFTRC_TIMER_RETRY]);
}

/* An ACK of the WRITE behind it completes both: no implied NAK. */
static inline void ct_rdop_comp_by_covering_ack(struct __test_metadata *_metadata,
						const struct ct_rdop *o)
{
	struct softrc_pkt a;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, o->post(&t, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 64, SOFTRC_SEND_SIGNALED));
	softrc_eng_tx(&t.qp, 0, 16);
	ASSERT_EQ(2, t.ntx);
	a = ct_ack(1001, SOFTRC_AETH_ACK | 0x1f, 2);
	ct_rx(&t, &a, 0);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(o->wc, t.cqe[0].opcode);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_RDMA_WRITE, t.cqe[1].opcode);
	EXPECT_EQ(0, t.qp.cnt.implied_naks);
	EXPECT_EQ(0, t.nretx);
	EXPECT_EQ(0, t.qp.req.rd_out);
}

/*
 * The first @nwrong of: an ATOMIC ACK, a READ RESPONSE ONLY with data, a
 * READ RESPONSE FIRST (all with an MSN that does not cover it) are no
 * answer to it; the right one completes it, a replay of that is stale.
 */
static inline void ct_rdop_wrong_response(struct __test_metadata *_metadata,
					  const struct ct_rdop *o, int nwrong)
{
	const struct softrc_pkt wrong[] = {
		ct_resp(SOFTRC_OP_ATOMIC_ACKNOWLEDGE, 1000, 0, 0),
		CT_RD_RESP(1000, 8, 0),
		ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, 1000, 1024, 0),
	};
	struct softrc_pkt r;
	struct ct t;
	int i;

	ASSERT_GE((int)ARRAY_SIZE(wrong), nwrong);
	ct_rdop_sent(_metadata, o, &t, 1);
	for (i = 0; i < nwrong; i++)
		ct_rx(&t, &wrong[i], 0);
	EXPECT_EQ(0, t.ncqe);
	EXPECT_EQ(nwrong, t.qp.cnt.drop_bad_resp);
	EXPECT_EQ(1000, t.qp.req.una);
	EXPECT_EQ(1, t.qp.req.rd_out);
	r = CT_RD_RESP(1000, 0, 1);
	ct_rx(&t, &r, 0);
	EXPECT_EQ(1, t.ncqe);
	ct_rx(&t, &r, 0);
	EXPECT_EQ(1, t.qp.cnt.drop_dup_resp);
	EXPECT_EQ(1, t.ncqe);
}

/* The responder's NAK @code fails two of them: @status, then flushed. */
static inline void ct_rdop_nak(struct __test_metadata *_metadata,
			       const struct ct_rdop *o, u8 code, u8 status)
{
	struct softrc_pkt n;
	struct ct t;

	ct_rdop_sent(_metadata, o, &t, 2);
	n = ct_ack(1000, SOFTRC_AETH_NAK | code, 0);
	ct_rx(&t, &n, 0);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(status, t.cqe[0].status);
	EXPECT_EQ(o->wc, t.cqe[0].opcode);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[1].status);
	EXPECT_EQ(o->wc, t.cqe[1].opcode);
	EXPECT_TRUE(t.errored);
}

/*
 * One the caller posted on @t times out and goes out again as tx[1]: same
 * PSN and VA, still one resource; its answer then completes it.
 */
static inline void ct_rdop_retransmit(struct __test_metadata *_metadata,
				      const struct ct_rdop *o, struct ct *t)
{
	struct softrc_pkt r;
	u64 d;

	softrc_eng_tx(&t->qp, 0, 16);
	d = t->deadline[SOFTRC_TIMER_RETRY];
	ASSERT_NE(0, d);
	softrc_eng_timer(&t->qp, SOFTRC_TIMER_RETRY, d);
	softrc_eng_tx(&t->qp, d, 16);
	ASSERT_EQ(2, t->ntx);
	EXPECT_EQ(o->op, t->tx[1].opcode);
	EXPECT_EQ(1000, t->tx[1].psn);
	EXPECT_EQ(t->tx[0].va, t->tx[1].va);
	EXPECT_EQ(1, t->qp.cnt.retransmits);
	EXPECT_EQ(1, t->qp.cnt.timeouts);
	EXPECT_EQ(1, t->qp.req.rd_out);
	r = CT_RD_RESP(1000, 0, 1);
	ct_rx(t, &r, d);
	EXPECT_EQ(1, t->ncqe);
	EXPECT_EQ(0, t->qp.req.rd_out);
}

/* A sequence error NAK at it goes back to it (WRITE, it, WRITE). */
static inline void ct_rdop_seq_nak_goes_back(struct __test_metadata *_metadata,
					     const struct ct_rdop *o, struct ct *t)
{
	struct softrc_pkt n;

	ct_init(t, NULL);
	ASSERT_LE(0, ct_post(t, SOFTRC_WR_RDMA_WRITE, 64, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, o->post(t, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(t, SOFTRC_WR_RDMA_WRITE, 64, SOFTRC_SEND_SIGNALED));
	softrc_eng_tx(&t->qp, 0, 16);
	ASSERT_EQ(3, t->ntx);
	n = ct_ack(1001, SOFTRC_AETH_NAK | SOFTRC_NAK_PSN_SEQ_ERR, 1);
	ct_rx(t, &n, 0);
	EXPECT_EQ(1, t->ncqe);		/* the first WRITE, acknowledged */
	softrc_eng_tx(&t->qp, 0, 16);
	ASSERT_EQ(5, t->ntx);
	EXPECT_EQ(o->op, t->tx[3].opcode);
	EXPECT_EQ(1001, t->tx[3].psn);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_ONLY, t->tx[4].opcode);
	EXPECT_EQ(1002, t->tx[4].psn);
	EXPECT_EQ(1, t->nretx);
	EXPECT_EQ(SOFTRC_RETRY_nak_seq, t->retx_why[0]);
}

/* ---- responder ---------------------------------------------------- */

/*
 * One at 5000 runs once, checked for @len bytes with @access, and is
 * answered at once from resource 0 of @res; @t as it ends.
 */
static inline void ct_rdop_resp_runs(struct __test_metadata *_metadata,
				     const struct ct_rdop *o, struct ct *t,
				     u32 len, u32 access, u8 res)
{
	ct_init(t, NULL);
	o->rx(t, 5000);
	EXPECT_EQ(1, o->ran(t));
	EXPECT_EQ(1, t->mr_checks);
	EXPECT_EQ(len, t->last_check_len);
	EXPECT_EQ(access, t->last_check_access);
	EXPECT_EQ(0, t->pins);		/* the pin only while it runs */
	EXPECT_EQ(0, t->nplace);
	ASSERT_EQ(1, t->ntx);
	EXPECT_TRUE(ct_is_rd_reply(&t->tx[0], 5000));
	EXPECT_EQ(1, t->tx[0].msn);
	EXPECT_EQ(SOFTRC_BUF_NONE, t->txpl[0].kind);
	EXPECT_EQ(5001, t->qp.resp.epsn);
	EXPECT_EQ(1, t->qp.resp.msn);
	EXPECT_EQ(1, t->qp.resp.res_live);
	EXPECT_EQ(res, t->res[0].type);
	EXPECT_FALSE(t->errored);
}

/*
 * A duplicate behind a WRITE is answered again from its resource with the
 * MSN as it is now, never run again; @t as it ends.
 */
static inline void ct_rdop_resp_duplicate(struct __test_metadata *_metadata,
					  const struct ct_rdop *o, struct ct *t)
{
	ct_init(t, NULL);
	o->rx(t, 5000);
	ct_rx_req(t, SOFTRC_OP_RDMA_WRITE_ONLY, 5001, 8, false, 8);
	o->rx(t, 5000);
	EXPECT_EQ(1, o->ran(t));
	ASSERT_EQ(2, t->ntx);
	EXPECT_TRUE(ct_is_rd_reply(&t->tx[1], 5000));
	EXPECT_EQ(2, t->tx[1].msn);	/* the MSN as it is now */
	EXPECT_EQ(1, t->qp.cnt.dup_requests);
	EXPECT_EQ(1, o->dups(t));
	EXPECT_EQ(5002, t->qp.resp.epsn);
	EXPECT_EQ(2, t->mr_checks);	/* its own and the WRITE's, no other */
}

/*
 * Recycled by 4 newer ones (4 resources): its duplicate is dropped, the
 * next one's is still answered.
 */
static inline void ct_rdop_resp_dup_recycled(struct __test_metadata *_metadata,
					     const struct ct_rdop *o)
{
	struct ct t;
	int i;

	ct_init(&t, NULL);
	for (i = 0; i < 5; i++)
		o->rx(&t, 5000 + i);
	EXPECT_EQ(5, o->ran(&t));
	t.ntx = 0;
	o->rx(&t, 5000);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(1, t.qp.cnt.drop_too_old);
	EXPECT_EQ(0, o->dups(&t));
	EXPECT_EQ(5, o->ran(&t));
	o->rx(&t, 5001);		/* still saved */
	ASSERT_EQ(1, t.ntx);
	EXPECT_TRUE(ct_is_rd_reply(&t.tx[0], 5001));
	EXPECT_EQ(5, o->ran(&t));
}

/* @t just took a request at 5000 of another type: this one at 5000 is
 * no duplicate of it, it is dropped and not run.
 */
static inline void ct_rdop_resp_dup_other(struct __test_metadata *_metadata,
					  const struct ct_rdop *o, struct ct *t)
{
	t->ntx = 0;
	o->rx(t, 5000);
	EXPECT_EQ(0, t->ntx);
	EXPECT_EQ(1, t->qp.cnt.drop_too_old);
	EXPECT_EQ(0, o->ran(t));
}

/*
 * On a QP that denies @deny, one is an invalid request: NAKed, counted,
 * the QP in error, no key checked, nothing run.
 */
static inline void ct_rdop_resp_denied(struct __test_metadata *_metadata,
				       const struct ct_rdop *o, u32 deny)
{
	struct ct t;

	ct_init_deny(&t, deny);
	o->rx(&t, 5000);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(1, t.qp.cnt.inv_req_naks_sent);
	EXPECT_EQ(0, o->ran(&t));
	EXPECT_EQ(0, t.mr_checks);
	EXPECT_TRUE(t.errored);
}

/* On a QP that denies @deny, one still runs. */
static inline void ct_rdop_resp_allowed(struct __test_metadata *_metadata,
					const struct ct_rdop *o, u32 deny)
{
	struct ct t;

	ct_init_deny(&t, deny);
	o->rx(&t, 5000);
	EXPECT_EQ(1, o->ran(&t));
	EXPECT_FALSE(t.errored);
}

/* No responder resources: invalid request, not run. */
static inline void ct_rdop_resp_no_resource(struct __test_metadata *_metadata,
					    const struct ct_rdop *o)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_EQ(0, softrc_eng_set_max_dest_rd_atomic(&t.qp, 0));
	o->rx(&t, 5000);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, o->ran(&t));
}

/* The R_Key check fails: remote access, nothing run or kept; @t as it ends. */
static inline void ct_rdop_resp_rkey_bad(struct __test_metadata *_metadata,
					 const struct ct_rdop *o, struct ct *t)
{
	ct_init(t, NULL);
	t->mr_fail = 1;
	o->rx(t, 5000);
	EXPECT_TRUE(ct_last_is_nak(t, SOFTRC_NAK_REMOTE_ACCESS, 5000));
	EXPECT_EQ(1, t->qp.cnt.rem_access_naks_sent);
	EXPECT_EQ(0, o->ran(t));
	EXPECT_EQ(5000, t->qp.resp.epsn);
	EXPECT_EQ(0, t->qp.resp.res_live);
	EXPECT_TRUE(t->errored);
}

/* The memory went away between the check and the run: remote access. */
static inline void ct_rdop_resp_memory_gone(struct __test_metadata *_metadata,
					    const struct ct_rdop *o)
{
	struct ct t;

	ct_init(&t, NULL);
	t.atomic_fail = true;
	o->rx(&t, 5000);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_REMOTE_ACCESS, 5000));
	EXPECT_EQ(1, t.qp.cnt.mem_errors);
	EXPECT_EQ(0, t.pins);
	EXPECT_EQ(0, t.bad_puts);
	EXPECT_TRUE(t.errored);
}

/* PSN order: a future one is NAKed and not run; in order it is. */
static inline void ct_rdop_resp_psn_gap(struct __test_metadata *_metadata,
					const struct ct_rdop *o)
{
	struct ct t;

	ct_init(&t, NULL);
	o->rx(&t, 5001);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_PSN_SEQ_ERR, 5000));
	EXPECT_EQ(0, o->ran(&t));
	EXPECT_EQ(1, t.qp.cnt.drop_out_of_seq);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 8, false, 8);
	o->rx(&t, 5001);
	EXPECT_EQ(1, o->ran(&t));
	EXPECT_TRUE(ct_is_rd_reply(&t.tx[t.ntx - 1], 5001));
	EXPECT_EQ(2, t.tx[t.ntx - 1].msn);
}

/* Behind a paced READ response, its answer waits its PSN turn. */
static inline void ct_rdop_resp_after_read(struct __test_metadata *_metadata,
					   const struct ct_rdop *o)
{
	struct ct t;
	int i;

	ct_init(&t, NULL);
	/* 40 response packets: each rx call sends SOFTRC_RESP_INLINE */
	ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5000, 0, true, 40 * 1024);
	ASSERT_EQ(SOFTRC_RESP_INLINE, t.ntx);
	o->rx(&t, 5040);
	EXPECT_EQ(1, o->ran(&t));	/* executed at once (IBTA 9.5) */
	EXPECT_EQ(2 * SOFTRC_RESP_INLINE, t.ntx);	/* its answer waits */
	while (softrc_eng_tx_resp(&t.qp, 4) == 4)
		;
	ASSERT_EQ(41, t.ntx);
	for (i = 0; i < 40; i++)
		EXPECT_EQ(5000 + i, t.tx[i].psn);
	EXPECT_TRUE(ct_is_rd_reply(&t.tx[40], 5040));
	EXPECT_EQ(2, t.tx[40].msn);
}

/* A parser reject (@out, already parsed) NAKed at 5000: invalid request. */
static inline void ct_rdop_parse_reject_naks(struct __test_metadata *_metadata,
					     const struct ct_rdop *o,
					     struct softrc_pkt *out)
{
	struct ct t;

	ct_init(&t, NULL);
	out->psn = 5000;
	softrc_eng_rx_invalid(&t.qp, out);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, o->ran(&t));
	EXPECT_TRUE(t.errored);
}

/* ---- two engines over a lossy simulated link ------------------------ */

/*
 * Two RC engines (PSNs about to wrap, max_rd_atomic 4, 256 KiB each) over
 * a link with loss, duplication, reordering and jitter.
 */
static inline void ct_rdop_sim_lossy(struct sim *sim, u64 seed)
{
	const struct softrc_eng_attr a = {
		.pmtu = 1024, .sq_psn = 0xffffe0, .rq_psn = 7, .pkey = 0xffff,
		.timeout = 8, .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 4,
	};

	sim_init(sim, &a, 256 << 10, seed);
	sim->link.loss = 0.1;
	sim->link.ack_loss = 0.1;
	sim->link.dup = 0.05;
	sim->link.reorder = 0.05;
	sim->link.jitter_ns = 20000;
}

/*
 * Run it to the end: no violation, the link did drop, the @n WRs posted
 * (wr_id 0..n-1) all completed in order, successfully, WR i with @wc[i];
 * nothing left outstanding or pinned.
 */
static inline void ct_rdop_sim_done(struct __test_metadata *_metadata,
				    struct sim *sim, u32 n, const u8 *wc)
{
	u32 i;

	ASSERT_TRUE(sim_run(sim, 1ull << 40));
	EXPECT_EQ(0, sim->violations);
	if (sim->violations)
		TH_LOG("%s", sim->why);
	EXPECT_LT(0, sim->wire_drops);
	ASSERT_EQ(n, sim->ep[0].ncqe);
	for (i = 0; i < n; i++) {
		const struct softrc_eng_cqe *c = &sim->ep[0].cqe[i].c;

		EXPECT_EQ(i, c->wr_id);
		EXPECT_EQ(SOFTRC_WC_SUCCESS, c->status);
		EXPECT_EQ(wc[i], c->opcode);
	}
	EXPECT_EQ(0, sim->ep[0].qp.req.rd_out);
	EXPECT_EQ(0, sim->ep[1].pins);
}

#endif /* SOFTRC_SELFTEST_RDOP_H */

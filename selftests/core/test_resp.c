// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Responder unit tests: reassembly of SEND and WRITE, length and
 * sequencing checks, R_Key/alignment errors, the one-NAK-per-gap rule,
 * RNR, WRITE with immediate, SEND with invalidate, ACK coalescing, MSN,
 * READ responses paced by the tx budget (queue, duplicates, ordering).
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "coretest.h"
#include "sim.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

static bool last_is_nak(const struct ct *t, u8 code, u32 psn)
{
	const struct softrc_pkt *p = &t->tx[t->ntx - 1];

	return t->ntx && p->opcode == SOFTRC_OP_ACKNOWLEDGE &&
	       p->syndrome == (SOFTRC_AETH_NAK | code) && p->psn == psn;
}

TEST(resp_send_reassembly_into_recv_wqe)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 42, 4096));
	ct_rx_req(&t, SOFTRC_OP_SEND_FIRST, 5000, 1024, false, 0);
	EXPECT_EQ(SOFTRC_RESP_IN_SEND, t.qp.resp.state);
	ct_rx_req(&t, SOFTRC_OP_SEND_MIDDLE, 5001, 1024, false, 0);
	ct_rx_req(&t, SOFTRC_OP_SEND_LAST, 5002, 100, true, 0);
	ASSERT_EQ(3, t.nplace);
	EXPECT_EQ(SOFTRC_BUF_RECV_WQE, t.place[0].dst.kind);
	EXPECT_EQ(0, t.place[0].dst.addr);
	EXPECT_EQ(1024, t.place[1].dst.addr);
	EXPECT_EQ(2048, t.place[2].dst.addr);
	EXPECT_EQ(100, t.place[2].dst.len);
	EXPECT_EQ(12, t.place[0].pkt_off);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(42, t.cqe[0].wr_id);
	EXPECT_EQ(2148, t.cqe[0].byte_len);
	EXPECT_EQ(SOFTRC_WC_RECV, t.cqe[0].opcode);
	EXPECT_EQ(1, t.qp.resp.msn);
	EXPECT_EQ(SOFTRC_RESP_IDLE, t.qp.resp.state);
	EXPECT_EQ(0, t.ntx);		/* coalesced until the flush */
	softrc_eng_rx_flush(&t.qp);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(5002, t.tx[0].psn);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(1, t.ntx);
}

TEST(resp_write_context_closes_at_last)
{
	struct ct t;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 2500);
	EXPECT_EQ(1, t.mr_checks);
	EXPECT_EQ(2500, t.last_check_len);
	EXPECT_EQ(SOFTRC_RESP_IN_WRITE, t.qp.resp.state);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_MIDDLE, 5001, 1024, false, 0);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_LAST, 5002, 452, true, 0);
	ASSERT_EQ(3, t.nplace);
	EXPECT_EQ(SOFTRC_BUF_MR, t.place[0].dst.kind);
	EXPECT_EQ(0x77, t.place[1].dst.rkey);
	EXPECT_EQ(0x10000 + 1024, t.place[1].dst.addr);
	EXPECT_EQ(0x10000 + 2048, t.place[2].dst.addr);
	EXPECT_EQ(1, t.mr_checks);
	EXPECT_EQ(0, t.ncqe);
	EXPECT_EQ(SOFTRC_RESP_IDLE, t.qp.resp.state);
	EXPECT_EQ(1, t.qp.resp.msn);
	EXPECT_EQ(5003, t.qp.resp.epsn);
}

TEST(resp_write_length_mismatch_nak)
{
	struct ct t;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 2500);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_LAST, 5001, 1000, true, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5001));
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(1, t.qp.cnt.inv_req_naks_sent);
	EXPECT_EQ(1, t.nplace);
}

TEST(resp_write_overflow_nak)
{
	struct ct t;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 2048);
	/* a MIDDLE that would use up the rest must have been the LAST */
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_MIDDLE, 5001, 1024, false, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5001));
	EXPECT_TRUE(t.errored);
}

TEST(resp_payload_length_rules)
{
	struct ct t;

	ct_init(&t, NULL);
	softrc_eng_post_recv(&t.qp, 1, 8192);
	ct_rx_req(&t, SOFTRC_OP_SEND_FIRST, 5000, 1000, false, 0);	/* != pmtu */
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	ASSERT_EQ(1, t.ncqe);		/* its WQE: LOC_LEN_ERR, none to flush */
	EXPECT_EQ(SOFTRC_WC_LOC_LEN_ERR, t.cqe[0].status);

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 100, true, 99);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
}

TEST(resp_opcode_sequence_errors)
{
	struct ct t;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_MIDDLE, 5000, 1024, false, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 4096);
	ct_rx_req(&t, SOFTRC_OP_SEND_ONLY, 5001, 10, true, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5001));

	ct_init(&t, NULL);
	softrc_eng_post_recv(&t.qp, 1, 8192);
	softrc_eng_post_recv(&t.qp, 2, 8192);
	ct_rx_req(&t, SOFTRC_OP_SEND_FIRST, 5000, 1024, false, 0);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_LAST, 5001, 10, true, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5001));
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_REM_INV_REQ_ERR, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[1].status);
}

TEST(resp_recv_wqe_too_small)
{
	struct ct t;

	ct_init(&t, NULL);
	softrc_eng_post_recv(&t.qp, 1, 100);
	softrc_eng_post_recv(&t.qp, 2, 100);
	ct_rx_req(&t, SOFTRC_OP_SEND_ONLY, 5000, 200, true, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOC_LEN_ERR, t.cqe[0].status);
	EXPECT_EQ(1, t.cqe[0].wr_id);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[1].status);
	EXPECT_EQ(0, t.nplace);
}

TEST(resp_rkey_violation_nak)
{
	static const u8 ops[] = {
		SOFTRC_OP_RDMA_WRITE_ONLY, SOFTRC_OP_RDMA_READ_REQUEST,
		SOFTRC_OP_COMPARE_SWAP,
	};
	struct ct t;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		ct_init(&t, NULL);
		t.mr_fail = 1;
		ct_rx_req(&t, ops[i], 5000, ops[i] == SOFTRC_OP_RDMA_WRITE_ONLY ? 8 : 0,
			  true, 8);
		EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_REMOTE_ACCESS, 5000));
		EXPECT_EQ(1, t.qp.cnt.rem_access_naks_sent);
		EXPECT_EQ(0, t.nplace);
		EXPECT_EQ(0, t.natomic);
		EXPECT_TRUE(t.errored);
	}
}

TEST(resp_zero_length_write_skips_key_check)
{
	struct ct t;

	ct_init(&t, NULL);
	t.mr_fail = 1;
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 0, true, 0);
	EXPECT_FALSE(t.errored);
	EXPECT_EQ(0, t.mr_checks);
	EXPECT_EQ(1, t.qp.resp.msn);
}

TEST(resp_atomic_unaligned_invalid)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5000, 0, true);
	p.va = 0x10004;
	ct_rx(&t, &p, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, t.natomic);
}

TEST(resp_gap_draws_one_nak)
{
	struct ct t;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5002, 8, true, 8);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5003, 8, true, 8);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5004, 8, true, 8);
	ASSERT_EQ(1, t.ntx);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_PSN_SEQ_ERR, 5000));
	EXPECT_EQ(3, t.qp.cnt.drop_out_of_seq);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 8, false, 8);
	/* a new gap after progress: a new NAK */
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5003, 8, true, 8);
	ASSERT_EQ(2, t.ntx);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_PSN_SEQ_ERR, 5001));
	EXPECT_EQ(2, t.qp.cnt.seq_naks_sent);
}

TEST(resp_rnr_when_no_recv_wqe)
{
	struct ct t;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_SEND_ONLY, 5000, 8, true, 0);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(SOFTRC_AETH_RNR_NAK | 5, t.tx[0].syndrome);
	EXPECT_EQ(5000, t.tx[0].psn);
	EXPECT_EQ(5000, t.qp.resp.epsn);
	/* what follows is silently dropped: the RNR NAK names the gap */
	ct_rx_req(&t, SOFTRC_OP_SEND_ONLY, 5001, 8, true, 0);
	EXPECT_EQ(1, t.ntx);
	softrc_eng_post_recv(&t.qp, 9, 64);
	ct_rx_req(&t, SOFTRC_OP_SEND_ONLY, 5000, 8, true, 0);
	EXPECT_EQ(1, t.ncqe);
	EXPECT_EQ(5001, t.qp.resp.epsn);
}

/*
 * A receive completed by a message whose last packet had SE is marked
 * solicited (IBTA 11.4.2.2, the solicited event); one without SE, or a
 * failed one, is not.
 */
TEST(resp_recv_solicited_follows_se)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	softrc_eng_post_recv(&t.qp, 1, 64);
	softrc_eng_post_recv(&t.qp, 2, 64);
	softrc_eng_post_recv(&t.qp, 3, 8);
	p = ct_req(SOFTRC_OP_SEND_ONLY, 5000, 16, true);
	p.se = true;
	ct_rx(&t, &p, 0);
	p = ct_req(SOFTRC_OP_SEND_ONLY, 5001, 16, true);
	ct_rx(&t, &p, 0);
	p = ct_req(SOFTRC_OP_SEND_ONLY, 5002, 16, true);
	p.se = true;
	ct_rx(&t, &p, 0);
	ASSERT_EQ(3, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_TRUE(t.cqe[0].flags & SOFTRC_CQE_SOLICITED);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[1].status);
	EXPECT_FALSE(t.cqe[1].flags & SOFTRC_CQE_SOLICITED);
	EXPECT_EQ(SOFTRC_WC_LOC_LEN_ERR, t.cqe[2].status);
	EXPECT_FALSE(t.cqe[2].flags & SOFTRC_CQE_SOLICITED);
	/* an RC receive has no GRH: no receive context to look at */
	EXPECT_TRUE(t.cqe[0].rx == NULL);
}

TEST(resp_write_imm_consumes_recv_at_last)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 1500);
	p = ct_req(SOFTRC_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE, 5001, 476, true);
	p.imm = 0xcafe;
	ct_rx(&t, &p, 0);
	/* no receive WQE: RNR at the LAST, context stays open */
	EXPECT_EQ(SOFTRC_AETH_RNR_NAK | 5, t.tx[0].syndrome);
	EXPECT_EQ(5001, t.tx[0].psn);
	EXPECT_EQ(SOFTRC_RESP_IN_WRITE, t.qp.resp.state);
	EXPECT_EQ(1, t.nplace);
	softrc_eng_post_recv(&t.qp, 3, 0);
	ct_rx(&t, &p, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_RECV_RDMA_WITH_IMM, t.cqe[0].opcode);
	EXPECT_EQ(1500, t.cqe[0].byte_len);
	EXPECT_EQ(0xcafe, t.cqe[0].imm);
	EXPECT_TRUE(t.cqe[0].flags & SOFTRC_CQE_WITH_IMM);
	EXPECT_EQ(2, t.nplace);
	EXPECT_EQ(1, t.qp.resp.msn);
}

TEST(resp_send_with_invalidate)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	softrc_eng_post_recv(&t.qp, 1, 64);
	softrc_eng_post_recv(&t.qp, 2, 64);
	p = ct_req(SOFTRC_OP_SEND_ONLY_WITH_INVALIDATE, 5000, 8, true);
	p.inv_rkey = 0x1234;
	ct_rx(&t, &p, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_TRUE(t.cqe[0].flags & SOFTRC_CQE_WITH_INV);
	EXPECT_EQ(0x1234, t.cqe[0].inv_rkey);
	EXPECT_EQ(1, t.ninval);
	EXPECT_EQ(0x1234, t.inval[0]);
	/* the glue refuses to invalidate: invalid request */
	p = ct_req(SOFTRC_OP_SEND_ONLY_WITH_INVALIDATE, 5001, 8, true);
	p.inv_rkey = 0xdead;
	ct_rx(&t, &p, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5001));
	EXPECT_EQ(SOFTRC_WC_REM_INV_REQ_ERR, t.cqe[1].status);
	EXPECT_EQ(2, t.cqe[1].wr_id);
}

TEST(resp_ack_coalescing_per_burst)
{
	struct ct t;
	int i;

	ct_init(&t, NULL);
	for (i = 0; i < 3; i++)
		ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000 + i, 8, true, 8);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5003, 8, false, 8);
	EXPECT_EQ(0, t.ntx);
	softrc_eng_rx_flush(&t.qp);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(5003, t.tx[0].psn);
	EXPECT_EQ(4, t.tx[0].msn);
	EXPECT_EQ(1, t.qp.cnt.acks_sent);
	/* no AckReq: nothing owed */
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5004, 8, false, 8);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(1, t.ntx);
}

TEST(resp_pending_ack_precedes_read_response)
{
	struct ct t;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 8, true, 8);
	ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5001, 0, true, 8);
	ASSERT_EQ(2, t.ntx);
	EXPECT_EQ(SOFTRC_OP_ACKNOWLEDGE, t.tx[0].opcode);
	EXPECT_EQ(5000, t.tx[0].psn);
	EXPECT_EQ(1, t.tx[0].msn);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, t.tx[1].opcode);
	EXPECT_EQ(2, t.tx[1].msn);
	EXPECT_EQ(8, t.txpl[1].len);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(2, t.ntx);
}

TEST(resp_zero_length_read)
{
	struct ct t;

	ct_init(&t, NULL);
	t.mr_fail = 1;
	ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5000, 0, true, 0);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, t.tx[0].opcode);
	EXPECT_EQ(0, t.tx[0].payload_len);
	EXPECT_EQ(SOFTRC_BUF_NONE, t.txpl[0].kind);
	EXPECT_EQ(5001, t.qp.resp.epsn);
}

TEST(resp_error_state_drops_everything)
{
	struct ct t;

	ct_init(&t, NULL);
	softrc_eng_set_error(&t.qp);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 8, true, 8);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(1, t.qp.cnt.drop_state);
	EXPECT_EQ(0, t.nplace);
}

TEST(resp_malformed_expected_request_naks)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	p = ct_req(SOFTRC_OP_RDMA_WRITE_ONLY, 5001, 8, true);
	softrc_eng_rx_invalid(&t.qp, &p);	/* not expected: dropped */
	EXPECT_EQ(0, t.ntx);
	p.psn = 5000;
	softrc_eng_rx_invalid(&t.qp, &p);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(2, t.qp.cnt.drop_malformed);
}

/* ---- READ responses paced through softrc_eng_tx ---- */

#define MIB_PKTS	4096	/* 1 MiB at 256 MTU */

static void rx_read(struct ct *t, u32 psn, u32 pkt_off, u32 len)
{
	struct softrc_pkt p = ct_req(SOFTRC_OP_RDMA_READ_REQUEST, psn, 0, true);

	p.va += (u64)pkt_off * 256;
	p.dma_len = len;
	ct_rx(t, &p, 0);
}

/*
 * Expected response stream, checked packet by packet as it leaves (the
 * recording array is reset after every call, so any length fits).
 */
struct rd_expect {
	u32 psn;	/* next expected PSN */
	u32 first;	/* PSN of the expected FIRST */
	u32 end;	/* PSN after the LAST */
	u32 bad;	/* packets that did not match */
};

static void rd_check(struct ct *t, struct rd_expect *e)
{
	int i;

	for (i = 0; i < t->ntx; i++) {
		const struct softrc_pkt *p = &t->tx[i];
		bool first = e->psn == e->first, last = e->psn + 1 == e->end;
		u8 op = first && last ? SOFTRC_OP_RDMA_READ_RESPONSE_ONLY :
			first ? SOFTRC_OP_RDMA_READ_RESPONSE_FIRST :
			last ? SOFTRC_OP_RDMA_READ_RESPONSE_LAST :
			       SOFTRC_OP_RDMA_READ_RESPONSE_MIDDLE;

		if (p->psn != e->psn || p->opcode != op ||
		    t->txpl[i].addr != 0x10000 + (u64)(e->psn - 5000) * 256)
			e->bad++;
		e->psn++;
	}
	t->ntx = 0;
}

/* Call tx with @budget until it returns less; false if one overran. */
static bool drain(struct ct *t, u32 budget, struct rd_expect *e, int *calls)
{
	u32 n;

	do {
		int before = t->ntx;

		n = softrc_eng_tx(&t->qp, 0, budget);
		if (n > budget || t->ntx - before != (int)n)
			return false;
		if (e)
			rd_check(t, e);
		(*calls)++;
	} while (n == budget);
	return true;
}

TEST(resp_read_1mib_paced_by_tx_budget)
{
	struct rd_expect e = { .psn = 5000, .first = 5000,
			       .end = 5000 + MIB_PKTS };
	struct ct t;
	int calls = 0;

	ct_init_pmtu(&t, 256);
	rx_read(&t, 5000, 0, 1 << 20);
	EXPECT_EQ(SOFTRC_RESP_INLINE, t.ntx);	/* the first burst only */
	EXPECT_EQ(1, t.tx[0].msn);
	EXPECT_EQ(5000 + MIB_PKTS, t.qp.resp.epsn);
	rd_check(&t, &e);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(0, t.ntx);
	ASSERT_TRUE(drain(&t, 16, &e, &calls));
	EXPECT_EQ(5000 + MIB_PKTS, e.psn);
	EXPECT_EQ(0, e.bad);
	EXPECT_LE((MIB_PKTS - SOFTRC_RESP_INLINE) / 16, calls);
	EXPECT_EQ(MIB_PKTS, t.qp.cnt.tx_pkts);
	EXPECT_FALSE(softrc_eng_tx_pending(&t.qp));
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 0, 16));
}

TEST(resp_dup_read_mid_response_restarts_from_dup_psn)
{
	struct rd_expect e = { .psn = 5000, .first = 5000,
			       .end = 5000 + MIB_PKTS };
	struct ct t;
	int calls = 0;

	ct_init_pmtu(&t, 256);
	rx_read(&t, 5000, 0, 1 << 20);
	EXPECT_EQ(16, softrc_eng_tx(&t.qp, 0, 16));
	EXPECT_EQ(16, softrc_eng_tx(&t.qp, 0, 16));
	rd_check(&t, &e);			/* 5000..5047 out */
	/*
	 * A duplicate ahead of the cursor: the requester has everything
	 * before it (it asks from its first missing PSN) and expects a FIRST
	 * there: the response jumps to it.
	 */
	rx_read(&t, 5100, 100, (1 << 20) - 100 * 256);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, t.tx[0].opcode);
	EXPECT_EQ(5100, t.tx[0].psn);
	e.psn = 5100;
	e.first = 5100;
	rd_check(&t, &e);
	EXPECT_EQ(5116, e.psn);
	/* 5010 lost: the requester asks again from there */
	rx_read(&t, 5010, 10, (1 << 20) - 10 * 256);
	EXPECT_EQ(SOFTRC_RESP_INLINE, t.ntx);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, t.tx[0].opcode);
	EXPECT_EQ(5010, t.tx[0].psn);
	EXPECT_EQ(1, t.tx[0].msn);		/* duplicates never counted */
	e.psn = 5010;
	e.first = 5010;
	rd_check(&t, &e);
	ASSERT_TRUE(drain(&t, 16, &e, &calls));
	EXPECT_EQ(5000 + MIB_PKTS, e.psn);
	EXPECT_EQ(0, e.bad);
	EXPECT_EQ(2, t.qp.cnt.dup_reads);
	EXPECT_EQ(1, t.qp.resp.msn);
}

TEST(resp_two_reads_answered_in_order)
{
	struct ct t;
	int calls = 0, i;
	u32 psn = 5000;
	struct softrc_pkt p;

	ct_init_pmtu(&t, 256);
	rx_read(&t, 5000, 0, 64 * 256);		/* A: 5000..5063 */
	rx_read(&t, 5064, 0, 3 * 256 + 1);	/* B: 5064..5067 */
	p = ct_req(SOFTRC_OP_RDMA_WRITE_ONLY, 5068, 8, true);
	p.dma_len = 8;
	ct_rx(&t, &p, 0);
	softrc_eng_rx_flush(&t.qp);		/* ACK 5068 held behind A, B */
	EXPECT_TRUE(softrc_eng_tx_pending(&t.qp));
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5069, 0, true);
	ct_rx(&t, &p, 0);			/* its ACK covers 5068 */
	EXPECT_EQ(3, t.qp.resp.epsn - 5067);
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	ASSERT_EQ(64 + 4 + 1, t.ntx);
	for (i = 0; i < 68; i++, psn++) {
		bool first = i == 0 || i == 64, last = i == 63 || i == 67;

		EXPECT_EQ(psn, t.tx[i].psn);
		EXPECT_EQ(first ? SOFTRC_OP_RDMA_READ_RESPONSE_FIRST :
			  last ? SOFTRC_OP_RDMA_READ_RESPONSE_LAST :
			  SOFTRC_OP_RDMA_READ_RESPONSE_MIDDLE, t.tx[i].opcode);
	}
	EXPECT_EQ(1, t.tx[67].payload_len);
	EXPECT_EQ(SOFTRC_OP_ATOMIC_ACKNOWLEDGE, t.tx[68].opcode);
	EXPECT_EQ(5069, t.tx[68].psn);
	EXPECT_EQ(4, t.tx[68].msn);
	EXPECT_EQ(0, t.qp.cnt.acks_sent);
	EXPECT_FALSE(softrc_eng_tx_pending(&t.qp));
}

TEST(resp_ack_and_nak_held_behind_read_response)
{
	struct ct t;
	int calls = 0;
	struct softrc_pkt p;

	ct_init_pmtu(&t, 256);
	rx_read(&t, 5000, 0, 64 * 256);
	p = ct_req(SOFTRC_OP_RDMA_WRITE_ONLY, 5064, 8, true);
	p.dma_len = 8;
	ct_rx(&t, &p, 0);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(16, t.ntx);			/* no ACK past the READ */
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	ASSERT_EQ(65, t.ntx);
	EXPECT_EQ(SOFTRC_OP_ACKNOWLEDGE, t.tx[64].opcode);
	EXPECT_EQ(SOFTRC_AETH_ACK, t.tx[64].syndrome & 0xe0);
	EXPECT_EQ(5064, t.tx[64].psn);
	EXPECT_EQ(2, t.tx[64].msn);

	/* a gap behind a queued response: the NAK waits too, once */
	t.ntx = 0;
	rx_read(&t, 5065, 0, 64 * 256);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5200, 8, true, 8);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5201, 8, true, 8);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(16, t.ntx);
	EXPECT_EQ(1, t.qp.cnt.seq_naks_sent);
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	ASSERT_EQ(65, t.ntx);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_PSN_SEQ_ERR, 5129));

	/* the expected PSN fills the gap before the NAK leaves: no NAK */
	t.ntx = 0;
	rx_read(&t, 5129, 0, 64 * 256);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5300, 8, true, 8);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5193, 8, false, 8);
	softrc_eng_rx_flush(&t.qp);
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	EXPECT_EQ(64, t.ntx);
	EXPECT_EQ(2, t.qp.cnt.seq_naks_sent);

	/* an RNR NAK is held the same way */
	t.ntx = 0;
	rx_read(&t, 5194, 0, 64 * 256);
	ct_rx_req(&t, SOFTRC_OP_SEND_ONLY, 5258, 8, true, 0);
	EXPECT_EQ(16, t.ntx);
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	ASSERT_EQ(65, t.ntx);
	EXPECT_EQ(SOFTRC_AETH_RNR_NAK | 5, t.tx[64].syndrome);
	EXPECT_EQ(5258, t.tx[64].psn);
}

/* softrc_eng_rx_flush_ack(): only a plain ACK is handed to the glue */
TEST(resp_flush_ack_hands_over_a_plain_ack)
{
	struct softrc_pkt ack, p;
	struct ct t;
	int calls = 0;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 8, true, 8);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5001, 8, true, 8);
	ASSERT_TRUE(softrc_eng_rx_flush_ack(&t.qp, &ack));
	EXPECT_EQ(0, t.ntx);			/* not through ops->xmit */
	EXPECT_EQ(SOFTRC_OP_ACKNOWLEDGE, ack.opcode);
	EXPECT_EQ(SOFTRC_AETH_ACK, ack.syndrome & 0xe0);
	EXPECT_EQ(5001, ack.psn);
	EXPECT_EQ(2, ack.msn);
	EXPECT_EQ(1, t.qp.cnt.acks_sent);	/* counted as sent */
	EXPECT_EQ(1, t.qp.cnt.tx_pkts);
	EXPECT_FALSE(softrc_eng_rx_flush_ack(&t.qp, &ack));	/* owed once */
	EXPECT_EQ(0, t.ntx);

	/* a sequence NAK still goes out through ops->xmit, at once */
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5005, 8, true, 8);
	EXPECT_FALSE(softrc_eng_rx_flush_ack(&t.qp, &ack));
	ASSERT_EQ(1, t.ntx);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_PSN_SEQ_ERR, 5002));

	/* behind a queued READ response the ACK waits its turn */
	ct_init_pmtu(&t, 256);
	rx_read(&t, 5000, 0, 64 * 256);
	p = ct_req(SOFTRC_OP_RDMA_WRITE_ONLY, 5064, 8, true);
	p.dma_len = 8;
	ct_rx(&t, &p, 0);
	EXPECT_FALSE(softrc_eng_rx_flush_ack(&t.qp, &ack));
	EXPECT_EQ(16, t.ntx);
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	ASSERT_EQ(65, t.ntx);
	EXPECT_EQ(SOFTRC_OP_ACKNOWLEDGE, t.tx[64].opcode);
	EXPECT_EQ(5064, t.tx[64].psn);

	/* nothing in ERROR */
	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 8, true, 8);
	softrc_eng_set_error(&t.qp);
	EXPECT_FALSE(softrc_eng_rx_flush_ack(&t.qp, &ack));
}

TEST(resp_error_stops_pending_responses)
{
	struct ct t;
	int calls = 0;

	ct_init_pmtu(&t, 256);
	rx_read(&t, 5000, 0, 1 << 20);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000 + MIB_PKTS, 8, true, 8);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_TRUE(softrc_eng_tx_pending(&t.qp));
	softrc_eng_set_error(&t.qp);
	EXPECT_FALSE(softrc_eng_tx_pending(&t.qp));
	EXPECT_TRUE(softrc_eng_idle(&t.qp));
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 0, 16));
	EXPECT_EQ(0, softrc_eng_tx_resp(&t.qp, 16));
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(16, t.ntx);

	/*
	 * A fatal NAK while a response is queued: the response is owed
	 * first (IBTA 9.5, and the NAK's MSN says the READ is done), so the
	 * NAK waits behind it; requests meanwhile are dropped, ERROR comes
	 * with the NAK.
	 */
	ct_init_pmtu(&t, 256);
	rx_read(&t, 5000, 0, 64 * 256);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_MIDDLE, 5064, 256, true, 0);
	EXPECT_EQ(16, t.ntx);
	EXPECT_FALSE(t.errored);
	EXPECT_TRUE(softrc_eng_tx_pending(&t.qp));
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5064, 8, true, 8);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(16, t.ntx);
	EXPECT_EQ(0, t.nplace);
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	ASSERT_EQ(65, t.ntx);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_LAST, t.tx[63].opcode);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5064));
	EXPECT_EQ(1, t.tx[64].msn);
	EXPECT_EQ(1, t.qp.cnt.inv_req_naks_sent);
	EXPECT_TRUE(t.errored);
	EXPECT_FALSE(softrc_eng_tx_pending(&t.qp));
}

TEST(resp_idle_and_pending_reporting)
{
	struct ct t;
	int n = 0;

	ct_init_pmtu(&t, 256);
	EXPECT_TRUE(softrc_eng_idle(&t.qp));
	EXPECT_FALSE(softrc_eng_tx_pending(&t.qp));
	rx_read(&t, 5000, 0, 40 * 256);
	EXPECT_FALSE(softrc_eng_idle(&t.qp));
	EXPECT_TRUE(softrc_eng_tx_pending(&t.qp));
	/* budget exhausted: the return says "call again" */
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 0, 1));
	EXPECT_EQ(16, softrc_eng_tx_resp(&t.qp, 16));
	EXPECT_TRUE(softrc_eng_tx_pending(&t.qp));
	while (softrc_eng_tx_resp(&t.qp, 3) == 3)
		n++;
	EXPECT_EQ(2, n);			/* 7 left: 3 + 3 + 1 */
	EXPECT_EQ(40, t.ntx);
	EXPECT_FALSE(softrc_eng_tx_pending(&t.qp));
	EXPECT_TRUE(softrc_eng_idle(&t.qp));
}

TEST(resp_tx_budget_shared_with_requester)
{
	struct ct t;
	int i, reqs = 0;

	ct_init_pmtu(&t, 256);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 64 * 256, 0));
	rx_read(&t, 5000, 0, 64 * 256);
	t.ntx = 0;
	EXPECT_EQ(16, softrc_eng_tx(&t.qp, 0, 16));
	for (i = 0; i < 16; i++)
		reqs += !!(t.tx[i].op->flags & SOFTRC_OPF_REQ);
	EXPECT_EQ(8, reqs);			/* half each, responses first */
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_MIDDLE, t.tx[0].opcode);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_FIRST, t.tx[8].opcode);
	/* nothing for the requester: responses take the whole budget */
	softrc_eng_set_error(&t.qp);
	ct_init_pmtu(&t, 256);
	rx_read(&t, 5000, 0, 64 * 256);
	EXPECT_EQ(16, softrc_eng_tx(&t.qp, 0, 16));
	EXPECT_EQ(32, t.ntx);
}

/*
 * The queue over the resource ring (4 here): a duplicate older than the
 * cursor restarts there, one past the queue extends it, a new READ
 * over a still-queued replay abandons the replay.
 */
TEST(resp_read_queue_restart_extend_and_overwrite)
{
	struct ct t;
	int calls = 0;

	ct_init_pmtu(&t, 256);
	rx_read(&t, 5000, 0, 20 * 256);		/* R1 5000..5019 */
	rx_read(&t, 5020, 0, 20 * 256);		/* R2 5020..5039 */
	EXPECT_EQ(32, t.ntx);
	/* R1 is out; the cursor is in R2: a duplicate of R1 restarts there */
	rx_read(&t, 5005, 5, 15 * 256);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, t.tx[32].opcode);
	EXPECT_EQ(5005, t.tx[32].psn);
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	ASSERT_EQ(32 + 15 + 20, t.ntx);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, t.tx[47].opcode);
	EXPECT_EQ(5020, t.tx[47].psn);
	EXPECT_EQ(5039, t.tx[66].psn);

	rx_read(&t, 5040, 0, 256);		/* R3 */
	rx_read(&t, 5041, 0, 256);		/* R4: ring full */
	/* nothing queued: a duplicate of R1 replays R1 alone */
	t.ntx = 0;
	rx_read(&t, 5000, 0, 20 * 256);
	EXPECT_EQ(16, t.ntx);
	/* a duplicate of R3, past the queue: R2 and R3 join it */
	rx_read(&t, 5040, 0, 256);
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	ASSERT_EQ(20 + 20 + 1, t.ntx);
	EXPECT_EQ(5020, t.tx[20].psn);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, t.tx[40].opcode);
	EXPECT_EQ(5040, t.tx[40].psn);

	/* a replay of R1 queued; the new R5 takes R1's slot: R1 abandoned */
	t.ntx = 0;
	rx_read(&t, 5000, 0, 20 * 256);
	t.ntx = 0;
	rx_read(&t, 5042, 0, 256);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, t.tx[0].opcode);
	EXPECT_EQ(5042, t.tx[0].psn);
	EXPECT_FALSE(softrc_eng_tx_pending(&t.qp));
	rx_read(&t, 5000, 0, 20 * 256);		/* R1 is gone now */
	EXPECT_EQ(1, t.qp.cnt.drop_too_old);
}

/*
 * A duplicate from inside a READ response queued behind the head (review,
 * "suspicious" list): it goes out as a FIRST at the requested PSN, not as
 * a MIDDLE of a replay from the resource's first PSN.
 */
TEST(resp_dup_read_mid_psn_behind_queue_head_goes_first)
{
	struct ct t;
	int calls = 0, i;

	ct_init_pmtu(&t, 256);
	rx_read(&t, 5000, 0, 20 * 256);		/* R1 5000..5019 */
	rx_read(&t, 5020, 0, 20 * 256);		/* R2 5020..5039 */
	ASSERT_EQ(32, t.ntx);
	rx_read(&t, 5000, 0, 20 * 256);		/* R1 again: queue R1, R2 */
	ASSERT_EQ(48, t.ntx);
	EXPECT_EQ(5015, t.tx[47].psn);
	t.ntx = 0;
	/* the requester got R1 and R2 up to 5024: it asks from 5025 */
	rx_read(&t, 5025, 25, 15 * 256);
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	ASSERT_EQ(15, t.ntx);
	for (i = 0; i < 15; i++)
		EXPECT_EQ(5025 + i, t.tx[i].psn);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, t.tx[0].opcode);
	EXPECT_EQ(0x10000 + 5 * 256, t.txpl[0].addr);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_LAST, t.tx[14].opcode);
	EXPECT_FALSE(softrc_eng_tx_pending(&t.qp));
}

TEST(resp_dup_atomic_queued_behind_read)
{
	struct ct t;
	struct softrc_pkt p;
	int calls = 0;

	ct_init_pmtu(&t, 256);
	t.mem = 7;
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5000, 0, true);
	p.swap_add = 1;
	ct_rx(&t, &p, 0);
	rx_read(&t, 5001, 0, 40 * 256);
	/* the ATOMIC ACK was lost: its duplicate restarts the queue */
	t.ntx = 0;
	ct_rx(&t, &p, 0);
	EXPECT_EQ(SOFTRC_OP_ATOMIC_ACKNOWLEDGE, t.tx[0].opcode);
	EXPECT_EQ(7, t.tx[0].orig);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, t.tx[1].opcode);
	EXPECT_EQ(5001, t.tx[1].psn);
	ASSERT_TRUE(drain(&t, 16, NULL, &calls));
	EXPECT_EQ(41, t.ntx);
	EXPECT_EQ(1, t.natomic);
	EXPECT_EQ(8, t.mem);
}

/* End to end: a 1 MiB READ at 256 MTU over the simulator, budget 16. */
TEST(resp_read_1mib_sim_budget_16)
{
	struct softrc_eng_attr attr;
	struct softrc_eng_send_wr wr = {
		.wr_id = 1, .opcode = SOFTRC_WR_RDMA_READ, .length = 1 << 20,
		.rkey = 0x200, .send_flags = SOFTRC_SEND_SIGNALED,
	};
	struct sim sim;
	u32 i;

	ct_attr_default(&attr);
	attr.pmtu = 256;
	sim_init(&sim, &attr, 2 << 20, 1);
	sim.tx_budget = 16;
	sim_add_mr(&sim, 1, 0x200, 0, 1 << 20, SOFTRC_ACCESS_REMOTE_READ);
	for (i = 0; i < 1 << 20; i++)
		sim.ep[1].mem[i] = (u8)(i * 7 + (i >> 8));
	wr.remote_addr = sim_va(&sim, 1, 0x200, 0);
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 1 << 20));
	ASSERT_TRUE(sim_run(&sim, 1ull << 40));
	EXPECT_EQ(0, sim.violations);
	ASSERT_EQ(1, sim.ep[0].ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, sim.ep[0].cqe[0].c.status);
	EXPECT_EQ(0, memcmp(sim.ep[0].mem + (1 << 20), sim.ep[1].mem, 1 << 20));
	EXPECT_EQ(MIB_PKTS, sim.ep[1].qp.cnt.tx_pkts);
	EXPECT_TRUE(softrc_eng_idle(&sim.ep[1].qp));
	sim_free(&sim);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Responder unit tests: reassembly of SEND and WRITE, length and
 * sequencing checks, R_Key/alignment errors, the one-NAK-per-gap rule,
 * RNR, WRITE with immediate, SEND with invalidate, ACK coalescing, MSN.
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "coretest.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

static void rx_req(struct ct *t, u8 op, u32 psn, u32 len, bool ackreq, u32 dma)
{
	struct softrc_pkt p = ct_req(op, psn, len, ackreq);

	p.dma_len = dma;
	ct_rx(t, &p, 0);
}

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
	ASSERT_LE(0, softrc_core_post_recv(&t.qp, 42, 4096));
	rx_req(&t, SOFTRC_OP_SEND_FIRST, 5000, 1024, false, 0);
	EXPECT_EQ(SOFTRC_RESP_IN_SEND, t.qp.resp.state);
	rx_req(&t, SOFTRC_OP_SEND_MIDDLE, 5001, 1024, false, 0);
	rx_req(&t, SOFTRC_OP_SEND_LAST, 5002, 100, true, 0);
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
	softrc_core_rx_flush(&t.qp);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(5002, t.tx[0].psn);
	softrc_core_rx_flush(&t.qp);
	EXPECT_EQ(1, t.ntx);
}

TEST(resp_write_context_closes_at_last)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 2500);
	EXPECT_EQ(1, t.mr_checks);
	EXPECT_EQ(2500, t.last_check_len);
	EXPECT_EQ(SOFTRC_RESP_IN_WRITE, t.qp.resp.state);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_MIDDLE, 5001, 1024, false, 0);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_LAST, 5002, 452, true, 0);
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
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 2500);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_LAST, 5001, 1000, true, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5001));
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(1, t.qp.cnt.inv_req_naks_sent);
	EXPECT_EQ(1, t.nplace);
}

TEST(resp_write_overflow_nak)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 2048);
	/* a MIDDLE that would use up the rest must have been the LAST */
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_MIDDLE, 5001, 1024, false, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5001));
	EXPECT_TRUE(t.errored);
}

TEST(resp_payload_length_rules)
{
	struct ct t;

	ct_init(&t, NULL);
	softrc_core_post_recv(&t.qp, 1, 8192);
	rx_req(&t, SOFTRC_OP_SEND_FIRST, 5000, 1000, false, 0);	/* != pmtu */
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	ASSERT_EQ(1, t.ncqe);		/* its WQE: LOC_LEN_ERR, none to flush */
	EXPECT_EQ(SOFTRC_WC_LOC_LEN_ERR, t.cqe[0].status);

	ct_init(&t, NULL);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 100, true, 99);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
}

TEST(resp_opcode_sequence_errors)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_MIDDLE, 5000, 1024, false, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));

	ct_init(&t, NULL);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 4096);
	rx_req(&t, SOFTRC_OP_SEND_ONLY, 5001, 10, true, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5001));

	ct_init(&t, NULL);
	softrc_core_post_recv(&t.qp, 1, 8192);
	softrc_core_post_recv(&t.qp, 2, 8192);
	rx_req(&t, SOFTRC_OP_SEND_FIRST, 5000, 1024, false, 0);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_LAST, 5001, 10, true, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5001));
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_REM_INV_REQ_ERR, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[1].status);
}

TEST(resp_recv_wqe_too_small)
{
	struct ct t;

	ct_init(&t, NULL);
	softrc_core_post_recv(&t.qp, 1, 100);
	softrc_core_post_recv(&t.qp, 2, 100);
	rx_req(&t, SOFTRC_OP_SEND_ONLY, 5000, 200, true, 0);
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
		rx_req(&t, ops[i], 5000, ops[i] == SOFTRC_OP_RDMA_WRITE_ONLY ? 8 : 0,
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
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 0, true, 0);
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
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5002, 8, true, 8);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5003, 8, true, 8);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5004, 8, true, 8);
	ASSERT_EQ(1, t.ntx);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_PSN_SEQ_ERR, 5000));
	EXPECT_EQ(3, t.qp.cnt.drop_out_of_seq);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 8, false, 8);
	/* a new gap after progress: a new NAK */
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5003, 8, true, 8);
	ASSERT_EQ(2, t.ntx);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_PSN_SEQ_ERR, 5001));
	EXPECT_EQ(2, t.qp.cnt.seq_naks_sent);
}

TEST(resp_rnr_when_no_recv_wqe)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_req(&t, SOFTRC_OP_SEND_ONLY, 5000, 8, true, 0);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(SOFTRC_AETH_RNR_NAK | 5, t.tx[0].syndrome);
	EXPECT_EQ(5000, t.tx[0].psn);
	EXPECT_EQ(5000, t.qp.resp.epsn);
	/* what follows is silently dropped: the RNR NAK names the gap */
	rx_req(&t, SOFTRC_OP_SEND_ONLY, 5001, 8, true, 0);
	EXPECT_EQ(1, t.ntx);
	softrc_core_post_recv(&t.qp, 9, 64);
	rx_req(&t, SOFTRC_OP_SEND_ONLY, 5000, 8, true, 0);
	EXPECT_EQ(1, t.ncqe);
	EXPECT_EQ(5001, t.qp.resp.epsn);
}

TEST(resp_write_imm_consumes_recv_at_last)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 1500);
	p = ct_req(SOFTRC_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE, 5001, 476, true);
	p.imm = 0xcafe;
	ct_rx(&t, &p, 0);
	/* no receive WQE: RNR at the LAST, context stays open */
	EXPECT_EQ(SOFTRC_AETH_RNR_NAK | 5, t.tx[0].syndrome);
	EXPECT_EQ(5001, t.tx[0].psn);
	EXPECT_EQ(SOFTRC_RESP_IN_WRITE, t.qp.resp.state);
	EXPECT_EQ(1, t.nplace);
	softrc_core_post_recv(&t.qp, 3, 0);
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
	softrc_core_post_recv(&t.qp, 1, 64);
	softrc_core_post_recv(&t.qp, 2, 64);
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
	EXPECT_EQ(SOFTRC_WC_LOC_PROT_ERR, t.cqe[1].status);
}

TEST(resp_ack_coalescing_per_burst)
{
	struct ct t;
	int i;

	ct_init(&t, NULL);
	for (i = 0; i < 3; i++)
		rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000 + i, 8, true, 8);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5003, 8, false, 8);
	EXPECT_EQ(0, t.ntx);
	softrc_core_rx_flush(&t.qp);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(5003, t.tx[0].psn);
	EXPECT_EQ(4, t.tx[0].msn);
	EXPECT_EQ(1, t.qp.cnt.acks_sent);
	/* no AckReq: nothing owed */
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5004, 8, false, 8);
	softrc_core_rx_flush(&t.qp);
	EXPECT_EQ(1, t.ntx);
}

TEST(resp_pending_ack_precedes_read_response)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 8, true, 8);
	rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5001, 0, true, 8);
	ASSERT_EQ(2, t.ntx);
	EXPECT_EQ(SOFTRC_OP_ACKNOWLEDGE, t.tx[0].opcode);
	EXPECT_EQ(5000, t.tx[0].psn);
	EXPECT_EQ(1, t.tx[0].msn);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, t.tx[1].opcode);
	EXPECT_EQ(2, t.tx[1].msn);
	EXPECT_EQ(8, t.txpl[1].len);
	softrc_core_rx_flush(&t.qp);
	EXPECT_EQ(2, t.ntx);
}

TEST(resp_zero_length_read)
{
	struct ct t;

	ct_init(&t, NULL);
	t.mr_fail = 1;
	rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5000, 0, true, 0);
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
	softrc_core_set_error(&t.qp);
	rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 8, true, 8);
	softrc_core_rx_flush(&t.qp);
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
	softrc_core_rx_invalid(&t.qp, &p);	/* not expected: dropped */
	EXPECT_EQ(0, t.ntx);
	p.psn = 5000;
	softrc_core_rx_invalid(&t.qp, &p);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(2, t.qp.cnt.drop_malformed);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Completer unit tests: retirement order and the READ/ATOMIC barrier,
 * signaled flag, error NAKs to completion status + ERROR + flush, stale
 * and bogus responses, READ placement, ATOMIC results, implied NAK.
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "coretest.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

#define SIG SOFTRC_SEND_SIGNALED

static void rx_ack(struct ct *t, u32 psn, u8 syn, u32 msn)
{
	struct softrc_pkt p = ct_ack(psn, syn, msn);

	ct_rx(t, &p, 1);
}

TEST(comp_retire_in_post_order)
{
	struct ct t;
	int i;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 2000, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE_WITH_IMM, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1000, SOFTRC_AETH_ACK | 31, 0);	/* mid-WRITE: nothing */
	EXPECT_EQ(0, t.ncqe);
	EXPECT_EQ(1001, t.qp.req.una);
	rx_ack(&t, 1003, SOFTRC_AETH_ACK | 31, 3);
	ASSERT_EQ(3, t.ncqe);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(0x100 + i, t.cqe[i].wr_id);
		EXPECT_EQ(i, t.cqe[i].slot);
		EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[i].status);
	}
	EXPECT_EQ(SOFTRC_WC_RDMA_WRITE, t.cqe[0].opcode);
	EXPECT_EQ(2000, t.cqe[0].byte_len);
	EXPECT_EQ(SOFTRC_WC_SEND, t.cqe[1].opcode);
	EXPECT_EQ(2, t.qp.cnt.acks_rcvd);
}

TEST(comp_never_past_outstanding_read)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 100, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	/* MSN 3 covers all three, but the READ has had no response */
	rx_ack(&t, 1002, SOFTRC_AETH_ACK | 31, 3);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(0x100, t.cqe[0].wr_id);
	EXPECT_EQ(1, t.qp.cnt.implied_naks);
	EXPECT_EQ(1001, t.qp.req.una);
	/* the response: READ and the SEND behind it retire together */
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1001, 100, 3);
	ct_rx(&t, &p, 2);
	ASSERT_EQ(3, t.ncqe);
	EXPECT_EQ(0x101, t.cqe[1].wr_id);
	EXPECT_EQ(SOFTRC_WC_RDMA_READ, t.cqe[1].opcode);
	EXPECT_EQ(0x102, t.cqe[2].wr_id);
	EXPECT_EQ(t.qp.req.psn_next, t.qp.req.una);
}

TEST(comp_ack_below_read_does_not_imply_nak)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 100, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1000, SOFTRC_AETH_ACK | 31, 1);
	EXPECT_EQ(1, t.ncqe);
	EXPECT_EQ(0, t.qp.cnt.implied_naks);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 1, 100));
}

TEST(comp_unsignaled_retire_silently)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1002, SOFTRC_AETH_ACK | 31, 3);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(0x102, t.cqe[0].wr_id);
	EXPECT_EQ(t.qp.req.tail, t.qp.req.head);
}

static void nak_case(struct __test_metadata *_metadata, u8 code, u8 status)
{
	struct ct t;

	ct_init(&t, NULL);
	softrc_eng_post_recv(&t.qp, 7, 64);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 10, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1001, SOFTRC_AETH_NAK | code, 1);
	/* the first retires silently, the NAKed one fails, the rest flush */
	ASSERT_EQ(3, t.ncqe);
	EXPECT_EQ(0x101, t.cqe[0].wr_id);
	EXPECT_EQ(status, t.cqe[0].status);
	EXPECT_EQ(0x102, t.cqe[1].wr_id);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[1].status);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[2].status);
	EXPECT_TRUE(t.cqe[2].flags & SOFTRC_CQE_RECV);
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(SOFTRC_QPS_ERROR, t.qp.state);
	EXPECT_EQ(0, t.deadline[SOFTRC_TIMER_RETRY]);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 2, 100));
}

TEST(comp_nak_invalid_request)
{
	nak_case(_metadata, SOFTRC_NAK_INVALID_REQ, SOFTRC_WC_REM_INV_REQ_ERR);
}

TEST(comp_nak_remote_access)
{
	nak_case(_metadata, SOFTRC_NAK_REMOTE_ACCESS, SOFTRC_WC_REM_ACCESS_ERR);
}

TEST(comp_nak_remote_operational)
{
	nak_case(_metadata, SOFTRC_NAK_REMOTE_OP_ERR, SOFTRC_WC_REM_OP_ERR);
}

TEST(comp_nak_reserved_code_dropped)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1000, SOFTRC_AETH_NAK | 9, 0);
	rx_ack(&t, 1000, SOFTRC_AETH_RESERVED, 0);
	EXPECT_EQ(0, t.ncqe);
	EXPECT_FALSE(t.errored);
	EXPECT_EQ(2, t.qp.cnt.drop_bad_resp);
}

TEST(comp_stale_and_bogus_acks_dropped)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1000, SOFTRC_AETH_ACK | 31, 1);
	rx_ack(&t, 999, SOFTRC_AETH_ACK | 31, 0);	/* before una */
	rx_ack(&t, 1005, SOFTRC_AETH_ACK | 31, 9);	/* never sent */
	EXPECT_EQ(1, t.qp.cnt.drop_dup_resp);
	EXPECT_EQ(1, t.qp.cnt.drop_bad_resp);
	EXPECT_EQ(1, t.ncqe);
	EXPECT_EQ(1, t.qp.req.msn);
}

TEST(comp_seq_nak_counts_a_retry)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1001, SOFTRC_AETH_NAK | SOFTRC_NAK_PSN_SEQ_ERR, 1);
	EXPECT_EQ(1, t.ncqe);
	EXPECT_EQ(7 - 1, t.qp.req.retry_left);
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 1, 100));
	EXPECT_EQ(1001, t.tx[2].psn);
	EXPECT_EQ(1, t.nretx);
	EXPECT_EQ(1001, t.retx_psn[0]);
	EXPECT_EQ(SOFTRC_RETRY_nak_seq, t.retx_why[0]);
	/* the same NAK again before progress: no second go-back */
	rx_ack(&t, 1001, SOFTRC_AETH_NAK | SOFTRC_NAK_PSN_SEQ_ERR, 1);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 1, 100));
	EXPECT_EQ(6, t.qp.req.retry_left);
	EXPECT_EQ(1, t.nretx);
}

TEST(comp_implied_nak_once_per_loss)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1001, SOFTRC_AETH_ACK | 31, 2);
	rx_ack(&t, 1001, SOFTRC_AETH_ACK | 31, 2);
	EXPECT_EQ(2, t.qp.cnt.implied_naks);
	EXPECT_EQ(6, t.qp.req.retry_left);
	EXPECT_EQ(2, softrc_eng_tx(&t.qp, 1, 100));
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_REQUEST, t.tx[2].opcode);
	EXPECT_EQ(1, t.nretx);
	EXPECT_EQ(1000, t.retx_psn[0]);
	EXPECT_EQ(SOFTRC_RETRY_read_restart, t.retx_why[0]);
}

/* A sequence error NAK past an unanswered READ restarts the READ first. */
TEST(comp_seq_nak_past_read_is_read_restart)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1002, SOFTRC_AETH_NAK | SOFTRC_NAK_PSN_SEQ_ERR, 2);
	EXPECT_EQ(1, t.qp.cnt.seq_naks_rcvd);
	EXPECT_EQ(1, t.nretx);
	EXPECT_EQ(1000, t.retx_psn[0]);
	EXPECT_EQ(SOFTRC_RETRY_read_restart, t.retx_why[0]);
}

TEST(comp_read_response_placement)
{
	struct ct t;
	struct softrc_pkt p;
	int slot;

	ct_init(&t, NULL);
	slot = ct_post(&t, SOFTRC_WR_RDMA_READ, 2500, SIG);
	softrc_eng_tx(&t.qp, 0, 100);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, 1000, 1024, 1);
	ct_rx(&t, &p, 1);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_MIDDLE, 1001, 1024, 1);
	ct_rx(&t, &p, 1);
	EXPECT_EQ(0, t.ncqe);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_LAST, 1002, 452, 1);
	ct_rx(&t, &p, 1);
	ASSERT_EQ(3, t.nplace);
	EXPECT_EQ(SOFTRC_BUF_SEND_WQE, t.place[2].dst.kind);
	EXPECT_EQ(slot, t.place[2].dst.slot);
	EXPECT_EQ(2048, t.place[2].dst.addr);
	EXPECT_EQ(452, t.place[2].dst.len);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(2500, t.cqe[0].byte_len);
	EXPECT_EQ(0, t.qp.req.rd_out);
}

TEST(comp_read_response_wrong_shape_dropped)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 2000, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_ATOMIC_FETCH_AND_ADD, 8, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, 1000, 1000, 1);
	ct_rx(&t, &p, 1);			/* FIRST must be pmtu */
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 2000, 1);
	ct_rx(&t, &p, 1);			/* 2 packets expected */
	p = ct_resp(SOFTRC_OP_ATOMIC_ACKNOWLEDGE, 1000, 0, 1);
	ct_rx(&t, &p, 1);			/* not a READ response */
	EXPECT_EQ(3, t.qp.cnt.drop_bad_resp);
	EXPECT_EQ(0, t.nplace);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, 1000, 1024, 1);
	ct_rx(&t, &p, 1);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_LAST, 1001, 976, 1);
	ct_rx(&t, &p, 1);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1002, 8, 2);
	ct_rx(&t, &p, 1);			/* an ATOMIC wants its ACK */
	EXPECT_EQ(4, t.qp.cnt.drop_bad_resp);
	EXPECT_EQ(1, t.ncqe);
}

TEST(comp_atomic_result_delivered)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_ATOMIC_CMP_AND_SWP, 8, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	p = ct_resp(SOFTRC_OP_ATOMIC_ACKNOWLEDGE, 1000, 0, 1);
	p.orig = 0x1122334455667788ull;
	ct_rx(&t, &p, 1);
	EXPECT_EQ(1, t.nresult);
	EXPECT_EQ(0x1122334455667788ull, t.atomic_result);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_COMP_SWAP, t.cqe[0].opcode);
	EXPECT_EQ(8, t.cqe[0].byte_len);
	ct_rx(&t, &p, 1);			/* duplicate: dropped */
	EXPECT_EQ(1, t.nresult);
	EXPECT_EQ(1, t.qp.cnt.drop_dup_resp);
}

/*
 * A fatal NAK past an unanswered READ means the READ's response was sent
 * and lost: implied NAK, the READ is asked again (not flushed), and the
 * NAK's error reaches the WRITE once the READ is answered.
 */
TEST(comp_error_nak_past_unanswered_read_is_implied_nak)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 10, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 10, 0));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1001, SOFTRC_AETH_NAK | SOFTRC_NAK_REMOTE_ACCESS, 1);
	EXPECT_EQ(0, t.ncqe);
	EXPECT_FALSE(t.errored);
	EXPECT_EQ(1, t.qp.cnt.rem_access_naks_rcvd);
	EXPECT_EQ(1, t.qp.cnt.implied_naks);
	EXPECT_EQ(6, t.qp.req.retry_left);
	EXPECT_LE(1, softrc_eng_tx(&t.qp, 2, 100));
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_REQUEST, t.tx[2].opcode);
	EXPECT_EQ(1000, t.tx[2].psn);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 10, 1);
	ct_rx(&t, &p, 3);
	EXPECT_EQ(0, t.ncqe);		/* unsignaled success */
	rx_ack(&t, 1001, SOFTRC_AETH_NAK | SOFTRC_NAK_REMOTE_ACCESS, 1);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(0x101, t.cqe[0].wr_id);
	EXPECT_EQ(SOFTRC_WC_REM_ACCESS_ERR, t.cqe[0].status);
	EXPECT_TRUE(t.errored);
}

TEST(comp_rnr_nak_waits_then_resends)
{
	struct ct t;
	u64 d;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1001, SOFTRC_AETH_RNR_NAK | 3, 1);
	EXPECT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_REQ_RNR_WAIT, t.qp.req.state);
	d = t.deadline[SOFTRC_TIMER_RNR];
	EXPECT_EQ(1 + 30000, d);
	EXPECT_EQ(1, t.nrnr);
	EXPECT_EQ(1001, t.rnr_psn);
	EXPECT_EQ(30000, t.rnr_wait_ns);
	EXPECT_EQ(0, t.nretx);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 2, 100));
	/* a timeout while waiting does nothing */
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, 1ull << 40);
	EXPECT_EQ(0, t.qp.cnt.timeouts);
	EXPECT_EQ(0, t.nexpired[SOFTRC_TIMER_RETRY]);
	EXPECT_EQ(0, t.nexpired[SOFTRC_TIMER_RNR]);
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RNR, d);
	EXPECT_EQ(SOFTRC_REQ_READY, t.qp.req.state);
	EXPECT_EQ(1, t.nexpired[SOFTRC_TIMER_RNR]);
	EXPECT_EQ(0, t.nexpired[SOFTRC_TIMER_RETRY]);
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, d, 100));
	EXPECT_EQ(1001, t.tx[2].psn);
	EXPECT_NE(0, t.deadline[SOFTRC_TIMER_RETRY]);
	EXPECT_EQ(1, t.nretx);
	EXPECT_EQ(1001, t.retx_psn[0]);
	EXPECT_EQ(SOFTRC_RETRY_rnr, t.retx_why[0]);
}

/* A QP with rnr_retry 1 that has sent @n signaled SENDs (PSN 1000 on). */
static void rnr_retry1_sends(struct __test_metadata *_metadata, struct ct *t,
			     int n)
{
	struct softrc_eng_attr attr;
	int i;

	ct_attr_default(&attr);
	attr.rnr_retry = 1;
	ct_init(t, &attr);
	for (i = 0; i < n; i++)
		ASSERT_LE(0, ct_post(t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t->qp, 0, 100);
}

/*
 * rnr_retry 1 allows exactly one RNR retry, also when the first RNR NAK
 * acknowledges an earlier WQE (progress resets the counter before the
 * NAK's own retry is spent, not after).
 */
TEST(comp_rnr_retry_counted_when_nak_also_acks)
{
	struct ct t;
	u64 d;

	rnr_retry1_sends(_metadata, &t, 2);
	rx_ack(&t, 1001, SOFTRC_AETH_RNR_NAK | 1, 1);	/* ACKs 1000 too */
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_REQ_RNR_WAIT, t.qp.req.state);
	EXPECT_EQ(0, t.qp.req.rnr_left);
	d = t.deadline[SOFTRC_TIMER_RNR];
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RNR, d);
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, d, 100));
	EXPECT_EQ(1001, t.tx[2].psn);
	rx_ack(&t, 1001, SOFTRC_AETH_RNR_NAK | 1, 1);	/* the retry spent */
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(0x101, t.cqe[1].wr_id);
	EXPECT_EQ(SOFTRC_WC_RNR_RETRY_EXC_ERR, t.cqe[1].status);
	EXPECT_EQ(2, t.qp.cnt.rnr_naks_rcvd);
	EXPECT_EQ(1, t.qp.cnt.rnr_retry_exceeded);
	EXPECT_TRUE(t.errored);
}

/* A duplicated RNR NAK during the wait is the same NAK: one retry spent. */
TEST(comp_rnr_duplicate_nak_not_counted)
{
	struct ct t;
	u64 d;

	rnr_retry1_sends(_metadata, &t, 1);
	rx_ack(&t, 1000, SOFTRC_AETH_RNR_NAK | 1, 0);
	d = t.deadline[SOFTRC_TIMER_RNR];
	rx_ack(&t, 1000, SOFTRC_AETH_RNR_NAK | 1, 0);	/* its duplicate */
	EXPECT_EQ(0, t.ncqe);
	EXPECT_EQ(SOFTRC_REQ_RNR_WAIT, t.qp.req.state);
	EXPECT_EQ(d, t.deadline[SOFTRC_TIMER_RNR]);
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RNR, d);
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, d, 100));
	rx_ack(&t, 1000, SOFTRC_AETH_RNR_NAK | 1, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_RNR_RETRY_EXC_ERR, t.cqe[0].status);
}

TEST(comp_set_error_flushes_both_queues)
{
	struct ct t;

	ct_init(&t, NULL);
	softrc_eng_post_recv(&t.qp, 1, 64);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 10, 0));
	softrc_eng_tx(&t.qp, 0, 100);
	softrc_eng_set_error(&t.qp);
	ASSERT_EQ(3, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_RDMA_READ, t.cqe[1].opcode);
	EXPECT_TRUE(t.cqe[2].flags & SOFTRC_CQE_RECV);
	softrc_eng_set_error(&t.qp);		/* idempotent */
	EXPECT_EQ(3, t.ncqe);
	rx_ack(&t, 1000, SOFTRC_AETH_ACK | 31, 1);
	EXPECT_EQ(1, t.qp.cnt.drop_state);
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, 1ull << 40);
	EXPECT_EQ(0, t.qp.cnt.timeouts);
	/* no expiry is reported on a QP in ERROR */
	EXPECT_EQ(0, t.nexpired[SOFTRC_TIMER_RETRY]);
}

TEST(comp_msn_retires_sends_behind_answered_read)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 3000, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	/* the READ response carries MSN 2: the WRITE behind it is done too */
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 10, 2);
	ct_rx(&t, &p, 1);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(t.qp.req.psn_next, t.qp.req.una);
	EXPECT_EQ(0, t.deadline[SOFTRC_TIMER_RETRY]);
}

TEST(comp_msn_beyond_posted_ignored)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 3000, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	rx_ack(&t, 1000, SOFTRC_AETH_ACK | 31, 2);	/* only SSN 1 exists */
	EXPECT_EQ(0, t.qp.req.msn);
	EXPECT_EQ(0, t.ncqe);
	rx_ack(&t, 1001, SOFTRC_AETH_ACK | 31, 1);	/* MSN alone retires */
	EXPECT_EQ(1, t.qp.req.msn);
	EXPECT_EQ(1, t.ncqe);
}

/*
 * An MSN covering a message not yet sent to its end (5 of 20 packets
 * out) is bogus: the packet is dropped and counted, nothing retires, and
 * the QP goes on (it used to retire the SEND, put una past psn_next and
 * wedge the next WQE).
 */
TEST(comp_msn_beyond_sent_dropped)
{
	struct ct t;
	int n;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 20 * 1024, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	EXPECT_EQ(5, softrc_eng_tx(&t.qp, 0, 5));
	EXPECT_EQ(1005, t.qp.req.psn_next);
	rx_ack(&t, 1000, SOFTRC_AETH_ACK | 31, 1);
	EXPECT_EQ(0, t.ncqe);
	EXPECT_EQ(1, t.qp.cnt.drop_bad_resp);
	EXPECT_EQ(0, t.qp.req.msn);
	EXPECT_EQ(1000, t.qp.req.una);
	/* the rest goes out, the real ACKs retire both */
	n = softrc_eng_tx(&t.qp, 2, 100);
	EXPECT_EQ(16, n);
	EXPECT_EQ(1021, t.qp.req.psn_next);
	rx_ack(&t, 1020, SOFTRC_AETH_ACK | 31, 2);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[1].status);
	EXPECT_TRUE(softrc_eng_idle(&t.qp));
}

/* A local WQE completes in post order, after a large WRITE before it. */
TEST(comp_local_completes_in_post_order)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 8000, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_LOCAL_INV, 0, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_BIND_MW, 0, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	softrc_eng_tx(&t.qp, 0, 100);
	EXPECT_EQ(2, t.nlocal);
	EXPECT_EQ(0, t.ncqe);		/* the WRITE is not acknowledged */
	rx_ack(&t, 1004, SOFTRC_AETH_ACK | 31, 0);
	EXPECT_EQ(0, t.ncqe);
	rx_ack(&t, 1007, SOFTRC_AETH_ACK | 31, 1);
	ASSERT_EQ(3, t.ncqe);
	EXPECT_EQ(0x100, t.cqe[0].wr_id);
	EXPECT_EQ(SOFTRC_WC_RDMA_WRITE, t.cqe[0].opcode);
	EXPECT_EQ(0x101, t.cqe[1].wr_id);
	EXPECT_EQ(SOFTRC_WC_LOCAL_INV, t.cqe[1].opcode);
	EXPECT_EQ(0, t.cqe[1].byte_len);
	EXPECT_EQ(1, t.cqe[1].slot);
	EXPECT_EQ(0x102, t.cqe[2].wr_id);
	EXPECT_EQ(SOFTRC_WC_BIND_MW, t.cqe[2].opcode);
	rx_ack(&t, 1008, SOFTRC_AETH_ACK | 31, 2);
	ASSERT_EQ(4, t.ncqe);
	EXPECT_EQ(0x103, t.cqe[3].wr_id);
	EXPECT_TRUE(softrc_eng_idle(&t.qp));
}

/* At the head, a local WQE completes at once; unsignaled, silently. */
TEST(comp_local_at_head_completes_at_once)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_LOCAL_INV, 0, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_BIND_MW, 0, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_REG_MR, 0, SIG));
	EXPECT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOCAL_INV, t.cqe[0].opcode);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_REG_MR, t.cqe[1].opcode);
	EXPECT_EQ(0x102, t.cqe[1].wr_id);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(0, t.deadline[SOFTRC_TIMER_RETRY]);
	EXPECT_TRUE(softrc_eng_idle(&t.qp));
}

/*
 * A failed local WQE stops the requester, completes in error after the
 * WQEs before it (even unsignaled), and the QP enters ERROR.
 */
TEST(comp_local_failure_in_order_then_error)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_BIND_MW, 0, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	t.local_fail = SOFTRC_WC_MW_BIND_ERR;
	softrc_eng_tx(&t.qp, 0, 100);
	EXPECT_EQ(1, t.ntx);		/* nothing after the failed bind */
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(1, t.nlocal);
	EXPECT_EQ(0, t.ncqe);
	EXPECT_FALSE(t.errored);
	rx_ack(&t, 1000, SOFTRC_AETH_ACK | 31, 1);
	ASSERT_EQ(3, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(0x101, t.cqe[1].wr_id);
	EXPECT_EQ(SOFTRC_WC_MW_BIND_ERR, t.cqe[1].status);
	EXPECT_EQ(SOFTRC_WC_BIND_MW, t.cqe[1].opcode);
	EXPECT_EQ(0x102, t.cqe[2].wr_id);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[2].status);
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(1, t.qp.cnt.local_errors);
	EXPECT_EQ(0, t.deadline[SOFTRC_TIMER_RETRY]);
}

/* Failed at the head: completes and errors the QP from the requester. */
TEST(comp_local_failure_at_head)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_LOCAL_INV, 0, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SIG));
	t.local_fail = SOFTRC_WC_LOC_QP_OP_ERR;
	softrc_eng_tx(&t.qp, 0, 100);
	EXPECT_EQ(0, t.ntx);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOC_QP_OP_ERR, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_LOCAL_INV, t.cqe[0].opcode);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[1].status);
	EXPECT_EQ(SOFTRC_QPS_ERROR, t.qp.state);
}

/* ERROR flushes a local WQE not yet run with its own opcode. */
TEST(comp_local_flushed)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_BIND_MW, 0, SIG));
	softrc_eng_set_error(&t.qp);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_BIND_MW, t.cqe[0].opcode);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[0].status);
	EXPECT_EQ(0, t.nlocal);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UC unit tests (the RC engine with attr.transport UC): the requester
 * sends UC opcodes without AckReq, completes a message once its last
 * packet is out and arms no timer; the responder never ACKs or NAKs, a
 * PSN gap drops only the message in progress (its receive WQE serves the
 * next one), a missing receive WQE or a bad R_Key drops the message, a
 * SEND too long for its WQE fails the WQE and the QP.
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "coretest.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

#define SIG SOFTRC_SEND_SIGNALED

static void uc_init(struct ct *t)
{
	struct softrc_eng_attr a;

	ct_attr_default(&a);
	a.transport = SOFTRC_OPCODE_UC;
	a.max_rd_atomic = 0;
	ct_init(t, &a);
}

TEST(uc_requester_no_ackreq_completes_at_last_packet)
{
	struct ct t;
	int i;

	uc_init(&t);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 2500, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE_WITH_IMM, 1024, SIG));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 10, 0));
	softrc_eng_tx(&t.qp, 0, 64);
	ASSERT_EQ(5, t.ntx);
	EXPECT_EQ(SOFTRC_OP_UC_SEND_FIRST, t.tx[0].opcode);
	EXPECT_EQ(SOFTRC_OP_UC_SEND_MIDDLE, t.tx[1].opcode);
	EXPECT_EQ(SOFTRC_OP_UC_SEND_LAST, t.tx[2].opcode);
	EXPECT_EQ(SOFTRC_OP_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, t.tx[3].opcode);
	EXPECT_EQ(SOFTRC_OP_UC_RDMA_WRITE_ONLY, t.tx[4].opcode);
	for (i = 0; i < 5; i++) {
		EXPECT_FALSE(t.tx[i].ackreq);
		EXPECT_EQ(1000 + i, t.tx[i].psn);
	}
	/* no ACK will come: done when sent, in order, nothing armed */
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(0x100, t.cqe[0].wr_id);
	EXPECT_EQ(2500, t.cqe[0].byte_len);
	EXPECT_EQ(SOFTRC_WC_RDMA_WRITE, t.cqe[1].opcode);
	EXPECT_EQ(0, t.qp.req.deadline[SOFTRC_TIMER_RETRY]);
	EXPECT_EQ(t.qp.req.psn_next, t.qp.req.una);
	EXPECT_TRUE(softrc_eng_idle(&t.qp));
}

/* Far more packets than max_unacked: nothing waits for an ACK. */
TEST(uc_requester_never_window_blocked)
{
	struct ct t;
	int i;

	uc_init(&t);
	for (i = 0; i < 60; i++)
		ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 4096, 0));
	for (i = 0; i < 10 && t.ntx < 240; i++)
		softrc_eng_tx(&t.qp, 0, 64);
	EXPECT_EQ(240, t.ntx);
	EXPECT_EQ(t.qp.req.tail, t.qp.req.head);
}

TEST(uc_post_refuses_read_atomic_inv)
{
	struct ct t;

	uc_init(&t);
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_RDMA_READ, 8, SIG));
	EXPECT_EQ(SOFTRC_E_INVAL,
		  ct_post(&t, SOFTRC_WR_ATOMIC_FETCH_AND_ADD, 8, SIG));
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_SEND_WITH_INV, 8, SIG));
}

/* The responder says nothing, even when asked. */
TEST(uc_responder_never_acks)
{
	struct ct t;

	uc_init(&t);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 4096));
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_ONLY, 5000, 100, true, 0);
	softrc_eng_rx_flush(&t.qp);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(100, t.cqe[0].byte_len);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(5001, t.qp.resp.epsn);
}

/*
 * A lost MIDDLE: the SEND in progress is dropped, its receive WQE takes
 * the next message; the LAST of the dropped one is dropped too.
 */
TEST(uc_gap_drops_only_the_message_in_progress)
{
	struct ct t;

	uc_init(&t);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 8192));
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 2, 8192));
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_FIRST, 5000, 1024, false, 0);
	/* 5001 (MIDDLE) lost */
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_LAST, 5002, 100, false, 0);
	EXPECT_EQ(0, t.ncqe);
	EXPECT_EQ(SOFTRC_RESP_IDLE, t.qp.resp.state);
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_ONLY_WITH_IMMEDIATE, 5003, 50, false, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(1, t.cqe[0].wr_id);	/* the dropped message's WQE */
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(50, t.cqe[0].byte_len);
	EXPECT_EQ(0, t.place[t.nplace - 1].dst.addr);	/* from offset 0 */
	EXPECT_EQ(1, t.qp.cnt.uc_drop_msgs);
	EXPECT_EQ(2, t.qp.cnt.drop_out_of_seq);	/* the gap, the LAST */
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(SOFTRC_QPS_RTS, t.qp.state);
}

/* A gap before a FIRST loses nothing but the lost message itself. */
TEST(uc_gap_between_messages)
{
	struct ct t;

	uc_init(&t);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 8192));
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_ONLY, 5007, 10, false, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(5008, t.qp.resp.epsn);
	EXPECT_EQ(0, t.qp.cnt.uc_drop_msgs);
	/* an older PSN is no duplicate on UC: taken as the new start */
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 2, 8192));
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_ONLY, 4000, 10, false, 0);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(2, t.cqe[1].wr_id);
	EXPECT_EQ(4001, t.qp.resp.epsn);
}

/* A WRITE whose MIDDLE is lost: its pin is released, the next one lands. */
TEST(uc_gap_in_write_releases_its_context)
{
	struct ct t;

	uc_init(&t);
	ct_rx_req(&t, SOFTRC_OP_UC_RDMA_WRITE_FIRST, 5000, 1024, false, 3000);
	EXPECT_EQ(1, t.pins);
	ct_rx_req(&t, SOFTRC_OP_UC_RDMA_WRITE_LAST, 5002, 952, false, 0);
	EXPECT_EQ(0, t.pins);
	EXPECT_EQ(0, t.bad_puts);
	ct_rx_req(&t, SOFTRC_OP_UC_RDMA_WRITE_ONLY, 5003, 8, false, 8);
	EXPECT_EQ(0, t.pins);
	EXPECT_EQ(2, t.nplace);	/* the FIRST's bytes, the ONLY's */
	EXPECT_EQ(1, t.qp.cnt.uc_drop_msgs);
	EXPECT_EQ(0, t.ntx);
}

/* A new FIRST while a message is open: the open one is dropped. */
TEST(uc_first_inside_message_restarts)
{
	struct ct t;

	uc_init(&t);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 8192));
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_FIRST, 5000, 1024, false, 0);
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_ONLY, 5001, 7, false, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(7, t.cqe[0].byte_len);
	EXPECT_EQ(1, t.qp.cnt.uc_drop_msgs);
}

/* No receive WQE: the message is dropped, no RNR NAK. */
TEST(uc_no_receive_wqe_drops_message)
{
	struct ct t;

	uc_init(&t);
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_FIRST, 5000, 1024, false, 0);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 8192));
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_LAST, 5001, 10, false, 0);
	EXPECT_EQ(0, t.ncqe);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(1, t.qp.cnt.drop_no_recv);
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_ONLY, 5002, 10, false, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
}

/* A bad R_Key is the sender's error: the WRITE is dropped, no NAK. */
TEST(uc_bad_rkey_drops_write)
{
	struct ct t;

	uc_init(&t);
	t.mr_fail = 1;
	ct_rx_req(&t, SOFTRC_OP_UC_RDMA_WRITE_FIRST, 5000, 1024, false, 2048);
	ct_rx_req(&t, SOFTRC_OP_UC_RDMA_WRITE_LAST, 5001, 1024, false, 0);
	t.mr_fail = 0;
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(0, t.nplace);
	EXPECT_EQ(SOFTRC_QPS_RTS, t.qp.state);
	ct_rx_req(&t, SOFTRC_OP_UC_RDMA_WRITE_ONLY, 5002, 8, false, 8);
	EXPECT_EQ(1, t.nplace);
	EXPECT_EQ(0, t.pins);
}

/* Longer than the receive WQE: that WQE fails, then the QP (no NAK). */
TEST(uc_send_too_long_fails_wqe_and_qp)
{
	struct ct t;

	uc_init(&t);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 1000));
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 2, 1000));
	ct_rx_req(&t, SOFTRC_OP_UC_SEND_ONLY, 5000, 1001, false, 0);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOC_LEN_ERR, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[1].status);
	EXPECT_EQ(SOFTRC_QPS_ERROR, t.qp.state);
	EXPECT_EQ(0, t.ntx);
}

TEST_HARNESS_MAIN

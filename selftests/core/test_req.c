// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Requester unit tests: segmentation, opcodes and headers per position,
 * AckReq cadence, PSN reservation, fence, max_rd_atomic, the unacked
 * window, go-back-N from the middle of a message, timers, post checks.
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "coretest.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

TEST(req_send_segmentation)
{
	struct ct t;
	int slot, i;

	ct_init(&t, NULL);
	slot = ct_post(&t, SOFTRC_WR_SEND, 3000, SOFTRC_SEND_SIGNALED);
	ASSERT_LE(0, slot);
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(SOFTRC_OP_SEND_FIRST, t.tx[0].opcode);
	EXPECT_EQ(SOFTRC_OP_SEND_MIDDLE, t.tx[1].opcode);
	EXPECT_EQ(SOFTRC_OP_SEND_LAST, t.tx[2].opcode);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(1000 + i, t.tx[i].psn);
		EXPECT_EQ(SOFTRC_BUF_SEND_WQE, t.txpl[i].kind);
		EXPECT_EQ(slot, t.txpl[i].slot);
		EXPECT_EQ(1024 * i, t.txpl[i].addr);
		EXPECT_EQ(0x12, t.tx[i].dqpn);
		EXPECT_EQ(0xffff, t.tx[i].pkey);
	}
	EXPECT_EQ(1024, t.tx[1].payload_len);
	EXPECT_EQ(3000 - 2048, t.tx[2].payload_len);
	EXPECT_EQ(1003, t.qp.req.psn_next);
	EXPECT_EQ(3, t.qp.cnt.tx_pkts);
	EXPECT_EQ(0, t.qp.cnt.retransmits);
}

TEST(req_send_imm_inv_opcodes)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND_WITH_IMM, 10, 0));
	t.sq[0].wr.imm = 0x11223344;
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND_WITH_INV, 10, 0));
	t.sq[1].wr.inv_rkey = 0xabc;
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND_WITH_IMM, 1500, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND_WITH_INV, 1500, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 0, 0));
	ASSERT_EQ(7, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(SOFTRC_OP_SEND_ONLY_WITH_IMMEDIATE, t.tx[0].opcode);
	EXPECT_EQ(0x11223344, t.tx[0].imm);
	EXPECT_EQ(SOFTRC_OP_SEND_ONLY_WITH_INVALIDATE, t.tx[1].opcode);
	EXPECT_EQ(0xabc, t.tx[1].inv_rkey);
	EXPECT_EQ(SOFTRC_OP_SEND_FIRST, t.tx[2].opcode);
	EXPECT_EQ(SOFTRC_OP_SEND_LAST_WITH_IMMEDIATE, t.tx[3].opcode);
	EXPECT_EQ(SOFTRC_OP_SEND_LAST_WITH_INVALIDATE, t.tx[5].opcode);
	EXPECT_EQ(SOFTRC_OP_SEND_ONLY, t.tx[6].opcode);
	EXPECT_EQ(0, t.tx[6].payload_len);
	EXPECT_EQ(SOFTRC_BUF_NONE, t.txpl[6].kind);
}

TEST(req_write_imm_segmentation)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE_WITH_IMM, 2500, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE_WITH_IMM, 5, 0));
	ASSERT_EQ(4, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_FIRST, t.tx[0].opcode);
	EXPECT_EQ(2500, t.tx[0].dma_len);
	EXPECT_EQ(0x55, t.tx[0].rkey);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_MIDDLE, t.tx[1].opcode);
	EXPECT_EQ(0, t.tx[1].dma_len);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE, t.tx[2].opcode);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE, t.tx[3].opcode);
	EXPECT_EQ(5, t.tx[3].dma_len);
}

TEST(req_ackreq_every_n_packets)
{
	struct softrc_eng_attr attr;
	struct ct t;
	int i;

	ct_attr_default(&attr);
	attr.ackreq_every = 4;
	ct_init(&t, &attr);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 10 * 1024,
			     SOFTRC_SEND_SIGNALED));
	ASSERT_EQ(10, softrc_eng_tx(&t.qp, 0, 100));
	for (i = 0; i < 10; i++)
		EXPECT_EQ(i == 3 || i == 7 || i == 9, t.tx[i].ackreq);
}

/*
 * The AckReq probe timer fires at @d and probes: the packet of @psn goes
 * again, with AckReq, and it is the QP's first probe.
 */
static void probe_fires(struct __test_metadata *_metadata, struct ct *t,
			u64 d, u32 psn)
{
	int n = t->ntx;

	softrc_eng_timer(&t->qp, SOFTRC_TIMER_ACKREQ, d);
	EXPECT_EQ(1, t->qp.cnt.ackreq_probes);
	EXPECT_EQ(1, softrc_eng_tx(&t->qp, d, 100));
	EXPECT_EQ(n + 1, t->ntx);
	EXPECT_EQ(psn, t->tx[n].psn);
	EXPECT_TRUE(t->tx[n].ackreq);
}

/*
 * The AckReq policy (softrc.rst, "ACKs"): the last packet of a signaled
 * message asks for an ACK, an unsignaled one's does not (unless every-N
 * or the window asks); ackreq_msg asks on every message, as before.
 */
TEST(req_ackreq_signaled_messages_only)
{
	struct softrc_eng_attr attr;
	struct ct t;
	int i;

	ct_init(&t, NULL);
	for (i = 0; i < 6; i++)
		ASSERT_LE(0, ct_post(&t, i % 2 ? SOFTRC_WR_RDMA_WRITE :
					   SOFTRC_WR_SEND, 10,
				     i == 3 ? SOFTRC_SEND_SIGNALED : 0));
	ASSERT_EQ(6, softrc_eng_tx(&t.qp, 0, 100));
	for (i = 0; i < 6; i++)
		EXPECT_EQ(i == 3, t.tx[i].ackreq);
	EXPECT_TRUE(t.qp.req.tail_unreq);

	ct_attr_default(&attr);
	attr.ackreq_msg = true;
	ct_init(&t, &attr);
	for (i = 0; i < 3; i++)
		ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	for (i = 0; i < 3; i++)
		EXPECT_TRUE(t.tx[i].ackreq);
	EXPECT_FALSE(t.qp.req.tail_unreq);
	EXPECT_EQ(0, t.deadline[SOFTRC_TIMER_ACKREQ]);
}

/*
 * The requester goes idle with its newest PSN sent without AckReq: the
 * probe timer is set ackreq_probe_ns (+ clock slack) later, and when it
 * fires the newest packet goes again, with AckReq, counted as a probe
 * and not as a retransmission. Its ACK retires everything, long before
 * the local ACK timeout.
 */
TEST(req_ackreq_probe_for_idle_tail)
{
	struct softrc_eng_attr attr;
	struct softrc_pkt p;
	struct ct t;
	u64 d;

	ct_attr_default(&attr);
	attr.clock_slack_ns = 7;
	ct_init(&t, &attr);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 10, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 1500, 0));
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, 100, 100));
	EXPECT_FALSE(t.tx[2].ackreq);
	d = t.deadline[SOFTRC_TIMER_ACKREQ];
	EXPECT_EQ(100 + 1000000 + 7, d);
	EXPECT_LT(d, t.deadline[SOFTRC_TIMER_RETRY]);
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_ACKREQ, d - 1);	/* early */
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, d - 1, 100));
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_ACKREQ, d);
	EXPECT_EQ(1, t.qp.cnt.ackreq_probes);
	ASSERT_EQ(1, softrc_eng_tx(&t.qp, d, 100));
	ASSERT_EQ(4, t.ntx);
	EXPECT_EQ(1002, t.tx[3].psn);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_LAST, t.tx[3].opcode);
	EXPECT_EQ(476, t.tx[3].payload_len);
	EXPECT_TRUE(t.tx[3].ackreq);
	EXPECT_EQ(0, t.qp.cnt.retransmits);
	EXPECT_FALSE(t.qp.req.tail_unreq);
	/* nothing more to ask: no second probe */
	EXPECT_EQ(0, t.qp.req.deadline[SOFTRC_TIMER_ACKREQ]);
	p = ct_ack(1002, SOFTRC_AETH_ACK | 31, 2);
	ct_rx(&t, &p, d + 1);
	EXPECT_TRUE(softrc_eng_idle(&t.qp));
	EXPECT_EQ(0, t.qp.cnt.timeouts);
}

/*
 * A busy QP is not probed: a request sent since the timer was set makes
 * it look again one interval later; an ACK that came meanwhile for the
 * newest PSN cancels the probe.
 */
TEST(req_ackreq_probe_waits_while_busy)
{
	struct softrc_pkt p;
	struct ct t;
	u64 d;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(1, softrc_eng_tx(&t.qp, 0, 100));
	d = t.deadline[SOFTRC_TIMER_ACKREQ];
	ASSERT_NE(0, d);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(1, softrc_eng_tx(&t.qp, 10, 100));
	EXPECT_EQ(d, t.deadline[SOFTRC_TIMER_ACKREQ]);	/* set once */
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_ACKREQ, d);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, d, 100));
	EXPECT_EQ(0, t.qp.cnt.ackreq_probes);
	EXPECT_EQ(d + 1000000, t.deadline[SOFTRC_TIMER_ACKREQ]);
	d = t.deadline[SOFTRC_TIMER_ACKREQ];
	probe_fires(_metadata, &t, d, 1001);

	/* an ACK for the newest PSN before the timer: no probe */
	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(1, softrc_eng_tx(&t.qp, 0, 100));
	d = t.deadline[SOFTRC_TIMER_ACKREQ];
	p = ct_ack(1000, SOFTRC_AETH_ACK | 31, 1);
	ct_rx(&t, &p, 5);
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_ACKREQ, d);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, d, 100));
	EXPECT_EQ(0, t.qp.cnt.ackreq_probes);
	EXPECT_EQ(1, t.ntx);
}

/*
 * An earlier AckReq still unanswered: its ACK is on its way (the
 * application may be waiting for that completion to post more), so the
 * probe waits; once that ACK came and the tail is still unrequested, it
 * goes.
 */
TEST(req_ackreq_probe_waits_for_an_asked_ack)
{
	struct softrc_pkt p;
	struct ct t;
	u64 d;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(2, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_TRUE(t.tx[0].ackreq);
	EXPECT_FALSE(t.tx[1].ackreq);
	d = t.deadline[SOFTRC_TIMER_ACKREQ];
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_ACKREQ, d);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, d, 100));
	EXPECT_EQ(0, t.qp.cnt.ackreq_probes);
	EXPECT_EQ(d + 1000000, t.qp.req.deadline[SOFTRC_TIMER_ACKREQ]);
	p = ct_ack(1000, SOFTRC_AETH_ACK | 31, 1);
	ct_rx(&t, &p, d + 1);
	d = t.qp.req.deadline[SOFTRC_TIMER_ACKREQ];
	probe_fires(_metadata, &t, d, 1001);
}

/*
 * A short local ACK timeout: the probe looks after half of it, and a
 * QP that stays busy without asking for an ACK is probed an interval
 * before the retry timer, so it never waits for a timeout.
 */
TEST(req_ackreq_probe_before_retry_timer)
{
	struct softrc_eng_attr attr;
	struct ct t;
	u64 d;

	ct_attr_default(&attr);
	attr.timeout = 7;	/* 524288 ns */
	ct_init(&t, &attr);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(1, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(524288, t.deadline[SOFTRC_TIMER_RETRY]);
	d = t.deadline[SOFTRC_TIMER_ACKREQ];
	EXPECT_EQ(262144, d);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(1, softrc_eng_tx(&t.qp, 200000, 100));
	/* busy, but the next look would be past the retry timer: probe */
	probe_fires(_metadata, &t, d, 1001);
	EXPECT_EQ(0, t.qp.cnt.timeouts);
}

/*
 * Sent again after a timeout, the newest packet asks for an ACK even
 * though it did not the first time: otherwise the go-back-N would end
 * waiting for the next timeout.
 */
TEST(req_retransmitted_newest_carries_ackreq)
{
	struct ct t;
	int i;

	ct_init(&t, NULL);
	for (i = 0; i < 3; i++)
		ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY,
			 t.deadline[SOFTRC_TIMER_RETRY]);
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, t.qp.req.deadline[SOFTRC_TIMER_RETRY], 100));
	for (i = 3; i < 6; i++) {
		EXPECT_EQ(1000 + i - 3, t.tx[i].psn);
		EXPECT_EQ(i == 5, t.tx[i].ackreq);
	}
	EXPECT_EQ(3, t.qp.cnt.retransmits);
	EXPECT_EQ(0, t.qp.cnt.ackreq_probes);
}

TEST(req_solicited_only_on_last)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 2000, SOFTRC_SEND_SOLICITED));
	ASSERT_EQ(2, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_FALSE(t.tx[0].se);
	EXPECT_TRUE(t.tx[1].se);
}

TEST(req_read_reserves_response_psns)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 5000, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 1, 0));
	ASSERT_EQ(2, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_REQUEST, t.tx[0].opcode);
	EXPECT_EQ(1000, t.tx[0].psn);
	EXPECT_EQ(5000, t.tx[0].dma_len);
	EXPECT_EQ(0x20000, t.tx[0].va);
	EXPECT_TRUE(t.tx[0].ackreq);
	EXPECT_EQ(0, t.tx[0].payload_len);
	EXPECT_EQ(5, t.sq[0].npkts);
	EXPECT_EQ(1005, t.tx[1].psn);
	EXPECT_EQ(1, t.qp.req.rd_out);
}

TEST(req_atomic_fields)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_ATOMIC_CMP_AND_SWP, 8, 0));
	t.sq[0].wr.compare_add = 7;
	t.sq[0].wr.swap = 9;
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_ATOMIC_FETCH_AND_ADD, 8, 0));
	t.sq[1].wr.compare_add = 3;
	ASSERT_EQ(2, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(SOFTRC_OP_COMPARE_SWAP, t.tx[0].opcode);
	EXPECT_EQ(9, t.tx[0].swap_add);
	EXPECT_EQ(7, t.tx[0].compare);
	EXPECT_EQ(SOFTRC_OP_FETCH_ADD, t.tx[1].opcode);
	EXPECT_EQ(3, t.tx[1].swap_add);
	EXPECT_EQ(8, t.tx[1].dma_len);
	EXPECT_EQ(0x20000, t.tx[1].va);
}

TEST(req_fence_waits_for_read)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 100, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SOFTRC_SEND_FENCE));
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 0, 100));
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 100, 1);
	ct_rx(&t, &p, 1);
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 1, 100));
	EXPECT_EQ(SOFTRC_OP_SEND_ONLY, t.tx[1].opcode);
	EXPECT_EQ(1001, t.tx[1].psn);
}

TEST(req_max_rd_atomic_limit)
{
	struct softrc_eng_attr attr;
	struct softrc_pkt p;
	struct ct t;

	ct_attr_default(&attr);
	attr.max_rd_atomic = 2;
	ct_init(&t, &attr);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 10, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_ATOMIC_FETCH_AND_ADD, 8, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 10, 0));
	EXPECT_EQ(2, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(2, t.qp.req.rd_out);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 10, 1);
	ct_rx(&t, &p, 1);
	EXPECT_EQ(1, t.qp.req.rd_out);
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 1, 100));
	EXPECT_EQ(1002, t.tx[2].psn);
}

TEST(req_unacked_window)
{
	struct softrc_eng_attr attr;
	struct softrc_pkt p;
	struct ct t;

	ct_attr_default(&attr);
	attr.max_unacked = 8;
	attr.ackreq_every = 4;
	ct_init(&t, &attr);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 20 * 1024, 0));
	EXPECT_EQ(8, softrc_eng_tx(&t.qp, 0, 100));
	p = ct_ack(1003, SOFTRC_AETH_ACK | 31, 0);
	ct_rx(&t, &p, 1);
	EXPECT_EQ(1004, t.qp.req.una);
	EXPECT_EQ(4, softrc_eng_tx(&t.qp, 1, 100));
	EXPECT_EQ(1011, t.tx[11].psn);
}

TEST(req_ackreq_on_last_packet_the_window_allows)
{
	struct softrc_eng_attr attr;
	struct ct t;
	int i;

	ct_attr_default(&attr);
	attr.max_unacked = 8;
	attr.ackreq_every = 32;
	ct_init(&t, &attr);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 20 * 1024, 0));
	ASSERT_EQ(8, softrc_eng_tx(&t.qp, 0, 100));
	for (i = 0; i < 8; i++)
		EXPECT_EQ(i == 7, t.tx[i].ackreq);
}

/*
 * A full SQ: no WQE can follow until an ACK frees a slot, so the end of
 * its newest WQE asks for one (a user QP's WQEs wait in its ring while
 * the engine's 64 slots are taken), and a slot short of full does not.
 */
TEST(req_ackreq_on_the_newest_wqe_of_a_full_sq)
{
	struct softrc_eng_attr attr;
	struct ct t;
	int i;

	ct_attr_default(&attr);
	attr.ackreq_every = 255;
	ct_init(&t, &attr);
	for (i = 0; i < 63; i++)
		ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(63, softrc_eng_tx(&t.qp, 0, 100));
	for (i = 0; i < 63; i++)
		EXPECT_FALSE(t.tx[i].ackreq);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 2048, 0));
	EXPECT_EQ(SOFTRC_E_FULL, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(2, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_FALSE(t.tx[63].ackreq);
	EXPECT_TRUE(t.tx[64].ackreq);
	EXPECT_FALSE(t.qp.req.tail_unreq);
}

TEST(req_go_back_from_middle_of_write)
{
	struct ct t;
	struct softrc_pkt p;
	int i;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 5 * 1024, 0));
	ASSERT_EQ(5, softrc_eng_tx(&t.qp, 0, 100));
	p = ct_ack(1002, SOFTRC_AETH_NAK | SOFTRC_NAK_PSN_SEQ_ERR, 0);
	ct_rx(&t, &p, 1);
	EXPECT_EQ(1002, t.qp.req.una);
	EXPECT_EQ(3, softrc_eng_tx(&t.qp, 1, 100));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(1002 + i, t.tx[5 + i].psn);
		EXPECT_EQ((2 + i) * 1024, t.txpl[5 + i].addr);
		EXPECT_EQ(t.tx[2 + i].opcode, t.tx[5 + i].opcode);
	}
	EXPECT_EQ(3, t.qp.cnt.retransmits);
	EXPECT_EQ(6, t.qp.req.retry_left);
}

TEST(req_read_resumes_mid_response)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 4000, SOFTRC_SEND_SIGNALED));
	ASSERT_EQ(1, softrc_eng_tx(&t.qp, 0, 100));
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, 1000, 1024, 1);
	ct_rx(&t, &p, 1);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_MIDDLE, 1001, 1024, 1);
	ct_rx(&t, &p, 1);
	/* 1002 lost: 1003 arrives out of order: resend READ from 1002 */
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_LAST, 1003, 928, 1);
	ct_rx(&t, &p, 1);
	EXPECT_EQ(1, t.qp.cnt.implied_naks);
	ASSERT_EQ(1, softrc_eng_tx(&t.qp, 1, 100));
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_REQUEST, t.tx[1].opcode);
	EXPECT_EQ(1002, t.tx[1].psn);
	EXPECT_EQ(0x20000 + 2048, t.tx[1].va);
	EXPECT_EQ(4000 - 2048, t.tx[1].dma_len);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, 1002, 1024, 1);
	ct_rx(&t, &p, 2);
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_LAST, 1003, 928, 1);
	ct_rx(&t, &p, 2);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(4000, t.cqe[0].byte_len);
	EXPECT_EQ(4, t.nplace);
	EXPECT_EQ(3 * 1024, t.place[3].dst.addr);
}

TEST(req_retry_timer_armed_and_disarmed)
{
	struct softrc_eng_attr attr;
	struct softrc_pkt p;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	softrc_eng_tx(&t.qp, 100, 10);
	EXPECT_EQ(100 + (4096ull << 10), t.deadline[SOFTRC_TIMER_RETRY]);
	p = ct_ack(1000, SOFTRC_AETH_ACK | 31, 1);
	ct_rx(&t, &p, 200);
	EXPECT_EQ(0, t.deadline[SOFTRC_TIMER_RETRY]);
	EXPECT_TRUE(softrc_eng_idle(&t.qp));

	ct_attr_default(&attr);
	attr.timeout = 0;		/* infinite: never armed */
	ct_init(&t, &attr);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	softrc_eng_tx(&t.qp, 100, 10);
	EXPECT_EQ(0, t.deadline[SOFTRC_TIMER_RETRY]);
}

TEST(req_timer_early_or_stale_fire)
{
	struct ct t;
	u64 d;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	softrc_eng_tx(&t.qp, 0, 10);
	d = t.deadline[SOFTRC_TIMER_RETRY];
	t.timer_calls = 0;
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, d - 1);	/* early */
	EXPECT_EQ(1, t.timer_calls);
	EXPECT_EQ(0, t.qp.cnt.timeouts);
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RNR, d);	/* not armed */
	EXPECT_EQ(0, t.qp.cnt.timeouts);
	EXPECT_EQ(0, t.nretx);
	/* neither is an expiry the glue reports (tracepoint) */
	EXPECT_EQ(0, t.nexpired[SOFTRC_TIMER_RETRY]);
	EXPECT_EQ(0, t.nexpired[SOFTRC_TIMER_RNR]);
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, d);
	EXPECT_EQ(1, t.qp.cnt.timeouts);
	EXPECT_EQ(1, t.nexpired[SOFTRC_TIMER_RETRY]);
	EXPECT_EQ(0, t.nexpired[SOFTRC_TIMER_RNR]);
	/* the same expiry again (stale: the deadline moved on) */
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, d);
	EXPECT_EQ(1, t.nexpired[SOFTRC_TIMER_RETRY]);
	/* the go-back is reported once, from the oldest unacked PSN */
	EXPECT_EQ(1, t.nretx);
	EXPECT_EQ(1000, t.retx_psn[0]);
	EXPECT_EQ(SOFTRC_RETRY_timeout, t.retx_why[0]);
}

/*
 * Every deadline includes the glue clock's slack: the "now" passed in may
 * lag real time by that much, and no timer may expire before its IBTA
 * minimum (ACK timeout 4.096 us * 2^t, RNR table 45) in real time.
 */
TEST(req_deadlines_include_clock_slack)
{
	struct softrc_eng_attr attr;
	struct softrc_pkt p;
	struct ct t;
	u64 slack = 4000000, d;

	ct_attr_default(&attr);
	attr.clock_slack_ns = slack;
	ct_init(&t, &attr);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	softrc_eng_tx(&t.qp, 100, 1);
	EXPECT_EQ(100 + (4096ull << 10) + slack, t.deadline[SOFTRC_TIMER_RETRY]);
	/* the timeout re-arms from the expiry time */
	d = t.deadline[SOFTRC_TIMER_RETRY];
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, d);
	EXPECT_EQ(1, t.qp.cnt.timeouts);
	EXPECT_EQ(d + (4096ull << 10) + slack, t.deadline[SOFTRC_TIMER_RETRY]);
	softrc_eng_tx(&t.qp, d, 10);
	/* progress re-arms */
	p = ct_ack(1000, SOFTRC_AETH_ACK | 31, 1);
	ct_rx(&t, &p, d + 7);
	EXPECT_EQ(d + 7 + (4096ull << 10) + slack, t.deadline[SOFTRC_TIMER_RETRY]);
	/* RNR back-off, then the retry timer armed when it ends */
	p = ct_ack(1001, SOFTRC_AETH_RNR_NAK | 1, 1);
	ct_rx(&t, &p, d + 9);
	EXPECT_EQ(d + 9 + 10000 + slack, t.deadline[SOFTRC_TIMER_RNR]);
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RNR, d + 9 + 10000 + slack);
	EXPECT_EQ(d + 9 + 10000 + slack + (4096ull << 10) + slack,
		  t.deadline[SOFTRC_TIMER_RETRY]);
	/* a sequence-error NAK re-arms too */
	softrc_eng_tx(&t.qp, d + 20000 + slack, 10);
	p = ct_ack(1001, SOFTRC_AETH_NAK | SOFTRC_NAK_PSN_SEQ_ERR, 1);
	ct_rx(&t, &p, 3 * d);
	EXPECT_EQ(3 * d + (4096ull << 10) + slack, t.deadline[SOFTRC_TIMER_RETRY]);
}

/*
 * the span [una, psn_next) stays below 2^23. One READ reserves at
 * most SOFTRC_READ_MAX_PSNS = 2^22 PSNs (a longer one is refused at
 * post: EINVAL). Two such READs at PMTU 256 behind an unacknowledged SEND
 * would reach the window edge (the SEND's retransmission would be
 * "future" at the responder), so the second waits (max_unacked <= 2^22
 * and the span check both hold it): the span stays below 2^23, also
 * after a timeout.
 */
TEST(req_window_span_below_2_23)
{
	const u32 max_len = SOFTRC_READ_MAX_PSNS * 256;
	struct softrc_eng_attr attr;
	struct softrc_pkt p;
	struct ct t;

	ct_attr_default(&attr);
	attr.pmtu = 256;
	attr.sq_psn = 5000;
	attr.max_rd_atomic = 4;
	ct_init(&t, &attr);
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_RDMA_READ, 1u << 31, 0));
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_RDMA_READ, max_len + 1, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, max_len,
			     SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, max_len - 256,
			     SOFTRC_SEND_SIGNALED));
	/* SEND + first READ fit (1 + 2^22 PSNs); the second READ would not */
	EXPECT_EQ(2, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(5001 + SOFTRC_READ_MAX_PSNS, t.qp.req.psn_next);
	EXPECT_GT(SOFTRC_PSN_WINDOW,
		  (t.qp.req.psn_next - t.qp.req.una) & SOFTRC_PSN_MASK);
	/*
	 * The SEND's ACK frees one PSN: 2^22 PSNs are still outstanding,
	 * the most max_unacked allows, so the second READ still waits;
	 * with it the span could reach the window edge.
	 */
	p = ct_ack(5000, SOFTRC_AETH_ACK | 31, 1);
	ct_rx(&t, &p, 1);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 2, 100));
	EXPECT_EQ(2, t.ntx);
	/* a timeout resends from the first READ: the window still holds */
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, 1ull << 40);
	EXPECT_LE(1, softrc_eng_tx(&t.qp, 1ull << 40, 100));
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_REQUEST, t.tx[2].opcode);
	EXPECT_EQ(5001, t.tx[2].psn);
	EXPECT_GT(SOFTRC_PSN_WINDOW,
		  (t.qp.req.psn_next - t.qp.req.una) & SOFTRC_PSN_MASK);
}

/*
 * A credit probe (the first packet of a SEND the peer has no credit for)
 * asks for an ACK, and so does its retransmission after an RNR NAK:
 * nothing else is sent until it is acknowledged, so without AckReq the
 * requester waited for a timeout (with retry_cnt 0: RETRY_EXC_ERR).
 */
TEST(req_credit_probe_resent_with_ackreq)
{
	struct softrc_pkt p;
	struct ct t;
	u64 d;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SOFTRC_SEND_SIGNALED));
	softrc_eng_tx(&t.qp, 0, 10);
	p = ct_ack(1000, SOFTRC_AETH_ACK | 0, 1);	/* no credits left */
	ct_rx(&t, &p, 1);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 2048, 0));
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 2, 10));
	ASSERT_EQ(2, t.ntx);
	EXPECT_EQ(SOFTRC_OP_SEND_FIRST, t.tx[1].opcode);
	EXPECT_TRUE(t.tx[1].ackreq);
	EXPECT_EQ(1, t.qp.cnt.credit_probes);
	p = ct_ack(1001, SOFTRC_AETH_RNR_NAK | 1, 1);
	ct_rx(&t, &p, 3);
	d = t.deadline[SOFTRC_TIMER_RNR];
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RNR, d);
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, d, 10));
	ASSERT_EQ(3, t.ntx);
	EXPECT_EQ(1001, t.tx[2].psn);
	EXPECT_EQ(SOFTRC_OP_SEND_FIRST, t.tx[2].opcode);
	EXPECT_TRUE(t.tx[2].ackreq);
}

/*
 * Out of credits with the newest PSN sent without AckReq: the ACK that
 * would bring credits is asked for at once (an AckReq probe), not after
 * the probe timer.
 */
TEST(req_credit_stall_probes_at_once)
{
	struct softrc_pkt p;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(2, softrc_eng_tx(&t.qp, 0, 10));
	EXPECT_TRUE(t.tx[0].ackreq);
	EXPECT_FALSE(t.tx[1].ackreq);
	p = ct_ack(1000, SOFTRC_AETH_ACK | 0, 1);	/* no credits left */
	ct_rx(&t, &p, 1);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	softrc_eng_tx(&t.qp, 2, 10);
	ASSERT_EQ(3, t.ntx);
	EXPECT_EQ(1001, t.tx[2].psn);
	EXPECT_TRUE(t.tx[2].ackreq);
	EXPECT_EQ(1, t.qp.cnt.ackreq_probes);
	EXPECT_EQ(0, t.qp.cnt.retransmits);
	/* asked once: the next try waits for the ACK */
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 3, 10));
	EXPECT_EQ(1, t.qp.cnt.ackreq_probes);
}

TEST(req_post_checks)
{
	struct softrc_eng_attr attr;
	struct softrc_eng_storage st;
	struct ct t;
	int i;

	ct_init(&t, NULL);
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, 10, 0, 0));	/* LSO */
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_LOCAL_INV, 10, 0));
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_BIND_MW, 1, 0));
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_REG_MR, 1, 0));
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_ATOMIC_FETCH_AND_ADD, 4, 0));
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_SEND, 0x80000001u, 0));
	for (i = 0; i < 64; i++)
		ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 1, 0));
	EXPECT_EQ(SOFTRC_E_FULL, ct_post(&t, SOFTRC_WR_SEND, 1, 0));
	for (i = 0; i < 64; i++)
		ASSERT_LE(0, softrc_eng_post_recv(&t.qp, i, 1));
	EXPECT_EQ(SOFTRC_E_FULL, softrc_eng_post_recv(&t.qp, 99, 1));
	softrc_eng_set_error(&t.qp);
	EXPECT_EQ(SOFTRC_E_STATE, ct_post(&t, SOFTRC_WR_SEND, 1, 0));
	EXPECT_EQ(SOFTRC_E_STATE, softrc_eng_post_recv(&t.qp, 1, 1));

	ct_attr_default(&attr);
	attr.max_rd_atomic = 0;
	ct_init(&t, &attr);
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_RDMA_READ, 1, 0));
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_ATOMIC_CMP_AND_SWP, 8, 0));

	st = (struct softrc_eng_storage){
		.sq = t.sq, .sq_depth = 64, .rq = t.rq, .rq_depth = 64,
	};
	attr.pmtu = 1000;
	EXPECT_EQ(SOFTRC_E_INVAL,
		  softrc_eng_init(&t.qp, t.qp.ops, &t, &attr, &st));
	attr.pmtu = 4096;
	st.sq_depth = 48;
	EXPECT_EQ(SOFTRC_E_INVAL,
		  softrc_eng_init(&t.qp, t.qp.ops, &t, &attr, &st));
}

/*
 * softrc_eng_init() again (the glue's RESET) starts the engine afresh
 * but keeps the counters: per-QP and port statistics never go backwards.
 */
TEST(req_reinit_keeps_counters)
{
	struct softrc_eng_storage st;
	struct softrc_eng_attr attr;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 3000, 0));
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	ct_attr_default(&attr);
	st = (struct softrc_eng_storage){
		.sq = t.sq, .sq_depth = 64, .rq = t.rq, .rq_depth = 64,
		.res = t.res, .nres = 4,
	};
	ASSERT_EQ(0, softrc_eng_init(&t.qp, t.qp.ops, &t, &attr, &st));
	EXPECT_EQ(3, t.qp.cnt.tx_pkts);
	EXPECT_EQ(attr.sq_psn, t.qp.req.psn_next);
	EXPECT_EQ(t.qp.req.head, t.qp.req.tail);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 0, 100));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_EQ(1, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(4, t.qp.cnt.tx_pkts);
}

/* A local WQE runs when the requester reaches it, takes no PSN or SSN. */
TEST(req_local_runs_in_sq_order_without_psn)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 2000, 0));
	ASSERT_EQ(1, ct_post(&t, SOFTRC_WR_LOCAL_INV, 0, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	EXPECT_EQ(2, t.sq[2].ssn);	/* the SEND is message 2 */
	EXPECT_EQ(0, t.nlocal);
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 0, 1));	/* WRITE FIRST */
	EXPECT_EQ(0, t.nlocal);
	softrc_eng_tx(&t.qp, 0, 100);
	ASSERT_EQ(1, t.nlocal);
	EXPECT_EQ(1, t.local_slot[0]);
	ASSERT_EQ(3, t.ntx);
	EXPECT_EQ(SOFTRC_OP_SEND_ONLY, t.tx[2].opcode);
	EXPECT_EQ(1002, t.tx[2].psn);
	EXPECT_EQ(1003, t.qp.req.psn_next);
	EXPECT_EQ(1, t.qp.cnt.local_ops);
}

TEST(req_local_fence_waits_for_read)
{
	struct softrc_pkt p;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 100, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_BIND_MW, 0, SOFTRC_SEND_FENCE));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_LOCAL_INV, 0, 0));
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(0, t.nlocal);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 0, 100));
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 100, 1);
	ct_rx(&t, &p, 1);
	EXPECT_EQ(0, t.nlocal);		/* runs only from the requester */
	EXPECT_EQ(2, softrc_eng_tx(&t.qp, 1, 100));
	ASSERT_EQ(2, t.nlocal);
	EXPECT_EQ(1, t.local_slot[0]);
	EXPECT_EQ(2, t.local_slot[1]);
	EXPECT_TRUE(softrc_eng_idle(&t.qp));
}

/*
 * A WR the glue refused (a malformed user WQE) fails in SQ order: the
 * WRITE before it is sent and completes SUCCESS once acknowledged, then
 * the refused one completes with its status and the QP enters ERROR,
 * flushing the SEND after it. It never flushes what came before it.
 */
TEST(req_refused_wr_fails_in_sq_order)
{
	struct softrc_pkt p;
	struct ct t;

	ct_init(&t, NULL);
	t.local_fail = SOFTRC_WC_LOC_PROT_ERR;
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 100, SOFTRC_SEND_SIGNALED));
	ASSERT_EQ(1, ct_post(&t, SOFTRC_WR_REFUSED, 0, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SOFTRC_SEND_SIGNALED));
	EXPECT_EQ(0, t.sq[1].ssn);	/* no message: no SSN */
	softrc_eng_tx(&t.qp, 0, 100);
	ASSERT_EQ(1, t.ntx);		/* the WRITE; nothing after the refused */
	ASSERT_EQ(1, t.nlocal);
	EXPECT_EQ(0, t.ncqe);		/* the WRITE is still owed its ACK */
	EXPECT_NE(SOFTRC_QPS_ERROR, t.qp.state);
	p = ct_ack(1000, SOFTRC_AETH_ACK | 31, 1);
	ct_rx(&t, &p, 1);
	ASSERT_EQ(3, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_RDMA_WRITE, t.cqe[0].opcode);
	EXPECT_EQ(SOFTRC_WC_LOC_PROT_ERR, t.cqe[1].status);
	EXPECT_EQ(1, t.cqe[1].slot);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[2].status);
	EXPECT_EQ(SOFTRC_QPS_ERROR, t.qp.state);
	EXPECT_EQ(1, t.qp.cnt.local_errors);
}

/* Go-back-N resends the messages around a local WQE, never the local one. */
TEST(req_go_back_skips_local)
{
	struct ct t;
	u64 d;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_LOCAL_INV, 0, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	softrc_eng_tx(&t.qp, 0, 100);
	ASSERT_EQ(2, t.ntx);
	d = t.deadline[SOFTRC_TIMER_RETRY];
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, d);
	softrc_eng_tx(&t.qp, d, 100);
	ASSERT_EQ(4, t.ntx);
	EXPECT_EQ(1000, t.tx[2].psn);
	EXPECT_EQ(1001, t.tx[3].psn);
	EXPECT_EQ(1, t.nlocal);
	EXPECT_EQ(2, t.qp.cnt.retransmits);
}

/*
 * SQ drain (SQD): the message already started is sent to its end and
 * retried, nothing new starts (not even a local WQE), the SQ reads as
 * drained once the started WQE has completed, and leaving the drain
 * sends what waited.
 */
TEST(req_sq_drain_finishes_started_starts_nothing)
{
	struct softrc_pkt p;
	struct ct t;
	u64 d;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 3 * 1024,
			     SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_LOCAL_INV, 0, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	EXPECT_FALSE(softrc_eng_sq_drained(&t.qp));	/* not draining */
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 0, 1));	/* WRITE FIRST */
	softrc_eng_sq_drain(&t.qp, true);
	EXPECT_EQ(2, softrc_eng_tx(&t.qp, 0, 100));	/* MIDDLE, LAST */
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_LAST, t.tx[2].opcode);
	EXPECT_EQ(0, t.nlocal);
	EXPECT_FALSE(softrc_eng_sq_drained(&t.qp));
	/* a lost packet is still retried while draining */
	d = t.deadline[SOFTRC_TIMER_RETRY];
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, d);
	EXPECT_EQ(3, softrc_eng_tx(&t.qp, d, 100));
	EXPECT_EQ(1000, t.tx[3].psn);
	EXPECT_EQ(3, t.qp.cnt.retransmits);
	p = ct_ack(1002, SOFTRC_AETH_ACK | 31, 1);
	ct_rx(&t, &p, d);
	EXPECT_EQ(1, t.ncqe);
	EXPECT_TRUE(softrc_eng_sq_drained(&t.qp));
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, d, 100));
	EXPECT_EQ(0, t.nlocal);
	softrc_eng_sq_drain(&t.qp, false);
	EXPECT_FALSE(softrc_eng_sq_drained(&t.qp));
	/* the LOCAL_INV runs (one step), then the SEND */
	EXPECT_EQ(2, softrc_eng_tx(&t.qp, d, 100));
	EXPECT_EQ(1, t.nlocal);
	EXPECT_EQ(SOFTRC_OP_SEND_ONLY, t.tx[6].opcode);
	EXPECT_EQ(1003, t.tx[6].psn);
}

/* Draining an empty SQ: drained at once. */
TEST(req_sq_drain_empty)
{
	struct ct t;

	ct_init(&t, NULL);
	softrc_eng_sq_drain(&t.qp, true);
	EXPECT_TRUE(softrc_eng_sq_drained(&t.qp));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	EXPECT_TRUE(softrc_eng_sq_drained(&t.qp));	/* posted, not started */
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 0, 100));
}

TEST_HARNESS_MAIN

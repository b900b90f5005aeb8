// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory keys between check and use (security review F1/F6, protocol
 * review finding 7): the pins ops->mr_check hands out are held by the
 * open WRITE and by READ resources (replays included), dropped exactly
 * once (slot reuse, LAST, ERROR, reset); a placement, atomic or payload
 * failure fails the message (NAK, error completion), never ACK/SUCCESS.
 *
 * The test glue (lib/coretest.c) counts outstanding pins and refuses
 * access through a pin whose memory is "gone" (ct_pins_gone()).
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "coretest.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

static bool sent_nak(const struct ct *t, u8 code, u32 psn)
{
	int i;

	for (i = 0; i < t->ntx && i < CT_MAX; i++)
		if (t->tx[i].opcode == SOFTRC_OP_ACKNOWLEDGE &&
		    t->tx[i].syndrome == (SOFTRC_AETH_NAK | code) &&
		    t->tx[i].psn == psn)
			return true;
	return false;
}

static int sent_acks(const struct ct *t)
{
	int i, n = 0;

	for (i = 0; i < t->ntx && i < CT_MAX; i++)
		n += t->tx[i].opcode == SOFTRC_OP_ACKNOWLEDGE &&
		     softrc_syndrome_type(t->tx[i].syndrome) == SOFTRC_AETH_ACK;
	return n;
}

static int read_resps(const struct ct *t)
{
	int i, n = 0;

	for (i = 0; i < t->ntx && i < CT_MAX; i++)
		n += softrc_pkt_has(&t->tx[i], SOFTRC_OPF_READ) &&
		     !softrc_pkt_has(&t->tx[i], SOFTRC_OPF_REQ);
	return n;
}

static bool any_success(const struct ct *t)
{
	int i;

	for (i = 0; i < t->ncqe && i < CT_MAX; i++)
		if (t->cqe[i].status == SOFTRC_WC_SUCCESS)
			return true;
	return false;
}

/* The glue's books: every pin put once, none twice. */
#define EXPECT_PINS_BALANCED(t) do {		\
	EXPECT_EQ(0, (t)->pins);		\
	EXPECT_EQ(0, (t)->bad_puts);		\
} while (0)

TEST(keys_send_place_failure_naks_and_fails_recv)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 42, 4096));
	t.place_fail = true;	/* the receive buffer's MR was deregistered */
	ct_rx_req(&t, SOFTRC_OP_SEND_ONLY, 5000, 100, true, 0);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_TRUE(sent_nak(&t, SOFTRC_NAK_REMOTE_OP_ERR, 5000));
	EXPECT_EQ(0, sent_acks(&t));
	ASSERT_LE(1, t.ncqe);
	EXPECT_EQ(42, t.cqe[0].wr_id);
	EXPECT_EQ(SOFTRC_WC_LOC_PROT_ERR, t.cqe[0].status);
	EXPECT_FALSE(any_success(&t));
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(1, t.qp.cnt.mem_errors);
	EXPECT_EQ(0, t.qp.resp.msn);
}

TEST(keys_send_middle_place_failure_not_completed)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 42, 4096));
	ct_rx_req(&t, SOFTRC_OP_SEND_FIRST, 5000, 1024, false, 0);
	t.place_fail = true;
	ct_rx_req(&t, SOFTRC_OP_SEND_LAST, 5001, 10, true, 0);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_TRUE(sent_nak(&t, SOFTRC_NAK_REMOTE_OP_ERR, 5001));
	EXPECT_EQ(0, sent_acks(&t));
	EXPECT_FALSE(any_success(&t));
	EXPECT_TRUE(t.errored);
}

TEST(keys_write_one_pin_per_message_released_at_last)
{
	struct ct t;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 3000);
	EXPECT_EQ(1, t.pins);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_MIDDLE, 5001, 1024, false, 0);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_LAST, 5002, 952, true, 0);
	EXPECT_EQ(1, t.npin);		/* checked once, not per packet */
	ASSERT_EQ(3, t.nplace);
	EXPECT_EQ(&t.pin[0], t.place[1].dst.pin);
	EXPECT_EQ(&t.pin[0], t.place[2].dst.pin);
	EXPECT_PINS_BALANCED(&t);
	EXPECT_FALSE(t.errored);
}

TEST(keys_write_gone_mid_message_naks_remote_access)
{
	struct ct t;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 1024, false, 3000);
	ct_pins_gone(&t);	/* dereg_mr / MW invalidate between packets */
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_MIDDLE, 5001, 1024, false, 0);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_LAST, 5002, 952, true, 0);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_TRUE(sent_nak(&t, SOFTRC_NAK_REMOTE_ACCESS, 5001));
	EXPECT_EQ(0, sent_acks(&t));
	EXPECT_EQ(1, t.nplace);		/* only the FIRST, before it went */
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(1, t.qp.cnt.mem_errors);
	EXPECT_PINS_BALANCED(&t);
}

TEST(keys_write_only_rnr_releases_pin)
{
	struct ct t;

	ct_init(&t, NULL);
	/* WRITE_ONLY_WITH_IMM without a receive WQE: RNR, checked again */
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 5000, 8, true, 8);
	EXPECT_EQ(1, t.qp.cnt.rnr_naks_sent);
	EXPECT_PINS_BALANCED(&t);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 64));
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 5000, 8, true, 8);
	EXPECT_EQ(2, t.npin);
	EXPECT_PINS_BALANCED(&t);
}

TEST(keys_atomic_failure_naks_remote_access)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	t.atomic_fail = true;
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5000, 0, true);
	ct_rx(&t, &p, 0);
	EXPECT_TRUE(sent_nak(&t, SOFTRC_NAK_REMOTE_ACCESS, 5000));
	EXPECT_EQ(0, ct_count_tx(&t, SOFTRC_OP_ATOMIC_ACKNOWLEDGE));
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(1, t.qp.cnt.mem_errors);
	EXPECT_PINS_BALANCED(&t);
}

TEST(keys_atomic_pin_only_while_executing)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5000, 0, true);
	p.swap_add = 3;
	ct_rx(&t, &p, 0);
	EXPECT_EQ(1, ct_count_tx(&t, SOFTRC_OP_ATOMIC_ACKNOWLEDGE));
	EXPECT_EQ(3, t.mem);
	EXPECT_PINS_BALANCED(&t);
	/* a replay sends the saved value; no memory access, no pin */
	ct_pins_gone(&t);
	ct_rx(&t, &p, 0);
	EXPECT_EQ(2, ct_count_tx(&t, SOFTRC_OP_ATOMIC_ACKNOWLEDGE));
	EXPECT_EQ(1, t.npin);
	EXPECT_FALSE(t.errored);
}

TEST(keys_read_pins_held_until_slot_reused)
{
	struct ct t;
	int i;

	ct_init(&t, NULL);		/* 4 responder resources */
	for (i = 0; i < 4; i++)
		ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5000 + i, 0, true, 64);
	EXPECT_EQ(4, t.pins);
	ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5004, 0, true, 64);
	EXPECT_EQ(5, t.npin);
	EXPECT_EQ(4, t.pins);		/* the oldest slot's pin went */
	EXPECT_FALSE(t.pin[0].held);
	EXPECT_EQ(5, read_resps(&t));
	EXPECT_EQ(&t.pin[4], t.txpl[4].pin);
	softrc_eng_set_error(&t.qp);
	EXPECT_PINS_BALANCED(&t);
	softrc_eng_release(&t.qp);	/* reset after ERROR: nothing twice */
	EXPECT_PINS_BALANCED(&t);
}

TEST(keys_reset_releases_every_pin)
{
	struct ct t;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5000, 0, true, 64);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_FIRST, 5001, 1024, false, 4096);
	EXPECT_EQ(2, t.pins);
	softrc_eng_release(&t.qp);	/* RTS -> RESET, or destroy */
	EXPECT_PINS_BALANCED(&t);
	softrc_eng_release(&t.qp);
	EXPECT_PINS_BALANCED(&t);
}

TEST(keys_dup_read_of_invalidated_source_refused)
{
	struct ct t;
	int before;

	ct_init(&t, NULL);
	ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5000, 0, true, 2048);
	EXPECT_EQ(2, read_resps(&t));
	/* the MR is deregistered (or its MW invalidated), then re-registered */
	ct_pins_gone(&t);
	before = t.ntx;
	ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5000, 0, true, 2048);
	EXPECT_EQ(2, read_resps(&t));	/* no replay, zeros or otherwise */
	EXPECT_LT(before, t.ntx);
	EXPECT_TRUE(sent_nak(&t, SOFTRC_NAK_REMOTE_ACCESS, 5000));
	EXPECT_EQ(1, t.qp.cnt.dup_reads);
	EXPECT_EQ(1, t.qp.cnt.mem_errors);
	EXPECT_TRUE(t.errored);
	EXPECT_PINS_BALANCED(&t);
}

TEST(keys_paced_read_source_gone_midway_naks)
{
	struct ct t;

	ct_init_pmtu(&t, 256);
	ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5000, 0, true, 40 * 256);
	EXPECT_EQ(SOFTRC_RESP_INLINE, read_resps(&t));
	ct_pins_gone(&t);
	softrc_eng_tx(&t.qp, 0, 64);
	EXPECT_EQ(SOFTRC_RESP_INLINE, read_resps(&t));
	EXPECT_TRUE(sent_nak(&t, SOFTRC_NAK_REMOTE_ACCESS,
			     5000 + SOFTRC_RESP_INLINE));
	EXPECT_TRUE(t.errored);
	EXPECT_FALSE(softrc_eng_tx_pending(&t.qp));
	EXPECT_PINS_BALANCED(&t);
}

TEST(keys_read_response_place_failure_fails_wqe)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 100, SOFTRC_SEND_SIGNALED));
	softrc_eng_tx(&t.qp, 0, 16);
	ASSERT_EQ(1, t.ntx);
	t.place_fail = true;	/* the local SGE's MR went away */
	p = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 100, 1);
	ct_rx(&t, &p, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOC_PROT_ERR, t.cqe[0].status);
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(1, t.qp.cnt.mem_errors);
}

TEST(keys_atomic_result_failure_fails_wqe)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_ATOMIC_FETCH_AND_ADD, 8,
			     SOFTRC_SEND_SIGNALED));
	softrc_eng_tx(&t.qp, 0, 16);
	t.result_fail = true;
	p = ct_resp(SOFTRC_OP_ATOMIC_ACKNOWLEDGE, 1000, 0, 1);
	p.orig = 7;
	ct_rx(&t, &p, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOC_PROT_ERR, t.cqe[0].status);
	EXPECT_TRUE(t.errored);
}

TEST(keys_send_gather_failure_fails_wqe)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 3000, 0));
	t.gather_fail = true;	/* the SGE's MR went away before transmit */
	softrc_eng_tx(&t.qp, 0, 16);
	EXPECT_EQ(0, t.ntx);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOC_PROT_ERR, t.cqe[0].status);
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(1, t.qp.cnt.mem_errors);
}

TEST_HARNESS_MAIN

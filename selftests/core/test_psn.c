// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PSN arithmetic and the protocol's encoded fields: 24-bit modulo
 * helpers with the 2^23 window, ACK timeout, RNR timer and credit
 * encodings, PSNs per message.
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "internal.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

TEST(psn_add_wraps_at_2_24)
{
	EXPECT_EQ(0, softrc_psn_add(0xffffff, 1));
	EXPECT_EQ(0x000054, softrc_psn_add(0xfffff0, 100));
	EXPECT_EQ(0xffffff, softrc_psn_add(0, SOFTRC_PSN_MASK));
	EXPECT_EQ(5, softrc_psn_add(0x1000005, 0));
}

TEST(psn_diff_is_signed_24_bit)
{
	EXPECT_EQ(1, softrc_psn_diff(0, 0xffffff));
	EXPECT_EQ(-1, softrc_psn_diff(0xffffff, 0));
	EXPECT_EQ(-(1 << 23), softrc_psn_diff(0x800000, 0));
	EXPECT_EQ((1 << 23) - 1, softrc_psn_diff(0x7fffff, 0));
	EXPECT_EQ(0, softrc_psn_diff(123, 123));
}

TEST(psn_compare_across_wrap)
{
	EXPECT_TRUE(softrc_psn_lt(0xfffffe, 0x000001));
	EXPECT_TRUE(softrc_psn_gt(0x000001, 0xfffffe));
	EXPECT_TRUE(softrc_psn_le(7, 7));
	EXPECT_TRUE(softrc_psn_ge(7, 7));
	EXPECT_FALSE(softrc_psn_lt(7, 7));
	EXPECT_FALSE(softrc_psn_gt(0xfffffe, 0x000001));
}

TEST(psn_classify_three_way)
{
	u32 e = 0x000010;

	EXPECT_EQ(SOFTRC_PSN_EXPECTED, softrc_psn_classify(e, e));
	EXPECT_EQ(SOFTRC_PSN_DUPLICATE, softrc_psn_classify(e - 1, e));
	EXPECT_EQ(SOFTRC_PSN_DUPLICATE,
		  softrc_psn_classify(softrc_psn_add(e, SOFTRC_PSN_MASK + 1 -
						     SOFTRC_PSN_WINDOW), e));
	EXPECT_EQ(SOFTRC_PSN_FUTURE, softrc_psn_classify(e + 1, e));
	EXPECT_EQ(SOFTRC_PSN_FUTURE,
		  softrc_psn_classify(softrc_psn_add(e, SOFTRC_PSN_WINDOW - 1), e));
	/* below the wrap: 0xfffff0 is a duplicate of expected 0x10 */
	EXPECT_EQ(SOFTRC_PSN_DUPLICATE, softrc_psn_classify(0xfffff0, e));
}

TEST(psn_in_range_across_wrap)
{
	EXPECT_TRUE(softrc_psn_in(0xffffff, 0xfffffe, 4));
	EXPECT_TRUE(softrc_psn_in(0x000001, 0xfffffe, 4));
	EXPECT_FALSE(softrc_psn_in(0x000002, 0xfffffe, 4));
	EXPECT_FALSE(softrc_psn_in(0xfffffd, 0xfffffe, 4));
}

TEST(ack_timeout_encoding)
{
	EXPECT_EQ(0, softrc_eng_ack_timeout_ns(0));		/* infinite */
	EXPECT_EQ(8192, softrc_eng_ack_timeout_ns(1));
	EXPECT_EQ(4096ull << 14, softrc_eng_ack_timeout_ns(14));	/* ~67 ms */
	EXPECT_EQ(4096ull << 31, softrc_eng_ack_timeout_ns(31));
}

TEST(rnr_timer_encoding_table)
{
	EXPECT_EQ(655360000ull, softrc_eng_rnr_timer_ns(0));
	EXPECT_EQ(10000, softrc_eng_rnr_timer_ns(1));
	EXPECT_EQ(60000, softrc_eng_rnr_timer_ns(5));
	EXPECT_EQ(1280000, softrc_eng_rnr_timer_ns(14));
	EXPECT_EQ(163840000ull, softrc_eng_rnr_timer_ns(28));
	EXPECT_EQ(491520000ull, softrc_eng_rnr_timer_ns(31));
}

TEST(credit_encoding_table)
{
	EXPECT_EQ(0, softrc_eng_credit_code(0));
	EXPECT_EQ(4, softrc_eng_credit_code(4));
	EXPECT_EQ(4, softrc_eng_credit_code(5));
	EXPECT_EQ(5, softrc_eng_credit_code(6));
	EXPECT_EQ(6, softrc_eng_credit_code(11));
	EXPECT_EQ(30, softrc_eng_credit_code(1u << 20));
	EXPECT_EQ(6, softrc_eng_credit_value(5));
	EXPECT_EQ(32768, softrc_eng_credit_value(30));
	EXPECT_EQ(0, softrc_eng_credit_value(31));	/* no credit information */
}

TEST(wqe_psn_count)
{
	struct softrc_eng_send_wr wr = { .opcode = SOFTRC_WR_RDMA_READ };

	EXPECT_EQ(1, softrc_eng_wqe_npkts(&wr, 1024));
	wr.length = 4096;
	EXPECT_EQ(4, softrc_eng_wqe_npkts(&wr, 1024));
	wr.length = 4097;
	EXPECT_EQ(5, softrc_eng_wqe_npkts(&wr, 1024));
	wr.opcode = SOFTRC_WR_ATOMIC_FETCH_AND_ADD;
	wr.length = 8;
	EXPECT_EQ(1, softrc_eng_wqe_npkts(&wr, 256));
	wr.opcode = SOFTRC_WR_SEND;
	wr.length = 1u << 20;
	EXPECT_EQ(4096, softrc_eng_wqe_npkts(&wr, 256));
}

TEST(counter_and_state_names)
{
	EXPECT_STREQ("tx_pkts", softrc_eng_counter_names[0]);
	EXPECT_STREQ("uc_drop_msgs",
		     softrc_eng_counter_names[SOFTRC_CORE_NR_COUNTERS - 1]);
	EXPECT_EQ(SOFTRC_CORE_NR_COUNTERS * sizeof(u64),
		  sizeof(struct softrc_eng_counters));
	EXPECT_STREQ("RNR_WAIT", softrc_eng_req_state_names[SOFTRC_REQ_RNR_WAIT]);
	EXPECT_STREQ("IN_WRITE", softrc_eng_resp_state_names[SOFTRC_RESP_IN_WRITE]);
	EXPECT_STREQ("ERROR", softrc_eng_state_names[SOFTRC_QPS_ERROR]);
}

TEST_HARNESS_MAIN

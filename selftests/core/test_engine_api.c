// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The calls through which the module reads and changes an engine without
 * touching its members (core/engine.h): the typed modify, the snapshot,
 * and the ring, P_Key and counter queries.
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "coretest.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

/* A modify that names only the new send PSN: the first packet uses it. */
TEST(modify_sq_psn_before_first_packet)
{
	struct softrc_eng_modify mod = {
		.attr.sq_psn = 0xfffffe,
		.mask = SOFTRC_MODIFY_SQ_PSN,
	};
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_EQ(0, softrc_eng_modify(&t.qp, &mod));
	EXPECT_EQ(0xfffffe, t.qp.attr.sq_psn);
	EXPECT_EQ(0xfffffe, t.qp.req.psn_next);
	EXPECT_EQ(0xfffffe, t.qp.req.una);
	EXPECT_EQ(0xfffffe, t.qp.req.cur_psn);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 3000, SOFTRC_SEND_SIGNALED));
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(0xfffffe, t.tx[0].psn);
	EXPECT_EQ(0xffffff, t.tx[1].psn);
	EXPECT_EQ(0, t.tx[2].psn);
	/* the receive side kept its PSN */
	EXPECT_EQ(5000, t.qp.resp.epsn);
	EXPECT_EQ(5000, t.qp.attr.rq_psn);
}

TEST(modify_rq_psn_is_the_expected_psn)
{
	struct softrc_eng_modify mod = {
		.attr.rq_psn = 77,
		.attr.sq_psn = 99,
		.mask = SOFTRC_MODIFY_RQ_PSN,
	};
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_EQ(0, softrc_eng_modify(&t.qp, &mod));
	EXPECT_EQ(77, t.qp.attr.rq_psn);
	EXPECT_EQ(77, t.qp.resp.epsn);
	/* not named: the send PSN stays */
	EXPECT_EQ(1000, t.qp.attr.sq_psn);
	EXPECT_EQ(1000, t.qp.req.psn_next);
}

/* PATH changes the live attributes and nothing else; the retry counts
 * start again only when their own bits are set.
 */
TEST(modify_path_and_retry_counts)
{
	struct softrc_eng_modify mod = { .mask = SOFTRC_MODIFY_PATH };
	struct ct t;

	ct_init(&t, NULL);
	mod.attr = t.qp.attr;
	mod.attr.pmtu = 4096;
	mod.attr.qkey = 0x1234;
	mod.attr.dqpn = 0x99;
	mod.attr.timeout = 14;
	mod.attr.retry_cnt = 3;
	mod.attr.rnr_retry = 2;
	mod.attr.min_rnr_timer = 9;
	mod.attr.max_rd_atomic = 1;
	mod.attr.remote_deny = SOFTRC_ACCESS_REMOTE_READ;
	mod.attr.pkey = 0x8001;
	mod.attr.sq_psn = 5;
	mod.attr.rq_psn = 6;
	ASSERT_EQ(0, softrc_eng_modify(&t.qp, &mod));
	EXPECT_EQ(4096, t.qp.attr.pmtu);
	EXPECT_EQ(0x1234, t.qp.attr.qkey);
	EXPECT_EQ(0x99, t.qp.attr.dqpn);
	EXPECT_EQ(14, t.qp.attr.timeout);
	EXPECT_EQ(3, t.qp.attr.retry_cnt);
	EXPECT_EQ(2, t.qp.attr.rnr_retry);
	EXPECT_EQ(9, t.qp.attr.min_rnr_timer);
	EXPECT_EQ(1, t.qp.attr.max_rd_atomic);
	EXPECT_EQ(SOFTRC_ACCESS_REMOTE_READ, t.qp.attr.remote_deny);
	/* not part of PATH */
	EXPECT_EQ(0xffff, t.qp.attr.pkey);
	EXPECT_EQ(1000, t.qp.attr.sq_psn);
	EXPECT_EQ(5000, t.qp.attr.rq_psn);
	EXPECT_EQ(5000, t.qp.resp.epsn);
	EXPECT_EQ(7, t.qp.req.retry_left);
	EXPECT_EQ(7, t.qp.req.rnr_left);

	mod.mask = SOFTRC_MODIFY_RETRY_CNT;
	ASSERT_EQ(0, softrc_eng_modify(&t.qp, &mod));
	EXPECT_EQ(3, t.qp.req.retry_left);
	EXPECT_EQ(7, t.qp.req.rnr_left);
	mod.mask = SOFTRC_MODIFY_RNR_RETRY;
	ASSERT_EQ(0, softrc_eng_modify(&t.qp, &mod));
	EXPECT_EQ(2, t.qp.req.rnr_left);
}

TEST(modify_max_dest_rd_atomic_bounded_by_storage)
{
	struct softrc_eng_modify mod = {
		.max_dest_rd_atomic = 5,
		.mask = SOFTRC_MODIFY_MAX_DEST_RD_ATOMIC,
	};
	struct ct t;

	ct_init(&t, NULL);
	EXPECT_EQ(SOFTRC_E_INVAL, softrc_eng_modify(&t.qp, &mod));
	EXPECT_EQ(4, t.qp.st.nres);
	mod.max_dest_rd_atomic = 2;
	EXPECT_EQ(0, softrc_eng_modify(&t.qp, &mod));
	EXPECT_EQ(2, t.qp.st.nres);
}

TEST(ring_queries_follow_posts)
{
	struct softrc_eng_qp zero = { 0 };
	struct softrc_pkt ack;
	struct ct t;
	int i;

	EXPECT_FALSE(softrc_eng_started(&zero));
	ct_init(&t, NULL);
	EXPECT_TRUE(softrc_eng_started(&t.qp));
	EXPECT_EQ(0xffff, softrc_eng_pkey(&t.qp));
	EXPECT_EQ(0, softrc_eng_sq_used(&t.qp));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(i, ct_post(&t, SOFTRC_WR_SEND, 8, SOFTRC_SEND_SIGNALED));
	EXPECT_EQ(3, softrc_eng_sq_used(&t.qp));
	EXPECT_EQ(3, softrc_eng_sq_next(&t.qp));
	ASSERT_EQ(0, softrc_eng_post_recv(&t.qp, 1, 64));
	ASSERT_EQ(1, softrc_eng_post_recv(&t.qp, 2, 64));
	EXPECT_EQ(2, softrc_eng_rq_used(&t.qp));
	EXPECT_EQ(2, softrc_eng_rq_next(&t.qp));
	/* a receive consumed: used drops, next stays */
	ct_rx_req(&t, SOFTRC_OP_SEND_ONLY, 5000, 8, true, 0);
	EXPECT_EQ(1, softrc_eng_rq_used(&t.qp));
	EXPECT_EQ(2, softrc_eng_rq_next(&t.qp));
	/* the SENDs acknowledged: the send ring empties */
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	ack = ct_ack(1002, SOFTRC_AETH_ACK | SOFTRC_AETH_CREDIT_INVALID, 3);
	ct_rx(&t, &ack, 0);
	EXPECT_EQ(0, softrc_eng_sq_used(&t.qp));
	EXPECT_EQ(3, softrc_eng_sq_next(&t.qp));
}

TEST(counter_values_in_list_order)
{
	const u64 *v;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 3000, SOFTRC_SEND_SIGNALED));
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	v = softrc_eng_counter_values(&t.qp);
	/* tx_pkts is the first counter, rx_pkts the second */
	EXPECT_EQ(0, strcmp("tx_pkts", softrc_eng_counter_names[0]));
	EXPECT_EQ(3, v[0]);
	EXPECT_EQ(t.qp.cnt.rx_pkts, v[1]);
	EXPECT_EQ(t.qp.cnt.uc_drop_msgs, v[SOFTRC_CORE_NR_COUNTERS - 1]);
}

TEST(snapshot_copies_state_and_resources)
{
	struct softrc_engine_snapshot snap;
	struct softrc_eng_rd_res res[8];
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 3000, SOFTRC_SEND_SIGNALED));
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	/* a READ at the responder takes resource 0 */
	ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5000, 0, true, 64);
	ASSERT_EQ(SOFTRC_RES_READ, t.res[0].type);

	memset(&snap, 0xa5, sizeof(snap));
	memset(res, 0, sizeof(res));
	softrc_eng_snapshot(&t.qp, &snap, res, 8);
	EXPECT_EQ(t.qp.state, snap.state);
	EXPECT_EQ(0, memcmp(&t.qp.attr, &snap.attr, sizeof(snap.attr)));
	EXPECT_EQ(0, memcmp(&t.qp.req, &snap.req, sizeof(snap.req)));
	EXPECT_EQ(0, memcmp(&t.qp.resp, &snap.resp, sizeof(snap.resp)));
	EXPECT_EQ(0, memcmp(&t.qp.cnt, &snap.cnt, sizeof(snap.cnt)));
	EXPECT_EQ(64, snap.sq_depth);
	EXPECT_EQ(64, snap.rq_depth);
	EXPECT_EQ(4, snap.nres);
	EXPECT_EQ(4, snap.res_cap);
	EXPECT_EQ(1003, snap.req.psn_next);
	EXPECT_EQ(4, snap.cnt.tx_pkts);	/* the READ response too */
	EXPECT_EQ(SOFTRC_RES_READ, res[0].type);
	EXPECT_EQ(5000, res[0].psn);
	EXPECT_EQ(0, memcmp(t.res, res, 4 * sizeof(res[0])));

	/* room for fewer: that many copied, and said so */
	memset(res, 0, sizeof(res));
	softrc_eng_snapshot(&t.qp, &snap, res, 1);
	EXPECT_EQ(1, snap.res_cap);
	EXPECT_EQ(SOFTRC_RES_READ, res[0].type);
	EXPECT_EQ(SOFTRC_RES_FREE, res[1].type);
}

TEST_HARNESS_MAIN

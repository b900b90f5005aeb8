// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Responder resources and windows: no resource outlives its PSN cycle,
 * max_dest_rd_atomic is enforced, RETH lengths are bounded (C9-94) and a
 * READ never fills the 2^23 PSN window; a fatal NAK waits behind the
 * READ responses already owed.
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "coretest.h"
#include "sim.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

#define PSN_CYCLE	(1u << 24)

/* @n zero-length WRITE_ONLY packets at the expected PSN (cheap: no ACK). */
static void rx_writes(struct ct *t, u32 n)
{
	struct softrc_pkt p = ct_req(SOFTRC_OP_RDMA_WRITE_ONLY, 0, 0, false);

	while (n--) {
		p.psn = t->qp.resp.epsn;
		softrc_eng_rx(&t->qp, &p, NULL, 0);
	}
}

static void rx_read_at(struct ct *t, u32 psn, u64 va, u32 len)
{
	struct softrc_pkt p = ct_req(SOFTRC_OP_RDMA_READ_REQUEST, psn, 0, true);

	p.va = va;
	p.dma_len = len;
	ct_rx(t, &p, 0);
}

static bool last_is_nak(const struct ct *t, u8 code, u32 psn)
{
	const struct softrc_pkt *p = &t->tx[t->ntx - 1];

	return t->ntx && t->ntx <= CT_MAX &&
	       p->opcode == SOFTRC_OP_ACKNOWLEDGE &&
	       p->syndrome == (SOFTRC_AETH_NAK | code) && p->psn == psn;
}

/* softrc_eng_tx with @budget until it returns less; false on overrun. */
static bool drain(struct ct *t, u32 budget)
{
	u32 n;

	do {
		n = softrc_eng_tx(&t->qp, 0, budget);
		if (n > budget)
			return false;
	} while (n == budget);
	return true;
}

TIMEOUT_FIXTURE(cycle)

/*
 * Protocol review finding 1: an ATOMIC at PSN 5000, a whole PSN cycle of
 * other traffic, a new ATOMIC at PSN 5000 whose ACK is lost: its
 * duplicate replays the new original value, not the stale one.
 */
TEST_F_TIMEOUT(cycle, stale_atomic_not_replayed_after_psn_cycle, 600)
{
	struct softrc_pkt p;
	struct ct t;

	ct_init(&t, NULL);
	t.mem = 40;
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5000, 0, true);
	p.swap_add = 2;
	ct_rx(&t, &p, 0);			/* orig 40, resource slot 0 */
	rx_writes(&t, PSN_CYCLE - 1);
	ASSERT_EQ(5000, t.qp.resp.epsn);
	ct_rx(&t, &p, 0);			/* orig 42, slot 1 */
	ASSERT_EQ(2, t.ntx);
	EXPECT_EQ(42, t.tx[1].orig);
	t.ntx = 0;
	ct_rx(&t, &p, 0);			/* the duplicate */
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(SOFTRC_OP_ATOMIC_ACKNOWLEDGE, t.tx[0].opcode);
	EXPECT_EQ(5000, t.tx[0].psn);
	EXPECT_EQ(42, t.tx[0].orig);
	EXPECT_EQ(2, t.natomic);
	EXPECT_EQ(1, t.qp.cnt.dup_atomics);
}

/*
 * The READ version: a duplicate of the new READ at PSN 5000 is read from
 * the new VA; and a "duplicate READ" at a PSN that was a WRITE in this
 * cycle finds no resource (the old cycle's READ retired) and is dropped.
 */
TEST_F_TIMEOUT(cycle, stale_read_not_replayed_after_psn_cycle, 600)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_read_at(&t, 5000, 0xaaaa0000, 8);
	rx_writes(&t, PSN_CYCLE - 1);
	ASSERT_EQ(5000, t.qp.resp.epsn);
	rx_read_at(&t, 5000, 0xbbbb0000, 8);
	t.ntx = 0;
	rx_read_at(&t, 5000, 0xbbbb0000, 8);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, t.tx[0].opcode);
	EXPECT_EQ(0xbbbb0000, t.txpl[0].addr);
	EXPECT_EQ(1, t.qp.cnt.dup_reads);

	ct_init(&t, NULL);
	rx_read_at(&t, 5000, 0xaaaa0000, 8);
	rx_writes(&t, PSN_CYCLE);		/* 5000 is a WRITE this time */
	ASSERT_EQ(5001, t.qp.resp.epsn);
	t.ntx = 0;
	rx_read_at(&t, 5000, 0xaaaa0000, 8);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(1, t.qp.cnt.drop_too_old);
	EXPECT_EQ(0, t.qp.cnt.dup_reads);
	EXPECT_EQ(0, t.qp.resp.res_live);
}

/* Retirement is not early: a resource answers up to the window's edge. */
TEST(resp_res_answers_to_the_window_edge)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_read_at(&t, 5000, 0xaaaa0000, 3 * 1024);	/* 5000..5002 */
	rx_writes(&t, SOFTRC_PSN_WINDOW - 2);
	/* 5002 is 2^23 - 1 behind: its duplicate is answered */
	t.ntx = 0;
	rx_read_at(&t, 5002, 0xaaaa0000 + 2048, 1024);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(5002, t.tx[0].psn);
	EXPECT_EQ(0xaaaa0000 + 2048, t.txpl[0].addr);
	EXPECT_EQ(1, t.qp.resp.res_live);
	/* one more packet: 5002 is 2^23 behind, the last duplicate PSN */
	rx_writes(&t, 1);
	EXPECT_EQ(1, t.qp.resp.res_live);
	rx_read_at(&t, 5002, 0xaaaa0000 + 2048, 1024);
	EXPECT_EQ(2, t.ntx);
	/* one more: all of it out of the window, the resource retires */
	rx_writes(&t, 1);
	EXPECT_EQ(0, t.qp.resp.res_live);
}

/*
 * Protocol review finding 2 on the wire (t5): a 400 KiB READ, then a
 * WRITE to a bad R_Key. The READ's 100 responses go out before the NAK:
 * the READ completes SUCCESS, the WRITE REM_ACCESS_ERR.
 */
TEST(resp_fatal_nak_after_owed_read_sim)
{
	struct softrc_eng_attr attr;
	struct softrc_eng_send_wr rd = {
		.wr_id = 1, .opcode = SOFTRC_WR_RDMA_READ, .length = 400 << 10,
		.rkey = 0x200, .send_flags = SOFTRC_SEND_SIGNALED,
	};
	struct softrc_eng_send_wr wr = {
		.wr_id = 2, .opcode = SOFTRC_WR_RDMA_WRITE, .length = 64,
		.rkey = 0x999, .send_flags = SOFTRC_SEND_SIGNALED,
	};
	struct sim sim;
	u32 i;

	ct_attr_default(&attr);
	attr.pmtu = 4096;
	sim_init(&sim, &attr, 1 << 20, 1);
	sim_add_mr(&sim, 1, 0x200, 0, 400 << 10, SOFTRC_ACCESS_REMOTE_READ);
	for (i = 0; i < 400 << 10; i++)
		sim.ep[1].mem[i] = (u8)(i * 13 + (i >> 9));
	rd.remote_addr = sim_va(&sim, 1, 0x200, 0);
	wr.remote_addr = rd.remote_addr;
	ASSERT_LE(0, sim_post_send(&sim, 0, &rd, 512 << 10));
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
	sim_run(&sim, 1ull << 40);
	ASSERT_EQ(2, sim.ep[0].ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, sim.ep[0].cqe[0].c.status);
	EXPECT_EQ(1, sim.ep[0].cqe[0].c.wr_id);
	EXPECT_EQ(SOFTRC_WC_REM_ACCESS_ERR, sim.ep[0].cqe[1].c.status);
	EXPECT_EQ(0, memcmp(sim.ep[0].mem + (512 << 10), sim.ep[1].mem,
			    400 << 10));
	EXPECT_EQ(100 + 1, sim.ep[1].qp.cnt.tx_pkts);
	EXPECT_EQ(1, sim.ep[1].qp.cnt.rem_access_naks_sent);
	EXPECT_TRUE(sim.ep[0].errored);
	EXPECT_TRUE(sim.ep[1].errored);
	sim_free(&sim);
}

/*
 * Protocol review finding 6: max_dest_rd_atomic 0 makes READ and ATOMIC
 * invalid requests; the setter is bounded by the storage.
 */
TEST(resp_max_dest_rd_atomic_zero_is_invalid_request)
{
	struct softrc_pkt p;
	struct ct t;

	ct_init(&t, NULL);
	EXPECT_EQ(SOFTRC_E_INVAL, softrc_eng_set_max_dest_rd_atomic(&t.qp, 5));
	ASSERT_EQ(0, softrc_eng_set_max_dest_rd_atomic(&t.qp, 0));
	rx_read_at(&t, 5000, 0x10000, 8);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(1, t.ntx);
	EXPECT_TRUE(t.errored);

	ct_init(&t, NULL);
	ASSERT_EQ(0, softrc_eng_set_max_dest_rd_atomic(&t.qp, 0));
	p = ct_req(SOFTRC_OP_COMPARE_SWAP, 5000, 0, true);
	ct_rx(&t, &p, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, t.natomic);
	EXPECT_TRUE(t.errored);
}

/* A new max_dest_rd_atomic releases the resources: duplicates dropped. */
TEST(resp_max_dest_rd_atomic_change_releases)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_read_at(&t, 5000, 0x10000, 8);
	EXPECT_EQ(0, softrc_eng_set_max_dest_rd_atomic(&t.qp, 4));
	EXPECT_EQ(1, t.qp.resp.res_live);	/* unchanged: kept */
	ASSERT_EQ(0, softrc_eng_set_max_dest_rd_atomic(&t.qp, 2));
	EXPECT_EQ(0, t.qp.resp.res_live);
	t.ntx = 0;
	rx_read_at(&t, 5000, 0x10000, 8);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(1, t.qp.cnt.drop_too_old);
	/* two resources now: READs at 5001 and 5002 fill them */
	rx_read_at(&t, 5001, 0x10000, 8);
	rx_read_at(&t, 5002, 0x10000, 8);
	EXPECT_EQ(2, t.qp.resp.res_live);
	EXPECT_EQ(2, t.ntx);
	EXPECT_FALSE(t.errored);
}

/*
 * New resource storage (a larger max_dest_rd_atomic, allocated by the
 * driver at modify): the old storage is left behind with no pin and no
 * reference, so the caller may free it; duplicates of requests answered
 * from it are dropped; the new storage serves as many READs as @nres.
 */
TEST(resp_set_resources_moves_to_new_storage)
{
	struct softrc_eng_rd_res big[8];
	u32 i;
	struct ct t;

	ct_init(&t, NULL);
	rx_read_at(&t, 5000, 0x10000, 8);
	ASSERT_EQ(1, t.qp.resp.res_live);
	EXPECT_EQ(1, t.pins);
	/* more than the storage holds: refused, nothing changed */
	EXPECT_EQ(SOFTRC_E_INVAL,
		  softrc_eng_set_resources(&t.qp, big, 8, 9));
	EXPECT_EQ(1, t.qp.resp.res_live);
	EXPECT_TRUE(t.qp.st.res == t.res);

	memset(big, 0xa5, sizeof(big));
	ASSERT_EQ(0, softrc_eng_set_resources(&t.qp, big, 8, 8));
	EXPECT_EQ(0, t.qp.resp.res_live);
	EXPECT_EQ(0, t.pins);
	EXPECT_EQ(8, t.qp.st.res_cap);
	/* the old storage is the caller's again: scribble over it */
	memset(t.res, 0x5a, sizeof(t.res));

	t.ntx = 0;
	rx_read_at(&t, 5000, 0x10000, 8);	/* its resource went */
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(1, t.qp.cnt.drop_too_old);
	for (i = 1; i <= 8; i++)
		rx_read_at(&t, 5000 + i, 0x10000, 8);
	EXPECT_EQ(8, t.qp.resp.res_live);
	EXPECT_EQ(8, t.ntx);
	EXPECT_FALSE(t.errored);
	/* the oldest of the eight, again: answered from the new storage */
	rx_read_at(&t, 5001, 0x10000, 8);
	EXPECT_EQ(9, t.ntx);
	EXPECT_EQ(5001, t.tx[8].psn);
	EXPECT_FALSE(t.errored);

	/* no storage at all: READ is an invalid request */
	ASSERT_EQ(0, softrc_eng_set_resources(&t.qp, NULL, 0, 0));
	EXPECT_EQ(0, t.pins);
	rx_read_at(&t, 5009, 0x10000, 8);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5009));
}

/*
 * More READ/ATOMICs than max_dest_rd_atomic (4) outstanding: a fifth one
 * arrives while the first's response has not gone out completely, so the
 * requester cannot have it. NAK invalid request, after the four owed
 * responses (not instead of the first of them).
 */
TEST(resp_rd_atomic_depth_exceeded_invalid_request)
{
	struct softrc_pkt p;
	struct ct t;
	u32 i;

	ct_init_pmtu(&t, 256);
	for (i = 0; i < 4; i++)
		rx_read_at(&t, 5000 + 100 * i, 0x10000, 100 * 256);
	EXPECT_EQ(4 * SOFTRC_RESP_INLINE, t.ntx);	/* of the first READ */
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5400, 0, true);
	ct_rx(&t, &p, 0);
	EXPECT_EQ(0, t.natomic);
	EXPECT_EQ(4 * SOFTRC_RESP_INLINE, t.ntx);
	EXPECT_FALSE(t.errored);
	ASSERT_TRUE(drain(&t, 16));
	ASSERT_EQ(401, t.ntx);
	for (i = 0; i < 400; i++)
		EXPECT_EQ(5000 + i, t.tx[i].psn);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5400));
	EXPECT_EQ(4, t.tx[400].msn);
	EXPECT_TRUE(t.errored);

	/* responses all sent: a fifth READ recycles the oldest silently */
	ct_init_pmtu(&t, 256);
	for (i = 0; i < 5; i++)
		rx_read_at(&t, 5000 + i, 0x10000, 8);
	EXPECT_EQ(5, t.ntx);
	EXPECT_FALSE(t.errored);
	EXPECT_EQ(4, t.qp.resp.res_live);
}

/*
 * Protocol review finding 4 / security F5: a RETH DMA length above 2^31
 * (C9-94) is an invalid request for READ and WRITE; no response leaves
 * (0xffffffff at PMTU 4096 used to give npkts 0 and 2^24 responses).
 */
TEST(resp_reth_length_above_2g_invalid)
{
	static const u32 bad[] = { 0xffffffffu, 0xfffff001u, (1u << 31) + 4096 };
	struct softrc_pkt p;
	struct ct t;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ct_init_pmtu(&t, 4096);
		rx_read_at(&t, 5000, 0x10000, bad[i]);
		ASSERT_EQ(1, t.ntx);
		EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
		EXPECT_EQ(0, t.mr_checks);
		EXPECT_EQ(5000, t.qp.resp.epsn);
		EXPECT_TRUE(t.errored);
		EXPECT_EQ(0, softrc_eng_tx(&t.qp, 0, 16));
	}
	/* 2^31 is the largest message: 2^19 PSNs at PMTU 4096 */
	ct_init_pmtu(&t, 4096);
	rx_read_at(&t, 5000, 0x10000, 1u << 31);
	EXPECT_EQ(SOFTRC_RESP_INLINE, t.ntx);
	EXPECT_EQ(5000 + (1u << 19), t.qp.resp.epsn);
	EXPECT_FALSE(t.errored);

	/* WRITE: 3 GiB refused before any key check; 2^31 accepted */
	ct_init_pmtu(&t, 4096);
	p = ct_req(SOFTRC_OP_RDMA_WRITE_FIRST, 5000, 4096, false);
	p.dma_len = 3u << 30;
	ct_rx(&t, &p, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, t.mr_checks);
	EXPECT_EQ(0, t.nplace);
	ct_init_pmtu(&t, 4096);
	p.dma_len = 1u << 31;
	ct_rx(&t, &p, 0);
	EXPECT_EQ(SOFTRC_RESP_IN_WRITE, t.qp.resp.state);
	EXPECT_EQ(1, t.nplace);
	EXPECT_FALSE(t.errored);
}

/*
 * Finding 4 at small PMTU and finding 10 (t8): one READ reserves at most
 * SOFTRC_READ_MAX_PSNS (2^22) PSNs. A 2^31 READ at PMTU 256 (2^23 PSNs,
 * the whole window: a retransmitted SEND before it would look like a
 * future PSN) is an invalid request; 2^30 is the largest, and with it the
 * SEND before it is still a duplicate.
 */
TEST(resp_read_psn_span_bounded)
{
	static const u32 bad[] = { 1u << 31, 0x90000000u, (1u << 30) + 1 };
	struct softrc_pkt p;
	struct ct t;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		ct_init_pmtu(&t, 256);
		softrc_eng_post_recv(&t.qp, 1, 64);
		p = ct_req(SOFTRC_OP_SEND_ONLY, 5000, 8, false);
		ct_rx(&t, &p, 0);
		rx_read_at(&t, 5001, 0x10000, bad[i]);
		EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5001));
		EXPECT_EQ(5001, t.qp.resp.epsn);
		EXPECT_EQ(0, t.mr_checks);
		EXPECT_TRUE(t.errored);
	}
	ct_init_pmtu(&t, 256);
	softrc_eng_post_recv(&t.qp, 1, 64);
	p = ct_req(SOFTRC_OP_SEND_ONLY, 5000, 8, false);
	ct_rx(&t, &p, 0);
	rx_read_at(&t, 5001, 0x10000, 1u << 30);
	EXPECT_EQ(5001 + SOFTRC_READ_MAX_PSNS, t.qp.resp.epsn);
	EXPECT_FALSE(t.errored);
	/* the SEND's ACK was lost: its retransmission is re-ACKed */
	p.ackreq = true;
	ct_rx(&t, &p, 0);
	EXPECT_EQ(1, t.qp.cnt.dup_requests);
	EXPECT_EQ(0, t.qp.cnt.seq_naks_sent);
	EXPECT_EQ(1, t.ncqe);
}

/*
 * The requester's side of the same rule (core/engine.c): at post time a
 * message is at most 2^31 bytes and a READ at most SOFTRC_READ_MAX_PSNS
 * response packets at the QP's PMTU.
 */
TEST(req_post_length_rules)
{
	struct ct t;

	ct_init_pmtu(&t, 256);
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_RDMA_READ, 1u << 31, 0));
	EXPECT_EQ(SOFTRC_E_INVAL,
		  ct_post(&t, SOFTRC_WR_RDMA_READ, (1u << 30) + 1, 0));
	EXPECT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 1u << 30, 0));
	EXPECT_EQ(SOFTRC_READ_MAX_PSNS, t.sq[0].npkts);
	EXPECT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 1u << 31, 0));
	EXPECT_EQ(SOFTRC_E_INVAL,
		  ct_post(&t, SOFTRC_WR_RDMA_WRITE, (1u << 31) + 1, 0));
	EXPECT_EQ(SOFTRC_E_INVAL,
		  ct_post(&t, SOFTRC_WR_SEND, (1u << 31) + 1, 0));

	ct_init_pmtu(&t, 512);
	EXPECT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_READ, 1u << 31, 0));
	EXPECT_EQ(SOFTRC_READ_MAX_PSNS, t.sq[0].npkts);
}

/*
 * The QP's remote enables (IB_QP_ACCESS_FLAGS, attr.remote_deny) apply at
 * every length (review, "suspicious" list: a zero-length READ/WRITE
 * skipped them with the R_Key check): invalid request, as rxe.
 */
TEST(resp_qp_access_enables_checked_at_any_length)
{
	struct softrc_eng_attr attr;
	struct softrc_pkt p;
	struct ct t;

	ct_attr_default(&attr);
	attr.remote_deny = SOFTRC_ACCESS_REMOTE_WRITE;
	ct_init(&t, &attr);
	p = ct_req(SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 0, true);
	ct_rx(&t, &p, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, t.mr_checks);
	EXPECT_EQ(0, t.qp.resp.msn);
	EXPECT_TRUE(t.errored);

	/* a zero-length WRITE with immediate completes no receive */
	ct_init(&t, &attr);
	softrc_eng_post_recv(&t.qp, 7, 64);
	p = ct_req(SOFTRC_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 5000, 0, true);
	ct_rx(&t, &p, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[0].status);

	/* READ still enabled; ATOMIC and READ each refused on their own */
	ct_init(&t, &attr);
	rx_read_at(&t, 5000, 0x10000, 0);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, t.tx[0].opcode);
	EXPECT_FALSE(t.errored);

	attr.remote_deny = SOFTRC_ACCESS_REMOTE_READ;
	ct_init(&t, &attr);
	rx_read_at(&t, 5000, 0x10000, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(1, t.ntx);
	ct_init(&t, &attr);
	rx_read_at(&t, 5000, 0x10000, 64);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, t.mr_checks);

	attr.remote_deny = SOFTRC_ACCESS_REMOTE_ATOMIC;
	ct_init(&t, &attr);
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5000, 0, true);
	ct_rx(&t, &p, 0);
	EXPECT_TRUE(last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, t.natomic);
}

TEST_HARNESS_MAIN

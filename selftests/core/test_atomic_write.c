// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ATOMIC WRITE (IBTA 1.5 Annex A19, opcode 0x1d, as rxe of Linux 6.2+
 * sends and answers it): the packet the requester builds and sends again,
 * its completion (IBV_WC_ATOMIC_WRITE) by the zero-length READ RESPONSE
 * ONLY or by an ACK covering it, max_rd_atomic and fences, the
 * responder's checks (remote write, R_Key, 8 bytes, alignment), its
 * resource, duplicates answered without a second store, PSN order behind
 * READ responses, the parser's rejects, and a lossy simulated link.
 *
 * Context: host test program.
 */
#include "kselftest_harness.h"
#include "coretest.h"
#include "parse.h"
#include "sim.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

/* The responder side's ATOMIC WRITE request at @psn (VA 0x10000). */
static void rx_aw(struct ct *t, u32 psn)
{
	struct softrc_pkt p = ct_req(SOFTRC_OP_ATOMIC_WRITE, psn, 8, true);

	ct_rx(t, &p, 0);
}

static int post_aw(struct ct *t, u8 flags)
{
	return ct_post(t, SOFTRC_WR_ATOMIC_WRITE, 8, flags);
}

/* ---- requester ---------------------------------------------------- */

TEST(aw_req_packet)
{
	struct ct t;
	int slot;

	ct_init(&t, NULL);
	slot = post_aw(&t, SOFTRC_SEND_SIGNALED);
	ASSERT_LE(0, slot);
	softrc_core_tx(&t.qp, 0, 16);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(SOFTRC_OP_ATOMIC_WRITE, t.tx[0].opcode);
	EXPECT_EQ(1000, t.tx[0].psn);
	EXPECT_EQ(0x20000, t.tx[0].va);
	EXPECT_EQ(0x55, t.tx[0].rkey);
	EXPECT_EQ(8, t.tx[0].dma_len);
	EXPECT_EQ(8, t.tx[0].payload_len);
	EXPECT_TRUE(t.tx[0].ackreq);
	EXPECT_FALSE(t.tx[0].se);
	/* the 8 bytes come from the slot, like a WRITE's payload */
	EXPECT_EQ(SOFTRC_BUF_SEND_WQE, t.txpl[0].kind);
	EXPECT_EQ(slot, t.txpl[0].slot);
	EXPECT_EQ(0, t.txpl[0].addr);
	EXPECT_EQ(8, t.txpl[0].len);
	EXPECT_EQ(1, t.qp.req.rd_out);
	EXPECT_EQ(1001, t.qp.req.psn_next);
}

TEST(aw_req_post_checks)
{
	struct softrc_core_attr a;
	struct ct t;

	ct_init(&t, NULL);
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_ATOMIC_WRITE, 4, 0));
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_ATOMIC_WRITE, 16, 0));
	EXPECT_LE(0, post_aw(&t, 0));

	ct_attr_default(&a);
	a.max_rd_atomic = 0;		/* it takes a responder resource */
	ct_init(&t, &a);
	EXPECT_EQ(SOFTRC_E_INVAL, post_aw(&t, 0));

	ct_attr_default(&a);
	a.transport = SOFTRC_OPCODE_UC;	/* RC only */
	ct_init(&t, &a);
	EXPECT_EQ(SOFTRC_E_INVAL, post_aw(&t, 0));
}

/* Each one holds one of max_rd_atomic (4) until it is answered. */
TEST(aw_req_max_rd_atomic)
{
	struct softrc_pkt r;
	struct ct t;
	int i;

	ct_init(&t, NULL);
	for (i = 0; i < 5; i++)
		ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
	softrc_core_tx(&t.qp, 0, 16);
	EXPECT_EQ(4, t.ntx);
	EXPECT_EQ(4, t.qp.req.rd_out);
	r = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 0, 1);
	ct_rx(&t, &r, 0);
	EXPECT_EQ(3, t.qp.req.rd_out);
	softrc_core_tx(&t.qp, 0, 16);
	ASSERT_EQ(5, t.ntx);
	EXPECT_EQ(1004, t.tx[4].psn);
	EXPECT_EQ(4, t.qp.req.rd_out);
}

/* A fenced WR waits for an earlier ATOMIC WRITE's answer (rxe: likewise). */
TEST(aw_req_fence_waits)
{
	struct softrc_pkt r;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 64,
			     SOFTRC_SEND_SIGNALED | SOFTRC_SEND_FENCE));
	softrc_core_tx(&t.qp, 0, 16);
	EXPECT_EQ(1, t.ntx);
	r = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 0, 1);
	ct_rx(&t, &r, 0);
	softrc_core_tx(&t.qp, 0, 16);
	ASSERT_EQ(2, t.ntx);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_ONLY, t.tx[1].opcode);
}

/* rxe's answer completes it: IBV_WC_ATOMIC_WRITE (9), 8 bytes. */
TEST(aw_comp_by_read_response_only)
{
	struct softrc_pkt r;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
	softrc_core_tx(&t.qp, 0, 16);
	r = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 0, 1);
	ct_rx(&t, &r, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_ATOMIC_WRITE, t.cqe[0].opcode);
	EXPECT_EQ(9, t.cqe[0].opcode);
	EXPECT_EQ(8, t.cqe[0].byte_len);
	EXPECT_EQ(0, t.qp.req.rd_out);
	EXPECT_EQ(1001, t.qp.req.una);
	EXPECT_EQ(0, t.qp.cnt.drop_bad_resp);
	EXPECT_EQ(0, t.deadline[SOFTRC_TIMER_RETRY]);
}

/*
 * An ACK covering it completes it too (it is acknowledged like a WRITE):
 * an ACK of a later PSN is no implied NAK, unlike past a READ/ATOMIC.
 */
TEST(aw_comp_by_covering_ack)
{
	struct softrc_pkt a;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 64, SOFTRC_SEND_SIGNALED));
	softrc_core_tx(&t.qp, 0, 16);
	ASSERT_EQ(2, t.ntx);
	a = ct_ack(1001, SOFTRC_AETH_ACK | 0x1f, 2);
	ct_rx(&t, &a, 0);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_ATOMIC_WRITE, t.cqe[0].opcode);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_RDMA_WRITE, t.cqe[1].opcode);
	EXPECT_EQ(0, t.qp.cnt.implied_naks);
	EXPECT_EQ(0, t.nretx);
	EXPECT_EQ(0, t.qp.req.rd_out);

	/* a plain ACK at its own PSN */
	ct_init(&t, NULL);
	ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
	softrc_core_tx(&t.qp, 0, 16);
	a = ct_ack(1000, SOFTRC_AETH_ACK | 0x1f, 1);
	ct_rx(&t, &a, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_ATOMIC_WRITE, t.cqe[0].opcode);
	EXPECT_EQ(0, t.qp.req.rd_out);
}

/*
 * An ATOMIC ACK or a READ response with data is no answer to it (with an
 * MSN that does not cover it: an AETH whose MSN does says the responder
 * executed it, and retires it like a WRITE).
 */
TEST(aw_comp_wrong_response_dropped)
{
	struct softrc_pkt r;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
	softrc_core_tx(&t.qp, 0, 16);
	r = ct_resp(SOFTRC_OP_ATOMIC_ACKNOWLEDGE, 1000, 0, 0);
	ct_rx(&t, &r, 0);
	r = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 8, 0);
	ct_rx(&t, &r, 0);
	EXPECT_EQ(0, t.ncqe);
	EXPECT_EQ(2, t.qp.cnt.drop_bad_resp);
	EXPECT_EQ(1000, t.qp.req.una);
	EXPECT_EQ(1, t.qp.req.rd_out);
	/* the right one still completes it; a replay of it is stale */
	r = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 0, 1);
	ct_rx(&t, &r, 0);
	EXPECT_EQ(1, t.ncqe);
	ct_rx(&t, &r, 0);
	EXPECT_EQ(1, t.qp.cnt.drop_dup_resp);
	EXPECT_EQ(1, t.ncqe);
}

/* The responder's NAKs fail it with the remote status. */
TEST(aw_comp_naks)
{
	static const struct {
		u8 code;
		u8 status;
	} naks[] = {
		{ SOFTRC_NAK_REMOTE_ACCESS, SOFTRC_WC_REM_ACCESS_ERR },
		{ SOFTRC_NAK_INVALID_REQ, SOFTRC_WC_REM_INV_REQ_ERR },
	};
	struct softrc_pkt n;
	struct ct t;
	u32 i;

	for (i = 0; i < ARRAY_SIZE(naks); i++) {
		ct_init(&t, NULL);
		ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
		ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
		softrc_core_tx(&t.qp, 0, 16);
		n = ct_ack(1000, SOFTRC_AETH_NAK | naks[i].code, 0);
		ct_rx(&t, &n, 0);
		ASSERT_EQ(2, t.ncqe);
		EXPECT_EQ(naks[i].status, t.cqe[0].status);
		EXPECT_EQ(SOFTRC_WC_ATOMIC_WRITE, t.cqe[0].opcode);
		EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[1].status);
		EXPECT_EQ(SOFTRC_WC_ATOMIC_WRITE, t.cqe[1].opcode);
		EXPECT_TRUE(t.errored);
	}
}

/* A timeout sends the same packet again, from the same slot bytes. */
TEST(aw_req_retransmit_on_timeout)
{
	struct softrc_pkt r;
	struct ct t;
	u64 d;

	ct_init(&t, NULL);
	ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
	softrc_core_tx(&t.qp, 0, 16);
	d = t.deadline[SOFTRC_TIMER_RETRY];
	ASSERT_NE(0, d);
	softrc_core_timer(&t.qp, SOFTRC_TIMER_RETRY, d);
	softrc_core_tx(&t.qp, d, 16);
	ASSERT_EQ(2, t.ntx);
	EXPECT_EQ(SOFTRC_OP_ATOMIC_WRITE, t.tx[1].opcode);
	EXPECT_EQ(1000, t.tx[1].psn);
	EXPECT_EQ(t.tx[0].va, t.tx[1].va);
	EXPECT_EQ(8, t.tx[1].payload_len);
	EXPECT_EQ(t.txpl[0].slot, t.txpl[1].slot);
	EXPECT_EQ(0, t.txpl[1].addr);
	EXPECT_EQ(8, t.txpl[1].len);
	EXPECT_EQ(1, t.qp.cnt.retransmits);
	EXPECT_EQ(1, t.qp.cnt.timeouts);
	EXPECT_EQ(1, t.qp.req.rd_out);	/* still one resource, not two */
	r = ct_resp(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 1000, 0, 1);
	ct_rx(&t, &r, d);
	EXPECT_EQ(1, t.ncqe);
	EXPECT_EQ(0, t.qp.req.rd_out);
}

/* A sequence error NAK at it goes back to it (WRITE, AW, WRITE). */
TEST(aw_req_seq_nak_goes_back)
{
	struct softrc_pkt n;
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 64, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 64, SOFTRC_SEND_SIGNALED));
	softrc_core_tx(&t.qp, 0, 16);
	ASSERT_EQ(3, t.ntx);
	n = ct_ack(1001, SOFTRC_AETH_NAK | SOFTRC_NAK_PSN_SEQ_ERR, 1);
	ct_rx(&t, &n, 0);
	EXPECT_EQ(1, t.ncqe);		/* the first WRITE, acknowledged */
	softrc_core_tx(&t.qp, 0, 16);
	ASSERT_EQ(5, t.ntx);
	EXPECT_EQ(SOFTRC_OP_ATOMIC_WRITE, t.tx[3].opcode);
	EXPECT_EQ(1001, t.tx[3].psn);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_ONLY, t.tx[4].opcode);
	EXPECT_EQ(1002, t.tx[4].psn);
	EXPECT_EQ(1, t.nretx);
	EXPECT_EQ(1001, t.retx_psn[0]);
	EXPECT_EQ(SOFTRC_RETRY_nak_seq, t.retx_why[0]);
}

/* ---- responder ---------------------------------------------------- */

TEST(aw_resp_stores_and_answers)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_aw(&t, 5000);
	EXPECT_EQ(1, t.natomic_write);
	EXPECT_EQ(0x10000, t.aw_va);
	EXPECT_EQ(SOFTRC_BTH_BYTES + SOFTRC_RETH_BYTES, t.aw_off);
	EXPECT_EQ(1, t.mr_checks);
	EXPECT_EQ(8, t.last_check_len);
	EXPECT_EQ(SOFTRC_ACCESS_REMOTE_WRITE, t.last_check_access);
	EXPECT_EQ(0, t.pins);		/* the pin only while it stores */
	EXPECT_EQ(0, t.nplace);
	ASSERT_EQ(1, t.ntx);
	EXPECT_TRUE(ct_is_rd_reply(&t.tx[0], 5000));
	EXPECT_EQ(1, t.tx[0].msn);
	EXPECT_EQ(SOFTRC_BUF_NONE, t.txpl[0].kind);
	EXPECT_EQ(5001, t.qp.resp.epsn);
	EXPECT_EQ(1, t.qp.resp.msn);
	EXPECT_EQ(1, t.qp.resp.res_live);
	EXPECT_EQ(SOFTRC_RES_ATOMIC_WRITE, t.res[0].type);
	EXPECT_FALSE(t.errored);
}

/* A duplicate is answered again from its resource, never stored again. */
TEST(aw_resp_duplicate_answered_not_stored)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_aw(&t, 5000);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5001, 8, false, 8);
	rx_aw(&t, 5000);
	EXPECT_EQ(1, t.natomic_write);
	ASSERT_EQ(2, t.ntx);
	EXPECT_TRUE(ct_is_rd_reply(&t.tx[1], 5000));
	EXPECT_EQ(2, t.tx[1].msn);	/* the MSN as it is now */
	EXPECT_EQ(1, t.qp.cnt.dup_requests);
	EXPECT_EQ(1, t.qp.cnt.dup_atomic_writes);
	EXPECT_EQ(0, t.qp.cnt.dup_atomics);
	EXPECT_EQ(5002, t.qp.resp.epsn);
	EXPECT_EQ(2, t.mr_checks);	/* its own and the WRITE's, no other */
}

/* Recycled by 4 newer ones (4 resources): its duplicate is dropped. */
TEST(aw_resp_duplicate_without_resource_dropped)
{
	struct ct t;
	int i;

	ct_init(&t, NULL);
	for (i = 0; i < 5; i++)
		rx_aw(&t, 5000 + i);
	EXPECT_EQ(5, t.natomic_write);
	t.ntx = 0;
	rx_aw(&t, 5000);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(1, t.qp.cnt.drop_too_old);
	EXPECT_EQ(0, t.qp.cnt.dup_atomic_writes);
	EXPECT_EQ(5, t.natomic_write);
	rx_aw(&t, 5001);		/* still saved */
	ASSERT_EQ(1, t.ntx);
	EXPECT_TRUE(ct_is_rd_reply(&t.tx[0], 5001));
}

/* An ATOMIC resource is no ATOMIC WRITE's, nor the other way round. */
TEST(aw_resp_duplicate_type_must_match)
{
	struct softrc_pkt p;
	struct ct t;

	ct_init(&t, NULL);
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5000, 0, true);
	ct_rx(&t, &p, 0);
	t.ntx = 0;
	rx_aw(&t, 5000);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(1, t.qp.cnt.drop_too_old);
	EXPECT_EQ(0, t.natomic_write);
}

TEST(aw_resp_remote_write_disabled_invalid_request)
{
	struct softrc_core_attr a;
	struct ct t;

	ct_attr_default(&a);
	a.remote_deny = SOFTRC_ACCESS_REMOTE_WRITE;
	ct_init(&t, &a);
	rx_aw(&t, 5000);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(1, t.qp.cnt.inv_req_naks_sent);
	EXPECT_EQ(0, t.natomic_write);
	EXPECT_EQ(0, t.mr_checks);
	EXPECT_TRUE(t.errored);

	/* remote atomic alone is not enough, nor needed */
	ct_attr_default(&a);
	a.remote_deny = SOFTRC_ACCESS_REMOTE_ATOMIC;
	ct_init(&t, &a);
	rx_aw(&t, 5000);
	EXPECT_EQ(1, t.natomic_write);
	EXPECT_FALSE(t.errored);
}

TEST(aw_resp_no_resource_invalid_request)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_EQ(0, softrc_core_set_max_dest_rd_atomic(&t.qp, 0));
	rx_aw(&t, 5000);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, t.natomic_write);
}

TEST(aw_resp_rkey_violation_remote_access)
{
	struct ct t;

	ct_init(&t, NULL);
	t.mr_fail = 1;
	rx_aw(&t, 5000);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_REMOTE_ACCESS, 5000));
	EXPECT_EQ(1, t.qp.cnt.rem_access_naks_sent);
	EXPECT_EQ(0, t.natomic_write);
	EXPECT_EQ(5000, t.qp.resp.epsn);
	EXPECT_EQ(0, t.qp.resp.res_live);
	EXPECT_TRUE(t.errored);
}

/* The memory went away between the check and the store. */
TEST(aw_resp_memory_gone_remote_access)
{
	struct ct t;

	ct_init(&t, NULL);
	t.atomic_fail = true;
	rx_aw(&t, 5000);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_REMOTE_ACCESS, 5000));
	EXPECT_EQ(1, t.qp.cnt.mem_errors);
	EXPECT_EQ(0, t.pins);
	EXPECT_EQ(0, t.bad_puts);
	EXPECT_TRUE(t.errored);
}

/* PSN order: a future one is NAKed and not stored; in order it is. */
TEST(aw_resp_psn_gap)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_aw(&t, 5001);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_PSN_SEQ_ERR, 5000));
	EXPECT_EQ(0, t.natomic_write);
	EXPECT_EQ(1, t.qp.cnt.drop_out_of_seq);
	ct_rx_req(&t, SOFTRC_OP_RDMA_WRITE_ONLY, 5000, 8, false, 8);
	rx_aw(&t, 5001);
	EXPECT_EQ(1, t.natomic_write);
	EXPECT_TRUE(ct_is_rd_reply(&t.tx[t.ntx - 1], 5001));
	EXPECT_EQ(2, t.tx[t.ntx - 1].msn);
}

/* Behind a paced READ response, its answer waits its PSN turn. */
TEST(aw_resp_answer_after_queued_read_response)
{
	struct ct t;
	int i, n;

	ct_init(&t, NULL);
	/* 40 response packets: each rx call sends SOFTRC_RESP_INLINE */
	ct_rx_req(&t, SOFTRC_OP_RDMA_READ_REQUEST, 5000, 0, true, 40 * 1024);
	ASSERT_EQ(SOFTRC_RESP_INLINE, t.ntx);
	rx_aw(&t, 5040);
	EXPECT_EQ(1, t.natomic_write);	/* executed at once (IBTA 9.5) */
	EXPECT_EQ(2 * SOFTRC_RESP_INLINE, t.ntx);	/* its answer waits */
	while (softrc_core_tx_resp(&t.qp, 4) == 4)
		;
	n = t.ntx;
	ASSERT_EQ(41, n);
	for (i = 0; i < 40; i++)
		EXPECT_EQ(5000 + i, t.tx[i].psn);
	EXPECT_TRUE(ct_is_rd_reply(&t.tx[40], 5040));
	EXPECT_EQ(2, t.tx[40].msn);
}

/* ---- parser ------------------------------------------------------- */

static u8 buf[256];

/* An ATOMIC WRITE on the wire: @payload bytes (pad to 4), DMA length. */
static u32 mk_aw(u64 va, u32 payload, u32 dma)
{
	struct softrc_pkt p;
	u32 n;

	memset(&p, 0, sizeof(p));
	p.opcode = SOFTRC_OP_ATOMIC_WRITE;
	p.psn = 77;
	p.pkey = 0xffff;
	p.va = va;
	p.rkey = 0x1234;
	p.dma_len = dma;
	p.payload_len = payload;
	n = softrc_build_hdrs(&p, buf);
	memset(buf + n, 0x5a, payload + softrc_padcnt(payload));
	return n + payload + softrc_padcnt(payload) + SOFTRC_ICRC_BYTES;
}

TEST(aw_parse_layout)
{
	struct softrc_pkt out;
	u32 len = mk_aw(0x10008, 8, 8);

	/* BTH, RETH, 8 bytes, ICRC: 40 bytes, no pad (rxe's layout) */
	EXPECT_EQ(12 + 16 + 8 + 4, len);
	EXPECT_EQ(SOFTRC_OP_ATOMIC_WRITE, buf[0]);
	EXPECT_EQ(0, buf[1] & SOFTRC_BTH_PAD_MASK);
	ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(buf, 28, len, 1024, &out));
	EXPECT_EQ(0x10008, out.va);
	EXPECT_EQ(0x1234, out.rkey);
	EXPECT_EQ(8, out.dma_len);
	EXPECT_EQ(8, out.payload_len);
	EXPECT_EQ(28, out.payload_off);
}

TEST(aw_parse_rejects)
{
	struct softrc_pkt out;
	u32 len;

	len = mk_aw(0x10008, 4, 8);
	EXPECT_EQ(SOFTRC_PARSE_ATOMIC_WRITE_LEN,
		  softrc_parse(buf, 28, len, 1024, &out));
	len = mk_aw(0x10008, 16, 16);
	EXPECT_EQ(SOFTRC_PARSE_ATOMIC_WRITE_LEN,
		  softrc_parse(buf, 28, len, 1024, &out));
	len = mk_aw(0x10008, 8, 16);
	EXPECT_EQ(SOFTRC_PARSE_ATOMIC_WRITE_LEN,
		  softrc_parse(buf, 28, len, 1024, &out));
	len = mk_aw(0x10008, 5, 8);	/* 8 bytes on the wire, 3 of them pad */
	EXPECT_EQ(SOFTRC_PARSE_ATOMIC_WRITE_LEN,
		  softrc_parse(buf, 28, len, 1024, &out));
	len = mk_aw(0x10004, 8, 8);
	EXPECT_EQ(SOFTRC_PARSE_ATOMIC_VA_UNALIGNED,
		  softrc_parse(buf, 28, len, 1024, &out));
	len = mk_aw(0x10001, 8, 8);
	EXPECT_EQ(SOFTRC_PARSE_ATOMIC_VA_UNALIGNED,
		  softrc_parse(buf, 28, len, 1024, &out));
	EXPECT_STREQ("ATOMIC_WRITE_LEN",
		     softrc_parse_status_name(SOFTRC_PARSE_ATOMIC_WRITE_LEN));
}

/* The engine NAKs a parser reject at the expected PSN: invalid request. */
TEST(aw_parse_reject_naks_invalid_request)
{
	struct softrc_pkt out;
	struct ct t;
	u32 len = mk_aw(0x10004, 8, 8);

	ASSERT_EQ(SOFTRC_PARSE_ATOMIC_VA_UNALIGNED,
		  softrc_parse(buf, 28, len, 1024, &out));
	ct_init(&t, NULL);
	out.psn = 5000;
	softrc_core_rx_invalid(&t.qp, &out);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, t.natomic_write);
	EXPECT_TRUE(t.errored);
}

/* ---- two engines over a lossy simulated link ------------------------ */

/*
 * 48 WRs, ATOMIC WRITEs to distinct words between WRITEs, over a link
 * with loss, duplication and reordering: all complete with their
 * opcode, every word holds what its WR carried, and every byte of it was
 * stored exactly once (duplicates answered, never stored again).
 */
TEST(aw_sim_lossy_link)
{
	struct softrc_core_attr a = {
		.pmtu = 1024, .sq_psn = 0xffffe0, .rq_psn = 7, .pkey = 0xffff,
		.timeout = 8, .retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 4,
	};
	struct softrc_send_wr wr = {
		.rkey = 0x200, .send_flags = SOFTRC_SEND_SIGNALED,
	};
	const u64 words = 64 << 10, src = 128 << 10;
	struct sim sim;
	int i, j, naw = 0;

	sim_init(&sim, &a, 256 << 10, 31);
	sim.link.loss = 0.1;
	sim.link.ack_loss = 0.1;
	sim.link.dup = 0.05;
	sim.link.reorder = 0.05;
	sim.link.jitter_ns = 20000;
	sim_add_mr(&sim, 1, 0x200, 0, 256 << 10, SOFTRC_ACCESS_REMOTE_WRITE);
	for (i = 0; i < 48; i++) {
		u64 *v = (u64 *)(sim.ep[0].mem + src + i * 8);

		*v = 0x0101010101010101ull * (i + 1);
		wr.wr_id = i;
		if (i % 3) {
			wr.opcode = SOFTRC_WR_ATOMIC_WRITE;
			wr.length = 8;
			wr.remote_addr = sim_va(&sim, 1, 0x200, words + i * 8);
			ASSERT_LE(0, sim_post_send(&sim, 0, &wr, src + i * 8));
			naw++;
		} else {
			wr.opcode = SOFTRC_WR_RDMA_WRITE;
			wr.length = 2000;
			wr.remote_addr = sim_va(&sim, 1, 0x200, i * 2048);
			ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
		}
	}
	ASSERT_TRUE(sim_run(&sim, 1ull << 40));
	EXPECT_EQ(0, sim.violations);
	if (sim.violations)
		TH_LOG("%s", sim.why);
	EXPECT_LT(0, sim.wire_drops);
	ASSERT_EQ(48, sim.ep[0].ncqe);
	for (i = 0; i < 48; i++) {
		const struct softrc_cqe *c = &sim.ep[0].cqe[i].c;

		EXPECT_EQ(i, c->wr_id);
		EXPECT_EQ(SOFTRC_WC_SUCCESS, c->status);
		EXPECT_EQ(i % 3 ? SOFTRC_WC_ATOMIC_WRITE : SOFTRC_WC_RDMA_WRITE,
			  c->opcode);
		if (!(i % 3))
			continue;
		EXPECT_EQ(0, memcmp(sim.ep[1].mem + words + i * 8,
				    sim.ep[0].mem + src + i * 8, 8));
		for (j = 0; j < 8; j++)
			EXPECT_EQ(1, sim.ep[1].touch[words + i * 8 + j]);
	}
	EXPECT_EQ(naw, sim.ep[1].atomic_writes);
	EXPECT_EQ(0, sim.ep[0].qp.req.rd_out);
	EXPECT_EQ(0, sim.ep[1].pins);
	sim_free(&sim);
}

TEST_HARNESS_MAIN

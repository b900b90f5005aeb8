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
#include "rdop.h"
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

static int aw_ran(const struct ct *t)
{
	return t->natomic_write;
}

static u64 aw_dups(const struct ct *t)
{
	return t->qp.cnt.dup_atomic_writes;
}

static const struct ct_rdop aw = {
	.op = SOFTRC_OP_ATOMIC_WRITE,
	.wc = SOFTRC_WC_ATOMIC_WRITE,
	.byte_len = 8,
	.post = post_aw,
	.rx = rx_aw,
	.ran = aw_ran,
	.dups = aw_dups,
};

/* ---- requester ---------------------------------------------------- */

TEST(aw_req_packet)
{
	struct ct t;
	int slot;

	ct_init(&t, NULL);
	slot = post_aw(&t, SOFTRC_SEND_SIGNALED);
	ASSERT_LE(0, slot);
	softrc_eng_tx(&t.qp, 0, 16);
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
	struct ct t;

	ct_init(&t, NULL);
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_ATOMIC_WRITE, 4, 0));
	EXPECT_EQ(SOFTRC_E_INVAL, ct_post(&t, SOFTRC_WR_ATOMIC_WRITE, 16, 0));
	EXPECT_LE(0, post_aw(&t, 0));

	ct_rdop_post_refused(_metadata, &aw);
}

/* Each one holds one of max_rd_atomic (4) until it is answered. */
TEST(aw_req_max_rd_atomic)
{
	ct_rdop_max_rd_atomic(_metadata, &aw);
}

/* A fenced WR waits for an earlier ATOMIC WRITE's answer (rxe: likewise). */
TEST(aw_req_fence_waits)
{
	ct_rdop_fence_waits(_metadata, &aw, SOFTRC_WR_RDMA_WRITE,
			    SOFTRC_OP_RDMA_WRITE_ONLY);
}

/* rxe's answer completes it: IBV_WC_ATOMIC_WRITE (9), 8 bytes. */
TEST(aw_comp_by_read_response_only)
{
	struct ct t;

	ct_rdop_comp_by_response(_metadata, &aw, &t);
	EXPECT_EQ(9, t.cqe[0].opcode);
}

/*
 * An ACK covering it completes it too (it is acknowledged like a WRITE):
 * an ACK of a later PSN is no implied NAK, unlike past a READ/ATOMIC.
 */
TEST(aw_comp_by_covering_ack)
{
	struct softrc_pkt a;
	struct ct t;

	ct_rdop_comp_by_covering_ack(_metadata, &aw);

	/* a plain ACK at its own PSN */
	ct_rdop_sent(_metadata, &aw, &t, 1);
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
	ct_rdop_wrong_response(_metadata, &aw, 2);
}

/* The responder's NAKs fail it with the remote status. */
TEST(aw_comp_naks)
{
	ct_rdop_nak(_metadata, &aw, SOFTRC_NAK_REMOTE_ACCESS,
		    SOFTRC_WC_REM_ACCESS_ERR);
	ct_rdop_nak(_metadata, &aw, SOFTRC_NAK_INVALID_REQ,
		    SOFTRC_WC_REM_INV_REQ_ERR);
}

/* A timeout sends the same packet again, from the same slot bytes. */
TEST(aw_req_retransmit_on_timeout)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, post_aw(&t, SOFTRC_SEND_SIGNALED));
	ct_rdop_retransmit(_metadata, &aw, &t);
	EXPECT_EQ(8, t.tx[1].payload_len);
	EXPECT_EQ(t.txpl[0].slot, t.txpl[1].slot);
	EXPECT_EQ(0, t.txpl[1].addr);
	EXPECT_EQ(8, t.txpl[1].len);
}

/* A sequence error NAK at it goes back to it (WRITE, AW, WRITE). */
TEST(aw_req_seq_nak_goes_back)
{
	struct ct t;

	ct_rdop_seq_nak_goes_back(_metadata, &aw, &t);
	EXPECT_EQ(1001, t.retx_psn[0]);
}

/* ---- responder ---------------------------------------------------- */

TEST(aw_resp_stores_and_answers)
{
	struct ct t;

	ct_rdop_resp_runs(_metadata, &aw, &t, 8, SOFTRC_ACCESS_REMOTE_WRITE,
			  SOFTRC_RES_ATOMIC_WRITE);
	EXPECT_EQ(0x10000, t.aw_va);
	EXPECT_EQ(SOFTRC_BTH_BYTES + SOFTRC_RETH_BYTES, t.aw_off);
}

/* A duplicate is answered again from its resource, never stored again. */
TEST(aw_resp_duplicate_answered_not_stored)
{
	struct ct t;

	ct_rdop_resp_duplicate(_metadata, &aw, &t);
	EXPECT_EQ(0, t.qp.cnt.dup_atomics);
}

/* Recycled by 4 newer ones (4 resources): its duplicate is dropped. */
TEST(aw_resp_duplicate_without_resource_dropped)
{
	ct_rdop_resp_dup_recycled(_metadata, &aw);
}

/* An ATOMIC resource is no ATOMIC WRITE's, nor the other way round. */
TEST(aw_resp_duplicate_type_must_match)
{
	struct softrc_pkt p;
	struct ct t;

	ct_init(&t, NULL);
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5000, 0, true);
	ct_rx(&t, &p, 0);
	ct_rdop_resp_dup_other(_metadata, &aw, &t);
}

TEST(aw_resp_remote_write_disabled_invalid_request)
{
	ct_rdop_resp_denied(_metadata, &aw, SOFTRC_ACCESS_REMOTE_WRITE);
	/* remote atomic alone is not enough, nor needed */
	ct_rdop_resp_allowed(_metadata, &aw, SOFTRC_ACCESS_REMOTE_ATOMIC);
}

TEST(aw_resp_no_resource_invalid_request)
{
	ct_rdop_resp_no_resource(_metadata, &aw);
}

TEST(aw_resp_rkey_violation_remote_access)
{
	struct ct t;

	ct_rdop_resp_rkey_bad(_metadata, &aw, &t);
}

/* The memory went away between the check and the store. */
TEST(aw_resp_memory_gone_remote_access)
{
	ct_rdop_resp_memory_gone(_metadata, &aw);
}

/* PSN order: a future one is NAKed and not stored; in order it is. */
TEST(aw_resp_psn_gap)
{
	ct_rdop_resp_psn_gap(_metadata, &aw);
}

/* Behind a paced READ response, its answer waits its PSN turn. */
TEST(aw_resp_answer_after_queued_read_response)
{
	ct_rdop_resp_after_read(_metadata, &aw);
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
	n = softrc_eng_build_hdrs(&p, buf);
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
		     softrc_eng_parse_status_name(SOFTRC_PARSE_ATOMIC_WRITE_LEN));
}

/* The engine NAKs a parser reject at the expected PSN: invalid request. */
TEST(aw_parse_reject_naks_invalid_request)
{
	struct softrc_pkt out;
	u32 len = mk_aw(0x10004, 8, 8);

	ASSERT_EQ(SOFTRC_PARSE_ATOMIC_VA_UNALIGNED,
		  softrc_parse(buf, 28, len, 1024, &out));
	ct_rdop_parse_reject_naks(_metadata, &aw, &out);
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
	struct softrc_eng_send_wr wr = {
		.rkey = 0x200, .send_flags = SOFTRC_SEND_SIGNALED,
	};
	const u64 words = 64 << 10, src = 128 << 10;
	struct sim sim;
	int i, j, naw = 0;
	u8 wc[48];

	ct_rdop_sim_lossy(&sim, 31);
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
			wc[i] = SOFTRC_WC_ATOMIC_WRITE;
		} else {
			wr.opcode = SOFTRC_WR_RDMA_WRITE;
			wr.length = 2000;
			wr.remote_addr = sim_va(&sim, 1, 0x200, i * 2048);
			ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
			wc[i] = SOFTRC_WC_RDMA_WRITE;
		}
	}
	ct_rdop_sim_done(_metadata, &sim, 48, wc);
	for (i = 0; i < 48; i++) {
		if (!(i % 3))
			continue;
		EXPECT_EQ(0, memcmp(sim.ep[1].mem + words + i * 8,
				    sim.ep[0].mem + src + i * 8, 8));
		for (j = 0; j < 8; j++)
			EXPECT_EQ(1, sim.ep[1].touch[words + i * 8 + j]);
	}
	EXPECT_EQ(naw, sim.ep[1].atomic_writes);
	sim_free(&sim);
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * FLUSH (IBTA 1.5 Annex A19, opcode 0x1c, as rxe of Linux 6.2+ sends and
 * answers it): the packet the requester builds (BTH, FETH, RETH, no
 * payload) and sends again, its completion (IB_WC_FLUSH) by the
 * zero-length READ RESPONSE ONLY or by an ACK covering it, max_rd_atomic
 * and fences, the responder's checks (placement types enabled on the QP,
 * the R_Key's flush rights on the range or the region), its resource,
 * duplicates answered without a second flush, PSN order behind READ
 * responses, the parser's rejects, and a lossy simulated link on which
 * every FLUSH runs once, after all the WRITEs posted before it.
 *
 * Context: host test program.
 */
#include "kselftest_harness.h"
#include "coretest.h"
#include "parse.h"
#include "rdop.h"
#include "sim.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

/* The responder side's FLUSH at @psn: VA 0x10000, 4096 bytes. */
static void rx_fl(struct ct *t, u32 psn, u8 type, u8 level)
{
	struct softrc_pkt p = ct_req(SOFTRC_OP_FLUSH, psn, 0, true);

	p.flush_type = type;
	p.flush_level = level;
	p.dma_len = 4096;
	ct_rx(t, &p, 0);
}

static void rx_gl(struct ct *t, u32 psn)
{
	rx_fl(t, psn, SOFTRC_FLUSH_GLOBAL, SOFTRC_FLUSH_RANGE);
}

static int post_fl_tl(struct ct *t, u8 flags, u8 type, u8 level, u32 len)
{
	struct softrc_eng_send_wr wr = ct_wr(t, SOFTRC_WR_FLUSH, len, flags);

	wr.flush_type = type;
	wr.flush_level = level;
	return softrc_eng_post_send(&t->qp, &wr);
}

static int post_fl(struct ct *t, u8 flags)
{
	return post_fl_tl(t, flags, SOFTRC_FLUSH_GLOBAL, SOFTRC_FLUSH_RANGE,
			  4096);
}

static int fl_ran(const struct ct *t)
{
	return t->nflush;
}

static u64 fl_dups(const struct ct *t)
{
	return t->qp.cnt.dup_flushes;
}

static const struct ct_rdop fl = {
	.op = SOFTRC_OP_FLUSH,
	.wc = SOFTRC_WC_FLUSH,
	.byte_len = 4096,
	.post = post_fl,
	.rx = rx_gl,
	.ran = fl_ran,
	.dups = fl_dups,
};

/* ---- requester ---------------------------------------------------- */

TEST(fl_req_packet)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, post_fl(&t, SOFTRC_SEND_SIGNALED));
	softrc_eng_tx(&t.qp, 0, 16);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(SOFTRC_OP_FLUSH, t.tx[0].opcode);
	EXPECT_EQ(1000, t.tx[0].psn);
	EXPECT_EQ(SOFTRC_FLUSH_GLOBAL, t.tx[0].flush_type);
	EXPECT_EQ(SOFTRC_FLUSH_RANGE, t.tx[0].flush_level);
	EXPECT_EQ(0x20000, t.tx[0].va);
	EXPECT_EQ(0x55, t.tx[0].rkey);
	EXPECT_EQ(4096, t.tx[0].dma_len);	/* the range, not data */
	EXPECT_EQ(0, t.tx[0].payload_len);	/* oA19-2 */
	EXPECT_EQ(SOFTRC_BUF_NONE, t.txpl[0].kind);
	EXPECT_TRUE(t.tx[0].ackreq);
	EXPECT_EQ(1, t.qp.req.rd_out);
	EXPECT_EQ(1001, t.qp.req.psn_next);	/* one PSN for any length */

	/* level MR and both placement types go out as posted */
	ct_init(&t, NULL);
	ASSERT_LE(0, post_fl_tl(&t, 0, SOFTRC_FLUSH_TYPES, SOFTRC_FLUSH_MR,
				1u << 30));
	softrc_eng_tx(&t.qp, 0, 16);
	ASSERT_EQ(1, t.ntx);
	EXPECT_EQ(SOFTRC_FLUSH_TYPES, t.tx[0].flush_type);
	EXPECT_EQ(SOFTRC_FLUSH_MR, t.tx[0].flush_level);
	EXPECT_EQ(1001, t.qp.req.psn_next);
}

TEST(fl_req_post_checks)
{
	struct softrc_eng_attr a;
	struct ct t;

	ct_init(&t, NULL);
	/* no placement type, an undefined one, an undefined level */
	EXPECT_EQ(SOFTRC_E_INVAL, post_fl_tl(&t, 0, 0, 0, 64));
	EXPECT_EQ(SOFTRC_E_INVAL, post_fl_tl(&t, 0, 4, 0, 64));
	EXPECT_EQ(SOFTRC_E_INVAL, post_fl_tl(&t, 0, 1, 2, 64));
	/* C9-94 */
	EXPECT_EQ(SOFTRC_E_INVAL, post_fl_tl(&t, 0, 1, 0, SOFTRC_MAX_MSG_LEN + 1));
	EXPECT_LE(0, post_fl_tl(&t, 0, 1, 0, 0));
	EXPECT_LE(0, post_fl(&t, 0));

	ct_rdop_post_refused(_metadata, &fl);

	ct_attr_default(&a);
	a.transport = SOFTRC_OPCODE_UD;
	ct_init(&t, &a);
	EXPECT_EQ(SOFTRC_E_INVAL, post_fl(&t, 0));
}

/* Each one holds one of max_rd_atomic (4) until it is answered. */
TEST(fl_req_max_rd_atomic)
{
	ct_rdop_max_rd_atomic(_metadata, &fl);
}

/* A fenced WR waits for an earlier FLUSH's answer, like a READ's. */
TEST(fl_req_fence_waits)
{
	ct_rdop_fence_waits(_metadata, &fl, SOFTRC_WR_SEND, SOFTRC_OP_SEND_ONLY);
}

/* rxe's answer completes it: the engine's FLUSH opcode, the range length. */
TEST(fl_comp_by_read_response_only)
{
	struct ct t;

	ct_rdop_comp_by_response(_metadata, &fl, &t);
	EXPECT_NE(SOFTRC_WC_REG_MR, t.cqe[0].opcode);
}

/* An ACK covering it completes it too: no implied NAK past a FLUSH. */
TEST(fl_comp_by_covering_ack)
{
	ct_rdop_comp_by_covering_ack(_metadata, &fl);
}

/* An ATOMIC ACK or a READ response with data is no answer to it. */
TEST(fl_comp_wrong_response_dropped)
{
	ct_rdop_wrong_response(_metadata, &fl, 3);
}

/* The responder's NAKs fail it with the remote status. */
TEST(fl_comp_naks)
{
	ct_rdop_nak(_metadata, &fl, SOFTRC_NAK_REMOTE_ACCESS,
		    SOFTRC_WC_REM_ACCESS_ERR);
	ct_rdop_nak(_metadata, &fl, SOFTRC_NAK_INVALID_REQ,
		    SOFTRC_WC_REM_INV_REQ_ERR);
	ct_rdop_nak(_metadata, &fl, SOFTRC_NAK_REMOTE_OP_ERR,
		    SOFTRC_WC_REM_OP_ERR);
}

/* A timeout sends the same packet again, still one resource. */
TEST(fl_req_retransmit_on_timeout)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, post_fl_tl(&t, SOFTRC_SEND_SIGNALED, SOFTRC_FLUSH_GLOBAL,
				SOFTRC_FLUSH_MR, 64));
	ct_rdop_retransmit(_metadata, &fl, &t);
	EXPECT_EQ(64, t.tx[1].dma_len);
	EXPECT_EQ(SOFTRC_FLUSH_MR, t.tx[1].flush_level);
	EXPECT_EQ(SOFTRC_FLUSH_GLOBAL, t.tx[1].flush_type);
}

/* Retries run out: RETRY_EXC_ERR with the FLUSH opcode. */
TEST(fl_req_retry_exceeded)
{
	struct softrc_eng_attr a;
	struct ct t;
	u64 d = 0;
	int i;

	ct_attr_default(&a);
	a.retry_cnt = 2;
	ct_init(&t, &a);
	ASSERT_LE(0, post_fl(&t, SOFTRC_SEND_SIGNALED));
	softrc_eng_tx(&t.qp, 0, 16);
	for (i = 0; i < 3 && !t.ncqe; i++) {
		d = t.deadline[SOFTRC_TIMER_RETRY];
		ASSERT_NE(0, d);
		softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, d);
		softrc_eng_tx(&t.qp, d, 16);
	}
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_RETRY_EXC_ERR, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_FLUSH, t.cqe[0].opcode);
	EXPECT_EQ(3, ct_count_tx(&t, SOFTRC_OP_FLUSH));
	EXPECT_EQ(1, t.qp.cnt.retry_exceeded);
}

/* A sequence error NAK at it goes back to it (WRITE, FLUSH, WRITE). */
TEST(fl_req_seq_nak_goes_back)
{
	struct ct t;

	ct_rdop_seq_nak_goes_back(_metadata, &fl, &t);
	EXPECT_EQ(1, t.qp.req.rd_out);
}

/* ---- responder ---------------------------------------------------- */

TEST(fl_resp_flushes_and_answers)
{
	struct ct t;

	ct_rdop_resp_runs(_metadata, &fl, &t, 4096, SOFTRC_ACCESS_FLUSH_GLOBAL,
			  SOFTRC_RES_FLUSH);
	EXPECT_EQ(SOFTRC_FLUSH_GLOBAL, t.flush_type);
}

/* Level MR: the key and its rights, no range (rxe: likewise). */
TEST(fl_resp_level_mr_checks_no_range)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_fl(&t, 5000, SOFTRC_FLUSH_GLOBAL, SOFTRC_FLUSH_MR);
	EXPECT_EQ(1, t.nflush);
	EXPECT_EQ(0, t.last_check_len);
	EXPECT_TRUE(ct_is_rd_reply(&t.tx[0], 5000));
}

/* PERSISTENT asks for the persistent right (and both for both). */
TEST(fl_resp_persistent_access)
{
	struct ct t;

	ct_init(&t, NULL);
	rx_fl(&t, 5000, SOFTRC_FLUSH_PERSISTENT, SOFTRC_FLUSH_RANGE);
	EXPECT_EQ(SOFTRC_ACCESS_FLUSH_PERSISTENT, t.last_check_access);
	EXPECT_EQ(SOFTRC_FLUSH_PERSISTENT, t.flush_type);
	rx_fl(&t, 5001, SOFTRC_FLUSH_TYPES, SOFTRC_FLUSH_RANGE);
	EXPECT_EQ(SOFTRC_ACCESS_FLUSH_GLOBAL | SOFTRC_ACCESS_FLUSH_PERSISTENT,
		  t.last_check_access);
	EXPECT_EQ(2, t.nflush);
}

/*
 * No placement type (rxe's kernel requester leaves the FETH zero): no
 * right is asked of QP or R_Key, the key must still be valid (rxe alike).
 */
TEST(fl_resp_type_none)
{
	const u32 deny = SOFTRC_ACCESS_FLUSH_GLOBAL |
			 SOFTRC_ACCESS_FLUSH_PERSISTENT;
	struct ct t;

	ct_init_deny(&t, deny);
	rx_fl(&t, 5000, 0, SOFTRC_FLUSH_RANGE);
	EXPECT_EQ(0, t.last_check_access);
	EXPECT_EQ(1, t.nflush);
	EXPECT_TRUE(ct_is_rd_reply(&t.tx[0], 5000));

	ct_init_deny(&t, deny);
	t.mr_fail = 1;			/* rxe's R_Key 0 */
	rx_fl(&t, 5000, 0, SOFTRC_FLUSH_RANGE);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_REMOTE_ACCESS, 5000));
	EXPECT_EQ(0, t.nflush);
}

/* A duplicate is answered again from its resource, never flushed again. */
TEST(fl_resp_duplicate_answered_not_run)
{
	struct ct t;

	ct_rdop_resp_duplicate(_metadata, &fl, &t);
	EXPECT_EQ(0, t.qp.cnt.dup_atomic_writes);
	EXPECT_EQ(0, t.qp.cnt.dup_reads);
}

/* Recycled by 4 newer ones (4 resources): its duplicate is dropped. */
TEST(fl_resp_duplicate_without_resource_dropped)
{
	ct_rdop_resp_dup_recycled(_metadata, &fl);
}

/* An ATOMIC WRITE's resource is no FLUSH's, nor the other way round. */
TEST(fl_resp_duplicate_type_must_match)
{
	struct softrc_pkt p;
	struct ct t;

	ct_init(&t, NULL);
	p = ct_req(SOFTRC_OP_ATOMIC_WRITE, 5000, 8, true);
	ct_rx(&t, &p, 0);
	ct_rdop_resp_dup_other(_metadata, &fl, &t);

	ct_init(&t, NULL);
	rx_gl(&t, 5000);
	t.ntx = 0;
	p = ct_req(SOFTRC_OP_ATOMIC_WRITE, 5000, 8, true);
	ct_rx(&t, &p, 0);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(0, t.natomic_write);
	EXPECT_EQ(1, t.qp.cnt.drop_too_old);
}

/*
 * The placement type must be enabled on the QP (rxe: IB_ACCESS_FLUSH_*
 * in qp_access_flags), else invalid request; remote write is not asked.
 */
TEST(fl_resp_type_disabled_invalid_request)
{
	struct ct t;

	ct_rdop_resp_denied(_metadata, &fl, SOFTRC_ACCESS_FLUSH_GLOBAL);

	ct_init_deny(&t, SOFTRC_ACCESS_FLUSH_PERSISTENT);
	rx_fl(&t, 5000, SOFTRC_FLUSH_TYPES, SOFTRC_FLUSH_RANGE);
	EXPECT_TRUE(ct_last_is_nak(&t, SOFTRC_NAK_INVALID_REQ, 5000));
	EXPECT_EQ(0, t.nflush);

	/* GLOBAL alone on that QP is fine; remote write is not needed */
	ct_rdop_resp_allowed(_metadata, &fl, SOFTRC_ACCESS_FLUSH_PERSISTENT |
			     SOFTRC_ACCESS_REMOTE_WRITE |
			     SOFTRC_ACCESS_REMOTE_READ);
}

TEST(fl_resp_no_resource_invalid_request)
{
	ct_rdop_resp_no_resource(_metadata, &fl);
}

/* Bad R_Key, missing flush right, out of range: remote access. */
TEST(fl_resp_rkey_violation_remote_access)
{
	struct ct t;

	ct_rdop_resp_rkey_bad(_metadata, &fl, &t);
	EXPECT_EQ(0, t.qp.resp.msn);
}

/* The memory went away between the check and the flush. */
TEST(fl_resp_memory_gone_remote_access)
{
	ct_rdop_resp_memory_gone(_metadata, &fl);
}

/* PSN order: a future one is NAKed and not run; in order it is. */
TEST(fl_resp_psn_gap)
{
	ct_rdop_resp_psn_gap(_metadata, &fl);
}

/* Behind a paced READ response, its answer waits its PSN turn. */
TEST(fl_resp_answer_after_queued_read_response)
{
	ct_rdop_resp_after_read(_metadata, &fl);
}

/* ---- parser ------------------------------------------------------- */

static u8 buf[256];

/* A FLUSH on the wire with @payload bytes (pad to 4) and FETH @bits. */
static u32 mk_fl(u32 feth_bits, u32 payload)
{
	struct softrc_pkt p;
	u32 n;

	memset(&p, 0, sizeof(p));
	p.opcode = SOFTRC_OP_FLUSH;
	p.psn = 77;
	p.pkey = 0xffff;
	p.va = 0x10000;
	p.rkey = 0x1234;
	p.dma_len = 4096;
	p.payload_len = payload;
	n = softrc_eng_build_hdrs(&p, buf);
	/* the FETH word as a peer may have written it */
	buf[12] = feth_bits >> 24;
	buf[13] = feth_bits >> 16;
	buf[14] = feth_bits >> 8;
	buf[15] = feth_bits;
	memset(buf + n, 0x5a, payload + softrc_padcnt(payload));
	return n + payload + softrc_padcnt(payload) + SOFTRC_ICRC_BYTES;
}

TEST(fl_parse_layout)
{
	struct softrc_pkt in, out;
	u32 len;

	/* rxe's layout: BTH, FETH at 12, RETH at 16, ICRC: 36 bytes */
	memset(&in, 0, sizeof(in));
	in.opcode = SOFTRC_OP_FLUSH;
	in.psn = 9;
	in.flush_type = SOFTRC_FLUSH_GLOBAL;
	in.flush_level = SOFTRC_FLUSH_MR;
	in.va = 0x1122334455667788ull;
	in.rkey = 0xabcd;
	in.dma_len = 0x10000;
	len = softrc_eng_build_hdrs(&in, buf);
	EXPECT_EQ(32, len);
	EXPECT_EQ(0x1c, buf[0]);
	EXPECT_EQ(0, buf[1] & SOFTRC_BTH_PAD_MASK);
	/* FETH: selectivity in bits 5..4, placement type in bits 3..0 */
	EXPECT_EQ(0, buf[12]);
	EXPECT_EQ(0, buf[13]);
	EXPECT_EQ(0, buf[14]);
	EXPECT_EQ(0x11, buf[15]);
	EXPECT_EQ(0x11, buf[16]);	/* RETH VA, big-endian */
	EXPECT_EQ(0x88, buf[23]);
	EXPECT_EQ(0xcd, buf[27]);	/* R_Key */
	EXPECT_EQ(0x01, buf[29]);	/* DMA length 0x10000 */
	ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(buf, 32, 36, 1024, &out));
	EXPECT_EQ(SOFTRC_FLUSH_GLOBAL, out.flush_type);
	EXPECT_EQ(SOFTRC_FLUSH_MR, out.flush_level);
	EXPECT_EQ(in.va, out.va);
	EXPECT_EQ(0xabcd, out.rkey);
	EXPECT_EQ(0x10000, out.dma_len);
	EXPECT_EQ(0, out.payload_len);

	len = mk_fl(0x02, 0);		/* PERSISTENT, RANGE */
	ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(buf, 32, len, 1024, &out));
	EXPECT_EQ(SOFTRC_FLUSH_PERSISTENT, out.flush_type);
	EXPECT_EQ(SOFTRC_FLUSH_RANGE, out.flush_level);
	/* no placement type: what rxe's kernel requester sends, rxe takes */
	len = mk_fl(0x10, 0);
	ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(buf, 32, len, 1024, &out));
	EXPECT_EQ(0, out.flush_type);
	EXPECT_EQ(SOFTRC_FLUSH_MR, out.flush_level);
	/* headers not all there: rejected without reading past them */
	EXPECT_EQ(SOFTRC_PARSE_HDR_NOT_CONTIG,
		  softrc_parse(buf, 28, len, 1024, &out));
}

TEST(fl_parse_rejects)
{
	static const u32 bad_feth[] = {
		0x04, 0x08, 0x0f, /* undefined placement types */
		0x21, 0x31,	/* selectivity levels 2 and 3 (reserved) */
		0x41, 0x80000001, /* reserved bits */
	};
	struct softrc_pkt out;
	u32 len, i;

	for (i = 0; i < ARRAY_SIZE(bad_feth); i++) {
		len = mk_fl(bad_feth[i], 0);
		EXPECT_EQ(SOFTRC_PARSE_FLUSH_FETH,
			  softrc_parse(buf, 32, len, 1024, &out))
			TH_LOG("FETH 0x%x", bad_feth[i]);
	}
	/* oA19-2: no payload, and so no pad either */
	len = mk_fl(0x01, 4);
	EXPECT_EQ(SOFTRC_PARSE_FLUSH_PAYLOAD,
		  softrc_parse(buf, 32, len, 1024, &out));
	len = mk_fl(0x01, 1);
	EXPECT_EQ(SOFTRC_PARSE_FLUSH_PAYLOAD,
		  softrc_parse(buf, 32, len, 1024, &out));
	len = mk_fl(0x01, 0);
	buf[1] |= 1 << SOFTRC_BTH_PAD_SHIFT;	/* pad count, no bytes */
	EXPECT_EQ(SOFTRC_PARSE_FLUSH_PAYLOAD,
		  softrc_parse(buf, 32, len, 1024, &out));
	EXPECT_STREQ("FLUSH_FETH",
		     softrc_eng_parse_status_name(SOFTRC_PARSE_FLUSH_FETH));
	EXPECT_STREQ("FLUSH_PAYLOAD",
		     softrc_eng_parse_status_name(SOFTRC_PARSE_FLUSH_PAYLOAD));
}

/* The engine NAKs a parser reject at the expected PSN: invalid request. */
TEST(fl_parse_reject_naks_invalid_request)
{
	struct softrc_pkt out;
	u32 len = mk_fl(0x21, 0);

	ASSERT_EQ(SOFTRC_PARSE_FLUSH_FETH,
		  softrc_parse(buf, 32, len, 1024, &out));
	ct_rdop_parse_reject_naks(_metadata, &fl, &out);
}

/* ---- two engines over a lossy simulated link ------------------------ */

/*
 * 60 WRs, a FLUSH after every two WRITEs, over a link with loss,
 * duplication and reordering: all complete with their opcode, every
 * FLUSH ran exactly once (duplicates answered, never run again), and
 * when the k-th ran, exactly the WRITEs posted before it were placed.
 */
TEST(fl_sim_lossy_link)
{
	struct softrc_eng_send_wr wr = {
		.rkey = 0x200, .send_flags = SOFTRC_SEND_SIGNALED,
	};
	u64 written = 0, want[20];
	struct sim sim;
	int i, nfl = 0;
	u8 wc[60];

	ct_rdop_sim_lossy(&sim, 47);
	sim_add_mr(&sim, 1, 0x200, 0, 256 << 10,
		   SOFTRC_ACCESS_REMOTE_WRITE | SOFTRC_ACCESS_FLUSH_GLOBAL);
	for (i = 0; i < 60; i++) {
		wr.wr_id = i;
		if (i % 3 == 2) {
			wr.opcode = SOFTRC_WR_FLUSH;
			wr.flush_type = SOFTRC_FLUSH_GLOBAL;
			wr.flush_level = nfl & 1 ? SOFTRC_FLUSH_MR :
						   SOFTRC_FLUSH_RANGE;
			wr.length = 4096;
			wr.remote_addr = sim_va(&sim, 1, 0x200, (i - 2) * 2048);
			ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
			want[nfl++] = written;
			wc[i] = SOFTRC_WC_FLUSH;
		} else {
			wr.opcode = SOFTRC_WR_RDMA_WRITE;
			wr.length = 2000;
			wr.remote_addr = sim_va(&sim, 1, 0x200, i * 2048);
			ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
			written += 2000;
			wc[i] = SOFTRC_WC_RDMA_WRITE;
		}
	}
	ct_rdop_sim_done(_metadata, &sim, 60, wc);
	ASSERT_EQ(nfl, sim.ep[1].flushes);
	for (i = 0; i < nfl; i++)
		EXPECT_EQ(want[i], sim.ep[1].flush_placed[i]) TH_LOG("flush %d", i);
	EXPECT_EQ(written, sim.ep[1].placed);
	EXPECT_LT(0, sim.ep[1].qp.cnt.dup_requests);
	sim_free(&sim);
}

TEST_HARNESS_MAIN

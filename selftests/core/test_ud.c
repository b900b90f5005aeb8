// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * UD transport unit tests (core/ud.c): one packet per message with its
 * DETH, the controlled Q_Key, completion at transmit, the path MTU limit,
 * REFUSED WQEs; on receive the GRH slot before the payload, byte_len,
 * src_qp and immediate data, no WQE (dropped), a WQE too small (local
 * length error, QP still usable); the parser's transport check.
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "coretest.h"
#include "parse.h"

#pragma GCC diagnostic ignored "-Wsign-compare"

#define SIG	SOFTRC_SEND_SIGNALED
#define QKEY	0x1234567
#define MYQPN	0x42

static void ud_init(struct ct *t)
{
	struct softrc_eng_attr a;

	ct_attr_default(&a);
	a.transport = SOFTRC_OPCODE_UD;
	a.qkey = QKEY;
	a.sqpn = MYQPN;
	a.pkey = 0xffff;
	ct_init(t, &a);
}

static int ud_post(struct ct *t, u8 opcode, u32 len, u8 flags, u32 dqpn,
		   u32 qkey)
{
	struct softrc_eng_send_wr wr = {
		.wr_id = 0x100 + t->qp.req.tail,
		.opcode = opcode,
		.length = len,
		.send_flags = flags,
		.dqpn = dqpn,
		.qkey = qkey,
		.imm = 0x11223344,
	};

	return softrc_eng_post_send(&t->qp, &wr);
}

static struct softrc_pkt ud_pkt(u8 opcode, u32 len, u32 sqpn)
{
	struct softrc_pkt p = ct_req(opcode, 7, len, false);

	p.qkey = QKEY;
	p.sqpn = sqpn;
	p.imm = 0x55667788;
	return p;
}

TEST(ud_send_one_packet_each_with_deth)
{
	struct ct t;
	int i;

	ud_init(&t);
	ASSERT_EQ(0, ud_post(&t, SOFTRC_WR_SEND, 1024, SIG, 9, 0x777));
	ASSERT_EQ(1, ud_post(&t, SOFTRC_WR_SEND_WITH_IMM, 0, SIG, 10, 0x778));
	ASSERT_EQ(2, ud_post(&t, SOFTRC_WR_SEND, 100, 0, 11, 0x779));
	EXPECT_EQ(3, softrc_eng_tx(&t.qp, 0, 64));
	ASSERT_EQ(3, t.ntx);
	EXPECT_EQ(SOFTRC_OP_UD_SEND_ONLY, t.tx[0].opcode);
	EXPECT_EQ(SOFTRC_OP_UD_SEND_ONLY_WITH_IMMEDIATE, t.tx[1].opcode);
	EXPECT_EQ(0x11223344, t.tx[1].imm);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(9 + i, t.tx[i].dqpn);
		EXPECT_EQ(0x777 + i, t.tx[i].qkey);
		EXPECT_EQ(MYQPN, t.tx[i].sqpn);
		EXPECT_EQ(1000 + i, t.tx[i].psn);	/* counts, never checked */
		EXPECT_FALSE(t.tx[i].ackreq);
		EXPECT_EQ(SOFTRC_BUF_SEND_WQE, t.txpl[i].kind);
		EXPECT_EQ(i, t.txpl[i].slot);
	}
	EXPECT_EQ(1024, t.tx[0].payload_len);
	/* completed at transmit, the unsignaled one silently; no timer */
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_SEND, t.cqe[0].opcode);
	EXPECT_EQ(1024, t.cqe[0].byte_len);
	EXPECT_EQ(0x101, t.cqe[1].wr_id);
	EXPECT_EQ(0, t.qp.req.deadline[SOFTRC_TIMER_RETRY]);
	EXPECT_TRUE(softrc_eng_idle(&t.qp));
}

/* IBTA §10.2.4: a WR Q_Key with bit 31 set means the QP's own Q_Key. */
TEST(ud_controlled_qkey_uses_the_qps)
{
	struct ct t;

	ud_init(&t);
	ASSERT_LE(0, ud_post(&t, SOFTRC_WR_SEND, 8, SIG, 9, 0x80000000));
	ASSERT_LE(0, ud_post(&t, SOFTRC_WR_SEND, 8, SIG, 9, 0x7fffffff));
	softrc_eng_tx(&t.qp, 0, 64);
	ASSERT_EQ(2, t.ntx);
	EXPECT_EQ(QKEY, t.tx[0].qkey);
	EXPECT_EQ(0x7fffffff, t.tx[1].qkey);
}

/* Above the path MTU: a local length error in SQ order, then ERROR. */
TEST(ud_send_above_pmtu_is_local_length_error)
{
	struct ct t;

	ud_init(&t);
	ASSERT_LE(0, ud_post(&t, SOFTRC_WR_SEND, 1024, SIG, 9, 1));
	ASSERT_LE(0, ud_post(&t, SOFTRC_WR_SEND, 1025, 0, 9, 1));
	ASSERT_LE(0, ud_post(&t, SOFTRC_WR_SEND, 1, SIG, 9, 1));
	softrc_eng_tx(&t.qp, 0, 64);
	EXPECT_EQ(1, t.ntx);
	ASSERT_EQ(3, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_LOC_LEN_ERR, t.cqe[1].status);
	EXPECT_EQ(0x101, t.cqe[1].wr_id);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[2].status);
	EXPECT_EQ(SOFTRC_QPS_ERROR, t.qp.state);
	EXPECT_TRUE(t.errored);
}

TEST(ud_send_memory_gone_is_local_protection_error)
{
	struct ct t;

	ud_init(&t);
	t.gather_fail = true;
	ASSERT_LE(0, ud_post(&t, SOFTRC_WR_SEND, 64, 0, 9, 1));
	softrc_eng_tx(&t.qp, 0, 64);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOC_PROT_ERR, t.cqe[0].status);
	EXPECT_EQ(1, t.qp.cnt.mem_errors);
	EXPECT_EQ(SOFTRC_QPS_ERROR, t.qp.state);
}

/* UD takes SENDs only: no RDMA, atomics or local operations. */
TEST(ud_post_only_sends)
{
	static const u8 bad[] = {
		SOFTRC_WR_RDMA_WRITE, SOFTRC_WR_RDMA_READ,
		SOFTRC_WR_ATOMIC_FETCH_AND_ADD, SOFTRC_WR_SEND_WITH_INV,
		SOFTRC_WR_LOCAL_INV, SOFTRC_WR_REG_MR,
	};
	struct ct t;
	size_t i;

	ud_init(&t);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		EXPECT_EQ(SOFTRC_E_INVAL, ud_post(&t, bad[i], 8, SIG, 9, 1));
	EXPECT_EQ(0, ud_post(&t, SOFTRC_WR_REFUSED, 0, SIG, 9, 1));
	t.local_fail = SOFTRC_WC_LOC_QP_OP_ERR;
	softrc_eng_tx(&t.qp, 0, 64);
	EXPECT_EQ(0, t.ntx);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOC_QP_OP_ERR, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_QPS_ERROR, t.qp.state);
}

/* SQD: nothing starts (a UD message is never in flight half-way). */
TEST(ud_sq_drain_stops_sending)
{
	struct ct t;

	ud_init(&t);
	ASSERT_LE(0, ud_post(&t, SOFTRC_WR_SEND, 8, SIG, 9, 1));
	softrc_eng_sq_drain(&t.qp, true);
	EXPECT_TRUE(softrc_eng_sq_drained(&t.qp));
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 0, 64));
	EXPECT_EQ(0, t.ntx);
	softrc_eng_sq_drain(&t.qp, false);
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 0, 64));
	EXPECT_EQ(1, t.ntx);
}

/*
 * A UD receive completion hands back the receive context of the packet
 * that completed it (the driver reads the packet's IP family and VLAN
 * there) and says whether it was solicited.
 */
TEST(ud_receive_completion_carries_rx_and_se)
{
	struct softrc_pkt p = ud_pkt(SOFTRC_OP_UD_SEND_ONLY, 16, 0x99);
	static u8 rx_a[64], rx_b[64];
	struct ct t;

	ud_init(&t);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 40 + 64));
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 2, 40 + 64));
	p.se = true;
	softrc_eng_rx(&t.qp, &p, rx_a, 0);
	p.se = false;
	softrc_eng_rx(&t.qp, &p, rx_b, 0);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_TRUE(t.cqe[0].rx == rx_a);
	EXPECT_TRUE(t.cqe[0].flags & SOFTRC_CQE_SOLICITED);
	EXPECT_TRUE(t.cqe[1].rx == rx_b);
	EXPECT_FALSE(t.cqe[1].flags & SOFTRC_CQE_SOLICITED);
}

TEST(ud_receive_grh_then_payload)
{
	struct softrc_pkt p = ud_pkt(SOFTRC_OP_UD_SEND_ONLY_WITH_IMMEDIATE,
				     200, 0x99);
	struct ct t;

	ud_init(&t);
	ASSERT_EQ(0, softrc_eng_post_recv(&t.qp, 0xa0, 40 + 200));
	ct_rx(&t, &p, 0);
	ASSERT_EQ(2, t.nplace);
	EXPECT_EQ(CT_GRH_OFF, t.place[0].pkt_off);
	EXPECT_EQ(SOFTRC_BUF_RECV_WQE, t.place[0].dst.kind);
	EXPECT_EQ(0, t.place[0].dst.addr);
	EXPECT_EQ(SOFTRC_GRH_BYTES, t.place[0].dst.len);
	EXPECT_EQ(SOFTRC_GRH_BYTES, t.place[1].dst.addr);
	EXPECT_EQ(200, t.place[1].dst.len);
	EXPECT_EQ(p.payload_off, t.place[1].pkt_off);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(0xa0, t.cqe[0].wr_id);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_RECV, t.cqe[0].opcode);
	EXPECT_EQ(240, t.cqe[0].byte_len);
	EXPECT_EQ(SOFTRC_CQE_RECV | SOFTRC_CQE_GRH | SOFTRC_CQE_WITH_IMM,
		  t.cqe[0].flags);
	EXPECT_EQ(0x55667788, t.cqe[0].imm);
	EXPECT_EQ(0x99, t.cqe[0].src_qp);
	/* no ACK, ever */
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(0, t.ntx);
}

/* Empty: the GRH alone, 40 bytes. Any PSN: UD checks none. */
TEST(ud_receive_empty_and_any_psn)
{
	struct softrc_pkt p = ud_pkt(SOFTRC_OP_UD_SEND_ONLY, 0, 3);
	struct ct t;
	int i;

	ud_init(&t);
	for (i = 0; i < 3; i++)
		ASSERT_LE(0, softrc_eng_post_recv(&t.qp, i, 40));
	for (i = 0; i < 3; i++) {
		p.psn = 0xffffff - i * 1000;
		ct_rx(&t, &p, 0);
	}
	ASSERT_EQ(3, t.ncqe);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(i, t.cqe[i].wr_id);
		EXPECT_EQ(40, t.cqe[i].byte_len);
		EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[i].status);
	}
	EXPECT_EQ(3, t.nplace);	/* GRH slots only */
}

/* No receive WQE: dropped and counted, no RNR NAK. */
TEST(ud_receive_without_wqe_dropped)
{
	struct softrc_pkt p = ud_pkt(SOFTRC_OP_UD_SEND_ONLY, 8, 3);
	struct ct t;

	ud_init(&t);
	ct_rx(&t, &p, 0);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(0, t.ncqe);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(1, t.qp.cnt.drop_no_recv);
	EXPECT_EQ(SOFTRC_QPS_RTS, t.qp.state);
}

/* Too small a WQE: local length error on it, the QP stays usable. */
TEST(ud_receive_too_big_for_wqe)
{
	struct softrc_pkt p = ud_pkt(SOFTRC_OP_UD_SEND_ONLY, 100, 3);
	struct ct t;

	ud_init(&t);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 40 + 99));
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 2, 40 + 100));
	ct_rx(&t, &p, 0);
	ct_rx(&t, &p, 0);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOC_LEN_ERR, t.cqe[0].status);
	EXPECT_EQ(1, t.cqe[0].wr_id);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, t.cqe[1].status);
	EXPECT_EQ(140, t.cqe[1].byte_len);
	EXPECT_EQ(1, t.qp.cnt.ud_len_errors);
	EXPECT_EQ(SOFTRC_QPS_RTS, t.qp.state);
	EXPECT_EQ(2, t.nplace);	/* nothing placed for the failed one */
}

TEST(ud_receive_memory_gone)
{
	struct softrc_pkt p = ud_pkt(SOFTRC_OP_UD_SEND_ONLY, 100, 3);
	struct ct t;

	ud_init(&t);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 4096));
	t.place_fail = true;
	ct_rx(&t, &p, 0);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_LOC_PROT_ERR, t.cqe[0].status);
	EXPECT_EQ(0, t.cqe[0].flags & SOFTRC_CQE_GRH);
	EXPECT_EQ(1, t.qp.cnt.mem_errors);
}

/* ERROR: receives are dropped, the RQ was flushed. */
TEST(ud_error_flushes_and_drops)
{
	struct softrc_pkt p = ud_pkt(SOFTRC_OP_UD_SEND_ONLY, 8, 3);
	struct ct t;

	ud_init(&t);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 4096));
	ASSERT_LE(0, ud_post(&t, SOFTRC_WR_SEND, 8, 0, 9, 1));
	softrc_eng_set_error(&t.qp);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[1].status);
	ct_rx(&t, &p, 0);
	EXPECT_EQ(2, t.ncqe);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 0, 64));
	EXPECT_EQ(0, t.ntx);
}

/* A UD packet reaches only a UD QP, an RC one only an RC QP. */
TEST(ud_parse_transport_must_match)
{
	struct softrc_pkt in = ud_pkt(SOFTRC_OP_UD_SEND_ONLY_WITH_IMMEDIATE,
				      300, 0xabcdef);
	struct softrc_pkt rc = ct_req(SOFTRC_OP_SEND_ONLY, 7, 8, false);
	struct softrc_pkt out;
	u8 buf[512];
	u32 hl, len;

	in.op = softrc_opcode_get(in.opcode);
	in.dqpn = 0x77;
	in.pkey = 0xffff;
	hl = softrc_eng_build_hdrs(&in, buf);
	ASSERT_EQ(SOFTRC_BTH_BYTES + SOFTRC_DETH_BYTES + SOFTRC_IMMDT_BYTES, hl);
	len = hl + 300 + SOFTRC_ICRC_BYTES;
	memset(buf + hl, 0, 300 + SOFTRC_ICRC_BYTES);
	ASSERT_EQ(SOFTRC_PARSE_OK, softrc_eng_parse_qp(buf, hl, len, 4096,
						       SOFTRC_OPCODE_UD, &out));
	EXPECT_EQ(QKEY, out.qkey);
	EXPECT_EQ(0xabcdef, out.sqpn);
	EXPECT_EQ(0x55667788, out.imm);
	EXPECT_EQ(hl, out.payload_off);
	EXPECT_EQ(300, out.payload_len);
	EXPECT_EQ(SOFTRC_PARSE_BAD_TRANSPORT, softrc_parse(buf, hl, len, 4096,
							   &out));
	/* above the MTU the receiver allows */
	EXPECT_EQ(SOFTRC_PARSE_PAYLOAD_GT_PMTU,
		  softrc_eng_parse_qp(buf, hl, len, 256, SOFTRC_OPCODE_UD, &out));
	/* the source QP's reserved top byte is not part of the number */
	buf[SOFTRC_BTH_BYTES + 4] = 0xff;
	ASSERT_EQ(SOFTRC_PARSE_OK, softrc_eng_parse_qp(buf, hl, len, 4096,
						       SOFTRC_OPCODE_UD, &out));
	EXPECT_EQ(0xabcdef, out.sqpn);

	rc.op = softrc_opcode_get(rc.opcode);
	hl = softrc_eng_build_hdrs(&rc, buf);
	len = hl + 8 + SOFTRC_ICRC_BYTES;
	EXPECT_EQ(SOFTRC_PARSE_BAD_TRANSPORT,
		  softrc_eng_parse_qp(buf, hl, len, 4096, SOFTRC_OPCODE_UD, &out));
	EXPECT_EQ(SOFTRC_PARSE_OK, softrc_parse(buf, hl, len, 4096, &out));
}

TEST(ud_init_rejects_unknown_transport)
{
	struct softrc_eng_attr a;
	struct softrc_eng_qp qp;
	struct softrc_eng_send_wqe sq[4];
	struct softrc_eng_recv_wqe rq[4];
	struct softrc_eng_storage st = {
		.sq = sq, .sq_depth = 4, .rq = rq, .rq_depth = 4,
	};

	ct_attr_default(&a);
	a.transport = 0x40;	/* RD: not spoken */
	a.max_rd_atomic = 0;
	EXPECT_EQ(SOFTRC_E_INVAL, softrc_eng_init(&qp, NULL, NULL, &a, &st));
	a.transport = SOFTRC_OPCODE_UD;
	EXPECT_EQ(0, softrc_eng_init(&qp, NULL, NULL, &a, &st));
}

TEST_HARNESS_MAIN

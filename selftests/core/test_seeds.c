// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Worked examples of the RC rules (IBTA Vol 1 §9.7; Documentation/
 * softrc.rst, "The protocol core") replayed step by step on the
 * simulator or on a hand-driven QP, asserting each step's observable.
 *
 * Context: host user space only.
 */
#include "kselftest_harness.h"
#include "sim.h"
#include "coretest.h"

/* EXPECT_EQ(literal, unsigned field) throughout */
#pragma GCC diagnostic ignored "-Wsign-compare"

#define RKEY1	0x200u
#define ACCESS_ALL (SOFTRC_ACCESS_REMOTE_WRITE | SOFTRC_ACCESS_REMOTE_READ | \
		    SOFTRC_ACCESS_REMOTE_ATOMIC)

static void seed_sim(struct sim *sim, u32 pmtu, u32 sq_psn, u8 timeout)
{
	struct softrc_eng_attr a;

	ct_attr_default(&a);
	a.pmtu = pmtu;
	a.sq_psn = sq_psn;
	a.rq_psn = 500;
	a.timeout = timeout;
	a.no_credits = true;
	sim_init(sim, &a, 1 << 20, 1);
	sim_add_mr(sim, 0, 0x100, 0, 1 << 20, ACCESS_ALL);
	sim_add_mr(sim, 1, RKEY1, 0, 1 << 20, ACCESS_ALL);
	sim->trace_on = true;
}

static int trace_count(const struct sim *sim, int src, u8 opcode, u32 from)
{
	int n = 0;
	u32 i;

	for (i = from; i < sim->ntrace; i++)
		n += sim->trace[i].src == src && sim->trace[i].pkt.opcode == opcode;
	return n;
}

static const struct sim_trace *trace_at(const struct sim *sim, int src, u32 k)
{
	u32 i;

	for (i = 0; i < sim->ntrace; i++)
		if (sim->trace[i].src == src && !k--)
			return &sim->trace[i];
	return NULL;
}

static int send_cqes(const struct sim_ep *ep)
{
	int n = 0;
	u32 i;

	for (i = 0; i < ep->ncqe; i++)
		n += !(ep->cqe[i].c.flags & SOFTRC_CQE_RECV);
	return n;
}

static int recv_cqes(const struct sim_ep *ep)
{
	return ep->ncqe - send_cqes(ep);
}

static struct softrc_eng_send_wr wr_of(u64 id, u8 op, u32 len, u64 raddr)
{
	struct softrc_eng_send_wr wr = {
		.wr_id = id, .opcode = op, .length = len, .rkey = RKEY1,
		.remote_addr = raddr, .send_flags = SOFTRC_SEND_SIGNALED,
	};

	return wr;
}

/* drop the READ's first responses and the early ACK (MSN 2) */
static bool seed000_filter(struct sim *sim, int src, const struct softrc_pkt *pkt,
			   void *arg)
{
	int *dropped = arg;

	if (src != 1)
		return false;
	if (softrc_pkt_has(pkt, SOFTRC_OPF_READ) && *dropped < 2) {
		++*dropped;
		return true;
	}
	return pkt->opcode == SOFTRC_OP_ACKNOWLEDGE && pkt->msn == 2;
}

/*
 * Lost READ responses, implied NAK (softrc.rst, "Protocol decisions"),
 * all 11 steps: SEND, SEND, READ (8 KiB), SEND; the READ's
 * response is lost; the ACK with MSN 4 retires exactly two WRs; implied
 * NAK; go-back-N from 102; duplicates not re-executed; MSN stays 4; the
 * READ and the SEND behind it complete in one burst.
 */
TEST(seed000_lost_read_response_msn4)
{
	struct sim sim;
	struct sim_ep *a = &sim.ep[0], *b = &sim.ep[1];
	struct softrc_eng_send_wr wr;
	const struct sim_trace *tr;
	int dropped = 0, i;

	seed_sim(&sim, 4096, 100, 14);
	sim.filter = seed000_filter;
	sim.filter_arg = &dropped;
	memset(b->mem + 0x1000, 0xab, 8192);
	for (i = 0; i < 3; i++)
		ASSERT_LE(0, sim_post_recv(&sim, 1, i, 256, 0x10000 + i * 256));
	memset(a->mem, 0x11, 256);
	wr = wr_of(0, SOFTRC_WR_SEND, 64, 0);
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
	wr = wr_of(1, SOFTRC_WR_SEND, 64, 0);
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 64));
	wr = wr_of(2, SOFTRC_WR_RDMA_READ, 8192, sim_va(&sim, 1, RKEY1, 0x1000));
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0x4000));
	wr = wr_of(3, SOFTRC_WR_SEND, 64, 0);
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 128));

	/* 1-2: SSNs in post order; the READ reserves 102 and 103 */
	sim_kick(&sim);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(i + 1, a->sq[i].ssn);
	EXPECT_EQ(2, a->sq[2].npkts);
	ASSERT_EQ(4, sim.ntrace);
	EXPECT_EQ(100, trace_at(&sim, 0, 0)->pkt.psn);
	EXPECT_EQ(101, trace_at(&sim, 0, 1)->pkt.psn);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_REQUEST, trace_at(&sim, 0, 2)->pkt.opcode);
	EXPECT_EQ(102, trace_at(&sim, 0, 2)->pkt.psn);
	EXPECT_EQ(104, trace_at(&sim, 0, 3)->pkt.psn);

	/* 3: executed in order, READ counted at validation: MSN 4 */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(4, b->qp.resp.msn);
	EXPECT_EQ(105, b->qp.resp.epsn);
	EXPECT_EQ(3, recv_cqes(b));
	/* 4-5: both READ responses lost; the ACK for 104 carries MSN 4 */
	EXPECT_EQ(2, dropped);
	tr = trace_at(&sim, 1, 3);
	ASSERT_NE(NULL, tr);
	EXPECT_EQ(SOFTRC_OP_ACKNOWLEDGE, tr->pkt.opcode);
	EXPECT_EQ(104, tr->pkt.psn);
	EXPECT_EQ(4, tr->pkt.msn);
	EXPECT_FALSE(tr->dropped);

	/* 6: that ACK retires exactly two WRs; 7: implied NAK */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(2, send_cqes(a));
	EXPECT_EQ(0, a->cqe[0].c.wr_id);
	EXPECT_EQ(1, a->cqe[1].c.wr_id);
	EXPECT_EQ(1, a->qp.cnt.implied_naks);
	EXPECT_EQ(6, a->qp.req.retry_left);
	/* 8: go-back-N from 102: the READ and the SEND behind it */
	EXPECT_EQ(2, a->qp.cnt.retransmits);
	tr = &sim.trace[sim.ntrace - 2];
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_REQUEST, tr->pkt.opcode);
	EXPECT_EQ(102, tr->pkt.psn);
	EXPECT_EQ(104, sim.trace[sim.ntrace - 1].pkt.psn);

	/* 9: duplicates: SEND not delivered twice, READ answered, MSN 4 */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(3, recv_cqes(b));
	EXPECT_EQ(2, b->qp.cnt.dup_requests);
	EXPECT_EQ(1, b->qp.cnt.dup_reads);
	EXPECT_EQ(4, b->qp.resp.msn);
	/* 10: response first, then the repeated ACK for 104 */
	tr = &sim.trace[sim.ntrace - 1];
	EXPECT_EQ(SOFTRC_OP_ACKNOWLEDGE, tr->pkt.opcode);
	EXPECT_EQ(104, tr->pkt.psn);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_LAST, sim.trace[sim.ntrace - 2].pkt.opcode);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, sim.trace[sim.ntrace - 3].pkt.opcode);

	/* 11: the READ and SSN 4 retire together: two CQEs in one burst */
	ASSERT_TRUE(sim_step(&sim));
	ASSERT_EQ(4, send_cqes(a));
	EXPECT_EQ(2, a->cqe[2].c.wr_id);
	EXPECT_EQ(SOFTRC_WC_RDMA_READ, a->cqe[2].c.opcode);
	EXPECT_EQ(8192, a->cqe[2].c.byte_len);
	EXPECT_EQ(3, a->cqe[3].c.wr_id);
	EXPECT_EQ(a->cqe[2].t, a->cqe[3].t);
	EXPECT_EQ(0, memcmp(a->mem + 0x4000, b->mem + 0x1000, 8192));
	EXPECT_TRUE(softrc_eng_idle(&a->qp) || a->qp.req.head == a->qp.req.tail);
	EXPECT_EQ(a->qp.req.una, a->qp.req.psn_next);
	ASSERT_TRUE(sim_run(&sim, 1ull << 40));
	EXPECT_EQ(4, send_cqes(a));
	EXPECT_EQ(0, sim.violations);
	sim_free(&sim);
}

/* IBTA §9.7.7.1.1's other example: one ACK with MSN 3 retires 3 SENDs. */
TEST(seed000_one_ack_retires_three_sends)
{
	struct ct t;
	int i;

	ct_init(&t, NULL);
	for (i = 0; i < 3; i++)
		ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SOFTRC_SEND_SIGNALED));
	EXPECT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	struct softrc_pkt ack = ct_ack(1002, SOFTRC_AETH_ACK | 31, 3);

	ct_rx(&t, &ack, 10);
	ASSERT_EQ(3, t.ncqe);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0x100 + i, t.cqe[i].wr_id);
	EXPECT_EQ(0, t.deadline[SOFTRC_TIMER_RETRY]);
}

static bool drop_psn_once(struct sim *sim, int src, const struct softrc_pkt *pkt,
			  void *arg)
{
	int *psn = arg;

	if (src == 0 && *psn >= 0 && pkt->psn == (u32)*psn) {
		*psn = -1;
		return true;
	}
	return false;
}

/*
 * Go-back-N (softrc.rst, "The protocol core"): a 16 KiB WRITE at 4 KiB
 * MTU loses PSN 1001; one NAK names 1001, 1002 and 1003 are dropped,
 * 1001..1003 are resent, one ACK for 1003 retires everything.
 */
TEST(seed002_write_loses_1001_go_back_n)
{
	struct sim sim;
	struct sim_ep *a = &sim.ep[0], *b = &sim.ep[1];
	struct softrc_eng_send_wr wr;
	const struct sim_trace *tr;
	int psn = 1001;
	u32 i;

	seed_sim(&sim, 4096, 1000, 14);
	sim.filter = drop_psn_once;
	sim.filter_arg = &psn;
	for (i = 0; i < 16384; i++)
		a->mem[i] = i * 7;
	wr = wr_of(9, SOFTRC_WR_RDMA_WRITE, 16384, sim_va(&sim, 1, RKEY1, 0x8000));
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
	/* 1: four packets, the timer watches the oldest */
	sim_kick(&sim);
	ASSERT_EQ(4, sim.ntrace);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(1000 + i, sim.trace[i].pkt.psn);
		EXPECT_EQ(i == 3, sim.trace[i].pkt.ackreq);
	}
	EXPECT_TRUE(sim.trace[1].dropped);
	EXPECT_NE(0, a->deadline[SOFTRC_TIMER_RETRY]);
	/* 2-6: 1000 accepted; 1002 draws one NAK naming 1001; 1003 dropped */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(1001, b->qp.resp.epsn);
	EXPECT_EQ(1, b->qp.cnt.seq_naks_sent);
	EXPECT_EQ(2, b->qp.cnt.drop_out_of_seq);
	ASSERT_EQ(5, sim.ntrace);
	tr = &sim.trace[4];
	EXPECT_EQ(SOFTRC_OP_ACKNOWLEDGE, tr->pkt.opcode);
	EXPECT_EQ(SOFTRC_AETH_NAK | SOFTRC_NAK_PSN_SEQ_ERR, tr->pkt.syndrome);
	EXPECT_EQ(1001, tr->pkt.psn);
	/* 7-9: the NAK spends a retry; 1001..1003 resent back to back */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(1, a->qp.cnt.seq_naks_rcvd);
	EXPECT_EQ(6, a->qp.req.retry_left);
	EXPECT_EQ(3, a->qp.cnt.retransmits);
	ASSERT_EQ(8, sim.ntrace);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(1001 + i, sim.trace[5 + i].pkt.psn);
		EXPECT_EQ(sim.trace[1 + i].pkt.opcode, sim.trace[5 + i].pkt.opcode);
	}
	/* 10: placed in order through the reassembly context */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(16384, b->placed);
	EXPECT_EQ(0, memcmp(b->mem + 0x8000, a->mem, 16384));
	/* 11: one ACK for 1003 retires it and disarms the timer */
	EXPECT_EQ(1, b->qp.cnt.acks_sent);
	EXPECT_EQ(1003, sim.trace[sim.ntrace - 1].pkt.psn);
	ASSERT_TRUE(sim_step(&sim));
	ASSERT_EQ(1, send_cqes(a));
	EXPECT_EQ(SOFTRC_WC_SUCCESS, a->cqe[0].c.status);
	EXPECT_EQ(0, a->deadline[SOFTRC_TIMER_RETRY]);
	EXPECT_EQ(7, a->qp.req.retry_left);
	EXPECT_EQ(0, sim.violations);
	sim_free(&sim);
}

static bool drop_first_ack(struct sim *sim, int src, const struct softrc_pkt *pkt,
			   void *arg)
{
	int *n = arg;

	if (src == 1 && pkt->opcode == SOFTRC_OP_ACKNOWLEDGE && !(*n)++)
		return true;
	return false;
}

/* Lost ACK: timeout (§9.7.6.1.3), resend from the oldest PSN, duplicate. */
TEST(seed002_lost_ack_timeout)
{
	struct sim sim;
	struct sim_ep *a = &sim.ep[0], *b = &sim.ep[1];
	struct softrc_eng_send_wr wr;
	u64 deadline;
	int n = 0;

	seed_sim(&sim, 4096, 1000, 10);
	sim.filter = drop_first_ack;
	sim.filter_arg = &n;
	wr = wr_of(1, SOFTRC_WR_RDMA_WRITE, 2000, sim_va(&sim, 1, RKEY1, 0));
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
	/* 1: one packet, timer armed at 4.096 us * 2^10 */
	sim_kick(&sim);
	deadline = a->deadline[SOFTRC_TIMER_RETRY];
	EXPECT_EQ(4096ull << 10, deadline);
	/* 2-3: placed, the ACK lost */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(2000, b->placed);
	EXPECT_EQ(1001, b->qp.resp.epsn);
	EXPECT_TRUE(sim.trace[1].dropped);
	/* 4-5: timeout; retry count drops; 1000 rebuilt */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(deadline, sim.now);
	EXPECT_EQ(1, a->qp.cnt.timeouts);
	EXPECT_EQ(6, a->qp.req.retry_left);
	ASSERT_EQ(3, sim.ntrace);
	EXPECT_EQ(1000, sim.trace[2].pkt.psn);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_ONLY, sim.trace[2].pkt.opcode);
	/* 6: duplicate: not placed again, ACK sent again */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(2000, b->placed);
	EXPECT_EQ(1, b->qp.cnt.dup_requests);
	EXPECT_EQ(1000, sim.trace[3].pkt.psn);
	EXPECT_FALSE(sim.trace[3].dropped);
	/* 7: retired, timer disarmed */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(1, send_cqes(a));
	EXPECT_EQ(0, a->deadline[SOFTRC_TIMER_RETRY]);
	sim_free(&sim);
}

/* Retry count exhausted (§9.7.6.1.3): QP to ERROR. */
TEST(seed002_retry_exhausted_error)
{
	struct softrc_eng_attr attr;
	struct ct t;
	int i;

	ct_attr_default(&attr);
	attr.retry_cnt = 2;
	ct_init(&t, &attr);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 100, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 100, 0));
	softrc_eng_tx(&t.qp, 0, 100);
	for (i = 0; i < 3; i++) {
		u64 d = t.deadline[SOFTRC_TIMER_RETRY];

		ASSERT_NE(0, d);
		softrc_eng_timer(&t.qp, SOFTRC_TIMER_RETRY, d);
		softrc_eng_tx(&t.qp, d, 100);
	}
	EXPECT_EQ(2 + 2 * 2, t.ntx);
	EXPECT_TRUE(t.errored);
	ASSERT_EQ(2, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_RETRY_EXC_ERR, t.cqe[0].status);
	EXPECT_EQ(SOFTRC_WC_WR_FLUSH_ERR, t.cqe[1].status);
	EXPECT_EQ(1, t.qp.cnt.retry_exceeded);
	EXPECT_EQ(3, t.qp.cnt.timeouts);
}

/* A 12 KiB WRITE at 4 KiB MTU in three packets (§9.4). */
TEST(seed003_write_12k_three_packets)
{
	struct sim sim;
	struct sim_ep *a = &sim.ep[0], *b = &sim.ep[1];
	struct softrc_eng_send_wr wr;
	u64 va;
	u32 i;

	seed_sim(&sim, 4096, 1000, 14);
	for (i = 0; i < 12288; i++)
		a->mem[i] = i * 13 + 1;
	va = sim_va(&sim, 1, RKEY1, 0x20000);
	wr = wr_of(5, SOFTRC_WR_RDMA_WRITE, 12288, va);
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
	wr = wr_of(6, SOFTRC_WR_RDMA_WRITE, 8, va + 12288);
	wr.send_flags = 0;	/* step 10: only a signaled WR completes */
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
	sim_kick(&sim);
	/* 2-4: RETH only on FIRST, with the whole length */
	ASSERT_EQ(4, sim.ntrace);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_FIRST, sim.trace[0].pkt.opcode);
	EXPECT_EQ(va, sim.trace[0].pkt.va);
	EXPECT_EQ(12288, sim.trace[0].pkt.dma_len);
	EXPECT_EQ(RKEY1, sim.trace[0].pkt.rkey);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_MIDDLE, sim.trace[1].pkt.opcode);
	EXPECT_FALSE(softrc_pkt_has(&sim.trace[1].pkt, SOFTRC_H_RETH));
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_LAST, sim.trace[2].pkt.opcode);
	EXPECT_FALSE(softrc_pkt_has(&sim.trace[2].pkt, SOFTRC_H_RETH));
	EXPECT_TRUE(sim.trace[2].pkt.ackreq);
	EXPECT_EQ(1002, sim.trace[2].pkt.psn);
	/* 5-8: placed through the context; no receive WQE, no CQE there */
	ASSERT_TRUE(sim_step(&sim));
	EXPECT_EQ(12288 + 8, b->placed);
	EXPECT_EQ(0, memcmp(b->mem + 0x20000, a->mem, 12288));
	EXPECT_EQ(0, b->ncqe);
	EXPECT_EQ(SOFTRC_RESP_IDLE, b->qp.resp.state);
	/* 9: one (coalesced) ACK for the burst */
	EXPECT_EQ(1, trace_count(&sim, 1, SOFTRC_OP_ACKNOWLEDGE, 0));
	EXPECT_EQ(1003, sim.trace[4].pkt.psn);
	EXPECT_EQ(2, sim.trace[4].pkt.msn);
	/* 10: one CQE, for the signaled WR only */
	ASSERT_TRUE(sim_step(&sim));
	ASSERT_EQ(1, a->ncqe);
	EXPECT_EQ(5, a->cqe[0].c.wr_id);
	EXPECT_EQ(SOFTRC_WC_RDMA_WRITE, a->cqe[0].c.opcode);
	EXPECT_EQ(a->qp.req.head, a->qp.req.tail);
	sim_free(&sim);
}

/* PSN wrap-around arithmetic and a run across the wrap (§9.7.2). */
TEST(seed004_q1_psn_wrap)
{
	struct sim sim;
	struct softrc_eng_send_wr wr;
	int i;

	EXPECT_EQ(0x000054, softrc_psn_add(0xfffff0, 100));
	EXPECT_TRUE(softrc_psn_gt(0x000005, 0xffffff));
	EXPECT_EQ(6, softrc_psn_diff(0x000005, 0xffffff));
	EXPECT_EQ(SOFTRC_PSN_FUTURE, softrc_psn_classify(0x000005, 0xffffff));
	EXPECT_EQ(SOFTRC_PSN_DUPLICATE, softrc_psn_classify(0xffffff, 0x000005));

	seed_sim(&sim, 256, 0xfffff0, 14);
	for (i = 0; i < 100; i++)
		ASSERT_LE(0, sim_post_recv(&sim, 1, i, 64, 0x1000 + 64 * i));
	for (i = 0; i < 100; i++) {
		wr = wr_of(i, SOFTRC_WR_SEND, 16, 0);
		ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 16 * i));
	}
	ASSERT_TRUE(sim_run(&sim, 1ull << 40));
	EXPECT_EQ(0x000054, sim.ep[0].qp.req.psn_next);
	EXPECT_EQ(0x000054, sim.ep[1].qp.resp.epsn);
	EXPECT_EQ(100, send_cqes(&sim.ep[0]));
	EXPECT_EQ(100, recv_cqes(&sim.ep[1]));
	EXPECT_EQ(0, sim.violations);
	sim_free(&sim);
}

/* 10 KB WRITE at 4 KB MTU: FIRST+RETH, MIDDLE, LAST+AckReq (§9.4). */
TEST(seed004_q2_write_10k_fragmentation)
{
	struct ct t;

	ct_init(&t, NULL);
	t.qp.attr.pmtu = 4096;
	t.qp.attr.max_unacked = 128;
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 10240,
			     SOFTRC_SEND_SIGNALED));
	ASSERT_EQ(3, softrc_eng_tx(&t.qp, 0, 100));
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_FIRST, t.tx[0].opcode);
	EXPECT_EQ(10240, t.tx[0].dma_len);
	EXPECT_EQ(0x20000, t.tx[0].va);
	EXPECT_FALSE(t.tx[0].ackreq);
	EXPECT_EQ(4096, t.tx[0].payload_len);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_MIDDLE, t.tx[1].opcode);
	EXPECT_FALSE(t.tx[1].ackreq);
	EXPECT_EQ(4096, t.txpl[1].addr);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_LAST, t.tx[2].opcode);
	EXPECT_TRUE(t.tx[2].ackreq);
	EXPECT_EQ(2048, t.tx[2].payload_len);
	EXPECT_EQ(8192, t.txpl[2].addr);
}

/* SEND_ONLY 5000 and WRITE_ONLY_WITH_IMMEDIATE 5001, both AckReq; flush. */
static void rx_send_write_imm(struct ct *t)
{
	ct_rx_req(t, SOFTRC_OP_SEND_ONLY, 5000, 10, true, 0);
	ct_rx_req(t, SOFTRC_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 5001, 10, true, 10);
	softrc_eng_rx_flush(&t->qp);
}

/* SEND/WRITE duplicates are re-ACKed only (C9-105). */
TEST(seed004_dup_send_write_reacked_not_reexecuted)
{
	struct ct t;

	ct_init(&t, NULL);
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 1, 100));
	ASSERT_LE(0, softrc_eng_post_recv(&t.qp, 2, 100));
	rx_send_write_imm(&t);
	EXPECT_EQ(2, t.ncqe);
	EXPECT_EQ(2, t.nplace);
	EXPECT_EQ(1, t.ntx);
	EXPECT_EQ(5001, t.tx[0].psn);
	EXPECT_EQ(2, t.tx[0].msn);
	/* both again: no placement, no receive WQE, one ACK for 5001 */
	rx_send_write_imm(&t);
	EXPECT_EQ(2, t.ncqe);
	EXPECT_EQ(2, t.nplace);
	EXPECT_EQ(2, t.ntx);
	EXPECT_EQ(5001, t.tx[1].psn);
	EXPECT_EQ(2, t.tx[1].msn);
	EXPECT_EQ(2, t.qp.cnt.dup_requests);
	EXPECT_EQ(2, t.qp.resp.rq_head);
}

/* A duplicate READ re-reads memory from its own PSN ("Protocol decisions"). */
TEST(seed004_dup_read_rereads_from_dup_psn)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	p = ct_req(SOFTRC_OP_RDMA_READ_REQUEST, 5000, 0, true);
	p.dma_len = 3000;
	ct_rx(&t, &p, 0);
	ASSERT_EQ(3, t.ntx);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, t.tx[0].opcode);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_MIDDLE, t.tx[1].opcode);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_LAST, t.tx[2].opcode);
	EXPECT_EQ(1, t.tx[0].msn);	/* early increment */
	EXPECT_EQ(5003, t.qp.resp.epsn);
	/* the requester resends from the middle: 5001 for the last 1976 */
	p = ct_req(SOFTRC_OP_RDMA_READ_REQUEST, 5001, 0, true);
	p.va += 1024;
	p.dma_len = 1976;
	ct_rx(&t, &p, 0);
	ASSERT_EQ(5, t.ntx);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_FIRST, t.tx[3].opcode);
	EXPECT_EQ(5001, t.tx[3].psn);
	EXPECT_EQ(SOFTRC_BUF_MR, t.txpl[3].kind);
	EXPECT_EQ(0x10000 + 1024, t.txpl[3].addr);
	EXPECT_EQ(SOFTRC_OP_RDMA_READ_RESPONSE_LAST, t.tx[4].opcode);
	EXPECT_EQ(3000 - 2048, t.tx[4].payload_len);
	EXPECT_EQ(1, t.tx[4].msn);	/* duplicates never counted */
	EXPECT_EQ(1, t.qp.cnt.dup_reads);
}

/* A duplicate ATOMIC replays the saved value ("Protocol decisions"). */
TEST(seed004_dup_atomic_replays_saved_value)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	t.mem = 40;
	p = ct_req(SOFTRC_OP_FETCH_ADD, 5000, 0, true);
	p.swap_add = 2;
	ct_rx(&t, &p, 0);
	ct_rx(&t, &p, 0);
	EXPECT_EQ(1, t.natomic);
	EXPECT_EQ(42, t.mem);
	ASSERT_EQ(2, t.ntx);
	EXPECT_EQ(SOFTRC_OP_ATOMIC_ACKNOWLEDGE, t.tx[1].opcode);
	EXPECT_EQ(40, t.tx[0].orig);
	EXPECT_EQ(40, t.tx[1].orig);
	EXPECT_EQ(1, t.tx[1].msn);
	EXPECT_EQ(1, t.qp.cnt.dup_atomics);
}

/* A duplicate without its saved resource is dropped ("Protocol decisions"). */
TEST(seed004_dup_too_old_dropped)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	t.qp.resp.epsn = 5100;
	p = ct_req(SOFTRC_OP_COMPARE_SWAP, 5000, 0, true);
	ct_rx(&t, &p, 0);
	p = ct_req(SOFTRC_OP_RDMA_READ_REQUEST, 5001, 0, true);
	ct_rx(&t, &p, 0);
	EXPECT_EQ(0, t.ntx);
	EXPECT_EQ(2, t.qp.cnt.drop_too_old);
	EXPECT_EQ(0, t.natomic);
}

/* No receive WQE: RNR NAK, back-off (table 45), retry, success. */
TEST(seed004_rnr_wait_and_retry)
{
	struct sim sim;
	struct sim_ep *a = &sim.ep[0], *b = &sim.ep[1];
	struct softrc_eng_send_wr wr;

	seed_sim(&sim, 1024, 1000, 14);
	b->qp.attr.min_rnr_timer = 14;		/* 1.28 ms */
	wr = wr_of(3, SOFTRC_WR_SEND_WITH_IMM, 100, 0);
	wr.imm = 0x01020304;
	ASSERT_LE(0, sim_post_send(&sim, 0, &wr, 0));
	sim_post_recv_at(&sim, 1, 1000000, 77, 128, 0x4000);
	sim_kick(&sim);
	ASSERT_TRUE(sim_step(&sim));		/* arrives, no WQE */
	EXPECT_EQ(1, b->qp.cnt.rnr_naks_sent);
	EXPECT_EQ(SOFTRC_AETH_RNR_NAK | 14, sim.trace[1].pkt.syndrome);
	EXPECT_EQ(1000, sim.trace[1].pkt.psn);
	ASSERT_TRUE(sim_step(&sim));		/* RNR NAK at the requester */
	EXPECT_EQ(SOFTRC_REQ_RNR_WAIT, a->qp.req.state);
	EXPECT_EQ(sim.now + 1280000, a->deadline[SOFTRC_TIMER_RNR]);
	EXPECT_EQ(0, a->deadline[SOFTRC_TIMER_RETRY]);
	ASSERT_TRUE(sim_run(&sim, 1ull << 40));
	EXPECT_EQ(1, a->qp.cnt.rnr_naks_rcvd);
	EXPECT_EQ(1, a->qp.cnt.retransmits);
	ASSERT_EQ(1, a->ncqe);
	EXPECT_EQ(SOFTRC_WC_SUCCESS, a->cqe[0].c.status);
	ASSERT_EQ(1, b->ncqe);
	EXPECT_EQ(77, b->cqe[0].c.wr_id);
	EXPECT_EQ(0x01020304, b->cqe[0].c.imm);
	EXPECT_TRUE(b->cqe[0].c.flags & SOFTRC_CQE_WITH_IMM);
	sim_free(&sim);
}

/* rnr_retry exhausted: RNR_RETRY_EXC_ERR, QP in ERROR (table 45). */
TEST(seed004_rnr_retry_exhausted)
{
	struct softrc_eng_attr attr;
	struct softrc_pkt p;
	struct ct t;

	ct_attr_default(&attr);
	attr.rnr_retry = 1;
	ct_init(&t, &attr);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, SOFTRC_SEND_SIGNALED));
	softrc_eng_tx(&t.qp, 0, 10);
	p = ct_ack(1000, SOFTRC_AETH_RNR_NAK | 1, 0);
	ct_rx(&t, &p, 10);
	EXPECT_EQ(10 + 10000, t.deadline[SOFTRC_TIMER_RNR]);
	softrc_eng_timer(&t.qp, SOFTRC_TIMER_RNR, 10 + 10000);
	softrc_eng_tx(&t.qp, 10 + 10000, 10);
	EXPECT_EQ(2, t.ntx);
	ct_rx(&t, &p, 20000);
	ASSERT_EQ(1, t.ncqe);
	EXPECT_EQ(SOFTRC_WC_RNR_RETRY_EXC_ERR, t.cqe[0].status);
	EXPECT_TRUE(t.errored);
	EXPECT_EQ(1, t.qp.cnt.rnr_retry_exceeded);
}

/* Responder credits = free receive WQEs (table 44), or 31. */
TEST(seed004_credits_reported)
{
	struct ct t;
	struct softrc_pkt p;
	int i;

	ct_init(&t, NULL);
	for (i = 0; i < 7; i++)
		softrc_eng_post_recv(&t.qp, i, 64);
	p = ct_req(SOFTRC_OP_SEND_ONLY, 5000, 8, true);
	ct_rx(&t, &p, 0);
	softrc_eng_rx_flush(&t.qp);
	ASSERT_EQ(1, t.ntx);
	/* 6 WQEs left: code 5 (6 credits) */
	EXPECT_EQ(SOFTRC_AETH_ACK | 5, t.tx[0].syndrome);
	t.qp.attr.no_credits = true;
	p = ct_req(SOFTRC_OP_SEND_ONLY, 5001, 8, true);
	ct_rx(&t, &p, 0);
	softrc_eng_rx_flush(&t.qp);
	EXPECT_EQ(SOFTRC_AETH_ACK | 31, t.tx[1].syndrome);
}

/* SSN > LSN stops receive-consuming WRs; the probe ("The protocol core"). */
TEST(seed004_credits_limit_and_probe)
{
	struct ct t;
	struct softrc_pkt p;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 0, 10));
	/* ACK: MSN 1, zero credits: LSN = 1 */
	p = ct_ack(1000, SOFTRC_AETH_ACK | 0, 1);
	ct_rx(&t, &p, 5);
	EXPECT_TRUE(t.qp.req.credits_valid);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 3000, 0));
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_RDMA_WRITE, 10, 0));
	/* nothing in flight: a single-packet probe with AckReq, then wait */
	EXPECT_EQ(1, softrc_eng_tx(&t.qp, 5, 10));
	EXPECT_EQ(SOFTRC_OP_SEND_FIRST, t.tx[1].opcode);
	EXPECT_TRUE(t.tx[1].ackreq);
	EXPECT_EQ(1, t.qp.cnt.credit_probes);
	EXPECT_EQ(0, softrc_eng_tx(&t.qp, 5, 10));
	/* the probe's ACK grants 4 credits: the rest flows */
	p = ct_ack(1001, SOFTRC_AETH_ACK | 4, 1);
	ct_rx(&t, &p, 9);
	EXPECT_EQ(3, softrc_eng_tx(&t.qp, 9, 10));
	EXPECT_EQ(SOFTRC_OP_SEND_MIDDLE, t.tx[2].opcode);
	EXPECT_EQ(SOFTRC_OP_SEND_LAST, t.tx[3].opcode);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_ONLY, t.tx[4].opcode);
}

/* Credit field 31 (rxe) means unlimited (table 44). */
TEST(seed004_credits_31_unlimited)
{
	struct ct t;
	struct softrc_pkt p;
	int i;

	ct_init(&t, NULL);
	ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	softrc_eng_tx(&t.qp, 0, 10);
	p = ct_ack(1000, SOFTRC_AETH_ACK | 31, 1);
	ct_rx(&t, &p, 5);
	EXPECT_FALSE(t.qp.req.credits_valid);
	for (i = 0; i < 20; i++)
		ASSERT_LE(0, ct_post(&t, SOFTRC_WR_SEND, 10, 0));
	EXPECT_EQ(20, softrc_eng_tx(&t.qp, 5, 100));
	EXPECT_EQ(0, t.qp.cnt.credit_stalls);
}

TEST_HARNESS_MAIN

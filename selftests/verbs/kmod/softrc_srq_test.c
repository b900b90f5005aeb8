// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrc_srq_test: the SRQ limit event as a kernel ULP meets it, run once
 * at module load on the device named by `dev` (GID index `gid`): QP B
 * receives through an SRQ whose limit is armed; QP A's SEND consumes an
 * SRQ WQE, the limit is reached, and the SRQ's event handler posts a
 * SEND on QP B right away, as a ULP replenishing or answering would. The
 * handler must not run under QP B's lock (security review of 0d7acba,
 * H4): there its post would deadlock the CPU. Checks: one
 * IB_EVENT_SRQ_LIMIT_REACHED, the post from the handler succeeds and its
 * SEND arrives at A. Then ib_drain_qp() on QP B, as a ULP tears down an
 * SRQ QP: B enters ERROR, and its one IB_EVENT_QP_LAST_WQE_REACHED
 * (IBTA 11.6.3.1) must come, promptly: from 6.10 on the drain waits up to
 * 60 s for that event. KTAP lines in the kernel log; the load fails (-EIO)
 * if a check failed.
 *
 * Context: module init, process context; sleeps while polling.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "kmod_test.h"

static struct ib_device *ibdev;
static struct ib_pd *pd;

static struct ib_qp *qp_b;
static u8 *buf_b;
static atomic_t nevents = ATOMIC_INIT(0);
static atomic_t nlast = ATOMIC_INIT(0);
static int handler_post = -EINPROGRESS;

static int poll1(struct ib_cq *cq, struct ib_wc *wc)
{
	return kt_poll1(cq, wc, 10 * HZ);
}

/* RC to @dqpn, PSN 100 both ways, no remote access, no RDMA READ. */
static int to_rts(struct ib_qp *qp, u32 dqpn)
{
	struct kt_conn c = { .dqpn = dqpn, .psn = 100 };

	return kt_to_rts(qp, &c);
}

static int post_send(struct ib_qp *qp, u8 *buf, u64 wr_id)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = 64, .lkey = pd->local_dma_lkey,
	};
	struct ib_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IB_WR_SEND, .send_flags = IB_SEND_SIGNALED,
	};

	return ib_post_send(qp, &wr, NULL);
}

static int post_recv(struct ib_qp *qp, struct ib_srq *srq, u8 *buf)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = 64, .lkey = pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = 7, .sg_list = &sge, .num_sge = 1 };

	return srq ? ib_post_srq_recv(srq, &wr, NULL) : ib_post_recv(qp, &wr, NULL);
}

/* The ULP's SRQ event handler: answer on QP B at once. */
static void srq_event(struct ib_event *ev, void *ctx)
{
	if (ev->event != IB_EVENT_SRQ_LIMIT_REACHED)
		return;
	atomic_inc(&nevents);
	memset(buf_b, 0x5b, 64);
	WRITE_ONCE(handler_post, post_send(qp_b, buf_b, 99));
}

/* QP B's affiliated events: count Last WQE Reached. */
static void qp_event(struct ib_event *ev, void *ctx)
{
	if (ev->event == IB_EVENT_QP_LAST_WQE_REACHED)
		atomic_inc(&nlast);
}

/*
 * ib_drain_qp() on B: ERROR, the drain WR on its SQ, and (6.10 on) the
 * wait for Last WQE Reached, which a driver without the event makes last
 * 60 s.
 */
static void test_last_wqe(void)
{
	unsigned long t0 = jiffies, end;

	check(!atomic_read(&nlast), "no Last WQE Reached before ERROR");
	ib_drain_qp(qp_b);
	end = jiffies + kt_tmo(5 * HZ);
	while (!atomic_read(&nlast) && time_before(jiffies, end))
		usleep_range(100, 500);
	check(atomic_read(&nlast) == 1,
	      "ib_drain_qp on B: one IB_EVENT_QP_LAST_WQE_REACHED (%d)",
	      atomic_read(&nlast));
	check(time_before(jiffies, t0 + kt_tmo(20 * HZ)),
	      "ib_drain_qp on the SRQ QP returned in %u ms (not the core's 60 s wait)",
	      jiffies_to_msecs(jiffies - t0));
}

static void test_srq_limit(void)
{
	struct ib_srq_init_attr sa = {
		.event_handler = srq_event,
		.attr = { .max_wr = 16, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_qp_init_attr ia = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_srq_attr lim = { .srq_limit = 2 };
	struct ib_cq *cq_a = NULL, *cq_b = NULL;
	struct ib_qp *qp_a = NULL;
	struct ib_srq *srq = NULL;
	u8 *buf_a = NULL;
	unsigned long end;
	bool got_send = false, got_recv = false;
	struct ib_wc wc;
	int i;

	buf_a = kzalloc(4096, GFP_KERNEL);
	buf_b = kzalloc(4096, GFP_KERNEL);
	cq_a = ib_alloc_cq(ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	cq_b = ib_alloc_cq(ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	srq = ib_create_srq(pd, &sa);
	if (!check(buf_a && buf_b && !IS_ERR(cq_a) && !IS_ERR(cq_b) && !IS_ERR(srq),
		   "two CQs and an SRQ"))
		goto out;
	ia.send_cq = cq_a;
	ia.recv_cq = cq_a;
	qp_a = ib_create_qp(pd, &ia);
	ia.send_cq = cq_b;
	ia.recv_cq = cq_b;
	ia.srq = srq;
	ia.event_handler = qp_event;
	qp_b = ib_create_qp(pd, &ia);
	if (!check(!IS_ERR(qp_a) && !IS_ERR(qp_b), "QP A, and QP B on the SRQ"))
		goto out;
	if (!check(!to_rts(qp_a, qp_b->qp_num) && !to_rts(qp_b, qp_a->qp_num),
		   "A and B connected, RTS"))
		goto out;
	for (i = 0; i < 2; i++)
		post_recv(NULL, srq, buf_b + 64 * (i + 1));
	check(!post_recv(qp_a, NULL, buf_a), "a receive on A, two on the SRQ");
	check(!ib_modify_srq(srq, &lim, IB_SRQ_LIMIT) && !atomic_read(&nevents),
	      "limit 2 armed with 2 WQEs: no event yet");

	memset(buf_a + 1024, 0xa1, 64);
	check(!post_send(qp_a, buf_a + 1024, 1), "A sends to B (consumes an SRQ WQE)");
	check(!poll1(cq_b, &wc) && wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_RECV,
	      "B received it (status %d)", wc.status);
	end = jiffies + kt_tmo(5 * HZ);
	while (READ_ONCE(handler_post) == -EINPROGRESS && time_before(jiffies, end))
		usleep_range(100, 500);
	check(atomic_read(&nevents) == 1, "one IB_EVENT_SRQ_LIMIT_REACHED (%d)",
	      atomic_read(&nevents));
	check(!handler_post, "the handler posted a SEND on B (%d)", handler_post);
	/*
	 * A's send completion and the receive of B's answer, in either
	 * order: they are two work queues' completions, and B's ACK of A's
	 * SEND leaves after the receive path hands B's completions over
	 * (Documentation/softrc.rst, "The doorbell"), so a handler's
	 * answer may overtake it, as behind a coalesced ACK on hardware
	 */
	for (i = 0; i < 2; i++) {
		if (poll1(cq_a, &wc) || wc.status != IB_WC_SUCCESS)
			break;
		if (wc.opcode == IB_WC_RECV)
			got_recv = buf_a[0] == 0x5b;
		else
			got_send = wc.wr_id == 1;
	}
	check(got_send, "A's SEND completed");
	check(got_recv, "A received the handler's SEND (status %d)", wc.status);
	check(!poll1(cq_b, &wc) && wc.status == IB_WC_SUCCESS && wc.wr_id == 99,
	      "B's SEND from the handler completed");
	test_last_wqe();
out:
	if (!IS_ERR_OR_NULL(qp_b))
		ib_destroy_qp(qp_b);
	if (!IS_ERR_OR_NULL(qp_a))
		ib_destroy_qp(qp_a);
	if (!IS_ERR_OR_NULL(srq))
		ib_destroy_srq(srq);
	if (!IS_ERR_OR_NULL(cq_a))
		ib_free_cq(cq_a);
	if (!IS_ERR_OR_NULL(cq_b))
		ib_free_cq(cq_b);
	kfree(buf_a);
	kfree(buf_b);
}

static int __init softrc_srq_test_init(void)
{
	ibdev = kt_open();
	if (!ibdev)
		return -ENODEV;
	pd = ib_alloc_pd(ibdev, 0);
	if (check(!IS_ERR(pd), "alloc_pd on %s", kt_dev)) {
		test_srq_limit();
		ib_dealloc_pd(pd);
	}
	ib_device_put(ibdev);
	return kt_done();
}

static void __exit softrc_srq_test_exit(void)
{
}

module_init(softrc_srq_test_init);
module_exit(softrc_srq_test_exit);
MODULE_DESCRIPTION("softrc SRQ limit event test (kernel ULP verbs)");
MODULE_LICENSE("Dual BSD/GPL");

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * flush_user DEV GID HAS_FLUSH: what a user process of Debian 12's
 * rdma-core 44 (no ibv_wr_flush(), which came with rdma-core 45) can
 * make of FLUSH on softrc, on one device with two RC QPs:
 *   - ibv_reg_mr with IBV_ACCESS_FLUSH_GLOBAL (bit 8): registers where
 *     the kernel has FLUSH (HAS_FLUSH 1), else EINVAL (the core refuses
 *     the bit); with IBV_ACCESS_FLUSH_PERSISTENT (bit 9): refused on both
 *     (softrc offers no persistent memory)
 *   - ibv_post_send of opcode 14 (IB_UVERBS_WR_FLUSH) through librxe's
 *     legacy post path: the WQE reaches the kernel's ring ingest in the
 *     rxe ABI's FLUSH layout with its FLUSH fields zero (placement type 0
 *     is no FLUSH a requester may send): it fails in SQ order with
 *     IBV_WC_LOC_QP_OP_ERR after the WRITE posted before it succeeded,
 *     the QP enters ERROR and a WR after it is flushed; the completion's
 *     opcode is IB_UVERBS_WC_FLUSH (8) where the kernel has FLUSH, else
 *     that of a refused unknown opcode (IBV_WC_SEND)
 * KTAP on stdout; exit 1 if a check failed.
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "rc_conn.h"

#define WR_FLUSH	14	/* IB_UVERBS_WR_FLUSH (rdma-core 45: IBV_WR_FLUSH) */
#define WC_FLUSH	8	/* IB_UVERBS_WC_FLUSH */
#define ACC_FLUSH_GLOBAL	(1 << 8)
#define ACC_FLUSH_PERSISTENT	(1 << 9)

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qa, *qb;
static char buf[8192];
static union ibv_gid gid;
static int gidx;

static struct ibv_qp *mk_qp(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

static int qp_connect(struct ibv_qp *q, struct ibv_qp *peer)
{
	struct rc_conn c = {
		.access = IBV_ACCESS_REMOTE_WRITE, .mtu = IBV_MTU_1024,
		.dqpn = peer->qp_num, .dgid = gid, .sgid_index = gidx,
		.rq_psn = 77, .sq_psn = 77, .rd_atomic = 4,
		.min_rnr_timer = 12, .timeout = 18, .retry_cnt = 7,
		.rnr_retry = 7,
	};

	return rc_qp_to_rts(q, &c);
}

/* One completion within 20 s, or status -1. */
static struct ibv_wc poll1(void)
{
	struct ibv_wc wc = { .status = -1 };
	time_t end = time(NULL) + 20;

	while (time(NULL) < end)
		if (ibv_poll_cq(cq, 1, &wc) == 1)
			return wc;
	wc.status = -1;
	return wc;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_mr *mr, *m;
	struct ibv_qp_attr qattr;
	struct ibv_qp_init_attr qinit;
	struct ibv_wc wc[3];
	int has_flush, i, n;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DEV GID HAS_FLUSH\n", argv[0]);
		return 2;
	}
	has_flush = atoi(argv[3]);
	printf("TAP version 13\n");
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx || !(pd = ibv_alloc_pd(ctx)) ||
	    !(cq = ibv_create_cq(ctx, 16, NULL, NULL, 0)) ||
	    (gidx = roce_gid_pick(ctx, atoi(argv[2]), &gid)) < 0 ||
	    !(qa = mk_qp()) || !(qb = mk_qp())) {
		printf("Bail out! set-up of %s failed: %s\n", argv[1],
		       strerror(errno));
		return 1;
	}
	mr = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);

	errno = 0;
	m = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
		       IBV_ACCESS_REMOTE_WRITE | ACC_FLUSH_GLOBAL);
	if (has_flush)
		ok(m != NULL, "ibv_reg_mr with IB_ACCESS_FLUSH_GLOBAL registers");
	else
		ok(!m && errno == EINVAL,
		   "ibv_reg_mr with IB_ACCESS_FLUSH_GLOBAL: EINVAL (no FLUSH in this kernel)");
	if (m)
		ibv_dereg_mr(m);
	m = ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
		       IBV_ACCESS_REMOTE_WRITE | ACC_FLUSH_PERSISTENT);
	ok(!m, "ibv_reg_mr with IB_ACCESS_FLUSH_PERSISTENT is refused (errno %d)",
	   errno);
	if (m)
		ibv_dereg_mr(m);

	if (!ok(mr && !qp_connect(qa, qb) && !qp_connect(qb, qa),
		"an MR and two connected RC QPs")) {
		printf("Bail out!\n");
		return 1;
	}
	{
		struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 512,
				       .lkey = mr->lkey };
		struct ibv_send_wr w[3] = {}, *bad;

		for (i = 0; i < 3; i++) {
			w[i].wr_id = i + 1;
			w[i].sg_list = &sge;
			w[i].num_sge = 1;
			w[i].send_flags = IBV_SEND_SIGNALED;
			w[i].wr.rdma.remote_addr = (uintptr_t)buf + 4096;
			w[i].wr.rdma.rkey = mr->rkey;
			w[i].opcode = IBV_WR_RDMA_WRITE;
			if (i < 2)
				w[i].next = &w[i + 1];
		}
		w[1].opcode = WR_FLUSH;
		ok(!ibv_post_send(qa, w, &bad),
		   "ibv_post_send: WRITE, opcode 14 (FLUSH, its fields zero), WRITE");
	}
	for (i = 0; i < 3; i++)
		wc[i] = poll1();
	ok(wc[0].wr_id == 1 && wc[0].status == IBV_WC_SUCCESS,
	   "the WRITE before it succeeds (wr_id %llu, %s)",
	   (unsigned long long)wc[0].wr_id, ibv_wc_status_str(wc[0].status));
	ok(wc[1].wr_id == 2 && wc[1].status == IBV_WC_LOC_QP_OP_ERR &&
	   (int)wc[1].opcode == (has_flush ? WC_FLUSH : IBV_WC_SEND),
	   "the FLUSH WQE fails IBV_WC_LOC_QP_OP_ERR in SQ order, opcode %d (wr_id %llu, %s, opcode %d)",
	   has_flush ? WC_FLUSH : IBV_WC_SEND,
	   (unsigned long long)wc[1].wr_id, ibv_wc_status_str(wc[1].status),
	   wc[1].opcode);
	ok(wc[2].wr_id == 3 && wc[2].status == IBV_WC_WR_FLUSH_ERR,
	   "the WRITE after it is flushed (wr_id %llu, %s)",
	   (unsigned long long)wc[2].wr_id, ibv_wc_status_str(wc[2].status));
	ok(!ibv_query_qp(qa, &qattr, IBV_QP_STATE, &qinit) &&
	   qattr.qp_state == IBV_QPS_ERR, "the QP is in ERROR");
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ktap_done();
}

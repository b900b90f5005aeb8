// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrc_ud_test: kernel UD QPs as a kernel ULP (ib_mad, ib_cm) uses them,
 * and the device's netdev as SMC-R finds it. Loaded by selftests/vm/ud.sh
 * on a device whose GID `gid` is an IPv4 RoCE v2 GID:
 *  - ops.get_netdev(port 1) is the netdev named `netdev`, referenced;
 *  - a second GSI QP on the port is refused (ib_mad has QP 1);
 *  - two UD QPs: SEND_WITH_IMM through an address handle to the device's
 *    own GID arrives with the 40-byte GRH slot first, byte_len counting
 *    it, IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE (IPv4), src_qp, the
 *    immediate data and the bytes; ib_init_ah_attr_from_wc() (what ib_cm
 *    answers a REQ with) finds the sender's GID in it;
 *  - a wrong Q_Key: sent, never received;
 *  - a message above the path MTU: IB_WC_LOC_LEN_ERR on the send.
 *
 * Context: module init, process context (kt_poll1() sleeps).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "kmod_test.h"

static char *expect_netdev = "va";
module_param_named(netdev, expect_netdev, charp, 0444);
MODULE_PARM_DESC(netdev, "the netdev the device is bound to");

#define UD_QKEY		0x11110000
#define UD_LEN		256
#define UD_GRH		40
#define UD_BIG		(4096 + 64)

static void test_get_netdev(struct ib_device *ibdev)
{
	struct net_device *ndev = NULL;

	if (!check(ibdev->ops.get_netdev, "%s has ops.get_netdev", kt_dev))
		return;
	ndev = ibdev->ops.get_netdev(ibdev, 1);
	if (check(ndev, "get_netdev(port 1) returns a netdev")) {
		check(!strcmp(netdev_name(ndev), expect_netdev),
		      "get_netdev(port 1) is %s (got %s)", expect_netdev,
		      netdev_name(ndev));
		dev_put(ndev);
	}
}

static struct ib_qp *ud_qp(struct ib_pd *pd, struct ib_cq *cq,
			   enum ib_qp_type type)
{
	struct ib_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = type,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.port_num = 1,
		.cap = {
			.max_send_wr = 8, .max_recv_wr = 8,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};

	return ib_create_qp(pd, &init);
}

/* RESET -> INIT (P_Key index, port, Q_Key) -> RTR -> RTS (SQ PSN) */
static int ud_up(struct ib_qp *qp)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = UD_QKEY,
	};
	int err;

	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	a.qp_state = IB_QPS_RTR;
	if (!err)
		err = ib_modify_qp(qp, &a, IB_QP_STATE);
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 0x123;
	if (!err)
		err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_SQ_PSN);
	return err;
}

static int ud_recv(struct ib_qp *qp, struct ib_pd *pd, u8 *buf, u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len,
		.lkey = pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = 0xbeef, .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(qp, &wr, NULL);
}

static int ud_send(struct ib_qp *qp, struct ib_pd *pd, struct ib_ah *ah,
		   u32 dqpn, u32 qkey, u8 *buf, u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)buf, .length = len,
		.lkey = pd->local_dma_lkey,
	};
	struct ib_ud_wr wr = {
		.wr = {
			.wr_id = 0xcafe, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_SEND_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(0x5a5a1234),
		},
		.ah = ah, .remote_qpn = dqpn, .remote_qkey = qkey,
	};

	return ib_post_send(qp, &wr.wr, NULL);
}

static void test_receive(struct ib_device *ibdev, const struct ib_wc *wc,
			 const u8 *rbuf, const u8 *sbuf, u32 sqpn)
{
	struct rdma_ah_attr ah = {};
	int err;

	check(wc->status == IB_WC_SUCCESS && wc->opcode == IB_WC_RECV,
	      "UD receive: status %d opcode %d", wc->status, wc->opcode);
	check(wc->byte_len == UD_GRH + UD_LEN, "byte_len %u = 40 + %u",
	      wc->byte_len, UD_LEN);
	check((wc->wc_flags & (IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
			       IB_WC_WITH_IMM)) ==
	      (IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE | IB_WC_WITH_IMM) &&
	      wc->network_hdr_type == RDMA_NETWORK_IPV4,
	      "wc_flags 0x%x: GRH, network header type IPv4 (%d), IMM",
	      wc->wc_flags, wc->network_hdr_type);
	check(wc->src_qp == sqpn && wc->ex.imm_data == cpu_to_be32(0x5a5a1234),
	      "src_qp %u (sender %u), immediate data", wc->src_qp, sqpn);
	check(!memcmp(rbuf + UD_GRH, sbuf, UD_LEN), "payload after the GRH slot");
	/* bytes 20..39: the IPv4 header; the core checks its checksum */
	err = ib_init_ah_attr_from_wc(ibdev, 1, wc, (const struct ib_grh *)rbuf,
				      &ah);
	if (check(!err, "ib_init_ah_attr_from_wc: %d", err)) {
		check(!memcmp(rdma_ah_read_grh(&ah)->dgid.raw, kt_sgid.raw, 16),
		      "the reply's destination GID is the sender's, %pI6",
		      rdma_ah_read_grh(&ah)->dgid.raw);
		rdma_destroy_ah_attr(&ah);
	}
}

static void test_ud(struct ib_device *ibdev, struct ib_pd *pd)
{
	struct ib_qp *a = NULL, *b = NULL, *gsi;
	struct rdma_ah_attr attr = {};
	struct ib_ah *ah = NULL;
	struct ib_cq *cq;
	u8 *sbuf, *rbuf;
	struct ib_wc wc;
	int err;

	sbuf = kzalloc(UD_BIG, GFP_KERNEL);
	rbuf = kzalloc(UD_BIG + UD_GRH, GFP_KERNEL);
	cq = ib_alloc_cq(ibdev, NULL, 32, 0, IB_POLL_DIRECT);
	if (!check(sbuf && rbuf && !IS_ERR(cq), "buffers and CQ"))
		goto out;
	gsi = ud_qp(pd, cq, IB_QPT_GSI);
	check(IS_ERR(gsi), "a second GSI QP is refused (%ld)", PTR_ERR(gsi));
	if (!IS_ERR(gsi))
		ib_destroy_qp(gsi);
	a = ud_qp(pd, cq, IB_QPT_UD);
	b = ud_qp(pd, cq, IB_QPT_UD);
	if (!check(!IS_ERR(a) && !IS_ERR(b), "two UD QPs"))
		goto out;
	if (!check(!ud_up(a) && !ud_up(b), "UD QPs to RTS (QKEY at INIT)"))
		goto out;
	attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &kt_sgid, 0, kt_gid, 64, 0);
	ah = rdma_create_ah(pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	if (!check(!IS_ERR(ah), "address handle to our own GID")) {
		ah = NULL;
		goto out;
	}

	memset(sbuf, 0xa5, UD_BIG);
	get_random_bytes(sbuf, UD_LEN);
	if (!check(!ud_recv(b, pd, rbuf, UD_GRH + UD_BIG) &&
		   !ud_send(a, pd, ah, b->qp_num, UD_QKEY, sbuf, UD_LEN),
		   "post receive and SEND_WITH_IMM"))
		goto out;
	/* one CQ: the send's and the receive's completions, either order */
	if (!kt_poll1(cq, &wc, HZ) && wc.opcode == IB_WC_SEND) {
		check(wc.status == IB_WC_SUCCESS, "send completion");
		kt_poll1(cq, &wc, HZ);
	} else {
		struct ib_wc s;

		kt_poll1(cq, &s, HZ);
		check(s.opcode == IB_WC_SEND && s.status == IB_WC_SUCCESS,
		      "send completion");
	}
	test_receive(ibdev, &wc, rbuf, sbuf, a->qp_num);

	/* a wrong Q_Key: the datagram is dropped at b, the send succeeds */
	if (check(!ud_recv(b, pd, rbuf, UD_GRH + UD_BIG) &&
		  !ud_send(a, pd, ah, b->qp_num, UD_QKEY + 1, sbuf, UD_LEN),
		  "SEND with a wrong Q_Key")) {
		err = kt_poll1(cq, &wc, HZ);
		check(!err && wc.opcode == IB_WC_SEND &&
		      wc.status == IB_WC_SUCCESS, "... completes at the sender");
		err = kt_poll1(cq, &wc, HZ / 2);
		check(err == -ETIMEDOUT,
		      "... and is never received (completion %d)", wc.status);
	}
	/* above the path MTU: a local length error */
	if (check(!ud_send(a, pd, ah, b->qp_num, UD_QKEY, sbuf, UD_BIG),
		  "post a SEND of %d bytes", UD_BIG)) {
		err = kt_poll1(cq, &wc, HZ);
		check(!err && wc.status == IB_WC_LOC_LEN_ERR,
		      "... completes with IB_WC_LOC_LEN_ERR (%d)", wc.status);
	}
out:
	if (ah)
		rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
	if (!IS_ERR_OR_NULL(a))
		ib_destroy_qp(a);
	if (!IS_ERR_OR_NULL(b))
		ib_destroy_qp(b);
	if (!IS_ERR_OR_NULL(cq))
		ib_free_cq(cq);
	kfree(sbuf);
	kfree(rbuf);
}

static int __init softrc_ud_test_init(void)
{
	struct ib_device *ibdev = kt_open();
	struct ib_pd *pd;

	if (!ibdev)
		return -ENODEV;
	test_get_netdev(ibdev);
	pd = ib_alloc_pd(ibdev, 0);
	if (check(!IS_ERR(pd), "alloc_pd on %s", kt_dev)) {
		test_ud(ibdev, pd);
		ib_dealloc_pd(pd);
	}
	ib_device_put(ibdev);
	return kt_done();
}

static void __exit softrc_ud_test_exit(void)
{
}

module_init(softrc_ud_test_init);
module_exit(softrc_ud_test_exit);
MODULE_DESCRIPTION("softrc kernel UD QP and get_netdev test (kernel ULP verbs)");
MODULE_LICENSE("Dual BSD/GPL");

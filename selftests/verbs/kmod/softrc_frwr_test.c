// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrc_frwr_test: fast registration (FRWR) as kernel ULPs (NVMe-oF,
 * NFS-RDMA) use it, run once at module load on the device named by the
 * `dev` parameter, with pairs of kernel RC QPs connected to each other on
 * that device (GID index `gid`):
 *   - ib_alloc_mr(IB_MR_TYPE_MEM_REG) + ib_map_mr_sg over three separate
 *     pages + IB_WR_REG_MR with a new key byte; a peer's RDMA WRITE and
 *     READ through the MR's rkey cross the page boundaries correctly
 *   - SEND_WITH_INV of the rkey: IB_WC_WITH_INVALIDATE and the rkey in
 *     the receive completion; a WRITE afterwards -> IB_WC_REM_ACCESS_ERR
 *   - register again (new key), LOCAL_INV after a 256 KiB WRITE completes
 *     second; the rkey is dead afterwards
 *   - IB_WR_REG_MR of an MR already registered and LOCAL_INV of a key that
 *     is no fast-register MR -> IB_WC_LOC_QP_OP_ERR
 *   - a chain of WRs posted to a QP in ERROR, longer than its
 *     pending-completion ring: ib_post_send takes what the ring has room
 *     for and returns -ENOMEM at the first WR it did not take; every WR
 *     it took completes flushed, none is lost (Documentation/softrc.rst,
 *     "Pending completions")
 * Results are KTAP lines in the kernel log; the load fails (-EIO) if any
 * check failed.
 *
 * Context: module init, process context; sleeps while polling.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "kmod_test.h"

#define BIG	(256 * 1024)

static struct ib_device *ibdev;
static struct ib_pd *pd;
static u32 next_psn = 1000;

struct side {
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *buf;		/* BIG bytes, kernel virtual: local_dma_lkey */
};

struct pair {
	struct side a, b;
};

static int poll1(struct ib_cq *cq, struct ib_wc *wc)
{
	return kt_poll1(cq, wc, 20 * HZ);
}

/* RC to @dqpn, PSN @psn both ways, remote WRITE and READ, 4 READs. */
static int to_rts(struct ib_qp *qp, u32 dqpn, u32 psn)
{
	struct kt_conn c = {
		.dqpn = dqpn, .psn = psn,
		.access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ,
		.rd_atomic = 4,
	};

	return kt_to_rts(qp, &c);
}

static void side_down(struct side *s)
{
	if (!IS_ERR_OR_NULL(s->qp))
		ib_destroy_qp(s->qp);
	if (!IS_ERR_OR_NULL(s->cq))
		ib_free_cq(s->cq);
	kfree(s->buf);
	memset(s, 0, sizeof(*s));
}

static int side_up(struct side *s)
{
	struct ib_qp_init_attr ia = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	s->buf = kzalloc(BIG, GFP_KERNEL);
	s->cq = ib_alloc_cq(ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (!s->buf || IS_ERR(s->cq))
		return -ENOMEM;
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ib_create_qp(pd, &ia);
	return PTR_ERR_OR_ZERO(s->qp);
}

static int pair_up(struct pair *p)
{
	int err;

	memset(p, 0, sizeof(*p));
	next_psn += 0x10000;
	err = side_up(&p->a) ?: side_up(&p->b) ?:
	      to_rts(p->a.qp, p->b.qp->qp_num, next_psn) ?:
	      to_rts(p->b.qp, p->a.qp->qp_num, next_psn);
	if (err)
		pr_err("pair set-up failed: %d\n", err);
	return err;
}

static void pair_down(struct pair *p)
{
	side_down(&p->a);
	side_down(&p->b);
}

static enum ib_wc_status post_wait(struct side *s, struct ib_send_wr *wr)
{
	struct ib_wc wc;

	wr->send_flags |= IB_SEND_SIGNALED;
	if (ib_post_send(s->qp, wr, NULL))
		return IB_WC_GENERAL_ERR;
	poll1(s->cq, &wc);
	return wc.status;
}

/* RDMA WRITE/READ of @len bytes of @s's buffer at (@rkey, @va). */
static enum ib_wc_status rdma(struct side *s, enum ib_wr_opcode op, u32 rkey,
			      u64 va, u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)s->buf, .length = len,
		.lkey = pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .sg_list = &sge, .num_sge = 1, .opcode = op },
		.remote_addr = va, .rkey = rkey,
	};

	return post_wait(s, &wr.wr);
}

static enum ib_wc_status reg_mr(struct side *s, struct ib_mr *mr, int access)
{
	struct ib_reg_wr wr = {
		.wr = { .opcode = IB_WR_REG_MR },
		.mr = mr, .key = mr->rkey, .access = access,
	};

	return post_wait(s, &wr.wr);
}

/* Map three separate pages (page_size PAGE_SIZE), skipping @off bytes. */
static int map3(struct ib_mr *mr, struct page **pg, struct scatterlist *sg,
		unsigned int off)
{
	unsigned int o = off;
	int i, n;

	sg_init_table(sg, 3);
	for (i = 0; i < 3; i++)
		sg_set_page(&sg[i], pg[i], PAGE_SIZE, 0);
	n = ib_dma_map_sg(ibdev, sg, 3, DMA_BIDIRECTIONAL);
	if (n != 3)
		return -EIO;
	return ib_map_mr_sg(mr, sg, 3, &o, PAGE_SIZE) == 3 ? 0 : -EIO;
}

static bool pages_hold(struct page **pg, unsigned int off, u32 len, u8 v)
{
	u32 i;

	for (i = 0; i < len; i++) {
		u32 at = off + i;

		if (((u8 *)page_address(pg[at / PAGE_SIZE]))[at % PAGE_SIZE] != v)
			return false;
	}
	return true;
}

static void test_frwr(void)
{
	const int acc = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			IB_ACCESS_REMOTE_READ;
	u32 len = 3 * PAGE_SIZE - 100, rkey;
	struct page *pg[3] = {};
	struct ib_send_wr li = { .opcode = IB_WR_LOCAL_INV };
	struct scatterlist sg[3];
	enum ib_wc_status st;
	struct ib_wc wc[2];
	struct ib_mr *mr;
	struct pair p;
	int i;

	for (i = 0; i < 3; i++) {
		pg[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!pg[i])
			goto out_pages;
	}
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 4);
	if (!check(!IS_ERR(mr), "alloc_mr(IB_MR_TYPE_MEM_REG, 4)"))
		goto out_pages;
	i = map3(mr, pg, sg, 50);
	check(!i && mr->length == 3 * PAGE_SIZE - 50,
	      "map_mr_sg: 3 separate pages from offset 50 (length %llu)",
	      mr->length);
	if (pair_up(&p))
		goto out_mr;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	rkey = mr->rkey;
	st = reg_mr(&p.a, mr, acc);
	check(st == IB_WC_SUCCESS, "IB_WR_REG_MR with a new key byte (%s)",
	      ib_wc_status_msg(st));
	memset(p.b.buf, 0x3c, len);
	st = rdma(&p.b, IB_WR_RDMA_WRITE, rkey, mr->iova + 50, len - 50);
	check(st == IB_WC_SUCCESS && pages_hold(pg, 100, len - 50, 0x3c) &&
	      pages_hold(pg, 50, 50, 0),
	      "peer WRITE through the FRMR lands across the 3 pages (%s)",
	      ib_wc_status_msg(st));
	memset(p.b.buf, 0, len);
	st = rdma(&p.b, IB_WR_RDMA_READ, rkey, mr->iova + 50, len - 50);
	check(st == IB_WC_SUCCESS && p.b.buf[0] == 0x3c &&
	      p.b.buf[len - 51] == 0x3c,
	      "peer READ through the FRMR (%s)", ib_wc_status_msg(st));
	{
		struct ib_sge rs = { .addr = (uintptr_t)p.a.buf, .length = 64,
				     .lkey = pd->local_dma_lkey };
		struct ib_recv_wr rwr = { .sg_list = &rs, .num_sge = 1 };
		struct ib_sge ss = { .addr = (uintptr_t)p.b.buf, .length = 8,
				     .lkey = pd->local_dma_lkey };
		struct ib_send_wr sw = { .sg_list = &ss, .num_sge = 1,
					 .opcode = IB_WR_SEND_WITH_INV,
					 .ex.invalidate_rkey = rkey };

		ib_post_recv(p.a.qp, &rwr, NULL);
		st = post_wait(&p.b, &sw);
		poll1(p.a.cq, &wc[0]);
		check(st == IB_WC_SUCCESS && wc[0].status == IB_WC_SUCCESS &&
		      (wc[0].wc_flags & IB_WC_WITH_INVALIDATE) &&
		      wc[0].ex.invalidate_rkey == rkey,
		      "SEND_WITH_INV of the FRMR: receive has IB_WC_WITH_INVALIDATE and rkey %#x (%#x)",
		      rkey, wc[0].ex.invalidate_rkey);
	}
	st = rdma(&p.b, IB_WR_RDMA_WRITE, rkey, mr->iova + 50, 8);
	check(st == IB_WC_REM_ACCESS_ERR,
	      "WRITE through the invalidated FRMR -> IB_WC_REM_ACCESS_ERR (%s)",
	      ib_wc_status_msg(st));
	pair_down(&p);

	/* again: register with a new key, LOCAL_INV after a big WRITE */
	if (pair_up(&p))
		goto out_mr;
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey) & 0xff);
	rkey = mr->rkey;
	st = reg_mr(&p.a, mr, acc);
	check(st == IB_WC_SUCCESS, "re-register the invalidated FRMR (%s)",
	      ib_wc_status_msg(st));
	st = reg_mr(&p.a, mr, acc);
	check(st == IB_WC_LOC_QP_OP_ERR,
	      "IB_WR_REG_MR of a registered FRMR -> IB_WC_LOC_QP_OP_ERR (%s)",
	      ib_wc_status_msg(st));
	pair_down(&p);

	if (pair_up(&p))
		goto out_mr;
	{
		struct ib_sge sge = { .addr = (uintptr_t)p.a.buf, .length = BIG,
				      .lkey = pd->local_dma_lkey };
		struct ib_rdma_wr w = {
			.wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				.opcode = IB_WR_RDMA_WRITE,
				.send_flags = IB_SEND_SIGNALED },
			.remote_addr = (uintptr_t)p.b.buf,
			.rkey = pd->unsafe_global_rkey,
		};

		li.wr_id = 2;
		li.send_flags = IB_SEND_SIGNALED;
		li.ex.invalidate_rkey = rkey;
		memset(wc, 0, sizeof(wc));
		if (!ib_post_send(p.a.qp, &w.wr, NULL) &&
		    !ib_post_send(p.a.qp, &li, NULL)) {
			poll1(p.a.cq, &wc[0]);
			poll1(p.a.cq, &wc[1]);
		}
		check(wc[0].wr_id == 1 && wc[0].status == IB_WC_SUCCESS &&
		      wc[1].wr_id == 2 && wc[1].status == IB_WC_SUCCESS &&
		      wc[1].opcode == IB_WC_LOCAL_INV,
		      "LOCAL_INV of the FRMR after a 256 KiB WRITE completes second (%llu %s, %llu %s)",
		      wc[0].wr_id, ib_wc_status_msg(wc[0].status),
		      wc[1].wr_id, ib_wc_status_msg(wc[1].status));
	}
	st = rdma(&p.b, IB_WR_RDMA_WRITE, rkey, mr->iova + 50, 8);
	check(st == IB_WC_REM_ACCESS_ERR,
	      "WRITE through the locally invalidated FRMR -> IB_WC_REM_ACCESS_ERR (%s)",
	      ib_wc_status_msg(st));
	pair_down(&p);

	if (pair_up(&p))
		goto out_mr;
	li.ex.invalidate_rkey = pd->unsafe_global_rkey;
	st = post_wait(&p.a, &li);
	check(st == IB_WC_LOC_QP_OP_ERR,
	      "LOCAL_INV of a key that is no FRMR -> IB_WC_LOC_QP_OP_ERR (%s)",
	      ib_wc_status_msg(st));
	pair_down(&p);
out_mr:
	ib_dma_unmap_sg(ibdev, sg, 3, DMA_BIDIRECTIONAL);
	check(!ib_dereg_mr(mr), "dereg the FRMR");
out_pages:
	for (i = 0; i < 3; i++)
		if (pg[i])
			__free_page(pg[i]);
}

#define CHAIN	1500

/* A WR chain into a QP in ERROR: taken up to the room, none lost. */
static void test_err_chain(void)
{
	struct ib_qp_init_attr ia = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT, .pkey_index = 0, .port_num = 1,
	};
	const struct ib_send_wr *bad = NULL;
	struct ib_send_wr *wr;
	struct ib_wc wc[4];
	int i, n, got = 0, taken, ret, err;
	bool order = true;
	unsigned long end;
	struct ib_cq *cq;
	struct ib_qp *qp;

	wr = kcalloc(CHAIN, sizeof(*wr), GFP_KERNEL);
	if (!check(wr, "err chain: %d WRs", CHAIN))
		return;
	cq = ib_alloc_cq(ibdev, NULL, 2 * CHAIN, 0, IB_POLL_DIRECT);
	if (!check(!IS_ERR(cq), "err chain: a CQ of %d", 2 * CHAIN))
		goto out;
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = ib_create_qp(pd, &ia);
	if (!check(!IS_ERR(qp), "err chain: a kernel RC QP (16 send WRs)"))
		goto out_cq;
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	attr.qp_state = IB_QPS_ERR;
	if (!check(!err && !ib_modify_qp(qp, &attr, IB_QP_STATE),
		   "err chain: the QP moved to INIT, then ERROR"))
		goto out_qp;
	for (i = 0; i < CHAIN; i++) {
		wr[i].wr_id = i;
		wr[i].opcode = IB_WR_SEND;
		wr[i].send_flags = IB_SEND_SIGNALED;
		wr[i].next = i + 1 < CHAIN ? &wr[i + 1] : NULL;
	}
	ret = ib_post_send(qp, wr, &bad);
	taken = bad ? (int)(bad - wr) : CHAIN;
	check(ret == -ENOMEM && taken > 0 && taken < CHAIN,
	      "err chain: post of %d takes %d, then -ENOMEM (%d)", CHAIN, taken,
	      ret);
	end = jiffies + kt_tmo(10 * HZ);
	while (got < taken && time_before(jiffies, end)) {
		n = ib_poll_cq(cq, ARRAY_SIZE(wc), wc);
		if (n <= 0) {
			msleep(1);
			continue;
		}
		for (i = 0; i < n; i++, got++)
			order &= wc[i].wr_id == got &&
				 wc[i].status == IB_WC_WR_FLUSH_ERR;
	}
	msleep(50);
	n = ib_poll_cq(cq, ARRAY_SIZE(wc), wc);
	check(got == taken && order && n == 0,
	      "err chain: exactly the %d WRs taken complete, flushed, in order (got %d, %d more)",
	      taken, got, n);
	/* drained: the rest goes in */
	if (taken > 0 && taken < CHAIN)
		check(!ib_post_send(qp, &wr[taken], &bad) || bad - wr > taken,
		      "err chain: the next post takes more");
out_qp:
	ib_destroy_qp(qp);
out_cq:
	ib_free_cq(cq);
out:
	kfree(wr);
}

static int __init softrc_frwr_test_init(void)
{
	ibdev = kt_open();
	if (!ibdev)
		return -ENODEV;
	/* IBK_LOCAL_DMA_LKEY: no whole-address-space DMA MR per kernel PD */
	pd = ib_alloc_pd(ibdev, 0);
	check(!IS_ERR(pd) &&
	      (ibdev->attrs.kernel_cap_flags & IBK_LOCAL_DMA_LKEY) &&
	      !pd->__internal_mr && pd->local_dma_lkey == ibdev->local_dma_lkey,
	      "alloc_pd: IBK_LOCAL_DMA_LKEY, local_dma_lkey %#x, no DMA MR",
	      IS_ERR(pd) ? 0 : pd->local_dma_lkey);
	if (!IS_ERR(pd))
		ib_dealloc_pd(pd);
	pd = ib_alloc_pd(ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (check(!IS_ERR(pd), "alloc_pd (unsafe global rkey) on %s", kt_dev)) {
		check(ibdev->attrs.device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS &&
		      ibdev->attrs.max_fast_reg_page_list_len > 0,
		      "IB_DEVICE_MEM_MGT_EXTENSIONS, max_fast_reg_page_list_len %u",
		      ibdev->attrs.max_fast_reg_page_list_len);
		test_frwr();
		test_err_chain();
		ib_dealloc_pd(pd);
	}
	ib_device_put(ibdev);
	return kt_done();
}

static void __exit softrc_frwr_test_exit(void)
{
}

module_init(softrc_frwr_test_init);
module_exit(softrc_frwr_test_exit);
MODULE_DESCRIPTION("softrc fast-registration test (kernel ULP verbs)");
MODULE_LICENSE("Dual BSD/GPL");

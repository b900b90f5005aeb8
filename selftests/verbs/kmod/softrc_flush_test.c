// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrc_flush_test: FLUSH (IBTA 1.5 Annex A19) as a kernel ULP posts it
 * where the kernel's verbs name it (Linux 6.2 on: IB_WR_FLUSH,
 * IB_WC_FLUSH, IB_ACCESS_FLUSH_*), run once at module load on the device
 * named by `dev`, with pairs of kernel RC QPs connected to each other on
 * that device (GID index `gid`). The kernel's verbs have no FLUSH WR of
 * their own: the WR is an ib_rdma_wr (remote_addr, rkey) whose SGE
 * lengths give the range, placement type GLOBAL, selectivity RANGE
 * (Documentation/softrc.rst, "FLUSH"). The target memory is a
 * fast-registered MR of one page with IB_ACCESS_FLUSH_GLOBAL.
 *   - the device advertises IB_DEVICE_FLUSH_GLOBAL, not _PERSISTENT
 *   - WRITE, then FLUSH of the written range: IB_WC_FLUSH, success, the
 *     range's length as byte_len, the data there; a FLUSH of the whole
 *     page and one of zero bytes succeed too
 *   - an MR without the flush right, a bad rkey, a range past the MR's
 *     end -> IB_WC_REM_ACCESS_ERR (NAK remote access); a responder QP
 *     without IB_ACCESS_FLUSH_GLOBAL -> IB_WC_REM_INV_REQ_ERR (NAK invalid
 *     request); each on a pair of its own, the requester in ERROR after
 *   - IB_WR_REG_MR with IB_ACCESS_FLUSH_PERSISTENT -> IB_WC_LOC_QP_OP_ERR
 *     (no persistent memory); a FLUSH on a QP with max_rd_atomic 0 and
 *     an inline one are refused at post (-EINVAL)
 * The suite (selftests/vm/flush.sh) reads the NAK counters around the
 * load. Results are KTAP lines in the kernel log; the load fails (-EIO)
 * if any check failed.
 *
 * Context: module init, process context; sleeps while polling.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "kmod_test.h"

#define BUF	4096

static struct ib_device *ibdev;
static struct ib_pd *pd;
static u32 next_psn = 2000;

struct side {
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *buf;		/* BUF bytes, kernel virtual: local_dma_lkey */
};

struct pair {
	struct side a, b;	/* a posts, b is the target */
};

/* The target: one page registered through IB_WR_REG_MR. */
struct target {
	struct page *pg;
	struct scatterlist sg;
	struct ib_mr *mr;
	bool mapped;
};

static int poll1(struct ib_cq *cq, struct ib_wc *wc)
{
	return kt_poll1(cq, wc, 20 * HZ);
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
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};

	s->buf = kzalloc(BUF, GFP_KERNEL);
	s->cq = ib_alloc_cq(ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (!s->buf || IS_ERR(s->cq))
		return -ENOMEM;
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ib_create_qp(pd, &ia);
	return PTR_ERR_OR_ZERO(s->qp);
}

/*
 * A connected pair: b (the target) enables remote write and @b_access on
 * top; both have @rd_atomic READ/ATOMIC/FLUSH credits.
 */
static int pair_up(struct pair *p, int b_access, u8 rd_atomic)
{
	struct kt_conn ca = { .access = IB_ACCESS_REMOTE_WRITE,
			      .rd_atomic = rd_atomic };
	struct kt_conn cb = { .access = IB_ACCESS_REMOTE_WRITE | b_access,
			      .rd_atomic = rd_atomic };
	int err;

	memset(p, 0, sizeof(*p));
	next_psn += 0x10000;
	err = side_up(&p->a) ?: side_up(&p->b);
	if (!err) {
		ca.dqpn = p->b.qp->qp_num;
		cb.dqpn = p->a.qp->qp_num;
		ca.psn = next_psn;
		cb.psn = next_psn;
		err = kt_to_rts(p->a.qp, &ca) ?: kt_to_rts(p->b.qp, &cb);
	}
	if (err)
		pr_err("pair set-up failed: %d\n", err);
	return err;
}

static void pair_down(struct pair *p)
{
	side_down(&p->a);
	side_down(&p->b);
}

/* Post @wr signaled on @s and wait for its completion into @wc. */
static void post_wait(struct side *s, struct ib_send_wr *wr, struct ib_wc *wc)
{
	int err;

	wr->send_flags |= IB_SEND_SIGNALED;
	err = ib_post_send(s->qp, wr, NULL);
	if (err) {
		memset(wc, 0, sizeof(*wc));
		wc->status = IB_WC_GENERAL_ERR;
		return;
	}
	poll1(s->cq, wc);
}

/*
 * FLUSH of @len bytes at (@rkey, @va) from @s: an ib_rdma_wr whose one
 * SGE (@s's buffer, never read) gives the length.
 */
static void flush(struct side *s, u32 rkey, u64 va, u32 len, int flags,
		  struct ib_wc *wc)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)s->buf, .length = len,
		.lkey = pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 0xf1, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_FLUSH, .send_flags = flags },
		.remote_addr = va, .rkey = rkey,
	};

	post_wait(s, &wr.wr, wc);
}

static enum ib_wc_status write(struct side *s, u32 rkey, u64 va, u32 len)
{
	struct ib_sge sge = {
		.addr = (uintptr_t)s->buf, .length = len,
		.lkey = pd->local_dma_lkey,
	};
	struct ib_rdma_wr wr = {
		.wr = { .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_RDMA_WRITE },
		.remote_addr = va, .rkey = rkey,
	};
	struct ib_wc wc;

	post_wait(s, &wr.wr, &wc);
	return wc.status;
}

/* IB_WR_REG_MR of @t's page with @access, posted on @s. */
static enum ib_wc_status reg(struct side *s, struct target *t, int access)
{
	struct ib_reg_wr wr = {
		.wr = { .opcode = IB_WR_REG_MR },
		.mr = t->mr, .key = t->mr->rkey, .access = access,
	};
	struct ib_wc wc;

	post_wait(s, &wr.wr, &wc);
	return wc.status;
}

static void target_down(struct target *t)
{
	if (t->mapped)
		ib_dma_unmap_sg(ibdev, &t->sg, 1, DMA_BIDIRECTIONAL);
	if (!IS_ERR_OR_NULL(t->mr))
		ib_dereg_mr(t->mr);
	if (t->pg)
		__free_page(t->pg);
	memset(t, 0, sizeof(*t));
}

/* A page mapped into a fresh fast-register MR (registered by reg()). */
static int target_up(struct target *t)
{
	unsigned int off = 0;

	memset(t, 0, sizeof(*t));
	t->pg = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!t->pg)
		return -ENOMEM;
	t->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(t->mr))
		return PTR_ERR(t->mr);
	sg_init_table(&t->sg, 1);
	sg_set_page(&t->sg, t->pg, PAGE_SIZE, 0);
	if (ib_dma_map_sg(ibdev, &t->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -EIO;
	t->mapped = true;
	if (ib_map_mr_sg(t->mr, &t->sg, 1, &off, PAGE_SIZE) != 1)
		return -EIO;
	ib_update_fast_reg_key(t->mr, ib_inc_rkey(t->mr->rkey) & 0xff);
	return 0;
}

static const char *st(const struct ib_wc *wc)
{
	return ib_wc_status_msg(wc->status);
}

/* The good cases on one pair and one target with the flush right. */
static void test_flush_ok(void)
{
	const int acc = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
			IB_ACCESS_FLUSH_GLOBAL;
	struct target t;
	struct ib_wc wc;
	struct pair p;
	u8 *page;

	if (!check(!target_up(&t), "a one-page fast-register MR"))
		goto out_t;
	if (pair_up(&p, IB_ACCESS_FLUSH_GLOBAL, 4))
		goto out_t;
	check(reg(&p.b, &t, acc) == IB_WC_SUCCESS,
	      "IB_WR_REG_MR with IB_ACCESS_FLUSH_GLOBAL");
	page = page_address(t.pg);
	memset(p.a.buf, 0x5e, 512);
	check(write(&p.a, t.mr->rkey, t.mr->iova + 256, 512) == IB_WC_SUCCESS,
	      "WRITE 512 bytes into the MR");
	flush(&p.a, t.mr->rkey, t.mr->iova + 256, 512, 0, &wc);
	check(wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_FLUSH &&
	      wc.wr_id == 0xf1 && wc.byte_len == 512 && page[256] == 0x5e &&
	      page[767] == 0x5e && page[768] == 0,
	      "FLUSH of the written range: IB_WC_FLUSH, success, byte_len 512 (%s, opcode %d, byte_len %u)",
	      st(&wc), wc.opcode, wc.byte_len);
	flush(&p.a, t.mr->rkey, t.mr->iova, PAGE_SIZE, 0, &wc);
	check(wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_FLUSH,
	      "FLUSH of the whole MR (%s)", st(&wc));
	flush(&p.a, t.mr->rkey, t.mr->iova + 8, 0, 0, &wc);
	check(wc.status == IB_WC_SUCCESS && wc.opcode == IB_WC_FLUSH &&
	      wc.byte_len == 0, "FLUSH of zero bytes (%s)", st(&wc));
	/* four in flight, max_rd_atomic 4: each takes a credit, all done */
	{
		struct ib_sge sge = { .addr = (uintptr_t)p.a.buf, .length = 64,
				      .lkey = pd->local_dma_lkey };
		struct ib_rdma_wr w = {
			.wr = { .sg_list = &sge, .num_sge = 1,
				.opcode = IB_WR_FLUSH,
				.send_flags = IB_SEND_SIGNALED },
			.remote_addr = t.mr->iova, .rkey = t.mr->rkey,
		};
		int i, good = 0, posted = 0;

		for (i = 0; i < 6; i++) {
			w.wr.wr_id = 100 + i;
			posted += !ib_post_send(p.a.qp, &w.wr, NULL);
		}
		for (i = 0; i < posted; i++)
			good += !poll1(p.a.cq, &wc) && wc.wr_id == 100 + i &&
				wc.status == IB_WC_SUCCESS &&
				wc.opcode == IB_WC_FLUSH;
		check(posted == 6 && good == 6,
		      "6 FLUSHes posted at once complete in order (%d posted, %d good)",
		      posted, good);
	}
	pair_down(&p);
out_t:
	target_down(&t);
}

/*
 * One error case on a pair of its own: the target MR registered with
 * @mr_acc, the target QP enabling @qp_acc; a FLUSH of @len bytes at
 * @off into the MR (through @rkey_xor ^ its rkey) must end in @want,
 * and the requester QP is in ERROR afterwards.
 */
static void test_flush_err(const char *what, int mr_acc, int qp_acc,
			   u32 rkey_xor, u32 off, u32 len,
			   enum ib_wc_status want)
{
	struct ib_qp_init_attr ia;
	struct ib_qp_attr qa;
	struct target t;
	struct ib_wc wc;
	struct pair p;

	if (target_up(&t) || pair_up(&p, qp_acc, 4)) {
		check(false, "%s: set-up", what);
		goto out_t;
	}
	if (reg(&p.b, &t, IB_ACCESS_LOCAL_WRITE | mr_acc) != IB_WC_SUCCESS) {
		check(false, "%s: IB_WR_REG_MR", what);
		goto out;
	}
	flush(&p.a, t.mr->rkey ^ rkey_xor, t.mr->iova + off, len, 0, &wc);
	check(wc.status == want && wc.opcode == IB_WC_FLUSH &&
	      !ib_query_qp(p.a.qp, &qa, IB_QP_STATE, &ia) &&
	      qa.qp_state == IB_QPS_ERR,
	      "%s -> %s, requester QP in ERROR (%s, opcode %d)", what,
	      ib_wc_status_msg(want), st(&wc), wc.opcode);
out:
	pair_down(&p);
out_t:
	target_down(&t);
}

/* What the post and registration refuse. */
static void test_flush_refused(void)
{
	struct target t;
	struct ib_wc wc;
	struct pair p;

	if (target_up(&t) || pair_up(&p, IB_ACCESS_FLUSH_GLOBAL, 4)) {
		check(false, "refusals: set-up");
		goto out_t;
	}
	check(reg(&p.b, &t, IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE |
		  IB_ACCESS_FLUSH_PERSISTENT) == IB_WC_LOC_QP_OP_ERR,
	      "IB_WR_REG_MR with IB_ACCESS_FLUSH_PERSISTENT -> IB_WC_LOC_QP_OP_ERR (no persistent memory)");
	pair_down(&p);

	if (pair_up(&p, IB_ACCESS_FLUSH_GLOBAL, 4))
		goto out_t;
	flush(&p.a, 0x1234, 0, 64, IB_SEND_INLINE, &wc);
	check(wc.status == IB_WC_GENERAL_ERR,
	      "an inline FLUSH is refused at post");
	pair_down(&p);

	if (pair_up(&p, IB_ACCESS_FLUSH_GLOBAL, 0))
		goto out_t;
	flush(&p.a, 0x1234, 0, 64, 0, &wc);
	check(wc.status == IB_WC_GENERAL_ERR,
	      "a FLUSH on a QP with max_rd_atomic 0 is refused at post");
	pair_down(&p);
out_t:
	target_down(&t);
}

static int __init softrc_flush_test_init(void)
{
	const int w = IB_ACCESS_REMOTE_WRITE;

	ibdev = kt_open();
	if (!ibdev)
		return -ENODEV;
	check((ibdev->attrs.device_cap_flags & IB_DEVICE_FLUSH_GLOBAL) &&
	      !(ibdev->attrs.device_cap_flags & IB_DEVICE_FLUSH_PERSISTENT),
	      "%s: IB_DEVICE_FLUSH_GLOBAL, not IB_DEVICE_FLUSH_PERSISTENT (%#llx)",
	      kt_dev, (u64)ibdev->attrs.device_cap_flags);
	pd = ib_alloc_pd(ibdev, 0);
	if (check(!IS_ERR(pd), "alloc_pd on %s", kt_dev)) {
		test_flush_ok();
		test_flush_err("MR without IB_ACCESS_FLUSH_GLOBAL", w,
			       IB_ACCESS_FLUSH_GLOBAL, 0, 0, 64,
			       IB_WC_REM_ACCESS_ERR);
		test_flush_err("bad rkey", w | IB_ACCESS_FLUSH_GLOBAL,
			       IB_ACCESS_FLUSH_GLOBAL, 0x5a5a5a00, 0, 64,
			       IB_WC_REM_ACCESS_ERR);
		test_flush_err("range past the MR's end",
			       w | IB_ACCESS_FLUSH_GLOBAL,
			       IB_ACCESS_FLUSH_GLOBAL, 0, PAGE_SIZE - 64, 128,
			       IB_WC_REM_ACCESS_ERR);
		test_flush_err("target QP without IB_ACCESS_FLUSH_GLOBAL",
			       w | IB_ACCESS_FLUSH_GLOBAL, 0, 0, 0, 64,
			       IB_WC_REM_INV_REQ_ERR);
		test_flush_refused();
		ib_dealloc_pd(pd);
	}
	ib_device_put(ibdev);
	return kt_done();
}

static void __exit softrc_flush_test_exit(void)
{
}

module_init(softrc_flush_test_init);
module_exit(softrc_flush_test_exit);
MODULE_DESCRIPTION("softrc FLUSH test (kernel ULP verbs, Linux 6.2+)");
MODULE_LICENSE("Dual BSD/GPL");

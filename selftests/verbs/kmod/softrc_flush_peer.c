// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrc_flush_peer: one side of a kernel-verbs FLUSH between two hosts
 * (selftests/verbs/interop_guest.sh runs it in both VMs, softrc against
 * Linux rxe), driven through its module parameters, which the script
 * exchanges over the guests' TCP side channel:
 *   load     dev=, gid=, time_scale= (kmod_test.h), role=target|requester:
 *            a PD, a CQ and an RC QP; read `qpn`
 *   connect  write "DQPN PSN GID" (GID as sysfs prints it): the QP to RTS
 *            towards the peer (FLUSH enabled on it). A target then
 *            registers two pages through IB_WR_REG_MR, one with
 *            IB_ACCESS_FLUSH_GLOBAL and one without, and fills the first
 *            with 0x5e; read `info`: "RKEY VA RKEY_NOFLUSH VA_NOFLUSH"
 *   flush    (requester) write "RKEY VA LEN": one IB_WR_FLUSH (an
 *            ib_rdma_wr, the length in its SGE, as softrc_flush_test.c)
 *            and its completion; read `result`: "STATUS OPCODE BYTE_LEN"
 *            (the numbers of enum ib_wc_status / ib_wc_opcode)
 * Unloading frees everything. Built where the kernel's verbs name FLUSH.
 *
 * Context: module init and parameter writes, process context; the
 * writes sleep while polling. One user at a time (the script).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/inet.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "kmod_test.h"

static char *role = "requester";
module_param(role, charp, 0444);
MODULE_PARM_DESC(role, "target (registers the memory) or requester");

static unsigned int qpn;
module_param(qpn, uint, 0444);
MODULE_PARM_DESC(qpn, "this side's QP number");

static char info_buf[96];
static char *info = info_buf;
module_param(info, charp, 0444);
MODULE_PARM_DESC(info, "target: RKEY VA RKEY_NOFLUSH VA_NOFLUSH");

static char result_buf[64];
static char *result = result_buf;
module_param(result, charp, 0444);
MODULE_PARM_DESC(result, "requester: STATUS OPCODE BYTE_LEN of the last FLUSH");

static DEFINE_MUTEX(fp_lock);
static struct ib_device *ibdev;
static struct ib_pd *pd;
static struct ib_cq *cq;
static struct ib_qp *qp;
static u8 *buf;			/* the SGE of a FLUSH (never read) */

/* A target page registered through IB_WR_REG_MR. */
struct fp_page {
	struct page *pg;
	struct scatterlist sg;
	struct ib_mr *mr;
	bool mapped;
};

static struct fp_page pages[2];	/* with and without the flush right */

static bool is_target(void)
{
	return !strcmp(role, "target");
}

static int post_wait(struct ib_send_wr *wr, struct ib_wc *wc)
{
	int err;

	wr->send_flags |= IB_SEND_SIGNALED;
	err = ib_post_send(qp, wr, NULL);
	if (err)
		return err;
	return kt_poll1(cq, wc, 20 * HZ);
}

static void page_down(struct fp_page *p)
{
	if (p->mapped)
		ib_dma_unmap_sg(ibdev, &p->sg, 1, DMA_BIDIRECTIONAL);
	if (!IS_ERR_OR_NULL(p->mr))
		ib_dereg_mr(p->mr);
	if (p->pg)
		__free_page(p->pg);
	memset(p, 0, sizeof(*p));
}

/* Map and register @p's page with @access (the QP is in RTS). */
static int page_up(struct fp_page *p, int access, u8 fill)
{
	struct ib_reg_wr wr = { .wr = { .opcode = IB_WR_REG_MR } };
	unsigned int off = 0;
	struct ib_wc wc;
	int err;

	p->pg = alloc_page(GFP_KERNEL | __GFP_ZERO);
	if (!p->pg)
		return -ENOMEM;
	memset(page_address(p->pg), fill, PAGE_SIZE);
	p->mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 1);
	if (IS_ERR(p->mr))
		return PTR_ERR(p->mr);
	sg_init_table(&p->sg, 1);
	sg_set_page(&p->sg, p->pg, PAGE_SIZE, 0);
	if (ib_dma_map_sg(ibdev, &p->sg, 1, DMA_BIDIRECTIONAL) != 1)
		return -EIO;
	p->mapped = true;
	if (ib_map_mr_sg(p->mr, &p->sg, 1, &off, PAGE_SIZE) != 1)
		return -EIO;
	ib_update_fast_reg_key(p->mr, ib_inc_rkey(p->mr->rkey) & 0xff);
	wr.mr = p->mr;
	wr.key = p->mr->rkey;
	wr.access = access;
	err = post_wait(&wr.wr, &wc);
	if (err)
		return err;
	return wc.status == IB_WC_SUCCESS ? 0 : -EIO;
}

/* "DQPN PSN GID": to RTS, then (target) the two pages. */
static int fp_connect(const char *val, const struct kernel_param *kp)
{
	const int acc = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE;
	char gid_str[64];
	union ib_gid dgid;
	struct kt_conn c = {
		.access = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_FLUSH_GLOBAL,
		.rd_atomic = 4, .dgid = &dgid, .timeout = 18,
	};
	int err;

	if (sscanf(val, "%u %u %63s", &c.dqpn, &c.psn, gid_str) != 3 ||
	    !in6_pton(gid_str, -1, dgid.raw, -1, NULL))
		return -EINVAL;
	mutex_lock(&fp_lock);
	err = qp ? kt_to_rts(qp, &c) : -ENODEV;
	if (!err && is_target()) {
		err = page_up(&pages[0], acc | IB_ACCESS_FLUSH_GLOBAL, 0x5e) ?:
		      page_up(&pages[1], acc, 0);
		if (!err)
			snprintf(info_buf, sizeof(info_buf), "%u %llu %u %llu",
				 pages[0].mr->rkey, pages[0].mr->iova,
				 pages[1].mr->rkey, pages[1].mr->iova);
	}
	mutex_unlock(&fp_lock);
	pr_info("connect to QP %u: %d\n", c.dqpn, err);
	return err;
}

static const struct kernel_param_ops fp_connect_ops = {
	.set = fp_connect,
};
module_param_cb(connect, &fp_connect_ops, NULL, 0200);
MODULE_PARM_DESC(connect, "DQPN PSN GID: connect the QP");

/* "RKEY VA LEN": one FLUSH, its completion in `result`. */
static int fp_flush(const char *val, const struct kernel_param *kp)
{
	struct ib_sge sge = { .lkey = 0 };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 0xf1, .sg_list = &sge, .num_sge = 1,
			.opcode = IB_WR_FLUSH },
	};
	struct ib_wc wc = {};
	unsigned long long va;
	u32 rkey, len;
	int err;

	if (sscanf(val, "%u %llu %u", &rkey, &va, &len) != 3 || len > PAGE_SIZE)
		return -EINVAL;
	mutex_lock(&fp_lock);
	sge.addr = (uintptr_t)buf;
	sge.length = len;
	sge.lkey = pd ? pd->local_dma_lkey : 0;
	wr.remote_addr = va;
	wr.rkey = rkey;
	err = qp ? post_wait(&wr.wr, &wc) : -ENODEV;
	snprintf(result_buf, sizeof(result_buf), "%d %d %u",
		 err ? -1 : wc.status, wc.opcode, wc.byte_len);
	mutex_unlock(&fp_lock);
	pr_info("FLUSH rkey %#x va %#llx len %u: %d, %s, opcode %d, byte_len %u\n",
		rkey, va, len, err, ib_wc_status_msg(wc.status), wc.opcode,
		wc.byte_len);
	return err;
}

static const struct kernel_param_ops fp_flush_ops = {
	.set = fp_flush,
};
module_param_cb(flush, &fp_flush_ops, NULL, 0200);
MODULE_PARM_DESC(flush, "RKEY VA LEN: post one FLUSH (requester)");

static void fp_free(void)
{
	page_down(&pages[0]);
	page_down(&pages[1]);
	if (!IS_ERR_OR_NULL(qp))
		ib_destroy_qp(qp);
	if (!IS_ERR_OR_NULL(cq))
		ib_free_cq(cq);
	if (!IS_ERR_OR_NULL(pd))
		ib_dealloc_pd(pd);
	kfree(buf);
	if (ibdev)
		ib_device_put(ibdev);
	qp = NULL;
	cq = NULL;
	pd = NULL;
	buf = NULL;
	ibdev = NULL;
}

static int __init softrc_flush_peer_init(void)
{
	struct ib_qp_init_attr ia = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (strcmp(role, "target") && strcmp(role, "requester"))
		return -EINVAL;
	ibdev = kt_open();
	if (!ibdev)
		return -ENODEV;
	buf = kzalloc(PAGE_SIZE, GFP_KERNEL);
	pd = ib_alloc_pd(ibdev, 0);
	cq = ib_alloc_cq(ibdev, NULL, 32, 0, IB_POLL_DIRECT);
	if (!buf || IS_ERR(pd) || IS_ERR(cq))
		goto fail;
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = ib_create_qp(pd, &ia);
	if (IS_ERR(qp))
		goto fail;
	qpn = qp->qp_num;
	pr_info("%s on %s: QP %u\n", role, kt_dev, qpn);
	return 0;
fail:
	pr_err("set-up failed\n");
	fp_free();
	return -ENOMEM;
}

static void __exit softrc_flush_peer_exit(void)
{
	fp_free();
}

module_init(softrc_flush_peer_init);
module_exit(softrc_flush_peer_exit);
MODULE_DESCRIPTION("softrc FLUSH interop peer (kernel ULP verbs, Linux 6.2+)");
MODULE_LICENSE("Dual BSD/GPL");

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the kernel-ULP test modules share: their parameters `dev` (the
 * device under test), `gid` (its GID index) and `time_scale` (how many
 * times slower than the reference set-up the machine runs: the suites
 * pass SOFTRC_TIME_SCALE, see selftests/vm/lib.sh), KTAP result lines
 * (check() prints "ok N ..." or "not ok N ..." and returns its condition,
 * kt_done() the plan line and the load's result), opening the device,
 * polling one completion, and RESET -> INIT -> RTR -> RTS of a kernel RC
 * QP connected to another QP on the same device (port 1, P_Key index 0,
 * global route to the device's own GID) or to a remote GID. Each module
 * is one .c file that includes this once, so the parameters and counters
 * below are that module's.
 *
 * Context: module init, process context; kt_poll1() sleeps.
 */
#ifndef SOFTRC_KMOD_TEST_H
#define SOFTRC_KMOD_TEST_H

#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>
#include <linux/string.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

static char *kt_dev = "s0";
module_param_named(dev, kt_dev, charp, 0444);
MODULE_PARM_DESC(dev, "RDMA device to test");
static int kt_gid;
module_param_named(gid, kt_gid, int, 0444);
MODULE_PARM_DESC(gid, "GID index (an IPv4 RoCE v2 GID)");
static unsigned int kt_time_scale = 1;
module_param_named(time_scale, kt_time_scale, uint, 0444);
MODULE_PARM_DESC(time_scale, "deadline multiplier for a slow machine (>= 1)");

static union ib_gid kt_sgid;	/* port 1 GID kt_gid of kt_dev */
static int kt_ntests, kt_nfailed;

static inline __printf(2, 3) bool check(bool cond, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;

	va_start(ap, fmt);
	vaf.fmt = fmt;
	vaf.va = &ap;
	kt_ntests++;
	if (!cond)
		kt_nfailed++;
	pr_info("%sok %d %pV\n", cond ? "" : "not ", kt_ntests, &vaf);
	va_end(ap);
	return cond;
}

/* @t (jiffies, or any unit of waiting) on this machine */
static inline unsigned long kt_tmo(unsigned long t)
{
	return t * max(kt_time_scale, 1U);
}

/*
 * A QP's local ACK timeout exponent (4.096 us << @exp) for this machine:
 * one more per doubling of time_scale, at most 31. On a slow machine the
 * responder may not ACK within the reference timeout without any loss,
 * and seven such expiries end the QP in RETRY_EXC_ERR.
 */
static inline u8 kt_timeout_exp(u8 exp)
{
	unsigned int k;

	for (k = 1; k < kt_time_scale && exp < 31; k *= 2)
		exp++;
	return exp;
}

/* The plan line; the module's load fails (-EIO) if a check failed. */
static inline int kt_done(void)
{
	pr_info("1..%d\n", kt_ntests);
	return kt_nfailed ? -EIO : 0;
}

/*
 * The device kt_dev with a reference held, its GID kt_gid in kt_sgid, and
 * the KTAP version line printed; NULL ("Bail out!" logged) if either is
 * missing.
 */
static inline struct ib_device *kt_open(void)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_name(kt_dev, RDMA_DRIVER_UNKNOWN);
	if (!ibdev) {
		pr_err("Bail out! no device %s\n", kt_dev);
		return NULL;
	}
	pr_info("TAP version 13\n");
	if (rdma_query_gid(ibdev, 1, kt_gid, &kt_sgid)) {
		pr_err("Bail out! no GID %d on %s\n", kt_gid, kt_dev);
		ib_device_put(ibdev);
		return NULL;
	}
	return ibdev;
}

/*
 * One completion of @cq in @wc within @timeout jiffies (scaled by
 * time_scale); -ETIMEDOUT with
 * @wc zeroed but for status IB_WC_GENERAL_ERR if none came.
 */
static inline int kt_poll1(struct ib_cq *cq, struct ib_wc *wc,
			   unsigned long timeout)
{
	unsigned long end = jiffies + kt_tmo(timeout);

	while (time_before(jiffies, end)) {
		if (ib_poll_cq(cq, 1, wc) == 1)
			return 0;
		usleep_range(50, 200);
	}
	memset(wc, 0, sizeof(*wc));
	wc->status = IB_WC_GENERAL_ERR;
	return -ETIMEDOUT;
}

/* What differs between the modules' connections (peer: on kt_sgid). */
struct kt_conn {
	u32 dqpn;
	u32 psn;		/* RTR: rq_psn; RTS: sq_psn */
	int access;		/* INIT: qp_access_flags */
	u8 rd_atomic;		/* max_dest_rd_atomic and max_rd_atomic */
	union ib_gid *dgid;	/* RTR: the peer's GID; NULL: kt_sgid */
	u8 timeout;		/* RTS: local ACK timeout; 0: 14 (both scaled) */
};

/*
 * RESET -> INIT -> RTR -> RTS: MTU 1024, RNR timer 12, timeout 14 (unless
 * c->timeout says otherwise; kt_timeout_exp() of it), seven retries and RNR retries, hop limit
 * 64. 0 or the failing modify's error.
 */
static inline int kt_to_rts(struct ib_qp *qp, const struct kt_conn *c)
{
	struct ib_qp_attr a = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = c->access,
	};
	int err;

	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = c->dqpn;
	a.rq_psn = c->psn;
	a.max_dest_rd_atomic = c->rd_atomic;
	a.min_rnr_timer = 12;
	a.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, c->dgid ?: &kt_sgid, 0, kt_gid, 64, 0);
	err = ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			   IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = kt_timeout_exp(c->timeout ?: 14);
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = c->psn;
	a.max_rd_atomic = c->rd_atomic;
	return ib_modify_qp(qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

#endif /* SOFTRC_KMOD_TEST_H */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Queue pairs, the object and its state: create/modify/query/destroy with
 * the IBTA state machine of each type (RC, UC, UD, and the GSI QP: UD at
 * the alias QPN 1, one per device, kernel only), modify_qp's attributes
 * translated into the engine's (softrc_eng_init() at creation and RESET,
 * softrc_eng_modify() after), and the QPN table the receive path finds a
 * QP in. The posting paths are post.c and wr.c, completion delivery
 * deliver.c.
 *
 * Context: the verbs run in process context and may sleep, except under
 * qp->lock; softrc_qp_get(), softrc_qp_put() and softrc_qp_rx_ok() in any
 * context (the receive path in softirq).
 *
 * Touches: the QP (attributes, state, the engine through core/engine.h,
 * the storage of its rings), the device's QPN table and QP count, and at
 * creation and destroy its stats entry, debugfs file and multicast
 * attachments.
 */
#include <linux/log2.h>
#include <linux/random.h>
#include <linux/vmalloc.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/rdma_user_rxe.h>
#include <rdma/uverbs_ioctl.h>

#include "compat.h"
#include "qp.h"
#include "timers.h"
#include "post.h"
#include "wr.h"
#include "deliver.h"
#include "engine_ops.h"
#include "mcast.h"
#include "queue.h"
#include "device.h"
#include "srq.h"
#include "ah.h"
#include "trace.h"
#include "dump.h"

#define SOFTRC_QPN_MIN		2	/* QPN 0 and 1 are reserved */
#define SOFTRC_QPN_MAX		0xffffff
#define SOFTRC_RQ_FEED_DEPTH	2	/* engine RQ slots fed on demand */
/*
 * Engine SQ slots of a user QP. Its WQEs wait in its mapped ring until
 * the doorbell or an ACK pulls them (post.c), so the kernel's copy of a
 * WQE (engine slot, shadow, SGEs, pins) and the completion ring it sizes
 * need room only for those in flight: the PSN window (max_unacked, 128)
 * holds 8 messages of 16 packets, and 64 small ones with an ACK asked
 * every 16 packets and on the newest WQE of a full SQ (core/req.c).
 * Documentation/softrc.rst, "Memory of a QP".
 */
#define SOFTRC_USQ_WINDOW	64
/* a transmit that empties a full window spends its budget (post.c) */
static_assert(SOFTRC_USQ_WINDOW <= SOFTRC_TX_BUDGET);
#define SOFTRC_QP_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | SOFTRC_QP_ACCESS_FLUSH)

/* Source of softrc_qp.uid. */
static atomic64_t softrc_qp_uids = ATOMIC64_INIT(0);

/*
 * AckReq on the last packet of every RC message, as before the AckReq
 * policy (Documentation/softrc.rst, "ACKs"); a QP takes the value in force
 * when it is created or reset.
 */
static bool softrc_ackreq_msg;
module_param_named(ackreq_every_msg, softrc_ackreq_msg, bool, 0644);
MODULE_PARM_DESC(ackreq_every_msg, "ask an ACK for every RC message, not only signaled ones");

/* ---- QPN table ---------------------------------------------------- */

/* RCU lookup + reference; NULL if unknown, not yet built or dying. */
struct softrc_qp *softrc_qp_get(struct softrc_dev *sdev, u32 qpn)
{
	struct softrc_qp_handle *h;
	struct softrc_qp *qp = NULL;

	rcu_read_lock();
	h = xa_load(&sdev->dp->qp_xa, qpn);
	if (h && refcount_inc_not_zero(&h->ref))
		qp = h->qp;
	rcu_read_unlock();
	return qp;
}

void softrc_qp_put(struct softrc_qp *qp)
{
	if (refcount_dec_and_test(&qp->h->ref))
		complete(&qp->released);
}

/* May a received packet be handed to the engine? (RTR and later) */
bool softrc_qp_rx_ok(const struct softrc_qp *qp)
{
	return !qp->dying && qp->state != IB_QPS_RESET &&
	       qp->state != IB_QPS_INIT;
}

/* ---- engine life cycle ---------------------------------------------- */

/* Every pin of the QP: the engine's and the shadows' (reset, destroy). */
static void softrc_qp_unpin_all(struct softrc_qp *qp)
{
	u32 i;

	lockdep_assert_held(&qp->lock);
	if (softrc_eng_started(&qp->core))
		softrc_eng_release(&qp->core);
	for (i = 0; i < qp->sq_depth; i++)
		softrc_qp_sq_unpin(qp, i);
	for (i = 0; i < qp->rq_depth; i++)
		softrc_qp_rq_unpin(qp, i);
}

static u32 softrc_port_pmtu(struct softrc_dev *sdev)
{
	return ib_mtu_enum_to_int(softrc_mtu_from_netdev(READ_ONCE(sdev->ndev->mtu)));
}

/*
 * Remote operations the QP does not enable, as SOFTRC_ACCESS_* bits (the
 * same values as IB_ACCESS_REMOTE_* and IB_ACCESS_FLUSH_*, which
 * softrc_glue_mr_check() relies on too). A kernel without FLUSH never
 * lets a QP have the flush bits (SOFTRC_QP_ACCESS), so there every FLUSH
 * request is an invalid request, as for a device that does not know it.
 */
static u16 softrc_qp_remote_deny(const struct softrc_qp *qp)
{
	return ~qp->attr.qp_access_flags & (IB_ACCESS_REMOTE_WRITE |
					    IB_ACCESS_REMOTE_READ |
					    IB_ACCESS_REMOTE_ATOMIC |
					    SOFTRC_ACCESS_FLUSH_GLOBAL |
					    SOFTRC_ACCESS_FLUSH_PERSISTENT);
}

/*
 * (Re)start the engine from scratch: creation and RESET.
 * Return: 0, or -EINVAL if the engine refused the attributes or storage.
 */
static int softrc_qp_core_reset(struct softrc_qp *qp)
{
	struct softrc_eng_attr ca = {
		.transport = softrc_qp_transport(qp),
		.qkey = qp->attr.qkey,
		.sqpn = qp->ibqp.qp_num,
		.pmtu = qp->pmtu,
		.sq_psn = qp->attr.sq_psn,
		.rq_psn = qp->attr.rq_psn,
		.dqpn = qp->attr.dest_qp_num,
		.pkey = IB_DEFAULT_PKEY_FULL,
		.timeout = qp->attr.timeout,
		.retry_cnt = qp->attr.retry_cnt,
		.rnr_retry = qp->attr.rnr_retry,
		.min_rnr_timer = qp->attr.min_rnr_timer,
		.max_rd_atomic = qp->attr.max_rd_atomic,
		.ackreq_msg = READ_ONCE(softrc_ackreq_msg),
		.no_credits = true,
		.clock_slack_ns = softrc_now_slack(),
		.remote_deny = softrc_qp_remote_deny(qp),
	};
	struct softrc_eng_storage st = {
		.sq = qp->core_sq,
		.sq_depth = qp->sq_depth,
		.rq = qp->core_rq,
		.rq_depth = qp->rq_depth,
		.res = qp->core_res,
		.nres = qp->attr.max_dest_rd_atomic,
		.res_cap = qp->core_res_cap,
	};

	lockdep_assert_held(&qp->lock);
	/* the WQEs and responder resources are discarded: so are their pins */
	softrc_qp_unpin_all(qp);
	return softrc_eng_init(&qp->core, &softrc_glue_ops, qp, &ca, &st) ?
	       -EINVAL : 0;
}

/* Attributes the engine reads live; PSNs only before the first packet. */
static void softrc_qp_core_apply(struct softrc_qp *qp, int mask,
				 enum ib_qp_state new)
{
	struct softrc_eng_modify mod = {
		.attr = {
			.qkey = qp->attr.qkey,
			.dqpn = qp->attr.dest_qp_num,
			.timeout = qp->attr.timeout,
			.retry_cnt = qp->attr.retry_cnt,
			.rnr_retry = qp->attr.rnr_retry,
			.min_rnr_timer = qp->attr.min_rnr_timer,
			.max_rd_atomic = qp->attr.max_rd_atomic,
			.remote_deny = softrc_qp_remote_deny(qp),
			.rq_psn = qp->attr.rq_psn,
			.sq_psn = qp->attr.sq_psn,
		},
		.max_dest_rd_atomic = qp->attr.max_dest_rd_atomic,
		.mask = SOFTRC_MODIFY_PATH,
	};

	lockdep_assert_held(&qp->lock);
	/* UD: messages up to the port's MTU, as it is now */
	if (softrc_qp_is_ud(qp))
		qp->pmtu = softrc_port_pmtu(qp->sdev);
	mod.attr.pmtu = qp->pmtu;
	if ((mask & IB_QP_RQ_PSN) && new == IB_QPS_RTR)
		mod.mask |= SOFTRC_MODIFY_RQ_PSN;
	if ((mask & IB_QP_SQ_PSN) && qp->state != IB_QPS_RTS &&
	    qp->state != IB_QPS_SQD)
		mod.mask |= SOFTRC_MODIFY_SQ_PSN;
	if (mask & IB_QP_RETRY_CNT)
		mod.mask |= SOFTRC_MODIFY_RETRY_CNT;
	if (mask & IB_QP_RNR_RETRY)
		mod.mask |= SOFTRC_MODIFY_RNR_RETRY;
	/* within core_res_cap (softrc_qp_res_grow): cannot fail */
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		mod.mask |= SOFTRC_MODIFY_MAX_DEST_RD_ATOMIC;
	softrc_eng_modify(&qp->core, &mod);
}

/* ---- attributes -------------------------------------------------- */

/* Copy a GID as an IPv6 address; false if it is IPv4-mapped. */
static bool softrc_gid_to_ip6(const union ib_gid *gid, struct in6_addr *a6)
{
	memcpy(a6, gid->raw, sizeof(*a6));
	return !ipv6_addr_v4mapped(a6);
}

static int softrc_path_from_ah(struct softrc_qp *qp,
			       const struct rdma_ah_attr *ah,
			       struct softrc_path *av)
{
	const struct ib_global_route *grh;
	bool sv6, dv6;

	if (ah->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    !(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) ||
	    (rdma_ah_get_port_num(ah) && rdma_ah_get_port_num(ah) != 1))
		return -EINVAL;
	grh = rdma_ah_read_grh(ah);
	if (!grh->sgid_attr ||
	    grh->sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	sv6 = softrc_gid_to_ip6(&grh->sgid_attr->gid, &av->saddr.v6);
	dv6 = softrc_gid_to_ip6(&grh->dgid, &av->daddr.v6);
	if (sv6 != dv6)
		return -EINVAL;
	if (!sv6) {
		/* IPv4-mapped: the address is the last 4 bytes */
		av->saddr.v4 = av->saddr.v6.s6_addr32[3];
		av->daddr.v4 = av->daddr.v6.s6_addr32[3];
	}
	av->ipv6 = sv6;
	av->tos = grh->traffic_class;
	av->ttl = grh->hop_limit ? grh->hop_limit : 64;
	av->flow_label = grh->flow_label & 0xfffff;
	av->ifindex = softrc_gid_ifindex(grh->sgid_attr);
	return 0;
}

/*
 * Every attribute in @mask within its range; -EINVAL otherwise. A Q_Key
 * with bit 31 set is a controlled one (IBTA Vol 1 §10.2.4): only a
 * privileged consumer may give it to a QP (QP1's is one), -EPERM.
 */
static int softrc_qp_check_attr(struct softrc_qp *qp,
				const struct ib_qp_attr *attr, int mask,
				struct ib_udata *udata)
{
	if ((mask & IB_QP_QKEY) && (attr->qkey & BIT(31)) && udata &&
	    !capable(CAP_NET_RAW))
		return -EPERM;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index)
		return -EINVAL;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SOFTRC_QP_ACCESS))
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096 ||
	     ib_mtu_enum_to_int(attr->path_mtu) > softrc_port_pmtu(qp->sdev)))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_SQ_PSN) && (attr->sq_psn & ~SOFTRC_PSN_MASK))
		return -EINVAL;
	if ((mask & IB_QP_RQ_PSN) && (attr->rq_psn & ~SOFTRC_PSN_MASK))
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && (attr->dest_qp_num & ~SOFTRC_PSN_MASK))
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SOFTRC_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SOFTRC_MAX_RD_ATOMIC)
		return -EINVAL;
	if (mask & IB_QP_ALT_PATH)
		return -EOPNOTSUPP;	/* no automatic path migration */
	return 0;
}

static void softrc_qp_save_attr(struct softrc_qp *qp,
				const struct ib_qp_attr *attr, int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PATH_MTU) {
		a->path_mtu = attr->path_mtu;
		qp->pmtu = ib_mtu_enum_to_int(attr->path_mtu);
	}
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
	if (mask & IB_QP_AV)
		rdma_replace_ah_attr(&a->ah_attr, &attr->ah_attr);
}

/* Apply a state change; returns with the engine in step. */
static void softrc_qp_transition(struct softrc_qp *qp, int mask,
				 enum ib_qp_state new)
{
	enum ib_qp_state old = qp->state;

	lockdep_assert_held(&qp->lock);
	if (old != new)
		trace_softrc_qp_state(qp, old, new);
	switch (new) {
	case IB_QPS_RESET:
		qp->state = IB_QPS_RESET;
		qp->attr.sq_psn = 0;
		/* every attribute was checked when set; create passed this */
		WARN_ON_ONCE(softrc_qp_core_reset(qp));
		break;
	case IB_QPS_ERR:
		qp->state = IB_QPS_ERR;
		softrc_eng_set_error(&qp->core);
		break;
	default:
		softrc_qp_core_apply(qp, mask, new);
		/* RTS -> SQD drains; SQD -> RTS resumes (IBTA ch. 10.3) */
		if (new == IB_QPS_SQD && qp->state != IB_QPS_SQD)
			qp->sqd_seen = false;
		softrc_eng_sq_drain(&qp->core, new == IB_QPS_SQD);
		qp->state = new;
		if (new == IB_QPS_SQD)
			softrc_qp_check_drained(qp);
		break;
	}
}

/*
 * Responder resources are allocated when max_dest_rd_atomic asks for
 * them (INIT to RTR, or later), not at create: UD, UC and the GSI QP
 * never answer a READ or an ATOMIC, and a WRITE/SEND-only RC QP (perftest
 * gives 1) needs one slot, not SOFTRC_MAX_RD_ATOMIC. The storage only
 * grows: a smaller value keeps it (the engine uses the first entries).
 * Process context, before the QP lock: returns new zeroed storage for
 * softrc_qp_res_grow(), NULL if what the QP has is enough, or an
 * ERR_PTR.
 */
static struct softrc_eng_rd_res *
softrc_qp_res_alloc(struct softrc_qp *qp, const struct ib_qp_attr *attr,
		    int mask)
{
	struct softrc_eng_rd_res *res;

	if (!(mask & IB_QP_MAX_DEST_RD_ATOMIC) ||
	    attr->max_dest_rd_atomic <= READ_ONCE(qp->core_res_cap))
		return NULL;
	res = kvcalloc(attr->max_dest_rd_atomic, sizeof(*res),
		       GFP_KERNEL_ACCOUNT);
	return res ?: ERR_PTR(-ENOMEM);
}

/*
 * Under the QP lock, once the modify is known to go ahead: move the
 * engine to the storage softrc_qp_res_alloc() made, if it is still
 * larger (another modify may have grown it meanwhile). Every resource is
 * released first. Returns the storage for the caller to free after the
 * lock: the old one, or @res itself when unused.
 */
static struct softrc_eng_rd_res *
softrc_qp_res_grow(struct softrc_qp *qp, struct softrc_eng_rd_res *res,
		   u32 n)
{
	struct softrc_eng_rd_res *old = qp->core_res;

	lockdep_assert_held(&qp->lock);
	if (!res || n <= qp->core_res_cap)
		return res;
	/* n <= cap: cannot fail */
	WARN_ON_ONCE(softrc_eng_set_resources(&qp->core, res, n, n));
	qp->core_res = res;
	WRITE_ONCE(qp->core_res_cap, n);
	return old;
}

int softrc_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		     int mask, struct ib_udata *udata)
{
	struct softrc_qp *qp = to_sqp(ibqp);
	struct softrc_eng_rd_res *res;
	enum ib_qp_state cur, new;
	struct softrc_path av;
	int err;

	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	err = softrc_qp_check_attr(qp, attr, mask, udata);
	if (err)
		return err;
	if (mask & IB_QP_AV) {
		err = softrc_path_from_ah(qp, &attr->ah_attr, &av);
		if (err)
			return err;
	}
	res = softrc_qp_res_alloc(qp, attr, mask);
	if (IS_ERR(res))
		return PTR_ERR(res);

	spin_lock_bh(&qp->lock);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	new = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (cur != qp->state ||
	    !ib_modify_qp_is_ok(cur, new, ibqp->qp_type, mask)) {
		err = -EINVAL;
		goto out;
	}
	if (qp->dying) {
		err = -EINVAL;
		goto out;
	}
	res = softrc_qp_res_grow(qp, res, attr->max_dest_rd_atomic);
	softrc_qp_save_attr(qp, attr, mask);
	if (mask & IB_QP_AV) {
		qp->av = av;
		dst_cache_reset(&qp->dst_cache);
	}
	if (mask & (IB_QP_AV | IB_QP_DEST_QPN))
		qp->av.sport = rdma_get_udp_sport(qp->av.flow_label,
						  qp->ibqp.qp_num,
						  qp->attr.dest_qp_num);
	softrc_qp_transition(qp, mask, new);
	softrc_qp_run_tx(qp);
out:
	spin_unlock_bh(&qp->lock);
	kvfree(res);
	softrc_qp_drain_comps(qp);
	return err;
}

int softrc_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_qp_init_attr *init)
{
	struct softrc_qp *qp = to_sqp(ibqp);

	spin_lock_bh(&qp->lock);
	*attr = qp->attr;
	/* no reference for the caller: it reads the GID index */
	attr->ah_attr.grh.sgid_attr = NULL;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->sq_draining = qp->state == IB_QPS_SQD &&
			    !softrc_eng_sq_drained(&qp->core);
	spin_unlock_bh(&qp->lock);
	attr->cap.max_send_wr = qp->max_send_wr;
	attr->cap.max_send_sge = qp->max_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->cap.max_recv_wr = qp->srq ? 0 : qp->max_recv_wr;
	attr->cap.max_recv_sge = qp->srq ? 0 : qp->max_recv_sge;

	memset(init, 0, sizeof(*init));
	init->send_cq = ibqp->send_cq;
	init->recv_cq = ibqp->recv_cq;
	init->srq = ibqp->srq;
	init->qp_type = ibqp->qp_type;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init->cap = attr->cap;
	init->port_num = 1;
	return 0;
}

/* ---- create / destroy ----------------------------------------------- */

static int softrc_qp_check_init(struct ib_qp_init_attr *init,
				struct ib_udata *udata)
{
	struct ib_qp_cap *cap = &init->cap;

	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_GSI:
		/* the MAD layer's, on our one port */
		if (udata || (init->port_num && init->port_num != 1))
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	if (init->create_flags)
		return -EOPNOTSUPP;
	if (!init->send_cq || !init->recv_cq)
		return -EINVAL;
	if (cap->max_send_wr > SOFTRC_MAX_QP_WR ||
	    cap->max_send_sge > SOFTRC_MAX_SGE ||
	    cap->max_inline_data > SOFTRC_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > SOFTRC_MAX_QP_WR ||
			   cap->max_recv_sge > SOFTRC_MAX_SGE))
		return -EINVAL;
	return 0;
}

/* Size the send side and allocate its rings; caps are written back. */
static int softrc_qp_init_sq(struct softrc_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 area = max3(cap->max_send_sge * (u32)sizeof(struct ib_sge),
			cap->max_inline_data, (u32)sizeof(struct ib_sge));
	u32 n = max(cap->max_send_wr, 1u);
	int err;

	qp->sq_area = area;
	qp->max_sge = area / sizeof(struct ib_sge);
	qp->max_inline = area;
	if (qp->is_user) {
		qp->usq = kzalloc(sizeof(*qp->usq), GFP_KERNEL_ACCOUNT);
		if (!qp->usq)
			return -ENOMEM;
		err = softrc_queue_init(qp->sdev, qp->usq, &n,
					sizeof(struct rxe_send_wqe) + area);
		if (err) {
			kfree(qp->usq);
			qp->usq = NULL;
			return err;
		}
		qp->sq_scratch = kmalloc(softrc_queue_elem_size(qp->usq),
					 GFP_KERNEL_ACCOUNT);
	} else {
		n = roundup_pow_of_two(n + 1) - 1;
		qp->sq_scratch = kmalloc(area, GFP_KERNEL_ACCOUNT);
	}
	/* sizes follow the caps: charged to the creator's memory cgroup */
	qp->max_send_wr = n;
	qp->sq_depth = roundup_pow_of_two(n);
	if (qp->is_user)
		qp->sq_depth = min_t(u32, qp->sq_depth, SOFTRC_USQ_WINDOW);
	qp->core_sq = kvcalloc(qp->sq_depth, sizeof(*qp->core_sq),
			       GFP_KERNEL_ACCOUNT);
	qp->sqs = kvcalloc(qp->sq_depth, sizeof(*qp->sqs), GFP_KERNEL_ACCOUNT);
	qp->sq_data = kvcalloc(qp->sq_depth, area, GFP_KERNEL_ACCOUNT);
	qp->sq_pins = kvcalloc((size_t)qp->sq_depth * qp->max_sge,
			       sizeof(*qp->sq_pins), GFP_KERNEL_ACCOUNT);
	if (!qp->sq_scratch || !qp->core_sq || !qp->sqs || !qp->sq_data ||
	    !qp->sq_pins)
		return -ENOMEM;
	cap->max_send_wr = qp->max_send_wr;
	cap->max_send_sge = qp->max_sge;
	cap->max_inline_data = qp->max_inline;
	return 0;
}

/* Size the receive side: kernel RQ, user RQ ring, or SRQ. */
static int softrc_qp_init_rq(struct softrc_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 nsge = cap->max_recv_sge;
	u32 n = max(cap->max_recv_wr, 1u);
	int err;

	if (init->srq) {
		qp->srq = to_ssrq(init->srq);
		nsge = SOFTRC_MAX_SGE;
		qp->rq_depth = SOFTRC_RQ_FEED_DEPTH;
		qp->max_recv_wr = SOFTRC_RQ_FEED_DEPTH;
	} else if (qp->is_user) {
		qp->urq = kzalloc(sizeof(*qp->urq), GFP_KERNEL_ACCOUNT);
		if (!qp->urq)
			return -ENOMEM;
		err = softrc_queue_init(qp->sdev, qp->urq, &n,
					sizeof(struct rxe_recv_wqe) +
					nsge * sizeof(struct rxe_sge));
		if (err) {
			kfree(qp->urq);
			qp->urq = NULL;
			return err;
		}
		qp->rq_depth = SOFTRC_RQ_FEED_DEPTH;
		qp->max_recv_wr = n;
	} else {
		n = roundup_pow_of_two(n + 1) - 1;
		qp->rq_depth = n + 1;
		qp->max_recv_wr = n;
	}
	qp->max_recv_sge = nsge;
	qp->rq_stride = ALIGN(offsetof(struct softrc_rwqe, sge) +
			      nsge * sizeof(struct ib_sge), 8);
	qp->core_rq = kvcalloc(qp->rq_depth, sizeof(*qp->core_rq),
			       GFP_KERNEL_ACCOUNT);
	qp->rq_data = kvcalloc(qp->rq_depth, qp->rq_stride, GFP_KERNEL_ACCOUNT);
	qp->rq_bad = bitmap_zalloc(qp->rq_depth, GFP_KERNEL_ACCOUNT);
	qp->rq_pins = kvcalloc((size_t)qp->rq_depth * max(nsge, 1u),
			       sizeof(*qp->rq_pins), GFP_KERNEL_ACCOUNT);
	if (!qp->core_rq || !qp->rq_data || !qp->rq_bad || !qp->rq_pins)
		return -ENOMEM;
	if (!init->srq) {
		cap->max_recv_wr = qp->max_recv_wr;
		cap->max_recv_sge = nsge;
	}
	return 0;
}

/*
 * The pending-completion ring: room for a full SQ and RQ completing at
 * once (a flush), which softrc_qp_pwc_room() guarantees, and as much
 * again so that completions not yet handed to the CQ rarely hold back
 * new WQEs (Documentation/softrc.rst, "Pending completions").
 */
static int softrc_qp_init_pwc(struct softrc_qp *qp)
{
	u32 n = 2 * (qp->sq_depth + qp->rq_depth + 1);

	qp->pwc_size = roundup_pow_of_two(n);
	qp->pwc = kvcalloc(qp->pwc_size, sizeof(*qp->pwc), GFP_KERNEL_ACCOUNT);
	return qp->pwc ? 0 : -ENOMEM;
}

static void softrc_qp_free(struct softrc_qp *qp)
{
	/* run_tx sends every batch before the QP lock is dropped */
	WARN_ON_ONCE(qp->tx_batch.head);
	if (qp->usq) {
		softrc_queue_free(qp->usq);
		kfree(qp->usq);
	}
	if (qp->urq) {
		softrc_queue_free(qp->urq);
		kfree(qp->urq);
	}
	kfree(qp->sq_scratch);
	kvfree(qp->core_sq);
	kvfree(qp->sqs);
	kvfree(qp->sq_data);
	kvfree(qp->sq_pins);
	kvfree(qp->core_rq);
	kvfree(qp->rq_pins);
	kvfree(qp->rq_data);
	bitmap_free(qp->rq_bad);
	kvfree(qp->pwc);
	kvfree(qp->core_res);
	/* a receive-path reader may still look at its refcount */
	kfree_rcu(qp->h, rcu);
	dst_cache_destroy(&qp->dst_cache);
}

static int softrc_qp_export(struct softrc_qp *qp, struct ib_udata *udata)
{
	struct softrc_ucontext *uc = rdma_udata_to_drv_context(udata,
					struct softrc_ucontext, ibuc);
	struct rxe_create_qp_resp resp = {};
	int err;

	if (udata->outlen < sizeof(resp))
		return -EINVAL;
	err = softrc_queue_export(qp->usq, &uc->ibuc, &resp.sq_mi);
	if (!err && qp->urq)
		err = softrc_queue_export(qp->urq, &uc->ibuc, &resp.rq_mi);
	if (err)
		return err;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

int softrc_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		     struct ib_udata *udata)
{
	struct softrc_qp *qp = to_sqp(ibqp);
	struct softrc_dev *sdev = to_sdev(ibqp->device);
	u32 qpn;
	int err;

	err = softrc_qp_check_init(init, udata);
	if (err)
		return err;
	if (!softrc_count_get(&sdev->num_qp, sdev->caps.max_qp))
		return -ENOMEM;
	/* the rxe ABI sends no create_qp command data; ignore any */
	qp->sdev = sdev;
	qp->uid = atomic64_inc_return(&softrc_qp_uids);
	qp->is_user = !!udata;
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;
	qp->pmtu = ib_mtu_enum_to_int(IB_MTU_1024);
	qp->attr.path_mtu = IB_MTU_1024;
	if (softrc_qp_is_ud(qp))
		qp->pmtu = softrc_port_pmtu(sdev);
	qp->attr.port_num = 1;
	spin_lock_init(&qp->lock);
	qp->tx_ip_id = get_random_u32();
	spin_lock_init(&qp->comp_lock);
	init_completion(&qp->released);
	tasklet_setup(&qp->tx_task, softrc_qp_tx_task);
	softrc_timers_init(qp);
	err = dst_cache_init(&qp->dst_cache, GFP_KERNEL);
	if (err)
		goto err_count;

	qp->h = kzalloc(sizeof(*qp->h), GFP_KERNEL_ACCOUNT);
	err = qp->h ? softrc_qp_init_sq(qp, init) : -ENOMEM;
	if (!err)
		err = softrc_qp_init_rq(qp, init);
	if (!err)
		err = softrc_qp_init_pwc(qp);
	if (err)
		goto err_free;

	/* a reserved (NULL) entry until the QP is built; QP1 is the alias */
	if (init->qp_type == IB_QPT_GSI) {
		qpn = 1;
		err = xa_insert(&sdev->dp->qp_xa, qpn, NULL, GFP_KERNEL);
	} else {
		err = xa_alloc_cyclic(&sdev->dp->qp_xa, &qpn, NULL,
				      XA_LIMIT(SOFTRC_QPN_MIN, SOFTRC_QPN_MAX),
				      &sdev->dp->qp_next, GFP_KERNEL);
	}
	if (err < 0)
		goto err_free;
	ibqp->qp_num = qpn;
	refcount_set(&qp->h->ref, 1);
	qp->h->qp = qp;
	spin_lock_bh(&qp->lock);
	err = softrc_qp_core_reset(qp);
	spin_unlock_bh(&qp->lock);
	if (err)
		goto err_qpn;

	if (udata) {
		err = softrc_qp_export(qp, udata);
		if (err)
			goto err_qpn;
	}
	/* fully built: now the receive path may find it */
	softrc_stats_qp_new(qp);
	xa_store(&sdev->dp->qp_xa, qpn, qp->h, GFP_KERNEL);
	softrc_debugfs_qp_add(qp);
	return 0;

err_qpn:
	xa_erase(&sdev->dp->qp_xa, qpn);
err_free:
	softrc_qp_free(qp);
err_count:
	atomic_dec(&sdev->num_qp);
	return err;
}

int softrc_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	struct softrc_qp *qp = to_sqp(ibqp);

	softrc_debugfs_qp_del(qp);
	spin_lock_bh(&qp->lock);
	qp->dying = true;
	spin_unlock_bh(&qp->lock);

	/*
	 * No new receive-path users; the running ones hold a reference, or
	 * are between their lookup and a refcount_inc_not_zero() that fails
	 * from now on and reads only the handle, which outlives them
	 * (kfree_rcu in softrc_qp_free). No grace period to wait for: one
	 * is ticks long (16 ms a QP under QEMU, a few ms expedited), which
	 * made tearing down many rdma_cm connections slower than rxe's.
	 */
	softrc_mcast_qp_gone(qp);
	xa_erase(&qp->sdev->dp->qp_xa, ibqp->qp_num);
	softrc_timers_stop(qp);
	tasklet_kill(&qp->tx_task);
	softrc_qp_put(qp);
	wait_for_completion(&qp->released);

	/* nothing runs the engine any more: drop what it and the shadows hold */
	spin_lock_bh(&qp->lock);
	softrc_qp_unpin_all(qp);
	spin_unlock_bh(&qp->lock);

	softrc_stats_qp_dead(qp);
	rdma_destroy_ah_attr(&qp->attr.ah_attr);
	softrc_qp_free(qp);
	atomic_dec(&qp->sdev->num_qp);
	return 0;
}

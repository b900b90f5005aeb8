// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * restrack driver attributes: what `rdma resource show qp|cq|mr -dd`
 * prints after the RDMA core's own fields, and the raw records
 * (include/softrc/resraw.h) `rdma resource show qp|cq|mr -r` prints;
 * and the QP snapshot and summary walk the debugfs dump (debugfs.c)
 * shares.
 *
 * Context: process context (the RDMA netlink dump holds a restrack
 * reference on the object, no lock of ours; debugfs read). The QP is
 * copied under qp->lock (spin_lock_bh, nothing sleeps or allocates under
 * it) and printed after; CQ and MR fields are single loads.
 */
#include <linux/capability.h>
#include <linux/slab.h>
#include <rdma/restrack.h>
#include <rdma/rdma_netlink.h>

#include <softrc/resraw.h>

#include "softrc.h"
#include "qp.h"
#include "timers.h"
#include "cq.h"
#include "mr.h"
#include "dump.h"

const char *softrc_ib_qps_name(enum ib_qp_state state)
{
	static const char *const names[] = {
		[IB_QPS_RESET] = "reset", [IB_QPS_INIT] = "init",
		[IB_QPS_RTR] = "rtr",	  [IB_QPS_RTS] = "rts",
		[IB_QPS_SQD] = "sqd",	  [IB_QPS_SQE] = "sqe",
		[IB_QPS_ERR] = "err",
	};

	if ((unsigned int)state < ARRAY_SIZE(names) && names[state])
		return names[state];
	return "unknown";
}

/* Copy the pending completions cons..prod (the oldest SOFTRC_SNAP_PWC). */
static void softrc_qp_snap_pwc(struct softrc_qp *qp, struct softrc_qp_snap *s)
{
	u32 i;

	lockdep_assert_held(&qp->lock);
	/*
	 * Only the producer (under qp->lock, held here) overwrites entries;
	 * the drainer only reads them, so cons..prod stays intact while the
	 * lock is held. A stale @pwc_cons shows an entry just handed over.
	 */
	s->pwc_prod = qp->pwc_prod;
	/* acquire: pairs with the drainer's release of the slots it read */
	s->pwc_cons = smp_load_acquire(&qp->pwc_cons);
	s->pwc_size = qp->pwc_size;
	s->pwc_pending = s->pwc_prod - s->pwc_cons;
	s->npwc = min_t(u32, s->pwc_pending, SOFTRC_SNAP_PWC);
	for (i = 0; i < s->npwc; i++)
		s->pwc[i] = qp->pwc[(s->pwc_cons + i) & (qp->pwc_size - 1)];
}

/**
 * softrc_qp_snap_take() - copy a QP's state for printing
 * @qp:	a QP the caller keeps alive (restrack reference, or the debugfs
 *	file it is read through, which destroy removes first)
 *
 * Return: a snapshot to kvfree(), or NULL (no memory).
 */
struct softrc_qp_snap *softrc_qp_snap_take(struct softrc_qp *qp)
{
	struct softrc_qp_snap *s;

	s = kvzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return NULL;
	s->now = softrc_now();
	s->qp_type = qp->ibqp.qp_type;
	s->is_user = qp->is_user;

	spin_lock_bh(&qp->lock);
	softrc_eng_snapshot(&qp->core, &s->eng, s->res, ARRAY_SIZE(s->res));
	s->state = qp->state;
	s->dying = qp->dying;
	s->sqd_seen = qp->sqd_seen;
	s->cq_lost = READ_ONCE(qp->cq_lost);
	s->pmtu = qp->pmtu;
	if (qp->pwc)
		softrc_qp_snap_pwc(qp, s);
	spin_unlock_bh(&qp->lock);
	return s;
}

/* ns until @deadline, 0 if disarmed, 1 if already due */
static u64 softrc_time_left(u64 deadline, u64 now)
{
	if (!deadline)
		return 0;
	return deadline > now ? deadline - now : 1;
}

static const char *softrc_name_of(const char *const *names, u32 nr, u32 v)
{
	return v < nr && names[v] ? names[v] : "unknown";
}

/*
 * A QP's restrack summary, computed once from a snapshot: the -dd walk
 * and the raw record both print it. The engine states are its enum
 * values; timers is SOFTRC_RESRAW_TIMER_* armed, timer_ns[] the ns until
 * each timer (enum softrc_eng_timer_id) fires (0: disarmed).
 */
struct softrc_qp_summary {
	u8 state;
	u8 req_state;
	u8 resp_state;
	u8 timers;
	u32 retry_left;
	u32 rnr_left;
	u32 sq_psn;
	u32 rq_psn;
	u32 una;
	u32 unacked_psns;
	u32 rd_out;
	u32 rd_max;
	u32 res_live;
	u32 pending;
	u32 pmtu;
	u64 timer_ns[SOFTRC_TIMER_NR];
	u64 retransmits;
	u64 timeouts;
	u64 seq_naks_rcvd;
	u64 rnr_naks_rcvd;
};

static void softrc_qp_summarize(const struct softrc_qp_snap *s,
				struct softrc_qp_summary *q)
{
	const struct softrc_eng_req *req = &s->eng.req;
	const struct softrc_eng_resp *resp = &s->eng.resp;
	int t;

	q->state = s->eng.state;
	q->req_state = req->state;
	q->resp_state = resp->state;
	q->timers = 0;
	if (req->deadline[SOFTRC_TIMER_RETRY])
		q->timers |= SOFTRC_RESRAW_TIMER_RETRY;
	if (req->deadline[SOFTRC_TIMER_RNR])
		q->timers |= SOFTRC_RESRAW_TIMER_RNR;
	q->retry_left = req->retry_left;
	q->rnr_left = req->rnr_left;
	q->sq_psn = req->psn_next;
	q->rq_psn = resp->epsn;
	q->una = req->una;
	q->unacked_psns = softrc_psn_diff(req->psn_next, req->una);
	q->rd_out = req->rd_out;
	q->rd_max = s->eng.attr.max_rd_atomic;
	q->res_live = resp->res_live;
	q->pending = s->pwc_pending;
	q->pmtu = s->pmtu;
	for (t = 0; t < SOFTRC_TIMER_NR; t++)
		q->timer_ns[t] = softrc_time_left(req->deadline[t], s->now);
	q->retransmits = s->eng.cnt.retransmits;
	q->timeouts = s->eng.cnt.timeouts;
	q->seq_naks_rcvd = s->eng.cnt.seq_naks_rcvd;
	q->rnr_naks_rcvd = s->eng.cnt.rnr_naks_rcvd;
}

static const char *softrc_timer_name(u8 timers)
{
	static const char *const names[] = {
		[0] = "off",
		[SOFTRC_RESRAW_TIMER_RETRY] = "retry",
		[SOFTRC_RESRAW_TIMER_RNR] = "rnr",
		[SOFTRC_RESRAW_TIMER_RETRY | SOFTRC_RESRAW_TIMER_RNR] = "retry+rnr",
	};

	return names[timers & 3];
}

/**
 * softrc_qp_walk_summary() - the QP fields restrack shows
 * @s:		the snapshot
 * @out:	where the fields go
 * @arg:	@out's argument
 *
 * Return: 0, or the first error of @out.
 */
int softrc_qp_walk_summary(const struct softrc_qp_snap *s,
			   const struct softrc_dump_out *out, void *arg)
{
	struct softrc_qp_summary q;
	int err;

	softrc_qp_summarize(s, &q);
	err = out->str(arg, "state",
		       softrc_name_of(softrc_eng_state_names, SOFTRC_QPS_NR,
				      q.state));
	err = err ?: out->str(arg, "req_state",
			      softrc_name_of(softrc_eng_req_state_names,
					     SOFTRC_REQ_NR, q.req_state));
	err = err ?: out->str(arg, "resp_state",
			      softrc_name_of(softrc_eng_resp_state_names,
					     SOFTRC_RESP_NR, q.resp_state));
	err = err ?: out->u32(arg, "sq_psn", q.sq_psn);
	err = err ?: out->u32(arg, "rq_psn", q.rq_psn);
	err = err ?: out->u32(arg, "unacked_psn_first", q.una);
	err = err ?: out->u32(arg, "unacked_psn_last",
			      softrc_psn_add(q.sq_psn, SOFTRC_PSN_MASK));
	err = err ?: out->u32(arg, "unacked_psns", q.unacked_psns);
	err = err ?: out->u32(arg, "retry_left", q.retry_left);
	err = err ?: out->u32(arg, "rnr_retry_left", q.rnr_left);
	err = err ?: out->u32(arg, "rd_atomic_outstanding", q.rd_out);
	err = err ?: out->u32(arg, "rd_atomic_max", q.rd_max);
	err = err ?: out->u32(arg, "responder_resources_live", q.res_live);
	err = err ?: out->str(arg, "timer", softrc_timer_name(q.timers));
	err = err ?: out->u64(arg, "retry_timer_ns",
			      q.timer_ns[SOFTRC_TIMER_RETRY]);
	err = err ?: out->u64(arg, "rnr_timer_ns", q.timer_ns[SOFTRC_TIMER_RNR]);
	err = err ?: out->u64(arg, "retransmits", q.retransmits);
	err = err ?: out->u64(arg, "timeouts", q.timeouts);
	err = err ?: out->u64(arg, "seq_naks_rcvd", q.seq_naks_rcvd);
	err = err ?: out->u64(arg, "rnr_naks_rcvd", q.rnr_naks_rcvd);
	err = err ?: out->u32(arg, "pending_completions", q.pending);
	return err;
}

static int softrc_nl_u32(void *arg, const char *key, u32 val)
{
	return rdma_nl_put_driver_u32(arg, key, val);
}

static int softrc_nl_u64(void *arg, const char *key, u64 val)
{
	return rdma_nl_put_driver_u64(arg, key, val);
}

static int softrc_nl_hex(void *arg, const char *key, u32 val)
{
	return rdma_nl_put_driver_u32_hex(arg, key, val);
}

static int softrc_nl_str(void *arg, const char *key, const char *val)
{
	return rdma_nl_put_driver_string(arg, key, val);
}

static const struct softrc_dump_out softrc_nl_out = {
	.u32 = softrc_nl_u32,
	.u64 = softrc_nl_u64,
	.hex = softrc_nl_hex,
	.str = softrc_nl_str,
};

/* fill_res_qp_entry: the engine summary, nested as driver attributes */
int softrc_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct softrc_qp_snap *s;
	struct nlattr *nest;
	int err;

	s = softrc_qp_snap_take(to_sqp(ibqp));
	if (!s)
		return -ENOMEM;
	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	err = nest ? softrc_qp_walk_summary(s, &softrc_nl_out, msg) : -EMSGSIZE;
	kvfree(s);
	if (err) {
		if (nest)
			nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/* A CQ's fields, read under cq->lock. */
struct softrc_cq_view {
	u32 slots;
	u32 used;
	u8 notify;	/* enum softrc_resraw_notify */
	bool overrun;
};

static void softrc_cq_view(struct softrc_cq *cq, struct softrc_cq_view *v)
{
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	v->slots = cq->q.index_mask + 1;
	v->used = softrc_queue_count(&cq->q);
	v->notify = cq->notify == IB_CQ_SOLICITED ? SOFTRC_RESRAW_NOTIFY_SOLICITED :
		    cq->notify ? SOFTRC_RESRAW_NOTIFY_NEXT : SOFTRC_RESRAW_NOTIFY_OFF;
	v->overrun = cq->overrun;
	spin_unlock_irqrestore(&cq->lock, flags);
}

/* fill_res_cq_entry: ring depth, fill level, arming and overrun */
int softrc_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq)
{
	static const char *const notify[] = {
		SOFTRC_RESRAW_NOTIFY_LIST(SOFTRC_RESRAW_NAME)
	};
	struct softrc_cq *cq = to_scq(ibcq);
	struct softrc_cq_view v;
	struct nlattr *nest;
	int err;

	softrc_cq_view(cq, &v);
	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	err = rdma_nl_put_driver_u32(msg, "ring_slots", v.slots);
	err = err ?: rdma_nl_put_driver_u32(msg, "ring_used", v.used);
	err = err ?: rdma_nl_put_driver_string(msg, "notify",
					       softrc_name_of(notify, ARRAY_SIZE(notify),
							      v.notify));
	err = err ?: rdma_nl_put_driver_u32(msg, "overrun", v.overrun);
	err = err ?: rdma_nl_put_driver_u32(msg, "user", cq->is_user);
	if (err) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

static u8 softrc_mr_kind(const struct softrc_mr *mr)
{
	if (mr->is_dma)
		return SOFTRC_RESRAW_MR_DMA;
	if (mr->is_fast)
		return SOFTRC_RESRAW_MR_FAST_REG;
	return mr->umem ? SOFTRC_RESRAW_MR_USER : SOFTRC_RESRAW_MR_KERNEL;
}

static const char *const softrc_mr_kind_names[] = {
	SOFTRC_RESRAW_MR_KIND_LIST(SOFTRC_RESRAW_NAME)
};

static u8 softrc_mr_state(const struct softrc_mr *mr)
{
	/* acquire: as every reader of mr->state (mr.h) */
	switch (smp_load_acquire(&mr->state)) {
	case SOFTRC_MR_VALID:
		return SOFTRC_RESRAW_MR_VALID;
	case SOFTRC_MR_INVALID:
		return SOFTRC_RESRAW_MR_INVALID;
	default:
		return SOFTRC_RESRAW_MR_DEAD;
	}
}

static const char *const softrc_mr_state_names[] = {
	SOFTRC_RESRAW_MR_STATE_LIST(SOFTRC_RESRAW_NAME)
};

static u64 softrc_mr_pages(const struct softrc_mr *mr)
{
	return mr->is_fast ? READ_ONCE(mr->fn) : mr->npages;
}

/*
 * Whether the reader of a restrack dump may see an MR's key and iova.
 * The RDMA core shows rkey/lkey only to CAP_NET_ADMIN (nldev.c), but
 * calls the driver's fill functions, -dd and raw, for every reader: a
 * key plus its iova is enough to reach the memory from the wire, and a
 * user MR's iova is a process address. The dump runs in the reader's
 * process context (the netlink request or its dump continuation), so
 * current is the reader.
 */
static bool softrc_res_may_see_keys(void)
{
	return capable(CAP_NET_ADMIN);
}

/* fill_res_mr_entry: kind, key, state, range and references */
int softrc_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr)
{
	bool keys = softrc_res_may_see_keys();
	struct softrc_mr *mr = to_smr(ibmr);
	struct nlattr *nest;
	int err;

	nest = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!nest)
		return -EMSGSIZE;
	err = rdma_nl_put_driver_string(msg, "kind",
					softrc_name_of(softrc_mr_kind_names,
						       ARRAY_SIZE(softrc_mr_kind_names),
						       softrc_mr_kind(mr)));
	if (keys)
		err = err ?: rdma_nl_put_driver_u32_hex(msg, "key",
							READ_ONCE(mr->key));
	err = err ?: rdma_nl_put_driver_string(msg, "mr_state",
					       softrc_name_of(softrc_mr_state_names,
							      ARRAY_SIZE(softrc_mr_state_names),
							      softrc_mr_state(mr)));
	err = err ?: rdma_nl_put_driver_u32_hex(msg, "access", mr->access);
	if (keys)
		err = err ?: rdma_nl_put_driver_u64_hex(msg, "iova",
							READ_ONCE(mr->iova));
	err = err ?: rdma_nl_put_driver_u64(msg, "length", READ_ONCE(mr->length));
	err = err ?: rdma_nl_put_driver_u64(msg, "pages", softrc_mr_pages(mr));
	err = err ?: rdma_nl_put_driver_u32(msg, "users", refcount_read(&mr->ref));
	err = err ?: rdma_nl_put_driver_u32(msg, "mws_bound", READ_ONCE(mr->num_mw));
	if (err) {
		nla_nest_cancel(msg, nest);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, nest);
	return 0;
}

/*
 * Raw records (`-r`): one RDMA_NLDEV_ATTR_RES_RAW attribute per object,
 * laid out as include/softrc/resraw.h says.
 */
static void softrc_resraw_hdr(struct softrc_resraw_hdr *h,
			      enum softrc_resraw_kind kind, u32 len, u32 flags)
{
	h->magic = cpu_to_le32(SOFTRC_RESRAW_MAGIC);
	h->version = cpu_to_le16(SOFTRC_RESRAW_VERSION);
	h->kind = cpu_to_le16(kind);
	h->len = cpu_to_le32(len);
	h->flags = cpu_to_le32(flags);
}

/* fill_res_qp_entry_raw: the -dd summary as a struct softrc_resraw_qp */
int softrc_fill_res_qp_entry_raw(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct softrc_resraw_qp r = {};
	struct softrc_qp_summary q;
	struct softrc_qp_snap *s;

	s = softrc_qp_snap_take(to_sqp(ibqp));
	if (!s)
		return -ENOMEM;
	softrc_qp_summarize(s, &q);
	softrc_resraw_hdr(&r.hdr, SOFTRC_RESRAW_QP, sizeof(r), 0);
	r.qpn = cpu_to_le32(ibqp->qp_num);
	r.qp_type = s->qp_type;
	r.ib_state = s->state;
	kvfree(s);
	r.state = q.state;
	r.req_state = q.req_state;
	r.resp_state = q.resp_state;
	r.timers = q.timers;
	r.retry_left = q.retry_left;
	r.rnr_left = q.rnr_left;
	r.sq_psn = cpu_to_le32(q.sq_psn);
	r.rq_psn = cpu_to_le32(q.rq_psn);
	r.una = cpu_to_le32(q.una);
	r.unacked_psns = cpu_to_le32(q.unacked_psns);
	r.rd_out = cpu_to_le32(q.rd_out);
	r.rd_max = cpu_to_le32(q.rd_max);
	r.res_live = cpu_to_le32(q.res_live);
	r.pending = cpu_to_le32(q.pending);
	r.pmtu = cpu_to_le32(q.pmtu);
	r.retry_ns = cpu_to_le64(q.timer_ns[SOFTRC_TIMER_RETRY]);
	r.rnr_ns = cpu_to_le64(q.timer_ns[SOFTRC_TIMER_RNR]);
	r.retransmits = cpu_to_le64(q.retransmits);
	r.timeouts = cpu_to_le64(q.timeouts);
	r.seq_naks_rcvd = cpu_to_le64(q.seq_naks_rcvd);
	r.rnr_naks_rcvd = cpu_to_le64(q.rnr_naks_rcvd);
	return nla_put(msg, RDMA_NLDEV_ATTR_RES_RAW, sizeof(r), &r);
}

/* fill_res_cq_entry_raw: a struct softrc_resraw_cq */
int softrc_fill_res_cq_entry_raw(struct sk_buff *msg, struct ib_cq *ibcq)
{
	struct softrc_cq *cq = to_scq(ibcq);
	struct softrc_resraw_cq r = {};
	struct softrc_cq_view v;

	softrc_cq_view(cq, &v);
	softrc_resraw_hdr(&r.hdr, SOFTRC_RESRAW_CQ, sizeof(r), 0);
	r.cqn = cpu_to_le32(ibcq->res.id);
	r.slots = cpu_to_le32(v.slots);
	r.used = cpu_to_le32(v.used);
	r.notify = v.notify;
	r.overrun = v.overrun;
	r.user = cq->is_user;
	return nla_put(msg, RDMA_NLDEV_ATTR_RES_RAW, sizeof(r), &r);
}

/* fill_res_mr_entry_raw: a struct softrc_resraw_mr, keys gated as -dd */
int softrc_fill_res_mr_entry_raw(struct sk_buff *msg, struct ib_mr *ibmr)
{
	bool keys = softrc_res_may_see_keys();
	struct softrc_mr *mr = to_smr(ibmr);
	struct softrc_resraw_mr r = {};

	softrc_resraw_hdr(&r.hdr, SOFTRC_RESRAW_MR, sizeof(r),
			  keys ? SOFTRC_RESRAW_F_KEYS : 0);
	r.mrn = cpu_to_le32(ibmr->res.id);
	r.access = cpu_to_le32(mr->access);
	r.mr_kind = softrc_mr_kind(mr);
	r.mr_state = softrc_mr_state(mr);
	if (keys) {
		r.key = cpu_to_le32(READ_ONCE(mr->key));
		r.iova = cpu_to_le64(READ_ONCE(mr->iova));
	}
	r.users = cpu_to_le32(refcount_read(&mr->ref));
	r.mws_bound = cpu_to_le32(READ_ONCE(mr->num_mw));
	r.length = cpu_to_le64(READ_ONCE(mr->length));
	r.pages = cpu_to_le64(softrc_mr_pages(mr));
	return nla_put(msg, RDMA_NLDEV_ATTR_RES_RAW, sizeof(r), &r);
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * rdma statistics: the port's counters (`rdma statistic show link DEV/1`)
 * and per-QP counters (`rdma statistic qp`: the RDMA core's struct
 * rdma_counter, bound to QPs by hand or, in auto mode, when a user QP
 * first moves to INIT).
 *
 * Both report one descriptor array: every engine counter, then the
 * device's receive drops and transmit problems, then receive drops per
 * parser reject reason. The port sums the engine counters over the
 * device's QPs, live ones and those already destroyed. A QP counter
 * reports, for the QPs bound to it, what they counted while bound: bind
 * takes a baseline of the QP's engine counters; unbind, or destroy while
 * bound, folds the QP's delta since then into the counter. The
 * device-level entries (drops before a QP is found, transmit problems,
 * parser rejects) belong to no QP and read 0 in a QP counter.
 *
 * The RDMA core shows a port as the driver's value plus every live QP
 * counter plus the final values of those already freed
 * (rdma_counter_get_hwstat_value(): hardware where a bound QP counts only
 * in its own set). So the driver's port value leaves out what the
 * counters report: a bound QP adds its baseline, not its current count,
 * and everything ever folded into a counter is subtracted. Binding,
 * unbinding or freeing a counter leaves the totals shown unchanged.
 *
 * Context: process context only: the RDMA core's sysfs and netlink
 * readers, its counter ops (serialised per counter by counter->lock, not
 * across counters), QP create and destroy. dp->stats.lock, a mutex (its
 * place in the lock order: Documentation/softrc.rst, "Locking"),
 * serialises the bookkeeping: the live QP list, the bindings, the sums.
 * The engine counters themselves are read without the QP lock, while the
 * receive path updates them under it in softirq: a value may be a few
 * packets stale, never torn (one 64-bit load each); a reset keeps them
 * (see softrc_eng_init()), so a QP's counts never go backwards.
 */
#include <rdma/rdma_counter.h>

#include "qp.h"
#include "stats.h"

#define SOFTRC__DESC(n) { .name = #n },
#define SOFTRC__DESC_PARSE(n, text) { .name = "rx_drop_parse_" #n },
static const struct rdma_stat_desc softrc_stat_descs[] = {
	SOFTRC_CORE_COUNTERS(SOFTRC__DESC)
	SOFTRC_DEV_COUNTERS(SOFTRC__DESC)
	SOFTRC_PARSE_STATUSES(SOFTRC__DESC_PARSE)
};

#undef SOFTRC__DESC
#undef SOFTRC__DESC_PARSE

#define SOFTRC_NR_STATS ARRAY_SIZE(softrc_stat_descs)
#define SOFTRC_NR_QP_STATS SOFTRC_CORE_NR_COUNTERS

static_assert(SOFTRC_CORE_NR_COUNTERS + SOFTRC_DEVCNT_NR + SOFTRC_PARSE_NR ==
	      ARRAY_SIZE(softrc_stat_descs));

/**
 * struct softrc_counter - the driver side of one rdma_counter, in
 * dp->stats.cnt_xa at rdma_counter.id from its first bind to its dealloc
 * @binds:	its QPs (struct softrc_counter_bind.node)
 * @folded:	what QPs counted while bound to it, up to their unbind
 */
struct softrc_counter {
	struct list_head binds;
	u64 folded[SOFTRC_NR_QP_STATS];
};

/**
 * struct softrc_counter_bind - one QP bound to one counter (qp->cnt_bind)
 * @node:	in @cnt's binds
 * @qp:		the QP
 * @cnt:	the counter
 * @base:	the QP's engine counters when it was bound
 */
struct softrc_counter_bind {
	struct list_head node;
	struct softrc_qp *qp;
	struct softrc_counter *cnt;
	u64 base[SOFTRC_NR_QP_STATS];
};

static struct softrc_stats *softrc_stats_of(struct ib_device *ibdev)
{
	return &to_sdev(ibdev)->dp->stats;
}

/* One engine counter of @qp, read without its lock. */
static u64 softrc_qp_cnt(const struct softrc_qp *qp, int i)
{
	return READ_ONCE(softrc_eng_counter_values(&qp->core)[i]);
}

void softrc_stats_dev_init(struct softrc_stats *st)
{
	mutex_init(&st->lock);
	INIT_LIST_HEAD(&st->qps);
	xa_init_flags(&st->cnt_xa, XA_FLAGS_ALLOC1);
}

/* Every QP is gone, so every counter was freed. */
void softrc_stats_dev_fini(struct softrc_stats *st)
{
	WARN_ON(!list_empty(&st->qps));
	WARN_ON(!xa_empty(&st->cnt_xa));
	xa_destroy(&st->cnt_xa);
	mutex_destroy(&st->lock);
}

/* A QP is built and about to be published: count it from now on. */
void softrc_stats_qp_new(struct softrc_qp *qp)
{
	struct softrc_stats *st = &qp->sdev->dp->stats;

	mutex_lock(&st->lock);
	list_add_tail(&qp->stats_node, &st->qps);
	mutex_unlock(&st->lock);
}

/*
 * End @b: fold what its QP counted since the bind into the counter and
 * into the device's attributed sums, and clear the QP's binding.
 */
static void softrc_stats_unbind(struct softrc_stats *st,
				struct softrc_counter_bind *b)
{
	struct softrc_qp *qp = b->qp;
	u64 d;
	int i;

	lockdep_assert_held(&st->lock);
	for (i = 0; i < SOFTRC_NR_QP_STATS; i++) {
		d = softrc_qp_cnt(qp, i) - b->base[i];
		b->cnt->folded[i] += d;
		st->attributed[i] += d;
	}
	list_del(&b->node);
	qp->cnt_bind = NULL;
	qp->ibqp.counter = NULL;
	kfree(b);
}

/*
 * A QP is being destroyed (unpublished, quiet): keep its counts. The RDMA
 * core unbinds a QP before it destroys it; a bind racing with that
 * (by QPN, from netlink) can still land, so a binding left here is
 * folded like an unbind: no counter keeps a pointer to a freed QP.
 */
void softrc_stats_qp_dead(struct softrc_qp *qp)
{
	struct softrc_stats *st = &qp->sdev->dp->stats;
	int i;

	mutex_lock(&st->lock);
	if (qp->cnt_bind)
		softrc_stats_unbind(st, qp->cnt_bind);
	list_del(&qp->stats_node);
	for (i = 0; i < SOFTRC_NR_QP_STATS; i++)
		st->dead[i] += softrc_qp_cnt(qp, i);
	mutex_unlock(&st->lock);
}

struct rdma_hw_stats *softrc_alloc_hw_port_stats(struct ib_device *ibdev,
						 u32 port)
{
	return rdma_alloc_hw_stats_struct(softrc_stat_descs, SOFTRC_NR_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

int softrc_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			u32 port, int index)
{
	struct softrc_stats *st = softrc_stats_of(ibdev);
	struct softrc_dp *dp = to_sdev(ibdev)->dp;
	u64 v[SOFTRC_NR_QP_STATS];
	struct softrc_qp *qp;
	int i;

	mutex_lock(&st->lock);
	/* may wrap below zero: the bound QPs' baselines bring it back */
	for (i = 0; i < SOFTRC_NR_QP_STATS; i++)
		v[i] = st->dead[i] - st->attributed[i];
	list_for_each_entry(qp, &st->qps, stats_node) {
		for (i = 0; i < SOFTRC_NR_QP_STATS; i++)
			v[i] += qp->cnt_bind ? qp->cnt_bind->base[i] :
					       softrc_qp_cnt(qp, i);
	}
	mutex_unlock(&st->lock);
	for (i = 0; i < SOFTRC_NR_QP_STATS; i++)
		stats->value[i] = v[i];
	for (i = 0; i < SOFTRC_DEVCNT_NR; i++)
		stats->value[SOFTRC_NR_QP_STATS + i] =
			atomic64_read(&dp->cnt[i]);
	for (i = 0; i < SOFTRC_PARSE_NR; i++)
		stats->value[SOFTRC_NR_QP_STATS + SOFTRC_DEVCNT_NR + i] =
			atomic64_read(&dp->parse_rej[i]);
	return SOFTRC_NR_STATS;
}

/*
 * The counter ops. The RDMA core calls them in process context with
 * counter->lock held (except counter_alloc_stats, before the counter is
 * visible), so the ops of one counter never overlap. The driver assigns
 * rdma_counter.id at the first bind: the core files the counter under it
 * only after that bind succeeded. A counter whose first bind failed is
 * freed without counter_dealloc, so nothing is allocated for it before.
 */
static struct rdma_hw_stats *
softrc_counter_alloc_stats(struct rdma_counter *counter)
{
	return rdma_alloc_hw_stats_struct(softrc_stat_descs, SOFTRC_NR_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int softrc_counter_bind_qp(struct rdma_counter *counter,
				  struct ib_qp *ibqp)
{
	struct softrc_stats *st = softrc_stats_of(ibqp->device);
	struct softrc_qp *qp = to_sqp(ibqp);
	struct softrc_counter *cnt, *fresh = NULL;
	struct softrc_counter_bind *b;
	u32 id;
	int err, i;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	if (!counter->id) {
		fresh = kzalloc(sizeof(*fresh), GFP_KERNEL);
		if (!fresh) {
			kfree(b);
			return -ENOMEM;
		}
		INIT_LIST_HEAD(&fresh->binds);
	}

	mutex_lock(&st->lock);
	/* the core's qp->counter test runs under one counter's lock only */
	if (qp->cnt_bind) {
		err = -EBUSY;
		goto out;
	}
	if (fresh) {
		err = xa_alloc_cyclic(&st->cnt_xa, &id, fresh,
				      XA_LIMIT(1, INT_MAX), &st->cnt_next,
				      GFP_KERNEL);
		if (err < 0)
			goto out;
		counter->id = id;
		cnt = fresh;
		fresh = NULL;
	} else {
		cnt = xa_load(&st->cnt_xa, counter->id);
		if (!cnt) {
			err = -EINVAL;
			goto out;
		}
	}
	b->qp = qp;
	b->cnt = cnt;
	for (i = 0; i < SOFTRC_NR_QP_STATS; i++)
		b->base[i] = softrc_qp_cnt(qp, i);
	list_add_tail(&b->node, &cnt->binds);
	qp->cnt_bind = b;
	ibqp->counter = counter;
	b = NULL;
	err = 0;
out:
	mutex_unlock(&st->lock);
	kfree(fresh);
	kfree(b);
	return err;
}

static int softrc_counter_unbind_qp(struct ib_qp *ibqp)
{
	struct softrc_stats *st = softrc_stats_of(ibqp->device);
	struct softrc_qp *qp = to_sqp(ibqp);
	int err = 0;

	mutex_lock(&st->lock);
	if (qp->cnt_bind)
		softrc_stats_unbind(st, qp->cnt_bind);
	else
		err = -EINVAL;
	mutex_unlock(&st->lock);
	return err;
}

static int softrc_counter_update_stats(struct rdma_counter *counter)
{
	struct softrc_stats *st = softrc_stats_of(counter->device);
	struct softrc_counter_bind *b;
	struct softrc_counter *cnt;
	u64 sum;
	int i;

	mutex_lock(&st->lock);
	cnt = xa_load(&st->cnt_xa, counter->id);
	/* one store per value: a concurrent reader sees old or new */
	for (i = 0; cnt && i < SOFTRC_NR_QP_STATS; i++) {
		sum = cnt->folded[i];
		list_for_each_entry(b, &cnt->binds, node)
			sum += softrc_qp_cnt(b->qp, i) - b->base[i];
		counter->stats->value[i] = sum;
	}
	mutex_unlock(&st->lock);
	return 0;
}

/* After the core took the final values for the port's history. */
static int softrc_counter_dealloc(struct rdma_counter *counter)
{
	struct softrc_stats *st = softrc_stats_of(counter->device);
	struct softrc_counter_bind *b, *tmp;
	struct softrc_counter *cnt;

	mutex_lock(&st->lock);
	cnt = counter->id ? xa_erase(&st->cnt_xa, counter->id) : NULL;
	if (cnt) {
		/*
		 * none, unless the core dropped a reference twice (its
		 * forced unbind at destroy of a QP already unbound)
		 */
		list_for_each_entry_safe(b, tmp, &cnt->binds, node)
			softrc_stats_unbind(st, b);
		kfree(cnt);
	}
	mutex_unlock(&st->lock);
	return 0;
}

const struct ib_device_ops softrc_counter_ops = {
	.counter_alloc_stats = softrc_counter_alloc_stats,
	.counter_bind_qp = softrc_counter_bind_qp,
	.counter_dealloc = softrc_counter_dealloc,
	.counter_unbind_qp = softrc_counter_unbind_qp,
	.counter_update_stats = softrc_counter_update_stats,
};

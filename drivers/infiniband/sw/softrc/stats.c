// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * rdma statistics (`rdma statistic show link DEV/1`): every engine counter
 * summed over the device's QPs (live ones plus those already destroyed),
 * then the device's receive drops and transmit problems, then receive
 * drops per parser reject reason.
 *
 * Context: process context (the RDMA core's sysfs/netlink readers) and
 * QP destroy. Reads QP counters without their lock (a snapshot may be a
 * few packets stale); walks the QPN xarray under RCU, which keeps every
 * QP it finds allocated (destroy waits for RCU before freeing).
 */
#include "qp.h"
#include "net.h"

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

static_assert(sizeof(struct softrc_core_counters) ==
	      SOFTRC_CORE_NR_COUNTERS * sizeof(u64));
static_assert(SOFTRC_CORE_NR_COUNTERS + SOFTRC_DEVCNT_NR + SOFTRC_PARSE_NR ==
	      ARRAY_SIZE(softrc_stat_descs));

struct rdma_hw_stats *softrc_alloc_hw_port_stats(struct ib_device *ibdev,
						 u32 port)
{
	return rdma_alloc_hw_stats_struct(softrc_stat_descs, SOFTRC_NR_STATS,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static void softrc_stats_add_qp(u64 *sum, const struct softrc_qp *qp)
{
	const u64 *c = (const u64 *)&qp->core.cnt;
	int i;

	for (i = 0; i < SOFTRC_CORE_NR_COUNTERS; i++)
		sum[i] += READ_ONCE(c[i]);
}

int softrc_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			u32 port, int index)
{
	struct softrc_dp *dp = to_sdev(ibdev)->dp;
	u64 *v = stats->value;
	struct softrc_qp *qp;
	unsigned long qpn;
	int i;

	memset(v, 0, SOFTRC_NR_STATS * sizeof(*v));
	spin_lock_bh(&dp->dead_lock);
	memcpy(v, dp->dead, sizeof(dp->dead));
	spin_unlock_bh(&dp->dead_lock);
	rcu_read_lock();
	xa_for_each(&dp->qp_xa, qpn, qp)
		softrc_stats_add_qp(v, qp);
	rcu_read_unlock();
	v += SOFTRC_CORE_NR_COUNTERS;
	for (i = 0; i < SOFTRC_DEVCNT_NR; i++)
		*v++ = atomic64_read(&dp->cnt[i]);
	for (i = 0; i < SOFTRC_PARSE_NR; i++)
		*v++ = atomic64_read(&dp->parse_rej[i]);
	return SOFTRC_NR_STATS;
}

/* A QP is being destroyed (unpublished, quiet): keep its counts. */
void softrc_stats_qp_dead(struct softrc_qp *qp)
{
	struct softrc_dp *dp = qp->sdev->dp;

	spin_lock_bh(&dp->dead_lock);
	softrc_stats_add_qp(dp->dead, qp);
	spin_unlock_bh(&dp->dead_lock);
}

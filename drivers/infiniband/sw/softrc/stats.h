/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * stats.c: the device-level counters (SOFTRC_DEV_COUNTERS), the
 * engine-counter bookkeeping of a device, and the rdma statistic ops.
 *
 * Context: the counters are bumped in any context (atomic64); the
 * functions of stats.c run in process context.
 */
#ifndef SOFTRC_STATS_H
#define SOFTRC_STATS_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "core/engine.h"

/*
 * X(name): device-level receive drops and transmit problems, shown by
 * `rdma statistic show link DEV/1` after the engine's counters.
 */
#define SOFTRC_DEV_COUNTERS(X)						\
	X(rx_bad_icrc)		/* ICRC mismatch */			\
	X(rx_flush_icrc_rxe)	/* FLUSH taken with rxe's ICRC */	\
	X(rx_drop_short)	/* shorter than UDP + BTH + ICRC */	\
	X(rx_drop_unknown_qp)	/* no such QP on this device */	\
	X(rx_drop_state)	/* QP in RESET or INIT */		\
	X(rx_drop_addr)		/* IP addresses not the QP's path */	\
	X(rx_drop_pkey)		/* BTH P_Key does not match the QP's */	\
	X(rx_drop_qkey)		/* UD: DETH Q_Key is not the QP's */	\
	X(rx_drop_loopback)	/* arrived over a loopback netdev */	\
	X(tx_drop_route)	/* no route to the destination */	\
	X(tx_drop_alloc)	/* skb allocation failed */		\
	X(tx_drop_xmit)		/* the IP stack refused the packet */	\
	X(tx_mem_errors)	/* payload memory unreadable at TX */	\
	X(tx_self)		/* to a device of this netns, not via IP */ \
	X(tx_batches)		/* GSO batches of 2+ packets sent */	\
	X(post_lock_waits)	/* a post found its QP's lock taken */	\
	X(rx_mem_errors)	/* payload memory unwritable at RX */	\
	X(cq_overruns)		/* CQs that overran (now in error) */	\
	X(cq_wc_dropped)	/* completions lost to a CQ in error */

#define SOFTRC__DEVCNT_ENUM(n) SOFTRC_DEVCNT_##n,
enum softrc_dev_counter {
	SOFTRC_DEV_COUNTERS(SOFTRC__DEVCNT_ENUM)
	SOFTRC_DEVCNT_NR
};

#undef SOFTRC__DEVCNT_ENUM

struct softrc_qp;

/**
 * struct softrc_stats - the engine-counter bookkeeping of a device (stats.c)
 * @lock:	serialises all of it and every QP's cnt_bind; innermost
 * @qps:	live QPs (softrc_qp.stats_node), from create to destroy
 * @dead:	engine counts of destroyed QPs, summed
 * @attributed:	engine counts ever folded into rdma counters, summed
 * @cnt_xa:	the driver side of each rdma counter, by rdma_counter.id
 * @cnt_next:	cyclic counter id cursor
 */
struct softrc_stats {
	struct mutex lock;	/* see above */
	struct list_head qps;
	u64 dead[SOFTRC_CORE_NR_COUNTERS];
	u64 attributed[SOFTRC_CORE_NR_COUNTERS];
	struct xarray cnt_xa;
	u32 cnt_next;
};

struct rdma_hw_stats *softrc_alloc_hw_port_stats(struct ib_device *ibdev,
						 u32 port);
int softrc_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			u32 port, int index);
void softrc_stats_qp_new(struct softrc_qp *qp);
void softrc_stats_qp_dead(struct softrc_qp *qp);
void softrc_stats_dev_init(struct softrc_stats *st);
void softrc_stats_dev_fini(struct softrc_stats *st);
extern const struct ib_device_ops softrc_counter_ops;

#endif /* SOFTRC_STATS_H */

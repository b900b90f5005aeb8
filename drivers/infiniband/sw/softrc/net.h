/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * The network side of a device: one UDP 4791 tunnel socket per network
 * namespace, the receive hook that demultiplexes RoCEv2 packets to QPs,
 * and the IPv4/IPv6 transmit of packets the engine builds.
 *
 * Context: softrc_net_dev_add/del and softrc_net_init/exit run in process
 * context (device registration, module init/exit). softrc_net_xmit runs
 * with a QP lock held (process context with BH off, or softirq). The
 * receive hook runs in softirq.
 */
#ifndef SOFTRC_NET_H
#define SOFTRC_NET_H

#include <linux/mutex.h>
#include <linux/xarray.h>

#include "softrc.h"
#include "core/parse.h"
#include "core/qp.h"

#define SOFTRC_UDP_PORT		4791

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
	X(rx_mem_errors)	/* payload memory unwritable at RX */	\
	X(cq_overruns)		/* CQs that overran (now in error) */	\
	X(cq_wc_dropped)	/* completions lost to a CQ in error */

#define SOFTRC__DEVCNT_ENUM(n) SOFTRC_DEVCNT_##n,
enum softrc_dev_counter {
	SOFTRC_DEV_COUNTERS(SOFTRC__DEVCNT_ENUM)
	SOFTRC_DEVCNT_NR
};

#undef SOFTRC__DEVCNT_ENUM

struct softrc_net;

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

/**
 * struct softrc_dp - the data-path state of one device (sdev->dp)
 * @sdev:	the device
 * @snet:	its namespace's socket pair (referenced)
 * @node:	entry in @snet's device list (RCU)
 * @qp_xa:	QPN -> struct softrc_qp (RCU lookup; entries only when built)
 * @qp_next:	cyclic QPN allocation cursor
 * @cnt:	SOFTRC_DEV_COUNTERS
 * @parse_rej:	receive drops per softrc_parse() reject reason
 * @stats:	engine counters of live and destroyed QPs, rdma counters
 * @self_q:	packets this device sent to itself, awaiting @self_task
 * @self_task:	runs the receive path over @self_q (softirq)
 * @mc_list:	struct softrc_mc_attach: UD QPs in multicast groups (mcast.c)
 * @mc_lock:	serialises changes to @mc_list and its counts
 * @mc_count:	entries of @mc_list
 * @mc_groups:	distinct groups in @mc_list
 */
struct softrc_dp {
	struct softrc_dev *sdev;
	struct softrc_net *snet;
	struct list_head node;
	struct xarray qp_xa;
	u32 qp_next;
	atomic64_t cnt[SOFTRC_DEVCNT_NR];
	atomic64_t parse_rej[SOFTRC_PARSE_NR];
	struct softrc_stats stats;
	struct sk_buff_head self_q;
	struct tasklet_struct self_task;
	struct list_head mc_list;
	spinlock_t mc_lock;	/* mc_list changes, mc_count, mc_groups */
	u32 mc_count;
	u32 mc_groups;
};

/**
 * struct softrc_mc_attach - one UD QP attached to one multicast group
 * @node:	in softrc_dp.mc_list (RCU for the receive path)
 * @mgid:	the group
 * @qp:		the QP (it detaches from all before it is destroyed)
 * @rcu:	frees it after the readers
 */
struct softrc_mc_attach {
	struct list_head node;
	union ib_gid mgid;
	struct softrc_qp *qp;
	struct rcu_head rcu;
};

static inline void softrc_dev_count(struct softrc_dev *sdev,
				    enum softrc_dev_counter c)
{
	atomic64_inc(&sdev->dp->cnt[c]);
}

struct softrc_qp;
struct softrc_pkt;
struct softrc_buf;

/**
 * struct softrc_rx - the engine's receive context (its @rx argument)
 * @skb:	the packet, skb->data at the UDP header
 * @bth_off:	offset of the BTH from skb->data
 */
struct softrc_rx {
	struct sk_buff *skb;
	int bth_off;
};

/* net.c */
int softrc_net_init(void);
void softrc_net_exit(void);
int softrc_net_dev_add(struct softrc_dev *sdev);
void softrc_net_dev_del(struct softrc_dev *sdev);

/* mcast.c: multicast groups of UD QPs */
int softrc_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
int softrc_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
void softrc_mcast_qp_gone(struct softrc_qp *qp);
int softrc_net_xmit(struct softrc_qp *qp, const struct softrc_pkt *pkt,
		    const struct softrc_buf *payload);
void softrc_net_flush(struct softrc_qp *qp);

/* crc.c */
int softrc_crc_init(void);
void softrc_crc_exit(void);
u32 softrc_net_crc(u32 reg, const void *p, u32 len);
void softrc_net_copy(void *to, const void *from, u32 len);
int softrc_skb_copy_bits(const struct sk_buff *skb, int off, void *to, int len);

/* glue.c: payload into the skb */
int softrc_glue_fill(struct softrc_qp *qp, const struct softrc_buf *payload,
		     u8 *dst);
bool softrc_glue_can_frag(struct softrc_qp *qp, const struct softrc_buf *pl);
int softrc_glue_frags(struct softrc_qp *qp, const struct softrc_buf *pl,
		      struct sk_buff *skb, u32 *crc);

/* stats.c */
struct rdma_hw_stats *softrc_alloc_hw_port_stats(struct ib_device *ibdev,
						 u32 port);
int softrc_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *stats,
			u32 port, int index);
void softrc_stats_qp_new(struct softrc_qp *qp);
void softrc_stats_qp_dead(struct softrc_qp *qp);
void softrc_stats_dev_init(struct softrc_stats *st);
void softrc_stats_dev_fini(struct softrc_stats *st);
extern const struct ib_device_ops softrc_counter_ops;

#endif /* SOFTRC_NET_H */

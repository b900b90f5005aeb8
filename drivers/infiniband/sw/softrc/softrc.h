/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrc: a software RoCEv2 Reliable Connection transport.
 *
 * The central header of the kernel module: the device object, its
 * limits, and the functions one file offers the others. The protocol
 * engine lives in core/ and knows nothing of these types.
 *
 * Locks (order, context, what each protects, where it is asserted):
 * Documentation/softrc.rst, "Locking".
 */
#ifndef SOFTRC_H
#define SOFTRC_H

#include <linux/interrupt.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <softrc/abi.h>

#include "stats.h"
#include "core/engine.h"

#undef pr_fmt
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

/*
 * Limits reported by query_device. The RDMA core checks none of them:
 * the object counts are enforced here (struct softrc_caps, which module
 * parameters can lower), the queue sizes at create. A ring of n entries
 * has roundup_pow_of_two(n + 1) slots and n' = slots - 1 usable ones, so
 * every advertised depth is 2^k - 1: the usable depth never exceeds it.
 */
enum softrc_limits {
	SOFTRC_MAX_QP		= 0x10000,
	SOFTRC_MAX_QP_WR	= 0x4000 - 1,
	SOFTRC_MAX_SGE		= 32,
	SOFTRC_MAX_CQ		= 0x4000,
	SOFTRC_MAX_CQE		= 0x8000 - 1,
	SOFTRC_MAX_MR		= 0x40000,
	SOFTRC_MAX_MW		= 0x10000,	/* share the MR key space */
	SOFTRC_MAX_FAST_REG_PAGES = 512,
	SOFTRC_MAX_PD		= 0x10000,
	SOFTRC_MAX_AH		= 0x10000,
	SOFTRC_MAX_MCAST_GRP	= 256,
	SOFTRC_MAX_MCAST_QP_ATTACH = 64,
	SOFTRC_MAX_MCAST_ATTACH	= 1024,	/* per device, all groups */
	SOFTRC_MAX_SRQ		= 0x4000,
	SOFTRC_MAX_SRQ_WR	= 0x4000 - 1,
	SOFTRC_MAX_RD_ATOMIC	= 128,
	SOFTRC_MAX_INLINE	= 256,
	SOFTRC_GID_TABLE_LEN	= 1024,
	SOFTRC_PKEY_TABLE_LEN	= 1,
	SOFTRC_LOCAL_ACK_DELAY	= 15,
	SOFTRC_VENDOR_ID	= 0xffffff,	/* no OUI: a software device */
};

#define SOFTRC_MAX_MSG_SIZE	BIT_ULL(31)

/*
 * Bytes a RoCEv2 packet adds around an IB-MTU payload in the worst case:
 * IPv6 (40) + UDP (8) + BTH (12) + RETH (16) + ImmDt (4) + ICRC (4).
 */
#define SOFTRC_ROCE_OVERHEAD	84

/**
 * struct softrc_caps - the object counts one device allows (and reports)
 * @max_qp:	QPs
 * @max_cq:	CQs
 * @max_mr:	MRs of every kind (user, DMA, fast-register). MWs are
 *		counted apart (SOFTRC_MAX_MW, mw.c); the shared key space
 *		holds SOFTRC_MAX_MR + SOFTRC_MAX_MW keys, so both fit.
 * @max_pd:	PDs
 * @max_srq:	SRQs
 *
 * Each is SOFTRC_MAX_* unless a module parameter lowers it; fixed for the
 * device's lifetime when it is created (softrc_caps_get()).
 */
struct softrc_caps {
	u32 max_qp;
	u32 max_cq;
	u32 max_mr;
	u32 max_pd;
	u32 max_srq;
};

/*
 * Take one of @max objects counted by @n: false (and no change) when all
 * are taken. Paired with atomic_dec() when the object is destroyed.
 */
static inline bool softrc_count_get(atomic_t *n, u32 max)
{
	return atomic_add_unless(n, 1, max);
}

/**
 * struct softrc_dev - one softrc RDMA device, bound to one netdev
 * @ib_dev:	the RDMA core's device; first member (ib_alloc_device)
 * @ndev:	the netdev; the RDMA core holds a reference on it
 *		(ib_device_set_netdev) from registration until unregistration
 *		has fenced off every verb, so verbs may dereference it
 * @list:	entry in the module's device list (softrc_dev_list_lock)
 * @ndev_gone:	@ndev sent NETDEV_UNREGISTER: from then on the pointer may
 *		outlive the netdev (the core drops its reference before
 *		dealloc_driver), so lookups by netdev must not match it
 *		(set under softrc_dev_list_lock; RCU readers use READ_ONCE)
 * @port_state:	last state reported to the RDMA core (softrc_dev_list_lock)
 * @caps:	the object limits, enforced by the counters below
 * @num_pd:	PDs allocated, bounded by @caps.max_pd
 * @num_qp:	QPs allocated, bounded by @caps.max_qp (qp.c)
 * @num_mr:	MRs allocated, bounded by @caps.max_mr (verbs.c)
 * @num_srq:	SRQs allocated, bounded by @caps.max_srq (srq.c)
 * @mr_xa:	MRs and MWs by key >> 8: one key space (device.c allocates,
 *		mr.c and mw.c look up under RCU)
 * @num_mw:	MWs allocated, bounded by SOFTRC_MAX_MW (mw.c)
 * @key_next:	next key index to try (cyclic allocation, device.c)
 * @ah_xa:	AHs by ah_num (ah.c; IRQ-safe lock)
 * @srq_xa:	SRQs by srq_num (srq.c)
 * @num_cq:	CQs allocated, bounded by @caps.max_cq (cq.c)
 * @dp:		data path: QPN table, sockets, counters (sock.c)
 * @dbg:	debugfs directory softrc/<name> (debugfs.c), or NULL / an
 *		error pointer
 * @dbg_qp:	its qp/ subdirectory
 */
struct softrc_dp;
struct softrc_net;

struct softrc_dev {
	struct ib_device ib_dev;
	struct net_device *ndev;
	struct list_head list;
	bool ndev_gone;
	enum ib_port_state port_state;
	struct softrc_caps caps;
	atomic_t num_pd;
	atomic_t num_qp;
	atomic_t num_mr;
	atomic_t num_srq;
	struct xarray mr_xa;
	atomic_t num_mw;
	u32 key_next;
	struct xarray ah_xa;
	struct xarray srq_xa;
	atomic_t num_cq;
	struct softrc_dp *dp;
	struct dentry *dbg;
	struct dentry *dbg_qp;
};

static inline struct softrc_dev *to_sdev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct softrc_dev, ib_dev);
}

/**
 * struct softrc_dp - the data-path state of one device (sdev->dp), set up
 * by softrc_net_dev_add() (sock.c)
 * @sdev:	the device
 * @snet:	its namespace's socket pair (referenced)
 * @node:	entry in @snet's device list (RCU)
 * @qp_xa:	QPN -> struct softrc_qp (RCU lookup; entries only when built)
 * @qp_next:	cyclic QPN allocation cursor
 * @cnt:	SOFTRC_DEV_COUNTERS (stats.h)
 * @parse_rej:	receive drops per softrc_parse() reject reason
 * @stats:	engine counters of live and destroyed QPs, rdma counters
 * @self_q:	packets this device sent to itself, awaiting @self_task
 * @self_task:	runs the receive path over @self_q (softirq, rx.c)
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

static inline void softrc_dev_count(struct softrc_dev *sdev,
				    enum softrc_dev_counter c)
{
	atomic64_inc(&sdev->dp->cnt[c]);
}

/* A protection domain. Nothing but the count yet; MRs and QPs point here. */
struct softrc_pd {
	struct ib_pd ibpd;
};

struct softrc_ucontext {
	struct ib_ucontext ibuc;
};

/**
 * struct softrc_rwqe - a receive WQE copied into kernel memory and
 * validated (from a kernel post_recv, a user RQ ring or an SRQ); the
 * data path only ever reads this copy, never the shared ring
 * @wr_id:	returned in the completion
 * @num_sge:	valid entries of @sge (<= SOFTRC_MAX_SGE)
 * @length:	sum of the SGE lengths
 * @sge:	scatter list, lkeys not yet resolved
 */
struct softrc_rwqe {
	u64 wr_id;
	u32 num_sge;
	u32 length;
	struct ib_sge sge[SOFTRC_MAX_SGE];
};

/* main.c: the limits the module parameters give a new device */
void softrc_caps_get(struct softrc_caps *caps);

/* verbs.c: the ib_device_ops */
void softrc_set_device_ops(struct ib_device *ibdev);

#endif /* SOFTRC_H */

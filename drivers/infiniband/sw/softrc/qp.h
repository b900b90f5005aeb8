/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Queue pairs (RC, UC, UD and the GSI QP): the verbs object around the
 * protocol engine, and the declarations of qp.c (the object, its state
 * and attributes). The posting paths are post.c/post.h and wr.c/wr.h,
 * completion delivery deliver.c/deliver.h.
 *
 * Context: the verbs (create/modify/query/destroy, post_send/post_recv)
 * run in process context; the same QP is driven from softirq by the
 * receive path (rx.c), its timers (timers.c) and its TX tasklet.
 *
 * Locks: qp->lock (spin_lock_bh) protects the engine (qp->core), the IBTA
 * state, the shadow rings and the pending-completion producer index; it
 * is held around every call into the engine, and the engine's callbacks
 * (engine_ops.c) assert it. Completions are queued under qp->lock and
 * handed to the CQs after it is dropped (deliver.c), so a CQ event handler
 * may post to this QP again. Lock order: Documentation/softrc.rst,
 * "Locking".
 *
 * Lifetime: a QP is published in the device's QPN xarray (and a UD QP's
 * multicast attachments) through its handle (struct softrc_qp_handle)
 * only once fully built; the receive path finds the handle under RCU and
 * takes a reference on it. Destroy unpublishes it, stops timers and the
 * tasklet, then waits for the last reference before the RDMA core frees
 * the QP; the handle, which a reader may still hold between its lookup
 * and its failed refcount_inc_not_zero(), is freed after a grace period
 * (kfree_rcu), so destroy waits for none.
 */
#ifndef SOFTRC_QP_H
#define SOFTRC_QP_H

#include <linux/completion.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/refcount.h>
#include <net/dst_cache.h>
#include <rdma/ib_verbs.h>

#include "softrc.h"
#include "mr.h"
#include "mw.h"
#include "core/engine.h"

struct softrc_queue;
struct softrc_qp;
struct softrc_srq;
struct softrc_counter_bind;

/**
 * struct softrc_qp_handle - what the receive path finds a QP by
 * @ref:	references: one for the QPN table, one per receive-path user
 * @qp:		the QP; valid while @ref is held
 * @rcu:	frees the handle after the readers that may still look at @ref
 */
struct softrc_qp_handle {
	refcount_t ref;
	struct softrc_qp *qp;
	struct rcu_head rcu;
};

/**
 * struct softrc_path - where this QP's packets go (from the IB_QP_AV attr)
 * @ipv6:	address family of @saddr / @daddr
 * @saddr:	source IP (the source GID's address)
 * @daddr:	destination IP
 * @tos:	IPv4 TOS / IPv6 traffic class
 * @ttl:	IPv4 TTL / IPv6 hop limit
 * @flow_label:	IPv6 flow label, also the UDP source port hash input
 * @sport:	UDP source port
 */
struct softrc_path {
	bool ipv6;
	union {
		__be32 v4;
		struct in6_addr v6;
	} saddr, daddr;
	u8 tos;
	u8 ttl;
	u32 flow_label;
	u16 sport;
	int ifindex;
};

/**
 * struct softrc_reg_req - an IB_WR_REG_MR request (kernel QPs only)
 * @mr:		the fast-register MR (the ULP keeps it alive until completion)
 * @key:	the key it is to carry
 * @access:	IB_ACCESS_* it is to grant
 */
struct softrc_reg_req {
	struct ib_mr *mr;
	u32 key;
	int access;
};

/* flags of a send shadow slot */
#define SOFTRC_SQS_SIGNALED	BIT(0)
#define SOFTRC_SQS_INLINE	BIT(1)
#define SOFTRC_SQS_REFUSED	BIT(2)	/* a bad user WR: fails in SQ order */

/**
 * struct softrc_sq_shadow - kernel copy of the local side of one send WQE,
 * indexed by the engine's SQ slot; its SGEs or inline bytes follow at
 * qp->sq_data + slot * qp->sq_area
 * @flags:	SOFTRC_SQS_*
 * @opcode:	IB_WR_* opcode
 * @num_sge:	SGE count (not inline)
 * @length:	total bytes
 * @local:	a local WQE's request: LOCAL_INV's R_Key, a BIND_MW or an
 *		IB_WR_REG_MR (the ULP keeps the MR alive until it completes),
 *		executed by softrc_glue_local() in SQ order; or a refused
 *		WR's completion status and IB_WC_* opcode; or a UD send's
 *		destination (its address handle's, copied at post)
 */
struct softrc_sq_shadow {
	u8 flags;
	u8 opcode;
	u16 num_sge;
	u32 length;
	union {
		u32 inv_rkey;
		struct softrc_mw_bind bind;
		struct softrc_reg_req reg;
		struct {
			u8 status;
			u8 wc_opcode;
		} refused;
		struct softrc_path ud;
	} local;
};

/* bits of softrc_qp.cq_lost */
#define SOFTRC_QP_CQ_LOST	0
#define SOFTRC_QP_CQ_FATAL	1

/* bits of softrc_qp.events: affiliated events due once @lock is dropped */
#define SOFTRC_QP_EV_SQ_DRAINED	0	/* IB_EVENT_SQ_DRAINED */
#define SOFTRC_QP_EV_LAST_WQE	1	/* IB_EVENT_QP_LAST_WQE_REACHED */

/* flags of a pending completion */
#define SOFTRC_PWC_RECV		BIT(0)
#define SOFTRC_PWC_IMM		BIT(1)
#define SOFTRC_PWC_INV		BIT(2)
#define SOFTRC_PWC_SOLICITED	BIT(3)
#define SOFTRC_PWC_GRH		BIT(4)	/* UD: GRH slot filled, @src_qp valid */
#define SOFTRC_PWC_IPV6		BIT(5)	/* ... from an IPv6 packet */
#define SOFTRC_PWC_VLAN		BIT(6)	/* ... that came in on VLAN @vlan_id */

/**
 * struct softrc_pwc - a completion queued under the QP lock
 * @wr_id:	of the WR
 * @byte_len:	bytes
 * @ex:		immediate data (network order) or invalidated R_Key
 * @status:	enum ib_wc_status
 * @opcode:	enum ib_wc_opcode
 * @flags:	SOFTRC_PWC_*
 * @src_qp:	UD receive: the sender's QP
 * @vlan_id:	UD receive on a VLAN device: its VLAN ID
 */
struct softrc_pwc {
	u64 wr_id;
	u32 byte_len;
	u32 ex;
	u32 src_qp;
	u8 status;
	u8 opcode;
	u8 flags;
	u16 vlan_id;
};

/**
 * struct softrc_tx_batch - consecutive packets of a QP sent as one skb
 * @head:	the first packet; the others hang on its frag_list
 * @tail:	the last packet on the frag_list
 * @sk:		the tunnel socket @head leaves through, read once when the
 *		batch is opened (a closing namespace clears the pointer;
 *		the socket itself is freed only after an RCU grace period)
 * @mss:	UDP payload bytes of @head's own packet
 * @segs:	packets in the batch
 */
struct softrc_tx_batch {
	struct sk_buff *head;
	struct sk_buff *tail;
	struct sock *sk;
	u32 mss;
	u32 segs;
};

/**
 * struct softrc_qp - one queue pair
 * @ibqp:	the RDMA core's object (allocated by the core)
 * @sdev:	its device
 * @uid:	unique for the module's lifetime, never reused (unlike the
 *		QPN): the identity a type 2 MW is bound to
 * @lock:	see the file comment
 * @h:		its handle (xarray and multicast lists), with the references
 * @released:	completed when the handle's references drop to zero
 * @dying:	destroy has begun: no engine calls, no timer arming
 * @is_user:	rings shared with user space (rxe ABI)
 * @sig_all:	every send WR completes (IB_SIGNAL_ALL_WR)
 * @state:	IBTA state
 * @sqd_seen:	SQD: the SQ drained and the event was queued (under @lock)
 * @events:	SOFTRC_QP_EV_* bits: events to deliver after @lock is
 *		dropped, behind the completions queued before them
 * @cq_lost:	SOFTRC_QP_CQ_LOST: a CQ overrun lost one of our completions;
 *		SOFTRC_QP_CQ_FATAL: the QP was failed for it (once)
 * @attr:	attributes as last set, for query_qp
 * @av:		primary path (RC)
 * @dst_cache:	cached route to @av
 * @pmtu:	path MTU in bytes
 * @core:	the protocol engine's QP
 * @core_sq:	engine SQ storage, @sq_depth slots
 * @core_rq:	engine RQ storage, @rq_depth slots
 * @core_res:	responder resources, @core_res_cap of them (none until a
 *		modify sets max_dest_rd_atomic: softrc_qp_res_alloc())
 * @core_res_cap: entries of @core_res (written under @lock)
 * @stats_node:	in the device's list of live QPs (stats.c)
 * @cnt_bind:	its binding to an rdma counter, or NULL (stats.c, under
 *		the device's stats lock)
 * @sq_depth:	engine SQ slots (power of two)
 * @max_send_wr: usable send depth
 * @max_sge:	send SGEs per WQE
 * @max_inline:	inline bytes per WQE
 * @sq_area:	bytes per slot in @sq_data
 * @sqs:	send shadows
 * @sq_data:	SGE / inline area of the send shadows
 * @sq_pins:	per send shadow, @max_sge MRs pinned at post for its SGEs
 *		(NULL: none; see softrc_qp_sq_unpin), under @lock
 * @sq_scratch:	a copied user send WQE (under @lock)
 * @usq:	user SQ ring
 * @urq:	user RQ ring
 * @srq:	shared receive queue, or NULL
 * @rq_depth:	engine RQ slots (power of two)
 * @max_recv_wr: usable receive depth
 * @max_recv_sge: receive SGEs per WQE
 * @rq_stride:	bytes per receive shadow slot
 * @rq_data:	receive shadows (struct softrc_rwqe prefix, @rq_stride apart)
 * @rq_bad:	receive shadow slots whose SGEs failed validation
 * @rq_pins:	per receive shadow, @max_recv_sge MRs pinned for its SGEs
 * @pwc:	pending completions, @pwc_size (power of two) entries
 * @pwc_prod:	producer index (under @lock)
 * @pwc_cons:	consumer index (under @comp_lock)
 * @comp_lock:	serializes handing completions to the CQs
 * @timer:	retry and RNR timers (timers.c)
 * @tx_task:	TX continuation after a burst budget
 * @tx_ip_id:	IPv4 ID of the next packet (per QP, as a connected socket)
 * @tx_batch:	packets built but not yet sent (tx.c), under @lock
 * @dbg:	its debugfs file (debugfs.c), or NULL / an error pointer
 */
struct softrc_qp {
	struct ib_qp ibqp;
	struct softrc_dev *sdev;
	u64 uid;
	spinlock_t lock;	/* the QP lock: engine, state, shadows */
	struct softrc_qp_handle *h;
	struct completion released;
	bool dying;
	bool is_user;
	bool sig_all;
	enum ib_qp_state state;
	bool sqd_seen;
	unsigned long events;
	unsigned long cq_lost;
	struct ib_qp_attr attr;
	struct softrc_path av;
	struct dst_cache dst_cache;
	u32 pmtu;

	struct softrc_eng_qp core;
	struct softrc_eng_send_wqe *core_sq;
	struct softrc_eng_recv_wqe *core_rq;
	struct softrc_eng_rd_res *core_res;
	u32 core_res_cap;
	struct list_head stats_node;
	struct softrc_counter_bind *cnt_bind;

	u32 sq_depth;
	u32 max_send_wr;
	u32 max_sge;
	u32 max_inline;
	u32 sq_area;
	struct softrc_sq_shadow *sqs;
	u8 *sq_data;
	struct softrc_mr **sq_pins;
	void *sq_scratch;
	struct softrc_queue *usq;
	struct softrc_queue *urq;
	struct softrc_srq *srq;

	u32 rq_depth;
	u32 max_recv_wr;
	u32 max_recv_sge;
	u32 rq_stride;
	u8 *rq_data;
	unsigned long *rq_bad;
	struct softrc_mr **rq_pins;

	struct softrc_pwc *pwc;
	u32 pwc_size;
	u32 pwc_prod;
	u32 pwc_cons;
	spinlock_t comp_lock;	/* one drainer of @pwc at a time */

	struct hrtimer timer[SOFTRC_TIMER_NR];
	struct tasklet_struct tx_task;
	u16 tx_ip_id;
	struct softrc_tx_batch tx_batch;
	struct dentry *dbg;
};

static inline struct softrc_qp *to_sqp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct softrc_qp, ibqp);
}

/* A datagram QP: UD, or the GSI QP (UD on the wire, QPN 1)? */
static inline bool softrc_qp_is_ud(const struct softrc_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/* The BTH transport bits of the QP's packets (RC, UC or UD) */
static inline u8 softrc_qp_transport(const struct softrc_qp *qp)
{
	if (softrc_qp_is_ud(qp))
		return SOFTRC_OPCODE_UD;
	return qp->ibqp.qp_type == IB_QPT_UC ? SOFTRC_OPCODE_UC :
					       SOFTRC_OPCODE_RC;
}

/*
 * WQEs the engine SQ may hold: @max_send_wr, or for a user QP at most
 * @sq_depth (its other WQEs wait in its ring).
 */
static inline u32 softrc_qp_sq_cap(const struct softrc_qp *qp)
{
	return min(qp->max_send_wr, qp->sq_depth);
}

static inline struct softrc_rwqe *softrc_qp_rwqe(struct softrc_qp *qp,
						 u32 slot)
{
	return (struct softrc_rwqe *)(qp->rq_data + (size_t)slot * qp->rq_stride);
}

static inline struct ib_sge *softrc_qp_sq_sge(struct softrc_qp *qp, u32 slot)
{
	return (struct ib_sge *)(qp->sq_data + (size_t)slot * qp->sq_area);
}

/* The MRs pinned for the SGEs of send / receive shadow @slot. */
static inline struct softrc_mr **softrc_qp_sq_pins(struct softrc_qp *qp,
						   u32 slot)
{
	return qp->sq_pins + (size_t)slot * qp->max_sge;
}

static inline struct softrc_mr **softrc_qp_rq_pins(struct softrc_qp *qp,
						   u32 slot)
{
	return qp->rq_pins + (size_t)slot * qp->max_recv_sge;
}

/* Packets one engine call may send before the rest goes to the tasklet. */
#define SOFTRC_TX_BUDGET	64

/* ib_device_ops */
int softrc_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
		     struct ib_udata *udata);
int softrc_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
		     int mask, struct ib_udata *udata);
int softrc_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr, int mask,
		    struct ib_qp_init_attr *init);
int softrc_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata);

/* the QPN table, for the receive path */
struct softrc_qp *softrc_qp_get(struct softrc_dev *sdev, u32 qpn);
void softrc_qp_put(struct softrc_qp *qp);
bool softrc_qp_rx_ok(const struct softrc_qp *qp);

#endif /* SOFTRC_QP_H */

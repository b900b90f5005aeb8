/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * mcast.c: multicast groups of UD QPs (attach_mcast, detach_mcast).
 *
 * Context: process context (the verbs, QP destroy); the receive and
 * transmit paths read softrc_dp.mc_list under RCU.
 */
#ifndef SOFTRC_MCAST_H
#define SOFTRC_MCAST_H

#include <linux/list.h>
#include <linux/rcupdate.h>
#include <rdma/ib_verbs.h>

struct softrc_qp;
struct softrc_qp_handle;

/**
 * struct softrc_mc_attach - one UD QP attached to one multicast group
 * @node:	in softrc_dp.mc_list (RCU for the receive path)
 * @mgid:	the group
 * @h:		the QP's handle (struct softrc_qp_handle), which outlives
 *		its RCU readers; the QP detaches from all before it is
 *		destroyed
 * @rcu:	frees it after the readers
 */
struct softrc_mc_attach {
	struct list_head node;
	union ib_gid mgid;
	struct softrc_qp_handle *h;
	struct rcu_head rcu;
};

int softrc_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
int softrc_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid);
void softrc_mcast_qp_gone(struct softrc_qp *qp);

#endif /* SOFTRC_MCAST_H */

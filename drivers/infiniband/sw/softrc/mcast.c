// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Multicast groups of UD QPs: the attach_mcast / detach_mcast verbs
 * (ibv_attach_mcast, ib_attach_mcast), which rdma_cm's multicast joins
 * call on RoCE once the CM has joined the netdev to the IP group. A UD
 * packet to the multicast QPN (0xFFFFFF) goes to every QP attached to
 * the group of its destination IP address, the MGID being that address
 * as a GID; each QP checks its own P_Key and Q_Key (IBTA Vol 1 §10.5).
 * The receive side is softrc_rx_mcast() in rx.c, the sender's own copy
 * softrc_mcast_loop() in tx.c.
 *
 * Context: attach and detach in process context, under dp->mc_lock; the
 * receive path (softirq) walks dp->mc_list under RCU and reaches a QP
 * through its handle, which is freed only after a grace period; a QP
 * leaves every group before it is destroyed, and a reader that finds it
 * then fails to take a reference (qp.c, softrc_destroy_qp).
 */
#include <linux/rculist.h>
#include <linux/slab.h>
#include <net/ipv6.h>

#include "qp.h"
#include "mcast.h"

/* A multicast GID: ff00::/8, or an IPv4-mapped 224.0.0.0/4 address */
static bool softrc_gid_is_mcast(const union ib_gid *gid)
{
	const struct in6_addr *a = (const struct in6_addr *)gid->raw;

	if (ipv6_addr_v4mapped(a))
		return ipv4_is_multicast(a->s6_addr32[3]);
	return ipv6_addr_is_multicast(a);
}

/* @qp's attachment to @mgid, if any; the group's size in *@members */
static struct softrc_mc_attach *softrc_mc_find(struct softrc_dp *dp,
					       const struct softrc_qp *qp,
					       const union ib_gid *mgid,
					       u32 *members)
{
	struct softrc_mc_attach *mc, *found = NULL;

	lockdep_assert_held(&dp->mc_lock);
	*members = 0;
	list_for_each_entry(mc, &dp->mc_list, node) {
		if (memcmp(&mc->mgid, mgid, sizeof(*mgid)))
			continue;
		(*members)++;
		if (mc->h == qp->h)
			found = mc;
	}
	return found;
}

/* Unlink @mc (its group has @members, @mc included) */
static void softrc_mc_unlink(struct softrc_dp *dp, struct softrc_mc_attach *mc,
			     u32 members)
{
	lockdep_assert_held(&dp->mc_lock);
	list_del_rcu(&mc->node);
	dp->mc_count--;
	if (members == 1)
		dp->mc_groups--;
	kfree_rcu(mc, rcu);
}

int softrc_attach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid)
{
	struct softrc_qp *qp = to_sqp(ibqp);
	struct softrc_dp *dp = qp->sdev->dp;
	struct softrc_mc_attach *mc;
	u32 members;
	int err = 0;

	if (!softrc_qp_is_ud(qp) || ibqp->qp_type == IB_QPT_GSI ||
	    !softrc_gid_is_mcast(mgid))
		return -EINVAL;
	mc = kzalloc(sizeof(*mc), GFP_KERNEL_ACCOUNT);
	if (!mc)
		return -ENOMEM;
	mc->mgid = *mgid;
	mc->h = qp->h;

	spin_lock_bh(&dp->mc_lock);
	if (softrc_mc_find(dp, qp, mgid, &members)) {
		/* attached already: nothing changes (as on other devices) */
		kfree(mc);
		goto out;
	}
	if (dp->mc_count >= SOFTRC_MAX_MCAST_ATTACH ||
	    members >= SOFTRC_MAX_MCAST_QP_ATTACH ||
	    (!members && dp->mc_groups >= SOFTRC_MAX_MCAST_GRP)) {
		kfree(mc);
		err = -ENOMEM;
		goto out;
	}
	dp->mc_count++;
	if (!members)
		dp->mc_groups++;
	list_add_tail_rcu(&mc->node, &dp->mc_list);
out:
	spin_unlock_bh(&dp->mc_lock);
	return err;
}

int softrc_detach_mcast(struct ib_qp *ibqp, union ib_gid *mgid, u16 mlid)
{
	struct softrc_qp *qp = to_sqp(ibqp);
	struct softrc_dp *dp = qp->sdev->dp;
	struct softrc_mc_attach *mc;
	u32 members;

	spin_lock_bh(&dp->mc_lock);
	mc = softrc_mc_find(dp, qp, mgid, &members);
	if (mc)
		softrc_mc_unlink(dp, mc, members);
	spin_unlock_bh(&dp->mc_lock);
	return mc ? 0 : -EINVAL;
}

/* @qp is being destroyed: out of every group */
void softrc_mcast_qp_gone(struct softrc_qp *qp)
{
	struct softrc_dp *dp = qp->sdev->dp;
	struct softrc_mc_attach *mc, *tmp;
	u32 members;

	if (!softrc_qp_is_ud(qp))
		return;
	spin_lock_bh(&dp->mc_lock);
	list_for_each_entry_safe(mc, tmp, &dp->mc_list, node) {
		if (mc->h != qp->h)
			continue;
		softrc_mc_find(dp, qp, &mc->mgid, &members);
		softrc_mc_unlink(dp, mc, members);
	}
	spin_unlock_bh(&dp->mc_lock);
}

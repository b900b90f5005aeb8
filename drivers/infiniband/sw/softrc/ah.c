// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address vectors and address handles.
 *
 * Context: softrc_av_from_attr and softrc_av_to_attr run in any context
 * and never sleep. create_ah may be called in atomic context (without
 * RDMA_CREATE_AH_SLEEPABLE) and destroy_ah likewise, so both only take
 * the AH xarray's lock with interrupts saved. Touches the device's AH
 * xarray and the AH; reads the source GID attributes the core resolved.
 */
#include <net/ipv6.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/rdma_user_rxe.h>

#include "softrc.h"
#include "ah.h"

/**
 * softrc_gid_ifindex() - the netdev a GID belongs to
 * @attr:	the GID's attributes
 *
 * A GID of an address on a VLAN or macvlan of the device's netdev
 * belongs to that upper device: traffic from it leaves through it (with
 * its 802.1Q tag or MAC), not through the device's own netdev.
 *
 * Return: its ifindex, or 0 if it has none (any more).
 */
int softrc_gid_ifindex(const struct ib_gid_attr *attr)
{
	struct net_device *ndev;
	int ifindex = 0;

	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(attr);
	if (!IS_ERR(ndev))
		ifindex = ndev->ifindex;
	rcu_read_unlock();
	return ifindex;
}

/**
 * softrc_av_from_attr() - resolve a RoCEv2 address into @av
 * @sdev:	the device the address is used on
 * @av:		filled on success
 * @attr:	the address; the core has resolved grh.sgid_attr and
 *		roce.dmac
 *
 * Return: 0, or -EINVAL if @attr is not a RoCEv2 address of port 1 of
 * @sdev with a GRH, or its GIDs are not of one IP family.
 */
int softrc_av_from_attr(struct softrc_dev *sdev, struct softrc_av *av,
			const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	const struct ib_gid_attr *sgid_attr;
	bool dst_v4;

	if (attr->type != RDMA_AH_ATTR_TYPE_ROCE ||
	    rdma_ah_get_port_num(attr) != 1 ||
	    !(rdma_ah_get_ah_flags(attr) & IB_AH_GRH))
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	sgid_attr = grh->sgid_attr;
	if (!sgid_attr || sgid_attr->device != &sdev->ib_dev ||
	    sgid_attr->gid_type != IB_GID_TYPE_ROCE_UDP_ENCAP)
		return -EINVAL;

	memset(av, 0, sizeof(*av));
	dst_v4 = ipv6_addr_v4mapped((const struct in6_addr *)grh->dgid.raw);
	if (rdma_gid_attr_network_type(sgid_attr) == RDMA_NETWORK_IPV4) {
		if (!dst_v4)
			return -EINVAL;
		av->net_type = SOFTRC_NET_IPV4;
		memcpy(&av->saddr.v4, &sgid_attr->gid.raw[12], 4);
		memcpy(&av->daddr.v4, &grh->dgid.raw[12], 4);
	} else {
		if (dst_v4)
			return -EINVAL;
		av->net_type = SOFTRC_NET_IPV6;
		memcpy(&av->saddr.v6, sgid_attr->gid.raw, 16);
		memcpy(&av->daddr.v6, grh->dgid.raw, 16);
	}
	memcpy(av->dmac, attr->roce.dmac, ETH_ALEN);
	av->tclass = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	av->flow_label = grh->flow_label & 0xfffff;
	av->sgid_index = grh->sgid_index;
	av->sl = rdma_ah_get_sl(attr);
	av->dgid = grh->dgid;
	av->ifindex = softrc_gid_ifindex(sgid_attr);
	return 0;
}

/* The rdma_ah_attr @av was built from (sgid_attr left NULL). */
void softrc_av_to_attr(const struct softrc_av *av, struct rdma_ah_attr *attr)
{
	union ib_gid dgid = av->dgid;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_grh(attr, &dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->tclass);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
}

/* Number the AH: reserve an index, then publish the finished AH. */
static int softrc_ah_insert(struct softrc_dev *sdev, struct softrc_ah *ah,
			    gfp_t gfp)
{
	unsigned long flags;
	u32 index;
	int err;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	err = __xa_alloc(&sdev->ah_xa, &index, NULL,
			 XA_LIMIT(1, SOFTRC_MAX_AH), gfp);
	if (!err) {
		ah->ah_num = index;
		err = xa_err(__xa_store(&sdev->ah_xa, index, ah, gfp));
		if (err)
			__xa_erase(&sdev->ah_xa, index);
	}
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
	return err == -EBUSY ? -ENOMEM : err;
}

static void softrc_ah_remove(struct softrc_dev *sdev, struct softrc_ah *ah)
{
	unsigned long flags;

	xa_lock_irqsave(&sdev->ah_xa, flags);
	__xa_erase(&sdev->ah_xa, ah->ah_num);
	xa_unlock_irqrestore(&sdev->ah_xa, flags);
}

/* ib_device_ops.create_ah and .create_user_ah */
int softrc_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		     struct ib_udata *udata)
{
	struct softrc_dev *sdev = to_sdev(ibah->device);
	struct softrc_ah *ah = to_sah(ibah);
	struct rxe_create_ah_resp resp = {};
	gfp_t gfp;
	int err;

	err = softrc_av_from_attr(sdev, &ah->av, init_attr->ah_attr);
	if (err)
		return err;
	gfp = init_attr->flags & RDMA_CREATE_AH_SLEEPABLE ? GFP_KERNEL :
							     GFP_ATOMIC;
	err = softrc_ah_insert(sdev, ah, gfp);
	if (err)
		return err;

	/* a provider with a shorter response builds its own AV (ah_num 0) */
	if (udata && udata->outlen >= sizeof(resp)) {
		resp.ah_num = ah->ah_num;
		err = ib_copy_to_udata(udata, &resp, sizeof(resp));
		if (err) {
			softrc_ah_remove(sdev, ah);
			return err;
		}
	}
	ibdev_dbg(ibah->device, "ah %u: %s\n", ah->ah_num,
		  ah->av.net_type == SOFTRC_NET_IPV4 ? "ipv4" : "ipv6");
	return 0;
}

int softrc_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	softrc_ah_remove(to_sdev(ibah->device), to_sah(ibah));
	return 0;
}

int softrc_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	softrc_av_to_attr(&to_sah(ibah)->av, attr);
	return 0;
}

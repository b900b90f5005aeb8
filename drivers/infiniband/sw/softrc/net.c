// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 over UDP 4791: per-namespace tunnel sockets, the receive hook and
 * the IPv4/IPv6 transmit path.
 *
 * Context:
 *  - softrc_net_init/exit, softrc_net_dev_add/del: process context, may
 *    sleep; softrc_net_mutex serializes them with the pernet exit hook.
 *  - softrc_udp_encap_rcv: softirq (the UDP socket's encap_rcv), under
 *    RCU; finds the device in its namespace's RCU list and the QP in the
 *    device's QPN xarray (RCU + reference), then runs the engine under the
 *    QP lock, flushes the coalesced ACK and lets the requester transmit.
 *  - softrc_self_rcv: tasklet (softirq), the same receive path for the
 *    packets softrc devices of one namespace send to each other (or a
 *    device to itself), which never enter the IP stack.
 *  - softrc_net_xmit: with a QP lock held (engine callback), process
 *    context with BH off or softirq; builds IP + UDP + RoCE headers in one
 *    linear skb, computes the ICRC over the final IP header (the IPv4 ID
 *    is not masked by it) and adds the packet to the QP's transmit batch;
 *    softrc_net_flush, also under the QP lock, hands the batch to
 *    ip_local_out / ip6_local_out, which resolve the neighbour and queue
 *    it (see "Transmit batches" below). A packet to a local address (the
 *    sending device's own, or another softrc device's of this namespace)
 *    goes to the self queue of the device owning it instead, never
 *    through `lo`: whatever arrives over a loopback netdev came from some
 *    local socket, and is dropped.
 *
 * Touches: sockets, skbs, the device list of a namespace, QPs through
 * qp.h and the engine.
 */
#include <linux/if_macvlan.h>
#include <linux/if_vlan.h>
#include <linux/highmem.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_mad.h>

#include "compat.h"
#include "qp.h"
#include "net.h"
#include "core/icrc.h"
#include "trace.h"

/**
 * struct softrc_net - the tunnel sockets of one network namespace
 * @net:	the namespace (NULL once it is gone)
 * @sock4:	UDP 4791 over IPv4
 * @sock6:	UDP 4791 over IPv6 (NULL without IPv6)
 * @devs:	struct softrc_dp of devices here (RCU readers, mutex writers)
 * @users:	devices using it (softrc_net_mutex)
 * @rcu:	frees it after the last receive-path reader
 */
struct softrc_net {
	struct net *net;
	struct socket *sock4;
	struct socket *sock6;
	struct list_head devs;
	int users;
	struct rcu_head rcu;
};

static DEFINE_MUTEX(softrc_net_mutex);
static unsigned int softrc_net_id;

static struct softrc_net **softrc_net_slot(struct net *net)
{
	return net_generic(net, softrc_net_id);
}

/* ---- receive --------------------------------------------------------- */

/* The netdev under a VLAN or macvlan device, else @dev itself */
static struct net_device *softrc_lower_netdev(struct net_device *dev)
{
	if (dev && is_vlan_dev(dev))
		return vlan_dev_real_dev(dev);
	if (dev && netif_is_macvlan(dev))
		return macvlan_dev_real_dev(dev);
	return dev;
}

/* The netdev a packet arrived on (a VLAN's or macvlan's lower device). */
static struct net_device *softrc_rx_netdev(struct sk_buff *skb)
{
	return softrc_lower_netdev(skb->dev);
}

/* The device of @snet on @ndev, NULL if none (or its netdev is leaving). */
static struct softrc_dev *softrc_rx_dev(struct softrc_net *snet,
					struct net_device *ndev)
{
	struct softrc_dp *dp;

	if (!ndev)
		return NULL;
	list_for_each_entry_rcu(dp, &snet->devs, node)
		if (dp->sdev->ndev == ndev && !READ_ONCE(dp->sdev->ndev_gone))
			return dp->sdev;
	return NULL;
}

/*
 * The device of @snet whose netdev (or a VLAN or macvlan on it) has the local
 * address @addr (IPv4 in addr->s6_addr32[3] unless @ipv6). Caller in RCU.
 */
static struct softrc_dev *softrc_addr_dev(struct softrc_net *snet,
					  struct net *net, bool ipv6,
					  const struct in6_addr *addr)
{
	struct net_device *ndev;

	if (ipv6)
		ndev = ipv6_dev_find(net, addr, NULL);
	else
		ndev = __ip_dev_find(net, addr->s6_addr32[3], false);
	return softrc_rx_dev(snet, softrc_lower_netdev(ndev));
}

/*
 * Walk @len bytes of @skb at @off (linear part and frags): copy them to
 * @to if it is set, else continue CRC @crc over them.
 * Return: the CRC register; the bytes not reached stay in *@left.
 */
static u32 softrc_skb_walk(const struct sk_buff *skb, int off, int len,
			   u32 crc, u8 *to, int *left)
{
	int hlen = skb_headlen(skb);
	int i, n;

	if (off < hlen) {
		n = min(len, hlen - off);
		if (to) {
			softrc_net_copy(to, skb->data + off, n);
			to += n;
		} else {
			crc = softrc_net_crc(crc, skb->data + off, n);
		}
		off += n;
		len -= n;
	}
	off -= hlen;
	for (i = 0; len > 0 && i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *f = &skb_shinfo(skb)->frags[i];
		u32 p_off, p_len, copied;
		struct page *p;
		int fsize = skb_frag_size(f);

		if (off >= fsize) {
			off -= fsize;
			continue;
		}
		n = min(len, fsize - off);
		skb_frag_foreach_page(f, skb_frag_off(f) + off, n, p, p_off,
				      p_len, copied) {
			u8 *va = kmap_local_page(p);

			if (to) {
				softrc_net_copy(to, va + p_off, p_len);
				to += p_len;
			} else {
				crc = softrc_net_crc(crc, va + p_off, p_len);
			}
			kunmap_local(va);
		}
		len -= n;
		off = 0;
	}
	*left = len;
	return crc;
}

/* Continue CRC @crc over @len bytes of @skb at @off. */
static u32 softrc_skb_crc(const struct sk_buff *skb, int off, int len, u32 crc)
{
	int left;

	return softrc_skb_walk(skb, off, len, crc, NULL, &left);
}

/**
 * softrc_skb_copy_bits() - copy @len bytes of @skb at @off to @to
 * @skb:	the packet (linear part and page frags; no frag list)
 * @off:	offset of the first byte
 * @to:		kernel destination
 * @len:	bytes
 *
 * skb_copy_bits() with the copy routine softrc_net_copy() chose at load.
 * Return: 0, or -EFAULT if @skb is too short.
 */
int softrc_skb_copy_bits(const struct sk_buff *skb, int off, void *to, int len)
{
	int left;

	if (off < 0 || len < 0 || off > (int)skb->len - len)
		return -EFAULT;
	softrc_skb_walk(skb, off, len, 0, to, &left);
	return left ? -EFAULT : 0;
}

/*
 * FLUSH's ICRC as Linux rxe computes it (6.2 on, still in 6.12): its
 * opcode table gives FLUSH no payload offset, so after the headers rxe
 * runs the CRC over the packet once more, raw from the BTH up to the
 * ICRC (its payload_addr() and payload_size() of a FLUSH). rxe drops a
 * FLUSH with the IBTA ICRC, and softrc would drop rxe's. On receive a
 * FLUSH with either is taken (rxe's counted in rx_flush_icrc_rxe: the
 * CRC still covers every byte); what softrc sends is the IBTA ICRC, or
 * rxe's with flush_icrc_rxe=Y (Documentation/softrc.rst, "FLUSH").
 */
static bool softrc_flush_icrc_rxe;
module_param_named(flush_icrc_rxe, softrc_flush_icrc_rxe, bool, 0644);
MODULE_PARM_DESC(flush_icrc_rxe,
		 "send FLUSH with Linux rxe's ICRC (rxe drops the IBTA one)");

/*
 * ICRC check of the packet whose UDP header is at skb->data: 0 bad, 1
 * good, 2 a FLUSH with rxe's ICRC.
 */
static int softrc_rx_icrc_ok(struct sk_buff *skb, bool ipv6)
{
	int body = sizeof(struct udphdr) + SOFTRC_BTH_BYTES;
	int len = skb->len - SOFTRC_ICRC_BYTES;
	__le32 trailer;
	const void *t;
	u8 opcode;
	u32 crc;

	crc = softrc_icrc_begin(skb_network_header(skb), ipv6);
	crc = softrc_skb_crc(skb, body, len - body, crc);
	t = skb_header_pointer(skb, len, SOFTRC_ICRC_BYTES, &trailer);
	if (!t)
		return 0;
	if (softrc_icrc_final(crc) == softrc_icrc_get(t))
		return 1;
	if (skb_copy_bits(skb, sizeof(struct udphdr), &opcode, 1) ||
	    opcode != SOFTRC_OP_FLUSH)
		return 0;
	crc = softrc_skb_crc(skb, sizeof(struct udphdr),
			     len - sizeof(struct udphdr), crc);
	return softrc_icrc_final(crc) == softrc_icrc_get(t) ? 2 : 0;
}

/*
 * P_Keys match when their low 15 bits are equal and not zero, and at
 * least one of the two is a full member (bit 15); two limited members
 * may not talk (IBTA Vol 1 ch. 10.9, partition key matching).
 */
static bool softrc_pkey_match(u16 a, u16 b)
{
	return (a & 0x7fff) && (a & 0x7fff) == (b & 0x7fff) &&
	       ((a | b) & 0x8000);
}

/*
 * A UD packet belongs to @qp if its BTH P_Key matches the QP's and its
 * DETH carries the QP's Q_Key (IBTA Vol 1 §10.2.4; for the GSI QP the
 * well-known QP1 Q_Key, §13.5.3), from anyone: UD has no peer.
 */
static enum softrc_dev_counter softrc_rx_assoc_ud(const struct softrc_qp *qp,
						  const struct softrc_pkt *pkt)
{
	u32 qkey = qp->ibqp.qp_type == IB_QPT_GSI ? IB_QP1_QKEY : qp->attr.qkey;

	if (!softrc_pkey_match(pkt->pkey, qp->core.attr.pkey))
		return SOFTRC_DEVCNT_rx_drop_pkey;
	if (pkt->qkey != qkey)
		return SOFTRC_DEVCNT_rx_drop_qkey;
	return SOFTRC_DEVCNT_NR;
}

/*
 * Packet association: an RC packet belongs to @qp only if it was sent
 * from the QP's peer (its AV's destination) to the QP's own address (its
 * source GID) in the QP's IP family, and its BTH P_Key matches the QP's.
 * The BTH DestQP alone is guessable (rdma res show qp is unprivileged).
 * A few word compares against the path modify_qp(RTR) resolved.
 * Return: SOFTRC_DEVCNT_NR if @skb may reach the engine, else the
 * counter to drop it with.
 */
static enum softrc_dev_counter softrc_rx_assoc(const struct softrc_qp *qp,
					       const struct sk_buff *skb,
					       bool ipv6,
					       const struct softrc_bth *bth)
{
	const struct softrc_path *av = &qp->av;

	lockdep_assert_held(&qp->lock);
	if (av->ipv6 != ipv6)
		return SOFTRC_DEVCNT_rx_drop_addr;
	if (ipv6) {
		const struct ipv6hdr *ip6h = ipv6_hdr(skb);

		if (!ipv6_addr_equal(&ip6h->saddr, &av->daddr.v6) ||
		    !ipv6_addr_equal(&ip6h->daddr, &av->saddr.v6))
			return SOFTRC_DEVCNT_rx_drop_addr;
	} else {
		const struct iphdr *iph = ip_hdr(skb);

		if (iph->saddr != av->daddr.v4 || iph->daddr != av->saddr.v4)
			return SOFTRC_DEVCNT_rx_drop_addr;
	}
	if (!softrc_pkey_match(softrc_bth_pkey(bth), qp->core.attr.pkey))
		return SOFTRC_DEVCNT_rx_drop_pkey;
	return SOFTRC_DEVCNT_NR;
}

/*
 * Run one packet through the QP's engine: @status is softrc_parse()'s
 * verdict on @pkt. Nothing reaches the engine, not even a malformed
 * packet's NAK, before the QP's state and the packet's association are
 * checked.
 */
static void softrc_rx_qp(struct softrc_qp *qp, struct sk_buff *skb,
			 const struct softrc_bth *bth, bool ipv6,
			 const struct softrc_pkt *pkt, int status)
{
	struct softrc_rx rx = { .skb = skb, .bth_off = sizeof(struct udphdr) };
	struct softrc_dev *sdev = qp->sdev;
	enum softrc_dev_counter drop;

	spin_lock(&qp->lock);
	if (!softrc_qp_rx_ok(qp))
		drop = SOFTRC_DEVCNT_rx_drop_state;
	else if (!softrc_qp_is_ud(qp))
		drop = softrc_rx_assoc(qp, skb, ipv6, bth);
	else if (!status)
		drop = softrc_rx_assoc_ud(qp, pkt);
	else
		drop = SOFTRC_DEVCNT_NR;	/* malformed: counted below */
	if (drop != SOFTRC_DEVCNT_NR) {
		softrc_dev_count(sdev, drop);
	} else if (status) {
		if (status < SOFTRC_PARSE_NR)
			atomic64_inc(&sdev->dp->parse_rej[status]);
		/* a malformed packet with a valid BTH: the engine may NAK it */
		if (status > SOFTRC_PARSE_RESV7_SET && !softrc_qp_is_ud(qp)) {
			softrc_core_rx_invalid(&qp->core, pkt);
			softrc_core_rx_flush(&qp->core);
			softrc_qp_run_tx(qp);
		}
	} else {
		if (softrc_pkt_has(pkt, SOFTRC_OPF_RECV))
			softrc_qp_rq_refill(qp);
		qp->rx_se = pkt->se;
		qp->rx_ipv6 = ipv6;
		qp->rx_vlan = is_vlan_dev(skb->dev) ?
			      vlan_dev_vlan_id(skb->dev) : 0xffff;
		trace_softrc_pkt_rx(qp, pkt);
		trace_softrc_nak_rx(qp, pkt);
		softrc_core_rx(&qp->core, pkt, &rx, softrc_now());
		qp->rx_se = false;
		softrc_core_rx_flush(&qp->core);
		softrc_qp_run_tx(qp);
	}
	spin_unlock(&qp->lock);
	softrc_qp_drain_comps(qp);
}

/*
 * A UD packet to the multicast QPN: a copy to each QP attached to the
 * group of its destination address (mcast.c), each through its own
 * checks (IBTA Vol 1 §10.5). The walk is bounded by the device's
 * SOFTRC_MAX_MCAST_ATTACH. Caller in RCU (the UDP receive path, the self
 * tasklet), which keeps every attachment and QP found alive.
 * Return: true if at least one QP took it.
 */
static bool softrc_rx_mcast(struct softrc_dev *sdev, struct sk_buff *skb,
			    const struct softrc_bth *bth, bool ipv6)
{
	int udp = sizeof(struct udphdr);
	struct softrc_mc_attach *mc;
	struct softrc_pkt pkt;
	union ib_gid mgid;
	bool any = false;
	int status;

	if (ipv6)
		memcpy(mgid.raw, &ipv6_hdr(skb)->daddr, sizeof(mgid));
	else
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid.raw);
	/* one verdict for all: every member is a UD QP */
	status = softrc_parse_qp(bth, skb_headlen(skb) - udp, skb->len - udp,
				 SOFTRC_PMTU_MAX, SOFTRC_OPCODE_UD, &pkt);
	list_for_each_entry_rcu(mc, &sdev->dp->mc_list, node) {
		if (memcmp(&mc->mgid, &mgid, sizeof(mgid)) ||
		    !refcount_inc_not_zero(&mc->qp->ref))
			continue;
		softrc_rx_qp(mc->qp, skb, bth, ipv6, &pkt, status);
		softrc_qp_put(mc->qp);
		any = true;
	}
	if (!any)
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_drop_unknown_qp);
	return any;
}

/*
 * One packet for @sdev, skb->data at the UDP header.
 * Return: true if the packet was handed to a QP (even if it dropped it).
 */
static bool softrc_rx_skb(struct softrc_dev *sdev, struct sk_buff *skb)
{
	int udp = sizeof(struct udphdr);
	bool ipv6 = ip_hdr(skb)->version == 6;
	const struct softrc_opcode_info *op;
	struct softrc_qp *qp;
	struct softrc_pkt pkt;
	struct softrc_bth *bth;
	int status;

	if (skb->len < udp + SOFTRC_BTH_BYTES + SOFTRC_ICRC_BYTES ||
	    !pskb_may_pull(skb, udp + SOFTRC_BTH_BYTES) ||
	    (skb_has_frag_list(skb) && skb_linearize(skb))) {
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_drop_short);
		return false;
	}
	/* the opcode's headers linear, so the parser sees them in one piece */
	bth = (struct softrc_bth *)(skb->data + udp);
	op = softrc_opcode_get(softrc_bth_opcode(bth));
	if (op && skb->len >= udp + op->hdr_len + SOFTRC_ICRC_BYTES &&
	    !pskb_may_pull(skb, udp + op->hdr_len)) {
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_drop_short);
		return false;
	}
	switch (softrc_rx_icrc_ok(skb, ipv6)) {
	case 0:
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_bad_icrc);
		return false;
	case 2:
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_flush_icrc_rxe);
		break;
	}
	bth = (struct softrc_bth *)(skb->data + udp);
	if (softrc_bth_dqpn(bth) == IB_MULTICAST_QPN)
		return softrc_rx_mcast(sdev, skb, bth, ipv6);
	qp = softrc_qp_get(sdev, softrc_bth_dqpn(bth));
	if (!qp) {
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_drop_unknown_qp);
		return false;
	}
	/* a UD receiver takes any size up to 4096: its WQE bounds it */
	status = softrc_parse_qp(bth, skb_headlen(skb) - udp, skb->len - udp,
				 softrc_qp_is_ud(qp) ? SOFTRC_PMTU_MAX : qp->pmtu,
				 softrc_qp_transport(qp), &pkt);
	softrc_rx_qp(qp, skb, bth, ipv6, &pkt, status);
	softrc_qp_put(qp);
	return !status;
}

/*
 * A packet that came over a loopback netdev was sent by a socket of this
 * host, and never by softrc: packets between softrc devices of one
 * namespace take the self queue (softrc_local_xmit). Any local user can
 * send UDP to a local address, so these are dropped, and counted on the
 * device that owns the destination address, if any.
 */
static void softrc_rx_loopback(struct softrc_net *snet, struct sk_buff *skb,
			       bool ipv6)
{
	struct in6_addr daddr = {};
	struct softrc_dev *sdev;

	if (ipv6)
		daddr = ipv6_hdr(skb)->daddr;
	else
		daddr.s6_addr32[3] = ip_hdr(skb)->daddr;
	sdev = softrc_addr_dev(snet, dev_net(skb->dev), ipv6, &daddr);
	if (sdev)
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_drop_loopback);
}

/* encap_rcv: skb->data at the UDP header; 0 = consumed. */
static int softrc_udp_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct softrc_net *snet = rcu_dereference_sk_user_data(sk);
	bool ipv6 = ip_hdr(skb)->version == 6;
	struct softrc_dev *sdev = NULL;
	struct net_device *ndev = softrc_rx_netdev(skb);

	if (snet && ndev && (ndev->flags & IFF_LOOPBACK))
		softrc_rx_loopback(snet, skb, ipv6);
	else if (snet)
		sdev = softrc_rx_dev(snet, ndev);
	if (sdev && softrc_rx_skb(sdev, skb))
		consume_skb(skb);
	else
		kfree_skb(skb);
	return 0;
}

/*
 * Packets a device sends to itself (client and server on one device) or
 * to another softrc device of its namespace skip the IP stack both ways,
 * as rxe's loopback does: softrc_net_xmit queues them here and this
 * tasklet runs the receive path over them in softirq, after the sender
 * has dropped its QP lock (sender and receiver may be one QP, or two QPs
 * sending to each other). The queue is bounded; a
 * packet beyond it is dropped and counted like a full device queue, and
 * the requester's retry recovers it.
 */
#define SOFTRC_SELF_QLEN	4096
#define SOFTRC_SELF_BUDGET	64

static void softrc_self_rcv(struct tasklet_struct *t)
{
	struct softrc_dp *dp = from_tasklet(dp, t, self_task);
	struct sk_buff *skb;
	int n;

	rcu_read_lock();
	for (n = 0; n < SOFTRC_SELF_BUDGET; n++) {
		skb = skb_dequeue(&dp->self_q);
		if (!skb)
			break;
		if (softrc_rx_skb(dp->sdev, skb))
			consume_skb(skb);
		else
			kfree_skb(skb);
	}
	rcu_read_unlock();
	if (!skb_queue_empty(&dp->self_q))
		tasklet_schedule(t);
}

/* Is @p's destination this very device (its own source address)? */
static bool softrc_to_self(const struct softrc_path *p)
{
	if (p->ipv6)
		return !ipv6_addr_any(&p->saddr.v6) &&
		       ipv6_addr_equal(&p->daddr.v6, &p->saddr.v6);
	return p->saddr.v4 && p->daddr.v4 == p->saddr.v4;
}

/*
 * @skb of @from, IP header at skb->data, to the receive path of @to (the
 * same device, or another of this namespace). Caller in RCU, which keeps
 * @to's data path alive (softrc_net_dev_del waits for it).
 */
static void softrc_self_xmit(struct softrc_dev *from, struct softrc_dev *to,
			     struct sk_buff *skb)
{
	struct softrc_dp *dp = to->dp;

	if (skb_queue_len(&dp->self_q) >= SOFTRC_SELF_QLEN) {
		kfree_skb(skb);
		softrc_dev_count(from, SOFTRC_DEVCNT_tx_drop_xmit);
		return;
	}
	skb->dev = to->ndev;
	__skb_pull(skb, skb_transport_offset(skb));
	skb_queue_tail(&dp->self_q, skb);
	softrc_dev_count(from, SOFTRC_DEVCNT_tx_self);
	tasklet_schedule(&dp->self_task);
}

/* ---- transmit -------------------------------------------------------- */

/* Is @p's destination a multicast group? */
static bool softrc_path_is_mcast(const struct softrc_path *p)
{
	return p->ipv6 ? ipv6_addr_is_multicast(&p->daddr.v6) :
			 ipv4_is_multicast(p->daddr.v4);
}

/* Has a QP of @dp joined the group @p sends to? Caller in RCU. */
static bool softrc_mcast_members(struct softrc_dp *dp,
				 const struct softrc_path *p)
{
	struct softrc_mc_attach *mc;
	struct in6_addr mgid;

	if (p->ipv6)
		mgid = p->daddr.v6;
	else
		ipv6_addr_set_v4mapped(p->daddr.v4, &mgid);
	list_for_each_entry_rcu(mc, &dp->mc_list, node)
		if (!memcmp(mc->mgid.raw, &mgid, sizeof(mgid)))
			return true;
	return false;
}

/* Out through the source GID's netdev (a VLAN's, a macvlan's) */
static int softrc_path_oif(const struct softrc_qp *qp,
			   const struct softrc_path *p)
{
	return p->ifindex ? p->ifindex : qp->sdev->ndev->ifindex;
}

/*
 * The route of @p, through @cache if set (an RC QP's one path; a UD QP's
 * destinations change per WR and are looked up each time).
 */
static struct dst_entry *softrc_route4(struct softrc_qp *qp,
				       const struct softrc_path *p,
				       struct net *net, struct dst_cache *cache)
{
	struct flowi4 fl4 = {
		.flowi4_oif = softrc_path_oif(qp, p),
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_tos = RT_TOS(p->tos),
		.daddr = p->daddr.v4,
		.saddr = p->saddr.v4,
	};
	struct rtable *rt;
	__be32 saddr;

	rt = cache ? dst_cache_get_ip4(cache, &saddr) : NULL;
	if (rt)
		return &rt->dst;
	rt = ip_route_output_key(net, &fl4);
	if (IS_ERR(rt))
		return NULL;
	if (cache)
		dst_cache_set_ip4(cache, &rt->dst, fl4.saddr);
	return &rt->dst;
}

static struct dst_entry *softrc_route6(struct softrc_qp *qp,
				       const struct softrc_path *p,
				       struct net *net, struct sock *sk,
				       struct dst_cache *cache)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct flowi6 fl6 = {
		.flowi6_oif = softrc_path_oif(qp, p),
		.flowi6_proto = IPPROTO_UDP,
		.daddr = p->daddr.v6,
		.saddr = p->saddr.v6,
	};
	struct dst_entry *dst;
	struct in6_addr saddr;

	dst = cache ? dst_cache_get_ip6(cache, &saddr) : NULL;
	if (dst)
		return dst;
	dst = ip6_dst_lookup_flow(net, sk, &fl6, NULL);
	if (IS_ERR(dst))
		return NULL;
	if (cache)
		dst_cache_set_ip6(cache, dst, &fl6.saddr);
	return dst;
#else
	return NULL;
#endif
}

/* The UDP header; @len: UDP length (header through ICRC). */
static void softrc_push_udp(const struct softrc_path *p, struct sk_buff *skb,
			    u32 len)
{
	struct udphdr *uh = skb_push(skb, sizeof(*uh));

	skb_reset_transport_header(skb);
	uh->source = htons(p->sport);
	uh->dest = htons(SOFTRC_UDP_PORT);
	uh->len = htons(len);
	uh->check = 0;
}

static void softrc_push_ip4(struct softrc_qp *qp, const struct softrc_path *p,
			    struct sk_buff *skb, u32 l4len)
{
	struct iphdr *iph = skb_push(skb, sizeof(*iph));

	skb_reset_network_header(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = p->tos;
	iph->tot_len = htons(sizeof(*iph) + l4len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = p->ttl;
	iph->protocol = IPPROTO_UDP;
	iph->check = 0;
	iph->saddr = p->saddr.v4;
	iph->daddr = p->daddr.v4;
	/*
	 * Before the ICRC: the IPv4 ID is not masked by it. Consecutive per
	 * QP, as a connected socket's: a batch's segments get head's ID + i.
	 */
	iph->id = htons(qp->tx_ip_id++);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
}

static void softrc_push_ip6(const struct softrc_path *p, struct sk_buff *skb,
			    u32 l4len)
{
	struct ipv6hdr *ip6h = skb_push(skb, sizeof(*ip6h));

	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, p->tos, htonl(p->flow_label));
	ip6h->payload_len = htons(l4len);
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = p->ttl;
	ip6h->saddr = p->saddr.v6;
	ip6h->daddr = p->daddr.v6;
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
}

/* Smallest payload worth attaching as page fragments instead of copying */
#define SOFTRC_FRAG_MIN		512

/*
 * An skb with @size bytes of head for a packet of @qp. Where the head
 * (with its skb_shared_info) fits in a page it is carved from the QP's
 * page fragment: skb_page_frag_refill() starts a page over, as it is,
 * once every packet built from it has been freed, so a head costs
 * neither a slab allocation nor the zeroing init_on_alloc does of every
 * new slab object, which was most of the cost of building a small packet
 * (Documentation/performance.rst). What a packet sends is all written by
 * its builder; the rest of a reused head is never sent.
 */
static struct sk_buff *softrc_skb_alloc(struct softrc_qp *qp, u32 size)
{
	u32 len = SKB_DATA_ALIGN(size) +
		  SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct page_frag *pf = &qp->tx_frag;
	struct sk_buff *skb;

	lockdep_assert_held(&qp->lock);
	if (len > PAGE_SIZE)
		return alloc_skb(size, GFP_ATOMIC);
	pf->offset = ALIGN(pf->offset, SMP_CACHE_BYTES);
	if (!skb_page_frag_refill(len, pf, GFP_ATOMIC))
		return NULL;
	skb = build_skb(page_address(pf->page) + pf->offset, len);
	if (!skb)
		return NULL;
	get_page(pf->page);
	pf->offset += len;
	return skb;
}

/*
 * One skb with IP, UDP and RoCE headers in its head and room for @room
 * more bytes. The lengths in the IP and UDP headers already count the
 * payload, pad and ICRC, however they are added later.
 */
static struct sk_buff *softrc_skb_hdrs(struct softrc_qp *qp,
				       const struct softrc_path *p,
				       struct net_device *odev,
				       const struct softrc_pkt *pkt, u32 room)
{
	u32 l3 = p->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	u32 head = LL_RESERVED_SPACE(odev) + l3 + sizeof(struct udphdr);
	u32 plen = pkt->payload_len;
	struct sk_buff *skb;
	u32 l4len;

	skb = softrc_skb_alloc(qp, head + SOFTRC_HDRS_MAX + room);
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	l4len = softrc_build_hdrs(pkt, skb->data);
	skb_put(skb, l4len);
	l4len += sizeof(struct udphdr) + plen + softrc_padcnt(plen) +
		 SOFTRC_ICRC_BYTES;
	softrc_push_udp(p, skb, l4len);
	if (p->ipv6)
		softrc_push_ip6(p, skb, l4len);
	else
		softrc_push_ip4(qp, p, skb, l4len);
	return skb;
}

/*
 * ICRC register over the linear part of a TX skb (IP header at
 * skb->data), less its last @skip bytes (an ICRC slot already there).
 */
static u32 softrc_skb_icrc(const struct softrc_path *p, struct sk_buff *skb,
			   u32 skip)
{
	u32 l3 = p->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	u32 hoff = l3 + sizeof(struct udphdr) + SOFTRC_BTH_BYTES;

	return softrc_net_crc(softrc_icrc_begin(skb->data, p->ipv6),
			      skb->data + hoff, skb_headlen(skb) - hoff - skip);
}

/* Payload copied into the head: small packets, kernel memory, fallback. */
static struct sk_buff *softrc_skb_copy(struct softrc_qp *qp,
				       const struct softrc_path *p,
				       struct net_device *odev,
				       const struct softrc_pkt *pkt,
				       const struct softrc_buf *payload)
{
	u32 plen = pkt->payload_len, pad = softrc_padcnt(plen);
	struct sk_buff *skb;
	u32 crc;
	u8 *t;

	skb = softrc_skb_hdrs(qp, p, odev, pkt, plen + pad + SOFTRC_ICRC_BYTES);
	if (!skb)
		return NULL;
	if (plen) {
		t = skb_put(skb, plen);
		if (softrc_glue_fill(qp, payload, t)) {
			/* never zeros with a valid ICRC: the engine fails it */
			kfree_skb(skb);
			return ERR_PTR(-EFAULT);
		}
	}
	if (pad)
		memset(skb_put(skb, pad), 0, pad);
	t = skb_put(skb, SOFTRC_ICRC_BYTES);
	crc = softrc_skb_icrc(p, skb, SOFTRC_ICRC_BYTES);
	if (pkt->opcode == SOFTRC_OP_FLUSH && READ_ONCE(softrc_flush_icrc_rxe)) {
		/* rxe's: the packet once more from the BTH (see above) */
		u32 bth = (p->ipv6 ? sizeof(struct ipv6hdr) :
			   sizeof(struct iphdr)) + sizeof(struct udphdr);

		crc = softrc_net_crc(crc, skb->data + bth,
				     skb->len - bth - SOFTRC_ICRC_BYTES);
	}
	softrc_icrc_put(t, softrc_icrc_final(crc));
	return skb;
}

/*
 * Payload attached as fragments of the MR's pages (no copy; the WQE's
 * buffer stays valid until the ACK retires it, and a replay rebuilds from
 * the WQE), the ICRC computed over them on the way, pad and ICRC in a
 * fragment of the QP's trailer page. NULL: use softrc_skb_copy;
 * ERR_PTR(-EFAULT): the payload's memory is gone.
 */
static struct sk_buff *softrc_skb_frags(struct softrc_qp *qp,
					const struct softrc_path *p,
					struct net_device *odev,
					const struct softrc_pkt *pkt,
					const struct softrc_buf *payload)
{
	u32 plen = pkt->payload_len, pad = softrc_padcnt(plen);
	struct page_frag *pf = &qp->tx_frag;
	static const u8 zero[4];
	struct sk_buff *skb;
	u32 crc;
	int err;
	u8 *t;

	skb = softrc_skb_hdrs(qp, p, odev, pkt, 0);
	if (!skb)
		return NULL;
	crc = softrc_skb_icrc(p, skb, 0);
	err = softrc_glue_frags(qp, payload, skb, &crc);
	/* the trailer's room after the head's: both come from @pf */
	if (!err && !skb_page_frag_refill(8, pf, GFP_ATOMIC))
		err = -ENOMEM;
	if (err) {
		kfree_skb(skb);
		return err == -EFAULT ? ERR_PTR(err) : NULL;
	}
	crc = softrc_icrc_update(crc, zero, pad);
	t = page_address(pf->page) + pf->offset;
	memset(t, 0, pad);
	softrc_icrc_put(t + pad, softrc_icrc_final(crc));
	get_page(pf->page);
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, pf->page,
			   pf->offset, pad + SOFTRC_ICRC_BYTES);
	pf->offset += 8;
	skb->len += pad + SOFTRC_ICRC_BYTES;
	skb->data_len += pad + SOFTRC_ICRC_BYTES;
	skb->truesize += pad + SOFTRC_ICRC_BYTES;
	return skb;
}

/*
 * The packet @pkt of @qp with its payload, headroom for @odev's link;
 * NULL if out of memory, ERR_PTR(-EFAULT) if the payload's memory went
 * away since it was checked (deregistered, invalidated).
 */
static struct sk_buff *softrc_skb_build(struct softrc_qp *qp,
					const struct softrc_path *p,
					struct net_device *odev,
					const struct softrc_pkt *pkt,
					const struct softrc_buf *payload)
{
	struct sk_buff *skb = NULL;

	if (pkt->payload_len >= SOFTRC_FRAG_MIN && softrc_glue_can_frag(qp, payload))
		skb = softrc_skb_frags(qp, p, odev, pkt, payload);
	if (!skb)
		skb = softrc_skb_copy(qp, p, odev, pkt, payload);
	if (IS_ERR(skb))
		softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_tx_mem_errors);
	else if (!skb)
		softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_tx_drop_alloc);
	return skb;
}

/*
 * Did routing send packets on @p to a local address (through `lo`)? Then
 * they go straight to the softrc device of this namespace that owns it,
 * which drops whatever does arrive over `lo` (softrc_rx_loopback).
 */
static bool softrc_route_local(const struct softrc_path *p,
			       struct dst_entry *dst)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (p->ipv6)
		return ((struct rt6_info *)dst)->rt6i_flags & RTF_LOCAL;
#endif
	return ((struct rtable *)dst)->rt_type == RTN_LOCAL;
}

/*
 * A UD message to a multicast group: the members on this very device get
 * their copy here, as an RDMA NIC hands a group's packets to its own
 * members too. (The IP stack's multicast loop never reaches the tunnel
 * socket; it is off on it, so there is no second copy.)
 */
static void softrc_mcast_loop(struct softrc_qp *qp, const struct softrc_path *p,
			      const struct softrc_pkt *pkt,
			      const struct softrc_buf *payload)
{
	struct softrc_dev *sdev = qp->sdev;
	struct sk_buff *skb;

	rcu_read_lock();
	if (softrc_mcast_members(sdev->dp, p)) {
		skb = softrc_skb_build(qp, p, sdev->ndev, pkt, payload);
		if (!IS_ERR_OR_NULL(skb))
			softrc_self_xmit(sdev, sdev, skb);
	}
	rcu_read_unlock();
}

/* Build @pkt of @qp and queue it to the local device owning its daddr. */
static int softrc_local_xmit(struct softrc_qp *qp, const struct softrc_path *p,
			     struct net *net, const struct softrc_pkt *pkt,
			     const struct softrc_buf *payload)
{
	struct softrc_dev *sdev = qp->sdev, *to = sdev;
	struct in6_addr daddr = {};
	struct sk_buff *skb;
	int err = 0;

	rcu_read_lock();
	if (!softrc_to_self(p)) {
		if (p->ipv6)
			daddr = p->daddr.v6;
		else
			daddr.s6_addr32[3] = p->daddr.v4;
		to = softrc_addr_dev(sdev->dp->snet, net, p->ipv6, &daddr);
	}
	if (!to) {
		softrc_dev_count(sdev, SOFTRC_DEVCNT_tx_drop_route);
	} else {
		skb = softrc_skb_build(qp, p, to->ndev, pkt, payload);
		if (IS_ERR(skb))
			err = PTR_ERR(skb);
		else if (skb)
			softrc_self_xmit(sdev, to, skb);
	}
	rcu_read_unlock();
	return err;
}

/*
 * Transmit batches. Consecutive packets of a QP leave as one skb of GSO
 * type UDP_L4 | FRAGLIST: the first packet is the head, each later one a
 * complete packet of its own on the head's frag_list (its data at its UDP
 * payload, its own IP and UDP headers in front). The IP output path, the
 * neighbour and the device queue are crossed once per batch. The batch
 * is cut back into its packets by skb_segment_list() at the first layer
 * that cannot take it whole: a device without NETIF_F_GSO_FRAGLIST, at
 * transmit, or, after a veth or `lo`, the receiving UDP socket, which
 * does not accept GSO. Every packet keeps its own headers and ICRC,
 * except for two fields inet_gso_segment() and __udp_gso_segment_list()
 * rewrite: the IPv4 ID (the head's + i, hence the per-QP consecutive
 * IDs) and the head's UDP length (8 + gso_size, so gso_size is the head
 * packet's UDP payload). What the peer receives is packet for packet what
 * an unbatched sender would have sent.
 *
 * The batch is sent when it is full and at the end of every engine call
 * (softrc_qp_run_tx ends with softrc_net_flush), so none outlives the QP
 * lock.
 */
#define SOFTRC_BATCH_SEGS	32
#define SOFTRC_BATCH_BYTES	60000

static bool softrc_batch_enable = true;
module_param_named(tx_batch, softrc_batch_enable, bool, 0644);
MODULE_PARM_DESC(tx_batch, "send a QP's consecutive packets as one GSO skb");

static int softrc_ip_out(struct net *net, struct sock *sk, struct sk_buff *skb)
{
	if (skb->protocol == htons(ETH_P_IPV6))
		return ip6_local_out(net, sk, skb);
	return ip_local_out(net, sk, skb);
}

/**
 * softrc_net_flush() - send @qp's open transmit batch, if any
 * @qp:		the QP, lock held
 */
void softrc_net_flush(struct softrc_qp *qp)
{
	struct softrc_tx_batch *b = &qp->tx_batch;
	struct sk_buff *skb = b->head;
	u32 segs = b->segs;
	int err;

	lockdep_assert_held(&qp->lock);
	if (!skb)
		return;
	b->head = NULL;
	b->tail = NULL;
	b->segs = 0;
	if (segs > 1) {
		/* the UDP length of the whole; segmentation restores the head's */
		udp_hdr(skb)->len = htons(skb->len - skb_transport_offset(skb));
		skb_shinfo(skb)->gso_type = SKB_GSO_UDP_L4 | SKB_GSO_FRAGLIST;
		skb_shinfo(skb)->gso_size = b->mss;
		skb_shinfo(skb)->gso_segs = segs;
		/*
		 * No UDP checksum (it is zero, as rxe sends); on output
		 * UNNECESSARY means what NONE does, but lets a GSO skb pass
		 * a device that takes it whole (netif_needs_gso()).
		 */
		skb->ip_summed = CHECKSUM_UNNECESSARY;
		softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_tx_batches);
	}
	err = softrc_ip_out(dev_net(qp->sdev->ndev), b->sk, skb);
	if (unlikely(net_xmit_eval(err)))
		atomic64_add(segs, &qp->sdev->dp->cnt[SOFTRC_DEVCNT_tx_drop_xmit]);
}

/* Add @skb (IP header at skb->data, route @dst, socket @sk) to @qp's batch. */
static void softrc_batch_add(struct softrc_qp *qp, struct sk_buff *skb,
			     struct dst_entry *dst, struct sock *sk)
{
	struct softrc_tx_batch *b = &qp->tx_batch;
	u32 hdrs = skb_transport_offset(skb) + sizeof(struct udphdr);

	if (b->head && (b->segs >= SOFTRC_BATCH_SEGS || !softrc_batch_enable ||
			b->head->len + skb->len - hdrs > SOFTRC_BATCH_BYTES))
		softrc_net_flush(qp);
	if (!b->head) {
		skb_dst_set(skb, dst);
		b->head = skb;
		b->sk = sk;
		b->mss = skb->len - hdrs;
		b->segs = 1;
		return;
	}
	dst_release(dst);
	/* a frag_list member: data at its UDP payload, headers in front */
	__skb_pull(skb, hdrs);
	if (b->tail)
		b->tail->next = skb;
	else
		skb_shinfo(b->head)->frag_list = skb;
	b->tail = skb;
	b->head->len += skb->len;
	b->head->data_len += skb->len;
	b->head->truesize += skb->truesize;
	b->segs++;
}

/*
 * Build and send one packet of @qp (engine xmit callback). The tunnel
 * socket is read once: a namespace going away clears snet->sock4/6
 * (softrc_net_close), and the batch keeps the socket it was opened with;
 * BH is off under the QP lock, an RCU read section that keeps the socket
 * allocated until the batch is flushed, before the lock is dropped.
 * Return: 0 (sent, or dropped for want of a route or memory: a
 * retransmission covers it), or -EFAULT: the payload's memory is gone,
 * nothing was sent.
 */
int softrc_net_xmit(struct softrc_qp *qp, const struct softrc_pkt *pkt,
		    const struct softrc_buf *payload)
{
	struct softrc_dev *sdev = qp->sdev;
	struct softrc_net *snet = sdev->dp->snet;
	struct net *net = dev_net(sdev->ndev);
	bool ud = softrc_qp_is_ud(qp);
	const struct softrc_path *p;
	struct dst_cache *cache;
	struct socket *sock;
	struct sk_buff *skb;
	struct dst_entry *dst;

	lockdep_assert_held(&qp->lock);
	/* a UD message goes where its WR's address handle said (at post) */
	p = ud ? &qp->sqs[payload->slot].local.ud : &qp->av;
	cache = ud ? NULL : &qp->dst_cache;
	if (softrc_to_self(p))
		return softrc_local_xmit(qp, p, net, pkt, payload);
	if (ud && softrc_path_is_mcast(p))
		softrc_mcast_loop(qp, p, pkt, payload);
	sock = p->ipv6 ? READ_ONCE(snet->sock6) : READ_ONCE(snet->sock4);
	if (!sock) {
		softrc_dev_count(sdev, SOFTRC_DEVCNT_tx_drop_route);
		return 0;
	}
	dst = p->ipv6 ? softrc_route6(qp, p, net, sock->sk, cache) :
			softrc_route4(qp, p, net, cache);
	if (!dst) {
		softrc_dev_count(sdev, SOFTRC_DEVCNT_tx_drop_route);
		return 0;
	}
	if (softrc_route_local(p, dst)) {
		dst_release(dst);
		return softrc_local_xmit(qp, p, net, pkt, payload);
	}
	skb = softrc_skb_build(qp, p, dst->dev, pkt, payload);
	if (IS_ERR_OR_NULL(skb)) {
		dst_release(dst);
		/* a gap in the IPv4 IDs: the batch so far leaves alone */
		softrc_net_flush(qp);
		return PTR_ERR_OR_ZERO(skb);
	}
	skb->ip_summed = CHECKSUM_NONE;
	softrc_batch_add(qp, skb, dst, sock->sk);
	/*
	 * A batch takes its head's neighbour: datagrams to different hosts
	 * may share a route, so each leaves on its own.
	 */
	if (ud)
		softrc_net_flush(qp);
	return 0;
}

/* ---- sockets and namespaces ------------------------------------------ */

static struct socket *softrc_sock_open(struct net *net, struct softrc_net *snet,
				       bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = snet,
		.encap_type = 1,
		.encap_rcv = softrc_udp_encap_rcv,
	};
	struct udp_port_cfg cfg = {
		.local_udp_port = htons(SOFTRC_UDP_PORT),
	};
	struct socket *sock;
	int err;

	if (ipv6) {
		cfg.family = AF_INET6;
		cfg.ipv6_v6only = 1;
		/* rxe sends zero UDP checksums over IPv6 too */
		cfg.use_udp6_rx_checksums = 0;
	} else {
		cfg.family = AF_INET;
		cfg.local_ip.s_addr = htonl(INADDR_ANY);
	}
	err = udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	/* multicast to this host's members: softrc_mcast_loop() */
	softrc_sock_no_mc_loop(sock->sk, ipv6);
	setup_udp_tunnel_sock(net, sock, &tcfg);
	return sock;
}

/* Unpublish the sockets first: a transmitter reads each pointer once. */
static void softrc_net_close(struct softrc_net *snet)
{
	struct socket *sock4 = snet->sock4, *sock6 = snet->sock6;

	WRITE_ONCE(snet->sock4, NULL);
	WRITE_ONCE(snet->sock6, NULL);
	if (sock4)
		udp_tunnel_sock_release(sock4);
	if (sock6)
		udp_tunnel_sock_release(sock6);
}

/* The sockets of @net, created on first use. */
static struct softrc_net *softrc_net_get(struct net *net)
{
	struct softrc_net **slot = softrc_net_slot(net);
	struct softrc_net *snet = *slot;
	struct socket *sock;

	lockdep_assert_held(&softrc_net_mutex);
	if (snet) {
		snet->users++;
		return snet;
	}
	snet = kzalloc(sizeof(*snet), GFP_KERNEL);
	if (!snet)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&snet->devs);
	snet->net = net;
	sock = softrc_sock_open(net, snet, false);
	if (IS_ERR(sock)) {
		pr_err("cannot bind UDP port %d: %ld\n", SOFTRC_UDP_PORT,
		       PTR_ERR(sock));
		kfree(snet);
		return ERR_CAST(sock);
	}
	snet->sock4 = sock;
	sock = softrc_sock_open(net, snet, true);
	if (IS_ERR(sock))
		pr_info("no IPv6 UDP socket (%ld): IPv4 only\n", PTR_ERR(sock));
	else
		snet->sock6 = sock;
	snet->users = 1;
	*slot = snet;
	return snet;
}

static void softrc_net_put(struct softrc_net *snet)
{
	lockdep_assert_held(&softrc_net_mutex);
	if (--snet->users)
		return;
	if (snet->net) {
		*softrc_net_slot(snet->net) = NULL;
		softrc_net_close(snet);
	}
	kfree_rcu(snet, rcu);
}

/**
 * softrc_net_dev_add() - set up the data path of a device before it is
 * registered: QPN table, counters, and its namespace's UDP sockets
 * @sdev:	the device; sdev->ndev is set
 *
 * Return: 0, -ENOMEM, or the socket error (port 4791 taken).
 */
int softrc_net_dev_add(struct softrc_dev *sdev)
{
	struct softrc_net *snet;
	struct softrc_dp *dp;

	dp = kzalloc(sizeof(*dp), GFP_KERNEL);
	if (!dp)
		return -ENOMEM;
	dp->sdev = sdev;
	xa_init_flags(&dp->qp_xa, XA_FLAGS_ALLOC);
	softrc_stats_dev_init(&dp->stats);
	skb_queue_head_init(&dp->self_q);
	tasklet_setup(&dp->self_task, softrc_self_rcv);
	INIT_LIST_HEAD(&dp->mc_list);
	spin_lock_init(&dp->mc_lock);

	mutex_lock(&softrc_net_mutex);
	snet = softrc_net_get(dev_net(sdev->ndev));
	if (IS_ERR(snet)) {
		mutex_unlock(&softrc_net_mutex);
		softrc_stats_dev_fini(&dp->stats);
		kfree(dp);
		return PTR_ERR(snet);
	}
	dp->snet = snet;
	sdev->dp = dp;
	list_add_tail_rcu(&dp->node, &snet->devs);
	mutex_unlock(&softrc_net_mutex);
	return 0;
}

/* Undo softrc_net_dev_add (every QP is gone); safe to call twice. */
void softrc_net_dev_del(struct softrc_dev *sdev)
{
	struct softrc_dp *dp = sdev->dp;

	if (!dp)
		return;
	mutex_lock(&softrc_net_mutex);
	list_del_rcu(&dp->node);
	softrc_net_put(dp->snet);
	mutex_unlock(&softrc_net_mutex);
	synchronize_rcu();
	/* every QP is gone: nothing queues to self_q any more */
	tasklet_kill(&dp->self_task);
	skb_queue_purge(&dp->self_q);
	WARN_ON(!xa_empty(&dp->qp_xa));
	WARN_ON(!list_empty(&dp->mc_list));
	xa_destroy(&dp->qp_xa);
	softrc_stats_dev_fini(&dp->stats);
	sdev->dp = NULL;
	kfree(dp);
}

/* A namespace goes away: close its sockets; devices keep the struct. */
static void __net_exit softrc_net_ns_exit(struct net *net)
{
	struct softrc_net *snet;

	mutex_lock(&softrc_net_mutex);
	snet = *softrc_net_slot(net);
	if (snet) {
		softrc_net_close(snet);
		snet->net = NULL;
		*softrc_net_slot(net) = NULL;
	}
	mutex_unlock(&softrc_net_mutex);
}

static struct pernet_operations softrc_net_ops = {
	.exit = softrc_net_ns_exit,
	.id = &softrc_net_id,
	.size = sizeof(struct softrc_net *),
};

int softrc_net_init(void)
{
	int err;

	err = softrc_crc_init();
	if (err)
		return err;
	err = register_pernet_subsys(&softrc_net_ops);
	if (err)
		softrc_crc_exit();
	return err;
}

void softrc_net_exit(void)
{
	unregister_pernet_subsys(&softrc_net_ops);
	softrc_crc_exit();
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The receive path of RoCEv2 over UDP 4791: from the tunnel socket's
 * encap_rcv (or the self queue) to the engine of the QP a packet is for.
 *
 * A packet enters once, at softrc_rx_skb(), which builds its struct
 * softrc_rx (the skb, its device, IP family and VLAN, BTH and parsed
 * headers) and hands that down: the length and ICRC checks
 * (icrc_skb.c), the QP demux (the device's QPN xarray, or the multicast
 * fan-out to every attached QP), the QP's state and association checks,
 * and the engine, which hands it back to the placement callbacks
 * (engine_ops.c) as their @rx.
 *
 * Context:
 *  - softrc_rx_encap_rcv: softirq (the UDP socket's encap_rcv), under
 *    RCU; finds the device in its namespace's RCU list and the QP in the
 *    device's QPN xarray (RCU + reference), then runs the engine under the
 *    QP lock, flushes the coalesced ACK and lets the requester transmit
 *    (after a request, only what the engine holds: the user SQ ring is
 *    left to its doorbell, post.c); a request's plain ACK is built and
 *    sent after the lock, once the completions are handed over (tx.c).
 *  - softrc_rx_self_task: tasklet (softirq), the same receive path for the
 *    packets softrc devices of one namespace send to each other (or a
 *    device to itself), which never enter the IP stack (tx.c queues them).
 *
 * Touches: the skb (read only; freed by the entry points), the device's
 * counters, QPN xarray and multicast list (RCU), QPs through qp.h and
 * the engine under their lock.
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/ipv6.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_mad.h>

#include "compat.h"
#include "qp.h"
#include "timers.h"
#include "post.h"
#include "deliver.h"
#include "rx.h"
#include "tx.h"
#include "sock.h"
#include "mcast.h"
#include "icrc_skb.h"
#include "trace.h"

/* The netdev a packet arrived on (a VLAN's or macvlan's lower device). */
static struct net_device *softrc_rx_netdev(struct sk_buff *skb)
{
	return softrc_net_lower(skb->dev);
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

	if (!softrc_pkey_match(pkt->pkey, softrc_eng_pkey(&qp->core)))
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
 * Return: SOFTRC_DEVCNT_NR if @rx may reach the engine, else the
 * counter to drop it with.
 */
static enum softrc_dev_counter softrc_rx_assoc(const struct softrc_qp *qp,
					       const struct softrc_rx *rx)
{
	const struct softrc_path *av = &qp->av;

	lockdep_assert_held(&qp->lock);
	if (av->ipv6 != rx->ipv6)
		return SOFTRC_DEVCNT_rx_drop_addr;
	if (rx->ipv6) {
		const struct ipv6hdr *ip6h = ipv6_hdr(rx->skb);

		if (!ipv6_addr_equal(&ip6h->saddr, &av->daddr.v6) ||
		    !ipv6_addr_equal(&ip6h->daddr, &av->saddr.v6))
			return SOFTRC_DEVCNT_rx_drop_addr;
	} else {
		const struct iphdr *iph = ip_hdr(rx->skb);

		if (iph->saddr != av->daddr.v4 || iph->daddr != av->saddr.v4)
			return SOFTRC_DEVCNT_rx_drop_addr;
	}
	if (!softrc_pkey_match(softrc_bth_pkey(rx->bth),
			       softrc_eng_pkey(&qp->core)))
		return SOFTRC_DEVCNT_rx_drop_pkey;
	return SOFTRC_DEVCNT_NR;
}

/*
 * Run @rx through @qp's engine: rx->status is softrc_parse()'s verdict
 * on rx->pkt. Nothing reaches the engine, not even a malformed packet's
 * NAK, before the QP's state and the packet's association are checked.
 */
static void softrc_rx_qp(struct softrc_qp *qp, struct softrc_rx *rx)
{
	const struct softrc_pkt *pkt = &rx->pkt;
	struct softrc_dev *sdev = qp->sdev;
	enum softrc_dev_counter drop;
	struct softrc_net_ack ack;
	int status = rx->status;
	bool acked = false;

	spin_lock(&qp->lock);
	if (!softrc_qp_rx_ok(qp))
		drop = SOFTRC_DEVCNT_rx_drop_state;
	else if (!softrc_qp_is_ud(qp))
		drop = softrc_rx_assoc(qp, rx);
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
			softrc_eng_rx_invalid(&qp->core, pkt);
			softrc_eng_rx_flush(&qp->core);
			softrc_qp_run_tx(qp);
		}
	} else {
		if (softrc_pkt_has(pkt, SOFTRC_OPF_RECV))
			softrc_qp_rq_refill(qp);
		trace_softrc_pkt_rx(qp, pkt);
		trace_softrc_nak_rx(qp, pkt);
		rx->qp = qp;
		softrc_eng_rx(&qp->core, pkt, rx, softrc_now());
		rx->qp = NULL;
		if (softrc_pkt_has(pkt, SOFTRC_OPF_REQ)) {
			/* a plain ACK leaves after the lock (tx.c) */
			acked = softrc_eng_rx_flush_ack(&qp->core, &ack.pkt);
			softrc_qp_run_tx_answer(qp);
			if (acked) {
				softrc_net_ack_take(qp, &ack);
				trace_softrc_pkt_tx(qp, &ack.pkt);
			}
		} else {
			softrc_eng_rx_flush(&qp->core);
			softrc_qp_run_tx(qp);
		}
	}
	spin_unlock(&qp->lock);
	softrc_qp_drain_comps(qp);
	if (acked)
		softrc_net_ack_send(qp, &ack);
}

/*
 * A UD packet to the multicast QPN: a copy to each QP attached to the
 * group of its destination address (mcast.c), each through its own
 * checks (IBTA Vol 1 §10.5). The walk is bounded by the device's
 * SOFTRC_MAX_MCAST_ATTACH. Caller in RCU (the UDP receive path, the self
 * tasklet), which keeps every attachment and QP found alive.
 * Return: true if at least one QP took it.
 */
static bool softrc_rx_mcast(struct softrc_rx *rx)
{
	int udp = sizeof(struct udphdr);
	struct sk_buff *skb = rx->skb;
	struct softrc_mc_attach *mc;
	union ib_gid mgid;
	bool any = false;

	if (rx->ipv6)
		memcpy(mgid.raw, &ipv6_hdr(skb)->daddr, sizeof(mgid));
	else
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)mgid.raw);
	/* one verdict for all: every member is a UD QP */
	rx->status = softrc_eng_parse_qp(rx->bth, skb_headlen(skb) - udp,
					 skb->len - udp, SOFTRC_PMTU_MAX,
					 SOFTRC_OPCODE_UD, &rx->pkt);
	list_for_each_entry_rcu(mc, &rx->sdev->dp->mc_list, node) {
		if (memcmp(&mc->mgid, &mgid, sizeof(mgid)) ||
		    !refcount_inc_not_zero(&mc->h->ref))
			continue;
		softrc_rx_qp(mc->h->qp, rx);
		softrc_qp_put(mc->h->qp);
		any = true;
	}
	if (!any)
		softrc_dev_count(rx->sdev, SOFTRC_DEVCNT_rx_drop_unknown_qp);
	return any;
}

/*
 * One packet for @sdev, skb->data at the UDP header: the receive path's
 * one entry, where its struct softrc_rx is built.
 * Return: true if the packet was handed to a QP (even if it dropped it).
 */
static bool softrc_rx_skb(struct softrc_dev *sdev, struct sk_buff *skb)
{
	int udp = sizeof(struct udphdr);
	struct softrc_rx rx = {
		.skb = skb,
		.bth_off = udp,
		.sdev = sdev,
		.ipv6 = ip_hdr(skb)->version == 6,
		.vlan = is_vlan_dev(skb->dev) ? vlan_dev_vlan_id(skb->dev) :
		       0xffff,
	};
	const struct softrc_opcode_info *op;
	struct softrc_qp *qp;

	if (skb->len < udp + SOFTRC_BTH_BYTES + SOFTRC_ICRC_BYTES ||
	    !pskb_may_pull(skb, udp + SOFTRC_BTH_BYTES) ||
	    (skb_has_frag_list(skb) && skb_linearize(skb))) {
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_drop_short);
		return false;
	}
	/* the opcode's headers linear, so the parser sees them in one piece */
	rx.bth = (struct softrc_bth *)(skb->data + udp);
	op = softrc_opcode_get(softrc_bth_opcode(rx.bth));
	if (op && skb->len >= udp + op->hdr_len + SOFTRC_ICRC_BYTES &&
	    !pskb_may_pull(skb, udp + op->hdr_len)) {
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_drop_short);
		return false;
	}
	switch (softrc_icrc_rx_check(skb, rx.ipv6)) {
	case SOFTRC_ICRC_BAD:
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_bad_icrc);
		return false;
	case SOFTRC_ICRC_FLUSH_RXE:
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_flush_icrc_rxe);
		break;
	case SOFTRC_ICRC_OK:
		break;
	}
	rx.bth = (struct softrc_bth *)(skb->data + udp);
	if (softrc_bth_dqpn(rx.bth) == IB_MULTICAST_QPN)
		return softrc_rx_mcast(&rx);
	qp = softrc_qp_get(sdev, softrc_bth_dqpn(rx.bth));
	if (!qp) {
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_drop_unknown_qp);
		return false;
	}
	/* a UD receiver takes any size up to 4096: its WQE bounds it */
	rx.status = softrc_eng_parse_qp(rx.bth, skb_headlen(skb) - udp,
					skb->len - udp,
					softrc_qp_is_ud(qp) ? SOFTRC_PMTU_MAX :
					qp->pmtu, softrc_qp_transport(qp), &rx.pkt);
	softrc_rx_qp(qp, &rx);
	softrc_qp_put(qp);
	return !rx.status;
}

/*
 * A packet that came over a loopback netdev was sent by a socket of this
 * host, and never by softrc: packets between softrc devices of one
 * namespace take the self queue (tx.c). Any local user can
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
	sdev = softrc_net_addr_dev(snet, dev_net(skb->dev), ipv6, &daddr);
	if (sdev)
		softrc_dev_count(sdev, SOFTRC_DEVCNT_rx_drop_loopback);
}

/**
 * softrc_rx_encap_rcv() - the tunnel sockets' encap_rcv (sock.c)
 * @sk:		the socket; its user data is the namespace's struct softrc_net
 * @skb:	the packet, skb->data at the UDP header
 *
 * Return: 0, the packet consumed.
 */
int softrc_rx_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct softrc_net *snet = rcu_dereference_sk_user_data(sk);
	bool ipv6 = ip_hdr(skb)->version == 6;
	struct softrc_dev *sdev = NULL;
	struct net_device *ndev = softrc_rx_netdev(skb);

	if (snet && ndev && (ndev->flags & IFF_LOOPBACK))
		softrc_rx_loopback(snet, skb, ipv6);
	else if (snet)
		sdev = softrc_net_dev_of(snet, ndev);
	if (sdev && softrc_rx_skb(sdev, skb))
		consume_skb(skb);
	else
		kfree_skb(skb);
	return 0;
}

/*
 * Packets a device sends to itself (client and server on one device) or
 * to another softrc device of its namespace skip the IP stack both ways,
 * as rxe's loopback does: softrc_net_xmit queues them on the receiving
 * device's self_q (tx.c) and this tasklet runs the receive path over
 * them in softirq, after the sender has dropped its QP lock (sender and
 * receiver may be one QP, or two QPs sending to each other), at most
 * SOFTRC_SELF_BUDGET per run.
 */
#define SOFTRC_SELF_BUDGET	64

/**
 * softrc_rx_self_task() - the self queue's tasklet (softrc_dp.self_task)
 * @t:		&softrc_dp.self_task
 */
void softrc_rx_self_task(struct tasklet_struct *t)
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

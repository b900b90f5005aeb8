// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The transmit path of RoCEv2 over UDP 4791: the packets the engine
 * builds (ops->xmit, engine_ops.c) become skbs with IP, UDP and RoCE headers,
 * are routed by the path's source GID (its netdev: a VLAN's, a
 * macvlan's) and leave in per-QP GSO batches, or, to a local address,
 * through the self queue of the softrc device owning it.
 *
 * Context: softrc_net_xmit and softrc_net_flush run with the QP lock held
 * (engine callbacks, and the end of every engine call), in process
 * context with BH off or in softirq; never sleep. softrc_net_xmit builds
 * IP + UDP + RoCE headers in the skb's head (the payload copied after
 * them or attached as page fragments), has the ICRC computed over the
 * final IP header (the IPv4 ID is not masked by it, icrc_skb.c) and adds
 * the packet to the QP's transmit batch; softrc_net_flush hands the
 * batch to ip_local_out / ip6_local_out, which resolve the neighbour and
 * queue it (see "Transmit batches" below). A packet to a local address
 * (the sending device's own, or another softrc device's of this
 * namespace) goes to the self queue of the device owning it instead,
 * never through `lo`: whatever arrives over a loopback netdev came from
 * some local socket, and is dropped (rx.c).
 *
 * Touches: under the QP lock, the QP's path, route cache, IPv4 ID and
 * batch (qp.h), its send shadows through engine_ops.c; the CPU's page
 * fragment caches (BH off); the namespace's tunnel sockets
 * (read once each, sock.c), and, under RCU, another device's self queue
 * and the device's multicast list.
 */
#include <linux/highmem.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/netdevice.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/udp.h>

#include "compat.h"
#include "qp.h"
#include "post.h"
#include "tx.h"
#include "sock.h"
#include "mcast.h"
#include "engine_ops.h"
#include "icrc_skb.h"

/*
 * The self queue of a device is bounded; a packet beyond it is dropped
 * and counted like a full device queue, and the requester's retry
 * recovers it.
 */
#define SOFTRC_SELF_QLEN	4096

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
 * @to's data path alive (softrc_net_dev_del, sock.c, waits for it).
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

static void softrc_push_ip4(const struct softrc_path *p, struct sk_buff *skb,
			    u32 l4len, u16 *ip_id)
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
	iph->id = htons((*ip_id)++);
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
 * The page fragment caches packets are built from, per CPU: for requests
 * and for responses (ACKs, READ responses) apart, each with a cache of
 * heads (sizes in whole cache lines, so every head stays aligned) and
 * one of pad + ICRC trailers (8 bytes each). Used with BH off only
 * (under qp->lock, or in the receive softirq), which makes a CPU's caches
 * its own. A cache starts its page over, as it is, once every fragment
 * carved from it has been freed, so a packet costs neither a slab
 * allocation nor the zeroing init_on_alloc does of every new object,
 * which was most of the cost of building a small packet. A page that
 * runs out while one of its packets is still alive is replaced by a new,
 * zeroed one: hence requests and responses apart, since a responder
 * builds its response while the request it answers is alive (and a
 * requester its next request while the response is), which would pin
 * one shared page every time. They are the CPU's, not the QP's: a page
 * of its own made each QP's first packet pay for zeroing 32 KiB, a fifth
 * of the cost of a message when 256 QPs send 20 each
 * (Documentation/performance.rst).
 */
struct softrc_tx_frags {
	struct page_frag_cache head[2];
	struct page_frag_cache trailer[2];
};

static DEFINE_PER_CPU(struct softrc_tx_frags, softrc_tx_frags);

/* Module exit: give back the pages the caches hold (packets hold theirs). */
void softrc_tx_exit(void)
{
	struct softrc_tx_frags *f;
	int cpu, i;

	for_each_possible_cpu(cpu) {
		f = per_cpu_ptr(&softrc_tx_frags, cpu);
		for (i = 0; i < 2; i++) {
			softrc_page_frag_cache_drain(&f->head[i]);
			softrc_page_frag_cache_drain(&f->trailer[i]);
		}
	}
}

/* 0 for a request, 1 for a response (the caches above) */
static unsigned int softrc_frag_role(const struct softrc_pkt *pkt)
{
	return !softrc_pkt_has(pkt, SOFTRC_OPF_REQ);
}

/*
 * An skb with @size bytes of head, from the CPU's head cache for @role
 * where it fits in a page. What a packet sends is all written by its
 * builder; the rest of a reused head is never sent.
 */
static struct sk_buff *softrc_skb_alloc(u32 size, unsigned int role)
{
	u32 len = SKB_DATA_ALIGN(size) +
		  SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data;

	if (len > PAGE_SIZE)
		return alloc_skb(size, GFP_ATOMIC);
	data = page_frag_alloc(this_cpu_ptr(&softrc_tx_frags.head[role]), len,
			       GFP_ATOMIC);
	if (!data)
		return NULL;
	skb = build_skb(data, len);
	if (!skb)
		skb_free_frag(data);
	return skb;
}

/*
 * One skb with IP, UDP and RoCE headers in its head (from @role's cache)
 * and room for @room more bytes. The lengths in the IP and UDP headers
 * already count the payload, pad and ICRC, however they are added later.
 * An IPv4 packet takes its ID from *@ip_id (the QP's sequence).
 */
static struct sk_buff *softrc_skb_hdrs(const struct softrc_path *p,
				       struct net_device *odev,
				       const struct softrc_pkt *pkt, u32 room,
				       unsigned int role, u16 *ip_id)
{
	u32 l3 = p->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	u32 head = LL_RESERVED_SPACE(odev) + l3 + sizeof(struct udphdr);
	u32 plen = pkt->payload_len;
	struct sk_buff *skb;
	u32 l4len;

	skb = softrc_skb_alloc(head + SOFTRC_HDRS_MAX + room, role);
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	l4len = softrc_eng_build_hdrs(pkt, skb->data);
	skb_put(skb, l4len);
	l4len += sizeof(struct udphdr) + plen + softrc_padcnt(plen) +
		 SOFTRC_ICRC_BYTES;
	softrc_push_udp(p, skb, l4len);
	if (p->ipv6)
		softrc_push_ip6(p, skb, l4len);
	else
		softrc_push_ip4(p, skb, l4len, ip_id);
	return skb;
}

/* Payload copied into the head: small packets, kernel memory, fallback. */
static struct sk_buff *softrc_skb_copy(struct softrc_qp *qp,
				       const struct softrc_path *p,
				       struct net_device *odev,
				       const struct softrc_pkt *pkt,
				       const struct softrc_eng_buf *payload)
{
	u32 plen = pkt->payload_len, pad = softrc_padcnt(plen);
	struct sk_buff *skb;
	u8 *t;

	skb = softrc_skb_hdrs(p, odev, pkt, plen + pad + SOFTRC_ICRC_BYTES,
			      softrc_frag_role(pkt), &qp->tx_ip_id);
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
	skb_put(skb, SOFTRC_ICRC_BYTES);
	softrc_icrc_tx(skb, p->ipv6);
	return skb;
}

/*
 * Payload attached as fragments of the MR's pages (no copy; the WQE's
 * buffer stays valid until the ACK retires it, and a replay rebuilds from
 * the WQE), pad and ICRC in a fragment of the CPU's trailer cache. NULL:
 * use softrc_skb_copy; ERR_PTR(-EFAULT): the payload's memory is gone.
 */
static struct sk_buff *softrc_skb_frags(struct softrc_qp *qp,
					const struct softrc_path *p,
					struct net_device *odev,
					const struct softrc_pkt *pkt,
					const struct softrc_eng_buf *payload)
{
	u32 plen = pkt->payload_len, pad = softrc_padcnt(plen);
	unsigned int role = softrc_frag_role(pkt);
	struct sk_buff *skb;
	u8 *t = NULL;
	int err;

	skb = softrc_skb_hdrs(p, odev, pkt, 0, role, &qp->tx_ip_id);
	if (!skb)
		return NULL;
	err = softrc_glue_frags(qp, payload, skb);
	/* the trailer (pad, at most 3 bytes, and ICRC): its fragment holds
	 * the one page reference it needs
	 */
	if (!err) {
		t = page_frag_alloc(this_cpu_ptr(&softrc_tx_frags.trailer[role]),
				    8, GFP_ATOMIC);
		if (!t)
			err = -ENOMEM;
	}
	if (err) {
		kfree_skb(skb);
		return err == -EFAULT ? ERR_PTR(err) : NULL;
	}
	memset(t, 0, pad);
	skb_fill_page_desc(skb, skb_shinfo(skb)->nr_frags, virt_to_page(t),
			   offset_in_page(t), pad + SOFTRC_ICRC_BYTES);
	skb->len += pad + SOFTRC_ICRC_BYTES;
	skb->data_len += pad + SOFTRC_ICRC_BYTES;
	skb->truesize += pad + SOFTRC_ICRC_BYTES;
	softrc_icrc_tx(skb, p->ipv6);
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
					const struct softrc_eng_buf *payload)
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
 * which drops whatever does arrive over `lo` (softrc_rx_loopback, rx.c).
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
			      const struct softrc_eng_buf *payload)
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

/*
 * The softrc device of this namespace that owns @p's destination address
 * (@sdev itself for a path to its own address), or NULL (counted).
 * Caller in RCU.
 */
static struct softrc_dev *softrc_local_dev(struct softrc_dev *sdev,
					   const struct softrc_path *p,
					   struct net *net)
{
	struct in6_addr daddr = {};
	struct softrc_dev *to;

	if (softrc_to_self(p))
		return sdev;
	if (p->ipv6)
		daddr = p->daddr.v6;
	else
		daddr.s6_addr32[3] = p->daddr.v4;
	to = softrc_net_addr_dev(sdev->dp->snet, net, p->ipv6, &daddr);
	if (!to)
		softrc_dev_count(sdev, SOFTRC_DEVCNT_tx_drop_route);
	return to;
}

/* Build @pkt of @qp and queue it to the local device owning its daddr. */
static int softrc_local_xmit(struct softrc_qp *qp, const struct softrc_path *p,
			     struct net *net, const struct softrc_pkt *pkt,
			     const struct softrc_eng_buf *payload)
{
	struct softrc_dev *sdev = qp->sdev, *to;
	struct sk_buff *skb;
	int err = 0;

	rcu_read_lock();
	to = softrc_local_dev(sdev, p, net);
	if (to) {
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
 * The route of @p (through @cache, as softrc_route4/6) and, in *@sk, the
 * tunnel socket it leaves through, read once; NULL if either is missing
 * (counted).
 */
static struct dst_entry *softrc_route(struct softrc_qp *qp,
				      const struct softrc_path *p,
				      struct net *net, struct dst_cache *cache,
				      struct sock **sk)
{
	struct softrc_net *snet = qp->sdev->dp->snet;
	struct dst_entry *dst = NULL;
	struct socket *sock;

	sock = p->ipv6 ? READ_ONCE(snet->sock6) : READ_ONCE(snet->sock4);
	if (sock)
		dst = p->ipv6 ? softrc_route6(qp, p, net, sock->sk, cache) :
				softrc_route4(qp, p, net, cache);
	if (!dst) {
		softrc_dev_count(qp->sdev, SOFTRC_DEVCNT_tx_drop_route);
		return NULL;
	}
	*sk = sock->sk;
	return dst;
}

/*
 * Build and send one packet of @qp (engine xmit callback). The tunnel
 * socket is read once: a namespace going away clears snet->sock4/6
 * (softrc_net_close, sock.c), and the batch keeps the socket it was
 * opened with; BH is off under the QP lock, an RCU read section that
 * keeps the socket allocated until the batch is flushed, before the lock
 * is dropped.
 * Return: 0 (sent, or dropped for want of a route or memory: a
 * retransmission covers it), or -EFAULT: the payload's memory is gone,
 * nothing was sent.
 */
int softrc_net_xmit(struct softrc_qp *qp, const struct softrc_pkt *pkt,
		    const struct softrc_eng_buf *payload)
{
	struct net *net = dev_net(qp->sdev->ndev);
	bool ud = softrc_qp_is_ud(qp);
	const struct softrc_path *p;
	struct dst_cache *cache;
	struct sk_buff *skb;
	struct dst_entry *dst;
	struct sock *sk;

	lockdep_assert_held(&qp->lock);
	/* a UD message goes where its WR's address handle said (at post) */
	p = ud ? &qp->sqs[payload->slot].local.ud : &qp->av;
	cache = ud ? NULL : &qp->dst_cache;
	if (softrc_to_self(p))
		return softrc_local_xmit(qp, p, net, pkt, payload);
	if (ud && softrc_path_is_mcast(p))
		softrc_mcast_loop(qp, p, pkt, payload);
	dst = softrc_route(qp, p, net, cache, &sk);
	if (!dst)
		return 0;
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
	softrc_batch_add(qp, skb, dst, sk);
	/*
	 * A batch takes its head's neighbour: datagrams to different hosts
	 * may share a route, so each leaves on its own.
	 */
	if (ud)
		softrc_net_flush(qp);
	return 0;
}

/*
 * The receive path's ACK, sent after the QP lock (rx.c). The engine hands
 * a plain coalesced ACK over instead of sending it
 * (softrc_eng_rx_flush_ack()); softrc_net_ack_take() fixes under the lock
 * what it needs of the QP: its path, its IPv4 ID (the next of the QP's
 * sequence: the batch is empty by then, so no batch skips it) and its
 * route, from the QP's route cache, as any packet's. softrc_net_ack_send()
 * builds and sends it once the lock is dropped and the burst's
 * completions are handed over, so neither a post spinning on the lock nor
 * the application waiting for the completion waits for the ACK's skb,
 * headers, ICRC and IP output.
 *
 * The ACK may leave after packets another CPU sends for the QP meanwhile:
 * requests of the other direction are no concern of it, and a later
 * response acknowledges everything before it, so the late ACK is a stale
 * duplicate the requester drops (IBTA 9.7.5.1.1; rxe's and softrc's
 * completers drop ACKs older than their oldest outstanding PSN). Reordering
 * across CPUs is possible anyway: a veth hands each packet to the receive
 * queue of the CPU that sent it.
 */

/**
 * softrc_net_ack_take() - prepare @a, whose @a->pkt the engine filled
 * @qp:		the RC QP, lock held, batch sent (softrc_qp_run_tx*)
 * @a:		the ACK
 */
void softrc_net_ack_take(struct softrc_qp *qp, struct softrc_net_ack *a)
{
	struct net *net = dev_net(qp->sdev->ndev);
	const struct softrc_path *p = &qp->av;
	struct dst_entry *dst;

	lockdep_assert_held(&qp->lock);
	WARN_ON_ONCE(qp->tx_batch.head);
	a->path = *p;
	a->ip_id = qp->tx_ip_id++;
	a->dst = NULL;
	a->sk = NULL;
	a->local = softrc_to_self(p);
	if (a->local)
		return;
	dst = softrc_route(qp, p, net, &qp->dst_cache, &a->sk);
	if (dst && softrc_route_local(p, dst)) {
		dst_release(dst);
		a->local = true;
		return;
	}
	a->dst = dst;
}

/* @a as a packet for @odev: headers and ICRC, no payload. */
static struct sk_buff *softrc_skb_ack(struct softrc_net_ack *a,
				      struct net_device *odev)
{
	struct sk_buff *skb;

	skb = softrc_skb_hdrs(&a->path, odev, &a->pkt, SOFTRC_ICRC_BYTES,
			      softrc_frag_role(&a->pkt), &a->ip_id);
	if (!skb)
		return NULL;
	skb_put(skb, SOFTRC_ICRC_BYTES);
	softrc_icrc_tx(skb, a->path.ipv6);
	return skb;
}

/**
 * softrc_net_ack_send() - build and send @a, taken by softrc_net_ack_take()
 * @qp:		its QP (a reference held), lock not held
 * @a:		the ACK
 *
 * Context: softirq (the receive path), in RCU, which keeps the tunnel
 * socket and a local device found alive.
 */
void softrc_net_ack_send(struct softrc_qp *qp, struct softrc_net_ack *a)
{
	struct softrc_dev *sdev = qp->sdev, *to;
	struct net *net = dev_net(sdev->ndev);
	struct sk_buff *skb;
	int err;

	if (a->local) {
		to = softrc_local_dev(sdev, &a->path, net);
		skb = to ? softrc_skb_ack(a, to->ndev) : NULL;
		if (skb)
			softrc_self_xmit(sdev, to, skb);
		else if (to)
			softrc_dev_count(sdev, SOFTRC_DEVCNT_tx_drop_alloc);
		return;
	}
	if (!a->dst)
		return;		/* no route: counted at take */
	skb = softrc_skb_ack(a, a->dst->dev);
	if (!skb) {
		dst_release(a->dst);
		softrc_dev_count(sdev, SOFTRC_DEVCNT_tx_drop_alloc);
		return;
	}
	skb->ip_summed = CHECKSUM_NONE;
	skb_dst_set(skb, a->dst);
	err = softrc_ip_out(net, a->sk, skb);
	if (unlikely(net_xmit_eval(err)))	/* a macro: @err once */
		softrc_dev_count(sdev, SOFTRC_DEVCNT_tx_drop_xmit);
}

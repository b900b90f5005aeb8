// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The per-namespace side of RoCEv2 over UDP 4791: one tunnel socket pair
 * (IPv4, IPv6) per network namespace, shared and counted by the softrc
 * devices of that namespace, the data-path state of each device
 * (struct softrc_dp: its QPN table, counters and self queue), and the
 * lookups of a namespace's devices by netdev and by local address.
 *
 * Context:
 *  - softrc_net_init/exit, softrc_net_dev_add/del: process context, may
 *    sleep; softrc_net_mutex serializes them with the pernet exit hook.
 *  - softrc_net_dev_of, softrc_net_addr_dev: under RCU, from the receive
 *    path (softirq) and the transmit path (QP lock held).
 *
 * Touches: the UDP tunnel sockets (udp_tunnel), the namespace's device
 * list (RCU readers, writers under softrc_net_mutex), the device's
 * struct softrc_dp. The sockets' encap_rcv and the self queue's tasklet
 * are rx.c's.
 */
#include <linux/if_macvlan.h>
#include <linux/if_vlan.h>
#include <linux/inetdevice.h>
#include <linux/netdevice.h>
#include <net/addrconf.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/udp_tunnel.h>

#include "compat.h"
#include "sock.h"
#include "rx.h"
#include "icrc_skb.h"

static DEFINE_MUTEX(softrc_net_mutex);
static unsigned int softrc_net_id;

static struct softrc_net **softrc_net_slot(struct net *net)
{
	return net_generic(net, softrc_net_id);
}

/**
 * softrc_net_lower() - the netdev under a VLAN or macvlan device
 * @dev:	a netdev, or NULL
 *
 * Return: @dev's lower device if it is a VLAN or macvlan, else @dev.
 */
struct net_device *softrc_net_lower(struct net_device *dev)
{
	if (dev && is_vlan_dev(dev))
		return vlan_dev_real_dev(dev);
	if (dev && netif_is_macvlan(dev))
		return macvlan_dev_real_dev(dev);
	return dev;
}

/**
 * softrc_net_dev_of() - the device of @snet on @ndev
 * @snet:	the namespace's sockets
 * @ndev:	a lower netdev, or NULL
 *
 * Caller in RCU.
 * Return: the device, NULL if none (or its netdev is leaving).
 */
struct softrc_dev *softrc_net_dev_of(struct softrc_net *snet,
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

/**
 * softrc_net_addr_dev() - the device owning a local address
 * @snet:	the namespace's sockets
 * @net:	the namespace
 * @ipv6:	@addr is IPv6, else IPv4 in addr->s6_addr32[3]
 * @addr:	the address
 *
 * The device of @snet whose netdev (or a VLAN or macvlan on it) has the
 * local address @addr. Caller in RCU.
 * Return: the device, or NULL.
 */
struct softrc_dev *softrc_net_addr_dev(struct softrc_net *snet,
				       struct net *net, bool ipv6,
				       const struct in6_addr *addr)
{
	struct net_device *ndev;

	if (ipv6)
		ndev = ipv6_dev_find(net, addr, NULL);
	else
		ndev = __ip_dev_find(net, addr->s6_addr32[3], false);
	return softrc_net_dev_of(snet, softrc_net_lower(ndev));
}

static struct socket *softrc_sock_open(struct net *net, struct softrc_net *snet,
				       bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = snet,
		.encap_type = 1,
		.encap_rcv = softrc_rx_encap_rcv,
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
	/* multicast to this host's members: softrc_mcast_loop() (tx.c) */
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
	tasklet_setup(&dp->self_task, softrc_rx_self_task);
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

	err = softrc_icrc_init();
	if (err)
		return err;
	err = register_pernet_subsys(&softrc_net_ops);
	if (err)
		softrc_icrc_exit();
	return err;
}

void softrc_net_exit(void)
{
	unregister_pernet_subsys(&softrc_net_ops);
	softrc_icrc_exit();
}

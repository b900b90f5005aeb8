/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sock.c: the UDP 4791 tunnel sockets of a network namespace, the
 * data-path state of a device (struct softrc_dp, softrc.h) and the
 * lookups of a namespace's devices.
 *
 * Context: softrc_net_init/exit and softrc_net_dev_add/del in process
 * context (module init/exit, device registration); the lookups under
 * RCU, from the receive path (softirq) and the transmit path.
 */
#ifndef SOFTRC_SOCK_H
#define SOFTRC_SOCK_H

#include <linux/list.h>
#include <linux/net.h>
#include <linux/rcupdate.h>

#include "softrc.h"

#define SOFTRC_UDP_PORT		4791

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

int softrc_net_init(void);
void softrc_net_exit(void);
int softrc_net_dev_add(struct softrc_dev *sdev);
void softrc_net_dev_del(struct softrc_dev *sdev);
struct net_device *softrc_net_lower(struct net_device *dev);
struct softrc_dev *softrc_net_dev_of(struct softrc_net *snet,
				     struct net_device *ndev);
struct softrc_dev *softrc_net_addr_dev(struct softrc_net *snet,
				       struct net *net, bool ipv6,
				       const struct in6_addr *addr);

#endif /* SOFTRC_SOCK_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Address vectors and address handles (RoCEv2 over IPv4 and IPv6).
 *
 * A struct softrc_av is the resolved form of a struct rdma_ah_attr: the
 * IP addresses, the destination MAC and the IP header fields, everything
 * the transmit path needs without touching the GID table again. QPs keep
 * one for their primary path (filled by softrc_av_from_attr at
 * modify_qp), AHs one each.
 */
#ifndef SOFTRC_AH_H
#define SOFTRC_AH_H

#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/in6.h>
#include <rdma/ib_verbs.h>

struct softrc_dev;

enum softrc_net_type {
	SOFTRC_NET_IPV4,
	SOFTRC_NET_IPV6,
};

/**
 * struct softrc_av - a resolved RoCEv2 address vector
 * @net_type:	IPv4 (both GIDs IPv4-mapped) or IPv6
 * @saddr:	source IP, from the source GID's attributes
 * @daddr:	destination IP, from the destination GID
 * @dmac:	destination MAC (resolved by the RDMA core)
 * @tclass:	IPv4 TOS / IPv6 traffic class
 * @hop_limit:	IPv4 TTL / IPv6 hop limit
 * @flow_label:	IPv6 flow label (20 bits); also seeds the UDP source port
 * @sgid_index:	the source GID's index, for queries
 * @sl:		service level, for queries
 * @dgid:	the destination GID as given, for queries
 * @ifindex:	the source GID's netdev (the device's netdev, or a VLAN or
 *		macvlan on it): packets leave through it
 */
struct softrc_av {
	enum softrc_net_type net_type;
	union {
		struct in_addr v4;
		struct in6_addr v6;
	} saddr, daddr;
	u8 dmac[ETH_ALEN];
	u8 tclass;
	u8 hop_limit;
	u32 flow_label;
	u8 sgid_index;
	u8 sl;
	union ib_gid dgid;
	int ifindex;
};

/**
 * struct softrc_ah - an address handle
 * @ibah:	the core's AH (core-allocated)
 * @av:		the resolved address vector
 * @ah_num:	the number user space puts in UD WQEs (1..SOFTRC_MAX_AH)
 */
struct softrc_ah {
	struct ib_ah ibah;
	struct softrc_av av;
	u32 ah_num;
};

static inline struct softrc_ah *to_sah(struct ib_ah *ibah)
{
	return container_of(ibah, struct softrc_ah, ibah);
}

int softrc_av_from_attr(struct softrc_dev *sdev, struct softrc_av *av,
			const struct rdma_ah_attr *attr);
int softrc_gid_ifindex(const struct ib_gid_attr *attr);
void softrc_av_to_attr(const struct softrc_av *av, struct rdma_ah_attr *attr);

/* ib_device_ops */
int softrc_create_ah(struct ib_ah *ibah, struct rdma_ah_init_attr *init_attr,
		     struct ib_udata *udata);
int softrc_destroy_ah(struct ib_ah *ibah, u32 flags);
int softrc_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr);

#endif /* SOFTRC_AH_H */

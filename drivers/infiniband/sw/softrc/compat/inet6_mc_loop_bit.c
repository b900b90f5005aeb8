// SPDX-License-Identifier: GPL-2.0
/*
 * HAVE_INET6_MC_LOOP_BIT: an IPv6 socket's multicast loop is the
 * INET_FLAGS_MC6_LOOP bit (inet6_set_bit()/inet6_clear_bit()); before, the
 * ipv6_pinfo bit field mc_loop.
 * Upstream: "ipv6: move np->mc_loop to atomic flags" (v6.7).
 */
#include <net/ipv6.h>

void softrc_probe(struct sock *sk);
void softrc_probe(struct sock *sk)
{
	inet6_clear_bit(MC6_LOOP, sk);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * HAVE_INET_MC_LOOP_BIT: an IPv4 socket's multicast loop is the
 * INET_FLAGS_MC_LOOP bit (inet_set_bit()/inet_clear_bit()); before, the
 * inet_sock bit field mc_loop.
 * Upstream: "inet: move inet->mc_loop to inet->inet_frags" (v6.7).
 */
#include <net/inet_sock.h>

void softrc_probe(struct sock *sk);
void softrc_probe(struct sock *sk)
{
	inet_clear_bit(MC_LOOP, sk);
}

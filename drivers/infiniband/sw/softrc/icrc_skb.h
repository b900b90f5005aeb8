/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * icrc_skb.c: the ICRC of packets in sk_buffs (RX check, TX computation)
 * and the CRC-32 register update the payload goes through.
 *
 * Context: softrc_icrc_init/exit in process context (module load and
 * unload); the rest in any context, never sleeps.
 */
#ifndef SOFTRC_ICRC_SKB_H
#define SOFTRC_ICRC_SKB_H

#include <linux/skbuff.h>
#include <linux/types.h>

/* softrc_icrc_rx_check()'s verdict */
enum softrc_icrc_verdict {
	SOFTRC_ICRC_BAD,
	SOFTRC_ICRC_OK,
	SOFTRC_ICRC_FLUSH_RXE,	/* a FLUSH with Linux rxe's ICRC */
};

int softrc_icrc_init(void);
void softrc_icrc_exit(void);
u32 softrc_net_crc(u32 reg, const void *p, u32 len);
enum softrc_icrc_verdict softrc_icrc_rx_check(struct sk_buff *skb, bool ipv6);
void softrc_icrc_tx(struct sk_buff *skb, bool ipv6);

#endif /* SOFTRC_ICRC_SKB_H */

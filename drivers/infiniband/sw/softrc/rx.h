/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * rx.c: the receive path, from the tunnel socket (or the self queue) to
 * the engine of a QP, and the struct softrc_rx it hands down.
 *
 * Context: softirq (encap_rcv, the self tasklet).
 */
#ifndef SOFTRC_RX_H
#define SOFTRC_RX_H

#include <linux/interrupt.h>
#include <linux/skbuff.h>
#include <net/sock.h>

#include "softrc.h"
#include "core/engine.h"

struct softrc_qp;

/**
 * struct softrc_rx - one received packet on its way down the receive
 * path, built at its entry (softrc_rx_skb) and passed down as an
 * argument; the engine's receive context (the @rx it hands back to
 * ops->place, place_grh and atomic_write)
 * @skb:	the packet, skb->data at the UDP header
 * @bth_off:	offset of the BTH from skb->data
 * @sdev:	the device it arrived for
 * @bth:	its BTH, in the linear part of @skb
 * @pkt:	its parsed headers, valid if @status is 0
 * @status:	softrc_parse()'s verdict on @pkt
 * @ipv6:	it came over IPv6
 * @vlan:	the VLAN ID of the VLAN device it came over, else 0xffff
 * @qp:		the QP whose engine is processing it, NULL outside that
 */
struct softrc_rx {
	struct sk_buff *skb;
	int bth_off;
	struct softrc_dev *sdev;
	struct softrc_bth *bth;
	struct softrc_pkt pkt;
	int status;
	bool ipv6;
	u16 vlan;
	struct softrc_qp *qp;
};

int softrc_rx_encap_rcv(struct sock *sk, struct sk_buff *skb);
void softrc_rx_self_task(struct tasklet_struct *t);

#endif /* SOFTRC_RX_H */

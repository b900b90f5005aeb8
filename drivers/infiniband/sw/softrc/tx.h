/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tx.c: the transmit path, from a packet the engine builds to the IP
 * stack (or the self queue of a local device), in per-QP batches.
 *
 * Context: with the QP lock held (an engine callback, the end of an
 * engine call), process context with BH off or softirq; the receive
 * path's ACK is sent after the lock, in softirq.
 */
#ifndef SOFTRC_TX_H
#define SOFTRC_TX_H

#include "qp.h"

struct softrc_eng_buf;

/**
 * struct softrc_net_ack - an ACK of the receive path, taken from the
 * engine under the QP lock and sent after it (tx.c)
 * @pkt:	its header fields (softrc_eng_rx_flush_ack())
 * @path:	the QP's path when it was taken
 * @dst:	its route, a reference (NULL: none, or @local)
 * @sk:		the tunnel socket it leaves through, with @dst
 * @ip_id:	its IPv4 ID, the next of the QP's sequence
 * @local:	to a softrc device of this namespace, through its self queue
 */
struct softrc_net_ack {
	struct softrc_pkt pkt;
	struct softrc_path path;
	struct dst_entry *dst;
	struct sock *sk;
	u16 ip_id;
	bool local;
};

int softrc_net_xmit(struct softrc_qp *qp, const struct softrc_pkt *pkt,
		    const struct softrc_eng_buf *payload);
void softrc_net_flush(struct softrc_qp *qp);
void softrc_net_ack_take(struct softrc_qp *qp, struct softrc_net_ack *a);
void softrc_net_ack_send(struct softrc_qp *qp, struct softrc_net_ack *a);
void softrc_tx_exit(void);

#endif /* SOFTRC_TX_H */

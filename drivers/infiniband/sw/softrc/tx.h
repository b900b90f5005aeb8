/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * tx.c: the transmit path, from a packet the engine builds to the IP
 * stack (or the self queue of a local device), in per-QP batches.
 *
 * Context: with the QP lock held (an engine callback, the end of an
 * engine call), process context with BH off or softirq.
 */
#ifndef SOFTRC_TX_H
#define SOFTRC_TX_H

struct softrc_qp;
struct softrc_pkt;
struct softrc_eng_buf;

int softrc_net_xmit(struct softrc_qp *qp, const struct softrc_pkt *pkt,
		    const struct softrc_eng_buf *payload);
void softrc_net_flush(struct softrc_qp *qp);
void softrc_tx_exit(void);

#endif /* SOFTRC_TX_H */

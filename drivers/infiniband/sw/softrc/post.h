/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * post.c: the kernel's post_send/post_recv, the user SQ/RQ rings' and
 * the SRQ's ingest, and the TX run under the QP lock.
 *
 * Context: the verbs in process context; the rest with qp->lock held
 * (softrc_qp_tx_task() takes it itself).
 */
#ifndef SOFTRC_POST_H
#define SOFTRC_POST_H

#include <linux/interrupt.h>
#include <rdma/ib_verbs.h>

struct softrc_qp;

/*
 * At most this many user ring entries (SQ pull, RQ flush) or pending
 * completions (drain) per call; the TX tasklet continues with the rest.
 * One ring's worth (up to 16K entries) per call under a BH-off lock took
 * seconds under QEMU TCG: long enough for the soft-lockup detector.
 */
#define SOFTRC_RING_BUDGET	256

/* ib_device_ops */
int softrc_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		     const struct ib_send_wr **bad_wr);
int softrc_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
		     const struct ib_recv_wr **bad_wr);

/* with qp->lock held */
void softrc_qp_rq_refill(struct softrc_qp *qp);
void softrc_qp_flush_user_rq(struct softrc_qp *qp);
void softrc_qp_run_tx(struct softrc_qp *qp);
void softrc_qp_run_tx_answer(struct softrc_qp *qp);
void softrc_qp_resched(struct softrc_qp *qp);

/* the TX tasklet (tasklet_setup() at creation) */
void softrc_qp_tx_task(struct tasklet_struct *t);

#endif /* SOFTRC_POST_H */

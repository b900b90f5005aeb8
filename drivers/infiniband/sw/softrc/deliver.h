/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * deliver.c: completions queued under the QP lock and handed to the CQs
 * after it is dropped, and the QP's affiliated asynchronous events.
 *
 * Context: softrc_qp_drain_comps() without qp->lock, in any context; the
 * rest with qp->lock held.
 */
#ifndef SOFTRC_DELIVER_H
#define SOFTRC_DELIVER_H

#include <linux/types.h>

struct softrc_qp;
struct softrc_pwc;

void softrc_qp_push_wc(struct softrc_qp *qp, const struct softrc_pwc *pwc);
bool softrc_qp_pwc_room(struct softrc_qp *qp);
void softrc_qp_check_drained(struct softrc_qp *qp);
void softrc_qp_drain_comps(struct softrc_qp *qp);

#endif /* SOFTRC_DELIVER_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * timers.c: a QP's retry and RNR timers (soft hrtimers) and the clock
 * the engine is handed.
 *
 * Context: softrc_timers_arm() with qp->lock held; softrc_timers_init()
 * and softrc_timers_stop() in process context (create, destroy);
 * softrc_now() and softrc_now_slack() in any context.
 */
#ifndef SOFTRC_TIMERS_H
#define SOFTRC_TIMERS_H

#include <linux/types.h>

#include "core/engine.h"

struct softrc_qp;

void softrc_timers_init(struct softrc_qp *qp);
void softrc_timers_arm(struct softrc_qp *qp, enum softrc_eng_timer_id id,
		       u64 deadline);
void softrc_timers_stop(struct softrc_qp *qp);
u64 softrc_now(void);
u32 softrc_now_slack(void);

#endif /* SOFTRC_TIMERS_H */

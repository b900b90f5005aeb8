// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-QP retry (local ACK timeout) and RNR timers, at the absolute
 * deadlines the engine asks for through ops->timer.
 *
 * Context: softrc_timers_arm runs inside an engine call (qp->lock held);
 * the expiry handler runs in softirq (HRTIMER_MODE_ABS_SOFT) and takes
 * qp->lock itself; softrc_timers_stop runs in process context at destroy,
 * after qp->dying is set, and waits for a running handler.
 *
 * Touches: the QP's two hrtimers, and the engine through
 * softrc_core_timer. A timer is never armed on a dying QP.
 */
#include <linux/ktime.h>

#include "qp.h"

/* The engine's clock: monotonic nanoseconds. */
u64 softrc_now(void)
{
	return ktime_get_ns();
}

static enum hrtimer_restart softrc_timer_fired(struct hrtimer *t,
					       enum softrc_timer_id id)
{
	struct softrc_qp *qp = container_of(t, struct softrc_qp, timer[id]);

	spin_lock_bh(&qp->lock);
	if (!qp->dying) {
		softrc_core_timer(&qp->core, id, softrc_now());
		softrc_qp_run_tx(qp);
	}
	spin_unlock_bh(&qp->lock);
	softrc_qp_drain_comps(qp);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart softrc_retry_fired(struct hrtimer *t)
{
	return softrc_timer_fired(t, SOFTRC_TIMER_RETRY);
}

static enum hrtimer_restart softrc_rnr_fired(struct hrtimer *t)
{
	return softrc_timer_fired(t, SOFTRC_TIMER_RNR);
}

void softrc_timers_init(struct softrc_qp *qp)
{
	int i;

	for (i = 0; i < SOFTRC_TIMER_NR; i++)
		hrtimer_init(&qp->timer[i], CLOCK_MONOTONIC,
			     HRTIMER_MODE_ABS_SOFT);
	qp->timer[SOFTRC_TIMER_RETRY].function = softrc_retry_fired;
	qp->timer[SOFTRC_TIMER_RNR].function = softrc_rnr_fired;
}

/* Arm timer @id for @deadline (softrc_now() clock), or disarm it if 0. */
void softrc_timers_arm(struct softrc_qp *qp, enum softrc_timer_id id,
		       u64 deadline)
{
	lockdep_assert_held(&qp->lock);
	if (!deadline || qp->dying) {
		/* a handler already running finds no deadline and returns */
		hrtimer_try_to_cancel(&qp->timer[id]);
		return;
	}
	hrtimer_start(&qp->timer[id], ns_to_ktime(deadline),
		      HRTIMER_MODE_ABS_SOFT);
}

/* Destroy: qp->dying is set, so nothing re-arms; wait for handlers. */
void softrc_timers_stop(struct softrc_qp *qp)
{
	int i;

	for (i = 0; i < SOFTRC_TIMER_NR; i++)
		hrtimer_cancel(&qp->timer[i]);
}

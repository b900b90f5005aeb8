// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Per-QP retry (local ACK timeout), RNR and AckReq probe timers, at the
 * absolute deadlines the engine asks for through ops->timer.
 *
 * Context: softrc_timers_arm runs inside an engine call (qp->lock held);
 * the expiry handler runs in softirq (HRTIMER_MODE_ABS_SOFT) and takes
 * qp->lock itself; softrc_timers_stop runs in process context at destroy,
 * after qp->dying is set, and waits for a running handler.
 *
 * Touches: the QP's two hrtimers, and the engine through
 * softrc_eng_timer, which decides whether an expiry is real and reports
 * it through ops->timer_expired (engine_ops.c: softrc_timer_expire). A timer
 * is never armed on a dying QP. Tracepoint here: softrc_timer_arm
 * (trace.h).
 *
 * Cheap on the packet path: the engine moves its retry deadline on every
 * ACK, but an armed timer that would expire no later than the new
 * deadline is left alone, and a disarm leaves it queued too; when it
 * fires, the engine finds its deadline gone or not yet reached and asks
 * again (core/engine.c, softrc_eng_timer). So the hrtimer is touched about
 * once per timeout period, not per packet.
 */
#include <linux/ktime.h>

#include "qp.h"
#include "timers.h"
#include "post.h"
#include "deliver.h"
#include "trace.h"

/*
 * The engine's clock on the packet path: monotonic nanoseconds at tick
 * resolution (no clock hardware read per packet). The expiry handler
 * uses the precise clock, so an early expiry re-arms once and never
 * spins.
 */
u64 softrc_now(void)
{
	return ktime_get_coarse_ns();
}

/*
 * How far softrc_now() may lag the precise clock: the engine adds it to
 * every deadline (attr.clock_slack_ns), so that no retry or RNR timer
 * expires before its IBTA minimum. The coarse clock is advanced once a
 * tick by whole timekeeping intervals, the remainder carried to the next
 * tick, so just before a tick it lags by up to two of them.
 */
u32 softrc_now_slack(void)
{
	return 2 * TICK_NSEC;
}

static enum hrtimer_restart softrc_timer_fired(struct hrtimer *t,
					       enum softrc_eng_timer_id id)
{
	struct softrc_qp *qp = container_of(t, struct softrc_qp, timer[id]);

	spin_lock_bh(&qp->lock);
	if (!qp->dying) {
		/* the engine judges the deadline (and reports a real expiry) */
		softrc_eng_timer(&qp->core, id, ktime_get_ns());
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

static enum hrtimer_restart softrc_ackreq_fired(struct hrtimer *t)
{
	return softrc_timer_fired(t, SOFTRC_TIMER_ACKREQ);
}

void softrc_timers_init(struct softrc_qp *qp)
{
	int i;

	for (i = 0; i < SOFTRC_TIMER_NR; i++)
		hrtimer_init(&qp->timer[i], CLOCK_MONOTONIC,
			     HRTIMER_MODE_ABS_SOFT);
	qp->timer[SOFTRC_TIMER_RETRY].function = softrc_retry_fired;
	qp->timer[SOFTRC_TIMER_RNR].function = softrc_rnr_fired;
	qp->timer[SOFTRC_TIMER_ACKREQ].function = softrc_ackreq_fired;
}

/* Arm timer @id for @deadline (softrc_now() clock), or disarm it if 0. */
void softrc_timers_arm(struct softrc_qp *qp, enum softrc_eng_timer_id id,
		       u64 deadline)
{
	struct hrtimer *t = &qp->timer[id];

	lockdep_assert_held(&qp->lock);
	if (qp->dying) {
		hrtimer_try_to_cancel(t);
		return;
	}
	/* disarm, or a later deadline: let the queued expiry find out */
	if (!deadline || (hrtimer_is_queued(t) &&
			  ktime_to_ns(hrtimer_get_expires(t)) <= deadline))
		return;
	hrtimer_start(t, ns_to_ktime(deadline), HRTIMER_MODE_ABS_SOFT);
	trace_softrc_timer_arm(qp, id, deadline);
}

/* Destroy: qp->dying is set, so nothing re-arms; wait for handlers. */
void softrc_timers_stop(struct softrc_qp *qp)
{
	int i;

	for (i = 0; i < SOFTRC_TIMER_NR; i++)
		hrtimer_cancel(&qp->timer[i]);
}

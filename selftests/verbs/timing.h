/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Test timeouts scaled to the speed of the machine the verbs test
 * programs run on. selftests/vm/lib.sh measures it once per VM boot and
 * exports SOFTRC_TIME_SCALE (an integer >= 1: how many times slower than
 * the reference set-up this guest runs); every deadline that decides
 * pass/fail is multiplied by time_scale(). Unset (a run by hand on a fast
 * machine): 1. Runs in user space.
 */
#ifndef SOFTRC_VERBS_TIMING_H
#define SOFTRC_VERBS_TIMING_H

#include <stdlib.h>

static __attribute__((unused)) double time_scale(void)
{
	static double k;
	const char *e;

	if (!k) {
		e = getenv("SOFTRC_TIME_SCALE");
		k = e ? atof(e) : 1;
		if (k < 1)
			k = 1;
	}
	return k;
}

/* @secs of waiting, on this machine */
static __attribute__((unused)) double tmo(double secs)
{
	return secs * time_scale();
}

/*
 * A QP's local ACK timeout exponent (4.096 us << @exp) for this machine:
 * one more per doubling of time_scale(), at most 31. A slow guest's
 * responder may not ACK within the reference timeout without any loss,
 * and seven such expiries end the QP in RETRY_EXC_ERR.
 */
static __attribute__((unused)) int timeout_exp(int exp)
{
	double k;

	for (k = time_scale(); k > 1 && exp < 31; k /= 2)
		exp++;
	return exp;
}
#endif

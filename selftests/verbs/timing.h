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
#endif

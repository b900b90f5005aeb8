/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * 24-bit PSN (and MSN/SSN) modulo arithmetic with the 2^23 window
 * (IBTA Vol 1 §9.7.2 R-198).
 *
 * Context: none (pure inline helpers, safe from any context).
 *
 * Every comparison is taken on the signed 24-bit difference, so that
 * 0x000005 is "after" 0xffffff. A receiver classifies an arriving PSN
 * against its expected PSN as:
 *   psn == epsn                     expected
 *   psn in [epsn - 2^23, epsn - 1]  duplicate (already seen)
 *   psn in [epsn + 1, epsn + 2^23 - 1]  future (a gap: something lost)
 * The three ranges cover the whole 2^24 space.
 */
#ifndef SOFTRC_CORE_PSN_H
#define SOFTRC_CORE_PSN_H

#include <softrc/wire.h>

#define SOFTRC_PSN_WINDOW	BIT(23)

static inline u32 softrc_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SOFTRC_PSN_MASK;
}

/* Signed distance a - b in the 24-bit ring, in [-2^23, 2^23 - 1]. */
static inline s32 softrc_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline bool softrc_psn_lt(u32 a, u32 b)
{
	return softrc_psn_diff(a, b) < 0;
}

static inline bool softrc_psn_le(u32 a, u32 b)
{
	return softrc_psn_diff(a, b) <= 0;
}

static inline bool softrc_psn_gt(u32 a, u32 b)
{
	return softrc_psn_diff(a, b) > 0;
}

static inline bool softrc_psn_ge(u32 a, u32 b)
{
	return softrc_psn_diff(a, b) >= 0;
}

/* True if first <= psn < first + n (modulo), n < 2^23. */
static inline bool softrc_psn_in(u32 psn, u32 first, u32 n)
{
	return ((psn - first) & SOFTRC_PSN_MASK) < n;
}

enum softrc_psn_class {
	SOFTRC_PSN_EXPECTED,
	SOFTRC_PSN_DUPLICATE,
	SOFTRC_PSN_FUTURE,
};

static inline enum softrc_psn_class softrc_psn_classify(u32 psn, u32 epsn)
{
	s32 d = softrc_psn_diff(psn, epsn);

	if (d == 0)
		return SOFTRC_PSN_EXPECTED;
	return d < 0 ? SOFTRC_PSN_DUPLICATE : SOFTRC_PSN_FUTURE;
}

#endif /* SOFTRC_CORE_PSN_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * KTAP result lines for the verbs test programs: ok() prints "ok N ..."
 * or "not ok N ... # errno E (text)" and returns its condition,
 * ktap_skip() a skipped result, diag() a "# ..." diagnostic line,
 * ktap_done() the plan line; it returns the program's exit status (1 if
 * anything failed). stdout is flushed after every line.
 */
#ifndef SOFTRC_VERBS_KTAP_H
#define SOFTRC_VERBS_KTAP_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static int ktap_ntests, ktap_nfailed;

static void ktap_line(const char *pre, const char *fmt, va_list ap)
{
	printf("%s %d ", pre, ++ktap_ntests);
	vprintf(fmt, ap);
}

static __attribute__((format(printf, 2, 3), unused))
bool ok(bool cond, const char *fmt, ...)
{
	int err = errno;
	va_list ap;

	va_start(ap, fmt);
	ktap_line(cond ? "ok" : "not ok", fmt, ap);
	va_end(ap);
	if (!cond) {
		ktap_nfailed++;
		printf(" # errno %d (%s)", err, strerror(err));
	}
	printf("\n");
	fflush(stdout);
	return cond;
}

static __attribute__((format(printf, 2, 3), unused))
void ktap_skip(const char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktap_line("ok", fmt, ap);
	va_end(ap);
	printf(" # SKIP %s\n", why);
	fflush(stdout);
}

static __attribute__((format(printf, 1, 2), unused))
void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
}

static __attribute__((unused)) int ktap_done(void)
{
	printf("1..%d\n", ktap_ntests);
	return ktap_nfailed ? 1 : 0;
}

#endif /* SOFTRC_VERBS_KTAP_H */

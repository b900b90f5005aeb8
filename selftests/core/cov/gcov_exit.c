// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Coverage builds only: kselftest_harness runs every test in a forked
 * child that leaves through _exit(), which skips the gcov exit handler.
 * The coverage link wraps _exit (-Wl,--wrap=_exit) so the child's
 * counters are written first.
 *
 * Context: host user space, coverage builds only.
 */
void __gcov_dump(void);
void __real__exit(int status) __attribute__((noreturn));
void __wrap__exit(int status) __attribute__((noreturn));

void __wrap__exit(int status)
{
	__gcov_dump();
	__real__exit(status);
}

// SPDX-License-Identifier: GPL-2.0
/*
 * memcpy - what one CPU of this machine copies per second.
 *
 *   memcpy [SECONDS]
 *
 * Copies a 64 KiB block (the size of make bench's large messages) from
 * one place to another in two 64 MiB buffers, block after block, so the
 * copies miss the caches the way a stream of messages does, for about
 * SECONDS (default 1) after a warm-up pass that faults the pages in.
 * Prints, for make bench (tools/bench/guest.sh):
 *
 *   MEMCPY mb_per_s R
 *
 * R in MB/s (10^6 bytes copied per second, as perftest counts MB/s).
 * Under QEMU TCG this is the copy rate the guest can reach, and so a
 * ceiling for any data path that copies each payload byte once.
 * Exit status 0, or 1 with a message on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MEMCPY_BUF	(64UL << 20)
#define MEMCPY_BLOCK	(64UL << 10)

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	unsigned long off, bytes = 0;
	volatile unsigned char sink;
	unsigned char *src, *dst;
	double t0, t;

	if (argc > 2 || !(secs > 0 && secs <= 60)) {
		fprintf(stderr, "usage: memcpy [SECONDS (0-60]]\n");
		return 1;
	}
	src = malloc(MEMCPY_BUF);
	dst = malloc(MEMCPY_BUF);
	if (!src || !dst) {
		fprintf(stderr, "memcpy: out of memory\n");
		return 1;
	}
	memset(src, 0x5a, MEMCPY_BUF);
	memset(dst, 0xa5, MEMCPY_BUF);
	t0 = now();
	do {
		for (off = 0; off < MEMCPY_BUF; off += MEMCPY_BLOCK)
			memcpy(dst + off, src + off, MEMCPY_BLOCK);
		bytes += MEMCPY_BUF;
		t = now();
	} while (t - t0 < secs);
	/* keep the copies from being optimised away */
	sink = dst[bytes % MEMCPY_BUF];
	(void)sink;
	printf("MEMCPY mb_per_s %.1f\n", bytes / (t - t0) / 1e6);
	free(src);
	free(dst);
	return 0;
}

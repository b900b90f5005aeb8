// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Engine throughput on the host: a requester QP streams 64 KiB RDMA
 * WRITEs at 4096 MTU to a responder QP, whose ACKs go straight back; no
 * link, no loss. Two loops:
 *   wire    headers built with softrc_eng_build_hdrs() and parsed again with
 *           softrc_parse() on the way (payload not copied, no ICRC)
 *   copy    as wire, plus the payload memcpy a real receive path does
 * Prints packets/s for each, then the payload CRC's rate: the slice-by-8
 * table loop and the table-free fold (icrc.c) over 4 KiB buffers.
 *
 * --callgrind: one short run of the wire loop (no payload copy, no CRC),
 * for valgrind --tool=callgrind: `make bench` collects once inside
 * bench_loop() (engine + build_hdrs + parse) and once inside the engine
 * entry points only (core/engine.h), and divides by the packet count.
 *
 * Context: host user space only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "internal.h"
#include "parse.h"
#include "icrc.h"

#define QDEPTH		4096
#define MSG		(64u << 10)
#define SQ_DEPTH	64

struct bench_pkt {
	struct softrc_pkt pkt;
	u8 hdr[SOFTRC_HDRS_MAX];
};

struct bench_ep {
	struct softrc_eng_qp qp;
	struct softrc_eng_send_wqe sq[SQ_DEPTH];
	struct softrc_eng_recv_wqe rq[16];
	struct softrc_eng_rd_res res[4];
	struct bench_pkt *q;		/* packets this side sent */
	u32 qhead, qtail;
	u64 done;
};

static struct bench_ep ep[2];
static bool copy_payload;
static u8 *src_buf, *dst_buf, *rx_payload;

static int b_xmit(void *ctx, const struct softrc_pkt *pkt,
		  const struct softrc_eng_buf *pl)
{
	struct bench_ep *e = ctx;
	struct bench_pkt *p = &e->q[e->qtail++ & (QDEPTH - 1)];

	p->pkt = *pkt;
	if (copy_payload && pkt->payload_len)
		memcpy(rx_payload, src_buf + pl->addr, pkt->payload_len);
	return 0;
}

static int b_mr_check(void *ctx, u32 rkey, u64 va, u32 len, u32 access,
		      void **pin)
{
	*pin = dst_buf;
	return va + len > MSG;
}

static void b_key_put(void *ctx, void *pin)
{
}

static int b_place(void *ctx, const struct softrc_eng_buf *dst, void *rx,
		   u32 pkt_off)
{
	if (copy_payload)
		memcpy(dst_buf + (dst->addr & (MSG - 1)), rx_payload, dst->len);
	return 0;
}

static int b_atomic(void *ctx, void *pin, u64 va, bool cas, u64 sa, u64 cmp,
		    u64 *orig)
{
	*orig = 0;
	return 0;
}

static int b_atomic_write(void *ctx, void *pin, u64 va, void *rx, u32 off)
{
	return 0;
}

static int b_flush(void *ctx, void *pin, u8 type)
{
	return 0;
}

static int b_atomic_result(void *ctx, u32 slot, u64 orig)
{
	return 0;
}

static int b_invalidate(void *ctx, u32 rkey)
{
	return 0;
}

static void b_complete(void *ctx, const struct softrc_eng_cqe *cqe)
{
	struct bench_ep *e = ctx;

	e->done++;
}

static void b_timer(void *ctx, enum softrc_eng_timer_id id, u64 deadline)
{
}

static void b_qp_error(void *ctx)
{
	abort();
}

static const struct softrc_eng_ops b_ops = {
	.xmit = b_xmit, .mr_check = b_mr_check, .key_put = b_key_put,
	.place = b_place,
	.atomic = b_atomic, .atomic_result = b_atomic_result,
	.atomic_write = b_atomic_write,
	.flush = b_flush,
	.invalidate = b_invalidate, .complete = b_complete,
	.timer = b_timer, .qp_error = b_qp_error,
};

static void bench_setup(void)
{
	struct softrc_eng_attr a = {
		.pmtu = 4096, .sq_psn = 0xfff000, .rq_psn = 77, .pkey = 0xffff,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
		.max_rd_atomic = 4, .no_credits = true, .max_unacked = 1024,
	};
	int i;

	for (i = 0; i < 2; i++) {
		struct softrc_eng_storage st = {
			.sq = ep[i].sq, .sq_depth = SQ_DEPTH,
			.rq = ep[i].rq, .rq_depth = 16,
			.res = ep[i].res, .nres = 4,
		};

		if (!ep[i].q)
			ep[i].q = calloc(QDEPTH, sizeof(*ep[i].q));
		ep[i].qhead = 0;
		ep[i].qtail = 0;
		ep[i].done = 0;
		a.dqpn = 0x11 + !i;
		if (i) {
			a.sq_psn = 77;
			a.rq_psn = 0xfff000;
		}
		if (softrc_eng_init(&ep[i].qp, &b_ops, &ep[i], &a, &st))
			abort();
	}
}

/* Deliver everything @from sent to its peer, then flush the ACK. */
static void bench_deliver(struct bench_ep *from, struct bench_ep *to, u64 now)
{
	struct softrc_pkt pkt;

	while (from->qhead != from->qtail) {
		struct bench_pkt *p = &from->q[from->qhead++ & (QDEPTH - 1)];
		u32 plen = p->pkt.payload_len;
		u32 hlen = softrc_eng_build_hdrs(&p->pkt, p->hdr);
		u32 len = hlen + plen + softrc_padcnt(plen) + SOFTRC_ICRC_BYTES;

		if (softrc_parse(p->hdr, hlen, len, 4096, &pkt))
			abort();
		softrc_eng_rx(&to->qp, &pkt, p->hdr, now);
	}
	softrc_eng_rx_flush(&to->qp);
}

/* The measured loop: post @msgs WRITEs of 64 KiB and run to completion. */
u64 bench_loop(u64 msgs)
{
	struct softrc_eng_send_wr wr = {
		.opcode = SOFTRC_WR_RDMA_WRITE, .length = MSG,
		.send_flags = SOFTRC_SEND_SIGNALED, .rkey = 1,
	};
	u64 posted = 0, now = 0, pkts = 0;
	struct bench_ep *a = &ep[0], *b = &ep[1];

	while (a->done < msgs) {
		while (posted < msgs &&
		       a->qp.req.tail - a->qp.req.head < SQ_DEPTH) {
			wr.wr_id = posted++;
			if (softrc_eng_post_send(&a->qp, &wr) < 0)
				abort();
		}
		pkts += softrc_eng_tx(&a->qp, now, 256);
		bench_deliver(a, b, now);
		pkts += b->qtail - b->qhead;
		bench_deliver(b, a, now);
		now += 1000;
	}
	return pkts;
}

/* called through a global pointer so it stays a function callgrind can name */
u64 (*bench_loop_fn)(u64 msgs) = bench_loop;

static double bench_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void bench_run(const char *name, u64 msgs)
{
	double t0, t;
	u64 pkts;

	bench_setup();
	t0 = bench_now();
	pkts = bench_loop_fn(msgs);
	t = bench_now() - t0;
	printf("%s %llu MiB, %llu WRITEs: %llu pkts (%llu data), %.3fs: %.2f Mpkt/s, %.2f Gb/s\n",
	       name, (unsigned long long)(msgs * MSG >> 20),
	       (unsigned long long)msgs, (unsigned long long)pkts,
	       (unsigned long long)ep[0].qp.cnt.tx_pkts, t, pkts / t / 1e6,
	       msgs * (double)MSG * 8 / t / 1e9);
}

/* GB/s of @crc over @mib MiB in 4 KiB pieces of src_buf. */
static double bench_crc_rate(u32 (*crc)(u32, const void *, u32), u64 mib)
{
	u64 i, n = mib << 8;
	u32 reg = ~0u;
	double t0, t;

	t0 = bench_now();
	for (i = 0; i < n; i++)
		reg = crc(reg, src_buf + (i % (MSG / 4096)) * 4096, 4096);
	t = bench_now() - t0;
	if (reg == 0x12345678)		/* keep the result alive */
		printf("(unlikely register)\n");
	return n * 4096.0 / t / 1e9;
}

static void bench_crc(u64 mib)
{
	u32 i;

	for (i = 0; i < MSG; i++)
		src_buf[i] = (u8)(i * 131 + 7);
	printf("crc32 %llu MiB in 4 KiB pieces: table %.2f GB/s, fold %.2f GB/s\n",
	       (unsigned long long)mib,
	       bench_crc_rate(softrc_eng_crc32_update, mib),
	       bench_crc_rate(softrc_eng_crc32_fold, mib));
}

int main(int argc, char **argv)
{
	const char *env = getenv("SOFTRC_BENCH_MIB");
	u64 mib = env ? strtoull(env, NULL, 0) : 1024;

	src_buf = calloc(1, MSG);
	dst_buf = calloc(1, MSG);
	rx_payload = calloc(1, 4096);
	if (argc > 1 && !strcmp(argv[1], "--callgrind")) {
		bench_setup();
		printf("packets %llu\n", (unsigned long long)bench_loop_fn(256));
		return 0;
	}
	copy_payload = false;
	bench_run("wire", mib * 1024 / (MSG >> 10));
	copy_payload = true;
	bench_run("copy", mib * 1024 / (MSG >> 10));
	bench_crc(mib);
	return 0;
}

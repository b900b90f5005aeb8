// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for the receive path: ICRC, parser, builder and (when
 * the engine is built in, SOFTRC_FUZZ_QP) the responder and the ACK /
 * response processing of one RC QP.
 *
 * Input: a sequence of records { u8 ctl; u16 len (little-endian); len
 * bytes of UDP payload, BTH through ICRC }. ctl bit 0 frames the packet
 * in IPv6 instead of IPv4 for the ICRC; bits 1..2 pick hdr_avail (all,
 * the opcode's hdr_len, or short); bits 3..5 pick an engine action run
 * before the packet (nothing, tx, retry timer, RNR timer, rx flush, post
 * a receive, post a send, error); bits 6..7 advance the clock.
 *
 * Properties checked (a violation traps): parse never reads past
 * hdr_avail (ASan) and its status is in range; an accepted packet's
 * lengths add up and rebuilding its headers gives the same bytes (MigReq
 * and resv8a cleared); the incremental ICRC equals the contiguous one;
 * every packet the engine transmits parses back OK; every payload the
 * engine places lies inside the packet and inside the target WQE.
 *
 * Built with -DSOFTRC_FUZZ_PCAP2CORPUS instead, this file is a small tool
 * writing the seed corpus from the rxe trace: one file per frame and one
 * with the whole trace.
 *
 * Context: host user space only.
 */
#include <stdio.h>
#include <stdlib.h>
#include "parse.h"
#include "icrc.h"
#include "pcap.h"

#define FUZZ_PMTU	1024
#define FUZZ_QPN	0x11
#define FUZZ_REC_HDR	3
#define FUZZ_MAX_PKT	(SOFTRC_PMTU_MAX + SOFTRC_HDRS_MAX + 8)

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "fuzz_rx: %s:%d: %s\n",		\
				__FILE__, __LINE__, #cond);		\
			__builtin_trap();				\
		}							\
	} while (0)

#ifndef SOFTRC_FUZZ_PCAP2CORPUS

/* ICRC over an IPv4 or IPv6 + UDP framing of the packet, two ways. */
static void fuzz_icrc(const u8 *bth, u32 len, bool ipv6, u32 split)
{
	static u8 l3[40 + 8 + FUZZ_MAX_PKT];
	u32 ip = ipv6 ? 40 : 20, hdr, crc, whole;

	if (len < SOFTRC_BTH_BYTES + SOFTRC_ICRC_BYTES || len > FUZZ_MAX_PKT)
		return;
	memset(l3, 0, ip + 8);
	l3[0] = ipv6 ? 0x60 : 0x45;
	l3[ipv6 ? 6 : 9] = 17;
	l3[ip + 2] = 0x12;
	l3[ip + 3] = 0xb7;
	memcpy(l3 + ip + 8, bth, len);
	len += ip + 8 - SOFTRC_ICRC_BYTES;
	hdr = softrc_eng_icrc_hdr_len(l3, ipv6);
	CHECK(hdr == ip + 8 + SOFTRC_BTH_BYTES);
	whole = softrc_eng_icrc_calc(l3, ipv6, len);
	split = hdr + split % (len - hdr + 1);
	crc = softrc_eng_icrc_begin(l3, ipv6);
	crc = softrc_icrc_update(crc, l3 + hdr, split - hdr);
	crc = softrc_icrc_update(crc, l3 + split, len - split);
	CHECK(softrc_icrc_final(crc) == whole);
	/* the table-free update the module may pick, from any register */
	CHECK(softrc_eng_crc32_fold(whole, l3 + split, len - split) ==
	      softrc_eng_crc32_update(whole, l3 + split, len - split));
	if (split == hdr) {		/* now and then: the trailer path */
		softrc_icrc_put(l3 + len, whole);
		CHECK(softrc_eng_icrc_check(l3, ipv6, len));
	}
}

/* Parse with the hdr_avail @mode asks for, from an exact-size copy. */
static int fuzz_parse(const u8 *bth, u32 len, u32 mode,
		      struct softrc_pkt *pkt)
{
	const struct softrc_opcode_info *op;
	u32 avail = len;
	u8 *copy;
	int ret;

	op = len ? softrc_opcode_get(bth[0]) : NULL;
	if (mode == 1 && op && op->hdr_len < len)
		avail = op->hdr_len;
	else if (mode == 2 && len)
		avail = len - 1 - bth[len - 1] % len;
	copy = malloc(avail ? avail : 1);
	memcpy(copy, bth, avail);
	ret = softrc_parse(copy, avail, len, FUZZ_PMTU, pkt);
	free(copy);
	CHECK(ret >= 0 && ret < SOFTRC_PARSE_NR);
	return ret;
}

/* An accepted packet: lengths add up, headers rebuild byte for byte. */
static void fuzz_accepted(const u8 *bth, u32 len, const struct softrc_pkt *pkt)
{
	u8 hdr[SOFTRC_HDRS_MAX], want[SOFTRC_HDRS_MAX];
	u32 n;

	CHECK(pkt->op && pkt->op == softrc_opcode_get(pkt->opcode));
	CHECK(pkt->payload_off == pkt->op->hdr_len);
	CHECK(len == pkt->payload_off + pkt->payload_len + pkt->padcnt +
	      SOFTRC_ICRC_BYTES);
	CHECK(pkt->payload_len <= FUZZ_PMTU);
	n = softrc_eng_build_hdrs(pkt, hdr);
	CHECK(n == pkt->op->hdr_len);
	memcpy(want, bth, n);
	want[1] &= ~SOFTRC_BTH_MIGREQ;
	want[4] = 0;
	CHECK(!memcmp(hdr, want, n));
}

#ifdef SOFTRC_FUZZ_QP
#include "internal.h"

#define FUZZ_SQ		32
#define FUZZ_RQ		32
#define FUZZ_RES	4
#define FUZZ_RECV_LEN	4096
#define FUZZ_BAD_RKEY	0xff0224
#define FUZZ_MR_LEN	65536

struct fuzz_rx {
	const u8 *bth;
	u32 len;
	const struct softrc_pkt *pkt;
};

struct fuzz_qp {
	struct softrc_eng_qp qp;
	struct softrc_eng_send_wqe sq[FUZZ_SQ];
	struct softrc_eng_recv_wqe rq[FUZZ_RQ];
	struct softrc_eng_rd_res res[FUZZ_RES];
	u32 sq_len[FUZZ_SQ];		/* posted length per send slot */
	u64 now;
	u64 deadline[SOFTRC_TIMER_NR];
	u32 xmits;
	u32 cqes;
	u32 pins;			/* mr_check pins not yet put */
};

static struct fuzz_qp fq;

/* Everything the engine sends must be a packet the parser accepts. */
static int fuzz_xmit(void *ctx, const struct softrc_pkt *pkt,
		     const struct softrc_eng_buf *payload)
{
	static u8 buf[FUZZ_MAX_PKT];
	struct softrc_pkt back;
	u32 n = softrc_eng_build_hdrs(pkt, buf), len;

	CHECK(n);
	CHECK(pkt->payload_len <= FUZZ_PMTU);
	CHECK(payload->kind == SOFTRC_BUF_NONE ? !pkt->payload_len :
	      payload->len == pkt->payload_len);
	len = n + pkt->payload_len + softrc_padcnt(pkt->payload_len) +
	      SOFTRC_ICRC_BYTES;
	memset(buf + n, 0, len - n);
	CHECK(softrc_parse(buf, n, len, FUZZ_PMTU, &back) == SOFTRC_PARSE_OK);
	fq.xmits++;
	return 0;
}

/*
 * One 64 KiB MR: keeps a fuzzed READ from asking for 2 GiB of responses
 * (the responder sends a READ's whole response inside one rx call).
 */
static int fuzz_mr_check(void *ctx, u32 rkey, u64 va, u32 len, u32 access,
			 void **pin)
{
	if (rkey == FUZZ_BAD_RKEY || len > FUZZ_MR_LEN)
		return -1;
	fq.pins++;
	*pin = &fq;
	return 0;
}

static void fuzz_key_put(void *ctx, void *pin)
{
	CHECK(pin == &fq && fq.pins);
	fq.pins--;
}

static int fuzz_place(void *ctx, const struct softrc_eng_buf *dst, void *rx,
		       u32 pkt_off)
{
	const struct fuzz_rx *r = rx;

	CHECK(pkt_off == r->pkt->payload_off);
	CHECK(dst->len <= r->pkt->payload_len);
	if (dst->kind == SOFTRC_BUF_RECV_WQE) {
		CHECK(dst->slot < FUZZ_RQ);
		CHECK(dst->addr + dst->len <= FUZZ_RECV_LEN);
	} else if (dst->kind == SOFTRC_BUF_SEND_WQE) {
		CHECK(dst->slot < FUZZ_SQ);
		CHECK(dst->addr + dst->len <= fq.sq_len[dst->slot]);
	} else {
		CHECK(dst->kind == SOFTRC_BUF_MR && dst->pin == &fq);
	}
	return 0;
}

static int fuzz_atomic(void *ctx, void *pin, u64 va, bool cmp_swap,
		       u64 swap_add, u64 compare, u64 *orig)
{
	CHECK(pin == &fq);
	*orig = 0x1111111111111111ull;
	return 0;
}

static int fuzz_atomic_write(void *ctx, void *pin, u64 va, void *rx,
			     u32 pkt_off)
{
	CHECK(pin == &fq);
	CHECK(!(va & 7));
	return 0;
}

static int fuzz_flush(void *ctx, void *pin, u8 type)
{
	CHECK(pin == &fq);
	CHECK(!(type & ~SOFTRC_FLUSH_TYPES));
	return 0;
}

static int fuzz_atomic_result(void *ctx, u32 slot, u64 orig)
{
	CHECK(slot < FUZZ_SQ);
	return 0;
}

static int fuzz_invalidate(void *ctx, u32 rkey)
{
	return 0;
}

static void fuzz_complete(void *ctx, const struct softrc_eng_cqe *cqe)
{
	fq.cqes++;
}

static void fuzz_timer(void *ctx, enum softrc_eng_timer_id id, u64 deadline)
{
	CHECK(id < SOFTRC_TIMER_NR);
	fq.deadline[id] = deadline;
}

static void fuzz_qp_error(void *ctx)
{
}

static const struct softrc_eng_ops fuzz_ops = {
	.xmit = fuzz_xmit,
	.mr_check = fuzz_mr_check,
	.key_put = fuzz_key_put,
	.place = fuzz_place,
	.atomic = fuzz_atomic,
	.atomic_result = fuzz_atomic_result,
	.atomic_write = fuzz_atomic_write,
	.flush = fuzz_flush,
	.invalidate = fuzz_invalidate,
	.complete = fuzz_complete,
	.timer = fuzz_timer,
	.qp_error = fuzz_qp_error,
};

/* The work requests of rcgen.py (README), in order. */
static const struct softrc_eng_send_wr fuzz_wrs[] = {
	{ .opcode = SOFTRC_WR_SEND, .length = 13 },
	{ .opcode = SOFTRC_WR_SEND, .length = 2501 },
	{ .opcode = SOFTRC_WR_SEND_WITH_IMM, .length = 32 },
	{ .opcode = SOFTRC_WR_SEND_WITH_IMM, .length = 2100 },
	{ .opcode = SOFTRC_WR_RDMA_WRITE, .length = 100, .rkey = 0x224 },
	{ .opcode = SOFTRC_WR_RDMA_WRITE, .length = 3000, .rkey = 0x224 },
	{ .opcode = SOFTRC_WR_RDMA_WRITE_WITH_IMM, .length = 64 },
	{ .opcode = SOFTRC_WR_RDMA_WRITE_WITH_IMM, .length = 2200 },
	{ .opcode = SOFTRC_WR_RDMA_WRITE, .length = 0 },
	{ .opcode = SOFTRC_WR_RDMA_READ, .length = 200 },
	{ .opcode = SOFTRC_WR_RDMA_READ, .length = 3001 },
	{ .opcode = SOFTRC_WR_ATOMIC_CMP_AND_SWP, .length = 8 },
	{ .opcode = SOFTRC_WR_ATOMIC_FETCH_AND_ADD, .length = 8 },
	{ .opcode = SOFTRC_WR_ATOMIC_CMP_AND_SWP, .length = 8 },
	{ .opcode = SOFTRC_WR_SEND_WITH_INV, .length = 24 },
	{ .opcode = SOFTRC_WR_SEND_WITH_INV, .length = 2100 },
	{ .opcode = SOFTRC_WR_SEND, .length = 40 },
	{ .opcode = SOFTRC_WR_RDMA_WRITE, .length = 4000 },
	{ .opcode = SOFTRC_WR_RDMA_WRITE, .length = 16, .rkey = FUZZ_BAD_RKEY },
};

static void fuzz_post_send(u32 i)
{
	struct softrc_eng_send_wr wr = fuzz_wrs[i % ARRAY_SIZE(fuzz_wrs)];
	int slot;

	wr.wr_id = i;
	wr.send_flags = SOFTRC_SEND_SIGNALED;
	wr.remote_addr = 0x6deb000;
	slot = softrc_eng_post_send(&fq.qp, &wr);
	if (slot >= 0) {
		CHECK(slot < FUZZ_SQ);
		fq.sq_len[slot] = wr.length;
	}
}

/*
 * Play both rxe QPs of the trace at once: the requester sends from PSN
 * 0xfffff0 (so the trace's ACKs and READ responses match its WQEs) and
 * the responder expects 0xfffff0 (so the trace's requests are in order).
 */
static void fuzz_qp_setup(void)
{
	struct softrc_eng_attr attr = {
		.pmtu = FUZZ_PMTU, .sq_psn = 0xfffff0, .rq_psn = 0xfffff0,
		.dqpn = FUZZ_QPN, .pkey = SOFTRC_DEFAULT_PKEY, .timeout = 18,
		.retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 28,
		.max_rd_atomic = FUZZ_RES, .no_credits = true,
	};
	struct softrc_eng_storage st = {
		.sq = fq.sq, .sq_depth = FUZZ_SQ, .rq = fq.rq,
		.rq_depth = FUZZ_RQ, .res = fq.res, .nres = FUZZ_RES,
	};
	u32 i;

	memset(&fq, 0, sizeof(fq));
	CHECK(!softrc_eng_init(&fq.qp, &fuzz_ops, &fq, &attr, &st));
	for (i = 0; i < 8; i++)
		CHECK(softrc_eng_post_recv(&fq.qp, 100 + i, FUZZ_RECV_LEN) >= 0);
	for (i = 0; i < ARRAY_SIZE(fuzz_wrs); i++)
		fuzz_post_send(i);
	softrc_eng_tx(&fq.qp, fq.now, 64);
}

static void fuzz_timer_fire(enum softrc_eng_timer_id id)
{
	if (!fq.deadline[id])
		return;
	if (fq.now < fq.deadline[id])
		fq.now = fq.deadline[id];
	softrc_eng_timer(&fq.qp, id, fq.now);
}

static void fuzz_action(u8 ctl, u32 n)
{
	fq.now += (u64)(ctl >> 6) * 50000000ull;	/* 0..150 ms */
	switch ((ctl >> 3) & 7) {
	case 1:
		softrc_eng_tx(&fq.qp, fq.now, 8);
		break;
	case 2:
		fuzz_timer_fire(SOFTRC_TIMER_RETRY);
		break;
	case 3:
		fuzz_timer_fire(SOFTRC_TIMER_RNR);
		break;
	case 4:
		softrc_eng_rx_flush(&fq.qp);
		break;
	case 5:
		softrc_eng_post_recv(&fq.qp, 200 + n, FUZZ_RECV_LEN);
		break;
	case 6:
		fuzz_post_send(n);
		break;
	case 7:
		if (n % 16 == 15)
			softrc_eng_set_error(&fq.qp);
		break;
	}
}

static void fuzz_engine_rx(const u8 *bth, u32 len,
			   const struct softrc_pkt *pkt)
{
	struct fuzz_rx rx = { .bth = bth, .len = len, .pkt = pkt };

	if (pkt->dqpn != FUZZ_QPN)
		return;		/* the glue routes by QPN */
	softrc_eng_rx(&fq.qp, pkt, &rx, fq.now);
}

static void fuzz_engine_end(void)
{
	softrc_eng_rx_flush(&fq.qp);
	softrc_eng_tx(&fq.qp, fq.now, 64);
	softrc_eng_set_error(&fq.qp);
	CHECK(fq.qp.state == SOFTRC_QPS_ERROR);
	/* ERROR (and a reset after it) dropped every pin, each once */
	softrc_eng_release(&fq.qp);
	CHECK(!fq.pins);
}
#else
static void fuzz_qp_setup(void)
{
}

static void fuzz_action(u8 ctl, u32 n)
{
}

static void fuzz_engine_rx(const u8 *bth, u32 len,
			   const struct softrc_pkt *pkt)
{
}

static void fuzz_engine_end(void)
{
}
#endif /* SOFTRC_FUZZ_QP */

int LLVMFuzzerTestOneInput(const u8 *data, size_t size);

int LLVMFuzzerTestOneInput(const u8 *data, size_t size)
{
	struct softrc_pkt pkt;
	u32 n = 0;

	fuzz_qp_setup();
	while (size >= FUZZ_REC_HDR && n < 256) {
		u8 ctl = data[0];
		u32 len = data[1] | (u32)data[2] << 8;
		const u8 *bth = data + FUZZ_REC_HDR;

		size -= FUZZ_REC_HDR;
		if (len > size)
			len = size;
		fuzz_action(ctl, n);
		fuzz_icrc(bth, len, ctl & 1, n * 7 + len);
		if (fuzz_parse(bth, len, (ctl >> 1) & 3, &pkt) == SOFTRC_PARSE_OK) {
			fuzz_accepted(bth, len, &pkt);
			fuzz_engine_rx(bth, len, &pkt);
		}
		data = bth + len;
		size -= len;
		n++;
	}
	fuzz_engine_end();
	return 0;
}

#else /* SOFTRC_FUZZ_PCAP2CORPUS */

static FILE *corpus_open(const char *dir, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f)
		perror(path);
	return f;
}

/* One record: ctl 0 (IPv4, all headers contiguous, no action). */
static void corpus_record(FILE *f, const struct softrc_roce *r, u8 ctl)
{
	u8 hdr[FUZZ_REC_HDR] = { ctl, r->pkt_len & 0xff, r->pkt_len >> 8 };

	fwrite(hdr, 1, sizeof(hdr), f);
	fwrite(r->bth, 1, r->pkt_len, f);
}

int main(int argc, char **argv)
{
	struct softrc_pcap pc;
	struct softrc_pcap_frame fr;
	struct softrc_roce r;
	FILE *all, *one;
	char name[32];
	int n = 0;

	if (argc != 3) {
		fprintf(stderr, "usage: %s rxe-rc.pcap corpus-dir\n", argv[0]);
		return 2;
	}
	if (softrc_pcap_open(&pc, argv[1])) {
		perror(argv[1]);
		return 1;
	}
	all = corpus_open(argv[2], "trace-all");
	if (!all)
		return 1;
	while (softrc_pcap_next(&pc, &fr) == 1) {
		if (softrc_roce_locate(fr.data, fr.caplen, &r))
			continue;
		snprintf(name, sizeof(name), "frame-%02d", ++n);
		one = corpus_open(argv[2], name);
		if (!one)
			return 1;
		corpus_record(one, &r, 0);
		fclose(one);
		/* run tx before each packet of the whole trace */
		corpus_record(all, &r, 1 << 3);
	}
	fclose(all);
	softrc_pcap_close(&pc);
	printf("%d frames -> %s\n", n, argv[2]);
	return n ? 0 : 1;
}
#endif /* SOFTRC_FUZZ_PCAP2CORPUS */

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrc_parse() / softrc_eng_build_hdrs(): round trips for every opcode, one
 * test per reject reason, the accept cases around them, and bounds (the
 * parser never reads past hdr_avail; the builder never past hdr_len).
 *
 * Context: host test program.
 */
#include <stdlib.h>
#include "kselftest_harness.h"
#include "parse.h"

#define PMTU		1024
#define BUF_BYTES	(SOFTRC_PMTU_MAX + SOFTRC_HDRS_MAX + 8)

static u64 rng = 0x9e3779b97f4a7c15ull;

/* xorshift64: deterministic, so a failure reproduces */
static u64 rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static u32 rnd_below(u32 n)
{
	return n ? (u32)(rnd() % n) : 0;
}

static u32 op_flags(u8 opcode)
{
	return softrc_opcode_get(opcode)->flags;
}

/*
 * Lay out a packet: headers from the builder, a counting payload, zero
 * pad, and a dummy ICRC. Returns pkt_len (BTH through ICRC).
 */
static u32 mk(u8 *buf, const struct softrc_pkt *p)
{
	u32 n = softrc_eng_build_hdrs(p, buf), i;
	u32 pad = softrc_padcnt(p->payload_len);

	for (i = 0; i < p->payload_len; i++)
		buf[n + i] = (u8)i;
	memset(buf + n + p->payload_len, 0, pad + SOFTRC_ICRC_BYTES);
	return n + p->payload_len + pad + SOFTRC_ICRC_BYTES;
}

/* A valid packet of @opcode: fields fixed, payload as given. */
static void base_pkt(struct softrc_pkt *p, u8 opcode, u32 payload)
{
	u32 f = op_flags(opcode);

	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->pkey = SOFTRC_DEFAULT_PKEY;
	p->dqpn = 0x11;
	p->psn = 0x123456;
	p->payload_len = payload;
	p->va = 0x1000;
	p->rkey = 0x224;
	if (f & SOFTRC_H_RETH)
		p->dma_len = (f & SOFTRC_OPF_POS_MASK) == SOFTRC_OPF_FIRST ?
			     3 * PMTU : payload;
	if (f & SOFTRC_H_ATMETH)
		p->dma_len = 8;
	if (f & SOFTRC_H_AETH)
		p->syndrome = 0x1f;
}

static u8 pkt_buf[BUF_BYTES];

/* Parse pkt_buf with everything contiguous. */
static int parse_len(u32 len, u32 pmtu, struct softrc_pkt *out)
{
	return softrc_parse(pkt_buf, len, len, pmtu, out);
}

/* Build a valid packet into pkt_buf and return its length. */
static u32 mk_op(u8 opcode, u32 payload)
{
	struct softrc_pkt p;

	base_pkt(&p, opcode, payload);
	return mk(pkt_buf, &p);
}

/* A random valid packet of @opcode for @pmtu. */
static void rand_pkt(struct softrc_pkt *p, u8 opcode, u32 pmtu)
{
	u32 f = op_flags(opcode), pos = f & SOFTRC_OPF_POS_MASK;
	static const u8 types[] = { 0x00, 0x20, 0x60 };

	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	p->se = rnd() & 1;
	p->ackreq = rnd() & 1;
	p->pkey = rnd();
	p->dqpn = rnd() & SOFTRC_QPN_MASK;
	p->psn = rnd() & SOFTRC_PSN_MASK;
	if (f & SOFTRC_OPF_PAYLOAD) {
		if (pos == SOFTRC_OPF_FIRST || pos == SOFTRC_OPF_MIDDLE)
			p->payload_len = pmtu;
		else if (pos == SOFTRC_OPF_LAST)
			p->payload_len = 1 + rnd_below(pmtu);
		else
			p->payload_len = rnd_below(pmtu + 1);
	}
	if (f & (SOFTRC_H_RETH | SOFTRC_H_ATMETH)) {
		p->va = rnd();
		p->rkey = rnd();
	}
	if (f & SOFTRC_H_RETH) {
		p->dma_len = rnd();
		if (pos == SOFTRC_OPF_ONLY && (f & SOFTRC_OPF_WRITE))
			p->dma_len = p->payload_len;
		if (pos == SOFTRC_OPF_FIRST && p->dma_len <= pmtu)
			p->dma_len = pmtu + 1;
	}
	if (f & SOFTRC_OPF_ATOMIC_WRITE) {
		/* 8 bytes, an aligned word (IBTA 1.5 A19.4) */
		p->va &= ~7ull;
		p->payload_len = SOFTRC_ATOMIC_WRITE_BYTES;
		p->dma_len = SOFTRC_ATOMIC_WRITE_BYTES;
	}
	if (f & SOFTRC_H_FETH) {
		/* a defined placement type and level (IBTA 1.5 A19.4.1) */
		p->flush_type = rnd_below(SOFTRC_FLUSH_TYPES + 1);
		p->flush_level = rnd_below(SOFTRC_FLUSH_MR + 1);
	}
	if (f & SOFTRC_H_ATMETH) {
		p->va &= ~7ull;
		p->swap_add = rnd();
		p->compare = rnd();
		p->dma_len = 8;
	}
	if (f & SOFTRC_H_AETH) {
		p->syndrome = types[rnd_below(3)] | (rnd() & 0x1f);
		p->msn = rnd() & SOFTRC_MSN_MASK;
	}
	if (f & SOFTRC_H_ATMACK)
		p->orig = rnd();
	if (f & SOFTRC_H_IMMDT)
		p->imm = rnd();
	if (f & SOFTRC_H_IETH)
		p->inv_rkey = rnd();
	p->padcnt = softrc_padcnt(p->payload_len);
	p->op = softrc_opcode_get(opcode);
	p->payload_off = p->op->hdr_len;
}

static void expect_same(struct __test_metadata *_metadata,
			const struct softrc_pkt *a, const struct softrc_pkt *b)
{
	EXPECT_EQ(a->op, b->op);
	EXPECT_EQ(a->opcode, b->opcode);
	EXPECT_EQ(a->se, b->se);
	EXPECT_EQ(a->ackreq, b->ackreq);
	EXPECT_EQ(a->padcnt, b->padcnt);
	EXPECT_EQ(a->pkey, b->pkey);
	EXPECT_EQ(a->dqpn, b->dqpn);
	EXPECT_EQ(a->psn, b->psn);
	EXPECT_EQ(a->flush_type, b->flush_type);
	EXPECT_EQ(a->flush_level, b->flush_level);
	EXPECT_EQ(a->va, b->va);
	EXPECT_EQ(a->rkey, b->rkey);
	EXPECT_EQ(a->dma_len, b->dma_len);
	EXPECT_EQ(a->swap_add, b->swap_add);
	EXPECT_EQ(a->compare, b->compare);
	EXPECT_EQ(a->syndrome, b->syndrome);
	EXPECT_EQ(a->msn, b->msn);
	EXPECT_EQ(a->orig, b->orig);
	EXPECT_EQ(a->imm, b->imm);
	EXPECT_EQ(a->inv_rkey, b->inv_rkey);
	EXPECT_EQ(a->payload_off, b->payload_off);
	EXPECT_EQ(a->payload_len, b->payload_len);
}

/* build -> parse for every opcode, random fields, every path MTU */
TEST(parse_roundtrip_all_opcodes)
{
	static const u32 pmtus[] = { 256, 512, 1024, 2048, 4096 };
	struct softrc_pkt in, out;
	int code, iter, n = 0;

	for (code = 0; code < SOFTRC_OPCODE_NR; code++) {
		if (!softrc_opcode_get(code))
			continue;
		for (iter = 0; iter < 200; iter++) {
			u32 pmtu = pmtus[iter % ARRAY_SIZE(pmtus)];
			u32 len;

			rand_pkt(&in, code, pmtu);
			len = mk(pkt_buf, &in);
			ASSERT_EQ(SOFTRC_PARSE_OK,
				  softrc_parse(pkt_buf, in.op->hdr_len, len, pmtu,
					       &out))
				TH_LOG("%s iter %d", in.op->name, iter);
			expect_same(_metadata, &in, &out);
			n++;
		}
	}
	EXPECT_EQ(25 * 200, n);
}

/* parse -> build gives back the same header bytes */
TEST(parse_build_bytes_identical)
{
	u8 again[SOFTRC_HDRS_MAX];
	struct softrc_pkt in, out;
	int code, iter;

	for (code = 0; code < SOFTRC_OPCODE_NR; code++) {
		if (!softrc_opcode_get(code))
			continue;
		for (iter = 0; iter < 50; iter++) {
			u32 len, n;

			rand_pkt(&in, code, PMTU);
			len = mk(pkt_buf, &in);
			ASSERT_EQ(SOFTRC_PARSE_OK, parse_len(len, PMTU, &out));
			n = softrc_eng_build_hdrs(&out, again);
			ASSERT_EQ(in.op->hdr_len, n);
			EXPECT_EQ(0, memcmp(pkt_buf, again, n));
		}
	}
}

TEST(build_reserved_zero)
{
	struct softrc_pkt p;
	int code;

	for (code = 0; code < SOFTRC_OPCODE_NR; code++) {
		if (!softrc_opcode_get(code))
			continue;
		rand_pkt(&p, code, PMTU);
		p.se = true;
		p.dqpn = 0xffffff;
		p.psn = 0xffffff;
		p.ackreq = true;
		softrc_eng_build_hdrs(&p, pkt_buf);
		EXPECT_EQ(SOFTRC_BTH_SE, pkt_buf[1] & ~SOFTRC_BTH_PAD_MASK);
		EXPECT_EQ(0, pkt_buf[4]);		/* resv8a */
		EXPECT_EQ(0x80, pkt_buf[8]);		/* AckReq, resv7 */
	}
}

TEST(build_padcnt_from_payload)
{
	static const u8 want[8] = { 0, 3, 2, 1, 0, 3, 2, 1 };
	struct softrc_pkt p;
	u32 len;

	for (len = 0; len < 8; len++) {
		base_pkt(&p, SOFTRC_OP_SEND_ONLY, len);
		p.padcnt = 3 - want[len];	/* ignored */
		softrc_eng_build_hdrs(&p, pkt_buf);
		EXPECT_EQ(want[len], (pkt_buf[1] & SOFTRC_BTH_PAD_MASK) >>
				     SOFTRC_BTH_PAD_SHIFT);
		EXPECT_EQ(want[len], softrc_padcnt(len));
	}
}

TEST(build_bad_opcode_returns_0)
{
	struct softrc_pkt p;

	base_pkt(&p, SOFTRC_OP_SEND_ONLY, 0);
	memset(pkt_buf, 0x5a, 16);
	p.opcode = 0x15;
	EXPECT_EQ(0u, softrc_eng_build_hdrs(&p, pkt_buf));
	p.opcode = 0x44;	/* RD: not spoken */
	EXPECT_EQ(0u, softrc_eng_build_hdrs(&p, pkt_buf));
	EXPECT_EQ(0x5a, pkt_buf[0]);
}

/* The builder writes exactly hdr_len bytes (ASan-checked heap buffer). */
TEST(build_writes_only_hdr_len)
{
	struct softrc_pkt p;
	int code;

	for (code = 0; code < SOFTRC_OPCODE_NR; code++) {
		const struct softrc_opcode_info *op = softrc_opcode_get(code);
		u8 *buf;

		if (!op)
			continue;
		buf = malloc(op->hdr_len);
		ASSERT_NE(NULL, buf);
		rand_pkt(&p, code, PMTU);
		EXPECT_EQ(op->hdr_len, softrc_eng_build_hdrs(&p, buf));
		free(buf);
	}
}

TEST(build_matches_wire_layout)
{
	static const u8 want[] = {
		0x0b, 0x00, 0xff, 0xff, 0x00, 0x00, 0x00, 0x11,
		0x80, 0xff, 0xff, 0xfc,
		0x00, 0x00, 0x00, 0x00, 0x06, 0xde, 0xb0, 0x00,
		0x00, 0x00, 0x02, 0x24, 0x00, 0x00, 0x00, 0x40,
		0x00, 0x00, 0xbe, 0xef,
	};
	struct softrc_pkt p;

	/* frame 19 of the rxe trace */
	base_pkt(&p, SOFTRC_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 64);
	p.psn = 0xfffffc;
	p.ackreq = true;
	p.va = 0x6deb000;
	p.dma_len = 64;
	p.imm = cpu_to_be32(0xbeef);
	ASSERT_EQ(sizeof(want), softrc_eng_build_hdrs(&p, pkt_buf));
	EXPECT_EQ(0, memcmp(want, pkt_buf, sizeof(want)));
}

/* Parse a buffer that is exactly @avail bytes long on the heap. */
static int parse_exact(const u8 *src, u32 avail, u32 pkt_len, u32 pmtu,
		       struct softrc_pkt *out)
{
	u8 *b = malloc(avail ? avail : 1);
	int ret;

	memcpy(b, src, avail);
	ret = softrc_parse(b, avail, pkt_len, pmtu, out);
	free(b);
	return ret;
}

/* Under ASan: every opcode, every hdr_avail from 0 to hdr_len. */
TEST(parse_never_reads_past_hdr_avail)
{
	struct softrc_pkt in, out;
	int code;

	for (code = 0; code < SOFTRC_OPCODE_NR; code++) {
		u32 len, avail;

		if (!softrc_opcode_get(code))
			continue;
		rand_pkt(&in, code, PMTU);
		len = mk(pkt_buf, &in);
		for (avail = 0; avail <= in.op->hdr_len; avail++) {
			int want = avail == in.op->hdr_len ? SOFTRC_PARSE_OK :
				   avail < SOFTRC_BTH_BYTES ? SOFTRC_PARSE_SHORT_BTH :
				   SOFTRC_PARSE_HDR_NOT_CONTIG;

			EXPECT_EQ(want, parse_exact(pkt_buf, avail, len, PMTU, &out));
		}
	}
}

/* Random bytes, random lengths, exact-size buffers: no overread, no UB. */
TEST(parse_random_garbage)
{
	struct softrc_pkt out;
	u8 src[SOFTRC_HDRS_MAX];
	int iter, ok = 0;
	u32 i;

	for (iter = 0; iter < 20000; iter++) {
		u32 avail = rnd_below(sizeof(src) + 1);
		u32 len = rnd_below(2 * PMTU);
		int ret;

		for (i = 0; i < sizeof(src); i++)
			src[i] = rnd();
		src[0] &= 0x1f;			/* mostly RC opcodes */
		src[1] &= 0xf0;			/* TVer 0 */
		src[8] &= 0x80;			/* resv7 0 */
		ret = parse_exact(src, avail, len, PMTU, &out);
		ASSERT_TRUE(ret >= 0 && ret < SOFTRC_PARSE_NR);
		ok += ret == SOFTRC_PARSE_OK;
	}
	EXPECT_GT(ok, 0);
}

TEST(status_names)
{
	int i, j;

	EXPECT_EQ(0, SOFTRC_PARSE_OK);
	EXPECT_STREQ("OK", softrc_eng_parse_status_name(SOFTRC_PARSE_OK));
	EXPECT_STREQ("BAD_OPCODE",
		     softrc_eng_parse_status_name(SOFTRC_PARSE_BAD_OPCODE));
	EXPECT_STREQ("?", softrc_eng_parse_status_name(-1));
	EXPECT_STREQ("?", softrc_eng_parse_status_name(SOFTRC_PARSE_NR));
	EXPECT_STREQ("?", softrc_eng_parse_status_desc(SOFTRC_PARSE_NR));
	for (i = 0; i < SOFTRC_PARSE_NR; i++) {
		ASSERT_NE(NULL, softrc_eng_parse_status_name(i));
		ASSERT_NE(NULL, softrc_eng_parse_status_desc(i));
		for (j = 0; j < i; j++) {
			EXPECT_STRNE(softrc_eng_parse_status_name(i),
				     softrc_eng_parse_status_name(j));
			EXPECT_STRNE(softrc_eng_parse_status_desc(i),
				     softrc_eng_parse_status_desc(j));
		}
	}
}

/* --- one test per reject reason --- */

TEST(reject_short_bth)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_SEND_ONLY, 0);

	EXPECT_EQ(16u, len);
	EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(len, PMTU, &out));
	EXPECT_EQ(SOFTRC_PARSE_SHORT_BTH,
		  softrc_parse(pkt_buf, len, 15, PMTU, &out));
	EXPECT_EQ(SOFTRC_PARSE_SHORT_BTH,
		  softrc_parse(pkt_buf, len, 0, PMTU, &out));
	EXPECT_EQ(SOFTRC_PARSE_SHORT_BTH,
		  softrc_parse(pkt_buf, 11, len, PMTU, &out));
	EXPECT_EQ(SOFTRC_PARSE_SHORT_BTH,
		  softrc_parse(pkt_buf, 0, 0, PMTU, &out));
}

TEST(reject_bad_transport)
{
	static const u8 other[] = { 0x20, 0x24, 0x40, 0x64, 0x81, 0xa0, 0xff };
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_SEND_ONLY, 4);
	size_t i;

	for (i = 0; i < ARRAY_SIZE(other); i++) {
		pkt_buf[0] = other[i];
		EXPECT_EQ(SOFTRC_PARSE_BAD_TRANSPORT, parse_len(len, PMTU, &out));
	}
}

TEST(reject_bad_opcode)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_SEND_ONLY, 4);
	int code;

	pkt_buf[0] = 0x15;
	EXPECT_EQ(SOFTRC_PARSE_BAD_OPCODE, parse_len(len, PMTU, &out));
	for (code = 0x18; code <= 0x1f; code++) {
		if (code == SOFTRC_OP_ATOMIC_WRITE || code == SOFTRC_OP_FLUSH)
			continue;
		pkt_buf[0] = code;
		EXPECT_EQ(SOFTRC_PARSE_BAD_OPCODE, parse_len(len, PMTU, &out));
	}
}

TEST(reject_bad_tver)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_SEND_ONLY, 4);
	int tver;

	for (tver = 1; tver < 16; tver++) {
		pkt_buf[1] = (pkt_buf[1] & ~SOFTRC_BTH_TVER_MASK) | tver;
		EXPECT_EQ(SOFTRC_PARSE_BAD_TVER, parse_len(len, PMTU, &out));
	}
}

TEST(reject_resv7_set)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_SEND_ONLY, 4);
	int bit;

	for (bit = 0; bit < 7; bit++) {
		pkt_buf[8] = 0x80 | (1 << bit);
		EXPECT_EQ(SOFTRC_PARSE_RESV7_SET, parse_len(len, PMTU, &out));
	}
}

TEST(reject_hdr_not_contig)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_COMPARE_SWAP, 0);
	u32 avail;

	for (avail = SOFTRC_BTH_BYTES; avail < 40; avail++)
		EXPECT_EQ(SOFTRC_PARSE_HDR_NOT_CONTIG,
			  softrc_parse(pkt_buf, avail, len, PMTU, &out));
	EXPECT_EQ(SOFTRC_PARSE_OK, softrc_parse(pkt_buf, 40, len, PMTU, &out));
}

TEST(reject_short_hdrs)
{
	struct softrc_pkt out;
	int code;

	for (code = 0; code < SOFTRC_OPCODE_NR; code++) {
		const struct softrc_opcode_info *op = softrc_opcode_get(code);

		if (!op || op->hdr_len == SOFTRC_BTH_BYTES)
			continue;
		mk_op(code, 0);
		/* headers all there, ICRC cut short */
		EXPECT_EQ(SOFTRC_PARSE_SHORT_HDRS,
			  softrc_parse(pkt_buf, op->hdr_len, op->hdr_len + 3,
				       PMTU, &out)) TH_LOG("%s", op->name);
		EXPECT_EQ(SOFTRC_PARSE_SHORT_HDRS,
			  softrc_parse(pkt_buf, op->hdr_len, op->hdr_len,
				       PMTU, &out));
	}
}

TEST(reject_len_unaligned)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_SEND_ONLY, 8), extra;

	EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(len, PMTU, &out));
	for (extra = 1; extra < 4; extra++) {
		EXPECT_EQ(SOFTRC_PARSE_LEN_UNALIGNED,
			  parse_len(len + extra, PMTU, &out));
		EXPECT_EQ(SOFTRC_PARSE_LEN_UNALIGNED,
			  parse_len(len - extra, PMTU, &out));
	}
}

static const u8 no_payload_ops[] = {
	SOFTRC_OP_ACKNOWLEDGE, SOFTRC_OP_ATOMIC_ACKNOWLEDGE,
	SOFTRC_OP_RDMA_READ_REQUEST, SOFTRC_OP_COMPARE_SWAP,
	SOFTRC_OP_FETCH_ADD,
};

TEST(reject_pad_no_payload)
{
	struct softrc_pkt out;
	size_t i;
	int pad;

	for (i = 0; i < ARRAY_SIZE(no_payload_ops); i++) {
		u32 len = mk_op(no_payload_ops[i], 0);

		for (pad = 1; pad < 4; pad++) {
			pkt_buf[1] = pad << SOFTRC_BTH_PAD_SHIFT;
			EXPECT_EQ(SOFTRC_PARSE_PAD_NO_PAYLOAD,
				  parse_len(len, PMTU, &out));
			EXPECT_EQ(SOFTRC_PARSE_PAD_NO_PAYLOAD,
				  parse_len(len + 4, PMTU, &out));
		}
	}
}

TEST(reject_read_req_payload)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_RDMA_READ_REQUEST, 0);

	EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(len, PMTU, &out));
	EXPECT_EQ(0u, out.payload_len);
	EXPECT_EQ(SOFTRC_PARSE_READ_REQ_PAYLOAD, parse_len(len + 4, PMTU, &out));
	EXPECT_EQ(SOFTRC_PARSE_READ_REQ_PAYLOAD,
		  parse_len(len + PMTU, PMTU, &out));
}

/* AtomicETH has no length field: the operand is implied 8 bytes. */
TEST(reject_atomic_payload)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_COMPARE_SWAP, 0);

	EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(len, PMTU, &out));
	EXPECT_EQ(8u, out.dma_len);
	EXPECT_EQ(SOFTRC_PARSE_ATOMIC_PAYLOAD, parse_len(len + 8, PMTU, &out));
	len = mk_op(SOFTRC_OP_FETCH_ADD, 0);
	EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(len, PMTU, &out));
	EXPECT_EQ(8u, out.dma_len);
	EXPECT_EQ(SOFTRC_PARSE_ATOMIC_PAYLOAD, parse_len(len + 4, PMTU, &out));
}

TEST(reject_payload_unexpected)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_ACKNOWLEDGE, 0);

	EXPECT_EQ(SOFTRC_PARSE_PAYLOAD_UNEXPECTED,
		  parse_len(len + 4, PMTU, &out));
	len = mk_op(SOFTRC_OP_ATOMIC_ACKNOWLEDGE, 0);
	EXPECT_EQ(SOFTRC_PARSE_PAYLOAD_UNEXPECTED,
		  parse_len(len + 8, PMTU, &out));
}

TEST(reject_pad_too_big)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_SEND_ONLY, 0);
	int pad;

	for (pad = 1; pad < 4; pad++) {
		pkt_buf[1] = pad << SOFTRC_BTH_PAD_SHIFT;
		EXPECT_EQ(SOFTRC_PARSE_PAD_TOO_BIG, parse_len(len, PMTU, &out));
		/* with 4 bytes between headers and ICRC it is fine */
		EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(len + 4, PMTU, &out));
		EXPECT_EQ(4u - pad, out.payload_len);
	}
}

TEST(reject_payload_gt_pmtu)
{
	static const u8 ops[] = {
		SOFTRC_OP_SEND_ONLY, SOFTRC_OP_SEND_LAST,
		SOFTRC_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE,
		SOFTRC_OP_RDMA_READ_RESPONSE_ONLY,
		SOFTRC_OP_RDMA_READ_RESPONSE_LAST,
		SOFTRC_OP_SEND_ONLY_WITH_INVALIDATE,
	};
	struct softrc_pkt out;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		EXPECT_EQ(SOFTRC_PARSE_OK,
			  parse_len(mk_op(ops[i], PMTU), PMTU, &out));
		EXPECT_EQ(SOFTRC_PARSE_PAYLOAD_GT_PMTU,
			  parse_len(mk_op(ops[i], PMTU + 1), PMTU, &out));
		EXPECT_EQ(SOFTRC_PARSE_PAYLOAD_GT_PMTU,
			  parse_len(mk_op(ops[i], 4096), 256, &out));
	}
	/* WRITE ONLY: RETH length follows the payload, MTU still wins */
	EXPECT_EQ(SOFTRC_PARSE_PAYLOAD_GT_PMTU,
		  parse_len(mk_op(SOFTRC_OP_RDMA_WRITE_ONLY, PMTU + 4), PMTU, &out));
}

TEST(reject_payload_ne_pmtu)
{
	static const u8 ops[] = {
		SOFTRC_OP_SEND_FIRST, SOFTRC_OP_SEND_MIDDLE,
		SOFTRC_OP_RDMA_WRITE_FIRST, SOFTRC_OP_RDMA_WRITE_MIDDLE,
		SOFTRC_OP_RDMA_READ_RESPONSE_FIRST,
		SOFTRC_OP_RDMA_READ_RESPONSE_MIDDLE,
	};
	struct softrc_pkt out;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		EXPECT_EQ(SOFTRC_PARSE_OK,
			  parse_len(mk_op(ops[i], PMTU), PMTU, &out));
		EXPECT_EQ(SOFTRC_PARSE_PAYLOAD_NE_PMTU,
			  parse_len(mk_op(ops[i], PMTU - 1), PMTU, &out));
		EXPECT_EQ(SOFTRC_PARSE_PAYLOAD_NE_PMTU,
			  parse_len(mk_op(ops[i], 0), PMTU, &out));
		EXPECT_EQ(SOFTRC_PARSE_PAYLOAD_NE_PMTU,
			  parse_len(mk_op(ops[i], 256), 512, &out));
	}
}

TEST(reject_last_empty)
{
	static const u8 ops[] = {
		SOFTRC_OP_SEND_LAST, SOFTRC_OP_SEND_LAST_WITH_IMMEDIATE,
		SOFTRC_OP_SEND_LAST_WITH_INVALIDATE, SOFTRC_OP_RDMA_WRITE_LAST,
		SOFTRC_OP_RDMA_WRITE_LAST_WITH_IMMEDIATE,
		SOFTRC_OP_RDMA_READ_RESPONSE_LAST,
	};
	struct softrc_pkt out;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		EXPECT_EQ(SOFTRC_PARSE_LAST_EMPTY,
			  parse_len(mk_op(ops[i], 0), PMTU, &out));
		EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(mk_op(ops[i], 1), PMTU, &out));
	}
}

TEST(reject_atomic_va_unaligned)
{
	struct softrc_pkt p, out;
	int bit;
	u8 op;

	for (op = SOFTRC_OP_COMPARE_SWAP; op <= SOFTRC_OP_FETCH_ADD; op++) {
		for (bit = 0; bit < 3; bit++) {
			base_pkt(&p, op, 0);
			p.va = 0x6df6000 | (1u << bit);
			EXPECT_EQ(SOFTRC_PARSE_ATOMIC_VA_UNALIGNED,
				  parse_len(mk(pkt_buf, &p), PMTU, &out));
		}
		p.va = 0x6df6008;
		EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(mk(pkt_buf, &p), PMTU, &out));
	}
}

TEST(reject_write_only_len)
{
	struct softrc_pkt p, out;
	u8 op;

	for (op = SOFTRC_OP_RDMA_WRITE_ONLY;
	     op <= SOFTRC_OP_RDMA_WRITE_ONLY_WITH_IMMEDIATE; op++) {
		base_pkt(&p, op, 100);
		EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(mk(pkt_buf, &p), PMTU, &out));
		p.dma_len = 101;
		EXPECT_EQ(SOFTRC_PARSE_WRITE_ONLY_LEN,
			  parse_len(mk(pkt_buf, &p), PMTU, &out));
		p.dma_len = 99;
		EXPECT_EQ(SOFTRC_PARSE_WRITE_ONLY_LEN,
			  parse_len(mk(pkt_buf, &p), PMTU, &out));
		p.dma_len = 0;
		EXPECT_EQ(SOFTRC_PARSE_WRITE_ONLY_LEN,
			  parse_len(mk(pkt_buf, &p), PMTU, &out));
	}
}

TEST(reject_write_first_len)
{
	struct softrc_pkt p, out;

	base_pkt(&p, SOFTRC_OP_RDMA_WRITE_FIRST, PMTU);
	p.dma_len = PMTU + 1;
	EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(mk(pkt_buf, &p), PMTU, &out));
	p.dma_len = PMTU;
	EXPECT_EQ(SOFTRC_PARSE_WRITE_FIRST_LEN,
		  parse_len(mk(pkt_buf, &p), PMTU, &out));
	p.dma_len = 0;
	EXPECT_EQ(SOFTRC_PARSE_WRITE_FIRST_LEN,
		  parse_len(mk(pkt_buf, &p), PMTU, &out));
}

TEST(reject_aeth_reserved)
{
	static const u8 ops[] = {
		SOFTRC_OP_ACKNOWLEDGE, SOFTRC_OP_ATOMIC_ACKNOWLEDGE,
		SOFTRC_OP_RDMA_READ_RESPONSE_FIRST,
		SOFTRC_OP_RDMA_READ_RESPONSE_LAST,
		SOFTRC_OP_RDMA_READ_RESPONSE_ONLY,
	};
	struct softrc_pkt p, out;
	size_t i;
	int syn;

	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		for (syn = 0; syn < 256; syn++) {
			u32 type = syn & SOFTRC_AETH_TYPE_MASK;
			bool ok = type == SOFTRC_AETH_ACK ||
				  type == SOFTRC_AETH_RNR_NAK ||
				  type == SOFTRC_AETH_NAK;
			u32 pl = (ops[i] == SOFTRC_OP_RDMA_READ_RESPONSE_FIRST) ?
				 PMTU : (ops[i] >= SOFTRC_OP_ACKNOWLEDGE ? 0 : 8);

			base_pkt(&p, ops[i], pl);
			p.syndrome = syn;
			EXPECT_EQ(ok ? SOFTRC_PARSE_OK : SOFTRC_PARSE_AETH_RESERVED,
				  parse_len(mk(pkt_buf, &p), PMTU, &out))
				TH_LOG("op 0x%x syndrome 0x%02x", ops[i], syn);
		}
	}
}

/* --- accepted variations --- */

TEST(accept_migreq_either_way)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_SEND_ONLY, 13);

	EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(len, PMTU, &out));
	pkt_buf[1] |= SOFTRC_BTH_MIGREQ;
	EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(len, PMTU, &out));
	EXPECT_EQ(13u, out.payload_len);
}

/* resv8a is a variant field (masked in the ICRC): never a reject. */
TEST(accept_resv8a_nonzero)
{
	struct softrc_pkt out;
	u32 len = mk_op(SOFTRC_OP_SEND_ONLY, 4);

	pkt_buf[4] = 0xa5;
	EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(len, PMTU, &out));
	EXPECT_EQ(0x11u, out.dqpn);
}

TEST(accept_zero_length)
{
	struct softrc_pkt p, out;

	/* zero-length RDMA WRITE (frame 25 of the rxe trace) */
	EXPECT_EQ(SOFTRC_PARSE_OK,
		  parse_len(mk_op(SOFTRC_OP_RDMA_WRITE_ONLY, 0), PMTU, &out));
	EXPECT_EQ(0u, out.dma_len);
	EXPECT_EQ(SOFTRC_PARSE_OK,
		  parse_len(mk_op(SOFTRC_OP_SEND_ONLY, 0), PMTU, &out));
	EXPECT_EQ(SOFTRC_PARSE_OK,
		  parse_len(mk_op(SOFTRC_OP_RDMA_READ_RESPONSE_ONLY, 0), PMTU,
			    &out));
	/* zero-length READ request */
	base_pkt(&p, SOFTRC_OP_RDMA_READ_REQUEST, 0);
	p.dma_len = 0;
	EXPECT_EQ(SOFTRC_PARSE_OK, parse_len(mk(pkt_buf, &p), PMTU, &out));
}

/* AckReq, SE and P_Key are QP-level concerns: the parser passes them on. */
TEST(accept_bth_bits_passed_through)
{
	struct softrc_pkt p, out;

	base_pkt(&p, SOFTRC_OP_ACKNOWLEDGE, 0);
	p.ackreq = true;
	p.se = true;
	p.pkey = 0x1234;
	ASSERT_EQ(SOFTRC_PARSE_OK, parse_len(mk(pkt_buf, &p), PMTU, &out));
	EXPECT_TRUE(out.ackreq);
	EXPECT_TRUE(out.se);
	EXPECT_EQ(0x1234, out.pkey);
}

/* After the BTH checks pass, a reject still reports the BTH fields. */
TEST(reject_keeps_bth_fields)
{
	struct softrc_pkt p, out;

	base_pkt(&p, SOFTRC_OP_RDMA_WRITE_ONLY, 100);
	p.dma_len = 7;
	p.psn = 0xabcdef;
	p.dqpn = 0x42;
	p.ackreq = true;
	ASSERT_EQ(SOFTRC_PARSE_WRITE_ONLY_LEN,
		  parse_len(mk(pkt_buf, &p), PMTU, &out));
	EXPECT_EQ(softrc_opcode_get(SOFTRC_OP_RDMA_WRITE_ONLY), out.op);
	EXPECT_EQ(SOFTRC_OP_RDMA_WRITE_ONLY, out.opcode);
	EXPECT_EQ(0xabcdefu, out.psn);
	EXPECT_EQ(0x42u, out.dqpn);
	EXPECT_TRUE(out.ackreq);
	ASSERT_EQ(SOFTRC_PARSE_PAYLOAD_NE_PMTU,
		  parse_len(mk_op(SOFTRC_OP_SEND_FIRST, 8), PMTU, &out));
	EXPECT_EQ(0x123456u, out.psn);
}

TEST(accept_every_pmtu_boundary)
{
	static const u32 pmtus[] = { 256, 512, 1024, 2048, 4096 };
	struct softrc_pkt out;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pmtus); i++) {
		u32 m = pmtus[i];

		EXPECT_EQ(SOFTRC_PARSE_OK,
			  parse_len(mk_op(SOFTRC_OP_SEND_MIDDLE, m), m, &out));
		EXPECT_EQ(SOFTRC_PARSE_OK,
			  parse_len(mk_op(SOFTRC_OP_SEND_ONLY, m), m, &out));
		EXPECT_EQ(SOFTRC_PARSE_PAYLOAD_GT_PMTU,
			  parse_len(mk_op(SOFTRC_OP_SEND_ONLY, m + 1), m, &out));
	}
}

TEST_HARNESS_MAIN

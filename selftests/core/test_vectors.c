// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rxe trace (shared/vectors/rxe-rc.pcap): every frame's ICRC, parse
 * result, header fields and payload pattern against the README's table,
 * and a byte-identical header rebuild.
 *
 * Context: host test program.
 */
#include "kselftest_harness.h"
#include "pcap.h"
#include "parse.h"
#include "icrc.h"

#define VEC_PCAP	SOFTRC_VECTORS "/rxe-rc.pcap"
#define VEC_FRAMES	63
#define VEC_PMTU	1024

struct vec_ext {
	u64 va;
	u32 rkey;
	u32 dma_len;
	u64 swap_add;
	u64 compare;
	u32 syndrome;
	u32 msn;
	u64 orig;
	u32 imm;
	u32 inv_rkey;
};

/*
 * Transcribed from the per-frame table of shared/vectors/README.md:
 * frame, dir, frame len, opcode, PSN, dest QPN, AckReq, SE, pad, payload,
 * ICRC (CRC-32 value), payload base (-1: none; from the steps table) and
 * the PSN of the message's first data packet, then extension headers.
 */
struct vec {
	u32 num, dir, frame_len, opcode, psn, dqpn, ackreq, se, pad, payload;
	u32 icrc;
	int base;
	u32 msg_psn;
	struct vec_ext ext;
};

static const struct vec vecs[VEC_FRAMES] = {
	{ 1, 0, 74, 0x04, 0xfffff0, 0x000011, 1, 0, 3, 13, 0x0b42b5c0, 0x10, 0xfffff0,
	  { 0 } },
	{ 2, 1, 62, 0x11, 0xfffff0, 0x000011, 0, 0, 0, 0, 0x884a3509, -1, 0,
	  { .syndrome = 0x1f, .msn = 1 } },
	{ 3, 0, 1082, 0x00, 0xfffff1, 0x000011, 0, 0, 0, 1024, 0xec5da33c, 0x20, 0xfffff1,
	  { 0 } },
	{ 4, 0, 1082, 0x01, 0xfffff2, 0x000011, 0, 0, 0, 1024, 0xbd12ba49, 0x20, 0xfffff1,
	  { 0 } },
	{ 5, 0, 514, 0x02, 0xfffff3, 0x000011, 1, 0, 3, 453, 0xa6cf8915, 0x20, 0xfffff1,
	  { 0 } },
	{ 6, 1, 62, 0x11, 0xfffff3, 0x000011, 0, 0, 0, 0, 0x1cf0e2e2, -1, 0,
	  { .syndrome = 0x1f, .msn = 2 } },
	{ 7, 0, 94, 0x05, 0xfffff4, 0x000011, 1, 0, 0, 32, 0x81c956d0, 0x30, 0xfffff4,
	  { .imm = 0x11223344 } },
	{ 8, 1, 62, 0x11, 0xfffff4, 0x000011, 0, 0, 0, 0, 0xa76107c3, -1, 0,
	  { .syndrome = 0x1f, .msn = 3 } },
	{ 9, 0, 1082, 0x00, 0xfffff5, 0x000011, 0, 0, 0, 1024, 0x6fe9b958, 0x40, 0xfffff5,
	  { 0 } },
	{ 10, 0, 1082, 0x01, 0xfffff6, 0x000011, 0, 0, 0, 1024, 0x97ee1e85, 0x40, 0xfffff5,
	  { 0 } },
	{ 11, 0, 114, 0x03, 0xfffff7, 0x000011, 1, 0, 0, 52, 0xc14cd131, 0x40, 0xfffff5,
	  { .imm = 0xa1b2c3d4 } },
	{ 12, 1, 62, 0x11, 0xfffff7, 0x000011, 0, 0, 0, 0, 0x424d68ce, -1, 0,
	  { .syndrome = 0x1f, .msn = 4 } },
	{ 13, 0, 174, 0x0a, 0xfffff8, 0x000011, 1, 0, 0, 100, 0x6183cee4, 0x50, 0xfffff8,
	  { .va = 0x6deb000, .rkey = 0x224, .dma_len = 100 } },
	{ 14, 1, 62, 0x11, 0xfffff8, 0x000011, 0, 0, 0, 0, 0x7c221ff1, -1, 0,
	  { .syndrome = 0x1f, .msn = 5 } },
	{ 15, 0, 1098, 0x06, 0xfffff9, 0x000011, 0, 0, 0, 1024, 0xcbf3e029, 0x60, 0xfffff9,
	  { .va = 0x6deb000, .rkey = 0x224, .dma_len = 3000 } },
	{ 16, 0, 1082, 0x07, 0xfffffa, 0x000011, 0, 0, 0, 1024, 0x047f6d90, 0x60, 0xfffff9,
	  { 0 } },
	{ 17, 0, 1010, 0x08, 0xfffffb, 0x000011, 1, 0, 0, 952, 0x3c0f88b0, 0x60, 0xfffff9,
	  { 0 } },
	{ 18, 1, 62, 0x11, 0xfffffb, 0x000011, 0, 0, 0, 0, 0xef8b922a, -1, 0,
	  { .syndrome = 0x1f, .msn = 6 } },
	{ 19, 0, 142, 0x0b, 0xfffffc, 0x000011, 1, 0, 0, 64, 0x12a73f54, 0x70, 0xfffffc,
	  { .va = 0x6deb000, .rkey = 0x224, .dma_len = 64, .imm = 0x0000beef } },
	{ 20, 1, 62, 0x11, 0xfffffc, 0x000011, 0, 0, 0, 0, 0xfdad957f, -1, 0,
	  { .syndrome = 0x1f, .msn = 7 } },
	{ 21, 0, 1098, 0x06, 0xfffffd, 0x000011, 0, 0, 0, 1024, 0x7d438231, 0x80, 0xfffffd,
	  { .va = 0x6deb000, .rkey = 0x224, .dma_len = 2200 } },
	{ 22, 0, 1082, 0x07, 0xfffffe, 0x000011, 0, 0, 0, 1024, 0xe175d00d, 0x80, 0xfffffd,
	  { 0 } },
	{ 23, 0, 214, 0x09, 0xffffff, 0x000011, 1, 0, 0, 152, 0x1f0e4561, 0x80, 0xfffffd,
	  { .imm = 0xcafef00d } },
	{ 24, 1, 62, 0x11, 0xffffff, 0x000011, 0, 0, 0, 0, 0x8fcf5763, -1, 0,
	  { .syndrome = 0x1f, .msn = 8 } },
	{ 25, 0, 74, 0x0a, 0x000000, 0x000011, 1, 0, 0, 0, 0x1f8606f2, -1, 0,
	  { .va = 0x6deb000, .rkey = 0x224, .dma_len = 0 } },
	{ 26, 1, 62, 0x11, 0x000000, 0x000011, 0, 0, 0, 0, 0xc1ef9a54, -1, 0,
	  { .syndrome = 0x1f, .msn = 9 } },
	{ 27, 0, 74, 0x0c, 0x000001, 0x000011, 1, 0, 0, 0, 0xd1decdc3, -1, 0,
	  { .va = 0x6def000, .rkey = 0x224, .dma_len = 200 } },
	{ 28, 1, 262, 0x10, 0x000001, 0x000011, 0, 0, 0, 200, 0xd52c1900, 0xa0, 0x000001,
	  { .syndrome = 0x1f, .msn = 10 } },
	{ 29, 0, 74, 0x0c, 0x000002, 0x000011, 1, 0, 0, 0, 0x58fa9b15, -1, 0,
	  { .va = 0x6def000, .rkey = 0x224, .dma_len = 3001 } },
	{ 30, 1, 1086, 0x0d, 0x000002, 0x000011, 0, 0, 0, 1024, 0x3976444c, 0xb0, 0x000002,
	  { .syndrome = 0x1f, .msn = 11 } },
	{ 31, 1, 1082, 0x0e, 0x000003, 0x000011, 0, 0, 0, 1024, 0xf7e012f0, 0xb0, 0x000002,
	  { 0 } },
	{ 32, 1, 1018, 0x0f, 0x000004, 0x000011, 0, 0, 3, 953, 0xd743fc0a, 0xb0, 0x000002,
	  { .syndrome = 0x1f, .msn = 11 } },
	{ 33, 0, 86, 0x13, 0x000005, 0x000011, 1, 0, 0, 0, 0xeb3a04ea, -1, 0,
	  { .va = 0x6df6000, .rkey = 0x224,
	    .swap_add = 0x2222222222222222ull, .compare = 0x1111111111111111ull, .dma_len = 8 } },
	{ 34, 1, 70, 0x12, 0x000005, 0x000011, 0, 0, 0, 0, 0x354b937b, -1, 0,
	  { .syndrome = 0x1f, .msn = 12, .orig = 0x1111111111111111ull } },
	{ 35, 0, 86, 0x14, 0x000006, 0x000011, 1, 0, 0, 0, 0xa9f7afd7, -1, 0,
	  { .va = 0x6df6000, .rkey = 0x224, .swap_add = 0x5ull, .compare = 0x0ull, .dma_len = 8 } },
	{ 36, 1, 70, 0x12, 0x000006, 0x000011, 0, 0, 0, 0, 0xd09d36f7, -1, 0,
	  { .syndrome = 0x1f, .msn = 13, .orig = 0x2222222222222222ull } },
	{ 37, 0, 86, 0x13, 0x000007, 0x000011, 1, 0, 0, 0, 0xf8974abd, -1, 0,
	  { .va = 0x6df6000, .rkey = 0x224,
	    .swap_add = 0x3333333333333333ull, .compare = 0x1111111111111111ull, .dma_len = 8 } },
	{ 38, 1, 70, 0x12, 0x000007, 0x000011, 0, 0, 0, 0, 0x57ea1fa7, -1, 0,
	  { .syndrome = 0x1f, .msn = 14, .orig = 0x2222222222222227ull } },
	{ 39, 1, 78, 0x04, 0x000200, 0x000011, 1, 0, 0, 20, 0x15b67664, 0xc0, 0x000200,
	  { 0 } },
	{ 40, 0, 62, 0x11, 0x000200, 0x000011, 0, 0, 0, 0, 0x54a7caee, -1, 0,
	  { .syndrome = 0x1f, .msn = 1 } },
	{ 41, 0, 86, 0x17, 0x000008, 0x000011, 1, 0, 0, 24, 0x31eb70dd, 0x18, 0x000008,
	  { .inv_rkey = 0x0800016c } },
	{ 42, 1, 62, 0x11, 0x000008, 0x000011, 0, 0, 0, 0, 0x4e4e0281, -1, 0,
	  { .syndrome = 0x1f, .msn = 15 } },
	{ 43, 0, 1082, 0x00, 0x000009, 0x000011, 0, 0, 0, 1024, 0x1026d3d5, 0x28, 0x000009,
	  { 0 } },
	{ 44, 0, 1082, 0x01, 0x00000a, 0x000011, 0, 0, 0, 1024, 0xc889b1b1, 0x28, 0x000009,
	  { 0 } },
	{ 45, 0, 114, 0x16, 0x00000b, 0x000011, 1, 0, 0, 52, 0x91baf6e1, 0x28, 0x000009,
	  { .inv_rkey = 0x080002d7 } },
	{ 46, 1, 62, 0x11, 0x00000b, 0x000011, 0, 0, 0, 0, 0x9eb48f37, -1, 0,
	  { .syndrome = 0x1f, .msn = 16 } },
	{ 47, 0, 98, 0x04, 0x00000c, 0x000011, 1, 0, 0, 40, 0xe6807d20, 0xd0, 0x00000c,
	  { 0 } },
	{ 48, 1, 62, 0x11, 0x00000c, 0x000011, 0, 0, 0, 0, 0x80db5e4c, -1, 0,
	  { .syndrome = 0x3c, .msn = 16 } },
	{ 49, 0, 98, 0x04, 0x00000c, 0x000011, 1, 0, 0, 40, 0x5cbc5e32, 0xd0, 0x00000c,
	  { 0 } },
	{ 50, 1, 62, 0x11, 0x00000c, 0x000011, 0, 0, 0, 0, 0xce5255e5, -1, 0,
	  { .syndrome = 0x3c, .msn = 16 } },
	{ 51, 0, 98, 0x04, 0x00000c, 0x000011, 1, 0, 0, 40, 0xf042f2a5, 0xd0, 0x00000c,
	  { 0 } },
	{ 52, 1, 62, 0x11, 0x00000c, 0x000011, 0, 0, 0, 0, 0xfe6d57eb, -1, 0,
	  { .syndrome = 0x3c, .msn = 16 } },
	{ 53, 0, 98, 0x04, 0x00000c, 0x000011, 1, 0, 0, 40, 0x9db126bd, 0xd0, 0x00000c,
	  { 0 } },
	{ 54, 1, 62, 0x11, 0x00000c, 0x000011, 0, 0, 0, 0, 0xb1029314, -1, 0,
	  { .syndrome = 0x1f, .msn = 17 } },
	{ 55, 0, 1098, 0x06, 0x00000d, 0x000011, 0, 0, 0, 1024, 0x24870901, 0xe0, 0x00000d,
	  { .va = 0x6deb000, .rkey = 0x224, .dma_len = 4000 } },
	{ 56, 0, 1082, 0x07, 0x00000f, 0x000011, 0, 0, 0, 1024, 0x6f5c616a, 0xe0, 0x00000d,
	  { 0 } },
	{ 57, 1, 62, 0x11, 0x00000e, 0x000011, 0, 0, 0, 0, 0x43e75514, -1, 0,
	  { .syndrome = 0x60, .msn = 17 } },
	{ 58, 0, 1082, 0x07, 0x00000e, 0x000011, 0, 0, 0, 1024, 0xe60dd306, 0xe0, 0x00000d,
	  { 0 } },
	{ 59, 0, 1082, 0x07, 0x00000f, 0x000011, 0, 0, 0, 1024, 0xcd57b237, 0xe0, 0x00000d,
	  { 0 } },
	{ 60, 0, 986, 0x08, 0x000010, 0x000011, 1, 0, 0, 928, 0xbd333bdc, 0xe0, 0x00000d,
	  { 0 } },
	{ 61, 1, 62, 0x11, 0x000010, 0x000011, 0, 0, 0, 0, 0x78eb962e, -1, 0,
	  { .syndrome = 0x1f, .msn = 18 } },
	{ 62, 0, 90, 0x0a, 0x000011, 0x000011, 1, 0, 0, 16, 0x65c09030, 0xf0, 0x000011,
	  { .va = 0x6deb000, .rkey = 0xff0224, .dma_len = 16 } },
	{ 63, 1, 62, 0x11, 0x000011, 0x000011, 0, 0, 0, 0, 0x2a760cd1, -1, 0,
	  { .syndrome = 0x62, .msn = 18 } },
};

static struct softrc_pcap vec_pcap;
static struct softrc_pcap_frame vec_frames[VEC_FRAMES];
static struct softrc_roce vec_roce[VEC_FRAMES];

/* Load all frames; returns the number read (VEC_FRAMES expected). */
static int vec_load(void)
{
	int n = 0;

	if (vec_pcap.data)
		return VEC_FRAMES;
	if (softrc_pcap_open(&vec_pcap, VEC_PCAP))
		return -1;
	while (n < VEC_FRAMES && softrc_pcap_next(&vec_pcap, &vec_frames[n]) == 1) {
		if (softrc_roce_locate(vec_frames[n].data, vec_frames[n].caplen,
				       &vec_roce[n]))
			return -1;
		n++;
	}
	return n;
}

TEST(vectors_pcap_frames)
{
	struct softrc_pcap_frame extra;
	int i;

	ASSERT_EQ(VEC_FRAMES, vec_load());
	EXPECT_EQ(0, softrc_pcap_next(&vec_pcap, &extra));
	for (i = 0; i < VEC_FRAMES; i++) {
		EXPECT_EQ(vecs[i].num, (u32)i + 1);
		EXPECT_EQ(vecs[i].frame_len, vec_frames[i].caplen);
		EXPECT_EQ(vec_frames[i].caplen, vec_frames[i].origlen);
		EXPECT_FALSE(vec_roce[i].ipv6);
		/* 0->1 is 10.0.0.1 -> 10.0.0.2 */
		EXPECT_EQ(vecs[i].dir ? 2 : 1, vec_roce[i].l3[15]);
	}
}

TEST(vectors_icrc_all_frames)
{
	int i;

	ASSERT_EQ(VEC_FRAMES, vec_load());
	for (i = 0; i < VEC_FRAMES; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		u32 len = r->l3_len - SOFTRC_ICRC_BYTES;

		EXPECT_EQ(vecs[i].icrc, softrc_icrc_get(r->l3 + len))
			TH_LOG("frame %d trailer", i + 1);
		EXPECT_EQ(vecs[i].icrc, softrc_icrc_calc(r->l3, false, len))
			TH_LOG("frame %d", i + 1);
		EXPECT_TRUE(softrc_icrc_check(r->l3, false, len));
	}
}

/* Feed each frame in odd-sized pieces: the incremental API agrees. */
TEST(vectors_icrc_incremental)
{
	static const u32 cuts[] = { 1, 3, 7, 8, 13, 64, 1000 };
	int i;

	ASSERT_EQ(VEC_FRAMES, vec_load());
	for (i = 0; i < VEC_FRAMES; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		u32 hlen = softrc_icrc_hdr_len(r->l3, false);
		u32 end = r->l3_len - SOFTRC_ICRC_BYTES;
		u32 crc = softrc_icrc_begin(r->l3, false);
		u32 off = hlen, k = 0;

		ASSERT_EQ(40u, hlen);	/* IPv4 20 + UDP 8 + BTH 12 */
		while (off < end) {
			u32 n = cuts[k++ % ARRAY_SIZE(cuts)];

			if (n > end - off)
				n = end - off;
			crc = softrc_icrc_update(crc, r->l3 + off, n);
			off += n;
		}
		EXPECT_EQ(vecs[i].icrc, softrc_icrc_final(crc));
	}
}

static void vec_check_fields(struct __test_metadata *_metadata,
			     const struct vec *v, const struct softrc_pkt *p)
{
	EXPECT_EQ(v->opcode, p->opcode);
	EXPECT_EQ(v->psn, p->psn);
	EXPECT_EQ(v->dqpn, p->dqpn);
	EXPECT_EQ(v->ackreq, p->ackreq);
	EXPECT_EQ(v->se, p->se);
	EXPECT_EQ(v->pad, p->padcnt);
	EXPECT_EQ(v->payload, p->payload_len);
	EXPECT_EQ(SOFTRC_DEFAULT_PKEY, p->pkey);
	EXPECT_EQ(p->op->hdr_len, p->payload_off);
	EXPECT_EQ(v->ext.va, p->va);
	EXPECT_EQ(v->ext.rkey, p->rkey);
	EXPECT_EQ(v->ext.dma_len, p->dma_len);
	EXPECT_EQ(v->ext.swap_add, p->swap_add);
	EXPECT_EQ(v->ext.compare, p->compare);
	EXPECT_EQ(v->ext.syndrome, p->syndrome);
	EXPECT_EQ(v->ext.msn, p->msn);
	EXPECT_EQ(v->ext.orig, p->orig);
	EXPECT_EQ(cpu_to_be32(v->ext.imm), p->imm);
	EXPECT_EQ(v->ext.inv_rkey, p->inv_rkey);
}

TEST(vectors_parse_fields)
{
	struct softrc_pkt pkt;
	int i;

	ASSERT_EQ(VEC_FRAMES, vec_load());
	for (i = 0; i < VEC_FRAMES; i++) {
		const struct softrc_roce *r = &vec_roce[i];

		ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(r->bth, r->pkt_len,
							r->pkt_len, VEC_PMTU, &pkt))
			TH_LOG("frame %d", i + 1);
		vec_check_fields(_metadata, &vecs[i], &pkt);
	}
}

/* Parse works with exactly hdr_len contiguous bytes (a linear skb head). */
TEST(vectors_parse_min_avail)
{
	struct softrc_pkt pkt;
	int i;

	ASSERT_EQ(VEC_FRAMES, vec_load());
	for (i = 0; i < VEC_FRAMES; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		const struct softrc_opcode_info *op = softrc_opcode_get(r->bth[0]);

		ASSERT_NE(NULL, op);
		EXPECT_EQ(SOFTRC_PARSE_OK, softrc_parse(r->bth, op->hdr_len,
							r->pkt_len, VEC_PMTU, &pkt));
		EXPECT_EQ(op->hdr_len == SOFTRC_BTH_BYTES ?
			  SOFTRC_PARSE_SHORT_BTH : SOFTRC_PARSE_HDR_NOT_CONTIG,
			  softrc_parse(r->bth, op->hdr_len - 1, r->pkt_len,
				       VEC_PMTU, &pkt));
	}
}

/* Byte i of a message is (base + i) & 0xff; pad bytes are zero. */
TEST(vectors_payload_pattern)
{
	struct softrc_pkt pkt;
	int i, checked = 0;
	u32 j;

	ASSERT_EQ(VEC_FRAMES, vec_load());
	for (i = 0; i < VEC_FRAMES; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		const struct vec *v = &vecs[i];
		u32 off;

		ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(r->bth, r->pkt_len,
							r->pkt_len, VEC_PMTU, &pkt));
		if (v->base < 0) {
			EXPECT_EQ(0u, pkt.payload_len);
			continue;
		}
		/* every packet before the last of a message carries one PMTU */
		off = ((v->psn - v->msg_psn) & SOFTRC_PSN_MASK) * VEC_PMTU;
		for (j = 0; j < pkt.payload_len; j++)
			ASSERT_EQ((u8)(v->base + off + j),
				  r->bth[pkt.payload_off + j])
				TH_LOG("frame %d byte %u", i + 1, j);
		for (j = 0; j < pkt.padcnt; j++)
			EXPECT_EQ(0, r->bth[pkt.payload_off + pkt.payload_len + j]);
		checked++;
	}
	EXPECT_EQ(35, checked);	/* frames with payload in the table */
}

TEST(vectors_rebuild_headers)
{
	u8 buf[SOFTRC_HDRS_MAX];
	struct softrc_pkt pkt;
	int i;

	ASSERT_EQ(VEC_FRAMES, vec_load());
	for (i = 0; i < VEC_FRAMES; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		u32 n;

		ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(r->bth, r->pkt_len,
							r->pkt_len, VEC_PMTU, &pkt));
		memset(buf, 0xa5, sizeof(buf));
		n = softrc_build_hdrs(&pkt, buf);
		ASSERT_EQ(pkt.op->hdr_len, n);
		EXPECT_EQ(0, memcmp(buf, r->bth, n)) TH_LOG("frame %d", i + 1);
		EXPECT_EQ(0xa5, buf[n]);
	}
}

/* Rebuilding the whole UDP payload (headers, payload, pad, ICRC). */
TEST(vectors_rebuild_frames)
{
	u8 l3[2048];
	struct softrc_pkt pkt;
	int i;

	ASSERT_EQ(VEC_FRAMES, vec_load());
	for (i = 0; i < VEC_FRAMES; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		u32 ip_udp = (u32)(r->bth - r->l3), n, end;

		ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(r->bth, r->pkt_len,
							r->pkt_len, VEC_PMTU, &pkt));
		ASSERT_LE(r->l3_len, sizeof(l3));
		memset(l3, 0xee, sizeof(l3));
		memcpy(l3, r->l3, ip_udp);
		n = softrc_build_hdrs(&pkt, l3 + ip_udp);
		memcpy(l3 + ip_udp + n, r->bth + n, pkt.payload_len);
		end = ip_udp + n + pkt.payload_len;
		memset(l3 + end, 0, softrc_padcnt(pkt.payload_len));
		end += softrc_padcnt(pkt.payload_len);
		ASSERT_EQ(r->l3_len - SOFTRC_ICRC_BYTES, end);
		softrc_icrc_put(l3 + end, softrc_icrc_calc(l3, false, end));
		EXPECT_EQ(0, memcmp(l3, r->l3, r->l3_len)) TH_LOG("frame %d", i + 1);
	}
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rxe trace (vectors/rxe-rc.pcap, captured by tools/vectors/capture.sh
 * from two Linux rdma_rxe devices): every frame's ICRC, parse result,
 * header fields and payload pattern against the decoded table
 * vectors/rxe-rc.txt, and a byte-identical header and frame rebuild.
 *
 * The table is written by tools/vectors/decode.py, a decoder apart from
 * the C core (Python, zlib's CRC-32) that refuses a capture whose ICRCs or
 * payload patterns do not check out; so it is an independent reference
 * for the parser, the builder and the ICRC here.  vectors_coverage keeps
 * the data honest: every RC opcode, a PSN wrap, pad, a zero-length WRITE,
 * both TOS values, ACK, RNR NAK, PSN sequence error and remote access
 * error NAKs must be in it.
 *
 * Context: host test program.
 */
#include <stdio.h>
#include <stdlib.h>
#include "kselftest_harness.h"
#include "pcap.h"
#include "parse.h"
#include "icrc.h"

#define VEC_PCAP	SOFTRC_VECTORS "/rxe-rc.pcap"
#define VEC_TABLE	SOFTRC_VECTORS "/rxe-rc.txt"
#define VEC_MAX		512
#define VEC_PMTU	1024
#define VEC_RC_OPCODES	23	/* IBTA RC opcodes rxe sends (0x00-0x14, 0x16, 0x17) */

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
 * One line of the table: frame, dir (0: 10.0.0.1 -> 10.0.0.2), frame
 * len, IPv4 TOS, opcode, name, PSN, dest QPN, AckReq, SE, pad, payload,
 * ICRC (CRC-32 value), payload base (-1: none), PSN of the message's first
 * packet, then the extension header fields; @hdrs is the SOFTRC_H_* set
 * of the headers whose fields the line names.
 */
struct vec {
	u32 num, dir, frame_len, tos, opcode, psn, dqpn, ackreq, se, pad, payload;
	u32 icrc;
	int base;
	u32 msg_psn;
	char name[40];
	u32 hdrs;
	struct vec_ext ext;
};

static struct vec vecs[VEC_MAX];
static int vec_n;

static int vec_num(const char *s, u64 max, u64 *out)
{
	char *end;

	if (!s || !*s)
		return -1;
	*out = strtoull(s, &end, 0);
	return *end || *out > max ? -1 : 0;
}

/* "key=value": the field it names, and the header it belongs to. */
static int vec_field(struct vec *v, char *tok)
{
	static const struct {
		const char *key;
		u32 hdr;
		size_t off, size;
	} keys[] = {
#define K(k, h, f) { k, h, offsetof(struct vec_ext, f), \
		     sizeof(((struct vec_ext *)0)->f) }
		K("va", 0, va), K("rkey", 0, rkey),
		K("dmalen", SOFTRC_H_RETH, dma_len),
		K("swap", SOFTRC_H_ATMETH, swap_add),
		K("cmp", SOFTRC_H_ATMETH, compare),
		K("syn", SOFTRC_H_AETH, syndrome), K("msn", SOFTRC_H_AETH, msn),
		K("orig", SOFTRC_H_ATMACK, orig), K("imm", SOFTRC_H_IMMDT, imm),
		K("inv", SOFTRC_H_IETH, inv_rkey),
#undef K
	};
	char *eq = strchr(tok, '=');
	size_t i;
	u64 x;

	if (!eq)
		return -1;
	*eq = 0;
	for (i = 0; i < ARRAY_SIZE(keys); i++) {
		u8 *dst = (u8 *)&v->ext + keys[i].off;

		if (strcmp(tok, keys[i].key))
			continue;
		if (vec_num(eq + 1, keys[i].size == 8 ? ~0ull : 0xffffffffull, &x))
			return -1;
		if (keys[i].size == 8)
			memcpy(dst, &x, 8);
		else
			memcpy(dst, &(u32){ (u32)x }, 4);
		v->hdrs |= keys[i].hdr;
		return 0;
	}
	return -1;
}

static int vec_line(struct vec *v, char *line)
{
	u32 *const cols[] = { &v->num, NULL, &v->frame_len, &v->tos, &v->opcode,
			      NULL, &v->psn, &v->dqpn, &v->ackreq, &v->se, &v->pad,
			      &v->payload, &v->icrc, NULL, &v->msg_psn };
	char *save, *tok;
	size_t i;
	u64 x;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < ARRAY_SIZE(cols); i++) {
		tok = strtok_r(i ? NULL : line, " \t\n", &save);
		if (!tok)
			return -1;
		if (i == 1) {			/* dir */
			if (strcmp(tok, "0>1") && strcmp(tok, "1>0"))
				return -1;
			v->dir = tok[0] == '1';
		} else if (i == 5) {		/* name */
			snprintf(v->name, sizeof(v->name), "%s", tok);
		} else if ((i == 13 || i == 14) && !strcmp(tok, "-")) {
			if (i == 13)
				v->base = -1;	/* base, msgpsn: none */
		} else if (vec_num(tok, 0xffffffffu, &x)) {
			return -1;
		} else if (i == 13) {
			if (x > 0xff)
				return -1;
			v->base = (int)x;
		} else {
			*cols[i] = (u32)x;
		}
	}
	while ((tok = strtok_r(NULL, " \t\n", &save)))
		if (vec_field(v, tok))
			return -1;
	/* va and rkey come with a RETH or an AtomicETH */
	if ((v->ext.va || v->ext.rkey) && !(v->hdrs & (SOFTRC_H_RETH | SOFTRC_H_ATMETH)))
		return -1;
	/* an AtomicETH always addresses 8 bytes; the parser says so */
	if (v->hdrs & SOFTRC_H_ATMETH)
		v->ext.dma_len = 8;
	return 0;
}

/* Read the table once; the number of frames, -1 if malformed. */
static int vec_table(void)
{
	char line[512], *hash;
	FILE *f;
	int n = 0, err = 0;

	if (vec_n)
		return vec_n;
	f = fopen(VEC_TABLE, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		if (!line[strspn(line, " \t\n")])
			continue;		/* blank or comment */
		if (n == VEC_MAX || vec_line(&vecs[n], line) ||
		    vecs[n].num != (u32)n + 1) {
			err = -1;
			break;
		}
		n++;
	}
	fclose(f);
	if (err)
		return -1;
	vec_n = n;
	return n;
}

static struct softrc_pcap vec_pcap;
static struct softrc_pcap_frame vec_frames[VEC_MAX];
static struct softrc_roce vec_roce[VEC_MAX];
static int vec_frames_n = -1;

/* Load the pcap (as many frames as the table has); the number read. */
static int vec_load(void)
{
	int n = 0, want = vec_table();

	if (vec_frames_n >= 0)
		return vec_frames_n;
	if (want <= 0 || softrc_pcap_open(&vec_pcap, VEC_PCAP))
		return -1;
	while (n < want && softrc_pcap_next(&vec_pcap, &vec_frames[n]) == 1) {
		if (softrc_roce_locate(vec_frames[n].data, vec_frames[n].caplen,
				       &vec_roce[n]))
			return -1;
		n++;
	}
	vec_frames_n = n;
	return n;
}

/* ASSERT the pcap and the table agree on the frame count; sets @n. */
#define VEC_LOAD(n)					\
	do {						\
		(n) = vec_table();			\
		ASSERT_LT(0, (n));			\
		ASSERT_EQ((n), vec_load());		\
	} while (0)

/*
 * The data covers what it is there for; a re-capture that lost a case
 * fails here rather than silently testing less.
 */
TEST(vectors_coverage)
{
	bool op_seen[SOFTRC_OPCODE_NR] = { 0 };
	bool wrap = false, ff = false, pad = false, zero_write = false;
	bool tos0 = false, tos1 = false, ack = false, rnr = false;
	bool nak_seq = false, nak_access = false;
	int n, i, ops = 0;

	VEC_LOAD(n);
	for (i = 0; i < n; i++) {
		const struct vec *v = &vecs[i];

		ASSERT_LT(v->opcode, (u32)SOFTRC_OPCODE_NR);
		op_seen[v->opcode] = true;
		/* a request from rxe0 at PSN 0 after one at 0xffffff */
		if (!v->dir && v->opcode != SOFTRC_OP_ACKNOWLEDGE) {
			wrap |= ff && v->psn == 0;
			ff |= v->psn == SOFTRC_PSN_MASK;
		}
		pad |= v->pad != 0;
		zero_write |= v->opcode == SOFTRC_OP_RDMA_WRITE_ONLY && !v->payload &&
			      !v->ext.dma_len;
		tos0 |= v->tos == 0;
		tos1 |= v->tos != 0;
		if (v->opcode == SOFTRC_OP_ACKNOWLEDGE) {
			ack |= (v->ext.syndrome >> 5) == 0;
			rnr |= (v->ext.syndrome >> 5) == 1;
			nak_seq |= v->ext.syndrome == 0x60;
			nak_access |= v->ext.syndrome == 0x62;
		}
	}
	for (i = 0; i < SOFTRC_OPCODE_NR; i++) {
		/*
		 * the trace's rxe (Linux 6.1) predates ATOMIC WRITE and
		 * FLUSH (6.2)
		 */
		bool in_trace = softrc_opcode_get(i) &&
				i != SOFTRC_OP_ATOMIC_WRITE &&
				i != SOFTRC_OP_FLUSH;

		EXPECT_EQ(in_trace, op_seen[i])
			TH_LOG("opcode 0x%02x", i);
		ops += op_seen[i];
	}
	EXPECT_EQ(VEC_RC_OPCODES, ops);
	EXPECT_TRUE(wrap);
	EXPECT_TRUE(pad);
	EXPECT_TRUE(zero_write);
	EXPECT_TRUE(tos0 && tos1);
	EXPECT_TRUE(ack);
	EXPECT_TRUE(rnr);
	EXPECT_TRUE(nak_seq);
	EXPECT_TRUE(nak_access);
}

TEST(vectors_pcap_frames)
{
	struct softrc_pcap_frame extra;
	int i, n;

	VEC_LOAD(n);
	EXPECT_EQ(0, softrc_pcap_next(&vec_pcap, &extra));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(vecs[i].num, (u32)i + 1);
		EXPECT_EQ(vecs[i].frame_len, vec_frames[i].caplen);
		EXPECT_EQ(vec_frames[i].caplen, vec_frames[i].origlen);
		EXPECT_FALSE(vec_roce[i].ipv6);
		/* 0>1 is 10.0.0.1 -> 10.0.0.2 */
		EXPECT_EQ(vecs[i].dir ? 2 : 1, vec_roce[i].l3[15]);
		EXPECT_EQ(vecs[i].dir ? 1 : 2, vec_roce[i].l3[19]);
		EXPECT_EQ(vecs[i].tos, vec_roce[i].l3[1]);
	}
}

TEST(vectors_icrc_all_frames)
{
	int i, n;

	VEC_LOAD(n);
	for (i = 0; i < n; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		u32 len = r->l3_len - SOFTRC_ICRC_BYTES;

		EXPECT_EQ(vecs[i].icrc, softrc_icrc_get(r->l3 + len))
			TH_LOG("frame %d trailer", i + 1);
		EXPECT_EQ(vecs[i].icrc, softrc_eng_icrc_calc(r->l3, false, len))
			TH_LOG("frame %d", i + 1);
		EXPECT_TRUE(softrc_eng_icrc_check(r->l3, false, len));
	}
}

/* Feed each frame in odd-sized pieces: the incremental API agrees. */
TEST(vectors_icrc_incremental)
{
	static const u32 cuts[] = { 1, 3, 7, 8, 13, 64, 1000 };
	int i, n;

	VEC_LOAD(n);
	for (i = 0; i < n; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		u32 hlen = softrc_eng_icrc_hdr_len(r->l3, false);
		u32 end = r->l3_len - SOFTRC_ICRC_BYTES;
		u32 crc = softrc_eng_icrc_begin(r->l3, false);
		u32 off = hlen, k = 0;

		ASSERT_EQ(40u, hlen);	/* IPv4 20 + UDP 8 + BTH 12 */
		while (off < end) {
			u32 len = cuts[k++ % ARRAY_SIZE(cuts)];

			if (len > end - off)
				len = end - off;
			crc = softrc_icrc_update(crc, r->l3 + off, len);
			off += len;
		}
		EXPECT_EQ(vecs[i].icrc, softrc_icrc_final(crc));
	}
}

static void vec_check_fields(struct __test_metadata *_metadata,
			     const struct vec *v, const struct softrc_pkt *p)
{
	EXPECT_EQ(v->opcode, p->opcode);
	EXPECT_STREQ(v->name, p->op->name);
	/* the headers the decoder found are the ones the opcode table has */
	EXPECT_EQ(v->hdrs, p->op->flags & SOFTRC_H_MASK);
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
	int i, n;

	VEC_LOAD(n);
	for (i = 0; i < n; i++) {
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
	int i, n;

	VEC_LOAD(n);
	for (i = 0; i < n; i++) {
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
	int i, n, checked = 0;
	u32 j;

	VEC_LOAD(n);
	for (i = 0; i < n; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		const struct vec *v = &vecs[i];
		u32 off;

		ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(r->bth, r->pkt_len,
							r->pkt_len, VEC_PMTU, &pkt));
		if (v->base < 0) {
			EXPECT_EQ(0u, v->payload);
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
	EXPECT_LT(n / 3, checked);	/* the data is not mostly ACKs */
}

TEST(vectors_rebuild_headers)
{
	u8 buf[SOFTRC_HDRS_MAX];
	struct softrc_pkt pkt;
	int i, n;

	VEC_LOAD(n);
	for (i = 0; i < n; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		u32 len;

		ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(r->bth, r->pkt_len,
							r->pkt_len, VEC_PMTU, &pkt));
		memset(buf, 0xa5, sizeof(buf));
		len = softrc_eng_build_hdrs(&pkt, buf);
		ASSERT_EQ(pkt.op->hdr_len, len);
		EXPECT_EQ(0, memcmp(buf, r->bth, len)) TH_LOG("frame %d", i + 1);
		EXPECT_EQ(0xa5, buf[len]);
	}
}

/* Rebuilding the whole UDP payload (headers, payload, pad, ICRC). */
TEST(vectors_rebuild_frames)
{
	u8 l3[2048];
	struct softrc_pkt pkt;
	int i, n;

	VEC_LOAD(n);
	for (i = 0; i < n; i++) {
		const struct softrc_roce *r = &vec_roce[i];
		u32 ip_udp = (u32)(r->bth - r->l3), len, end;

		ASSERT_EQ(SOFTRC_PARSE_OK, softrc_parse(r->bth, r->pkt_len,
							r->pkt_len, VEC_PMTU, &pkt));
		ASSERT_LE(r->l3_len, sizeof(l3));
		memset(l3, 0xee, sizeof(l3));
		memcpy(l3, r->l3, ip_udp);
		len = softrc_eng_build_hdrs(&pkt, l3 + ip_udp);
		memcpy(l3 + ip_udp + len, r->bth + len, pkt.payload_len);
		end = ip_udp + len + pkt.payload_len;
		memset(l3 + end, 0, softrc_padcnt(pkt.payload_len));
		end += softrc_padcnt(pkt.payload_len);
		ASSERT_EQ(r->l3_len - SOFTRC_ICRC_BYTES, end);
		softrc_icrc_put(l3 + end, softrc_eng_icrc_calc(l3, false, end));
		EXPECT_EQ(0, memcmp(l3, r->l3, r->l3_len)) TH_LOG("frame %d", i + 1);
	}
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * RoCEv2 ICRC: the CRC-32 tables and routine against a bitwise reference,
 * the README's worked examples, masking of every variant field (IPv4 and
 * IPv6) and sensitivity to every invariant byte.
 *
 * Context: host test program.
 */
#include "kselftest_harness.h"
#include "icrc.h"
#include "parse.h"

/* Reference CRC-32/IEEE, one bit at a time, over an already masked input. */
static u32 ref_crc32(const u8 *p, u32 len)
{
	u32 crc = ~0u;
	int k;

	while (len--) {
		crc ^= *p++;
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? 0xedb88320u : 0);
	}
	return ~crc;
}

/* Reference ICRC: 8 x 0xff, then a masked copy of IP + UDP + BTH + rest. */
static u32 ref_icrc(const u8 *l3, bool ipv6, u32 len)
{
	u8 in[8 + 2048];
	u8 *m = in + 8;
	u32 ip = ipv6 ? 40 : (l3[0] & 0xf) * 4;

	memset(in, 0xff, 8);
	memcpy(m, l3, len);
	if (ipv6) {
		m[0] |= 0x0f;
		memset(m + 1, 0xff, 3);
		m[7] = 0xff;
	} else {
		m[1] = 0xff;
		m[8] = 0xff;
		memset(m + 10, 0xff, 2);
	}
	memset(m + ip + 6, 0xff, 2);
	m[ip + 8 + 4] = 0xff;
	return ref_crc32(in, 8 + len);
}

/* Frame 2 of the rxe trace (an ACK), as it is on the wire. */
static const u8 frame2_l3[] = {
	0x45, 0x00, 0x00, 0x30, 0xd7, 0x05, 0x40, 0x00,
	0x40, 0x11, 0x4f, 0xb6, 0x0a, 0x00, 0x00, 0x02,
	0x0a, 0x00, 0x00, 0x01, 0xc1, 0x21, 0x12, 0xb7,
	0x00, 0x1c, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff,
	0x00, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0xf0,
	0x1f, 0x00, 0x00, 0x01, 0x09, 0x35, 0x4a, 0x88,
};

/* The README's masked ICRC input for frame 2 (worked example 1). */
static const u8 frame2_masked[] = {
	0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
	0x45, 0xff, 0x00, 0x30, 0xd7, 0x05, 0x40, 0x00,
	0xff, 0x11, 0xff, 0xff, 0x0a, 0x00, 0x00, 0x02,
	0x0a, 0x00, 0x00, 0x01, 0xc1, 0x21, 0x12, 0xb7,
	0x00, 0x1c, 0xff, 0xff, 0x11, 0x00, 0xff, 0xff,
	0xff, 0x00, 0x00, 0x11, 0x00, 0xff, 0xff, 0xf0,
	0x1f, 0x00, 0x00, 0x01,
};

/*
 * A synthetic packet: IPv4 (TOS 0x6a) or IPv6 header, UDP to 4791, a
 * SEND_ONLY of @payload bytes. Returns the bytes before the ICRC.
 */
static u32 mk_frame(u8 *l3, bool ipv6, u32 payload)
{
	struct softrc_pkt p = {
		.opcode = SOFTRC_OP_SEND_ONLY, .pkey = 0xffff, .dqpn = 0x11,
		.psn = 0xabcdef, .ackreq = true, .payload_len = payload,
	};
	u32 ip = ipv6 ? 40 : 20, n, i, udp_len;
	u8 *u = l3 + ip;

	n = softrc_eng_build_hdrs(&p, u + 8);
	for (i = 0; i < payload; i++)
		u[8 + n + i] = (u8)(0x10 + i);
	memset(u + 8 + n + payload, 0, softrc_padcnt(payload));
	udp_len = 8 + n + payload + softrc_padcnt(payload) + 4;
	memset(l3, 0, ip + 8);
	if (ipv6) {
		l3[0] = 0x6a;		/* version 6, traffic class 0xa5 */
		l3[1] = 0x5b;		/* flow label 0xb1234 */
		l3[2] = 0x12;
		l3[3] = 0x34;
		l3[4] = udp_len >> 8;
		l3[5] = udp_len;
		l3[6] = 17;
		l3[7] = 64;
		for (i = 8; i < 40; i++)
			l3[i] = (u8)(0x20 + i);
	} else {
		l3[0] = 0x45;
		l3[1] = 0x6a;
		l3[2] = (20 + udp_len) >> 8;
		l3[3] = 20 + udp_len;
		l3[6] = 0x40;
		l3[8] = 64;
		l3[9] = 17;
		l3[10] = 0x12;
		l3[11] = 0x34;
		memcpy(l3 + 12, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	}
	memcpy(u, "\xc1\x21\x12\xb7", 4);	/* ports 49441 -> 4791 */
	u[4] = udp_len >> 8;
	u[5] = udp_len;
	u[6] = 0xbe;			/* a UDP checksum: masked */
	u[7] = 0xef;
	return ip + udp_len - 4;
}

TEST(crc32_table_matches_polynomial)
{
	u32 t[8][256];
	int i, k, bit;

	for (i = 0; i < 256; i++) {
		u32 c = i;

		for (bit = 0; bit < 8; bit++)
			c = (c >> 1) ^ (c & 1 ? 0xedb88320u : 0);
		t[0][i] = c;
	}
	for (k = 1; k < 8; k++)
		for (i = 0; i < 256; i++)
			t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
	for (k = 0; k < 8; k++)
		for (i = 0; i < 256; i++)
			ASSERT_EQ(t[k][i], softrc_eng_crc32_table[k][i])
				TH_LOG("table %d entry %d", k, i);
}

TEST(crc32_check_value)
{
	static const char check[] = "123456789";

	EXPECT_EQ(0xcbf43926u, ~softrc_eng_crc32_update(~0u, check, 9));
	EXPECT_EQ(0xcbf43926u, ref_crc32((const u8 *)check, 9));
	EXPECT_EQ(0u, ~softrc_eng_crc32_update(~0u, check, 0));
}

/* Any split, any alignment, any length agrees with the bitwise CRC. */
TEST(crc32_split_and_alignment)
{
	u8 buf[300];
	u32 i, len, cut, off;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (u8)(i * 37 + 11);
	for (off = 0; off < 8; off++) {
		for (len = 0; len + off <= 80; len++) {
			u32 want = ref_crc32(buf + off, len);

			for (cut = 0; cut <= len; cut++) {
				u32 r = softrc_eng_crc32_update(~0u, buf + off, cut);

				r = softrc_eng_crc32_update(r, buf + off + cut, len - cut);
				ASSERT_EQ(want, ~r);
			}
		}
	}
	EXPECT_EQ(ref_crc32(buf, sizeof(buf)),
		  ~softrc_eng_crc32_update(~0u, buf, sizeof(buf)));
}

/* The fold's Q(x) = x^274 + x^93 + x^75 + x^19 + x^11 + 1 is a multiple of P. */
TEST(crc32_fold_polynomial_divisible)
{
	static const int terms[] = { 0, 11, 19, 75, 93, 274 };
	u64 x = 1, q = 0;	/* x^e mod P, P = x^32 + 0x04c11db7 */
	int e, t = 0;

	for (e = 0; e <= 274; e++) {
		if (e == terms[t]) {
			q ^= x;
			t++;
		}
		x <<= 1;
		if (x >> 32)
			x ^= 0x104c11db7ull;
	}
	ASSERT_EQ(t, 6);
	EXPECT_EQ(0ull, q);
}

/* The fold agrees with the table loop: every length, alignment, register. */
TEST(crc32_fold_matches_table)
{
	static u8 buf[1300];
	u32 i, len, off, reg = 0x12345678;

	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (u8)(i * 151 + (i >> 7) * 13 + 5);
	for (off = 0; off < 8; off++) {
		for (len = 0; len + off <= sizeof(buf); len++) {
			reg = reg * 1103515245u + 12345u;
			ASSERT_EQ(softrc_eng_crc32_update(reg, buf + off, len),
				  softrc_eng_crc32_fold(reg, buf + off, len))
				TH_LOG("len %u off %u reg %08x", len, off, reg);
		}
	}
	/* a flipped bit anywhere changes it */
	reg = softrc_eng_crc32_fold(~0u, buf, 300);
	for (i = 0; i < 8 * 300; i += 7) {
		buf[i / 8] ^= 1 << (i % 8);
		EXPECT_NE(reg, softrc_eng_crc32_fold(~0u, buf, 300));
		buf[i / 8] ^= 1 << (i % 8);
	}
	EXPECT_EQ(ref_crc32(buf, sizeof(buf)),
		  ~softrc_eng_crc32_fold(~0u, buf, sizeof(buf)));
}

/* README worked example 1: frame 2, a 62-byte ACK. */
TEST(icrc_worked_example_ack)
{
	u32 len = sizeof(frame2_l3) - 4;

	EXPECT_EQ(0x884a3509u, ref_crc32(frame2_masked, sizeof(frame2_masked)));
	EXPECT_EQ(0x884a3509u, softrc_eng_icrc_calc(frame2_l3, false, len));
	EXPECT_EQ(0x884a3509u, softrc_icrc_get(frame2_l3 + len));
	EXPECT_TRUE(softrc_eng_icrc_check(frame2_l3, false, len));
	EXPECT_EQ(ref_icrc(frame2_l3, false, len),
		  softrc_eng_icrc_calc(frame2_l3, false, len));
}

/* rxe's formulation: raw register seeded with 0xDEBB20E3 after the prefix. */
TEST(icrc_prefix_register)
{
	static const u8 ff[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

	EXPECT_EQ(0xdebb20e3u, softrc_eng_crc32_update(~0u, ff, 8));
}

TEST(icrc_trailer_little_endian)
{
	u8 t[4];

	softrc_icrc_put(t, 0x0b42b5c0);
	EXPECT_EQ(0xc0, t[0]);
	EXPECT_EQ(0xb5, t[1]);
	EXPECT_EQ(0x42, t[2]);
	EXPECT_EQ(0x0b, t[3]);
	EXPECT_EQ(0x0b42b5c0u, softrc_icrc_get(t));
}

TEST(icrc_hdr_len)
{
	u8 l3[128];

	mk_frame(l3, false, 4);
	EXPECT_EQ(40u, softrc_eng_icrc_hdr_len(l3, false));
	mk_frame(l3, true, 4);
	EXPECT_EQ(60u, softrc_eng_icrc_hdr_len(l3, true));
}

/* Flip every value of byte @off: the ICRC must not move. */
static void expect_masked(struct __test_metadata *_metadata, u8 *l3,
			  bool ipv6, u32 len, u32 off, u8 mask)
{
	u32 want = softrc_eng_icrc_calc(l3, ipv6, len);
	u8 save = l3[off];
	int v;

	for (v = 0; v < 256; v++) {
		l3[off] = (save & ~mask) | (v & mask);
		EXPECT_EQ(want, softrc_eng_icrc_calc(l3, ipv6, len))
			TH_LOG("byte %u value 0x%02x", off, v);
	}
	l3[off] = save;
}

/* Every single-bit flip outside @masked changes the ICRC. */
static void expect_sensitive(struct __test_metadata *_metadata, u8 *l3,
			     bool ipv6, u32 len, const u8 *masked)
{
	u32 want = softrc_eng_icrc_calc(l3, ipv6, len);
	u32 off;
	int bit;

	for (off = 0; off < len; off++) {
		for (bit = 0; bit < 8; bit++) {
			if (masked[off] & (1 << bit))
				continue;
			l3[off] ^= 1 << bit;
			EXPECT_NE(want, softrc_eng_icrc_calc(l3, ipv6, len))
				TH_LOG("byte %u bit %d", off, bit);
			l3[off] ^= 1 << bit;
		}
	}
}

TEST(icrc_ipv4_masked_fields_ignored)
{
	u8 l3[256];
	u32 len = mk_frame(l3, false, 13);

	EXPECT_EQ(ref_icrc(l3, false, len), softrc_eng_icrc_calc(l3, false, len));
	expect_masked(_metadata, l3, false, len, 1, 0xff);	/* TOS */
	expect_masked(_metadata, l3, false, len, 8, 0xff);	/* TTL */
	expect_masked(_metadata, l3, false, len, 10, 0xff);	/* checksum */
	expect_masked(_metadata, l3, false, len, 11, 0xff);
	expect_masked(_metadata, l3, false, len, 26, 0xff);	/* UDP csum */
	expect_masked(_metadata, l3, false, len, 27, 0xff);
	expect_masked(_metadata, l3, false, len, 32, 0xff);	/* resv8a */
}

TEST(icrc_ipv4_unmasked_bytes_matter)
{
	u8 l3[256], masked[256] = { 0 };
	u32 len = mk_frame(l3, false, 13);

	static const u8 mask_at[] = { 1, 8, 10, 11, 26, 27, 32 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mask_at); i++)
		masked[mask_at[i]] = 0xff;
	/* IHL moves the UDP header: covered by icrc_ipv4_options_covered */
	masked[0] = 0x0f;
	expect_sensitive(_metadata, l3, false, len, masked);
}

/* IPv4 options sit inside the IP header and are covered unmasked. */
TEST(icrc_ipv4_options_covered)
{
	u8 l3[256], opt[256];
	u32 len = mk_frame(l3, false, 8), i;

	opt[0] = 0x46;
	memcpy(opt + 1, l3 + 1, 19);
	memcpy(opt + 20, "\x01\x01\x01\x00", 4);	/* NOP NOP NOP EOL */
	memcpy(opt + 24, l3 + 20, len - 20);
	EXPECT_EQ(44u, softrc_eng_icrc_hdr_len(opt, false));
	EXPECT_EQ(ref_icrc(opt, false, len + 4), softrc_eng_icrc_calc(opt, false, len + 4));
	for (i = 20; i < 24; i++) {
		u32 before = softrc_eng_icrc_calc(opt, false, len + 4);

		opt[i] ^= 0x80;
		EXPECT_NE(before, softrc_eng_icrc_calc(opt, false, len + 4));
		opt[i] ^= 0x80;
	}
	expect_masked(_metadata, opt, false, len + 4, 30, 0xff);	/* UDP csum */
	expect_masked(_metadata, opt, false, len + 4, 36, 0xff);	/* resv8a */
}

TEST(icrc_ipv6_matches_reference)
{
	u8 l3[256];
	u32 len = mk_frame(l3, true, 21);
	u32 crc;

	EXPECT_EQ(ref_icrc(l3, true, len), softrc_eng_icrc_calc(l3, true, len));
	softrc_icrc_put(l3 + len, softrc_eng_icrc_calc(l3, true, len));
	EXPECT_TRUE(softrc_eng_icrc_check(l3, true, len));
	/* incremental: headers, then the payload in two pieces */
	crc = softrc_eng_icrc_begin(l3, true);
	crc = softrc_icrc_update(crc, l3 + 60, 5);
	crc = softrc_icrc_update(crc, l3 + 65, len - 65);
	EXPECT_EQ(ref_icrc(l3, true, len), softrc_icrc_final(crc));
	/* IPv4 and IPv6 framings of the same transport packet differ */
	EXPECT_NE(softrc_eng_icrc_calc(l3, false, len), softrc_eng_icrc_calc(l3, true, len));
}

TEST(icrc_ipv6_masked_fields_ignored)
{
	u8 l3[256];
	u32 len = mk_frame(l3, true, 21);

	expect_masked(_metadata, l3, true, len, 0, 0x0f);	/* TC high */
	expect_masked(_metadata, l3, true, len, 1, 0xff);	/* TC low, FL */
	expect_masked(_metadata, l3, true, len, 2, 0xff);	/* flow label */
	expect_masked(_metadata, l3, true, len, 3, 0xff);
	expect_masked(_metadata, l3, true, len, 7, 0xff);	/* hop limit */
	expect_masked(_metadata, l3, true, len, 46, 0xff);	/* UDP csum */
	expect_masked(_metadata, l3, true, len, 47, 0xff);
	expect_masked(_metadata, l3, true, len, 52, 0xff);	/* resv8a */
}

TEST(icrc_ipv6_unmasked_bytes_matter)
{
	u8 l3[256], masked[256] = { 0 };
	u32 len = mk_frame(l3, true, 21);

	static const u8 mask_at[] = { 1, 2, 3, 7, 46, 47, 52 };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(mask_at); i++)
		masked[mask_at[i]] = 0xff;
	masked[0] = 0x0f;		/* version stays covered */
	expect_sensitive(_metadata, l3, true, len, masked);
}

TEST(icrc_check_detects_corruption)
{
	u8 l3[256];
	u32 len = mk_frame(l3, false, 40);

	softrc_icrc_put(l3 + len, softrc_eng_icrc_calc(l3, false, len));
	EXPECT_TRUE(softrc_eng_icrc_check(l3, false, len));
	l3[len] ^= 1;				/* the ICRC itself */
	EXPECT_FALSE(softrc_eng_icrc_check(l3, false, len));
	l3[len] ^= 1;
	l3[len - 1] ^= 0x40;			/* the pad */
	EXPECT_FALSE(softrc_eng_icrc_check(l3, false, len));
	l3[len - 1] ^= 0x40;
	EXPECT_FALSE(softrc_eng_icrc_check(l3, false, 20));	/* shorter than headers */
}

TEST_HARNESS_MAIN

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RC opcode table against the IBTA list (Vol 1 §9.2.1 table 35 and
 * §9.3 header layouts; ATOMIC WRITE and FLUSH from IBTA 1.5 Annex A19 as
 * rxe 6.12 lays them out), transcribed here independently of the flags.
 *
 * Context: host test program.
 */
#include "kselftest_harness.h"
#include <softrc/opcode.h>
#include "parse.h"

enum { POS_F = 1, POS_M, POS_L, POS_O };

/* offset of each extension header from the BTH, 0 = absent */
struct ibta_op {
	u8 code;
	const char *name;
	u8 hdr_len;
	u8 pos;
	bool recv;		/* consumes a receive WQE */
	bool payload;
	u8 feth, reth, atmeth, aeth, atmack, immdt, ieth;
};

#define OP(c, n, len, p, r, pl, ...)					\
	{ .code = (c), .name = (n), .hdr_len = (len), .pos = (p),	\
	  .recv = (r), .payload = (pl), __VA_ARGS__ }

static const struct ibta_op ibta[] = {
	OP(0x00, "SEND_FIRST", 12, POS_F, 1, 1),
	OP(0x01, "SEND_MIDDLE", 12, POS_M, 1, 1),
	OP(0x02, "SEND_LAST", 12, POS_L, 1, 1),
	OP(0x03, "SEND_LAST_WITH_IMMEDIATE", 16, POS_L, 1, 1, .immdt = 12),
	OP(0x04, "SEND_ONLY", 12, POS_O, 1, 1),
	OP(0x05, "SEND_ONLY_WITH_IMMEDIATE", 16, POS_O, 1, 1, .immdt = 12),
	OP(0x06, "RDMA_WRITE_FIRST", 28, POS_F, 0, 1, .reth = 12),
	OP(0x07, "RDMA_WRITE_MIDDLE", 12, POS_M, 0, 1),
	OP(0x08, "RDMA_WRITE_LAST", 12, POS_L, 0, 1),
	OP(0x09, "RDMA_WRITE_LAST_WITH_IMMEDIATE", 16, POS_L, 1, 1, .immdt = 12),
	OP(0x0a, "RDMA_WRITE_ONLY", 28, POS_O, 0, 1, .reth = 12),
	OP(0x0b, "RDMA_WRITE_ONLY_WITH_IMMEDIATE", 32, POS_O, 1, 1, .reth = 12,
	   .immdt = 28),
	OP(0x0c, "RDMA_READ_REQUEST", 28, POS_O, 0, 0, .reth = 12),
	OP(0x0d, "RDMA_READ_RESPONSE_FIRST", 16, POS_F, 0, 1, .aeth = 12),
	OP(0x0e, "RDMA_READ_RESPONSE_MIDDLE", 12, POS_M, 0, 1),
	OP(0x0f, "RDMA_READ_RESPONSE_LAST", 16, POS_L, 0, 1, .aeth = 12),
	OP(0x10, "RDMA_READ_RESPONSE_ONLY", 16, POS_O, 0, 1, .aeth = 12),
	OP(0x11, "ACKNOWLEDGE", 16, POS_O, 0, 0, .aeth = 12),
	OP(0x12, "ATOMIC_ACKNOWLEDGE", 24, POS_O, 0, 0, .aeth = 12,
	   .atmack = 16),
	OP(0x13, "COMPARE_SWAP", 40, POS_O, 0, 0, .atmeth = 12),
	OP(0x14, "FETCH_ADD", 40, POS_O, 0, 0, .atmeth = 12),
	OP(0x16, "SEND_LAST_WITH_INVALIDATE", 16, POS_L, 1, 1, .ieth = 12),
	OP(0x17, "SEND_ONLY_WITH_INVALIDATE", 16, POS_O, 1, 1, .ieth = 12),
	/* BTH, FETH, RETH (rxe's IB_OPCODE_RC_FLUSH), no payload */
	OP(0x1c, "FLUSH", 32, POS_O, 0, 0, .feth = 12, .reth = 16),
	OP(0x1d, "ATOMIC_WRITE", 28, POS_O, 0, 1, .reth = 12),
};

static const struct softrc_opcode_info *get(struct __test_metadata *_metadata,
					    u8 code)
{
	const struct softrc_opcode_info *op = softrc_opcode_get(code);

	EXPECT_NE(NULL, op) TH_LOG("opcode 0x%02x", code);
	return op;
}

/* 25 RC opcodes below 0x20, 12 UC ones and the two UD SENDs */
TEST(opcode_count_is_25_rc_12_uc_2_ud)
{
	int n = 0, code;

	for (code = 0; code < SOFTRC_OPCODE_NR; code++)
		n += softrc_opcode_get(code) != NULL;
	EXPECT_EQ(25, n);
	EXPECT_EQ(25, (int)ARRAY_SIZE(ibta));
	for (; code < SOFTRC_OPCODE_TABLE_NR; code++)
		n += softrc_opcode_get(code) != NULL;
	EXPECT_EQ(39, n);
}

TEST(opcode_codes_and_names)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ibta); i++) {
		const struct softrc_opcode_info *op = get(_metadata, ibta[i].code);

		ASSERT_NE(NULL, op);
		EXPECT_STREQ(ibta[i].name, op->name);
		EXPECT_STREQ(ibta[i].name, softrc_eng_opcode_name(ibta[i].code));
	}
}

TEST(opcode_hdr_len)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ibta); i++) {
		const struct softrc_opcode_info *op = get(_metadata, ibta[i].code);

		ASSERT_NE(NULL, op);
		EXPECT_EQ(ibta[i].hdr_len, op->hdr_len) TH_LOG("%s", op->name);
		EXPECT_EQ(0, op->hdr_len % 4);
		EXPECT_LE(op->hdr_len, SOFTRC_HDRS_MAX);
	}
}

static void check_hdr(struct __test_metadata *_metadata,
		      const struct softrc_opcode_info *op, enum softrc_hdr h,
		      u8 want_off)
{
	bool present = op->flags & (1u << h);

	EXPECT_EQ(want_off != 0, present) TH_LOG("%s hdr %d", op->name, h);
	if (want_off)
		EXPECT_EQ(want_off, op->off[h]) TH_LOG("%s hdr %d", op->name, h);
}

TEST(opcode_header_offsets)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ibta); i++) {
		const struct ibta_op *e = &ibta[i];
		const struct softrc_opcode_info *op = get(_metadata, e->code);

		ASSERT_NE(NULL, op);
		check_hdr(_metadata, op, SOFTRC_HDR_FETH, e->feth);
		check_hdr(_metadata, op, SOFTRC_HDR_RETH, e->reth);
		check_hdr(_metadata, op, SOFTRC_HDR_ATMETH, e->atmeth);
		check_hdr(_metadata, op, SOFTRC_HDR_AETH, e->aeth);
		check_hdr(_metadata, op, SOFTRC_HDR_ATMACK, e->atmack);
		check_hdr(_metadata, op, SOFTRC_HDR_IMMDT, e->immdt);
		check_hdr(_metadata, op, SOFTRC_HDR_IETH, e->ieth);
	}
}

/* The headers present tile the bytes BTH..hdr_len without gaps. */
TEST(opcode_headers_contiguous)
{
	static const u8 size[SOFTRC_HDR_NR] = { 8, 4, 16, 28, 4, 8, 4, 4 };
	size_t i;
	int h;

	for (i = 0; i < ARRAY_SIZE(ibta); i++) {
		const struct softrc_opcode_info *op = get(_metadata, ibta[i].code);
		u32 end = SOFTRC_BTH_BYTES;

		ASSERT_NE(NULL, op);
		for (h = 0; h < SOFTRC_HDR_NR; h++) {
			if (!(op->flags & (1u << h)))
				continue;
			EXPECT_EQ(end, op->off[h]);
			end += size[h];
		}
		EXPECT_EQ(end, op->hdr_len);
	}
}

TEST(opcode_recv_wqe)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ibta); i++) {
		const struct softrc_opcode_info *op = get(_metadata, ibta[i].code);

		ASSERT_NE(NULL, op);
		EXPECT_EQ(ibta[i].recv, !!(op->flags & SOFTRC_OPF_RECV))
			TH_LOG("%s", op->name);
	}
}

TEST(opcode_positions)
{
	static const u32 want[] = {
		[POS_F] = SOFTRC_OPF_FIRST, [POS_M] = SOFTRC_OPF_MIDDLE,
		[POS_L] = SOFTRC_OPF_LAST, [POS_O] = SOFTRC_OPF_ONLY,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ibta); i++) {
		const struct softrc_opcode_info *op = get(_metadata, ibta[i].code);

		ASSERT_NE(NULL, op);
		EXPECT_EQ(want[ibta[i].pos], op->flags & SOFTRC_OPF_POS_MASK)
			TH_LOG("%s", op->name);
	}
}

TEST(opcode_payload)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ibta); i++) {
		const struct softrc_opcode_info *op = get(_metadata, ibta[i].code);

		ASSERT_NE(NULL, op);
		EXPECT_EQ(ibta[i].payload, !!(op->flags & SOFTRC_OPF_PAYLOAD))
			TH_LOG("%s", op->name);
	}
}

/* Exactly one kind; requests have one class; codes group by kind. */
TEST(opcode_kind_and_class)
{
	int code;

	for (code = 0; code < SOFTRC_OPCODE_NR; code++) {
		const struct softrc_opcode_info *op = softrc_opcode_get(code);
		u32 kind, cls;

		if (!op)
			continue;
		kind = op->flags & (SOFTRC_OPF_REQ | SOFTRC_OPF_RESP | SOFTRC_OPF_ACK);
		cls = op->flags & SOFTRC_OPF_CLASS_MASK;
		EXPECT_TRUE(kind && !(kind & (kind - 1))) TH_LOG("%s", op->name);
		if (kind == SOFTRC_OPF_REQ)
			EXPECT_TRUE(cls && !(cls & (cls - 1)));
		/* 0x0d..0x12 are responses and ACKs, the rest requests */
		EXPECT_EQ(code < 0x0d || code > 0x12, kind == SOFTRC_OPF_REQ)
			TH_LOG("%s", op->name);
		/* only requests may ask for an ACK; invalidate only on SEND */
		EXPECT_EQ(kind == SOFTRC_OPF_REQ,
			  !!(op->flags & SOFTRC_OPF_ACKREQ_OK));
		EXPECT_EQ(!!(op->flags & SOFTRC_H_IETH),
			  !!(op->flags & SOFTRC_OPF_INV));
	}
}

static void check_enum(struct __test_metadata *_metadata, int code,
		       int enum_val, const char *name, u32 flags, u32 hdr_len)
{
	EXPECT_EQ(code, enum_val);
	EXPECT_STREQ(name, softrc_eng_opcode_name(code));
	EXPECT_EQ(flags, softrc_eng_opcode_table[code].flags);
	EXPECT_EQ(hdr_len, softrc_eng_opcode_table[code].hdr_len);
}

#define CHECK_ENUM(nm, c, f) \
	check_enum(_metadata, c, SOFTRC_OP_##nm, #nm, f, SOFTRC_HDR_LEN(f));

TEST(opcode_enum_name_table_agree)
{
	SOFTRC_RC_OPCODES(CHECK_ENUM)
	EXPECT_EQ(0x13, SOFTRC_OP_COMPARE_SWAP);
	EXPECT_EQ(0x17, SOFTRC_OP_SEND_ONLY_WITH_INVALIDATE);
}

TEST(opcode_holes_return_null)
{
	static const u8 holes[] = {
		0x15, 0x18, 0x19, 0x1a, 0x1b, 0x1e, 0x1f
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(holes); i++) {
		EXPECT_EQ(NULL, softrc_opcode_get(holes[i]));
		EXPECT_STREQ("UNKNOWN", softrc_eng_opcode_name(holes[i]));
		EXPECT_EQ(NULL, softrc_eng_opcode_table[holes[i]].name);
	}
}

/*
 * Beyond RC only UC's SENDs and WRITEs (0x20..0x2b) and UD SEND ONLY
 * (0x64) and SEND ONLY with immediate (0x65) exist (§9.2.1): RD (010),
 * the other UD codes, CNP (100) and the rest are unknown.
 */
TEST(opcode_non_rc_only_uc_and_ud_sends)
{
	int code;

	for (code = 0x20; code < 0x100; code++) {
		if (code <= 0x2b || code == 0x64 || code == 0x65)
			continue;
		EXPECT_EQ(NULL, softrc_opcode_get(code)) TH_LOG("0x%02x", code);
		EXPECT_STREQ("UNKNOWN", softrc_eng_opcode_name(code));
	}
}

/* A UC code is the RC code + 0x20 with the RC flags but AckReq. */
TEST(opcode_uc_mirrors_rc)
{
	int code;

	for (code = 0x20; code <= 0x2b; code++) {
		const struct softrc_opcode_info *uc = softrc_opcode_get(code);
		const struct softrc_opcode_info *rc = softrc_opcode_get(code - 0x20);

		ASSERT_NE(NULL, uc) TH_LOG("0x%02x", code);
		ASSERT_NE(NULL, rc);
		EXPECT_EQ(rc->flags & ~SOFTRC_OPF_ACKREQ_OK, uc->flags)
			TH_LOG("%s", uc->name);
		EXPECT_EQ(rc->hdr_len, uc->hdr_len);
		EXPECT_EQ(0, strncmp(uc->name, "UC_", 3));
		EXPECT_STREQ(rc->name, uc->name + 3);
		EXPECT_EQ(SOFTRC_OPCODE_UC, softrc_opcode_transport(code));
	}
}

/* The UD SENDs: one packet, a DETH right after the BTH, a receive WQE */
TEST(opcode_ud_sends)
{
	const struct softrc_opcode_info *o = softrc_opcode_get(0x64);
	const struct softrc_opcode_info *i = softrc_opcode_get(0x65);

	ASSERT_NE(NULL, o);
	ASSERT_NE(NULL, i);
	EXPECT_STREQ("UD_SEND_ONLY", o->name);
	EXPECT_STREQ("UD_SEND_ONLY_WITH_IMMEDIATE", i->name);
	EXPECT_EQ(SOFTRC_OPCODE_UD, softrc_opcode_transport(0x64));
	EXPECT_EQ(SOFTRC_OPF_ONLY, o->flags & SOFTRC_OPF_POS_MASK);
	EXPECT_EQ(SOFTRC_OPF_ONLY, i->flags & SOFTRC_OPF_POS_MASK);
	EXPECT_TRUE(!!(o->flags & SOFTRC_OPF_RECV));
	EXPECT_FALSE(!!(o->flags & SOFTRC_OPF_ACKREQ_OK));
	EXPECT_EQ(SOFTRC_BTH_BYTES, o->off[SOFTRC_HDR_DETH]);
	EXPECT_EQ(SOFTRC_BTH_BYTES + SOFTRC_DETH_BYTES, o->hdr_len);
	EXPECT_EQ(SOFTRC_BTH_BYTES + SOFTRC_DETH_BYTES,
		  i->off[SOFTRC_HDR_IMMDT]);
	EXPECT_EQ(SOFTRC_BTH_BYTES + SOFTRC_DETH_BYTES + SOFTRC_IMMDT_BYTES,
		  i->hdr_len);
}

TEST_HARNESS_MAIN

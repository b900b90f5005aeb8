/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 transport headers (IBTA Vol 1 §9.2–§9.4, Annex A17) with typed
 * big-endian accessors. Nothing outside this file shifts or masks header
 * bits by hand.
 *
 * Context: none (pure inline helpers on caller-owned memory).
 */
#ifndef SOFTRC_WIRE_H
#define SOFTRC_WIRE_H

#include "platform.h"
#include "opcode.h"

#define SOFTRC_ROCEV2_UDP_PORT	4791
#define SOFTRC_PSN_MASK		0x00ffffffu
#define SOFTRC_QPN_MASK		0x00ffffffu
#define SOFTRC_MSN_MASK		0x00ffffffu
#define SOFTRC_DEFAULT_PKEY	0xffff

/* Base Transport Header, 12 bytes (§9.2). */
struct softrc_bth {
	u8 opcode;
	u8 flags;		/* SE(7) MigReq(6) PadCnt(5..4) TVer(3..0) */
	__be16 pkey;
	__be32 resv8a_dqpn;	/* resv8a(31..24) DestQP(23..0) */
	__be32 ackreq_psn;	/* AckReq(31) resv7(30..24) PSN(23..0) */
} __packed;

#define SOFTRC_BTH_SE		0x80
#define SOFTRC_BTH_MIGREQ	0x40
#define SOFTRC_BTH_PAD_SHIFT	4
#define SOFTRC_BTH_PAD_MASK	0x30
#define SOFTRC_BTH_TVER_MASK	0x0f
#define SOFTRC_BTH_ACKREQ	0x80000000u
#define SOFTRC_BTH_RESV7_MASK	0x7f000000u
#define SOFTRC_BTH_RESV8A_MASK	0xff000000u

static inline u8 softrc_bth_opcode(const struct softrc_bth *b)
{
	return b->opcode;
}

static inline bool softrc_bth_se(const struct softrc_bth *b)
{
	return b->flags & SOFTRC_BTH_SE;
}

static inline bool softrc_bth_migreq(const struct softrc_bth *b)
{
	return b->flags & SOFTRC_BTH_MIGREQ;
}

static inline u8 softrc_bth_padcnt(const struct softrc_bth *b)
{
	return (b->flags & SOFTRC_BTH_PAD_MASK) >> SOFTRC_BTH_PAD_SHIFT;
}

static inline u8 softrc_bth_tver(const struct softrc_bth *b)
{
	return b->flags & SOFTRC_BTH_TVER_MASK;
}

static inline u16 softrc_bth_pkey(const struct softrc_bth *b)
{
	return be16_to_cpu(b->pkey);
}

static inline u32 softrc_bth_dqpn(const struct softrc_bth *b)
{
	return be32_to_cpu(b->resv8a_dqpn) & SOFTRC_QPN_MASK;
}

static inline u8 softrc_bth_resv8a(const struct softrc_bth *b)
{
	return be32_to_cpu(b->resv8a_dqpn) >> 24;
}

static inline bool softrc_bth_ackreq(const struct softrc_bth *b)
{
	return be32_to_cpu(b->ackreq_psn) & SOFTRC_BTH_ACKREQ;
}

static inline u8 softrc_bth_resv7(const struct softrc_bth *b)
{
	return (be32_to_cpu(b->ackreq_psn) & SOFTRC_BTH_RESV7_MASK) >> 24;
}

static inline u32 softrc_bth_psn(const struct softrc_bth *b)
{
	return be32_to_cpu(b->ackreq_psn) & SOFTRC_PSN_MASK;
}

/* Fill a whole BTH; reserved fields are written as zero. */
static inline void softrc_bth_set(struct softrc_bth *b, u8 opcode, bool se,
				  u8 padcnt, u16 pkey, u32 dqpn, bool ackreq,
				  u32 psn)
{
	b->opcode = opcode;
	b->flags = (se ? SOFTRC_BTH_SE : 0) |
		   ((padcnt << SOFTRC_BTH_PAD_SHIFT) & SOFTRC_BTH_PAD_MASK);
	b->pkey = cpu_to_be16(pkey);
	b->resv8a_dqpn = cpu_to_be32(dqpn & SOFTRC_QPN_MASK);
	b->ackreq_psn = cpu_to_be32((ackreq ? SOFTRC_BTH_ACKREQ : 0) |
				    (psn & SOFTRC_PSN_MASK));
}

/* RDMA Extended Transport Header, 16 bytes (§9.3.3). */
struct softrc_reth {
	__be64 va;
	__be32 rkey;
	__be32 dma_len;
} __packed;

static inline u64 softrc_reth_va(const struct softrc_reth *r)
{
	return be64_to_cpu(r->va);
}

static inline u32 softrc_reth_rkey(const struct softrc_reth *r)
{
	return be32_to_cpu(r->rkey);
}

static inline u32 softrc_reth_len(const struct softrc_reth *r)
{
	return be32_to_cpu(r->dma_len);
}

static inline void softrc_reth_set(struct softrc_reth *r, u64 va, u32 rkey,
				   u32 len)
{
	r->va = cpu_to_be64(va);
	r->rkey = cpu_to_be32(rkey);
	r->dma_len = cpu_to_be32(len);
}

/* Atomic Extended Transport Header, 28 bytes (§9.3.4). */
struct softrc_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

static inline u64 softrc_atmeth_va(const struct softrc_atmeth *a)
{
	return be64_to_cpu(a->va);
}

static inline u32 softrc_atmeth_rkey(const struct softrc_atmeth *a)
{
	return be32_to_cpu(a->rkey);
}

static inline u64 softrc_atmeth_swap_add(const struct softrc_atmeth *a)
{
	return be64_to_cpu(a->swap_add);
}

static inline u64 softrc_atmeth_compare(const struct softrc_atmeth *a)
{
	return be64_to_cpu(a->compare);
}

static inline void softrc_atmeth_set(struct softrc_atmeth *a, u64 va, u32 rkey,
				     u64 swap_add, u64 compare)
{
	a->va = cpu_to_be64(va);
	a->rkey = cpu_to_be32(rkey);
	a->swap_add = cpu_to_be64(swap_add);
	a->compare = cpu_to_be64(compare);
}

/*
 * ACK Extended Transport Header, 4 bytes (§9.3.5): syndrome(31..24)
 * MSN(23..0). Syndrome bits 7..5 select ACK / RNR NAK / NAK; bits 4..0
 * hold the credit count, the RNR timer code or the NAK code.
 */
struct softrc_aeth {
	__be32 syn_msn;
} __packed;

enum softrc_aeth_type {
	SOFTRC_AETH_ACK		= 0x00,	/* 000xxxxx: credit count */
	SOFTRC_AETH_RNR_NAK	= 0x20,	/* 001xxxxx: RNR timer code */
	SOFTRC_AETH_RESERVED	= 0x40,	/* 010xxxxx */
	SOFTRC_AETH_NAK		= 0x60,	/* 011xxxxx: NAK code */
};

#define SOFTRC_AETH_TYPE_MASK	0xe0
#define SOFTRC_AETH_VALUE_MASK	0x1f
#define SOFTRC_AETH_CREDIT_INVALID 0x1f	/* "no credit information" */

enum softrc_nak_code {
	SOFTRC_NAK_PSN_SEQ_ERR		= 0,
	SOFTRC_NAK_INVALID_REQ		= 1,
	SOFTRC_NAK_REMOTE_ACCESS	= 2,
	SOFTRC_NAK_REMOTE_OP_ERR	= 3,
	SOFTRC_NAK_INVALID_RD_REQ	= 4,
};

static inline u8 softrc_aeth_syndrome(const struct softrc_aeth *a)
{
	return be32_to_cpu(a->syn_msn) >> 24;
}

static inline u32 softrc_aeth_msn(const struct softrc_aeth *a)
{
	return be32_to_cpu(a->syn_msn) & SOFTRC_MSN_MASK;
}

static inline void softrc_aeth_set(struct softrc_aeth *a, u8 syndrome, u32 msn)
{
	a->syn_msn = cpu_to_be32(((u32)syndrome << 24) | (msn & SOFTRC_MSN_MASK));
}

static inline enum softrc_aeth_type softrc_syndrome_type(u8 syndrome)
{
	return (enum softrc_aeth_type)(syndrome & SOFTRC_AETH_TYPE_MASK);
}

static inline u8 softrc_syndrome_value(u8 syndrome)
{
	return syndrome & SOFTRC_AETH_VALUE_MASK;
}

/* Atomic ACK Extended Transport Header, 8 bytes (§9.3.6). */
struct softrc_atmack {
	__be64 orig;
} __packed;

static inline u64 softrc_atmack_orig(const struct softrc_atmack *a)
{
	return be64_to_cpu(a->orig);
}

static inline void softrc_atmack_set(struct softrc_atmack *a, u64 orig)
{
	a->orig = cpu_to_be64(orig);
}

/*
 * Immediate data (§9.3.7). Verbs carry it in network order end to end
 * (ib_wc.ex.imm_data is __be32), so the accessor returns the raw value.
 */
struct softrc_immdt {
	__be32 imm;
} __packed;

static inline __be32 softrc_immdt_get(const struct softrc_immdt *i)
{
	return i->imm;
}

static inline void softrc_immdt_set(struct softrc_immdt *i, __be32 imm)
{
	i->imm = imm;
}

/* Invalidate Extended Transport Header (§9.3.8). */
struct softrc_ieth {
	__be32 rkey;
} __packed;

static inline u32 softrc_ieth_rkey(const struct softrc_ieth *i)
{
	return be32_to_cpu(i->rkey);
}

static inline void softrc_ieth_set(struct softrc_ieth *i, u32 rkey)
{
	i->rkey = cpu_to_be32(rkey);
}

/*
 * Datagram Extended Transport Header, 8 bytes (§9.3.3): the Q_Key the
 * receiving QP checks, then 8 reserved bits and the source QP number.
 */
struct softrc_deth {
	__be32 qkey;
	__be32 sqp;
} __packed;

#define SOFTRC_DETH_SQP_MASK	0x00ffffff

static inline u32 softrc_deth_qkey(const struct softrc_deth *d)
{
	return be32_to_cpu(d->qkey);
}

static inline u32 softrc_deth_sqp(const struct softrc_deth *d)
{
	return be32_to_cpu(d->sqp) & SOFTRC_DETH_SQP_MASK;
}

static inline void softrc_deth_set(struct softrc_deth *d, u32 qkey, u32 sqp)
{
	d->qkey = cpu_to_be32(qkey);
	d->sqp = cpu_to_be32(sqp & SOFTRC_DETH_SQP_MASK);
}

/*
 * FLUSH Extended Transport Header, 4 bytes (IBTA 1.5 Annex A19.4.1):
 * placement type bits 3..0 (which kind of visibility the FLUSH asks
 * for), selectivity level bits 5..4 (the RETH range, or the whole memory
 * region the R_Key names), bits 31..6 reserved.
 */
struct softrc_feth {
	__be32 bits;
} __packed;

#define SOFTRC_FETH_PLT_MASK	0x0000000fu
#define SOFTRC_FETH_SEL_SHIFT	4
#define SOFTRC_FETH_SEL_MASK	0x00000030u
#define SOFTRC_FETH_RESV_MASK	0xffffffc0u

/* Placement types (A19.4.1.1), the values of ib_placement_type. */
#define SOFTRC_FLUSH_GLOBAL	BIT(0)	/* global visibility */
#define SOFTRC_FLUSH_PERSISTENT	BIT(1)	/* persistence */
#define SOFTRC_FLUSH_TYPES	(SOFTRC_FLUSH_GLOBAL | SOFTRC_FLUSH_PERSISTENT)

/* Selectivity levels (A19.4.1.2), the values of ib_selectivity_level. */
#define SOFTRC_FLUSH_RANGE	0	/* the RETH's VA and DMA length */
#define SOFTRC_FLUSH_MR		1	/* the whole region of the R_Key */

static inline u8 softrc_feth_type(const struct softrc_feth *f)
{
	return be32_to_cpu(f->bits) & SOFTRC_FETH_PLT_MASK;
}

static inline u8 softrc_feth_level(const struct softrc_feth *f)
{
	return (be32_to_cpu(f->bits) & SOFTRC_FETH_SEL_MASK) >>
	       SOFTRC_FETH_SEL_SHIFT;
}

static inline u32 softrc_feth_resv(const struct softrc_feth *f)
{
	return be32_to_cpu(f->bits) & SOFTRC_FETH_RESV_MASK;
}

/* Fill a whole FETH; the reserved bits are written as zero. */
static inline void softrc_feth_set(struct softrc_feth *f, u8 type, u8 level)
{
	f->bits = cpu_to_be32((type & SOFTRC_FETH_PLT_MASK) |
			      (((u32)level << SOFTRC_FETH_SEL_SHIFT) &
			       SOFTRC_FETH_SEL_MASK));
}

/* Typed views of the extension headers of a packet starting at its BTH. */
#define SOFTRC__EXT_VIEW(type, hdr)					\
static inline struct softrc_##type *					\
softrc_pkt_##type(const struct softrc_opcode_info *op, void *bth)	\
{									\
	return (struct softrc_##type *)((u8 *)bth + op->off[hdr]);	\
}

SOFTRC__EXT_VIEW(deth, SOFTRC_HDR_DETH)
SOFTRC__EXT_VIEW(feth, SOFTRC_HDR_FETH)
SOFTRC__EXT_VIEW(reth, SOFTRC_HDR_RETH)
SOFTRC__EXT_VIEW(atmeth, SOFTRC_HDR_ATMETH)
SOFTRC__EXT_VIEW(aeth, SOFTRC_HDR_AETH)
SOFTRC__EXT_VIEW(atmack, SOFTRC_HDR_ATMACK)
SOFTRC__EXT_VIEW(immdt, SOFTRC_HDR_IMMDT)
SOFTRC__EXT_VIEW(ieth, SOFTRC_HDR_IETH)
#undef SOFTRC__EXT_VIEW

#endif /* SOFTRC_WIRE_H */

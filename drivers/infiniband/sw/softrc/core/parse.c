// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * Packet parser and header builder (RC and UD).
 *
 * Context: pure functions, safe in any context (softirq or process, with
 * or without the QP lock); never sleeps or allocates. The parser reads at
 * most hdr_avail bytes at the BTH and writes only *pkt; the builder writes
 * only the header bytes of one packet.
 *
 * The parser enforces what a single packet can show to be malformed
 * (IBTA Vol 1 §9.2 BTH, §9.3 extension headers, §9.4 operations, §9.7
 * responder checks). Everything that needs QP state (PSN window, P_Key,
 * QPN, opcode sequence, MSN, R_Key) is the engine's.
 */
#include "parse.h"

/* in enum order, so no designators are needed */
#define SOFTRC__PARSE_NAME(name, text) #name,
static const char *const softrc_parse_names[SOFTRC_PARSE_NR] = {
	SOFTRC_PARSE_STATUSES(SOFTRC__PARSE_NAME)
};

#undef SOFTRC__PARSE_NAME

#define SOFTRC__PARSE_DESC(name, text) text,
static const char *const softrc_parse_descs[SOFTRC_PARSE_NR] = {
	SOFTRC_PARSE_STATUSES(SOFTRC__PARSE_DESC)
};

#undef SOFTRC__PARSE_DESC

const char *softrc_eng_parse_status_name(int status)
{
	if (status < 0 || status >= SOFTRC_PARSE_NR)
		return "?";
	return softrc_parse_names[status];
}

const char *softrc_eng_parse_status_desc(int status)
{
	if (status < 0 || status >= SOFTRC_PARSE_NR)
		return "?";
	return softrc_parse_descs[status];
}

/* Pointer to extension header @hdr of a packet whose BTH is at @bth. */
static const void *softrc_ext(const struct softrc_pkt *pkt, const void *bth,
			      enum softrc_hdr hdr)
{
	return (const u8 *)bth + pkt->op->off[hdr];
}

static bool softrc_is_req(const struct softrc_pkt *pkt, u32 class)
{
	return softrc_pkt_has(pkt, SOFTRC_OPF_REQ) && softrc_pkt_has(pkt, class);
}

static u32 softrc_pos(const struct softrc_pkt *pkt)
{
	return pkt->op->flags & SOFTRC_OPF_POS_MASK;
}

/*
 * BTH (§9.2): opcode bits 7..5 select the transport (§9.2.1), which must
 * be the receiving QP's @transport (RC 000, UC 001, UD 011);
 * TVer must be 0 (packets of another transport version are dropped);
 * resv7 in the PSN word must be 0. MigReq is accepted either way (rxe
 * sends 0) and resv8a is a variant field (masked in the ICRC): ignored.
 */
static int softrc_parse_bth(const struct softrc_bth *b, u8 transport,
			    struct softrc_pkt *pkt)
{
	u8 opcode = softrc_bth_opcode(b);

	if (softrc_opcode_transport(opcode) != transport)
		return SOFTRC_PARSE_BAD_TRANSPORT;
	pkt->op = softrc_opcode_get(opcode);
	if (!pkt->op)
		return SOFTRC_PARSE_BAD_OPCODE;
	if (softrc_bth_tver(b) != 0)
		return SOFTRC_PARSE_BAD_TVER;
	if (softrc_bth_resv7(b) != 0)
		return SOFTRC_PARSE_RESV7_SET;
	pkt->opcode = opcode;
	pkt->se = softrc_bth_se(b);
	pkt->ackreq = softrc_bth_ackreq(b);
	pkt->padcnt = softrc_bth_padcnt(b);
	pkt->pkey = softrc_bth_pkey(b);
	pkt->dqpn = softrc_bth_dqpn(b);
	pkt->psn = softrc_bth_psn(b);
	return SOFTRC_PARSE_OK;
}

/*
 * An opcode without payload (ACK, atomic ACK, READ request, atomics;
 * §9.2.1 table 35) must have neither pad nor payload bytes. Atomic
 * operands travel in the AtomicETH (§9.3.4), not as payload (rxe's
 * CMP_SWAP, frame 33 of the trace, carries none either).
 */
static int softrc_check_no_payload(const struct softrc_pkt *pkt, u32 region)
{
	if (pkt->padcnt && softrc_is_req(pkt, SOFTRC_OPF_FLUSH))
		return SOFTRC_PARSE_FLUSH_PAYLOAD;
	if (pkt->padcnt)
		return SOFTRC_PARSE_PAD_NO_PAYLOAD;
	if (!region)
		return SOFTRC_PARSE_OK;
	if (softrc_is_req(pkt, SOFTRC_OPF_READ))
		return SOFTRC_PARSE_READ_REQ_PAYLOAD;
	if (softrc_is_req(pkt, SOFTRC_OPF_ATOMIC))
		return SOFTRC_PARSE_ATOMIC_PAYLOAD;
	if (softrc_is_req(pkt, SOFTRC_OPF_FLUSH))
		return SOFTRC_PARSE_FLUSH_PAYLOAD;	/* oA19-2 */
	return SOFTRC_PARSE_PAYLOAD_UNEXPECTED;
}

/*
 * Packet size rules (§9.2 PadCnt, §9.7 length checks): a packet is a whole
 * number of 4-byte words, the pad count cannot exceed the bytes between
 * headers and ICRC, no payload above the path MTU, FIRST and MIDDLE
 * packets carry exactly one path MTU and a LAST packet carries 1..PMTU.
 */
static int softrc_check_pmtu(const struct softrc_pkt *pkt, u32 pmtu)
{
	u32 pos = softrc_pos(pkt);

	if (pkt->payload_len > pmtu)
		return SOFTRC_PARSE_PAYLOAD_GT_PMTU;
	if ((pos == SOFTRC_OPF_FIRST || pos == SOFTRC_OPF_MIDDLE) &&
	    pkt->payload_len != pmtu)
		return SOFTRC_PARSE_PAYLOAD_NE_PMTU;
	if (pos == SOFTRC_OPF_LAST && !pkt->payload_len)
		return SOFTRC_PARSE_LAST_EMPTY;
	return SOFTRC_PARSE_OK;
}

static int softrc_parse_lengths(struct softrc_pkt *pkt, u32 hdr_avail,
				u32 pkt_len, u32 pmtu)
{
	u32 hdr_len = pkt->op->hdr_len;
	u32 region;
	int ret;

	if (hdr_avail < hdr_len)
		return SOFTRC_PARSE_HDR_NOT_CONTIG;
	if (pkt_len < hdr_len + SOFTRC_ICRC_BYTES)
		return SOFTRC_PARSE_SHORT_HDRS;
	/* payload + pad: everything between the headers and the ICRC */
	region = pkt_len - hdr_len - SOFTRC_ICRC_BYTES;
	if (region & 3)
		return SOFTRC_PARSE_LEN_UNALIGNED;
	if (!softrc_pkt_has(pkt, SOFTRC_OPF_PAYLOAD)) {
		ret = softrc_check_no_payload(pkt, region);
		if (ret)
			return ret;
	}
	if (pkt->padcnt > region)
		return SOFTRC_PARSE_PAD_TOO_BIG;
	pkt->payload_off = hdr_len;
	pkt->payload_len = region - pkt->padcnt;
	return softrc_check_pmtu(pkt, pmtu);
}

/* Decode the extension headers present for this opcode (§9.3). */
static void softrc_parse_ext(const void *bth, struct softrc_pkt *pkt)
{
	if (softrc_pkt_has(pkt, SOFTRC_H_FETH)) {
		const struct softrc_feth *f = softrc_ext(pkt, bth, SOFTRC_HDR_FETH);

		pkt->flush_type = softrc_feth_type(f);
		pkt->flush_level = softrc_feth_level(f);
	}
	if (softrc_pkt_has(pkt, SOFTRC_H_DETH)) {
		const struct softrc_deth *d = softrc_ext(pkt, bth, SOFTRC_HDR_DETH);

		pkt->qkey = softrc_deth_qkey(d);
		pkt->sqpn = softrc_deth_sqp(d);
	}
	if (softrc_pkt_has(pkt, SOFTRC_H_RETH)) {
		const struct softrc_reth *r = softrc_ext(pkt, bth, SOFTRC_HDR_RETH);

		pkt->va = softrc_reth_va(r);
		pkt->rkey = softrc_reth_rkey(r);
		pkt->dma_len = softrc_reth_len(r);
	}
	if (softrc_pkt_has(pkt, SOFTRC_H_ATMETH)) {
		const struct softrc_atmeth *a =
			softrc_ext(pkt, bth, SOFTRC_HDR_ATMETH);

		pkt->va = softrc_atmeth_va(a);
		pkt->rkey = softrc_atmeth_rkey(a);
		pkt->swap_add = softrc_atmeth_swap_add(a);
		pkt->compare = softrc_atmeth_compare(a);
		pkt->dma_len = 8;	/* implied: atomics work on 64 bits */
	}
	if (softrc_pkt_has(pkt, SOFTRC_H_AETH)) {
		const struct softrc_aeth *a = softrc_ext(pkt, bth, SOFTRC_HDR_AETH);

		pkt->syndrome = softrc_aeth_syndrome(a);
		pkt->msn = softrc_aeth_msn(a);
	}
	if (softrc_pkt_has(pkt, SOFTRC_H_ATMACK))
		pkt->orig = softrc_atmack_orig(softrc_ext(pkt, bth,
							  SOFTRC_HDR_ATMACK));
	if (softrc_pkt_has(pkt, SOFTRC_H_IMMDT))
		pkt->imm = softrc_immdt_get(softrc_ext(pkt, bth,
						       SOFTRC_HDR_IMMDT));
	if (softrc_pkt_has(pkt, SOFTRC_H_IETH))
		pkt->inv_rkey = softrc_ieth_rkey(softrc_ext(pkt, bth,
							    SOFTRC_HDR_IETH));
}

/*
 * RDMA WRITE lengths (§9.4): an ONLY packet carries the
 * whole message, so its payload equals the RETH DMA length; a FIRST
 * packet opens a multi-packet message, so the DMA length exceeds PMTU.
 */
static int softrc_check_write(const struct softrc_pkt *pkt, u32 pmtu)
{
	u32 pos = softrc_pos(pkt);

	if (pos == SOFTRC_OPF_ONLY && pkt->payload_len != pkt->dma_len)
		return SOFTRC_PARSE_WRITE_ONLY_LEN;
	if (pos == SOFTRC_OPF_FIRST && pkt->dma_len <= pmtu)
		return SOFTRC_PARSE_WRITE_FIRST_LEN;
	return SOFTRC_PARSE_OK;
}

/*
 * AETH syndrome (§9.3.5): bit 7 reserved, bits 6..5 the type; only ACK
 * (000), RNR NAK (001) and NAK (011) are defined, as the rxe trace shows
 * (RNR NAK 0x3c, sequence NAK 0x60, access NAK 0x62).
 */
static bool softrc_syndrome_ok(u8 syndrome)
{
	switch (softrc_syndrome_type(syndrome)) {
	case SOFTRC_AETH_ACK:
	case SOFTRC_AETH_RNR_NAK:
	case SOFTRC_AETH_NAK:
		return true;
	default:
		return false;
	}
}

/*
 * ATOMIC WRITE (IBTA 1.5 A19.4; oA19-28): exactly 8 bytes of payload,
 * no pad, a RETH DMA length of 8, at a naturally aligned address (an
 * atomic, like the AtomicETH ones: the same reject).
 */
static int softrc_check_atomic_write(const struct softrc_pkt *pkt)
{
	if (pkt->payload_len != SOFTRC_ATOMIC_WRITE_BYTES || pkt->padcnt ||
	    pkt->dma_len != SOFTRC_ATOMIC_WRITE_BYTES)
		return SOFTRC_PARSE_ATOMIC_WRITE_LEN;
	if (pkt->va & 7)
		return SOFTRC_PARSE_ATOMIC_VA_UNALIGNED;
	return SOFTRC_PARSE_OK;
}

/*
 * FLUSH (IBTA 1.5 A19.4.1): placement type bits of the defined ones
 * only; selectivity level RANGE or MR (2 and 3 reserved); the FETH's
 * reserved bits zero (written as zero, like BTH resv7). A placement type
 * of 0 (no bit) passes, as rxe takes it: a FLUSH that needs no flush
 * right (rxe's kernel requester sends it so, resp.c).
 */
static int softrc_check_flush(const struct softrc_pkt *pkt, const void *bth)
{
	const struct softrc_feth *f = softrc_ext(pkt, bth, SOFTRC_HDR_FETH);

	if ((pkt->flush_type & ~SOFTRC_FLUSH_TYPES) ||
	    pkt->flush_level > SOFTRC_FLUSH_MR || softrc_feth_resv(f))
		return SOFTRC_PARSE_FLUSH_FETH;
	return SOFTRC_PARSE_OK;
}

static int softrc_check_ext(const struct softrc_pkt *pkt, const void *bth,
			    u32 pmtu)
{
	if (softrc_is_req(pkt, SOFTRC_OPF_FLUSH))
		return softrc_check_flush(pkt, bth);
	/* atomics address one naturally aligned 64-bit word (§9.4) */
	if (softrc_pkt_has(pkt, SOFTRC_H_ATMETH) && (pkt->va & 7))
		return SOFTRC_PARSE_ATOMIC_VA_UNALIGNED;
	if (softrc_is_req(pkt, SOFTRC_OPF_ATOMIC_WRITE))
		return softrc_check_atomic_write(pkt);
	if (softrc_is_req(pkt, SOFTRC_OPF_WRITE) &&
	    softrc_pkt_has(pkt, SOFTRC_H_RETH))
		return softrc_check_write(pkt, pmtu);
	if (softrc_pkt_has(pkt, SOFTRC_H_AETH) &&
	    !softrc_syndrome_ok(pkt->syndrome))
		return SOFTRC_PARSE_AETH_RESERVED;
	return SOFTRC_PARSE_OK;
}

int softrc_eng_parse_qp(const void *bth, u32 hdr_avail, u32 pkt_len, u32 pmtu,
			u8 transport, struct softrc_pkt *pkt)
{
	int ret;

	memset(pkt, 0, sizeof(*pkt));
	if (hdr_avail < SOFTRC_BTH_BYTES ||
	    pkt_len < SOFTRC_BTH_BYTES + SOFTRC_ICRC_BYTES)
		return SOFTRC_PARSE_SHORT_BTH;
	ret = softrc_parse_bth(bth, transport, pkt);
	if (ret)
		return ret;
	ret = softrc_parse_lengths(pkt, hdr_avail, pkt_len, pmtu);
	if (ret)
		return ret;
	softrc_parse_ext(bth, pkt);
	return softrc_check_ext(pkt, bth, pmtu);
}

u32 softrc_eng_build_hdrs(const struct softrc_pkt *pkt, void *buf)
{
	const struct softrc_opcode_info *op = softrc_opcode_get(pkt->opcode);

	if (!op)
		return 0;
	softrc_bth_set(buf, pkt->opcode, pkt->se,
		       softrc_padcnt(pkt->payload_len), pkt->pkey, pkt->dqpn,
		       pkt->ackreq, pkt->psn);
	if (op->flags & SOFTRC_H_DETH)
		softrc_deth_set(softrc_pkt_deth(op, buf), pkt->qkey, pkt->sqpn);
	if (op->flags & SOFTRC_H_FETH)
		softrc_feth_set(softrc_pkt_feth(op, buf), pkt->flush_type,
				pkt->flush_level);
	if (op->flags & SOFTRC_H_RETH)
		softrc_reth_set(softrc_pkt_reth(op, buf), pkt->va, pkt->rkey,
				pkt->dma_len);
	if (op->flags & SOFTRC_H_ATMETH)
		softrc_atmeth_set(softrc_pkt_atmeth(op, buf), pkt->va,
				  pkt->rkey, pkt->swap_add, pkt->compare);
	if (op->flags & SOFTRC_H_AETH)
		softrc_aeth_set(softrc_pkt_aeth(op, buf), pkt->syndrome,
				pkt->msn);
	if (op->flags & SOFTRC_H_ATMACK)
		softrc_atmack_set(softrc_pkt_atmack(op, buf), pkt->orig);
	if (op->flags & SOFTRC_H_IMMDT)
		softrc_immdt_set(softrc_pkt_immdt(op, buf), pkt->imm);
	if (op->flags & SOFTRC_H_IETH)
		softrc_ieth_set(softrc_pkt_ieth(op, buf), pkt->inv_rkey);
	return op->hdr_len;
}

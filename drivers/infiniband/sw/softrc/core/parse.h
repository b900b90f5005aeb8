/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * RC packet parser and header builder (IBTA Vol 1 §9.2, §9.3; RoCEv2
 * Annex A17).
 *
 * Context: pure functions on caller-owned memory; called with or without
 * the QP lock, softirq or process context; never sleeps, never allocates.
 * softrc_parse() touches only the hdr_avail bytes it is given and *pkt;
 * softrc_eng_build_hdrs() only the header bytes it writes.
 */
#ifndef SOFTRC_CORE_PARSE_H
#define SOFTRC_CORE_PARSE_H

#include "pkt.h"

/*
 * X(name, text): every result of softrc_parse(). OK is 0; each reject
 * reason has its own code so a counter per reason can tell them apart.
 */
#define SOFTRC_PARSE_STATUSES(X)					\
	X(OK,			"ok")					\
	X(SHORT_BTH,		"shorter than BTH + ICRC")		\
	X(BAD_TRANSPORT,	"opcode is not the QP's transport")	\
	X(BAD_OPCODE,		"unknown opcode")			\
	X(BAD_TVER,		"BTH TVer is not 0")			\
	X(RESV7_SET,		"BTH reserved 7 bits not zero")		\
	X(HDR_NOT_CONTIG,	"headers not contiguous in buffer")	\
	X(SHORT_HDRS,		"shorter than headers + ICRC")		\
	X(LEN_UNALIGNED,	"payload + pad not a 4-byte multiple")	\
	X(PAD_NO_PAYLOAD,	"pad count on opcode without payload")	\
	X(READ_REQ_PAYLOAD,	"payload on RDMA READ request")		\
	X(ATOMIC_PAYLOAD,	"payload on atomic request")		\
	X(PAYLOAD_UNEXPECTED,	"payload on opcode without payload")	\
	X(PAD_TOO_BIG,		"pad count exceeds payload region")	\
	X(PAYLOAD_GT_PMTU,	"payload exceeds path MTU")		\
	X(PAYLOAD_NE_PMTU,	"FIRST/MIDDLE payload is not path MTU")	\
	X(LAST_EMPTY,		"LAST packet without payload")		\
	X(ATOMIC_VA_UNALIGNED,	"atomic VA not 8-byte aligned")		\
	X(WRITE_ONLY_LEN,	"WRITE ONLY payload != RETH length")	\
	X(WRITE_FIRST_LEN,	"WRITE FIRST RETH length <= path MTU")	\
	X(AETH_RESERVED,	"AETH syndrome of reserved type 010")	\
	X(ATOMIC_WRITE_LEN,	"ATOMIC WRITE payload or DMA length not 8") \
	X(FLUSH_PAYLOAD,	"payload or pad on FLUSH request")	\
	X(FLUSH_FETH,		"FLUSH FETH undefined type/level or reserved set")

#define SOFTRC__PARSE_ENUM(name, text) SOFTRC_PARSE_##name,
enum softrc_parse_status {
	SOFTRC_PARSE_STATUSES(SOFTRC__PARSE_ENUM)
	SOFTRC_PARSE_NR
};

#undef SOFTRC__PARSE_ENUM

/* Smallest and largest path MTU the parser accepts (IB MTU 256..4096). */
#define SOFTRC_PMTU_MIN		256
#define SOFTRC_PMTU_MAX		4096
/* Room softrc_eng_build_hdrs() may write: the largest RC header is 40 B. */
#define SOFTRC_HDRS_MAX		64

/**
 * softrc_parse() - validate and decode the transport headers of one packet
 * @bth:	packet bytes starting at the BTH
 * @hdr_avail:	contiguous bytes readable at @bth; fewer than the opcode's
 *		hdr_len is a reject (HDR_NOT_CONTIG); never read past it
 * @pkt_len:	bytes from the BTH through the 4-byte ICRC inclusive
 * @pmtu:	path MTU in bytes (256..4096)
 * @pkt:	filled on success. On a reject with a status above
 *		SOFTRC_PARSE_RESV7_SET the BTH fields (op, opcode, se,
 *		ackreq, padcnt, pkey, dqpn, psn) are valid, so the engine can
 *		answer a malformed request with a NAK; other fields are
 *		unspecified.
 *
 * Checks only what one packet alone can show (no QP state: PSN, P_Key,
 * QPN and MSN checks belong to the engine). The ICRC is not checked here.
 *
 * Return: SOFTRC_PARSE_OK or the reject reason (enum softrc_parse_status).
 */
int softrc_eng_parse_qp(const void *bth, u32 hdr_avail, u32 pkt_len, u32 pmtu,
			u8 transport, struct softrc_pkt *pkt);

/* softrc_eng_parse_qp() for an RC QP */
static inline int softrc_parse(const void *bth, u32 hdr_avail, u32 pkt_len,
			       u32 pmtu, struct softrc_pkt *pkt)
{
	return softrc_eng_parse_qp(bth, hdr_avail, pkt_len, pmtu, SOFTRC_OPCODE_RC,
				   pkt);
}

/* "OK", "BAD_OPCODE", ...: the enum name without its prefix; "?" if unknown. */
const char *softrc_eng_parse_status_name(int status);

/* "ok", "unknown RC opcode", ...: a description; "?" if unknown. */
const char *softrc_eng_parse_status_desc(int status);

/* PadCnt for a payload of @payload_len bytes: pad to a 4-byte multiple. */
static inline u8 softrc_padcnt(u32 payload_len)
{
	return (u8)(-payload_len & 3);
}

/**
 * softrc_eng_build_hdrs() - write the BTH and extension headers of a packet
 * @pkt:	opcode and field values (@pkt->op is ignored; the descriptor
 *		is looked up from @pkt->opcode); @pkt->padcnt is ignored and
 *		derived from @pkt->payload_len
 * @buf:	room for SOFTRC_HDRS_MAX bytes
 *
 * TVer, MigReq, resv8a and resv7 are written as zero. For atomics the
 * DMA length is implied (8) and not written. Payload, pad and ICRC are
 * appended by the caller, starting at the returned offset.
 *
 * Return: the header length (the opcode's hdr_len), 0 for a bad opcode.
 */
u32 softrc_eng_build_hdrs(const struct softrc_pkt *pkt, void *buf);

#endif /* SOFTRC_CORE_PARSE_H */

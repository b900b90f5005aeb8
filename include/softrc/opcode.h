/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The opcode list: RC (IBTA Vol 1 §9.2.1 table 35), UC
 * (the SEND and WRITE subset of RC, at 0x20 + the RC code) and the UD
 * SENDs (§9.2.1; the GSI QP's MADs travel as UD too).
 *
 * Context: none (constant data). One X-macro list generates the enum,
 * the name table and the descriptor table (core/opcode.c), so names,
 * codes and header layouts can never drift apart.
 *
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * X(name, code, flags): flags combine one position (FIRST/MIDDLE/LAST,
 * ONLY = FIRST | LAST), one kind (REQ/RESP/ACK), one class
 * (SEND/WRITE/READ/ATOMIC/ATOMIC_WRITE/FLUSH) for requests, meaning bits and
 * the extension headers present after the BTH (SOFTRC_H_*).
 *
 * ATOMIC_WRITE (0x1d, IBTA 1.5 Annex A19; rxe from Linux 6.2 on): BTH,
 * RETH (DMA length 8) and 8 bytes of payload, placed as one 64-bit
 * store; answered by a zero-length RDMA READ RESPONSE ONLY (an AETH, no
 * AtomicAckETH), as rxe does. It is a class of its own: a WRITE in what
 * it does, an ATOMIC in how the responder keeps it (a responder resource,
 * duplicates answered from it, never executed twice).
 *
 * FLUSH (0x1c, IBTA 1.5 Annex A19; rxe from Linux 6.2 on): BTH, FETH
 * (placement type, selectivity level) and RETH (the range), no payload;
 * answered like ATOMIC WRITE by a zero-length RDMA READ RESPONSE ONLY.
 * Its own class too: READ-like in ordering and in the responder resource
 * it takes (duplicates answered from it, never executed twice), without
 * data either way.
 */
#ifndef SOFTRC_OPCODE_H
#define SOFTRC_OPCODE_H

#include "platform.h"

/* Extension headers, in the order they follow the BTH on the wire. */
enum softrc_hdr {
	SOFTRC_HDR_DETH,	/*  8 B: Q_Key, source QP (datagrams) */
	SOFTRC_HDR_FETH,	/*  4 B: FLUSH placement type, selectivity */
	SOFTRC_HDR_RETH,	/* 16 B: VA, R_Key, DMA length */
	SOFTRC_HDR_ATMETH,	/* 28 B: VA, R_Key, swap/add, compare */
	SOFTRC_HDR_AETH,	/*  4 B: syndrome, MSN */
	SOFTRC_HDR_ATMACK,	/*  8 B: original remote data */
	SOFTRC_HDR_IMMDT,	/*  4 B: immediate data */
	SOFTRC_HDR_IETH,	/*  4 B: R_Key to invalidate */
	SOFTRC_HDR_NR
};

#define SOFTRC_H_DETH	BIT(SOFTRC_HDR_DETH)
#define SOFTRC_H_FETH	BIT(SOFTRC_HDR_FETH)
#define SOFTRC_H_RETH	BIT(SOFTRC_HDR_RETH)
#define SOFTRC_H_ATMETH	BIT(SOFTRC_HDR_ATMETH)
#define SOFTRC_H_AETH	BIT(SOFTRC_HDR_AETH)
#define SOFTRC_H_ATMACK	BIT(SOFTRC_HDR_ATMACK)
#define SOFTRC_H_IMMDT	BIT(SOFTRC_HDR_IMMDT)
#define SOFTRC_H_IETH	BIT(SOFTRC_HDR_IETH)
#define SOFTRC_H_MASK	(BIT(SOFTRC_HDR_NR) - 1)

/* Meaning bits, above the header bits. */
#define SOFTRC_OPF_FIRST	BIT(8)	/* first packet of a message */
#define SOFTRC_OPF_MIDDLE	BIT(9)
#define SOFTRC_OPF_LAST		BIT(10)	/* closes a message */
#define SOFTRC_OPF_ONLY		(SOFTRC_OPF_FIRST | SOFTRC_OPF_LAST)
#define SOFTRC_OPF_REQ		BIT(11)	/* requester -> responder */
#define SOFTRC_OPF_RESP		BIT(12)	/* READ response, atomic ACK */
#define SOFTRC_OPF_ACK		BIT(13)	/* ACK/NAK */
#define SOFTRC_OPF_SEND		BIT(14)
#define SOFTRC_OPF_WRITE	BIT(15)
#define SOFTRC_OPF_READ		BIT(16)
#define SOFTRC_OPF_ATOMIC	BIT(17)
#define SOFTRC_OPF_PAYLOAD	BIT(18)	/* may carry payload */
#define SOFTRC_OPF_RECV		BIT(19)	/* message consumes a receive WQE */
#define SOFTRC_OPF_ACKREQ_OK	BIT(20)	/* the AckReq bit may be set */
#define SOFTRC_OPF_INV		BIT(21)	/* invalidates the IETH R_Key */
#define SOFTRC_OPF_ATOMIC_WRITE	BIT(22)	/* IBTA 1.5 ATOMIC WRITE */
#define SOFTRC_OPF_FLUSH	BIT(23)	/* IBTA 1.5 FLUSH */

#define SOFTRC_OPF_POS_MASK \
	(SOFTRC_OPF_FIRST | SOFTRC_OPF_MIDDLE | SOFTRC_OPF_LAST)
#define SOFTRC_OPF_CLASS_MASK \
	(SOFTRC_OPF_SEND | SOFTRC_OPF_WRITE | SOFTRC_OPF_READ | \
	 SOFTRC_OPF_ATOMIC | SOFTRC_OPF_ATOMIC_WRITE | SOFTRC_OPF_FLUSH)

/* shorthands used only inside the list below */
#define SOFTRC__SREQ	(SOFTRC_OPF_REQ | SOFTRC_OPF_SEND | SOFTRC_OPF_PAYLOAD | \
			 SOFTRC_OPF_RECV | SOFTRC_OPF_ACKREQ_OK)
#define SOFTRC__WREQ	(SOFTRC_OPF_REQ | SOFTRC_OPF_WRITE | SOFTRC_OPF_PAYLOAD | \
			 SOFTRC_OPF_ACKREQ_OK)
#define SOFTRC__RRESP	(SOFTRC_OPF_RESP | SOFTRC_OPF_READ | SOFTRC_OPF_PAYLOAD)
#define SOFTRC__AREQ	(SOFTRC_OPF_REQ | SOFTRC_OPF_ATOMIC | SOFTRC_OPF_ONLY | \
			 SOFTRC_H_ATMETH | SOFTRC_OPF_ACKREQ_OK)

#define SOFTRC_RC_OPCODES(X)						\
	X(SEND_FIRST,			0x00, SOFTRC__SREQ | SOFTRC_OPF_FIRST) \
	X(SEND_MIDDLE,			0x01, SOFTRC__SREQ | SOFTRC_OPF_MIDDLE) \
	X(SEND_LAST,			0x02, SOFTRC__SREQ | SOFTRC_OPF_LAST) \
	X(SEND_LAST_WITH_IMMEDIATE,	0x03, SOFTRC__SREQ | SOFTRC_OPF_LAST | \
					      SOFTRC_H_IMMDT)		\
	X(SEND_ONLY,			0x04, SOFTRC__SREQ | SOFTRC_OPF_ONLY) \
	X(SEND_ONLY_WITH_IMMEDIATE,	0x05, SOFTRC__SREQ | SOFTRC_OPF_ONLY | \
					      SOFTRC_H_IMMDT)		\
	X(RDMA_WRITE_FIRST,		0x06, SOFTRC__WREQ | SOFTRC_OPF_FIRST | \
					      SOFTRC_H_RETH)		\
	X(RDMA_WRITE_MIDDLE,		0x07, SOFTRC__WREQ | SOFTRC_OPF_MIDDLE) \
	X(RDMA_WRITE_LAST,		0x08, SOFTRC__WREQ | SOFTRC_OPF_LAST) \
	X(RDMA_WRITE_LAST_WITH_IMMEDIATE, 0x09, SOFTRC__WREQ | SOFTRC_OPF_LAST | \
					      SOFTRC_OPF_RECV | SOFTRC_H_IMMDT) \
	X(RDMA_WRITE_ONLY,		0x0a, SOFTRC__WREQ | SOFTRC_OPF_ONLY | \
					      SOFTRC_H_RETH)		\
	X(RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x0b, SOFTRC__WREQ | SOFTRC_OPF_ONLY | \
					      SOFTRC_OPF_RECV | SOFTRC_H_RETH | \
					      SOFTRC_H_IMMDT)		\
	X(RDMA_READ_REQUEST,		0x0c, SOFTRC_OPF_REQ | SOFTRC_OPF_READ | \
					      SOFTRC_OPF_ONLY | SOFTRC_H_RETH | \
					      SOFTRC_OPF_ACKREQ_OK)	\
	X(RDMA_READ_RESPONSE_FIRST,	0x0d, SOFTRC__RRESP | SOFTRC_OPF_FIRST | \
					      SOFTRC_H_AETH)		\
	X(RDMA_READ_RESPONSE_MIDDLE,	0x0e, SOFTRC__RRESP | SOFTRC_OPF_MIDDLE) \
	X(RDMA_READ_RESPONSE_LAST,	0x0f, SOFTRC__RRESP | SOFTRC_OPF_LAST | \
					      SOFTRC_H_AETH)		\
	X(RDMA_READ_RESPONSE_ONLY,	0x10, SOFTRC__RRESP | SOFTRC_OPF_ONLY | \
					      SOFTRC_H_AETH)		\
	X(ACKNOWLEDGE,			0x11, SOFTRC_OPF_ACK | SOFTRC_OPF_ONLY | \
					      SOFTRC_H_AETH)		\
	X(ATOMIC_ACKNOWLEDGE,		0x12, SOFTRC_OPF_RESP | SOFTRC_OPF_ATOMIC | \
					      SOFTRC_OPF_ONLY | SOFTRC_H_AETH | \
					      SOFTRC_H_ATMACK)		\
	X(COMPARE_SWAP,			0x13, SOFTRC__AREQ)		\
	X(FETCH_ADD,			0x14, SOFTRC__AREQ)		\
	X(SEND_LAST_WITH_INVALIDATE,	0x16, SOFTRC__SREQ | SOFTRC_OPF_LAST | \
					      SOFTRC_OPF_INV | SOFTRC_H_IETH) \
	X(SEND_ONLY_WITH_INVALIDATE,	0x17, SOFTRC__SREQ | SOFTRC_OPF_ONLY | \
					      SOFTRC_OPF_INV | SOFTRC_H_IETH) \
	X(FLUSH,			0x1c, SOFTRC_OPF_REQ | SOFTRC_OPF_ONLY | \
					      SOFTRC_OPF_FLUSH | SOFTRC_H_FETH | \
					      SOFTRC_H_RETH | SOFTRC_OPF_ACKREQ_OK) \
	X(ATOMIC_WRITE,			0x1d, SOFTRC_OPF_REQ | SOFTRC_OPF_ONLY | \
					      SOFTRC_OPF_ATOMIC_WRITE | \
					      SOFTRC_OPF_PAYLOAD | SOFTRC_H_RETH | \
					      SOFTRC_OPF_ACKREQ_OK)

/*
 * UC: RC's SENDs and WRITEs, code + 0x20, without ACKs (so no AckReq).
 * The requester builds the RC code and adds the transport (req.c).
 */
#define SOFTRC__UCS	(SOFTRC__SREQ & ~SOFTRC_OPF_ACKREQ_OK)
#define SOFTRC__UCW	(SOFTRC__WREQ & ~SOFTRC_OPF_ACKREQ_OK)

#define SOFTRC_UC_OPCODES(X)						\
	X(UC_SEND_FIRST,		0x20, SOFTRC__UCS | SOFTRC_OPF_FIRST) \
	X(UC_SEND_MIDDLE,		0x21, SOFTRC__UCS | SOFTRC_OPF_MIDDLE) \
	X(UC_SEND_LAST,			0x22, SOFTRC__UCS | SOFTRC_OPF_LAST) \
	X(UC_SEND_LAST_WITH_IMMEDIATE,	0x23, SOFTRC__UCS | SOFTRC_OPF_LAST | \
					      SOFTRC_H_IMMDT)		\
	X(UC_SEND_ONLY,			0x24, SOFTRC__UCS | SOFTRC_OPF_ONLY) \
	X(UC_SEND_ONLY_WITH_IMMEDIATE,	0x25, SOFTRC__UCS | SOFTRC_OPF_ONLY | \
					      SOFTRC_H_IMMDT)		\
	X(UC_RDMA_WRITE_FIRST,		0x26, SOFTRC__UCW | SOFTRC_OPF_FIRST | \
					      SOFTRC_H_RETH)		\
	X(UC_RDMA_WRITE_MIDDLE,		0x27, SOFTRC__UCW | SOFTRC_OPF_MIDDLE) \
	X(UC_RDMA_WRITE_LAST,		0x28, SOFTRC__UCW | SOFTRC_OPF_LAST) \
	X(UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, 0x29, SOFTRC__UCW | SOFTRC_OPF_LAST | \
					      SOFTRC_OPF_RECV | SOFTRC_H_IMMDT) \
	X(UC_RDMA_WRITE_ONLY,		0x2a, SOFTRC__UCW | SOFTRC_OPF_ONLY | \
					      SOFTRC_H_RETH)		\
	X(UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, 0x2b, SOFTRC__UCW | SOFTRC_OPF_ONLY | \
					      SOFTRC_OPF_RECV | SOFTRC_H_RETH | \
					      SOFTRC_H_IMMDT)

/*
 * UD: every message is one packet with a DETH (IBTA §9.2.1: only SEND
 * ONLY, with or without immediate data); no AckReq, no ACK.
 */
#define SOFTRC__UDREQ	(SOFTRC_OPF_REQ | SOFTRC_OPF_SEND | SOFTRC_OPF_PAYLOAD | \
			 SOFTRC_OPF_RECV | SOFTRC_OPF_ONLY | SOFTRC_H_DETH)

#define SOFTRC_UD_OPCODES(X)						\
	X(UD_SEND_ONLY,			0x64, SOFTRC__UDREQ)		\
	X(UD_SEND_ONLY_WITH_IMMEDIATE,	0x65, SOFTRC__UDREQ | SOFTRC_H_IMMDT)

/* The one list: the enum, the names and the descriptors come from it. */
#define SOFTRC_OPCODES(X)						\
	SOFTRC_RC_OPCODES(X)						\
	SOFTRC_UC_OPCODES(X)						\
	SOFTRC_UD_OPCODES(X)

#define SOFTRC__OPCODE_ENUM(name, code, flags) SOFTRC_OP_##name = (code),
enum softrc_opcode {
	SOFTRC_OPCODES(SOFTRC__OPCODE_ENUM)
};

#undef SOFTRC__OPCODE_ENUM

/* BTH opcode bits 7..5 select the transport: RC 000, UC 001, UD 011. */
#define SOFTRC_OPCODE_TRANSPORT_MASK	0xe0
#define SOFTRC_OPCODE_RC		0x00
#define SOFTRC_OPCODE_UC		0x20
#define SOFTRC_OPCODE_UD		0x60
#define SOFTRC_OPCODE_NR		32	/* RC opcodes 0x00..0x1f */
#define SOFTRC_OPCODE_TABLE_NR		256	/* every 8-bit opcode */

/* Extension header sizes, indexed by enum softrc_hdr. */
#define SOFTRC_BTH_BYTES	12
#define SOFTRC_DETH_BYTES	8
#define SOFTRC_FETH_BYTES	4
#define SOFTRC_RETH_BYTES	16
#define SOFTRC_ATMETH_BYTES	28
#define SOFTRC_AETH_BYTES	4
#define SOFTRC_ATMACK_BYTES	8
#define SOFTRC_IMMDT_BYTES	4
#define SOFTRC_IETH_BYTES	4
#define SOFTRC_ICRC_BYTES	4
/* ATOMIC WRITE payload: one naturally aligned 64-bit word */
#define SOFTRC_ATOMIC_WRITE_BYTES	8

/* Header bytes before a given extension header, derived from the mask. */
#define SOFTRC__HSZ(f, bit, bytes)	(((f) & (bit)) ? (bytes) : 0)
#define SOFTRC_OFF_DETH(f)	SOFTRC_BTH_BYTES
#define SOFTRC_OFF_FETH(f)	(SOFTRC_OFF_DETH(f) + \
				 SOFTRC__HSZ(f, SOFTRC_H_DETH, SOFTRC_DETH_BYTES))
#define SOFTRC_OFF_RETH(f)	(SOFTRC_OFF_FETH(f) + \
				 SOFTRC__HSZ(f, SOFTRC_H_FETH, SOFTRC_FETH_BYTES))
#define SOFTRC_OFF_ATMETH(f)	(SOFTRC_OFF_RETH(f) + \
				 SOFTRC__HSZ(f, SOFTRC_H_RETH, SOFTRC_RETH_BYTES))
#define SOFTRC_OFF_AETH(f)	(SOFTRC_OFF_ATMETH(f) + \
				 SOFTRC__HSZ(f, SOFTRC_H_ATMETH, SOFTRC_ATMETH_BYTES))
#define SOFTRC_OFF_ATMACK(f)	(SOFTRC_OFF_AETH(f) + \
				 SOFTRC__HSZ(f, SOFTRC_H_AETH, SOFTRC_AETH_BYTES))
#define SOFTRC_OFF_IMMDT(f)	(SOFTRC_OFF_ATMACK(f) + \
				 SOFTRC__HSZ(f, SOFTRC_H_ATMACK, SOFTRC_ATMACK_BYTES))
#define SOFTRC_OFF_IETH(f)	(SOFTRC_OFF_IMMDT(f) + \
				 SOFTRC__HSZ(f, SOFTRC_H_IMMDT, SOFTRC_IMMDT_BYTES))
#define SOFTRC_HDR_LEN(f)	(SOFTRC_OFF_IETH(f) + \
				 SOFTRC__HSZ(f, SOFTRC_H_IETH, SOFTRC_IETH_BYTES))

/**
 * struct softrc_opcode_info - what the engine needs to know of an opcode
 * @name:	"SEND_FIRST" etc., NULL for an unused code
 * @flags:	SOFTRC_OPF_* | SOFTRC_H_*
 * @hdr_len:	BTH plus extension headers, in bytes
 * @off:	byte offset of each present extension header from the BTH
 */
struct softrc_opcode_info {
	const char *name;
	u32 flags;
	u8 hdr_len;
	u8 off[SOFTRC_HDR_NR];
};

extern const struct softrc_opcode_info softrc_eng_opcode_table[SOFTRC_OPCODE_TABLE_NR];

/*
 * The descriptor of an opcode softrc speaks (RC, UC or UD), or NULL for a
 * hole or another transport; callers check the transport is the QP's.
 */
static inline const struct softrc_opcode_info *softrc_opcode_get(u8 opcode)
{
	const struct softrc_opcode_info *info = &softrc_eng_opcode_table[opcode];

	return info->name ? info : NULL;
}

static inline u8 softrc_opcode_transport(u8 opcode)
{
	return opcode & SOFTRC_OPCODE_TRANSPORT_MASK;
}

const char *softrc_eng_opcode_name(u8 opcode);

#endif /* SOFTRC_OPCODE_H */

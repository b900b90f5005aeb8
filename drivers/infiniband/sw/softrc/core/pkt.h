/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A parsed RC or UD packet: what the parser hands the engine and what the
 * builder turns back into headers.
 *
 * Context: none (plain data). The core never sees an sk_buff: the caller
 * gives it the header bytes (at least the opcode's hdr_len, contiguous)
 * and the packet's total length; the payload stays where it is and is
 * named by an offset from the BTH.
 */
#ifndef SOFTRC_CORE_PKT_H
#define SOFTRC_CORE_PKT_H

#include <softrc/wire.h>

/**
 * struct softrc_pkt - decoded transport headers of one packet
 * @op:		opcode descriptor (never NULL in a parsed packet)
 * @opcode:	BTH opcode
 * @se:		solicited event
 * @ackreq:	AckReq bit
 * @padcnt:	BTH PadCnt
 * @pkey:	BTH P_Key
 * @dqpn:	destination QP number
 * @psn:	packet sequence number
 * @qkey:	DETH Q_Key (UD)
 * @sqpn:	DETH source QP number (UD)
 * @flush_type: FETH placement type (SOFTRC_FLUSH_GLOBAL | _PERSISTENT)
 * @flush_level: FETH selectivity level (SOFTRC_FLUSH_RANGE or _MR)
 * @va:		RETH or AtomicETH virtual address
 * @rkey:	RETH or AtomicETH R_Key
 * @dma_len:	RETH DMA length (8 for atomics)
 * @swap_add:	AtomicETH swap (CMP_SWAP) or add (FETCH_ADD) data
 * @compare:	AtomicETH compare data
 * @syndrome:	AETH syndrome
 * @msn:	AETH MSN
 * @orig:	AtomicAckETH original remote data
 * @imm:	ImmDt, in network byte order as verbs carry it
 * @inv_rkey:	IETH R_Key
 * @payload_off: payload offset from the BTH
 * @payload_len: payload bytes, without pad and ICRC
 */
struct softrc_pkt {
	const struct softrc_opcode_info *op;
	u8 opcode;
	bool se;
	bool ackreq;
	u8 padcnt;
	u16 pkey;
	u32 dqpn;
	u32 psn;
	u32 qkey;
	u32 sqpn;
	u8 flush_type;
	u8 flush_level;
	u64 va;
	u32 rkey;
	u32 dma_len;
	u64 swap_add;
	u64 compare;
	u8 syndrome;
	u32 msn;
	u64 orig;
	__be32 imm;
	u32 inv_rkey;
	u32 payload_off;
	u32 payload_len;
};

static inline bool softrc_pkt_has(const struct softrc_pkt *pkt, u32 flag)
{
	return pkt->op->flags & flag;
}

#endif /* SOFTRC_CORE_PKT_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 invariant CRC (IBTA Vol 1 Annex A17.3.3; the exact definition
 * that reproduces the rxe trace: tools/vectors/capture.sh).
 *
 * Context: pure functions on caller-owned memory, safe in any context;
 * never sleeps. Incremental so the glue can feed sk_buff fragments:
 *
 *	crc = softrc_eng_icrc_begin(l3, ipv6);	  IP + UDP + BTH, masked
 *	crc = softrc_icrc_update(crc, p, len);	  ext headers, payload, pad
 *	icrc = softrc_icrc_final(crc);
 *	ok = icrc == softrc_icrc_get(trailer);	  or softrc_icrc_put()
 *
 * The input is 8 bytes of 0xFF (the masked LRH), the IP header with the
 * variant fields set to all ones (IPv4 TOS, TTL, header checksum; IPv6
 * traffic class, flow label, hop limit), the UDP header with its checksum
 * set to 0xFFFF, the BTH with resv8a set to 0xFF, then everything up to
 * the ICRC. CRC-32/IEEE (reflected 0xEDB88320, init and final xor all
 * ones); the ICRC is stored little-endian in the last 4 bytes.
 */
#ifndef SOFTRC_CORE_ICRC_H
#define SOFTRC_CORE_ICRC_H

#include <softrc/platform.h>

#define SOFTRC_IPV4_HDR_BYTES	20
#define SOFTRC_IPV6_HDR_BYTES	40
#define SOFTRC_UDP_HDR_BYTES	8

/* slice-by-8 tables of the reflected CRC-32 polynomial 0xEDB88320 */
extern const u32 softrc_eng_crc32_table[8][256];

/* Raw CRC-32 register update (no pre/post inversion). */
u32 softrc_eng_crc32_update(u32 reg, const void *p, u32 len);

/* The same update, by shifts and XORs instead of tables (icrc.c). */
u32 softrc_eng_crc32_fold(u32 reg, const void *p, u32 len);

/*
 * Bytes softrc_eng_icrc_begin() reads at @l3: IP header (IPv4: IHL * 4,
 * options included; IPv6: 40, no extension headers), UDP header and BTH.
 */
u32 softrc_eng_icrc_hdr_len(const void *l3, bool ipv6);

/* Start an ICRC: the prefix and the masked IP, UDP and BTH headers. */
u32 softrc_eng_icrc_begin(const void *l3, bool ipv6);

/* Continue with @len bytes at @p (extension headers, payload, pad). */
static inline u32 softrc_icrc_update(u32 crc, const void *p, u32 len)
{
	return softrc_eng_crc32_update(crc, p, len);
}

/* The ICRC value of a finished computation. */
static inline u32 softrc_icrc_final(u32 crc)
{
	return ~crc;
}

/* Read / write the 4 ICRC trailer bytes (little-endian on the wire). */
static inline u32 softrc_icrc_get(const void *trailer)
{
	const u8 *b = trailer;

	return b[0] | (u32)b[1] << 8 | (u32)b[2] << 16 | (u32)b[3] << 24;
}

static inline void softrc_icrc_put(void *trailer, u32 icrc)
{
	u8 *b = trailer;

	b[0] = icrc;
	b[1] = icrc >> 8;
	b[2] = icrc >> 16;
	b[3] = icrc >> 24;
}

/*
 * ICRC of a contiguous packet: @len bytes from the IP header up to, not
 * including, the ICRC (@len >= softrc_eng_icrc_hdr_len()).
 */
u32 softrc_eng_icrc_calc(const void *l3, bool ipv6, u32 len);

/* True if the 4 bytes after the @len bytes at @l3 hold the right ICRC. */
bool softrc_eng_icrc_check(const void *l3, bool ipv6, u32 len);

#endif /* SOFTRC_CORE_ICRC_H */

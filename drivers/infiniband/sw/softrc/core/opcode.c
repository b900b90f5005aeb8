// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The opcode descriptor table, generated from SOFTRC_OPCODES.
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * Context: constant data, safe from any context.
 */
#include <softrc/opcode.h>

#define SOFTRC__OPCODE_INFO(n, code, f)					\
	[code] = {							\
		.name = #n,						\
		.flags = (f),						\
		.hdr_len = SOFTRC_HDR_LEN(f),				\
		.off = {						\
			[SOFTRC_HDR_DETH] = SOFTRC_OFF_DETH(f),		\
			[SOFTRC_HDR_FETH] = SOFTRC_OFF_FETH(f),		\
			[SOFTRC_HDR_RETH] = SOFTRC_OFF_RETH(f),		\
			[SOFTRC_HDR_ATMETH] = SOFTRC_OFF_ATMETH(f),	\
			[SOFTRC_HDR_AETH] = SOFTRC_OFF_AETH(f),		\
			[SOFTRC_HDR_ATMACK] = SOFTRC_OFF_ATMACK(f),	\
			[SOFTRC_HDR_IMMDT] = SOFTRC_OFF_IMMDT(f),	\
			[SOFTRC_HDR_IETH] = SOFTRC_OFF_IETH(f),		\
		},							\
	},

const struct softrc_opcode_info softrc_eng_opcode_table[SOFTRC_OPCODE_TABLE_NR] = {
	SOFTRC_OPCODES(SOFTRC__OPCODE_INFO)
};

const char *softrc_eng_opcode_name(u8 opcode)
{
	const struct softrc_opcode_info *info = softrc_opcode_get(opcode);

	return info ? info->name : "UNKNOWN";
}

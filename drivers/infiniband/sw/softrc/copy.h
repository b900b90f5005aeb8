/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * copy.c: the payload copy of the data path and the choice, at load, of
 * the faster of two implementations (for it and for the ICRC's CRC,
 * icrc_skb.c).
 *
 * Context: softrc_copy_init and the softrc_impl_* helpers at module load
 * (process context); softrc_net_copy and softrc_skb_copy_bits in any
 * context, never sleep.
 */
#ifndef SOFTRC_COPY_H
#define SOFTRC_COPY_H

#include <linux/moduleparam.h>
#include <linux/skbuff.h>
#include <linux/types.h>

/* the load-time timing: bytes of each run, runs of which the best counts */
#define SOFTRC_BENCH_BYTES	4096
#define SOFTRC_BENCH_ROUNDS	8

/**
 * struct softrc_impl - a module parameter naming one of two implementations
 * @names:	"auto" and the two names; index 1 is the default-off one
 * @val:	0 (auto) before load, then the index in use
 */
struct softrc_impl {
	const char * const names[3];
	int val;
};

extern const struct kernel_param_ops softrc_impl_ops;
bool softrc_impl_resolve(struct softrc_impl *impl, u8 *buf,
			 bool (*pick)(u8 *buf));
u64 softrc_impl_time(u32 (*run)(bool alt, u8 *buf, u32 len), bool alt,
		     u8 *buf, u32 *res);
const char *softrc_copy_init(u8 *buf);
void softrc_net_copy(void *to, const void *from, u32 len);
u32 softrc_skb_walk(const struct sk_buff *skb, int off, int len, u32 crc,
		    u8 *to, int *left);
int softrc_skb_copy_bits(const struct sk_buff *skb, int off, void *to, int len);

#endif /* SOFTRC_COPY_H */

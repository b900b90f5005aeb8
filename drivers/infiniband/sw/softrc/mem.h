/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The data path's access to an MR's bytes (mem.c): copy, placing an skb,
 * page lookup for zero-copy TX, atomics and ATOMIC WRITE. Any context,
 * never sleeps; the caller holds a memory reference on the MR (mr.h).
 */
#ifndef SOFTRC_MEM_H
#define SOFTRC_MEM_H

#include <linux/types.h>

struct page;
struct sk_buff;
struct softrc_mr;

enum softrc_copy_dir { SOFTRC_TO_MR, SOFTRC_FROM_MR };

int softrc_mr_copy(struct softrc_mr *mr, u64 va, void *buf, u32 len,
		   enum softrc_copy_dir dir);
int softrc_mr_copy_skb(struct softrc_mr *mr, u64 va, struct sk_buff *skb,
		       int skb_off, u32 len);
int softrc_mr_page(struct softrc_mr *mr, u64 va, struct page **page,
		   u32 *page_off, u32 *len);
int softrc_mr_atomic(struct softrc_mr *mr, u64 va, bool cmp_swap, u64 swap_add,
		     u64 compare, u64 *orig);
int softrc_mr_atomic_write(struct softrc_mr *mr, u64 va, u64 value);

#endif /* SOFTRC_MEM_H */

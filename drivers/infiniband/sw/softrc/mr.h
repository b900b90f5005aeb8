/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory regions and memory access for the data path.
 *
 * Keys: (index in the device's MR xarray) << 8 | an 8-bit random key;
 * lkey == rkey. A DMA MR (get_dma_mr) covers the whole kernel virtual
 * address space (virtual DMA: addresses are kernel virtual addresses); a
 * user MR (reg_user_mr) pins its pages with ib_umem and keeps a page
 * array indexed from its iova.
 *
 * Lookups (softrc_mr_get) are RCU + refcount and safe in any context;
 * every get is paired with a softrc_mr_put. The access functions never
 * sleep and may run in softirq; they expect softrc_mr_check() to have
 * passed but re-check bounds themselves.
 */
#ifndef SOFTRC_MR_H
#define SOFTRC_MR_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/skbuff.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

struct softrc_dev;

enum softrc_mr_state {
	SOFTRC_MR_VALID,
	SOFTRC_MR_INVALID,	/* invalidated (LOCAL_INV / SEND_WITH_INV) */
};

/**
 * struct softrc_mr - a memory region
 * @ibmr:	the core's MR (driver-allocated)
 * @sdev:	the device
 * @pd:		the PD, set before the MR is published (the core only sets
 *		ibmr.pd after the verb returns)
 * @key:	lkey == rkey
 * @access:	IB_ACCESS_* flags
 * @state:	enum softrc_mr_state; written with WRITE_ONCE
 * @is_dma:	a DMA MR: any kernel virtual address, no page array
 * @iova:	first byte's address as the consumer names it
 * @length:	bytes
 * @page_offset: offset of @iova in the first page
 * @umem:	the pinned user memory (user MRs)
 * @pages:	@npages pinned pages, in order (user MRs)
 * @ref:	one reference for the xarray, one per softrc_mr_get
 * @done:	completed when @ref drops to zero (dereg waits for it)
 * @rcu:	the MR is freed after a grace period (lockless lookups)
 */
struct softrc_mr {
	struct ib_mr ibmr;
	struct softrc_dev *sdev;
	struct ib_pd *pd;
	u32 key;
	int access;
	int state;
	bool is_dma;
	u64 iova;
	u64 length;
	u32 page_offset;
	struct ib_umem *umem;
	struct page **pages;
	unsigned long npages;
	refcount_t ref;
	struct completion done;
	struct rcu_head rcu;
};

static inline struct softrc_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct softrc_mr, ibmr);
}

enum softrc_copy_dir { SOFTRC_TO_MR, SOFTRC_FROM_MR };

struct softrc_mr *softrc_mr_get(struct softrc_dev *sdev, u32 key);
void softrc_mr_put(struct softrc_mr *mr);
int softrc_mr_check(struct softrc_mr *mr, struct ib_pd *pd, u32 key, u64 va,
		    u64 len, int access);
int softrc_mr_copy(struct softrc_mr *mr, u64 va, void *buf, u32 len,
		   enum softrc_copy_dir dir);
int softrc_mr_copy_skb(struct softrc_mr *mr, u64 va, struct sk_buff *skb,
		       int skb_off, u32 len);
int softrc_mr_page(struct softrc_mr *mr, u64 va, struct page **page,
		   u32 *page_off, u32 *len);
int softrc_mr_atomic(struct softrc_mr *mr, u64 va, bool cmp_swap, u64 swap_add,
		     u64 compare, u64 *orig);
int softrc_mr_invalidate(struct softrc_dev *sdev, struct ib_pd *pd, u32 rkey);

/* ib_device_ops */
struct ib_mr *softrc_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *softrc_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				 u64 iova, int access, struct ib_udata *udata);
int softrc_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);

#endif /* SOFTRC_MR_H */

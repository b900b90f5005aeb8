/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory regions (mr.c): registration, L_Key lookup, and the pins the
 * data path uses. Memory windows and R_Key resolution: mw.h; the data
 * path's access to an MR's bytes: mem.h.
 *
 * Keys: (index in the device's MR xarray) << 8 | an 8-bit random key;
 * lkey == rkey. Memory windows take their index from the same xarray, so
 * an rkey names an MR or an MW (softrc_rkey_get, mw.c, resolves both); an
 * lkey only ever names an MR (softrc_mr_get). A DMA MR (get_dma_mr)
 * covers the whole kernel virtual address space (virtual DMA: addresses
 * are kernel virtual addresses); a user MR (reg_user_mr) pins its pages
 * with ib_umem and keeps a page array indexed from its iova.
 *
 * Lookups (softrc_mr_get) are RCU + refcount and safe in any context;
 * every get is paired with a softrc_mr_put. The access functions (mem.h)
 * never sleep and may run in softirq; they expect softrc_mr_check() to
 * have passed but re-check bounds themselves.
 *
 * Pins (who holds what, and until when: the table at the top of mr.c):
 * a key is looked up and checked once, when a WQE is posted (L_Key) or a
 * request starts a message (R_Key); what the check approved is pinned and
 * every later use goes through the pin, never through a new lookup by
 * number. A pin keeps the structure, not the memory: each use enters it
 * (softrc_mr_enter / softrc_pin_enter), which fails once the MR was
 * deregistered, or the fast-register MR or the MW invalidated or rebound.
 */
#ifndef SOFTRC_MR_H
#define SOFTRC_MR_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

struct softrc_dev;

/* What an entry of the device's key xarray is (struct softrc_key_obj). */
enum softrc_key_kind {
	SOFTRC_KEY_MR,
	SOFTRC_KEY_MW,
};

/* Embedded in MRs and MWs; the key xarray points at it. */
struct softrc_key_obj {
	u8 kind;
};

enum softrc_mr_state {
	SOFTRC_MR_VALID,
	SOFTRC_MR_INVALID,	/* invalidated (LOCAL_INV / SEND_WITH_INV) */
	SOFTRC_MR_DEAD,		/* dereg_mr has begun: never valid again */
};

/**
 * struct softrc_mr - a memory region
 * @ibmr:	the core's MR (driver-allocated)
 * @sdev:	the device
 * @pd:		the PD, set before the MR is published (the core only sets
 *		ibmr.pd after the verb returns)
 * @key:	lkey == rkey
 * @access:	IB_ACCESS_* flags
 * @state:	enum softrc_mr_state; set with a release (or a cmpxchg),
 *		read with an acquire, so a reader that sees VALID sees the
 *		range, key and page map written before it
 * @is_dma:	a DMA MR: any kernel virtual address, no page array
 * @iova:	first byte's address as the consumer names it
 * @length:	bytes
 * @page_offset: offset of @iova in the first page
 * @umem:	the pinned user memory (user MRs)
 * @pages:	@npages pinned pages, in order (user MRs)
 * @ref:	users of the memory: one for the xarray, one per
 *		softrc_mr_get or entered pin (held only for one access),
 *		one per MW bound to the MR
 * @done:	completed when @ref drops to zero (dereg waits for it, then
 *		releases the pages)
 * @pins:	users of the structure: one for the registration (dropped at
 *		the end of dereg_mr), one per pin; the last one frees it
 *		after an RCU grace period
 * @gen:	fast-register MR: bumped at each invalidation, so a pin taken
 *		before it no longer enters after a re-registration
 * @rcu:	the MR is freed after a grace period (lockless lookups)
 * @kobj:	its entry in the key xarray (kind SOFTRC_KEY_MR)
 * @is_fast:	a fast-register MR (alloc_mr): free (SOFTRC_MR_INVALID)
 *		until an IB_WR_REG_MR registers the pages map_mr_sg set
 * @fmap:	fast-register MR: @fmax page addresses (kernel virtual: the
 *		device uses virtual DMA), @fn of them set by map_mr_sg
 * @fmax:	capacity of @fmap
 * @fn:		pages mapped
 * @fshift:	log2 of the page size of @fmap
 * @bind_lock:	protects @num_mw and @dereg
 * @num_mw:	MWs bound to this MR
 * @dereg:	dereg_mr has begun: no new binds
 */
struct softrc_mr {
	struct ib_mr ibmr;
	struct softrc_key_obj kobj;
	bool is_fast;
	u64 *fmap;
	u32 fmax;
	u32 fn;
	u32 fshift;
	spinlock_t bind_lock;	/* @num_mw, @dereg */
	unsigned int num_mw;
	bool dereg;
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
	refcount_t pins;
	u32 gen;
	struct rcu_head rcu;
};

static inline struct softrc_mr *to_smr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct softrc_mr, ibmr);
}

/*
 * Is @mr valid? An acquire (H2): pairs with the release that made a fast
 * MR valid, so the range, key and page map it wrote are seen.
 */
static inline bool softrc_mr_valid(struct softrc_mr *mr)
{
	/* acquire: see above */
	return smp_load_acquire(&mr->state) == SOFTRC_MR_VALID;
}

/* Is [va, va + len) inside the MR? (len may be 0) */
static inline bool softrc_mr_in_bounds(const struct softrc_mr *mr, u64 va,
				       u64 len)
{
	if (mr->is_dma)
		return va + len >= va;
	return va >= mr->iova && va - mr->iova <= mr->length &&
	       len <= mr->length - (va - mr->iova);
}

struct softrc_mr *softrc_mr_get(struct softrc_dev *sdev, u32 key);
void softrc_mr_put(struct softrc_mr *mr);
bool softrc_mr_fast_index(struct softrc_dev *sdev, u32 key);
int softrc_mr_check(struct softrc_mr *mr, struct ib_pd *pd, u32 key, u64 va,
		    u64 len, int access);
int softrc_mr_invalidate(struct softrc_mr *mr, struct ib_pd *pd);

/* pins (see the ownership table in mr.c) */
struct softrc_mr *softrc_lkey_pin(struct softrc_dev *sdev, struct ib_pd *pd,
				  u32 lkey, u64 addr, u64 len, int access);
void softrc_mr_unpin(struct softrc_mr *mr);
bool softrc_mr_enter(struct softrc_mr *mr);
void *softrc_rkey_pin(struct softrc_dev *sdev, u32 rkey, struct ib_pd *pd,
		      u64 qp_uid, bool user, u64 va, u64 len, int access,
		      int *err);
struct softrc_mr *softrc_pin_enter(void *pin);
void softrc_pin_put(void *pin);

/* ib_device_ops */
struct ib_mr *softrc_get_dma_mr(struct ib_pd *ibpd, int access);
struct ib_mr *softrc_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				 u64 iova, int access, struct ib_udata *udata);
int softrc_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata);
int softrc_mr_fast_reg(struct softrc_mr *mr, struct ib_pd *pd, u32 key,
		       int access);
struct ib_mr *softrc_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			      u32 max_num_sg);
int softrc_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		     unsigned int *sg_offset);

#endif /* SOFTRC_MR_H */

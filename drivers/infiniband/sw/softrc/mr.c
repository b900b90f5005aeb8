// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions: registration (get_dma_mr, reg_user_mr, alloc_mr and
 * map_mr_sg, dereg_mr), the IB_WR_REG_MR of a fast-register MR and its
 * invalidation, L_Key lookup, and the pins through which the data path
 * uses what an L_Key or R_Key check approved. Memory windows and the
 * resolution of an R_Key (an MR or an MW) are in mw.c, the data path's
 * access to the bytes in mem.c, the key xarray in device.c.
 *
 * Context: the verbs run in process context and may sleep. softrc_mr_get,
 * softrc_mr_put, softrc_mr_check, the pins, softrc_mr_fast_reg and
 * softrc_mr_invalidate run in any context (softirq included; the last
 * two under the QP lock) and never sleep. Touches the MR, the pages it
 * pinned, its entry in the device's key xarray, and an MW's generation
 * object only through a pin (mw.c owns it). Locks: mr->bind_lock
 * (Documentation/softrc.rst, "Locking").
 *
 * Lifetime: an MR enters the xarray only once fully built and holds one
 * reference for it. Lookups take a reference under RCU with
 * refcount_inc_not_zero. dereg_mr marks the MR dead (no pin enters it
 * again), erases the entry, drops that reference, waits until every
 * lookup and every access in progress has put its reference, then unpins
 * the pages; the structure is freed after an RCU grace period once the
 * last pin (WQE shadows, responder resources) is dropped too. A bound MW
 * holds a reference on its MR (mw.c); dereg_mr of an MR with windows
 * bound fails (-EBUSY), as in rxe.
 *
 * Ownership: who holds a reference to an MR / MW, when it is taken and
 * dropped, and in which context. "ref" keeps the memory (dereg_mr waits
 * for it before releasing the pages), "pin" keeps the structure only (a
 * pinned MR whose dereg ran stays allocated, dead, until the last pin).
 *
 *  holder                     | what                 | taken / dropped (context)
 *  ---------------------------+----------------------+---------------------------
 *  the key xarray             | mr->ref              | publish (process) /
 *                             |                      | dereg_mr (process)
 *  the registration           | mr->pins             | alloc (process) / end of
 *                             |                      | dereg_mr (process)
 *  a bound MW                 | mr->ref, num_mw      | BIND_MW (QP lock) / unbind,
 *                             |                      | invalidate, dealloc_mw
 *  the MW                     | mw->life             | alloc_mw / dealloc_mw
 *                             |                      | (process)
 *  a send WQE shadow SGE      | mr->pins (L_Key)     | post (QP lock) / its CQE
 *                             |                      | or flush, slot reuse,
 *                             |                      | reset, destroy (QP lock)
 *  a receive shadow SGE (RQ,  | mr->pins (L_Key)     | post_recv / RQ or SRQ
 *  user RQ, SRQ)              |                      | refill (QP lock) / as above
 *  the open WRITE context     | rkey pin             | WRITE FIRST/ONLY (QP lock)
 *                             |                      | / LAST, ERROR, reset
 *  a READ resource            | rkey pin             | READ request (QP lock) /
 *  (softrc_rd_res), replays   |                      | slot reuse, ERROR, reset,
 *                             |                      | destroy (QP lock)
 *  an ATOMIC                  | rkey pin             | only while it executes
 *  one access through a pin   | mr->ref              | softrc_mr_enter /
 *  (copy, place, atomic, frag)|                      | softrc_pin_enter, then
 *                             |                      | softrc_mr_put (QP lock)
 *  a softrc_mr_get lookup     | mr->ref              | the check (any) / at once
 *
 * An rkey pin is the MR itself for a registered (user or DMA) MR, which
 * only ever goes from VALID to DEAD; for a fast-register MR or an MW it
 * is a small struct softrc_pin holding the MR's pin plus the generation
 * (mr->gen, or mw->life) the check saw, so an invalidation, rebind or
 * dealloc_mw makes it refuse entry. A user QP never reaches a DMA MR
 * (no kernel PD is a user QP's, and softrc_rkey_pin refuses one), and
 * the local DMA L_Key (IBK_LOCAL_DMA_LKEY) only works for kernel QPs.
 */
#include <linux/slab.h>

#include "compat.h"
#include "softrc.h"
#include "device.h"
#include "mr.h"
#include "mw.h"

/*
 * Access flags an MR may carry: no on-demand paging, no zero-based; the
 * FLUSH GLOBAL right where the kernel names it, never FLUSH PERSISTENT
 * (no persistent memory: compat.h).
 */
#define SOFTRC_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			  IB_ACCESS_MW_BIND | IB_ACCESS_HUGETLB | \
			  IB_ACCESS_OPTIONAL | SOFTRC_MR_ACCESS_FLUSH)

/**
 * softrc_mr_get() - find the MR named by @key and take a reference
 * @sdev:	the device
 * @key:	an lkey or rkey; all 32 bits must match
 *
 * Context: any; never sleeps.
 * Return: the MR, to be released with softrc_mr_put(), or NULL.
 */
struct softrc_mr *softrc_mr_get(struct softrc_dev *sdev, u32 key)
{
	struct softrc_key_obj *k;
	struct softrc_mr *mr = NULL;

	rcu_read_lock();
	k = xa_load(&sdev->mr_xa, key >> 8);
	if (k && k->kind == SOFTRC_KEY_MR) {
		mr = container_of(k, struct softrc_mr, kobj);
		if (mr->key != key || !refcount_inc_not_zero(&mr->ref))
			mr = NULL;
	}
	rcu_read_unlock();
	return mr;
}

/**
 * softrc_mr_fast_index() - does @key's index name a fast-register MR?
 * @sdev:	the device
 * @key:	an lkey (its key byte may change with a REG_MR not yet run)
 *
 * Context: any; never sleeps.
 */
bool softrc_mr_fast_index(struct softrc_dev *sdev, u32 key)
{
	struct softrc_key_obj *k;
	bool fast = false;

	rcu_read_lock();
	k = xa_load(&sdev->mr_xa, key >> 8);
	if (k && k->kind == SOFTRC_KEY_MR)
		fast = container_of(k, struct softrc_mr, kobj)->is_fast;
	rcu_read_unlock();
	return fast;
}

void softrc_mr_put(struct softrc_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->done);
}

/* ---- pins (the ownership table above) ------------------------------ */

/**
 * struct softrc_pin - an R_Key pin on what can be invalidated and
 * re-registered under the same structure: a fast-register MR or an MW
 * @mr:		the MR holding the bytes (pinned: mr->pins)
 * @life:	the MW's generation object (referenced), NULL for an MR
 * @gen:	@life->gen or @mr->gen when the check passed
 */
struct softrc_pin {
	struct softrc_mr *mr;
	struct softrc_mw_life *life;
	u32 gen;
};

/* Handles with this bit set are a struct softrc_pin, else the MR itself. */
#define SOFTRC_PIN_OBJ	1UL

void softrc_mr_unpin(struct softrc_mr *mr)
{
	if (refcount_dec_and_test(&mr->pins))
		kfree_rcu(mr, rcu);
}

/**
 * softrc_mr_enter() - begin one access to a pinned MR's memory
 * @mr:		the MR (pinned, or referenced some other way)
 *
 * Context: any; never sleeps.
 * Return: true with a memory reference (end the access with
 * softrc_mr_put()), false once dereg_mr began or the MR is invalid.
 */
bool softrc_mr_enter(struct softrc_mr *mr)
{
	if (!refcount_inc_not_zero(&mr->ref))
		return false;
	if (softrc_mr_valid(mr))
		return true;
	softrc_mr_put(mr);
	return false;
}

/**
 * softrc_lkey_pin() - check a local SGE and pin its MR
 * @sdev:	the device
 * @pd:		the posting QP's PD
 * @lkey:	the SGE's L_Key
 * @addr:	first byte
 * @len:	bytes (> 0)
 * @access:	IB_ACCESS_* needed (0 = local read)
 *
 * Only for registered MRs whose key and range cannot change (user and
 * DMA MRs); a fast-register MR's L_Key is checked at every use instead.
 *
 * Context: any; never sleeps.
 * Return: the pinned MR (softrc_mr_unpin()), or NULL if the check fails.
 */
struct softrc_mr *softrc_lkey_pin(struct softrc_dev *sdev, struct ib_pd *pd,
				  u32 lkey, u64 addr, u64 len, int access)
{
	struct softrc_mr *mr = softrc_mr_get(sdev, lkey);

	if (!mr)
		return NULL;
	if (mr->is_fast || softrc_mr_check(mr, pd, lkey, addr, len, access)) {
		softrc_mr_put(mr);
		return NULL;
	}
	refcount_inc(&mr->pins);
	softrc_mr_put(mr);
	return mr;
}

/**
 * softrc_rkey_pin() - check an R_Key for a message and pin what it grants
 * @sdev:	the device
 * @rkey:	the key
 * @pd:		the QP's PD
 * @qp_uid:	the QP's softrc_qp.uid
 * @user:	a user QP (it may never reach a DMA MR)
 * @va:		first byte
 * @len:	bytes (> 0)
 * @access:	IB_ACCESS_REMOTE_* rights needed
 * @err:	out: why not, when NULL is returned
 *
 * The MR's own range and rights, or a bound MW's window (IBTA 10.6.7).
 *
 * Context: any (QP lock held); never sleeps (GFP_ATOMIC for a
 * fast-register MR's or an MW's pin).
 * Return: the pin (softrc_pin_put()), or NULL.
 */
void *softrc_rkey_pin(struct softrc_dev *sdev, u32 rkey, struct ib_pd *pd,
		      u64 qp_uid, bool user, u64 va, u64 len, int access,
		      int *err)
{
	struct softrc_mem_win win;
	struct softrc_pin *p;

	*err = softrc_rkey_get(sdev, rkey, &win);
	if (*err)
		return NULL;
	*err = softrc_win_check(&win, pd, qp_uid, va, len, access);
	if (!*err && user && win.mr->is_dma)
		*err = -EINVAL;
	if (*err)
		goto out;
	if (!win.life && !win.mr->is_fast) {
		refcount_inc(&win.mr->pins);
		softrc_mr_put(win.mr);
		return win.mr;
	}
	p = kmalloc(sizeof(*p), GFP_ATOMIC);
	if (!p) {
		*err = -ENOMEM;
		goto out;
	}
	p->mr = win.mr;
	p->life = win.life;
	p->gen = win.gen;
	refcount_inc(&win.mr->pins);
	if (p->life)
		refcount_inc(&p->life->ref);
	/* the window went away between the lookup and now? then no pin */
	if (p->life && READ_ONCE(p->life->gen) != p->gen) {
		softrc_pin_put((void *)((uintptr_t)p | SOFTRC_PIN_OBJ));
		*err = -EINVAL;
		goto out;
	}
	softrc_mr_put(win.mr);
	return (void *)((uintptr_t)p | SOFTRC_PIN_OBJ);
out:
	softrc_mr_put(win.mr);
	return NULL;
}

/**
 * softrc_pin_enter() - begin one access through an R_Key pin
 * @pin:	from softrc_rkey_pin()
 *
 * Context: any; never sleeps.
 * Return: the MR with a memory reference (end with softrc_mr_put()), or
 * NULL: deregistered, invalidated, rebound or deallocated since the check.
 */
struct softrc_mr *softrc_pin_enter(void *pin)
{
	struct softrc_pin *p;

	if (!((uintptr_t)pin & SOFTRC_PIN_OBJ))
		return softrc_mr_enter(pin) ? pin : NULL;
	p = (void *)((uintptr_t)pin & ~SOFTRC_PIN_OBJ);
	if (!softrc_mr_enter(p->mr))
		return NULL;
	if (READ_ONCE(*(p->life ? &p->life->gen : &p->mr->gen)) == p->gen)
		return p->mr;
	softrc_mr_put(p->mr);
	return NULL;
}

/**
 * softrc_pin_put() - drop an R_Key pin
 * @pin:	from softrc_rkey_pin()
 *
 * Context: any; never sleeps.
 */
void softrc_pin_put(void *pin)
{
	struct softrc_pin *p;

	if (!((uintptr_t)pin & SOFTRC_PIN_OBJ)) {
		softrc_mr_unpin(pin);
		return;
	}
	p = (void *)((uintptr_t)pin & ~SOFTRC_PIN_OBJ);
	if (p->life)
		softrc_mw_life_put(p->life);
	softrc_mr_unpin(p->mr);
	kfree(p);
}

/**
 * softrc_mr_check() - may @len bytes at @va be accessed through @mr?
 * @mr:		the MR from softrc_mr_get()
 * @pd:		the PD of the QP doing the access
 * @key:	the key the WQE or packet named
 * @va:		first byte
 * @len:	bytes; 0 skips the bounds check
 * @access:	IB_ACCESS_* rights needed (0 = local read)
 *
 * Return: 0; -EACCES if a right is missing; -EINVAL for a key or PD
 * mismatch, an invalidated MR, or bytes outside the MR.
 */
int softrc_mr_check(struct softrc_mr *mr, struct ib_pd *pd, u32 key, u64 va,
		    u64 len, int access)
{
	if (!softrc_mr_valid(mr) || mr->key != key || mr->pd != pd)
		return -EINVAL;
	if (access & ~mr->access)
		return -EACCES;
	if (len && !softrc_mr_in_bounds(mr, va, len))
		return -EINVAL;
	return 0;
}

static struct softrc_mr *softrc_mr_alloc(struct ib_pd *ibpd, int access)
{
	struct softrc_mr *mr;

	if (access & ~SOFTRC_MR_ACCESS)
		return ERR_PTR(-EOPNOTSUPP);
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	mr->sdev = to_sdev(ibpd->device);
	mr->pd = ibpd;
	mr->access = access;
	mr->state = SOFTRC_MR_VALID;
	mr->kobj.kind = SOFTRC_KEY_MR;
	spin_lock_init(&mr->bind_lock);
	refcount_set(&mr->ref, 1);
	refcount_set(&mr->pins, 1);
	init_completion(&mr->done);
	return mr;
}

/* Give a fully built MR its key and make it visible to lookups. */
static int softrc_mr_publish(struct softrc_mr *mr)
{
	int err;

	mr->ibmr.iova = mr->iova;
	mr->ibmr.length = mr->length;
	err = softrc_key_alloc(mr->sdev, &mr->kobj, &mr->key);
	if (err)
		return err;
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	return 0;
}

struct ib_mr *softrc_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct softrc_mr *mr = softrc_mr_alloc(ibpd, access);
	int err;

	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->is_dma = true;
	mr->iova = 0;
	mr->length = U64_MAX;
	err = softrc_mr_publish(mr);
	if (err) {
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

/* Fill mr->pages from the pinned umem. */
static int softrc_mr_fill_pages(struct softrc_mr *mr, u64 start, u64 length)
{
	struct sg_page_iter piter;
	unsigned long i = 0;

	mr->page_offset = offset_in_page(start);
	mr->npages = DIV_ROUND_UP_ULL(mr->page_offset + length, PAGE_SIZE);
	mr->pages = kvcalloc(mr->npages, sizeof(*mr->pages), GFP_KERNEL);
	if (!mr->pages)
		return -ENOMEM;
	for_each_sgtable_page(&mr->umem->sgt_append.sgt, &piter, 0) {
		if (i == mr->npages)
			break;
		mr->pages[i++] = sg_page_iter_page(&piter);
	}
	return i == mr->npages ? 0 : -EFAULT;
}

struct ib_mr *softrc_reg_user_mr(struct ib_pd *ibpd, u64 start, u64 length,
				 u64 iova, int access, struct ib_udata *udata)
{
	struct softrc_mr *mr;
	int err;

	if (!length || iova + length < iova || start + length < start)
		return ERR_PTR(-EINVAL);
	mr = softrc_mr_alloc(ibpd, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = iova;
	mr->length = length;

	mr->umem = ib_umem_get(ibpd->device, start, length, access);
	if (IS_ERR(mr->umem)) {
		err = PTR_ERR(mr->umem);
		mr->umem = NULL;
		goto err_free;
	}
	err = softrc_mr_fill_pages(mr, start, length);
	if (err)
		goto err_release;
	err = softrc_mr_publish(mr);
	if (err)
		goto err_release;
	ibdev_dbg(ibpd->device, "mr %#x: iova %#llx len %llu pages %lu access %#x\n",
		  mr->key, iova, length, mr->npages, access);
	return &mr->ibmr;

err_release:
	kvfree(mr->pages);
	ib_umem_release(mr->umem);
err_free:
	kfree(mr);
	return ERR_PTR(err);
}

int softrc_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct softrc_mr *mr = to_smr(ibmr);

	/* windows bound to it keep it (rxe does the same) */
	spin_lock_bh(&mr->bind_lock);
	if (mr->num_mw) {
		spin_unlock_bh(&mr->bind_lock);
		return -EBUSY;
	}
	mr->dereg = true;
	spin_unlock_bh(&mr->bind_lock);

	/* pins stop entering; then no new lookups; then wait for the users */
	xchg(&mr->state, SOFTRC_MR_DEAD);
	xa_erase(&mr->sdev->mr_xa, mr->key >> 8);
	softrc_mr_put(mr);
	wait_for_completion(&mr->done);

	/* nobody is inside and nobody can enter again: the pages go */
	ib_umem_release(mr->umem);
	mr->umem = NULL;
	kvfree(mr->pages);
	mr->pages = NULL;
	kvfree(mr->fmap);
	mr->fmap = NULL;
	softrc_mr_unpin(mr);	/* the registration's; pins may outlive it */
	return 0;
}

/**
 * softrc_alloc_mr() - a fast-register MR for kernel ULPs
 * @ibpd:	the PD
 * @type:	only IB_MR_TYPE_MEM_REG
 * @max_num_sg:	pages it may map (<= SOFTRC_MAX_FAST_REG_PAGES)
 *
 * It stays free (no access through its keys) until an IB_WR_REG_MR
 * registers what softrc_map_mr_sg() mapped.
 */
struct ib_mr *softrc_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
			      u32 max_num_sg)
{
	struct softrc_mr *mr;
	int err;

	if (type != IB_MR_TYPE_MEM_REG)
		return ERR_PTR(-EOPNOTSUPP);
	if (!max_num_sg || max_num_sg > SOFTRC_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = softrc_mr_alloc(ibpd, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->is_fast = true;
	mr->state = SOFTRC_MR_INVALID;
	mr->fmax = max_num_sg;
	mr->fmap = kvcalloc(max_num_sg, sizeof(*mr->fmap), GFP_KERNEL);
	err = mr->fmap ? softrc_mr_publish(mr) : -ENOMEM;
	if (err) {
		kvfree(mr->fmap);
		kfree(mr);
		return ERR_PTR(err);
	}
	return &mr->ibmr;
}

static int softrc_mr_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct softrc_mr *mr = to_smr(ibmr);

	if (mr->fn == mr->fmax)
		return -ENOMEM;
	mr->fmap[mr->fn++] = addr;
	return 0;
}

/* Map the pages of @sg for the next IB_WR_REG_MR (the MR must be free). */
int softrc_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg, int sg_nents,
		     unsigned int *sg_offset)
{
	struct softrc_mr *mr = to_smr(ibmr);

	mr->fn = 0;
	return ib_sg_to_pages(ibmr, sg, sg_nents, sg_offset,
			      softrc_mr_set_page);
}

/**
 * softrc_mr_fast_reg() - execute an IB_WR_REG_MR (in SQ order)
 * @mr:		a free fast-register MR of @pd
 * @pd:		the posting QP's PD
 * @key:	the new key; its key byte (7..0) replaces the MR's
 * @access:	IB_ACCESS_* rights
 *
 * Registers the range map_mr_sg set (ibmr.iova, ibmr.length, page size).
 * Context: under the QP lock; never sleeps.
 * Return: 0, or -EINVAL (not a free fast-register MR of @pd, bad rights).
 */
int softrc_mr_fast_reg(struct softrc_mr *mr, struct ib_pd *pd, u32 key,
		       int access)
{
	u32 shift = ilog2(mr->ibmr.page_size);
	/* acquire: an invalidation's writes are seen before we reuse it */
	int state = smp_load_acquire(&mr->state);

	if (!mr->is_fast || mr->pd != pd || state != SOFTRC_MR_INVALID ||
	    (access & ~SOFTRC_MR_ACCESS) || !mr->fn ||
	    shift < 12 || shift > 30 ||
	    ((mr->ibmr.iova & ((1ull << shift) - 1)) + mr->ibmr.length) >
	    ((u64)mr->fn << shift))
		return -EINVAL;
	mr->access = access;
	mr->iova = mr->ibmr.iova;
	mr->length = mr->ibmr.length;
	mr->fshift = shift;
	mr->key = (mr->key & ~0xffu) | (key & 0xff);
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	/*
	 * release: the range and key are visible before the MR is valid; a
	 * dereg_mr that began meanwhile (DEAD) keeps it dead
	 */
	if (cmpxchg_release(&mr->state, SOFTRC_MR_INVALID, SOFTRC_MR_VALID) !=
	    SOFTRC_MR_INVALID)
		return -EINVAL;
	return 0;
}

/**
 * softrc_mr_invalidate() - LOCAL_INV or SEND_WITH_INV of an MR's key
 * @mr:		the MR the key named (referenced)
 * @pd:		the invalidating QP's PD
 *
 * Only a registered fast-register MR of @pd may be invalidated (IBTA
 * 10.6.7): it becomes free until the next IB_WR_REG_MR.
 *
 * Context: any; never sleeps.
 * Return: 0, or -EINVAL.
 */
int softrc_mr_invalidate(struct softrc_mr *mr, struct ib_pd *pd)
{
	/* a registered fast-register MR of the QP's PD becomes free */
	if (mr->is_fast && mr->pd == pd &&
	    cmpxchg(&mr->state, SOFTRC_MR_VALID, SOFTRC_MR_INVALID) ==
	    SOFTRC_MR_VALID) {
		/* before a re-registration can make it valid again */
		WRITE_ONCE(mr->gen, mr->gen + 1);
		return 0;
	}
	return -EINVAL;
}

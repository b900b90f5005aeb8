// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory regions and memory windows: registration (get_dma_mr,
 * reg_user_mr, dereg_mr), MW allocation, binding and invalidation, key
 * lookup (an lkey names an MR; an rkey an MR or an MW), and the memory
 * access the data path does through an MR (copy, copy from an skb, page
 * lookup for zero-copy TX, atomics). Also the per-device object tables
 * (MRs and MWs, AHs, SRQs).
 *
 * Context: the verbs run in process context and may sleep. softrc_mr_get,
 * softrc_mr_put, softrc_mr_check and the access functions run in any
 * context (softirq included) and never sleep. Touches the device's MR
 * xarray, the MR and the pinned pages it names.
 *
 * Lifetime: an MR enters the xarray only once fully built and holds one
 * reference for it. Lookups take a reference under RCU with
 * refcount_inc_not_zero. dereg_mr marks the MR dead (no pin enters it
 * again), erases the entry, drops that reference, waits until every
 * lookup and every access in progress has put its reference, then unpins
 * the pages; the structure is freed after an RCU grace period once the
 * last pin (WQE shadows, responder resources) is dropped too.
 *
 * Memory windows share the key xarray (their rkey's index bits 31..8 come
 * from it). A bound MW holds a reference on its MR and counts in
 * mr->num_mw; dereg_mr of an MR with windows bound fails (-EBUSY), as in
 * rxe. Lookups find an MW under RCU and read its binding under mw->lock;
 * dealloc_mw unbinds, erases the entry and waits for an RCU grace period
 * before the RDMA core frees the structure. Lock order: mw->lock, then
 * mr->bind_lock.
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
 * Key indices are allocated cyclically, so a freed index is not handed
 * out again until the whole space went round.
 */
#include <linux/highmem.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "compat.h"
#include "softrc.h"
#include "mr.h"
#include "net.h"

/*
 * Access flags an MR may carry: no on-demand paging, no zero-based; the
 * FLUSH GLOBAL right where the kernel names it, never FLUSH PERSISTENT
 * (no persistent memory: compat.h).
 */
#define SOFTRC_MR_ACCESS (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			  IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			  IB_ACCESS_MW_BIND | IB_ACCESS_HUGETLB | \
			  IB_ACCESS_OPTIONAL | SOFTRC_MR_ACCESS_FLUSH)

/* Rights a window may grant: remote ones (LOCAL_WRITE is ignored). */
#define SOFTRC_MW_ACCESS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			  IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE)

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

/*
 * Is @mr valid? An acquire (H2): pairs with the release that made a fast
 * MR valid, so the range, key and page map it wrote are seen.
 */
static bool softrc_mr_valid(struct softrc_mr *mr)
{
	/* acquire: see above */
	return smp_load_acquire(&mr->state) == SOFTRC_MR_VALID;
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

static void softrc_mw_life_put(struct softrc_mw_life *life)
{
	if (refcount_dec_and_test(&life->ref))
		kfree(life);
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

/* Is [va, va + len) inside the MR? (len may be 0) */
static bool softrc_mr_in_bounds(const struct softrc_mr *mr, u64 va, u64 len)
{
	if (mr->is_dma)
		return va + len >= va;
	return va >= mr->iova && va - mr->iova <= mr->length &&
	       len <= mr->length - (va - mr->iova);
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

/* Page index and in-page offset of @va in a user MR (bounds checked). */
static void softrc_mr_locate(const struct softrc_mr *mr, u64 va,
			     unsigned long *idx, u32 *off)
{
	u64 pos = mr->page_offset + (va - mr->iova);

	*idx = pos >> PAGE_SHIFT;
	*off = pos & ~PAGE_MASK;
}

/*
 * Kernel address of @va in a fast-register MR (bounds checked) and the
 * bytes from there to the end of its page.
 */
static void *softrc_mr_fast_addr(const struct softrc_mr *mr, u64 va, u32 *room)
{
	u64 mask = (1ull << mr->fshift) - 1;
	u64 pos = (va - mr->iova) + (mr->iova & mask);

	*room = (u32)min_t(u64, mask + 1 - (pos & mask), U32_MAX);
	return (void *)(uintptr_t)(mr->fmap[pos >> mr->fshift] + (pos & mask));
}

/* Copy through a fast-register MR, page by page. */
static void softrc_mr_fast_copy(struct softrc_mr *mr, u64 va, void *buf,
				u32 len, enum softrc_copy_dir dir)
{
	u32 room, chunk;
	void *addr;

	while (len) {
		addr = softrc_mr_fast_addr(mr, va, &room);
		chunk = min(len, room);
		if (dir == SOFTRC_TO_MR)
			softrc_net_copy(addr, buf, chunk);
		else
			softrc_net_copy(buf, addr, chunk);
		buf += chunk;
		va += chunk;
		len -= chunk;
	}
}

static void softrc_copy(void *mem, void *buf, u32 len, enum softrc_copy_dir dir)
{
	if (dir == SOFTRC_TO_MR)
		softrc_net_copy(mem, buf, len);
	else
		softrc_net_copy(buf, mem, len);
}

/**
 * softrc_mr_copy() - copy between @buf and the MR bytes at @va
 * @mr:		a checked MR
 * @va:		first MR byte
 * @buf:	kernel buffer of @len bytes
 * @len:	bytes
 * @dir:	SOFTRC_TO_MR or SOFTRC_FROM_MR
 *
 * Return: 0, or -EINVAL if the bytes are outside the MR.
 */
int softrc_mr_copy(struct softrc_mr *mr, u64 va, void *buf, u32 len,
		   enum softrc_copy_dir dir)
{
	unsigned long idx;
	u32 off, chunk;
	void *addr;

	if (!softrc_mr_in_bounds(mr, va, len))
		return -EINVAL;
	if (mr->is_dma) {
		softrc_copy((void *)(uintptr_t)va, buf, len, dir);
		return 0;
	}
	if (mr->is_fast) {
		softrc_mr_fast_copy(mr, va, buf, len, dir);
		return 0;
	}
	softrc_mr_locate(mr, va, &idx, &off);
	while (len) {
		chunk = min_t(u32, len, PAGE_SIZE - off);
		addr = kmap_local_page(mr->pages[idx]);
		softrc_copy(addr + off, buf, chunk, dir);
		kunmap_local(addr);
		buf += chunk;
		len -= chunk;
		idx++;
		off = 0;
	}
	return 0;
}

/**
 * softrc_mr_copy_skb() - place @len bytes of @skb from @skb_off at @va
 * @mr:		a checked MR
 * @va:		first MR byte
 * @skb:	the packet (linear or with frags)
 * @skb_off:	offset in @skb of the first byte
 * @len:	bytes
 *
 * Return: 0, -EINVAL outside the MR, -EFAULT if @skb is too short.
 */
int softrc_mr_copy_skb(struct softrc_mr *mr, u64 va, struct sk_buff *skb,
		       int skb_off, u32 len)
{
	unsigned long idx;
	u32 off, chunk;
	void *addr;
	int err;

	if (!softrc_mr_in_bounds(mr, va, len))
		return -EINVAL;
	if (mr->is_dma)
		return softrc_skb_copy_bits(skb, skb_off, (void *)(uintptr_t)va, len) ?
		       -EFAULT : 0;
	while (mr->is_fast && len) {
		addr = softrc_mr_fast_addr(mr, va, &chunk);
		chunk = min(len, chunk);
		if (softrc_skb_copy_bits(skb, skb_off, addr, chunk))
			return -EFAULT;
		skb_off += chunk;
		va += chunk;
		len -= chunk;
	}
	if (mr->is_fast)
		return 0;
	softrc_mr_locate(mr, va, &idx, &off);
	while (len) {
		chunk = min_t(u32, len, PAGE_SIZE - off);
		addr = kmap_local_page(mr->pages[idx]);
		err = softrc_skb_copy_bits(skb, skb_off, addr + off, chunk);
		kunmap_local(addr);
		if (err)
			return -EFAULT;
		skb_off += chunk;
		len -= chunk;
		idx++;
		off = 0;
	}
	return 0;
}

/**
 * softrc_mr_page() - the page holding @va, for an skb fragment
 * @mr:		a checked MR
 * @va:		the MR byte
 * @page:	out: the page (the caller takes its own page reference)
 * @page_off:	out: offset of @va in @page
 * @len:	out: bytes from @va to the end of the page or of the MR
 *
 * Return: 0, or -EINVAL if @va is outside the MR (or at its very end).
 */
int softrc_mr_page(struct softrc_mr *mr, u64 va, struct page **page,
		   u32 *page_off, u32 *len)
{
	unsigned long idx;
	u64 rest;
	u32 off, room;
	void *addr;

	if (mr->is_dma || mr->is_fast) {
		if (mr->is_fast && !softrc_mr_in_bounds(mr, va, 1))
			return -EINVAL;
		addr = mr->is_fast ? softrc_mr_fast_addr(mr, va, &room) :
				     (void *)(uintptr_t)va;
		*page = is_vmalloc_addr(addr) ? vmalloc_to_page(addr) :
						virt_to_page(addr);
		*page_off = offset_in_page(addr);
		*len = PAGE_SIZE - *page_off;
		if (mr->is_fast)
			*len = min_t(u64, *len, mr->length - (va - mr->iova));
		return 0;
	}
	if (!softrc_mr_in_bounds(mr, va, 1))
		return -EINVAL;
	softrc_mr_locate(mr, va, &idx, &off);
	rest = mr->length - (va - mr->iova);
	*page = mr->pages[idx];
	*page_off = off;
	*len = min_t(u64, PAGE_SIZE - off, rest);
	return 0;
}

/*
 * The aligned 64-bit word at @va of @mr, mapped: *@addr is the mapping to
 * kunmap_local() after use (NULL for a DMA or fast-registration MR), or
 * NULL if @va is unaligned or the word is not inside the MR.
 */
static atomic64_t *softrc_mr_word_map(struct softrc_mr *mr, u64 va,
				      void **addr)
{
	unsigned long idx;
	u32 off;

	*addr = NULL;
	if ((va & 7) || !softrc_mr_in_bounds(mr, va, 8))
		return NULL;
	if (mr->is_fast)
		return softrc_mr_fast_addr(mr, va, &off);
	if (mr->is_dma)
		return (atomic64_t *)(uintptr_t)va;
	softrc_mr_locate(mr, va, &idx, &off);
	*addr = kmap_local_page(mr->pages[idx]);
	return *addr + off;
}

/**
 * softrc_mr_atomic() - 64-bit compare-and-swap or fetch-and-add at @va
 * @mr:		a checked MR (with IB_ACCESS_REMOTE_ATOMIC)
 * @va:		8-byte aligned MR address
 * @cmp_swap:	true: compare and swap; false: fetch and add
 * @swap_add:	the swap value or the addend
 * @compare:	the compare value (compare and swap)
 * @orig:	out: the value before the operation
 *
 * A CPU atomic on the target word: atomic against every other softrc
 * atomic on any device, and against CPU atomics on the same word.
 *
 * Return: 0, or -EINVAL if @va is unaligned or outside the MR.
 */
int softrc_mr_atomic(struct softrc_mr *mr, u64 va, bool cmp_swap, u64 swap_add,
		     u64 compare, u64 *orig)
{
	atomic64_t *word;
	void *addr;

	word = softrc_mr_word_map(mr, va, &addr);
	if (!word)
		return -EINVAL;
	if (cmp_swap)
		*orig = atomic64_cmpxchg(word, compare, swap_add);
	else
		*orig = atomic64_fetch_add(swap_add, word);
	if (addr)
		kunmap_local(addr);
	return 0;
}

/**
 * softrc_mr_atomic_write() - ATOMIC WRITE: store @value at @va in one piece
 * @mr:		a checked MR (with IB_ACCESS_REMOTE_WRITE)
 * @va:		8-byte aligned MR address
 * @value:	the 8 bytes as they came (stored as they are)
 *
 * One 64-bit store with release order (IBTA 1.5 A19.4: after every
 * earlier placement of the QP), so no reader of the word, CPU or softrc
 * atomic, ever sees part of it.
 *
 * Return: 0, or -EINVAL if @va is unaligned or outside the MR.
 */
int softrc_mr_atomic_write(struct softrc_mr *mr, u64 va, u64 value)
{
	atomic64_t *word;
	void *addr;

	word = softrc_mr_word_map(mr, va, &addr);
	if (!word)
		return -EINVAL;
	atomic64_set_release(word, (s64)value);
	if (addr)
		kunmap_local(addr);
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
	struct xarray *xa = &mr->sdev->mr_xa;
	u32 index;
	int err;

	/* cyclic: a freed index (and its stale keys) is not reused soon */
	err = xa_alloc_cyclic(xa, &index, NULL,
			      XA_LIMIT(1, SOFTRC_MAX_MR + SOFTRC_MAX_MW),
			      &mr->sdev->key_next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	mr->key = index << 8 | (get_random_u32() & 0xff);
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	mr->ibmr.iova = mr->iova;
	mr->ibmr.length = mr->length;
	err = xa_err(xa_store(xa, index, &mr->kobj, GFP_KERNEL));
	if (err)
		xa_erase(xa, index);
	return err;
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

/* ---- memory windows ------------------------------------------------ */

/*
 * The MW at @key's index, or NULL; the caller is in an RCU read section
 * and checks the key under mw->lock.
 */
static struct softrc_mw *softrc_mw_find(struct softrc_dev *sdev, u32 key)
{
	struct softrc_key_obj *k = xa_load(&sdev->mr_xa, key >> 8);

	if (!k || k->kind != SOFTRC_KEY_MW)
		return NULL;
	return container_of(k, struct softrc_mw, kobj);
}

/*
 * The object @key names: an MW, on which @mw_op runs inside an RCU read
 * section (which keeps the MW allocated; @mw_op takes its lock) and whose
 * result is returned with *@mr NULL; else *@mr is the MR @key names,
 * referenced (0), or NULL (-EINVAL). Always inlined: @mw_op is a direct
 * call.
 */
static __always_inline int
softrc_key_find(struct softrc_dev *sdev, u32 key,
		int (*mw_op)(struct softrc_mw *mw, u32 key, void *arg),
		void *arg, struct softrc_mr **mr)
{
	struct softrc_mw *mw;
	int err = -EINVAL;

	*mr = NULL;
	rcu_read_lock();
	mw = softrc_mw_find(sdev, key);
	if (mw)
		err = mw_op(mw, key, arg);
	rcu_read_unlock();
	if (mw)
		return err;
	*mr = softrc_mr_get(sdev, key);
	return *mr ? 0 : -EINVAL;
}

/*
 * Window (@arg, a struct softrc_mem_win) of a bound, valid MW named by
 * @rkey; takes an MR reference.
 */
static int softrc_mw_win(struct softrc_mw *mw, u32 rkey, void *arg)
{
	struct softrc_mem_win *win = arg;
	int err = -EINVAL;

	spin_lock_bh(&mw->lock);
	if (mw->key == rkey && mw->state == SOFTRC_MW_VALID && mw->mr &&
	    softrc_mr_valid(mw->mr) &&
	    refcount_inc_not_zero(&mw->mr->ref)) {
		win->mr = mw->mr;
		win->pd = mw->ibmw.pd;
		win->iova = mw->addr;
		win->length = mw->length;
		win->access = mw->access;
		win->qp_uid = mw->ibmw.type == IB_MW_TYPE_2 ? mw->qp_uid : 0;
		win->whole = false;
		win->life = mw->life;
		win->gen = mw->life->gen;
		err = 0;
	}
	spin_unlock_bh(&mw->lock);
	return err;
}

/**
 * softrc_rkey_get() - what does the R_Key @rkey grant?
 * @sdev:	the device
 * @rkey:	an MR's key or a bound MW's current key (all 32 bits)
 * @win:	out: the MR holding the bytes (referenced) and the range and
 *		rights: the MR's own, or the window's (IBTA 10.6.7)
 *
 * Context: any; never sleeps.
 * Return: 0 (release with softrc_mr_put(@win->mr)), or -EINVAL for an unknown
 * key, an unbound, invalidated or rebound window, or an invalid MR.
 */
int softrc_rkey_get(struct softrc_dev *sdev, u32 rkey,
		    struct softrc_mem_win *win)
{
	struct softrc_mr *mr;
	int err;

	err = softrc_key_find(sdev, rkey, softrc_mw_win, win, &mr);
	if (!mr)
		return err;
	/*
	 * acquire, the generation first: a later invalidation is then seen
	 * by the pin; the state's pairs with the release of a fast reg
	 */
	win->gen = smp_load_acquire(&mr->gen);
	if (!softrc_mr_valid(mr)) {
		softrc_mr_put(mr);
		return -EINVAL;
	}
	win->mr = mr;
	win->life = NULL;
	win->pd = mr->pd;
	win->iova = mr->iova;
	win->length = mr->length;
	win->access = mr->access;
	win->qp_uid = 0;
	win->whole = mr->is_dma;
	return 0;
}

/**
 * softrc_win_check() - may the QP @qp_uid of @pd access @len bytes at @va?
 * @win:	from softrc_rkey_get()
 * @pd:		the QP's PD
 * @qp_uid:	the QP's softrc_qp.uid (a type 2 MW serves only the QP it was
 *		bound through)
 * @va:		first byte
 * @len:	bytes; 0 skips the bounds check
 * @access:	IB_ACCESS_REMOTE_* rights needed
 *
 * Return: 0; -EACCES for a missing right; -EINVAL for a PD or QP
 * mismatch or bytes outside the range.
 */
int softrc_win_check(const struct softrc_mem_win *win, struct ib_pd *pd,
		     u64 qp_uid, u64 va, u64 len, int access)
{
	if (win->pd != pd || (win->qp_uid && win->qp_uid != qp_uid))
		return -EINVAL;
	if (access & ~win->access)
		return -EACCES;
	if (!len || win->whole)
		return 0;
	if (va < win->iova || va - win->iova > win->length ||
	    len > win->length - (va - win->iova))
		return -EINVAL;
	return 0;
}

/* Drop the binding of @mw (its lock held); returns the MR to put. */
static struct softrc_mr *softrc_mw_unbind(struct softrc_mw *mw)
{
	struct softrc_mr *mr = mw->mr;

	lockdep_assert_held(&mw->lock);
	/* every pin taken through the old binding stops entering */
	WRITE_ONCE(mw->life->gen, mw->life->gen + 1);
	if (mr) {
		spin_lock(&mr->bind_lock);
		mr->num_mw--;
		spin_unlock(&mr->bind_lock);
	}
	mw->mr = NULL;
	mw->addr = 0;
	mw->length = 0;
	mw->access = 0;
	return mr;
}

/* Who invalidates: softrc_mem_invalidate()'s arguments. */
struct softrc_inv {
	struct ib_pd *pd;
	u64 qp_uid;
	bool remote;
};

/* Invalidate the type 2 MW @mw (RCU read section held); @arg: softrc_inv. */
static int softrc_mw_invalidate(struct softrc_mw *mw, u32 rkey, void *arg)
{
	const struct softrc_inv *inv = arg;
	struct softrc_mr *old = NULL;
	int err = -EINVAL;

	spin_lock_bh(&mw->lock);
	/* type 1 MWs cannot be invalidated; SEND_WITH_INV only by its QP */
	if (mw->ibmw.type == IB_MW_TYPE_2 && mw->key == rkey &&
	    mw->state == SOFTRC_MW_VALID && mw->ibmw.pd == inv->pd &&
	    (!inv->remote || mw->qp_uid == inv->qp_uid)) {
		old = softrc_mw_unbind(mw);
		mw->state = SOFTRC_MW_FREE;
		err = 0;
	}
	spin_unlock_bh(&mw->lock);
	if (old)
		softrc_mr_put(old);
	return err;
}

/**
 * softrc_mem_invalidate() - LOCAL_INV or SEND_WITH_INV of @rkey
 * @sdev:	the device
 * @pd:		the invalidating QP's PD
 * @qp_uid:	the invalidating QP's softrc_qp.uid
 * @rkey:	the key
 * @remote:	SEND_WITH_INV (the MW must be bound through @qp_uid)
 *
 * Only a type 2 MW or a registered fast-register MR may be invalidated
 * (IBTA 10.6.7); an ordinary MR, a type 1 MW, an unbound MW or a stale
 * key fail.
 *
 * Context: any; never sleeps.
 * Return: 0, or -EINVAL.
 */
int softrc_mem_invalidate(struct softrc_dev *sdev, struct ib_pd *pd,
			  u64 qp_uid, u32 rkey, bool remote)
{
	struct softrc_inv inv = { .pd = pd, .qp_uid = qp_uid, .remote = remote };
	struct softrc_mr *mr;
	int err;

	err = softrc_key_find(sdev, rkey, softrc_mw_invalidate, &inv, &mr);
	if (!mr)
		return err;
	err = -EINVAL;
	/* a registered fast-register MR of the QP's PD becomes free */
	if (mr->is_fast && mr->pd == pd &&
	    cmpxchg(&mr->state, SOFTRC_MR_VALID, SOFTRC_MR_INVALID) ==
	    SOFTRC_MR_VALID) {
		/* before a re-registration can make it valid again */
		WRITE_ONCE(mr->gen, mr->gen + 1);
		err = 0;
	}
	softrc_mr_put(mr);
	return err;
}

/* Bind checks on the MR side (IBTA 10.6.7); mw->lock held. */
static int softrc_mw_bind_check(struct softrc_mw *mw, struct softrc_mr *mr,
				struct ib_pd *pd,
				const struct softrc_mw_bind *b)
{
	if (mr->pd != pd || !softrc_mr_valid(mr))
		return -EINVAL;
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	/* a writable window needs a locally writable MR */
	if ((b->access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	if (!mr->is_dma &&
	    (b->addr < mr->iova || b->addr - mr->iova > mr->length ||
	     b->length > mr->length - (b->addr - mr->iova)))
		return -EINVAL;
	return 0;
}

/* Bind @mw (its lock held) to @mr, whose reference it takes over. */
static int softrc_mw_do_bind(struct softrc_mw *mw, struct softrc_mr *mr,
			     u64 qp_uid, const struct softrc_mw_bind *b,
			     struct softrc_mr **old)
{
	if (mr) {
		spin_lock(&mr->bind_lock);
		if (mr->dereg) {
			spin_unlock(&mr->bind_lock);
			return -EINVAL;
		}
		mr->num_mw++;
		spin_unlock(&mr->bind_lock);
	}
	*old = softrc_mw_unbind(mw);
	mw->mr = mr;
	mw->addr = b->addr;
	mw->length = b->length;
	mw->access = b->access & ~IB_ACCESS_LOCAL_WRITE;
	mw->qp_uid = qp_uid;
	mw->key = (mw->key & ~0xffu) | (b->rkey & 0xff);
	mw->state = SOFTRC_MW_VALID;
	return 0;
}

/* Bind checks on the MW side (IBTA 10.6.7, as rxe); mw->lock held. */
static int softrc_mw_state_check(struct softrc_mw *mw, struct ib_pd *pd,
				 const struct softrc_mw_bind *b)
{
	if (mw->key != b->mw_rkey || mw->ibmw.pd != pd)
		return -EINVAL;
	if (b->access & ~SOFTRC_MW_ACCESS)
		return -EINVAL;
	if (mw->ibmw.type == IB_MW_TYPE_1)
		return mw->state == SOFTRC_MW_VALID ? 0 : -EINVAL;
	/* type 2: bound only when free, never with length 0 (as rxe) */
	if (mw->state != SOFTRC_MW_FREE || !b->length)
		return -EINVAL;
	return 0;
}

/**
 * softrc_mw_bind() - execute a BIND_MW work request of QP @qp_uid
 * @sdev:	the device
 * @pd:		the QP's PD (the MW and the MR must be in it)
 * @qp_uid:	the binding QP's softrc_qp.uid (a type 2 MW is associated
 *		with it)
 * @b:		the request
 *
 * A type 1 MW may be rebound at any time (length 0 unbinds it); a type 2
 * MW only while free. The MR must allow IB_ACCESS_MW_BIND, and
 * IB_ACCESS_LOCAL_WRITE for a writable window; the window must lie in the
 * MR. The MW's key byte becomes that of @b->rkey.
 *
 * Context: called under the QP lock (BH off); never sleeps.
 * Return: 0, or -EINVAL / -EACCES (a MW_BIND_ERR completion).
 */
int softrc_mw_bind(struct softrc_dev *sdev, struct ib_pd *pd, u64 qp_uid,
		   const struct softrc_mw_bind *b)
{
	struct softrc_mr *mr = NULL, *old = NULL;
	struct softrc_mw *mw;
	int err = -EINVAL;

	if (b->length && b->addr + b->length < b->addr)
		return -EINVAL;
	if (b->length) {
		mr = softrc_mr_get(sdev, b->mr_lkey);
		if (!mr)
			return -EINVAL;
	}
	rcu_read_lock();
	mw = softrc_mw_find(sdev, b->mw_rkey);
	if (mw) {
		spin_lock_bh(&mw->lock);
		err = softrc_mw_state_check(mw, pd, b);
		if (!err && mr)
			err = softrc_mw_bind_check(mw, mr, pd, b);
		if (!err)
			err = softrc_mw_do_bind(mw, mr, qp_uid, b, &old);
		spin_unlock_bh(&mw->lock);
	}
	rcu_read_unlock();
	if (err && mr)
		softrc_mr_put(mr);
	if (old)
		softrc_mr_put(old);
	return err;
}

int softrc_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct softrc_dev *sdev = to_sdev(ibmw->device);
	struct softrc_mw *mw = to_smw(ibmw);
	u32 index;
	int err;

	if (ibmw->type != IB_MW_TYPE_1 && ibmw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_mw) > SOFTRC_MAX_MW) {
		err = -ENOMEM;
		goto err_count;
	}
	mw->life = kzalloc(sizeof(*mw->life), GFP_KERNEL);
	if (!mw->life) {
		err = -ENOMEM;
		goto err_count;
	}
	refcount_set(&mw->life->ref, 1);
	spin_lock_init(&mw->lock);
	mw->kobj.kind = SOFTRC_KEY_MW;
	mw->state = ibmw->type == IB_MW_TYPE_1 ? SOFTRC_MW_VALID :
						 SOFTRC_MW_FREE;
	err = xa_alloc_cyclic(&sdev->mr_xa, &index, NULL,
			      XA_LIMIT(1, SOFTRC_MAX_MR + SOFTRC_MAX_MW),
			      &sdev->key_next, GFP_KERNEL);
	if (err < 0) {
		err = err == -EBUSY ? -ENOMEM : err;
		goto err_life;
	}
	mw->key = index << 8 | (get_random_u32() & 0xff);
	ibmw->rkey = mw->key;
	err = xa_err(xa_store(&sdev->mr_xa, index, &mw->kobj, GFP_KERNEL));
	if (err) {
		xa_erase(&sdev->mr_xa, index);
		goto err_life;
	}
	return 0;

err_life:
	kfree(mw->life);
err_count:
	atomic_dec(&sdev->num_mw);
	return err;
}

/* Deallocating a bound window unbinds it (as rxe). */
int softrc_dealloc_mw(struct ib_mw *ibmw)
{
	struct softrc_dev *sdev = to_sdev(ibmw->device);
	struct softrc_mw *mw = to_smw(ibmw);
	struct softrc_mr *old;

	xa_erase(&sdev->mr_xa, mw->key >> 8);
	spin_lock_bh(&mw->lock);
	old = softrc_mw_unbind(mw);
	/* a bind that found the MW before the erase must not rebind it */
	mw->state = SOFTRC_MW_DEAD;
	spin_unlock_bh(&mw->lock);
	if (old)
		softrc_mr_put(old);
	/* lookups that found the entry are done before the core frees it */
	synchronize_rcu();
	softrc_mw_life_put(mw->life);
	atomic_dec(&sdev->num_mw);
	return 0;
}

/*
 * xa_init_flags() gives every xarray set up in one file one lockdep
 * class. The AH table's lock is taken with IRQs off, also under a QP's
 * lock (a UD or GSI post, softrc_swr_ud_dest); the MR table's in
 * process context with softirqs on. One class for both is a lock seen
 * taken both ways: the debug kernel's lockdep reported it when ib_cm
 * posted a MAD (nfsrdma.sh). Each gets its own.
 */
static struct lock_class_key softrc_ah_xa_class;

/**
 * softrc_obj_dev_init() - set up a device's object tables
 * @sdev:	the device, before registration
 */
void softrc_obj_dev_init(struct softrc_dev *sdev)
{
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	atomic_set(&sdev->num_mw, 0);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	lockdep_set_class(&sdev->ah_xa.xa_lock, &softrc_ah_xa_class);
	xa_init_flags(&sdev->srq_xa, XA_FLAGS_ALLOC1);
	atomic_set(&sdev->num_cq, 0);
}

/**
 * softrc_obj_dev_fini() - tear down a device's object tables
 * @sdev:	the device; the RDMA core has destroyed every object
 */
void softrc_obj_dev_fini(struct softrc_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->mr_xa));
	WARN_ON(!xa_empty(&sdev->ah_xa));
	WARN_ON(!xa_empty(&sdev->srq_xa));
	WARN_ON(atomic_read(&sdev->num_cq));
	WARN_ON(atomic_read(&sdev->num_mw));
	xa_destroy(&sdev->mr_xa);
	xa_destroy(&sdev->ah_xa);
	xa_destroy(&sdev->srq_xa);
}

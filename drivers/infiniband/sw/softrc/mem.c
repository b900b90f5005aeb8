// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The data path's access to the bytes of a memory region: copy between
 * a kernel buffer and an MR range, placing the bytes of an skb, the page
 * behind an MR address (zero-copy TX fragments), the 64-bit atomics and
 * ATOMIC WRITE.
 *
 * Context: any (softirq RX, process, timer), under the QP lock of the QP
 * doing the access; never sleeps (kmap_local_page only). Touches only the
 * bytes of the MR it is given: no lookup, no lock, no reference. The
 * caller holds a memory reference on the MR (softrc_mr_get,
 * softrc_mr_enter or softrc_pin_enter: mr.c) and has checked the rights
 * (softrc_mr_check, softrc_win_check); every function here re-checks the
 * bounds itself.
 */
#include <linux/highmem.h>
#include <linux/vmalloc.h>

#include "softrc.h"
#include "mr.h"
#include "mem.h"
#include "copy.h"

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

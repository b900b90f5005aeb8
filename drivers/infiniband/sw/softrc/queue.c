// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Shared rings (struct rxe_queue_buf) and their mmap cookies.
 *
 * Context: softrc_queue_init/export/free and softrc_mmap run in process
 * context and may sleep. The index calls (slot, advance, count, full) run
 * in any context and never sleep; their callers serialize each side (see
 * queue.h). Touches only the ring memory and the ucontext's mmap table.
 *
 * Lifetime: a ring that was never exported belongs to its queue and is
 * freed by softrc_queue_free(). Once exported, the mmap cookie owns it:
 * softrc_queue_free() withdraws the cookie and the ring is freed from
 * .mmap_free when the cookie's last reference goes; pages already mapped
 * stay pinned by their user mappings until munmap.
 */
#include <linux/cache.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "softrc.h"
#include "queue.h"

/* Bounds well above every verb limit; they keep the size arithmetic safe. */
#define SOFTRC_QUEUE_MAX_ELEMS	BIT(20)
#define SOFTRC_QUEUE_MAX_STRIDE	BIT(16)

/*
 * Zeroed ring memory that remap_vmalloc_range() accepts (VM_USERMAP),
 * charged to the caller's memory cgroup: user space sizes it. 6.1's
 * vmalloc_user() takes no gfp flags and __vmalloc_node_range() is not
 * exported, so the pages are allocated here with __GFP_ACCOUNT and
 * vmap()ed; vfree() frees them and the page array (VM_MAP_PUT_PAGES).
 * A page still mapped by user space keeps its own reference past vfree().
 */
static void *softrc_queue_alloc(size_t size)
{
	unsigned int i, n = size >> PAGE_SHIFT;
	struct page **pages;
	void *buf;

	pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO);
		if (!pages[i])
			goto err;
	}
	buf = vmap(pages, n, VM_MAP | VM_MAP_PUT_PAGES | VM_USERMAP, PAGE_KERNEL);
	if (buf)
		return buf;
err:
	while (i--)
		__free_page(pages[i]);
	kvfree(pages);
	return NULL;
}

/**
 * softrc_queue_init() - allocate an empty ring
 * @sdev:	the device (for debug messages)
 * @q:		the queue to set up; zeroed here
 * @num_elem:	in: the depth asked for (>= 1); out: the usable depth,
 *		roundup_pow_of_two(in + 1) - 1 (equal to @in for 2^k - 1)
 * @elem_size:	bytes one element needs
 *
 * Return: 0, -EINVAL for a depth or element size out of range, -ENOMEM.
 */
int softrc_queue_init(struct softrc_dev *sdev, struct softrc_queue *q,
		      u32 *num_elem, u32 elem_size)
{
	u32 stride, slots;

	memset(q, 0, sizeof(*q));
	if (!*num_elem || *num_elem >= SOFTRC_QUEUE_MAX_ELEMS ||
	    !elem_size || elem_size > SOFTRC_QUEUE_MAX_STRIDE)
		return -EINVAL;

	stride = roundup_pow_of_two(max_t(u32, elem_size, cache_line_size()));
	slots = roundup_pow_of_two(*num_elem + 1);
	q->log2_elem_size = ilog2(stride);
	q->index_mask = slots - 1;
	q->buf_size = PAGE_ALIGN(sizeof(*q->buf) + ((size_t)slots << q->log2_elem_size));

	q->buf = softrc_queue_alloc(q->buf_size);	/* zeroed: both indices 0 */
	if (!q->buf)
		return -ENOMEM;
	q->buf->log2_elem_size = q->log2_elem_size;
	q->buf->index_mask = q->index_mask;
	*num_elem = q->index_mask;

	ibdev_dbg(&sdev->ib_dev, "queue: %u slots of %u bytes, %zu bytes\n",
		  slots, stride, q->buf_size);
	return 0;
}

/**
 * softrc_queue_export() - make the ring mmap-able by one user context
 * @q:		an initialized queue, not yet exported
 * @uctx:	the user context the cookie belongs to
 * @mi:		filled with the {offset, size} user space passes to mmap()
 *
 * From here on the peer's index is untrusted and the cookie owns the ring.
 *
 * Return: 0, -EINVAL if already exported, -ENOMEM.
 */
int softrc_queue_export(struct softrc_queue *q, struct ib_ucontext *uctx,
			struct mminfo *mi)
{
	struct softrc_mmap_entry *entry;
	int err;

	if (q->mentry)
		return -EINVAL;
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!entry)
		return -ENOMEM;
	entry->buf = q->buf;
	err = rdma_user_mmap_entry_insert(uctx, &entry->rdma, q->buf_size);
	if (err) {
		kfree(entry);
		return err;
	}
	q->mentry = entry;
	q->user = true;
	mi->offset = rdma_user_mmap_get_offset(&entry->rdma);
	mi->size = q->buf_size;
	mi->pad = 0;
	return 0;
}

/* Withdraw the ring. The kernel must not touch @q's ring afterwards. */
void softrc_queue_free(struct softrc_queue *q)
{
	if (q->mentry)
		rdma_user_mmap_entry_remove(&q->mentry->rdma);
	else
		vfree(q->buf);
	q->mentry = NULL;
	q->buf = NULL;
}

static u32 softrc_queue_peer_prod(const struct softrc_queue *q)
{
	/* acquire: the slots before the producer index are written */
	return smp_load_acquire(&q->buf->producer_index) & q->index_mask;
}

static u32 softrc_queue_peer_cons(const struct softrc_queue *q)
{
	/* acquire: the consumer is done reading the slots it released */
	return smp_load_acquire(&q->buf->consumer_index) & q->index_mask;
}

/*
 * The two indices as the kernel may believe them: its own from the
 * private copy, the user's from the ring (masked). A kernel ring's
 * indices are both published by trusted code.
 */
static void softrc_queue_indices(const struct softrc_queue *q, u32 *prod,
				 u32 *cons)
{
	if (!q->user) {
		*prod = softrc_queue_peer_prod(q);
		*cons = softrc_queue_peer_cons(q);
	} else if (q->to_user) {
		*prod = q->prod;
		*cons = softrc_queue_peer_cons(q);
	} else {
		*prod = softrc_queue_peer_prod(q);
		*cons = q->cons;
	}
}

/* Elements in the ring. */
u32 softrc_queue_count(const struct softrc_queue *q)
{
	u32 prod, cons;

	softrc_queue_indices(q, &prod, &cons);
	return (prod - cons) & q->index_mask;
}

bool softrc_queue_full(const struct softrc_queue *q)
{
	return softrc_queue_count(q) == q->index_mask;
}

/* Slot @index (masked) of the ring. */
void *softrc_queue_slot(const struct softrc_queue *q, u32 index)
{
	return q->buf->data + ((size_t)(index & q->index_mask) << q->log2_elem_size);
}

/* The slot the producer fills next, or NULL if the ring is full. */
void *softrc_queue_producer_slot(struct softrc_queue *q)
{
	if (((q->prod + 1) & q->index_mask) == softrc_queue_peer_cons(q))
		return NULL;
	return softrc_queue_slot(q, q->prod);
}

/* Publish the slot from softrc_queue_producer_slot() (release). */
void softrc_queue_producer_advance(struct softrc_queue *q)
{
	q->prod = (q->prod + 1) & q->index_mask;
	/* release: the slot's contents before the index that exposes it */
	smp_store_release(&q->buf->producer_index, q->prod);
}

/*
 * The oldest element, or NULL if the ring is empty. In a user ring its
 * bytes can change under the caller: copy, then validate the copy.
 */
void *softrc_queue_consumer_slot(struct softrc_queue *q)
{
	if (softrc_queue_peer_prod(q) == q->cons)
		return NULL;
	return softrc_queue_slot(q, q->cons);
}

/* Release the slot from softrc_queue_consumer_slot() to the producer. */
void softrc_queue_consumer_advance(struct softrc_queue *q)
{
	q->cons = (q->cons + 1) & q->index_mask;
	/* release: done reading the slot before handing it back */
	smp_store_release(&q->buf->consumer_index, q->cons);
}

/* The slot stride in bytes (>= the element size asked for). */
u32 softrc_queue_elem_size(const struct softrc_queue *q)
{
	return 1U << q->log2_elem_size;
}

/**
 * softrc_queue_move() - copy the pending elements of @src into an empty
 * @dst (a resize); @dst's producer ends after them
 * @dst:	a freshly initialized queue with the same stride
 * @src:	the old queue; left unchanged
 *
 * Both sides of both rings must be quiescent (the caller holds the
 * object's lock and user space holds its own ring lock around the resize).
 *
 * Return: 0, -EINVAL if the strides differ, -ENOSPC if they do not fit.
 */
int softrc_queue_move(struct softrc_queue *dst, struct softrc_queue *src)
{
	u32 prod, cons, n, i;

	if (dst->log2_elem_size != src->log2_elem_size)
		return -EINVAL;
	softrc_queue_indices(src, &prod, &cons);
	n = (prod - cons) & src->index_mask;
	if (n > dst->index_mask)
		return -ENOSPC;
	for (i = 0; i < n; i++)
		memcpy(softrc_queue_slot(dst, i), softrc_queue_slot(src, cons + i),
		       softrc_queue_elem_size(src));
	dst->prod = n;
	dst->cons = 0;
	/* release: the copied slots before the indices that expose them */
	smp_store_release(&dst->buf->consumer_index, 0);
	/* release: as above, for the producer index */
	smp_store_release(&dst->buf->producer_index, n);
	return 0;
}

/**
 * softrc_queue_replace() - swap a resized ring in, keeping what is pending
 * @cur:	the ring in use; the data path reads it under @lock
 * @next:	the new, empty ring; taken over (freed if it cannot be used)
 * @lock:	the lock the data path holds around @cur
 *
 * Context: process context (resize verbs); takes @lock with IRQs off.
 * Return: 0, with the old ring freed; -EINVAL if more elements are
 * pending than @next holds, with @cur untouched.
 */
int softrc_queue_replace(struct softrc_queue *cur, struct softrc_queue *next,
			 spinlock_t *lock)
{
	struct softrc_queue old;
	unsigned long flags;
	int err;

	spin_lock_irqsave(lock, flags);
	err = softrc_queue_move(next, cur);
	if (!err) {
		old = *cur;
		*cur = *next;
	}
	spin_unlock_irqrestore(lock, flags);
	softrc_queue_free(err ? next : &old);
	return err ? -EINVAL : 0;
}

/* ib_device_ops.mmap: map one ring by its cookie (whole ring, shared). */
int softrc_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct softrc_mmap_entry *entry;
	int err;

	rdma_entry = rdma_user_mmap_entry_get(uctx, vma);
	if (!rdma_entry) {
		ibdev_dbg(uctx->device, "mmap: no cookie %#lx of %lu bytes\n",
			  vma->vm_pgoff, vma->vm_end - vma->vm_start);
		return -EINVAL;
	}
	entry = container_of(rdma_entry, struct softrc_mmap_entry, rdma);
	err = remap_vmalloc_range(vma, entry->buf, 0);
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

/* ib_device_ops.mmap_free: the cookie's last reference is gone. */
void softrc_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct softrc_mmap_entry *entry =
		container_of(rdma_entry, struct softrc_mmap_entry, rdma);

	vfree(entry->buf);
	kfree(entry);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The rxe shared ring (struct rxe_queue_buf of <rdma/rdma_user_rxe.h>):
 * the layout stock librxe maps for SQ, RQ, SRQ and CQ, also used for the
 * rings of kernel consumers.
 *
 * Geometry: stride = roundup_pow_of_two(max(elem_size, cache line)),
 * slots = roundup_pow_of_two(requested + 1), one slot always empty.
 * Indices stay in [0, index_mask]; empty when producer == consumer.
 *
 * Each side keeps a private copy of the index it owns (prod for the
 * producer_* calls, cons for the consumer_* calls) and publishes it with
 * a release store; the peer's index is read with an acquire load and
 * masked, never trusted beyond that. The caller serializes all producer
 * calls among themselves, and all consumer calls (normally with the
 * owning object's lock). No call sleeps.
 */
#ifndef SOFTRC_QUEUE_H
#define SOFTRC_QUEUE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>

struct softrc_dev;

/* An mmap cookie: owns the ring memory once the ring is exported. */
struct softrc_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
};

/**
 * struct softrc_queue - one ring
 * @buf:	the ring, vmap()ed memcg-charged pages (header + slots),
 *		VM_USERMAP for remap_vmalloc_range()
 * @buf_size:	bytes of @buf, page aligned
 * @log2_elem_size: log2 of the slot stride
 * @index_mask:	slots - 1
 * @prod:	private producer index (valid where the kernel produces)
 * @cons:	private consumer index (valid where the kernel consumes)
 * @to_user:	the kernel produces and user space consumes (a user CQ).
 *		False for every other ring: user SQ/RQ/SRQ (kernel consumes)
 *		and kernel rings (both indices trusted).
 * @user:	exported to user space: the peer's index is untrusted
 * @mentry:	the mmap cookie while exported, else NULL
 */
struct softrc_queue {
	struct rxe_queue_buf *buf;
	size_t buf_size;
	u32 log2_elem_size;
	u32 index_mask;
	u32 prod;
	u32 cons;
	bool to_user;
	bool user;
	struct softrc_mmap_entry *mentry;
};

int softrc_queue_init(struct softrc_dev *sdev, struct softrc_queue *q,
		      u32 *num_elem, u32 elem_size);
int softrc_queue_export(struct softrc_queue *q, struct ib_ucontext *uctx,
			struct mminfo *mi);
void softrc_queue_free(struct softrc_queue *q);
u32 softrc_queue_count(const struct softrc_queue *q);
bool softrc_queue_full(const struct softrc_queue *q);
void *softrc_queue_producer_slot(struct softrc_queue *q);
void softrc_queue_producer_advance(struct softrc_queue *q);
void *softrc_queue_consumer_slot(struct softrc_queue *q);
void softrc_queue_consumer_advance(struct softrc_queue *q);
u32 softrc_queue_elem_size(const struct softrc_queue *q);
void *softrc_queue_slot(const struct softrc_queue *q, u32 index);
int softrc_queue_move(struct softrc_queue *dst, struct softrc_queue *src);
int softrc_queue_replace(struct softrc_queue *cur, struct softrc_queue *next, spinlock_t *lock);

/* ib_device_ops.mmap / .mmap_free */
int softrc_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void softrc_mmap_free(struct rdma_user_mmap_entry *rdma_entry);

#endif /* SOFTRC_QUEUE_H */

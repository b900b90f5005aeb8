/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Memory windows and R_Key resolution (mw.c). An R_Key names an MR or an
 * MW (they share the key space, mr.h); softrc_rkey_get() says what it
 * grants: an MR's own range and rights, or a bound window on its MR
 * (IBTA 10.6.7). Lookups run in any context and never sleep; an MW's
 * binding is read and changed under its lock.
 */
#ifndef SOFTRC_MW_H
#define SOFTRC_MW_H

#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "mr.h"

struct softrc_dev;

/**
 * struct softrc_mw_life - what outlives an MW for the pins taken through it
 * @ref:	one for the MW (dropped by dealloc_mw), one per pin
 * @gen:	bumped (under the MW's lock) at every unbind, rebind,
 *		invalidation and at dealloc: a pin whose generation differs
 *		no longer enters
 */
struct softrc_mw_life {
	refcount_t ref;
	u32 gen;
};

enum softrc_mw_state {
	SOFTRC_MW_FREE,		/* type 2: unbound (allocated or invalidated) */
	SOFTRC_MW_VALID,	/* type 1 always; type 2 once bound */
	SOFTRC_MW_DEAD,		/* dealloc_mw has begun: never bound again */
};

/**
 * struct softrc_mw - a memory window (type 1 or type 2B)
 * @ibmw:	the core's MW (allocated by the core)
 * @kobj:	its entry in the key xarray (kind SOFTRC_KEY_MW)
 * @lock:	protects every field below; taken in any context (BH off)
 * @key:	the current R_Key (the key byte changes with every bind)
 * @state:	enum softrc_mw_state
 * @mr:		the bound MR (holds a reference and counts in mr->num_mw),
 *		NULL while unbound (a type 1 MW bound with length 0)
 * @qp_uid:	type 2: the QP it was bound through (its softrc_qp.uid, never
 *		reused, unlike a QPN), the only one that may
 *		use or remotely invalidate it
 * @addr:	first byte of the window (MR iova space)
 * @length:	bytes
 * @access:	IB_ACCESS_REMOTE_* rights granted
 * @life:	generation shared with the pins (allocated with the MW)
 */
struct softrc_mw {
	struct ib_mw ibmw;
	struct softrc_key_obj kobj;
	spinlock_t lock;	/* the binding */
	u32 key;
	u8 state;
	struct softrc_mr *mr;
	u64 qp_uid;
	u64 addr;
	u64 length;
	int access;
	struct softrc_mw_life *life;
};

static inline struct softrc_mw *to_smw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct softrc_mw, ibmw);
}

/**
 * struct softrc_mw_bind - a BIND_MW work request (rxe ABI wr.mw)
 * @addr:	window start
 * @length:	window bytes (0 unbinds a type 1 MW)
 * @mr_lkey:	L_Key of the MR to bind to
 * @mw_rkey:	the MW's current R_Key
 * @rkey:	the new R_Key; only its key byte (7..0) is used
 * @access:	IB_ACCESS_* for the window
 */
struct softrc_mw_bind {
	u64 addr;
	u64 length;
	u32 mr_lkey;
	u32 mw_rkey;
	u32 rkey;
	u32 access;
};

/**
 * struct softrc_mem_win - what an R_Key grants: an MR's own range and
 * rights, or an MW's window on its bound MR
 * @mr:		the MR holding the bytes (a reference: softrc_mr_put)
 * @pd:		the PD of the MR or MW
 * @iova:	first byte
 * @length:	bytes
 * @access:	IB_ACCESS_* rights
 * @qp_uid:	type 2 MW: the only QP (softrc_qp.uid) that may use it;
 *		0 = any QP of @pd
 * @whole:	a DMA MR: any address
 * @life:	an MW's: its generation object (not referenced), else NULL
 * @gen:	@life's generation, or a fast-register MR's @gen, at lookup
 */
struct softrc_mem_win {
	struct softrc_mr *mr;
	struct ib_pd *pd;
	u64 iova;
	u64 length;
	int access;
	u64 qp_uid;
	bool whole;
	struct softrc_mw_life *life;
	u32 gen;
};

void softrc_mw_life_put(struct softrc_mw_life *life);
int softrc_rkey_get(struct softrc_dev *sdev, u32 rkey,
		    struct softrc_mem_win *win);
int softrc_win_check(const struct softrc_mem_win *win, struct ib_pd *pd,
		     u64 qp_uid, u64 va, u64 len, int access);
int softrc_mem_invalidate(struct softrc_dev *sdev, struct ib_pd *pd,
			  u64 qp_uid, u32 rkey, bool remote);
int softrc_mw_bind(struct softrc_dev *sdev, struct ib_pd *pd, u64 qp_uid,
		   const struct softrc_mw_bind *b);

/* ib_device_ops */
int softrc_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata);
int softrc_dealloc_mw(struct ib_mw *ibmw);

#endif /* SOFTRC_MW_H */

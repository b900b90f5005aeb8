// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Memory windows (type 1 and type 2B): alloc_mw and dealloc_mw, BIND_MW,
 * the invalidation of an MW (LOCAL_INV, SEND_WITH_INV), and the
 * resolution of an R_Key, which names an MR or an MW: what it grants
 * (struct softrc_mem_win) and whether a QP may use it.
 *
 * Context: alloc_mw and dealloc_mw run in process context and may sleep
 * (dealloc_mw waits for an RCU grace period). Everything else runs in any
 * context (softirq included; BIND_MW and invalidation under the QP lock)
 * and never sleeps. Touches the MW, its entry in the device's key xarray,
 * and of its MR the reference and the bind count (mr->num_mw, under
 * mr->bind_lock). Locks: mw->lock and mr->bind_lock; their order:
 * Documentation/softrc.rst, "Locking".
 *
 * Memory windows share the key xarray with MRs (their rkey's index bits
 * 31..8 come from it). A bound MW holds a reference on its MR and counts
 * in mr->num_mw, so dereg_mr of that MR fails (mr.c). Lookups find an MW
 * under RCU and read its binding under mw->lock; dealloc_mw unbinds,
 * erases the entry and waits for an RCU grace period before the RDMA
 * core frees the structure. Pins taken through a window (mr.c) hold its
 * generation object (struct softrc_mw_life), which outlives the MW.
 */
#include <linux/slab.h>

#include "softrc.h"
#include "device.h"
#include "mr.h"
#include "mw.h"

/* Rights a window may grant: remote ones (LOCAL_WRITE is ignored). */
#define SOFTRC_MW_ACCESS (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
			  IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_LOCAL_WRITE)

/**
 * softrc_mw_life_put() - drop a reference on an MW's generation object
 * @life:	from the MW or a pin
 *
 * Context: any; never sleeps.
 */
void softrc_mw_life_put(struct softrc_mw_life *life)
{
	if (refcount_dec_and_test(&life->ref))
		kfree(life);
}

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
	err = softrc_mr_invalidate(mr, pd);
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
	err = softrc_key_alloc(sdev, &mw->kobj, &mw->key);
	if (err)
		goto err_life;
	ibmw->rkey = mw->key;
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

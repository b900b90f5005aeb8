/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Observing a device's objects without changing them: restrack driver
 * attributes (`rdma resource show qp|cq|mr -dd`, restrack.c) and the
 * per-QP debugfs dump (debugfs.c).
 *
 * Context: process context (netlink dump, debugfs read, verbs). A QP is
 * read by copying its state under qp->lock into a struct softrc_qp_snap
 * (softrc_qp_snap_take()), printing after the lock is dropped. Both
 * outputs walk the same summary (softrc_qp_walk_summary()) through a
 * struct softrc_dump_out, so a field has one name everywhere.
 */
#ifndef SOFTRC_DUMP_H
#define SOFTRC_DUMP_H

#include <linux/types.h>

#include "qp.h"

/* Pending completions a QP snapshot copies (the count is always given). */
#define SOFTRC_SNAP_PWC		64

/**
 * struct softrc_qp_snap - one QP's state, copied under qp->lock
 * @eng:	the engine's state (softrc_eng_snapshot())
 * @res:	responder resources, eng.res_cap entries valid
 * @pwc:	pending completions, the oldest @npwc of them
 * @npwc:	entries of @pwc valid
 * @pwc_pending: completions queued and not yet handed to a CQ
 * @now:	softrc_now() when taken, for the timers' time left
 * @qp_type:	IB_QPT_*
 * @state:	IBTA state
 * @dying:	destroy has begun
 * @is_user:	user QP
 * @sqd_seen:	SQ drained event queued
 * @cq_lost:	softrc_qp.cq_lost bits
 * @pmtu:	path MTU in bytes
 * @pwc_size:	pending-completion ring entries
 * @pwc_prod:	its producer index
 * @pwc_cons:	its consumer index (as last published by the drainer)
 */
struct softrc_qp_snap {
	struct softrc_engine_snapshot eng;
	struct softrc_eng_rd_res res[SOFTRC_MAX_RD_ATOMIC];
	struct softrc_pwc pwc[SOFTRC_SNAP_PWC];
	u32 npwc;
	u32 pwc_pending;
	u64 now;
	enum ib_qp_type qp_type;
	enum ib_qp_state state;
	bool dying;
	bool is_user;
	bool sqd_seen;
	unsigned long cq_lost;
	u32 pmtu;
	u32 pwc_size;
	u32 pwc_prod;
	u32 pwc_cons;
};

/**
 * struct softrc_dump_out - where a walk puts its fields
 * @u32:	an unsigned 32-bit field
 * @u64:	an unsigned 64-bit field
 * @hex:	a 32-bit field best read in hex (keys, flags)
 * @str:	a string field
 *
 * Each returns 0 or a negative errno, which ends the walk.
 */
struct softrc_dump_out {
	int (*u32)(void *arg, const char *key, u32 val);
	int (*u64)(void *arg, const char *key, u64 val);
	int (*hex)(void *arg, const char *key, u32 val);
	int (*str)(void *arg, const char *key, const char *val);
};

/* restrack.c */
struct softrc_qp_snap *softrc_qp_snap_take(struct softrc_qp *qp);
int softrc_qp_walk_summary(const struct softrc_qp_snap *s,
			   const struct softrc_dump_out *out, void *arg);
const char *softrc_ib_qps_name(enum ib_qp_state state);
int softrc_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp);
int softrc_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ibcq);
int softrc_fill_res_mr_entry(struct sk_buff *msg, struct ib_mr *ibmr);
int softrc_fill_res_qp_entry_raw(struct sk_buff *msg, struct ib_qp *ibqp);
int softrc_fill_res_cq_entry_raw(struct sk_buff *msg, struct ib_cq *ibcq);
int softrc_fill_res_mr_entry_raw(struct sk_buff *msg, struct ib_mr *ibmr);

/* debugfs.c */
int softrc_debugfs_init(void);
void softrc_debugfs_exit(void);
void softrc_debugfs_dev_add(struct softrc_dev *sdev);
void softrc_debugfs_dev_del(struct softrc_dev *sdev);
void softrc_debugfs_qp_add(struct softrc_qp *qp);
void softrc_debugfs_qp_del(struct softrc_qp *qp);

#endif /* SOFTRC_DUMP_H */

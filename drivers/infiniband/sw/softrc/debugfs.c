// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * debugfs: /sys/kernel/debug/softrc/<ibdev>/qp/<qpn>, the whole engine
 * state of one QP for bug reports: one "key: value" line per field (keys
 * lower_snake_case), sections introduced by a "[section]" line.
 *
 * Context: process context. The device directory is created by
 * enable_driver and removed by dealloc_driver, and follows the device's
 * name: `rdma dev set OLD name NEW` reaches the rename callback of our
 * ib_client, which the RDMA core calls only between the client's add
 * (after enable_driver) and remove (before dealloc_driver), one rename
 * at a time (under its devices_rwsem). A QP's file is created
 * once the QP is published and removed first thing in destroy_qp.
 * debugfs_remove() waits for running reads (the file's proxy fops) and
 * later reads of a file still open fail with -EIO, so a read never sees
 * a freed QP; an open file also pins the module (fops owner). A read
 * copies the QP under qp->lock (softrc_qp_snap_take()) and prints after
 * dropping it. Without debugfs every call here is a harmless no-op.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#include "softrc.h"
#include "qp.h"
#include "dump.h"

static struct dentry *softrc_dbg_root;

static int softrc_seq_u32(void *arg, const char *key, u32 val)
{
	seq_printf(arg, "%s: %u\n", key, val);
	return 0;
}

static int softrc_seq_u64(void *arg, const char *key, u64 val)
{
	seq_printf(arg, "%s: %llu\n", key, val);
	return 0;
}

static int softrc_seq_hex(void *arg, const char *key, u32 val)
{
	seq_printf(arg, "%s: 0x%x\n", key, val);
	return 0;
}

static int softrc_seq_str(void *arg, const char *key, const char *val)
{
	seq_printf(arg, "%s: %s\n", key, val);
	return 0;
}

static const struct softrc_dump_out softrc_seq_out = {
	.u32 = softrc_seq_u32,
	.u64 = softrc_seq_u64,
	.hex = softrc_seq_hex,
	.str = softrc_seq_str,
};

static void softrc_dbg_attr(struct seq_file *m, const struct softrc_eng_attr *a)
{
	seq_puts(m, "[attr]\n");
	seq_printf(m, "transport: 0x%x\n", a->transport);
	seq_printf(m, "qkey: 0x%x\n", a->qkey);
	seq_printf(m, "sqpn: %u\n", a->sqpn);
	seq_printf(m, "pmtu: %u\n", a->pmtu);
	seq_printf(m, "sq_psn: %u\n", a->sq_psn);
	seq_printf(m, "rq_psn: %u\n", a->rq_psn);
	seq_printf(m, "dqpn: %u\n", a->dqpn);
	seq_printf(m, "pkey: 0x%x\n", a->pkey);
	seq_printf(m, "timeout: %u\n", a->timeout);
	seq_printf(m, "retry_cnt: %u\n", a->retry_cnt);
	seq_printf(m, "rnr_retry: %u\n", a->rnr_retry);
	seq_printf(m, "min_rnr_timer: %u\n", a->min_rnr_timer);
	seq_printf(m, "max_rd_atomic: %u\n", a->max_rd_atomic);
	seq_printf(m, "ackreq_every: %u\n", a->ackreq_every);
	seq_printf(m, "ackreq_msg: %u\n", a->ackreq_msg);
	seq_printf(m, "ackreq_probe_ns: %u\n", a->ackreq_probe_ns);
	seq_printf(m, "max_unacked: %u\n", a->max_unacked);
	seq_printf(m, "no_credits: %u\n", a->no_credits);
	seq_printf(m, "clock_slack_ns: %u\n", a->clock_slack_ns);
	seq_printf(m, "remote_deny: 0x%x\n", a->remote_deny);
}

static void softrc_dbg_req(struct seq_file *m, const struct softrc_eng_req *r,
			   u64 now)
{
	seq_puts(m, "[req]\n");
	seq_printf(m, "state: %s\n", r->state < SOFTRC_REQ_NR ?
		   softrc_eng_req_state_names[r->state] : "unknown");
	seq_printf(m, "head: %u\n", r->head);
	seq_printf(m, "tail: %u\n", r->tail);
	seq_printf(m, "cur: %u\n", r->cur);
	seq_printf(m, "cur_off: %u\n", r->cur_off);
	seq_printf(m, "cur_psn: %u\n", r->cur_psn);
	seq_printf(m, "psn_next: %u\n", r->psn_next);
	seq_printf(m, "una: %u\n", r->una);
	seq_printf(m, "next_ssn: %u\n", r->next_ssn);
	seq_printf(m, "sent_ssn: %u\n", r->sent_ssn);
	seq_printf(m, "msn: %u\n", r->msn);
	seq_printf(m, "lsn: %u\n", r->lsn);
	seq_printf(m, "credits_valid: %u\n", r->credits_valid);
	seq_printf(m, "wait_idle: %u\n", r->wait_idle);
	seq_printf(m, "rd_out: %u\n", r->rd_out);
	seq_printf(m, "since_ackreq: %u\n", r->since_ackreq);
	seq_printf(m, "tail_unreq: %u\n", r->tail_unreq);
	seq_printf(m, "retry_left: %u\n", r->retry_left);
	seq_printf(m, "rnr_left: %u\n", r->rnr_left);
	seq_printf(m, "rnr_psn: %u\n", r->rnr_psn);
	seq_printf(m, "gbn_psn: %u\n", r->gbn_psn);
	seq_printf(m, "gbn_active: %u\n", r->gbn_active);
	seq_printf(m, "deadline_retry: %llu\n", r->deadline[SOFTRC_TIMER_RETRY]);
	seq_printf(m, "deadline_rnr: %llu\n", r->deadline[SOFTRC_TIMER_RNR]);
	seq_printf(m, "deadline_ackreq: %llu\n", r->deadline[SOFTRC_TIMER_ACKREQ]);
	seq_printf(m, "now: %llu\n", now);
	seq_printf(m, "drain: %u\n", r->drain);
}

static void softrc_dbg_resp(struct seq_file *m, const struct softrc_eng_resp *r)
{
	seq_puts(m, "[resp]\n");
	seq_printf(m, "state: %s\n", r->state < SOFTRC_RESP_NR ?
		   softrc_eng_resp_state_names[r->state] : "unknown");
	seq_printf(m, "epsn: %u\n", r->epsn);
	seq_printf(m, "msn: %u\n", r->msn);
	seq_printf(m, "nak_sent: %u\n", r->nak_sent);
	seq_printf(m, "ack_pending: %u\n", r->ack_pending);
	seq_printf(m, "rq_head: %u\n", r->rq_head);
	seq_printf(m, "rq_tail: %u\n", r->rq_tail);
	seq_printf(m, "res_next: %u\n", r->res_next);
	seq_printf(m, "va: 0x%llx\n", r->va);
	seq_printf(m, "rkey: 0x%x\n", r->rkey);
	seq_printf(m, "pin: %u\n", !!r->pin);
	seq_printf(m, "remaining: %u\n", r->remaining);
	seq_printf(m, "offset: %u\n", r->offset);
	seq_printf(m, "rd_tx: %u\n", r->rd_tx);
	seq_printf(m, "rd_pend: %u\n", r->rd_pend);
	seq_printf(m, "rd_psn: %u\n", r->rd_psn);
	seq_printf(m, "rd_first: %u\n", r->rd_first);
	seq_printf(m, "nak_held: 0x%x\n", r->nak_held);
	seq_printf(m, "ack_held: %u\n", r->ack_held);
	seq_printf(m, "res_live: %u\n", r->res_live);
	seq_printf(m, "fatal_held: 0x%x\n", r->fatal_held);
}

static void softrc_dbg_counters(struct seq_file *m,
				const struct softrc_eng_counters *c)
{
	const u64 *v = (const u64 *)c;
	unsigned int i;

	BUILD_BUG_ON(sizeof(*c) != SOFTRC_CORE_NR_COUNTERS * sizeof(u64));
	seq_puts(m, "[counters]\n");
	for (i = 0; i < SOFTRC_CORE_NR_COUNTERS; i++)
		seq_printf(m, "%s: %llu\n", softrc_eng_counter_names[i], v[i]);
}

static void softrc_dbg_res(struct seq_file *m, const struct softrc_qp_snap *s)
{
	static const char *const types[] = {
		[SOFTRC_RES_FREE] = "free",
		[SOFTRC_RES_READ] = "read",
		[SOFTRC_RES_ATOMIC] = "atomic",
		[SOFTRC_RES_ATOMIC_WRITE] = "atomic_write",
		[SOFTRC_RES_FLUSH] = "flush",
	};
	const struct softrc_eng_rd_res *r;
	u32 i;

	seq_puts(m, "[responder_resources]\n");
	seq_printf(m, "nres: %u\n", s->eng.nres);
	seq_printf(m, "res_cap: %u\n", s->eng.res_cap);
	for (i = 0; i < s->eng.res_cap; i++) {
		r = &s->res[i];
		if (r->type == SOFTRC_RES_FREE)
			continue;
		seq_printf(m, "[res_%u]\n", i);
		seq_printf(m, "type: %s\n", r->type < ARRAY_SIZE(types) ?
			   types[r->type] : "unknown");
		seq_printf(m, "psn: %u\n", r->psn);
		seq_printf(m, "npkts: %u\n", r->npkts);
		seq_printf(m, "va: 0x%llx\n", r->va);
		seq_printf(m, "rkey: 0x%x\n", r->rkey);
		seq_printf(m, "len: %u\n", r->len);
		seq_printf(m, "orig: 0x%llx\n", r->orig);
		seq_printf(m, "sent: %u\n", r->sent);
		seq_printf(m, "pin: %u\n", !!r->pin);
	}
}

static void softrc_dbg_pwc(struct seq_file *m, const struct softrc_qp_snap *s)
{
	const struct softrc_pwc *p;
	u32 i;

	seq_puts(m, "[pending_completions]\n");
	seq_printf(m, "size: %u\n", s->pwc_size);
	seq_printf(m, "prod: %u\n", s->pwc_prod);
	seq_printf(m, "cons: %u\n", s->pwc_cons);
	seq_printf(m, "pending: %u\n", s->pwc_pending);
	seq_printf(m, "shown: %u\n", s->npwc);
	for (i = 0; i < s->npwc; i++) {
		p = &s->pwc[i];
		seq_printf(m, "[pwc_%u]\n", i);
		seq_printf(m, "wr_id: 0x%llx\n", p->wr_id);
		seq_printf(m, "status: %u\n", p->status);
		seq_printf(m, "opcode: %u\n", p->opcode);
		seq_printf(m, "byte_len: %u\n", p->byte_len);
		seq_printf(m, "ex: 0x%x\n", p->ex);
		seq_printf(m, "flags: 0x%x\n", p->flags);
		seq_printf(m, "src_qp: %u\n", p->src_qp);
		seq_printf(m, "vlan_id: %u\n", p->vlan_id);
	}
}

static const char *softrc_qpt_name(enum ib_qp_type type)
{
	switch (type) {
	case IB_QPT_RC:
		return "rc";
	case IB_QPT_UC:
		return "uc";
	case IB_QPT_UD:
		return "ud";
	case IB_QPT_GSI:
		return "gsi";
	default:
		return "other";
	}
}

static int softrc_qp_dbg_show(struct seq_file *m, void *unused)
{
	struct softrc_qp *qp = m->private;
	struct softrc_qp_snap *s;

	s = softrc_qp_snap_take(qp);
	if (!s)
		return -ENOMEM;

	seq_puts(m, "[qp]\n");
	seq_printf(m, "qpn: %u\n", qp->ibqp.qp_num);
	seq_printf(m, "type: %s\n", softrc_qpt_name(s->qp_type));
	seq_printf(m, "ib_state: %s\n", softrc_ib_qps_name(s->state));
	seq_printf(m, "uid: %llu\n", qp->uid);
	seq_printf(m, "user: %u\n", s->is_user);
	seq_printf(m, "dying: %u\n", s->dying);
	seq_printf(m, "sqd_seen: %u\n", s->sqd_seen);
	seq_printf(m, "cq_lost: 0x%lx\n", s->cq_lost);
	seq_printf(m, "pmtu: %u\n", s->pmtu);
	seq_printf(m, "sq_depth: %u\n", s->eng.sq_depth);
	seq_printf(m, "rq_depth: %u\n", s->eng.rq_depth);
	softrc_qp_walk_summary(s, &softrc_seq_out, m);
	softrc_dbg_attr(m, &s->eng.attr);
	softrc_dbg_req(m, &s->eng.req, s->now);
	softrc_dbg_resp(m, &s->eng.resp);
	softrc_dbg_counters(m, &s->eng.cnt);
	softrc_dbg_res(m, s);
	softrc_dbg_pwc(m, s);
	kvfree(s);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(softrc_qp_dbg);

void softrc_debugfs_qp_add(struct softrc_qp *qp)
{
	char name[16];

	if (IS_ERR_OR_NULL(qp->sdev->dbg_qp))
		return;
	snprintf(name, sizeof(name), "%u", qp->ibqp.qp_num);
	qp->dbg = debugfs_create_file(name, 0400, qp->sdev->dbg_qp, qp,
				      &softrc_qp_dbg_fops);
}

/* Before anything of @qp is torn down: waits for reads in progress. */
void softrc_debugfs_qp_del(struct softrc_qp *qp)
{
	debugfs_remove(qp->dbg);
	qp->dbg = NULL;
}

void softrc_debugfs_dev_add(struct softrc_dev *sdev)
{
	sdev->dbg = debugfs_create_dir(dev_name(&sdev->ib_dev.dev),
				       softrc_dbg_root);
	sdev->dbg_qp = debugfs_create_dir("qp", sdev->dbg);
}

/* After the device's last QP is gone (dealloc_driver). */
void softrc_debugfs_dev_del(struct softrc_dev *sdev)
{
	debugfs_remove(sdev->dbg);
	sdev->dbg = NULL;
	sdev->dbg_qp = NULL;
}

/* The client watches only this module's devices. */
static int softrc_dbg_client_add(struct ib_device *ibdev)
{
	return ibdev->ops.owner == THIS_MODULE ? 0 : -EOPNOTSUPP;
}

static void softrc_dbg_client_remove(struct ib_device *ibdev, void *data)
{
}

/* The device has its new name: the directory takes it too. */
static void softrc_dbg_client_rename(struct ib_device *ibdev, void *data)
{
	struct softrc_dev *sdev = to_sdev(ibdev);
	struct dentry *d;

	if (IS_ERR_OR_NULL(sdev->dbg))
		return;
	d = debugfs_rename(softrc_dbg_root, sdev->dbg, softrc_dbg_root,
			   dev_name(&ibdev->dev));
	if (IS_ERR(d))
		ibdev_warn(ibdev, "debugfs directory keeps its old name (%pe)\n",
			   d);
}

static struct ib_client softrc_dbg_client = {
	.name = "softrc_debugfs",
	.add = softrc_dbg_client_add,
	.remove = softrc_dbg_client_remove,
	.rename = softrc_dbg_client_rename,
	.no_kverbs_req = true,
};

/* Before the first device exists (module init). */
int softrc_debugfs_init(void)
{
	int err;

	softrc_dbg_root = debugfs_create_dir("softrc", NULL);
	err = ib_register_client(&softrc_dbg_client);
	if (err) {
		debugfs_remove(softrc_dbg_root);
		softrc_dbg_root = NULL;
	}
	return err;
}

/* After the last device is gone (module exit). */
void softrc_debugfs_exit(void)
{
	ib_unregister_client(&softrc_dbg_client);
	debugfs_remove(softrc_dbg_root);
	softrc_dbg_root = NULL;
}

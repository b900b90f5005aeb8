// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrc_rqflush_test: how many user RQ ring entries one flush call of
 * softrc takes (security review of 0d7acba, F3). While loaded, a
 * kretprobe on softrc_qp_flush_user_rq() (the ERROR flush of a user RQ
 * ring, called with the QP lock held, BH off) and a kprobe on
 * softrc_queue_consumer_advance() (one ring entry consumed) count the
 * entries each call consumes; the largest count and the number of calls
 * are read-only parameters, read by limits.sh around `limits DEV
 * spin_rq`. A kernel that loops until the user's producer index stops
 * moving takes the whole ring or more in one call; a bounded one takes
 * at most its budget. Nothing in softrc is changed: the probes only
 * count.
 *
 * Context: module init/exit in process context; the probe handlers run
 * in the probed functions' context (BH off, under the QP lock), on one
 * CPU for the whole flush call, so per-CPU counts are exact.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kprobes.h>
#include <linux/module.h>
#include <linux/percpu.h>

static unsigned long max_entries;
module_param(max_entries, ulong, 0444);
MODULE_PARM_DESC(max_entries, "most ring entries one flush call consumed (read-only)");
static unsigned long calls;
module_param(calls, ulong, 0444);
MODULE_PARM_DESC(calls, "flush calls seen (read-only)");

static DEFINE_PER_CPU(unsigned long, advances);
static DEFINE_SPINLOCK(result_lock);

static int softrc_rqflush_advance(struct kprobe *p, struct pt_regs *regs)
{
	this_cpu_inc(advances);
	return 0;
}

static struct kprobe advance_kp = {
	.symbol_name = "softrc_queue_consumer_advance",
	.pre_handler = softrc_rqflush_advance,
};

struct softrc_rqflush_call {
	unsigned long start;
};

static int softrc_rqflush_entry(struct kretprobe_instance *ri,
				struct pt_regs *regs)
{
	struct softrc_rqflush_call *c = (void *)ri->data;

	c->start = this_cpu_read(advances);
	return 0;
}

static int softrc_rqflush_ret(struct kretprobe_instance *ri,
			      struct pt_regs *regs)
{
	struct softrc_rqflush_call *c = (void *)ri->data;
	unsigned long n = this_cpu_read(advances) - c->start;
	unsigned long flags;

	spin_lock_irqsave(&result_lock, flags);
	calls++;
	if (n > max_entries)
		max_entries = n;
	spin_unlock_irqrestore(&result_lock, flags);
	return 0;
}

static struct kretprobe flush_krp = {
	.kp.symbol_name = "softrc_qp_flush_user_rq",
	.entry_handler = softrc_rqflush_entry,
	.handler = softrc_rqflush_ret,
	.data_size = sizeof(struct softrc_rqflush_call),
	.maxactive = 16,
};

static int __init softrc_rqflush_init(void)
{
	int err;

	err = register_kprobe(&advance_kp);
	if (err) {
		pr_err("kprobe on %s: %d\n", advance_kp.symbol_name, err);
		return err;
	}
	err = register_kretprobe(&flush_krp);
	if (err) {
		pr_err("kretprobe on %s: %d\n", flush_krp.kp.symbol_name, err);
		unregister_kprobe(&advance_kp);
		return err;
	}
	return 0;
}

static void __exit softrc_rqflush_exit(void)
{
	unregister_kretprobe(&flush_krp);
	unregister_kprobe(&advance_kp);
	if (flush_krp.nmissed)
		pr_info("%d flush calls missed\n", flush_krp.nmissed);
	pr_info("%lu flush calls, at most %lu entries in one\n", calls,
		max_entries);
}

module_init(softrc_rqflush_init);
module_exit(softrc_rqflush_exit);
MODULE_DESCRIPTION("softrc selftest: ring entries per user RQ flush call");
MODULE_LICENSE("Dual BSD/GPL");

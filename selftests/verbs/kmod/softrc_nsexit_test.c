// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrc_nsexit_test: a QP transmits while the namespace whose UDP
 * sockets its device uses goes away (security review of 0d7acba, F8).
 *
 * The module brings a netdev of its own, nsx0: Ethernet, no rtnl_link_ops
 * (a physical device, as far as namespaces go), its transmit drops.
 * selftests/vm/nsexit.sh moves it into a namespace, creates softrc device
 * s1 on it there, and writes "s1 GID_INDEX" to the `connect` parameter:
 * an RC QP on s1 goes to RTS towards `peer`, which never answers; the
 * module keeps a reference on s1. Then the namespace is deleted. Its
 * cleanup runs the RDMA core's exit, then moves nsx0 back to init_net
 * (default_device_exit_net: s1's unregistration is queued, and waits for
 * our reference), then the subsystems' exits in reverse order: this
 * module's pernet exit (registered after softrc's) waits until the
 * script has given nsx0 its address and brought it up in init_net, so a
 * route exists again; then softrc_net_ns_exit() closes the sockets s1
 * still sends through.
 *
 * Each udp_tunnel_sock_release() starts with a synchronize_rcu(), and a
 * transmitter holds the QP lock with BH off (an RCU read section), so a
 * transmitter that began earlier finishes before the socket is released.
 * What that wait does not cover is a transmitter beginning after it,
 * while the closer still has work to do. This module puts one there each
 * time: when a udp_tunnel_sock_release() of the closer returns, the
 * closer spins (bounded by `hold_ms`) while a work item on another CPU
 * posts a SEND; that SEND's softrc_net_flush() is held (bounded too)
 * until the closer has gone on: into the next release, or out of
 * softrc_net_ns_exit(). In 0d7acba the flush then reads snet->sock4
 * again, NULL by now (an oops); a transmitter that reads the socket once
 * and keeps it is not affected, and one that finds it gone drops the
 * packet. The read-only parameters say what happened; nothing in softrc
 * is changed, the probes only wait.
 *
 * Context: module init/exit, the `connect` write, the pernet exit and the
 * work item in process context; the closer's probes in the netns cleanup
 * work (a kretprobe handler, preemption off); the transmitter's in
 * softrc's transmit path (QP lock held, BH off); nsx0's transmit in its
 * caller's (BH off).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cpumask.h>
#include <linux/etherdevice.h>
#include <linux/inet.h>
#include <linux/inetdevice.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <net/ipv6.h>
#include <net/net_namespace.h>

#include "kmod_test.h"

static char *peer = "10.0.0.1";
module_param(peer, charp, 0444);
MODULE_PARM_DESC(peer, "IPv4 address the QP sends to (nothing answers there)");
static unsigned int hold_ms = 3000;
module_param(hold_ms, uint, 0444);
MODULE_PARM_DESC(hold_ms, "longest wait of the closer and of the transmitter");
static unsigned int wait_ms = 30000;
module_param(wait_ms, uint, 0444);
MODULE_PARM_DESC(wait_ms, "longest wait of the pernet exit for nsx0 to be up");
static int nsx0_ready;
module_param(nsx0_ready, int, 0444);
MODULE_PARM_DESC(nsx0_ready, "1: the pernet exit found nsx0 up with its address (read-only)");

static unsigned int closer_holds;
module_param(closer_holds, uint, 0444);
MODULE_PARM_DESC(closer_holds, "socket releases of the closer held (read-only)");
static unsigned int tx_holds;
module_param(tx_holds, uint, 0444);
MODULE_PARM_DESC(tx_holds, "flushes held while the closer waited (read-only)");
static unsigned int tx_released;
module_param(tx_released, uint, 0444);
MODULE_PARM_DESC(tx_released, "held flushes let go because the closer went on (read-only)");
static unsigned int closes;
module_param(closes, uint, 0444);
MODULE_PARM_DESC(closes, "softrc_net_ns_exit calls that released a socket (read-only)");
static unsigned int exits;
module_param(exits, uint, 0444);
MODULE_PARM_DESC(exits, "softrc_net_ns_exit calls (read-only)");
static unsigned int releases;
module_param(releases, uint, 0444);
MODULE_PARM_DESC(releases, "udp_tunnel_sock_release calls, anyone's (read-only)");
static int post_err;
module_param(post_err, int, 0444);
MODULE_PARM_DESC(post_err, "the first ib_post_send error of the work item (read-only)");

static struct net_device *nsx_ndev;	/* nsx0 */
static struct net *nsx_net;		/* s1's namespace at connect time */
static __be32 nsx_saddr;		/* s1's address: GID kt_gid */
static struct ib_device *ibdev;
static struct ib_pd *pd;
static struct ib_cq *cq;
static struct ib_qp *qp;

/* The closer: the task in softrc_net_ns_exit, and its state. */
static struct task_struct *closer;
static unsigned int closer_releases;	/* in this softrc_net_ns_exit call */
static atomic_t closer_seq;		/* moves each time the closer goes on */
static int closer_cpu = -1;
static unsigned int round;		/* the closer hold now waiting; 0: none */
static unsigned int held_round;		/* the last round a flush was held in */
static DEFINE_PER_CPU(bool, xmit_seen);	/* a softrc_net_xmit since the flush */

static bool nsx_before(u64 end)
{
	return ktime_get_ns() < end;
}

static void nsx_post(struct work_struct *w)
{
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .wr_id = 1 };
	const struct ib_send_wr *bad;
	int err;

	err = ib_post_send(qp, &wr, &bad);
	if (err && !post_err)
		post_err = err;
}

static DECLARE_WORK(nsx_post_work, nsx_post);

/* softrc_net_ns_exit: entry and return */
static int nsx_exit_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	exits++;
	if (!READ_ONCE(closer)) {
		closer_releases = 0;
		WRITE_ONCE(closer, current);
	}
	return 0;
}

static int nsx_exit_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	if (READ_ONCE(closer) != current)
		return 0;
	if (closer_releases)
		closes++;
	WRITE_ONCE(closer, NULL);
	atomic_inc(&closer_seq);
	return 0;
}

static struct kretprobe nsx_exit_krp = {
	.kp.symbol_name = "softrc_net_ns_exit",
	.entry_handler = nsx_exit_entry,
	.handler = nsx_exit_ret,
	.maxactive = 4,
};

/* udp_tunnel_sock_release: the closer starts one (its RCU wait first) */
static int nsx_rel_entry(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	releases++;
	if (READ_ONCE(closer) == current)
		atomic_inc(&closer_seq);
	return 0;
}

/*
 * ... and has done one: past its synchronize_rcu(). Wait here until a
 * transmission that started on another CPU after that is held in its
 * flush.
 */
static int nsx_rel_ret(struct kretprobe_instance *ri, struct pt_regs *regs)
{
	int cpu = smp_processor_id(), other;
	u64 end = ktime_get_ns() + (u64)hold_ms * NSEC_PER_MSEC;

	if (READ_ONCE(closer) != current)
		return 0;
	closer_releases++;
	if (!READ_ONCE(qp))
		return 0;
	other = cpumask_any_but(cpu_online_mask, cpu);
	if (other >= nr_cpu_ids)
		return 0;
	closer_holds++;
	WRITE_ONCE(closer_cpu, cpu);
	WRITE_ONCE(round, closer_holds);
	queue_work_on(other, system_highpri_wq, &nsx_post_work);
	while (READ_ONCE(held_round) != closer_holds && nsx_before(end))
		cpu_relax();
	WRITE_ONCE(round, 0);
	return 0;
}

static struct kretprobe nsx_rel_krp = {
	.kp.symbol_name = "udp_tunnel_sock_release",
	.entry_handler = nsx_rel_entry,
	.handler = nsx_rel_ret,
	.maxactive = 4,
};

static int nsx_xmit(struct kprobe *p, struct pt_regs *regs)
{
	if (READ_ONCE(round) && smp_processor_id() != READ_ONCE(closer_cpu))
		this_cpu_write(xmit_seen, true);
	return 0;
}

static struct kprobe nsx_xmit_kp = {
	.symbol_name = "softrc_net_xmit",
	.pre_handler = nsx_xmit,
};

/*
 * The flush of a batch that softrc_net_xmit() began while the closer
 * waits: hold it until the closer has gone on (or hold_ms), then let the
 * flush run.
 */
static int nsx_flush(struct kprobe *p, struct pt_regs *regs)
{
	unsigned int r = READ_ONCE(round);
	u64 end;
	int seq;

	if (!this_cpu_read(xmit_seen))
		return 0;
	this_cpu_write(xmit_seen, false);
	if (!r || r == READ_ONCE(held_round) ||
	    smp_processor_id() == READ_ONCE(closer_cpu))
		return 0;
	seq = atomic_read(&closer_seq);
	end = ktime_get_ns() + (u64)hold_ms * NSEC_PER_MSEC;
	tx_holds++;
	WRITE_ONCE(held_round, r);
	while (atomic_read(&closer_seq) == seq && nsx_before(end))
		cpu_relax();
	if (atomic_read(&closer_seq) != seq)
		tx_released++;
	return 0;
}

static struct kprobe nsx_flush_kp = {
	.symbol_name = "softrc_net_flush",
	.pre_handler = nsx_flush,
};

/* An RC QP on ibdev in RTS towards peer (QPN 0x123, which no one has). */
static int nsx_qp(void)
{
	struct ib_qp_init_attr ia = {
		.qp_type = IB_QPT_RC,
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.cap = { .max_send_wr = 64, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	/* the 4 s timeout (20, scaled): the few SENDs are not retried meanwhile */
	struct kt_conn c = { .dqpn = 0x123, .timeout = 20 };
	union ib_gid dgid;
	__be32 addr;

	if (!check(in4_pton(peer, -1, (u8 *)&addr, -1, NULL), "peer %s", peer))
		return -EINVAL;
	ipv6_addr_set_v4mapped(addr, (struct in6_addr *)dgid.raw);
	c.dgid = &dgid;
	pd = ib_alloc_pd(ibdev, 0);
	if (!check(!IS_ERR(pd), "alloc_pd on %s", kt_dev))
		return PTR_ERR(pd);
	cq = ib_alloc_cq(ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (!check(!IS_ERR(cq), "alloc_cq"))
		return PTR_ERR(cq);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = ib_create_qp(pd, &ia);
	if (!check(!IS_ERR(qp), "create_qp"))
		return PTR_ERR(qp);
	return check(!kt_to_rts(qp, &c), "RC QP %u in RTS towards %pI4",
		     qp->qp_num, &addr) ? 0 : -EIO;
}

static void nsx_free(void)
{
	if (!IS_ERR_OR_NULL(qp))
		ib_destroy_qp(qp);
	if (!IS_ERR_OR_NULL(cq))
		ib_free_cq(cq);
	if (!IS_ERR_OR_NULL(pd))
		ib_dealloc_pd(pd);
	qp = NULL;
	cq = NULL;
	pd = NULL;
	if (ibdev)
		ib_device_put(ibdev);
	ibdev = NULL;
}

/* "DEV GID_INDEX": the QP on DEV (on nsx0), once */
static char nsx_devname[IB_DEVICE_NAME_MAX];
static DEFINE_MUTEX(nsx_connect_lock);

static int nsx_connect(const char *val, const struct kernel_param *kp)
{
	int err = -EBUSY;

	if (sscanf(val, "%63s %d", nsx_devname, &kt_gid) != 2)
		return -EINVAL;
	mutex_lock(&nsx_connect_lock);
	if (ibdev)
		goto out;
	kt_dev = nsx_devname;
	ibdev = kt_open();
	err = -ENODEV;
	if (!ibdev)
		goto out;
	memcpy(&nsx_saddr, &kt_sgid.raw[12], sizeof(nsx_saddr));
	nsx_net = dev_net(nsx_ndev);
	err = nsx_qp();
	err = kt_done() ?: err;
	if (err)
		nsx_free();
out:
	mutex_unlock(&nsx_connect_lock);
	return err;
}

static const struct kernel_param_ops nsx_connect_ops = {
	.set = nsx_connect,
};
module_param_cb(connect, &nsx_connect_ops, NULL, 0200);
MODULE_PARM_DESC(connect, "\"DEV GID_INDEX\": connect the QP on DEV (write-only)");

/* nsx0 up, with the QP's source address, in whichever namespace it is */
static bool nsx_ndev_ready(void)
{
	bool ok;

	rcu_read_lock();
	ok = netif_running(nsx_ndev) &&
	     __ip_dev_find(dev_net(nsx_ndev), nsx_saddr, false) == nsx_ndev;
	rcu_read_unlock();
	return ok;
}

/*
 * After the device exits (nsx0 is in init_net again), before softrc's:
 * wait for the script to give nsx0 a route again.
 */
static void __net_exit nsx_net_exit(struct net *net)
{
	unsigned long end = jiffies + msecs_to_jiffies(wait_ms);

	if (!qp || net != nsx_net)
		return;
	while (!nsx_ndev_ready() && time_before(jiffies, end))
		msleep(20);
	nsx0_ready = nsx_ndev_ready();
}

static struct pernet_operations nsx_net_ops = {
	.exit = nsx_net_exit,
};

static netdev_tx_t nsx_ndev_xmit(struct sk_buff *skb, struct net_device *dev)
{
	dev->stats.tx_packets++;
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops nsx_ndev_ops = {
	.ndo_start_xmit = nsx_ndev_xmit,
};

static int nsx_ndev_add(void)
{
	int err;

	nsx_ndev = alloc_etherdev(0);
	if (!nsx_ndev)
		return -ENOMEM;
	strscpy(nsx_ndev->name, "nsx0", IFNAMSIZ);
	nsx_ndev->netdev_ops = &nsx_ndev_ops;
	eth_hw_addr_random(nsx_ndev);
	err = register_netdev(nsx_ndev);
	if (err) {
		free_netdev(nsx_ndev);
		nsx_ndev = NULL;
	}
	return err;
}

static struct kprobe *nsx_kps[] = { &nsx_xmit_kp, &nsx_flush_kp };
static struct kretprobe *nsx_krps[] = { &nsx_exit_krp, &nsx_rel_krp };

static int __init softrc_nsexit_test_init(void)
{
	int err;

	err = nsx_ndev_add();
	if (err) {
		pr_err("nsx0: %d\n", err);
		return err;
	}
	err = register_pernet_subsys(&nsx_net_ops);
	if (err)
		goto out_ndev;
	err = register_kprobes(nsx_kps, ARRAY_SIZE(nsx_kps));
	if (err) {
		pr_err("kprobes on softrc_net_xmit, softrc_net_flush: %d\n", err);
		goto out_net;
	}
	err = register_kretprobes(nsx_krps, ARRAY_SIZE(nsx_krps));
	if (err) {
		pr_err("kretprobes on softrc_net_ns_exit, udp_tunnel_sock_release: %d\n",
		       err);
		goto out_kps;
	}
	return 0;
out_kps:
	unregister_kprobes(nsx_kps, ARRAY_SIZE(nsx_kps));
out_net:
	unregister_pernet_subsys(&nsx_net_ops);
out_ndev:
	unregister_netdev(nsx_ndev);
	free_netdev(nsx_ndev);
	return err;
}

static void __exit softrc_nsexit_test_exit(void)
{
	unregister_kretprobes(nsx_krps, ARRAY_SIZE(nsx_krps));
	unregister_kprobes(nsx_kps, ARRAY_SIZE(nsx_kps));
	flush_work(&nsx_post_work);
	unregister_pernet_subsys(&nsx_net_ops);
	pr_info("%u closer holds, %u flushes held, %u let go, %u closes, post %d\n",
		closer_holds, tx_holds, tx_released, closes, post_err);
	nsx_free();
	unregister_netdev(nsx_ndev);
	free_netdev(nsx_ndev);
}

module_init(softrc_nsexit_test_init);
module_exit(softrc_nsexit_test_exit);
MODULE_DESCRIPTION("softrc selftest: transmitting while the namespace's sockets close");
MODULE_LICENSE("Dual BSD/GPL");

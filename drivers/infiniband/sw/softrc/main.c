// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Module entry: the "softrc" rdma link type and the fence against rdma_rxe.
 *
 * Context: process context only (module init/exit, the RDMA netlink
 * newlink handler, the module notifier). May sleep.
 *
 * softrc reports RDMA_DRIVER_RXE so that stock rdma-core binds its librxe
 * provider. The RDMA core and rdma_rxe tell drivers apart by that id
 * alone: rdma_rxe looks devices up by (netdev, driver id), casts what it
 * finds to its own type, unregisters every device of the id on unload
 * and binds UDP 4791 in init_net. The two must never share a kernel, so
 * softrc refuses to load while rdma_rxe is loaded and vetoes rdma_rxe
 * while softrc is loaded. softrc never looks devices up by driver id.
 */
#include <linux/module.h>
#include <linux/kobject.h>
#include <rdma/rdma_netlink.h>

#include "softrc.h"
#include "device.h"
#include "sock.h"
#include "tx.h"
#include "dump.h"

#define SOFTRC_RXE_MODULE "rdma_rxe"

/*
 * Object limits a device gets when it is created (struct softrc_caps):
 * an administrator (or a test) may lower them below the defaults; values
 * of 0 or above the default mean the default.
 */
static unsigned int max_qp = SOFTRC_MAX_QP;
module_param(max_qp, uint, 0444);
MODULE_PARM_DESC(max_qp, "QPs per device (default and maximum 65536)");
static unsigned int max_cq = SOFTRC_MAX_CQ;
module_param(max_cq, uint, 0444);
MODULE_PARM_DESC(max_cq, "CQs per device (default and maximum 16384)");
static unsigned int max_mr = SOFTRC_MAX_MR;
module_param(max_mr, uint, 0444);
MODULE_PARM_DESC(max_mr, "MRs per device (default and maximum 262144)");
static unsigned int max_pd = SOFTRC_MAX_PD;
module_param(max_pd, uint, 0444);
MODULE_PARM_DESC(max_pd, "PDs per device (default and maximum 65536)");
static unsigned int max_srq = SOFTRC_MAX_SRQ;
module_param(max_srq, uint, 0444);
MODULE_PARM_DESC(max_srq, "SRQs per device (default and maximum 16384)");

static u32 softrc_cap(unsigned int param, u32 dflt)
{
	return param && param < dflt ? param : dflt;
}

/* The limits for a device being created (the parameters are read-only). */
void softrc_caps_get(struct softrc_caps *caps)
{
	caps->max_qp = softrc_cap(max_qp, SOFTRC_MAX_QP);
	caps->max_cq = softrc_cap(max_cq, SOFTRC_MAX_CQ);
	caps->max_mr = softrc_cap(max_mr, SOFTRC_MAX_MR);
	caps->max_pd = softrc_cap(max_pd, SOFTRC_MAX_PD);
	caps->max_srq = softrc_cap(max_srq, SOFTRC_MAX_SRQ);
}

/* True while rdma_rxe is loaded: it has a /sys/module entry. */
static bool softrc_rxe_loaded(void)
{
	struct kobject *kobj;

	kobj = kset_find_obj(THIS_MODULE->mkobj.kobj.kset, SOFTRC_RXE_MODULE);
	if (!kobj)
		return false;
	kobject_put(kobj);
	return true;
}

static int softrc_module_event(struct notifier_block *nb, unsigned long action,
			       void *data)
{
	struct module *mod = data;

	if (action != MODULE_STATE_COMING ||
	    strcmp(mod->name, SOFTRC_RXE_MODULE))
		return NOTIFY_DONE;

	pr_err("refusing to let %s load: softrc is loaded and claims the same RDMA driver id; rmmod softrc first\n",
	       SOFTRC_RXE_MODULE);
	return notifier_from_errno(-EBUSY);
}

static struct notifier_block softrc_module_nb = {
	.notifier_call = softrc_module_event,
};

static int softrc_newlink(const char *ibdev_name, struct net_device *ndev)
{
	/* closes the window of an rdma_rxe that was loading with us */
	if (softrc_rxe_loaded()) {
		pr_err("%s is loaded; not creating %s\n", SOFTRC_RXE_MODULE,
		       ibdev_name);
		return -EBUSY;
	}
	return softrc_dev_add(ibdev_name, ndev);
}

static struct rdma_link_ops softrc_link_ops = {
	.type = "softrc",
	.newlink = softrc_newlink,
};

static int __init softrc_init(void)
{
	int err;

	/* notifier first, so an rdma_rxe loading from now on is vetoed */
	err = register_module_notifier(&softrc_module_nb);
	if (err)
		return err;

	if (softrc_rxe_loaded()) {
		pr_err("%s is loaded and claims the same RDMA driver id; rmmod it before loading softrc\n",
		       SOFTRC_RXE_MODULE);
		err = -EBUSY;
		goto err_unregister_module_nb;
	}

	err = softrc_net_init();
	if (err)
		goto err_unregister_module_nb;
	err = softrc_dev_init();
	if (err)
		goto err_net_exit;

	err = softrc_debugfs_init();
	if (err)
		goto err_dev_exit;
	rdma_link_register(&softrc_link_ops);
	pr_info("loaded\n");
	return 0;

err_dev_exit:
	softrc_dev_exit();
err_net_exit:
	softrc_net_exit();
err_unregister_module_nb:
	unregister_module_notifier(&softrc_module_nb);
	return err;
}

static void __exit softrc_exit(void)
{
	/* waits for a running newlink, then no new device can appear */
	rdma_link_unregister(&softrc_link_ops);
	softrc_dev_remove_all();
	softrc_debugfs_exit();
	softrc_dev_exit();
	softrc_net_exit();
	softrc_tx_exit();
	unregister_module_notifier(&softrc_module_nb);
	pr_info("unloaded\n");
}

/* after ib_core and the UDP tunnel code, as for any RDMA driver */
late_initcall(softrc_init);
module_exit(softrc_exit);

MODULE_AUTHOR("softrc developers");
MODULE_DESCRIPTION("Software RoCEv2 Reliable Connection transport");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_ALIAS_RDMA_LINK("softrc");
MODULE_VERSION(SOFTRC_VERSION);

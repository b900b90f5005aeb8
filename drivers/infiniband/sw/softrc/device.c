// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device lifetime: creation from `rdma link add`, the module's own device
 * list, port state and MTU tracking from netdev events, and teardown.
 *
 * Context: process context. softrc_dev_add() runs from the RDMA netlink
 * newlink handler; the netdev notifier runs with RTNL held; the
 * dealloc_driver callback runs from whichever path unregisters the
 * device (rdma link del, the RDMA core's unregister work, module exit).
 *
 * Locks, always taken in this order:
 *   softrc_link_mutex  serializes device creation, so two `rdma link add`
 *                      on one netdev cannot both pass the duplicate check
 *   RTNL               orders list insertion against netdev unregister
 *   softrc_dev_list_lock  protects softrc_dev_list and each port_state
 * Nothing calls into ib_core registration with softrc_dev_list_lock held.
 *
 * A device enters the list only once it is registered, and leaves it in
 * dealloc_driver, just before the RDMA core frees it.
 */
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>

#include "softrc.h"
#include "net.h"
#include "dump.h"

static DEFINE_MUTEX(softrc_link_mutex);
static DEFINE_MUTEX(softrc_dev_list_lock);
static LIST_HEAD(softrc_dev_list);

/* Largest IB MTU whose packets fit in a netdev MTU of @mtu bytes. */
enum ib_mtu softrc_mtu_from_netdev(unsigned int mtu)
{
	enum ib_mtu ib_mtu;

	for (ib_mtu = IB_MTU_4096; ib_mtu > IB_MTU_256; ib_mtu--)
		if (ib_mtu_enum_to_int(ib_mtu) + SOFTRC_ROCE_OVERHEAD <= mtu)
			break;
	return ib_mtu;
}

/* A port is ACTIVE when its netdev is up with carrier and fits IB MTU 256. */
enum ib_port_state softrc_port_state(struct net_device *ndev)
{
	if (!netif_running(ndev) || !netif_carrier_ok(ndev))
		return IB_PORT_DOWN;
	if (ndev->mtu < ib_mtu_enum_to_int(IB_MTU_256) + SOFTRC_ROCE_OVERHEAD)
		return IB_PORT_DOWN;
	return IB_PORT_ACTIVE;
}

static struct softrc_dev *softrc_dev_find(struct net_device *ndev)
{
	struct softrc_dev *sdev;

	lockdep_assert_held(&softrc_dev_list_lock);
	list_for_each_entry(sdev, &softrc_dev_list, list)
		if (sdev->ndev == ndev && !sdev->ndev_gone)
			return sdev;
	return NULL;
}

static void softrc_port_event(struct softrc_dev *sdev, enum ib_port_state state)
{
	struct ib_event event = {
		.device = &sdev->ib_dev,
		.element.port_num = 1,
	};

	lockdep_assert_held(&softrc_dev_list_lock);
	if (state == sdev->port_state)
		return;
	sdev->port_state = state;
	event.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
						IB_EVENT_PORT_ERR;
	ib_dispatch_event(&event);
}

/* Why a netdev cannot carry a softrc device, or NULL if it can. */
static const char *softrc_netdev_unsuitable(struct net_device *ndev)
{
	if (ndev->type != ARPHRD_ETHER)
		return "not Ethernet (RoCEv2 needs Ethernet framing and a MAC for the GUID)";
	if (is_vlan_dev(ndev))
		return "a VLAN device: create softrc on the real device, VLAN GIDs are added to it";
	return NULL;
}

static int softrc_dev_register(struct softrc_dev *sdev, const char *name,
			       struct net_device *ndev)
{
	struct ib_device *ibdev = &sdev->ib_dev;
	int err;

	sdev->ndev = ndev;
	sdev->ndev_gone = false;
	sdev->port_state = IB_PORT_NOP;
	softrc_caps_get(&sdev->caps);
	atomic_set(&sdev->num_pd, 0);
	atomic_set(&sdev->num_qp, 0);
	atomic_set(&sdev->num_mr, 0);
	atomic_set(&sdev->num_srq, 0);
	softrc_obj_dev_init(sdev);
	INIT_LIST_HEAD(&sdev->list);

	strscpy(ibdev->node_desc, "softrc", sizeof(ibdev->node_desc));
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = 0;
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid, ndev->dev_addr);
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	softrc_set_device_ops(ibdev);

	err = softrc_net_dev_add(sdev);
	if (err)
		return err;
	err = ib_device_set_netdev(ibdev, ndev, 1);
	if (!err)
		err = ib_register_device(ibdev, name, NULL);
	if (err) {
		/* enable_driver may have run: no dealloc_driver on this path */
		softrc_debugfs_dev_del(sdev);
		softrc_net_dev_del(sdev);
	}
	return err;
}

static bool softrc_name_taken(const char *name)
{
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!ibdev)
		return false;
	ib_device_put(ibdev);
	return true;
}

/**
 * softrc_dev_add() - create and register a device on @ndev
 * @ibdev_name:	the name asked for by `rdma link add`
 * @ndev:	the netdev, held by the caller for the duration of the call
 *
 * Return: 0, or -EINVAL (unsuitable netdev), -EEXIST (@ndev already has a
 * softrc device, or the name is taken), -ENOMEM.
 */
int softrc_dev_add(const char *ibdev_name, struct net_device *ndev)
{
	struct softrc_dev *sdev;
	const char *why;
	bool gone;
	int err;

	why = softrc_netdev_unsuitable(ndev);
	if (why) {
		pr_err("cannot create %s on %s: %s\n", ibdev_name, ndev->name,
		       why);
		return -EINVAL;
	}

	mutex_lock(&softrc_link_mutex);
	mutex_lock(&softrc_dev_list_lock);
	sdev = softrc_dev_find(ndev);
	mutex_unlock(&softrc_dev_list_lock);
	if (sdev) {
		pr_err("cannot create %s: %s already has softrc device %s\n",
		       ibdev_name, ndev->name, dev_name(&sdev->ib_dev.dev));
		err = -EEXIST;
		goto out_unlock;
	}

	/* the core would fail this with -ENFILE; say what is wrong */
	if (softrc_name_taken(ibdev_name)) {
		pr_err("cannot create %s on %s: an RDMA device of that name exists\n",
		       ibdev_name, ndev->name);
		err = -EEXIST;
		goto out_unlock;
	}

	sdev = ib_alloc_device(softrc_dev, ib_dev);
	if (!sdev) {
		err = -ENOMEM;
		goto out_unlock;
	}
	err = softrc_dev_register(sdev, ibdev_name, ndev);
	if (err) {
		pr_err("cannot create %s on %s: registration failed (%d)\n",
		       ibdev_name, ndev->name, err);
		ib_dealloc_device(&sdev->ib_dev);
		goto out_unlock;
	}

	/*
	 * Publish under RTNL: the netdev notifier either ran before (the
	 * netdev is already leaving, so undo) or will find us in the list.
	 */
	rtnl_lock();
	gone = ndev->reg_state != NETREG_REGISTERED;
	if (!gone) {
		mutex_lock(&softrc_dev_list_lock);
		list_add_tail(&sdev->list, &softrc_dev_list);
		softrc_port_event(sdev, softrc_port_state(ndev));
		mutex_unlock(&softrc_dev_list_lock);
	}
	rtnl_unlock();
	if (gone) {
		ib_unregister_device(&sdev->ib_dev);
		err = -ENODEV;
	}

out_unlock:
	mutex_unlock(&softrc_link_mutex);
	return err;
}

/* dealloc_driver: the last driver callback before the core frees @ibdev */
void softrc_dev_dealloc(struct ib_device *ibdev)
{
	struct softrc_dev *sdev = to_sdev(ibdev);

	mutex_lock(&softrc_dev_list_lock);
	list_del_init(&sdev->list);
	mutex_unlock(&softrc_dev_list_lock);
	WARN_ON(atomic_read(&sdev->num_pd));
	WARN_ON(atomic_read(&sdev->num_qp));
	WARN_ON(atomic_read(&sdev->num_mr));
	WARN_ON(atomic_read(&sdev->num_srq));
	softrc_debugfs_dev_del(sdev);
	softrc_net_dev_del(sdev);
	softrc_obj_dev_fini(sdev);
}

/**
 * softrc_dev_remove_all() - unregister every device of this module
 *
 * Called at module exit, after the link type is gone. A device that some
 * other path is already unregistering is waited for: the RDMA core's
 * unregistration lock fences every unregister call, so once
 * ib_unregister_device() returns, dealloc_driver has run.
 */
void softrc_dev_remove_all(void)
{
	struct softrc_dev *sdev;

	for (;;) {
		mutex_lock(&softrc_dev_list_lock);
		sdev = list_first_entry_or_null(&softrc_dev_list,
						struct softrc_dev, list);
		if (sdev)
			get_device(&sdev->ib_dev.dev);
		mutex_unlock(&softrc_dev_list_lock);
		if (!sdev)
			break;
		ib_unregister_device(&sdev->ib_dev);
		put_device(&sdev->ib_dev.dev);
	}
}

static void softrc_netdev_gone(struct softrc_dev *sdev)
{
	lockdep_assert_held(&softrc_dev_list_lock);
	/* fails if another path already started unregistering it */
	if (!ib_device_try_get(&sdev->ib_dev))
		return;
	/* queued: RTNL is held here, and unregistering may need it */
	ib_unregister_device_queued(&sdev->ib_dev);
	ib_device_put(&sdev->ib_dev);
}

static int softrc_netdev_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct softrc_dev *sdev;

	ASSERT_RTNL();
	mutex_lock(&softrc_dev_list_lock);
	sdev = softrc_dev_find(ndev);
	if (!sdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		/*
		 * The netdev is freed once the RDMA core drops its reference,
		 * before dealloc_driver takes sdev off the lists: never match
		 * this pointer again, it may come back as a new netdev. Its
		 * free follows an RCU grace period (synchronize_net after the
		 * notifiers), so no receive-path reader still sees it unset.
		 */
		WRITE_ONCE(sdev->ndev_gone, true);
		softrc_netdev_gone(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
	case NETDEV_CHANGEMTU:
		softrc_port_event(sdev, softrc_port_state(ndev));
		break;
	default:
		break;
	}
out:
	mutex_unlock(&softrc_dev_list_lock);
	return NOTIFY_DONE;
}

static struct notifier_block softrc_netdev_nb = {
	.notifier_call = softrc_netdev_event,
};

int softrc_dev_init(void)
{
	return register_netdevice_notifier(&softrc_netdev_nb);
}

void softrc_dev_exit(void)
{
	unregister_netdevice_notifier(&softrc_netdev_nb);
}

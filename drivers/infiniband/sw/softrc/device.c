// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Device lifetime: creation from `rdma link add`, the module's own device
 * list, port state and MTU tracking from netdev events, and teardown.
 * Also the device's object tables: the key xarray MRs and MWs share (and
 * key allocation), the AH and SRQ xarrays, the MW and CQ counts.
 *
 * Context: process context. softrc_dev_add() runs from the RDMA netlink
 * newlink handler; the netdev notifier runs with RTNL held; the
 * dealloc_driver callback runs from whichever path unregisters the
 * device (rdma link del, the RDMA core's unregister work, module exit);
 * softrc_key_alloc() runs from the MR and MW verbs (process context, may
 * sleep).
 *
 * Locks: softrc_link_mutex (device creation), RTNL and
 * softrc_dev_list_lock (softrc_dev_list, each port_state); their order:
 * Documentation/softrc.rst, "Locking".
 *
 * A device enters the list only once it is registered, and leaves it in
 * dealloc_driver, just before the RDMA core frees it.
 */
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>

#include "softrc.h"
#include "device.h"
#include "mr.h"
#include "sock.h"
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

/*
 * xa_init_flags() gives every xarray set up in one file one lockdep
 * class. The AH table's lock is taken with IRQs off, also under a QP's
 * lock (a UD or GSI post, softrc_swr_ud_dest); the MR table's in
 * process context with softirqs on. One class for both is a lock seen
 * taken both ways: the debug kernel's lockdep reported it when ib_cm
 * posted a MAD (nfsrdma.sh). Each gets its own.
 */
static struct lock_class_key softrc_ah_xa_class;

/**
 * softrc_obj_dev_init() - set up a device's object tables
 * @sdev:	the device, before registration
 */
void softrc_obj_dev_init(struct softrc_dev *sdev)
{
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	atomic_set(&sdev->num_mw, 0);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	lockdep_set_class(&sdev->ah_xa.xa_lock, &softrc_ah_xa_class);
	xa_init_flags(&sdev->srq_xa, XA_FLAGS_ALLOC1);
	atomic_set(&sdev->num_cq, 0);
}

/**
 * softrc_obj_dev_fini() - tear down a device's object tables
 * @sdev:	the device; the RDMA core has destroyed every object
 */
void softrc_obj_dev_fini(struct softrc_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->mr_xa));
	WARN_ON(!xa_empty(&sdev->ah_xa));
	WARN_ON(!xa_empty(&sdev->srq_xa));
	WARN_ON(atomic_read(&sdev->num_cq));
	WARN_ON(atomic_read(&sdev->num_mw));
	xa_destroy(&sdev->mr_xa);
	xa_destroy(&sdev->ah_xa);
	xa_destroy(&sdev->srq_xa);
}

/**
 * softrc_key_alloc() - give an MR or an MW a key and publish it
 * @sdev:	the device
 * @kobj:	the object's entry, fully built: lookups may find it at once
 * @key:	out, written before the entry is visible: the key, its index
 *		in the key xarray (bits 31..8) and a random key byte (7..0)
 *
 * MRs and MWs share one key space of SOFTRC_MAX_MR + SOFTRC_MAX_MW
 * indices. They are allocated cyclically, so a freed index (and its stale
 * keys) is not handed out again until the whole space went round.
 *
 * Context: process; may sleep.
 * Return: 0, or -ENOMEM (no free index, no memory).
 */
int softrc_key_alloc(struct softrc_dev *sdev, struct softrc_key_obj *kobj,
		     u32 *key)
{
	struct xarray *xa = &sdev->mr_xa;
	u32 index;
	int err;

	err = xa_alloc_cyclic(xa, &index, NULL,
			      XA_LIMIT(1, SOFTRC_MAX_MR + SOFTRC_MAX_MW),
			      &sdev->key_next, GFP_KERNEL);
	if (err < 0)
		return err == -EBUSY ? -ENOMEM : err;
	*key = index << 8 | (get_random_u32() & 0xff);
	err = xa_err(xa_store(xa, index, kobj, GFP_KERNEL));
	if (err)
		xa_erase(xa, index);
	return err;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * device.c: creation, lookup and teardown of devices, port state, and the
 * per-device object tables (the MR/MW key xarray and key allocation, the
 * AH and SRQ xarrays, the MW and CQ counts).
 */
#ifndef SOFTRC_DEVICE_H
#define SOFTRC_DEVICE_H

#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

struct softrc_dev;
struct softrc_key_obj;

int softrc_dev_add(const char *ibdev_name, struct net_device *ndev);
void softrc_dev_remove_all(void);
void softrc_dev_dealloc(struct ib_device *ibdev);
int softrc_dev_init(void);
void softrc_dev_exit(void);
enum ib_mtu softrc_mtu_from_netdev(unsigned int mtu);
enum ib_port_state softrc_port_state(struct net_device *ndev);

/* the object tables */
void softrc_obj_dev_init(struct softrc_dev *sdev);
void softrc_obj_dev_fini(struct softrc_dev *sdev);
int softrc_key_alloc(struct softrc_dev *sdev, struct softrc_key_obj *kobj,
		     u32 *key);

#endif /* SOFTRC_DEVICE_H */

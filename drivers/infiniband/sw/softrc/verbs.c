// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Control verbs: device and port queries, user contexts and protection
 * domains, and the ib_device_ops table.
 *
 * Context: process context, called by the RDMA core (uverbs commands,
 * kernel ULPs, device registration). May sleep. Touches only the device
 * and the objects the core hands in.
 */
#include <linux/ethtool.h>
#include <net/addrconf.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_sysfs.h>
#include <rdma/rdma_user_rxe.h>

#include "compat.h"
#include "softrc.h"
#include "mcast.h"
#include "stats.h"
#include "qp.h"
#include "post.h"
#include "ah.h"
#include "cq.h"
#include "mr.h"
#include "mw.h"
#include "device.h"
#include "queue.h"
#include "srq.h"
#include "dump.h"

/* rdma-core's librxe accepts exactly this uverbs ABI (kernel rxe's value). */
#define SOFTRC_UVERBS_ABI_VERSION 2

/* softrc's uverbs values are the kernel's where its headers have them. */
#if SOFTRC_KERNEL_HAS_ATOMIC_WRITE
static_assert(SOFTRC_ABI_WR_ATOMIC_WRITE == IB_WR_ATOMIC_WRITE);
static_assert(SOFTRC_ABI_WC_ATOMIC_WRITE == IB_WC_ATOMIC_WRITE);
static_assert(SOFTRC_ABI_DEVICE_ATOMIC_WRITE == IB_DEVICE_ATOMIC_WRITE);
static_assert(SOFTRC_ABI_WR_ATOMIC_WRITE == IB_UVERBS_WR_ATOMIC_WRITE);
static_assert(SOFTRC_ABI_WC_ATOMIC_WRITE == IB_UVERBS_WC_ATOMIC_WRITE);
static_assert((int)SOFTRC_OP_ATOMIC_WRITE == (int)IB_OPCODE_RC_ATOMIC_WRITE);
#endif
#if SOFTRC_KERNEL_HAS_FLUSH
static_assert(SOFTRC_ABI_WR_FLUSH == IB_WR_FLUSH);
static_assert(SOFTRC_ABI_WC_FLUSH == IB_WC_FLUSH);
static_assert(SOFTRC_ABI_WR_FLUSH == IB_UVERBS_WR_FLUSH);
static_assert(SOFTRC_ABI_WC_FLUSH == IB_UVERBS_WC_FLUSH);
static_assert(SOFTRC_ABI_ACCESS_FLUSH_GLOBAL == IB_ACCESS_FLUSH_GLOBAL);
static_assert(SOFTRC_ABI_ACCESS_FLUSH_PERSISTENT == IB_ACCESS_FLUSH_PERSISTENT);
static_assert(SOFTRC_ABI_DEVICE_FLUSH_GLOBAL == IB_DEVICE_FLUSH_GLOBAL);
static_assert(SOFTRC_ABI_DEVICE_FLUSH_PERSISTENT == IB_DEVICE_FLUSH_PERSISTENT);
static_assert((int)SOFTRC_OP_FLUSH == (int)IB_OPCODE_RC_FLUSH);
static_assert(SOFTRC_FLUSH_GLOBAL == IB_FLUSH_GLOBAL);
static_assert(SOFTRC_FLUSH_PERSISTENT == IB_FLUSH_PERSISTENT);
static_assert(SOFTRC_FLUSH_RANGE == IB_FLUSH_RANGE);
static_assert(SOFTRC_FLUSH_MR == IB_FLUSH_MR);
#endif

static int softrc_query_device(struct ib_device *ibdev,
			       struct ib_device_attr *attr,
			       struct ib_udata *udata)
{
	struct softrc_dev *sdev = to_sdev(ibdev);

	/*
	 * No driver-specific request or response exists (the rxe ABI has
	 * none). Accept what a newer provider may send as long as it asks
	 * for nothing (all zero), and leave any response space untouched.
	 */
	if (udata && udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = 0;
	attr->sys_image_guid = sdev->ib_dev.node_guid;
	attr->max_mr_size = U64_MAX;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = SOFTRC_VENDOR_ID;
	attr->max_qp = sdev->caps.max_qp;
	attr->max_qp_wr = SOFTRC_MAX_QP_WR;
	attr->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_CURR_QP_STATE_MOD |
				 IB_DEVICE_SRQ_RESIZE |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 SOFTRC_ABI_DEVICE_ATOMIC_WRITE |
				 SOFTRC_DEVICE_CAP_FLUSH;
	/*
	 * pd->local_dma_lkey is the device's (0: no MR index is 0), so the
	 * core creates no whole-address-space DMA MR per kernel PD; kernel
	 * QPs name kernel virtual addresses with it (virtual DMA), user QPs
	 * can never use it.
	 */
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_LOCAL_DMA_LKEY;
	attr->max_send_sge = SOFTRC_MAX_SGE;
	attr->max_recv_sge = SOFTRC_MAX_SGE;
	attr->max_sge_rd = SOFTRC_MAX_SGE;
	attr->max_cq = sdev->caps.max_cq;
	attr->max_cqe = SOFTRC_MAX_CQE;
	attr->max_mr = sdev->caps.max_mr;
	attr->max_mw = SOFTRC_MAX_MW;
	attr->max_fast_reg_page_list_len = SOFTRC_MAX_FAST_REG_PAGES;
	attr->max_pd = sdev->caps.max_pd;
	attr->max_qp_rd_atom = SOFTRC_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SOFTRC_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SOFTRC_MAX_RD_ATOMIC * sdev->caps.max_qp;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = SOFTRC_MAX_AH;
	attr->max_mcast_grp = SOFTRC_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SOFTRC_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SOFTRC_MAX_MCAST_ATTACH;
	attr->max_srq = sdev->caps.max_srq;
	attr->max_srq_wr = SOFTRC_MAX_SRQ_WR;
	attr->max_srq_sge = SOFTRC_MAX_SGE;
	attr->max_pkeys = SOFTRC_PKEY_TABLE_LEN;
	attr->local_ca_ack_delay = SOFTRC_LOCAL_ACK_DELAY;
	return 0;
}

static int softrc_query_port(struct ib_device *ibdev, u32 port_num,
			     struct ib_port_attr *attr)
{
	struct net_device *ndev = to_sdev(ibdev)->ndev;
	int err;

	/* the core zeroes *attr */
	attr->state = softrc_port_state(ndev);
	attr->phys_state = attr->state == IB_PORT_ACTIVE ?
			   IB_PORT_PHYS_STATE_LINK_UP :
			   IB_PORT_PHYS_STATE_DISABLED;
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = softrc_mtu_from_netdev(ndev->mtu);

	attr->gid_tbl_len = SOFTRC_GID_TABLE_LEN;
	attr->port_cap_flags = IB_PORT_CM_SUP;
	attr->max_msg_sz = SOFTRC_MAX_MSG_SIZE;
	attr->pkey_tbl_len = SOFTRC_PKEY_TABLE_LEN;
	attr->max_vl_num = 1;

	err = ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
			       &attr->active_width);
	/* no ethtool speed (veth, tun) is not an error: report the default */
	return err == -EINVAL ? 0 : err;
}

static int softrc_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				     struct ib_port_immutable *immutable)
{
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->pkey_tbl_len = SOFTRC_PKEY_TABLE_LEN;
	immutable->gid_tbl_len = SOFTRC_GID_TABLE_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer softrc_get_link_layer(struct ib_device *ibdev,
						  u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

/*
 * ib_device_ops.get_netdev: the port's netdev, with a reference for the
 * caller; NULL once it is being unregistered. SMC-R finds the netdev of
 * an RDMA port this way (ksmbd too). @sdev->ndev stays valid while the
 * device is registered: the RDMA core holds its own reference.
 */
static struct net_device *softrc_get_netdev(struct ib_device *ibdev,
					    u32 port_num)
{
	struct softrc_dev *sdev = to_sdev(ibdev);
	struct net_device *ndev = NULL;

	if (port_num == 1 && !READ_ONCE(sdev->ndev_gone)) {
		ndev = sdev->ndev;
		dev_hold(ndev);
	}
	return ndev;
}

/* sysfs `parent`: the netdev's name, as rxe shows it */
static ssize_t parent_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct softrc_dev *sdev = rdma_device_to_drv_device(device,
							    struct softrc_dev,
							    ib_dev);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}

static DEVICE_ATTR_RO(parent);

static struct attribute *softrc_dev_attrs[] = {
	&dev_attr_parent.attr,
	NULL
};

static const struct attribute_group softrc_dev_attr_group = {
	.attrs = softrc_dev_attrs,
};

static int softrc_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			     u16 *pkey)
{
	if (index >= SOFTRC_PKEY_TABLE_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int softrc_alloc_ucontext(struct ib_ucontext *ibuc,
				 struct ib_udata *udata)
{
	/* the rxe ABI passes no driver data with GET_CONTEXT */
	return 0;
}

static void softrc_dealloc_ucontext(struct ib_ucontext *ibuc)
{
}

/*
 * ib_device_ops.disassociate_ucontext: the device is going away (rdma
 * link del, netdev or netns removal, rmmod) while user space holds it
 * open. Having this op tells the RDMA core not to wait for the user: it
 * zaps the mappings it tracks, calls us, destroys every object of the
 * context (RDMA_REMOVE_DRIVER_REMOVE, through our ordinary destroy verbs)
 * and reports IB_EVENT_DEVICE_FATAL; later commands fail with EIO.
 *
 * Nothing to do here: no object of ours outlives its destroy verb and no
 * destroy waits for user space. The rings stay safe: they are mapped with
 * remap_vmalloc_range(), which takes a page reference per mapped page, so
 * when destroy frees a ring (softrc_queue_free -> vfree) its pages live
 * on, still mapped, until the user unmaps them; the kernel never touches
 * a ring after softrc_queue_free().
 */
static void softrc_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int softrc_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct softrc_dev *sdev = to_sdev(ibpd->device);

	return softrc_count_get(&sdev->num_pd, sdev->caps.max_pd) ? 0 : -ENOMEM;
}

static int softrc_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	atomic_dec(&to_sdev(ibpd->device)->num_pd);
	return 0;
}

/*
 * Every MR (user, DMA, fast-register) counts against caps.max_mr. The
 * count is taken before the MR exists and returned when it is gone.
 */
static struct ib_mr *softrc_mr_counted(struct softrc_dev *sdev,
				       struct ib_mr *mr)
{
	if (IS_ERR(mr))
		atomic_dec(&sdev->num_mr);
	return mr;
}

static struct ib_mr *softrc_get_dma_mr_counted(struct ib_pd *ibpd, int access)
{
	struct softrc_dev *sdev = to_sdev(ibpd->device);

	if (!softrc_count_get(&sdev->num_mr, sdev->caps.max_mr))
		return ERR_PTR(-ENOMEM);
	return softrc_mr_counted(sdev, softrc_get_dma_mr(ibpd, access));
}

static struct ib_mr *softrc_reg_user_mr_counted(struct ib_pd *ibpd, u64 start,
						u64 length, u64 iova, int access,
						struct ib_udata *udata)
{
	struct softrc_dev *sdev = to_sdev(ibpd->device);

	if (!softrc_count_get(&sdev->num_mr, sdev->caps.max_mr))
		return ERR_PTR(-ENOMEM);
	return softrc_mr_counted(sdev, softrc_reg_user_mr(ibpd, start, length,
							  iova, access, udata));
}

static struct ib_mr *softrc_alloc_mr_counted(struct ib_pd *ibpd,
					     enum ib_mr_type type,
					     u32 max_num_sg)
{
	struct softrc_dev *sdev = to_sdev(ibpd->device);

	if (!softrc_count_get(&sdev->num_mr, sdev->caps.max_mr))
		return ERR_PTR(-ENOMEM);
	return softrc_mr_counted(sdev, softrc_alloc_mr(ibpd, type, max_num_sg));
}

static int softrc_dereg_mr_counted(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct softrc_dev *sdev = to_sdev(ibmr->device);	/* @ibmr goes */
	int err = softrc_dereg_mr(ibmr, udata);

	if (!err)
		atomic_dec(&sdev->num_mr);
	return err;
}

static int softrc_enable_driver(struct ib_device *ibdev)
{
	ibdev_info(ibdev, "added on %s\n", netdev_name(to_sdev(ibdev)->ndev));
	softrc_debugfs_dev_add(to_sdev(ibdev));
	return 0;
}

static const struct ib_device_ops softrc_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_RXE,
	.uverbs_abi_ver = SOFTRC_UVERBS_ABI_VERSION,

	.alloc_hw_port_stats = softrc_alloc_hw_port_stats,
	.alloc_mr = softrc_alloc_mr_counted,
	.alloc_mw = softrc_alloc_mw,
	.alloc_pd = softrc_alloc_pd,
	.alloc_ucontext = softrc_alloc_ucontext,
	.attach_mcast = softrc_attach_mcast,
	.create_ah = softrc_create_ah,
	.create_cq = softrc_create_cq,
	.create_srq = softrc_create_srq,
	.create_user_ah = softrc_create_ah,
	.dealloc_driver = softrc_dev_dealloc,
	.dealloc_mw = softrc_dealloc_mw,
	.dealloc_pd = softrc_dealloc_pd,
	.dealloc_ucontext = softrc_dealloc_ucontext,
	.disassociate_ucontext = softrc_disassociate_ucontext,
	.dereg_mr = softrc_dereg_mr_counted,
	.destroy_ah = softrc_destroy_ah,
	.destroy_cq = softrc_destroy_cq,
	.destroy_srq = softrc_destroy_srq,
	.detach_mcast = softrc_detach_mcast,
	.create_qp = softrc_create_qp,
	.destroy_qp = softrc_destroy_qp,
	.enable_driver = softrc_enable_driver,
	.fill_res_cq_entry = softrc_fill_res_cq_entry,
	.fill_res_cq_entry_raw = softrc_fill_res_cq_entry_raw,
	.fill_res_mr_entry = softrc_fill_res_mr_entry,
	.fill_res_mr_entry_raw = softrc_fill_res_mr_entry_raw,
	.fill_res_qp_entry = softrc_fill_res_qp_entry,
	.fill_res_qp_entry_raw = softrc_fill_res_qp_entry_raw,
	.get_hw_stats = softrc_get_hw_stats,
	.modify_qp = softrc_modify_qp,
	.post_recv = softrc_post_recv,
	.post_send = softrc_post_send,
	.query_qp = softrc_query_qp,
	.get_dma_mr = softrc_get_dma_mr_counted,
	.device_group = &softrc_dev_attr_group,
	.get_link_layer = softrc_get_link_layer,
	.get_netdev = softrc_get_netdev,
	.get_port_immutable = softrc_get_port_immutable,
	.map_mr_sg = softrc_map_mr_sg,
	.mmap = softrc_mmap,
	.mmap_free = softrc_mmap_free,
	.modify_srq = softrc_modify_srq,
	.poll_cq = softrc_poll_cq,
	.post_srq_recv = softrc_post_srq_recv,
	.query_ah = softrc_query_ah,
	.query_device = softrc_query_device,
	.query_pkey = softrc_query_pkey,
	.query_port = softrc_query_port,
	.query_srq = softrc_query_srq,
	.reg_user_mr = softrc_reg_user_mr_counted,
	.req_notify_cq = softrc_req_notify_cq,
	.resize_cq = softrc_resize_cq,

	INIT_RDMA_OBJ_SIZE(ib_ah, softrc_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, softrc_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, softrc_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, softrc_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, softrc_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, softrc_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, softrc_ucontext, ibuc),
};

void softrc_set_device_ops(struct ib_device *ibdev)
{
	ib_set_device_ops(ibdev, &softrc_dev_ops);
	ib_set_device_ops(ibdev, &softrc_counter_ops);
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one place where softrc meets the differences between the kernels
 * it builds for (Documentation/compat.rst lists them): every kernel API
 * that changed between 6.1 and 6.12 is wrapped here, on the HAVE_* macros
 * of softrc_probes.h, which compat/probes.mk generates at build time by
 * compiling each compat/NAME.c against the target kernel's headers. No
 * other file tests a kernel version or a HAVE_* macro.
 *
 * Context: any; the helpers are inline and neither sleep nor lock.
 */
#ifndef SOFTRC_COMPAT_H
#define SOFTRC_COMPAT_H

#include "softrc_probes.h"

#include <net/inet_sock.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>
#include <rdma/rdma_user_rxe.h>
#include <rdma/uverbs_ioctl.h>

#ifdef HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * Trace events: softrc_assign_str(dst, src) fills a __string(dst, src)
 * field; newer kernels take the source from the __string() declaration.
 */
#ifdef HAVE_ASSIGN_STR_DST_ONLY
#define softrc_assign_str(dst, src)	__assign_str(dst)
#else
#define softrc_assign_str(dst, src)	__assign_str(dst, src)
#endif

/*
 * ib_device_ops.create_cq's last argument: the uverbs attribute bundle,
 * or the udata itself. softrc_create_cq_udata() gives the udata either
 * way (NULL for a kernel consumer's CQ).
 */
#ifdef HAVE_CREATE_CQ_ATTR_BUNDLE
#define softrc_create_cq_arg	uverbs_attr_bundle
static inline struct ib_udata *
softrc_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define softrc_create_cq_arg	ib_udata
static inline struct ib_udata *softrc_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/*
 * ATOMIC WRITE in the kernel's verbs: where enum ib_wr_opcode and
 * ib_wc_opcode name it, a kernel ULP may post it; elsewhere (6.1, whose
 * IB_WC_* value 9 is IB_WC_MASKED_COMP_SWAP) only user QPs do, with the
 * uverbs values of include/softrc/abi.h.
 */
#ifdef HAVE_IB_ATOMIC_WRITE
#define SOFTRC_KERNEL_HAS_ATOMIC_WRITE	1
#else
#define SOFTRC_KERNEL_HAS_ATOMIC_WRITE	0
#endif

/*
 * FLUSH (IBTA 1.5) in the kernel's verbs (compat/ib_flush.c): where the
 * kernel names IB_WR_FLUSH, IB_WC_FLUSH and the IB_ACCESS_FLUSH_* rights,
 * a kernel ULP may post a FLUSH, MRs and QPs may carry the rights, and
 * the device says it does placement type GLOBAL. PERSISTENT is never
 * advertised and no MR can carry it: softrc has no persistent memory (as
 * rxe refuses it on pages that are not pmem), so a PERSISTENT FLUSH finds
 * no R_Key and is NAKed remote access. Elsewhere (6.1, whose core refuses
 * the access bits anyway) none of it exists: nothing is advertised and a
 * FLUSH WR is refused.
 */
#ifdef HAVE_IB_FLUSH
#define SOFTRC_KERNEL_HAS_FLUSH		1
#define SOFTRC_MR_ACCESS_FLUSH		IB_ACCESS_FLUSH_GLOBAL
#define SOFTRC_QP_ACCESS_FLUSH		(IB_ACCESS_FLUSH_GLOBAL | \
					 IB_ACCESS_FLUSH_PERSISTENT)
#define SOFTRC_DEVICE_CAP_FLUSH		IB_DEVICE_FLUSH_GLOBAL
#else
#define SOFTRC_KERNEL_HAS_FLUSH		0
#define SOFTRC_MR_ACCESS_FLUSH		0
#define SOFTRC_QP_ACCESS_FLUSH		0
#define SOFTRC_DEVICE_CAP_FLUSH		0
#endif

/**
 * softrc_user_flush_wr() - the FLUSH fields of a librxe send WQE
 * @u:		the WQE copied from the user ring
 * @va, @rkey, @type, @level: out: the target and the FETH values
 *
 * librxe (rdma-core 45 on) keeps the target in wr.flush and the range's
 * length in dma.length, like a WRITE's, with no SGEs. Where the rxe ABI
 * has no such fields (6.1) there is no FLUSH.
 * Return: true if @u's fields were read.
 */
static inline bool softrc_user_flush_wr(const struct rxe_send_wqe *u, u64 *va,
					u32 *rkey, u8 *type, u8 *level)
{
#ifdef HAVE_RXE_USER_FLUSH
	*va = u->wr.wr.flush.remote_addr;
	*rkey = u->wr.wr.flush.rkey;
	*type = u->wr.wr.flush.type;
	*level = u->wr.wr.flush.level;
	return true;
#else
	return false;
#endif
}

/* A UDP socket's multicast loop off (IPv4, and IPv6 where built in). */
static inline void softrc_sock_no_mc_loop(struct sock *sk, bool ipv6)
{
#if IS_ENABLED(CONFIG_IPV6)
	if (ipv6) {
#ifdef HAVE_INET6_MC_LOOP_BIT
		inet6_clear_bit(MC6_LOOP, sk);
#else
		inet6_sk(sk)->mc_loop = 0;
#endif
		return;
	}
#endif
#ifdef HAVE_INET_MC_LOOP_BIT
	inet_clear_bit(MC_LOOP, sk);
#else
	inet_sk(sk)->mc_loop = 0;
#endif
}

/* Give back what the page fragment cache @nc holds of its page. */
static inline void softrc_page_frag_cache_drain(struct page_frag_cache *nc)
{
#ifdef HAVE_PAGE_FRAG_CACHE_DRAIN
	page_frag_cache_drain(nc);
#else
	if (nc->va)
		__page_frag_cache_drain(virt_to_head_page(nc->va),
					nc->pagecnt_bias);
	nc->va = NULL;
#endif
}

#endif /* SOFTRC_COMPAT_H */

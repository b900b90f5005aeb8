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

#endif /* SOFTRC_COMPAT_H */

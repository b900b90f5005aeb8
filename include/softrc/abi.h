/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * uverbs ABI values softrc speaks that not every supported kernel's
 * headers name: the numbers are fixed by include/uapi/rdma/ib_user_verbs.h
 * of the kernels that have them (and by rdma-core's libibverbs, which
 * librxe writes into the send WQE), so they are the same on every kernel;
 * a kernel whose headers define them is checked against these where the
 * module is built (drivers/infiniband/sw/softrc/verbs.c).
 *
 * Context: none (constants). Plain C: the engine (core/) and host tools
 * may include it.
 */
#ifndef SOFTRC_ABI_H
#define SOFTRC_ABI_H

#include "platform.h"

/*
 * ATOMIC WRITE (IBTA 1.5, Annex A19). 6.1 lacks IB_UVERBS_WR_ATOMIC_WRITE,
 * IB_UVERBS_WC_ATOMIC_WRITE and IB_UVERBS_DEVICE_ATOMIC_WRITE (they came
 * with 6.2); 6.12 has them with these values.
 */
#define SOFTRC_ABI_WR_ATOMIC_WRITE	15	/* IB_UVERBS_WR_ATOMIC_WRITE */
#define SOFTRC_ABI_WC_ATOMIC_WRITE	9	/* IB_UVERBS_WC_ATOMIC_WRITE */
/* device_cap_flags_ex bit 40: IB_UVERBS_DEVICE_ATOMIC_WRITE */
#define SOFTRC_ABI_DEVICE_ATOMIC_WRITE	BIT_ULL(40)

/*
 * FLUSH (IBTA 1.5, Annex A19). 6.1 lacks IB_UVERBS_WR_FLUSH,
 * IB_UVERBS_WC_FLUSH, the IB_UVERBS_ACCESS_FLUSH_* MR rights and the
 * IB_UVERBS_DEVICE_FLUSH_* capabilities (they came with 6.2); 6.12 has
 * them with these values. librxe (rdma-core 45 on) writes the WR opcode
 * into the send WQE and reads the WC opcode from the CQE.
 */
#define SOFTRC_ABI_WR_FLUSH		14	/* IB_UVERBS_WR_FLUSH */
#define SOFTRC_ABI_WC_FLUSH		8	/* IB_UVERBS_WC_FLUSH */
#define SOFTRC_ABI_ACCESS_FLUSH_GLOBAL	BIT(8)	/* IB_UVERBS_ACCESS_FLUSH_GLOBAL */
#define SOFTRC_ABI_ACCESS_FLUSH_PERSISTENT BIT(9) /* ..._FLUSH_PERSISTENT */
/* device_cap_flags_ex bits 38 and 39: IB_UVERBS_DEVICE_FLUSH_* */
#define SOFTRC_ABI_DEVICE_FLUSH_GLOBAL	BIT_ULL(38)
#define SOFTRC_ABI_DEVICE_FLUSH_PERSISTENT BIT_ULL(39)

#endif /* SOFTRC_ABI_H */

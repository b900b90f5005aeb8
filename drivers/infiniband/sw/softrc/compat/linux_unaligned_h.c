// SPDX-License-Identifier: GPL-2.0
/*
 * HAVE_LINUX_UNALIGNED_H: the unaligned access helpers are
 * <linux/unaligned.h>; before, <asm/unaligned.h>.
 * Upstream: "move asm/unaligned.h to linux/unaligned.h" (v6.12).
 */
#include <linux/unaligned.h>

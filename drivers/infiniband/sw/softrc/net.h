/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transitional: net.c is gone (sock.c, rx.c, tx.c, icrc_skb.c, copy.c).
 * mr.c still includes this header for softrc_net_copy() and
 * softrc_skb_copy_bits(), which copy.h declares; it declares nothing of
 * its own and goes once mr.c includes copy.h.
 *
 * Context: any.
 */
#ifndef SOFTRC_NET_H
#define SOFTRC_NET_H

#include "softrc.h"
#include "copy.h"

#endif /* SOFTRC_NET_H */

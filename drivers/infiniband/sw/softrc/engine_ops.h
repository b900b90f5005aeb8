/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * engine_ops.c: the engine's callbacks (struct softrc_eng_ops) and the
 * payload of a packet being built, copied or attached as fragments. Its
 * functions keep the softrc_glue_ prefix: "the glue" is the module's side
 * of the engine, in the sources and in Documentation/softrc.rst.
 *
 * Context: with the QP lock held (inside an engine call, or the
 * transmit path under it).
 */
#ifndef SOFTRC_ENGINE_OPS_H
#define SOFTRC_ENGINE_OPS_H

#include <linux/skbuff.h>

#include "core/engine.h"

struct softrc_qp;

extern const struct softrc_eng_ops softrc_glue_ops;

int softrc_glue_fill(struct softrc_qp *qp, const struct softrc_eng_buf *payload,
		     u8 *dst);
bool softrc_glue_can_frag(struct softrc_qp *qp, const struct softrc_eng_buf *pl);
int softrc_glue_frags(struct softrc_qp *qp, const struct softrc_eng_buf *pl,
		      struct sk_buff *skb);

#endif /* SOFTRC_ENGINE_OPS_H */

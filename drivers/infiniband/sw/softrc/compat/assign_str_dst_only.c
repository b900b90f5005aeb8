// SPDX-License-Identifier: GPL-2.0
/*
 * HAVE_ASSIGN_STR_DST_ONLY: a trace event's __assign_str() takes only the
 * destination field; the source is the one named in __string(). Before,
 * __assign_str(dst, src). Expanding the one-argument form inside
 * __stringify() is a preprocessor error where the macro takes two.
 * Upstream: "tracing/treewide: Remove second parameter of __assign_str()"
 * (v6.10).
 */
#include <linux/stringify.h>
#include <trace/stages/stage6_event_callback.h>

static const char softrc_probe[] __maybe_unused = __stringify(__assign_str(dev));

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The tracepoints of trace.h, instantiated once.
 *
 * Context: none of its own (the events fire from the glue, see trace.h).
 */
#define CREATE_TRACE_POINTS
#include "trace.h"

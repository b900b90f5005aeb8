/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transitional: the engine's public API is core/engine.h. This header
 * stays only while net.h still includes it (tools/testing/engine-check.sh
 * lists net.h, net.c and crc.c as temporary exceptions), and carries the
 * engine's former names that net.c and net.h still use. Both go once
 * they include core/engine.h and use the softrc_eng_ names.
 */
#ifndef SOFTRC_CORE_QP_H
#define SOFTRC_CORE_QP_H

#include "engine.h"

#define softrc_core_rx		softrc_eng_rx
#define softrc_core_rx_invalid	softrc_eng_rx_invalid
#define softrc_core_rx_flush	softrc_eng_rx_flush
#define softrc_buf		softrc_eng_buf

#endif /* SOFTRC_CORE_QP_H */

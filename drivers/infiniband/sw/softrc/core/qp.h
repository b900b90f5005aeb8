/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Transitional: the engine's public API is core/engine.h. This name stays
 * only while net.h still includes it (`make style` lists net.h as a
 * temporary exception); it goes once net.h includes core/engine.h.
 */
#ifndef SOFTRC_CORE_QP_H
#define SOFTRC_CORE_QP_H

#include "engine.h"

#endif /* SOFTRC_CORE_QP_H */

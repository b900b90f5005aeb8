/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * Tracepoints of the "softrc" trace system (tracefs events/softrc/):
 * packets in and out, go-back-N retransmissions, NAKs, RNR waits, the
 * retry and RNR timers, QP state changes and completions. The events
 * and their fields are described in Documentation/tracing.rst.
 *
 * Context: every event fires with qp->lock held (asserted by its caller),
 * in softirq or in process context with BH off; TP_fast_assign reads only
 * the QP's identity and the packet, completion or values passed in.
 * Disabled events cost one static-key branch at their call site.
 *
 * Names are printed from the lists that define the values: BTH opcodes
 * from SOFTRC_OPCODES (include/softrc/opcode.h), retransmission reasons
 * from SOFTRC_RETRY_REASONS (core/engine.h), WC status from the RDMA core's
 * IB_WC_STATUS_LIST (trace/misc/rdma.h); the verbs enums without such a
 * list (QP state, WC opcode, timer) get theirs below.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM softrc

#if !defined(SOFTRC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SOFTRC_TRACE_H

#include <linux/tracepoint.h>
#include <rdma/ib_cm.h>
#include <rdma/rdma_cm.h>
/* the CM event lists in it need the two above */
#include <trace/misc/rdma.h>

#include "compat.h"
#include "qp.h"
#include "timers.h"

#ifndef SOFTRC_TRACE_LISTS
#define SOFTRC_TRACE_LISTS

/* __print_symbolic(@val, { v, "name" }...) from a list of ", { v, s }" */
#define softrc_show(val, list) __print_symbolic(val list)

#define SOFTRC__TP_OPCODE(name, code, flags) \
	, { code, #name }
#define softrc_show_opcode(op) \
	softrc_show(op, SOFTRC_OPCODES(SOFTRC__TP_OPCODE))

#define SOFTRC__TP_RETRY(n) \
	, { SOFTRC_RETRY_##n, #n }
#define softrc_show_retry(why) \
	softrc_show(why, SOFTRC_RETRY_REASONS(SOFTRC__TP_RETRY))

/* enum ib_qp_state */
#define SOFTRC_TP_QPS(X)						\
	X(IB_QPS_RESET, RESET)						\
	X(IB_QPS_INIT, INIT)						\
	X(IB_QPS_RTR, RTR)						\
	X(IB_QPS_RTS, RTS)						\
	X(IB_QPS_SQD, SQD)						\
	X(IB_QPS_SQE, SQE)						\
	X(IB_QPS_ERR, ERR)

/* enum ib_wc_opcode */
#define SOFTRC_TP_WC_OPCODES(X)						\
	X(IB_WC_SEND, SEND)						\
	X(IB_WC_RDMA_WRITE, RDMA_WRITE)					\
	X(IB_WC_RDMA_READ, RDMA_READ)					\
	X(IB_WC_COMP_SWAP, COMP_SWAP)					\
	X(IB_WC_FETCH_ADD, FETCH_ADD)					\
	X(IB_WC_BIND_MW, BIND_MW)					\
	X(IB_WC_LOCAL_INV, LOCAL_INV)					\
	X(IB_WC_REG_MR, REG_MR)						\
	X(IB_WC_RECV, RECV)						\
	X(IB_WC_RECV_RDMA_WITH_IMM, RECV_RDMA_WITH_IMM)

/* enum softrc_eng_timer_id */
#define SOFTRC_TP_TIMERS(X)						\
	X(SOFTRC_TIMER_RETRY, retry)					\
	X(SOFTRC_TIMER_RNR, rnr)					\
	X(SOFTRC_TIMER_ACKREQ, ackreq)

/* AETH syndrome types of a NAK */
#define SOFTRC_TP_NAK_TYPES(X)						\
	X(SOFTRC_AETH_RNR_NAK, rnr_nak)					\
	X(SOFTRC_AETH_NAK, nak)

#define SOFTRC__TP_SYM(v, name) \
	, { v, #name }
#define softrc_show_qps(s) softrc_show(s, SOFTRC_TP_QPS(SOFTRC__TP_SYM))
#define softrc_show_wc_opcode(o) \
	softrc_show(o, SOFTRC_TP_WC_OPCODES(SOFTRC__TP_SYM))
#define softrc_show_timer(t) softrc_show(t, SOFTRC_TP_TIMERS(SOFTRC__TP_SYM))
#define softrc_show_nak_type(s) \
	softrc_show((s) & SOFTRC_AETH_TYPE_MASK, \
		    SOFTRC_TP_NAK_TYPES(SOFTRC__TP_SYM))

#define SOFTRC__TP_ENUM(v, name) TRACE_DEFINE_ENUM(v);
#define SOFTRC__TP_RETRY_ENUM(n) TRACE_DEFINE_ENUM(SOFTRC_RETRY_##n);

/* Is @pkt a NAK (sequence, RNR or error): the nak_tx/nak_rx condition. */
static inline bool softrc_trace_is_nak(const struct softrc_pkt *pkt)
{
	return pkt->opcode == SOFTRC_OP_ACKNOWLEDGE &&
	       softrc_syndrome_type(pkt->syndrome) != SOFTRC_AETH_ACK;
}

#endif /* SOFTRC_TRACE_LISTS */

/* userspace (trace-cmd, perf) resolves the enum names through these */
SOFTRC_TP_QPS(SOFTRC__TP_ENUM)
SOFTRC_TP_WC_OPCODES(SOFTRC__TP_ENUM)
SOFTRC_TP_TIMERS(SOFTRC__TP_ENUM)
SOFTRC_TP_NAK_TYPES(SOFTRC__TP_ENUM)
SOFTRC_RETRY_REASONS(SOFTRC__TP_RETRY_ENUM)

DECLARE_EVENT_CLASS(softrc_pkt_class,
	TP_PROTO(const struct softrc_qp *qp, const struct softrc_pkt *pkt),
	TP_ARGS(qp, pkt),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->sdev->ib_dev.dev))
		__field(u32, qpn)
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u8, opcode)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		softrc_assign_str(dev, dev_name(&qp->sdev->ib_dev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->dqpn = pkt->dqpn;
		__entry->psn = pkt->psn;
		__entry->len = pkt->payload_len;
		__entry->opcode = pkt->opcode;
		__entry->syndrome = softrc_pkt_has(pkt, SOFTRC_H_AETH) ?
				    pkt->syndrome : 0;
	),
	TP_printk("dev=%s qpn=%u dqpn=%u op=%s psn=%u len=%u syndrome=0x%02x",
		  __get_str(dev), __entry->qpn, __entry->dqpn,
		  softrc_show_opcode(__entry->opcode), __entry->psn,
		  __entry->len, __entry->syndrome)
);

/* A packet of @qp handed to the network (or to the loopback path). */
DEFINE_EVENT(softrc_pkt_class, softrc_pkt_tx,
	TP_PROTO(const struct softrc_qp *qp, const struct softrc_pkt *pkt),
	TP_ARGS(qp, pkt));

/* A well-formed packet for @qp, about to enter its engine. */
DEFINE_EVENT(softrc_pkt_class, softrc_pkt_rx,
	TP_PROTO(const struct softrc_qp *qp, const struct softrc_pkt *pkt),
	TP_ARGS(qp, pkt));

DECLARE_EVENT_CLASS(softrc_nak_class,
	TP_PROTO(const struct softrc_qp *qp, const struct softrc_pkt *pkt),
	TP_ARGS(qp, pkt),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->sdev->ib_dev.dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, syndrome)
	),
	TP_fast_assign(
		softrc_assign_str(dev, dev_name(&qp->sdev->ib_dev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->psn = pkt->psn;
		__entry->syndrome = pkt->syndrome;
	),
	TP_printk("dev=%s qpn=%u psn=%u syndrome=0x%02x type=%s value=%u",
		  __get_str(dev), __entry->qpn, __entry->psn, __entry->syndrome,
		  softrc_show_nak_type(__entry->syndrome),
		  __entry->syndrome & SOFTRC_AETH_VALUE_MASK)
);

/* @qp's responder sends a NAK (PSN sequence error, RNR or fatal). */
DEFINE_EVENT_CONDITION(softrc_nak_class, softrc_nak_tx,
	TP_PROTO(const struct softrc_qp *qp, const struct softrc_pkt *pkt),
	TP_ARGS(qp, pkt),
	TP_CONDITION(softrc_trace_is_nak(pkt)));

/* @qp's requester receives a NAK. */
DEFINE_EVENT_CONDITION(softrc_nak_class, softrc_nak_rx,
	TP_PROTO(const struct softrc_qp *qp, const struct softrc_pkt *pkt),
	TP_ARGS(qp, pkt),
	TP_CONDITION(softrc_trace_is_nak(pkt)));

/* The requester went back to @psn (go-back-N) and sends from there. */
TRACE_EVENT(softrc_retransmit,
	TP_PROTO(const struct softrc_qp *qp, u32 psn,
		 enum softrc_eng_retry_reason why),
	TP_ARGS(qp, psn, why),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->sdev->ib_dev.dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, reason)
	),
	TP_fast_assign(
		softrc_assign_str(dev, dev_name(&qp->sdev->ib_dev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->psn = psn;
		__entry->reason = why;
	),
	TP_printk("dev=%s qpn=%u psn=%u reason=%s", __get_str(dev),
		  __entry->qpn, __entry->psn, softrc_show_retry(__entry->reason))
);

/* An RNR NAK for @psn stops the requester for @wait_ns. */
TRACE_EVENT(softrc_rnr_wait,
	TP_PROTO(const struct softrc_qp *qp, u32 psn, u64 wait_ns),
	TP_ARGS(qp, psn, wait_ns),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->sdev->ib_dev.dev))
		__field(u32, qpn)
		__field(u32, psn)
		__field(u64, wait_ns)
	),
	TP_fast_assign(
		softrc_assign_str(dev, dev_name(&qp->sdev->ib_dev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->psn = psn;
		__entry->wait_ns = wait_ns;
	),
	TP_printk("dev=%s qpn=%u psn=%u wait_ns=%llu", __get_str(dev),
		  __entry->qpn, __entry->psn, __entry->wait_ns)
);

/*
 * The hrtimer of timer @id starts, for @deadline (softrc_now() clock):
 * traced as the nanoseconds from now.
 */
TRACE_EVENT(softrc_timer_arm,
	TP_PROTO(const struct softrc_qp *qp, enum softrc_eng_timer_id id,
		 u64 deadline),
	TP_ARGS(qp, id, deadline),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->sdev->ib_dev.dev))
		__field(u32, qpn)
		__field(u32, timer)
		__field(s64, expires_ns)
	),
	TP_fast_assign(
		softrc_assign_str(dev, dev_name(&qp->sdev->ib_dev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->timer = id;
		__entry->expires_ns = (s64)(deadline - softrc_now());
	),
	TP_printk("dev=%s qpn=%u timer=%s expires_ns=%lld", __get_str(dev),
		  __entry->qpn, softrc_show_timer(__entry->timer),
		  __entry->expires_ns)
);

/*
 * Timer @id fired at or past the engine's deadline: a local ACK timeout
 * or the end of an RNR back-off (an early or stale expiry is not traced).
 */
TRACE_EVENT(softrc_timer_expire,
	TP_PROTO(const struct softrc_qp *qp, enum softrc_eng_timer_id id),
	TP_ARGS(qp, id),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->sdev->ib_dev.dev))
		__field(u32, qpn)
		__field(u32, timer)
	),
	TP_fast_assign(
		softrc_assign_str(dev, dev_name(&qp->sdev->ib_dev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->timer = id;
	),
	TP_printk("dev=%s qpn=%u timer=%s", __get_str(dev), __entry->qpn,
		  softrc_show_timer(__entry->timer))
);

/* @qp moved from IBTA state @old to @new (modify, or a transport error). */
TRACE_EVENT(softrc_qp_state,
	TP_PROTO(const struct softrc_qp *qp, enum ib_qp_state old,
		 enum ib_qp_state new),
	TP_ARGS(qp, old, new),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->sdev->ib_dev.dev))
		__field(u32, qpn)
		__field(u32, old)
		__field(u32, new)
	),
	TP_fast_assign(
		softrc_assign_str(dev, dev_name(&qp->sdev->ib_dev.dev));
		__entry->qpn = qp->ibqp.qp_num;
		__entry->old = old;
		__entry->new = new;
	),
	TP_printk("dev=%s qpn=%u old=%s new=%s", __get_str(dev), __entry->qpn,
		  softrc_show_qps(__entry->old), softrc_show_qps(__entry->new))
);

/* A work completion of @qp, queued for its CQ. */
TRACE_EVENT(softrc_complete,
	TP_PROTO(const struct softrc_qp *qp, const struct softrc_pwc *wc),
	TP_ARGS(qp, wc),
	TP_STRUCT__entry(
		__string(dev, dev_name(&qp->sdev->ib_dev.dev))
		__field(u64, wr_id)
		__field(u32, qpn)
		__field(u32, byte_len)
		__field(u32, status)
		__field(u32, opcode)
		__field(bool, recv)
	),
	TP_fast_assign(
		softrc_assign_str(dev, dev_name(&qp->sdev->ib_dev.dev));
		__entry->wr_id = wc->wr_id;
		__entry->qpn = qp->ibqp.qp_num;
		__entry->byte_len = wc->byte_len;
		__entry->status = wc->status;
		__entry->opcode = wc->opcode;
		__entry->recv = wc->flags & SOFTRC_PWC_RECV;
	),
	TP_printk("dev=%s qpn=%u queue=%s wr_id=0x%llx opcode=%s status=%s byte_len=%u",
		  __get_str(dev), __entry->qpn,
		  __entry->recv ? "recv" : "send", __entry->wr_id,
		  softrc_show_wc_opcode(__entry->opcode),
		  rdma_show_wc_status(__entry->status), __entry->byte_len)
);

#endif /* SOFTRC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>

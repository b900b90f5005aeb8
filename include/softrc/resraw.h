/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * Raw restrack records: the bytes `rdma resource show qp|cq|mr -r` prints
 * (RDMA_NLDEV_ATTR_RES_RAW) for a softrc object, and that
 * tools/resraw/softrc-resraw decodes back into named fields.
 *
 * Context: none (layout only). The module fills records in restrack.c
 * (process context of the netlink dump); the decoder reads them on the
 * host. Every field is little-endian and naturally aligned, with no
 * implicit padding; the sizes are asserted below.
 *
 * Compatibility: a record starts with struct softrc_resraw_hdr. @len is
 * the whole record; a later @version only appends fields, so a decoder
 * reads the fields it knows from any record at least as long as its own
 * layout, and refuses a shorter one. iproute2 prints only the device
 * and port next to the bytes, so each record names its object itself
 * (QPN, CQN, MRN: the restrack ids the -dd output shows).
 *
 * State fields carry the engine's enum values (core/engine.h: enum
 * softrc_eng_state, softrc_eng_req_state, softrc_eng_resp_state); the
 * decoder names them with the core's own name tables. The values of the
 * module's own enums (CQ notify, MR kind and state) come from one list
 * each, X(constant, value, name), that both sides expand: into the enum
 * here, and into a name table (SOFTRC_RESRAW_NAME) in the module's -dd
 * output and in the decoder, so a value has one name everywhere.
 */
#ifndef SOFTRC_RESRAW_H
#define SOFTRC_RESRAW_H

#include "platform.h"

#define SOFTRC_RESRAW_MAGIC	0x57525253	/* "SRRW", little-endian */
#define SOFTRC_RESRAW_VERSION	1

/* hdr.kind */
enum softrc_resraw_kind {
	SOFTRC_RESRAW_QP = 1,
	SOFTRC_RESRAW_CQ = 2,
	SOFTRC_RESRAW_MR = 3,
};

/* an X(constant, value, name) list's enum members, and its name table */
#define SOFTRC_RESRAW_ENUM(c, v, name)	c = v,
#define SOFTRC_RESRAW_NAME(c, v, name)					\
	[c] = name,

/* hdr.flags */
#define SOFTRC_RESRAW_F_KEYS	BIT(0)	/* MR key and iova filled in */

/**
 * struct softrc_resraw_hdr - every record's first 16 bytes
 * @magic:	SOFTRC_RESRAW_MAGIC
 * @version:	SOFTRC_RESRAW_VERSION of the writer
 * @kind:	enum softrc_resraw_kind
 * @len:	bytes in the record, this header included
 * @flags:	SOFTRC_RESRAW_F_*
 */
struct softrc_resraw_hdr {
	__le32 magic;
	__le16 version;
	__le16 kind;
	__le32 len;
	__le32 flags;
};

/* qp.timers */
#define SOFTRC_RESRAW_TIMER_RETRY	BIT(0)
#define SOFTRC_RESRAW_TIMER_RNR		BIT(1)

/**
 * struct softrc_resraw_qp - a QP: the fields of its -dd summary
 * @hdr:		kind SOFTRC_RESRAW_QP
 * @qpn:		QP number
 * @qp_type:		IB_QPT_* (2 is RC)
 * @ib_state:		IB_QPS_* as the verbs see it
 * @state:		engine QP state (enum softrc_eng_state)
 * @req_state:		requester state (enum softrc_eng_req_state)
 * @resp_state:		responder state (enum softrc_eng_resp_state)
 * @timers:		SOFTRC_RESRAW_TIMER_* armed
 * @retry_left:		transport retries left
 * @rnr_left:		RNR retries left (7: infinite)
 * @sq_psn:		next PSN to send
 * @rq_psn:		next PSN expected
 * @una:		oldest unacknowledged PSN
 * @unacked_psns:	PSNs sent and not acknowledged
 * @rd_out:		READ/ATOMIC requests outstanding
 * @rd_max:		their limit (max_rd_atomic)
 * @res_live:		responder resources live
 * @pending:		completions not yet handed to a CQ
 * @pmtu:		path MTU in bytes
 * @retry_ns:		ns until the retry timer fires (0: disarmed)
 * @rnr_ns:		ns until the RNR timer fires (0: disarmed)
 * @retransmits:	packets sent again
 * @timeouts:		retry timer expiries
 * @seq_naks_rcvd:	PSN sequence error NAKs received
 * @rnr_naks_rcvd:	RNR NAKs received
 */
struct softrc_resraw_qp {
	struct softrc_resraw_hdr hdr;
	__le32 qpn;
	u8 qp_type;
	u8 ib_state;
	u8 state;
	u8 req_state;
	u8 resp_state;
	u8 timers;
	u8 retry_left;
	u8 rnr_left;
	__le32 sq_psn;
	__le32 rq_psn;
	__le32 una;
	__le32 unacked_psns;
	__le32 rd_out;
	__le32 rd_max;
	__le32 res_live;
	__le32 pending;
	__le32 pmtu;
	__le64 retry_ns;
	__le64 rnr_ns;
	__le64 retransmits;
	__le64 timeouts;
	__le64 seq_naks_rcvd;
	__le64 rnr_naks_rcvd;
};

/* cq.notify: how the CQ is armed (ib_req_notify_cq()) */
#define SOFTRC_RESRAW_NOTIFY_LIST(X)					\
	X(SOFTRC_RESRAW_NOTIFY_OFF, 0, "off")				\
	X(SOFTRC_RESRAW_NOTIFY_NEXT, 1, "next")				\
	X(SOFTRC_RESRAW_NOTIFY_SOLICITED, 2, "solicited")

enum softrc_resraw_notify {
	SOFTRC_RESRAW_NOTIFY_LIST(SOFTRC_RESRAW_ENUM)
};

/**
 * struct softrc_resraw_cq - a CQ
 * @hdr:	kind SOFTRC_RESRAW_CQ
 * @cqn:	restrack CQ number
 * @slots:	ring entries
 * @used:	entries written and not yet polled
 * @notify:	enum softrc_resraw_notify
 * @overrun:	1 once a completion found the ring full
 * @user:	1 for a user CQ
 * @reserved:	zero
 */
struct softrc_resraw_cq {
	struct softrc_resraw_hdr hdr;
	__le32 cqn;
	__le32 slots;
	__le32 used;
	u8 notify;
	u8 overrun;
	u8 user;
	u8 reserved;
};

/* mr.mr_kind: how the MR was made */
#define SOFTRC_RESRAW_MR_KIND_LIST(X)					\
	X(SOFTRC_RESRAW_MR_USER, 1, "user")				\
	X(SOFTRC_RESRAW_MR_DMA, 2, "dma")				\
	X(SOFTRC_RESRAW_MR_FAST_REG, 3, "fast_reg")			\
	X(SOFTRC_RESRAW_MR_KERNEL, 4, "kernel")

enum softrc_resraw_mr_kind {
	SOFTRC_RESRAW_MR_KIND_LIST(SOFTRC_RESRAW_ENUM)
};

/* mr.mr_state */
#define SOFTRC_RESRAW_MR_STATE_LIST(X)					\
	X(SOFTRC_RESRAW_MR_VALID, 1, "valid")				\
	X(SOFTRC_RESRAW_MR_INVALID, 2, "invalid")			\
	X(SOFTRC_RESRAW_MR_DEAD, 3, "dead")

enum softrc_resraw_mr_state {
	SOFTRC_RESRAW_MR_STATE_LIST(SOFTRC_RESRAW_ENUM)
};

/**
 * struct softrc_resraw_mr - an MR
 * @hdr:	kind SOFTRC_RESRAW_MR; flags SOFTRC_RESRAW_F_KEYS when the
 *		reader holds CAP_NET_ADMIN and @key and @iova are filled in
 *		(zero otherwise)
 * @mrn:	restrack MR number
 * @access:	IB_ACCESS_* flags
 * @mr_kind:	enum softrc_resraw_mr_kind
 * @mr_state:	enum softrc_resraw_mr_state
 * @reserved:	zero
 * @key:	current lkey (= rkey)
 * @users:	references held (the MR's own, plus WQEs and bound MWs)
 * @mws_bound:	memory windows bound to it
 * @reserved2:	zero
 * @iova:	start of the registered range
 * @length:	bytes in the range
 * @pages:	pages mapped
 */
struct softrc_resraw_mr {
	struct softrc_resraw_hdr hdr;
	__le32 mrn;
	__le32 access;
	u8 mr_kind;
	u8 mr_state;
	u8 reserved[2];
	__le32 key;
	__le32 users;
	__le32 mws_bound;
	__le32 reserved2[2];
	__le64 iova;
	__le64 length;
	__le64 pages;
};

static_assert(sizeof(struct softrc_resraw_hdr) == 16, "resraw hdr");
static_assert(sizeof(struct softrc_resraw_qp) == 112, "resraw qp");
static_assert(sizeof(struct softrc_resraw_cq) == 32, "resraw cq");
static_assert(sizeof(struct softrc_resraw_mr) == 72, "resraw mr");

#endif /* SOFTRC_RESRAW_H */

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * SOFTRC_XMACRO_TABLE (see `make style`)
 *
 * The protocol engine's public API: the one core header a module file
 * includes (`make style` checks it). It brings the packet calls of
 * pkt.h, parse.h and icrc.h (parsing, header building, ICRC) and the
 * PSN arithmetic of psn.h with it; everything else in core/ is private
 * (internal.h, or static in its file). The module never reads or writes
 * a member of struct softrc_eng_qp: it drives the engine through the
 * calls below and reads its state through softrc_eng_snapshot() and
 * the ring and counter queries.
 *
 * The protocol engine: per-QP state and the calls that drive it. RC is
 * the engine proper; a UD QP (attr.transport) takes the same calls, which
 * ud.c answers: one packet per message, no ACK, no retry.
 *
 * Context: every entry point is called with the QP lock held by the glue,
 * in softirq or process context; the engine never sleeps, allocates,
 * locks, reads the clock or sees an sk_buff. Time is passed in as "now"
 * (ns, any monotonic origin). The engine touches only the struct
 * softrc_eng_qp and the rings whose storage the caller hands to
 * softrc_eng_init(); everything else (packets out, payload bytes,
 * memory keys, completions, timers) goes through struct softrc_eng_ops.
 *
 * Driving the engine:
 *   softrc_eng_init()            once, with attributes and ring storage
 *                                (again to reset: the counters carry on)
 *   softrc_eng_post_send()       queue a send WR (returns its ring slot,
 *                                so the glue can keep its SGEs alongside)
 *   softrc_eng_post_recv()       queue a receive WQE
 *   softrc_eng_tx()              transmit up to a budget: queued READ
 *                                responses / ATOMIC ACKs of the responder,
 *                                new requests and retransmissions
 *   softrc_eng_tx_resp()         the responder's share only (for states in
 *                                which the requester must stay quiet)
 *   softrc_eng_tx_pending()      does the responder have packets queued?
 *   softrc_eng_rx()              one parsed packet arrived (requests go to
 *                                the responder, responses/ACKs to the
 *                                completer)
 *   softrc_eng_rx_invalid()      a packet the parser rejected but whose BTH
 *                                is valid: NAK invalid request if it is the
 *                                expected request, else drop
 *   softrc_eng_rx_flush()        end of an RX burst: send the coalesced ACK
 *   softrc_eng_rx_flush_ack()    the same, but a plain coalesced ACK is
 *                                handed to the caller to send later
 *   softrc_eng_timer()           a timer armed through ops->timer expired
 *   softrc_eng_set_error()       the glue moves the QP to ERROR
 *   softrc_eng_release()         drop every pin the engine holds (before
 *                                a reset re-init and at destroy)
 *   softrc_eng_sq_drain()        SQD: start no new WQE, finish the others
 *   softrc_eng_sq_drained()      SQD: nothing started is outstanding
 *   softrc_eng_modify()          modify_qp: new attributes, PSNs, retry
 *                                counts (struct softrc_eng_modify_attr)
 *   softrc_eng_snapshot()        copy the state for an observer (debugfs,
 *                                restrack)
 *
 * What the glue must do:
 *  - call softrc_eng_tx() after posting, after an RX burst and after a
 *    timer (the engine never transmits requests on its own), and call it
 *    again (e.g. from a tasklet) while it returns its full @budget: a
 *    return below @budget means nothing more can go out until the next
 *    post, RX or timer; softrc_eng_tx_pending() (true while responder
 *    packets are queued) tells the same for the responder without
 *    transmitting;
 *  - in states where the requester must not send (RTR, SQE) but the
 *    responder still answers, drive softrc_eng_tx_resp() the same way;
 *    in SQD the requester still finishes (and retries) what it started,
 *    so drive softrc_eng_tx() there, after softrc_eng_sq_drain(true);
 *  - call softrc_eng_rx_flush() at the end of every RX burst: AckReq'd
 *    requests are acknowledged there (coalesced), or earlier when another
 *    response must go out first;
 *  - keep each WQE's SGEs beside the ring slot the post calls return;
 *    payload is named by (slot, byte offset) or (R_Key, VA);
 *  - give max_dest_rd_atomic (storage.nres at init, later
 *    softrc_eng_set_max_dest_rd_atomic(), or softrc_eng_set_resources()
 *    with larger storage) >= the peer's max_rd_atomic:
 *    a READ/ATOMIC that would recycle a resource whose response has not
 *    gone out once is NAKed invalid request, and other excess lets
 *    duplicate READ/ATOMICs find no saved resource (dropped; a new one
 *    whose slot still holds a queued replay abandons that replay, which
 *    the requester can then no longer need);
 *  - READ responses are paced: the rx call that validates a READ (or a
 *    duplicate one) sends at most SOFTRC_RESP_INLINE packets of the
 *    response, the rest leaves from softrc_eng_tx*() within their budget;
 *    response payload is named by (R_Key, VA, pin) and read at transmit
 *    time, possibly after later requests were executed (IBTA 9.5: only a
 *    fenced WR waits for an earlier READ) or the MR was invalidated: xmit
 *    then returns SOFTRC_E_MEM and the engine NAKs (remote access);
 *  - memory keys are checked once per message and pinned: a successful
 *    ops->mr_check returns a pin the engine keeps with the write context
 *    or the READ resource and releases once (ops->key_put); local keys
 *    are the glue's to pin beside its ring slots. A use that finds the
 *    memory gone (SOFTRC_E_MEM from xmit, place, atomic, atomic_result)
 *    fails the message: NAK remote access (WRITE, READ, ATOMIC), NAK
 *    remote operational error with LOC_PROT_ERR on the receive (SEND),
 *    LOC_PROT_ERR on the send WQE (gather, READ response, atomic result);
 *    never an ACK or a SUCCESS completion.
 *
 * Stages: req.c (requester: segmentation, retransmission), resp.c
 * (responder) and resp_res.c (its READ/ATOMIC resources and response
 * queue), comp.c (ACK/response processing and completion); ud.c (the
 * UD transport).
 */
#ifndef SOFTRC_CORE_ENGINE_H
#define SOFTRC_CORE_ENGINE_H

#include <softrc/abi.h>

#include "pkt.h"
#include "psn.h"
#include "parse.h"
#include "icrc.h"

/* Work request opcodes; the values are those of enum ib_wr_opcode. */
enum softrc_eng_wr_opcode {
	SOFTRC_WR_RDMA_WRITE		= 0,
	SOFTRC_WR_RDMA_WRITE_WITH_IMM	= 1,
	SOFTRC_WR_SEND			= 2,
	SOFTRC_WR_SEND_WITH_IMM		= 3,
	SOFTRC_WR_RDMA_READ		= 4,
	SOFTRC_WR_ATOMIC_CMP_AND_SWP	= 5,
	SOFTRC_WR_ATOMIC_FETCH_AND_ADD	= 6,
	SOFTRC_WR_LOCAL_INV		= 7,	/* local: no packet */
	SOFTRC_WR_BIND_MW		= 8,	/* local: no packet */
	SOFTRC_WR_SEND_WITH_INV		= 9,
	/* IBTA 1.5: make a remote range globally visible; RC only */
	SOFTRC_WR_FLUSH			= SOFTRC_ABI_WR_FLUSH,
	/* IBTA 1.5: 8 bytes placed as one 64-bit store; RC only */
	SOFTRC_WR_ATOMIC_WRITE		= SOFTRC_ABI_WR_ATOMIC_WRITE,
	SOFTRC_WR_REG_MR		= 0x20,	/* local: no packet */
	SOFTRC_WR_REFUSED		= 0x21,	/* local: fails in SQ order */
	SOFTRC_WR_NR
};

/* Completion status; the values are those of enum ib_wc_status. */
enum softrc_eng_wc_status {
	SOFTRC_WC_SUCCESS		= 0,
	SOFTRC_WC_LOC_LEN_ERR		= 1,
	SOFTRC_WC_LOC_QP_OP_ERR		= 2,
	SOFTRC_WC_LOC_PROT_ERR		= 4,
	SOFTRC_WC_WR_FLUSH_ERR		= 5,
	SOFTRC_WC_MW_BIND_ERR		= 6,
	SOFTRC_WC_BAD_RESP_ERR		= 7,
	SOFTRC_WC_LOC_ACCESS_ERR	= 8,
	SOFTRC_WC_REM_INV_REQ_ERR	= 9,
	SOFTRC_WC_REM_ACCESS_ERR	= 10,
	SOFTRC_WC_REM_OP_ERR		= 11,
	SOFTRC_WC_RETRY_EXC_ERR		= 12,
	SOFTRC_WC_RNR_RETRY_EXC_ERR	= 13,
};

/*
 * Completion opcodes; the values are those of enum ib_wc_opcode (and of
 * the uverbs ABI: ATOMIC_WRITE is IB_UVERBS_WC_ATOMIC_WRITE, which 6.1's
 * enum ib_wc_opcode lacks).
 */
enum softrc_eng_wc_opcode {
	SOFTRC_WC_SEND			= 0,
	SOFTRC_WC_RDMA_WRITE		= 1,
	SOFTRC_WC_RDMA_READ		= 2,
	SOFTRC_WC_COMP_SWAP		= 3,
	SOFTRC_WC_FETCH_ADD		= 4,
	SOFTRC_WC_BIND_MW		= 5,
	SOFTRC_WC_LOCAL_INV		= 6,
	SOFTRC_WC_REG_MR		= 8,
	SOFTRC_WC_ATOMIC_WRITE		= SOFTRC_ABI_WC_ATOMIC_WRITE,
	/*
	 * The engine's own value: 8, IB_WC_FLUSH and IB_UVERBS_WC_FLUSH
	 * from 6.2 on, is REG_MR's above (6.1's IB_WC_REG_MR); the glue
	 * maps both (softrc_glue_wc_opcode())
	 */
	SOFTRC_WC_FLUSH			= 16,
	SOFTRC_WC_RECV			= 128,
	SOFTRC_WC_RECV_RDMA_WITH_IMM	= 129,
};

/* send_flags, as in ib_send_flags */
#define SOFTRC_SEND_FENCE	BIT(0)
#define SOFTRC_SEND_SIGNALED	BIT(1)
#define SOFTRC_SEND_SOLICITED	BIT(2)

/* Error returns of the post calls (the glue maps them to errno). */
enum softrc_eng_err {
	SOFTRC_E_FULL	= -1,	/* ring full */
	SOFTRC_E_INVAL	= -2,	/* bad opcode or length */
	SOFTRC_E_STATE	= -3,	/* QP in ERROR: nothing queued */
	SOFTRC_E_MEM	= -4,	/* ops: memory no longer valid */
};

/*
 * Memory access rights asked of ops->mr_check (as IB_ACCESS_REMOTE_* and,
 * where the kernel names them, IB_ACCESS_FLUSH_*).
 */
#define SOFTRC_ACCESS_REMOTE_WRITE	BIT(1)
#define SOFTRC_ACCESS_REMOTE_READ	BIT(2)
#define SOFTRC_ACCESS_REMOTE_ATOMIC	BIT(3)
#define SOFTRC_ACCESS_FLUSH_GLOBAL	SOFTRC_ABI_ACCESS_FLUSH_GLOBAL
#define SOFTRC_ACCESS_FLUSH_PERSISTENT	SOFTRC_ABI_ACCESS_FLUSH_PERSISTENT

/**
 * struct softrc_eng_send_wr - what the glue posts (the SGEs stay in the glue,
 * indexed by the ring slot softrc_eng_post_send() returns)
 * @wr_id:	returned in the completion
 * @remote_addr: RDMA/atomic target VA
 * @compare_add: CMP_SWAP compare value or FETCH_ADD add value
 * @swap:	CMP_SWAP swap value
 * @length:	total bytes of the local SGEs (8 for atomics and for
 *		ATOMIC_WRITE, whose 8 bytes are the payload: sent from the
 *		slot's SGEs like a WRITE's); FLUSH: the RETH DMA length of
 *		the range (no local data)
 * @rkey:	RDMA/atomic target R_Key
 * @inv_rkey:	SEND_WITH_INV: R_Key the responder invalidates
 * @imm:	immediate data, network order
 * @dqpn:	UD: destination QP (the address is the glue's, by slot)
 * @qkey:	UD: the Q_Key asked for (bit 31 set: the QP's own, §10.2.4)
 * @opcode:	enum softrc_eng_wr_opcode
 * @send_flags:	SOFTRC_SEND_*
 * @flush_type:	FLUSH: placement type (SOFTRC_FLUSH_GLOBAL | _PERSISTENT)
 * @flush_level: FLUSH: selectivity level (SOFTRC_FLUSH_RANGE or _MR)
 */
struct softrc_eng_send_wr {
	u64 wr_id;
	u64 remote_addr;
	u64 compare_add;
	u64 swap;
	u32 length;
	u32 rkey;
	u32 inv_rkey;
	__be32 imm;
	u32 dqpn;
	u32 qkey;
	u8 opcode;
	u8 send_flags;
	u8 flush_type;
	u8 flush_level;
};

enum softrc_eng_wqe_state {
	SOFTRC_WQE_POSTED,	/* no packet sent yet, no PSN assigned */
	SOFTRC_WQE_ACTIVE,	/* PSNs assigned, not yet acknowledged */
	SOFTRC_WQE_DONE,	/* acknowledged or response complete */
};

/**
 * struct softrc_eng_send_wqe - one send queue slot (storage from the caller)
 * @wr:		the posted work request
 * @ssn:	send sequence number (1:1 with the responder's MSN, C9-147/148)
 * @first_psn:	PSN of the first packet (valid once ACTIVE)
 * @npkts:	PSNs the message uses (READ: one per response packet)
 * @resp_pkts:	READ/ATOMIC: response packets received so far
 * @state:	enum softrc_eng_wqe_state
 * @status:	local WQE (LOCAL_INV, BIND_MW, REG_MR): the completion status
 *		ops->local returned once it ran (DONE from then on)
 *
 * A local WQE takes no PSN and no SSN (the responder never sees it): it
 * goes from POSTED straight to DONE when the requester reaches it in SQ
 * order, and retires in post order like any other WQE. SOFTRC_WR_REFUSED
 * is a WR the glue could not accept (a malformed user ring entry): posted
 * in its place, it fails in SQ order with the status ops->local gives,
 * so the WRs before it still finish as they would have, and then the QP
 * enters ERROR (rxe likewise fails a bad WQE when its requester reaches
 * it).
 */
struct softrc_eng_send_wqe {
	struct softrc_eng_send_wr wr;
	u32 ssn;
	u32 first_psn;
	u32 npkts;
	u32 resp_pkts;
	u8 state;
	u8 status;
};

/**
 * struct softrc_eng_recv_wqe - one receive queue slot
 * @wr_id:	returned in the completion
 * @length:	total bytes of the glue's SGEs for this slot
 */
struct softrc_eng_recv_wqe {
	u64 wr_id;
	u32 length;
};

enum softrc_eng_res_type {
	SOFTRC_RES_FREE,
	SOFTRC_RES_READ,
	SOFTRC_RES_ATOMIC,
	SOFTRC_RES_ATOMIC_WRITE,	/* answered: a zero-length READ RESPONSE */
	SOFTRC_RES_FLUSH,		/* answered the same way */
};

/**
 * struct softrc_eng_rd_res - a responder resource for a READ, ATOMIC or
 * ATOMIC WRITE: what is needed to answer a duplicate (Documentation/
 * softrc.rst, "Protocol decisions"; an ATOMIC WRITE is answered again,
 * never executed again: IBTA 1.5 A19)
 * @type:	enum softrc_eng_res_type
 * @psn:	request PSN
 * @npkts:	response PSNs (1 for an atomic)
 * @va:		READ: target VA
 * @rkey:	READ: R_Key
 * @len:	READ: DMA length
 * @orig:	ATOMIC: original value returned
 * @sent:	its response has gone out completely at least once (until
 *		then the requester cannot have it: see max_dest_rd_atomic)
 * @pin:	READ: the pin of the R_Key check (ops->mr_check), NULL if
 *		none; held while the slot holds the READ (replays read
 *		through it), released when the slot is reused or the QP
 *		enters ERROR or is reset
 *
 * A resource lives from its READ/ATOMIC until max_dest_rd_atomic newer
 * ones replace it or its last PSN leaves the 2^23 duplicate window
 * behind the expected PSN, whichever comes first: it never answers a
 * duplicate of a later PSN cycle.
 */
struct softrc_eng_rd_res {
	u8 type;
	u32 psn;
	u32 npkts;
	u64 va;
	u32 rkey;
	u32 len;
	u64 orig;
	bool sent;
	void *pin;
};

/* Where a payload lives or goes (the engine never touches bytes). */
enum softrc_eng_buf_kind {
	SOFTRC_BUF_NONE,
	SOFTRC_BUF_SEND_WQE,	/* the SGEs of send slot @slot, at @addr */
	SOFTRC_BUF_RECV_WQE,	/* the SGEs of receive slot @slot, at @addr */
	SOFTRC_BUF_MR,		/* memory @rkey approved as @pin, VA @addr */
};

/**
 * struct softrc_eng_buf - a payload reference
 * @kind:	enum softrc_eng_buf_kind
 * @slot:	ring slot for SEND_WQE / RECV_WQE
 * @rkey:	for MR
 * @addr:	byte offset into the WQE's SGE list, or VA for MR
 * @len:	bytes
 * @pin:	for MR: the pin ops->mr_check returned for @rkey; the glue
 *		accesses the memory through it, never by looking @rkey up
 */
struct softrc_eng_buf {
	u8 kind;
	u32 slot;
	u32 rkey;
	u64 addr;
	u32 len;
	void *pin;
};

#define SOFTRC_CQE_RECV		BIT(0)	/* receive queue completion */
#define SOFTRC_CQE_WITH_IMM	BIT(1)
#define SOFTRC_CQE_WITH_INV	BIT(2)
#define SOFTRC_CQE_GRH		BIT(3)	/* UD: a GRH fills the first 40 bytes */
#define SOFTRC_CQE_SOLICITED	BIT(4)	/* receive: the message's BTH had SE */

/**
 * struct softrc_eng_cqe - one completion handed to ops->complete
 * @wr_id:	of the WR
 * @status:	enum softrc_eng_wc_status
 * @opcode:	enum softrc_eng_wc_opcode
 * @flags:	SOFTRC_CQE_*
 * @slot:	ring slot (send or receive) now free
 * @byte_len:	bytes transferred (received for RECV)
 * @imm:	immediate data, network order
 * @inv_rkey:	invalidated R_Key (SEND_WITH_INV)
 * @src_qp:	UD receive: the sender's QP (DETH)
 * @rx:		a receive completed by a packet: the caller's receive context
 *		of that packet (as handed to ops->place), else NULL
 */
struct softrc_eng_cqe {
	u64 wr_id;
	u8 status;
	u8 opcode;
	u8 flags;
	u32 slot;
	u32 byte_len;
	__be32 imm;
	u32 inv_rkey;
	u32 src_qp;
	void *rx;
};

/* Bytes of the GRH slot at the start of every UD receive buffer. */
#define SOFTRC_GRH_BYTES	40

enum softrc_eng_timer_id {
	SOFTRC_TIMER_RETRY,	/* local ACK timeout */
	SOFTRC_TIMER_RNR,	/* RNR NAK back-off */
	SOFTRC_TIMER_ACKREQ,	/* AckReq probe: the newest request went
				 * without AckReq and the requester went idle
				 */
	SOFTRC_TIMER_NR
};

/*
 * Why the requester goes back and sends again (ops->retransmit):
 * X(name): the local ACK timeout, a PSN sequence error NAK, the end of
 * an RNR NAK's back-off, or an implied NAK (an ACK or response past a
 * READ/ATOMIC whose response was lost: the READ/ATOMIC restarts).
 */
#define SOFTRC_RETRY_REASONS(X)						\
	X(timeout)							\
	X(nak_seq)							\
	X(rnr)								\
	X(read_restart)

#define SOFTRC__RETRY_ENUM(n) SOFTRC_RETRY_##n,
enum softrc_eng_retry_reason {
	SOFTRC_RETRY_REASONS(SOFTRC__RETRY_ENUM)
	SOFTRC_RETRY_NR
};

#undef SOFTRC__RETRY_ENUM

/**
 * struct softrc_eng_ops - what the engine asks of the glue
 * @xmit:	send one packet: @pkt holds every header field (the glue
 *		serialises it with softrc_eng_build_hdrs()), @payload says where
 *		its pkt->payload_len bytes come from (kind NONE if none).
 *		Returns 0 (sent, or dropped for a transient reason the
 *		retransmission covers), or SOFTRC_E_MEM: the payload's memory
 *		is no longer valid (deregistered, invalidated), nothing was
 *		sent and the engine fails the message.
 * @mr_check:	may @len bytes at (@rkey, @va) be accessed with @access
 *		(SOFTRC_ACCESS_*)? 0 = yes, and *@pin is a reference on what
 *		the check approved (never NULL), which every later use names
 *		(struct softrc_eng_buf.pin, ops->atomic) and which the engine
 *		releases with exactly one ops->key_put; else a remote access
 *		error and no pin.
 * @key_put:	release a pin ops->mr_check returned.
 * @place_grh:	UD: write the received packet @rx's network header as
 *		the 40-byte GRH to @dst (a RECV_WQE at offset 0): an IPv6
 *		header whole, an IPv4 header in the last 20 bytes; 0, or
 *		SOFTRC_E_MEM.
 * @place:	copy @dst->len bytes of the received packet @rx, starting at
 *		byte @pkt_off from its BTH, to @dst; 0, or SOFTRC_E_MEM if the
 *		memory is no longer valid (the engine fails the message).
 * @atomic:	perform the 8-byte atomic at @va through @pin (checked);
 *		*@orig = the original value; 0, or SOFTRC_E_MEM.
 * @atomic_write: ATOMIC WRITE: store the 8 payload bytes of @rx at byte
 *		@pkt_off from its BTH to @va (8-byte aligned, checked)
 *		through @pin as one 64-bit store, ordered after every earlier
 *		placement; 0, or SOFTRC_E_MEM.
 * @flush:	FLUSH: make every earlier placement of this QP's responder
 *		visible as placement type @type asks (SOFTRC_FLUSH_*),
 *		within the memory @pin approved (checked: range, or the
 *		whole region); 0, or SOFTRC_E_MEM if that memory is gone.
 * @atomic_result: store an ATOMIC's original value into send slot @slot;
 *		0, or SOFTRC_E_MEM.
 * @invalidate:	invalidate @rkey (SEND_WITH_INV); 0 = done.
 * @local:	execute the local WQE (LOCAL_INV, BIND_MW, REG_MR, REFUSED) of
 *		send slot @slot;
 *		called when the requester reaches it in SQ order (after
 *		earlier READ/ATOMICs completed if it is fenced); returns its
 *		completion status (enum softrc_eng_wc_status). A failure completes
 *		in order and moves the QP to ERROR.
 * @complete:	one completion.
 * @timer:	arm timer @id for @deadline ns, or disarm it if @deadline is 0.
 * @qp_error:	the QP has entered ERROR (all WQEs already flushed).
 * @retransmit:	optional (NULL: not told): the requester went back to
 *		@psn for @why and sends from there again (go-back-N); the
 *		packets follow through @xmit.
 * @rnr_wait:	optional: an RNR NAK for @psn stops the requester for
 *		@wait_ns (the RNR timer is armed through @timer).
 * @timer_expired: optional: timer @id reached the deadline the engine set
 *		and the engine acts on it now (a local ACK timeout or the
 *		end of an RNR back-off); an early, stale or disarmed expiry,
 *		or one on a QP in ERROR, is not reported.
 */
struct softrc_eng_ops {
	int (*xmit)(void *ctx, const struct softrc_pkt *pkt,
		    const struct softrc_eng_buf *payload);
	int (*mr_check)(void *ctx, u32 rkey, u64 va, u32 len, u32 access,
			void **pin);
	void (*key_put)(void *ctx, void *pin);
	int (*place)(void *ctx, const struct softrc_eng_buf *dst, void *rx,
		     u32 pkt_off);
	int (*place_grh)(void *ctx, const struct softrc_eng_buf *dst, void *rx);
	int (*atomic)(void *ctx, void *pin, u64 va, bool cmp_swap,
		      u64 swap_add, u64 compare, u64 *orig);
	int (*atomic_result)(void *ctx, u32 slot, u64 orig);
	int (*atomic_write)(void *ctx, void *pin, u64 va, void *rx, u32 pkt_off);
	int (*flush)(void *ctx, void *pin, u8 type);
	int (*invalidate)(void *ctx, u32 rkey);
	u8 (*local)(void *ctx, u32 slot);
	void (*complete)(void *ctx, const struct softrc_eng_cqe *cqe);
	void (*timer)(void *ctx, enum softrc_eng_timer_id id, u64 deadline);
	void (*qp_error)(void *ctx);
	void (*retransmit)(void *ctx, u32 psn, enum softrc_eng_retry_reason why);
	void (*rnr_wait)(void *ctx, u32 psn, u64 wait_ns);
	void (*timer_expired)(void *ctx, enum softrc_eng_timer_id id);
};

/**
 * struct softrc_eng_attr - QP attributes the engine needs
 * @transport:	SOFTRC_OPCODE_RC or SOFTRC_OPCODE_UD (the GSI QP is UD)
 * @qkey:	UD: the QP's Q_Key, sent when a WR asks for it (bit 31)
 * @sqpn:	UD: this QP's number, the DETH source QP
 * @pmtu:	path MTU in bytes (256, 512, 1024, 2048 or 4096); UD: the
 *		largest message
 * @sq_psn:	first PSN this side sends
 * @rq_psn:	first PSN this side expects
 * @dqpn:	destination QP number
 * @pkey:	P_Key put in every BTH
 * @timeout:	local ACK timeout code: 4.096 us * 2^timeout, 0 = infinite
 * @retry_cnt:	retries on timeout / sequence error (0..7)
 * @rnr_retry:	retries on RNR NAK (0..7, 7 = infinite)
 * @min_rnr_timer: RNR timer code this responder puts in its RNR NAKs
 * @max_rd_atomic: READ/ATOMIC this requester may have outstanding
 * @ackreq_every: set AckReq at least every this many packets (0 = 16)
 * @ackreq_msg:	set AckReq on the last packet of every message, as
 *		before the AckReq policy (softrc.rst, "ACKs"); else only on a
 *		signaled one's
 * @ackreq_probe_ns: how long the requester stays idle, with its newest
 *		request sent without AckReq, before it sends that request
 *		again with AckReq (0 = 1 ms; clock_slack_ns is added; at most
 *		half the local ACK timeout, and an interval before it)
 * @max_unacked: send no packet this many PSNs past the oldest
 *		unacknowledged one (0 = 128); bounds go-back-N resends
 * @no_credits:	responder reports "no credit information" (31) like rxe
 *		instead of its free receive WQEs
 * @clock_slack_ns: how far the "now" the glue passes may lag real time
 *		(a coarse clock: its resolution); added to every deadline so
 *		that no timer expires before its IBTA minimum
 * @remote_deny: SOFTRC_ACCESS_REMOTE_* operations and SOFTRC_ACCESS_FLUSH_*
 *		placement types the QP does not enable (IB_QP_ACCESS_FLAGS):
 *		their requests are invalid requests, whatever their length
 *		(0 = all enabled)
 */
struct softrc_eng_attr {
	u8 transport;
	u32 qkey;
	u32 sqpn;
	u32 pmtu;
	u32 sq_psn;
	u32 rq_psn;
	u32 dqpn;
	u16 pkey;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 ackreq_every;
	bool ackreq_msg;
	u32 ackreq_probe_ns;
	u32 max_unacked;
	bool no_credits;
	u32 clock_slack_ns;
	u16 remote_deny;
};

/**
 * struct softrc_eng_storage - ring storage the caller provides
 * @sq:		send ring, @sq_depth entries (power of two)
 * @rq:		receive ring, @rq_depth entries (power of two)
 * @res:	responder resources, @res_cap entries
 * @nres:	max_dest_rd_atomic: resources in use (0: READ and ATOMIC are
 *		invalid requests); softrc_eng_set_max_dest_rd_atomic()
 *		changes it later, softrc_eng_set_resources() with new
 *		storage
 * @res_cap:	entries of @res (0: @nres); bounds @nres
 */
struct softrc_eng_storage {
	struct softrc_eng_send_wqe *sq;
	u32 sq_depth;
	struct softrc_eng_recv_wqe *rq;
	u32 rq_depth;
	struct softrc_eng_rd_res *res;
	u32 nres;
	u32 res_cap;
};

/* Counters, exported by the glue through rdma statistics. */
#define SOFTRC_CORE_COUNTERS(X)						\
	X(tx_pkts)		/* every packet transmitted */		\
	X(rx_pkts)		/* every packet handed to rx */		\
	X(retransmits)		/* request packets sent again */	\
	X(timeouts)		/* local ACK timeouts */		\
	X(retry_exceeded)	/* RETRY_EXC_ERR completions */		\
	X(rnr_retry_exceeded)	/* RNR_RETRY_EXC_ERR completions */	\
	X(implied_naks)		/* ACK/response past a lost READ/ATOMIC reply */ \
	X(acks_sent)							\
	X(acks_rcvd)							\
	X(seq_naks_sent)						\
	X(seq_naks_rcvd)						\
	X(rnr_naks_sent)						\
	X(rnr_naks_rcvd)						\
	X(inv_req_naks_sent)						\
	X(inv_req_naks_rcvd)						\
	X(rem_access_naks_sent)						\
	X(rem_access_naks_rcvd)						\
	X(rem_op_naks_sent)						\
	X(rem_op_naks_rcvd)						\
	X(dup_requests)		/* duplicate requests answered */	\
	X(dup_reads)		/* ... of which READs replayed */	\
	X(dup_atomics)		/* ... of which ATOMICs replayed */	\
	X(dup_atomic_writes)	/* ... of which ATOMIC WRITEs answered again */ \
	X(dup_flushes)		/* ... of which FLUSHes answered again */ \
	X(drop_too_old)		/* duplicate READ/ATOMIC without resource */ \
	X(drop_out_of_seq)	/* future PSN after the one NAK */	\
	X(drop_dup_resp)	/* stale response at the requester */	\
	X(drop_bad_resp)	/* response matching nothing outstanding */ \
	X(drop_state)		/* packet for a QP in ERROR */		\
	X(drop_malformed)	/* parser reject handed to rx_invalid */ \
	X(credit_stalls)	/* a receive-consuming WQE waited for credit */ \
	X(credit_probes)	/* limited-WQE single-packet probes */ \
	X(ackreq_probes)	/* newest request resent to ask an ACK */ \
	X(local_ops)		/* LOCAL_INV / BIND_MW / REG_MR run */	\
	X(local_errors)		/* ... of which failed */		\
	X(mem_errors)		/* memory gone between check and use */ \
	X(drop_no_recv)		/* UD/UC message with no receive WQE */ \
	X(ud_len_errors)	/* UD message larger than its receive WQE */ \
	X(uc_drop_msgs)		/* UC messages dropped: gap, error, no WQE */

#define SOFTRC__CNT_FIELD(n) u64 n;
struct softrc_eng_counters {
	SOFTRC_CORE_COUNTERS(SOFTRC__CNT_FIELD)
};

#undef SOFTRC__CNT_FIELD

extern const char *const softrc_eng_counter_names[];
#define SOFTRC__CNT_ONE(n) + 1
#define SOFTRC_CORE_NR_COUNTERS (0 SOFTRC_CORE_COUNTERS(SOFTRC__CNT_ONE))

enum softrc_eng_state {
	SOFTRC_QPS_RTS,		/* sending and receiving */
	SOFTRC_QPS_ERROR,	/* everything flushed, packets dropped */
	SOFTRC_QPS_NR
};

/* Requester state machine (req.c). */
enum softrc_eng_req_state {
	SOFTRC_REQ_READY,	/* may transmit */
	SOFTRC_REQ_RNR_WAIT,	/* RNR NAK received: wait for the RNR timer */
	SOFTRC_REQ_ERROR,
	SOFTRC_REQ_NR
};

/* Responder state machine (resp.c): which message is open. */
enum softrc_eng_resp_state {
	SOFTRC_RESP_IDLE,	/* next request must be FIRST or ONLY */
	SOFTRC_RESP_IN_SEND,	/* SEND open: MIDDLE or LAST expected */
	SOFTRC_RESP_IN_WRITE,	/* WRITE open: MIDDLE or LAST expected */
	SOFTRC_RESP_ERROR,
	SOFTRC_RESP_NR
};

extern const char *const softrc_eng_state_names[SOFTRC_QPS_NR];
extern const char *const softrc_eng_req_state_names[SOFTRC_REQ_NR];
extern const char *const softrc_eng_resp_state_names[SOFTRC_RESP_NR];

/**
 * struct softrc_eng_req - requester and completer state
 * @state:	enum softrc_eng_req_state
 * @head:	oldest WQE not yet completed (free-running index)
 * @tail:	next WQE to post
 * @cur:	WQE the next packet comes from
 * @cur_off:	byte offset of that packet in it
 * @cur_psn:	PSN of that packet
 * @psn_next:	next never-used PSN
 * @una:	oldest PSN not known to have been received
 * @next_ssn:	SSN of the next posted WQE
 * @sent_ssn:	SSN of the newest message sent to its last packet (a READ
 *		or ATOMIC: its request): no valid AETH MSN lies beyond it
 * @msn:	highest MSN seen in an AETH
 * @lsn:	limit sequence number (MSN + credits) when @credits_valid
 * @credits_valid: the peer reported credits (not 31)
 * @wait_idle:	credit probe sent: send nothing until it is acknowledged
 * @rd_out:	READ/ATOMIC WQEs started and not yet answered
 * @since_ackreq: packets sent since the last AckReq
 * @tail_unreq:	the newest PSN sent went without AckReq: the peer will
 *		not acknowledge it until a later request asks (not the same
 *		as @ackreq_psn short of @psn_next - 1: an older packet sent
 *		again with AckReq moves @ackreq_psn back, while the newest
 *		one's AckReq still stands)
 * @tx_since_arm: a request went out since the AckReq probe timer was set
 * @ackreq_psn:	the last PSN of the newest packet sent with AckReq: while
 *		it is unacknowledged, an ACK is on its way and the probe waits
 * @probing:	the send cursor was rewound for an AckReq probe (the packet
 *		it resends counts as a probe, not a retransmission)
 * @retry_left:	retries left before RETRY_EXC_ERR
 * @rnr_left:	RNR retries left (ignored when rnr_retry is 7)
 * @rnr_psn:	PSN to resume from when the RNR timer expires
 * @gbn_psn:	PSN of the last go-back-N not yet followed by progress
 * @gbn_active:	@gbn_psn is valid
 * @deadline:	armed deadline of each timer, 0 = disarmed
 * @drain:	SQ drain (SQD): finish the WQEs already started, start none
 */
struct softrc_eng_req {
	u8 state;
	u32 head;
	u32 tail;
	u32 cur;
	u32 cur_off;
	u32 cur_psn;
	u32 psn_next;
	u32 una;
	u32 next_ssn;
	u32 sent_ssn;
	u32 msn;
	u32 lsn;
	bool credits_valid;
	bool wait_idle;
	u32 rd_out;
	u32 since_ackreq;
	bool tail_unreq;
	bool tx_since_arm;
	u32 ackreq_psn;
	bool probing;
	u8 retry_left;
	u8 rnr_left;
	u32 rnr_psn;
	u32 gbn_psn;
	bool gbn_active;
	u64 deadline[SOFTRC_TIMER_NR];
	bool drain;
};

/**
 * struct softrc_eng_resp - responder state
 * @state:	enum softrc_eng_resp_state
 * @epsn:	next expected request PSN
 * @msn:	messages completed (C9-147/148), sent in every AETH
 * @nak_sent:	a sequence-error (or RNR) NAK was sent for @epsn
 * @ack_pending: an AckReq'd or duplicate request awaits the flush
 * @rq_head:	oldest receive WQE
 * @rq_tail:	next receive WQE to post
 * @res_next:	next responder resource to (re)use
 * @va:		open WRITE: where the next byte goes
 * @rkey:	open WRITE: its R_Key
 * @pin:	open WRITE: the pin of its R_Key check, released when the
 *		context closes (LAST) or the QP enters ERROR or is reset
 * @remaining:	open WRITE: bytes still expected
 * @offset:	open SEND: bytes placed in the receive WQE so far
 * @rd_tx:	responder resource whose response goes out next
 * @rd_pend:	resources queued from @rd_tx on, in ring order (0 = none):
 *		READ responses and ATOMIC ACKs still to transmit
 * @rd_psn:	PSN of the next response packet of resource @rd_tx
 * @rd_first:	PSN at which that response (re)started: its FIRST packet
 * @nak_held:	sequence-error or RNR NAK syndrome for @epsn waiting
 *		behind queued responses (0 = none)
 * @ack_held:	a flush found responses queued: the coalesced ACK (or
 *		@nak_held, or @fatal_held) goes out once they are sent
 * @res_live:	responder resources in use: the @res_live most recently
 *		allocated, oldest first at res_next - res_live
 * @fatal_held:	invalid request / remote access / remote operational
 *		NAK syndrome waiting behind queued responses (0 = none):
 *		requests are dropped meanwhile, and the QP enters ERROR
 *		once it is sent
 */
struct softrc_eng_resp {
	u8 state;
	u32 epsn;
	u32 msn;
	bool nak_sent;
	bool ack_pending;
	u32 rq_head;
	u32 rq_tail;
	u32 res_next;
	u64 va;
	u32 rkey;
	void *pin;
	u32 remaining;
	u32 offset;
	u32 rd_tx;
	u32 rd_pend;
	u32 rd_psn;
	u32 rd_first;
	u8 nak_held;
	bool ack_held;
	u32 res_live;
	u8 fatal_held;
};

/**
 * struct softrc_eng_qp - the engine's view of one RC QP (embedded in
 * the glue's QP object)
 *
 * @cnt stays the last member: softrc_eng_init() clears everything
 * before it and leaves the counters alone, so they count for the life of
 * the object (its owner zeroes it once) across resets, and a reader
 * without the QP lock never sees them drop to zero.
 */
struct softrc_eng_qp {
	const struct softrc_eng_ops *ops;
	void *ctx;
	struct softrc_eng_attr attr;
	struct softrc_eng_storage st;
	u8 state;
	struct softrc_eng_req req;
	struct softrc_eng_resp resp;
	struct softrc_eng_counters cnt;
};

/**
 * struct softrc_engine_snapshot - one engine's state, for observers
 * (debugfs, restrack, the QP summary): softrc_eng_snapshot() fills it
 * under the caller's QP lock, and the caller prints it after dropping
 * the lock. Pointers in it are shown, never followed.
 * @state:	enum softrc_eng_state
 * @attr:	the attributes the engine runs with
 * @sq_depth:	send ring entries
 * @rq_depth:	receive ring entries
 * @nres:	max_dest_rd_atomic: responder resources in use
 * @res_cap:	responder resources copied beside the snapshot (at most
 *		the capacity of the engine's ring)
 * @req:	requester and completer state
 * @resp:	responder state
 * @cnt:	the counters
 */
struct softrc_engine_snapshot {
	u8 state;
	struct softrc_eng_attr attr;
	u32 sq_depth;
	u32 rq_depth;
	u32 nres;
	u32 res_cap;
	struct softrc_eng_req req;
	struct softrc_eng_resp resp;
	struct softrc_eng_counters cnt;
};

/* What softrc_eng_modify() changes (struct softrc_eng_modify.mask). */
enum softrc_eng_modify_mask {
	/* pmtu, qkey, dqpn, timeout, retry_cnt, rnr_retry, min_rnr_timer,
	 * max_rd_atomic and remote_deny: read live by the engine
	 */
	SOFTRC_MODIFY_PATH		= BIT(0),
	/* rq_psn, and the responder expects it next */
	SOFTRC_MODIFY_RQ_PSN		= BIT(1),
	/* sq_psn, and the requester sends from it (before its first packet) */
	SOFTRC_MODIFY_SQ_PSN		= BIT(2),
	/* the retries left start again at retry_cnt */
	SOFTRC_MODIFY_RETRY_CNT		= BIT(3),
	/* the RNR retries left start again at rnr_retry */
	SOFTRC_MODIFY_RNR_RETRY		= BIT(4),
	/* max_dest_rd_atomic (softrc_eng_set_max_dest_rd_atomic()) */
	SOFTRC_MODIFY_MAX_DEST_RD_ATOMIC = BIT(5),
};

/**
 * struct softrc_eng_modify - a modify_qp for a running engine
 * @attr:	new values; only the fields @mask names are read
 * @max_dest_rd_atomic: responder resources (SOFTRC_MODIFY_MAX_DEST_RD_ATOMIC)
 * @mask:	SOFTRC_MODIFY_*
 */
struct softrc_eng_modify {
	struct softrc_eng_attr attr;
	u32 max_dest_rd_atomic;
	u32 mask;
};

/* engine.c */
int softrc_eng_init(struct softrc_eng_qp *qp,
		    const struct softrc_eng_ops *ops, void *ctx,
			const struct softrc_eng_attr *attr,
			const struct softrc_eng_storage *st);
int softrc_eng_post_send(struct softrc_eng_qp *qp,
			 const struct softrc_eng_send_wr *wr);
int softrc_eng_post_recv(struct softrc_eng_qp *qp, u64 wr_id, u32 length);
void softrc_eng_rx(struct softrc_eng_qp *qp, const struct softrc_pkt *pkt,
		   void *rx, u64 now);
void softrc_eng_rx_invalid(struct softrc_eng_qp *qp,
			   const struct softrc_pkt *pkt);
void softrc_eng_rx_flush(struct softrc_eng_qp *qp);
bool softrc_eng_rx_flush_ack(struct softrc_eng_qp *qp, struct softrc_pkt *ack);
void softrc_eng_timer(struct softrc_eng_qp *qp, enum softrc_eng_timer_id id,
		      u64 now);
void softrc_eng_set_error(struct softrc_eng_qp *qp);
void softrc_eng_release(struct softrc_eng_qp *qp);
bool softrc_eng_idle(const struct softrc_eng_qp *qp);
void softrc_eng_sq_drain(struct softrc_eng_qp *qp, bool on);
bool softrc_eng_sq_drained(const struct softrc_eng_qp *qp);
bool softrc_eng_tx_pending(const struct softrc_eng_qp *qp);
int softrc_eng_modify(struct softrc_eng_qp *qp,
		      const struct softrc_eng_modify *mod);
void softrc_eng_snapshot(const struct softrc_eng_qp *qp,
			 struct softrc_engine_snapshot *snap,
			  struct softrc_eng_rd_res *res, u32 res_max);

/* req.c */
u32 softrc_eng_tx(struct softrc_eng_qp *qp, u64 now, u32 budget);

/* resp_res.c */
int softrc_eng_set_max_dest_rd_atomic(struct softrc_eng_qp *qp, u32 nres);
int softrc_eng_set_resources(struct softrc_eng_qp *qp,
			     struct softrc_eng_rd_res *res, u32 cap, u32 nres);
u32 softrc_eng_tx_resp(struct softrc_eng_qp *qp, u32 budget);

/*
 * Queries for the hot path (inline: no call per WR), under the QP lock
 * like every other call.
 */

/* Has softrc_eng_init() run on @qp (a zeroed one: no)? */
static inline bool softrc_eng_started(const struct softrc_eng_qp *qp)
{
	return !!qp->ops;
}

/* Send WQEs posted and not yet completed. */
static inline u32 softrc_eng_sq_used(const struct softrc_eng_qp *qp)
{
	return qp->req.tail - qp->req.head;
}

/* Free-running index of the next send WQE posted (its slot: & depth-1). */
static inline u32 softrc_eng_sq_next(const struct softrc_eng_qp *qp)
{
	return qp->req.tail;
}

/* Receive WQEs posted and not yet consumed. */
static inline u32 softrc_eng_rq_used(const struct softrc_eng_qp *qp)
{
	return qp->resp.rq_tail - qp->resp.rq_head;
}

/* Free-running index of the next receive WQE posted. */
static inline u32 softrc_eng_rq_next(const struct softrc_eng_qp *qp)
{
	return qp->resp.rq_tail;
}

/* The P_Key the QP sends and accepts. */
static inline u16 softrc_eng_pkey(const struct softrc_eng_qp *qp)
{
	return qp->attr.pkey;
}

/*
 * The counters as an array of SOFTRC_CORE_NR_COUNTERS u64 in
 * SOFTRC_CORE_COUNTERS order. A reader without the QP lock loads each
 * once (READ_ONCE): a value may be stale, never torn, and never drops
 * (softrc_eng_init() keeps them).
 */
static inline const u64 *softrc_eng_counter_values(const struct softrc_eng_qp *qp)
{
	return (const u64 *)&qp->cnt;
}

#endif /* SOFTRC_CORE_ENGINE_H */

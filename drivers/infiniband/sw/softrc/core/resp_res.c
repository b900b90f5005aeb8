// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Responder resources and the response queue: the READ, ATOMIC, ATOMIC
 * WRITE and FLUSH requests that take a resource (max_dest_rd_atomic of
 * them, IBTA Vol 1 §9.7), the responses they queue in PSN order,
 * the duplicates answered from them, and the expected PSN's advance,
 * which retires a resource once its PSNs leave the duplicate window.
 * resp.c runs the responder's state machine and calls in here for these
 * requests; the rules they follow are listed at the top of resp.c.
 *
 * Context: as resp.c: called with the QP lock held by the module,
 * softirq or process context; never sleeps. Touches qp->resp's resource
 * and queue fields and qp->st.res; memory goes through ops->mr_check and
 * ops->atomic / ops->atomic_write / ops->flush, responses leave through
 * softrc_eng_resp_xmit() (READ data is read at transmit time).
 */
#include "internal.h"

/* Age of resource slot @i in allocation order: 0 oldest, nres - 1 newest. */
static u32 softrc_resp_res_age(const struct softrc_eng_qp *qp, u32 i)
{
	return (i + qp->st.nres - qp->resp.res_next) % qp->st.nres;
}

/* The response of resource @i goes out next, from PSN @psn (a FIRST). */
static void softrc_resp_rd_seek(struct softrc_eng_qp *qp, u32 i, u32 psn)
{
	qp->resp.rd_tx = i;
	qp->resp.rd_psn = psn;
	qp->resp.rd_first = psn;
}

/* The response at the head of the queue is out (or abandoned). */
static void softrc_resp_rd_next(struct softrc_eng_qp *qp)
{
	struct softrc_eng_resp *resp = &qp->resp;
	u32 i = (resp->rd_tx + 1) % qp->st.nres;

	if (--resp->rd_pend)
		softrc_resp_rd_seek(qp, i, qp->st.res[i].psn);
}

/*
 * Queue resource @i from PSN @psn: a new one (the newest) or a duplicate.
 * The queue is the ring range [rd_tx, rd_tx + rd_pend), oldest first.
 */
static void softrc_resp_rd_queue(struct softrc_eng_qp *qp, u32 i, u32 psn)
{
	struct softrc_eng_resp *resp = &qp->resp;
	u32 a, a0, end;

	if (!resp->rd_pend) {
		softrc_resp_rd_seek(qp, i, psn);
		resp->rd_pend = 1;
		return;
	}
	a = softrc_resp_res_age(qp, i);
	a0 = softrc_resp_res_age(qp, resp->rd_tx);
	end = a0 + resp->rd_pend - 1;
	if (psn != qp->st.res[i].psn) {
		/*
		 * A duplicate from inside a response: the requester asks from
		 * its first missing PSN, so it has everything before @psn,
		 * and it expects a FIRST at @psn (a response restarts at the
		 * duplicate's PSN, "Protocol decisions"): restart there, keep what
		 * follows.
		 */
		resp->rd_pend = a <= end ? end - a + 1 : 1;
		softrc_resp_rd_seek(qp, i, psn);
		return;
	}
	if (a < a0 || (a == a0 && softrc_psn_lt(psn, resp->rd_psn))) {
		/* the requester went back: restart there, keep what follows */
		resp->rd_pend = end - a + 1;
		softrc_resp_rd_seek(qp, i, psn);
	} else if (a > end) {
		/* past the queue: extend it through @i */
		resp->rd_pend = a - a0 + 1;
	}
	/* else: queued already, at or before @psn */
}

/* Slot of the oldest live resource (res_live > 0). */
static u32 softrc_resp_res_oldest(const struct softrc_eng_qp *qp)
{
	return (qp->resp.res_next + qp->st.nres - qp->resp.res_live) %
	       qp->st.nres;
}

/*
 * Release the oldest live resource, and its READ pin. Every resource
 * leaves through here:
 * recycled for a new READ/ATOMIC, retired out of the duplicate window,
 * or all of them (ERROR, a new max_dest_rd_atomic). A response of it
 * still queued is abandoned (it is then at the head of the queue: the
 * queue runs oldest first over live resources).
 */
static void softrc_resp_res_release(struct softrc_eng_qp *qp)
{
	struct softrc_eng_resp *resp = &qp->resp;
	u32 i = softrc_resp_res_oldest(qp);

	if (resp->rd_pend && resp->rd_tx == i)
		softrc_resp_rd_next(qp);
	if (qp->st.res[i].pin)
		qp->ops->key_put(qp->ctx, qp->st.res[i].pin);
	memset(&qp->st.res[i], 0, sizeof(qp->st.res[i]));
	resp->res_live--;
}

void softrc_eng_resp_res_release_all(struct softrc_eng_qp *qp)
{
	while (qp->resp.res_live)
		softrc_resp_res_release(qp);
}

/* ERROR or reset: drop the WRITE context's and every resource's pin. */
void softrc_eng_resp_release_pins(struct softrc_eng_qp *qp)
{
	softrc_eng_resp_write_end(qp);
	softrc_eng_resp_res_release_all(qp);
}

/*
 * Advance epsn by @n (at most SOFTRC_READ_MAX_PSNS). A resource can only
 * answer duplicates while its last PSN is within the 2^23 duplicate
 * window behind epsn [IBTA 9.7.2]: retire it as soon as it
 * leaves, so that it never answers a duplicate of a later PSN cycle (a
 * duplicate is answered from what that very request saved: softrc.rst,
 * "Protocol decisions").
 * Resources are allocated in PSN order, so the oldest goes
 * first. The distance cannot wrap unseen: a live resource is 1..2^23
 * PSNs behind epsn, and one step adds at most 2^22.
 */
void softrc_eng_resp_epsn_add(struct softrc_eng_qp *qp, u32 n)
{
	struct softrc_eng_resp *resp = &qp->resp;

	while (resp->res_live) {
		const struct softrc_eng_rd_res *res =
			&qp->st.res[softrc_resp_res_oldest(qp)];
		u32 last = softrc_psn_add(res->psn, res->npkts - 1);

		if (((resp->epsn - last) & SOFTRC_PSN_MASK) + n <=
		    SOFTRC_PSN_WINDOW)
			break;
		softrc_resp_res_release(qp);
	}
	resp->epsn = softrc_psn_add(resp->epsn, n);
}

/*
 * May a new READ/ATOMIC take a resource? Not if none is configured
 * (max_dest_rd_atomic 0), nor if the one it would recycle has not sent
 * its response once: the requester cannot have received it, so it has
 * more than max_dest_rd_atomic READ/ATOMICs outstanding: an invalid
 * request (class C, as rxe's "too many RDMA READ/ATOMIC requests" for
 * max_dest_rd_atomic 0). A recycled resource
 * whose response was sent is taken silently (its replay, if queued, is
 * abandoned: the requester is past it), as in rxe: excess that the
 * responder cannot see costs the requester its duplicates.
 */
static bool softrc_resp_res_ok(const struct softrc_eng_qp *qp)
{
	if (!qp->st.nres)
		return false;
	return qp->resp.res_live < qp->st.nres ||
	       qp->st.res[qp->resp.res_next].sent;
}

/* A free resource for a new READ/ATOMIC (the oldest one recycled). */
static u32 softrc_resp_res_alloc(struct softrc_eng_qp *qp)
{
	struct softrc_eng_resp *resp = &qp->resp;
	u32 i;

	if (resp->res_live == qp->st.nres)
		softrc_resp_res_release(qp);
	i = resp->res_next;
	resp->res_next = (i + 1) % qp->st.nres;
	resp->res_live++;
	return i;
}

/**
 * softrc_eng_set_resources() - give the responder new resource storage
 * @qp:		the QP
 * @res:	@cap entries, which the engine clears
 * @cap:	entries of @res
 * @nres:	max_dest_rd_atomic from now on, at most @cap
 *
 * Every resource is released first (its pin dropped, queued responses
 * abandoned, later duplicates of them dropped, as rxe does when
 * max_dest_rd_atomic changes), so the engine keeps no reference into
 * the old storage and the caller may free it once this returns.
 * Return: 0, or SOFTRC_E_INVAL (nothing changed) if @nres > @cap.
 */
int softrc_eng_set_resources(struct softrc_eng_qp *qp,
			     struct softrc_eng_rd_res *res, u32 cap, u32 nres)
{
	if (nres > cap)
		return SOFTRC_E_INVAL;
	softrc_eng_resp_res_release_all(qp);
	if (cap)
		memset(res, 0, sizeof(*res) * cap);
	qp->st.res = res;
	qp->st.res_cap = cap;
	qp->st.nres = nres;
	qp->resp.res_next = 0;
	return 0;
}

/*
 * max_dest_rd_atomic changed (modify_qp) within the storage's res_cap
 * (above it: SOFTRC_E_INVAL, nothing changed): every resource is
 * released, as by softrc_eng_set_resources().
 */
int softrc_eng_set_max_dest_rd_atomic(struct softrc_eng_qp *qp, u32 nres)
{
	if (nres == qp->st.nres)
		return 0;
	return softrc_eng_set_resources(qp, qp->st.res, qp->st.res_cap, nres);
}

/* READ response packets (PSNs) for @len bytes; 1 for a zero-length READ. */
u32 softrc_eng_read_npkts(u32 len, u32 pmtu)
{
	return len ? (u32)(((u64)len + pmtu - 1) / pmtu) : 1;
}

static void softrc_resp_atomic_reply(struct softrc_eng_qp *qp,
				     const struct softrc_eng_rd_res *res)
{
	struct softrc_pkt pkt;

	softrc_eng_resp_pkt_init(qp, &pkt, SOFTRC_OP_ATOMIC_ACKNOWLEDGE, res->psn);
	pkt.orig = res->orig;
	softrc_eng_resp_xmit(qp, &pkt, NULL);
}

/*
 * ATOMIC WRITE's and FLUSH's answer (rxe's): READ RESPONSE ONLY, AETH,
 * no payload.
 */
static void softrc_resp_empty_reply(struct softrc_eng_qp *qp,
				    const struct softrc_eng_rd_res *res)
{
	struct softrc_pkt pkt;

	softrc_eng_resp_pkt_init(qp, &pkt, SOFTRC_OP_RDMA_READ_RESPONSE_ONLY,
				 res->psn);
	softrc_eng_resp_xmit(qp, &pkt, NULL);
}

/*
 * The memory a READ (or its replay) reads is gone: NAK remote access at
 * the response PSN that could not be sent, and enter ERROR.
 */
static void softrc_resp_read_gone(struct softrc_eng_qp *qp, u32 psn)
{
	qp->cnt.mem_errors++;
	qp->cnt.rem_access_naks_sent++;
	softrc_eng_resp_send_aeth(qp, SOFTRC_AETH_NAK | SOFTRC_NAK_REMOTE_ACCESS,
				  psn);
	softrc_eng_enter_error(qp);
}

/* Send READ response packet rd_psn of resource rd_tx, advance the cursor. */
static void softrc_resp_read_one(struct softrc_eng_qp *qp,
				 struct softrc_eng_rd_res *res)
{
	struct softrc_eng_resp *resp = &qp->resp;
	u32 k = (u32)softrc_psn_diff(resp->rd_psn, res->psn);
	bool first = resp->rd_psn == resp->rd_first;
	bool last = k + 1 == res->npkts;
	struct softrc_eng_buf pl = { .kind = SOFTRC_BUF_MR };
	struct softrc_pkt pkt;
	u8 op;

	op = first && last ? SOFTRC_OP_RDMA_READ_RESPONSE_ONLY :
	     first ? SOFTRC_OP_RDMA_READ_RESPONSE_FIRST :
	     last ? SOFTRC_OP_RDMA_READ_RESPONSE_LAST :
		    SOFTRC_OP_RDMA_READ_RESPONSE_MIDDLE;
	softrc_eng_resp_pkt_init(qp, &pkt, op, resp->rd_psn);
	pl.rkey = res->rkey;
	pl.pin = res->pin;
	pl.addr = res->va + (u64)k * qp->attr.pmtu;
	pl.len = last ? res->len - (u32)((u64)k * qp->attr.pmtu) :
		 qp->attr.pmtu;
	if (!pl.len)
		pl.kind = SOFTRC_BUF_NONE;
	pkt.payload_len = pl.len;
	if (softrc_eng_resp_xmit(qp, &pkt, &pl)) {
		softrc_resp_read_gone(qp, resp->rd_psn);
		return;
	}
	if (last) {
		res->sent = true;
		softrc_resp_rd_next(qp);
	} else {
		resp->rd_psn = softrc_psn_add(resp->rd_psn, 1);
	}
}

/*
 * A one-packet request (ATOMIC, ATOMIC WRITE, FLUSH) done: its MSN and PSN
 * consumed, the responder resource that answers it and its duplicates
 * (@orig: the value an ATOMIC read), the response sent.
 */
static void softrc_resp_one_pkt_res(struct softrc_eng_qp *qp,
				    const struct softrc_pkt *pkt,
				    enum softrc_eng_res_type type, u64 orig)
{
	struct softrc_eng_rd_res *res;
	u32 i;

	qp->resp.msn = softrc_psn_add(qp->resp.msn, 1);
	softrc_eng_resp_epsn_add(qp, 1);
	i = softrc_resp_res_alloc(qp);
	res = &qp->st.res[i];
	res->type = type;
	res->psn = pkt->psn;
	res->npkts = 1;
	res->orig = orig;
	softrc_resp_rd_queue(qp, i, res->psn);
	softrc_eng_tx_resp(qp, SOFTRC_RESP_INLINE);
}

/*
 * Transmit up to @budget queued responses (READ response packets, ATOMIC
 * ACKs), then the ACK/NAK held behind them. Returns the packets sent;
 * less than @budget means the responder has nothing more queued.
 */
u32 softrc_eng_tx_resp(struct softrc_eng_qp *qp, u32 budget)
{
	struct softrc_eng_resp *resp = &qp->resp;
	u32 n = 0;

	for (; n < budget && resp->rd_pend; n++) {
		struct softrc_eng_rd_res *res = &qp->st.res[resp->rd_tx];

		if (res->type != SOFTRC_RES_READ) {
			if (res->type == SOFTRC_RES_ATOMIC)
				softrc_resp_atomic_reply(qp, res);
			else
				softrc_resp_empty_reply(qp, res);
			res->sent = true;
			softrc_resp_rd_next(qp);
		} else {
			softrc_resp_read_one(qp, res);
		}
	}
	if (n < budget && resp->ack_held && softrc_eng_resp_send_ctl(qp))
		n++;
	return n;
}

void softrc_eng_resp_read(struct softrc_eng_qp *qp,
			  const struct softrc_pkt *pkt)
{
	struct softrc_eng_resp *resp = &qp->resp;
	u32 len = pkt->dma_len, npkts = softrc_eng_read_npkts(len, qp->attr.pmtu);
	struct softrc_eng_rd_res *res;
	void *pin = NULL;
	u32 i;

	/* C9-94: at most 2^31 bytes; at most half the PSN window */
	if (!softrc_eng_resp_enabled(qp, SOFTRC_ACCESS_REMOTE_READ) ||
	    !softrc_resp_res_ok(qp) || pkt->payload_len ||
	    len > SOFTRC_MAX_MSG_LEN || npkts > SOFTRC_READ_MAX_PSNS) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ, 0);
		return;
	}
	if (len && qp->ops->mr_check(qp->ctx, pkt->rkey, pkt->va, len,
				     SOFTRC_ACCESS_REMOTE_READ, &pin)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_REMOTE_ACCESS, 0);
		return;
	}
	softrc_eng_resp_ack_before(qp);	/* the ACK must not cover this PSN */
	resp->msn = softrc_psn_add(resp->msn, 1);	/* early increment */
	softrc_eng_resp_epsn_add(qp, npkts);
	i = softrc_resp_res_alloc(qp);
	res = &qp->st.res[i];
	res->type = SOFTRC_RES_READ;
	res->psn = pkt->psn;
	res->npkts = npkts;
	res->va = pkt->va;
	res->rkey = pkt->rkey;
	res->len = len;
	res->pin = pin;
	softrc_resp_rd_queue(qp, i, res->psn);
	softrc_eng_tx_resp(qp, SOFTRC_RESP_INLINE);
}

void softrc_eng_resp_atomic(struct softrc_eng_qp *qp,
			    const struct softrc_pkt *pkt)
{
	void *pin = NULL;
	u64 orig = 0;
	int err;

	if (!softrc_eng_resp_enabled(qp, SOFTRC_ACCESS_REMOTE_ATOMIC) ||
	    !softrc_resp_res_ok(qp) || (pkt->va & 7)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ, 0);
		return;
	}
	if (qp->ops->mr_check(qp->ctx, pkt->rkey, pkt->va, 8,
			      SOFTRC_ACCESS_REMOTE_ATOMIC, &pin)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_REMOTE_ACCESS, 0);
		return;
	}
	softrc_eng_resp_ack_before(qp);
	err = qp->ops->atomic(qp->ctx, pin, pkt->va,
			      pkt->opcode == SOFTRC_OP_COMPARE_SWAP,
			      pkt->swap_add, pkt->compare, &orig);
	qp->ops->key_put(qp->ctx, pin);	/* a replay sends the saved value */
	if (err) {
		qp->cnt.mem_errors++;
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_REMOTE_ACCESS, 0);
		return;
	}
	softrc_resp_one_pkt_res(qp, pkt, SOFTRC_RES_ATOMIC, orig);
}

/*
 * ATOMIC WRITE (the parser checked 8 bytes, no pad, aligned VA): remote
 * write enabled and a resource free, else invalid request; the R_Key
 * checked for remote write on the word, else remote access; the store,
 * then the resource that answers it (and its duplicates).
 */
void softrc_eng_resp_atomic_write(struct softrc_eng_qp *qp,
				  const struct softrc_pkt *pkt, void *rx)
{
	void *pin = NULL;
	int err;

	if (!softrc_eng_resp_enabled(qp, SOFTRC_ACCESS_REMOTE_WRITE) ||
	    !softrc_resp_res_ok(qp)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ, 0);
		return;
	}
	if (qp->ops->mr_check(qp->ctx, pkt->rkey, pkt->va,
			      SOFTRC_ATOMIC_WRITE_BYTES,
			      SOFTRC_ACCESS_REMOTE_WRITE, &pin)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_REMOTE_ACCESS, 0);
		return;
	}
	softrc_eng_resp_ack_before(qp);
	err = qp->ops->atomic_write(qp->ctx, pin, pkt->va, rx,
				    pkt->payload_off);
	qp->ops->key_put(qp->ctx, pin);	/* a duplicate is only answered */
	if (err) {
		qp->cnt.mem_errors++;
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_REMOTE_ACCESS, 0);
		return;
	}
	softrc_resp_one_pkt_res(qp, pkt, SOFTRC_RES_ATOMIC_WRITE, 0);
}

/* The R_Key rights a FLUSH of placement type @type needs. */
static u32 softrc_flush_access(u8 type)
{
	return (type & SOFTRC_FLUSH_GLOBAL ? SOFTRC_ACCESS_FLUSH_GLOBAL : 0) |
	       (type & SOFTRC_FLUSH_PERSISTENT ?
		SOFTRC_ACCESS_FLUSH_PERSISTENT : 0);
}

/*
 * FLUSH (the parser checked no payload and the FETH): the placement
 * types enabled on the QP and a resource free, else invalid request (a
 * type of 0 asks for no right and is a barrier on a valid key, as rxe
 * answers it); the
 * R_Key checked for the flush rights (on the range at level RANGE, any
 * length beyond the region included; the key alone at level MR), else
 * remote access; the flush, then the resource that answers it (and its
 * duplicates).
 */
void softrc_eng_resp_flush_req(struct softrc_eng_qp *qp,
			       const struct softrc_pkt *pkt)
{
	u32 access = softrc_flush_access(pkt->flush_type);
	void *pin = NULL;
	int err;

	if (!softrc_eng_resp_enabled(qp, access) || !softrc_resp_res_ok(qp)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_INVALID_REQ, 0);
		return;
	}
	if (qp->ops->mr_check(qp->ctx, pkt->rkey, pkt->va,
			      pkt->flush_level == SOFTRC_FLUSH_MR ? 0 :
			      pkt->dma_len, access, &pin)) {
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_REMOTE_ACCESS, 0);
		return;
	}
	softrc_eng_resp_ack_before(qp);
	err = qp->ops->flush(qp->ctx, pin, pkt->flush_type);
	qp->ops->key_put(qp->ctx, pin);	/* a duplicate is only answered */
	if (err) {
		qp->cnt.mem_errors++;
		softrc_eng_resp_fail(qp, pkt, SOFTRC_NAK_REMOTE_ACCESS, 0);
		return;
	}
	softrc_resp_one_pkt_res(qp, pkt, SOFTRC_RES_FLUSH, 0);
}

/*
 * The live resource holding @psn, newest first (live resources never
 * overlap: each covers PSNs of the current cycle only).
 */
static struct softrc_eng_rd_res *softrc_resp_res_find(struct softrc_eng_qp *qp,
						      u8 type, u32 psn)
{
	u32 k, nres = qp->st.nres;

	for (k = 1; k <= qp->resp.res_live; k++) {
		struct softrc_eng_rd_res *res =
			&qp->st.res[(qp->resp.res_next + nres - k) % nres];

		if (res->type == type && softrc_psn_in(psn, res->psn, res->npkts))
			return res;
	}
	return NULL;
}

/* A request below the expected PSN: a duplicate (§9.7.2). */
void softrc_eng_resp_duplicate(struct softrc_eng_qp *qp,
			       const struct softrc_pkt *pkt)
{
	u32 flags = pkt->op->flags;
	struct softrc_eng_rd_res *res;

	qp->cnt.dup_requests++;
	if (flags & (SOFTRC_OPF_SEND | SOFTRC_OPF_WRITE)) {
		qp->resp.ack_pending = true;
		return;
	}
	res = softrc_resp_res_find(qp, flags & SOFTRC_OPF_READ ? SOFTRC_RES_READ :
				   flags & SOFTRC_OPF_ATOMIC_WRITE ?
				   SOFTRC_RES_ATOMIC_WRITE :
				   flags & SOFTRC_OPF_FLUSH ?
				   SOFTRC_RES_FLUSH : SOFTRC_RES_ATOMIC,
				   pkt->psn);
	if (!res) {
		qp->cnt.drop_too_old++;
		return;
	}
	if (res->type == SOFTRC_RES_ATOMIC)
		qp->cnt.dup_atomics++;
	else if (res->type == SOFTRC_RES_ATOMIC_WRITE)
		qp->cnt.dup_atomic_writes++;	/* answered, not stored again */
	else if (res->type == SOFTRC_RES_FLUSH)
		qp->cnt.dup_flushes++;		/* answered, not run again */
	else
		qp->cnt.dup_reads++;	/* memory is read again at transmit */
	softrc_resp_rd_queue(qp, (u32)(res - qp->st.res), pkt->psn);
	softrc_eng_tx_resp(qp, SOFTRC_RESP_INLINE);
}

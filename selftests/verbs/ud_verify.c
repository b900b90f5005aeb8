// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * ud_verify - UD QPs over libibverbs, checked message by message.
 *
 * Runs as two processes: a server (-s) and a client, which exchange QP
 * numbers, GIDs, Q_Key and port MTU over a stream socket (TCP, or a Unix
 * socket path, which also works across network namespaces). The server
 * is a receive agent: on the client's command it posts receives on one of
 * its UD QPs, reports each completion it gets within a time limit with
 * the whole receive buffer, and sends replies through an address handle
 * made from a received completion. The client sends and checks:
 *   - SEND and SEND_WITH_IMM of 0, 1, 100, 1024, MTU - 1 and MTU bytes
 *     (MTU: the path MTU, the smaller active MTU of the two ports), an
 *     inline SEND, a SEND gathered from two SGEs, a list of 16 SENDs in one
 *     post_send (they arrive in order): every signaled SEND completes on
 *     the send CQ (IBV_WC_SEND), an unsignaled one does not; each receive
 *     completion has status SUCCESS, opcode IBV_WC_RECV, byte_len 40 +
 *     size, IBV_WC_GRH, IBV_WC_WITH_IMM and imm_data exactly for
 *     SEND_WITH_IMM, src_qp the sender's QPN, qp_num the receiver's,
 *     pkey_index 0; every payload byte is checked and nothing past the
 *     message is written
 *   - the 40-byte GRH slot: for IPv4 GIDs bytes 20..39 are the packet's
 *     IPv4 header (version 4, IHL 5, valid checksum, protocol UDP, total
 *     length, saddr the sender's address, daddr the receiver's; bytes
 *     0..19 are not looked at); for IPv6 GIDs the IPv6 header (version,
 *     next header UDP, payload length, both addresses)
 *   - ibv_create_ah_from_wc() on a received completion succeeds at the
 *     server and a reply sent through that AH reaches the client (what
 *     udaddy and perftest -c UD rely on); the reply is checked the same way
 *   - Q_Key: SENDs with a wrong remote_qkey are dropped (no receive
 *     completion within a second, scaled), the QP still receives after
 *     them; query_qp returns the QP's Q_Key; -K: controlled Q_Key (IBTA
 *     10.2.5: a remote_qkey with the high-order bit set sends the QP's
 *     own Q_Key, and after modify_qp changed it, the new one)
 *   - a SEND larger than the path MTU is not delivered; -O: it completes
 *     with IBV_WC_LOC_LEN_ERR
 *   - a message larger than the posted receive buffer (40 + payload) does
 *     not complete successfully and nothing is written past the buffer;
 *     -L: the receive completes with IBV_WC_LOC_LEN_ERR
 *   - QP states: post_send fails in RESET, INIT and RTR; RESET->INIT
 *     without IBV_QP_QKEY fails; INIT->RTR with IBV_QP_STATE alone and
 *     RTR->RTS with IBV_QP_STATE | IBV_QP_SQ_PSN succeed (RTS without
 *     SQ_PSN fails); no completion for the refused WRs
 * The client ends with "# qkey drops: N": how many messages the receiving
 * device must have dropped for a bad Q_Key (its rx_drop_qkey counter).
 *
 * Linux rdma_rxe (6.1) deviates where the flags say: it has no controlled
 * Q_Key (sends the WR's value as is), completes an oversized UD SEND
 * successfully without sending it (C10-93.1.1) and completes a receive
 * that does not fit its buffer with IBV_WC_LOC_QP_OP_ERR (copy_data's
 * -EINVAL taken for a malformed WQE; the QP goes to ERROR). Without -K the
 * controlled Q_Key checks are skipped; without -O and -L those two cases
 * only check what both behaviours share. On one device's loopback rxe also
 * leaves the IPv4 header checksum unset (0): -C skips that check.
 *
 * Output is KTAP (the client's); the exit status is 0 when every test
 * passed. Runs in user space as an ordinary verbs consumer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "rc_conn.h"
#include "stream.h"
#include "timing.h"

#define MAGIC		0x55445646u	/* "UDVF" */
#define GRH_LEN		40
#define SLOT		8192	/* one receive or send buffer */
#define NSLOT		96
#define QDEPTH		64
#define POISON		0xa5
#define CHAIN		16
#define QUIET_SECS	1.0	/* "nothing arrives" waits this long (scaled) */
#define WAIT_SECS	10.0	/* an expected message, at most (scaled) */
#define QKEY_BAD_N	3

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* in a checker with a local "bool good": a sub-check and its diagnostic */
#define EXPECT(cond, ...) do {					\
		if (!(cond)) {						\
			good = false;					\
			diag(__VA_ARGS__);				\
		}							\
	} while (0)

struct opts {
	bool server;
	const char *dev;
	const char *peer;	/* host, or a path for a Unix socket */
	int port;
	int gid_idx;
	uint32_t qkey;
	int deadline;
	bool ctrl_qkey;		/* -K */
	bool big_err;		/* -O */
	bool short_err;		/* -L */
	bool no_csum;		/* -C */
};

static struct opts o = {
	.port = 18516, .gid_idx = -1, .qkey = 0x1ee7c0de, .deadline = 120,
};

static double t_end;

/* --- the device ------------------------------------------------------------ */
struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	uint8_t *buf;		/* NSLOT slots of SLOT bytes */
	union ibv_gid gid;
	uint32_t mtu;		/* the port's active MTU, bytes */
};

static struct dev d;

static void pick_gid(void)
{
	int idx = roce_gid_pick(d.ctx, o.gid_idx, &d.gid);

	if (idx < 0)
		bail("no RoCE v2 IPv4 GID %d on %s (use -g)", o.gid_idx, o.dev);
	o.gid_idx = idx;
}

static void open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	int i;

	if (!l)
		bail("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; l[i]; i++)
		if (!o.dev || !strcmp(ibv_get_device_name(l[i]), o.dev))
			break;
	if (!l[i])
		bail("no RDMA device %s", o.dev ? o.dev : "");
	o.dev = strdup(ibv_get_device_name(l[i]));
	d.ctx = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	if (!d.ctx)
		bail("ibv_open_device %s", o.dev);
	if (ibv_query_port(d.ctx, 1, &pa))
		bail("ibv_query_port");
	d.mtu = 128u << pa.active_mtu;
	pick_gid();
	d.pd = ibv_alloc_pd(d.ctx);
	if (!d.pd)
		bail("ibv_alloc_pd: %s", strerror(errno));
	d.buf = aligned_alloc(4096, (size_t)NSLOT * SLOT);
	if (!d.buf)
		bail("out of memory");
	memset(d.buf, POISON, (size_t)NSLOT * SLOT);
	d.mr = ibv_reg_mr(d.pd, d.buf, (size_t)NSLOT * SLOT,
			  IBV_ACCESS_LOCAL_WRITE);
	if (!d.mr)
		bail("ibv_reg_mr: %s", strerror(errno));
}

static uint8_t *slot(unsigned int i)
{
	return d.buf + (size_t)i * SLOT;
}

struct uqp {
	struct ibv_qp *qp;
	struct ibv_cq *scq, *rcq;
	uint32_t max_inline;
};

static void create_uqp(struct uqp *q)
{
	struct ibv_qp_init_attr a = {
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = QDEPTH, .max_recv_wr = QDEPTH,
			 .max_send_sge = 2, .max_recv_sge = 1,
			 .max_inline_data = 64 },
	};

	q->scq = ibv_create_cq(d.ctx, 2 * QDEPTH, NULL, NULL, 0);
	q->rcq = ibv_create_cq(d.ctx, 2 * QDEPTH, NULL, NULL, 0);
	if (!q->scq || !q->rcq)
		bail("ibv_create_cq: %s", strerror(errno));
	a.send_cq = q->scq;
	a.recv_cq = q->rcq;
	q->qp = ibv_create_qp(d.pd, &a);
	if (!q->qp) {
		a.cap.max_inline_data = 0;
		q->qp = ibv_create_qp(d.pd, &a);
	}
	if (!q->qp)
		bail("ibv_create_qp(UD): %s", strerror(errno));
	q->max_inline = a.cap.max_inline_data;
}

static int to_init(struct ibv_qp *qp, uint32_t qkey, bool with_qkey)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | (with_qkey ? IBV_QP_QKEY : 0));
}

static int to_rtr(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int to_rts(struct ibv_qp *qp, bool with_psn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTS, .sq_psn = 0x123 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE |
			     (with_psn ? IBV_QP_SQ_PSN : 0));
}

static void uqp_up(struct uqp *q)
{
	if (to_init(q->qp, o.qkey, true) || to_rtr(q->qp) ||
	    to_rts(q->qp, true))
		bail("UD QP %#x to RTS: %s", q->qp->qp_num, strerror(errno));
}

static int set_qkey(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = { .qkey = qkey };

	return ibv_modify_qp(qp, &a, IBV_QP_QKEY);
}

/* up to @n completions of @cq within @secs (scaled), fewer on timeout */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, double secs)
{
	double end = now() + tmo(secs);
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			bail("ibv_poll_cq: %d", r);
		got += r;
		if (got == n || now() > end)
			break;
		if (!r)
			usleep(200);
	}
	return got;
}

static int post_recv(struct ibv_qp *qp, unsigned int s, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)slot(s), .length = len,
			       .lkey = d.mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = s, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	memset(slot(s), POISON, SLOT);
	return ibv_post_recv(qp, &wr, &bad);
}

/* payload byte @i of message @id */
static uint8_t pat(uint32_t id, uint32_t i)
{
	return (uint8_t)(id * 37 + i * 13 + (i >> 8) + 1);
}

static void fill(uint8_t *p, uint32_t id, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(id, i);
}

static uint32_t imm_of(uint32_t id)
{
	return 0xc0de0000u | id;
}

/* --- socket exchange ---------------------------------------------------------- */
struct info {
	uint32_t magic;
	uint32_t qpn[3];	/* server: main, small-buffer; client: main, aux, big */
	uint32_t mtu;
	uint32_t qkey;
	uint8_t gid[16];
};

enum { OP_RECV = 1, OP_REPLY, OP_PEEK, OP_BYE };

struct cmd {
	uint32_t magic;
	uint32_t op;
	uint32_t qsel;		/* OP_RECV, OP_PEEK: server QP 0 (main) or 1 (small) */
	uint32_t n;		/* OP_RECV: receives to post and wait for */
	uint32_t buflen;	/* OP_RECV: each receive's length */
	uint32_t wait_ms;	/* OP_RECV: for all of them, at most (scaled) */
	uint32_t len;		/* OP_REPLY: payload bytes */
	uint32_t id;		/* OP_REPLY: message id (pattern, imm) */
};

/* one receive completion (or, for OP_REPLY, the result) */
struct rep {
	uint32_t magic;
	uint32_t got;		/* OP_REPLY: the AH was created */
	uint32_t status;
	uint32_t opcode;
	uint32_t byte_len;
	uint32_t wc_flags;
	uint32_t imm;		/* host order */
	uint32_t src_qp;
	uint32_t qp_num;
	uint32_t pkey_index;
	uint32_t err;
	uint32_t posted;	/* the receive's length */
};

/* a connected socket: the server takes one connection */
static int sock_open(void)
{
	return sock_pair(o.server, o.peer, o.port, t_end);
}

static void exchange(int fd, struct uqp *q, int nq, struct info *peer)
{
	struct info me = { .magic = MAGIC, .mtu = d.mtu, .qkey = o.qkey };
	int i;

	for (i = 0; i < nq; i++)
		me.qpn[i] = q[i].qp->qp_num;
	memcpy(me.gid, d.gid.raw, 16);
	put(fd, &me, sizeof(me));
	get(fd, peer, sizeof(*peer));
	if (peer->magic != MAGIC)
		bail("bad hello from the peer");
}

static struct ibv_ah *make_ah(const uint8_t *gid)
{
	struct ibv_ah_attr a = { .is_global = 1, .port_num = 1 };

	memcpy(a.grh.dgid.raw, gid, 16);
	a.grh.sgid_index = (uint8_t)o.gid_idx;
	a.grh.hop_limit = 64;
	return ibv_create_ah(d.pd, &a);
}

/* a SEND WR from slot @s: @len bytes of message @id */
struct msg {
	uint32_t id, len;
	bool imm, inl, signaled;
	int nsge;
	uint32_t qkey;
};

static void build_send(struct ibv_send_wr *wr, struct ibv_sge *sge,
		       const struct msg *m, unsigned int s, struct ibv_ah *ah,
		       uint32_t dqpn)
{
	uint32_t half = m->len / 2;

	fill(slot(s), m->id, m->len);
	memset(wr, 0, sizeof(*wr));
	sge[0] = (struct ibv_sge){ .addr = (uintptr_t)slot(s),
				   .length = m->len, .lkey = d.mr->lkey };
	if (m->nsge == 2) {
		sge[0].length = half;
		sge[1] = (struct ibv_sge){ .addr = (uintptr_t)slot(s) + half,
					   .length = m->len - half,
					   .lkey = d.mr->lkey };
	}
	wr->wr_id = 0x1000 + m->id;
	wr->sg_list = sge;
	wr->num_sge = m->len || m->nsge == 2 ? m->nsge : 0;
	wr->opcode = m->imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
	wr->imm_data = htobe32(imm_of(m->id));
	wr->send_flags = (m->signaled ? IBV_SEND_SIGNALED : 0) |
			 (m->inl ? IBV_SEND_INLINE : 0);
	wr->wr.ud.ah = ah;
	wr->wr.ud.remote_qpn = dqpn;
	wr->wr.ud.remote_qkey = m->qkey;
}

/* --- the server ---------------------------------------------------------------- */
static bool slot_busy[NSLOT];
static uint32_t slot_qp[NSLOT];

static int free_slot(void)
{
	int i;

	for (i = 0; i < NSLOT; i++)
		if (!slot_busy[i])
			return i;
	bail("server side: out of receive slots");
}

static void rep_of_wc(struct rep *r, const struct ibv_wc *wc, uint32_t posted)
{
	memset(r, 0, sizeof(*r));
	r->magic = MAGIC;
	r->got = 1;
	r->status = wc->status;
	r->opcode = wc->opcode;
	r->byte_len = wc->byte_len;
	r->wc_flags = wc->wc_flags;
	r->imm = be32toh(wc->imm_data);
	r->src_qp = wc->src_qp;
	r->qp_num = wc->qp_num;
	r->pkey_index = wc->pkey_index;
	r->posted = posted;
}

static void serve(void)
{
	struct uqp q[2];
	struct info peer;
	struct ibv_wc last_wc, wc[QDEPTH];
	uint8_t last_grh[GRH_LEN];
	uint32_t posted[NSLOT];
	bool have_last = false;
	struct cmd c;
	struct rep r;
	int fd, i, got;

	open_dev();
	create_uqp(&q[0]);
	create_uqp(&q[1]);
	uqp_up(&q[0]);
	uqp_up(&q[1]);
	fd = sock_open();
	exchange(fd, q, 2, &peer);
	printf("# server %s gid %d qpn %#x,%#x mtu %u\n", o.dev, o.gid_idx,
	       q[0].qp->qp_num, q[1].qp->qp_num, d.mtu);
	fflush(stdout);
	for (;;) {
		get(fd, &c, sizeof(c));
		if (c.magic != MAGIC)
			bail("server side: bad command");
		if (c.op == OP_BYE)
			break;
		if (c.op == OP_RECV) {
			struct uqp *qq = &q[c.qsel & 1];

			if (c.n > QDEPTH || c.buflen > SLOT)
				bail("server side: bad OP_RECV");
			memset(&r, 0, sizeof(r));
			r.magic = MAGIC;
			for (i = 0; i < (int)c.n; i++) {
				int s = free_slot();

				if (post_recv(qq->qp, s, c.buflen))
					r.err = errno ? errno : EIO;
				slot_busy[s] = true;
				slot_qp[s] = c.qsel & 1;
				posted[s] = c.buflen;
			}
			put(fd, &r, sizeof(r));	/* ready */
			got = poll_n(qq->rcq, wc, (int)c.n, c.wait_ms / 1000.0);
			put(fd, &got, sizeof(got));
			for (i = 0; i < got; i++) {
				unsigned int s = (unsigned int)wc[i].wr_id;

				if (s >= NSLOT)
					bail("server side: bad wr_id %#llx",
					     (unsigned long long)wc[i].wr_id);
				rep_of_wc(&r, &wc[i], posted[s]);
				put(fd, &r, sizeof(r));
				put(fd, slot(s), SLOT);
				slot_busy[s] = false;
				if (!c.qsel && wc[i].status == IBV_WC_SUCCESS) {
					last_wc = wc[i];
					memcpy(last_grh, slot(s), GRH_LEN);
					have_last = true;
				}
			}
		} else if (c.op == OP_PEEK) {
			/* the buffers of receives still posted on QP qsel */
			for (got = 0, i = 0; i < NSLOT; i++)
				got += slot_busy[i] && slot_qp[i] == c.qsel;
			put(fd, &got, sizeof(got));
			for (i = 0; i < NSLOT; i++) {
				if (!slot_busy[i] || slot_qp[i] != c.qsel)
					continue;
				memset(&r, 0, sizeof(r));
				r.magic = MAGIC;
				r.posted = posted[i];
				put(fd, &r, sizeof(r));
				put(fd, slot(i), SLOT);
			}
		} else if (c.op == OP_REPLY) {
			struct ibv_send_wr wr, *bad;
			struct ibv_sge sge[2];
			struct ibv_ah *ah = NULL;
			struct msg m = { .id = c.id, .len = c.len, .imm = true,
					 .signaled = true, .nsge = 1,
					 .qkey = o.qkey };
			int s = free_slot();

			memset(&r, 0, sizeof(r));
			r.magic = MAGIC;
			errno = 0;
			if (have_last)
				ah = ibv_create_ah_from_wc(d.pd, &last_wc,
							   (struct ibv_grh *)last_grh, 1);
			r.err = errno;
			if (ah && c.len <= SLOT) {
				r.got = 1;
				build_send(&wr, sge, &m, s, ah, last_wc.src_qp);
				if (ibv_post_send(q[0].qp, &wr, &bad)) {
					r.err = errno;
					r.status = IBV_WC_GENERAL_ERR;
				} else if (poll_n(q[0].scq, wc, 1, WAIT_SECS) == 1) {
					r.status = wc[0].status;
					r.opcode = wc[0].opcode;
				} else {
					r.status = IBV_WC_GENERAL_ERR;
					r.err = ETIMEDOUT;
				}
			}
			put(fd, &r, sizeof(r));
			if (ah)
				ibv_destroy_ah(ah);
		} else {
			bail("server side: bad op %u", c.op);
		}
	}
	close(fd);
}

/* --- the client ---------------------------------------------------------------- */
struct cl {
	int fd;
	struct uqp q[3];	/* main, aux (Q_Key changes), big (oversize) */
	struct info peer;
	struct ibv_ah *ah;
	uint32_t mtu;		/* path MTU */
	unsigned int next_slot;
	uint32_t next_id;
	int qkey_drops;
};

static struct cl c;

static bool gid_v4(const uint8_t *g)
{
	return !memcmp(g, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);
}

static const char *gid_str(const uint8_t *g, char *b, size_t n)
{
	if (gid_v4(g))
		return inet_ntop(AF_INET, g + 12, b, (socklen_t)n);
	return inet_ntop(AF_INET6, g, b, (socklen_t)n);
}

static unsigned int cl_slot(void)
{
	/* slots 0..NSLOT/2-1 send, the rest receive */
	c.next_slot = (c.next_slot + 1) % (NSLOT / 2);
	return c.next_slot;
}

static uint16_t csum16(const uint8_t *p, int n)
{
	uint32_t s = 0;
	int i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/*
 * The GRH slot of a message of @len bytes (@imm: with immediate data)
 * from GID @src to GID @dst; false with diagnostics if it is wrong.
 */
static bool grh_ok(const uint8_t *g, const uint8_t *src, const uint8_t *dst,
		   uint32_t len, bool imm)
{
	/* UDP, BTH, DETH, [ImmDt], payload, pad, ICRC */
	uint32_t l4 = 8 + 12 + 8 + (imm ? 4 : 0) + len + (4 - len % 4) % 4 + 4;
	const uint8_t *ip = g + 20;
	char b1[64], b2[64], b3[64], b4[64];
	bool good = true;

	if (gid_v4(src) && gid_v4(dst)) {
		EXPECT(ip[0] == 0x45, "  GRH: IPv4 version/IHL %#x, not 0x45", ip[0]);
		EXPECT(o.no_csum || csum16(ip, 20) == 0xffff,
		       "  GRH: bad IPv4 header checksum %#x", ip[10] << 8 | ip[11]);
		EXPECT(ip[9] == 17, "  GRH: IPv4 protocol %u, not 17", ip[9]);
		EXPECT((uint32_t)(ip[2] << 8 | ip[3]) == 20 + l4,
		       "  GRH: IPv4 total length %u, not %u", ip[2] << 8 | ip[3],
		       20 + l4);
		EXPECT(!memcmp(ip + 12, src + 12, 4) && !memcmp(ip + 16, dst + 12, 4),
		       "  GRH: IPv4 %s -> %s, not %s -> %s",
		       inet_ntop(AF_INET, ip + 12, b1, sizeof(b1)),
		       inet_ntop(AF_INET, ip + 16, b2, sizeof(b2)),
		       gid_str(src, b3, sizeof(b3)), gid_str(dst, b4, sizeof(b4)));
		return good;
	}
	EXPECT(g[0] >> 4 == 6, "  GRH: IPv6 version %u, not 6", g[0] >> 4);
	EXPECT((uint32_t)(g[4] << 8 | g[5]) == l4,
	       "  GRH: IPv6 payload length %u, not %u", g[4] << 8 | g[5], l4);
	EXPECT(g[6] == 17, "  GRH: IPv6 next header %u, not 17", g[6]);
	EXPECT(!memcmp(g + 8, src, 16) && !memcmp(g + 24, dst, 16),
	       "  GRH: IPv6 %s -> %s, not %s -> %s",
	       inet_ntop(AF_INET6, g + 8, b1, sizeof(b1)),
	       inet_ntop(AF_INET6, g + 24, b2, sizeof(b2)),
	       gid_str(src, b3, sizeof(b3)), gid_str(dst, b4, sizeof(b4)));
	return good;
}

/*
 * A receive completion (@r, the receive buffer @buf of SLOT bytes) of
 * message @m, sent by QPN @src_qp at GID @sgid to QPN @qpn at GID @dgid.
 */
static bool rx_ok(const struct rep *r, const uint8_t *buf, const struct msg *m,
		  uint32_t src_qp, uint32_t qpn, const uint8_t *sgid,
		  const uint8_t *dgid)
{
	uint32_t want_flags = IBV_WC_GRH | (m->imm ? IBV_WC_WITH_IMM : 0);
	uint32_t mask = IBV_WC_GRH | IBV_WC_WITH_IMM | IBV_WC_WITH_INV;
	bool good = true;
	uint32_t i, bad = 0;

	if (r->status != IBV_WC_SUCCESS) {
		diag("  receive status %s (%u)",
		     ibv_wc_status_str((enum ibv_wc_status)r->status), r->status);
		return false;
	}
	EXPECT(r->opcode == IBV_WC_RECV, "  opcode %u, not IBV_WC_RECV", r->opcode);
	EXPECT(r->byte_len == GRH_LEN + m->len, "  byte_len %u, not %u",
	       r->byte_len, GRH_LEN + m->len);
	EXPECT((r->wc_flags & mask) == want_flags, "  wc_flags %#x, want GRH%s",
	       r->wc_flags, m->imm ? " | WITH_IMM" : "");
	EXPECT(!m->imm || r->imm == imm_of(m->id), "  imm_data %#x, not %#x",
	       r->imm, imm_of(m->id));
	EXPECT(r->src_qp == src_qp, "  src_qp %#x, not %#x", r->src_qp, src_qp);
	EXPECT(r->qp_num == qpn, "  qp_num %#x, not %#x", r->qp_num, qpn);
	EXPECT(!r->pkey_index, "  pkey_index %u, not 0", r->pkey_index);
	for (i = 0; i < m->len; i++) {
		if (buf[GRH_LEN + i] != pat(m->id, i) && !bad++)
			diag("  payload byte %u: %#x, not %#x (message %u)", i,
			     buf[GRH_LEN + i], pat(m->id, i), m->id);
	}
	for (i = GRH_LEN + m->len; i < SLOT; i++) {
		if (buf[i] != POISON && !bad++)
			diag("  byte %u past the message written (%#x)", i, buf[i]);
	}
	EXPECT(!bad, "  %u bad bytes", bad);
	if (!grh_ok(buf, sgid, dgid, m->len, m->imm))
		good = false;
	return good;
}

static void cmd(uint32_t op, uint32_t qsel, uint32_t n, uint32_t buflen,
		double secs, uint32_t len, uint32_t id)
{
	struct cmd k = { .magic = MAGIC, .op = op, .qsel = qsel, .n = n,
			 .buflen = buflen,
			 .wait_ms = (uint32_t)(secs * 1000), .len = len,
			 .id = id };
	struct rep r;

	put(c.fd, &k, sizeof(k));
	if (op == OP_RECV) {
		get(c.fd, &r, sizeof(r));
		if (r.err)
			bail("server side: ibv_post_recv: %s", strerror((int)r.err));
	}
}

/* the server's receive reports after an OP_RECV: how many */
static int collect(struct rep *r, uint8_t (*buf)[SLOT], int max)
{
	int n, i;
	static uint8_t sink[SLOT];
	struct rep dummy;

	get(c.fd, &n, sizeof(n));
	for (i = 0; i < n; i++) {
		get(c.fd, i < max ? &r[i] : &dummy, sizeof(*r));
		get(c.fd, i < max ? buf[i] : sink, SLOT);
	}
	return n;
}

static const char *op_name(const struct msg *m)
{
	return m->imm ? "SEND_WITH_IMM" : "SEND";
}

/* post the WR list @wr on client QP @qi; false with a diagnostic */
static bool post(int qi, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	int err = ibv_post_send(c.q[qi].qp, wr, &bad);

	if (err)
		diag("  ibv_post_send: %s", strerror(err));
	return !err;
}

/* the send CQEs of @n signaled WRs, @m[i]'s wr_ids in order */
static bool send_cqes_ok(int qi, const struct msg *m, int n)
{
	struct ibv_wc wc[CHAIN];
	int got = poll_n(c.q[qi].scq, wc, n, WAIT_SECS), i;
	bool good = got == n;

	if (got != n)
		diag("  %d of %d send CQEs", got, n);
	for (i = 0; i < got; i++) {
		if (wc[i].status != IBV_WC_SUCCESS ||
		    wc[i].opcode != IBV_WC_SEND ||
		    wc[i].wr_id != 0x1000 + m[i].id ||
		    wc[i].qp_num != c.q[qi].qp->qp_num) {
			diag("  send CQE %d: status %s opcode %d wr_id %#llx qp_num %#x",
			     i, ibv_wc_status_str(wc[i].status), wc[i].opcode,
			     (unsigned long long)wc[i].wr_id, wc[i].qp_num);
			good = false;
		}
	}
	return good;
}

/*
 * @n messages @m from client QP @qi to the server's main QP, posted as
 * one list: each must arrive, in order, and check out.
 */
static bool send_recv(int qi, struct msg *m, int n)
{
	static uint8_t buf[CHAIN][SLOT];
	struct ibv_send_wr wr[CHAIN];
	struct ibv_sge sge[CHAIN][2];
	struct rep r[CHAIN];
	int i, got, nsig = 0;
	struct msg sig[CHAIN];
	struct ibv_wc extra;
	bool good = true;

	errno = 0;
	cmd(OP_RECV, 0, (uint32_t)n, GRH_LEN + c.mtu, WAIT_SECS, 0, 0);
	for (i = 0; i < n; i++) {
		build_send(&wr[i], sge[i], &m[i], cl_slot(), c.ah,
			   c.peer.qpn[0]);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
		if (m[i].signaled)
			sig[nsig++] = m[i];
	}
	if (!post(qi, wr))
		good = false;
	else if (!send_cqes_ok(qi, sig, nsig))
		good = false;
	got = collect(r, buf, CHAIN);
	EXPECT(got == n, "  %d of %d messages arrived", got, n);
	for (i = 0; i < got && i < n; i++) {
		if (!rx_ok(&r[i], buf[i], &m[i], c.q[qi].qp->qp_num,
			   c.peer.qpn[0], d.gid.raw, c.peer.gid)) {
			diag("  (message %d of %d: %s %u B)", i + 1, n,
			     op_name(&m[i]), m[i].len);
			good = false;
		}
	}
	/* nothing unsignaled may complete: the CQ is empty now */
	EXPECT(ibv_poll_cq(c.q[qi].scq, 1, &extra) == 0, "  an extra send CQE");
	return good;
}

static struct msg mk(uint32_t len, bool imm)
{
	struct msg m = { .id = ++c.next_id, .len = len, .imm = imm,
			 .signaled = true, .nsge = 1, .qkey = o.qkey };

	return m;
}

static void t_sizes(void)
{
	uint32_t base[] = { 0, 1, 100, 1024 }, sizes[6];
	unsigned int i, k, n = 0;

	for (i = 0; i < ARRAY_SIZE(base); i++)
		if (base[i] < c.mtu - 1)
			sizes[n++] = base[i];
	sizes[n++] = c.mtu - 1;
	sizes[n++] = c.mtu;
	for (i = 0; i < n; i++) {
		for (k = 0; k < 2; k++) {
			struct msg m = mk(sizes[i], k);

			ok(send_recv(0, &m, 1),
			   "%s %u B: send CQE; receive CQE (RECV, byte_len 40 + %u, GRH%s, src_qp, qp_num, pkey_index 0), GRH slot, data",
			   op_name(&m), m.len, m.len, m.imm ? ", imm_data" : "");
		}
	}
}

static void t_shapes(void)
{
	struct msg m[CHAIN];
	int i;

	m[0] = mk(64, false);
	m[0].inl = true;
	if (c.q[0].max_inline >= 64)
		ok(send_recv(0, m, 1), "inline SEND 64 B arrives intact");
	else
		ktap_skip("no inline data on UD QPs", "inline SEND 64 B arrives intact");

	m[0] = mk(c.mtu, true);
	m[0].nsge = 2;
	ok(send_recv(0, m, 1), "SEND_WITH_IMM %u B gathered from 2 SGEs arrives intact",
	   c.mtu);

	for (i = 0; i < CHAIN; i++)
		m[i] = mk((uint32_t)(i * 997) % (c.mtu + 1), i & 1);
	ok(send_recv(0, m, CHAIN),
	   "%d SENDs in one post_send list: %d send CQEs and %d receives, in order",
	   CHAIN, CHAIN, CHAIN);

	m[0] = mk(200, false);
	m[0].signaled = false;
	m[1] = mk(300, false);
	ok(send_recv(0, m, 2),
	   "an unsignaled SEND then a signaled one: both arrive, one send CQE");
}

/* the server replies through an AH made from its last receive completion */
static void t_ah_from_wc(void)
{
	static uint8_t one[1][SLOT];
	struct msg m = mk(100, false), rm;
	unsigned int s = NSLOT - 1;
	struct ibv_wc wc;
	struct rep r, rr;
	bool good;

	if (!ok(send_recv(0, &m, 1), "a SEND 100 B for the server to answer"))
		return;
	rm = mk(333, true);
	if (post_recv(c.q[0].qp, s, GRH_LEN + c.mtu))
		bail("ibv_post_recv: %s", strerror(errno));
	cmd(OP_REPLY, 0, 0, 0, 0, rm.len, rm.id);
	get(c.fd, &r, sizeof(r));
	errno = (int)r.err;
	ok(r.got, "server: ibv_create_ah_from_wc() on the received completion");
	if (!r.got)
		return;
	ok(r.status == IBV_WC_SUCCESS && r.opcode == IBV_WC_SEND,
	   "server: the reply through that AH completes (%s, opcode %u)",
	   ibv_wc_status_str((enum ibv_wc_status)r.status), r.opcode);
	good = poll_n(c.q[0].rcq, &wc, 1, WAIT_SECS) == 1;
	if (!good) {
		diag("  no reply arrived");
	} else {
		rep_of_wc(&rr, &wc, GRH_LEN + c.mtu);
		memcpy(one[0], slot(s), SLOT);
		good = wc.wr_id == s &&
		       rx_ok(&rr, one[0], &rm, c.peer.qpn[0], c.q[0].qp->qp_num,
			     c.peer.gid, d.gid.raw);
	}
	ok(good, "the reply SEND_WITH_IMM %u B arrives: receive CQE, GRH slot (peer -> us), data",
	   rm.len);
}

/*
 * @n messages @m from client QP @qi that the server's QP @qsel must not
 * receive within QUIET_SECS; their send CQEs must say @st (-1: do not
 * look). Leaves receives posted at the server.
 */
static bool none_arrive(int qi, struct msg *m, int n, int qsel, int st,
			enum ibv_wc_status *got_st)
{
	static uint8_t buf[CHAIN][SLOT];
	struct ibv_send_wr wr[CHAIN];
	struct ibv_sge sge[CHAIN][2];
	struct ibv_wc wc[CHAIN];
	struct rep r[CHAIN];
	bool good = true;
	int i, got;

	errno = 0;
	cmd(OP_RECV, (uint32_t)qsel, (uint32_t)n, GRH_LEN + c.mtu, QUIET_SECS, 0, 0);
	for (i = 0; i < n; i++) {
		build_send(&wr[i], sge[i], &m[i], cl_slot(), c.ah,
			   c.peer.qpn[qsel]);
		wr[i].next = i + 1 < n ? &wr[i + 1] : NULL;
	}
	if (!post(qi, wr)) {
		good = false;
		memset(wc, 0, sizeof(wc));
	} else {
		got = poll_n(c.q[qi].scq, wc, n, WAIT_SECS);
		EXPECT(got == n, "  %d of %d send CQEs", got, n);
		for (i = 0; i < got; i++)
			EXPECT(st < 0 || wc[i].status == (enum ibv_wc_status)st,
			       "  send CQE %d: %s, not %s", i,
			       ibv_wc_status_str(wc[i].status),
			       ibv_wc_status_str((enum ibv_wc_status)st));
		if (got_st)
			*got_st = got ? wc[0].status : IBV_WC_GENERAL_ERR;
	}
	got = collect(r, buf, CHAIN);
	for (i = 0; i < got && i < CHAIN; i++)
		diag("  unexpected receive CQE: %s, byte_len %u",
		     ibv_wc_status_str((enum ibv_wc_status)r[i].status),
		     r[i].byte_len);
	if (got)
		good = false;
	return good;
}

static void t_qkey(void)
{
	struct msg m[QKEY_BAD_N];
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;
	uint32_t k2 = o.qkey ^ 0x00ff00ffu;
	int i;

	for (i = 0; i < QKEY_BAD_N; i++) {
		m[i] = mk(64, i & 1);
		m[i].qkey = o.qkey ^ (1u << (i * 9));
	}
	ok(none_arrive(0, m, QKEY_BAD_N, 0, IBV_WC_SUCCESS, NULL),
	   "%d SENDs with a wrong remote_qkey: send CQEs SUCCESS, no receive within %g s",
	   QKEY_BAD_N, tmo(QUIET_SECS));
	c.qkey_drops += QKEY_BAD_N;
	m[0] = mk(77, false);
	ok(send_recv(0, m, 1), "after the Q_Key drops the right Q_Key still arrives");

	if (!ibv_query_qp(c.q[1].qp, &qa, IBV_QP_QKEY | IBV_QP_STATE, &ia))
		ok(qa.qkey == o.qkey && qa.qp_state == IBV_QPS_RTS,
		   "query_qp: Q_Key %#x, state RTS (got %#x, %d)", o.qkey,
		   qa.qkey, qa.qp_state);
	else
		ok(false, "query_qp");

	/*
	 * Controlled Q_Key (IBTA 10.2.5, C10-15: a WR Q_Key with the
	 * high-order bit set means the QP context's Q_Key). rdma_rxe (6.1)
	 * puts the WR's value on the wire as is, so these run only with -K.
	 */
	if (!o.ctrl_qkey) {
		ktap_skip("controlled Q_Key not checked (-K; rxe has none)",
			  "remote_qkey with bit 31 set sends the QP's Q_Key");
		ktap_skip("controlled Q_Key not checked (-K; rxe has none)",
			  "... and after the QP's Q_Key changed, the new one (dropped)");
		return;
	}
	m[0] = mk(55, true);
	m[0].qkey = 0x80000000u | (o.qkey ^ 0x5a5a);
	ok(send_recv(1, m, 1),
	   "remote_qkey %#x (bit 31 set) sends the QP's Q_Key %#x: arrives",
	   m[0].qkey, o.qkey);
	if (!ok(!set_qkey(c.q[1].qp, k2), "modify_qp RTS->RTS Q_Key %#x", k2))
		return;
	m[0] = mk(56, false);
	m[0].qkey = 0x80000000u | o.qkey;
	ok(none_arrive(1, m, 1, 0, IBV_WC_SUCCESS, NULL),
	   "remote_qkey %#x after the QP's Q_Key became %#x: sends %#x, dropped",
	   m[0].qkey, k2, k2);
	c.qkey_drops++;
	m[0] = mk(57, false);
	ok(send_recv(0, m, 1), "the main QP still gets through after that");
}

/* a message larger than the posted receive buffer, to the small-buffer QP */
static void t_short_rbuf(void)
{
	static uint8_t buf[4][SLOT];
	uint32_t len = 100, posted = GRH_LEN + len / 2, j;
	struct ibv_send_wr wr;
	struct ibv_sge sge[2];
	struct msg m = mk(len, false);
	struct rep r[4];
	bool success = false, past = true;
	int got, n, i;

	cmd(OP_RECV, 1, 1, posted, o.short_err ? WAIT_SECS : QUIET_SECS, 0, 0);
	build_send(&wr, sge, &m, cl_slot(), c.ah, c.peer.qpn[1]);
	if (!post(0, &wr) || !send_cqes_ok(0, &m, 1))
		ok(false, "SEND %u B to a %u-byte receive buffer: send CQE", len,
		   posted);
	got = collect(r, buf, 2);
	for (i = 0; i < got && i < 2; i++) {
		diag("  receive CQE: %s, byte_len %u",
		     ibv_wc_status_str((enum ibv_wc_status)r[i].status),
		     r[i].byte_len);
		success |= r[i].status == IBV_WC_SUCCESS;
	}
	/* and the receive buffers still posted there (if it was dropped) */
	cmd(OP_PEEK, 1, 0, 0, 0, 0, 0);
	n = got < 2 ? got : 2;
	n += collect(r + n, buf + n, 4 - n);
	for (i = 0; i < n && i < 4; i++) {
		for (j = posted; j < SLOT; j++)
			past &= buf[i][j] == POISON;
	}
	if (o.short_err) {
		ok(got == 1 && r[0].status == IBV_WC_LOC_LEN_ERR,
		   "SEND %u B to a %u-byte receive buffer: receive CQE IBV_WC_LOC_LEN_ERR",
		   len, posted);
	} else {
		/* rxe: IBV_WC_LOC_QP_OP_ERR (and its QP in ERROR) */
		ok(got <= 1 && !success,
		   "SEND %u B to a %u-byte receive buffer: no successful receive",
		   len, posted);
		ktap_skip("rxe completes it IBV_WC_LOC_QP_OP_ERR (-L)",
			  "... receive CQE IBV_WC_LOC_LEN_ERR");
	}
	ok(n >= 1 && past, "... nothing written past the %u-byte receive buffer (%d buffers)",
	   posted, n);
}

/* a SEND of path MTU + 1 bytes, from the big QP (which may end in error) */
static void t_oversize(void)
{
	struct msg m = mk(c.mtu + 1, false);
	enum ibv_wc_status st = IBV_WC_GENERAL_ERR;

	ok(none_arrive(2, &m, 1, 0, -1, &st),
	   "SEND %u B (path MTU + 1): a send CQE, nothing delivered", m.len);
	if (o.big_err) {
		ok(st == IBV_WC_LOC_LEN_ERR,
		   "SEND %u B (path MTU + 1): send CQE IBV_WC_LOC_LEN_ERR (got %s)",
		   m.len, ibv_wc_status_str(st));
	} else {
		/* rxe: SUCCESS without a packet (C10-93.1.1) */
		ok(st == IBV_WC_SUCCESS || st == IBV_WC_LOC_LEN_ERR,
		   "SEND %u B (path MTU + 1): send CQE SUCCESS (C10-93.1.1) or LOC_LEN_ERR (got %s)",
		   m.len, ibv_wc_status_str(st));
		ktap_skip("rxe completes it successfully (-O)",
			  "SEND %u B (path MTU + 1): send CQE IBV_WC_LOC_LEN_ERR",
			  m.len);
	}
}

/* the state rules of a UD QP, on its own QP (refused WRs stay behind) */
static void t_states(void)
{
	struct ibv_send_wr wr, *bad;
	struct ibv_sge sge[2];
	struct msg m = mk(16, false);
	struct ibv_ah *ah = make_ah(d.gid.raw);
	struct ibv_wc wc;
	struct uqp q;
	int err;

	if (!ah)
		bail("ibv_create_ah (own GID): %s", strerror(errno));
	create_uqp(&q);
	build_send(&wr, sge, &m, cl_slot(), ah, q.qp->qp_num);
	err = ibv_post_send(q.qp, &wr, &bad);
	ok(err == EINVAL, "post_send in RESET fails with EINVAL (%s)",
	   err ? strerror(err) : "succeeded");
	err = to_init(q.qp, o.qkey, false);
	ok(err == EINVAL, "RESET->INIT without IBV_QP_QKEY fails with EINVAL (%s)",
	   err ? strerror(err) : "succeeded");
	err = to_init(q.qp, o.qkey, true);
	ok(!err, "RESET->INIT with STATE | PKEY_INDEX | PORT | QKEY");
	err = ibv_post_send(q.qp, &wr, &bad);
	ok(err == EINVAL, "post_send in INIT fails with EINVAL (%s)",
	   err ? strerror(err) : "succeeded");
	err = to_rtr(q.qp);
	ok(!err, "INIT->RTR with IBV_QP_STATE alone");
	err = ibv_post_send(q.qp, &wr, &bad);
	ok(err == EINVAL, "post_send in RTR fails with EINVAL (%s)",
	   err ? strerror(err) : "succeeded");
	ok(ibv_poll_cq(q.scq, 1, &wc) == 0, "no completion for the refused WRs");
	err = to_rts(q.qp, false);
	ok(err == EINVAL, "RTR->RTS without IBV_QP_SQ_PSN fails with EINVAL (%s)",
	   err ? strerror(err) : "succeeded");
	err = to_rts(q.qp, true);
	ok(!err, "RTR->RTS with IBV_QP_STATE | IBV_QP_SQ_PSN");
	ok(!ibv_destroy_qp(q.qp), "destroy the QP");
	ibv_destroy_cq(q.scq);
	ibv_destroy_cq(q.rcq);
	ibv_destroy_ah(ah);
}

static int run_client(void)
{
	char g1[64], g2[64];
	int i;

	printf("TAP version 13\n");
	open_dev();
	diag("ud_verify, client side: %s gid %d (%s)%s%s%s", o.dev, o.gid_idx,
	     gid_str(d.gid.raw, g1, sizeof(g1)), o.ctrl_qkey ? " -K" : "",
	     o.big_err ? " -O" : "", o.short_err ? " -L" : "");
	t_states();
	for (i = 0; i < 3; i++) {
		create_uqp(&c.q[i]);
		uqp_up(&c.q[i]);
	}
	c.fd = sock_open();
	exchange(c.fd, c.q, 3, &c.peer);
	c.mtu = c.peer.mtu < d.mtu ? c.peer.mtu : d.mtu;
	if (c.peer.qkey != o.qkey)
		bail("the server's Q_Key %#x is not ours (%#x): use the same -q",
		     c.peer.qkey, o.qkey);
	diag("qpn %#x -> server %s qpn %#x (small-buffer qpn %#x), path MTU %u",
	     c.q[0].qp->qp_num, gid_str(c.peer.gid, g2, sizeof(g2)),
	     c.peer.qpn[0], c.peer.qpn[1], c.mtu);
	c.ah = make_ah(c.peer.gid);
	if (!ok(c.ah, "ibv_create_ah to the server's GID")) {
		printf("1..%d\n", 1);
		return 1;
	}
	t_sizes();
	t_shapes();
	t_ah_from_wc();
	t_qkey();
	t_short_rbuf();
	t_oversize();
	cmd(OP_BYE, 0, 0, 0, 0, 0, 0);
	close(c.fd);
	printf("# qkey drops: %d\n", c.qkey_drops);
	return ktap_done();
}

/* --- main ------------------------------------------------------------------- */
static void usage(void)
{
	puts("ud_verify -s [options] [/PATH]    (server)\n"
	     "       ud_verify [options] HOST|/PATH    (client)\n"
	     "  -d DEV     RDMA device            -g IDX   GID index (default: IPv4 RoCE v2)\n"
	     "  -p PORT    TCP port (18516); a peer starting with / is a Unix socket path\n"
	     "  -q QKEY    both sides' Q_Key, bit 31 clear (0x1ee7c0de)\n"
	     "  -T SECS    give up connecting after (120, times SOFTRC_TIME_SCALE)\n"
	     "  client, checks rdma_rxe fails (IBTA behaviour softrc implements):\n"
	     "  -K         controlled Q_Key: remote_qkey with bit 31 set sends the QP's\n"
	     "  -O         a SEND larger than the path MTU completes IBV_WC_LOC_LEN_ERR\n"
	     "  -L         a message larger than the receive buffer completes\n"
	     "             IBV_WC_LOC_LEN_ERR (rxe: IBV_WC_LOC_QP_OP_ERR)\n"
	     "  -C         do not check the GRH's IPv4 header checksum (rxe leaves it\n"
	     "             unset on a device's loopback)");
	exit(2);
}

int main(int argc, char **argv)
{
	int ch;

	while ((ch = getopt(argc, argv, "sd:g:p:q:T:KOLCh")) != -1) {
		switch (ch) {
		case 's':
			o.server = true;
			break;
		case 'd':
			o.dev = optarg;
			break;
		case 'g':
			o.gid_idx = atoi(optarg);
			break;
		case 'p':
			o.port = atoi(optarg);
			break;
		case 'q':
			o.qkey = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'T':
			o.deadline = atoi(optarg);
			break;
		case 'K':
			o.ctrl_qkey = true;
			break;
		case 'O':
			o.big_err = true;
			break;
		case 'L':
			o.short_err = true;
			break;
		case 'C':
			o.no_csum = true;
			break;
		default:
			usage();
		}
	}
	if (o.qkey & 0x80000000u)
		usage();
	t_end = now() + tmo(o.deadline);
	if (optind < argc)
		o.peer = argv[optind];
	else if (!o.server)
		usage();
	if (o.server) {
		serve();
		return 0;
	}
	return run_client();
}

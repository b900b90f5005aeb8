// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cm_verify - N concurrent RC connections over rdma_cm, each carrying
 * verified data, then all torn down. Runs in user space as an ordinary
 * librdmacm consumer (the VM suites, tools/bench/cmscale.sh, the soak's
 * connect cycles in selftests/vm/soak/cm_soak.sh).
 *
 * The server (-s) binds ADDR:PORT and listens; the client resolves,
 * and connects, all N connections at once on one event channel (no
 * connection waits for another). The client's connect private data names
 * the connection (its index), N, the message count and size, the seed and
 * any corruption asked for (-X); the server's accept private data gives
 * the address and rkey of that connection's server buffer. On connection
 * i, with every byte a function of (seed, i, what, message):
 *   - the client RDMA WRITEs SIZE bytes into the server's buffer, then
 *     SENDs MSGS messages of SIZE bytes, then RDMA READs SIZE bytes of a
 *     pattern the server wrote before accepting;
 *   - the server checks every received message byte by byte as it
 *     arrives, and after the last one the WRITE's bytes (RC responders
 *     execute requests in order, so the WRITE landed before the SENDs);
 *     only then does it SEND its own MSGS messages back;
 *   - the client checks those and the READ's bytes. Every work completion's
 *     status, opcode and length is checked on both sides.
 * A connection is verified on the client when all of that passed, which
 * implies the server had verified its side before (its SENDs come after).
 * Then the client disconnects every connection (rdma_disconnect), both
 * sides wait for every DISCONNECTED event, and destroy every QP, CQ, MR
 * and cm_id (one CQ and one MR a connection, as most applications do),
 * the PDs and the event channel.
 *
 * Events that end a connection: ADDR_ERROR, ROUTE_ERROR, UNREACHABLE,
 * REJECTED (with the CM's reason), CONNECT_ERROR, DEVICE_REMOVAL, and a
 * DISCONNECTED before the data was verified; each is reported with the
 * connection's index, at most MAX_REPORTS of them. Every wait has a
 * deadline (-T seconds, scaled by SOFTRC_TIME_SCALE, selftests/verbs/
 * timing.h): a connection still not verified or not disconnected by then
 * is reported as stuck, with the state it stopped in, and the program
 * goes on to destroy everything.
 *
 * -X send|write|read|recv flips one byte (the middle one) of connection
 * N/2's first client SEND, the client's WRITE source, the server's READ
 * source, or the server's first SEND: the check that must catch it fails
 * that connection (the server's for send and write, the client's for read
 * and recv), so a run that verifies nothing cannot pass the VM suite.
 *
 * Output: "# " diagnostic lines, then one summary line per process:
 *   cm_verify client: connected N/N, verified N, failed 0; ...ms/conn
 * and one line for scripts (times in us of CLOCK_REALTIME, so the two
 * processes' lines can be put side by side):
 *   CMV client n N connected C verified V failed F stuck S t_start T
 *     t_connected T t_verified T t_disc T t_disc_done T t_end T
 * The exit status is 0 when every connection was connected, verified and
 * disconnected and everything destroyed without error; 1 otherwise; 2
 * when the program could not start (bad option, no listener possible).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "stream.h"
#include "timing.h"

#define REQ_MAGIC	0x434d5651u	/* "CMVQ" */
#define REP_MAGIC	0x434d5650u	/* "CMVP" */
#define MAX_CONNS	65536
#define MAX_MSGS	64
#define MAX_SIZE	65536
#define MAX_REPORTS	20
#define MAX_CTX		8

/* what a pattern is for: part of every byte's seed */
enum what { P_CSEND = 1, P_SSEND, P_WRITE, P_READ };

/* -X: which byte to corrupt (client SEND, WRITE; server READ, SEND) */
enum { X_SEND = 1, X_WRITE = 2, X_READ = 4, X_RECV = 8 };

/* the client's connect private data (rdma_cm passes 56 bytes on RoCE) */
struct req_pdata {
	uint32_t magic, index, n, msgs, size, seed, xflags, pad;
};

/* the server's accept private data */
struct rep_pdata {
	uint32_t magic, index;
	uint64_t addr;		/* the connection's server buffer */
	uint32_t rkey, pad;
};

enum cstate {
	S_IDLE, S_ADDR, S_ROUTE, S_CONNECTING, S_DATA, S_VERIFIED,
	S_DISCONNECTING, S_DISCONNECTED, S_FAILED,
};

static const char *const state_name[] = {
	[S_IDLE] = "idle", [S_ADDR] = "resolving address",
	[S_ROUTE] = "resolving route", [S_CONNECTING] = "connecting",
	[S_DATA] = "moving data", [S_VERIFIED] = "verified",
	[S_DISCONNECTING] = "disconnecting",
	[S_DISCONNECTED] = "disconnected", [S_FAILED] = "failed",
};

struct conn {
	uint32_t index;
	enum cstate state;
	bool connected;		/* reached ESTABLISHED */
	bool verified;		/* its data passed every check */
	bool failed;		/* an error was reported */
	bool dead;		/* ...one that ends the connection */
	bool settled;		/* nothing more to wait for but DISCONNECTED */
	bool replied;		/* server: its SENDs posted */
	bool polled;		/* in the active list */
	bool disc_seen;		/* DISCONNECTED arrived */
	struct rdma_cm_id *id;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;		/* recv | send | wr | rd areas, SIZE each */
	uint32_t xflags;	/* server: the client's -X for this one */
	uint32_t recvs, sends, reads;
	uint64_t raddr;		/* client: the server's buffer */
	uint32_t rkey;
};

static struct {
	bool server;
	const char *addr, *src;
	int port;
	uint32_t n, msgs, size, seed, xflags;
	double tmo;
	bool verbose;
} opt = { .port = 7471, .n = 64, .msgs = 4, .size = 256, .seed = 1 };

static struct conn *conns;
static uint8_t *arena;
static size_t stride;
static struct rdma_event_channel *chan;
static struct rdma_cm_id *listen_id;
static struct { struct ibv_context *ctx; struct ibv_pd *pd; } pds[MAX_CTX];
static struct conn **act;	/* connections whose CQ is polled */
static uint32_t nact;
static uint32_t nreports, nfailed, nconnected, nverified, ndisc, nsettled;
/* the phases' ends, us of CLOCK_REALTIME (0: not yet) */
static int64_t t_first_req, t_last_est, t_last_ver, t_first_disc, t_last_disc;
static bool destroy_err;
static const char *role;

/* us of CLOCK_REALTIME, comparable across processes */
static int64_t wall_us(void)
{
	struct timeval tv;

	gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000000 + tv.tv_usec;
}

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t pat_key(uint32_t conn, enum what w, uint32_t msg)
{
	return mix(((uint64_t)opt.seed << 32 | conn) ^
		   mix((uint64_t)w << 32 | msg));
}

static uint8_t pat_byte(uint64_t key, size_t j)
{
	return (uint8_t)(mix(key + j / 8) >> (8 * (j % 8)));
}

static void pat_fill(uint8_t *p, size_t len, uint64_t key)
{
	size_t j;

	for (j = 0; j < len; j++)
		p[j] = pat_byte(key, j);
}

/* the first byte of @p that differs from the pattern, or -1 */
static long pat_check(const uint8_t *p, size_t len, uint64_t key)
{
	size_t j;

	for (j = 0; j < len; j++)
		if (p[j] != pat_byte(key, j))
			return (long)j;
	return -1;
}

static uint8_t *area_recv(struct conn *c, uint32_t m)
{
	return c->buf + (size_t)m * opt.size;
}

static uint8_t *area_send(struct conn *c, uint32_t m)
{
	return c->buf + (size_t)(opt.msgs + m) * opt.size;
}

static uint8_t *area_wr(struct conn *c)
{
	return c->buf + (size_t)2 * opt.msgs * opt.size;
}

static uint8_t *area_rd(struct conn *c)
{
	return area_wr(c) + opt.size;
}

static void settle(struct conn *c)
{
	if (!c->settled) {
		c->settled = true;
		nsettled++;
	}
}

/*
 * A failed connection, reported once. @dead: the error ends it (an event,
 * a failed verb, a bad completion); else (its data is wrong) the exchange
 * goes on, so the other side is not left waiting.
 */
static __attribute__((format(printf, 3, 4)))
void conn_error(struct conn *c, bool dead, const char *fmt, ...)
{
	va_list ap;

	if (dead && !c->dead) {
		c->dead = true;
		c->state = S_FAILED;
		settle(c);
	}
	if (c->failed)
		return;
	c->failed = true;
	nfailed++;
	if (nreports++ >= MAX_REPORTS)
		return;
	printf("# %s conn %u: ", role, c->index);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

#define conn_fail(c, ...)	conn_error(c, true, __VA_ARGS__)

/* a pattern check: false (and the connection failed) on a mismatch */
static bool check_area(struct conn *c, const uint8_t *p, enum what w,
		       uint32_t m, const char *what)
{
	uint64_t key = pat_key(c->index, w, m);
	long j = pat_check(p, opt.size, key);

	if (j < 0)
		return true;
	conn_error(c, false, "%s %u: byte %ld of %u is 0x%02x, expected 0x%02x",
		  what, m, j, opt.size, p[j], pat_byte(key, (size_t)j));
	return false;
}

static struct ibv_pd *pd_for(struct ibv_context *ctx)
{
	int i;

	for (i = 0; i < MAX_CTX && pds[i].ctx; i++)
		if (pds[i].ctx == ctx)
			return pds[i].pd;
	if (i == MAX_CTX)
		return NULL;
	pds[i].pd = ibv_alloc_pd(ctx);
	if (pds[i].pd)
		pds[i].ctx = ctx;
	return pds[i].pd;
}

static void act_add(struct conn *c)
{
	if (!c->polled) {
		c->polled = true;
		act[nact++] = c;
	}
}

/* the CQ, MR and QP of @c, its receives posted; 0 or -1 (reported) */
static int conn_resources(struct conn *c)
{
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_RC, .sq_sig_all = 1,
		.cap = { .max_send_wr = opt.msgs + 2, .max_recv_wr = opt.msgs,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_pd *pd = pd_for(c->id->verbs);
	uint32_t m;

	if (!pd) {
		conn_fail(c, "ibv_alloc_pd: %s", strerror(errno));
		return -1;
	}
	c->buf = arena + (size_t)c->index * stride;
	c->cq = ibv_create_cq(c->id->verbs, (int)(2 * opt.msgs + 4), NULL,
			      NULL, 0);
	if (!c->cq) {
		conn_fail(c, "ibv_create_cq: %s", strerror(errno));
		return -1;
	}
	c->mr = ibv_reg_mr(pd, c->buf, stride, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!c->mr) {
		conn_fail(c, "ibv_reg_mr: %s", strerror(errno));
		return -1;
	}
	qa.send_cq = c->cq;
	qa.recv_cq = c->cq;
	if (rdma_create_qp(c->id, pd, &qa)) {
		conn_fail(c, "rdma_create_qp: %s", strerror(errno));
		return -1;
	}
	memset(c->buf, 0, stride);
	for (m = 0; m < opt.msgs; m++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)area_recv(c, m), .length = opt.size,
			.lkey = c->mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = m, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (ibv_post_recv(c->id->qp, &wr, &bad)) {
			conn_fail(c, "ibv_post_recv: %s", strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void set_ack_timeout(struct rdma_cm_id *id)
{
	uint8_t t = (uint8_t)timeout_exp(18);

	/* older kernels lack the option: their default stands */
	(void)rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT,
			      &t, sizeof(t));
}

/* post one signaled send-queue WR of @len bytes at @p */
static int post_one(struct conn *c, enum ibv_wr_opcode op, uint64_t wr_id,
		    uint8_t *p)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = opt.size,
			       .lkey = c->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1, .opcode = op }, *bad;

	if (op == IBV_WR_RDMA_WRITE) {
		wr.wr.rdma.remote_addr = c->raddr + (size_t)2 * opt.msgs * opt.size;
		wr.wr.rdma.rkey = c->rkey;
	} else if (op == IBV_WR_RDMA_READ) {
		wr.wr.rdma.remote_addr = c->raddr +
					 ((size_t)2 * opt.msgs + 1) * opt.size;
		wr.wr.rdma.rkey = c->rkey;
	}
	if (ibv_post_send(c->id->qp, &wr, &bad)) {
		conn_fail(c, "ibv_post_send (opcode %d): %s", op,
			  strerror(errno));
		return -1;
	}
	return 0;
}

/* the server's SENDs, once the client's data is verified */
static void server_reply(struct conn *c)
{
	uint32_t m;

	c->replied = true;
	for (m = 0; m < opt.msgs; m++) {
		pat_fill(area_send(c, m), opt.size, pat_key(c->index, P_SSEND, m));
		if (!m && (c->xflags & X_RECV))
			area_send(c, m)[opt.size / 2] ^= 0x5a;
		if (post_one(c, IBV_WR_SEND, (uint64_t)P_SSEND << 32 | m,
			     area_send(c, m)))
			return;
	}
}

/* the client's WRITE, SENDs and READ on an established connection */
static void client_start(struct conn *c)
{
	bool x = c->index == opt.n / 2;
	uint32_t m;

	pat_fill(area_wr(c), opt.size, pat_key(c->index, P_WRITE, 0));
	if (x && (opt.xflags & X_WRITE))
		area_wr(c)[opt.size / 2] ^= 0x5a;
	if (post_one(c, IBV_WR_RDMA_WRITE, (uint64_t)P_WRITE << 32, area_wr(c)))
		return;
	for (m = 0; m < opt.msgs; m++) {
		pat_fill(area_send(c, m), opt.size, pat_key(c->index, P_CSEND, m));
		if (x && !m && (opt.xflags & X_SEND))
			area_send(c, m)[opt.size / 2] ^= 0x5a;
		if (post_one(c, IBV_WR_SEND, (uint64_t)P_CSEND << 32 | m,
			     area_send(c, m)))
			return;
	}
	post_one(c, IBV_WR_RDMA_READ, (uint64_t)P_READ << 32, area_rd(c));
}

static void conn_verified(struct conn *c)
{
	if (c->failed || c->verified)
		return;
	c->verified = true;
	nverified++;
	t_last_ver = wall_us();
	if (c->state == S_DATA || c->state == S_CONNECTING)
		c->state = S_VERIFIED;
}

/* one work completion of @c */
static void handle_wc(struct conn *c, const struct ibv_wc *wc)
{
	enum what w = (enum what)(wc->wr_id >> 32);
	uint32_t m = (uint32_t)wc->wr_id;
	enum ibv_wc_opcode want;

	if (wc->status != IBV_WC_SUCCESS) {
		/* the server's SENDs flushed by the client's disconnect: the
		 * client verified them before it disconnected
		 */
		if (c->disc_seen && wc->status == IBV_WC_WR_FLUSH_ERR)
			return;
		conn_fail(c, "work completion %s (opcode %d, wr_id 0x%" PRIx64
			  ", vendor_err 0x%x)", ibv_wc_status_str(wc->status),
			  wc->opcode, wc->wr_id, wc->vendor_err);
		return;
	}
	if (c->dead)
		return;
	if (wc->opcode == IBV_WC_RECV) {
		if (m >= opt.msgs || m != c->recvs || wc->byte_len != opt.size) {
			conn_fail(c, "receive %u of %u: wr_id %u, byte_len %u (expected %u)",
				  c->recvs, opt.msgs, m, wc->byte_len, opt.size);
			return;
		}
		check_area(c, area_recv(c, m), opt.server ? P_CSEND : P_SSEND,
			   m, opt.server ? "client SEND" : "server SEND");
		c->recvs++;
		if (opt.server && c->recvs == opt.msgs) {
			check_area(c, area_wr(c), P_WRITE, 0, "client RDMA WRITE");
			conn_verified(c);
			server_reply(c);
		}
	} else {
		switch (w) {
		case P_CSEND:
		case P_SSEND:
			want = IBV_WC_SEND;
			break;
		case P_WRITE:
			want = IBV_WC_RDMA_WRITE;
			break;
		case P_READ:
			want = IBV_WC_RDMA_READ;
			break;
		default:
			want = (enum ibv_wc_opcode)-1;
		}
		if (wc->opcode != want) {
			conn_fail(c, "completion opcode %d for wr_id 0x%" PRIx64,
				  wc->opcode, wc->wr_id);
			return;
		}
		if (w == P_READ) {
			if (wc->byte_len != opt.size) {
				conn_fail(c, "RDMA READ byte_len %u, expected %u",
					  wc->byte_len, opt.size);
				return;
			}
			check_area(c, area_rd(c), P_READ, 0, "server buffer by RDMA READ");
			c->reads++;
		} else {
			c->sends++;
		}
	}
	if (opt.server ? c->replied && c->sends == opt.msgs :
	    c->recvs == opt.msgs && c->reads == 1 && c->sends == opt.msgs + 1) {
		conn_verified(c);
		settle(c);
	}
}

/* poll every active CQ once; the number of completions */
static int poll_cqs(void)
{
	struct ibv_wc wc[16];
	uint32_t i = 0;
	int got = 0, k, r;

	while (i < nact) {
		struct conn *c = act[i];

		r = ibv_poll_cq(c->cq, 16, wc);
		if (r < 0)
			conn_fail(c, "ibv_poll_cq: %d", r);
		for (k = 0; k < r; k++)
			handle_wc(c, &wc[k]);
		got += r > 0 ? r : 0;
		/* a finished side has nothing more to poll for */
		if (c->dead || c->settled || c->disc_seen) {
			c->polled = false;
			act[i] = act[--nact];
			continue;
		}
		i++;
	}
	return got;
}

static struct conn *conn_of(struct rdma_cm_event *ev)
{
	return ev->id ? ev->id->context : NULL;
}

/* ib_cm's REJ reasons (IBTA 12.6.7.2 table 112) seen with rdma_cm */
static const char *rej_reason(int r)
{
	switch (r) {
	case 1: return "no QP";
	case 2: return "no EEC";
	case 3: return "no resources";
	case 4: return "timeout";
	case 8: return "invalid service ID: nobody listens on the port";
	case 10: return "stale connection";
	case 26: return "invalid flow label";
	case 27: return "invalid alternate flow label";
	case 28: return "consumer reject: the server refused it";
	default: return "see IBTA table 112";
	}
}

/* the error events that end a connection */
static bool error_event(struct rdma_cm_event *ev, struct conn *c)
{
	switch (ev->event) {
	case RDMA_CM_EVENT_REJECTED:
		conn_fail(c, "REJECTED in state %s: status %d (%s)",
			  state_name[c->state], ev->status,
			  rej_reason(ev->status));
		return true;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
	case RDMA_CM_EVENT_UNREACHABLE:
	case RDMA_CM_EVENT_CONNECT_ERROR:
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		conn_fail(c, "%s in state %s: status %d (%s)",
			  rdma_event_str(ev->event), state_name[c->state],
			  ev->status, strerror(ev->status < 0 ? -ev->status :
					       ev->status));
		return true;
	default:
		return false;
	}
}

static void on_disconnected(struct conn *c)
{
	if (c->disc_seen)
		return;
	c->disc_seen = true;
	ndisc++;
	t_last_disc = wall_us();
	if (!t_first_disc)
		t_first_disc = t_last_disc;
	if (!c->verified && !c->failed)
		conn_fail(c, "DISCONNECTED in state %s, before its data was verified",
			  state_name[c->state]);
	if (!c->dead)
		c->state = S_DISCONNECTED;
}

static void client_event(struct rdma_cm_event *ev)
{
	struct conn *c = conn_of(ev);
	const struct rep_pdata *rep;
	struct req_pdata req;
	struct rdma_conn_param cp = {
		.private_data = &req, .private_data_len = sizeof(req),
		.initiator_depth = 1, .responder_resources = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};

	if (!c || error_event(ev, c))
		return;
	switch (ev->event) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (c->state != S_ADDR)
			break;
		if (conn_resources(c))
			return;
		set_ack_timeout(c->id);
		c->state = S_ROUTE;
		if (rdma_resolve_route(c->id, (int)tmo(5) * 1000))
			conn_fail(c, "rdma_resolve_route: %s", strerror(errno));
		return;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (c->state != S_ROUTE)
			break;
		req = (struct req_pdata){
			.magic = htonl(REQ_MAGIC), .index = htonl(c->index),
			.n = htonl(opt.n), .msgs = htonl(opt.msgs),
			.size = htonl(opt.size), .seed = htonl(opt.seed),
			.xflags = htonl(c->index == opt.n / 2 ?
					opt.xflags & (X_READ | X_RECV) : 0),
		};
		c->state = S_CONNECTING;
		if (rdma_connect(c->id, &cp))
			conn_fail(c, "rdma_connect: %s", strerror(errno));
		return;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c->state != S_CONNECTING)
			break;
		rep = ev->param.conn.private_data;
		if (!rep || ev->param.conn.private_data_len < sizeof(*rep) ||
		    ntohl(rep->magic) != REP_MAGIC ||
		    ntohl(rep->index) != c->index) {
			conn_fail(c, "ESTABLISHED without the server's buffer (private data %u bytes)",
				  ev->param.conn.private_data_len);
			return;
		}
		c->raddr = be64toh(rep->addr);
		c->rkey = ntohl(rep->rkey);
		c->connected = true;
		nconnected++;
		t_last_est = wall_us();
		c->state = S_DATA;
		act_add(c);
		client_start(c);
		return;
	case RDMA_CM_EVENT_DISCONNECTED:
		on_disconnected(c);
		return;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return;
	default:
		break;
	}
	conn_fail(c, "unexpected event %s in state %s",
		  rdma_event_str(ev->event), state_name[c->state]);
}

/*
 * A connection request: a slot for the client's index, its resources, the
 * pattern the client will READ, then the accept. Returns an id to destroy
 * once the event is acknowledged (a request rejected), or NULL.
 */
static struct rdma_cm_id *server_request(struct rdma_cm_event *ev)
{
	const struct req_pdata *req = ev->param.conn.private_data;
	struct rep_pdata rep = { .magic = htonl(REP_MAGIC) };
	struct rdma_conn_param cp = {
		.private_data = &rep, .private_data_len = sizeof(rep),
		.initiator_depth = 1, .responder_resources = 1,
		.retry_count = 7, .rnr_retry_count = 7,
	};
	uint32_t i;
	struct conn *c;

	if (!t_first_req)
		t_first_req = wall_us();
	if (!req || ev->param.conn.private_data_len < sizeof(*req) ||
	    ntohl(req->magic) != REQ_MAGIC || ntohl(req->n) != opt.n ||
	    ntohl(req->msgs) != opt.msgs || ntohl(req->size) != opt.size ||
	    ntohl(req->index) >= opt.n) {
		if (nreports++ < MAX_REPORTS)
			printf("# server: rejecting a request whose private data is not ours or does not match -n %u -m %u -z %u\n",
			       opt.n, opt.msgs, opt.size);
		nfailed++;
		rdma_reject(ev->id, NULL, 0);
		return ev->id;
	}
	i = ntohl(req->index);
	c = &conns[i];
	if (c->id) {
		if (nreports++ < MAX_REPORTS)
			printf("# server: a second request for conn %u rejected\n", i);
		nfailed++;
		rdma_reject(ev->id, NULL, 0);
		return ev->id;
	}
	opt.seed = ntohl(req->seed);
	c->id = ev->id;
	c->id->context = c;
	c->xflags = ntohl(req->xflags);
	if (conn_resources(c)) {
		rdma_reject(ev->id, NULL, 0);
		return NULL;
	}
	pat_fill(area_rd(c), opt.size, pat_key(i, P_READ, 0));
	if (c->xflags & X_READ)
		area_rd(c)[opt.size / 2] ^= 0x5a;
	rep.index = htonl(i);
	rep.addr = htobe64((uintptr_t)c->buf);
	rep.rkey = htonl(c->mr->rkey);
	set_ack_timeout(c->id);
	c->state = S_CONNECTING;
	act_add(c);
	if (rdma_accept(c->id, &cp))
		conn_fail(c, "rdma_accept: %s", strerror(errno));
	return NULL;
}

static struct rdma_cm_id *server_event(struct rdma_cm_event *ev)
{
	struct conn *c;

	if (ev->event == RDMA_CM_EVENT_CONNECT_REQUEST)
		return server_request(ev);
	if (ev->id == listen_id) {
		if (nreports++ < MAX_REPORTS)
			printf("# server: listener event %s (status %d)\n",
			       rdma_event_str(ev->event), ev->status);
		return NULL;
	}
	c = conn_of(ev);
	if (!c || error_event(ev, c))
		return NULL;
	switch (ev->event) {
	case RDMA_CM_EVENT_ESTABLISHED:
		c->connected = true;
		nconnected++;
		t_last_est = wall_us();
		if (c->state == S_CONNECTING)
			c->state = S_DATA;
		return NULL;
	case RDMA_CM_EVENT_DISCONNECTED:
		/* completions that came before the DREQ first */
		if (c->polled) {
			struct ibv_wc wc[16];
			int k, r;

			while ((r = ibv_poll_cq(c->cq, 16, wc)) > 0)
				for (k = 0; k < r; k++)
					handle_wc(c, &wc[k]);
		}
		on_disconnected(c);
		rdma_disconnect(c->id);
		return NULL;
	case RDMA_CM_EVENT_TIMEWAIT_EXIT:
	case RDMA_CM_EVENT_ADDR_CHANGE:
		return NULL;
	default:
		conn_fail(c, "unexpected event %s in state %s",
			  rdma_event_str(ev->event), state_name[c->state]);
		return NULL;
	}
}

/* handle every queued CM event (at most 256); how many there were */
static int cm_events(void)
{
	struct rdma_cm_event *ev;
	struct rdma_cm_id *gone;
	int k;

	for (k = 0; k < 256; k++) {
		if (rdma_get_cm_event(chan, &ev)) {
			if (errno != EAGAIN && errno != EINTR)
				bail("rdma_get_cm_event: %s", strerror(errno));
			break;
		}
		gone = NULL;
		if (opt.server)
			gone = server_event(ev);
		else
			client_event(ev);
		rdma_ack_cm_event(ev);
		if (gone)
			rdma_destroy_id(gone);
	}
	return k;
}

/* run the event loop until @done() or the deadline; false on timeout */
static bool loop_until(bool (*done)(void), double deadline)
{
	struct pollfd pfd = { .fd = chan->fd, .events = POLLIN };

	while (!done()) {
		if (now() > deadline)
			return false;
		/* idle: sleep on the channel, 1 ms at most (the CQs have
		 * no completion channel: a busy loop would take the CPU
		 * from the kernel work the connections wait for)
		 */
		if (!cm_events() && !poll_cqs())
			poll(&pfd, 1, 1);
	}
	return true;
}

/* client: every connection verified or failed */
static bool all_settled(void)
{
	return nsettled >= opt.n;
}

/* every connection that was connected has seen its DISCONNECTED */
static bool all_disconnected(void)
{
	uint32_t i;

	for (i = 0; i < opt.n; i++)
		if (conns[i].connected && !conns[i].disc_seen)
			return false;
	return true;
}

/* server: every slot disconnected, or dead */
static bool server_done(void)
{
	uint32_t i;

	for (i = 0; i < opt.n; i++)
		if (!conns[i].dead && !conns[i].disc_seen)
			return false;
	return true;
}

/* report the connections not in a final state: counts by state */
static uint32_t report_stuck(const char *phase, bool (*stuck)(struct conn *))
{
	uint32_t by[S_FAILED + 1] = { 0 }, i, n = 0, shown = 0;

	for (i = 0; i < opt.n; i++) {
		if (!stuck(&conns[i]))
			continue;
		by[conns[i].state]++;
		n++;
		if (shown++ < 5)
			printf("# %s conn %u stuck in %s: %s (recvs %u sends %u reads %u)\n",
			       role, i, phase, state_name[conns[i].state],
			       conns[i].recvs, conns[i].sends, conns[i].reads);
	}
	for (i = 0; i <= S_FAILED; i++)
		if (by[i])
			printf("# %s: %u connections stuck in %s: %s\n", role, by[i],
			       phase, state_name[i]);
	return n;
}

static bool stuck_data(struct conn *c)
{
	return !c->settled;
}

static bool stuck_disc(struct conn *c)
{
	return c->connected && !c->disc_seen;
}

static bool stuck_server(struct conn *c)
{
	return !c->dead && !c->disc_seen;
}

/* destroy every connection's QP, CQ, MR and id, the PDs, the channel */
static void destroy_all(void)
{
	uint32_t i;
	int e;

	for (i = 0; i < opt.n; i++) {
		struct conn *c = &conns[i];

		if (c->id && c->id->qp)
			rdma_destroy_qp(c->id);
		if (c->cq && (e = ibv_destroy_cq(c->cq))) {
			printf("# %s conn %u: ibv_destroy_cq: %s\n", role, i, strerror(e));
			destroy_err = true;
		}
		if (c->mr && (e = ibv_dereg_mr(c->mr))) {
			printf("# %s conn %u: ibv_dereg_mr: %s\n", role, i, strerror(e));
			destroy_err = true;
		}
		if (c->id && rdma_destroy_id(c->id)) {
			printf("# %s conn %u: rdma_destroy_id: %s\n", role, i,
			       strerror(errno));
			destroy_err = true;
		}
		c->id = NULL;
	}
	if (listen_id && rdma_destroy_id(listen_id)) {
		printf("# %s: rdma_destroy_id (listener): %s\n", role, strerror(errno));
		destroy_err = true;
	}
	for (i = 0; i < MAX_CTX && pds[i].ctx; i++) {
		e = ibv_dealloc_pd(pds[i].pd);
		if (e) {
			printf("# %s: ibv_dealloc_pd: %s\n", role, strerror(e));
			destroy_err = true;
		}
	}
	rdma_destroy_event_channel(chan);
}

static void resolve(const char *host, int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC,
				  .ai_socktype = SOCK_STREAM }, *ai;
	char ps[16];
	int r;

	snprintf(ps, sizeof(ps), "%d", port);
	r = getaddrinfo(host, ps, &hints, &ai);
	if (r)
		bail("address %s: %s", host, gai_strerror(r));
	memcpy(ss, ai->ai_addr, ai->ai_addrlen);
	freeaddrinfo(ai);
}

/* the limits N connections run into, as diagnostics */
static void limits(void)
{
	struct rlimit nofile, memlock;
	char ml[32] = "unlimited";
	int backlog = -1;
	FILE *f = fopen("/proc/sys/net/rdma_ucm/max_backlog", "r");

	if (f) {
		if (fscanf(f, "%d", &backlog) != 1)
			backlog = -1;
		fclose(f);
	}
	getrlimit(RLIMIT_NOFILE, &nofile);
	getrlimit(RLIMIT_MEMLOCK, &memlock);
	if (memlock.rlim_cur != RLIM_INFINITY)
		snprintf(ml, sizeof(ml), "%llu KiB",
			 (unsigned long long)memlock.rlim_cur / 1024);
	printf("# %s: %u connections, %u x %u B SENDs each way, one %u B WRITE and READ; open files limit %llu (one event channel, no completion channels), memlock %s, rdma_ucm max_backlog ",
	       role, opt.n, opt.msgs, opt.size, opt.size,
	       (unsigned long long)nofile.rlim_cur, ml);
	if (backlog >= 0)
		printf("%d\n", backlog);
	else
		puts("unknown (init_net's sysctl, not seen from this netns)");
	/* the kernel refuses requests beyond the backlog not yet fetched */
	if (opt.server && backlog >= 0 && (uint32_t)backlog < opt.n)
		printf("# server: max_backlog %d < %u: a burst of requests the server has not fetched yet beyond it is rejected\n",
		       backlog, opt.n);
}

static void usage(void)
{
	puts("usage: cm_verify -s -b ADDR [options]     (server)\n"
	     "       cm_verify -a ADDR [-b SRC] [options] (client)\n"
	     "  -p PORT   rdma_cm port (7471)\n"
	     "  -n N      connections (64; both sides)\n"
	     "  -m MSGS   SENDs each way per connection (4; both sides)\n"
	     "  -z SIZE   bytes per SEND, WRITE and READ (256; both sides)\n"
	     "  -S SEED   the pattern's seed (1; client, passed to the server)\n"
	     "  -T SECS   deadline of each phase (60 + N/8, x SOFTRC_TIME_SCALE;\n"
	     "            the server's: twice that from the first request)\n"
	     "  -X WHAT   client: corrupt one byte of connection N/2's\n"
	     "            send|write (client side) or read|recv (server side)\n"
	     "  -v        a line per phase as it ends");
	exit(2);
}

static uint32_t num(const char *s, uint32_t lo, uint32_t hi)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*end || v < lo || v > hi) {
		fprintf(stderr, "cm_verify: %s: not a number in %u..%u\n", s, lo, hi);
		usage();
	}
	return (uint32_t)v;
}

static void phase_line(const char *name, int64_t a, int64_t b, uint32_t per)
{
	if (!opt.verbose)
		return;
	printf("# %s: %s %.1f ms (%.3f ms/conn)\n", role, name, (b - a) / 1e3,
	       per ? (b - a) / 1e3 / per : 0.0);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sockaddr_storage dst, src;
	int64_t t_start, t_conn = 0, t_ver = 0, t_disc = 0, t_discd = 0, t_end;
	uint32_t i, stuck = 0;
	int ch;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((ch = getopt(argc, argv, "sa:b:p:n:m:z:S:T:X:vh")) != -1) {
		switch (ch) {
		case 's': opt.server = true; break;
		case 'a': opt.addr = optarg; break;
		case 'b': opt.src = optarg; break;
		case 'p': opt.port = (int)num(optarg, 1, 65535); break;
		case 'n': opt.n = num(optarg, 1, MAX_CONNS); break;
		case 'm': opt.msgs = num(optarg, 1, MAX_MSGS); break;
		case 'z': opt.size = num(optarg, 2, MAX_SIZE); break;
		case 'S': opt.seed = num(optarg, 0, UINT32_MAX); break;
		case 'T': opt.tmo = num(optarg, 1, 86400); break;
		case 'X':
			opt.xflags = !strcmp(optarg, "send") ? X_SEND :
				     !strcmp(optarg, "write") ? X_WRITE :
				     !strcmp(optarg, "read") ? X_READ :
				     !strcmp(optarg, "recv") ? X_RECV : 0;
			if (!opt.xflags)
				usage();
			break;
		case 'v': opt.verbose = true; break;
		default: usage();
		}
	}
	if (optind != argc || (opt.server ? !opt.src : !opt.addr))
		usage();
	role = opt.server ? "server" : "client";
	if (!opt.tmo)
		opt.tmo = 60 + opt.n / 8;
	opt.tmo = tmo(opt.tmo);
	stride = ((size_t)(2 * opt.msgs + 2) * opt.size + 63) & ~(size_t)63;
	conns = calloc(opt.n, sizeof(*conns));
	act = calloc(opt.n, sizeof(*act));
	if (!conns || !act || posix_memalign((void **)&arena, 4096, stride * opt.n))
		bail("out of memory for %u connections", opt.n);
	for (i = 0; i < opt.n; i++)
		conns[i].index = i;
	limits();
	chan = rdma_create_event_channel();
	if (!chan)
		bail("rdma_create_event_channel: %s", strerror(errno));
	if (fcntl(chan->fd, F_SETFL, fcntl(chan->fd, F_GETFL) | O_NONBLOCK))
		bail("O_NONBLOCK on the event channel: %s", strerror(errno));

	t_start = wall_us();
	if (opt.server) {
		resolve(opt.src, opt.port, &src);
		if (rdma_create_id(chan, &listen_id, NULL, RDMA_PS_TCP) ||
		    rdma_bind_addr(listen_id, (struct sockaddr *)&src) ||
		    rdma_listen(listen_id, (int)opt.n))
			bail("listen on %s port %d: %s", opt.src, opt.port,
			     strerror(errno));
		printf("# server: listening on %s port %d\n", opt.src, opt.port);
		/* the deadline runs from the first request */
		if (poll(&(struct pollfd){ .fd = chan->fd, .events = POLLIN }, 1,
			 (int)(opt.tmo * 1000)) <= 0)
			printf("# server: no connection request in %.0f s\n", opt.tmo);
		/* the client's two phases, each within -T */
		else if (!loop_until(server_done, now() + 2 * opt.tmo))
			stuck = report_stuck("the server's wait", stuck_server);
		t_start = t_first_req ? t_first_req : t_start;
		t_disc = t_first_disc ? t_first_disc : wall_us();
		t_discd = t_last_disc ? t_last_disc : wall_us();
	} else {
		resolve(opt.addr, opt.port, &dst);
		if (opt.src)
			resolve(opt.src, 0, &src);
		for (i = 0; i < opt.n; i++) {
			struct conn *c = &conns[i];

			if (rdma_create_id(chan, &c->id, c, RDMA_PS_TCP)) {
				conn_fail(c, "rdma_create_id: %s", strerror(errno));
				continue;
			}
			c->state = S_ADDR;
			if (rdma_resolve_addr(c->id, opt.src ? (struct sockaddr *)&src : NULL,
					      (struct sockaddr *)&dst, (int)tmo(5) * 1000))
				conn_fail(c, "rdma_resolve_addr: %s", strerror(errno));
		}
		if (!loop_until(all_settled, now() + opt.tmo))
			stuck = report_stuck("connect and data", stuck_data);
		t_disc = wall_us();
		phase_line("connect", t_start, t_last_est, opt.n);
		phase_line("data", t_last_est, t_disc, opt.n);
		for (i = 0; i < opt.n; i++) {
			struct conn *c = &conns[i];

			if (!c->connected || c->disc_seen)
				continue;
			if (!c->dead)
				c->state = S_DISCONNECTING;
			if (rdma_disconnect(c->id))
				conn_fail(c, "rdma_disconnect: %s", strerror(errno));
		}
		if (!loop_until(all_disconnected, now() + opt.tmo))
			stuck += report_stuck("disconnect", stuck_disc);
		t_discd = wall_us();
	}
	t_conn = t_last_est;
	t_ver = t_last_ver;
	phase_line("disconnect", t_disc, t_discd, opt.n);
	destroy_all();
	t_end = wall_us();
	phase_line("destroy", t_discd, t_end, opt.n);

	printf("cm_verify %s: connected %u/%u, verified %u, failed %u, stuck %u; connect %.3f ms/conn, teardown %.3f ms/conn (disconnect %.1f ms, destroy %.1f ms)\n",
	       role, nconnected, opt.n, nverified, nfailed, stuck,
	       t_conn ? (t_conn - t_start) / 1e3 / opt.n : 0.0,
	       (t_end - t_disc) / 1e3 / opt.n, (t_discd - t_disc) / 1e3,
	       (t_end - t_discd) / 1e3);
	printf("CMV %s n %u connected %u verified %u failed %u stuck %u t_start %" PRId64
	       " t_connected %" PRId64 " t_verified %" PRId64 " t_disc %" PRId64
	       " t_disc_done %" PRId64 " t_end %" PRId64 "\n", role, opt.n,
	       nconnected, nverified, nfailed, stuck, t_start, t_conn, t_ver,
	       t_disc, t_discd, t_end);
	free(act);
	free(conns);
	free(arena);
	return nconnected == opt.n && nverified == opt.n && !nfailed && !stuck &&
	       !destroy_err ? 0 : 1;
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * adv_victim - the victim of selftests/vm/adversary.sh.
 *
 * One process holds N RC connections ("pairs"): QP A on device -d (the
 * victim) and QP B on device -D (its real peer; the same device for the
 * loopback topology). Each pair has its own CQs, A's receive buffers
 * (filled with a known pattern, all posted), a remote-accessible MR on A
 * (the target of forged WRITEs and READs) and B's buffers. With -H an MR
 * of 4 GiB (one small memfd mapped over and over) is registered on A for
 * forged huge READ/WRITE lengths.
 *
 * At start every pair runs one real SEND, WRITE and READ B -> A, so A's
 * responder has duplicates to be replayed, and the program prints one
 * "state" line per pair (shell assignments: QPNs, PSNs, rkey/VA) and
 * "ready". It then reads commands on stdin, one per line, and answers each
 * with "# " diagnostics, KTAP lines ("ok N ..." from ktap.h), "state"
 * lines and finally "done CMD ok|fail":
 *
 *   check I     nothing reached pair I since the last check: no completion
 *               on either side, A's posted receive buffers and target MR
 *               (and the huge MR) unchanged, both QPs RTS; then the
 *               connection still works: a SEND, a WRITE and a READ B -> A
 *               and a SEND A -> B complete SUCCESS with the right data on
 *               both sides (a forged SEND that took a receive buffer makes
 *               the real SEND a "duplicate": its data never arrives)
 *   quiet I     only the first half (memory unchanged, no successful
 *               receive), for a pair whose QP may legitimately be in
 *               ERROR now (a forged request NAKed as invalid)
 *   recv I L P  exactly one receive of L bytes, every byte P, completed on
 *               A (the injector's positive control); the pair is then
 *               out of step and not used again
 *   stall I     A posts a SEND to B, which has no receive posted: it stays
 *               outstanding (B answers RNR NAK, A retries forever) until
 *               the next check posts one. Prints A_UNA (its PSN) and
 *               A_NMSN (the MSN B's ACK of it will carry)
 *   err I       A to ERROR (stops whatever A's responder is streaming)
 *   f1          the stale-key READ: on a fresh pair A posts an RDMA READ
 *               into MR1 behind a SEND that B holds back, deregisters MR1,
 *               registers MRs (iova = MR1's address) until one gets MR1's
 *               old lkey, then lets B answer: the READ response must not
 *               land in the MR that now carries the key
 *   quit
 *
 * Usage: adv_victim -d DEV_A -g GID_A [-D DEV_B -G GID_B] [-n PAIRS] [-H]
 *                   [-m MTU] [-s SEED]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "rc_conn.h"
#include "timing.h"

#define MAX_PAIRS	32
#define NRECV		8		/* A's receive buffers per pair */
#define RSZ		512		/* bytes per receive buffer */
#define TGT		4096		/* A's remote-accessible MR per pair */
#define BSZ		4096		/* B's buffers per pair */
#define MSG		64		/* bytes of each real message */
#define P_RECV		0x5a		/* A's receive buffers */
#define P_TGT		0x3c		/* A's target MR */
#define P_HUGE		0x11		/* the huge MR */
#define HUGE_LEN	(1ull << 32)
#define HUGE_CHUNK	(2u << 20)
#define WAIT_MS		5000		/* per completion */
#define RNR_TIMER	27		/* 122.88 ms (IBTA table 45) */

/* B's buffer layout */
#define B_SEND		0
#define B_RECV		1024		/* two slots of RSZ */
#define B_READ		2048

enum { WR_SEND = 1, WR_WRITE, WR_READ, WR_STALL, WR_BRECV = 100 };

struct dev {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid_idx;
	union ibv_gid gid;
};

struct pair {
	struct ibv_qp *qa, *qb;
	struct ibv_cq *cqa, *cqb;
	struct ibv_mr *mr_arecv, *mr_atgt, *mr_asend, *mr_b;
	uint8_t *arecv, *atgt, *shadow, *asend, *b;
	uint32_t a_epsn;	/* next PSN A's responder expects */
	uint32_t a_sqpsn;	/* next PSN A's requester sends */
	uint32_t b_msn;		/* messages A -> B so far (B's MSN) */
	uint64_t posted, done;	/* A's receives posted / completed */
	uint32_t seq;
	int stalled;		/* A's SEND waiting for a receive at B */
};

static struct dev da, db_, *db = &db_;
static struct pair pairs[MAX_PAIRS];
static int npairs = 1;
static enum ibv_mtu mtu = IBV_MTU_256;
static uint64_t seed;
static uint8_t *huge_va, *huge_back;
static struct ibv_mr *huge_mr;

static __attribute__((noreturn, format(printf, 1, 2))) void bail(const char *fmt, ...)
{
	va_list ap;

	fputs("Bail out! ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (errno %d %s)\n", errno, strerror(errno));
	fflush(stdout);
	exit(2);
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* the data of real message @k of pair @i: never a constant byte */
static void gen(uint8_t *p, uint32_t len, int i, uint32_t k)
{
	uint64_t s = mix64(seed ^ ((uint64_t)i << 40) ^ k);
	uint32_t n;

	for (n = 0; n < len; n++) {
		if (!(n & 7))
			s = mix64(s);
		p[n] = (uint8_t)(s >> ((n & 7) * 8));
	}
	p[0] = 0x80 | (uint8_t)n;	/* differs from every fill pattern */
}

static long ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/*
 * Poll @cq until it yields a completion or @ms pass (scaled to this
 * machine). Return: 1, 0, -1.
 */
static int poll_wait(struct ibv_cq *cq, struct ibv_wc *wc, long ms)
{
	struct timespec t0, d = { 0, 200000 };
	int n;

	ms = (long)tmo((double)ms);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		if (ms_since(&t0) >= ms)
			return 0;
		nanosleep(&d, NULL);
	}
}

static const char *wcs(const struct ibv_wc *wc)
{
	return ibv_wc_status_str(wc->status);
}

static bool untouched(const uint8_t *p, size_t len, uint8_t pat, size_t *at)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat) {
			*at = i;
			return false;
		}
	return true;
}

/* --- set-up -------------------------------------------------------------- */

static void dev_open(struct dev *d, const char *name, int gid_idx)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	int i;

	if (!l)
		bail("ibv_get_device_list");
	for (i = 0; l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			break;
	if (!l[i])
		bail("no RDMA device %s", name);
	d->ctx = ibv_open_device(l[i]);
	ibv_free_device_list(l);
	if (!d->ctx)
		bail("ibv_open_device %s", name);
	d->pd = ibv_alloc_pd(d->ctx);
	if (!d->pd)
		bail("ibv_alloc_pd");
	d->gid_idx = gid_idx;
	if (ibv_query_gid(d->ctx, 1, gid_idx, &d->gid))
		bail("ibv_query_gid %s %d", name, gid_idx);
}

static void *zalloc(size_t len, uint8_t fill)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, len))
		bail("out of memory");
	memset(p, fill, len);
	return p;
}

static struct ibv_mr *reg(struct dev *d, void *p, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(d->pd, p, len, access);

	if (!mr)
		bail("ibv_reg_mr %zu", len);
	return mr;
}

static struct ibv_qp *qp_new(struct dev *d, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_qp *qp = ibv_create_qp(d->pd, &a);

	if (!qp)
		bail("ibv_create_qp");
	return qp;
}

static const int all_access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			      IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

/*
 * QP @name (@qp on @d, sending from @psn) to RTS, connected to @peer_qp on
 * @peer (sending from @peer_psn); bails out if a transition fails.
 */
static void half_to_rts(struct rc_conn *c, const char *name,
			struct ibv_qp *qp, struct dev *d, uint32_t psn,
			struct ibv_qp *peer_qp, struct dev *peer,
			uint32_t peer_psn)
{
	int st;

	c->dqpn = peer_qp->qp_num;
	c->dgid = peer->gid;
	c->sgid_index = (uint8_t)d->gid_idx;
	c->rq_psn = peer_psn;
	c->sq_psn = psn;
	st = rc_qp_to_rts(qp, c);
	if (st)
		bail("QP %s %u to state %d", name, qp->qp_num, st);
}

/* @qa on @a to @qb on @b: A sends from @apsn, B from @bpsn. */
static void connect2(struct ibv_qp *qa, struct dev *a, uint32_t apsn,
		     struct ibv_qp *qb, struct dev *b, uint32_t bpsn)
{
	struct rc_conn c = {
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.mtu = mtu, .rd_atomic = 4, .min_rnr_timer = RNR_TIMER,
		.timeout = timeout_exp(16), .retry_cnt = 7, .rnr_retry = 7,
	};

	half_to_rts(&c, "A", qa, a, apsn, qb, b, bpsn);
	half_to_rts(&c, "B", qb, b, bpsn, qa, a, apsn);
}

static int post_recv(struct ibv_qp *qp, void *p, uint32_t len, uint32_t lkey,
		     uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct ibv_qp *qp, enum ibv_wr_opcode opc, void *p,
		     uint32_t len, uint32_t lkey, uint64_t raddr, uint32_t rkey,
		     uint64_t wr_id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)p, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = opc,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return ibv_post_send(qp, &wr, &bad);
}

static void arecv_post(struct pair *p)
{
	uint8_t *buf = p->arecv + (p->posted % NRECV) * RSZ;

	memset(buf, P_RECV, RSZ);
	if (post_recv(p->qa, buf, RSZ, p->mr_arecv->lkey, p->posted))
		bail("ibv_post_recv A");
	p->posted++;
}

static void pair_new(int i)
{
	struct pair *p = &pairs[i];
	uint32_t apsn = (uint32_t)mix64(seed + 2 * i) & 0xffffff;
	uint32_t bpsn = (uint32_t)mix64(seed + 2 * i + 1) & 0xffffff;

	p->cqa = ibv_create_cq(da.ctx, 64, NULL, NULL, 0);
	p->cqb = ibv_create_cq(db->ctx, 64, NULL, NULL, 0);
	if (!p->cqa || !p->cqb)
		bail("ibv_create_cq");
	p->qa = qp_new(&da, p->cqa);
	p->qb = qp_new(db, p->cqb);
	p->arecv = zalloc(NRECV * RSZ, P_RECV);
	p->atgt = zalloc(TGT, P_TGT);
	p->shadow = zalloc(TGT, P_TGT);
	p->b = zalloc(BSZ, 0);
	p->asend = zalloc(4096, 0);
	p->mr_asend = reg(&da, p->asend, 4096, IBV_ACCESS_LOCAL_WRITE);
	p->mr_arecv = reg(&da, p->arecv, NRECV * RSZ, IBV_ACCESS_LOCAL_WRITE);
	p->mr_atgt = reg(&da, p->atgt, TGT, all_access);
	p->mr_b = reg(db, p->b, BSZ, IBV_ACCESS_LOCAL_WRITE);
	connect2(p->qa, &da, apsn, p->qb, db, bpsn);
	p->a_epsn = bpsn;
	p->a_sqpsn = apsn;
	while (p->posted < NRECV)
		arecv_post(p);
}

/*
 * 4 GiB of address space over one 2 MiB memfd, mapped 2048 times: a
 * hugetlb one if the system has a free huge page (much faster to pin),
 * else shmem.
 */
static void huge_new(void)
{
	const char *kind = "hugetlb";
	uint8_t *va;
	size_t off;
	int fd = memfd_create("adv_victim", MFD_HUGETLB);

	huge_back = MAP_FAILED;
	if (fd >= 0 && !ftruncate(fd, HUGE_CHUNK))
		huge_back = mmap(NULL, HUGE_CHUNK, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);
	if (huge_back == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		kind = "shmem";
		fd = memfd_create("adv_victim", 0);
		if (fd < 0 || ftruncate(fd, HUGE_CHUNK))
			bail("memfd");
		huge_back = mmap(NULL, HUGE_CHUNK, PROT_READ | PROT_WRITE,
				 MAP_SHARED, fd, 0);
		if (huge_back == MAP_FAILED)
			bail("mmap");
	}
	/* address space for 4 GiB, aligned to the chunk (hugetlb needs it) */
	va = mmap(NULL, HUGE_LEN + HUGE_CHUNK, PROT_NONE,
		  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (va == MAP_FAILED)
		bail("mmap");
	huge_va = (uint8_t *)(((uintptr_t)va + HUGE_CHUNK - 1) &
			      ~(uintptr_t)(HUGE_CHUNK - 1));
	memset(huge_back, P_HUGE, HUGE_CHUNK);
	for (off = 0; off < HUGE_LEN; off += HUGE_CHUNK)
		if (mmap(huge_va + off, HUGE_CHUNK, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
			bail("mmap chunk");
	close(fd);
	huge_mr = ibv_reg_mr(da.pd, huge_va, HUGE_LEN, all_access);
	if (huge_mr)
		diag("4 GiB MR over one 2 MiB %s memfd", kind);
	else
		diag("4 GiB MR refused (%s): the huge requests name rkey 0",
		     strerror(errno));
}

/* --- checks --------------------------------------------------------------- */

/* Wait for the completion @wr_id on @cq: SUCCESS, @opc. */
static bool wait_wc(struct pair *p, struct ibv_cq *cq, const char *side,
		    uint64_t wr_id, enum ibv_wc_opcode opc, struct ibv_wc *out)
{
	struct ibv_wc wc;

	if (poll_wait(cq, &wc, WAIT_MS) <= 0) {
		diag("%s: no completion of wr %" PRIu64 " within %d ms", side,
		     wr_id, WAIT_MS);
		return false;
	}
	if (out)
		*out = wc;
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr_id || wc.opcode != opc) {
		diag("%s: completion wr %" PRIu64 " opcode %d status %s, expected wr %"
		     PRIu64 " opcode %d SUCCESS", side, wc.wr_id, wc.opcode, wcs(&wc),
		     wr_id, opc);
		return false;
	}
	(void)p;
	return true;
}

static bool qp_state_is(struct ibv_qp *qp, enum ibv_qp_state want,
			enum ibv_qp_state *got)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return false;
	*got = a.qp_state;
	return a.qp_state == want;
}

/*
 * Nothing reached pair @i: no completion (a flush of A's receives only when
 * @flush_ok), A's receive buffers, target MR and the huge MR unchanged.
 */
static bool check_quiet(int i, bool flush_ok)
{
	struct pair *p = &pairs[i];
	bool good = true, mem = true;
	struct ibv_wc wc;
	uint64_t k;
	size_t at;
	int n = 0, flushed = 0;

	while (ibv_poll_cq(p->cqa, 1, &wc) > 0) {
		if (flush_ok && wc.status == IBV_WC_WR_FLUSH_ERR) {
			flushed++;
			continue;
		}
		if (n++ < 4)
			diag("A: unexpected completion wr %" PRIu64 " opcode %d status %s"
			     " byte_len %u", wc.wr_id, wc.opcode, wcs(&wc), wc.byte_len);
		good = false;
		if (wc.status == IBV_WC_SUCCESS && (wc.opcode & IBV_WC_RECV)) {
			uint8_t *b = p->arecv + (wc.wr_id % NRECV) * RSZ;

			diag("A: a receive completed with %u bytes, first %02x %02x %02x %02x:"
			     " a forged SEND took a receive buffer", wc.byte_len,
			     b[0], b[1], b[2], b[3]);
			p->done++;
		}
	}
	if (flushed)
		diag("A: %d receives flushed (QP A in ERROR)", flushed);
	while (ibv_poll_cq(p->cqb, 1, &wc) > 0) {
		if (n++ < 8)
			diag("B: unexpected completion wr %" PRIu64 " opcode %d status %s",
			     wc.wr_id, wc.opcode, wcs(&wc));
		good = false;
	}
	ok(good, "pair %d: no completion produced by the forged packets", i);
	for (k = p->done; k < p->posted; k++) {
		if (!untouched(p->arecv + (k % NRECV) * RSZ, RSZ, P_RECV, &at)) {
			diag("A: posted receive buffer %" PRIu64 " changed at byte %zu", k, at);
			mem = false;
		}
	}
	if (memcmp(p->atgt, p->shadow, TGT)) {
		for (at = 0; p->atgt[at] == p->shadow[at]; at++)
			;
		diag("A: target MR changed at byte %zu: %02x, expected %02x", at,
		     p->atgt[at], p->shadow[at]);
		memcpy(p->atgt, p->shadow, TGT);
		mem = false;
	}
	if (huge_back && !untouched(huge_back, HUGE_CHUNK, P_HUGE, &at)) {
		diag("A: the 4 GiB MR changed at byte %zu (of every 2 MiB): %02x", at,
		     huge_back[at]);
		memset(huge_back, P_HUGE, HUGE_CHUNK);
		mem = false;
	}
	ok(mem, "pair %d: A's receive buffers, target MR%s unchanged", i,
	   huge_back ? " and 4 GiB MR" : "");
	return good && mem;
}

/* The connection of pair @i still works, both ways, with the right data. */
static bool check_traffic(int i)
{
	struct pair *p = &pairs[i];
	enum ibv_qp_state sa = IBV_QPS_UNKNOWN, sb = IBV_QPS_UNKNOWN;
	uint8_t want[MSG];
	uint32_t off = (p->seq * MSG) % TGT, k;
	struct ibv_wc wc;
	uint8_t *rb;
	bool good;

	good = qp_state_is(p->qa, IBV_QPS_RTS, &sa) & qp_state_is(p->qb, IBV_QPS_RTS, &sb);
	if (!ok(good, "pair %d: both QPs still RTS (A %d, B %d)", i, sa, sb))
		return false;

	/* the stalled SEND goes once B has a receive */
	if (p->stalled) {
		if (post_recv(p->qb, p->b + B_RECV, RSZ, p->mr_b->lkey, WR_BRECV))
			bail("post_recv B");
		good = wait_wc(p, p->cqa, "A", WR_STALL, IBV_WC_SEND, NULL) &&
		       wait_wc(p, p->cqb, "B", WR_BRECV, IBV_WC_RECV, &wc) &&
		       wc.byte_len == MSG && !memcmp(p->b + B_RECV, p->asend + 2048, MSG);
		p->stalled = 0;
		p->b_msn++;
		if (!ok(good, "pair %d: A's outstanding SEND completes SUCCESS, data at B", i))
			return false;
	}

	/* SEND B -> A: the next receive buffer, the real data */
	k = p->seq++;
	gen(p->b + B_SEND, MSG, i, 3 * k);
	rb = p->arecv + (p->done % NRECV) * RSZ;
	if (post_send(p->qb, IBV_WR_SEND, p->b + B_SEND, MSG, p->mr_b->lkey, 0, 0, WR_SEND))
		bail("post_send B");
	good = wait_wc(p, p->cqb, "B", WR_SEND, IBV_WC_SEND, NULL);
	good = good && wait_wc(p, p->cqa, "A", p->done, IBV_WC_RECV, &wc);
	if (good && (wc.byte_len != MSG || memcmp(rb, p->b + B_SEND, MSG))) {
		diag("A: receive %u bytes, first %02x, expected %d bytes, first %02x",
		     wc.byte_len, rb[0], MSG, p->b[B_SEND]);
		good = false;
	}
	p->a_epsn = (p->a_epsn + 1) & 0xffffff;
	if (good) {
		p->done++;
		arecv_post(p);
	}
	if (!ok(good, "pair %d: real SEND B -> A: SUCCESS, A got exactly its data", i))
		return false;

	/* WRITE B -> A, then READ it back */
	gen(want, MSG, i, 3 * k + 1);
	memcpy(p->b + B_SEND, want, MSG);
	if (post_send(p->qb, IBV_WR_RDMA_WRITE, p->b + B_SEND, MSG, p->mr_b->lkey,
		      (uintptr_t)p->atgt + off, p->mr_atgt->rkey, WR_WRITE))
		bail("post_send B");
	good = wait_wc(p, p->cqb, "B", WR_WRITE, IBV_WC_RDMA_WRITE, NULL) &&
	       !memcmp(p->atgt + off, want, MSG);
	memcpy(p->shadow + off, want, MSG);
	p->a_epsn = (p->a_epsn + 1) & 0xffffff;
	if (!ok(good, "pair %d: real WRITE B -> A: SUCCESS, data in A's MR", i))
		return false;
	memset(p->b + B_READ, 0, MSG);
	if (post_send(p->qb, IBV_WR_RDMA_READ, p->b + B_READ, MSG, p->mr_b->lkey,
		      (uintptr_t)p->atgt + off, p->mr_atgt->rkey, WR_READ))
		bail("post_send B");
	good = wait_wc(p, p->cqb, "B", WR_READ, IBV_WC_RDMA_READ, NULL) &&
	       !memcmp(p->b + B_READ, want, MSG);
	p->a_epsn = (p->a_epsn + 1) & 0xffffff;
	if (!ok(good, "pair %d: real READ B <- A: SUCCESS, right data", i))
		return false;

	/* SEND A -> B */
	gen(p->b + B_RECV + RSZ, MSG, i, 3 * k + 2);
	memcpy(want, p->b + B_RECV + RSZ, MSG);
	memset(p->b + B_RECV + RSZ, 0, RSZ);
	if (post_recv(p->qb, p->b + B_RECV + RSZ, RSZ, p->mr_b->lkey, WR_BRECV + 1))
		bail("post_recv B");
	memcpy(p->asend, want, MSG);
	if (post_send(p->qa, IBV_WR_SEND, p->asend, MSG, p->mr_asend->lkey, 0, 0, WR_SEND))
		bail("post_send A");
	good = wait_wc(p, p->cqa, "A", WR_SEND, IBV_WC_SEND, NULL) &&
	       wait_wc(p, p->cqb, "B", WR_BRECV + 1, IBV_WC_RECV, &wc) &&
	       wc.byte_len == MSG && !memcmp(p->b + B_RECV + RSZ, want, MSG);
	p->a_sqpsn = (p->a_sqpsn + 1) & 0xffffff;
	p->b_msn++;
	return ok(good, "pair %d: real SEND A -> B: SUCCESS", i);
}

static void print_state(int i)
{
	struct pair *p = &pairs[i];

	printf("state P%d_A_QPN=%u P%d_B_QPN=%u P%d_A_EPSN=%u P%d_A_SQPSN=%u"
	       " P%d_A_RKEY=%u P%d_A_VA=%" PRIu64 " P%d_A_LEN=%u P%d_A_NMSN=%u\n",
	       i, p->qa->qp_num, i, p->qb->qp_num, i, p->a_epsn, i, p->a_sqpsn,
	       i, p->mr_atgt->rkey, i, (uint64_t)(uintptr_t)p->atgt, i, TGT,
	       i, (p->b_msn + 1) & 0xffffff);
	fflush(stdout);
}

/* --- commands -------------------------------------------------------------- */

static bool cmd_recv(int i, uint32_t len, int pat)
{
	struct pair *p = &pairs[i];
	uint8_t *rb = p->arecv + (p->done % NRECV) * RSZ;
	struct ibv_wc wc;
	bool good;
	size_t at;

	good = poll_wait(p->cqa, &wc, WAIT_MS) > 0 && wc.status == IBV_WC_SUCCESS &&
	       (wc.opcode & IBV_WC_RECV) && wc.byte_len == len &&
	       untouched(rb, len, (uint8_t)pat, &at);
	if (!good)
		diag("A: no receive of %u bytes 0x%02x (status %s, %u bytes, first %02x)",
		     len, pat, wcs(&wc), wc.byte_len, rb[0]);
	good = ok(good, "pair %d: the injected SEND was received", i) &&
	       ok(ibv_poll_cq(p->cqa, 1, &wc) == 0, "pair %d: exactly once", i);
	return good;
}

static bool cmd_stall(int i)
{
	struct pair *p = &pairs[i];

	gen(p->asend + 2048, MSG, i, 0x80000000u + p->seq);
	if (post_send(p->qa, IBV_WR_SEND, p->asend + 2048, MSG, p->mr_asend->lkey,
		      0, 0, WR_STALL))
		bail("post_send stall");
	print_state(i);		/* A_SQPSN is the outstanding SEND's PSN */
	printf("state P%d_A_UNA=%u\n", i, p->a_sqpsn);
	p->a_sqpsn = (p->a_sqpsn + 1) & 0xffffff;
	p->stalled = 1;
	return true;
}

static bool cmd_err(int i)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	return ok(!ibv_modify_qp(pairs[i].qa, &a, IBV_QP_STATE), "pair %d: A to ERROR", i);
}

/*
 * F1: the READ's lkey is re-resolved at placement. Whatever MR carries
 * that key by then must not receive the response.
 */
static bool cmd_f1(void)
{
	struct ibv_cq *cqa = ibv_create_cq(da.ctx, 16, NULL, NULL, 0);
	struct ibv_cq *cqb = ibv_create_cq(db->ctx, 16, NULL, NULL, 0);
	uint8_t *src = zalloc(4096, 0xc3), *buf1 = zalloc(4096, 0), *buf2 = zalloc(4096, 0x77);
	uint8_t *brecv = zalloc(4096, 0), *tiny = zalloc(4096, 0x42);
	struct ibv_mr *msrc, *mrecv, *mtiny, *mr1, *mr2 = NULL;
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc[2];
	struct timespec t0;
	uint32_t lkey;
	int tries = 0, rc, got = 0, n;
	bool good, matched = false;
	size_t at;

	if (!cqa || !cqb)
		bail("ibv_create_cq");
	qa = qp_new(&da, cqa);
	qb = qp_new(db, cqb);
	msrc = reg(db, src, 4096, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	mrecv = reg(db, brecv, 4096, IBV_ACCESS_LOCAL_WRITE);
	mtiny = reg(&da, tiny, 4096, IBV_ACCESS_LOCAL_WRITE);
	connect2(qa, &da, 0x10, qb, db, 0x20);
	/* MR1 last: its index is the lowest free one when it goes */
	mr1 = reg(&da, buf1, 4096, IBV_ACCESS_LOCAL_WRITE);
	lkey = mr1->lkey;

	/* B has no receive: the SEND is RNR NAKed, the READ behind it waits */
	if (post_send(qa, IBV_WR_SEND, tiny, 16, mtiny->lkey, 0, 0, 1))
		bail("post_send f1");
	if (post_send(qa, IBV_WR_RDMA_READ, buf1, 256, lkey, (uintptr_t)src,
		      msrc->rkey, 2))
		bail("post_send READ f1");
	rc = ibv_dereg_mr(mr1);
	diag("f1: READ outstanding into lkey 0x%x; ibv_dereg_mr of its MR: %s", lkey,
	     rc ? strerror(rc) : "done");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (!rc && tries < 4096 && ms_since(&t0) < 4000) {
		if (mr2)
			ibv_dereg_mr(mr2);
		tries++;
		mr2 = ibv_reg_mr_iova(da.pd, buf2, 4096, (uintptr_t)buf1,
				      IBV_ACCESS_LOCAL_WRITE);
		if (!mr2)
			bail("ibv_reg_mr_iova");
		if (mr2->lkey == lkey) {
			matched = true;
			break;
		}
	}
	diag("f1: %d registrations in %ld ms: %s", tries, ms_since(&t0),
	     matched ? "a new MR (other memory, iova = the READ's address) now has the old lkey" :
	     "the old lkey did not come back");

	/* let B take the SEND: the READ runs, its response comes back */
	if (post_recv(qb, brecv, 4096, mrecv->lkey, 9))
		bail("post_recv f1");
	while (got < 2 && (n = poll_wait(cqa, &wc[got], 10000)) > 0)
		got += n;
	diag("f1: SEND %s, READ %s", got > 0 ? wcs(&wc[0]) : "no completion",
	     got > 1 ? wcs(&wc[1]) : "no completion");
	good = untouched(buf2, 4096, 0x77, &at);
	if (!good)
		diag("f1: the MR now holding lkey 0x%x was written at byte %zu: %02x"
		     " (the READ's data is %02x)", lkey, at, buf2[at], src[0]);
	ok(good, "f1: READ response for a deregistered lkey not placed in the MR that has the key now");

	{
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

		ibv_modify_qp(qa, &a, IBV_QP_STATE);
		ibv_modify_qp(qb, &a, IBV_QP_STATE);
	}
	ibv_destroy_qp(qa);
	ibv_destroy_qp(qb);
	if (mr2)
		ibv_dereg_mr(mr2);
	ibv_dereg_mr(msrc);
	ibv_dereg_mr(mrecv);
	ibv_dereg_mr(mtiny);
	ibv_destroy_cq(cqa);
	ibv_destroy_cq(cqb);
	return good;
}

static int pair_arg(const char *s)
{
	int i = atoi(s);

	return i >= 0 && i < npairs ? i : -1;
}

static void serve(void)
{
	char line[256], cmd[32], a1[32] = "", a2[32] = "", a3[32] = "";
	bool good;
	int i;

	while (fgets(line, sizeof(line), stdin)) {
		int before = ktap_nfailed;

		a1[0] = a2[0] = a3[0] = 0;
		if (sscanf(line, "%31s %31s %31s %31s", cmd, a1, a2, a3) < 1)
			continue;
		i = pair_arg(a1);
		if (!strcmp(cmd, "quit")) {
			break;
		} else if (!strcmp(cmd, "f1")) {
			good = cmd_f1();
		} else if (i < 0) {
			diag("bad command or pair: %s", line);
			good = false;
		} else if (!strcmp(cmd, "check")) {
			good = check_quiet(i, false) & check_traffic(i);
			print_state(i);
		} else if (!strcmp(cmd, "quiet")) {
			good = check_quiet(i, true);
		} else if (!strcmp(cmd, "recv")) {
			good = cmd_recv(i, (uint32_t)strtoul(a2, NULL, 0),
					(int)strtol(a3, NULL, 0));
		} else if (!strcmp(cmd, "stall")) {
			good = cmd_stall(i);
		} else if (!strcmp(cmd, "err")) {
			good = cmd_err(i);
		} else {
			diag("unknown command: %s", cmd);
			good = false;
		}
		printf("done %s %s\n", cmd, good && ktap_nfailed == before ? "ok" : "fail");
		fflush(stdout);
	}
}

int main(int argc, char **argv)
{
	const char *dev_a = NULL, *dev_b = NULL;
	int gid_a = -1, gid_b = -1, c, i;
	struct timespec t0;
	bool huge = false;

	seed = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull ^ (uint64_t)time(NULL);
	while ((c = getopt(argc, argv, "d:g:D:G:n:Hm:s:")) != -1) {
		switch (c) {
		case 'd': dev_a = optarg; break;
		case 'g': gid_a = atoi(optarg); break;
		case 'D': dev_b = optarg; break;
		case 'G': gid_b = atoi(optarg); break;
		case 'n': npairs = atoi(optarg); break;
		case 'H': huge = true; break;
		case 'm':
			switch (atoi(optarg)) {
			case 256: mtu = IBV_MTU_256; break;
			case 512: mtu = IBV_MTU_512; break;
			case 1024: mtu = IBV_MTU_1024; break;
			case 2048: mtu = IBV_MTU_2048; break;
			case 4096: mtu = IBV_MTU_4096; break;
			default: bail("-m: 256..4096");
			}
			break;
		case 's': seed = strtoull(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: %s -d DEV_A -g GID_A [-D DEV_B -G GID_B]"
				" [-n PAIRS] [-H] [-m MTU] [-s SEED]\n", argv[0]);
			return 2;
		}
	}
	if (!dev_a || gid_a < 0 || npairs < 1 || npairs > MAX_PAIRS)
		bail("need -d DEV_A -g GID_A, 1 <= -n <= %d", MAX_PAIRS);
	dev_open(&da, dev_a, gid_a);
	if (dev_b && strcmp(dev_b, dev_a)) {
		dev_open(db, dev_b, gid_b < 0 ? gid_a : gid_b);
	} else {
		db = &da;	/* loopback: one device, one PD */
	}
	if (huge) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		huge_new();
		diag("4 GiB MR registered in %ld ms", ms_since(&t0));
		printf("state HUGE_RKEY=%u HUGE_VA=%" PRIu64 " HUGE_LEN=%llu\n",
		       huge_mr ? huge_mr->rkey : 0, (uint64_t)(uintptr_t)huge_va,
		       HUGE_LEN);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < npairs; i++)
		pair_new(i);
	diag("%d pairs connected in %ld ms", npairs, ms_since(&t0));
	/* warm-up: each pair's connection works, A has requests to duplicate */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < npairs; i++) {
		if (!check_traffic(i))
			bail("pair %d: the first real traffic failed", i);
		print_state(i);
	}
	diag("first traffic on every pair in %ld ms", ms_since(&t0));
	printf("ready\n");
	fflush(stdout);
	serve();
	return ktap_done();
}

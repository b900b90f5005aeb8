// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * keys: memory keys deregistered while work still names them (security
 * review F1/F6). One device, a pair of RC QPs connected to each other
 * (A requester, B responder). In each case an MR that outstanding work
 * names is deregistered, and new MRs are registered on the same iova
 * (an index reused lowest-free, as before cyclic allocation, brings
 * back the old key byte after ~256 tries: the loop keeps registering
 * until the key matches or gives up). Then the work proceeds. It must
 * fail with an error status, and the new MR's bytes must be untouched
 * (not written, not read out):
 *   - read-lkey: A's READ names local MR X; B is still in RESET (the
 *     request is dropped); X is deregistered, Y registered at X's iova;
 *     B comes up, A retransmits, the response arrives: the READ fails
 *     (IBV_WC_LOC_PROT_ERR), Y keeps its bytes
 *   - send-lkey: the same with a SEND gathering from X: the SEND fails,
 *     B receives none of Y's bytes (and no zeros)
 *   - write-rkey: a 16 MiB WRITE to B's MR W; W is deregistered while
 *     the WRITE is open at B and W' registered at W's iova: the WRITE
 *     fails (IBV_WC_REM_ACCESS_ERR), W' keeps its bytes
 *   - read-rkey: a 16 MiB READ of B's MR Z; Z is deregistered while the
 *     response is paced out and Z' registered at Z's iova: the READ fails
 *     (IBV_WC_REM_ACCESS_ERR), A's buffer holds neither Z' bytes nor
 *     zeros (no response is sent as zeros)
 * and first that key indices are allocated cyclically (a deregistered
 * MR's index is not the next one handed out).
 *
 * Usage: keys -d DEV -g GID_INDEX [-D DEV_B -G GID_INDEX_B]: B on another
 * device (the netns pair), else both on DEV. Prints KTAP; exits non-zero
 * on failure.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "rc_conn.h"
#include "timing.h"

#define SMALL		4096
#define BIG		(16u << 20)
#define TRIES		1024	/* re-registrations looking for the old key */

#define PAT_OLD		0x55	/* the deregistered MR's bytes */
#define PAT_NEW		0xaa	/* the new MR's bytes: must stay */
#define PAT_DST		0x11	/* a destination's bytes before the work */

static const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		      IBV_ACCESS_REMOTE_READ;

/* [0] for A, [1] for B (the same device when no -D) */
static struct ibv_context *ctx[2];
static struct ibv_pd *pd[2];
static union ibv_gid gid[2];
static int gid_idx[2];
static uint32_t next_psn = 300;

struct side {
	int k;		/* 0: A, 1: B */
	struct ibv_qp *qp;
	struct ibv_cq *cq;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * One completion on @cq within @secs (scaled to this machine); false
 * (status GENERAL_ERR) if none.
 */
static bool poll1(struct ibv_cq *cq, struct ibv_wc *wc, double secs)
{
	double end = now() + tmo(secs);
	int n;

	do {
		n = ibv_poll_cq(cq, 1, wc);
		if (n > 0)
			return true;
	} while (n == 0 && now() < end);
	memset(wc, 0, sizeof(*wc));
	wc->status = IBV_WC_GENERAL_ERR;
	return false;
}

static int side_init(struct side *s, int k)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	memset(s, 0, sizeof(*s));
	s->k = k;
	s->cq = ibv_create_cq(ctx[k], 64, NULL, NULL, 0);
	if (!s->cq)
		return -1;
	ia.send_cq = s->cq;
	ia.recv_cq = s->cq;
	s->qp = ibv_create_qp(pd[k], &ia);
	return s->qp ? 0 : -1;
}

static void side_fini(struct side *s)
{
	if (s->qp)
		ibv_destroy_qp(s->qp);
	if (s->cq)
		ibv_destroy_cq(s->cq);
}

/* @timeout: long enough for A to outlast the re-registration loop (scaled). */
static int to_rts(struct side *s, uint32_t dqpn, uint8_t timeout)
{
	struct rc_conn c = {
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.mtu = IBV_MTU_1024, .dqpn = dqpn, .dgid = gid[!s->k],
		.sgid_index = gid_idx[s->k], .rq_psn = next_psn, .sq_psn = next_psn,
		.rd_atomic = 4, .min_rnr_timer = 12,
		.timeout = timeout_exp(timeout),
		.retry_cnt = 7, .rnr_retry = 7,
	};

	return rc_qp_to_rts(s->qp, &c) ? -1 : 0;
}

static void pair_init(struct side *a, struct side *b)
{
	next_psn = (next_psn + 0x10000) & 0xffffff;
	if (side_init(a, 0) || side_init(b, 1)) {
		printf("Bail out! cannot create a QP pair: %s\n", strerror(errno));
		exit(1);
	}
}

static void *buf_alloc(size_t len, int pat)
{
	void *p = aligned_alloc(4096, len);

	if (!p) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	memset(p, pat, len);
	return p;
}

/* Every byte of @p is one of @a, @b; the first that is not, else -1. */
static long bytes_only(const uint8_t *p, size_t len, int a, int b)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != a && p[i] != b)
			return i;
	return -1;
}

/*
 * Register @len bytes at @buf under @iova until the key equals @old (an
 * index handed out again with the same key byte) or TRIES ran out; the
 * last MR stays registered. *@hit: the old key came back.
 */
static struct ibv_mr *reg_again(struct ibv_pd *p, void *buf, size_t len,
				uint64_t iova,
				uint32_t old, bool remote, bool *hit)
{
	struct ibv_mr *mr = NULL;
	int i;

	for (i = 0; i < TRIES; i++) {
		if (mr)
			ibv_dereg_mr(mr);
		mr = ibv_reg_mr_iova(p, buf, len, iova, rw);
		if (!mr)
			return NULL;
		if ((remote ? mr->rkey : mr->lkey) == old)
			break;
	}
	*hit = mr && (remote ? mr->rkey : mr->lkey) == old;
	return mr;
}

/* read-lkey / send-lkey: the requester's local MR goes while queued. */
static void test_lkey(bool send)
{
	const char *name = send ? "send-lkey" : "read-lkey";
	uint8_t *bx = buf_alloc(SMALL, PAT_OLD), *by = buf_alloc(SMALL, PAT_NEW);
	uint8_t *bb = buf_alloc(SMALL, send ? PAT_DST : PAT_OLD);
	struct ibv_mr *x, *y, *mb;
	struct side a, b;
	struct ibv_sge sge, rsge;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_recv_wr rwr = { .wr_id = 2, .sg_list = &rsge, .num_sge = 1 };
	struct ibv_send_wr *bad;
	struct ibv_recv_wr *rbad;
	struct ibv_wc wc, rwc;
	uint32_t old;
	bool hit = false, got, rgot = false;
	long at;

	pair_init(&a, &b);
	x = ibv_reg_mr(pd[0], bx, SMALL, rw);
	mb = ibv_reg_mr(pd[1], bb, SMALL, rw);
	/* B stays in RESET: A's packets are dropped until it comes up */
	if (!x || !mb || to_rts(&a, b.qp->qp_num, 18)) {
		printf("Bail out! %s: setup: %s\n", name, strerror(errno));
		exit(1);
	}
	sge = (struct ibv_sge){ .addr = (uintptr_t)bx, .length = SMALL,
				.lkey = x->lkey };
	wr.opcode = send ? IBV_WR_SEND : IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = (uintptr_t)bb;
	wr.wr.rdma.rkey = mb->rkey;
	if (ibv_post_send(a.qp, &wr, &bad)) {
		printf("Bail out! %s: post: %s\n", name, strerror(errno));
		exit(1);
	}
	old = x->lkey;
	ok(!ibv_dereg_mr(x), "%s: dereg of an MR a queued WQE names", name);
	y = reg_again(pd[0], by, SMALL, (uintptr_t)bx, old, false, &hit);
	printf("# %s: old lkey %#x %s\n", name, old,
	       hit ? "came back on a new MR" : "not handed out again");
	if (!y || to_rts(&b, a.qp->qp_num, 14)) {
		printf("Bail out! %s: B up: %s\n", name, strerror(errno));
		exit(1);
	}
	if (send) {
		memset(bb, PAT_DST, SMALL);
		rsge = (struct ibv_sge){ .addr = (uintptr_t)bb, .length = SMALL,
					 .lkey = mb->lkey };
		ibv_post_recv(b.qp, &rwr, &rbad);
	}
	got = poll1(a.cq, &wc, 60);
	ok(got && wc.status != IBV_WC_SUCCESS,
	   "%s: the WQE fails once its MR is gone (status %s)", name,
	   got ? ibv_wc_status_str(wc.status) : "none");
	if (got)
		printf("# %s: status %d\n", name, wc.status);
	at = bytes_only(by, SMALL, PAT_NEW, PAT_NEW);
	ok(at < 0, "%s: the new MR's bytes are untouched (first change at %ld)",
	   name, at);
	if (send) {
		rgot = poll1(b.cq, &rwc, 1);
		at = bytes_only(bb, SMALL, PAT_DST, PAT_DST);
		ok(at < 0 && !(rgot && rwc.status == IBV_WC_SUCCESS),
		   "%s: nothing received: not the new MR's bytes, not zeros (first change at %ld)",
		   name, at);
	}
	side_fini(&a);
	side_fini(&b);
	ibv_dereg_mr(y);
	ibv_dereg_mr(mb);
	free(bx);
	free(by);
	free(bb);
}

/*
 * write-rkey / read-rkey: the responder's MR goes while an open WRITE
 * context or a READ resource names it.
 */
static void test_rkey(bool read)
{
	const char *name = read ? "read-rkey" : "write-rkey";
	uint8_t *ba = buf_alloc(BIG, read ? PAT_DST : PAT_OLD);
	uint8_t *bw = buf_alloc(BIG, read ? PAT_OLD : PAT_DST);
	uint8_t *bn = buf_alloc(BIG, PAT_NEW);
	struct ibv_mr *ma, *w, *n;
	struct side a, b;
	struct ibv_sge sge;
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	bool hit = false, got, early;
	uint32_t old;
	long at;

	pair_init(&a, &b);
	ma = ibv_reg_mr(pd[0], ba, BIG, rw);
	w = ibv_reg_mr(pd[1], bw, BIG, rw);
	if (!ma || !w || to_rts(&a, b.qp->qp_num, 14) ||
	    to_rts(&b, a.qp->qp_num, 14)) {
		printf("Bail out! %s: setup: %s\n", name, strerror(errno));
		exit(1);
	}
	sge = (struct ibv_sge){ .addr = (uintptr_t)ba, .length = BIG,
				.lkey = ma->lkey };
	wr.opcode = read ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = (uintptr_t)bw;
	wr.wr.rdma.rkey = w->rkey;
	old = w->rkey;
	if (ibv_post_send(a.qp, &wr, &bad)) {
		printf("Bail out! %s: post: %s\n", name, strerror(errno));
		exit(1);
	}
	early = ibv_poll_cq(a.cq, 1, &wc) > 0;
	ok(!ibv_dereg_mr(w), "%s: dereg of an MR the peer is %s", name,
	   read ? "reading" : "writing");
	n = reg_again(pd[1], bn, BIG, (uintptr_t)bw, old, true, &hit);
	printf("# %s: old rkey %#x %s\n", name, old,
	       hit ? "came back on a new MR" : "not handed out again");
	got = early || poll1(a.cq, &wc, 120);
	if (early)
		ktap_skip("completed before the dereg", "%s: the message fails",
			  name);
	else
		ok(got && wc.status != IBV_WC_SUCCESS,
		   "%s: the message fails once the MR is gone (status %s)",
		   name, got ? ibv_wc_status_str(wc.status) : "none");
	at = bytes_only(bn, BIG, PAT_NEW, PAT_NEW);
	ok(!n || at < 0,
	   "%s: the new MR's bytes are untouched (first change at %ld)",
	   name, at);
	if (read) {
		at = bytes_only(ba, BIG, PAT_OLD, PAT_DST);
		ok(at < 0,
		   "%s: the reader got no zeros and none of the new MR's bytes (first at %ld: %#x)",
		   name, at, at < 0 ? 0 : ba[at]);
	}
	side_fini(&a);
	side_fini(&b);
	if (n)
		ibv_dereg_mr(n);
	ibv_dereg_mr(ma);
	free(ba);
	free(bw);
	free(bn);
}

/* cyclic: a freed key index is not the next one handed out */
static void test_cyclic(void)
{
	uint8_t *buf = buf_alloc(SMALL, 0);
	struct ibv_mr *a = ibv_reg_mr(pd[0], buf, SMALL, rw), *b;
	uint32_t old = a ? a->lkey : 0;

	if (a)
		ibv_dereg_mr(a);
	b = ibv_reg_mr(pd[0], buf, SMALL, rw);
	ok(a && b && (b->lkey >> 8) != (old >> 8),
	   "cyclic: a deregistered key's index is not reused at once (%#x, then %#x)",
	   old, b ? b->lkey : 0);
	if (b)
		ibv_dereg_mr(b);
	free(buf);
}

/* Open @name (NULL: the first device) as side @k. */
static void open_side(struct ibv_device **list, int nd, const char *name,
		      int k)
{
	int i;

	for (i = 0; list && i < nd; i++)
		if (!name || !strcmp(ibv_get_device_name(list[i]), name))
			break;
	if (!list || i == nd) {
		printf("Bail out! no device %s\n", name ? name : "");
		exit(1);
	}
	ctx[k] = ibv_open_device(list[i]);
	if (!ctx[k] || ibv_query_gid(ctx[k], 1, gid_idx[k], &gid[k])) {
		printf("Bail out! cannot open %s\n", ibv_get_device_name(list[i]));
		exit(1);
	}
	pd[k] = ibv_alloc_pd(ctx[k]);
	if (!pd[k]) {
		printf("Bail out! no PD on %s\n", ibv_get_device_name(list[i]));
		exit(1);
	}
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *dev_b = NULL;
	struct ibv_device **list;
	int nd, ch;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((ch = getopt(argc, argv, "d:g:D:G:")) != -1) {
		if (ch == 'd')
			dev = optarg;
		else if (ch == 'g')
			gid_idx[0] = atoi(optarg);
		else if (ch == 'D')
			dev_b = optarg;
		else if (ch == 'G')
			gid_idx[1] = atoi(optarg);
	}
	printf("TAP version 13\n# suite: keys\n");
	list = ibv_get_device_list(&nd);
	open_side(list, nd, dev, 0);
	if (dev_b && (!dev || strcmp(dev, dev_b))) {
		open_side(list, nd, dev_b, 1);
	} else {
		ctx[1] = ctx[0];
		pd[1] = pd[0];
		gid[1] = gid[0];
		gid_idx[1] = gid_idx[0];
	}
	test_cyclic();
	test_lkey(false);
	test_lkey(true);
	test_rkey(false);
	test_rkey(true);
	ok(!ibv_dealloc_pd(pd[0]), "pd: nothing left on it");
	if (pd[1] != pd[0])
		ibv_dealloc_pd(pd[1]);
	ibv_close_device(ctx[0]);
	if (ctx[1] != ctx[0])
		ibv_close_device(ctx[1]);
	ibv_free_device_list(list);
	return ktap_done();
}

// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * limits: what one verbs user can do to the kernel through softrc, and
 * the limits it meets (security review of 0d7acba: F3, F4, F7, F9, H7).
 *
 * Usage: limits DEV SECTION [ARGS]   (prints KTAP; exit 1 on a failure)
 *   spin_sq SECS	a thread keeps moving the SQ producer index of a QP in
 *			ERROR (the ring found through /proc/self/maps) while
 *			another rings the doorbell: every doorbell returns at
 *			once (the kernel bounds its work per call)
 *   spin_rq SECS	the same on the RQ ring, while another thread moves
 *			the QP RESET -> INIT -> ERROR (the flush) over and over;
 *			first, one move to ERROR with the ring full (limits.sh
 *			counts the entries each flush call takes)
 *   overrun		a CQ of 1 entry gets several completions of a
 *			self-connected QP: one IB_EVENT_CQ_ERR, one
 *			IB_EVENT_QP_FATAL, the QP in ERROR, no more events
 *   caps QP CQ PD MR SRQ UQP UCQ UPD UMR USRQ  query_device reports the
 *			first five limits and each is enforced exactly
 *			(ENOMEM past it), counting the U* objects others
 *			already hold (rdma resource); queue depths never
 *			exceed max_qp_wr / max_cqe / max_srq_wr
 *   memcg FILE		a big QP is charged to the memory cgroup whose
 *			memory.current is FILE
 *   hold SECS		holds a PD, MR, CQ and QP, prints "ready", waits up to
 *			SECS for IBV_EVENT_DEVICE_FATAL (the device is
 *			removed meanwhile), then verbs fail and it exits
 *   udata		an extended QUERY_DEVICE with zeroed driver data works
 *   resgrow		responder resources follow max_dest_rd_atomic (the
 *			QP's debugfs dump, mounted, says how many): none at
 *			create, 1 at an RTR with 1, 16 after RESET and an RTR
 *			with 16, 32 after an SQD -> SQD modify to 32 (16 live
 *			ones released), 4 of the 32 after one to 4; READs to
 *			itself at each step, every byte checked
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_rxe.h>

#include "ktap.h"
#include "rc_conn.h"
#include "timing.h"

static struct ibv_context *ctx;
static struct ibv_device_attr dattr;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- rings ------------------------------------------------------------ */

#define MAX_MAPS 256

/* Start addresses of this process's uverbs mappings. */
static int uverbs_maps(uintptr_t *start, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (n < max && fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (strstr(line, "/dev/infiniband/uverbs") &&
		    sscanf(line, "%lx-%lx", &s, &e) == 2)
			start[n++] = s;
	}
	fclose(f);
	return n;
}

/*
 * The rxe_queue_buf mapped after @before was taken whose index_mask is
 * @mask (librxe maps the SQ and RQ rings at create_qp).
 */
static struct rxe_queue_buf *new_ring(const uintptr_t *before, int nb,
				      uint32_t mask)
{
	uintptr_t after[MAX_MAPS];
	int na = uverbs_maps(after, MAX_MAPS);

	for (int i = 0; i < na; i++) {
		bool old = false;

		for (int j = 0; j < nb; j++)
			old |= after[i] == before[j];
		if (!old && ((struct rxe_queue_buf *)after[i])->index_mask == mask)
			return (struct rxe_queue_buf *)after[i];
	}
	return NULL;
}

/* The rxe doorbell (POST_SEND with no WR), bypassing the provider. */
static int doorbell(struct ibv_qp *qp)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} req = {};
	struct ib_uverbs_post_send_resp resp;

	req.hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	req.hdr.in_words = sizeof(req) / 4;
	req.hdr.out_words = sizeof(resp) / 4;
	req.cmd.response = (uintptr_t)&resp;
	req.cmd.qp_handle = qp->handle;
	req.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
	return write(ctx->cmd_fd, &req, sizeof(req)) == sizeof(req) ? 0 : errno;
}

struct spinner {
	struct rxe_queue_buf *ring;
	double until;
	atomic_ulong moves;
};

/* Keep the ring "full" from the kernel's view: producer = consumer - 1. */
static void *spin_producer(void *arg)
{
	struct spinner *s = arg;
	uint32_t mask = s->ring->index_mask;
	unsigned long n = 0;

	while (now() < s->until) {
		for (int i = 0; i < 1000; i++) {
			uint32_t c = __atomic_load_n(&s->ring->consumer_index,
						     __ATOMIC_ACQUIRE);

			__atomic_store_n(&s->ring->producer_index, (c + mask) & mask,
					 __ATOMIC_RELEASE);
		}
		n++;
	}
	atomic_store(&s->moves, n);
	return NULL;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int to_state(struct ibv_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* The index_mask of a ring asked to hold @n: roundup_pow_of_two(n + 1) - 1 */
static uint32_t ring_mask(uint32_t n)
{
	uint32_t slots = 1;

	while (slots < n + 1)
		slots <<= 1;
	return slots - 1;
}

/*
 * A user QP and both its rings, told apart by depth: the one to attack
 * is as deep as allowed (the longer the kernel takes to catch up with
 * the producer index, the surer an unbounded loop never does), the
 * other 4095.
 */
static struct ibv_qp *ring_qp(struct ibv_pd *pd, struct ibv_cq *cq, bool deep_sq,
			      struct rxe_queue_buf **sq, struct rxe_queue_buf **rq)
{
	uint32_t deep = dattr.max_qp_wr, other = 4095;
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = deep_sq ? deep : other,
			 .max_recv_wr = deep_sq ? other : deep,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	uintptr_t before[MAX_MAPS];
	int nb = uverbs_maps(before, MAX_MAPS);
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp)
		return NULL;
	*sq = new_ring(before, nb, ring_mask(deep_sq ? deep : other));
	*rq = new_ring(before, nb, ring_mask(deep_sq ? other : deep));
	return qp;
}

/* Ring entries the kernel consumed since consumer index @from. */
static uint32_t consumed_since(const struct rxe_queue_buf *ring, uint32_t from)
{
	return (__atomic_load_n(&ring->consumer_index, __ATOMIC_ACQUIRE) - from) &
	       ring->index_mask;
}

/*
 * One INIT -> ERROR with @rq full (index_mask entries) and its producer
 * index left alone: a flush call that bounds its work leaves most of a
 * deep ring to later calls; one that loops until the ring is empty, under
 * the QP lock, takes all of it at once, and with a producer that keeps
 * moving never returns (security review F3). limits.sh counts the entries
 * per flush call in the kernel (kmod/softrc_rqflush_test.ko); what the
 * call had flushed when it returned is only reported here: the flush
 * carries on in softirq context, on this CPU, as the call returns, by an
 * amount that depends on the CPU's speed.
 */
static void rq_one_call(struct ibv_qp *qp, struct rxe_queue_buf *rq)
{
	uint32_t mask = rq->index_mask, c, n;
	double t;

	if (!ok(!to_init(qp), "rq: QP to INIT"))
		return;
	c = __atomic_load_n(&rq->consumer_index, __ATOMIC_ACQUIRE);
	__atomic_store_n(&rq->producer_index, (c + mask) & mask, __ATOMIC_RELEASE);
	t = now();
	if (!ok(!to_state(qp, IBV_QPS_ERR), "rq: QP to ERROR with %u entries in the RQ ring",
		mask))
		return;
	n = consumed_since(rq, c);
	t = now() - t;
	printf("# rq: the call to ERROR returned after %.3f s, %u of the %u entries flushed\n",
	       t, n, mask);
	/* the rest drains in the background; RESET for the spinning part */
	ok(!to_state(qp, IBV_QPS_RESET), "rq: QP to RESET");
}

static void test_spin(bool sq_side, int secs)
{
	const char *w = sq_side ? "sq" : "rq";
	struct rxe_queue_buf *sq = NULL, *rq = NULL;
	struct spinner s = {};
	double worst = 0, t;
	struct ibv_qp *qp;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	pthread_t th;
	long calls = 0;
	int err = 0;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, dattr.max_cqe, NULL, NULL, 0);
	qp = pd && cq ? ring_qp(pd, cq, sq_side, &sq, &rq) : NULL;
	if (!ok(qp, "%s: a user QP", w))
		return;
	if (!ok(sq && rq, "%s: its SQ and RQ rings found in /proc/self/maps", w))
		return;
	if (sq_side)
		ok(!to_init(qp) && !to_state(qp, IBV_QPS_ERR), "%s: QP to ERROR", w);
	else
		rq_one_call(qp, rq);
	s.ring = sq_side ? sq : rq;
	s.until = now() + secs;
	pthread_create(&th, NULL, spin_producer, &s);
	while (now() < s.until) {
		t = now();
		if (sq_side) {
			err |= doorbell(qp);
		} else {
			err |= to_init(qp) || to_state(qp, IBV_QPS_ERR);
			err |= to_state(qp, IBV_QPS_RESET);
		}
		t = now() - t;
		if (t > worst)
			worst = t;
		calls++;
	}
	pthread_join(th, NULL);
	ok(!err, "%s: %ld %s calls while the producer index moved", w, calls,
	   sq_side ? "doorbell" : "INIT/ERROR/RESET");
	ok(atomic_load(&s.moves) > 0, "%s: the spinning thread ran (%lu x 1000 moves)",
	   w, atomic_load(&s.moves));
	/*
	 * Only reported: under TCG a bounded call that is preempted or
	 * shares its CPU with the spinner can still take seconds of wall
	 * time. What an unbounded loop cannot escape is the soft-lockup
	 * detector (limits.sh sets watchdog_thresh 2): no BH-off CPU may be
	 * stuck for 4 s, which limits.sh checks in dmesg.
	 */
	printf("# %s: the longest call took %.3f s\n", w, worst);
	/* drained once the index stops: the QP still works as an object */
	usleep(200000);
	ok(!ibv_destroy_qp(qp), "%s: destroy the QP", w);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* ---- async events ---------------------------------------------------- */

/* Count async events of each type for @ms (scaled to this machine). */
static int count_events(int ms, int *counts, int ncounts)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	double end = now() + tmo(ms / 1000.0);
	int total = 0;

	while (now() < end) {
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			continue;
		if ((int)ev.event_type < ncounts)
			counts[ev.event_type]++;
		total++;
		ibv_ack_async_event(&ev);
	}
	return total;
}

static int find_gid4(int *index, union ibv_gid *gid)
{
	struct ibv_gid_entry e[64];
	ssize_t n = ibv_query_gid_table(ctx, e, 64, 0);

	for (ssize_t i = 0; i < n; i++) {
		if (e[i].gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    memcmp(e[i].gid.raw, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12))
			continue;
		*index = e[i].gid_index;
		*gid = e[i].gid;
		return 0;
	}
	return -1;
}

/*
 * Connect RC @qp to itself over the first IPv4-mapped RoCE v2 GID with
 * @access and @rd_atomic both ways; *@c keeps the connection for a later
 * RESET and reconnect. Return: 0, or -1.
 */
static int self_connect(struct ibv_qp *qp, int access, uint8_t rd_atomic,
			struct rc_conn *c)
{
	union ibv_gid gid;
	int gidx;

	if (find_gid4(&gidx, &gid))
		return -1;
	*c = (struct rc_conn){
		.access = access, .mtu = IBV_MTU_1024,
		.dqpn = qp->qp_num, .dgid = gid, .sgid_index = gidx,
		.rd_atomic = rd_atomic, .min_rnr_timer = 1,
		.timeout = timeout_exp(14), .retry_cnt = 7, .rnr_retry = 7,
	};
	return rc_qp_to_rts(qp, c) ? -1 : 0;
}

static int post_write(struct ibv_qp *qp, struct ibv_mr *mr, int n)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { (uintptr_t)mr->addr, 8, mr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = { (uintptr_t)mr->addr + 64, mr->rkey },
		}, *bad;
		int err = ibv_post_send(qp, &wr, &bad);

		if (err)
			return err;
	}
	return 0;
}

static void test_overrun(void)
{
	static char buf[4096];
	int counts[64] = {}, total;
	struct ibv_qp_init_attr ia = {};
	struct ibv_qp_attr qa;
	struct ibv_cq *cq, *rcq;
	struct rc_conn c = {};
	struct ibv_wc wc[8];
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	int n;

	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE |
			     IBV_ACCESS_REMOTE_WRITE) : NULL;
	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!ok(mr && cq && rcq && cq->cqe == 1, "overrun: PD, MR, a CQ of 1 entry"))
		return;
	ia = (struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = rcq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	qp = ibv_create_qp(pd, &ia);
	if (!ok(qp && !self_connect(qp, IBV_ACCESS_REMOTE_WRITE, 1, &c),
		"overrun: a QP connected to itself, RTS"))
		return;
	ok(!post_write(qp, mr, 4), "overrun: post 4 signaled RDMA WRITEs");
	total = count_events(3000, counts, 64);
	ok(counts[IBV_EVENT_CQ_ERR] == 1, "overrun: exactly one IBV_EVENT_CQ_ERR (%d)",
	   counts[IBV_EVENT_CQ_ERR]);
	ok(counts[IBV_EVENT_QP_FATAL] == 1, "overrun: one IBV_EVENT_QP_FATAL (%d)",
	   counts[IBV_EVENT_QP_FATAL]);
	ok(total == 2, "overrun: no other events (%d in all)", total);
	memset(&qa, 0, sizeof(qa));
	n = ibv_query_qp(qp, &qa, IBV_QP_STATE, &ia);
	ok(!n && qa.qp_state == IBV_QPS_ERR, "overrun: the QP is in ERROR (state %d)",
	   qa.qp_state);
	n = ibv_poll_cq(cq, 8, wc);
	ok(n == 1 && wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 0,
	   "overrun: the CQ still polls the completion it holds (%d)", n);
	/* more completions to the overrun CQ: dropped, no new events */
	ok(!post_write(qp, mr, 4), "overrun: post 4 more (flushed)");
	memset(counts, 0, sizeof(counts));
	total = count_events(1500, counts, 64);
	ok(total == 0, "overrun: no event for completions to a CQ in error (%d)", total);
	n = ibv_poll_cq(cq, 8, wc);
	ok(n == 0, "overrun: nothing enters a CQ in error (%d)", n);
	ok(!ibv_destroy_qp(qp) && !ibv_destroy_cq(cq) && !ibv_destroy_cq(rcq),
	   "overrun: destroy QP and CQs");
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
}

/* ---- responder resources ------------------------------------------ */

#define RG_MAX		32		/* READs posted at once, at most */
#define RG_LEN		(8 * 1024)	/* 8 packets: 16 READs fill the window */

/*
 * Post @n signaled READs of RG_LEN: READ i copies the i-th slice of the
 * MR's upper half into the i-th slice of its lower half.
 */
static int post_reads(struct ibv_qp *qp, struct ibv_mr *mr, int n)
{
	uint8_t *base = mr->addr;

	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = {
			(uintptr_t)(base + (size_t)i * RG_LEN), RG_LEN, mr->lkey,
		};
		struct ibv_send_wr wr = {
			.wr_id = i, .sg_list = &sge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_READ, .send_flags = IBV_SEND_SIGNALED,
			.wr.rdma = {
				(uintptr_t)(base + (size_t)(RG_MAX + i) * RG_LEN),
				mr->rkey,
			},
		}, *bad;
		int err = ibv_post_send(qp, &wr, &bad);

		if (err)
			return err;
	}
	return 0;
}

/* Reap @n completions within 60 s. Return: how many succeeded. */
static int reap_ok(struct ibv_cq *cq, int n)
{
	double end = now() + tmo(60);
	int got = 0, good = 0, k;
	struct ibv_wc wc[8];

	while (got < n && now() < end) {
		k = ibv_poll_cq(cq, 8, wc);
		if (k < 0)
			break;
		for (int i = 0; i < k; i++)
			good += wc[i].status == IBV_WC_SUCCESS;
		got += k;
		if (!k)
			usleep(1000);
	}
	return good;
}

/*
 * The responder's resources in use and allocated, from the QP's debugfs
 * dump ([responder_resources] nres, res_cap). Return: 0, or -1.
 */
static int dbg_res(struct ibv_qp *qp, unsigned int *nres, unsigned int *cap)
{
	char path[256], line[128];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/debug/softrc/%s/qp/%u",
		 ibv_get_device_name(ctx->device), qp->qp_num);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		found += sscanf(line, "nres: %u", nres) == 1;
		found += sscanf(line, "res_cap: %u", cap) == 1;
	}
	fclose(f);
	return found == 2 ? 0 : -1;
}

/* Move a QP to @st with @mask's attributes of @a. */
static int rg_modify(struct ibv_qp *qp, enum ibv_qp_state st,
		     struct ibv_qp_attr *a, int mask)
{
	a->qp_state = st;
	return ibv_modify_qp(qp, a, IBV_QP_STATE | mask);
}

/* SQD -> SQD with both rd_atomic values @n, back to RTS. */
static int rg_sqd_set(struct ibv_qp *qp, int n)
{
	struct ibv_qp_attr a = { .max_rd_atomic = n, .max_dest_rd_atomic = n };

	return rg_modify(qp, IBV_QPS_SQD, &a, 0) ||
	       rg_modify(qp, IBV_QPS_SQD, &a, IBV_QP_MAX_QP_RD_ATOMIC |
			 IBV_QP_MAX_DEST_RD_ATOMIC) ||
	       rg_modify(qp, IBV_QPS_RTS, &a, 0);
}

/*
 * @n READs of RG_LEN in flight, every byte checked, and the responder's
 * resources as debugfs shows them: @nres in use, @cap allocated.
 */
static void rg_reads(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mr *mr,
		     int n, unsigned int nres, unsigned int cap)
{
	unsigned int dn = 0, dc = 0;
	uint8_t *buf = mr->addr;
	size_t half = RG_MAX * (size_t)RG_LEN;
	int good, err;

	memset(buf, 0, half);
	err = dbg_res(qp, &dn, &dc);
	ok(!err && dn == nres && dc == cap,
	   "resgrow: debugfs: nres %u, res_cap %u (want %u, %u)",
	   dn, dc, nres, cap);
	ok(!post_reads(qp, mr, n), "resgrow: post %d READs of %d KiB", n,
	   RG_LEN / 1024);
	good = reap_ok(cq, n);
	ok(good == n, "resgrow: %d of %d READs succeed", good, n);
	ok(!memcmp(buf, buf + half, n * (size_t)RG_LEN),
	   "resgrow: every byte of the %d READs is right", n);
}

static void test_resgrow(void)
{
	size_t len = 2 * RG_MAX * (size_t)RG_LEN;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa = {};
	struct rc_conn c;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	unsigned int dn = 1, dc = 1;
	uint8_t *buf;
	int err;

	buf = calloc(1, len);
	pd = ibv_alloc_pd(ctx);
	mr = buf && pd ? ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_READ) : NULL;
	cq = ibv_create_cq(ctx, 2 * RG_MAX, NULL, NULL, 0);
	if (!ok(mr && cq, "resgrow: PD, MR, CQ"))
		return;
	for (size_t i = len / 2; i < len; i++)
		buf[i] = (uint8_t)(i * 7 + (i >> 13));
	ia = (struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = RG_MAX, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	qp = ibv_create_qp(pd, &ia);
	if (!ok(qp, "resgrow: a QP"))
		return;
	err = dbg_res(qp, &dn, &dc);
	ok(!err && !dn && !dc,
	   "resgrow: debugfs: a new QP has no responder resources (%u, %u)",
	   dn, dc);
	if (!ok(!self_connect(qp, IBV_ACCESS_REMOTE_READ, 1, &c),
		"resgrow: the QP connected to itself, rd_atomic 1"))
		return;
	rg_reads(qp, cq, mr, 16, 1, 1);

	/* RESET keeps the storage; an RTR with 16 grows it */
	c.rd_atomic = 16;
	c.sq_psn = c.rq_psn = 1000;
	ok(!rg_modify(qp, IBV_QPS_RESET, &qa, 0) && !rc_qp_to_rts(qp, &c),
	   "resgrow: RESET, then RTR with max_dest_rd_atomic 16, RTS");
	rg_reads(qp, cq, mr, 16, 16, 16);

	/* SQD -> SQD to 32 while 16 resources are live: they are released */
	ok(!rg_sqd_set(qp, 32), "resgrow: RTS -> SQD -> SQD (32) -> RTS");
	memset(&qa, 0, sizeof(qa));
	err = ibv_query_qp(qp, &qa, IBV_QP_MAX_DEST_RD_ATOMIC, &ia);
	ok(!err && qa.max_dest_rd_atomic == 32,
	   "resgrow: query_qp says max_dest_rd_atomic 32 (%u)",
	   qa.max_dest_rd_atomic);
	rg_reads(qp, cq, mr, 32, 32, 32);

	/* down to 4: the storage stays, 4 of it in use */
	ok(!rg_sqd_set(qp, 4), "resgrow: RTS -> SQD -> SQD (4) -> RTS");
	rg_reads(qp, cq, mr, 16, 4, 32);

	ok(!ibv_destroy_qp(qp) && !ibv_destroy_cq(cq) && !ibv_dereg_mr(mr) &&
	   !ibv_dealloc_pd(pd), "resgrow: destroy QP, CQ, MR, PD");
	free(buf);
}

/* ---- caps ---------------------------------------------------------- */

/* Allocate until failure; 0 on the errno expected at exactly @max. */
#define FILL(what, arr, max, make, destroy) do {			\
	int _n = 0, _e = 0;						\
	for (; _n <= (max); _n++) {					\
		errno = 0;						\
		(arr)[_n] = (make);					\
		if (!(arr)[_n]) {					\
			_e = errno;					\
			break;						\
		}							\
	}								\
	ok(_n == (max) && _e == ENOMEM,					\
	   "caps: %d " what " of %d, then ENOMEM (errno %d)", _n, (max), _e);\
	if (_n > 0) {							\
		destroy((arr)[_n - 1]);					\
		(arr)[_n - 1] = (make);					\
		ok((arr)[_n - 1], "caps: one freed, one more " what);	\
		if (!(arr)[_n - 1])					\
			_n--;						\
	}								\
	while (_n-- > 0)						\
		destroy((arr)[_n]);					\
} while (0)

static void test_caps(int argc, char **argv)
{
	int qpn, cqn, pdn, mrn, srqn, max;
	static char buf[4096];
	void **objs;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	if (argc < 10) {
		ok(false, "caps: usage: caps QP CQ PD MR SRQ, then how many of each are in use");
		return;
	}
	qpn = atoi(argv[0]), cqn = atoi(argv[1]), pdn = atoi(argv[2]);
	mrn = atoi(argv[3]), srqn = atoi(argv[4]);
	ok(dattr.max_qp == qpn && dattr.max_cq == cqn && dattr.max_pd == pdn &&
	   dattr.max_mr == mrn && dattr.max_srq == srqn,
	   "caps: query_device reports max_qp %d max_cq %d max_pd %d max_mr %d max_srq %d",
	   dattr.max_qp, dattr.max_cq, dattr.max_pd, dattr.max_mr, dattr.max_srq);
	/*
	 * The limits are the device's, not this process's: what others hold
	 * (the MAD layer's QP1 with its PD and CQ) counts against them too.
	 */
	qpn -= atoi(argv[5]), cqn -= atoi(argv[6]), pdn -= atoi(argv[7]);
	mrn -= atoi(argv[8]), srqn -= atoi(argv[9]);
	printf("# free: %d QPs, %d CQs, %d PDs, %d MRs, %d SRQs\n",
	       qpn, cqn, pdn, mrn, srqn);
	max = qpn > cqn ? qpn : cqn;
	max = max > pdn ? max : pdn;
	max = max > mrn ? max : mrn;
	max = max > srqn ? max : srqn;
	objs = calloc(max + 2, sizeof(*objs));

	FILL("PDs", objs, pdn, ibv_alloc_pd(ctx), ibv_dealloc_pd);
	FILL("CQs", objs, cqn, ibv_create_cq(ctx, 1, NULL, NULL, 0), ibv_destroy_cq);

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!ok(pd && cq, "caps: a PD and a CQ for the rest"))
		return;
	FILL("MRs", objs, mrn, ibv_reg_mr(pd, buf, sizeof(buf), 0), ibv_dereg_mr);

	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	FILL("QPs", objs, qpn, ibv_create_qp(pd, &qa), ibv_destroy_qp);

	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 1, .max_sge = 1 } };
	FILL("SRQs", objs, srqn, ibv_create_srq(pd, &sa), ibv_destroy_srq);

	/* depths: what a ring of the maximum size really holds */
	qa.cap.max_send_wr = dattr.max_qp_wr;
	qa.cap.max_recv_wr = dattr.max_qp_wr;
	struct ibv_qp *qp = ibv_create_qp(pd, &qa);

	ok(qp && qa.cap.max_send_wr == (uint32_t)dattr.max_qp_wr &&
	   qa.cap.max_recv_wr == (uint32_t)dattr.max_qp_wr,
	   "caps: a QP of max_qp_wr %d holds exactly that (send %u recv %u)",
	   dattr.max_qp_wr, qa.cap.max_send_wr, qa.cap.max_recv_wr);
	if (qp)
		ibv_destroy_qp(qp);
	qa.cap.max_send_wr = dattr.max_qp_wr + 1;
	qa.cap.max_recv_wr = 1;
	errno = 0;
	qp = ibv_create_qp(pd, &qa);
	ok(!qp && errno == EINVAL, "caps: max_qp_wr + 1 -> EINVAL (errno %d)", errno);
	if (qp)
		ibv_destroy_qp(qp);

	struct ibv_cq *big = ibv_create_cq(ctx, dattr.max_cqe, NULL, NULL, 0);

	ok(big && big->cqe == dattr.max_cqe, "caps: a CQ of max_cqe %d holds exactly that (%d)",
	   dattr.max_cqe, big ? big->cqe : -1);
	if (big)
		ibv_destroy_cq(big);

	sa.attr.max_wr = dattr.max_srq_wr;
	struct ibv_srq *srq = ibv_create_srq(pd, &sa);

	ok(srq && sa.attr.max_wr == (uint32_t)dattr.max_srq_wr,
	   "caps: an SRQ of max_srq_wr %d holds exactly that (%u)",
	   dattr.max_srq_wr, sa.attr.max_wr);
	if (srq)
		ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	free(objs);
}

/* ---- memcg ------------------------------------------------------------ */

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

static void test_memcg(const char *current)
{
	struct ibv_qp_init_attr qa;
	long before, after;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (!ok(pd && cq, "memcg: a PD and a CQ"))
		return;
	qa = (struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = dattr.max_qp_wr, .max_recv_wr = dattr.max_qp_wr,
			 .max_send_sge = 32, .max_recv_sge = 32, .max_inline_data = 256 },
	};
	before = read_long(current);
	qp = ibv_create_qp(pd, &qa);
	after = read_long(current);
	if (!ok(qp && before >= 0 && after >= 0, "memcg: a QP of %u x 32 SGEs each way",
		qa.cap.max_send_wr))
		return;
	/* the SQ and RQ rings alone are 2 x 16 MiB; shadows add 12 MiB */
	ok(after - before >= 24L << 20,
	   "memcg: its memory is charged to the creator's cgroup (+%ld KiB)",
	   (after - before) >> 10);
	ibv_destroy_qp(qp);
	ok(read_long(current) < after - (16L << 20), "memcg: and uncharged on destroy");
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

/* ---- hold the device while it is removed ----------------------------- */

static void test_hold(int secs)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_qp_init_attr qa;
	struct ibv_async_event ev;
	static char buf[4096];
	bool fatal = false;
	struct ibv_qp *qp;
	struct ibv_mr *mr, *mr2;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	double end;

	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	qa = (struct ibv_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	qp = mr && cq ? ibv_create_qp(pd, &qa) : NULL;
	if (!ok(qp && !to_init(qp), "hold: PD, MR, CQ and a QP in INIT"))
		return;
	printf("# ready\n");
	fflush(stdout);
	end = now() + secs;
	while (!fatal && now() < end) {
		if (poll(&pfd, 1, 100) <= 0 || ibv_get_async_event(ctx, &ev))
			continue;
		fatal = ev.event_type == IBV_EVENT_DEVICE_FATAL;
		ibv_ack_async_event(&ev);
	}
	ok(fatal, "hold: IBV_EVENT_DEVICE_FATAL while holding the device");
	ok(doorbell(qp) == EIO, "hold: verbs fail with EIO afterwards");
	mr2 = ibv_reg_mr(pd, buf, sizeof(buf), 0);
	ok(!mr2, "hold: no new MR");
	/* destroy is allowed after disassociation (the objects are gone) */
	ok(!ibv_destroy_qp(qp) && !ibv_destroy_cq(cq) && !ibv_dereg_mr(mr) &&
	   !ibv_dealloc_pd(pd), "hold: destroy QP, CQ, MR and PD");
}

/* ---- udata ------------------------------------------------------------ */

static void test_udata(void)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_ex_cmd_hdr ex;
		struct ib_uverbs_ex_query_device cmd;
		uint64_t driver_in;
	} req = {};
	struct {
		struct ib_uverbs_ex_query_device_resp resp;
		uint64_t driver_out;
	} out = {};
	ssize_t n;

	req.hdr.command = IB_USER_VERBS_CMD_FLAG_EXTENDED |
			  IB_USER_VERBS_EX_CMD_QUERY_DEVICE;
	req.hdr.in_words = sizeof(req.cmd) / 8;
	req.hdr.out_words = sizeof(out.resp) / 8;
	req.ex.response = (uintptr_t)&out;
	req.ex.provider_in_words = 1;
	req.ex.provider_out_words = 1;
	n = write(ctx->cmd_fd, &req, sizeof(req));
	ok(n == sizeof(req) && out.resp.base.max_qp == (uint32_t)dattr.max_qp,
	   "udata: QUERY_DEVICE_EX with zeroed driver data (%zd, max_qp %u)", n,
	   out.resp.base.max_qp);
	req.driver_in = 1;
	n = write(ctx->cmd_fd, &req, sizeof(req));
	ok(n < 0 && errno == EINVAL, "udata: non-zero driver data -> EINVAL");
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	int i, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV SECTION [ARGS]\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n# suite: limits %s\n", argv[2]);
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			break;
	if (!list || i == n) {
		printf("Bail out! no device %s\n", argv[1]);
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx || ibv_query_device(ctx, &dattr)) {
		printf("Bail out! cannot open %s\n", argv[1]);
		return 1;
	}
	ibv_free_device_list(list);
	if (!strcmp(argv[2], "spin_sq") || !strcmp(argv[2], "spin_rq"))
		test_spin(argv[2][5] == 's', argc > 3 ? atoi(argv[3]) : 5);
	else if (!strcmp(argv[2], "overrun"))
		test_overrun();
	else if (!strcmp(argv[2], "caps"))
		test_caps(argc - 3, argv + 3);
	else if (!strcmp(argv[2], "memcg") && argc > 3)
		test_memcg(argv[3]);
	else if (!strcmp(argv[2], "hold"))
		test_hold(argc > 3 ? atoi(argv[3]) : 30);
	else if (!strcmp(argv[2], "udata"))
		test_udata();
	else if (!strcmp(argv[2], "resgrow"))
		test_resgrow();
	else
		ok(false, "unknown section %s", argv[2]);
	ibv_close_device(ctx);
	return ktap_done();
}

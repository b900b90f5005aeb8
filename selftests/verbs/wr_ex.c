// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * wr_ex: the extended verbs API that librxe implements, end to end: QPs
 * created with ibv_create_qp_ex() and driven by ibv_wr_start() /
 * ibv_wr_*() / ibv_wr_complete() / ibv_wr_abort(), completions read
 * through an extended CQ (ibv_create_cq_ex(), ibv_start_poll(),
 * ibv_next_poll(), ibv_wc_read_*()). One process owns both QPs: A on
 * DEV_A, B on DEV_B (the same device for the loopback path), connected
 * over RoCE v2. Every byte moved, every atomic's original value and every
 * completion field the CQ was asked for are checked.
 *
 * ATOMIC WRITE (IBTA 1.5, ibv_wr_atomic_write): the 8 bytes land as one
 * word, the send completion is IBV_WC_ATOMIC_WRITE, the device reports
 * IB_UVERBS_DEVICE_ATOMIC_WRITE in device_cap_flags_ex, and a misaligned
 * target or a bad R_Key fail the WR (REM_INV_REQ_ERR / REM_ACCESS_ERR,
 * as rxe answers them). A device without the capability (rxe of Linux
 * 6.1) skips those tests, unless WR_EX_ATOMIC_WRITE=1 says it must have
 * it (softrc).
 *
 * Usage: wr_ex DEV_A GID_INDEX_A DEV_B GID_INDEX_B
 * Prints KTAP; exits non-zero if a test failed.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "rc_conn.h"
#include "timing.h"

#define BUF_BYTES	(4u << 20)
#define DATA_OFF	0		/* bulk data: [0, 2 MiB) */
#define ATOM_OFF	(3u << 20)	/* atomic targets and results */
#define DEPTH		64

struct side {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq_ex *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *qpx;
	struct ibv_mr *mr;
	uint8_t *buf;
	union ibv_gid gid;
	int gid_index;
};

/* One completion, every field an extended CQ can report through librxe. */
struct cqe {
	uint64_t wr_id;
	enum ibv_wc_status status;
	enum ibv_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t imm;		/* host order of the wire value (be32toh) */
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned int wc_flags;
};

#define CQ_WC_FLAGS (IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM | \
		     IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP | \
		     IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL | \
		     IBV_WC_EX_WITH_DLID_PATH_BITS)

#define SEND_OPS (IBV_QP_EX_WITH_RDMA_WRITE | \
		  IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_SEND | \
		  IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		  IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		  IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD | \
		  IBV_QP_EX_WITH_ATOMIC_WRITE)

/* IB_UVERBS_DEVICE_ATOMIC_WRITE: rdma-core 44's verbs.h does not name it */
#define DEV_CAP_ATOMIC_WRITE	(1ULL << 40)

static void read_cqe(struct ibv_cq_ex *cq, struct cqe *e)
{
	e->wr_id = cq->wr_id;
	e->status = cq->status;
	e->opcode = ibv_wc_read_opcode(cq);
	e->byte_len = ibv_wc_read_byte_len(cq);
	e->wc_flags = ibv_wc_read_wc_flags(cq);
	e->imm = (e->wc_flags & IBV_WC_WITH_IMM) ?
		 be32toh(ibv_wc_read_imm_data(cq)) : 0;
	e->qp_num = ibv_wc_read_qp_num(cq);
	e->src_qp = ibv_wc_read_src_qp(cq);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Collect exactly @n completions from @cq within @secs seconds (scaled to
 * this machine) through start/next/end_poll. Returns how many arrived.
 */
static int poll_n(struct ibv_cq_ex *cq, struct cqe *out, int n, double secs)
{
	struct ibv_poll_cq_attr attr = {};
	double end = now_s() + tmo(secs);
	int got = 0, ret;

	while (got < n && now_s() < end) {
		ret = ibv_start_poll(cq, &attr);
		if (ret == ENOENT) {
			usleep(100);
			continue;
		}
		if (ret) {
			diag("ibv_start_poll: %d", ret);
			return got;
		}
		do {
			if (got < n)
				read_cqe(cq, &out[got]);
			got++;
		} while (got < n && ibv_next_poll(cq) == 0);
		ibv_end_poll(cq);
	}
	return got > n ? n : got;
}

/*
 * Nothing more arrives on @cq within @secs, scaled to this machine
 * (start_poll keeps saying ENOENT).
 */
static bool cq_quiet(struct ibv_cq_ex *cq, double secs)
{
	struct ibv_poll_cq_attr attr = {};
	double end = now_s() + tmo(secs);

	while (now_s() < end) {
		if (ibv_start_poll(cq, &attr) != ENOENT) {
			ibv_end_poll(cq);
			return false;
		}
		usleep(1000);
	}
	return true;
}

static int open_side(struct side *s, const char *dev, int gid_index)
{
	struct ibv_cq_init_attr_ex cqa = {
		.cqe = 4 * DEPTH,
		.wc_flags = CQ_WC_FLAGS,
	};
	struct ibv_qp_init_attr_ex qpa = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 128 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.send_ops_flags = SEND_OPS,
	};
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	s->gid_index = gid_index;
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			s->ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ok(s->ctx != NULL, "%s: open %s", s->name, dev))
		return -1;
	if (ibv_query_gid(s->ctx, 1, gid_index, &s->gid)) {
		diag("%s: no GID %d", s->name, gid_index);
		return -1;
	}
	s->pd = ibv_alloc_pd(s->ctx);
	s->buf = aligned_alloc(4096, BUF_BYTES);
	if (!s->pd || !s->buf)
		return -1;
	memset(s->buf, 0, BUF_BYTES);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_BYTES, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			   IBV_ACCESS_REMOTE_ATOMIC);
	if (!s->mr)
		return -1;
	s->cq = ibv_create_cq_ex(s->ctx, &cqa);
	if (!ok(s->cq != NULL, "%s: ibv_create_cq_ex with wc_flags 0x%x",
		s->name, CQ_WC_FLAGS))
		return -1;
	qpa.send_cq = ibv_cq_ex_to_cq(s->cq);
	qpa.recv_cq = ibv_cq_ex_to_cq(s->cq);
	qpa.pd = s->pd;
	s->qp = ibv_create_qp_ex(s->ctx, &qpa);
	if (!ok(s->qp != NULL, "%s: ibv_create_qp_ex with every RC send op",
		s->name))
		return -1;
	s->qpx = ibv_qp_to_qp_ex(s->qp);
	return ok(s->qpx != NULL, "%s: ibv_qp_to_qp_ex", s->name) ? 0 : -1;
}

static int connect_qp(struct side *s, const struct side *peer)
{
	struct rc_conn c = {
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			  IBV_ACCESS_REMOTE_ATOMIC,
		.mtu = IBV_MTU_1024, .dqpn = peer->qp->qp_num,
		.dgid = peer->gid, .sgid_index = s->gid_index,
		/* PSNs wrap during the run */
		.rq_psn = 0xfffff0, .sq_psn = 0xfffff0,
		.rd_atomic = 4, .min_rnr_timer = 12, .timeout = timeout_exp(18),
		.retry_cnt = 7, .rnr_retry = 7,
	};

	return rc_qp_to_rts(s->qp, &c) ? -1 : 0;
}

static void post_recv(struct side *s, uint64_t wr_id, uint64_t off,
		      uint32_t len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)s->buf + off, .length = len,
		.lkey = s->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		diag("%s: ibv_post_recv failed", s->name);
}

static void fill(uint8_t *p, uint32_t len, unsigned int seed)
{
	uint32_t x = seed * 2654435761u + 1;
	uint32_t i;

	for (i = 0; i < len; i++) {
		x = x * 1103515245u + 12345;
		p[i] = x >> 16;
	}
}

static struct side A = { .name = "A" }, B = { .name = "B" };

static uint64_t addr_of(const struct side *s, uint64_t off)
{
	return (uintptr_t)s->buf + off;
}

/* Expect one send completion on A: @wr_id, success, @op, @len. */
static bool expect_send_cqe(const char *what, uint64_t wr_id,
			    enum ibv_wc_opcode op, uint32_t len)
{
	struct cqe e;

	if (!ok(poll_n(A.cq, &e, 1, 30) == 1, "%s: send completion", what))
		return false;
	return ok(e.wr_id == wr_id && e.status == IBV_WC_SUCCESS &&
		  e.opcode == op && e.byte_len == len && e.qp_num == A.qp->qp_num,
		  "%s: send CQE wr_id %llu status %d opcode %d byte_len %u qp_num %u",
		  what, (unsigned long long)e.wr_id, e.status, e.opcode,
		  e.byte_len, e.qp_num);
}

/* Expect one receive completion on B with these fields. */
static bool expect_recv_cqe(const char *what, uint64_t wr_id,
			    enum ibv_wc_opcode op, uint32_t len, bool imm,
			    uint32_t imm_val)
{
	unsigned int want_flags = imm ? IBV_WC_WITH_IMM : 0;
	struct cqe e;

	if (!ok(poll_n(B.cq, &e, 1, 30) == 1, "%s: receive completion", what))
		return false;
	return ok(e.wr_id == wr_id && e.status == IBV_WC_SUCCESS &&
		  e.opcode == op && e.byte_len == len &&
		  (e.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) == want_flags &&
		  (!imm || e.imm == imm_val) && e.qp_num == B.qp->qp_num,
		  "%s: receive CQE wr_id %llu status %d opcode %d byte_len %u flags 0x%x imm 0x%x qp_num %u",
		  what, (unsigned long long)e.wr_id, e.status, e.opcode,
		  e.byte_len, e.wc_flags, e.imm, e.qp_num);
}

static void test_write(void)
{
	const uint32_t len = 65536 + 100;

	fill(A.buf + DATA_OFF, len, 1);
	ibv_wr_start(A.qpx);
	A.qpx->wr_id = 1;
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(A.qpx, B.mr->rkey, addr_of(&B, DATA_OFF + 8));
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, DATA_OFF), len);
	ok(ibv_wr_complete(A.qpx) == 0, "write: ibv_wr_complete");
	if (expect_send_cqe("write", 1, IBV_WC_RDMA_WRITE, len))
		ok(!memcmp(B.buf + DATA_OFF + 8, A.buf + DATA_OFF, len),
		   "write: %u bytes arrived", len);
}

static void test_write_imm_sge_list(void)
{
	struct ibv_sge sg[3] = {
		{ addr_of(&A, DATA_OFF + 4096), 1000, A.mr->lkey },
		{ addr_of(&A, DATA_OFF + 65536), 0, A.mr->lkey },
		{ addr_of(&A, DATA_OFF + 200000), 5000, A.mr->lkey },
	};
	uint8_t want[6000];

	fill(A.buf + DATA_OFF + 4096, 1000, 2);
	fill(A.buf + DATA_OFF + 200000, 5000, 3);
	memcpy(want, A.buf + DATA_OFF + 4096, 1000);
	memcpy(want + 1000, A.buf + DATA_OFF + 200000, 5000);
	post_recv(&B, 20, 0, 0);
	ibv_wr_start(A.qpx);
	A.qpx->wr_id = 2;
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write_imm(A.qpx, B.mr->rkey, addr_of(&B, DATA_OFF + 300000),
			      htobe32(0xc0ffee01));
	ibv_wr_set_sge_list(A.qpx, 3, sg);
	ok(ibv_wr_complete(A.qpx) == 0, "write_imm: ibv_wr_complete");
	expect_send_cqe("write_imm", 2, IBV_WC_RDMA_WRITE, 6000);
	if (expect_recv_cqe("write_imm", 20, IBV_WC_RECV_RDMA_WITH_IMM, 6000,
			    true, 0xc0ffee01))
		ok(!memcmp(B.buf + DATA_OFF + 300000, want, 6000),
		   "write_imm: 3-entry SGE list (one empty) gathered in order");
}

/* A completion on @cq that is known to come, whatever its fields. */
static bool poll_any(struct ibv_cq_ex *cq, struct cqe *e, const char *what)
{
	return ok(poll_n(cq, e, 1, 30) == 1, "%s", what);
}

static void test_send_inline(void)
{
	static const char a[] = "inline data through ibv_wr_set_inline_data";
	struct ibv_data_buf l[2] = {
		{ (void *)"first piece/", 12 }, { (void *)"second piece", 12 },
	};
	struct cqe s, r;

	post_recv(&B, 30, DATA_OFF + 400000, 4096);
	post_recv(&B, 31, DATA_OFF + 410000, 4096);
	ibv_wr_start(A.qpx);
	A.qpx->wr_id = 3;
	A.qpx->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_send(A.qpx);
	ibv_wr_set_inline_data(A.qpx, (void *)a, sizeof(a));
	A.qpx->wr_id = 4;
	ibv_wr_send_imm(A.qpx, htobe32(77));
	ibv_wr_set_inline_data_list(A.qpx, 2, l);
	ok(ibv_wr_complete(A.qpx) == 0, "send inline: two WRs, one ibv_wr_complete");
	expect_send_cqe("send inline", 3, IBV_WC_SEND, sizeof(a));
	if (expect_recv_cqe("send inline", 30, IBV_WC_RECV, sizeof(a), false, 0))
		ok(!memcmp(B.buf + DATA_OFF + 400000, a, sizeof(a)),
		   "send inline: payload");
	/*
	 * librxe's wr_set_inline_data_list() copies the pieces but never
	 * adds their lengths up, so the WQE in the ring says 0 bytes (rdma-core
	 * 44 and later; rxe behaves the same). The kernel must send what the
	 * WQE says: then both ends see a zero-length SEND with immediate.
	 */
	if (!poll_any(A.cq, &s, "send_imm inline list: send completion") ||
	    !poll_any(B.cq, &r, "send_imm inline list: receive completion"))
		return;
	if (s.byte_len == 0 && r.byte_len == 0) {
		ktap_skip("librxe wrote a WQE length of 0 (wr_set_inline_data_list does not sum the pieces); sent as 0 bytes",
			  "send_imm inline list: 24 bytes");
		ok(s.wr_id == 4 && s.status == IBV_WC_SUCCESS && r.wr_id == 31 &&
		   r.status == IBV_WC_SUCCESS && (r.wc_flags & IBV_WC_WITH_IMM) &&
		   r.imm == 77, "send_imm inline list: completions as the WQE said (0 bytes, imm 77)");
		return;
	}
	ok(s.wr_id == 4 && s.byte_len == 24 && r.wr_id == 31 && r.byte_len == 24 &&
	   r.imm == 77 && !memcmp(B.buf + DATA_OFF + 410000,
				  "first piece/second piece", 24),
	   "send_imm inline list: 24 bytes in order, imm 77");
}

static void test_send_zero(void)
{
	post_recv(&B, 40, DATA_OFF, 0);
	ibv_wr_start(A.qpx);
	A.qpx->wr_id = 5;
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(A.qpx);
	ibv_wr_set_sge_list(A.qpx, 0, NULL);
	ok(ibv_wr_complete(A.qpx) == 0, "zero-length send: ibv_wr_complete");
	expect_send_cqe("zero-length send", 5, IBV_WC_SEND, 0);
	expect_recv_cqe("zero-length send", 40, IBV_WC_RECV, 0, false, 0);
}

static void test_read(void)
{
	const uint32_t len = 300000;

	fill(B.buf + DATA_OFF + 1000000, len, 4);
	memset(A.buf + DATA_OFF + 1000000, 0, len);
	ibv_wr_start(A.qpx);
	A.qpx->wr_id = 6;
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(A.qpx, B.mr->rkey, addr_of(&B, DATA_OFF + 1000000));
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, DATA_OFF + 1000000), len);
	ok(ibv_wr_complete(A.qpx) == 0, "read: ibv_wr_complete");
	if (expect_send_cqe("read", 6, IBV_WC_RDMA_READ, len))
		ok(!memcmp(A.buf + DATA_OFF + 1000000, B.buf + DATA_OFF + 1000000,
			   len), "read: %u bytes", len);
}

static void test_atomics(void)
{
	uint64_t *target = (uint64_t *)(B.buf + ATOM_OFF);
	uint64_t *res = (uint64_t *)(A.buf + ATOM_OFF);

	*target = 1000;
	res[0] = res[1] = res[2] = ~0ull;
	ibv_wr_start(A.qpx);
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	A.qpx->wr_id = 7;
	ibv_wr_atomic_fetch_add(A.qpx, B.mr->rkey, addr_of(&B, ATOM_OFF), 5);
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, ATOM_OFF), 8);
	A.qpx->wr_id = 8;
	ibv_wr_atomic_cmp_swp(A.qpx, B.mr->rkey, addr_of(&B, ATOM_OFF), 1005, 42);
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, ATOM_OFF + 8), 8);
	A.qpx->wr_id = 9;
	ibv_wr_atomic_cmp_swp(A.qpx, B.mr->rkey, addr_of(&B, ATOM_OFF), 1005, 7);
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, ATOM_OFF + 16), 8);
	ok(ibv_wr_complete(A.qpx) == 0, "atomics: ibv_wr_complete");
	expect_send_cqe("fetch_add", 7, IBV_WC_FETCH_ADD, 8);
	expect_send_cqe("cmp_swp (equal)", 8, IBV_WC_COMP_SWAP, 8);
	expect_send_cqe("cmp_swp (not equal)", 9, IBV_WC_COMP_SWAP, 8);
	ok(res[0] == 1000 && res[1] == 1005 && res[2] == 42 && *target == 42,
	   "atomics: originals %llu %llu %llu, final %llu",
	   (unsigned long long)res[0], (unsigned long long)res[1],
	   (unsigned long long)res[2], (unsigned long long)*target);
}

/* Eight WRITEs in one batch, every other one unsignaled. */
static void test_batch(void)
{
	struct cqe e[8];
	int i, n;
	bool order = true;

	fill(A.buf + DATA_OFF, 8 * 8192, 5);
	memset(B.buf + DATA_OFF + 1500000, 0, 8 * 8192);
	ibv_wr_start(A.qpx);
	for (i = 0; i < 8; i++) {
		A.qpx->wr_id = 100 + i;
		A.qpx->wr_flags = (i & 1) ? IBV_SEND_SIGNALED : 0;
		ibv_wr_rdma_write(A.qpx, B.mr->rkey,
				  addr_of(&B, DATA_OFF + 1500000 + i * 8192));
		ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, DATA_OFF + i * 8192),
			       8192);
	}
	ok(ibv_wr_complete(A.qpx) == 0, "batch: 8 WRITEs, one ibv_wr_complete");
	n = poll_n(A.cq, e, 4, 30);
	for (i = 0; i < n; i++)
		order &= e[i].wr_id == (uint64_t)(101 + 2 * i) &&
			 e[i].status == IBV_WC_SUCCESS;
	ok(n == 4 && order, "batch: exactly the 4 signaled WRs complete, in order");
	ok(cq_quiet(A.cq, 0.2), "batch: no completion for unsignaled WRs");
	ok(!memcmp(B.buf + DATA_OFF + 1500000, A.buf + DATA_OFF, 8 * 8192),
	   "batch: all 8 WRITEs landed");
}

/* The port counter @name of @s's device, or -1 (not a softrc device). */
static long long port_counter(const struct side *s, const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s",
		 ibv_get_device_name(s->ctx->device), name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/*
 * One unsignaled WRITE, then nothing. softrc asks no ACK for an
 * unsignaled message (Documentation/softrc.rst, "ACKs"), so its AckReq
 * probe must draw one once the requester is idle, long before the local
 * ACK timeout and without a retransmission; the WRITE still completes
 * silently.
 */
static void test_ack_probe(void)
{
	long long p0 = port_counter(&A, "ackreq_probes");
	long long t0 = port_counter(&A, "timeouts");
	long long r0 = port_counter(&A, "retransmits");
	long long p = p0;
	double end;

	if (p0 < 0) {
		ktap_skip("not a softrc device", "ack probe: ackreq_probes counter");
		return;
	}
	fill(A.buf + DATA_OFF, 4096, 9);
	memset(B.buf + DATA_OFF + 1800000, 0, 4096);
	ibv_wr_start(A.qpx);
	A.qpx->wr_id = 400;
	A.qpx->wr_flags = 0;
	ibv_wr_rdma_write(A.qpx, B.mr->rkey, addr_of(&B, DATA_OFF + 1800000));
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, DATA_OFF), 4096);
	ok(ibv_wr_complete(A.qpx) == 0, "ack probe: one unsignaled WRITE");
	end = now_s() + tmo(5);
	while (p == p0 && now_s() < end) {
		usleep(1000);
		p = port_counter(&A, "ackreq_probes");
	}
	ok(p == p0 + 1, "ack probe: one AckReq probe drew its ACK (ackreq_probes %lld -> %lld)",
	   p0, p);
	ok(port_counter(&A, "timeouts") == t0 &&
	   port_counter(&A, "retransmits") == r0,
	   "ack probe: no local ACK timeout, no retransmission");
	ok(cq_quiet(A.cq, 0.2), "ack probe: no completion for the unsignaled WRITE");
	ok(!memcmp(B.buf + DATA_OFF + 1800000, A.buf + DATA_OFF, 4096),
	   "ack probe: the WRITE landed");
}

/* ibv_wr_abort drops what was built since ibv_wr_start. */
static void test_abort(void)
{
	memset(B.buf + DATA_OFF + 1700000, 0xab, 4096);
	fill(A.buf + DATA_OFF, 4096, 6);
	ibv_wr_start(A.qpx);
	A.qpx->wr_id = 200;
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(A.qpx, B.mr->rkey, addr_of(&B, DATA_OFF + 1700000));
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, DATA_OFF), 4096);
	ibv_wr_abort(A.qpx);
	/* a later WR completes alone: the aborted one never reached the SQ */
	ibv_wr_start(A.qpx);
	A.qpx->wr_id = 201;
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(A.qpx, B.mr->rkey, addr_of(&B, DATA_OFF + 1800000));
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, DATA_OFF), 16);
	ok(ibv_wr_complete(A.qpx) == 0, "abort: next batch completes");
	expect_send_cqe("abort: next WR", 201, IBV_WC_RDMA_WRITE, 16);
	ok(cq_quiet(A.cq, 0.2), "abort: no completion for the aborted WR");
	ok(B.buf[DATA_OFF + 1700000] == 0xab &&
	   B.buf[DATA_OFF + 1700000 + 4095] == 0xab,
	   "abort: the aborted WRITE moved no data");
}

/* Wait up to @secs (scaled) for an async event of @ctx; its type, or -1. */
static int async_event(struct ibv_context *ctx, double secs)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	int type;

	if (poll(&pfd, 1, (int)(tmo(secs) * 1000)) != 1 ||
	    ibv_get_async_event(ctx, &ev))
		return -1;
	type = ev.event_type;
	ibv_ack_async_event(&ev);
	return type;
}

/*
 * SQD: RTS -> SQD with en_sqd_async_notify while a 2 MiB WRITE is in
 * flight: it still completes, a WRITE posted in SQD does not start, the
 * SQ_DRAINED event arrives and query_qp says drained; SQD -> RTS sends
 * the waiting WRITE.
 */
static void test_sqd(void)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_SQD,
				 .en_sqd_async_notify = 1 };
	struct ibv_qp_init_attr ia;
	const uint32_t len = 2u << 20;
	int ev;

	fill(A.buf + DATA_OFF, len, 7);
	memset(B.buf + DATA_OFF, 0, len);
	memset(B.buf + ATOM_OFF + 4096, 0x5c, 64);
	ibv_wr_start(A.qpx);
	A.qpx->wr_id = 400;
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(A.qpx, B.mr->rkey, addr_of(&B, DATA_OFF));
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, DATA_OFF), len);
	ok(ibv_wr_complete(A.qpx) == 0, "sqd: 2 MiB WRITE posted");
	ok(ibv_modify_qp(A.qp, &a, IBV_QP_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY) == 0,
	   "sqd: modify RTS -> SQD with en_sqd_async_notify");
	ibv_wr_start(A.qpx);
	A.qpx->wr_id = 401;
	ibv_wr_rdma_write(A.qpx, B.mr->rkey, addr_of(&B, ATOM_OFF + 4096));
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, DATA_OFF), 64);
	ok(ibv_wr_complete(A.qpx) == 0, "sqd: posting in SQD is allowed");
	ev = async_event(A.ctx, 30);
	ok(ev == IBV_EVENT_SQ_DRAINED, "sqd: IBV_EVENT_SQ_DRAINED (got %d)", ev);
	if (expect_send_cqe("sqd: the WRITE in flight", 400, IBV_WC_RDMA_WRITE, len))
		ok(!memcmp(B.buf + DATA_OFF, A.buf + DATA_OFF, len),
		   "sqd: the WRITE in flight landed whole");
	memset(&a, 0, sizeof(a));
	ev = ibv_query_qp(A.qp, &a, IBV_QP_STATE | IBV_QP_CUR_STATE, &ia);
	ok(ev == 0 && a.qp_state == IBV_QPS_SQD && a.sq_draining == 0,
	   "sqd: query_qp: state SQD (%d), sq_draining 0 (%d)", a.qp_state,
	   a.sq_draining);
	ok(cq_quiet(A.cq, 0.3) && B.buf[ATOM_OFF + 4096] == 0x5c,
	   "sqd: the WRITE posted in SQD did not start");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	ok(ibv_modify_qp(A.qp, &a, IBV_QP_STATE) == 0, "sqd: modify SQD -> RTS");
	if (expect_send_cqe("sqd: the waiting WRITE after SQD -> RTS", 401,
			    IBV_WC_RDMA_WRITE, 64))
		ok(!memcmp(B.buf + ATOM_OFF + 4096, A.buf + DATA_OFF, 64),
		   "sqd: the waiting WRITE landed");
}

static bool have_atomic_write;

/* query_device_ex reports the ATOMIC WRITE capability (bit 40). */
static void test_atomic_write_cap(void)
{
	struct ibv_device_attr_ex attr;
	const char *want = getenv("WR_EX_ATOMIC_WRITE");
	int err;

	memset(&attr, 0, sizeof(attr));
	err = ibv_query_device_ex(A.ctx, NULL, &attr);
	ok(!err, "atomic write: ibv_query_device_ex (%d)", err);
	have_atomic_write = !err &&
			    (attr.device_cap_flags_ex & DEV_CAP_ATOMIC_WRITE);
	if (want && !strcmp(want, "1"))
		ok(have_atomic_write,
		   "atomic write: device_cap_flags_ex 0x%llx has bit 40 (IB_UVERBS_DEVICE_ATOMIC_WRITE)",
		   (unsigned long long)attr.device_cap_flags_ex);
	else if (!have_atomic_write)
		ktap_skip("device without ATOMIC WRITE",
			  "atomic write: device_cap_flags_ex 0x%llx",
			  (unsigned long long)attr.device_cap_flags_ex);
}

/*
 * Two ATOMIC WRITEs in a batch, the first unsignaled, then a READ of the
 * words back: the 8 bytes as posted (librxe copies them into the WQE, so
 * changing the source after posting changes nothing), the neighbours
 * untouched, one IBV_WC_ATOMIC_WRITE completion of 8 bytes.
 */
static void test_atomic_write(void)
{
	uint64_t *t = (uint64_t *)(B.buf + ATOM_OFF + 256);
	uint64_t v1 = 0x1122334455667788ull, v2 = 0x8877665544332211ull;
	uint8_t bytes[8];

	if (!have_atomic_write) {
		ktap_skip("device without ATOMIC WRITE", "atomic write: data");
		return;
	}
	t[-1] = t[0] = t[1] = t[2] = 0xa5a5a5a5a5a5a5a5ull;
	ibv_wr_start(A.qpx);
	A.qpx->wr_flags = 0;
	A.qpx->wr_id = 20;
	ibv_wr_atomic_write(A.qpx, B.mr->rkey, addr_of(&B, ATOM_OFF + 256), &v1);
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	A.qpx->wr_id = 21;
	ibv_wr_atomic_write(A.qpx, B.mr->rkey, addr_of(&B, ATOM_OFF + 264), &v2);
	ok(ibv_wr_complete(A.qpx) == 0, "atomic write: ibv_wr_complete");
	memcpy(bytes, &v1, 8);
	v1 = v2 = 0;
	if (!expect_send_cqe("atomic write", 21, IBV_WC_ATOMIC_WRITE, 8))
		return;
	ok(!memcmp(&t[0], bytes, 8) &&
	   t[1] == 0x8877665544332211ull && t[-1] == 0xa5a5a5a5a5a5a5a5ull &&
	   t[2] == 0xa5a5a5a5a5a5a5a5ull,
	   "atomic write: both words landed as posted (%016llx %016llx), neighbours untouched",
	   (unsigned long long)t[0], (unsigned long long)t[1]);
	ok(cq_quiet(A.cq, 0.2), "atomic write: the unsignaled one completed silently");
}

/* Back to RTS from ERROR: both QPs through RESET, the CQ emptied. */
static bool reconnect(const char *what)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };
	struct cqe e = { 0 };

	if (ibv_modify_qp(A.qp, &a, IBV_QP_STATE) ||
	    ibv_modify_qp(B.qp, &a, IBV_QP_STATE))
		return ok(false, "%s: QPs to RESET", what);
	while (poll_n(A.cq, &e, 1, 0.1) == 1)
		;
	while (poll_n(B.cq, &e, 1, 0.1) == 1)
		;
	return ok(!connect_qp(&A, &B) && !connect_qp(&B, &A),
		  "%s: reconnected", what);
}

/* One ATOMIC WRITE that must fail with @want (and no byte may land). */
static void atomic_write_fails(const char *what, uint32_t rkey, uint64_t off,
			       enum ibv_wc_status want)
{
	uint64_t v = 0x0123456789abcdefull, before[2] = { 0 };
	bool inside = off + 16 <= BUF_BYTES;
	struct cqe e = { 0 };
	int n;

	if (inside)
		memcpy(before, B.buf + (off & ~7ull), 16);
	ibv_wr_start(A.qpx);
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	A.qpx->wr_id = 30;
	ibv_wr_atomic_write(A.qpx, rkey, addr_of(&B, off), &v);
	ok(ibv_wr_complete(A.qpx) == 0, "%s: ibv_wr_complete", what);
	n = poll_n(A.cq, &e, 1, 30);
	ok(n == 1 && e.wr_id == 30 && e.status == want,
	   "%s: %d completion, wr_id %llu status %d (want %d)", what, n,
	   (unsigned long long)e.wr_id, e.status, want);
	if (inside)
		ok(!memcmp(before, B.buf + (off & ~7ull), 16),
		   "%s: target untouched", what);
}

/* After test_bad_rkey: each error puts the QP in ERROR, so reconnect. */
static void test_atomic_write_errors(void)
{
	if (!have_atomic_write) {
		ktap_skip("device without ATOMIC WRITE", "atomic write: errors");
		return;
	}
	if (reconnect("atomic write misaligned"))
		atomic_write_fails("atomic write misaligned", B.mr->rkey,
				   ATOM_OFF + 512 + 4, IBV_WC_REM_INV_REQ_ERR);
	if (reconnect("atomic write bad rkey"))
		atomic_write_fails("atomic write bad rkey", B.mr->rkey ^ 0x5a5a00,
				   ATOM_OFF + 512, IBV_WC_REM_ACCESS_ERR);
	if (reconnect("atomic write past the MR"))
		atomic_write_fails("atomic write past the MR", B.mr->rkey,
				   BUF_BYTES, IBV_WC_REM_ACCESS_ERR);
}

/* Last: a bad rkey fails the WR and flushes the next one. */
static void test_bad_rkey(void)
{
	struct cqe e[2];
	int n;

	ibv_wr_start(A.qpx);
	A.qpx->wr_flags = IBV_SEND_SIGNALED;
	A.qpx->wr_id = 300;
	ibv_wr_rdma_write(A.qpx, B.mr->rkey ^ 0x5a5a00, addr_of(&B, DATA_OFF));
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, DATA_OFF), 64);
	A.qpx->wr_id = 301;
	ibv_wr_rdma_write(A.qpx, B.mr->rkey, addr_of(&B, DATA_OFF));
	ibv_wr_set_sge(A.qpx, A.mr->lkey, addr_of(&A, DATA_OFF), 64);
	ok(ibv_wr_complete(A.qpx) == 0, "bad rkey: ibv_wr_complete");
	n = poll_n(A.cq, e, 2, 30);
	ok(n >= 1 && e[0].wr_id == 300 && e[0].status == IBV_WC_REM_ACCESS_ERR,
	   "bad rkey: IBV_WC_REM_ACCESS_ERR read through the extended CQ (status %d)",
	   n >= 1 ? (int)e[0].status : -1);
	ok(n == 2 && e[1].wr_id == 301 && e[1].status == IBV_WC_WR_FLUSH_ERR,
	   "bad rkey: the next WR flushed (status %d)",
	   n == 2 ? (int)e[1].status : -1);
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV_A GID_A DEV_B GID_B\n", argv[0]);
		return 2;
	}
	printf("TAP version 13\n");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (open_side(&A, argv[1], atoi(argv[2])) ||
	    open_side(&B, argv[3], atoi(argv[4]))) {
		printf("Bail out! setup failed\n");
		return 1;
	}
	if (!ok(!connect_qp(&A, &B) && !connect_qp(&B, &A),
		"connect A <-> B (RESET -> INIT -> RTR -> RTS)")) {
		printf("Bail out! connect failed: %s\n", strerror(errno));
		return 1;
	}
	{
		struct ibv_poll_cq_attr pa = {};

		ok(ibv_start_poll(A.cq, &pa) == ENOENT,
		   "ibv_start_poll on an empty CQ: ENOENT");
	}
	test_write();
	test_write_imm_sge_list();
	test_send_inline();
	test_send_zero();
	test_read();
	test_atomics();
	test_batch();
	test_ack_probe();
	test_abort();
	test_atomic_write_cap();
	test_atomic_write();
	test_sqd();
	test_bad_rkey();
	test_atomic_write_errors();
	return ktap_done();
}

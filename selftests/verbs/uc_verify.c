// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * uc_verify - UC QPs over libibverbs: multi-packet SENDs and RDMA WRITEs
 * with immediate data, checked message by message.
 *
 * Runs as two processes joined by a Unix socket (which works across
 * network namespaces): a server (-s), the receiver, and a client, the
 * sender. They exchange QPN, PSN, GID and a buffer's address and R_Key,
 * and connect one UC QP each (RESET -> INIT -> RTR -> RTS with the UC
 * attribute masks). Then:
 *   - the server posts 2 * N receive WQEs (wr_id 0, 1, ...), each of
 *     SIZE bytes, and says so;
 *   - the client sends N SENDs of SIZE bytes, then N RDMA WRITEs with
 *     immediate data of SIZE bytes into the server's buffer, each to a
 *     slot of its own (each message several packets at the path MTU); every byte is a
 *     function of (seq, offset) and a SEND's first 4 bytes are its seq.
 *     Every WR must complete successfully at the sender (UC completes a
 *     message once it is sent; nothing is acknowledged);
 *   - the server collects receive completions until none came for a
 *     second (scaled) and checks each: a SEND's bytes in its WQE's buffer
 *     are exactly those of message seq (byte_len SIZE); a WRITE's
 *     immediate data is its seq and its slot holds exactly its bytes;
 *     seqs rise within each kind; and completion i has wr_id i: a message
 *     that was dropped part-way (a lost packet: IBTA ch. 9.8.4) consumed
 *     no receive WQE, and the message after it was placed from the start
 *     of that WQE's buffer.
 * Without -l every message must arrive. With -l (a lossy path) messages
 * may be missing but those that arrive must be whole, and at least one of
 * each kind must arrive. Last, the client posts an RDMA READ on its UC
 * QP: the post fails or the WR completes in error, never successfully.
 * Before all that, on a QP of its own, the client checks the UC state
 * rules: the attributes each transition refuses, no post before RTS.
 *
 * Output is KTAP (the client's, with the server's counts); the exit
 * status is 0 when every test passed. Runs in user space as an ordinary
 * verbs consumer.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include "stream.h"
#include "timing.h"

struct info {
	uint32_t qpn;
	uint32_t psn;
	uint8_t gid[16];
	uint64_t addr;
	uint32_t rkey;
};

/* the server's verdict */
struct result {
	uint32_t sends, writes;		/* whole messages received */
	uint32_t bad;			/* completions in error or wrong data */
	uint32_t order;			/* seqs out of order, wr_ids skipped */
};

static struct {
	bool server, lossy;
	const char *dev, *path;
	int gid_index;
	uint32_t n, size;
	enum ibv_mtu mtu;
} o = { .n = 100, .size = 4096, .mtu = IBV_MTU_1024 };

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static uint8_t *buf;
static uint8_t gid_self[16];

static uint8_t pat(uint32_t seq, uint32_t i)
{
	return (uint8_t)(seq * 131 + i * 7 + (i >> 8));
}

static void fill(uint8_t *p, uint32_t seq)
{
	uint32_t i;

	for (i = 0; i < o.size; i++)
		p[i] = pat(seq, i);
	memcpy(p, &seq, sizeof(seq));
}

static bool intact(const uint8_t *p, uint32_t seq)
{
	uint32_t i, got;

	memcpy(&got, p, sizeof(got));
	if (got != seq)
		return false;
	for (i = sizeof(seq); i < o.size; i++)
		if (p[i] != pat(seq, i))
			return false;
	return true;
}

/*
 * The buffer: slot i (0 <= i < 2N) is receive WQE i's, slot 2N + seq the
 * target of WRITE seq; the client sends from slot 0.
 */
static uint8_t *wslot(uint32_t seq)
{
	return buf + (size_t)(2 * o.n + seq) * o.size;
}

static void setup(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr qa = {
		.qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 2 * o.n + 2, .max_recv_wr = 2 * o.n,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	size_t len = (size_t)(3 * o.n) * o.size;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), o.dev))
			ctx = ibv_open_device(list[i]);
	if (!ctx)
		bail("ibv_open_device: %s", strerror(errno));
	ibv_free_device_list(list);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4 * o.n + 4, NULL, NULL, 0);
	buf = calloc(1, len);
	if (!pd || !cq || !buf)
		bail("PD, CQ or buffer: %s", strerror(errno));
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE);
	if (!mr)
		bail("ibv_reg_mr: %s", strerror(errno));
	qa.send_cq = cq;
	qa.recv_cq = cq;
	qp = ibv_create_qp(pd, &qa);
	if (!qp)
		bail("ibv_create_qp(IBV_QPT_UC): %s", strerror(errno));
}

/* UC: RTR takes no responder resources or RNR timer, RTS no retries */
static void connect_qp(const struct info *me, const struct info *peer)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		bail("modify to INIT: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = o.mtu;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, peer->gid, 16);
	a.ah_attr.grh.sgid_index = o.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		bail("modify to RTR: %s", strerror(errno));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = me->psn;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		bail("modify to RTS: %s", strerror(errno));
}

static void post_recvs(void)
{
	struct ibv_sge sge = { .length = o.size, .lkey = mr->lkey };
	struct ibv_recv_wr wr = { .sg_list = &sge, .num_sge = 1 }, *bad;

	for (uint32_t i = 0; i < 2 * o.n; i++) {
		wr.wr_id = i;
		sge.addr = (uintptr_t)(buf + (size_t)i * o.size);
		if (ibv_post_recv(qp, &wr, &bad))
			bail("ibv_post_recv: %s", strerror(errno));
	}
}

/*
 * The receiver: check each completion as it comes; done once none came
 * for a second after the client said it had sent everything.
 */
static void serve(int fd)
{
	struct result r = { 0 };
	int64_t last_send = -1, last_write = -1;
	uint32_t i, seq, next_wr = 0;
	struct ibv_wc wc;
	double quiet;
	uint8_t go = 1;

	post_recvs();
	xfer(fd, &go, 1, true);
	xfer(fd, &go, 1, false);	/* the client's sends are done */
	for (quiet = now() + tmo(1); now() < quiet;) {
		if (ibv_poll_cq(cq, 1, &wc) <= 0)
			continue;
		quiet = now() + tmo(1);
		if (wc.wr_id != next_wr++)
			r.order++;
		if (wc.status != IBV_WC_SUCCESS || wc.wr_id >= 2 * o.n) {
			r.bad++;
			continue;
		}
		if (wc.opcode == IBV_WC_RECV) {
			i = wc.wr_id;
			memcpy(&seq, buf + (size_t)i * o.size, sizeof(seq));
			if (wc.byte_len != o.size || seq >= o.n ||
			    !intact(buf + (size_t)i * o.size, seq)) {
				r.bad++;
				continue;
			}
			if ((int64_t)seq <= last_send)
				r.order++;
			last_send = seq;
			r.sends++;
		} else if (wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM &&
			   (wc.wc_flags & IBV_WC_WITH_IMM)) {
			seq = be32toh(wc.imm_data);
			if (seq >= o.n || !intact(wslot(seq), seq)) {
				r.bad++;
				continue;
			}
			if ((int64_t)seq <= last_write)
				r.order++;
			last_write = seq;
			r.writes++;
		} else {
			r.bad++;
		}
	}
	xfer(fd, &r, sizeof(r), true);
}

/* post one signaled WR and wait for its completion; its status */
static int send_one(struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;
	struct ibv_wc wc;
	double end;

	if (ibv_post_send(qp, wr, &bad))
		return -1;
	for (end = now() + tmo(10); now() < end;)
		if (ibv_poll_cq(cq, 1, &wc) > 0)
			return wc.status;
	return -2;
}

/*
 * The state rules of a UC QP (IBTA ch. 10.3, the kernel's table of
 * attributes per transition and QP type): no Q_Key at INIT, no responder
 * resources or RNR timer at RTR, no retries or timeout at RTS; no posting
 * before RTS. On a QP of its own, connected to nobody.
 */
static void t_states(void)
{
	struct ibv_qp_init_attr qa = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_sge sge = { .addr = (uintptr_t)buf, .length = 8,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1,
				  .opcode = IBV_WR_SEND }, *bad;
	int base = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		   IBV_QP_ACCESS_FLAGS;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = 0x1234,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE,
	};
	struct ibv_qp *q = ibv_create_qp(pd, &qa);

	if (!ok(q != NULL, "states: a second UC QP"))
		return;
	ok(ibv_post_send(q, &wr, &bad) != 0, "states: post_send in RESET fails");
	ok(ibv_modify_qp(q, &a, base | IBV_QP_QKEY) != 0,
	   "states: RESET->INIT with a Q_Key fails (UD only)");
	ok(!ibv_modify_qp(q, &a, base), "states: RESET->INIT");
	ok(ibv_post_send(q, &wr, &bad) != 0, "states: post_send in INIT fails");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = o.mtu;
	a.dest_qp_num = 1;
	a.ah_attr.is_global = 1;
	memcpy(a.ah_attr.grh.dgid.raw, gid_self, sizeof(gid_self));
	a.ah_attr.grh.sgid_index = o.gid_index;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	a.max_dest_rd_atomic = 1;
	base = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
	       IBV_QP_RQ_PSN;
	ok(ibv_modify_qp(q, &a, base | IBV_QP_MAX_DEST_RD_ATOMIC) != 0,
	   "states: INIT->RTR with responder resources fails (RC only)");
	ok(!ibv_modify_qp(q, &a, base), "states: INIT->RTR");
	ok(ibv_post_send(q, &wr, &bad) != 0, "states: post_send in RTR fails");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	ok(ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT) != 0,
	   "states: RTR->RTS with an ACK timeout fails (RC only)");
	ok(!ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), "states: RTR->RTS");
	ok(!ibv_destroy_qp(q), "states: destroy");
}

static void client(int fd, const struct info *peer)
{
	struct ibv_sge sge = { .length = o.size, .lkey = mr->lkey };
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .send_flags = IBV_SEND_SIGNALED,
	};
	uint32_t seq, sent_ok = 0, written_ok = 0;
	struct result r;
	uint8_t go;
	int st;

	t_states();
	sge.addr = (uintptr_t)buf;
	xfer(fd, &go, 1, false);	/* receives posted */
	for (seq = 0; seq < o.n; seq++) {
		fill(buf, seq);
		wr.opcode = IBV_WR_SEND;
		sent_ok += send_one(&wr) == IBV_WC_SUCCESS;
	}
	ok(sent_ok == o.n, "%u SENDs of %u bytes complete at the sender (%u)",
	   o.n, o.size, sent_ok);
	for (seq = 0; seq < o.n; seq++) {
		fill(buf, seq);
		wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
		wr.imm_data = htobe32(seq);
		wr.wr.rdma.remote_addr = peer->addr + (uint64_t)(2 * o.n + seq) * o.size;
		wr.wr.rdma.rkey = peer->rkey;
		written_ok += send_one(&wr) == IBV_WC_SUCCESS;
	}
	ok(written_ok == o.n, "%u RDMA WRITEs with immediate of %u bytes complete at the sender (%u)",
	   o.n, o.size, written_ok);

	go = 1;
	xfer(fd, &go, 1, true);
	xfer(fd, &r, sizeof(r), false);
	diag("received: %u of %u SENDs, %u of %u WRITEs, %u bad, %u out of order",
	     r.sends, o.n, r.writes, o.n, r.bad, r.order);
	ok(!r.bad, "every received message is whole (%u bad)", r.bad);
	ok(!r.order, "in order, and each used the next receive WQE (%u not)", r.order);
	if (o.lossy) {
		ok(r.sends >= 1 && r.writes >= 1,
		   "lossy path: some messages of each kind arrive (%u, %u)",
		   r.sends, r.writes);
		diag("lost: %u SENDs, %u WRITEs", o.n - r.sends, o.n - r.writes);
	} else {
		ok(r.sends == o.n && r.writes == o.n,
		   "every message arrives (%u + %u of %u + %u)",
		   r.sends, r.writes, o.n, o.n);
	}

	/* UC has no RDMA READ (no responder resources) */
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = peer->addr;
	st = send_one(&wr);
	ok(st != IBV_WC_SUCCESS, "RDMA READ on a UC QP: refused (%d)", st);
}

int main(int argc, char **argv)
{
	struct info me = { 0 }, peer;
	union ibv_gid gid;
	int c, fd;

	while ((c = getopt(argc, argv, "sld:g:n:S:m:")) != -1) {
		switch (c) {
		case 's': o.server = true; break;
		case 'l': o.lossy = true; break;
		case 'd': o.dev = optarg; break;
		case 'g': o.gid_index = atoi(optarg); break;
		case 'n': o.n = strtoul(optarg, NULL, 0); break;
		case 'S': o.size = strtoul(optarg, NULL, 0); break;
		case 'm': o.mtu = (enum ibv_mtu)atoi(optarg); break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || !o.dev || !o.n || o.size < 4)
		goto usage;
	o.path = argv[optind];

	if (!o.server)
		printf("TAP version 13\n");
	setup();
	if (ibv_query_gid(ctx, 1, o.gid_index, &gid))
		bail("ibv_query_gid: %s", strerror(errno));
	me.qpn = qp->qp_num;
	me.psn = (uint32_t)random() & 0xffffff;
	memcpy(me.gid, gid.raw, 16);
	memcpy(gid_self, gid.raw, 16);
	me.addr = (uintptr_t)buf;
	me.rkey = mr->rkey;
	fd = sock_pair(o.server, o.path, 0, now() + tmo(10));
	xfer(fd, &me, sizeof(me), true);
	xfer(fd, &peer, sizeof(peer), false);
	connect_qp(&me, &peer);
	if (o.server) {
		serve(fd);
		return 0;
	}
	client(fd, &peer);
	return ktap_done();
usage:
	fprintf(stderr, "usage: %s [-s] [-l] -d DEV [-g GID] [-n MSGS] [-S SIZE] [-m MTU_ENUM] SOCKET\n",
		argv[0]);
	return 2;
}

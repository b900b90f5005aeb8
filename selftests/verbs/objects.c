// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * objects: create, query and destroy every verbs object softrc offers
 * (PD, MR, CQ, SRQ, AH) through stock libibverbs + librxe, without
 * traffic, and check the attributes reported back and the error returns.
 * It also checks the shared-ring ABI against the stock provider: a user
 * CQ's ring maps and polls empty, an SRQ's ring fills to exactly its
 * depth, the kernel sees the WQEs user space posted (SRQ limit event),
 * and rings survive a resize with their contents.
 *
 * Usage: objects DEV [SECTION...]  (sections: pd mr cq srq ah; default
 * all). Prints KTAP; exits non-zero if a test failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "ktap.h"
#include <rdma/rdma_user_rxe.h>

/* librxe's private AH (providers/rxe/rxe.h, rdma-core 44) */
struct rxe_ah_mirror {
	struct ibv_ah ibv_ah;
	struct rxe_av av;
	int ah_num;
};

static struct ibv_context *ctx;
static struct ibv_device_attr dattr;

/* ---- PD ------------------------------------------------------------- */
static void test_pd(void)
{
	struct ibv_pd *pd[8];
	int i, err = 0;

	for (i = 0; i < 8; i++) {
		pd[i] = ibv_alloc_pd(ctx);
		if (!pd[i])
			break;
	}
	ok(i == 8, "pd: allocate 8 PDs");
	while (i--)
		err |= ibv_dealloc_pd(pd[i]);
	ok(!err, "pd: deallocate them");
}

/* ---- MR ------------------------------------------------------------- */
static int reg_errno(struct ibv_pd *pd, void *addr, size_t len, int access)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, addr, len, access);

	if (mr) {
		ibv_dereg_mr(mr);
		return 0;
	}
	return errno;
}

static void test_mr(void)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	size_t pg = sysconf(_SC_PAGESIZE), big = 64 << 20;
	struct ibv_mr *mr, *mrs[64];
	struct ibv_pd *pd;
	char *buf, *ro;
	int i, err;

	pd = ibv_alloc_pd(ctx);
	if (!ok(pd, "mr: allocate a PD"))
		return;
	buf = aligned_alloc(pg, 16 * pg);
	memset(buf, 0xa5, 16 * pg);

	mr = ibv_reg_mr(pd, buf + 100, 3 * pg, rw);
	if (ok(mr, "mr: register 3 pages at an unaligned address, all rights")) {
		ok(mr->lkey && mr->lkey == mr->rkey, "mr: lkey %#x == rkey %#x, non-zero",
		   mr->lkey, mr->rkey);
		ok(mr->addr == buf + 100 && mr->length == 3 * pg,
		   "mr: address and length reported back");
		err = ibv_dealloc_pd(pd);
		ok(err == EBUSY, "pd: dealloc with an MR on it -> EBUSY (got %d)", err);
		ok(!ibv_dereg_mr(mr), "mr: deregister");
	}

	ok(!reg_errno(pd, buf, pg, 0), "mr: access 0 (local read only)");
	ok(!reg_errno(pd, buf, pg, IBV_ACCESS_LOCAL_WRITE), "mr: local write");
	ok(!reg_errno(pd, buf, 1, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
	   "mr: one byte, remote read");
	ok(reg_errno(pd, buf, pg, IBV_ACCESS_REMOTE_WRITE) == EINVAL,
	   "mr: remote write without local write -> EINVAL");
	ok(reg_errno(pd, buf, pg, IBV_ACCESS_REMOTE_ATOMIC) == EINVAL,
	   "mr: remote atomic without local write -> EINVAL");
	ok(!reg_errno(pd, buf, pg, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND),
	   "mr: MW bind right (memory windows offered)");
	ok(reg_errno(pd, buf, pg, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND),
	   "mr: on-demand paging (not offered) fails");
	ok(reg_errno(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE) == EINVAL,
	   "mr: zero length -> EINVAL");
	ok(reg_errno(pd, (void *)pg, pg, IBV_ACCESS_LOCAL_WRITE) == EFAULT,
	   "mr: unmapped address -> EFAULT");

	ro = mmap(NULL, pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ok(!reg_errno(pd, ro, pg, 0), "mr: read-only memory, local read");
	ok(reg_errno(pd, ro, pg, IBV_ACCESS_LOCAL_WRITE) == EFAULT,
	   "mr: read-only memory, local write -> EFAULT");
	munmap(ro, pg);

	mr = ibv_reg_mr_iova(pd, buf + 8, pg, 0x100000008ULL, rw);
	ok(mr && mr->lkey, "mr: register with an iova unlike the address");
	if (mr)
		ibv_dereg_mr(mr);

	for (i = 0; i < 64; i++) {
		mrs[i] = ibv_reg_mr(pd, buf + i * 64, pg, rw);
		if (!mrs[i])
			break;
	}
	ok(i == 64, "mr: 64 MRs on overlapping memory");
	err = 0;
	for (int j = 0; j < i; j++)
		for (int k = 0; k < j; k++)
			err |= mrs[j]->lkey == mrs[k]->lkey;
	ok(!err, "mr: all keys distinct");
	err = 0;
	while (i--)
		err |= ibv_dereg_mr(mrs[i]);
	ok(!err, "mr: deregister all 64");

	char *huge = malloc(big);

	mr = huge ? ibv_reg_mr(pd, huge, big, rw) : NULL;
	ok(mr, "mr: register 64 MiB");
	if (mr)
		ok(!ibv_dereg_mr(mr), "mr: deregister 64 MiB");
	free(huge);
	free(buf);
	ok(!ibv_dealloc_pd(pd), "mr: free the PD");
}

/* ---- CQ ------------------------------------------------------------- */
static bool cq_event_pending(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };

	return poll(&pfd, 1, ms) > 0;
}

static void test_cq(void)
{
	struct ibv_comp_channel *ch;
	struct ibv_wc wc[4];
	struct ibv_cq *cq;
	int err;

	cq = ibv_create_cq(ctx, 1, NULL, NULL, 0);
	if (ok(cq, "cq: create with 1 entry")) {
		ok(cq->cqe >= 1, "cq: cqe %d >= 1", cq->cqe);
		ok(ibv_poll_cq(cq, 4, wc) == 0, "cq: mapped ring polls empty");
		ok(!ibv_destroy_cq(cq), "cq: destroy");
	}
	cq = ibv_create_cq(ctx, dattr.max_cqe, NULL, NULL, 0);
	if (ok(cq, "cq: create with max_cqe %d entries", dattr.max_cqe)) {
		ok(cq->cqe >= dattr.max_cqe, "cq: cqe %d", cq->cqe);
		ok(ibv_poll_cq(cq, 4, wc) == 0, "cq: big ring polls empty");
		ibv_destroy_cq(cq);
	}
	errno = 0;
	cq = ibv_create_cq(ctx, dattr.max_cqe + 1, NULL, NULL, 0);
	ok(!cq && errno == EINVAL, "cq: max_cqe + 1 -> EINVAL");
	if (cq)
		ibv_destroy_cq(cq);
	errno = 0;
	cq = ibv_create_cq(ctx, 0, NULL, NULL, 0);
	ok(!cq && errno == EINVAL, "cq: 0 entries -> EINVAL");
	if (cq)
		ibv_destroy_cq(cq);

	/* resize: new ring, new cookie, remapped by the provider */
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (ok(cq, "cq: create 16 for resize")) {
		err = ibv_resize_cq(cq, 1000);
		ok(!err && cq->cqe >= 1000, "cq: resize to 1000 (cqe %d, ret %d)",
		   cq->cqe, err);
		ok(ibv_poll_cq(cq, 4, wc) == 0, "cq: resized ring polls empty");
		err = ibv_resize_cq(cq, 2);
		ok(!err && cq->cqe >= 2, "cq: shrink to 2 (cqe %d, ret %d)", cq->cqe, err);
		ok(ibv_poll_cq(cq, 4, wc) == 0, "cq: shrunk ring polls empty");
		err = ibv_resize_cq(cq, dattr.max_cqe + 1);
		ok(err == EINVAL, "cq: resize beyond max_cqe -> EINVAL (%d)", err);
		ok(ibv_poll_cq(cq, 4, wc) == 0, "cq: still polls after a failed resize");
		ok(!ibv_destroy_cq(cq), "cq: destroy resized CQ");
	}

	/* completion channel and arming (no completions: no events) */
	ch = ibv_create_comp_channel(ctx);
	if (!ok(ch, "cq: create a completion channel"))
		return;
	cq = ibv_create_cq(ctx, 64, NULL, ch, 0);
	if (ok(cq, "cq: create on the channel")) {
		ok(!ibv_req_notify_cq(cq, 0), "cq: arm next completion");
		ok(!ibv_req_notify_cq(cq, 1), "cq: arm solicited only");
		ok(!cq_event_pending(ch, 100), "cq: no event without a completion");
		ok(!ibv_destroy_cq(cq), "cq: destroy armed CQ");
	}
	ok(!ibv_destroy_comp_channel(ch), "cq: destroy the channel");

	struct ibv_cq_init_attr_ex cqa = {
		.cqe = 32,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM,
	};
	struct ibv_poll_cq_attr pa = {};
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(ctx, &cqa);

	if (ok(cqx, "cq: create_cq_ex")) {
		ok(ibv_start_poll(cqx, &pa) == ENOENT, "cq: cq_ex start_poll empty -> ENOENT");
		ok(!ibv_destroy_cq(ibv_cq_ex_to_cq(cqx)), "cq: destroy cq_ex");
	}
}

/* ---- SRQ ------------------------------------------------------------ */
static int post_srq(struct ibv_srq *srq, void *buf, uint32_t lkey, int nsge)
{
	struct ibv_sge sge[4];
	struct ibv_recv_wr wr = { .wr_id = 7, .sg_list = sge, .num_sge = nsge };
	struct ibv_recv_wr *bad;

	for (int i = 0; i < nsge; i++)
		sge[i] = (struct ibv_sge){ (uintptr_t)buf, 64, lkey };
	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* Wait up to @ms for an async event of @type; ack it. */
static bool async_event(enum ibv_event_type type, int ms)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;
	bool hit = false;

	while (poll(&pfd, 1, ms) > 0) {
		if (ibv_get_async_event(ctx, &ev))
			break;
		hit |= ev.event_type == type;
		ibv_ack_async_event(&ev);
		if (hit)
			break;
	}
	return hit;
}

static int fill_srq(struct ibv_srq *srq, void *buf, uint32_t lkey, int max)
{
	int n = 0, err;

	while (n <= max && !(err = post_srq(srq, buf, lkey, 1)))
		n++;
	errno = err;
	return err == ENOMEM ? n : -1;
}

static void test_srq(void)
{
	struct ibv_srq_init_attr ia = { .attr = { .max_wr = 16, .max_sge = 2 } };
	struct ibv_srq_attr qa;
	struct ibv_srq *srq;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	static char buf[4096];
	int n, err;

	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (!ok(pd && mr, "srq: PD and MR"))
		return;
	fcntl(ctx->async_fd, F_SETFL, fcntl(ctx->async_fd, F_GETFL) | O_NONBLOCK);

	srq = ibv_create_srq(pd, &ia);
	if (!ok(srq, "srq: create 16 x 2 SGEs"))
		goto out;
	ok(ia.attr.max_wr >= 16 && ia.attr.max_sge >= 2,
	   "srq: caps written back (max_wr %u max_sge %u)", ia.attr.max_wr,
	   ia.attr.max_sge);
	err = ibv_query_srq(srq, &qa);
	ok(!err && qa.max_wr == ia.attr.max_wr && qa.max_sge == ia.attr.max_sge &&
	   qa.srq_limit == 0, "srq: query (max_wr %u max_sge %u limit %u)",
	   qa.max_wr, qa.max_sge, qa.srq_limit);
	ok(post_srq(srq, buf, mr->lkey, 3) == EINVAL, "srq: 3 SGEs > max_sge -> EINVAL");

	for (n = 0; n < 5; n++)
		post_srq(srq, buf, mr->lkey, 2);
	memset(&qa, 0, sizeof(qa));
	qa.srq_limit = 5;
	ok(!ibv_modify_srq(srq, &qa, IBV_SRQ_LIMIT), "srq: arm limit 5 with 5 WQEs");
	ok(!async_event(IBV_EVENT_SRQ_LIMIT_REACHED, 200),
	   "srq: no limit event (5 is not below 5)");
	err = ibv_query_srq(srq, &qa);
	ok(!err && qa.srq_limit == 5, "srq: query limit 5 (%u)", qa.srq_limit);
	qa.srq_limit = 6;
	ok(!ibv_modify_srq(srq, &qa, IBV_SRQ_LIMIT), "srq: arm limit 6");
	ok(async_event(IBV_EVENT_SRQ_LIMIT_REACHED, 2000),
	   "srq: limit event: the kernel counts the 5 WQEs posted in the ring");
	err = ibv_query_srq(srq, &qa);
	ok(!err && qa.srq_limit == 0, "srq: limit disarmed after the event (%u)",
	   qa.srq_limit);
	qa.srq_limit = ia.attr.max_wr + 1;
	ok(ibv_modify_srq(srq, &qa, IBV_SRQ_LIMIT) == EINVAL,
	   "srq: limit above max_wr -> EINVAL");

	n = fill_srq(srq, buf, mr->lkey, ia.attr.max_wr);
	ok(n + 5 == (int)ia.attr.max_wr,
	   "srq: ring takes exactly max_wr WQEs, then ENOMEM (%d + 5)", n);

	/* resize: the kernel writes new mminfo through the user pointer */
	memset(&qa, 0, sizeof(qa));
	qa.max_wr = 100;
	err = ibv_modify_srq(srq, &qa, IBV_SRQ_MAX_WR);
	ok(!err, "srq: resize to 100 (%d)", err);
	err = ibv_query_srq(srq, &qa);
	ok(!err && qa.max_wr >= 100, "srq: query max_wr %u", qa.max_wr);
	n = fill_srq(srq, buf, mr->lkey, qa.max_wr);
	ok(n + (int)ia.attr.max_wr == (int)qa.max_wr,
	   "srq: resized ring kept the %u WQEs and takes %d more", ia.attr.max_wr, n);
	qa.srq_limit = qa.max_wr;
	ok(!ibv_modify_srq(srq, &qa, IBV_SRQ_LIMIT) &&
	   !async_event(IBV_EVENT_SRQ_LIMIT_REACHED, 200),
	   "srq: full resized ring: no event at limit = max_wr");
	memset(&qa, 0, sizeof(qa));
	qa.max_wr = 8;
	ok(ibv_modify_srq(srq, &qa, IBV_SRQ_MAX_WR) == EINVAL,
	   "srq: shrink below the WQEs queued -> EINVAL");
	ok(!ibv_destroy_srq(srq), "srq: destroy");

	ia.attr.max_wr = dattr.max_srq_wr + 1;
	srq = ibv_create_srq(pd, &ia);
	ok(!srq, "srq: max_wr above max_srq_wr fails");
	if (srq)
		ibv_destroy_srq(srq);
	ia.attr.max_wr = 4;
	ia.attr.max_sge = dattr.max_srq_sge + 1;
	srq = ibv_create_srq(pd, &ia);
	ok(!srq, "srq: max_sge above max_srq_sge fails");
	if (srq)
		ibv_destroy_srq(srq);
out:
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
}

/* ---- AH ------------------------------------------------------------- */
static int find_gid(bool v4, struct ibv_gid_entry *out)
{
	struct ibv_gid_entry e[64];
	ssize_t n = ibv_query_gid_table(ctx, e, 64, 0);

	for (ssize_t i = 0; i < n; i++) {
		const uint8_t *g = e[i].gid.raw;
		bool is_v4 = !memcmp(g, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12);

		if (e[i].gid_type != IBV_GID_TYPE_ROCE_V2 || is_v4 != v4)
			continue;
		if (!v4 && g[0] == 0xfe && g[1] == 0x80)
			continue;	/* want the global address */
		*out = e[i];
		return 0;
	}
	return -1;
}

static struct ibv_ah *make_ah(struct ibv_pd *pd, const struct ibv_gid_entry *src,
			      const union ibv_gid *dst)
{
	struct ibv_ah_attr a = {
		.is_global = 1,
		.port_num = 1,
		.grh = {
			.dgid = *dst,
			.sgid_index = src->gid_index,
			.hop_limit = 64,
			.traffic_class = 0x20,
			.flow_label = 0x12345,
		},
	};

	return ibv_create_ah(pd, &a);
}

static void test_ah(void)
{
	struct ibv_gid_entry g4 = {}, g6 = {};
	union ibv_gid peer = {};
	struct ibv_ah *ah, *ah2;
	struct ibv_pd *pd;
	int err;

	pd = ibv_alloc_pd(ctx);
	if (!ok(pd, "ah: PD"))
		return;
	err = find_gid(true, &g4);
	if (ok(!err, "ah: an IPv4 RoCEv2 GID (index %u)", g4.gid_index)) {
		ah = make_ah(pd, &g4, &g4.gid);
		if (ok(ah, "ah: IPv4 to our own address")) {
			ok(((struct rxe_ah_mirror *)ah)->ah_num > 0, "ah: ah_num %d > 0",
			   ((struct rxe_ah_mirror *)ah)->ah_num);
			ah2 = make_ah(pd, &g4, &g4.gid);
			ok(ah2 && ((struct rxe_ah_mirror *)ah2)->ah_num !=
			   ((struct rxe_ah_mirror *)ah)->ah_num, "ah: second AH, new ah_num");
			if (ah2)
				ibv_destroy_ah(ah2);
			ok(ibv_dealloc_pd(pd) == EBUSY, "ah: PD busy while an AH uses it");
			ok(!ibv_destroy_ah(ah), "ah: destroy IPv4 AH");
		}
		peer.raw[10] = peer.raw[11] = 0xff;
		inet_pton(AF_INET, "10.0.0.2", &peer.raw[12]);
		ah = make_ah(pd, &g4, &peer);
		ok(ah, "ah: IPv4 to a neighbour (10.0.0.2)");
		if (ah)
			ibv_destroy_ah(ah);
	}
	err = find_gid(false, &g6);
	if (ok(!err, "ah: an IPv6 RoCEv2 GID (index %u)", g6.gid_index)) {
		ah = make_ah(pd, &g6, &g6.gid);
		if (ok(ah, "ah: IPv6 to our own address")) {
			ok(((struct rxe_ah_mirror *)ah)->ah_num > 0, "ah: IPv6 ah_num > 0");
			ok(!ibv_destroy_ah(ah), "ah: destroy IPv6 AH");
		}
		ah = make_ah(pd, &g4, &g6.gid);
		ok(!ah, "ah: IPv4 source GID with an IPv6 destination fails");
		if (ah)
			ibv_destroy_ah(ah);
	}
	ok(!ibv_dealloc_pd(pd), "ah: free the PD");
}

static const struct {
	const char *name;
	void (*fn)(void);
} sections[] = {
	{ "pd", test_pd }, { "mr", test_mr }, { "cq", test_cq },
	{ "srq", test_srq }, { "ah", test_ah },
};

static bool wanted(const char *name, int argc, char **argv)
{
	if (argc <= 2)
		return true;
	for (int i = 2; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	int i, n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n# suite: objects\n");
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (argc < 2 || !strcmp(ibv_get_device_name(list[i]), argv[1]))
			break;
	if (!list || i == n) {
		printf("Bail out! no device %s\n", argc > 1 ? argv[1] : "");
		return 1;
	}
	ctx = ibv_open_device(list[i]);
	if (!ctx || ibv_query_device(ctx, &dattr)) {
		printf("Bail out! cannot open %s\n", ibv_get_device_name(list[i]));
		return 1;
	}
	for (i = 0; i < (int)(sizeof(sections) / sizeof(*sections)); i++)
		if (wanted(sections[i].name, argc, argv))
			sections[i].fn();
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return ktap_done();
}

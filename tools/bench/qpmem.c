// SPDX-License-Identifier: GPL-2.0
/*
 * qpmem - the kernel memory one RC QP costs on an RDMA device.
 *
 *   qpmem DEVICE N
 *
 * Creates N RC QPs on DEVICE (one PD, one CQ; each QP with perftest's
 * bandwidth-test depths: 128 send WRs, 512 receive WRs, one SGE) and
 * moves them to INIT, then destroys them. The kernel's share of the
 * memory that went away is
 *
 *   kernel = drop of MemFree (/proc/meminfo) - growth of this process's
 *            anonymous memory (RssAnon, /proc/self/status)
 *
 * so the queues the driver allocates and maps into this process count
 * once, as kernel memory, and libibverbs' own heap does not count. Run
 * it on an idle machine: anything else allocating meanwhile adds to the
 * figure. Prints, for make bench (tools/bench/guest.sh):
 *
 *   QPMEM qps N kernel_bytes_per_qp B returned_bytes R
 *
 * where R is how much of the kernel's share came back after the QPs,
 * CQ and PD were destroyed (about B * N; far less would be a leak or a
 * cache that keeps it). Exit status 0, or 1 with a message on stderr.
 *
 * Pages freed into the per-CPU page lists are not in MemFree, and by
 * default those lists hold megabytes (a fraction of the zone's low
 * watermark per CPU): enough to move R by a quarter at N = 256 on a
 * 2 GiB guest. So, when it may (root), qpmem shrinks them to their
 * minimum for the run through vm.percpu_pagelist_high_fraction and puts
 * the old value back at the end; otherwise it warns on stderr.
 */
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define QPMEM_MAX_QPS	4096

/* meminfo_kb: a "Name:   value kB" line of FILE, or -1 */
static long long meminfo_kb(const char *file, const char *name)
{
	size_t len = strlen(name);
	long long v = -1;
	char line[256];
	FILE *f;

	f = fopen(file, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, len) && line[len] == ':') {
			v = strtoll(line + len + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

#define QPMEM_PCP_SYSCTL	"/proc/sys/vm/percpu_pagelist_high_fraction"

/* pcp_fraction: read (val NULL) or write the sysctl; -1 on failure */
static long pcp_fraction(const char *val)
{
	long v = 0;
	FILE *f;

	f = fopen(QPMEM_PCP_SYSCTL, val ? "w" : "r");
	if (!f)
		return -1;
	if (val ? fputs(val, f) < 0 : fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (fclose(f))
		v = -1;
	return v;
}

/* kernel_kb: free memory minus this process's anonymous memory, in kB */
static long long kernel_kb(void)
{
	long long free_kb = meminfo_kb("/proc/meminfo", "MemFree");
	long long anon_kb = meminfo_kb("/proc/self/status", "RssAnon");

	if (free_kb < 0 || anon_kb < 0)
		return -1;
	/* a bigger value means more memory available outside this heap */
	return free_kb - anon_kb;
}

static struct ibv_context *open_device(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr attr = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};

	return ibv_modify_qp(qp, &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

int main(int argc, char **argv)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = 128, .max_recv_wr = 512,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};
	long long before, created = -1, after;
	char saved[32] = "";
	long pcp;
	struct ibv_context *ctx;
	struct ibv_qp **qps;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	int i, n, rc = 1;
	char *end;

	if (argc != 3) {
		fprintf(stderr, "usage: qpmem DEVICE N\n");
		return 1;
	}
	n = (int)strtol(argv[2], &end, 10);
	if (*end || n < 1 || n > QPMEM_MAX_QPS) {
		fprintf(stderr, "qpmem: N must be 1..%d\n", QPMEM_MAX_QPS);
		return 1;
	}
	qps = calloc(n, sizeof(*qps));
	ctx = open_device(argv[1]);
	if (!qps || !ctx) {
		fprintf(stderr, "qpmem: cannot open %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 1024, NULL, NULL, 0) : NULL;
	if (!cq) {
		fprintf(stderr, "qpmem: PD/CQ: %s\n", strerror(errno));
		return 1;
	}
	ia.send_cq = cq;
	ia.recv_cq = cq;

	/* the list size is batch * 4 at any fraction this large */
	pcp = pcp_fraction(NULL);
	if (pcp >= 0 && pcp_fraction("1000000") >= 0)
		snprintf(saved, sizeof(saved), "%ld", pcp);
	else
		fprintf(stderr, "qpmem: cannot shrink the per-CPU page lists (%s): R is rough\n",
			QPMEM_PCP_SYSCTL);

	before = kernel_kb();
	for (i = 0; i < n; i++) {
		qps[i] = ibv_create_qp(pd, &ia);
		if (!qps[i] || to_init(qps[i])) {
			fprintf(stderr, "qpmem: QP %d: %s\n", i, strerror(errno));
			goto out;
		}
	}
	created = kernel_kb();
	rc = 0;
out:
	for (i = 0; i < n; i++)
		if (qps[i] && ibv_destroy_qp(qps[i]))
			rc = 1;
	if (ibv_destroy_cq(cq) || ibv_dealloc_pd(pd))
		rc = 1;
	after = kernel_kb();
	if (saved[0] && pcp_fraction(saved) < 0)
		fprintf(stderr, "qpmem: cannot restore %s to %s\n", QPMEM_PCP_SYSCTL, saved);
	ibv_close_device(ctx);
	free(qps);
	if (rc)
		return rc;
	if (before < 0 || created < 0 || after < 0) {
		fprintf(stderr, "qpmem: cannot read /proc/meminfo\n");
		return 1;
	}
	printf("QPMEM qps %d kernel_bytes_per_qp %lld returned_bytes %lld\n",
	       n, (before - created) * 1024 / n, (after - created) * 1024);
	return 0;
}

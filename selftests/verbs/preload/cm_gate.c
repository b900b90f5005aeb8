// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cm_gate.so - LD_PRELOAD shim that keeps an rdma_cm client from sending
 * its connect request (CM REQ) before the server listens.
 *
 * perftest -R (4.5-0.17, Debian 12) connects twice to the same port: a
 * control connection, whose listener the server destroys once it has
 * accepted it, then, after a handshake over that connection, the data
 * connection, whose listener the server creates only after the
 * handshake. The client sends that second REQ as soon as the handshake
 * is done, so a server that is slow to reach rdma_listen() (a loaded
 * TCG guest) answers it with a REJ, reason 8 (IB_CM_REJ_INVALID_SERVICE_ID:
 * nothing listens on that port), and perftest's retry after
 * RDMA_CM_EVENT_REJECTED uses the CM IDs it has just destroyed: it
 * crashes in librdmacm ("general protection" in the kernel log). Both
 * are perftest's (the retry was fixed upstream in December 2025); see
 * Documentation/interop.rst.
 *
 * The gate is a TCP port that is open exactly while an rdma_cm listener
 * of the server exists:
 *   server: SOFTRC_CM_GATE_LISTEN=PORT  each rdma_listen() that succeeds
 *           opens a TCP listening socket on PORT (if none is open); the
 *           rdma_destroy_id() of that listener closes it again.
 *   client: SOFTRC_CM_GATE_CONNECT=HOST:PORT  each rdma_connect() first
 *           waits until a TCP connect to HOST:PORT succeeds (for at most
 *           SOFTRC_CM_GATE_SECS, default 120), then goes on.
 * Nothing else changes: the program's own traffic and checks run as
 * written.
 *
 * For the test that the gate is needed (selftests/verbs/interop_guest.sh):
 * SOFTRC_CM_LISTEN_DELAY="N SECS" makes the Nth rdma_listen() of the
 * process wait SECS seconds first.
 *
 * Runs in user space, in the process of the program it is preloaded into.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <rdma/rdma_cma.h>

static int gate_fd = -1;
static struct rdma_cm_id *gate_id;	/* the listener that opened the gate */

static void *real_fn(const char *name)
{
	void *f = dlsym(RTLD_NEXT, name);

	if (!f)
		fprintf(stderr, "cm_gate: no %s\n", name);
	return f;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* server: a TCP listening socket on SOFTRC_CM_GATE_LISTEN */
static void gate_open(struct rdma_cm_id *id)
{
	const char *p = getenv("SOFTRC_CM_GATE_LISTEN");
	struct sockaddr_in a = { .sin_family = AF_INET };
	int one = 1, fd;

	if (!p || gate_fd >= 0)
		return;
	a.sin_port = htons((unsigned short)atoi(p));
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 16)) {
		fprintf(stderr, "cm_gate: gate port %s: %s\n", p, strerror(errno));
		close(fd);
		return;
	}
	gate_fd = fd;
	gate_id = id;
}

/* client: wait until the gate HOST:PORT accepts a TCP connection */
static void gate_wait(void)
{
	const char *g = getenv("SOFTRC_CM_GATE_CONNECT");
	const char *s = getenv("SOFTRC_CM_GATE_SECS");
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM }, *res;
	char host[256], *port;
	double end;
	int fd;

	if (!g || strlen(g) >= sizeof(host))
		return;
	strcpy(host, g);
	port = strrchr(host, ':');
	if (!port)
		return;
	*port++ = '\0';
	if (getaddrinfo(host, port, &hints, &res))
		return;
	end = now_s() + (s ? atof(s) : 120.0);
	for (;;) {
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && !connect(fd, res->ai_addr, res->ai_addrlen)) {
			close(fd);
			break;
		}
		if (fd >= 0)
			close(fd);
		if (now_s() > end) {
			fprintf(stderr, "cm_gate: %s stayed closed\n", g);
			break;
		}
		usleep(50000);
	}
	freeaddrinfo(res);
}

int rdma_listen(struct rdma_cm_id *id, int backlog)
{
	static int (*real)(struct rdma_cm_id *, int);
	static int calls;
	const char *d = getenv("SOFTRC_CM_LISTEN_DELAY");
	int n, ret;
	double secs;

	if (!real)
		real = (int (*)(struct rdma_cm_id *, int))real_fn("rdma_listen");
	if (!real)
		return -1;
	calls++;
	if (d && sscanf(d, "%d %lf", &n, &secs) == 2 && n == calls)
		usleep((useconds_t)(secs * 1e6));
	ret = real(id, backlog);
	if (!ret)
		gate_open(id);
	return ret;
}

int rdma_destroy_id(struct rdma_cm_id *id)
{
	static int (*real)(struct rdma_cm_id *);

	if (!real)
		real = (int (*)(struct rdma_cm_id *))real_fn("rdma_destroy_id");
	if (!real)
		return -1;
	if (id && id == gate_id && gate_fd >= 0) {
		close(gate_fd);
		gate_fd = -1;
		gate_id = NULL;
	}
	return real(id);
}

int rdma_connect(struct rdma_cm_id *id, struct rdma_conn_param *param)
{
	static int (*real)(struct rdma_cm_id *, struct rdma_conn_param *);

	if (!real)
		real = (int (*)(struct rdma_cm_id *, struct rdma_conn_param *))
		       real_fn("rdma_connect");
	if (!real)
		return -1;
	gate_wait();
	return real(id, param);
}

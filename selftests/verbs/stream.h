/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The stream socket over which the two processes of a verbs test program
 * (rc_verify, ud_verify, uc_verify) exchange QP numbers, keys and
 * results: TCP, or a Unix socket path, which also works across network
 * namespaces. Every failure ends the program with a KTAP "Bail out!" and
 * exit status 2. Runs in user space.
 */
#ifndef SOFTRC_VERBS_STREAM_H
#define SOFTRC_VERBS_STREAM_H

#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* seconds on the monotonic clock */
static __attribute__((unused)) double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static __attribute__((noreturn, format(printf, 1, 2), unused))
void bail(const char *fmt, ...)
{
	va_list ap;

	fputs("Bail out! ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fputc('\n', stdout);
	fflush(stdout);
	exit(2);
}

/* all of @len bytes to (@out) or from the peer */
static __attribute__((unused)) void xfer(int fd, void *buf, size_t len,
					 bool out)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			bail("socket %s: %s", out ? "write" : "read",
			     n ? strerror(errno) : "peer closed");
		}
		p += n;
		len -= (size_t)n;
	}
}

static __attribute__((unused)) void put(int fd, const void *b, size_t l)
{
	xfer(fd, (void *)b, l, true);
}

static __attribute__((unused)) void get(int fd, void *b, size_t l)
{
	xfer(fd, b, l, false);
}

/*
 * A Unix stream socket at @path: listening, or connected (retried until
 * @deadline, as the server may start later).
 */
static __attribute__((unused))
int sock_unix(const char *path, bool listen_, double deadline)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		bail("unix socket %s", path);
	strcpy(sa.sun_path, path);
	if (listen_) {
		unlink(path);
		if (bind(fd, (void *)&sa, sizeof(sa)) || listen(fd, 1))
			bail("bind %s: %s", path, strerror(errno));
		return fd;
	}
	do {
		if (!connect(fd, (void *)&sa, sizeof(sa)))
			return fd;
		usleep(50000);
	} while (now() < deadline);
	bail("connect %s: %s", path, strerror(errno));
}

/* A TCP socket: listening on @port, or connected to @host (until @deadline) */
static __attribute__((unused))
int sock_tcp(const char *host, int port, bool listen_, double deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = listen_ ? AI_PASSIVE : 0 };
	struct addrinfo *ai, *a;
	char ps[16];
	int fd = -1, i, one = 1;

	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(host, ps, &hints, &ai))
		bail("getaddrinfo %s", host ? host : "(any)");
	for (i = 0; fd < 0 && (!i || now() < deadline); i++) {
		for (a = ai; a; a = a->ai_next) {
			fd = socket(a->ai_family, a->ai_socktype, 0);
			if (fd < 0)
				continue;
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (listen_ ? !bind(fd, a->ai_addr, a->ai_addrlen) &&
				      !listen(fd, 1) :
				      !connect(fd, a->ai_addr, a->ai_addrlen))
				break;
			close(fd);
			fd = -1;
		}
		if (fd < 0)
			usleep(50000);
	}
	freeaddrinfo(ai);
	if (fd < 0)
		bail("%s %s:%d: %s", listen_ ? "listen" : "connect",
		     host ? host : "*", port, strerror(errno));
	return fd;
}

/*
 * A connected socket to the peer: the client's to @peer (a path starting
 * with '/' for a Unix socket, else a host name for TCP @port); the
 * server's first connection on @peer or @port, after which it stops
 * listening.
 */
static __attribute__((unused))
int sock_pair(bool server, const char *peer, int port, double deadline)
{
	bool unix_ = peer && peer[0] == '/';
	int lfd, c;

	if (!server)
		return unix_ ? sock_unix(peer, false, deadline) :
			       sock_tcp(peer, port, false, deadline);
	lfd = unix_ ? sock_unix(peer, true, deadline) :
		      sock_tcp(NULL, port, true, deadline);
	c = accept(lfd, NULL, NULL);
	if (c < 0)
		bail("accept: %s", strerror(errno));
	close(lfd);
	if (unix_)
		unlink(peer);
	return c;
}

#endif /* SOFTRC_VERBS_STREAM_H */

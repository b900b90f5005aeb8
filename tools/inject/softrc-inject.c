// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softrc-inject - build RoCE v2 RC packets and send them, for adversary tests.
 *
 * No libibverbs: the headers are written with include/softrc/wire.h's
 * accessors at the offsets of the core's opcode table, and the ICRC is the
 * core's own (drivers/infiniband/sw/softrc/core/icrc.c, compiled in).
 *
 * Two ways out:
 *   --raw   IPv4 raw socket (IP_HDRINCL, root): any source address; the IP
 *           and UDP headers are ours, the UDP checksum is computed.
 *   --udp   a plain UDP socket (default; any user): sendto(DST, 4791). The
 *           kernel writes IP and UDP; the ICRC is computed over the headers
 *           it will send. The socket is bound to the source address (given
 *           or the one the route picks) and is left unconnected with
 *           IP_PMTUDISC_DO, so the IP ID is 0 and DF is set: with TOS, TTL,
 *           IP checksum and UDP checksum masked (core/icrc.c) nothing the
 *           kernel fills in is unknown.
 * Both send IPv4 with DF and ID 0 (a raw packet with ID 0 and DF keeps
 * ID 0, see ip_select_ident()).
 *
 * --count N sends N packets, the PSN advancing by --psn-step (default 1,
 * may be negative) each, mod 2^24: a PSN sweep. --hex prints the packets
 * instead of sending them. --self-test checks the builder against the
 * core's parser and ICRC and prints KTAP.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <softrc/wire.h>
#include "icrc.h"
#include "parse.h"

#define IP_HDR		SOFTRC_IPV4_HDR_BYTES
#define UDP_HDR		SOFTRC_UDP_HDR_BYTES
#define PAYLOAD_MAX	4096
#define PKT_MAX		(IP_HDR + UDP_HDR + SOFTRC_HDRS_MAX + PAYLOAD_MAX + 8)

struct spec {
	u8 opcode;
	u32 qpn;
	u32 psn;
	int psn_step;
	u16 pkey;
	bool se;
	bool ackreq;
	u64 va;
	u32 rkey;
	u32 len;
	u64 swap_add;
	u64 compare;
	u8 syndrome;
	u32 msn;
	u64 orig;
	u32 imm;
	u32 inv_rkey;
	u32 payload;
	int pattern;		/* byte value, or -1: byte i = i */
	struct in_addr src;
	struct in_addr dst;
	u16 sport;
	u8 ttl;
	u8 tos;
	u16 ip_id;
};

/* --- packet builder --------------------------------------------------- */

static u16 csum_fold(u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (u16)~sum;
}

static u32 csum_add(u32 sum, const u8 *p, u32 len)
{
	u32 i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (u32)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (u32)p[len - 1] << 8;
	return sum;
}

static void put16(u8 *p, u16 v)
{
	p[0] = v >> 8;
	p[1] = (u8)v;
}

/*
 * The whole IPv4 packet for @s with PSN @psn into @buf (PKT_MAX bytes).
 * Return: its length, 0 if the opcode is not an RC opcode.
 */
static u32 build(const struct spec *s, u32 psn, u8 *buf)
{
	const struct softrc_opcode_info *op = softrc_opcode_get(s->opcode);
	u8 *ip = buf, *udp = buf + IP_HDR, *bth = udp + UDP_HDR;
	u32 pad = softrc_padcnt(s->payload), tlen, len, i, sum;
	u8 *pl;

	if (!op)
		return 0;
	memset(buf, 0, PKT_MAX);
	softrc_bth_set((struct softrc_bth *)bth, s->opcode, s->se, (u8)pad,
		       s->pkey, s->qpn, s->ackreq, psn);
	if (op->flags & SOFTRC_H_RETH)
		softrc_reth_set(softrc_pkt_reth(op, bth), s->va, s->rkey, s->len);
	if (op->flags & SOFTRC_H_ATMETH)
		softrc_atmeth_set(softrc_pkt_atmeth(op, bth), s->va, s->rkey,
				  s->swap_add, s->compare);
	if (op->flags & SOFTRC_H_AETH)
		softrc_aeth_set(softrc_pkt_aeth(op, bth), s->syndrome, s->msn);
	if (op->flags & SOFTRC_H_ATMACK)
		softrc_atmack_set(softrc_pkt_atmack(op, bth), s->orig);
	if (op->flags & SOFTRC_H_IMMDT)
		softrc_immdt_set(softrc_pkt_immdt(op, bth), cpu_to_be32(s->imm));
	if (op->flags & SOFTRC_H_IETH)
		softrc_ieth_set(softrc_pkt_ieth(op, bth), s->inv_rkey);
	pl = bth + op->hdr_len;
	for (i = 0; i < s->payload; i++)
		pl[i] = s->pattern < 0 ? (u8)i : (u8)s->pattern;
	tlen = op->hdr_len + s->payload + pad + SOFTRC_ICRC_BYTES;
	len = IP_HDR + UDP_HDR + tlen;

	ip[0] = 0x45;
	ip[1] = s->tos;
	put16(ip + 2, (u16)len);
	put16(ip + 4, s->ip_id);
	put16(ip + 6, 0x4000);			/* DF */
	ip[8] = s->ttl;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, &s->src, 4);
	memcpy(ip + 16, &s->dst, 4);
	put16(ip + 10, csum_fold(csum_add(0, ip, IP_HDR)));

	put16(udp, s->sport);
	put16(udp + 2, SOFTRC_ROCEV2_UDP_PORT);
	put16(udp + 4, (u16)(UDP_HDR + tlen));

	softrc_icrc_put(buf + len - SOFTRC_ICRC_BYTES,
			softrc_eng_icrc_calc(ip, false, len - SOFTRC_ICRC_BYTES));

	/* UDP checksum last: it covers the ICRC; masked in the ICRC */
	sum = csum_add(0, ip + 12, 8) + IPPROTO_UDP + UDP_HDR + tlen;
	sum = csum_add(sum, udp, UDP_HDR + tlen);
	put16(udp + 6, csum_fold(sum) ? csum_fold(sum) : 0xffff);
	return len;
}

/* --- command line ----------------------------------------------------- */

static int parse_opcode(const char *name)
{
	char *end;
	long v;
	int i;

	for (i = 0; i < SOFTRC_OPCODE_NR; i++) {
		const struct softrc_opcode_info *op = softrc_opcode_get((u8)i);

		if (op && !strcasecmp(op->name, name))
			return i;
	}
	v = strtol(name, &end, 0);
	if (*name && !*end && v >= 0 && v < SOFTRC_OPCODE_NR &&
	    softrc_opcode_get((u8)v))
		return (int)v;
	return -1;
}

static __attribute__((noreturn, format(printf, 1, 2))) void die(const char *fmt, ...)
{
	va_list ap;

	fputs("softrc-inject: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static unsigned long long num(const char *opt, const char *arg,
			      unsigned long long max)
{
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || !*arg || *end || v > max)
		die("--%s: bad value '%s'", opt, arg);
	return v;
}

static struct in_addr addr(const char *opt, const char *arg)
{
	struct in_addr a;

	if (inet_pton(AF_INET, arg, &a) != 1)
		die("--%s: not an IPv4 address: '%s'", opt, arg);
	return a;
}

static void usage(void)
{
	puts("usage: softrc-inject [--raw|--udp] --dst IP [--src IP] --op OPCODE\n"
	     "         --qpn N --psn N [options]\n"
	     "       softrc-inject --self-test\n"
	     "  --op NAME|N      RC opcode: SEND_ONLY, RDMA_WRITE_FIRST, RDMA_WRITE_ONLY,\n"
	     "                   RDMA_READ_REQUEST, RDMA_READ_RESPONSE_ONLY, ACKNOWLEDGE,\n"
	     "                   FETCH_ADD, COMPARE_SWAP, ... (names of include/softrc/opcode.h)\n"
	     "  --qpn N --psn N --pkey N (0xffff) --se --ackreq\n"
	     "  --va N --rkey N --len N  RETH; --va --rkey --swap N --compare N  AtomicETH\n"
	     "  --syndrome N --msn N     AETH (ACK 0x1f, NAK InvReq 0x61, ...)\n"
	     "  --orig N --imm N --inv-rkey N\n"
	     "  --payload BYTES --pattern BYTE|inc  payload (default: 0 bytes, 0xee)\n"
	     "  --count N --psn-step N   N packets, PSN += step each (a sweep)\n"
	     "  --src IP --dst IP --sport N (raw: 49152) --ttl N --tos N --ip-id N\n"
	     "  --raw  raw IPv4 socket, any source (root); --udp  plain UDP socket\n"
	     "  --hex  print the packets (from the IP header) instead of sending");
}

/* --- sending ---------------------------------------------------------- */

static void hexdump(const u8 *p, u32 len)
{
	u32 i;

	for (i = 0; i < len; i++)
		printf("%02x%s", p[i], (i & 15) == 15 || i + 1 == len ? "\n" : " ");
}

/* A UDP socket bound to s->src (or the route's choice); fills s->src/sport. */
static int udp_socket(struct spec *s, bool have_src)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sa);
	int fd, pmtu = IP_PMTUDISC_DO;

	if (!have_src) {
		/* the source address the kernel would pick for DST */
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		sa.sin_addr = s->dst;
		sa.sin_port = htons(SOFTRC_ROCEV2_UDP_PORT);
		if (fd < 0 || connect(fd, (void *)&sa, sizeof(sa)) ||
		    getsockname(fd, (void *)&sa, &sl))
			die("route to %s: %s", inet_ntoa(s->dst), strerror(errno));
		s->src = sa.sin_addr;
		close(fd);
	}
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu)))
		die("IP_MTU_DISCOVER: %s", strerror(errno));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr = s->src;
	sa.sin_port = htons(s->sport);
	sl = sizeof(sa);
	if (bind(fd, (void *)&sa, sizeof(sa)) || getsockname(fd, (void *)&sa, &sl))
		die("bind %s:%u: %s", inet_ntoa(s->src), s->sport, strerror(errno));
	s->sport = ntohs(sa.sin_port);
	s->ttl = 64;		/* masked in the ICRC; for --hex only */
	s->tos = 0;
	s->ip_id = 0;
	return fd;
}

static int raw_socket(void)
{
	int fd = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);

	if (fd < 0)
		die("raw socket: %s (needs CAP_NET_RAW)", strerror(errno));
	return fd;
}

static int send_all(struct spec *s, bool raw, bool hex, bool have_src,
		    u32 count)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr = s->dst };
	static u8 buf[PKT_MAX];
	int fd = -1;
	u32 i, len;

	if (!hex)
		fd = raw ? raw_socket() : udp_socket(s, have_src);
	else if (!raw && !have_src)
		die("--hex with --udp needs --src");
	to.sin_port = raw ? 0 : htons(SOFTRC_ROCEV2_UDP_PORT);
	for (i = 0; i < count; i++) {
		u32 psn = (s->psn + (u32)((int)i * s->psn_step)) & SOFTRC_PSN_MASK;
		const u8 *p = buf;
		ssize_t n;

		len = build(s, psn, buf);
		if (hex) {
			printf("# packet %u: %s psn %u, %u bytes\n", i,
			       softrc_eng_opcode_name(s->opcode), psn, len);
			hexdump(buf, len);
			continue;
		}
		if (!raw) {
			p += IP_HDR + UDP_HDR;	/* the kernel adds IP + UDP */
			len -= IP_HDR + UDP_HDR;
		}
		n = sendto(fd, p, len, 0, (void *)&to, sizeof(to));
		if (n != (ssize_t)len)
			die("sendto %s: %s", inet_ntoa(s->dst),
			    n < 0 ? strerror(errno) : "short");
	}
	if (fd >= 0)
		close(fd);
	if (!hex)
		fprintf(stderr, "softrc-inject: %u x %s to %s qpn %u psn %u%s (%s)\n",
			count, softrc_eng_opcode_name(s->opcode), inet_ntoa(s->dst),
			s->qpn, s->psn, count > 1 ? "..." : "",
			raw ? "raw" : "udp");
	return 0;
}

/* --- self-test -------------------------------------------------------- */

static int st_n, st_failed;

static bool st_ok(bool cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", cond ? "" : "not ", ++st_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	st_failed += !cond;
	return cond;
}

/* Build @s, then check the ICRC and the core's parse of it. */
static void st_case(const struct spec *s)
{
	const char *name = softrc_eng_opcode_name(s->opcode);
	static u8 buf[PKT_MAX];
	u32 len = build(s, s->psn, buf), tlen = len - IP_HDR - UDP_HDR;
	const u8 *bth = buf + IP_HDR + UDP_HDR;
	struct softrc_pkt pkt;
	int st;
	bool f;

	st_ok(softrc_eng_icrc_check(buf, false, len - SOFTRC_ICRC_BYTES),
	      "%s: ICRC verifies", name);
	/* the kernel may change TTL, TOS and the IP checksum: masked */
	buf[1] ^= 0xb8;
	buf[8] ^= 0x3f;
	buf[10] ^= 0x5a;
	buf[IP_HDR + 6] ^= 0x77;	/* UDP checksum */
	f = softrc_eng_icrc_check(buf, false, len - SOFTRC_ICRC_BYTES);
	buf[1] ^= 0xb8;
	buf[8] ^= 0x3f;
	buf[10] ^= 0x5a;
	buf[IP_HDR + 6] ^= 0x77;
	st_ok(f, "%s: ICRC still verifies with TOS, TTL and checksums changed", name);
	buf[16] ^= 1;			/* destination address */
	f = softrc_eng_icrc_check(buf, false, len - SOFTRC_ICRC_BYTES);
	buf[16] ^= 1;
	st_ok(!f, "%s: ICRC fails with the destination address changed", name);
	buf[IP_HDR + 1] ^= 1;		/* UDP source port */
	f = softrc_eng_icrc_check(buf, false, len - SOFTRC_ICRC_BYTES);
	buf[IP_HDR + 1] ^= 1;
	st_ok(!f, "%s: ICRC fails with the UDP source port changed", name);
	st = softrc_parse(bth, tlen, tlen, 256, &pkt);
	if (!st_ok(st == SOFTRC_PARSE_OK, "%s: the core's parser accepts it (%s)",
		   name, softrc_eng_parse_status_name(st)))
		return;
	st_ok(pkt.opcode == s->opcode && pkt.dqpn == s->qpn &&
	      pkt.psn == s->psn && pkt.pkey == s->pkey && pkt.se == s->se &&
	      pkt.ackreq == s->ackreq && pkt.payload_len == s->payload,
	      "%s: BTH fields and payload length read back", name);
	if (pkt.op->flags & (SOFTRC_H_RETH | SOFTRC_H_ATMETH))
		st_ok(pkt.va == s->va && pkt.rkey == s->rkey &&
		      (!(pkt.op->flags & SOFTRC_H_RETH) || pkt.dma_len == s->len),
		      "%s: VA, R_Key, DMA length read back", name);
	if (pkt.op->flags & SOFTRC_H_ATMETH)
		st_ok(pkt.swap_add == s->swap_add && pkt.compare == s->compare,
		      "%s: swap/add and compare read back", name);
	if (pkt.op->flags & SOFTRC_H_AETH)
		st_ok(pkt.syndrome == s->syndrome && pkt.msn == s->msn,
		      "%s: syndrome and MSN read back", name);
	if (s->payload)
		st_ok(bth[pkt.payload_off] == (u8)s->pattern &&
		      bth[pkt.payload_off + s->payload - 1] == (u8)s->pattern,
		      "%s: payload where the parser says", name);
}

static int self_test(void)
{
	struct spec base = {
		.qpn = 0x123456, .psn = 0xfffffe, .pkey = 0xffff, .ttl = 64,
		.sport = 49152, .pattern = 0xab,
	};
	static const struct { const char *op; u32 payload; bool ackreq; }
	cases[] = {
		{ "SEND_ONLY", 61, true },
		{ "SEND_ONLY", 0, false },
		{ "RDMA_WRITE_ONLY", 100, true },
		{ "RDMA_WRITE_FIRST", 256, false },
		{ "RDMA_READ_REQUEST", 0, true },
		{ "FETCH_ADD", 0, true },
		{ "COMPARE_SWAP", 0, true },
		{ "ACKNOWLEDGE", 0, false },
		{ "RDMA_READ_RESPONSE_ONLY", 64, false },
		{ "ATOMIC_ACKNOWLEDGE", 0, false },
		{ "SEND_ONLY_WITH_IMMEDIATE", 7, true },
	};
	u32 i;

	inet_pton(AF_INET, "10.0.0.3", &base.src);
	inet_pton(AF_INET, "10.0.0.1", &base.dst);
	printf("TAP version 13\n# softrc-inject self-test\n");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct spec s = base;

		s.opcode = (u8)parse_opcode(cases[i].op);
		s.payload = cases[i].payload;
		s.ackreq = cases[i].ackreq;
		s.se = s.ackreq && (softrc_opcode_get(s.opcode)->flags & SOFTRC_OPF_SEND);
		s.va = 0x7f0012345678ull & ~7ull;
		s.rkey = 0xabcd1234;
		s.len = s.opcode == SOFTRC_OP_RDMA_WRITE_FIRST ? 0xc0000000u :
			s.opcode == SOFTRC_OP_RDMA_WRITE_ONLY ? s.payload : 0xffffffffu;
		s.swap_add = 0x0102030405060708ull;
		s.compare = 0x1112131415161718ull;
		s.syndrome = s.opcode == SOFTRC_OP_ACKNOWLEDGE ? 0x61 : 0x1f;
		s.msn = 0xabcdef;
		st_case(&s);
	}
	printf("1..%d\n", st_n);
	return st_failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "op", 1, 0, 'o' }, { "qpn", 1, 0, 'q' }, { "psn", 1, 0, 'p' },
		{ "pkey", 1, 0, 'k' }, { "se", 0, 0, 'E' }, { "ackreq", 0, 0, 'A' },
		{ "va", 1, 0, 'v' }, { "rkey", 1, 0, 'r' }, { "len", 1, 0, 'l' },
		{ "swap", 1, 0, 'w' }, { "compare", 1, 0, 'c' },
		{ "syndrome", 1, 0, 'y' }, { "msn", 1, 0, 'm' },
		{ "orig", 1, 0, 'O' }, { "imm", 1, 0, 'I' },
		{ "inv-rkey", 1, 0, 'V' }, { "payload", 1, 0, 'P' },
		{ "pattern", 1, 0, 't' }, { "count", 1, 0, 'n' },
		{ "psn-step", 1, 0, 'S' }, { "src", 1, 0, 's' },
		{ "dst", 1, 0, 'd' }, { "sport", 1, 0, 'u' }, { "ttl", 1, 0, 'T' },
		{ "tos", 1, 0, 'Q' }, { "ip-id", 1, 0, 'i' }, { "raw", 0, 0, 'R' },
		{ "udp", 0, 0, 'U' }, { "hex", 0, 0, 'x' },
		{ "self-test", 0, 0, 'X' }, { "help", 0, 0, 'h' }, { 0 }
	};
	struct spec s = { .pkey = SOFTRC_DEFAULT_PKEY, .psn_step = 1,
			  .pattern = 0xee, .ttl = 64 };
	bool raw = false, hex = false, have_src = false, have_dst = false;
	bool have_op = false, have_qpn = false, have_psn = false;
	u32 count = 1;
	long step;
	int c, o;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		const char *n = lo[0].name;

		for (o = 0; lo[o].name; o++)
			if (lo[o].val == c)
				n = lo[o].name;
		switch (c) {
		case 'o':
			o = parse_opcode(optarg);
			if (o < 0)
				die("--op: unknown RC opcode '%s'", optarg);
			s.opcode = (u8)o;
			have_op = true;
			break;
		case 'q': s.qpn = (u32)num(n, optarg, SOFTRC_QPN_MASK); have_qpn = true; break;
		case 'p': s.psn = (u32)num(n, optarg, SOFTRC_PSN_MASK); have_psn = true; break;
		case 'k': s.pkey = (u16)num(n, optarg, 0xffff); break;
		case 'E': s.se = true; break;
		case 'A': s.ackreq = true; break;
		case 'v': s.va = num(n, optarg, ~0ull); break;
		case 'r': s.rkey = (u32)num(n, optarg, 0xffffffffu); break;
		case 'l': s.len = (u32)num(n, optarg, 0xffffffffu); break;
		case 'w': s.swap_add = num(n, optarg, ~0ull); break;
		case 'c': s.compare = num(n, optarg, ~0ull); break;
		case 'y': s.syndrome = (u8)num(n, optarg, 0xff); break;
		case 'm': s.msn = (u32)num(n, optarg, SOFTRC_MSN_MASK); break;
		case 'O': s.orig = num(n, optarg, ~0ull); break;
		case 'I': s.imm = (u32)num(n, optarg, 0xffffffffu); break;
		case 'V': s.inv_rkey = (u32)num(n, optarg, 0xffffffffu); break;
		case 'P': s.payload = (u32)num(n, optarg, PAYLOAD_MAX); break;
		case 't':
			s.pattern = !strcmp(optarg, "inc") ? -1 :
				    (int)num(n, optarg, 0xff);
			break;
		case 'n': count = (u32)num(n, optarg, 1u << 24); break;
		case 'S':
			step = strtol(optarg, NULL, 0);
			if (step < -(1L << 23) || step > (1L << 23))
				die("--psn-step: bad value '%s'", optarg);
			s.psn_step = (int)step;
			break;
		case 's': s.src = addr(n, optarg); have_src = true; break;
		case 'd': s.dst = addr(n, optarg); have_dst = true; break;
		case 'u': s.sport = (u16)num(n, optarg, 0xffff); break;
		case 'T': s.ttl = (u8)num(n, optarg, 0xff); break;
		case 'Q': s.tos = (u8)num(n, optarg, 0xff); break;
		case 'i': s.ip_id = (u16)num(n, optarg, 0xffff); break;
		case 'R': raw = true; break;
		case 'U': raw = false; break;
		case 'x': hex = true; break;
		case 'X': return self_test();
		case 'h': usage(); return 0;
		default: usage(); return 2;
		}
	}
	if (optind != argc || !have_op || !have_qpn || !have_psn || !have_dst) {
		usage();
		die("--op, --qpn, --psn and --dst are required");
	}
	if (raw && !have_src)
		die("--raw needs --src");
	if (raw && !s.sport)
		s.sport = 49152;
	if (s.payload && !(softrc_opcode_get(s.opcode)->flags & SOFTRC_OPF_PAYLOAD))
		die("--payload: %s carries no payload", softrc_eng_opcode_name(s.opcode));
	return send_all(&s, raw, hex, have_src, count);
}

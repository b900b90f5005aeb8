// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Classic pcap reader and RoCEv2 frame locator for the host suites.
 *
 * Context: host user space only; reads one file into memory.
 */
#include <stdio.h>
#include <stdlib.h>
#include "pcap.h"

#define PCAP_MAGIC_US		0xa1b2c3d4u
#define PCAP_MAGIC_NS		0xa1b23c4du
#define PCAP_FILE_HDR		24
#define PCAP_REC_HDR		16
#define PCAP_LINKTYPE_ETHERNET	1
#define ETH_HDR			14
#define ETH_P_IPV4		0x0800
#define ETH_P_IPV6		0x86dd
#define IPPROTO_UDP_NR		17
#define ROCEV2_PORT		4791

static u32 pcap_u32(const struct softrc_pcap *pc, const u8 *p)
{
	u32 v;

	memcpy(&v, p, 4);
	return pc->swapped ? __builtin_bswap32(v) : v;
}

static u16 be16(const u8 *p)
{
	return (u16)(p[0] << 8 | p[1]);
}

static int pcap_read_file(struct softrc_pcap *pc, const char *path)
{
	FILE *f = fopen(path, "rb");
	long n = -1;

	if (!f)
		return -1;
	if (!fseek(f, 0, SEEK_END))
		n = ftell(f);
	if (n < 0 || fseek(f, 0, SEEK_SET))
		goto fail;
	pc->data = malloc(n ? n : 1);
	if (!pc->data || fread(pc->data, 1, n, f) != (size_t)n)
		goto fail;
	pc->len = n;
	fclose(f);
	return 0;
fail:
	fclose(f);
	free(pc->data);
	pc->data = NULL;
	return -1;
}

int softrc_pcap_open(struct softrc_pcap *pc, const char *path)
{
	u32 magic;

	memset(pc, 0, sizeof(*pc));
	if (pcap_read_file(pc, path))
		return -1;
	if (pc->len < PCAP_FILE_HDR)
		goto bad;
	memcpy(&magic, pc->data, 4);
	if (magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS) {
		pc->swapped = true;
		magic = __builtin_bswap32(magic);
		if (magic != PCAP_MAGIC_US && magic != PCAP_MAGIC_NS)
			goto bad;
	}
	pc->linktype = pcap_u32(pc, pc->data + 20);
	if (pc->linktype != PCAP_LINKTYPE_ETHERNET)
		goto bad;
	pc->off = PCAP_FILE_HDR;
	return 0;
bad:
	softrc_pcap_close(pc);
	return -1;
}

int softrc_pcap_next(struct softrc_pcap *pc, struct softrc_pcap_frame *f)
{
	const u8 *rec = pc->data + pc->off;

	if (pc->off == pc->len)
		return 0;
	if (pc->len - pc->off < PCAP_REC_HDR)
		return -1;
	f->caplen = pcap_u32(pc, rec + 8);
	f->origlen = pcap_u32(pc, rec + 12);
	if (pc->len - pc->off - PCAP_REC_HDR < f->caplen)
		return -1;
	f->data = rec + PCAP_REC_HDR;
	pc->off += PCAP_REC_HDR + f->caplen;
	return 1;
}

void softrc_pcap_close(struct softrc_pcap *pc)
{
	free(pc->data);
	memset(pc, 0, sizeof(*pc));
}

/* IPv4 or IPv6 header at @ip: UDP offset and IP total length, or -1. */
static int roce_ip(const u8 *ip, u32 avail, bool ipv6, u32 *udp_off,
		   u32 *ip_len)
{
	if (ipv6) {
		if (avail < 40 || (ip[0] >> 4) != 6 || ip[6] != IPPROTO_UDP_NR)
			return -1;
		*udp_off = 40;
		*ip_len = 40 + be16(ip + 4);
		return 0;
	}
	if (avail < 20 || (ip[0] >> 4) != 4 || (ip[0] & 0xf) < 5 ||
	    ip[9] != IPPROTO_UDP_NR)
		return -1;
	*udp_off = (ip[0] & 0xf) * 4;
	*ip_len = be16(ip + 2);
	return 0;
}

int softrc_roce_locate(const u8 *frame, u32 len, struct softrc_roce *r)
{
	u32 udp_off, ip_len, udp_len;
	u16 type;

	if (len < ETH_HDR)
		return -1;
	type = be16(frame + 12);
	if (type != ETH_P_IPV4 && type != ETH_P_IPV6)
		return -1;
	r->ipv6 = type == ETH_P_IPV6;
	r->l3 = frame + ETH_HDR;
	len -= ETH_HDR;
	if (roce_ip(r->l3, len, r->ipv6, &udp_off, &ip_len))
		return -1;
	if (ip_len > len || udp_off + 8 > ip_len)
		return -1;
	r->udp = r->l3 + udp_off;
	udp_len = be16(r->udp + 4);
	if (be16(r->udp + 2) != ROCEV2_PORT || udp_len < 8 ||
	    udp_off + udp_len > ip_len)
		return -1;
	r->bth = r->udp + 8;
	r->pkt_len = udp_len - 8;
	r->l3_len = udp_off + udp_len;
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A tiny reader of classic pcap files (Ethernet link type) and a locator
 * of the RoCEv2 parts of a frame, for the host test suites and the fuzzer.
 *
 * Context: host user space only (uses libc stdio and malloc).
 */
#ifndef SOFTRC_SELFTEST_PCAP_H
#define SOFTRC_SELFTEST_PCAP_H

#include <softrc/platform.h>

struct softrc_pcap {
	u8 *data;		/* the whole file */
	size_t len;
	size_t off;		/* next record header */
	bool swapped;		/* file written on a host of the other order */
	u32 linktype;
};

struct softrc_pcap_frame {
	const u8 *data;
	u32 caplen;
	u32 origlen;
};

/* A RoCEv2 frame cut into its layers. */
struct softrc_roce {
	const u8 *l3;		/* IP header */
	bool ipv6;
	const u8 *udp;
	const u8 *bth;
	u32 l3_len;		/* IP header through the ICRC */
	u32 pkt_len;		/* BTH through the ICRC */
};

/* 0 or -1 (missing file, bad magic, not Ethernet). */
int softrc_pcap_open(struct softrc_pcap *pc, const char *path);
/* 1 and *f filled, 0 at the end, -1 on a truncated record. */
int softrc_pcap_next(struct softrc_pcap *pc, struct softrc_pcap_frame *f);
void softrc_pcap_close(struct softrc_pcap *pc);

/* 0 if @frame is Ethernet + IPv4/IPv6 + UDP to port 4791; else -1. */
int softrc_roce_locate(const u8 *frame, u32 len, struct softrc_roce *r);

#endif /* SOFTRC_SELFTEST_PCAP_H */

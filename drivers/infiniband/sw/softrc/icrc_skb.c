// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The ICRC of packets in sk_buffs, all of it in the module: the check of
 * a received packet, the computation for a built one, the walk over an
 * skb's linear part and page fragments they share, and the CRC-32
 * register update every payload byte goes through (softrc_net_crc),
 * without pre or post inversion (the ICRC's inversions, masks and
 * headers are the core's arithmetic, core/icrc.c), from the faster of
 * two implementations on this machine:
 *
 *  - crypto: the crypto API's "crc32" shash, crc32-pclmul on x86 CPUs
 *    with PCLMULQDQ, several GB/s on hardware;
 *  - fold: core/icrc.c's softrc_eng_crc32_fold(), which reduces the payload
 *    64 bits at a time by shifts and XORs, with no table.
 *
 * Which one wins depends on the machine, not just the CPU flags: an
 * emulator such as QEMU's TCG implements the carry-less multiply bit by
 * bit and turns every load into a software TLB lookup; there the fold is
 * several times faster than pclmul and lib/crc32's tables. So, as
 * lib/raid6 and crypto/xor do for their algorithms, softrc_icrc_init()
 * times both on a 4 KiB buffer at load, checks that they agree, and keeps
 * the faster; it has the payload copy (copy.c) choose its implementation
 * on the same buffer. The module parameter icrc_impl=crypto|fold forces
 * one (a bad value fails the load); after load it reads back the one in
 * use, which is also logged.
 *
 * Context: softrc_icrc_init/exit at module load/unload (process context);
 * the rest in any context (softirq RX, TX under a QP lock), never sleeps.
 *
 * Touches: the skb it is given (reads; on TX the 4 ICRC bytes), nothing
 * else.
 */
#include <crypto/hash.h>
#include <linux/jump_label.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/udp.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "compat.h"
#include "softrc.h"
#include "icrc_skb.h"
#include "copy.h"
#include "core/engine.h"

/* set at load only (0444), then what softrc_icrc_init() chose */
static struct softrc_impl softrc_crc_impl = {
	.names = { "auto", "crypto", "fold" },
};

module_param_cb(icrc_impl, &softrc_impl_ops, &softrc_crc_impl, 0444);
MODULE_PARM_DESC(icrc_impl,
		 "ICRC payload CRC: auto (time both at load), crypto or fold");

static struct crypto_shash *softrc_crc_tfm;
static DEFINE_STATIC_KEY_FALSE(softrc_crc_fold_on);

static u32 softrc_crc_crypto(u32 reg, const void *p, u32 len)
{
	SHASH_DESC_ON_STACK(desc, softrc_crc_tfm);

	desc->tfm = softrc_crc_tfm;
	*(u32 *)shash_desc_ctx(desc) = reg;
	if (crypto_shash_update(desc, p, len))
		return softrc_eng_crc32_fold(reg, p, len);
	return *(u32 *)shash_desc_ctx(desc);
}

/**
 * softrc_net_crc() - continue the CRC-32 register @reg over @len bytes
 * @reg:	the register (no pre or post inversion)
 * @p:		the bytes
 * @len:	how many
 *
 * Return: the register after them.
 */
u32 softrc_net_crc(u32 reg, const void *p, u32 len)
{
	if (static_branch_unlikely(&softrc_crc_fold_on))
		return softrc_eng_crc32_fold(reg, p, len);
	return softrc_crc_crypto(reg, p, len);
}

/* One CRC over the first @len bytes of @buf: its register. */
static u32 softrc_crc_run(bool fold, u8 *buf, u32 len)
{
	return fold ? softrc_eng_crc32_fold(~0u, buf, len) :
		      softrc_crc_crypto(~0u, buf, len);
}

/* Time both CRCs on @buf; true if the fold should be used. */
static bool softrc_crc_pick_fold(u8 *buf)
{
	u32 r_crypto, r_fold;
	u64 t_crypto, t_fold;

	t_crypto = softrc_impl_time(softrc_crc_run, false, buf, &r_crypto);
	t_fold = softrc_impl_time(softrc_crc_run, true, buf, &r_fold);
	if (r_crypto != r_fold) {
		pr_warn("icrc: %s and the fold disagree; using the fold\n",
			crypto_shash_driver_name(softrc_crc_tfm));
		return true;
	}
	pr_info("icrc: %s %llu ns, fold %llu ns per 4 KiB\n",
		crypto_shash_driver_name(softrc_crc_tfm), t_crypto, t_fold);
	return t_fold < t_crypto;
}

/**
 * softrc_icrc_init() - choose the CRC and the payload copy implementations
 *
 * Return: 0, or the crypto API's error.
 */
int softrc_icrc_init(void)
{
	const char *copy;
	u8 *buf;
	u32 i;

	softrc_crc_tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(softrc_crc_tfm))
		return PTR_ERR(softrc_crc_tfm);
	/* without the buffer, "auto" keeps the hardware-first choices */
	buf = kmalloc(2 * SOFTRC_BENCH_BYTES, GFP_KERNEL);
	for (i = 0; buf && i < SOFTRC_BENCH_BYTES; i++)
		buf[i] = i * 131 + 7;
	if (softrc_impl_resolve(&softrc_crc_impl, buf, softrc_crc_pick_fold))
		static_branch_enable(&softrc_crc_fold_on);
	copy = softrc_copy_init(buf);
	kfree(buf);
	pr_info("icrc: payload CRC by %s; copy by %s\n",
		softrc_crc_impl.val == 2 ? "fold" :
		crypto_shash_driver_name(softrc_crc_tfm), copy);
	return 0;
}

void softrc_icrc_exit(void)
{
	crypto_free_shash(softrc_crc_tfm);
}

/* Continue CRC @crc over @len bytes of @skb at @off (linear part, frags). */
static u32 softrc_skb_crc(const struct sk_buff *skb, int off, int len, u32 crc)
{
	int left;

	return softrc_skb_walk(skb, off, len, crc, NULL, &left);
}

/*
 * FLUSH's ICRC as Linux rxe computes it (6.2 on, still in 6.12): its
 * opcode table gives FLUSH no payload offset, so after the headers rxe
 * runs the CRC over the packet once more, raw from the BTH up to the
 * ICRC (its payload_addr() and payload_size() of a FLUSH). rxe drops a
 * FLUSH with the IBTA ICRC, and softrc would drop rxe's. On receive a
 * FLUSH with either is taken (rxe's counted in rx_flush_icrc_rxe: the
 * CRC still covers every byte); what softrc sends is the IBTA ICRC, or
 * rxe's with flush_icrc_rxe=Y (Documentation/softrc.rst, "FLUSH").
 */
static bool softrc_flush_icrc_rxe;
module_param_named(flush_icrc_rxe, softrc_flush_icrc_rxe, bool, 0644);
MODULE_PARM_DESC(flush_icrc_rxe,
		 "send FLUSH with Linux rxe's ICRC (rxe drops the IBTA one)");

/**
 * softrc_icrc_rx_check() - the ICRC check of a received packet
 * @skb:	the packet, skb->data at the UDP header, the UDP header and
 *		BTH linear
 * @ipv6:	it came over IPv6
 *
 * Return: SOFTRC_ICRC_BAD, SOFTRC_ICRC_OK, or SOFTRC_ICRC_FLUSH_RXE: a
 * FLUSH with rxe's ICRC.
 */
enum softrc_icrc_verdict softrc_icrc_rx_check(struct sk_buff *skb, bool ipv6)
{
	int body = sizeof(struct udphdr) + SOFTRC_BTH_BYTES;
	int len = skb->len - SOFTRC_ICRC_BYTES;
	__le32 trailer;
	const void *t;
	u8 opcode;
	u32 crc;

	crc = softrc_eng_icrc_begin(skb_network_header(skb), ipv6);
	crc = softrc_skb_crc(skb, body, len - body, crc);
	t = skb_header_pointer(skb, len, SOFTRC_ICRC_BYTES, &trailer);
	if (!t)
		return SOFTRC_ICRC_BAD;
	if (softrc_icrc_final(crc) == softrc_icrc_get(t))
		return SOFTRC_ICRC_OK;
	if (skb_copy_bits(skb, sizeof(struct udphdr), &opcode, 1) ||
	    opcode != SOFTRC_OP_FLUSH)
		return SOFTRC_ICRC_BAD;
	crc = softrc_skb_crc(skb, sizeof(struct udphdr),
			     len - sizeof(struct udphdr), crc);
	return softrc_icrc_final(crc) == softrc_icrc_get(t) ?
	       SOFTRC_ICRC_FLUSH_RXE : SOFTRC_ICRC_BAD;
}

/**
 * softrc_icrc_tx() - compute and store the ICRC of a packet built for TX
 * @skb:	the packet, IP header at skb->data, IP, UDP and RoCE headers
 *		linear, its last SOFTRC_ICRC_BYTES the ICRC's place (in the
 *		head or in a fragment); the pad before it written
 * @ipv6:	its IP header is IPv6
 *
 * The CRC covers the final IP header: the IPv4 ID is not masked by it.
 * A FLUSH gets rxe's ICRC with flush_icrc_rxe=Y (see above).
 */
void softrc_icrc_tx(struct sk_buff *skb, bool ipv6)
{
	u32 bth = (ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr)) +
		  sizeof(struct udphdr);
	u32 hoff = bth + SOFTRC_BTH_BYTES;
	u32 end = skb->len - SOFTRC_ICRC_BYTES;
	u8 icrc[SOFTRC_ICRC_BYTES];
	u32 crc;

	crc = softrc_skb_crc(skb, hoff, end - hoff,
			     softrc_eng_icrc_begin(skb->data, ipv6));
	if (skb->data[bth] == SOFTRC_OP_FLUSH &&
	    READ_ONCE(softrc_flush_icrc_rxe))
		crc = softrc_skb_crc(skb, bth, end - bth, crc);
	softrc_icrc_put(icrc, softrc_icrc_final(crc));
	/* cannot fail: the place is inside the packet */
	WARN_ON_ONCE(skb_store_bits(skb, end, icrc, sizeof(icrc)));
}

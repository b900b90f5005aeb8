// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The payload copies of the data path (softrc_net_copy): received payload
 * into memory, payload and inline data into packets, a send WQE out of
 * the user ring; each from the faster of two implementations on this
 * machine:
 *
 *  - memcpy: the kernel's, on x86 `rep movsb` where the CPU has ERMS;
 *  - words: eight bytes per load and store, no string instruction.
 *
 * Which one wins depends on the machine, not just the CPU flags: an
 * emulator such as QEMU's TCG runs `rep movsb` a byte per iteration,
 * and there the word copy is several times faster than memcpy. So
 * softrc_copy_init() (called by softrc_icrc_init(), which times the
 * ICRC's CRC the same way, icrc_skb.c) times both on a 4 KiB buffer at
 * load, checks that they agree, and keeps the faster. The module
 * parameter copy_impl=memcpy|words forces one (a bad value fails the
 * load); after load it reads back the one in use, which is also logged.
 * The parameter type (struct softrc_impl) serves icrc_impl as well.
 *
 * Context: softrc_copy_init at module load (process context);
 * softrc_net_copy and softrc_skb_copy_bits in any context (softirq RX, TX
 * under a QP lock), never sleep.
 *
 * Touches: the memory it is given, nothing else.
 */
#include <linux/highmem.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/string.h>

#include "compat.h"
#include "softrc.h"
#include "copy.h"
#include "icrc_skb.h"

static int softrc_impl_set(const char *val, const struct kernel_param *kp)
{
	struct softrc_impl *impl = kp->arg;
	int i = __sysfs_match_string(impl->names, ARRAY_SIZE(impl->names), val);

	if (i < 0)
		return i;
	impl->val = i;
	return 0;
}

static int softrc_impl_get(char *buf, const struct kernel_param *kp)
{
	const struct softrc_impl *impl = kp->arg;

	return sysfs_emit(buf, "%s\n", impl->names[impl->val]);
}

const struct kernel_param_ops softrc_impl_ops = {
	.set = softrc_impl_set,
	.get = softrc_impl_get,
};

/**
 * softrc_impl_resolve() - resolve @impl's "auto" with @pick
 * @impl:	the parameter
 * @buf:	2 * SOFTRC_BENCH_BYTES for @pick to time on, the first half
 *		filled; NULL keeps the hardware-first choice (index 1)
 * @pick:	times both; true if index 2 should be used
 *
 * Return: true if index 2 is in use.
 */
bool softrc_impl_resolve(struct softrc_impl *impl, u8 *buf,
			 bool (*pick)(u8 *buf))
{
	if (!impl->val)
		impl->val = buf && pick(buf) ? 2 : 1;
	return impl->val == 2;
}

/* set at load only (0444), then what softrc_copy_init() chose */
static struct softrc_impl softrc_copy_impl = {
	.names = { "auto", "memcpy", "words" },
};

module_param_cb(copy_impl, &softrc_impl_ops, &softrc_copy_impl, 0444);
MODULE_PARM_DESC(copy_impl,
		 "receive payload copy: auto (time both at load), memcpy or words");

static DEFINE_STATIC_KEY_FALSE(softrc_copy_words_on);

/* Four words per round, then words, then bytes. */
static void softrc_copy_words(void *to, const void *from, u32 len)
{
	const u8 *s = from;
	u8 *d = to;

	for (; len >= 32; len -= 32, d += 32, s += 32) {
		u64 w0 = get_unaligned((const u64 *)s);
		u64 w1 = get_unaligned((const u64 *)(s + 8));
		u64 w2 = get_unaligned((const u64 *)(s + 16));
		u64 w3 = get_unaligned((const u64 *)(s + 24));

		put_unaligned(w0, (u64 *)d);
		put_unaligned(w1, (u64 *)(d + 8));
		put_unaligned(w2, (u64 *)(d + 16));
		put_unaligned(w3, (u64 *)(d + 24));
	}
	for (; len >= 8; len -= 8, d += 8, s += 8)
		put_unaligned(get_unaligned((const u64 *)s), (u64 *)d);
	for (; len; len--)
		*d++ = *s++;
}

/**
 * softrc_net_copy() - copy @len bytes with the implementation chosen at load
 * @to:		destination
 * @from:	source
 * @len:	bytes
 */
void softrc_net_copy(void *to, const void *from, u32 len)
{
	if (static_branch_unlikely(&softrc_copy_words_on))
		softrc_copy_words(to, from, len);
	else
		memcpy(to, from, len);
}

/**
 * softrc_impl_time() - best time of a few runs of one implementation
 * @run:	one run over the first @len bytes of @buf with the
 *		implementation @alt names; returns a result to compare
 * @alt:	which of the two implementations
 * @buf:	as softrc_impl_resolve() takes it
 * @res:	set to the last run's result
 *
 * Return: the best time of SOFTRC_BENCH_ROUNDS runs over
 * SOFTRC_BENCH_BYTES, in ns.
 */
u64 softrc_impl_time(u32 (*run)(bool alt, u8 *buf, u32 len), bool alt,
		     u8 *buf, u32 *res)
{
	u32 len = SOFTRC_BENCH_BYTES;
	u64 best = U64_MAX, t;
	int i;

	/*
	 * A length the compiler cannot see, as on the data path: with a
	 * constant one it may inline memcpy as `rep movsq` instead of
	 * calling the kernel's memcpy, and time the wrong loop.
	 */
	OPTIMIZER_HIDE_VAR(len);
	for (i = 0; i < SOFTRC_BENCH_ROUNDS; i++) {
		t = ktime_get_ns();
		*res = run(alt, buf, len);
		t = ktime_get_ns() - t;
		best = min(best, t);
	}
	return best;
}

/* One copy from the first half of @buf to its second half. */
static u32 softrc_copy_run(bool words, u8 *buf, u32 len)
{
	if (words)
		softrc_copy_words(buf + SOFTRC_BENCH_BYTES, buf, len);
	else
		memcpy(buf + SOFTRC_BENCH_BYTES, buf, len);
	return 0;
}

/* Time both copies on @buf; true if the word copy should be used. */
static bool softrc_copy_pick_words(u8 *buf)
{
	u8 *to = buf + SOFTRC_BENCH_BYTES;
	u64 t_memcpy, t_words;
	u32 res;

	t_memcpy = softrc_impl_time(softrc_copy_run, false, buf, &res);
	memset(to, 0, SOFTRC_BENCH_BYTES);
	t_words = softrc_impl_time(softrc_copy_run, true, buf, &res);
	if (memcmp(to, buf, SOFTRC_BENCH_BYTES)) {
		pr_warn("copy: the word copy is wrong; using memcpy\n");
		return false;
	}
	pr_info("copy: memcpy %llu ns, words %llu ns per 4 KiB\n",
		t_memcpy, t_words);
	return t_words < t_memcpy;
}

/**
 * softrc_copy_init() - choose the copy implementation
 * @buf:	as softrc_impl_resolve() takes it
 *
 * Return: the name of the one in use.
 */
const char *softrc_copy_init(u8 *buf)
{
	if (softrc_impl_resolve(&softrc_copy_impl, buf, softrc_copy_pick_words))
		static_branch_enable(&softrc_copy_words_on);
	return softrc_copy_impl.names[softrc_copy_impl.val];
}

/**
 * softrc_skb_walk() - walk @len bytes of @skb at @off (linear part, frags)
 * @skb:	the packet (linear part and page frags; no frag list)
 * @off:	offset of the first byte
 * @len:	bytes
 * @crc:	CRC register to continue when @to is NULL
 * @to:		kernel destination to copy the bytes to, or NULL
 * @left:	set to the bytes not reached (@skb too short)
 *
 * The one loop over a received packet's bytes: copied with
 * softrc_net_copy(), or run through softrc_net_crc() (icrc_skb.c), each
 * the implementation chosen at load.
 * Return: the CRC register (@crc unchanged when copying).
 */
u32 softrc_skb_walk(const struct sk_buff *skb, int off, int len, u32 crc,
		    u8 *to, int *left)
{
	int hlen = skb_headlen(skb);
	int i, n;

	if (off < hlen) {
		n = min(len, hlen - off);
		if (to) {
			softrc_net_copy(to, skb->data + off, n);
			to += n;
		} else {
			crc = softrc_net_crc(crc, skb->data + off, n);
		}
		off += n;
		len -= n;
	}
	off -= hlen;
	for (i = 0; len > 0 && i < skb_shinfo(skb)->nr_frags; i++) {
		const skb_frag_t *f = &skb_shinfo(skb)->frags[i];
		u32 p_off, p_len, copied;
		struct page *p;
		int fsize = skb_frag_size(f);

		if (off >= fsize) {
			off -= fsize;
			continue;
		}
		n = min(len, fsize - off);
		skb_frag_foreach_page(f, skb_frag_off(f) + off, n, p, p_off,
				      p_len, copied) {
			u8 *va = kmap_local_page(p);

			if (to) {
				softrc_net_copy(to, va + p_off, p_len);
				to += p_len;
			} else {
				crc = softrc_net_crc(crc, va + p_off, p_len);
			}
			kunmap_local(va);
		}
		len -= n;
		off = 0;
	}
	*left = len;
	return crc;
}

/**
 * softrc_skb_copy_bits() - copy @len bytes of @skb at @off to @to
 * @skb:	the packet (linear part and page frags; no frag list)
 * @off:	offset of the first byte
 * @to:		kernel destination
 * @len:	bytes
 *
 * skb_copy_bits() with the copy routine softrc_net_copy() chose at load.
 * Return: 0, or -EFAULT if @skb is too short.
 */
int softrc_skb_copy_bits(const struct sk_buff *skb, int off, void *to, int len)
{
	int left;

	if (off < 0 || len < 0 || off > (int)skb->len - len)
		return -EFAULT;
	softrc_skb_walk(skb, off, len, 0, to, &left);
	return left ? -EFAULT : 0;
}

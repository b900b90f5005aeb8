// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The two loops every payload byte goes through, each from the faster of
 * two implementations on this machine:
 *
 *  - the CRC-32 register update of the ICRC (softrc_net_crc), without pre
 *    or post inversion (the ICRC's inversions are the core's,
 *    core/icrc.c):
 *     - crypto: the crypto API's "crc32" shash, crc32-pclmul on x86 CPUs
 *       with PCLMULQDQ, several GB/s on hardware;
 *     - fold: core/icrc.c's softrc_crc32_fold(), which reduces the
 *       payload 64 bits at a time by shifts and XORs, with no table;
 *  - the payload copies of the data path (softrc_net_copy): received
 *    payload into memory, payload and inline data into packets, a send
 *    WQE out of the user ring:
 *     - memcpy: the kernel's, on x86 `rep movsb` where the CPU has ERMS;
 *     - words: eight bytes per load and store, no string instruction.
 *
 * Which one wins depends on the machine, not just the CPU flags: an
 * emulator such as QEMU's TCG implements the carry-less multiply bit by
 * bit, turns every load into a software TLB lookup and runs `rep movsb`
 * a byte per iteration; there the fold is several times faster than
 * pclmul and lib/crc32's tables, and so is the word copy than memcpy.
 * So, as lib/raid6 and crypto/xor do for their algorithms,
 * softrc_crc_init() times both of each pair on a 4 KiB buffer at load,
 * checks that they agree, and keeps the faster. The module parameters
 * icrc_impl=crypto|fold and copy_impl=memcpy|words force one (a bad
 * value fails the load); after load they read back the one in use,
 * which is also logged.
 *
 * Context: softrc_crc_init/exit at module load/unload (process context);
 * softrc_net_crc and softrc_net_copy in any context (softirq RX, TX
 * under a QP lock), never sleep.
 */
#include <crypto/hash.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "compat.h"
#include "net.h"
#include "core/icrc.h"

/**
 * struct softrc_impl - a module parameter naming one of two implementations
 * @names:	"auto" and the two names; index 1 is the default-off one
 * @val:	0 (auto) before load, then the index in use
 */
struct softrc_impl {
	const char * const names[3];
	int val;
};

/* set at load only (0444), then what softrc_crc_init() chose */
static struct softrc_impl softrc_crc_impl = {
	.names = { "auto", "crypto", "fold" },
};

static struct softrc_impl softrc_copy_impl = {
	.names = { "auto", "memcpy", "words" },
};

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

static const struct kernel_param_ops softrc_impl_ops = {
	.set = softrc_impl_set,
	.get = softrc_impl_get,
};
module_param_cb(icrc_impl, &softrc_impl_ops, &softrc_crc_impl, 0444);
MODULE_PARM_DESC(icrc_impl,
		 "ICRC payload CRC: auto (time both at load), crypto or fold");
module_param_cb(copy_impl, &softrc_impl_ops, &softrc_copy_impl, 0444);
MODULE_PARM_DESC(copy_impl,
		 "receive payload copy: auto (time both at load), memcpy or words");

static struct crypto_shash *softrc_crc_tfm;
static DEFINE_STATIC_KEY_FALSE(softrc_crc_fold_on);
static DEFINE_STATIC_KEY_FALSE(softrc_copy_words_on);

static u32 softrc_crc_crypto(u32 reg, const void *p, u32 len)
{
	SHASH_DESC_ON_STACK(desc, softrc_crc_tfm);

	desc->tfm = softrc_crc_tfm;
	*(u32 *)shash_desc_ctx(desc) = reg;
	if (crypto_shash_update(desc, p, len))
		return softrc_crc32_fold(reg, p, len);
	return *(u32 *)shash_desc_ctx(desc);
}

u32 softrc_net_crc(u32 reg, const void *p, u32 len)
{
	if (static_branch_unlikely(&softrc_crc_fold_on))
		return softrc_crc32_fold(reg, p, len);
	return softrc_crc_crypto(reg, p, len);
}

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

void softrc_net_copy(void *to, const void *from, u32 len)
{
	if (static_branch_unlikely(&softrc_copy_words_on))
		softrc_copy_words(to, from, len);
	else
		memcpy(to, from, len);
}

#define SOFTRC_BENCH_BYTES	4096
#define SOFTRC_BENCH_ROUNDS	8

enum softrc_bench_op {
	SOFTRC_BENCH_CRC_CRYPTO,
	SOFTRC_BENCH_CRC_FOLD,
	SOFTRC_BENCH_COPY_MEMCPY,
	SOFTRC_BENCH_COPY_WORDS,
};

/*
 * Best time of a few rounds of @op over the first half of @buf (a copy
 * goes to the second half), and in *@reg the CRC register it ends with.
 */
static u64 softrc_bench(enum softrc_bench_op op, u8 *buf, u32 *reg)
{
	u8 *to = buf + SOFTRC_BENCH_BYTES;
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
		switch (op) {
		case SOFTRC_BENCH_CRC_CRYPTO:
			*reg = softrc_crc_crypto(~0u, buf, len);
			break;
		case SOFTRC_BENCH_CRC_FOLD:
			*reg = softrc_crc32_fold(~0u, buf, len);
			break;
		case SOFTRC_BENCH_COPY_MEMCPY:
			memcpy(to, buf, len);
			break;
		case SOFTRC_BENCH_COPY_WORDS:
			softrc_copy_words(to, buf, len);
			break;
		}
		t = ktime_get_ns() - t;
		best = min(best, t);
	}
	return best;
}

/* Time both CRCs on @buf; true if the fold should be used. */
static bool softrc_crc_pick_fold(u8 *buf)
{
	u32 r_crypto, r_fold;
	u64 t_crypto, t_fold;

	t_crypto = softrc_bench(SOFTRC_BENCH_CRC_CRYPTO, buf, &r_crypto);
	t_fold = softrc_bench(SOFTRC_BENCH_CRC_FOLD, buf, &r_fold);
	if (r_crypto != r_fold) {
		pr_warn("icrc: %s and the fold disagree; using the fold\n",
			crypto_shash_driver_name(softrc_crc_tfm));
		return true;
	}
	pr_info("icrc: %s %llu ns, fold %llu ns per 4 KiB\n",
		crypto_shash_driver_name(softrc_crc_tfm), t_crypto, t_fold);
	return t_fold < t_crypto;
}

/* Time both copies on @buf; true if the word copy should be used. */
static bool softrc_copy_pick_words(u8 *buf)
{
	u8 *to = buf + SOFTRC_BENCH_BYTES;
	u64 t_memcpy, t_words;
	u32 unused;

	t_memcpy = softrc_bench(SOFTRC_BENCH_COPY_MEMCPY, buf, &unused);
	memset(to, 0, SOFTRC_BENCH_BYTES);
	t_words = softrc_bench(SOFTRC_BENCH_COPY_WORDS, buf, &unused);
	if (memcmp(to, buf, SOFTRC_BENCH_BYTES)) {
		pr_warn("copy: the word copy is wrong; using memcpy\n");
		return false;
	}
	pr_info("copy: memcpy %llu ns, words %llu ns per 4 KiB\n",
		t_memcpy, t_words);
	return t_words < t_memcpy;
}

/* Resolve @impl's "auto" with @pick; true if index 2 is in use. */
static bool softrc_impl_resolve(struct softrc_impl *impl, u8 *buf,
				bool (*pick)(u8 *buf))
{
	if (!impl->val)
		impl->val = buf && pick(buf) ? 2 : 1;
	return impl->val == 2;
}

int softrc_crc_init(void)
{
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
	if (softrc_impl_resolve(&softrc_copy_impl, buf, softrc_copy_pick_words))
		static_branch_enable(&softrc_copy_words_on);
	kfree(buf);
	pr_info("icrc: payload CRC by %s; copy by %s\n",
		softrc_crc_impl.val == 2 ? "fold" :
		crypto_shash_driver_name(softrc_crc_tfm),
		softrc_copy_impl.names[softrc_copy_impl.val]);
	return 0;
}

void softrc_crc_exit(void)
{
	crypto_free_shash(softrc_crc_tfm);
}

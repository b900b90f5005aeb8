// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The CRC-32 register update for ICRC payload bytes, from the faster of
 * two implementations on this machine.
 *
 * Both compute the same reflected CRC-32 register update, without pre or
 * post inversion (the ICRC's inversions are the core's, core/icrc.c):
 *  - crypto: the crypto API's "crc32" shash, crc32-pclmul on x86 CPUs
 *    with PCLMULQDQ, several GB/s on hardware;
 *  - table: lib/crc32's crc32_le(), slice-by-8 tables.
 * Which one wins depends on the machine, not just the CPU flags: an
 * emulator such as QEMU's TCG implements the carry-less multiply bit by
 * bit, and there the table version is about twice as fast. So, as
 * lib/raid6 and crypto/xor do for their algorithms, softrc_crc_init()
 * times both on a 4 KiB buffer at load, checks that they agree, and keeps
 * the faster. The module parameter icrc_impl=crypto|table forces one
 * (a bad value fails the load); after load it reads back the one in use,
 * which is also logged.
 *
 * Context: softrc_crc_init/exit at module load/unload (process context);
 * softrc_net_crc in any context (softirq RX, TX under a QP lock), never
 * sleeps.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "net.h"

enum softrc_crc_impl { SOFTRC_CRC_AUTO, SOFTRC_CRC_CRYPTO, SOFTRC_CRC_TABLE };

static const char * const softrc_crc_names[] = {
	[SOFTRC_CRC_AUTO] = "auto",
	[SOFTRC_CRC_CRYPTO] = "crypto",
	[SOFTRC_CRC_TABLE] = "table",
};

/* set at load only (0444), then what softrc_crc_init() chose */
static enum softrc_crc_impl softrc_crc_impl;

static int softrc_crc_param_set(const char *val, const struct kernel_param *kp)
{
	int i = sysfs_match_string(softrc_crc_names, val);

	if (i < 0)
		return i;
	softrc_crc_impl = i;
	return 0;
}

static int softrc_crc_param_get(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%s\n", softrc_crc_names[softrc_crc_impl]);
}

static const struct kernel_param_ops softrc_crc_param_ops = {
	.set = softrc_crc_param_set,
	.get = softrc_crc_param_get,
};
module_param_cb(icrc_impl, &softrc_crc_param_ops, NULL, 0444);
MODULE_PARM_DESC(icrc_impl,
		 "ICRC payload CRC: auto (time both at load), crypto or table");

static struct crypto_shash *softrc_crc_tfm;
static DEFINE_STATIC_KEY_FALSE(softrc_crc_table);

static u32 softrc_crc_lib(u32 reg, const void *p, u32 len)
{
	return crc32_le(reg, p, len);
}

static u32 softrc_crc_crypto(u32 reg, const void *p, u32 len)
{
	SHASH_DESC_ON_STACK(desc, softrc_crc_tfm);

	desc->tfm = softrc_crc_tfm;
	*(u32 *)shash_desc_ctx(desc) = reg;
	if (crypto_shash_update(desc, p, len))
		return softrc_crc_lib(reg, p, len);
	return *(u32 *)shash_desc_ctx(desc);
}

u32 softrc_net_crc(u32 reg, const void *p, u32 len)
{
	if (static_branch_unlikely(&softrc_crc_table))
		return softrc_crc_lib(reg, p, len);
	return softrc_crc_crypto(reg, p, len);
}

#define SOFTRC_CRC_BENCH_BYTES	4096
#define SOFTRC_CRC_BENCH_ROUNDS	8

/* Best time of a few rounds over @buf, and the register it ends with. */
static u64 softrc_crc_time(u32 (*fn)(u32, const void *, u32), const u8 *buf,
			   u32 *reg)
{
	u64 best = U64_MAX, t;
	int i;

	for (i = 0; i < SOFTRC_CRC_BENCH_ROUNDS; i++) {
		t = ktime_get_ns();
		*reg = fn(~0u, buf, SOFTRC_CRC_BENCH_BYTES);
		t = ktime_get_ns() - t;
		best = min(best, t);
	}
	return best;
}

/* Time both implementations; true if the table one should be used. */
static bool softrc_crc_pick_table(void)
{
	u32 r_crypto, r_table, i;
	u64 t_crypto, t_table;
	u8 *buf;

	buf = kmalloc(SOFTRC_CRC_BENCH_BYTES, GFP_KERNEL);
	if (!buf)
		return false;
	for (i = 0; i < SOFTRC_CRC_BENCH_BYTES; i++)
		buf[i] = i * 131 + 7;
	t_crypto = softrc_crc_time(softrc_crc_crypto, buf, &r_crypto);
	t_table = softrc_crc_time(softrc_crc_lib, buf, &r_table);
	kfree(buf);
	if (r_crypto != r_table) {
		pr_warn("icrc: %s and crc32_le disagree; using crc32_le\n",
			crypto_shash_driver_name(softrc_crc_tfm));
		return true;
	}
	pr_info("icrc: %s %llu ns, crc32_le %llu ns per 4 KiB\n",
		crypto_shash_driver_name(softrc_crc_tfm), t_crypto, t_table);
	return t_table < t_crypto;
}

int softrc_crc_init(void)
{
	bool table;

	softrc_crc_tfm = crypto_alloc_shash("crc32", 0, 0);
	if (IS_ERR(softrc_crc_tfm))
		return PTR_ERR(softrc_crc_tfm);
	if (softrc_crc_impl == SOFTRC_CRC_AUTO)
		table = softrc_crc_pick_table();
	else
		table = softrc_crc_impl == SOFTRC_CRC_TABLE;
	if (table)
		static_branch_enable(&softrc_crc_table);
	softrc_crc_impl = table ? SOFTRC_CRC_TABLE : SOFTRC_CRC_CRYPTO;
	pr_info("icrc: payload CRC by %s\n", table ? "crc32_le" :
		crypto_shash_driver_name(softrc_crc_tfm));
	return 0;
}

void softrc_crc_exit(void)
{
	crypto_free_shash(softrc_crc_tfm);
}

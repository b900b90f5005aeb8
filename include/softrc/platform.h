/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softrc platform shim: the only header that branches on __KERNEL__.
 *
 * Context: none (types and pure helpers). Everything in core/ and in
 * include/softrc/ includes this instead of kernel or libc headers, so
 * the same sources build into softrc.ko and into host test programs.
 */
#ifndef SOFTRC_PLATFORM_H
#define SOFTRC_PLATFORM_H

#ifdef __KERNEL__

#include <linux/bits.h>
#include <linux/build_bug.h>
#include <linux/types.h>
#include <linux/string.h>
#include <linux/stddef.h>
#include <asm/byteorder.h>

#else /* host build */

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <endian.h>

typedef __UINT8_TYPE__ u8;
typedef __UINT16_TYPE__ u16;
typedef __UINT32_TYPE__ u32;
typedef __UINT64_TYPE__ u64;
typedef __INT32_TYPE__ s32;
typedef __INT64_TYPE__ s64;

/* sparse bitwise types collapse to plain integers on the host */
typedef u16 __be16;
typedef u32 __be32;
typedef u64 __be64;
typedef u16 __le16;
typedef u32 __le32;
typedef u64 __le64;

#define cpu_to_be16(x) htobe16(x)
#define cpu_to_be32(x) htobe32(x)
#define cpu_to_be64(x) htobe64(x)
#define be16_to_cpu(x) be16toh(x)
#define be32_to_cpu(x) be32toh(x)
#define be64_to_cpu(x) be64toh(x)
#define cpu_to_le16(x) htole16(x)
#define cpu_to_le32(x) htole32(x)
#define cpu_to_le64(x) htole64(x)
#define le16_to_cpu(x) le16toh(x)
#define le32_to_cpu(x) le32toh(x)
#define le64_to_cpu(x) le64toh(x)

#define SOFTRC__GCC_ATTR(a) __attribute__((a))
#ifndef __packed
#define __packed SOFTRC__GCC_ATTR(__packed__)
#endif
#ifndef likely
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif
#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif
#ifndef BIT
#define BIT(n) (1u << (n))
#endif
#ifndef BIT_ULL
#define BIT_ULL(n) (1ull << (n))
#endif

#endif /* __KERNEL__ */

#endif /* SOFTRC_PLATFORM_H */

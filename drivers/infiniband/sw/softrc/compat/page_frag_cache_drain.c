// SPDX-License-Identifier: GPL-2.0
/*
 * HAVE_PAGE_FRAG_CACHE_DRAIN: page_frag_cache_drain() gives back what a
 * page fragment cache holds of its page; before, its users dropped the
 * cache's pagecnt_bias references to the page at nc->va themselves.
 * Upstream: "net: introduce page_frag_cache_drain()" (v6.9).
 */
#include <linux/gfp.h>

void softrc_probe(struct page_frag_cache *nc);
void softrc_probe(struct page_frag_cache *nc)
{
	page_frag_cache_drain(nc);
}

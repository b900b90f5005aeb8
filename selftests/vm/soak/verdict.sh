# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# The verdicts both soaks end with (soak.sh, cm_soak.sh), sourced after
# selftests/vm/lib.sh: what the kernel log may not say, and the checks
# of the slab caches and of the kernel log.

KLOG_BAD='WARNING:|BUG:|Oops|refcount_t:|list_add corruption|list_del corruption|general protection|UBSAN|KASAN|kmemleak|soft lockup|hard LOCKUP|hung_task|blocked for more than|rcu_.*stall|Out of memory|page allocation failure|softrc.*(overrun|cannot|refusing)'

# soak_slabs_back BASE WHAT: ok WHAT if no kmalloc or skb slab cache grew
# by more than 256 objects and 25 % since BASE (lib.sh's slabs and
# slab_grown); frees deferred by RCU and work items may trail, so it is
# asked again for up to 10 s; the caches that grew are listed otherwise
soak_slabs_back() {
	if wait_until 10 slab_grown "$1" >/dev/null; then
		ok "$2"
	else
		slab_grown "$1"
		not_ok "$2"
	fi
}

# soak_klog LINE0: ok if the kernel log has no complaint (KLOG_BAD) after
# its first LINE0 lines; otherwise the complaints, and the first with
# what followed it (a stall's backtrace)
soak_klog() {
	local klog

	klog=$(dmesg | tail -n +$(($1 + 1)) | grep -E "$KLOG_BAD")
	if [ -z "$klog" ]; then
		ok "kernel log: no complaint in $(($(dmesg | wc -l) - $1)) new lines"
		return
	fi
	printf '%s\n' "$klog" | head -10 | sed 's/^/#   /'
	dmesg | tail -n +$(($1 + 1)) | grep -E -m1 -A60 "$KLOG_BAD" | sed 's/^/#   | /'
	not_ok "kernel log: no complaint"
}

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# NFS over RDMA: the kernel's NFSv4.2 server (nfsd, svcrdma) exports a
# tmpfs and the kernel's NFS client (xprtrdma) mounts it over the RDMA
# transport (proto=rdma, port 20049). Per topology: the mount succeeds;
# /proc/self/mountstats shows "xprt: rdma" for it; files of 4 KiB, 64 KiB
# + 1 B, 1 MiB and 16 MiB of random data are written, synced, the page
# cache dropped, and read back through the mount (sha256 equal to the
# source) and on the server's tmpfs (equal too); 200 small files are
# created and a listing of them (a READDIR reply larger than the inline
# threshold) and their contents come back after another cache drop; the
# umount works; nfsd stops (threads 0, no RDMA listener left); the NFS
# and RPC modules unload. At the end the driver unloads and dmesg has no
# WARN/BUG/Oops since the suite started. SOFTRC_DRIVER=softrc (default)
# or rxe picks the driver.
#
# Topologies (selftests/verbs/topo.sh):
#   loop: init_net: va 10.0.0.1 (s0); server and client on 10.0.0.1
#   wire: netns rc-a: va 10.0.0.1 (s0) === vb 10.0.0.2 (s1): netns rc-b;
#         nfsd runs in rc-b, the client mounts from rc-a
#         (rxe: both ends in init_net, policy routing across the veth)
#
# The guest has no init system: rpc.mountd (the export cache upcalls,
# NFSv4 only, no rpcbind) is started by hand, nfsd is configured through
# /proc/fs/nfsd (versions, "rdma 20049" in portlist, threads) and its
# grace period is ended at once (v4_end_grace). Namespaced steps run
# under nsenter --net (not ip netns exec) so the nfsd filesystem and the
# NFS mount live in this mount namespace. Every step that can block on
# NFS runs under timeout.
set -u
# shellcheck source=selftests/vm/lib.sh
. "$(dirname "$0")/lib.sh"
# shellcheck source=selftests/verbs/topo.sh
. "$REPO/selftests/verbs/topo.sh"

NFS_PORT=20049
NR=/run/nfsrdma
SRV=$NR/srv     # the server's tmpfs, exported as the NFSv4 root (fsid=0)
EXP=$SRV/export # mounted by the client as $IP_B:/export
MNT=$NR/mnt
SRC=$NR/src
NFSD_FS=/proc/fs/nfsd
NFS_MODS="nfsv4 nfs nfsd rpcrdma"
SIZES="4096 65537 1048576 16777216"
NFILES=100
MOUNTD=
GRACE=
BAD_KLOG='WARNING:|BUG:|Oops|refcount_t:|list_(add|del) corruption|general protection|UBSAN|KASAN|blocked for more than'

# step NAME CMD...: one test like check, but CMD runs in this shell (its
# variables stay set) and the status is returned
step() {
	local name=$1 log=$NR/step.log rc t0=$SECONDS
	shift
	"$@" >"$log" 2>&1
	rc=$?
	if [ "$rc" = 0 ]; then
		ok "$name"
		[ $((SECONDS - t0)) -lt 2 ] || echo "#   $((SECONDS - t0)) s"
	else
		sed 's/^/# /' "$log"
		not_ok "$name"
	fi
	return "$rc"
}

# nsx NS CMD...: CMD (a program, not a function) in network namespace NS
# ("" = init_net), in this mount namespace
nsx() {
	local ns=$1
	shift
	if [ -n "$ns" ]; then
		nsenter --net="/run/netns/$ns" "$@"
	else
		"$@"
	fi
}

# nfs_t SECONDS CMD...: CMD under a scaled timeout, killed if it ignores
# SIGTERM (NFS waits are killable)
nfs_t() {
	local s=$1
	shift
	timeout -k 5 "$(tmo "$s")" "$@"
}

mounted() {
	mountpoint -q "$1"
}

# cm_listeners: the rdma_cm IDs listening on NFS_PORT
cm_listeners() {
	rdma res show cm_id 2>/dev/null | grep 'state LISTEN' | grep ":$NFS_PORT"
}

no_cm_listeners() {
	! cm_listeners >/dev/null
}

# --- server -----------------------------------------------------------------
# srv_start: nfsd in NS_B exporting SRV, listening on rdma NFS_PORT only
srv_start() {
	modprobe nfsd && modprobe rpcrdma || return 1
	mkdir -p "$SRV" "$MNT" "$SRC"
	mounted "$SRV" || mount -t tmpfs -o size=256m nfsrdma-srv "$SRV" || return 1
	mkdir -p "$EXP"
	# the nfsd filesystem of NS_B's nfsd instance (it is per netns)
	mounted $NFSD_FS || nsx "$NS_B" mount -t nfsd nfsd $NFSD_FS || return 1
	printf '%s 10.0.0.0/24(rw,sync,no_root_squash,no_subtree_check,insecure,fsid=0)\n' \
		"$SRV" >/etc/exports
	# NFSv4 only: mountd serves the kernel's export caches, no rpcbind.
	# nsenter execs it: $! is mountd's pid
	${NS_B:+nsenter --net=/run/netns/$NS_B} rpc.mountd -F -N 2 -N 3 --no-udp >$NR/mountd.log 2>&1 &
	MOUNTD=$!
	nsx "$NS_B" timeout -k 5 "$(tmo 20)" exportfs -ra || return 1
	nsx "$NS_B" exportfs -v
	# versions and grace time before portlist (which creates the service)
	echo "-2 -3 +4 +4.1 +4.2" >$NFSD_FS/versions || return 1
	echo 10 >$NFSD_FS/nfsv4gracetime || return 1
	echo "rdma $NFS_PORT" >$NFSD_FS/portlist || return 1
	echo 4 >$NFSD_FS/threads || return 1
	# no clients to reclaim state: end the grace period now. Not possible
	# without client tracking, which in a netns needs nfsdcld: then the
	# (10 s) grace period runs out while the client mounts (cli_mount)
	GRACE=forced
	echo Y 2>/dev/null >$NFSD_FS/v4_end_grace || GRACE="10 s (no client tracking)"
	kill -0 "$MOUNTD" || { cat $NR/mountd.log; return 1; }
}

grace_over() {
	[ "$(cat $NFSD_FS/v4_end_grace)" = Y ]
}

srv_threads_zero() {
	[ "$(cat $NFSD_FS/threads)" = 0 ]
}

# srv_stop: nfsd threads down, its RDMA listener gone
srv_stop() {
	mounted $NFSD_FS || return 0
	echo 0 >$NFSD_FS/threads || return 1
	srv_threads_zero || { echo "threads: $(cat $NFSD_FS/threads)"; return 1; }
	[ -z "$(cat $NFSD_FS/portlist)" ] || { echo "portlist: $(cat $NFSD_FS/portlist)"; return 1; }
	wait_until 10 no_cm_listeners || { cm_listeners; return 1; }
}

# srv_down: everything srv_start set up, best effort
srv_down() {
	if mounted $NFSD_FS; then
		echo 0 >$NFSD_FS/threads 2>/dev/null
		nsx "$NS_B" exportfs -ua 2>/dev/null
	fi
	if [ -n "$MOUNTD" ]; then
		kill "$MOUNTD" 2>/dev/null
		wait "$MOUNTD" 2>/dev/null
		MOUNTD=
GRACE=
	fi
	local rc=0
	if mounted $NFSD_FS; then
		umount $NFSD_FS || rc=1
	fi
	if mounted "$SRV"; then
		umount "$SRV" || rc=1
	fi
	: >/etc/exports
	return $rc
}

# nfs_mods_gone: none of NFS_MODS loaded
nfs_mods_gone() {
	local m
	for m in $NFS_MODS; do
		[ ! -d "/sys/module/$m" ] || return 1
	done
}

nfs_mods_remove() {
	# shellcheck disable=SC2086 # a list of module names
	modprobe -r $NFS_MODS 2>/dev/null
	nfs_mods_gone
}

# nfs_mods_unload: NFS_MODS (and what only they used) removed; transports
# close asynchronously after the umount, so retry for a while
nfs_mods_unload() {
	wait_until 20 nfs_mods_remove || {
		# shellcheck disable=SC2086 # a list of module names
		modprobe -r $NFS_MODS
		lsmod | grep -E '^(nfs|nfsd|nfsv4|rpcrdma|sunrpc|rdma_cm) '
		return 1
	}
}

# --- client -----------------------------------------------------------------------
cli_mount() {
	modprobe nfsv4 || return 1
	nsx "$NS_A" timeout -k 5 "$(tmo 60)" mount -t nfs -o "rdma,port=$NFS_PORT,vers=4.2" "$IP_B:/export" "$MNT" ||
		return 1
	# OPENs wait (NFS4ERR_GRACE, retried with backoff) until it is over
	wait_until 30 grace_over || { echo "nfsd's grace period did not end"; return 1; }
}

# xprt_of MNT: the transport of the NFS mount on MNT (/proc/self/mountstats)
xprt_of() {
	awk -v m="$1" '$1 == "device" { f = ($5 == m); next } f && $1 == "xprt:" { print $2; exit }' \
		/proc/self/mountstats
}

xprt_is_rdma() {
	local x
	x=$(xprt_of "$MNT")
	[ "$x" = rdma ] || { echo "xprt: '${x}'"; grep -A 3 "mounted on $MNT " /proc/self/mountstats; return 1; }
}

drop_caches() {
	nfs_t 60 sync && echo 3 >/proc/sys/vm/drop_caches
}

write_files() {
	local sz
	for sz in $SIZES; do
		nfs_t 120 cp "$SRC/f$sz" "$MNT/f$sz" || return 1
	done
	drop_caches
}

# sha_of SIZE FILE: FILE has the sha256 of the SIZE-byte source file
sha_of() {
	local got
	got=$(nfs_t 120 sha256sum <"$2") || return 1
	[ "$got" = "${SRC_SHA[$1]}" ] || { echo "sha256 of $2: $got, source: ${SRC_SHA[$1]}"; return 1; }
}

server_copies_match() {
	local sz
	for sz in $SIZES; do
		sha_of "$sz" "$EXP/f$sz" || return 1
	done
}

# the small files: long names, so the listing (about 10 KiB) does not fit
# an inline reply
small_name() {
	printf 'small-file-with-a-longish-name-%04d' "$1"
}

make_small_files() {
	nfs_t 120 bash -c "mkdir $MNT/dir && for i in \$(seq $NFILES); do
		echo \$i >$MNT/dir/\$(printf 'small-file-with-a-longish-name-%04d' \$i) || exit 1
	done" && drop_caches
}

# list_small_files DIR: DIR lists exactly the NFILES names and their
# contents are 1..NFILES
list_small_files() {
	local got want
	got=$(nfs_t 60 ls "$1" | sha256sum) || return 1
	want=$(for i in $(seq "$NFILES"); do small_name "$i"; echo; done | sort | sha256sum)
	[ "$got" = "$want" ] || { echo "listing of $1: $(find "$1" -mindepth 1 | wc -l) entries, want $NFILES"; return 1; }
	got=$(cd "$1" && nfs_t 60 cat -- * | sort -n | sha256sum) || return 1
	want=$(seq "$NFILES" | sha256sum)
	[ "$got" = "$want" ] || { echo "contents of the files in $1 differ"; return 1; }
}

cli_umount() {
	nfs_t 60 umount "$MNT" && ! mounted "$MNT"
}

# dev_stats DEV: DEV's non-zero port counters, one diagnostic line
dev_stats() {
	echo "# $1: $(rdma statistic show link "$1/1" 2>/dev/null |
		awk '{ for (i = 3; i < NF; i += 2) if ($(i + 1) != 0) printf "%s %s ", $i, $(i + 1) }')"
}

# --- cleanup --------------------------------------------------------------------
nfs_cleanup_mounts() {
	if mounted "$MNT"; then
		timeout -k 5 30 umount -f "$MNT" 2>/dev/null || timeout -k 5 30 umount -l "$MNT"
	fi
	srv_down
}

nfs_cleanup() {
	nfs_cleanup_mounts
	nfs_mods_remove
	topo_cleanup
}
trap nfs_cleanup EXIT

ktap_header "nfsrdma ($SOFTRC_DRIVER)"
for t in rpc.mountd exportfs mount.nfs nsenter; do
	command -v $t >/dev/null || { echo "1..0 # SKIP $t not installed (nfs-kernel-server, nfs-common)"; exit 0; }
done
for m in $NFS_MODS; do
	modinfo "$m" >/dev/null 2>&1 || { echo "1..0 # SKIP no $m module"; exit 0; }
done
datapath_gate "nfsrdma ($SOFTRC_DRIVER)"

echo "nfsrdma: suite start" >/dev/kmsg
mkdir -p "$NR" "$SRC"
declare -A SRC_SHA
for sz in $SIZES; do
	head -c "$sz" /dev/urandom >"$SRC/f$sz"
	SRC_SHA[$sz]=$(sha256sum <"$SRC/f$sz")
done

# nfs_topo TOPO: the tests on topology TOPO (up), returning at the first
# failure that leaves nothing to test; the caller tears down
nfs_topo() {
	local t=$1 sz
	step "$t: nfsd up, exporting a tmpfs on rdma port $NFS_PORT" srv_start || return 1
	echo "# nfsd: portlist $(tr '\n' ' ' <$NFSD_FS/portlist)versions $(cat $NFSD_FS/versions), grace $GRACE"
	if ! step "$t: mount -t nfs -o rdma,port=$NFS_PORT,vers=4.2 $IP_B:/export" cli_mount; then
		dmesg | sed -n '/nfsrdma: suite start/,$p' | grep -iE 'rpcrdma|svcrdma|nfs|rdma' |
			tail -20 | sed 's/^/# dmesg: /'
		return 1
	fi
	rdma res show cm_id 2>/dev/null | grep ":$NFS_PORT" | sed 's/^/# /'
	step "$t: mountstats: xprt rdma" xprt_is_rdma
	step "$t: write $SIZES bytes of random data, sync, drop caches" write_files
	for sz in $SIZES; do
		step "$t: read back $sz bytes through the mount, sha256 matches" sha_of "$sz" "$MNT/f$sz"
	done
	step "$t: the server's copies match" server_copies_match
	step "$t: create $NFILES small files, sync, drop caches" make_small_files
	step "$t: list and read the $NFILES files through the mount" list_small_files "$MNT/dir"
	step "$t: the server has the $NFILES files" list_small_files "$EXP/dir"
	dev_stats "$DEV_A"
	[ "$DEV_B" = "$DEV_A" ] || dev_stats "$DEV_B"
	step "$t: umount" cli_umount || return 1
	step "$t: nfsd stops, its rdma listener goes" srv_stop
	step "$t: nfsd's filesystem and export unmount, mountd exits" srv_down
	step "$t: modules unload ($NFS_MODS)" nfs_mods_unload
}

for topo in loop wire; do
	t0=$(date +%s)
	if ! topo_up $topo; then
		not_ok "$topo: topology up ($SOFTRC_DRIVER)"
		topo_down
		continue
	fi
	echo "# $topo: client $DEV_A (${NS_A:-init_net}) -> server $DEV_B (${NS_B:-init_net}) $IP_B"
	if ! nfs_topo $topo; then
		nfs_cleanup_mounts
		nfs_mods_remove
	fi
	topo_down
	echo "# $topo took $(($(date +%s) - t0)) s"
done

check "$SOFTRC_DRIVER unloads" driver_unload
bad=$(dmesg | sed -n '/nfsrdma: suite start/,$p' | grep -E "$BAD_KLOG")
if [ -z "$bad" ]; then
	ok "dmesg: no WARN/BUG since the suite started"
else
	printf '%s\n' "$bad" | head -40 | sed 's/^/# /'
	not_ok "dmesg: no WARN/BUG since the suite started"
fi
rm -rf "$SRC"

ktap_finish

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Installing softrc the ways a user does (Documentation/softrc.rst,
# "Installing"): `make dkms-install` / `make dkms-uninstall`, `make
# install` / `make uninstall`, and softrc-links re-creating the links of
# /etc/softrc/links.conf. The guest's / is an overlay whose writes vanish
# at shutdown, and the module tree gets an overlay of its own
# (softrc_modtree_overlay), so nothing here reaches the host.
#
# Topology (init_net): veth pairs il0/il0p, il1/il1p, made and unmade by
# the softrc-links cases.
set -u
. "$(dirname "$0")/lib.sh"

conf=/tmp/softrc-links/links.conf

cleanup() {
	local l
	for l in ln0 ln1 ln2; do rdma link delete $l 2>/dev/null; done
	ip link del il0 2>/dev/null
	ip link del il1 2>/dev/null
	ip link del il1r 2>/dev/null
	rmmod softrc 2>/dev/null
	make -s -C "$REPO" dkms-uninstall >/dev/null 2>&1
	make -s -C "$REPO" uninstall >/dev/null 2>&1
	rm -rf "${conf%/*}"
	softrc_modtree_restore
}
trap cleanup EXIT

ktap_header install

softrc_deps
mkdir -p "${conf%/*}"
softrc_unload
softrc_modtree_overlay
version=$("$REPO/tools/setup/version.sh")

# modinfo_ok WHERE: modinfo softrc finds a module under WHERE with this
# tree's version, the link alias, and a description for every parameter
modinfo_ok() {
	local info
	info=$(modinfo softrc) || return 1
	printf '%s\n' "$info"
	grep -q "^filename: *.*/$1/.*softrc.ko" <<<"$info" &&
		grep -q "^version: *$version\$" <<<"$info" &&
		grep -q '^alias: *rdma-link-softrc$' <<<"$info" &&
		grep -q '^parm:' <<<"$info" &&
		! grep -E '^parm: *[a-z_]+:? *(\([a-z]+\))?$' <<<"$info"
}

# autoload_ok: with softrc not loaded, `rdma link add` loads it, from the
# installed file (its version), and modprobe -r unloads it again
autoload_ok() {
	! softrc_loaded || return 1
	ip link add il0 type veth peer name il0p || return 1
	rdma link add ln0 type softrc netdev il0 &&
		softrc_loaded &&
		[ "$(cat /sys/module/softrc/version)" = "$version" ] &&
		rdma link delete ln0 &&
		modprobe -r softrc && ! softrc_loaded
	local rc=$?
	ip link del il0
	return $rc
}

# nothing_left: no trace of an installed softrc
nothing_left() {
	local left
	left=$(find "/lib/modules/$KVER" /usr/src /var/lib/dkms -name 'softrc*' 2>/dev/null)
	[ -z "$left" ] || { echo "left behind: $left"; return 1; }
	! modinfo softrc >/dev/null 2>&1 || { echo "modinfo still finds softrc"; return 1; }
	dkms status -m softrc 2>/dev/null | grep -q softrc && { echo "dkms still lists softrc"; return 1; }
	[ ! -e /usr/sbin/softrc-links ] && [ ! -e /lib/systemd/system/softrc-links.service ] &&
		[ ! -e /lib/udev/rules.d/99-softrc-links.rules ]
}

# --- DKMS -------------------------------------------------------------------
t0=$(date +%s)
check "make dkms-install (dkms add, build for $KVER, install)" make -C "$REPO" dkms-install
echo "# dkms-install took $(($(date +%s) - t0)) s"
check "dkms status: softrc/$version installed for $KVER" \
	bash -c "dkms status -m softrc | grep -q '^softrc/$version, $KVER, x86_64: installed'"
check "modinfo softrc: the DKMS module, version $version, alias, every parameter described" \
	modinfo_ok updates/dkms
check "dkms source copy builds without git (VERSION file)" \
	bash -c "[ \"\$(cat /usr/src/softrc-$version/VERSION)\" = '$version' ] && [ ! -e /usr/src/softrc-$version/.git ]"
check "rdma link add autoloads the DKMS module; modprobe -r unloads it" autoload_ok
dkms status -m softrc 2>&1 | sed "s/^/# dkms status: /"
check "make dkms-uninstall" make -C "$REPO" dkms-uninstall
check "dkms-uninstall leaves nothing behind" nothing_left

# --- make install -------------------------------------------------------------
check "make install (modules_install to updates/, depmod, softrc-links)" make -C "$REPO" install
check "modinfo softrc: the installed module, version $version" modinfo_ok updates
check "installed: softrc-links, its unit and udev rule" \
	test -x /usr/sbin/softrc-links -a -f /lib/systemd/system/softrc-links.service -a \
	-f /lib/udev/rules.d/99-softrc-links.rules
# udev and systemd run softrc-links on systems whose /bin/sh is dash or
# busybox: it must be POSIX sh
posix_sh() {
	[ "$(head -n 1 "$1")" = "#!/bin/sh" ] && shellcheck -s sh "$1"
}
if command -v shellcheck >/dev/null; then
	check "softrc-links is POSIX sh (#!/bin/sh, shellcheck -s sh)" \
		posix_sh /usr/sbin/softrc-links
else
	ok "softrc-links is POSIX sh # SKIP no shellcheck"
fi
if command -v systemd-analyze >/dev/null; then
	check "systemd-analyze verify softrc-links.service" \
		bash -c '! systemd-analyze verify /lib/systemd/system/softrc-links.service 2>&1 | grep softrc'
fi
check "rdma link add autoloads the installed module; modprobe -r unloads it" autoload_ok

# --- softrc-links (the unit's ExecStart and the udev rule's RUN, run by hand:
# systemd is not PID 1 here) ---------------------------------------------------
links() {
	/usr/sbin/softrc-links -c "$conf" "$@"
}
# on_netdev LINK NETDEV: LINK exists and is bound to NETDEV
on_netdev() {
	rdma link show "$1/1" 2>/dev/null | grep -q " netdev $2 "
}
# quiet CMD...: CMD succeeds and prints nothing
quiet() {
	local out
	out=$("$@" 2>&1) || return 1
	[ -z "$out" ] || { echo "$out"; return 1; }
}
ip link add il0 type veth peer name il0p
ip link add il1 type veth peer name il1p
mac=$(cat /sys/class/net/il1/address)
cat >"$conf" <<CONF
# RDMA name  netdev
ln0          il0
ln1          mac=${mac^^}   # by address: survives a rename
CONF
made_both() {
	links -t 0 && on_netdev ln0 il0 && on_netdev ln1 il1
}
check "softrc-links: creates ln0 (by name) and ln1 (by address)" made_both
check "softrc-links again: nothing to do" quiet links -t 0
# the netdev is deleted (its link goes with it) and comes back renamed
ip link del il1
check "ln1 went with its netdev" wait_until 5 rdma_dev_gone ln1
ip link add il1r address "$mac" type veth peer name il1p
came_back() {
	links il1r && on_netdev ln1 il1r
}
check "softrc-links il1r (as udev runs it): ln1 back on the re-created, renamed netdev" came_back
check "softrc-links il0p (named by no entry): no change" quiet links il0p
echo "ln2 nosuch0" >>"$conf"
rdma link delete ln0
t0=$(date +%s)
check_fails "softrc-links: a missing netdev fails after the wait" links -t 2
check "... within a bounded time, and the other links were still made" \
	eval "[ \$((\$(date +%s) - t0)) -le 10 ] && on_netdev ln0 il0"
echo "ln3" >>"$conf"
bad_line() {
	local out rc
	out=$(links -t 0 2>&1)
	rc=$?
	echo "$out"
	[ $rc -eq 2 ] && grep -q "links.conf:5: expected" <<<"$out"
}
check "softrc-links: a malformed line is exit status 2, with the line number" bad_line
rdma link delete ln0
rdma link delete ln1
ip link del il0
ip link del il1r
check "modprobe -r softrc after the links are gone" modprobe -r softrc

check "make uninstall" make -C "$REPO" uninstall
check "uninstall leaves nothing behind" nothing_left
check "softrc unloaded at the end" bash -c '! softrc_loaded 2>/dev/null && [ ! -d /sys/module/softrc ]'

ktap_finish

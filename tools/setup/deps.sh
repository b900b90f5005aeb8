#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian 12 packages softrc's build, tests and demo need.
# Does nothing when everything is already present, so `make check` can
# call it every time. Usage: tools/setup/deps.sh [extra-package ...]
set -euo pipefail

KVER=6.1.0-57-amd64
pkgs=(
	make gcc clang libc6-dev libclang-rt-14-dev llvm lcov valgrind
	"linux-headers-$KVER" linux-source-6.1 sparse
	qemu-system-x86 busybox-static kmod cpio xz-utils zstd
	rdma-core ibverbs-utils rdmacm-utils perftest libibverbs-dev
	librdmacm-dev iproute2 iputils-ping tcpdump python3 python3-pyverbs
	nfs-kernel-server nfs-common
	nvme-cli fio open-iscsi gnuplot-nox dkms python3-docutils trace-cmd
	dwarves rsync
	"$@"
)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages (run as root to install): ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${missing[@]}"; then
	apt-get update
	apt-get install -y --no-install-recommends "${missing[@]}"
fi

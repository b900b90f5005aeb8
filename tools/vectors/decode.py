#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tools/vectors/decode.py - print the per-frame table of a RoCEv2 RC pcap.
#
# Usage: decode.py [--pmtu N] FILE.pcap > FILE.txt
#        decode.py --headers FILE.pcap
#
# A decoder written apart from the C core (Python, zlib's CRC-32), so the
# table it prints is an independent reference: selftests/core/test_vectors
# reads the table and checks the C parser, header builder and ICRC against
# it, frame by frame.  It refuses (exit 1) a capture it cannot vouch for:
# a frame that is not Ethernet/IPv4/UDP 4791, an RC opcode it does not
# know, a bad ICRC, non-zero pad bytes, or a payload that does not follow
# the generator's counting pattern (byte i of a message is (base + i) &
# 0xff; a message's packets must agree on base).
#
# Line format (one frame a line; '#' starts a comment):
#   frame dir len tos opcode name psn dqpn A SE pad payload icrc base msgpsn
#   [key=value ...]
# dir is 0>1 (10.0.0.1 -> 10.0.0.2) or 1>0; len the whole Ethernet frame;
# payload the payload bytes (no pad, no ICRC); icrc the CRC-32 value whose
# little-endian bytes end the frame; base and msgpsn the pattern base and
# the PSN of the message's first packet ('-' without payload).  Extension
# header fields: va= rkey= dmalen= (RETH, or AtomicETH va/rkey), swap= cmp=
# (AtomicETH), syn= msn= (AETH), orig= (AtomicAckETH), imm= (ImmDt, as the
# big-endian wire value), inv= (IETH).
#
# --headers reads any RoCEv2 RC capture, e.g. one cut to its headers
# (tcpdump -s 128, selftests/vm/interop.sh INTEROP_PCAP): lengths come from
# the IP header, the ICRC and pad are checked only in frames captured
# whole, payloads are not held to the counting pattern (base and msgpsn
# print '-'), and each line ends with t=<seconds since the first frame>.
import hashlib
import struct
import sys
import zlib

# opcode: (name, extension headers in wire order, carries payload)
RC_OPCODES = {
    0x00: ('SEND_FIRST', (), True),
    0x01: ('SEND_MIDDLE', (), True),
    0x02: ('SEND_LAST', (), True),
    0x03: ('SEND_LAST_WITH_IMMEDIATE', ('imm',), True),
    0x04: ('SEND_ONLY', (), True),
    0x05: ('SEND_ONLY_WITH_IMMEDIATE', ('imm',), True),
    0x06: ('RDMA_WRITE_FIRST', ('reth',), True),
    0x07: ('RDMA_WRITE_MIDDLE', (), True),
    0x08: ('RDMA_WRITE_LAST', (), True),
    0x09: ('RDMA_WRITE_LAST_WITH_IMMEDIATE', ('imm',), True),
    0x0a: ('RDMA_WRITE_ONLY', ('reth',), True),
    0x0b: ('RDMA_WRITE_ONLY_WITH_IMMEDIATE', ('reth', 'imm'), True),
    0x0c: ('RDMA_READ_REQUEST', ('reth',), False),
    0x0d: ('RDMA_READ_RESPONSE_FIRST', ('aeth',), True),
    0x0e: ('RDMA_READ_RESPONSE_MIDDLE', (), True),
    0x0f: ('RDMA_READ_RESPONSE_LAST', ('aeth',), True),
    0x10: ('RDMA_READ_RESPONSE_ONLY', ('aeth',), True),
    0x11: ('ACKNOWLEDGE', ('aeth',), False),
    0x12: ('ATOMIC_ACKNOWLEDGE', ('aeth', 'atomicack'), False),
    0x13: ('COMPARE_SWAP', ('atomic',), False),
    0x14: ('FETCH_ADD', ('atomic',), False),
    0x16: ('SEND_LAST_WITH_INVALIDATE', ('ieth',), True),
    0x17: ('SEND_ONLY_WITH_INVALIDATE', ('ieth',), True),
}
EXT_LEN = {'reth': 16, 'aeth': 4, 'atomic': 28, 'atomicack': 8, 'imm': 4, 'ieth': 4}
STARTS = {0x00, 0x04, 0x05, 0x06, 0x0a, 0x0b, 0x0d, 0x10, 0x17}   # FIRST and ONLY
STREAM = {**{op: 'send' for op in (0, 1, 2, 3, 4, 5, 0x16, 0x17)},
          **{op: 'write' for op in range(6, 0x0c)},
          **{op: 'read' for op in range(0x0d, 0x11)}}
ROCE_PORT = 4791
ADDR = {bytes([10, 0, 0, 1]): 0, bytes([10, 0, 0, 2]): 1}


class Bad(Exception):
    pass


def pcap_frames(data):
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        end = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        end = '>'
    else:
        raise Bad('not a classic pcap file')
    if struct.unpack(end + 'I', data[20:24])[0] != 1:
        raise Bad('link type is not Ethernet')
    off = 24
    while off < len(data):
        if off + 16 > len(data):
            raise Bad('truncated record header')
        sec, usec, caplen, origlen = struct.unpack(end + 'IIII', data[off:off + 16])
        off += 16
        if caplen > origlen or off + caplen > len(data):
            raise Bad('truncated record')
        yield data[off:off + caplen], origlen, sec + usec / 1e6
        off += caplen


def icrc(ip, end):
    """CRC-32 of the masked IPv4 + UDP + BTH ... pad (IBA A17.8.4)."""
    b = bytearray(ip[:end])
    b[1] = 0xff                          # TOS
    b[8] = 0xff                          # TTL
    b[10:12] = b'\xff\xff'               # IPv4 header checksum
    b[26:28] = b'\xff\xff'               # UDP checksum
    b[32] = 0xff                         # BTH resv8a
    return zlib.crc32(b'\xff' * 8 + bytes(b)) & 0xffffffff


def aeth_note(syn):
    kind = syn >> 5
    if kind == 0:
        return 'ACK credits=%d' % (syn & 0x1f)
    if kind == 1:
        return 'RNR NAK timer=%d' % (syn & 0x1f)
    if kind == 3:
        return {0: 'NAK PSN sequence error', 1: 'NAK invalid request',
                2: 'NAK remote access error', 3: 'NAK remote operational error',
                4: 'NAK invalid RD request'}.get(syn & 0x1f, 'NAK reserved code')
    return 'reserved'


def ext_fields(bth, exts):
    """The fields of the extension headers after the BTH, and AETH notes."""
    f, notes, o = {}, [], 12
    for x in exts:
        h = bth[o:o + EXT_LEN[x]]
        if x == 'reth':
            f['va'], f['rkey'], f['dmalen'] = struct.unpack('>QII', h)
        elif x == 'atomic':
            f['va'], f['rkey'], f['swap'], f['cmp'] = struct.unpack('>QIQQ', h)
        elif x == 'aeth':
            f['syn'] = h[0]
            f['msn'] = int.from_bytes(h[1:4], 'big')
            notes.append(aeth_note(h[0]))
        elif x == 'atomicack':
            f['orig'] = struct.unpack('>Q', h)[0]
        elif x == 'imm':
            f['imm'] = struct.unpack('>I', h)[0]
        elif x == 'ieth':
            f['inv'] = struct.unpack('>I', h)[0]
        o += EXT_LEN[x]
    return f, notes


def decode(frame, num, pmtu, streams, origlen=None, headers=False):
    whole = origlen is None or origlen == len(frame)
    if not whole and not headers:
        raise Bad('truncated frame')
    if len(frame) < 14 + 20 + 8 + 12 or frame[12:14] != b'\x08\x00':
        raise Bad('not Ethernet/IPv4')
    ip = frame[14:]
    ihl = (ip[0] & 0x0f) * 4
    if ip[0] >> 4 != 4 or ihl != 20 or ip[9] != 17:
        raise Bad('not IPv4 (IHL 5) / UDP')
    iplen = struct.unpack('>H', ip[2:4])[0]
    if iplen > (len(ip) if whole else origlen - 14):
        raise Bad('IP length beyond the frame')
    if not whole:
        # the headers only: the lengths below come from the IP header
        return decode_cut(ip, iplen, num, frame, origlen)
    ip = ip[:iplen]
    sport, dport, ulen = struct.unpack('>HHH', ip[20:26])
    if dport != ROCE_PORT or ulen != iplen - 20:
        raise Bad('not UDP to 4791, or UDP length mismatch')
    src, dst = ip[12:16], ip[16:20]
    if src not in ADDR or dst not in ADDR or src == dst:
        raise Bad('unexpected addresses')
    bth = ip[28:]
    op = bth[0]
    if op not in RC_OPCODES:
        raise Bad('opcode 0x%02x is not an RC opcode' % op)
    name, exts, data_op = RC_OPCODES[op]
    se, mig, pad, tver = bth[1] >> 7, (bth[1] >> 6) & 1, (bth[1] >> 4) & 3, bth[1] & 0xf
    pkey = struct.unpack('>H', bth[2:4])[0]
    dqpn = int.from_bytes(bth[5:8], 'big')
    ackreq, resv7 = bth[8] >> 7, bth[8] & 0x7f
    psn = int.from_bytes(bth[9:12], 'big')
    if tver or pkey != 0xffff or resv7:
        raise Bad('TVer/P_Key/reserved bits unexpected')
    hdr = 12 + sum(EXT_LEN[x] for x in exts)
    end = len(bth) - 4
    if end < hdr + pad:
        raise Bad('shorter than its headers')
    payload = end - hdr - pad
    if not data_op and (payload or pad):
        raise Bad('payload on an opcode without one')
    if any(bth[hdr + payload:end]):
        raise Bad('non-zero pad bytes')
    trailer = struct.unpack('<I', bth[end:end + 4])[0]
    crc = icrc(ip, 28 + end)
    if crc != trailer:
        raise Bad('ICRC 0x%08x, computed 0x%08x' % (trailer, crc))

    f, notes = ext_fields(bth, exts)

    base = msgpsn = None
    if payload and not headers:
        key = (ADDR[src], STREAM[op])
        if op in STARTS:
            streams[key] = [psn, None]
        if key not in streams:
            raise Bad('MIDDLE/LAST without a FIRST')
        msgpsn = streams[key][0]
        moff = ((psn - msgpsn) & 0xffffff) * pmtu
        data = bth[hdr:hdr + payload]
        base = (data[0] - moff) & 0xff
        if streams[key][1] is None:
            streams[key][1] = base
        if base != streams[key][1]:
            raise Bad('pattern base 0x%02x, the message started with 0x%02x' %
                      (base, streams[key][1]))
        if any(data[i] != (base + moff + i) & 0xff for i in range(payload)):
            raise Bad('payload is not the counting pattern')

    cols = ['%4d' % num, '%d>%d' % (ADDR[src], ADDR[dst]), '%4d' % len(frame),
            '0x%02x' % ip[1], '0x%02x' % op, '%-30s' % name, '0x%06x' % psn,
            '0x%06x' % dqpn, str(ackreq), str(se), str(pad), '%4d' % payload,
            '0x%08x' % crc, '0x%02x' % base if base is not None else '   -',
            '0x%06x' % msgpsn if msgpsn is not None else '       -']
    cols += ['%s=0x%x' % (k, v) if k not in ('msn', 'dmalen') else '%s=%d' % (k, v)
             for k, v in f.items()]
    if notes:
        cols.append('# ' + '; '.join(notes))
    return ' '.join(cols), sport, mig


def decode_cut(ip, iplen, num, frame, origlen):
    """A frame captured up to its headers: no ICRC, pad or payload checks."""
    sport, dport = struct.unpack('>HH', ip[20:24])
    if dport != ROCE_PORT or ip[12:16] not in ADDR or ip[16:20] not in ADDR:
        raise Bad('not UDP to 4791 between the two addresses')
    src, dst = ip[12:16], ip[16:20]
    bth = ip[28:]
    op = bth[0]
    if op not in RC_OPCODES:
        raise Bad('opcode 0x%02x is not an RC opcode' % op)
    name, exts, _ = RC_OPCODES[op]
    se, pad = bth[1] >> 7, (bth[1] >> 4) & 3
    dqpn = int.from_bytes(bth[5:8], 'big')
    ackreq = bth[8] >> 7
    psn = int.from_bytes(bth[9:12], 'big')
    hdr = 12 + sum(EXT_LEN[x] for x in exts)
    if len(bth) < hdr:
        raise Bad('captured shorter than its headers')
    payload = iplen - 28 - hdr - pad - 4
    f, notes = ext_fields(bth, exts)
    cols = ['%4d' % num, '%d>%d' % (ADDR[src], ADDR[dst]), '%4d' % origlen,
            '0x%02x' % ip[1], '0x%02x' % op, '%-30s' % name, '0x%06x' % psn,
            '0x%06x' % dqpn, str(ackreq), str(se), str(pad), '%4d' % payload,
            '         -', '   -', '       -']
    cols += ['%s=0x%x' % (k, v) if k not in ('msn', 'dmalen') else '%s=%d' % (k, v)
             for k, v in f.items()]
    if notes:
        cols.append('# ' + '; '.join(notes))
    return ' '.join(cols), sport, 0


def main(argv):
    pmtu = 1024
    headers = False
    if len(argv) == 4 and argv[1] == '--pmtu':
        pmtu = int(argv[2])
        argv = argv[2:]
    if len(argv) == 3 and argv[1] == '--headers':
        headers = True
        argv = argv[1:]
    if len(argv) != 2:
        sys.stderr.write('usage: decode.py [--pmtu N] FILE.pcap > FILE.txt\n'
                         '       decode.py --headers FILE.pcap\n')
        return 2
    data = open(argv[1], 'rb').read()
    rows, streams, seen, sports = [], {}, set(), set()
    t0 = None
    try:
        for num, (frame, origlen, ts) in enumerate(pcap_frames(data), 1):
            try:
                row, sport, _ = decode(frame, num, pmtu, streams, origlen, headers)
                if headers:
                    t0 = ts if t0 is None else t0
                    row = row.split(' # ', 1)
                    row[0] += ' t=%.6f' % (ts - t0)
                    row = ' # '.join(row)
            except Bad as err:
                raise Bad('frame %d: %s' % (num, err)) from None
            rows.append(row)
            seen.add(int(row.split()[4], 16))
            sports.add(sport)
    except Bad as err:
        sys.stderr.write('decode.py: %s: %s\n' % (argv[1], err))
        return 1
    missing = sorted(set(RC_OPCODES) - seen)
    print('# %s: %d frames, %d bytes, sha256 %s' %
          (argv[1].rsplit('/', 1)[-1], len(rows), len(data), hashlib.sha256(data).hexdigest()))
    print('# Decoded by tools/vectors/decode.py (regenerate: make -C selftests/core vectors-table);')
    print('# read by selftests/core/test_vectors.c.  Path MTU %d.  Every frame: Ethernet II,' % pmtu)
    print('# IPv4 IHL 5, UDP to 4791 from port(s) %s, P_Key 0xffff, TVer 0, and an ICRC' %
          ','.join('%d' % p for p in sorted(sports)))
    print('# that zlib.crc32 over the masked headers reproduces; pad bytes are zero.')
    print('# RC opcodes present: %d of %d%s' %
          (len(seen), len(RC_OPCODES),
           '' if not missing else ' (missing: %s)' % ' '.join('0x%02x' % m for m in missing)))
    print('#')
    print('# frm dir  len  tos op   name                           psn      dqpn     A SE pad'
          ' payl icrc       base msgpsn   fields')
    for row in rows:
        print(row)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

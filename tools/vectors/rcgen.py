#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# tools/vectors/rcgen.py - drive one rdma_rxe RC QP pair through every RC
# opcode, a PSN wrap and the NAK cases, one operation at a time, so that a
# tcpdump on the veth between the two devices records a small, ordered set
# of real rxe RoCEv2 packets.  Run by capture.sh inside the capture VM
# (root, rxe0 on va = 10.0.0.1, rxe1 on vb = 10.0.0.2); not a test itself.
#
# Every payload is a counting pattern: byte i of a message is
# (base + i) & 0xff, i counted from the start of the message.  The bases are
# the BASE_* constants below; tools/vectors/decode.py checks them.
#
# Every completion and every received byte is checked: an unexpected
# status, a data mismatch or a missing completion exits non-zero, and
# capture.sh then refuses the capture.
import socket
import subprocess
import sys
import time

from pyverbs.addr import AHAttr, GlobalRoute
from pyverbs.cq import CQ
from pyverbs.device import Context
from pyverbs.mr import MR, MW, MWBindInfo
from pyverbs.pd import PD
from pyverbs.qp import QP, QPAttr, QPCap, QPInitAttr
from pyverbs.wr import SGE, RecvWR, SendWR
import pyverbs.enums as e

GID_INDEX = 1                     # the IPv4-mapped RoCEv2 GID ::ffff:10.0.0.x
PSN_A, PSN_B = 0xFFFFF0, 0x000200  # rxe0's send PSNs wrap through 0 after 16 packets
TOS_A, TOS_B = 0x6A, 0x00         # different TOS per side: exercises ICRC TOS masking
MIN_RNR_TIMER = 28                # 163.84 ms, carried in rxe1's RNR NAKs
ACC = (e.IBV_ACCESS_LOCAL_WRITE | e.IBV_ACCESS_REMOTE_WRITE |
       e.IBV_ACCESS_REMOTE_READ | e.IBV_ACCESS_REMOTE_ATOMIC |
       e.IBV_ACCESS_MW_BIND)
MRLEN = 65536
OFF_RX, OFF_WR, OFF_RD, OFF_AT = 0x0000, 0x4000, 0x8000, 0xF000  # areas of each MR
GAP = 0.3                         # seconds between steps: one exchange at a time


def log(*args):
    print('[rcgen %.3f]' % time.monotonic(), *args, flush=True)


def pattern(base, n):
    return bytes((base + i) & 0xFF for i in range(n))


def fail(msg):
    log('FAIL', msg)
    sys.exit(1)


class Side:
    def __init__(self, dev):
        self.dev = dev
        self.ctx = Context(name=dev)
        self.pd = PD(self.ctx)
        self.cq = CQ(self.ctx, 64)
        cap = QPCap(max_send_wr=16, max_recv_wr=16, max_send_sge=1, max_recv_sge=1)
        self.qp = QP(self.pd, QPInitAttr(qp_type=e.IBV_QPT_RC, scq=self.cq,
                                         rcq=self.cq, cap=cap))
        self.mr = MR(self.pd, MRLEN, ACC)
        self.mr.write(bytes(MRLEN), MRLEN)
        self.gid = self.ctx.query_gid(1, GID_INDEX)

    def to_rts(self, peer, sq_psn, rq_psn, tos):
        attr = QPAttr()
        attr.port_num = 1
        attr.pkey_index = 0
        attr.qp_access_flags = ACC
        attr.path_mtu = e.IBV_MTU_1024
        attr.dest_qp_num = peer.qp.qp_num
        attr.sq_psn = sq_psn
        attr.rq_psn = rq_psn
        attr.max_rd_atomic = 4
        attr.max_dest_rd_atomic = 4
        attr.min_rnr_timer = MIN_RNR_TIMER
        attr.timeout = 18          # ~1.07 s: no spurious retransmits under TCG
        attr.retry_cnt = 7
        attr.rnr_retry = 7         # retry RNR NAKs for ever
        gr = GlobalRoute(dgid=peer.gid, sgid_index=GID_INDEX, hop_limit=64,
                         traffic_class=tos)
        attr.ah_attr = AHAttr(gr=gr, is_global=1, port_num=1)
        self.qp.to_rts(attr)

    def sge(self, off, n):
        return SGE(self.mr.buf + off, n, self.mr.lkey)

    def recv(self, wr_id, off, n):
        self.qp.post_recv(RecvWR(wr_id=wr_id, num_sge=1, sg=[self.sge(off, n)]))

    def send(self, wr_id, opcode, off=0, n=0, imm=None, inv=None, rdma=None,
             atomic=None):
        kw = dict(wr_id=wr_id, opcode=opcode, send_flags=e.IBV_SEND_SIGNALED,
                  num_sge=1, sg=[self.sge(off, n)])
        if imm is not None:
            kw['imm_data'] = socket.htonl(imm)   # ImmDt is big-endian on the wire
        if inv is not None:
            kw['imm_data'] = inv   # invalidate_rkey shares imm_data's union
        wr = SendWR(**kw)
        if rdma:
            wr.set_wr_rdma(*rdma)
        if atomic:
            wr.set_wr_atomic(*atomic)
        self.qp.post_send(wr)

    def poll(self, status=e.IBV_WC_SUCCESS, tmo=30.0):
        t0 = time.monotonic()
        while True:
            k, wcs = self.cq.poll(num_entries=1)
            if k:
                wc = wcs[0]
                break
            if time.monotonic() - t0 > tmo:
                fail('%s: no completion in %.0f s' % (self.dev, tmo))
            time.sleep(0.002)
        log('  %s wc wr_id=%d status=%d opcode=%d byte_len=%d' %
            (self.dev, wc.wr_id, wc.status, wc.opcode, wc.byte_len))
        if wc.status != status:
            fail('%s: wr_id %d status %d, expected %d' %
                 (self.dev, wc.wr_id, wc.status, status))
        return wc


def tc(*args):
    subprocess.run(['tc'] + list(args), check=True)


def main():
    a, b = Side('rxe0'), Side('rxe1')
    a.to_rts(b, PSN_A, PSN_B, TOS_A)
    b.to_rts(a, PSN_B, PSN_A, TOS_B)
    log('rxe0 qpn=0x%x buf=0x%x rkey=0x%x | rxe1 qpn=0x%x buf=0x%x rkey=0x%x' %
        (a.qp.qp_num, a.mr.buf, a.mr.rkey, b.qp.qp_num, b.mr.buf, b.mr.rkey))
    rbuf = b.mr.buf
    step_no = [0]

    def step(title):
        time.sleep(GAP)
        step_no[0] += 1
        log('STEP %d %s' % (step_no[0], title))

    def check(side, off, n, base, what):
        if n and side.mr.read(n, off) != pattern(base, n):
            fail('%s: data mismatch' % what)

    def send(n, base, imm=None):
        a.mr.write(pattern(base, n), n, 0)
        b.recv(step_no[0], OFF_RX, 4096)
        a.send(step_no[0], e.IBV_WR_SEND if imm is None else e.IBV_WR_SEND_WITH_IMM,
               0, n, imm=imm)
        a.poll()
        b.poll()
        check(b, OFF_RX, n, base, 'send')

    def write(n, base, imm=None, rkey=None, status=e.IBV_WC_SUCCESS):
        a.mr.write(pattern(base, n), n, 0)
        if imm is not None:
            b.recv(step_no[0], OFF_RX, 16)
        a.send(step_no[0],
               e.IBV_WR_RDMA_WRITE if imm is None else e.IBV_WR_RDMA_WRITE_WITH_IMM,
               0, n, imm=imm,
               rdma=(b.mr.rkey if rkey is None else rkey, rbuf + OFF_WR))
        a.poll(status)
        if status != e.IBV_WC_SUCCESS:
            return
        if imm is not None:
            b.poll()
        check(b, OFF_WR, n, base, 'write')

    def read(n, base):
        b.mr.write(pattern(base, n), n, OFF_RD)
        a.send(step_no[0], e.IBV_WR_RDMA_READ, OFF_RD, n,
               rdma=(b.mr.rkey, rbuf + OFF_RD))
        a.poll()
        check(a, OFF_RD, n, base, 'read')

    def atomic(op, cmp_add, swap, want_orig, want_new):
        a.send(step_no[0], op, OFF_AT, 8,
               atomic=(b.mr.rkey, rbuf + OFF_AT, cmp_add, swap))
        a.poll()
        orig = int.from_bytes(a.mr.read(8, OFF_AT), 'little')
        new = int.from_bytes(b.mr.read(8, OFF_AT), 'little')
        log('  atomic returned 0x%016x, target now 0x%016x' % (orig, new))
        if (orig, new) != (want_orig, want_new):
            fail('atomic result')

    mws = []

    def send_inv(n, base):
        # An rkey rxe1 may invalidate: a fresh type 2 MW bound by rxe1
        # (a local operation on rxe1's send queue, no packets).
        mws.append(MW(b.pd, e.IBV_MW_TYPE_2))
        wr = SendWR(wr_id=1000 + step_no[0], opcode=e.IBV_WR_BIND_MW,
                    send_flags=e.IBV_SEND_SIGNALED)
        wr.set_bind_wr(mws[-1], MWBindInfo(b.mr, rbuf + OFF_WR, 4096,
                                           e.IBV_ACCESS_REMOTE_WRITE))
        b.qp.post_send(wr)
        b.poll()
        log('  rxe1 bound a type 2 MW, rkey=0x%x' % wr.rkey)
        a.mr.write(pattern(base, n), n, 0)
        b.recv(step_no[0], OFF_RX, 4096)
        a.send(step_no[0], e.IBV_WR_SEND_WITH_INV, 0, n, inv=wr.rkey)
        a.poll()
        wc = b.poll()
        check(b, OFF_RX, n, base, 'send_inv')
        log('  rxe1 recv wc_flags=0x%x invalidated rkey=0x%x' % (wc.wc_flags, wc.imm_data))

    X1, X2 = 0x1111111111111111, 0x2222222222222222
    b.mr.write(X1.to_bytes(8, 'little'), 8, OFF_AT)

    step('SEND 13 B: SEND_ONLY, pad 3');                   send(13, 0x10)
    step('SEND 2501 B: SEND_FIRST/MIDDLE/LAST');          send(2501, 0x20)
    step('SEND_WITH_IMM 32 B: SEND_ONLY_WITH_IMMEDIATE');  send(32, 0x30, imm=0x11223344)
    step('SEND_WITH_IMM 2100 B: SEND_LAST_WITH_IMMEDIATE'); send(2100, 0x40, imm=0xA1B2C3D4)
    step('RDMA_WRITE 100 B: RDMA_WRITE_ONLY');             write(100, 0x50)
    step('RDMA_WRITE 3000 B: RDMA_WRITE_FIRST/MIDDLE/LAST'); write(3000, 0x60)
    step('RDMA_WRITE_WITH_IMM 64 B: RDMA_WRITE_ONLY_WITH_IMMEDIATE')
    write(64, 0x70, imm=0x0000BEEF)
    step('RDMA_WRITE_WITH_IMM 2200 B: RDMA_WRITE_LAST_WITH_IMMEDIATE at PSN 0xffffff')
    write(2200, 0x80, imm=0xCAFEF00D)
    step('RDMA_WRITE 0 B at PSN 0 (after the wrap)');      write(0, 0x90)
    step('RDMA_READ 200 B: RDMA_READ_RESPONSE_ONLY');      read(200, 0xA0)
    step('RDMA_READ 3001 B: RDMA_READ_RESPONSE_FIRST/MIDDLE/LAST'); read(3001, 0xB0)
    step('CMP_SWAP, equal: swaps')
    atomic(e.IBV_WR_ATOMIC_CMP_AND_SWP, X1, X2, X1, X2)
    step('FETCH_ADD +5')
    atomic(e.IBV_WR_ATOMIC_FETCH_AND_ADD, 5, 0, X2, X2 + 5)
    step('CMP_SWAP, not equal: no swap')
    atomic(e.IBV_WR_ATOMIC_CMP_AND_SWP, X1, 0x3333333333333333, X2 + 5, X2 + 5)

    step('rxe1 -> rxe0 SEND 20 B (the other PSN space)')
    b.mr.write(pattern(0xC0, 20), 20, OFF_RD)
    a.recv(step_no[0], 0x2000, 64)
    b.send(step_no[0], e.IBV_WR_SEND, OFF_RD, 20)
    b.poll()
    a.poll()
    check(a, 0x2000, 20, 0xC0, 'reverse send')

    step('SEND_WITH_INV 24 B: SEND_ONLY_WITH_INVALIDATE');  send_inv(24, 0x18)
    step('SEND_WITH_INV 2100 B: SEND_LAST_WITH_INVALIDATE'); send_inv(2100, 0x28)

    step('RNR NAK: SEND 40 B with no receive posted; posted 0.4 s later')
    a.mr.write(pattern(0xD0, 40), 40, 0)
    a.send(step_no[0], e.IBV_WR_SEND, 0, 40)
    time.sleep(0.4)
    b.recv(step_no[0], OFF_RX, 4096)
    a.poll()
    b.poll()
    check(b, OFF_RX, 40, 0xD0, 'rnr send')

    step('PSN sequence error NAK: RDMA_WRITE 4000 B, first WRITE_MIDDLE dropped')
    # prio root qdisc on va, u32 match on BTH opcode 0x07 (byte 28 of the
    # IP packet), policer whose bucket holds one packet: the first
    # WRITE_MIDDLE conforms and is dropped ("conform-exceed EXCEED/CONFORM"),
    # later ones exceed and pass.  A drop inside the qdisc looks like a good
    # transmit to rxe, so it does not resend locally, and tcpdump on va
    # never sees the packet; the responder NAKs the gap.
    tc('qdisc', 'add', 'dev', 'va', 'root', 'handle', '1:', 'prio')
    tc('filter', 'add', 'dev', 'va', 'parent', '1:', 'protocol', 'ip', 'prio', '1',
       'u32', 'match', 'ip', 'protocol', '17', '0xff',
       'match', 'ip', 'dport', '4791', '0xffff',
       'match', 'u8', '0x07', '0xff', 'at', '28', 'flowid', '1:1',
       'action', 'police', 'rate', '1kbit', 'burst', '1200', 'mtu', '2000',
       'conform-exceed', 'ok/drop')
    write(4000, 0xE0)
    subprocess.run('tc -s filter show dev va parent 1: | grep -E "police|Sent|drop"',
                   shell=True)
    tc('qdisc', 'del', 'dev', 'va', 'root')

    step('remote access error NAK: RDMA_WRITE 16 B with a wrong rkey')
    write(16, 0xF0, rkey=b.mr.rkey ^ 0x00FF0000, status=e.IBV_WC_REM_ACCESS_ERR)
    time.sleep(GAP)
    log('DONE')


if __name__ == '__main__':
    main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# stages.py DRIVER PATH METRIC COST < `perf script -F comm,ip,sym,dso`
#
# Reads the call-graph samples of a profile run (tools/bench/profile.sh:
# perf cpu-clock samples, which BENCH_CLOCK=icount makes proportional to
# guest instructions) and sorts each sample into one stage of the data
# path by its call chain: the frame nearest the leaf that is one of the
# ANCHORS decides (the receive softirq runs nested in a transmit when
# that re-enables bottom halves, and the other way round), helpers below
# it may refine the stage (REFINE). Idle samples are left out. Prints
# "STAGE driver path metric stage share cost" lines (share of the busy
# samples; cost per message: share times COST, which profile-guest.sh
# measured without perf running) and "SYM driver path metric stage
# function share" lines, the leaf functions that cost most in a stage.
import re
import sys

TX_BUILD = "TX: headers, payload into skb"
TX_CRC = "TX: ICRC"
TX_ALLOC = "TX: skb allocation"
RX_CRC = "RX: ICRC check"
RX_ENGINE = "RX: engine (parse, PSN, responder, ACK)"
RX_COPY = "RX: payload to memory"
FREE_SKB = "skb free"
IDLE = "idle"
ORDER = [TX_CRC, RX_CRC, TX_ALLOC, TX_BUILD, "TX: IP output, device", FREE_SKB,
         RX_COPY, "completion to CQ", RX_ENGINE, "RX: IP/UDP stack",
         "TX: SQ pull, WQE checks", "TX: requester engine", "syscall, uverbs",
         "user space (perftest, librxe)", "other kernel"]

# Stage anchors: the frame nearest the leaf that is one of these names
# (exact, or a prefix where the name ends in "*") decides the stage (the
# receive softirq can run nested in a transmit, when bottom halves are
# re-enabled there, and the other way round); "@user" is a frame outside
# the kernel
ANCHORS = [
    (IDLE, ("native_safe_halt", "default_idle*", "cpuidle_*")),
    (TX_BUILD, ("softrc_skb_build", "softrc_skb_hdrs", "softrc_skb_copy", "softrc_skb_frags",
                "rxe_init_packet", "rxe_prepare", "prepare_ack_packet")),
    (TX_CRC, ("rxe_icrc_generate",)),
    (RX_CRC, ("rxe_icrc_check",)),
    (RX_COPY, ("softrc_glue_place",)),
    ("TX: IP output, device", ("softrc_net_flush", "softrc_self_xmit", "rxe_xmit_packet",
                               "ip_local_out", "ip_output", "__dev_queue_xmit")),
    ("completion to CQ", ("softrc_qp_drain_comps", "softrc_cq_post", "rxe_cq_post",
                          "do_complete")),
    (RX_ENGINE, ("softrc_rx_*",
                 "rxe_udp_encap_recv", "rxe_rcv", "rxe_responder", "rxe_completer")),
    ("RX: IP/UDP stack", ("net_rx_action", "__netif_receive_skb*", "process_backlog",
                          "ip_rcv*", "ip_list_rcv", "udp_rcv", "__udp4_lib_rcv")),
    ("TX: SQ pull, WQE checks", ("softrc_qp_pull_usq", "req_next_wqe")),
    ("TX: requester engine", ("softrc_eng_tx", "softrc_qp_run_tx", "softrc_post_send",
                              "rxe_requester", "rxe_post_send", "rxe_do_task")),
    ("syscall, uverbs", ("ib_uverbs_*", "do_syscall_64", "entry_SYSCALL*", "syscall_*")),
    ("user space (perftest, librxe)", ("@user",)),
]
# leaf-side helpers that refine a stage: the ICRC and allocations while
# building a packet, the ICRC check and frees while receiving one
CRC = ("softrc_crc*", "softrc_net_crc", "softrc_icrc_*", "softrc_skb_crc", "crc32*",
       "crypto_shash*", "shash_*", "loop_64", "kernel_fpu*", "irq_fpu_usable")
ALLOC = ("__alloc_skb", "alloc_skb*", "kmalloc_reserve", "__kmalloc*", "kmem_cache_alloc*",
         "__kmem_cache_alloc*", "build_skb*", "__build_skb*", "page_frag*", "skb_page_frag_refill",
         "memcg_slab*", "get_page_from_freelist", "__alloc_pages*")
FREE = ("kfree_skb*", "consume_skb", "skb_release*", "__kfree_skb*", "kfree_skbmem",
        "skb_free_head", "kmem_cache_free", "kfree*", "skb_attempt_defer_free")
REFINE = {TX_BUILD: ((CRC, TX_CRC), (ALLOC, TX_ALLOC)),
          RX_ENGINE: ((CRC, RX_CRC), (FREE, FREE_SKB))}
# rxe's copy_data() copies in both directions: its caller tells which
SPLIT = {"copy_data": (("rxe_requester", TX_BUILD), ("rxe_responder", RX_COPY),
                       ("rxe_completer", RX_COPY))}


def named(f, names):
    """f is one of names, a "*" at a name's end matching any rest"""
    f = f.split(".")[0]  # foo.isra.0, foo.constprop.0: foo
    return any(f == n or n.endswith("*") and f.startswith(n[:-1]) for n in names)


def anchor(f):
    for stage, names in ANCHORS:
        if named(f, names):
            return stage
    return None


def classify(frames):
    """frames: leaf first"""
    for i, f in enumerate(frames):
        for name, callers in SPLIT.items():
            if not named(f, (name,)):
                continue
            for g in frames[i + 1:]:
                for caller, stage in callers:
                    if named(g, (caller,)):
                        return stage
        stage = anchor(f)
        if stage is None:
            continue
        for helpers, refined in REFINE.get(stage, ()):
            if any(named(g, helpers) for g in frames[:i]):
                return refined
        return stage
    return "other kernel"


# the data path runs in these tasks (the perftest tools, and softirqs
# in whatever they interrupt); the shell and perf around them do not count
COMMS = ("ib_", "ksoftirqd", "swapper", "kworker")


def samples(stream):
    frames, keep = [], False
    for line in stream:
        line = line.rstrip("\n")
        if not line.startswith((" ", "\t")) or not line.strip():
            # a sample's header line (comm) or the blank line after it
            if frames and keep:
                yield frames
            frames = []
            if line.strip():
                keep = line.strip().startswith(COMMS)
            continue
        m = re.match(r"\s+[0-9a-f]+\s+(\S+?)(\+0x[0-9a-f]+)?\s+\((.*)\)$", line)
        if not m:
            continue
        sym, dso = m.group(1), m.group(3)
        frames.append(sym if "kernel" in dso or dso.startswith("[") and
                      dso not in ("[vdso]", "[unknown]") else "@user")
    if frames and keep:
        yield frames


def main():
    drv, path, metric, per_msg = sys.argv[1:5]
    per_msg = float(per_msg)
    count, leaves = {}, {}
    for frames in samples(sys.stdin):
        name = classify(frames)
        count[name] = count.get(name, 0) + 1
        leaf = leaves.setdefault(name, {})
        leaf[frames[0]] = leaf.get(frames[0], 0) + 1
    busy = sum(v for k, v in count.items() if k != IDLE)
    if not busy:
        print(f"STAGE {drv} {path} {metric} none 0 0")
        return
    for name in ORDER:
        share = count.get(name, 0) / busy
        print(f"STAGE {drv} {path} {metric} {name.replace(' ', '_')} "
              f"{share:.4f} {share * per_msg:.0f}")
    print(f"STAGE {drv} {path} {metric} samples {busy} {per_msg:.0f}")
    for name in ORDER:
        top = sorted(leaves.get(name, {}).items(), key=lambda kv: -kv[1])[:8]
        for sym, n in top:
            print(f"SYM {drv} {path} {metric} {name.replace(' ', '_')} {sym} {n / busy:.4f}")


main()

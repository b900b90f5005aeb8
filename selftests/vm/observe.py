#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
#
# observe.sh's parsers (runs in the guest).
#   observe.py qp LQPN|ib_write_bw < `rdma -j -dd res show qp`
#       the QP (by number, or the client's RC QP by command name) as
#       "key=value" lines: the core's fields and the driver's (drv_
#       prefix dropped)
#   observe.py res cqn|mrn COMM < `rdma -j -dd res show cq|mr`
#       the first CQ or MR of the program COMM, as "key=value" lines
#   observe.py debugfs FILE QPN
#       FILE must be "[section]" and "key: value" lines only, with the
#       sections a QP dump has and qpn QPN; prints "section.key=value"
import json
import re
import sys


def entries(doc, idkey="lqpn"):
    for ent in doc if isinstance(doc, list) else [doc]:
        if isinstance(ent, dict) and idkey in ent:
            yield ent
        elif isinstance(ent, dict):
            for v in ent.values():
                if isinstance(v, list):
                    yield from entries(v, idkey)


def flat(ent, out):
    for k, v in ent.items():
        if isinstance(v, dict):
            flat(v, out)
        elif isinstance(v, list):
            for x in v:
                if isinstance(x, dict):
                    flat(x, out)
        else:
            # iproute2's JSON names the driver attributes drv_<key>
            out[k[4:] if k.startswith("drv_") else k] = v
    return out


def cmd_qp(want):
    doc = json.load(sys.stdin)
    for ent in entries(doc):
        f = flat(ent, {})
        if (want.isdigit() and str(f.get("lqpn")) == want) or \
           (not want.isdigit() and f.get("comm") == want and f.get("type") == "RC"):
            for k, v in f.items():
                print(f"{k}={v}")
            return 0
    print(f"no QP {want} in the dump", file=sys.stderr)
    return 1


def cmd_res(idkey, comm):
    doc = json.load(sys.stdin)
    for ent in entries(doc, idkey):
        f = flat(ent, {})
        if f.get("comm") == comm:
            for k, v in f.items():
                print(f"{k}={v}")
            return 0
    print(f"no {idkey} of {comm} in the dump", file=sys.stderr)
    return 1


def cmd_debugfs(path, qpn):
    need = ["qp", "attr", "req", "resp", "counters", "responder_resources",
            "pending_completions"]
    sec, seen, vals = None, set(), {}
    with open(path) as f:
        text = f.read()
    if not text:
        print("empty dump", file=sys.stderr)
        return 1
    for n, line in enumerate(text.splitlines(), 1):
        m = re.fullmatch(r"\[([a-z0-9_]+)\]", line)
        if m:
            sec = m.group(1)
            if sec in seen:
                print(f"line {n}: section {sec} twice", file=sys.stderr)
                return 1
            seen.add(sec)
            continue
        m = re.fullmatch(r"([a-z][a-z0-9_]*): (\S+)", line)
        if not m or sec is None:
            print(f"line {n}: not a key: value line in a section: {line!r}",
                  file=sys.stderr)
            return 1
        key = f"{sec}.{m.group(1)}"
        if key in vals:
            print(f"line {n}: {key} twice", file=sys.stderr)
            return 1
        vals[key] = m.group(2)
    missing = [s for s in need if s not in seen]
    if missing:
        print(f"sections missing: {missing}", file=sys.stderr)
        return 1
    if vals.get("qp.qpn") != qpn:
        print(f"qpn {vals.get('qp.qpn')} != {qpn}", file=sys.stderr)
        return 1
    for k, v in vals.items():
        print(f"{k}={v}")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "qp":
        sys.exit(cmd_qp(sys.argv[2]))
    if sys.argv[1] == "res":
        sys.exit(cmd_res(sys.argv[2], sys.argv[3]))
    sys.exit(cmd_debugfs(sys.argv[2], sys.argv[3]))

#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The documentation's own test, in KTAP (make check, make check-host):
#  - every Documentation/*.rst renders with docutils, warnings counted
#    as errors;
#  - every counter `rdma statistic show link` prints (the names the
#    X-macro lists SOFTRC_CORE_COUNTERS, SOFTRC_DEV_COUNTERS and
#    SOFTRC_PARSE_STATUSES generate) is described in counters.rst;
#  - every tracepoint the module defines (TRACE_EVENT, DEFINE_EVENT) is
#    named somewhere in Documentation/.
# RST_CHECK_DOCS=DIR checks another copy of Documentation/ (the test of
# this test uses it).
set -u
cd "$(dirname "$0")/../.." || exit 1
docs=${RST_CHECK_DOCS:-Documentation}
mod=drivers/infiniband/sw/softrc

python3 - "$docs" "$mod" <<'PY'
import glob, io, os, re, sys

docs, mod = sys.argv[1], sys.argv[2]
files = sorted(glob.glob(os.path.join(docs, "*.rst")))
n = fail = 0
out = ["TAP version 13", f"1..{len(files) + 2}"]


def result(ok, name, detail=()):
    global n, fail
    n += 1
    fail += not ok
    out.append(f"{'ok' if ok else 'not ok'} {n} {name}")
    out.extend(f"# {d}" for d in detail)


try:
    import docutils.core
except ImportError:
    print("Bail out! python3-docutils is not installed (tools/setup/deps.sh)")
    sys.exit(1)

for f in files:
    err = io.StringIO()
    try:
        docutils.core.publish_string(
            open(f, encoding="utf-8").read(), source_path=f, writer_name="html",
            settings_overrides={"halt_level": 5, "report_level": 2,
                                "warning_stream": err, "output_encoding": "unicode"})
    except Exception as e:  # a parser crash is a failure too
        err.write(str(e))
    msgs = [m for m in err.getvalue().splitlines() if m.strip()]
    result(not msgs, f"{os.path.basename(f)} renders without warnings", msgs[:20])


def xmacro(path, macro):
    """the first arguments of the X(...) lines of #define MACRO(X)"""
    text = open(os.path.join(mod, path), encoding="utf-8").read()
    m = re.search(r"#define " + macro + r"\(X\)(.*?)(?<!\\)\n(?!\s*X\()", text, re.S)
    if not m:
        return None
    return re.findall(r"\bX\(\s*([A-Za-z0-9_]+)", m.group(1))


lists = [xmacro("core/qp.h", "SOFTRC_CORE_COUNTERS"),
         xmacro("net.h", "SOFTRC_DEV_COUNTERS"),
         xmacro("core/parse.h", "SOFTRC_PARSE_STATUSES")]
if any(not l for l in lists):
    result(False, "counters.rst describes every counter", ["a counter list was not found"])
else:
    names = lists[0] + lists[1] + ["rx_drop_parse_" + s for s in lists[2]]
    ref = os.path.join(docs, "counters.rst")
    text = open(ref, encoding="utf-8").read() if os.path.exists(ref) else ""
    missing = [c for c in names if f"``{c}``" not in text]
    result(not missing, f"counters.rst describes every counter ({len(names)})",
           [f"missing: {c}" for c in missing])

events = []
for f in glob.glob(os.path.join(mod, "*.h")) + glob.glob(os.path.join(mod, "*.c")):
    t = open(f, encoding="utf-8").read()
    events += re.findall(r"^\s*TRACE_EVENT\(\s*([a-z0-9_]+)", t, re.M)
    events += re.findall(r"^\s*DEFINE_EVENT\(\s*[a-z0-9_]+\s*,\s*([a-z0-9_]+)", t, re.M)
alltext = "".join(open(f, encoding="utf-8").read() for f in files)
missing = sorted(e for e in set(events) if e not in alltext)
result(not missing, f"every tracepoint is documented ({len(set(events))})",
       [f"missing: {e}" for e in missing])
print("\n".join(out))
sys.exit(1 if fail else 0)
PY

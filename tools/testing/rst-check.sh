#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Render check and coverage check of Documentation/*.rst, in KTAP.
#
#   tools/testing/rst-check.sh [DOCDIR]
#
# 1. Every DOCDIR/*.rst (default Documentation/) renders with Debian's
#    docutils (python3-docutils, rst2html) with warnings as errors
#    (--halt=warning): one test per file.
# 2. Every counter `rdma statistic show link DEV/1` prints appears as a
#    literal (``name``) in DOCDIR/counters.rst. The names are taken from
#    the sources, not from a list kept here: the X-macro lists
#    SOFTRC_CORE_COUNTERS and SOFTRC_DEV_COUNTERS (X(name)) and
#    SOFTRC_PARSE_STATUSES (X(NAME, text)), the latter with the prefix
#    that stats.c's SOFTRC__DESC_PARSE gives them.
# 3. Every trace event defined under drivers/infiniband/sw/softrc
#    (TRACE_EVENT(name, ...), DEFINE_EVENT(class, name, ...)) is named
#    in some DOCDIR/*.rst. With no events defined this passes trivially.
# 4. Every compile probe (drivers/infiniband/sw/softrc/compat/NAME.c)
#    has its row in DOCDIR/compat.rst, as ``HAVE_NAME``.
# 5. Self-checks, so that 1 to 4 cannot pass by being blind: a broken RST
#    file must fail the render, and counters.rst without one extracted
#    counter name must fail the coverage.
#
# Runs on the host only (python3, rst2html); part of `make check-host`.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd -P)
docdir=${1:-$top/Documentation}
srcdirs=("$top/drivers/infiniband/sw/softrc" "$top/include/softrc")
tmp=$(mktemp -d "${TMPDIR:-/tmp}/softrc-rst.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
n=0
fail=0

ok() { # RESULT(0/1) NAME [DIAG...]
	local res=$1 name=$2
	shift 2
	n=$((n + 1))
	if [ "$res" = 0 ]; then
		echo "ok $n $name"
	else
		echo "not ok $n $name"
		fail=$((fail + 1))
	fi
	local d
	for d in "$@"; do
		[ -n "$d" ] && printf '# %s\n' "$d"
	done
	return 0
}

# Debian's rst2html (python3-docutils) unless RST2HTML names another
rst2html=${RST2HTML:-$(command -v /usr/bin/rst2html rst2html | head -n 1)}

# render FILE: docutils with any warning (level 2) fatal; messages on stdout
render() {
	"$rst2html" --halt=warning --report=warning --exit-status=warning \
		--no-traceback --no-datestamp "$1" 2>&1 >/dev/null
}

# The names of the counters, one a line, from the X-macro lists.
counter_names() {
	python3 - "${srcdirs[@]}" <<'EOF'
import os, re, sys

text = ""
for d in sys.argv[1:]:
    for root, _, files in os.walk(d):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                with open(os.path.join(root, f), encoding="utf-8") as fh:
                    text += fh.read() + "\n"

def body(macro):
    """The replacement list of '#define MACRO(X)', continuation lines joined."""
    m = re.search(r"^#define\s+" + macro + r"\(X\)((?:.*\\\n)*.*)$", text, re.M)
    if not m:
        sys.exit("rst-check: no #define %s(X) in the sources" % macro)
    b = m.group(1).replace("\\\n", " ")
    b = re.sub(r"/\*.*?\*/", " ", b, flags=re.S)
    return re.findall(r"\bX\(\s*(\w+)", b)

m = re.search(r'#define\s+SOFTRC__DESC_PARSE\(\s*(\w+)\s*,\s*\w+\s*\)'
              r'\s*\{\s*\.name\s*=\s*"(\w*)"\s*#\s*\1\s*\}', text)
if not m:
    sys.exit("rst-check: cannot find the parse counters' prefix "
             "(SOFTRC__DESC_PARSE in stats.c)")
prefix = m.group(2)
names = body("SOFTRC_CORE_COUNTERS") + body("SOFTRC_DEV_COUNTERS")
names += [prefix + s for s in body("SOFTRC_PARSE_STATUSES")]
if len(names) < 10:
    sys.exit("rst-check: only %d counter names found" % len(names))
print("\n".join(names))
EOF
}

# event_names DIR: the trace event names defined under DIR, one a line.
event_names() {
	python3 - "$1" <<'EOF'
import os, re, sys

for root, _, files in os.walk(sys.argv[1]):
    for f in sorted(files):
        if not f.endswith((".c", ".h")):
            continue
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            t = re.sub(r"/\*.*?\*/", " ", fh.read(), flags=re.S)
        for m in re.finditer(r"\bTRACE_EVENT(?:_CONDITION|_FN)?\(\s*(\w+)", t):
            print(m.group(1))
        for m in re.finditer(r"\bDEFINE_EVENT(?:_PRINT|_CONDITION|_FN)?\("
                             r"\s*\w+\s*,\s*(\w+)", t):
            print(m.group(1))
EOF
}

# missing_counters RSTFILE: the counter names not in RSTFILE as ``name``
missing_counters() {
	local name
	while read -r name; do
		grep -qF "\`\`$name\`\`" "$1" || echo "$name"
	done <"$tmp/counters"
}

echo "KTAP version 1"
if [ -z "$rst2html" ] || ! command -v python3 >/dev/null; then
	echo "1..1"
	echo "not ok 1 rst2html and python3 present # install python3-docutils (tools/setup/deps.sh)"
	exit 1
fi
shopt -s nullglob
files=("$docdir"/*.rst)
if ! counter_names >"$tmp/counters" 2>"$tmp/counters.err"; then
	: >"$tmp/counters"
fi
event_names "${srcdirs[0]}" >"$tmp/events" 2>"$tmp/events.err" || echo "event scan failed" >>"$tmp/events.err"
echo "1..$((${#files[@]} + 7))"

for f in "${files[@]}"; do
	out=$(render "$f")
	rc=$?
	mapfile -t diag <<<"$out"
	ok "$rc" "render $(basename "$f")" "${diag[@]}"
done

# counters
if [ ! -s "$tmp/counters" ]; then
	ok 1 "every rdma statistic counter is in counters.rst" "$(cat "$tmp/counters.err")"
elif [ ! -f "$docdir/counters.rst" ]; then
	ok 1 "every rdma statistic counter is in counters.rst" "no $docdir/counters.rst"
else
	mapfile -t miss < <(missing_counters "$docdir/counters.rst")
	ok "${#miss[@]}" "every rdma statistic counter ($(wc -l <"$tmp/counters")) is in counters.rst" \
		"${miss[@]/#/missing: }"
fi

# trace events
if [ -s "$tmp/events.err" ]; then
	ok 1 "every softrc trace event is in the documentation" "$(cat "$tmp/events.err")"
else
	miss=()
	while read -r ev; do
		[ -n "$ev" ] || continue
		cat "${files[@]}" /dev/null | grep -qw -- "$ev" || miss+=("$ev")
	done < <(sort -u "$tmp/events")
	ok "${#miss[@]}" "every softrc trace event ($(sort -u "$tmp/events" | wc -l)) is in the documentation" \
		"${miss[@]/#/missing: }"
fi

# compile probes: every compat/NAME.c is ``HAVE_NAME`` in compat.rst
# missing_probes DIR RSTFILE: the probes of DIR without their row
missing_probes() {
	local p name
	for p in "$1"/*.c; do
		[ -e "$p" ] || continue
		name=$(basename "$p" .c | tr a-z A-Z)
		grep -qF "\`\`HAVE_$name\`\`" "$2" 2>/dev/null || echo "HAVE_$name"
	done
}
probedir=${srcdirs[0]}/compat
mapfile -t miss < <(missing_probes "$probedir" "$docdir/compat.rst")
nprobes=$(find "$probedir" -maxdepth 1 -name '*.c' | wc -l)
[ "$nprobes" -gt 0 ] && [ ${#miss[@]} -eq 0 ]
ok $? "every compile probe ($nprobes) has its row in compat.rst" "${miss[@]/#/missing: }"

# self-check: a probe without a row fails the probe coverage
mkdir -p "$tmp/probes"
: >"$tmp/probes/softrc_selfcheck_probe.c"
missing_probes "$tmp/probes" "$docdir/compat.rst" | grep -qx HAVE_SOFTRC_SELFCHECK_PROBE
ok $? "self-check: a probe without its row fails the probe coverage"

# self-check: a broken file fails the render
printf 'Title\n==\n\nA `broken reference_.\n' >"$tmp/broken.rst"
render "$tmp/broken.rst" >/dev/null
[ $? -ne 0 ]
ok $? "self-check: a malformed RST file fails the render"

# self-check: counters.rst without the first counter fails the coverage
first=$(head -n 1 "$tmp/counters")
if [ -n "$first" ] && [ -f "$docdir/counters.rst" ]; then
	sed "s/\`\`$first\`\`/\`\`removed\`\`/g" "$docdir/counters.rst" >"$tmp/counters.rst"
	missing_counters "$tmp/counters.rst" | grep -qx -- "$first"
	ok $? "self-check: counters.rst without \`\`$first\`\` fails the coverage"
else
	ok 1 "self-check: counters.rst without a counter fails the coverage" "no counter names"
fi

# self-check: the event scan sees a TRACE_EVENT and a DEFINE_EVENT
mkdir -p "$tmp/ev"
printf 'TRACE_EVENT(softrc_x_one,\n\tTP_PROTO(int a));\nDEFINE_EVENT(softrc_cls,\n\tsoftrc_x_two, TP_PROTO(int a));\n/* TRACE_EVENT(not_me, */\n' \
	>"$tmp/ev/trace.h"
got=$(event_names "$tmp/ev" | sort | tr '\n' ' ')
[ "$got" = "softrc_x_one softrc_x_two " ]
ok $? "self-check: the event scan finds TRACE_EVENT and DEFINE_EVENT names" "found: $got"

[ "$fail" = 0 ]

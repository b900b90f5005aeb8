#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/testing/engine-check.sh [FILE...]: the module sees the protocol
# engine through core/engine.h alone (Documentation/softrc.rst, "The
# engine's API"). Fails, naming each line, where a module source
#  - includes a core header other than core/engine.h (the wire headers
#    of include/softrc/ are not core headers);
#  - reaches into the engine QP it embeds: a member access through it
#    (qp->core.attr, s->core.req, ...);
#  - names struct softrc_eng_qp anywhere but the one line of qp.h that
#    embeds it, so no pointer to it can be used for a member access
#    (struct softrc_eng_qp *c = &qp->core; c->req.tail).
# With no FILE, checks the git-tracked module sources; part of
# `make style`.
set -euo pipefail
cd "$(dirname "$0")/../.."
MOD=drivers/infiniband/sw/softrc
if [ $# -eq 0 ]; then
	mapfile -t files < <(git ls-files "$MOD/*.[ch]" | grep -v "^$MOD/core/")
	set -- "${files[@]}"
fi
bad=""
for f in "$@"; do
	case $f in
	*/softrc/core/*) continue ;;
	esac
	hits=$( {
		grep -HnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]*core/' "$f" |
			grep -vE '#[[:space:]]*include[[:space:]]*"core/engine\.h"' |
			sed 's/$/   <- a core header other than core\/engine.h/' || true
		grep -HnE '(->|\.)[[:space:]]*core[[:space:]]*(\.|->)[[:space:]]*[A-Za-z_]' "$f" |
			sed 's/$/   <- an engine member (use an engine call or the snapshot)/' || true
		grep -HnE '\bstruct[[:space:]]+softrc_eng_qp\b' "$f" |
			grep -vE "^$MOD/qp\.h:[0-9]+:[[:space:]]*struct softrc_eng_qp core;$" |
			sed 's/$/   <- the engine QP named outside its embedding/' || true
	} )
	[ -n "$hits" ] || continue
	bad+=${hits:+$hits$'\n'}
done
if [ -n "$bad" ]; then
	printf '%s' "$bad" | sed 's/^/engine-check: /' >&2
	exit 1
fi

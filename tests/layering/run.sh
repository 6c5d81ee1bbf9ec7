#!/usr/bin/env bash
# The layers of the source tree (docs/architecture.md): each folder may include the folders of its
# row and itself, nothing else. A folder is src/<name>/ (src/front/py is "front") or rules/.
# Every `#include "x/..."` of src/ and rules/ is checked; system headers (<...>) and the generated
# headers of build/gen are free, and so is rules/rules.def (the catalog's data, read by
# src/base/rule_catalog.h: the one file of rules/ that the ground floor reads). Prints `ok layering/...` / `FAIL layering/... <why>`.
#
# The check also runs on a made-up tree holding the three upward includes the renovation removed
# (config and out including engine/rules.h, a rule including engine/rule_ctx.h): it must find them.
set -u
cd "$(dirname "$0")/../.." || exit 2

# folder      may include (besides itself)
LAYERS='
base
cache         base
config        base
ir            base
front         base ir
rules         base ir
nb            base
engine        base cache config ir front rules nb
out           base nb
lsp           base cache config engine nb out
validate      base cache config engine ir nb out
cli           base cache config engine front ir lsp nb out validate
'

# check ROOT: prints one line per include a folder may not make; exit 1 when there is one
check() {
    local root=$1
    ( cd "$root" && find src rules -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) 2>/dev/null |
        LC_ALL=C sort | xargs grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' 2>/dev/null ) |
    awk -v layers="$LAYERS" '
        BEGIN {
            n = split(layers, rows, "\n")
            for (i = 1; i <= n; i++) {
                k = split(rows[i], w, /[ \t]+/)
                if (k < 1 || w[1] == "") continue
                known[w[1]] = 1
                ok[w[1] SUBSEP w[1]] = 1
                for (j = 2; j <= k; j++) ok[w[1] SUBSEP w[j]] = 1
            }
        }
        {
            file = $0; sub(/:.*/, "", file)
            inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
            split(file, p, "/")
            from = p[1] == "rules" ? "rules" : p[2]
            if (index(inc, "/") == 0) next          # same folder, or a generated header
            if (inc == "rules/rules.def") next      # the catalog data
            to = inc; sub(/\/.*/, "", to)
            if (to == "src") { to = inc; sub(/^src\//, "", to); sub(/\/.*/, "", to) }
            if (!(from in known)) { printf "%s: folder %s is not in the layer table\n", file, from; bad = 1; next }
            if (!(to in known)) { printf "%s: includes \"%s\", outside the layers\n", file, inc; bad = 1; next }
            if (!((from SUBSEP to) in ok)) { printf "%s: %s may not include %s (\"%s\")\n", file, from, to, inc; bad = 1 }
        }
        END { exit bad }'
}

fails=0
if out=$(check .); then
    echo "ok layering/tree ($(find src rules -type f \( -name '*.c' -o -name '*.h' \) | wc -l) files)"
else
    echo "FAIL layering/tree $(printf '%s' "$out" | head -n 20 | tr '\n' ';')"
    fails=$((fails + 1))
fi

# the check itself: today's tree with the three old upward includes put back
T=$(mktemp -d "${TMPDIR:-/tmp}/gradleak-layers.XXXXXX") || exit 2
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src/config" "$T/src/out" "$T/rules" "$T/src/engine"
printf '#include "engine/rules.h"\n' >"$T/src/config/config.h"
printf '#include "engine/rules.h"\n#include "base/base.h"\n' >"$T/src/out/out.h"
printf '#include "engine/rule_ctx.h"\n' >"$T/rules/GL999_x.c"
printf '#include "rules/rule.h"\n#include "config/config.h"\n' >"$T/src/engine/engine.c"
out=$(check "$T")
n=$(printf '%s\n' "$out" | grep -c 'may not include')
if [ "$n" = 3 ]; then
    echo "ok layering/finds-upward-includes"
else
    echo "FAIL layering/finds-upward-includes: expected the 3 upward includes, got $n: $(printf '%s' "$out" | tr '\n' ';')"
    fails=$((fails + 1))
fi
[ "$fails" -eq 0 ]

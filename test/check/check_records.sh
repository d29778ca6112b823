#!/usr/bin/env bash
# The documentation and the sources cite measured figures by their line in
# bench/RESULTS.md (`results: NAME`), never by a run id ("run" and the
# run's 3 or 4 digits) or a path under the removed folder bench/results
# (raw output lives outside the tree; RESULTS.md's raw-output column says
# where), and the NAME a citation gives is a line there.  This check fails
# on either in README.md, docs/, src/, bench/*/README.md, test/ and
# contrib/.  bench/RESULTS.md itself is not checked: its raw-output column
# names the old files by their paths in git history.
#
# A run id is "run" and 3 or 4 digits as a word of its own: "rerun" or
# "run1" do not count, nor "run" and digits inside a longer name.

set -u
top=${MGI_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$top" || { echo "FAIL: cannot enter $top"; exit 1; }

# the folder's name spelled so that this file does not match itself
folder="bench/""results"
pattern="\\brun[0-9]{3,4}\\b|$folder/"

excluded='^bench/RESULTS\.md$'

# The tracked and untracked (not ignored) files where this is a git work
# tree, so that build outputs are not read; else every file found.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
   [ "$(git rev-parse --show-toplevel 2>/dev/null)" = "$(pwd -P)" ]; then
    list() { git ls-files -co --exclude-standard -- "$@"; }
else
    list() { find "$@" -type f 2>/dev/null | sed 's|^\./||'; }
fi

files=$(list README.md docs src test contrib bench |
        grep -E '^(README\.md|docs/.*|src/.*|test/.*|contrib/.*|bench/[^/]+/README\.md)$' |
        grep -Ev "$excluded" | sort -u)

n=0
hits=""
while IFS= read -r f; do
    [ -f "$f" ] || continue
    out=$(grep -I -n -H -E "$pattern" -- "$f") || continue
    hits+="$out"$'\n'
    n=$((n + $(printf '%s\n' "$out" | wc -l)))
done <<< "$files"

if [ "$n" -gt 0 ]; then
    printf '%s' "$hits"
    echo "FAIL: $n line(s) cite a run id or a path under $folder; cite a line of bench/RESULTS.md as (results: NAME) instead"
    exit 1
fi

# The first name after each "results:" (`NAME` or NAME) is a line of
# bench/RESULTS.md (its first column); NAME itself is the placeholder the
# documents explain the form with.
names=$(sed -nE 's/^\| `([^`]+)` \|.*/\1/p' bench/RESULTS.md)
cited=0
bad=""
while IFS= read -r f; do
    [ -f "$f" ] || continue
    while IFS= read -r hit; do
        [ -n "$hit" ] || continue
        name=$(printf '%s\n' "$hit" | sed -E 's/.*results:[[:space:]]+`?//')
        [ "$name" = NAME ] && continue
        cited=$((cited + 1))
        grep -qxF -- "$name" <<< "$names" ||
            bad+="$f: results: $name"$'\n'
    done < <(grep -I -o -E 'results:[[:space:]]+`?[A-Za-z0-9][A-Za-z0-9.+_-]*' \
                  -- "$f")
done <<< "$files"
if [ -n "$bad" ]; then
    printf '%s' "$bad"
    echo "FAIL: $(printf '%s' "$bad" | grep -c .) citation(s) name no line of bench/RESULTS.md"
    exit 1
fi
echo "PASS: no run ids or paths under $folder in $(printf '%s\n' "$files" | grep -c .) files; $cited citations of bench/RESULTS.md, each a line there"

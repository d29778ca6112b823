#!/bin/sh
#
# JSON written by the report code parses, and plot.py turns it into PNGs
# (skipped, status 77, where matplotlib is missing; $PYTHON picks the
# interpreter).  plot.py is bench/workloads' ($MGI_BENCH: bench/).
#
set -eu
py=${PYTHON:-python3}
plot=${MGI_BENCH:-$(dirname "$0")/../../bench}/workloads/plot.py
dir=$(mktemp -d "${TMPDIR:-/tmp}/mgi_wl_plot.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/json"
./test_mgi_wl_report "$dir/json" >/dev/null
for f in "$dir"/json/*.json; do
    "$py" -m json.tool "$f" >/dev/null ||
        { echo "FAIL: $f is not JSON"; exit 1; }
done
echo "PASS: $(ls "$dir"/json/*.json | wc -l) JSON files parse"
"$py" "$plot" --table "$dir/json" > "$dir/table.txt"
grep -q '^exchange  -     ucx_mgi' "$dir/table.txt" &&
    grep -q '^groupby   -     single' "$dir/table.txt" &&
    grep -q 'absent: MGI channels' "$dir/table.txt" &&
    grep -q '^# libmgi settings: none (no MGI_\* set' "$dir/table.txt" ||
    { echo "FAIL: plot.py --table"; cat "$dir/table.txt"; exit 1; }
echo "PASS: plot.py --table"
if ! "$py" -c 'import matplotlib' 2>/dev/null; then
    echo "SKIP: plot.py (no matplotlib for $py)"
    exit 77
fi
"$py" "$plot" "$dir/png" "$dir/json"
for f in exchange_2gpu groupby_2gpu join_2gpu zipf_exchange_2gpu; do
    [ -s "$dir/png/$f.png" ] || { echo "FAIL: no $f.png"; exit 1; }
done
[ -n "${MGI_WL_KEEP_PNG:-}" ] && cp -r "$dir/png" "$MGI_WL_KEEP_PNG"
echo "PASS: plot.py wrote $(ls "$dir"/png/*.png | wc -l) charts"

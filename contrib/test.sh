#!/usr/bin/env bash
#
# The tests, against each UCX cuda_mgi supports here: set up (first time
# only) and build, then `make check` (CPU: the module loads and configures,
# the planner, the channels), then, where the machine has a GPU, the GPU
# suites (every byte checked): the transport's gtest, and for this tree the
# channels' (test/mgi/gpu-suite.sh, from a bundle of it).
#
#   UCX 1.13.1 (Debian's)  in this tree
#   UCX 1.22.0             in a copy of it, $MGI_DEPS/tree-VERSION, from
#                          ../shared/deps/ucx-VERSION.tar.xz (SKIPPED where
#                          that is absent)
#
# MGI_TEST_UCX_SRC replaces the second list: UCX source trees or tarballs,
# separated by spaces (contrib/setup.sh's MGI_UCX_SRC), e.g. both 1.22.0
# and 1.18.1; by default the oldest and the newest supported versions are
# checked, so that the whole run, the sanitizer stage with it, keeps within
# CI's hour on two cores.
#
# The copies' UCX and cuda_mgi are built while this tree is built and
# checked.  Their GPU programs, which make check does not run, are compiled
# to PTX for one architecture, not to machine code for two: most of the
# build's time.
#
# Beside the checks, contrib/sanitize.sh builds the planner and
# libmgi with ASan + UBSan in $MGI_DEPS/tree-asan and runs their make check
# there (against UCX 1.13.1 only).
#
# Each version's results are labelled; the last line sums them over all:
# `N passed, N failed, N skipped`.
#
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd -P)
deps=${MGI_DEPS:-$top/.deps}
jobs=${MGI_JOBS:-$(nproc)}
others=${MGI_TEST_UCX_SRC-$top/../shared/deps/ucx-1.22.0.tar.xz}
setup=$top/contrib/setup.sh
export MGI_DEPS=$deps
unset MGI_UCX_SRC MGI_TREE
mkdir -p "$deps"

say() { printf '[test] %3d:%02d %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

"$setup" deps || exit 1

# --- the copies: their UCX and cuda_mgi, in the background ------------------
labels=() trees=() notes=()
for s in $others; do
    if [ ! -e "$s" ]; then
        notes+=("SKIPPED: cuda_mgi against the UCX of $s (no such file: the \
UCX source trees live in the shared folder's deps/, beside this repository)")
        continue
    fi
    v=$(MGI_UCX_SRC=$s "$setup" version) || exit 1
    labels+=("UCX $v") trees+=("$deps/tree-$v")
done
copies_log=$deps/test-copies.log
rm -f "$deps"/test-copy-*.status
if [ ${#trees[@]} -gt 0 ]; then
    say "building the copies in the background (log: $copies_log)"
    (for s in $others; do
         [ -e "$s" ] || continue
         v=$(MGI_UCX_SRC=$s "$setup" version)
         MGI_UCX_SRC=$s MGI_TREE=1 \
         NVCCFLAGS="-O3 -gencode=arch=compute_90,code=compute_90" \
             "$setup"
         echo $? > "$deps/test-copy-$v.status"
     done) >"$copies_log" 2>&1 &
    copies_pid=$!
fi

# --- this tree: UCX 1.13.1 --------------------------------------------------
main_v=$("$setup" version)
"$setup" || { [ -n "${copies_pid:-}" ] && wait "$copies_pid"; exit 1; }
say "built against UCX $main_v"

total_pass=0 total_fail=0 total_skip=0
# make check in TREE, labelled LABEL; its results are the .trs files it
# writes
check() {  # LABEL TREE
    local label=$1 tree=$2 rc=0 results npass nfail nskip gpu_skip=0 ngpus
    local marker=$deps/check-start
    touch "$marker"
    say "== $label: make check in $tree"
    make -C "$tree" -k -j"$jobs" check || rc=$?
    if [ $rc -ne 0 ]; then
        find "$tree/test" "$tree/src" "$tree/bench" -name 'test-suite.log' \
             -newer "$marker" | while read -r log; do
            echo "==== $label: $log"; cat "$log"
        done
    fi
    ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
    if [ "${ngpus:-0}" -ge 1 ]; then
        say "== $label: GPU suite ($ngpus GPUs)"
        "$tree/test/uct/gtest_cuda_mgi" || rc=1
        # the channels' GPU suite runs from a bundle of this tree (its
        # programs in one folder, their libraries by rpath)
        if [ "$tree" = "$top" ]; then
            say "== $label: the channels' GPU suite"
            "$top/contrib/bundle.sh" "$deps/gpu-bundle" >/dev/null &&
                "$deps/gpu-bundle/run/mgi-gpu-suite.sh" "$deps/gpu-bundle/bin" \
                    "$deps/mgi-gpu-suite" || rc=1
        fi
    else
        echo "SKIPPED: $label: GPU suites (test/uct/gtest_cuda_mgi, test/mgi/gpu-suite.sh): needs a GPU, this machine has none"
        gpu_skip=1
    fi
    results=$(find "$tree/test" "$tree/src" "$tree/bench" -name '*.trs' \
                   -newer "$marker" -exec grep -h '^:test-result:' {} + || true)
    npass=$(echo "$results" | grep -c ' PASS' || true)
    nfail=$(echo "$results" | grep -cE ' (FAIL|ERROR|XPASS)' || true)
    nskip=$(( $(echo "$results" | grep -c ' SKIP' || true) + gpu_skip ))
    [ $rc -ne 0 ] && [ "$nfail" -eq 0 ] && nfail=1  # failed to build
    say "== $label: $npass passed, $nfail failed, $nskip skipped"
    total_pass=$((total_pass + npass))
    total_fail=$((total_fail + nfail))
    total_skip=$((total_skip + nskip))
}

# --- this tree's CPU parts under ASan + UBSan, beside the checks -----------
san_log=$deps/test-sanitize.log
san_tree=$deps/tree-asan
rm -rf "$san_tree/test"
say "the sanitizer stage in the background (log: $san_log)"
MGI_SANITIZE_TREE=$san_tree "$top/contrib/sanitize.sh" >"$san_log" 2>&1 &
san_pid=$!

check "UCX $main_v" "$top"

# --- the copies --------------------------------------------------------------
if [ -n "${copies_pid:-}" ]; then
    say "waiting for the copies' build"
    wait "$copies_pid"
    say "copies built"
    sed 's/^/    /' "$copies_log"
fi
for k in "${!trees[@]}"; do
    v=${labels[$k]#UCX }
    if [ "$(cat "$deps/test-copy-$v.status" 2>/dev/null)" != 0 ]; then
        echo "FAILED: ${labels[$k]}: set-up or build (log: $copies_log)"
        total_fail=$((total_fail + 1))
        continue
    fi
    check "${labels[$k]}" "${trees[$k]}"
done

# the sanitizer stage ran beside both checks: its result last
say "waiting for the sanitizer stage"
wait "$san_pid"
san_rc=$?
grep '^sanitize:' "$san_log"
results=$(find "$san_tree/test" -name '*.trs' \
               -exec grep -h '^:test-result:' {} + 2>/dev/null || true)
npass=$(echo "$results" | grep -c ' PASS' || true)
nfail=$(echo "$results" | grep -cE ' (FAIL|ERROR|XPASS)' || true)
nskip=$(echo "$results" | grep -c ' SKIP' || true)
if [ $san_rc -ne 0 ]; then
    [ "$nfail" -eq 0 ] && nfail=1
    find "$san_tree/test" -name 'test-suite.log' | while read -r log; do
        echo "==== UCX $main_v ASan + UBSan: $log"; cat "$log"
    done
fi
say "== UCX $main_v ASan + UBSan: $npass passed, $nfail failed, $nskip skipped"
total_pass=$((total_pass + npass))
total_fail=$((total_fail + nfail))
total_skip=$((total_skip + nskip))

for n in "${notes[@]}"; do
    echo "$n"
    total_skip=$((total_skip + 1))
done
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]

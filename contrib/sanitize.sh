#!/usr/bin/env bash
#
# make check of the CPU parts (the planner, libmgi, their tests) built with
# AddressSanitizer and UndefinedBehaviorSanitizer (LeakSanitizer included),
# against the UCX of this tree, in a copy of the tracked sources of its own
# ($MGI_DEPS/tree-asan), so that it runs beside this tree's build and check.
# The transport module itself is loaded by UCX, which is not built with
# ASan: it is not part of this stage (its range checks are, through
# test_cuda_mgi_config's copy of them; see test/uct/Makefile.am).
#
#   contrib/sanitize.sh          after contrib/setup.sh built this tree
#
# Any sanitizer report fails the test that made it (halt_on_error);
# contrib/lsan.supp lists the third-party leaks left out, each with why.
# Exit: 0 when every test passed.
#
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd -P)
deps=${MGI_DEPS:-$top/.deps}
tree=${MGI_SANITIZE_TREE:-$deps/tree-asan}
jobs=${MGI_JOBS:-$(nproc)}
log=$tree-build.log
start=$SECONDS

[ -x "$top/config.status" ] || { echo "sanitize: configure $top first \
(contrib/setup.sh)"; exit 1; }
git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
    { echo "sanitize: $top is not a git checkout (the copy is what git lists)"; exit 1; }
mkdir -p "$tree"
(cd "$top" && git ls-files -z --cached --others --exclude-standard |
     while IFS= read -r -d '' f; do
         [ -e "$f" ] && printf '%s\0' "$f"
     done) | rsync -a --from0 --files-from=- "$top/" "$tree/"
ln -sfn "$deps" "$tree/.deps"

san="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
-fno-sanitize-recover=undefined"
eval "args=($("$top/config.status" --config))"
echo "sanitize: building the planner and libmgi with ASan + UBSan in $tree \
(log: $log)"
# the sorter's GPU code, which make check does not run, as PTX of one
# architecture: most of the build's time otherwise
(cd "$tree" && autoreconf -fi && ./configure "${args[@]}" \
     CFLAGS="$san" CXXFLAGS="$san" LDFLAGS="-fsanitize=address,undefined" \
     NVCCFLAGS="-O3 -gencode=arch=compute_90,code=compute_90" &&
 make -j"$jobs" -C src/uct/cuda_mgi/gig && make -j"$jobs" -C src/tools/mgi_topo &&
 make -j"$jobs" -C src/ucp_ext) >"$log" 2>&1 ||
    { tail -30 "$log"; echo "sanitize: build failed (log: $log)"; exit 1; }
echo "sanitize: built in $((SECONDS - start)) s"

# UCX's memory hooks patch the calls ASan intercepts: off, as UCX's own
# sanitizer builds run
export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none
# fast_unwind_on_malloc=0: whole stacks, so that a leak in a library
# unloaded before the report still matches its suppression by the frames
# below it
# allocator_may_return_null=1: tests that ask for more memory than there
# is (ring_budget) check that the refusal is reported, which ASan would
# turn into an abort
export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:fast_unwind_on_malloc=0:allocator_may_return_null=1
export LSAN_OPTIONS=suppressions=$top/contrib/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
rc=0
make -C "$tree/test/gig" -k -j"$jobs" check || rc=1
make -C "$tree/test/mgi" -k -j"$jobs" check || rc=1
echo "sanitize: make check under ASan + UBSan: exit $rc after $((SECONDS - start)) s"
exit $rc

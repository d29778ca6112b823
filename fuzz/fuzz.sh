#!/usr/bin/env bash
#
# libFuzzer targets, built with clang under ASan and UBSan:
#   fuzz_topofile   topology file parse -> write -> parse -> write -> plan
#   fuzz_bootstrap  the TCP bootstrap's hello, reply, host:port and the
#                   worker address lengths
#
#   fuzz.sh check SECONDS   each target SECONDS on a copy of its corpus
#                           (make check; SKIP where clang has no libFuzzer)
#   fuzz.sh run SECONDS     each target SECONDS (make fuzz); new inputs
#                           collect in BUILD/corpus-TARGET: merge them into
#                           fuzz/corpus with the command it prints
#
# Environment: UCX_PREFIX (its include/ and lib/), MGI_NVML_CPPFLAGS (the
# tree's NVML_CPPFLAGS), MGI_FUZZ_BUILD (default $MGI_DEPS/fuzz or
# ./fuzz-build), CLANG (default clang).
#
set -uo pipefail
mode=${1:-check} secs=${2:-20}
top=$(cd "$(dirname "$0")/.." && pwd -P)
build=${MGI_FUZZ_BUILD:-${MGI_DEPS:-$top}/fuzz-build}
clang=${CLANG:-clang}
: "${UCX_PREFIX:?UCX_PREFIX: the UCX install to build against}"

if ! command -v "$clang" >/dev/null ||
   ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
     "$clang" -x c -fsanitize=fuzzer - -o /dev/null 2>/dev/null; then
    echo "SKIP: no clang with libFuzzer ($clang; Debian's clang package, \
contrib/setup.sh installs it)"
    exit 77
fi

mkdir -p "$build"
gig=$top/src/uct/cuda_mgi/gig
flags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -fno-omit-frame-pointer -I$gig -I$top/src/ucp_ext
       -I$UCX_PREFIX/include ${MGI_NVML_CPPFLAGS:-}"
libs="-L$UCX_PREFIX/lib -Wl,-rpath,$UCX_PREFIX/lib -lucs -lhwloc -ldl -lm"
echo "building the fuzz targets in $build"
# shellcheck disable=SC2086
"$clang" $flags -std=gnu11 "$top/fuzz/fuzz_topofile.c" "$gig"/gig_*.c \
    $libs -o "$build/fuzz_topofile" || exit 1
# shellcheck disable=SC2086
"$clang" $flags -std=gnu11 "$top/fuzz/fuzz_bootstrap.c" \
    "$top/src/ucp_ext/mgi_bootstrap.c" $libs -o "$build/fuzz_bootstrap" ||
    exit 1

# UCX's memory hooks are not used by these targets and only slow them
export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none UCX_LOG_LEVEL=fatal
rc=0
for t in topofile bootstrap; do
    work=$build/corpus-$t
    if [ "$mode" = check ]; then
        rm -rf "$work"
    fi
    mkdir -p "$work"
    cp -n "$top/fuzz/corpus/$t"/* "$work"/ 2>/dev/null
    "$build/fuzz_$t" -max_total_time="$secs" -max_len=65536 \
        -print_final_stats=1 "$work" >"$build/fuzz_$t.log" 2>&1
    r=$?
    runs=$(grep -o 'Done [0-9]* runs' "$build/fuzz_$t.log" | tail -1)
    if [ $r -ne 0 ]; then
        echo "FAIL: fuzz_$t (exit $r): log $build/fuzz_$t.log"
        tail -40 "$build/fuzz_$t.log"
        rc=1
    else
        echo "PASS: fuzz_$t: ${runs:-? runs} in $secs s, no finding"
    fi
done
if [ "$mode" = run ]; then
    echo "to keep new inputs: $build/fuzz_topofile -merge=1" \
         "$top/fuzz/corpus/topofile $build/corpus-topofile (and bootstrap)"
fi
exit $rc

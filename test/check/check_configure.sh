#!/usr/bin/env bash
# ./configure refuses what cannot work, each time with a message that says
# what is wrong: no UCX, a prefix that is not UCX, no UCX source tree, a
# source tree of another UCX version or without CUDA, no CUDA toolkit.
. "$(dirname "$0")/common.sh"
top=${MGI_TOP:?MGI_TOP is not set (run through make check)}
ucx_src=${UCX_SRC:?UCX_SRC is not set (run through make check)}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$top" && git ls-files -z 2>/dev/null | xargs -0 tar cf - 2>/dev/null) |
    tar xf - -C "$tmp" 2>/dev/null
if [ ! -f "$tmp/configure.ac" ]; then
    echo "SKIP: $top is not a git checkout; cannot copy the sources"
    exit 77
fi
cd "$tmp" && mkdir -p config/m4 config/aux &&
    autoreconf -fi >/dev/null 2>&1 || { fail "autoreconf failed"; finish; exit 1; }

refused() {  # EXPECTED-TEXT ARGS...
    local expect=$1 out; shift
    out=$(./configure "$@" 2>&1)
    if [ $? -ne 0 ] && echo "$out" | grep -q "error: .*$expect"; then
        pass "configure $* refused: $(echo "$out" | grep -o 'error: .*' | head -1)"
    else
        fail "configure $*: expected an error saying '$expect'"
    fi
}

# fake UCX source trees: another version, and one without CUDA
mkdir -p fake-other/src/uct/base fake-nocuda/src/uct/base
touch fake-other/src/uct/base/uct_iface.h fake-nocuda/src/uct/base/uct_iface.h
printf '#define VERSION "1.99"\n#define HAVE_CUDA 1\n' > fake-other/config.h
sed -n 's/^\(#define VERSION .*\)$/\1/p' "$ucx_src/config.h" > fake-nocuda/config.h

cuda=${CUDA_HOME:-/usr/local/cuda}
refused "--with-ucx=PREFIX is required"
refused "no include/uct/api/uct.h there" --with-ucx=/nonexistent
refused "--with-ucx-src=DIR is required" --with-ucx="$UCX_PREFIX"
refused "no src/uct/base/uct_iface.h" --with-ucx="$UCX_PREFIX" --with-ucx-src=/tmp
refused "UCX version mismatch" --with-ucx="$UCX_PREFIX" \
        --with-ucx-src="$PWD/fake-other" --with-cuda="$cuda"
refused "has no CUDA support" --with-ucx="$UCX_PREFIX" \
        --with-ucx-src="$PWD/fake-nocuda" --with-cuda="$cuda"
refused "cuda.h/cuda_runtime.h not found" --with-ucx="$UCX_PREFIX" \
        --with-ucx-src="$ucx_src" --with-cuda=/nonexistent
refused "no include/nvml.h there" --with-ucx="$UCX_PREFIX" \
        --with-ucx-src="$ucx_src" --with-cuda="$cuda" --with-nvml=/tmp

finish

#!/usr/bin/env bash
# ./configure refuses what cannot work, each time with a message that says
# what is wrong: no UCX, a prefix that is not UCX, no UCX source tree, a
# source tree of another UCX version (a made-up one, and a real one where
# contrib/test.sh has built two), a source tree configured with other
# layout options, a UCX without CUDA, no CUDA toolkit, no nvml.h.
. "$(dirname "$0")/common.sh"
top=${MGI_TOP:?MGI_TOP is not set (run through make check)}
ucx_src=${UCX_SRC:?UCX_SRC is not set (run through make check)}

# The tree's configure (make regenerates it from configure.ac) runs in a
# folder of its own, so that this tree's configuration stays as it is
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ ! -x "$top/configure" ] || [ ! -d "$top/config/aux" ]; then
    echo "SKIP: no configure or config/aux in $top (run autoreconf -fi there)"
    exit 77
fi
cp "$top/configure" "$tmp/" && cp -r "$top/config" "$tmp/" && cd "$tmp" ||
    { fail "could not copy configure to $tmp"; finish; exit 1; }

refused() {  # EXPECTED-TEXT ARGS...
    local expect=$1 out err; shift
    out=$(./configure "$@" 2>&1)
    if [ $? -ne 0 ]; then
        # the message, its lines joined
        err=$(echo "$out" | sed -n '/error: /,$p' | tr '\n' ' ' |
              sed 's/  */ /g; s/^.*error: /error: /')
        if echo "$err" | grep -q -- "$expect"; then
            pass "configure $* refused: $(echo "$err" | cut -c1-300)"
            return
        fi
    fi
    fail "configure $*: expected an error saying '$expect'; got: $(echo "$out" | tail -3)"
}

ucx_version() {  # UCX_INFO
    "$1" -v 2>/dev/null | sed -n -e 's/^# Version //p' \
        -e 's/^# Library version: //p' | head -1
}
inst_version=$(ucx_version "$UCX_INFO")

# fake UCX source trees: another version, one configured with another
# ENABLE_STATS, one without CUDA
for t in fake-other fake-layout fake-nocuda; do
    mkdir -p "$t" && ln -s "$ucx_src/src" "$t/src"
    echo "VERSION = $inst_version" > "$t/Makefile"
done
echo "VERSION = 1.99.0" > fake-other/Makefile
cp "$ucx_src/config.h" fake-other/config.h
if grep -q '^#define ENABLE_STATS 1' "$ucx_src/config.h"; then
    grep -v '^#define ENABLE_STATS ' "$ucx_src/config.h" > fake-layout/config.h
    stats="ENABLE_STATS (installed: 1, tree: unset)"
else
    { cat "$ucx_src/config.h"; echo '#define ENABLE_STATS 1'; } > fake-layout/config.h
    stats="ENABLE_STATS (installed: unset, tree: 1)"
fi
grep -v '^#define HAVE_CUDA ' "$ucx_src/config.h" > fake-nocuda/config.h

# a fake UCX install without CUDA: the real one, but its ucx_info -b (the
# build's config.h) without HAVE_CUDA
mkdir -p inst-nocuda/bin inst-nocuda/lib
ln -s "$UCX_PREFIX/include" inst-nocuda/include
ln -s "$UCX_PREFIX/lib/libucs.so" inst-nocuda/lib/libucs.so
cat > inst-nocuda/bin/ucx_info <<EOF
#!/bin/sh
"$UCX_INFO" "\$@" | grep -v '^#define HAVE_CUDA '
EOF
chmod +x inst-nocuda/bin/ucx_info

cuda=${CUDA_HOME:-/usr/local/cuda}
refused "--with-ucx=PREFIX is required"
refused "no include/uct/api/uct.h there" --with-ucx=/nonexistent
refused "--with-ucx-src=DIR is required" --with-ucx="$UCX_PREFIX"
refused "no src/uct/base/uct_iface.h" --with-ucx="$UCX_PREFIX" --with-ucx-src=/tmp
refused "UCX version mismatch: .* is 1.99.0, .* is $inst_version" \
        --with-ucx="$UCX_PREFIX" --with-ucx-src="$PWD/fake-other" --with-cuda="$cuda"

# a real source tree of another version, where one is built beside this
# one ($MGI_DEPS/src/ucx-VERSION, configured)
other=
for mk in "$MGI_DEPS"/src/ucx-*/Makefile; do
    [ -f "$mk" ] || continue
    v=$(sed -n 's/^VERSION = //p' "$mk")
    if [ -n "$v" ] && [ "$v" != "$inst_version" ] &&
       [ -f "$(dirname "$mk")/config.h" ]; then
        other=$(dirname "$mk") other_v=$v
        break
    fi
done
if [ -n "$other" ]; then
    refused "UCX version mismatch: .* is $other_v, .* is $inst_version" \
            --with-ucx="$UCX_PREFIX" --with-ucx-src="$other" --with-cuda="$cuda"
else
    skip "the UCX source tree of another version than $inst_version: none" \
         "configured in $MGI_DEPS/src (contrib/test.sh builds UCX 1.13.1 and 1.22.0)"
fi

refused "configured differently from the installed UCX: $stats" \
        --with-ucx="$UCX_PREFIX" --with-ucx-src="$PWD/fake-layout" --with-cuda="$cuda"
refused "configured differently from the installed UCX: HAVE_CUDA (installed: 1, tree: unset)" \
        --with-ucx="$UCX_PREFIX" --with-ucx-src="$PWD/fake-nocuda" --with-cuda="$cuda"
refused "has no CUDA support" --with-ucx="$PWD/inst-nocuda" \
        --with-ucx-src="$PWD/fake-nocuda" --with-cuda="$cuda"
refused "cuda.h/cuda_runtime.h not found" --with-ucx="$UCX_PREFIX" \
        --with-ucx-src="$ucx_src" --with-cuda=/nonexistent
refused "no include/nvml.h there" --with-ucx="$UCX_PREFIX" \
        --with-ucx-src="$ucx_src" --with-cuda="$cuda" --with-nvml=/tmp

finish

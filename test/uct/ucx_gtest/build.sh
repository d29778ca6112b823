#!/usr/bin/env bash
#
# Build ucx_gtest_cuda_mgi: UCX's generic UCT tests (test/gtest of a UCX
# source tree) instantiated for cuda_mgi by the inst_*.cc files here, with
# cuda_ipc as the reference and self/posix as host-memory controls.
#
# Only the harness UCX's tests need is compiled: its gtest copy, common/
# (main, test base, helpers, mem_buffer, watchdog), uct_test.cc and
# uct_p2p_test.cc, plus the UCX test sources the inst_*.cc files include.
#
# Usage: test/uct/ucx_gtest/build.sh [-o OUTDIR] [-p PREFIX] [-b BUNDLE] UCX_TREE
#
#   UCX_TREE   a configured and built UCX tree (1.22), with CUDA
#   -p PREFIX  link against PREFIX/lib, that tree's `make install`, instead
#              of the tree's own libraries (the tests use UCX internals: the
#              libraries must come from the build of UCX_TREE)
#   -o OUTDIR  objects and binary (default: test/uct/ucx_gtest/build)
#   -b BUNDLE  also install the stripped binary into a bundle made by
#              contrib/bundle.sh (BUNDLE/bin, $ORIGIN rpaths) and run.sh
#              as BUNDLE/run/ucx-gtest.sh; the bundle must carry the same
#              UCX build (its lib/libucs.so*)
#
# Environment: CUDA_HOME (/usr/local/cuda), CXX (the tree's), JOBS (2),
# OPT (-O2).
#
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=$here/build
prefix=
bundle=

die() { printf '[ucx_gtest] error: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '/^# Usage/,/^# OPT/p' "$0" | sed 's/^# \{0,1\}//'; exit "$1"; }

while getopts "o:p:b:h" opt; do
    case $opt in
    o) out=$OPTARG ;;
    p) prefix=$OPTARG ;;
    b) bundle=$OPTARG ;;
    h) usage 0 ;;
    *) usage 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || usage 2

tree=$(cd "$1" && pwd) || die "no such directory: $1"
gt=$tree/test/gtest
[ -f "$tree/config.h" ] || die "$tree is not a configured UCX tree (no config.h)"
[ -f "$gt/uct/uct_test.cc" ] || die "$tree has no test/gtest/uct sources"
grep -q '^#define HAVE_CUDA 1' "$tree/config.h" ||
    die "$tree was configured without CUDA"
version=$(sed -n 's/^#define VERSION "\(.*\)"/\1/p' "$tree/config.h")
case $version in
1.22*) ;;
*) echo "[ucx_gtest] warning: UCX $version; these files follow 1.22" >&2 ;;
esac

if [ -n "$prefix" ]; then
    prefix=$(cd "$prefix" && pwd) || die "no such directory: $prefix"
    [ -e "$prefix/lib/libucs.so" ] || die "no libucs.so in $prefix/lib"
    libdirs=$prefix/lib
else
    for d in ucs uct ucp ucm; do
        [ -e "$tree/src/$d/.libs/lib$d.so" ] ||
            die "$tree/src/$d is not built (no .libs/lib$d.so)"
    done
    libdirs="$tree/src/ucs/.libs $tree/src/uct/.libs $tree/src/ucp/.libs"
    libdirs+=" $tree/src/ucm/.libs"
fi

# The tree's own compiler and CUDA/NVML flags, as configure found them
mkvar() { sed -n "s/^$1 = //p" "$tree/Makefile" | head -1; }
cuda=${CUDA_HOME:-/usr/local/cuda}
cxx=${CXX:-$(mkvar CXX)}
cxx=${cxx:-g++}
cppflags="$(mkvar CPPFLAGS) $(mkvar CUDA_CPPFLAGS) -I$cuda/include"
ldflags="$(mkvar LDFLAGS) $(mkvar CUDA_LDFLAGS)"
ldflags+=" -L$cuda/lib64 -L$cuda/lib64/stubs"

mkdir -p "$out/obj"
out=$(cd "$out" && pwd)

# Sources: objects are named after their path below the UCX test tree or
# this folder
ucx_srcs="
    common/googletest/gtest.cc
    common/googletest/gtest-death-test.cc
    common/googletest/gtest-filepath.cc
    common/googletest/gtest-port.cc
    common/googletest/gtest-printers.cc
    common/googletest/gtest-test-part.cc
    common/googletest/gtest-typed-test.cc
    common/main.cc
    common/test.cc
    common/test_helpers.cc
    common/mem_buffer.cc
    common/test_watchdog.cc
    uct/uct_test.cc
    uct/uct_p2p_test.cc"
our_srcs=$(cd "$here" && ls inst_*.cc)

# A generated makefile: parallel, incremental (-MMD), one rule per object
mk=$out/build.mk
{
    echo "CXX      = $cxx"
    echo "CPPFLAGS = -DHAVE_CONFIG_H -DCPU_FLAGS=\"\" -I$tree -I$tree/src" \
         "-I$tree/test -I$gt -I$here $cppflags"
    # UCX's gtest flags, less -Werror; no debug info: a small binary
    echo "CXXFLAGS = -std=c++11 ${OPT:--O2} -g0 -funwind-tables" \
         "-fno-tree-vectorize -Wall -Wno-noexcept-type" \
         "-Wno-missing-field-initializers -Wno-unused-parameter" \
         "-Wno-unused-label -Wno-sign-compare -Wno-multichar" \
         "-Wno-deprecated-declarations"
    echo "LDFLAGS  = $ldflags $(for d in $libdirs; do printf -- '-L%s ' "$d"; done)" \
         "-Wl,--disable-new-dtags" \
         "$(for d in $libdirs; do printf -- '-Wl,-rpath,%s ' "$d"; done)"
    echo "LIBS     = -Wl,--as-needed -lucp -luct -lucs -lucm -lcudart" \
         "-lcuda -lnvidia-ml -lpthread -ldl -lrt"
    objs=
    for s in $ucx_srcs; do
        o=obj/ucx_$(echo "${s%.cc}" | tr '/' '_').o
        objs+=" $o"
        printf '%s: %s\n\t$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@\n' \
               "$o" "$gt/$s"
    done
    for s in $our_srcs; do
        o=obj/${s%.cc}.o
        objs+=" $o"
        printf '%s: %s\n\t$(CXX) $(CPPFLAGS) $(CXXFLAGS) -MMD -MP -c $< -o $@\n' \
               "$o" "$here/$s"
    done
    echo "ucx_gtest_cuda_mgi: $objs"
    printf '\t$(CXX) -o $@ $^ $(LDFLAGS) $(LIBS)\n'
    echo "-include \$(wildcard obj/*.d)"
} > "$mk.tmp"
mv "$mk.tmp" "$mk"

start=$(date +%s)
make -C "$out" -f "$mk" -j"${JOBS:-2}" ucx_gtest_cuda_mgi
strip -o "$out/ucx_gtest_cuda_mgi.stripped" "$out/ucx_gtest_cuda_mgi"
echo "[ucx_gtest] $out/ucx_gtest_cuda_mgi in $(( $(date +%s) - start )) s;" \
     "stripped: $(stat -c %s "$out/ucx_gtest_cuda_mgi.stripped") bytes" \
     "(UCX $version, libraries from ${prefix:-the tree})"

[ -n "$bundle" ] || exit 0

# Into a bundle: the binary finds UCX and the carried libraries beside it
command -v patchelf >/dev/null || die "patchelf not found (apt-get install patchelf)"
[ -d "$bundle/bin" ] && [ -d "$bundle/lib/ucx" ] ||
    die "$bundle is not a bundle (bin/, lib/ucx/): see contrib/bundle.sh"
bundle=$(cd "$bundle" && pwd)
bundle_ucs=$(readlink -f "$bundle/lib/libucs.so.0") || die "no libucs in $bundle/lib"
grep -aq "$version" "$bundle_ucs" ||
    echo "[ucx_gtest] warning: $bundle's libucs does not look like UCX $version" >&2
install -m 755 "$out/ucx_gtest_cuda_mgi.stripped" "$bundle/bin/ucx_gtest_cuda_mgi"
patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN/../lib/ucx' \
    "$bundle/bin/ucx_gtest_cuda_mgi"
install -m 755 "$here/run.sh" "$bundle/run/ucx-gtest.sh"
# The CUDA runtime, if the bundle does not carry it yet (the driver's
# libcuda and libnvidia-ml come from the GPU node)
for lib in $(LD_LIBRARY_PATH="$bundle/lib:$cuda/lib64" \
                 ldd "$bundle/bin/ucx_gtest_cuda_mgi" |
             awk '$1 ~ /^libcudart\./ && $3 ~ /^\// {print $3}'); do
    [ -e "$bundle/lib/$(basename "$lib")" ] || cp -L "$lib" "$bundle/lib/"
done
echo "[ucx_gtest] installed into $bundle: bin/ucx_gtest_cuda_mgi, run/ucx-gtest.sh"

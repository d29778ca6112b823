#!/usr/bin/env bash
#
# Make relocatable folders with UCX, cuda_mgi, the tools, the GPU tests and
# the few shared libraries a bare GPU node lacks, for a machine that has an
# NVIDIA driver and nothing else (no package registry, no UCX):
#
#   OUTDIR          this tree's build and its UCX ($MGI_DEPS/ucx), all of it:
#     bin           ucx_info, ucx_perftest, mgi_topo, mgi_info,
#                   gtest_cuda_mgi, the channels' GPU tests, mgi_workloads
#     include       libmgi's public headers (include/mgi: mgi.h,
#                   mgi_device.cuh, ...) and UCX's (ucp, uct, ucs), which
#                   mgi.h includes: a program is compiled against them
#                   (src/ucp_ext/README.md, "Building a program")
#     lib           UCX's libraries, libmgi and the carried libraries
#     lib/ucx       UCX's modules, libuct_cuda_mgi.so among them
#     run           the scripts that run the GPU suite and the benchmarks
#     openmpi       Debian's Open MPI, relocatable (contrib/mpi-bundle.sh),
#                   with bin/mgi_mpi_test and run/mpi-gpu.sh
#   OUTDIR-VERSION  for each copy built against another UCX
#                   ($MGI_DEPS/tree-VERSION, made by MGI_TREE=1
#                   contrib/setup.sh): that UCX, cuda_mgi, ucx_info,
#                   ucx_perftest and gtest_cuda_mgi only, and
#                   run/gpu-suite.sh
#
# Every binary finds its libraries through $ORIGIN rpaths; debug
# information is stripped.  The driver's own libraries (libcuda,
# libnvidia-ml) and the C/C++ runtime are not carried.
#
# Usage: contrib/bundle.sh [OUTDIR]      (after contrib/setup.sh; OUTDIR
#                                         defaults to bundle in this tree)
#
# For the GPU machines: UCX 1.22.0 in this tree, UCX 1.13.1 in a copy:
#   MGI_UCX_SRC=../shared/deps/ucx-1.22.0.tar.xz contrib/setup.sh
#   MGI_TREE=1 contrib/setup.sh && contrib/bundle.sh
#
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd -P)
deps=${MGI_DEPS:-$top/.deps}
cuda=${CUDA_HOME:-/usr/local/cuda}
out=${1:-$top/bundle}

die() { printf '[bundle] error: %s\n' "$*" >&2; exit 1; }
command -v patchelf >/dev/null || die "patchelf not found (apt-get install patchelf)"

# The UCX a configured tree was built against, and its version
tree_ucx() { sed -n 's/^UCX_PREFIX = //p' "$1/Makefile" 2>/dev/null; }
ucx_version() {
    "$1/bin/ucx_info" -v | sed -n -e 's/^# Version //p' \
        -e 's/^# Library version: //p' | head -1
}

# Carry what the binaries need beyond the driver and the C/C++ runtime,
# set $ORIGIN rpaths, strip debug information
finish_bundle() {  # OUT
    local out=$1 lib name f
    local keep_out='^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux-x86-64|linux-vdso|libcuda|libnvidia-ml)\.'
    for lib in $(for f in $(find "$out/bin" "$out/lib" -type f); do
                     LD_LIBRARY_PATH="$out/lib:$out/lib/ucx:$cuda/lib64" ldd "$f" \
                         2>/dev/null | awk '$3 ~ /^\// {print $3}'
                 done | sort -u); do
        name=$(basename "$lib")
        if ! [[ $name =~ $keep_out ]] && [ ! -e "$out/lib/$name" ] &&
           [ ! -e "$out/lib/ucx/$name" ]; then
            cp -L "$lib" "$out/lib/$name"
        fi
    done
    # (strip before patchelf: strip can spoil a file patchelf grew)
    for f in $(find "$out/bin" "$out/lib" -type f); do
        file -b "$f" | grep -q ELF && strip --strip-debug "$f"
    done
    for f in $(find "$out/bin" -type f); do
        file -b "$f" | grep -q ELF || continue
        patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN/../lib/ucx' "$f"
    done
    for f in $(find "$out/lib" -maxdepth 1 -type f -name '*.so*'); do
        patchelf --set-rpath '$ORIGIN:$ORIGIN/ucx' "$f"
    done
    for f in $(find "$out/lib/ucx" -type f -name '*.so*'); do
        patchelf --set-rpath '$ORIGIN:$ORIGIN/..' "$f"
    done
    find "$out" -name '*.la' -delete
    echo "[bundle] $out: UCX $(ucx_version "$out"), $(du -sb "$out" |
        awk '{printf "%.1f MiB", $1 / 1048576}'), $(ls "$out/lib" | wc -l) libraries"
}

# UCX's libraries, modules and tools, into OUT
copy_ucx() {  # UCX OUT
    local ucx=$1 out=$2
    [ -x "$ucx/bin/ucx_info" ] || die "no UCX in $ucx: run contrib/setup.sh first"
    [ -e "$ucx/lib/ucx/libuct_cuda_mgi.so.0" ] ||
        die "cuda_mgi is not installed in $ucx: run contrib/setup.sh first"
    rm -rf "$out"
    mkdir -p "$out/bin" "$out/lib/ucx" "$out/run" "$out/share"
    cp -a "$ucx/lib/"libuc[mpst]*.so* "$out/lib/"
    cp -a "$ucx/lib/ucx/"*.so* "$out/lib/ucx/"
    cp -a "$ucx/share/ucx" "$out/share/" 2>/dev/null || true
    cp "$ucx/bin/ucx_info" "$ucx/bin/ucx_perftest" "$out/bin/"
}

# (libtool leaves a wrapper script beside a program it links against a
# library of the tree: take the real binary from .libs)
copy_program() {  # OUT FILE...
    local out=$1 f; shift
    for f in "$@"; do
        if [ -f "$f" ] && [ -x "$f" ] && file -b "$f" | grep -q ELF; then
            cp "$f" "$out/bin/"
            return 0
        fi
    done
    return 1
}

# --- this tree: everything ---------------------------------------------------
[ -f "$top/Makefile" ] || die "$top is not configured: run contrib/setup.sh first"
ucx=$(tree_ucx "$top")
copy_ucx "$ucx" "$out"
cp -a "$ucx/lib/"libmgi.so* "$out/lib/"
cp "$ucx/bin/mgi_topo" "$out/bin/"
copy_program "$out" "$top/src/ucp_ext/.libs/mgi_info" \
                    "$top/src/ucp_ext/mgi_info" ||
    die "no src/ucp_ext/mgi_info: build this tree (make) first"
# the headers a program compiles against: libmgi's from this tree (the
# ones its libmgi was built from), UCX's public ones
mkdir -p "$out/include/mgi"
cp "$top/src/ucp_ext/mgi/"*.h "$top/src/ucp_ext/mgi/"*.cuh "$out/include/mgi/"
for d in ucp uct ucs ucm; do
    if [ -d "$ucx/include/$d" ]; then
        cp -a "$ucx/include/$d" "$out/include/"
    fi
done
copy_program "$out" "$top/test/uct/.libs/gtest_cuda_mgi" \
                    "$top/test/uct/gtest_cuda_mgi" ||
    die "no test/uct/gtest_cuda_mgi: build this tree (make) first"
copy_program "$out" "$top/bench/workloads/mgi_workloads" || true
copy_program "$out" "$top/bench/workloads/mgi_mgg" || true
copy_program "$out" "$top/bench/workloads/mgi_proact" || true
copy_program "$out" "$top/test/mgi/gpu_ring_test" || true
copy_program "$out" "$top/examples/.libs/shuffle" "$top/examples/shuffle" ||
    true
copy_program "$out" "$top/test/mgi/.libs/mgi_gpu_test" || true
copy_program "$out" "$top/test/mgi/.libs/mgi_launch" \
                    "$top/test/mgi/mgi_launch" || true
cp "$top/test/mgi/gpu-suite.sh" "$out/run/mgi-gpu-suite.sh"
mkdir -p "$out/run/topo"
cp "$top/test/mgi/topo/"*.topo "$out/run/topo/"
cp "$top/bench/workloads/run.sh" "$out/run/workloads.sh"
cp "$top/bench/workloads/plot.py" "$top/bench/workloads/plot_regions.py" "$out/run/"
cp "$top/contrib/gpu-suite.sh" "$top/contrib/gpu-sanitize.sh" \
   "$top/bench/perftest_compare.sh" "$top/bench/multipath_sweep.sh" \
   "$out/run/"
finish_bundle "$out"
# Open MPI and the MPI test, where this tree built it (configure found
# Debian's Open MPI): the GPU suite runs it beside cuda_ipc
if [ -x "$top/test/uct/mpi/mgi_mpi_test" ]; then
    "$top/contrib/mpi-bundle.sh" "$out" ||
        die "contrib/mpi-bundle.sh $out failed"
else
    echo "bundle: no test/uct/mpi/mgi_mpi_test (configure found no Open MPI):" \
         "the bundle has no MPI test" >&2
fi

# --- copies built against another UCX: the transport and its tests ----------
main_v=$(ucx_version "$ucx")
for tree in "$deps"/tree-*; do
    [ -f "$tree/Makefile" ] || continue
    tucx=$(tree_ucx "$tree")
    # (a copy built for a UCX installed by other means, the wheel's, is not
    # bundled)
    case $tucx in "$(cd "$deps" && pwd -P)"/ucx-*) ;; *) continue ;; esac
    v=$(ucx_version "$tucx")
    [ "$v" != "$main_v" ] || continue
    copy_ucx "$tucx" "$out-$v"
    copy_program "$out-$v" "$tree/test/uct/.libs/gtest_cuda_mgi" \
                 "$tree/test/uct/gtest_cuda_mgi" ||
        die "no test/uct/gtest_cuda_mgi in $tree: build it (make) first"
    cp "$top/contrib/gpu-suite.sh" "$out-$v/run/"
    finish_bundle "$out-$v"
done

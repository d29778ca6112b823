#!/usr/bin/env bash
#
# Make a relocatable folder with UCX, cuda_mgi, the tools, the GPU tests and
# the few shared libraries a bare GPU node lacks, for a machine that has an
# NVIDIA driver and nothing else (no package registry, no UCX):
#
#   bundle/bin      ucx_info, ucx_perftest, mgi_topo, gtest_cuda_mgi
#   bundle/lib      UCX's libraries and the carried libraries
#   bundle/lib/ucx  UCX's modules, libuct_cuda_mgi.so among them
#   bundle/run      the scripts that run the GPU suite and the benchmarks
#
# Every binary finds its libraries through $ORIGIN rpaths.  The driver's own
# libraries (libcuda, libnvidia-ml) and the C/C++ runtime are not carried.
#
# Usage: contrib/bundle.sh [OUTDIR]      (after contrib/setup.sh)
#
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
deps=${MGI_DEPS:-$top/.deps}
ucx=$deps/ucx
cuda=${CUDA_HOME:-/usr/local/cuda}
out=${1:-$top/bundle}

die() { printf '[bundle] error: %s\n' "$*" >&2; exit 1; }
[ -x "$ucx/bin/ucx_info" ] || die "no UCX in $ucx: run contrib/setup.sh first"
[ -e "$ucx/lib/ucx/libuct_cuda_mgi.so.0" ] ||
    die "cuda_mgi is not installed in $ucx: run contrib/setup.sh first"
command -v patchelf >/dev/null || die "patchelf not found (apt-get install patchelf)"

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/ucx" "$out/run" "$out/share"
cp -a "$ucx/lib/"*.so* "$out/lib/"
cp -a "$ucx/lib/ucx/"*.so* "$out/lib/ucx/"
cp -a "$ucx/share/ucx" "$out/share/" 2>/dev/null || true
cp "$ucx/bin/ucx_info" "$ucx/bin/ucx_perftest" "$out/bin/"
for f in "$ucx/bin/mgi_topo" "$top/test/gtest_cuda_mgi" \
         "$top/test/.libs/gtest_cuda_mgi" "$top/bench/"*/.libs/* ; do
    [ -f "$f" ] && [ -x "$f" ] && cp "$f" "$out/bin/"
done
# (libtool leaves a wrapper script beside a program it links against a
# library of the tree: take the real binary from .libs)
for f in "$top/bench/workloads/mgi_workloads" "$top/test/ucp_ext/gpu_ring_test" \
         "$top/test/ucp_ext/.libs/mgi_gpu_test" "$top/test/ucp_ext/mgi_launch"; do
    [ -f "$f" ] && [ -x "$f" ] && file -b "$f" | grep -q ELF && cp "$f" "$out/bin/"
done
cp "$top/test/ucp_ext/gpu-suite.sh" "$out/run/mgi-gpu-suite.sh"
cp "$top/bench/workloads/run.sh" "$out/run/workloads.sh"
cp "$top/bench/workloads/plot.py" "$out/run/"
cp "$top/contrib/gpu-suite.sh" "$top/bench/perftest_compare.sh" \
   "$top/bench/multipath_sweep.sh" "$out/run/"

# Carry what the binaries need beyond the driver and the C/C++ runtime
keep_out='^(libc|libm|libdl|libpthread|librt|libgcc_s|libstdc\+\+|ld-linux-x86-64|linux-vdso|libcuda|libnvidia-ml)\.'
elfs=$(find "$out/bin" "$out/lib" -type f)
for lib in $(for f in $elfs; do
                 LD_LIBRARY_PATH="$out/lib:$out/lib/ucx:$cuda/lib64" ldd "$f" \
                     2>/dev/null | awk '$3 ~ /^\// {print $1 " " $3}'
             done | sort -u | awk '{print $2}'); do
    name=$(basename "$lib")
    if ! [[ $name =~ $keep_out ]] && [ ! -e "$out/lib/$name" ] &&
       [ ! -e "$out/lib/ucx/$name" ]; then
        cp -L "$lib" "$out/lib/$name"
    fi
done

for f in $(find "$out/bin" -type f); do
    patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN/../lib/ucx' "$f"
done
for f in $(find "$out/lib" -maxdepth 1 -type f -name '*.so*'); do
    patchelf --set-rpath '$ORIGIN:$ORIGIN/ucx' "$f"
done
for f in $(find "$out/lib/ucx" -type f -name '*.so*'); do
    patchelf --set-rpath '$ORIGIN:$ORIGIN/..' "$f"
done
find "$out" -name '*.la' -delete

echo "[bundle] $out: $(du -sh "$out" | cut -f1), $(ls "$out/lib" | wc -l) libraries"

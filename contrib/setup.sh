#!/usr/bin/env bash
#
# Set up everything cuda_mgi builds against, then build and install it:
#   1. Debian packages: compilers, autotools, hwloc, numactl, rdma-core,
#      googletest; nvml.h and libnvidia-ml from Debian's non-free section.
#   2. UCX from Debian's `ucx` source package (1.13.1), built with CUDA into
#      $MGI_DEPS/ucx, with `mgi` in its uct_cuda module list so that UCX loads
#      libuct_cuda_mgi.so by itself.
#   3. cuda_mgi itself (./configure && make && make install) into that UCX.
#
# Idempotent: every step leaves a stamp in $MGI_DEPS/stamps and is skipped
# when its stamp is there.  Remove $MGI_DEPS (default: .deps in the source
# tree) to start over.
#
# Environment:
#   MGI_DEPS      where dependencies are built and installed (default .deps)
#   CUDA_HOME     the CUDA toolkit (default /usr/local/cuda)
#   MGI_NO_APT=1  do not call apt-get (the packages are already there)
#   MGI_JOBS      parallel make jobs (default: number of cores)
#
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
deps=${MGI_DEPS:-$top/.deps}
cuda=${CUDA_HOME:-/usr/local/cuda}
jobs=${MGI_JOBS:-$(nproc)}
stamps=$deps/stamps
ucx_version=1.13.1

log()  { printf '[setup] %s\n' "$*"; }
die()  { printf '[setup] error: %s\n' "$*" >&2; exit 1; }
done_() { [ -f "$stamps/$1" ]; }
mark() { mkdir -p "$stamps"; touch "$stamps/$1"; }

[ -x "$cuda/bin/nvcc" ] ||
    die "no CUDA toolkit at $cuda (set CUDA_HOME to the toolkit's directory)"
mkdir -p "$deps"

# --- 1. Debian packages ------------------------------------------------------
apt_packages="build-essential autoconf automake libtool pkg-config dpkg-dev
              libhwloc-dev hwloc libnuma-dev librdmacm-dev libibverbs-dev
              googletest libgtest-dev graphviz patchelf python3"
if ! done_ apt && [ "${MGI_NO_APT:-0}" != 1 ]; then
    command -v apt-get >/dev/null || die "apt-get not found: install the \
packages yourself ($apt_packages) and run with MGI_NO_APT=1"
    sources=/etc/apt/sources.list.d/cuda-mgi.sources
    if [ ! -f "$sources" ]; then
        log "adding Debian's deb-src (main) and non-free sections: $sources"
        cat > "$sources" <<SRC
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    fi
    log "apt-get update"
    apt-get update -qq
    log "installing build dependencies"
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $apt_packages \
        >"$deps/apt.log" 2>&1 || { tail -20 "$deps/apt.log"; \
        die "apt-get install failed (log: $deps/apt.log)"; }
    mark apt
fi

# matplotlib draws the workloads' charts (bench/workloads/plot.py)
if ! done_ matplotlib && [ "${MGI_NO_APT:-0}" != 1 ]; then
    if python3 -c 'import matplotlib' 2>/dev/null ||
       python3 -m pip install -q matplotlib >"$deps/pip.log" 2>&1; then
        mark matplotlib
    else
        log "warning: could not install matplotlib (log: $deps/pip.log);" \
            "the chart test will be skipped"
    fi
fi

# --- 2. NVML: header and library from Debian's non-free section -------------
# libnvidia-ml-dev would pull in the whole driver, which a build machine
# without a GPU neither has nor needs: unpack the header and the library
# alone.  At run time UCX uses the driver's own libnvidia-ml.so.1.
nvml=$deps/nvidia
if ! done_ nvml; then
    log "fetching nvml.h and libnvidia-ml from Debian (non-free)"
    rm -rf "$nvml" && mkdir -p "$nvml/debs" "$nvml/root"
    (cd "$nvml/debs" && apt-get download libnvidia-ml-dev libnvidia-ml1 \
        >/dev/null 2>&1) || die "apt-get download libnvidia-ml-dev \
libnvidia-ml1 failed: is Debian's non-free section in the apt sources?"
    for d in "$nvml"/debs/*.deb; do dpkg -x "$d" "$nvml/root"; done
    mkdir -p "$nvml/include" "$nvml/lib"
    cp "$nvml/root/usr/include/nvml.h" "$nvml/include/"
    lib=$(find "$nvml/root" -name 'libnvidia-ml.so.*.*' | head -1)
    [ -n "$lib" ] || die "libnvidia-ml1 holds no libnvidia-ml.so"
    cp "$lib" "$nvml/lib/"
    ln -sf "$(basename "$lib")" "$nvml/lib/libnvidia-ml.so.1"
    ln -sf libnvidia-ml.so.1 "$nvml/lib/libnvidia-ml.so"
    mark nvml
fi

# A machine without a driver has no libcuda.so.1; the toolkit's stub answers
# every call with an error, which is what the no-device path needs.
stubs=$deps/stubs
if [ ! -e "$stubs/libcuda.so.1" ]; then
    mkdir -p "$stubs"
    ln -sf "$cuda/lib64/stubs/libcuda.so" "$stubs/libcuda.so.1"
fi

# --- 3. UCX from Debian's source package, with CUDA -------------------------
src=$deps/src
ucx_src=$src/ucx-$ucx_version
ucx=$deps/ucx
if ! done_ ucx-source; then
    log "fetching Debian's ucx $ucx_version source package"
    rm -rf "$src" && mkdir -p "$src"
    (cd "$src" && apt-get source --download-only "ucx=$ucx_version-1" \
        >"$deps/ucx-source.log" 2>&1) || { tail "$deps/ucx-source.log"; \
        die "apt-get source ucx failed: is a deb-src line for Debian's \
bookworm main section in the apt sources?"; }
    (cd "$src" && dpkg-source -x ucx_$ucx_version-1.dsc >/dev/null 2>&1) ||
        die "dpkg-source -x failed"
    mark ucx-source
fi

if ! done_ ucx-configure; then
    log "configuring UCX with CUDA (log: $deps/ucx-configure.log)"
    (cd "$ucx_src" && { [ -x configure ] || ./autogen.sh; } &&
     ./contrib/configure-release --prefix="$ucx" --with-cuda="$cuda" \
        --enable-mt --with-verbs --enable-cma --disable-backtrace-detail \
        --enable-devel-headers --without-java --without-go \
        --disable-doxygen-doc --without-rocm --without-gdrcopy \
        --without-knem --without-xpmem --disable-static \
        CPPFLAGS="-I$nvml/include" LDFLAGS="-L$nvml/lib" \
        >"$deps/ucx-configure.log" 2>&1) ||
        { tail -20 "$deps/ucx-configure.log"; die "UCX configure failed"; }
    grep -q '^#define HAVE_CUDA 1' "$ucx_src/config.h" ||
        die "UCX was configured without CUDA (see $deps/ucx-configure.log)"
    # UCX 1.13 opens the members of the uct_cuda family from a compiled-in
    # list; add ours.  (UCX >= 1.22 scans its module directory instead.)
    sed -i 's/^#define uct_cuda_MODULES "\(.*\)"$/#define uct_cuda_MODULES "\1:mgi"/' \
        "$ucx_src/config.h"
    grep -q '^#define uct_cuda_MODULES ".*:mgi"' "$ucx_src/config.h" ||
        die "could not add mgi to uct_cuda_MODULES in $ucx_src/config.h"
    mark ucx-configure
fi

if ! done_ ucx-install; then
    # test/apps does not build with CUDA 13 (cuCtxCreate takes four
    # arguments there): build and install the libraries and tools only.
    log "building UCX (log: $deps/ucx-build.log)"
    dirs="src/ucm src/ucs src/uct src/ucp src/tools/vfs src/tools/info
          src/tools/perf"
    (cd "$ucx_src" &&
     for d in $dirs; do
         make -C "$d" -j"$jobs" install || exit 1
     done
     true) >"$deps/ucx-build.log" 2>&1 ||
        { tail -30 "$deps/ucx-build.log"; die "UCX build failed"; }
    mark ucx-install
fi

# --- 4. cuda_mgi ------------------------------------------------------------
log "building cuda_mgi (log: $deps/mgi-build.log)"
(cd "$top" && mkdir -p config/m4 config/aux &&
 { [ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi; } &&
 { [ -f config.status ] && [ config.status -nt configure ] ||
   ./configure --prefix="$ucx" --with-ucx="$ucx" --with-ucx-src="$ucx_src" \
               --with-cuda="$cuda" --with-nvml="$nvml"; } &&
 make -j"$jobs" && make install) >"$deps/mgi-build.log" 2>&1 ||
    { tail -40 "$deps/mgi-build.log"; die "cuda_mgi build failed"; }

log "done: UCX with cuda_mgi in $ucx"

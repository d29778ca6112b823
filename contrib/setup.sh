#!/usr/bin/env bash
#
# Set up everything cuda_mgi builds against, then build and install it:
#   1. Debian packages: compilers, autotools, hwloc, numactl, rdma-core,
#      googletest, rsync, Open MPI (test/uct/mpi); nvml.h and libnvidia-ml
#      from Debian's non-free section.
#   2. UCX with CUDA, built from $MGI_DEPS/src/ucx-VERSION and installed
#      into $MGI_DEPS/ucx-VERSION: Debian 12's `ucx` source package (1.13.1)
#      by default, or the UCX source tree or tarball MGI_UCX_SRC names.
#      What a UCX version needs is read from its sources
#      (docs/ucx-versions.md); a UCX that does not scan its module directory
#      gets `mgi` in its uct_cuda module list, so that it loads
#      libuct_cuda_mgi.so by itself.
#   3. cuda_mgi itself (configure, make, make install) into that UCX: this
#      tree, or with MGI_TREE=1 a copy of it in $MGI_DEPS/tree-VERSION.
#
# With MGI_UCX_PREFIX, UCX is one installed by other means (PyPI's libucx
# wheel: contrib/pip-ucx.sh): its source tree, MGI_UCX_SRC of the same
# version, is only configured the way that UCX was (`ucx_info -v` shows how)
# in $MGI_DEPS/src/ucx-VERSION-ext; cuda_mgi is built in the copy
# $MGI_DEPS/tree-VERSION-ext, and only its module is installed there.
#
# Idempotent: every step leaves a stamp in $MGI_DEPS/stamps (per UCX
# version) and is skipped when its stamp is there.  Remove $MGI_DEPS
# (default: .deps in the source tree) to start over.
#
# Usage: contrib/setup.sh [deps|ucx|version]
#   deps     the Debian packages, NVML and the stub libcuda only
#   ucx      those and UCX, not cuda_mgi
#   version  print the version of the UCX it would build, and nothing else
#
# Environment:
#   MGI_UCX_SRC     a UCX source tree, or a tarball of one (a release, or a
#                   git tree that needs ./autogen.sh); default: Debian's
#                   1.13.1
#   MGI_TREE=1      build a copy of this tree's sources (tracked files and
#                   untracked ones git does not ignore) in
#                   $MGI_DEPS/tree-VERSION instead of this tree;
#                   $MGI_DEPS/ucx is left as it is
#   MGI_UCX_PREFIX  a UCX installed by other means (above)
#   MGI_DEPS        where dependencies are built and installed (default
#                   .deps); $MGI_DEPS/ucx links to the UCX this tree is
#                   built against
#   CUDA_HOME       the CUDA toolkit (default /usr/local/cuda)
#   NVCCFLAGS       passed to cuda_mgi's configure (default there: sm_80 and
#                   sm_90)
#   MGI_NO_APT=1    do not call apt-get (the packages are already there)
#   MGI_JOBS        parallel make jobs (default: number of cores)
#
set -euo pipefail

stage=${1:-all}
case $stage in
    deps|ucx|version|all) ;;
    *) echo "usage: $0 [deps|ucx|version]" >&2; exit 2 ;;
esac

top=$(cd "$(dirname "$0")/.." && pwd -P)
deps=${MGI_DEPS:-$top/.deps}
mkdir -p "$deps"
deps=$(cd "$deps" && pwd -P)
cuda=${CUDA_HOME:-/usr/local/cuda}
jobs=${MGI_JOBS:-$(nproc)}
stamps=$deps/stamps
src=$deps/src

log()  { printf '[setup] %s\n' "$*"; }
die()  { printf '[setup] error: %s\n' "$*" >&2; exit 1; }
done_() { [ -f "$stamps/$1" ]; }
mark() { mkdir -p "$stamps"; printf '%s\n' "${2:-}" > "$stamps/$1"; }
# the stamp is there and holds TEXT
same() { [ -f "$stamps/$1" ] && [ "$(cat "$stamps/$1")" = "$2" ]; }

# The full version (x.y.z plus any suffix) from a configure.ac on stdin
ucx_version() {
    awk -F'[][]' '/^define\(\[ucx_ver_(major|minor|patch|extra)\]/ {
                      v[$2] = $3; sub(/^, */, "", v[$2]); sub(/\).*/, "", v[$2])
                  }
                  END { if (v["ucx_ver_major"] != "")
                            printf "%s.%s.%s%s\n", v["ucx_ver_major"],
                                   v["ucx_ver_minor"], v["ucx_ver_patch"],
                                   v["ucx_ver_extra"] }'
}


# Which UCX: its version names its source and install folders
if [ -z "${MGI_UCX_SRC:-}" ]; then
    version=1.13.1
    origin="debian:ucx=$version-1"
else
    given=$MGI_UCX_SRC
    [ -e "$given" ] || die "MGI_UCX_SRC=$given: no such file or directory"
    origin=$(cd "$(dirname "$given")" && pwd -P)/$(basename "$given")
    if [ -d "$given" ]; then
        [ -f "$given/configure.ac" ] ||
            die "MGI_UCX_SRC=$given: no configure.ac there; is it a UCX tree?"
        version=$(ucx_version < "$given/configure.ac")
    else
        version=$(tar -xOf "$given" --wildcards --no-wildcards-match-slash \
                      '*/configure.ac' 2>/dev/null | ucx_version) ||
            die "MGI_UCX_SRC=$given: not a tarball tar can read"
    fi
    [ -n "$version" ] || die "MGI_UCX_SRC=$given: no UCX version in its \
configure.ac (define([ucx_ver_major], ...)); is it a UCX source tree?"
fi
[ "$stage" = version ] && { echo "$version"; exit 0; }

# An installed UCX (MGI_UCX_PREFIX) has its own configured source tree
ext=${MGI_UCX_PREFIX:-}
if [ -n "$ext" ]; then
    [ -n "${MGI_UCX_SRC:-}" ] || die "MGI_UCX_PREFIX=$ext needs MGI_UCX_SRC: \
the source tree of that UCX's version"
    ext=$(cd "$ext" && pwd -P) || die "MGI_UCX_PREFIX=$ext: no such folder"
    [ -x "$ext/bin/ucx_info" ] ||
        die "MGI_UCX_PREFIX=$ext: no bin/ucx_info there; is it a UCX prefix?"
    # (the wheel's programs look for its libraries where it was built)
    export LD_LIBRARY_PATH="$ext/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    ext_v=$("$ext/bin/ucx_info" -v | sed -n -e 's/^# Version //p' \
                -e 's/^# Library version: //p' | head -1)
    [ "$ext_v" = "$version" ] || die "MGI_UCX_PREFIX=$ext is UCX '$ext_v', \
MGI_UCX_SRC=$MGI_UCX_SRC is $version: give the source of the installed version"
    name=ucx-$version-ext
else
    name=ucx-$version
fi

[ -x "$cuda/bin/nvcc" ] ||
    die "no CUDA toolkit at $cuda (set CUDA_HOME to the toolkit's directory)"

# --- 1. Debian packages ------------------------------------------------------
apt_packages="build-essential autoconf automake libtool pkg-config dpkg-dev
              libhwloc-dev hwloc libnuma-dev librdmacm-dev libibverbs-dev
              googletest libgtest-dev graphviz patchelf python3 rsync
              xz-utils file openmpi-bin libopenmpi-dev clang"
apt_packages=$(echo $apt_packages)
if ! same apt "$apt_packages" && [ "${MGI_NO_APT:-0}" != 1 ]; then
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
    mark apt "$apt_packages"
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

[ "$stage" = deps ] && { log "done: packages, NVML and the stub libcuda in $deps"; exit 0; }

# The old layout kept one UCX in $deps/ucx itself: it is rebuilt as
# $deps/ucx-1.13.1, which $deps/ucx then links to
if [ -d "$deps/ucx" ] && [ ! -L "$deps/ucx" ]; then
    log "replacing $deps/ucx (one UCX) with links to per-version installs"
    rm -rf "$deps/ucx"
    rm -f "$stamps/ucx-configure" "$stamps/ucx-install" "$stamps/ucx-source"
fi

# --- 3. UCX sources ----------------------------------------------------------
mkdir -p "$src"
ucx_src=$src/$name
if same "$name-source" "$origin"; then
    :
elif [ -z "${MGI_UCX_SRC:-}" ]; then
    log "fetching Debian's ucx $version source package"
    rm -rf "$ucx_src" "$src/ucx_$version"[.-]*
    rm -f "$stamps/ucx-$version-"*
    (cd "$src" && apt-get source --download-only "ucx=$version-1" \
        >"$deps/ucx-source.log" 2>&1) || { tail "$deps/ucx-source.log"; \
        die "apt-get source ucx failed: is a deb-src line for Debian's \
bookworm main section in the apt sources?"; }
    (cd "$src" && dpkg-source -x "ucx_$version-1.dsc" >/dev/null 2>&1) ||
        die "dpkg-source -x failed"
    mark "ucx-$version-source" "$origin"
else
    log "unpacking UCX $version from $given into $ucx_src"
    rm -rf "$ucx_src" "$src/.unpack-$name"
    rm -f "$stamps/$name-"*
    if [ -d "$given" ]; then
        mkdir -p "$ucx_src" && cp -a "$given/." "$ucx_src/"
    else
        mkdir -p "$src/.unpack-$name" &&
            tar -xf "$given" -C "$src/.unpack-$name" ||
            die "could not unpack $given"
        set -- "$src/.unpack-$name"/*
        [ $# -eq 1 ] && [ -d "$1" ] ||
            die "$given holds more than one top folder"
        mv "$1" "$ucx_src" && rmdir "$src/.unpack-$name"
    fi
    mark "$name-source" "$origin"
fi
ucx=${ext:-$deps/ucx-$version}
log "UCX $version: source $ucx_src, install $ucx"

# --- 4. UCX: configure and build ---------------------------------------------
# What this UCX's sources need here, read from the sources themselves:
ucx_cppflags="-I$nvml/include"
ucx_extra=()
# - a CUDA driver-API pointer type named without its version suffix
#   (PFN_cuX): CUDA 13's cudaTypedefs.h has only the versioned names
#   (PFN_cuX_vNNNNN); name the newest one for it
typedefs=$cuda/include/cudaTypedefs.h
for pfn in $(grep -rhoE --include='*.[ch]' '\bPFN_cu[A-Za-z0-9]+(_v[0-9]+)?\b' \
                 "$ucx_src/src" | grep -v '_v[0-9]*$' | sort -u); do
    grep -qE "[ *]$pfn\b" "$typedefs" && continue
    newest=$(grep -oE "\b${pfn}_v[0-9]+\b" "$typedefs" |
             awk -F_v '{print $NF, $0}' | sort -n | tail -1 | cut -d' ' -f2)
    [ -n "$newest" ] ||
        die "UCX $version uses $pfn, which $typedefs does not declare"
    ucx_cppflags="$ucx_cppflags -D$pfn=$newest"
done
# - DOCA GPUNetIO, a git submodule that a tree made from git lacks: without
#   its headers neither GDA (GPU-initiated IB) nor UCX's own device code
#   (ucx_perftest's CUDA kernel includes them) builds.  cuda_mgi needs
#   neither.
if grep -qs 'gpunetio' "$ucx_src/.gitmodules" &&
   [ -z "$(ls -A "$ucx_src/external/gpunetio" 2>/dev/null)" ]; then
    grep -rqs --include=configure.m4 -e '--without-gda' "$ucx_src/src" &&
        ucx_extra+=(--without-gda)
    [ -n "$(find "$ucx_src/src" -name '*.cu' -print -quit)" ] &&
        ucx_extra+=(NVCC=/bin/false)
fi
# - UCX that scans its module directory finds libuct_cuda_mgi.so there;
#   older UCX opens only the modules config.h names (patched below)
if grep -qs 'ucs_module_load_from_dir' "$ucx_src/src/ucs/sys/module.c"; then
    ucx_scans=1
else
    ucx_scans=0
fi

if [ -z "$ext" ]; then
    ucx_args=(--prefix="$ucx" --with-cuda="$cuda"
              --enable-mt --with-verbs --enable-cma --disable-backtrace-detail
              --enable-devel-headers --without-java --without-go
              --disable-doxygen-doc --without-rocm --without-gdrcopy
              --without-knem --without-xpmem --disable-static)
    ucx_configure=./contrib/configure-release
else
    # the installed UCX's own options, but for its prefix and CUDA path
    ucx_args=()
    for a in $("$ext/bin/ucx_info" -v | sed -n 's/^# Configured with: //p'); do
        case $a in
            --prefix=*) ;;
            --with-cuda=*) ucx_args+=(--with-cuda="$cuda") ;;
            *) ucx_args+=("$a") ;;
        esac
    done
    [ ${#ucx_args[@]} -gt 0 ] ||
        die "$ext/bin/ucx_info -v shows no \"Configured with\" line"
    ucx_args=(--prefix="$deps/$name-unused" "${ucx_args[@]}")
    ucx_configure=./configure
fi
ucx_args+=("${ucx_extra[@]}" CPPFLAGS="$ucx_cppflags" LDFLAGS="-L$nvml/lib")
if ! same "$name-configure" "${ucx_args[*]}"; then
    rm -f "$stamps/$name-install"
    log "configuring UCX $version with CUDA (log: $deps/$name-configure.log)"
    (cd "$ucx_src" &&
     { [ -x configure ] || ./autogen.sh; } &&
     $ucx_configure "${ucx_args[@]}") >"$deps/$name-configure.log" 2>&1 ||
        { tail -20 "$deps/$name-configure.log"; die "UCX configure failed"; }
    grep -q '^#define HAVE_CUDA 1' "$ucx_src/config.h" || die "UCX was \
configured without CUDA (see $deps/$name-configure.log)"
    if [ $ucx_scans = 0 ] && [ -z "$ext" ]; then
        # this UCX opens the members of the uct_cuda family from a
        # compiled-in list; add ours
        sed -i 's/^#define uct_cuda_MODULES "\(.*\)"$/#define uct_cuda_MODULES "\1:mgi"/' \
            "$ucx_src/config.h"
        grep -q '^#define uct_cuda_MODULES ".*:mgi"' "$ucx_src/config.h" ||
            die "could not add mgi to uct_cuda_MODULES in $ucx_src/config.h"
    fi
    mark "$name-configure" "${ucx_args[*]}"
fi

if [ -n "$ext" ]; then
    [ $ucx_scans = 1 ] || log "warning: UCX $version opens only the modules \
its config.h names, and that of $ext was made without mgi: it will not load \
libuct_cuda_mgi.so"
    # what else differs between the installed build's config.h and the tree's
    # (configure refuses the differences that change struct layouts)
    diffs=$(diff <("$ext/bin/ucx_info" -b | sed 's/  */ /g' | sort) \
                 <(grep '^#define' "$ucx_src/config.h" | sed 's/  */ /g' | sort) |
            sed -n 's/^[<>] #define //p' | awk '{print $1}' |
            grep -v '^UCX_CONFIG' | sort -u | tr '\n' ' ') || true
    [ -z "$diffs" ] || log "note: the tree's config.h and $ext's build differ in: $diffs"
elif ! done_ "$name-install"; then
    # UCX's test apps do not build with CUDA 13 (cuCtxCreate takes four
    # arguments there): build and install the libraries and tools only.
    log "building UCX $version (log: $deps/$name-build.log)"
    dirs="src/ucm src/ucs src/uct src/ucp src/tools/vfs src/tools/info
          src/tools/perf"
    (cd "$ucx_src" &&
     for d in $dirs; do
         make -C "$d" -j"$jobs" install || exit 1
     done
     true) >"$deps/$name-build.log" 2>&1 ||
        { tail -30 "$deps/$name-build.log"; die "UCX build failed"; }
    got=$("$ucx/bin/ucx_info" -v | sed -n -e 's/^# Version //p' \
              -e 's/^# Library version: //p' | head -1)
    [ "$got" = "$version" ] ||
        die "$ucx/bin/ucx_info says version '$got', not $version"
    mark "$name-install"
fi

[ "$stage" = ucx ] && { log "done: UCX $version in $ucx"; exit 0; }

# nvcc compiles each GPU architecture's code in a thread of its own
export NVCC_APPEND_FLAGS="${NVCC_APPEND_FLAGS:+$NVCC_APPEND_FLAGS }--threads 0"

# --- 5. cuda_mgi -------------------------------------------------------------
if [ "${MGI_TREE:-0}" = 1 ] || [ -n "$ext" ]; then
    tree=$deps/tree-${name#ucx-}
    log "copying the sources to $tree"
    git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
        die "MGI_TREE=1 needs $top to be a git checkout (it copies what git lists)"
    mkdir -p "$tree"
    (cd "$top" && git ls-files -z --cached --others --exclude-standard |
         while IFS= read -r -d '' f; do
             [ -e "$f" ] && printf '%s\0' "$f"
         done) | rsync -a --from0 --files-from=- "$top/" "$tree/"
    ln -sfn "$deps" "$tree/.deps"
else
    tree=$top
    # make check finds the stubs and NVML through the tree's .deps
    if [ "$deps" != "$top/.deps" ] && [ ! -e "$top/.deps" ]; then
        ln -s "$deps" "$top/.deps"
    fi
    [ "$(readlink -f "$top/.deps")" = "$deps" ] || log "warning: $top/.deps \
is not $deps: make check will look there for the stub libcuda and NVML"
    ln -sfn "ucx-$version" "$deps/ucx"
fi

mgi_args=(--prefix="$ucx" --with-ucx="$ucx" --with-ucx-src="$ucx_src"
          --with-cuda="$cuda" --with-nvml="$nvml")
[ -n "${NVCCFLAGS:-}" ] && mgi_args+=(NVCCFLAGS="$NVCCFLAGS")
want=$(printf '%s\n' "${mgi_args[@]}")
mgi_log=$deps/mgi-$([ "$tree" = "$top" ] || echo tree-)${name#ucx-}-build.log
if [ -z "$ext" ]; then
    make_install="make -j$jobs && make install"
else
    # into an installed UCX: the module alone
    make_vars=
    la_dir=$(sed -n "s/^libdir='\(.*\)'$/\1/p" "$ext/lib/libucs.la" 2>/dev/null)
    if [ -n "$la_dir" ] && [ ! -d "$la_dir" ]; then
        # its libtool files name the folders it was built in (a wheel's
        # do), which libtool would follow: link against its libraries
        # through a folder that holds them alone
        view=$deps/$name-lib
        rm -rf "$view" && mkdir -p "$view"
        ln -s "$ext"/lib/lib*.so "$view/"
        make_vars="UCX_LDFLAGS='-L$view -Wl,-rpath,$ext/lib'"
    fi
    make_install="make -C src/uct/cuda_mgi/gig -j$jobs $make_vars &&
                  make -C src/uct/cuda_mgi -j$jobs $make_vars install"
fi
log "building cuda_mgi in $tree against UCX $version (log: $mgi_log)"
(cd "$tree" && mkdir -p config/m4 config/aux &&
 { [ -x configure ] && [ configure -nt configure.ac ] || autoreconf -fi; } &&
 have= &&
 if [ -f config.status ]; then
     have=$(eval "printf '%s\n' $(./config.status --config)")
 fi &&
 if [ "$have" != "$want" ]; then
     # configured for another UCX (or with other options): start clean, so
     # that nothing compiled against the other UCX's headers stays
     if [ -f Makefile ]; then
         make distclean >/dev/null || { echo "make distclean failed in \
$tree: clean it by hand (the objects there were built for another UCX)"
                                        exit 1; }
     fi
     ./configure "${mgi_args[@]}"
 elif [ configure -nt config.status ]; then
     ./configure "${mgi_args[@]}"
 fi &&
 eval "$make_install") >"$mgi_log" 2>&1 ||
    { tail -40 "$mgi_log"; die "cuda_mgi build failed"; }

log "done: UCX $version with cuda_mgi in $ucx (built in $tree)"

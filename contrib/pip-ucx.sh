#!/usr/bin/env bash
#
# cuda_mgi for the UCX of PyPI's libucx wheel: build it and install its
# module into the wheel (libucx/lib/ucx/libuct_cuda_mgi.so), where that UCX
# (1.22, which scans its module directory) finds it by itself.
#
#   python3 -m pip install libucx-cu13==1.22.0
#   contrib/pip-ucx.sh [PYTHON]
#
# PYTHON is the interpreter whose packages hold libucx (default python3).
#
# The wheel holds UCX's libraries, modules, tools and public headers, but
# not the internal headers and config.h a transport compiles against.
# Those come from the upstream source of the same version (MGI_UCX_SRC,
# default ../shared/deps/ucx-VERSION.tar.xz beside this repository),
# configured with the options the wheel's `ucx_info -v` shows
# (contrib/setup.sh with MGI_UCX_PREFIX; nothing of that tree is built).
# The wheel's programs look for its libraries where it was built: run them
# with libucx/lib on LD_LIBRARY_PATH, as below.
#
# Environment: MGI_UCX_SRC, and contrib/setup.sh's (MGI_DEPS, CUDA_HOME,
# MGI_NO_APT, MGI_JOBS).
#
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd -P)
deps=${MGI_DEPS:-$top/.deps}
py=${1:-python3}

die() { printf '[pip-ucx] error: %s\n' "$*" >&2; exit 1; }
log() { printf '[pip-ucx] %s\n' "$*"; }

libucx=$("$py" -c 'import importlib.util as u
s = u.find_spec("libucx")
print(s.submodule_search_locations[0] if s else "")' 2>/dev/null) || true
[ -n "$libucx" ] || die "$py finds no libucx package: install the wheel \
first ($py -m pip install libucx-cu13)"
[ -x "$libucx/bin/ucx_info" ] || die "$libucx has no bin/ucx_info"
version=$(LD_LIBRARY_PATH="$libucx/lib" "$libucx/bin/ucx_info" -v |
          sed -n -e 's/^# Version //p' -e 's/^# Library version: //p' | head -1)
[ -n "$version" ] || die "$libucx/bin/ucx_info -v printed no version"
log "the wheel's UCX: $version in $libucx"

export MGI_UCX_SRC=${MGI_UCX_SRC:-$top/../shared/deps/ucx-$version.tar.xz}
[ -e "$MGI_UCX_SRC" ] || die "no UCX $version source at $MGI_UCX_SRC: set \
MGI_UCX_SRC to a UCX $version source tree or tarball"
MGI_UCX_PREFIX=$libucx "$top/contrib/setup.sh"

# UCX's libuct_cuda.so (and so cuda_mgi) needs the driver's libcuda.so.1;
# without one, the toolkit's stub stands in
libpath=$libucx/lib
ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' ||
    libpath=$libpath:$deps/stubs:$deps/nvidia/lib
log "installed: $(ls "$libucx"/lib/ucx/libuct_cuda_mgi.so*)"
log "LD_LIBRARY_PATH=$libpath $libucx/bin/ucx_info -c | grep CUDA_MGI:"
LD_LIBRARY_PATH=$libpath UCX_WARN_UNUSED_ENV_VARS=n \
    "$libucx/bin/ucx_info" -c | grep '^UCX_CUDA_MGI_' ||
    die "the wheel's ucx_info shows no UCX_CUDA_MGI_ settings: it did not load the module"

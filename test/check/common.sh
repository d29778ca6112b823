# Shared by the CPU checks: find UCX and make its CUDA modules loadable.
#
# UCX's libuct_cuda.so (and so cuda_mgi) needs libcuda.so.1, which only an
# NVIDIA driver installs.  Without one, the toolkit's stub stands in: every
# CUDA call then fails, which is the no-device path these checks exercise.

set -u
UCX_PREFIX=${UCX_PREFIX:?UCX_PREFIX is not set (run through make check)}
MGI_DEPS=${MGI_DEPS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/.deps}
UCX_INFO=$UCX_PREFIX/bin/ucx_info

if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    MGI_HAVE_DRIVER=1
else
    MGI_HAVE_DRIVER=0
    export LD_LIBRARY_PATH="$MGI_DEPS/stubs:$MGI_DEPS/nvidia/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export UCX_WARN_UNUSED_ENV_VARS=n

fails=0
passes=0
skips=0
pass() { echo "PASS: $*"; passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# a check that cannot run here: say so, and why
skip() { echo "SKIP: $*"; skips=$((skips + 1)); }
finish() {
    echo "$passes passed, $fails failed, $skips skipped"
    [ "$fails" -eq 0 ]
}

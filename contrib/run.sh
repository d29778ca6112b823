#!/usr/bin/env bash
#
# The main job: set up (first time only), build and install cuda_mgi into
# its UCX, then show it working.
#   With 2+ GPUs: ucx_perftest put_bw / tag_bw / put_lat of cuda_mgi beside
#                 cuda_ipc, GPU0 -> GPU1, with the ratio.
#   Without:      what UCX shows of cuda_mgi here (ucx_info), and why it
#                 reports no devices.
#
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
"$top/contrib/setup.sh"

deps=${MGI_DEPS:-$top/.deps}
export PATH=$deps/ucx/bin:$PATH
export UCX_WARN_UNUSED_ENV_VARS=n

ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "${ngpus:-0}" -ge 2 ]; then
    echo "== $ngpus GPUs: ucx_perftest, cuda_mgi beside cuda_ipc (GPU0 -> GPU1)"
    ucx_info -d | grep -A4 'Transport: cuda_mgi' | head -5
    "$top/bench/perftest_compare.sh" "${MGI_SIZES:-1048576,67108864,268435456}" 3
    exit 0
fi

# No driver: UCX's CUDA modules load against the toolkit's stub libcuda
if ! ldconfig -p | grep -q 'libcuda\.so\.1 '; then
    export LD_LIBRARY_PATH="$deps/stubs:$deps/nvidia/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
echo "== fewer than 2 GPUs here ($ngpus): cuda_mgi is installed and loads,"
echo "   and reports no devices; the benchmark needs 2 GPUs on one host."
echo "== ucx_info -v"
ucx_info -v | head -1
echo "== UCX opening the module (UCX_LOG_LEVEL=debug ucx_info -d)"
UCX_LOG_LEVEL=debug ucx_info -d 2>&1 | grep 'cuda_mgi:' | sed 's/^.*UCX  DEBUG //' | sort -u
echo "== its configuration (ucx_info -c)"
ucx_info -c | grep '^UCX_CUDA_MGI_'
echo "== transports UCX offers here (ucx_info -d)"
ucx_info -d | grep 'Transport:' | sort -u

#!/usr/bin/env bash
#
# The GPU suite, run from the bundle on a machine with 2 or more GPUs:
# the machine's topology, ucx_info's view of cuda_mgi, the gtest suite
# (every byte checked), then, where the bundle carries Open MPI, the MPI
# test on device buffers with cuda_mgi and cuda_ipc in one invocation.
#
# Usage: bundle/run/gpu-suite.sh [OUTDIR] [gtest-filter]
#
set -uo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-${OUT:-/tmp/cuda_mgi-gpu-suite}}
filter=${2:-*}
mkdir -p "$out"
export PATH=$here/bin:$here/run:$PATH
export UCX_WARN_UNUSED_ENV_VARS=n
# multicast stays off on shared GPU hosts
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1

echo "== machine"
nvidia-smi -L
nvidia-smi topo -m 2>&1 | head -20
echo "== ucx_info -d: cuda_mgi (bundled UCX, no LD_PRELOAD)"
ucx_info -v | head -2
ucx_info -d | grep -B3 -A30 'Transport: cuda_mgi' | head -40

echo "== GPU suite"
rc=0
gtest_cuda_mgi --gtest_filter="$filter" \
    --gtest_output="json:$out/gtest.json" 2>&1 | tee "$out/gtest.log" || rc=1

if [ -x "$here/run/mpi-gpu.sh" ] && [ "$filter" = "*" ]; then
    echo "== Open MPI over pml ucx: cuda_mgi and cuda_ipc (run/mpi-gpu.sh)"
    "$here/run/mpi-gpu.sh" "$out/mpi" 2>&1 | tee "$out/mpi.log"
    mrc=${PIPESTATUS[0]}
    [ -f "$out/mpi/compare.txt" ] && cat "$out/mpi/compare.txt"
    case $mrc in
        0) ;;
        77) echo "== MPI test skipped (exit 77): see $out/mpi.log" ;;
        *) rc=1 ;;
    esac
fi
exit $rc

#!/usr/bin/env bash
#
# Striping settings against cuda_ipc, one line per (setting, test, size):
# which host-path share, chunk and ring depth pay on this machine.
#
# Usage: multipath_sweep.sh [SIZES] [REPEAT]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
sizes=${1:-16777216,67108864,268435456}
repeat=${2:-1}

sweep() {  # NAME MODES ENV...
    local name=$1 modes=$2; shift 2
    echo "== $name: $*"
    env "$@" MGI_PERF_MODES="$modes" "$here/perftest_compare.sh" "$sizes" \
        "$repeat" | grep -v '^JSON' | sed "s/^/$name  /"
}

sweep default       put_bw
sweep direct_only   put_bw UCX_CUDA_MGI_PATHS=direct
sweep host_alone    "put_bw tag_bw" UCX_CUDA_MGI_PATHS=host
sweep chunk4m       put_bw UCX_CUDA_MGI_CHUNK_SIZE=4m
sweep chunk2m_bufs16 put_bw UCX_CUDA_MGI_CHUNK_SIZE=2m UCX_CUDA_MGI_STAGE_BUFS=16
sweep host_bw_80g   put_bw UCX_CUDA_MGI_HOST_BW=80GBs

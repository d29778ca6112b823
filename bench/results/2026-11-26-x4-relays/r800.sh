#!/usr/bin/env bash
# run800: the 4-GPU machine. Topology (nvidia-smi, mgi_topo: no GPU relay
# chosen on NVSwitch), the transport's path tests with relays through a
# third GPU and with a declared 4-GPU mesh (routes checked), then
# ucx_perftest put_bw through the relays against cuda_ipc.
# Usage (device machine, repository root, bundle/ carried): bash r800.sh
set -u
B=$PWD/bundle
export PATH=$B/bin:$B/run:$PATH
export UCX_WARN_UNUSED_ENV_VARS=n
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
O=${OUT:-/tmp/out}; mkdir -p $O
t0=$(date +%s)
el() { echo "[+$(( $(date +%s) - t0 )) s] $*"; }
el "== machine"; nvidia-smi -L; nvidia-smi topo -m 2>&1 | head -12
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
el "== mgi_topo (discovered)"
mgi_topo --write $O/x4.topo summary 2>&1 | tee $O/mgi_topo-x4.txt | head -60
echo "via-gpu paths chosen on this machine: $(grep -c 'via-gpu' $O/mgi_topo-x4.txt)"

mgi_topo --synthetic h100-mesh4 paths 1 0 2>&1 | head -8
el "== gtest: path cases with relays (4 GPUs visible)"
timeout 300 gtest_cuda_mgi --gtest_filter='paths/*gpu_relay_third:paths/*mesh_*:paths/*put_zcopy_all_sizes/host_alone:paths/*put_zcopy_all_sizes/gpu_relay_alone:paths/*put_zcopy_all_sizes/all_paths:paths/*put_zcopy_all_sizes/host_chunks' \
    --gtest_output=json:$O/gtest-relays.json 2>&1 | tee $O/gtest-relays.log | grep -E '^\[|route:|SKIPPED|check failed|wrong' | head -150
el "== perftest put_bw GPU1 -> GPU0 through relays, cuda_mgi beside cuda_ipc"
mgi_topo --synthetic h100-mesh4 --write $O/mesh4.topo graph >/dev/null
pt() { local name=$1; shift
  echo "-- $name: $*"
  env "$@" MGI_PERF_MODES=put_bw perftest_compare.sh 67108864,268435456 1 2>&1 | grep -v '^JSON' | sed "s/^/$name  /"; }
pt default
pt relay2_alone     UCX_CUDA_MGI_PATHS=gpu UCX_CUDA_MGI_RELAY_GPUS=2
pt relay23_alone    UCX_CUDA_MGI_PATHS=gpu UCX_CUDA_MGI_RELAY_GPUS=2,3
pt direct_relay23   UCX_CUDA_MGI_PATHS=direct,gpu UCX_CUDA_MGI_RELAY_GPUS=2,3
pt mesh_relays      UCX_CUDA_MGI_PATHS=gpu UCX_CUDA_MGI_TOPO_FILE=$O/mesh4.topo
pt mesh_all         UCX_CUDA_MGI_PATHS=direct,host,gpu UCX_CUDA_MGI_TOPO_FILE=$O/mesh4.topo
el "== done"

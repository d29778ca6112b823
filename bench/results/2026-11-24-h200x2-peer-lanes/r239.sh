#!/usr/bin/env bash
# run239 (2 x H200): are the peer lanes slow from contention on one lane?
# fewer sorter blocks with peer lanes; the mover's at 48 beside
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for v in MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=8 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=16 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=24 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=48 MGI_PEER_DIRECT=0,MGI_SORTER_BLOCKS=48 MGI_PEER_DIRECT=1,MGI_SORTER_BLOCKS=48,MGI_SEG_SIZE=524288,MGI_RECV_DEPTH=256; do
  echo "== $(date +%T) exchange 2 GPUs mgi ${v//,/ }"
  env ${v//,/ } timeout 100 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op exchange --gib 2 --variant mgi 2>&1 | grep -E "^exchange|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
done

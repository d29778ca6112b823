#!/usr/bin/env bash
# run242 (2 x H200): peer lanes with the sorter's whole-segment copies by
# its threads (libmgi built with -DMGI_GPU_NO_TMA, abbase/notma) instead
# of bulk (TMA) copies; the mover's path beside, both libraries
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=48 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for r in 1 2; do
for lib in tma notma; do
  L=$PWD/bundle/lib; [ $lib = notma ] && L=$PWD/abbase/notma:$PWD/bundle/lib
  for p in 1 0; do
    echo "== $(date +%T) exchange 2 GPUs mgi $lib MGI_PEER_DIRECT=$p"
    LD_LIBRARY_PATH=$L MGI_PEER_DIRECT=$p timeout 100 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op exchange --gib 2 --variant mgi 2>&1 | grep -E "^exchange|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
  done
done
done

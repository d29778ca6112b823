#!/usr/bin/env bash
# run244 (2 x H200): peer lanes with commits and recycles as releases at
# system scope and no system-scope fence in every sorter thread
# (abbase/fence/libmgi.so.0) against the bundle's (fences), and the mover
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=48 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for r in 1 2; do
for v in fence:1 fences:1 fence:0; do
  lib=${v%%:*} p=${v##*:}
  L=$PWD/bundle/lib; [ $lib = fence ] && L=$PWD/abbase/fence:$PWD/bundle/lib
  echo "== $(date +%T) exchange 2 GPUs mgi $lib MGI_PEER_DIRECT=$p"
  LD_LIBRARY_PATH=$L MGI_PEER_DIRECT=$p timeout 100 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op exchange --gib 2 --variant mgi 2>&1 | grep -E "^exchange|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
done
done
L=$PWD/abbase/fence:$PWD/bundle/lib
for op in join groupby; do
  for p in 1 0; do
    echo "== $(date +%T) $op 2 GPUs mgi fence MGI_PEER_DIRECT=$p"
    LD_LIBRARY_PATH=$L MGI_PEER_DIRECT=$p timeout 100 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op $op --gib 2 --variant mgi 2>&1 | grep -E "^$op|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
  done
done
tuned=(env UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
for p in 1 0; do
  echo "== $(date +%T) mgi_gpu_test bench -l 2 -s 64 -b 48 -K 4, fence lib, MGI_PEER_DIRECT=$p"
  LD_LIBRARY_PATH=$L "${tuned[@]}" MGI_PEER_DIRECT=$p MGI_SORTER_BLOCKS=48 MGI_DEV_TILE_BATCH=65528 timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 48 -K 4 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror|TIMEOUT" | cut -c1-300
done

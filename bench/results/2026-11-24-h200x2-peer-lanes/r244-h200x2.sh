#!/usr/bin/env bash
# For the next 2 x H200 session (not run: 2 x H200 was no longer lent when
# it was written). Copy to abbase/ and call with the device tool, carrying
# bundle and abbase; about 2 minutes. The tree after run238-243 makes a
# peer lane's commit and recycle releases at system scope instead of a
# system-scope fence in every sorter thread (MGI_FENCE_OUT) and one before
# each commit / recycle; run238's figures with those fences: Exchange
# 131-139 GB/s with peer lanes against 232-238 through the mover.
#   1. Exchange, MGI_PEER_DIRECT=1 against 0, alternating, 2 GiB a GPU
#   2. Join and GroupBy the same
#   3. peer lanes with 56 and 64 sorter blocks (the most a GPU endpoint
#      takes; more blocks helped: run239)
#   4. #5's device send GPU0 -> GPU1, 64 B, tiles, peer lanes and mover
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=48 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
nvidia-smi -L
for op in exchange exchange join groupby; do
  for p in 1 0; do
    echo "== $(date +%T) $op 2 GPUs mgi MGI_PEER_DIRECT=$p"
    MGI_PEER_DIRECT=$p timeout 100 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op $op --gib 2 --variant mgi 2>&1 | grep -E "^$op|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
  done
done
for v in MGI_SORTER_BLOCKS=56,MGI_WL_MGI_BLOCKS=76 MGI_SORTER_BLOCKS=64,MGI_WL_MGI_BLOCKS=68; do
  echo "== $(date +%T) exchange 2 GPUs mgi MGI_PEER_DIRECT=1 ${v//,/ }"
  env MGI_PEER_DIRECT=1 ${v//,/ } timeout 100 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op exchange --gib 2 --variant mgi 2>&1 | grep -E "^exchange|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
done
tuned=(env UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
for p in 1 0; do
  echo "== $(date +%T) mgi_gpu_test bench -l 2 -s 64 -b 48 -K 4, MGI_PEER_DIRECT=$p"
  "${tuned[@]}" MGI_PEER_DIRECT=$p MGI_SORTER_BLOCKS=48 MGI_DEV_TILE_BATCH=65528 timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 48 -K 4 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror|TIMEOUT" | cut -c1-300
done

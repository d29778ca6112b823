#!/usr/bin/env bash
# run238 (2 x H200): peer lanes between two GPUs: the A/B at 2 GiB a GPU
# (peer lanes + receive by reference / peer lanes alone / the mover),
# #5's device send GPU0 -> GPU1 against the copy engine, the profile
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0
nvidia-smi -L; nvidia-smi topo -m | head -4
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=48 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for op in exchange join groupby; do
  for v in MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1 MGI_PEER_DIRECT=0,MGI_RECV_ZCOPY=0 MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=0 MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1 MGI_PEER_DIRECT=0,MGI_RECV_ZCOPY=0; do
    echo "== $(date +%T) $op 2 GPUs mgi ${v//,/ }"
    env ${v//,/ } timeout 100 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op $op --gib 2 --variant mgi 2>&1 | grep -E "^$op|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
  done
done
tuned=(env UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
for p in 1 0; do
  for s in 64 16; do
    n=67108864; [ $s = 16 ] && n=268435456
    echo "== $(date +%T) mgi_gpu_test bench -l 2 -s $s -b 48 -K 4, 48 sorter blocks, MGI_PEER_DIRECT=$p MGI_RECV_ZCOPY=$p"
    "${tuned[@]}" MGI_PEER_DIRECT=$p MGI_RECV_ZCOPY=$p MGI_SORTER_BLOCKS=48 MGI_DEV_TILE_BATCH=65528 timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b 48 -K 4 -T 40 2>&1 | grep -E "^send_bw|user blocks|FAIL|rror|TIMEOUT" | cut -c1-300
  done
done
echo "== $(date +%T) exchange 2 GPUs mgi MGI_PEER_DIRECT=1 MGI_RECV_ZCOPY=1, profile"
env MGI_PEER_DIRECT=1 MGI_RECV_ZCOPY=1 MGI_WL_MGI_PROFILE=1 timeout 100 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --op exchange --gib 2 --variant mgi 2>&1 | grep -E "^exchange|^# mgi|rror" | cut -c1-600
for v in MGI_SORTER_BLOCKS=32,MGI_WL_MGI_BLOCKS=100 MGI_SORTER_BLOCKS=40,MGI_WL_MGI_BLOCKS=92 BASE=1; do
  echo "== $(date +%T) exchange 2 GPUs mgi MGI_PEER_DIRECT=1 MGI_RECV_ZCOPY=1 ${v//,/ }"
  env MGI_PEER_DIRECT=1 MGI_RECV_ZCOPY=1 ${v//,/ } timeout 100 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op exchange --gib 2 --variant mgi 2>&1 | grep -E "^exchange|rror" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
done

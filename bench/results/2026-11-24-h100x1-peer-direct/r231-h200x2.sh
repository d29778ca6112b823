#!/usr/bin/env bash
# Written for the next 2 x H200 session; 2 x H200 came later in the same
# session, and its parts ran as r238.sh .. r242.sh instead (with the
# runs' order changed): ../2026-11-24-h200x2-peer-lanes/. Copy to abbase/ and call with the device tool,
# carrying bundle and abbase; about 8-10 minutes:
#   1. the harness, every variant, one invocation per op and Zipf (#6);
#      run.sh now sets MGI_PEER_DIRECT=1
#   2. MGI_PEER_DIRECT=1 MGI_RECV_ZCOPY=1 (run.sh's now) against peer
#      lanes copied into final rings and against neither, at 2 GiB a GPU,
#      alternating, each op
#   3. the block split with both: 48 + 48 against 40 + 92, 32 + 100 and
#      48 + 84 (the stand-in preferred fewer sorter blocks: run233)
#   4. #5's device send GPU0 -> GPU1 against the copy engine, 64 B and
#      16 B, tiles, with peer lanes and receive by reference, and without
#   5. where the Exchange's time goes between the GPUs: the profile and
#      the sorters' info lines
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
nvidia-smi -L; nvidia-smi topo -m | head -4
MGI_WL_TIMEOUT=150 MGI_WL_ITERS=3 MGI_WL_PHASES="ops zipf" \
  bash bundle/run/workloads.sh $O/wl 2 2 2>&1 |
  grep -E "^(exchange|groupby|join)|^== |FAIL|rror" | cut -c1-400
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=48 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for op in exchange join groupby; do
  for v in MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1 MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=0 MGI_PEER_DIRECT=0,MGI_RECV_ZCOPY=0 MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=1 MGI_PEER_DIRECT=1,MGI_RECV_ZCOPY=0 MGI_PEER_DIRECT=0,MGI_RECV_ZCOPY=0; do
    echo "== $(date +%T) $op 2 GPUs mgi ${v//,/ }"
    env ${v//,/ } timeout 120 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op $op --gib 2 --variant mgi 2>&1 | grep -E "^$op|rror" | cut -c1-400
  done
done
for op in exchange join; do
  for v in BASE=1 MGI_SORTER_BLOCKS=40,MGI_WL_MGI_BLOCKS=92 MGI_SORTER_BLOCKS=32,MGI_WL_MGI_BLOCKS=100 MGI_SORTER_BLOCKS=48,MGI_WL_MGI_BLOCKS=84 BASE=1 MGI_SORTER_BLOCKS=40,MGI_WL_MGI_BLOCKS=92; do
    echo "== $(date +%T) $op 2 GPUs mgi MGI_PEER_DIRECT=1 MGI_RECV_ZCOPY=1 ${v//,/ }"
    env MGI_PEER_DIRECT=1 MGI_RECV_ZCOPY=1 ${v//,/ } timeout 120 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op $op --gib 2 --variant mgi 2>&1 | grep -E "^$op|# mgi: |rror" | cut -c1-300
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
echo "== $(date +%T) exchange 2 GPUs mgi MGI_PEER_DIRECT=1, profile and info lines"
env MGI_PEER_DIRECT=1 MGI_RECV_ZCOPY=1 UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=5 MGI_WL_MGI_PROFILE=1 timeout 120 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --op exchange --gib 2 --variant mgi 2>&1 |
  grep -E "^exchange|^# mgi|rror|sorter totals|sorter rounds" | sed 's/^\[[^]]*\] *//' | cut -c1-700 | head -60

#!/usr/bin/env bash
# run480 (2 x H200): with the lane owners apart (MGI_LANE_APART=1, the
# default now), the copy engine's share: UCX_CUDA_MGI_BATCH=y against =n,
# MGI_RECV_ZCOPY=1, MGI_MOVER_FLUSHES=32; info log with BATCH=y; GroupBy
# and Join with BATCH=y / n; device send of 64-byte tuples between two
# processes with the owners apart or not. Called with the device tool,
# bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-poll/r480.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
wl() { timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op "$@" 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'; }
info() { # NAME ENV...: one exchange with info logs, its lane and mover lines
  local n=$1; shift
  env "$@" UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-$n.txt 2>&1
  echo "-- $n: $*"
  grep -E "^exchange|sorter rounds|a lane's owner" $O/info-$n.txt | sed 's/.*INFO  //;s/ sf=.*partition_ms=0.000//' | cut -c1-700
  grep -E "mover \(rank" $O/info-$n.txt | grep -v " 0 segments/s" | sed 's/.*INFO  //' | awk 'NR%3==2' | sed 's/ puts so far.*flushes done/ ... flushes done/;s/ stage segments put by reference;.*//' | cut -c1-400 | tail -4
}
nvidia-smi -L
echo "== $(date +%T) [${SECONDS}s] 1 exchange settings, in turn"
for r in 1 2; do
  for v in "UCX_CUDA_MGI_BATCH=n" "UCX_CUDA_MGI_BATCH=y" "UCX_CUDA_MGI_BATCH=y MGI_RECV_ZCOPY=1" "UCX_CUDA_MGI_BATCH=y MGI_MOVER_FLUSHES=32" "UCX_CUDA_MGI_BATCH=n MGI_MOVER_FLUSHES=32"; do
    echo "- $v"; (export $v; wl exchange)
  done
done
echo "== $(date +%T) [${SECONDS}s] 2 info log"
info batch-y UCX_CUDA_MGI_BATCH=y
echo "== $(date +%T) [${SECONDS}s] 3 groupby and join, BATCH y / n"
for op in groupby join; do
  for v in y n n y; do echo "- UCX_CUDA_MGI_BATCH=$v"; UCX_CUDA_MGI_BATCH=$v wl $op; done
done
echo "== $(date +%T) [${SECONDS}s] 4 device send 64 B, two processes"
for v in "MGI_LANE_APART=1" "MGI_LANE_APART=0" "MGI_LANE_APART=1 UCX_CUDA_MGI_BATCH=y" "MGI_LANE_APART=1" "MGI_LANE_APART=0" "MGI_LANE_APART=1 UCX_CUDA_MGI_BATCH=y"; do
  echo "- $v"
  (export $v UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SEND_ZCOPY=0 MGI_STAGE_DEPTH=16 MGI_DEV_TILE_BATCH=65528
   timeout 60 $B/mgi_launch -n 2 -t 55 -- $B/mgi_gpu_test bench -s 64 -n 67108864 -b 64 -K 4 -T 40 2>&1 | grep -E "^send_bw 64|FAIL|rror|TIMEOUT" | cut -c1-300)
done
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run278: MGI_MOVER_STREAMS (a flush's in-process copies on one of N streams)
# and MGI_MOVER_BATCH, on #5's device send between two endpoints of one
# process (the mover's cudaMemcpyAsync path), alternating; then the mover's
# info line of each; then the stand-in Exchange (UCP puts) with info.
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
pat='^send_bw [0-9]|FAIL|rror|TIMEOUT|timeouts 0x[1-9]'
for r in 1 2; do for S in 64 16; do for v in ${VS:-"MGI_MOVER_STREAMS=1" "MGI_MOVER_STREAMS=4" "MGI_MOVER_STREAMS=4 MGI_MOVER_BATCH=128"}; do
  echo "== $(date +%T) bench -l 2 $S B $v"
  "${set_[@]}" $v timeout 40 $B/mgi_gpu_test bench -l 2 -s $S -n 33554432 -b 32 -K 4 -T 30 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "$pat" /tmp/o.txt | cut -c1-200; done; done; done
for v in "MGI_MOVER_STREAMS=1" "MGI_MOVER_STREAMS=4" "MGI_MOVER_STREAMS=4 MGI_MOVER_BATCH=128"; do
  echo "== $(date +%T) info: bench -l 2 64 B $v"
  "${set_[@]}" $v UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=20 timeout 40 $B/mgi_gpu_test bench -l 2 -s 64 -n 33554432 -b 32 -K 4 -T 30 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "$pat" /tmp/o.txt | cut -c1-200; grep "mover (rank" /tmp/o.txt | grep -v " 0 segments/s" | tail -2 | sed 's/.*mover/mover/' | cut -c1-600; done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "== MPS daemon started"; sleep 1
for r in 1 2; do for v in "MGI_MOVER_BATCH=32" "MGI_MOVER_BATCH=128"; do
  X=""; [ $r = 2 ] && X="UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=50"
  echo "== $(date +%T) stand-in exchange $v $X"
  "${set_[@]}" $v $X MGI_WL_SHARE_GPUS=1 MGI_STAGE_GROUPS=2 timeout 60 $B/mgi_workloads --op exchange --variant mgi --gpus 2 --gib 0.5 --iters 3 --warmup 1 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "total_ms|# mgi:|rror|FAIL" /tmp/o.txt | grep -v INFO | sed 's/sf=.*partition/partition/' | cut -c1-300
  grep "mover (rank" /tmp/o.txt | grep -v " 0 segments/s" | tail -2 | sed 's/.*mover/mover/' | cut -c1-600; done; done
echo quit | nvidia-cuda-mps-control; sleep 1

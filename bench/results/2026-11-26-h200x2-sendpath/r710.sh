#!/usr/bin/env bash
# run710 (2 x H200): the review mend (the first sorter block that takes
# stage rings computed once at the sorter's start, mgi_gpu_stage_first,
# instead of every round). Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-sendpath/r710.sh
#   1. device send 64 B GPU0 -> GPU1 (run510's settings), the workloads'
#      MGI Exchange / GroupBy / Join (run.sh's settings), the lane owners'
#      start log line
#   2. MGI's GPU suite (bundle/run/mgi-gpu-suite.sh)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) [${SECONDS}s] 1 device send, workloads"
for s in 64 64; do
  UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
    MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 \
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n 67108864 -b 64 -K 4 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror|TIMEOUT" | cut -c1-200
done
W="MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4"
for op in exchange groupby join; do
  (export $W; timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-200)
done
(export $W UCX_LOG_LEVEL=info; timeout 90 $B/mgi_workloads --gpus 2 --iters 1 --warmup 0 --gib 0.25 --variant mgi --op exchange 2>&1 | grep -E "MGI_LANE_APART" | cut -c60-250 | sort -u)
echo "== $(date +%T) [${SECONDS}s] 2 MGI GPU suite"
MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -12
echo "== $(date +%T) done in ${SECONDS}s"

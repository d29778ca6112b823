#!/usr/bin/env bash
# run540 (asked for 2 x H200; the device tool gave 2 x H100 80GB HBM3,
# see the log's nvidia-smi lines): the tree after the stop counters of runs 430-460
# left libmgi: MGI's GPU suite, the harness's ops, then settings around
# run.sh's new ones (40 sorter + 92 user blocks), each against the base
# in turn. Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-poll/r540.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) [${SECONDS}s] 1 MGI GPU suite"
MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -12
echo "== $(date +%T) [${SECONDS}s] 2 harness ops"
MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops" bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E '^(exchange|groupby|join) ' | grep -E "^[a-z]+ +-" | cut -c1-300
cp /tmp/wl/ratios.txt $O/ratios-ops.txt
echo "== $(date +%T) [${SECONDS}s] 3 settings around run.sh's, in turn with the base"
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
wl() { timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op "$@" 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-150; }
for v in "MGI_SORTER_THREADS=768" "MGI_STAGE_DEPTH=64" "MGI_SEND_WAIT_ROUNDS=32" "MGI_MOVER_BATCH=64" \
         "MGI_WL_MGI_TILE=8" "MGI_WL_MGI_RECV_EVERY=4" "MGI_WL_MGI_RECV_EVERY=16" \
         "MGI_SORTER_BLOCKS=44 MGI_WL_MGI_BLOCKS=88" "MGI_SORTER_BLOCKS=36 MGI_WL_MGI_BLOCKS=96"; do
  for op in exchange join; do
    echo "- $op base"; wl $op
    echo "- $op $v"; (export $v; wl $op)
  done
done
echo "== $(date +%T) done in ${SECONDS}s"

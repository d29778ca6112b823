#!/usr/bin/env bash
# run1000 (2 GPUs): the tree of 669388e from the bundle: the transport's GPU
# suite and MGI's GPU suite, then device send GPU0 -> GPU1 (one process) and
# one Exchange with the mover's info lines every few ms (what it waits for).
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mover/r1000.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) transport GPU suite"
timeout 280 bash bundle/run/gpu-suite.sh /tmp/gs > $O/gtest-suite.txt 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests? ran" $O/gtest-suite.txt | head -20
echo "== $(date +%T) MGI GPU suite"
MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -6
ds() {  # device send, one process, run510's settings, then VAR=value settings
  ( export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
    b=64; n=134217728; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s ${S:-64} -n $n -b $b -K 4 -T 40 2>&1 )
}
BIG="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32"
for a in "" "$BIG"; do
  f=$O/ds${a:+-big}.txt
  echo "== $(date +%T) device send ${a:-run510}"
  ds $a UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=4 > $f 2>&1
  grep -E '^send_bw 64' $f | cut -c1-140
  grep -E "mover \(rank|lanes from other|busy issue|whole stage moves|sorter totals" $f | sed 's/.*INFO  //' | cut -c1-900
done
echo "== $(date +%T) Exchange, one iteration, info every 2 ms"
( export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
    MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 \
    UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2
  timeout 90 $B/mgi_workloads --gpus 2 --iters 1 --warmup 0 --gib 2 --variant mgi --op exchange > $O/exchange-info.txt 2>&1 )
grep -E "^[a-z]+ +mgi" $O/exchange-info.txt | cut -c1-200
grep -E "mover \(rank" $O/exchange-info.txt | sed 's/.*INFO  //' | cut -c1-900 | head -30
echo "== $(date +%T) done in ${SECONDS}s"

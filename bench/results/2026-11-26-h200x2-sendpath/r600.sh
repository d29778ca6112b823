#!/usr/bin/env bash
# run600 (2 x H200): HEAD 116aac0 on the GPU. Called with the device tool,
# bundle/ carried:
#   LIMIT=400 bash bench/results/2026-11-26-h200x2-sendpath/r600.sh
#   1. copy engine: copies GPU0 -> GPU1 by size, one by one and batched
#   2. device send 64 B, one process: settings, then info logs of one run
#   3. the workloads' MGI Exchange with the user blocks' profile
#   4. cuda_mgi's whole gtest suite, 5. MGI's GPU suite
O=${OUT:-/tmp}; LIMIT=${LIMIT:-400}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
nvidia-smi -L
ds() {  # device send, one process: extra VAR=value settings as arguments
  ( export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
    b=64; for v in "$@"; do case $v in -b*) b=${v#-b};; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s ${S:-64} -n 67108864 -b $b -K 4 -T 40 2>&1 )
}
if part "1 copy sizes"; then
  timeout 60 $B/mgi_gpu_test copy_sizes 2>&1 | tail -12
fi
if part "2 device send 64 B"; then
  for a in "" "MGI_MOVER_FLUSHES=32" "MGI_SEND_ZCOPY=1 MGI_STAGE_DEPTH=32" "MGI_SORTER_BLOCKS=96 -b32" "MGI_SORTER_BLOCKS=40 -b92" "MGI_SORTER_BLOCKS=64 -b32" "MGI_SORTER_THREADS=512" ""; do
    echo "-- settings: ${a:-as run510}"; ds $a | grep -E "^send_bw|FAIL|rror|TIMEOUT" | cut -c1-300
  done
  echo "-- info logs of one run"
  ds UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=3 > $O/ds-info.txt 2>&1
  grep -E "^send_bw" $O/ds-info.txt | cut -c1-300
fi
if part "3 Exchange, profile"; then
  W="MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4"
  (export $W MGI_WL_MGI_PROFILE=1; timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange 2>&1 | grep -E "^exchange|^# mgi|rror" | cut -c1-400)
  (export $W; timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange 2>&1 | grep -E "^exchange|rror" | cut -c1-300)
fi
if part "4 cuda_mgi gtest suite"; then
  timeout 300 bash bundle/run/gpu-suite.sh /tmp/gs > $O/gtest-suite.txt 2>&1; echo "rc=$?"
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED" $O/gtest-suite.txt | tail -20
fi
if part "5 MGI GPU suite"; then
  MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
  grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -12
fi
echo "== $(date +%T) done in ${SECONDS}s"

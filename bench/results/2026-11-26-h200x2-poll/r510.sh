#!/usr/bin/env bash
# run510 (2 x H200): the tree with the poll change, the lane owners apart
# and run.sh's 40 sorter + 92 user blocks. Called with the device tool,
# bundle/ carried:
#   LIMIT=420 bash bench/results/2026-11-26-h200x2-poll/r510.sh
#   1. the harness (ops, then Zipf), run.sh's defaults
#   2. device send of 64- and 16-byte tuples GPU0 -> GPU1, one process
#   3. cuda_mgi's whole gtest suite (bundle/run/gpu-suite.sh)
#   4. MGI's GPU suite (bundle/run/mgi-gpu-suite.sh)
O=${OUT:-/tmp}; LIMIT=${LIMIT:-420}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
nvidia-smi -L
if part "1 harness ops + zipf"; then
  MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops zipf" \
    bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E '^(exchange|groupby|join) ' | grep -E "^[a-z]+ +-|^[a-z]+ +[0-9]" | cut -c1-300
  cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null
  tar czf $O/wl.tgz -C /tmp wl 2>/dev/null
fi
if part "2 device send, one process"; then
  for s in 64 16 64 16; do
    UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 \
      timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n 67108864 -b 64 -K 4 -T 40 2>&1 | grep -E "^send_bw|FAIL|rror|TIMEOUT" | cut -c1-300
  done
fi
if part "3 cuda_mgi gtest suite"; then
  timeout 300 bash bundle/run/gpu-suite.sh /tmp/gs > $O/gtest-suite.txt 2>&1; echo "rc=$?"
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED" $O/gtest-suite.txt | tail -20
fi
if part "4 MGI GPU suite"; then
  MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
  grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -12
fi
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run330 (2 x H200): the final tree: cuda_mgi no longer reads the local
# memh of zcopy operations (UCP 1.13 passes a stale one: run310's Join at
# Zipf 1.5 died in uct_cuda_mgi_ep_put_zcopy), fences, streams per peer.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-memh/r330.sh
#   1. cuda_mgi's whole gtest suite (bundle/run/gpu-suite.sh)
#   2. MGI's GPU suite (bundle/run/mgi-gpu-suite.sh)
#   3. the Zipf sweep of the harness, Join and Exchange (run.sh's set)
#   4. #5's device send GPU0 -> GPU1, 64 B and 16 B, one process
O=${OUT:-/tmp}; LIMIT=${LIMIT:-420}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
nvidia-smi -L
if part "1 cuda_mgi gtest suite"; then
  timeout 280 bash bundle/run/gpu-suite.sh /tmp/gs > $O/gtest-suite.txt 2>&1; echo "rc=$?"
  grep -E "^\[  (PASSED|FAILED) |^\[==========\]|FAILED|^  " $O/gtest-suite.txt | tail -60
fi
if part "2 MGI GPU suite"; then
  MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
  grep -E "^(FAIL|SKIP)|^== " $O/mgi-suite.txt | tail -12
fi
if part "3 harness zipf, join and exchange"; then
  MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="zipf" MGI_WL_ZIPF_OPS="join exchange" \
    bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E '^(exchange|join)|^== |FAIL|rror|signal' | cut -c1-300
  cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null
  tar czf $O/wl.tgz -C /tmp wl 2>/dev/null
fi
if part "4 device send"; then
  for s in 64 16; do
    for v in "MGI_X=0" "MGI_MOVER_BATCH=64"; do
      echo "-- $s B one process, 64 + 64 blocks: $v"
      timeout 60 env UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SORTER_BLOCKS=64 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
        MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 \
        MGI_DEV_TILE_BATCH=65528 $v $B/mgi_gpu_test bench -l 2 -s $s -n 67108864 -b 64 -K 4 -T 40 2>&1 |
        grep -E "^send_bw|FAIL|rror|TIMEOUT" | cut -c1-300
    done
  done
fi
echo "== $(date +%T) done in ${SECONDS}s"

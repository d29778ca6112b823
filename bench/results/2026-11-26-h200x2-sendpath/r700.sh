#!/usr/bin/env bash
# run700 (2 x H200): the tree with MGI_OWNER_HELP=0 (the default), the
# lane owners apart and run.sh's 40 sorter + 92 user blocks. Called with
# the device tool, bundle/ carried:
#   LIMIT=330 bash bench/results/2026-11-26-h200x2-sendpath/r700.sh
#   1. the harness (ops, then Zipf), run.sh's defaults
#   2. device send of 64- and 16-byte tuples GPU0 -> GPU1, one process
#   3. MGI's GPU suite (bundle/run/mgi-gpu-suite.sh); cuda_mgi is as in
#      run600, whose gtest suite passed
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
  # run510's mover settings, then larger mover copies (BIG)
  BIG="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32"
  for a in "" "$BIG"; do
    for s in 64 16 64 16; do
      ( export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
          MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
        for v in $a; do export "$v"; done
        echo "-- ${a:-as run510}: $(timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n 67108864 -b 64 -K 4 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror|TIMEOUT" | cut -c1-300)" )
    done
  done
fi
if part "3 MGI GPU suite"; then
  MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
  grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -12
fi
echo "== $(date +%T) done in ${SECONDS}s"

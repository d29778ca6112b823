#!/usr/bin/env bash
# run360 (2 x H200): cuda_mgi posts the direct copies that arrive while
# copies are in flight together (cuMemcpyBatchAsync, UCX_CUDA_MGI_BATCH).
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-batch/r360.sh
#   1. gtest: batched_ops on every path setting, the fence, the memh test,
#      put zcopy of every size without batching
#   2. ucx_perftest put_bw 256 KiB / 1 MiB / 4 MiB, cuda_mgi beside
#      cuda_ipc, UCX_CUDA_MGI_BATCH=y and n
#   3. the MGI Exchange (run.sh's set), y and n in turn, twice
#   4. device send 64 B between two processes (UCP puts), y and n
#   5. the harness (ops) with the default (y)
O=${OUT:-/tmp}; LIMIT=${LIMIT:-300}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export PATH=$B:$PATH LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
nvidia-smi -L
if part "1 gtest"; then
  UCX_LOG_LEVEL=info timeout 200 $B/gtest_cuda_mgi --gtest_filter='*batched_ops*:uct_cuda_mgi.fence_orders_streams:uct_cuda_mgi.zcopy_ignores_memh:*put_zcopy_all_sizes/no_batch:*many_outstanding/default' > $O/gtest.txt 2>&1; echo "rc=$?"
  grep -E "^\[ *(OK|FAILED|PASSED) |^  [0-9]|byte-exact|batches" $O/gtest.txt | cut -c1-200 | tail -40
fi
if part "2 perftest put_bw"; then
  for b in y n; do
    echo "-- UCX_CUDA_MGI_BATCH=$b"
    UCX_CUDA_MGI_BATCH=$b MGI_PERF_MODES=put_bw bash bundle/run/perftest_compare.sh 262144,1048576,4194304 2 2>&1 | grep -v '^JSON' | tail -4
  done
fi
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
if part "3 exchange"; then
  for b in y n y n; do
    echo "-- UCX_CUDA_MGI_BATCH=$b"
    UCX_CUDA_MGI_BATCH=$b timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange 2>&1 | grep -E "^exchange +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'
  done
  UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-exchange.txt 2>&1
  grep -E "^exchange|batches|mover \(rank" $O/info-exchange.txt | grep -v " 0 segments/s" | sed 's/.*INFO  //' | cut -c1-300 | tail -8
fi
if part "4 device send, two processes"; then
  for b in y n y n; do
    echo "-- UCX_CUDA_MGI_BATCH=$b"
    timeout 60 env UCX_CUDA_MGI_BATCH=$b UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SEND_ZCOPY=0 MGI_STAGE_DEPTH=16 MGI_DEV_TILE_BATCH=65528 \
      $B/mgi_launch -n 2 -t 55 -- $B/mgi_gpu_test bench -s 64 -n 67108864 -b 64 -K 4 -T 40 2>&1 | grep -E "^send_bw 64|FAIL|rror|TIMEOUT" | cut -c1-300
  done
fi
if part "5 harness ops"; then
  MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops" \
    bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E '^(exchange|groupby|join)  |^== |FAIL|rror|signal' | grep -E "^== |mgi|nccl|FAIL|rror|signal" | cut -c1-300 | tail -16
  cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null
fi
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run380 (2 x H200): a cuda_mgi flush completes once the copies posted
# before it have (it waited for the endpoint to have no copy in flight).
# The bundle carries the transport before the change as well, in
# bundle/lib/ucx-3920df1 (UCX_MODULE_DIR picks it): old and new in turn
# on the same machine. Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-flush/r380.sh
#   1. gtest: the new flush test (new transport, then the old one, which
#      must fail it), fences, batches, puts of every size
#   2. the MGI Exchange (run.sh's set), new and old in turn, twice; info
#      logs (the mover's lines) with the new one
#   3. device send 64 B between two processes, new and old in turn, twice
#   4. the harness (ops, then Zipf) with the new transport
O=${OUT:-/tmp}; LIMIT=${LIMIT:-240}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
OLD=$PWD/bundle/lib/ucx-3920df1
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
nvidia-smi -L
if part "1 gtest"; then
  timeout 120 $B/gtest_cuda_mgi --gtest_filter='uct_cuda_mgi.flush_waits_only_for_earlier:uct_cuda_mgi.fence_orders_streams:*batched_ops/default:*many_outstanding/default:*put_zcopy_all_sizes/default:ucp_cuda_mgi.*' 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED) |^  [a-z0-9]" | cut -c1-200
  echo "-- the flush test against the transport before the change (UCX_MODULE_DIR=$OLD)"
  UCX_MODULE_DIR=$OLD timeout 60 $B/gtest_cuda_mgi --gtest_filter='uct_cuda_mgi.flush_waits_only_for_earlier' 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED) |flush completed|rror" | cut -c1-250 | head -6
fi
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
tl() { if [ "$1" = old ]; then echo "UCX_MODULE_DIR=$OLD"; else echo "MGI_X=0"; fi; }
if part "2 exchange"; then
  for v in new old new old; do
    echo "-- $v"
    env $(tl $v) timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange 2>&1 | grep -E "^exchange +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'
  done
  UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-exchange.txt 2>&1
  grep -E "^exchange|mover \(rank" $O/info-exchange.txt | grep -v " 0 segments/s" | sed 's/.*INFO  //' | cut -c1-420 | tail -8
fi
if part "3 device send, two processes"; then
  for v in new old new old; do
    echo "-- $v"
    env $(tl $v) UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SEND_ZCOPY=0 MGI_STAGE_DEPTH=16 MGI_DEV_TILE_BATCH=65528 timeout 60 \
      $B/mgi_launch -n 2 -t 55 -- $B/mgi_gpu_test bench -s 64 -n 67108864 -b 64 -K 4 -T 40 2>&1 | grep -E "^send_bw 64|FAIL|rror|TIMEOUT" | cut -c1-300
  done
fi
if part "4 harness ops + zipf"; then
  MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops zipf" \
    bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E '^(exchange|groupby|join) ' | grep -E "^[a-z]+ +-|^[a-z]+ +[0-9]" | cut -c1-300
  cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null
  tar czf $O/wl.tgz -C /tmp wl 2>/dev/null
fi
echo "== $(date +%T) done in ${SECONDS}s"

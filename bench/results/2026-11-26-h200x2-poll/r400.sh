#!/usr/bin/env bash
# run400 (2 x H200): cuda_mgi's progress asks only the oldest copy in
# flight of each stream (a later one of the same stream cannot be done
# before it). The transport of d3eb224 (every copy in flight asked each
# progress call) rides along in bundle/lib/ucx-old/ and is copied over the
# module file for the "old" runs (UCX loads the modules beside libucs
# before UCX_MODULE_DIR). Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-poll/r400.sh
#   1. gtest: cuda_mgi's suites on the new transport
#   2. the MGI Exchange (run.sh's set), old / new, each with
#      UCX_CUDA_MGI_BATCH=n and =y, in turn, three times; info logs
#   3. the mover's settings on the new transport: MOVER_BATCH 64,
#      PEER_STREAMS 2
#   4. GroupBy and Join, old / new (BATCH=n and =y)
#   5. device send 64 B between two processes, old / new / new+BATCH
O=${OUT:-/tmp}; LIMIT=${LIMIT:-400}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
M=$PWD/bundle/lib/ucx/libuct_cuda_mgi.so.0.0.0
cp $M /tmp/new.so
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
# use old|new [B]: the transport, and UCX_CUDA_MGI_BATCH=y with B
use() { if [ "$1" = old ]; then cp bundle/lib/ucx-old/libuct_cuda_mgi.so.0.0.0 $M; else cp /tmp/new.so $M; fi
        if [ "$2" = B ]; then export UCX_CUDA_MGI_BATCH=y; else export UCX_CUDA_MGI_BATCH=n; fi
        echo "-- $1 BATCH=$UCX_CUDA_MGI_BATCH ($(md5sum < $M | cut -c1-8))"; }
wl() { timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op "$@" 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'; }
nvidia-smi -L
if part "1 gtest (new)"; then
  use new
  timeout 150 $B/gtest_cuda_mgi --gtest_filter='uct_cuda_mgi*:ucp_cuda_mgi*' 2>&1 | grep -E "^\[ *(FAILED|PASSED|SKIPPED) |^\[==========\]|tests? ran" | cut -c1-200 | tail -12
fi
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
if part "2 exchange: old / new, BATCH n / y, in turn"; then
  for r in 1 2 3; do
    for v in "new" "old" "new B" "old B"; do use $v; wl exchange; done
  done
  for v in "new" "new B"; do
    use $v
    UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-exchange-${v// /}.txt 2>&1
    grep -E "^exchange|mover \(rank|sorter rounds|cuda_mgi.*batch" $O/info-exchange-${v// /}.txt | grep -v " 0 segments/s" | sed 's/.*INFO  //' | cut -c1-420 | tail -7
  done
fi
if part "3 the mover's settings (new)"; then
  for v in "new" "new B"; do
    use $v
    echo "- MGI_MOVER_BATCH=64"; MGI_MOVER_BATCH=64 wl exchange; MGI_MOVER_BATCH=64 wl exchange
    echo "- UCX_CUDA_MGI_PEER_STREAMS=2"; UCX_CUDA_MGI_PEER_STREAMS=2 wl exchange; UCX_CUDA_MGI_PEER_STREAMS=2 wl exchange
  done
fi
if part "4 groupby and join: old / new, BATCH n / y"; then
  for op in groupby join; do
    for v in "new" "old" "new B" "old B" "old B" "new B" "old" "new"; do use $v; wl $op; done
  done
fi
if part "5 device send 64 B, two processes"; then
  for v in "new" "old" "new B" "new" "old" "new B"; do
    use $v
    UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SEND_ZCOPY=0 MGI_STAGE_DEPTH=16 MGI_DEV_TILE_BATCH=65528 timeout 60 \
      $B/mgi_launch -n 2 -t 55 -- $B/mgi_gpu_test bench -s 64 -n 67108864 -b 64 -K 4 -T 40 2>&1 | grep -E "^send_bw 64|FAIL|rror|TIMEOUT" | cut -c1-300
  done
fi
use new
echo "== $(date +%T) done in ${SECONDS}s"

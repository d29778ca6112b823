#!/usr/bin/env bash
# run320 (2 x H200): cuda_mgi's copies to a peer GPU in turn on several
# streams (UCX_CUDA_MGI_PEER_STREAMS). Called with the device tool, bundle/
# carried:  bash bench/results/2026-11-26-h200x2-peer-streams/r320.sh
#   1. gtest: the fence test and every put/get test with 4 streams a peer
#   2. ucx_perftest put_bw 1 MiB / 4 MiB, cuda_mgi beside cuda_ipc, with
#      1 and with 4 streams a peer
#   3. Exchange (mgi only, run.sh's set) with 1 / 2 / 4 / 8 streams a
#      peer, alternating twice; info logs (the mover's lines) at 1 and 4
#   4. device send 64 B GPU0 -> GPU1 in two processes (UCP puts), 1 and 4
#   5. the harness (ops) with the best of part 3
O=${OUT:-/tmp}; LIMIT=${LIMIT:-400}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export PATH=$B:$PATH LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER \
       MGI_TIMEOUT_MS=30000
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
nvidia-smi -L
if part "1 gtest"; then
  timeout 200 $B/gtest_cuda_mgi --gtest_filter='uct_cuda_mgi.fence_orders_streams:paths/uct_cuda_mgi_paths.*/peer_streams' 2>&1 | grep -vE "^\[(vm|[0-9])|UCX  (DIAG|INFO)" | tail -30
fi
if part "2 perftest put_bw"; then
  for ps in 1 4; do
    echo "-- UCX_CUDA_MGI_PEER_STREAMS=$ps"
    UCX_CUDA_MGI_PEER_STREAMS=$ps MGI_PERF_MODES=put_bw bash bundle/run/perftest_compare.sh 1048576,4194304 2 2>&1 | grep -v '^JSON' | tail -4
  done
fi
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
wl() { timeout 60 env "$@" $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange 2>&1 | grep -E "^[a-z]+ +mgi|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300; }
best=1; bestv=0
if part "3 exchange, streams a peer"; then
  for r in 1 2; do
    for ps in 1 2 4 8; do
      echo "-- UCX_CUDA_MGI_PEER_STREAMS=$ps"
      line=$(wl UCX_CUDA_MGI_PEER_STREAMS=$ps); echo "$line"
      v=$(echo "$line" | sed -n 's/.* GB\/s=\([0-9.]*\).*verify=ok.*/\1/p' | head -1)
      if awk "BEGIN{exit !(${v:-0} > $bestv)}"; then best=$ps; bestv=$v; fi
    done
  done
  echo "best: $best streams a peer ($bestv GB/s)"
  for ps in 1 4; do
    echo "-- info logs, UCX_CUDA_MGI_PEER_STREAMS=$ps"
    UCX_CUDA_MGI_PEER_STREAMS=$ps UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-exchange-ps$ps.txt 2>&1
    grep -E "^exchange" $O/info-exchange-ps$ps.txt
    grep -E "mover \(rank" $O/info-exchange-ps$ps.txt | sed 's/.*INFO  //' | cut -c1-520 | tail -6
  done
fi
if part "4 device send, two processes"; then
  for ps in 1 4 1 4; do
    echo "-- 64 B two processes, 64 + 64 blocks, UCX_CUDA_MGI_PEER_STREAMS=$ps"
    timeout 60 env UCX_CUDA_MGI_PEER_STREAMS=$ps UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SEND_ZCOPY=0 MGI_STAGE_DEPTH=16 MGI_DEV_TILE_BATCH=65528 \
      $B/mgi_launch -n 2 -t 55 -- $B/mgi_gpu_test bench -s 64 -n 67108864 -b 64 -K 4 -T 40 2>&1 | grep -E "^send_bw 64|FAIL|rror|TIMEOUT" | cut -c1-300
  done
fi
if part "5 harness ops with UCX_CUDA_MGI_PEER_STREAMS=$best"; then
  export UCX_CUDA_MGI_PEER_STREAMS=$best
  MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops" \
    bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E '^(exchange|groupby|join)|^== |FAIL|rror' | cut -c1-300
  cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null
  tar czf $O/wl.tgz -C /tmp wl 2>/dev/null
fi
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run310 (2 x H200): where the mover and the rings bound the Exchange and
# the device send, then the harness with the best set. Called with the
# device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-sweep/r310.sh
# Parts; one that would start after $LIMIT s is skipped and says so.
#   1. Exchange (mgi only, 2 GiB a GPU, 3 iterations) under run.sh's set and
#      one change each: the mover's batch and flushes, stage depth, sort
#      rings, receive by reference, peer lanes, the copied path
#   2. the base and the best of part 1 again, alternating
#   3. one Exchange with info logs every 2 ms (the mover's lines), base and best
#   4. #5's device send GPU0 -> GPU1, 64 B, one process and two, under a
#      few mover settings; 16 B under the best
#   5. the harness (ops, then Zipf) with run.sh's set plus part 2's best
O=${OUT:-/tmp}; LIMIT=${LIMIT:-420}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER \
       MGI_TIMEOUT_MS=30000
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
nvidia-smi -L; nvidia-smi topo -m 2>&1 | head -4
# run.sh's set (bench/workloads/run.sh)
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
wl() { timeout 60 env "$@" $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange 2>&1 | grep -E "^[a-z]+ +mgi|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300; }
declare -A SET=(
  [base]="MGI_X=0"
  [mb64_sd64]="MGI_MOVER_BATCH=64 MGI_STAGE_DEPTH=64"
  [mb64_sd64_w64]="MGI_MOVER_BATCH=64 MGI_STAGE_DEPTH=64 MGI_SEND_WAIT_ROUNDS=64"
  [mb128_sd128]="MGI_MOVER_BATCH=128 MGI_STAGE_DEPTH=128"
  [mf64]="MGI_MOVER_FLUSHES=64"
  [mb64_sd64_mf64]="MGI_MOVER_BATCH=64 MGI_STAGE_DEPTH=64 MGI_MOVER_FLUSHES=64"
  [sr1]="MGI_SORT_RINGS=1"
  [rz_mb64_sd64]="MGI_RECV_ZCOPY=1 MGI_MOVER_BATCH=64 MGI_STAGE_DEPTH=64"
  [copy_mb64]="MGI_SEND_ZCOPY=0 MGI_STAGE_DEPTH=16 MGI_MOVER_BATCH=64"
  [peer]="MGI_PEER_DIRECT=1 MGI_SEND_ZCOPY=0 MGI_STAGE_DEPTH=16"
  [peer_rz]="MGI_PEER_DIRECT=1 MGI_RECV_ZCOPY=1 MGI_SEND_ZCOPY=0 MGI_STAGE_DEPTH=16"
)
ORDER="base mb64_sd64 mb64_sd64_w64 mb128_sd128 mf64 mb64_sd64_mf64 sr1 rz_mb64_sd64 copy_mb64 peer peer_rz"
declare -A GBS
best=base; bestv=0
if part "1 exchange sweep"; then
  for k in $ORDER; do
    echo "-- $k: ${SET[$k]}"
    line=$(wl ${SET[$k]}); echo "$line"
    v=$(echo "$line" | sed -n 's/.* GB\/s=\([0-9.]*\).*verify=ok.*/\1/p' | head -1)
    GBS[$k]=${v:-0}
    if awk "BEGIN{exit !(${v:-0} > $bestv)}"; then best=$k; bestv=$v; fi
  done
  echo "best of part 1: $best ($bestv GB/s)"
fi
if part "2 base and best alternating"; then
  for r in 1 2; do
    for k in base $best; do echo "-- $k: ${SET[$k]}"; wl ${SET[$k]}; done
  done
fi
if part "3 exchange with info logs"; then
  for k in base $best; do
    echo "-- $k: ${SET[$k]}"
    UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 env ${SET[$k]} $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-exchange-$k.txt 2>&1
    grep -E "^exchange" $O/info-exchange-$k.txt
    grep -E "mover \(rank|whole stage moves|sorter rounds" $O/info-exchange-$k.txt | sed 's/.*INFO  //' | cut -c1-600 | tail -12
  done
fi
ds() { timeout 60 env UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SEND_ZCOPY=0 MGI_STAGE_DEPTH=16 MGI_DEV_TILE_BATCH=65528 "$@" 2>&1 | grep -E "^send_bw|FAIL|rror|TIMEOUT" | cut -c1-300; }
if part "4 device send"; then
  for v in "MGI_X=0" "MGI_MOVER_BATCH=64" "MGI_MOVER_FLUSHES=64" "MGI_MOVER_STREAMS=4" "MGI_MOVER_BATCH=64 MGI_MOVER_FLUSHES=64 MGI_MOVER_STREAMS=4" "MGI_PEER_DIRECT=1" "MGI_SEND_ZCOPY=1 MGI_STAGE_DEPTH=64 MGI_MOVER_BATCH=64"; do
    echo "-- 64 B one process, 64 + 64 blocks: $v"
    ds $v $B/mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 64 -K 4 -T 40
  done
  for v in "MGI_X=0" "MGI_MOVER_BATCH=64 MGI_STAGE_DEPTH=64 MGI_SEND_ZCOPY=1"; do
    echo "-- 64 B two processes, 64 + 64 blocks: $v"
    ds $v $B/mgi_launch -n 2 -t 55 -- $B/mgi_gpu_test bench -s 64 -n 67108864 -b 64 -K 4 -T 40
  done
  echo "-- 16 B one process, 64 + 64 blocks"
  ds MGI_X=0 $B/mgi_gpu_test bench -l 2 -s 16 -n 67108864 -b 64 -K 4 -T 40
fi
if part "5 harness ops + zipf with run.sh's set and: ${SET[$best]}"; then
  export ${SET[$best]}
  MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops zipf" \
    bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E '^(exchange|groupby|join)|^== |FAIL|rror' | cut -c1-300
  cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null
  tar czf $O/wl.tgz -C /tmp wl 2>/dev/null
fi
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run620: MGI_OWNER_HELP=0 now the default; what bounds next. Called with
# the device tool, bundle/ carried:
#   LIMIT=300 bash bench/results/2026-11-26-h200x2-sendpath/r620.sh
#   1. device send 64 B GPU0 -> GPU1, one process: mover batch / flushes,
#      stage depth, sorter blocks (run510's settings otherwise)
#   2. the workloads' MGI Exchange: the same, and the user blocks' profile
#   3. info logs of the Exchange
O=${OUT:-/tmp}; LIMIT=${LIMIT:-300}
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
wl() {  # the workloads' MGI variant with run.sh's settings, then VAR=value settings
  ( export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    op=$1; shift; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|rror|^# mgi profile" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300 )
}
if part "1 device send 64 B"; then
  for a in "MGI_OWNER_HELP=0" "MGI_MOVER_BATCH=64" "MGI_MOVER_BATCH=64 MGI_SORT_DEPTH=512" "MGI_MOVER_FLUSHES=32" "MGI_STAGE_DEPTH=32" "MGI_RECV_ZCOPY=1" "MGI_SORT_RINGS=2" "MGI_SORTER_BLOCKS=80 -b48" "MGI_SORTER_BLOCKS=48 -b80" "MGI_OWNER_HELP=0"; do
    echo "-- $a: $(ds $a | grep -E "^send_bw 64|FAIL|rror|TIMEOUT|refus" | cut -c1-200)"
  done
  echo "-- 16 B: $(S=16 ds | grep -E "^send_bw 16|FAIL|rror|TIMEOUT|refus" | cut -c1-200)"
  echo "-- 96 + 36 blocks, whole output:"; ds MGI_SORTER_BLOCKS=96 -b36 | tail -5 | cut -c1-300
fi
if part "2 workloads"; then
  for a in "MGI_OWNER_HELP=0" "MGI_MOVER_BATCH=64" "MGI_MOVER_FLUSHES=32" "UCX_CUDA_MGI_BATCH=y MGI_MOVER_FLUSHES=32" "MGI_SORTER_BLOCKS=48 MGI_WL_MGI_BLOCKS=84" "MGI_SORTER_BLOCKS=32 MGI_WL_MGI_BLOCKS=100" "MGI_STAGE_DEPTH=64" "MGI_OWNER_HELP=0"; do
    echo "-- exchange $a: $(wl exchange $a)"
  done
  echo "-- profile:"; wl exchange MGI_WL_MGI_PROFILE=1
fi
if part "3 info logs, Exchange"; then
  (export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2
   timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-exchange.txt 2>&1)
  grep -E "^exchange" $O/info-exchange.txt | cut -c1-200
fi
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run610: MGI_OWNER_HELP (whole moves a lane's owner copies for others in
# a round its lanes moved: 1 as before, 0 none) and MGI_RECV_ZCOPY, in
# turn on one machine. Called with the device tool, bundle/ carried:
#   LIMIT=300 bash bench/results/2026-11-26-h200x2-sendpath/r610.sh
#   1. device send 64 B GPU0 -> GPU1, one process (run510's settings)
#   2. the workloads' MGI Exchange, GroupBy, Join (run.sh's settings)
#   3. info logs of device send with the faster setting
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
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-200 )
}
if part "1 device send 64 B"; then
  for r in 1 2; do
    for a in "MGI_OWNER_HELP=1" "MGI_OWNER_HELP=0" "MGI_OWNER_HELP=1 MGI_RECV_ZCOPY=1" "MGI_OWNER_HELP=0 MGI_RECV_ZCOPY=1" "MGI_OWNER_HELP=0 MGI_SORTER_BLOCKS=96 -b36"; do
      echo "-- $a: $(ds $a | grep -E "^send_bw 64|FAIL|rror|TIMEOUT|refus" | cut -c1-200)"
    done
  done
  for a in "MGI_OWNER_HELP=1" "MGI_OWNER_HELP=0"; do
    echo "-- 16 B $a: $(S=16 ds $a | grep -E "^send_bw 16|FAIL|rror|TIMEOUT|refus" | cut -c1-200)"
  done
fi
if part "2 workloads"; then
  for op in exchange join groupby; do
    for a in "MGI_OWNER_HELP=1" "MGI_OWNER_HELP=0" "MGI_OWNER_HELP=0 MGI_RECV_ZCOPY=1" "MGI_OWNER_HELP=0 UCX_CUDA_MGI_BATCH=y" "MGI_OWNER_HELP=1 UCX_CUDA_MGI_BATCH=y" "MGI_OWNER_HELP=1"; do
      echo "-- $op $a: $(wl $op $a)"
    done
  done
fi
if part "3 info logs, device send, owner help 0"; then
  ds MGI_OWNER_HELP=0 UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=3 > $O/ds-info-help0.txt 2>&1
  grep -E "^send_bw 64" $O/ds-info-help0.txt | cut -c1-300
fi
echo "== $(date +%T) done in ${SECONDS}s"

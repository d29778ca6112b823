#!/usr/bin/env bash
# run630: user blocks of 512 threads, two an SM (MGI_WL_MGI_THREADS /
# _BLOCKS), and larger mover copies for device send. Called with the
# device tool, bundle/ carried:
#   LIMIT=300 bash bench/results/2026-11-26-h200x2-sendpath/r630.sh
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
    b=64; t=""; for v in "$@"; do case $v in -b*) b=${v#-b};; -t*) t="-t ${v#-t}";; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s ${S:-64} -n 67108864 -b $b $t -K 4 -T 40 2>&1 )
}
wl() {  # the workloads' MGI variant with run.sh's settings, then VAR=value settings
  ( export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    op=$1; shift; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl-last.txt 2>&1
    grep -E "^[a-z]+ +mgi|rror|^# mgi profile" /tmp/wl-last.txt | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
    grep -qE "^[a-z]+ +mgi" /tmp/wl-last.txt || tail -4 /tmp/wl-last.txt | cut -c1-300 )
}
if part "1 workloads, user blocks"; then
  for a in "" "MGI_WL_MGI_THREADS=512 MGI_WL_MGI_BLOCKS=184" "MGI_WL_MGI_THREADS=512 MGI_WL_MGI_BLOCKS=184 MGI_STAGE_DEPTH=16" "MGI_WL_MGI_THREADS=512 MGI_WL_MGI_BLOCKS=184 MGI_WL_MGI_TILE=2" "MGI_WL_MGI_THREADS=512 MGI_WL_MGI_BLOCKS=138" "MGI_WL_MGI_THREADS=256 MGI_WL_MGI_BLOCKS=368 MGI_STAGE_DEPTH=16" ""; do
    echo "-- exchange ${a:-run.sh}: $(wl exchange $a)"
  done
  for op in groupby join; do
    for a in "" "MGI_WL_MGI_THREADS=512 MGI_WL_MGI_BLOCKS=184"; do
      echo "-- $op ${a:-run.sh}: $(wl $op $a)"
    done
  done
  echo "-- profile, 184 x 512:"; wl exchange MGI_WL_MGI_PROFILE=1 MGI_WL_MGI_THREADS=512 MGI_WL_MGI_BLOCKS=184
fi
if part "2 device send 64 B"; then
  for a in "" "MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024" "MGI_MOVER_BATCH=64 MGI_SORT_DEPTH=512 MGI_STAGE_DEPTH=32" "MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32" "-b128 -t512" "-b128 -t512 MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024" ""; do
    echo "-- ${a:-as run510}: $(ds $a | grep -E "^send_bw 64|FAIL|rror|TIMEOUT|refus" | cut -c1-200)"
  done
fi
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run680: whole moves a helper claims by ticket (one add; the tree)
# against one compare-and-swap per claim (bundle/lib-cas: libmgi of
# 8fadca6), in turn. Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-sendpath/r680.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
lib() { case $1 in tk) echo $PWD/bundle/lib;; *) echo $PWD/bundle/lib-cas:$PWD/bundle/lib;; esac; }
ds() {  # device send, one process: jobs, then VAR=value settings
  ( export LD_LIBRARY_PATH=$(lib $1); shift
    export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
    for v in "$@"; do export "$v"; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s ${S:-64} -n 67108864 -b 64 -K 4 -T 40 2>&1 )
}
wl() {  # the workloads' MGI variant with run.sh's settings: jobs, op, then VAR=value settings
  ( export LD_LIBRARY_PATH=$(lib $1); shift
    export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    op=$1; shift; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-200 )
}
BIG="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32"
for r in 1 2; do
  for j in cas tk; do
    for a in "" "$BIG"; do
      echo "-- claim $j ${a:-as run510}: $(ds $j $a | grep -E "^send_bw 64|FAIL|rror|TIMEOUT|refus" | cut -c1-200)"
    done
    echo "-- 16 B claim $j $BIG: $(S=16 ds $j $BIG | grep -E "^send_bw 16|FAIL|rror|TIMEOUT|refus" | cut -c1-200)"
  done
done
for op in exchange groupby join; do
  for j in cas tk cas tk; do
    echo "-- $op claim $j: $(wl $j $op)"
  done
done
S=64 ds tk $BIG UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=1 > $O/ds-info-tk.txt 2>&1
grep "^send_bw 64" $O/ds-info-tk.txt
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run84: where the user blocks' time goes (MGI_WL_MGI_PROFILE=1), one GPU
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
wl() { # label, env...
  local op=$1 lab=$2; shift 2
  echo "== $(date +%T) $op 1 GPU $lab"
  "${set_[@]}" "$@" timeout 100 $B/mgi_workloads --op $op --variant mgi --gpus 1 --gib ${GIB:-0.5} --iters ${IT:-3} --warmup 1 2>&1 | grep -E "^$op|rror|^# mgi" | cut -c1-600
}
case "$1" in
prof)
  for op in ${OPS:-exchange}; do
    wl $op "profile" MGI_WL_MGI_PROFILE=1
    wl $op "no profile" MGI_WL_MGI_PROFILE=0
    wl $op "profile, MGI_DEV_TILE_BATCH=0" MGI_WL_MGI_PROFILE=1 MGI_DEV_TILE_BATCH=0
  done ;;
vary)
  for v in "MGI_WL_MGI_TILE=16" "MGI_WL_MGI_RECV_EVERY=2" "MGI_SORTER_BLOCKS=16" "MGI_SORTER_BLOCKS=48" "MGI_WL_MGI_BLOCKS=64" "MGI_STAGE_DEPTH=64"; do
    wl exchange "profile, $v" MGI_WL_MGI_PROFILE=1 $v
  done ;;
esac

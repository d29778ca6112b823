#!/usr/bin/env bash
# run96: EOFs and whole segments for this endpoint pass the loopback lane
# by per stage ring (new bundle) against 78f22e4 (abbase/b78: libmgi +
# binaries), one GPU
B=$PWD/bundle/bin
O=$PWD/abbase/b78
export UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
pat='^shuffle [0-9]|^send_bw [0-9]|\(GPU|FAIL|rror|TIMEOUT|timeouts 0x[1-9]|user blocks'
run() { # old|new, then the command
  local w=$1; shift
  if [ $w = old ]; then
    LD_LIBRARY_PATH=$O:$PWD/bundle/lib "$@"
  else
    LD_LIBRARY_PATH=$PWD/bundle/lib "$@"
  fi
}
wl() { # old|new, op, blocks, env...
  local w=$1 op=$2 bl=$3; shift 3
  local d=$B; [ $w = old ] && d=$O
  echo "== $(date +%T) $op 1 GPU $w MGI_WL_MGI_BLOCKS=$bl $*"
  local b_=(MGI_WL_MGI_BLOCKS=$bl); [ "$bl" = def ] && b_=()
  run $w "${set_[@]}" "${b_[@]}" "$@" timeout 45 $d/mgi_workloads --op $op --variant mgi --gpus 1 --gib ${GIB:-0.5} --iters ${IT:-3} --warmup 1 2>&1 | grep -E "^$op|rror|^# mgi" | cut -c1-600
}
case "$1" in
info)
  for w in old new; do
    d=$B; [ $w = old ] && d=$O
    echo "== $(date +%T) exchange 1 GPU $w, sorter totals, profile"
    run $w env UCX_LOG_LEVEL=info "${set_[@]}" MGI_WL_MGI_PROFILE=1 timeout 60 $d/mgi_workloads --op exchange --variant mgi --gpus 1 --gib 0.5 --iters 1 --warmup 0 2>&1 | grep -E "sorter totals|sorter rounds|whole stage|^exchange|^# mgi" | sed 's/^\[[^]]*\] *//' | cut -c1-560
  done ;;
final)
  for op in ${OPS:-exchange groupby join}; do for r in 1 2; do
    wl old $op def
    wl new $op def
  done; done ;;
prof)
  for bl in ${BLS:-48}; do for w in old new; do wl $w exchange $bl MGI_WL_MGI_PROFILE=1; done; done ;;
bench)
  for m in ${MS:-bench shuffle}; do for s in 16 64; do for w in old new; do
    d=$B; [ $w = old ] && d=$O
    n=33554432; [ $m = shuffle ] && n=16777216
    echo "== $(date +%T) $w mgi_gpu_test $m -s $s"
    run $w "${set_[@]}" timeout 40 $d/mgi_gpu_test $m -l 2 -s $s -n $n -b 32 -K 4 -T 30 2>&1 | grep -E "$pat"
  done; done; done ;;
esac
case "$1" in
pool)
  for w in old new; do
    d=$B; [ $w = old ] && d=$O
    echo "== $(date +%T) exchange 1 GPU $w, final ring pool"
    run $w env UCX_LOG_LEVEL=info "${set_[@]}" timeout 45 $d/mgi_workloads --op exchange --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 2>&1 | grep -E "final rings|^exchange|^# mgi" | sed 's/^\[[^]]*\] *//' | cut -c1-300
  done ;;
esac
case "$1" in
nccl)
  for op in ${OPS:-exchange}; do
  echo "== $(date +%T) $op 1 GPU nccl"
  LD_LIBRARY_PATH=$PWD/bundle/lib timeout 60 $B/mgi_workloads --op $op --variant nccl --gpus 1 --gib 0.5 --iters 3 --warmup 1 2>&1 | grep -E "^$op|rror"
  done ;;
esac

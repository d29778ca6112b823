#!/usr/bin/env bash
# run101: this round's tree (new bundle) against 747035f, the tree before
# it (abbase/b747: its libmgi and binaries, built from a worktree), one GPU
B=$PWD/bundle/bin
O=$PWD/abbase/b747
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
pat='^shuffle [0-9]|^send_bw [0-9]|\(GPU|FAIL|rror|TIMEOUT|timeouts 0x[1-9]|user blocks'
run() { # old|new, then the command: old takes its own libmgi
  local w=$1; shift
  if [ $w = old ]; then LD_LIBRARY_PATH=$O:$PWD/bundle/lib "$@"; else "$@"; fi
}
dir() { case $1 in old) echo $O;; *) echo $B;; esac; }
wl() { # which, op, env...
  local w=$1 op=$2; shift 2
  local e=(); [ $w = tb ] && e=(MGI_DEV_TILE_BATCH=32768)
  echo "== $(date +%T) $op 1 GPU $w ${e[*]} $*"
  run $w "${set_[@]}" "${e[@]}" "$@" timeout 45 $(dir $w)/mgi_workloads --op $op --variant mgi --gpus 1 --gib ${GIB:-0.5} --iters ${IT:-3} --warmup 1 2>&1 | grep -E "^$op|rror|^# mgi" | cut -c1-600
}
case "$1" in
final)
  for op in ${OPS:-exchange groupby join}; do for r in 1 2; do
    for w in ${WS:-old new}; do wl $w $op; done
  done; done ;;
prof)
  for w in ${WS:-old new}; do wl $w exchange MGI_WL_MGI_PROFILE=1; done ;;
bench)
  for m in ${MS:-bench shuffle}; do for s in ${SS:-16 64}; do for w in old new; do
    n=33554432; [ $m = shuffle ] && n=16777216
    echo "== $(date +%T) $w mgi_gpu_test $m -s $s"
    run $w "${set_[@]}" timeout 40 $(dir $w)/mgi_gpu_test $m -l 2 -s $s -n $n -b 32 -K 4 -T 30 2>&1 | grep -E "$pat"
  done; done; done ;;
esac
case "$1" in
diag)
  for s in ${SS:-16}; do
    echo "== $(date +%T) new mgi_gpu_test shuffle -s $s, sorter totals"
    "${set_[@]}" UCX_LOG_LEVEL=info timeout 40 $B/mgi_gpu_test shuffle -l 2 -s $s -n 16777216 -b 32 -K 4 -T 30 2>&1 | grep -E "$pat|sorter totals|sorter rounds|whole stage|mover" | sed 's/^\[[^]]*\] *//' | cut -c1-600
  done ;;
nccl)
  for op in ${OPS:-exchange}; do
  echo "== $(date +%T) $op 1 GPU nccl"
  timeout 60 $B/mgi_workloads --op $op --variant nccl --gpus 1 --gib 0.5 --iters 3 --warmup 1 2>&1 | grep -E "^$op|rror"
  done ;;
esac
case "$1" in
sweep)
  for v in ${VS:-"MGI_WL_MGI_BLOCKS=48"}; do for r in 1 2; do
    wl new ${OP:-exchange} ${v//,/ }
  done; done ;;
esac
case "$1" in
diag2)
  for v in ${VS:-"MGI_DEV_TILE_BATCH=65528"}; do for bl in ${BLS:-32 48}; do
    echo "== $(date +%T) new mgi_gpu_test shuffle -s ${S:-16} -b $bl ${v//,/ }, sorter totals"
    "${set_[@]}" ${v//,/ } UCX_LOG_LEVEL=info timeout 40 $B/mgi_gpu_test shuffle -l 2 -s ${S:-16} -n 33554432 -b $bl -K 4 -T 30 2>&1 | grep -E "$pat|sorter totals|sorter rounds|whole stage" | grep -v DIAG | sed 's/^\[[^]]*\] *//' | cut -c1-600
  done; done ;;
esac

#!/usr/bin/env bash
# run100: the tile send marks its reservation while it writes (new) against 4f736f7 (abbase/b4f), and MGI_DEV_TILE_BATCH
# 32768 (messages of 2048 16-byte tuples, a tile of 4096 in two like ones)
# (tb), one GPU
B=$PWD/bundle/bin
O=$PWD/abbase/b4f
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
pat='^shuffle [0-9]|^send_bw [0-9]|\(GPU|FAIL|rror|TIMEOUT|timeouts 0x[1-9]|user blocks'
dir() { case $1 in old) echo $O;; *) echo $B;; esac; }
wl() { # which, op, env...
  local w=$1 op=$2; shift 2
  local e=(); [ $w = tb ] && e=(MGI_DEV_TILE_BATCH=32768)
  echo "== $(date +%T) $op 1 GPU $w ${e[*]} $*"
  "${set_[@]}" "${e[@]}" "$@" timeout 45 $(dir $w)/mgi_workloads --op $op --variant mgi --gpus 1 --gib ${GIB:-0.5} --iters ${IT:-3} --warmup 1 2>&1 | grep -E "^$op|rror|^# mgi" | cut -c1-600
}
case "$1" in
final)
  for op in ${OPS:-exchange groupby join}; do for r in 1 2; do
    for w in ${WS:-old new tb}; do wl $w $op; done
  done; done ;;
prof)
  for w in ${WS:-old new tb}; do wl $w exchange MGI_WL_MGI_PROFILE=1; done ;;
bench)
  for m in ${MS:-bench shuffle}; do for s in ${SS:-16 64}; do for w in old new; do
    n=33554432; [ $m = shuffle ] && n=16777216
    echo "== $(date +%T) $w mgi_gpu_test $m -s $s"
    "${set_[@]}" timeout 40 $(dir $w)/mgi_gpu_test $m -l 2 -s $s -n $n -b 32 -K 4 -T 30 2>&1 | grep -E "$pat"
  done; done; done ;;
esac

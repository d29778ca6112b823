#!/usr/bin/env bash
# run85: the look before a receive takes the final ring's lock
# (mgi_dev_final_idle): new bundle against abbase/old, one GPU
B=$PWD/bundle/bin
O=$PWD/abbase/old
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
pat='^shuffle [0-9]|^send_bw [0-9]|\(GPU|FAIL|rror|TIMEOUT|timeouts 0x[1-9]|user blocks'
wl() { # binary dir, op, label, env...
  local d=$1 op=$2 lab=$3; shift 3
  echo "== $(date +%T) $op 1 GPU $lab"
  "${set_[@]}" "$@" timeout ${TO:-45} $d/mgi_workloads --op $op --variant mgi --gpus 1 --gib ${GIB:-0.5} --iters ${IT:-3} --warmup 1 2>&1 | grep -E "^$op|rror|^# mgi" | cut -c1-600
}
case "$1" in
wl)
  for op in ${OPS:-exchange}; do for r in 1 2; do
    wl $O $op "old" MGI_WL_MGI_PROFILE=${PR:-0}
    wl $B $op "new" MGI_WL_MGI_PROFILE=${PR:-0}
  done; done ;;
prof)
  for v in ${VS:-"MGI_WL_MGI_BLOCKS=32"}; do
    wl $B exchange "new, profile, $v" MGI_WL_MGI_PROFILE=1 ${v//,/ }
  done ;;
sh)
  for d in $O $B; do
    echo "== $(date +%T) $d mgi_gpu_test ${M:-shuffle} -s ${S:-16} ${EXTRA:-}"
    "${set_[@]}" $EXTRA timeout 40 $d/mgi_gpu_test ${M:-shuffle} -l 2 -s ${S:-16} -n ${N:-16777216} -b 32 -K ${K:-4} -T 30 2>&1 | grep -E "$pat"
  done ;;
esac
case "$1" in
info)
  for v in ${VS:-"MGI_WL_MGI_BLOCKS=32"}; do
    echo "== $(date +%T) exchange 1 GPU, sorter totals, profile, ${v//,/ }"
    UCX_LOG_LEVEL=info "${set_[@]}" MGI_WL_MGI_PROFILE=1 ${v//,/ } timeout 100 $B/mgi_workloads --op exchange --variant mgi --gpus 1 --gib 0.5 --iters 1 --warmup 0 2>&1 | grep -E "sorter totals|sorter rounds|whole stage|lane|^exchange|^# mgi" | sed 's/^\[[^]]*\] *//' | cut -c1-520
  done ;;
esac
case "$1" in
wl2)
  for v in ${VS:-"MGI_WL_MGI_BLOCKS=32"}; do for r in 1 2; do
    wl $O exchange "old, ${v//,/ }" ${v//,/ }
    wl $B exchange "new, ${v//,/ }" ${v//,/ }
  done; done ;;
esac
case "$1" in
sweep)
  for v in ${VS:-"MGI_WL_MGI_BLOCKS=32"}; do
    wl $B exchange "${v//,/ }" ${v//,/ }
  done ;;
pool)
  echo "== $(date +%T) exchange 1 GPU, final ring pool"
  UCX_LOG_LEVEL=info "${set_[@]}" timeout 45 $B/mgi_workloads --op exchange --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 2>&1 | grep -E "final rings|^exchange|^# mgi" | sed 's/^\[[^]]*\] *//' | cut -c1-300 ;;
esac

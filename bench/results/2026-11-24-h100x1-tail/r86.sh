#!/usr/bin/env bash
# run86: this stop's changes (fast empty receive, EOF closes at the last
# producer, pinned final ring image, final rings reused at once) against
# the tree before them (abbase/old5f: libmgi + binaries of 5fea760), one GPU
B=$PWD/bundle/bin
O=$PWD/abbase/old5f
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
wl)
  for op in ${OPS:-exchange groupby join}; do for r in 1 2; do
    wl old $op 32
    wl new $op 32
    wl new $op 48
  done; done ;;
final)
  for op in ${OPS:-exchange groupby join}; do for r in 1 2; do
    wl old $op 32
    wl new $op def
  done; done ;;
prof)
  for bl in 32 48; do wl new exchange $bl MGI_WL_MGI_PROFILE=1; done ;;
bench)
  for s in 16 64; do for w in old new; do
    d=$B; [ $w = old ] && d=$O
    echo "== $(date +%T) $w mgi_gpu_test ${M:-bench} -s $s"
    run $w "${set_[@]}" timeout 40 $d/mgi_gpu_test ${M:-bench} -l 2 -s $s -n ${N:-33554432} -b 32 -K 4 -T 30 2>&1 | grep -E "$pat"
  done; done ;;
nccl)
  echo "== $(date +%T) exchange 1 GPU nccl"
  LD_LIBRARY_PATH=$PWD/bundle/lib timeout 60 $B/mgi_workloads --op exchange --variant nccl --gpus 1 --gib 0.5 --iters 3 --warmup 1 2>&1 | grep -E "^exchange|rror" ;;
esac

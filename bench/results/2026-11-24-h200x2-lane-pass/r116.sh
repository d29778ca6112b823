#!/usr/bin/env bash
# run116: 2 x H200, batched tile sends with stage groups (new bundle; ni:
# the same with the groups' reservation not inlined) against 6c43985's
# mgi_workloads (b6c: tile sends with stage groups went as block sends)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 CUDA_MODULE_LOADING=EAGER
bin() { case $1 in new) echo $PWD/bundle/bin/mgi_workloads;; *) echo $PWD/abbase/$1/mgi_workloads;; esac; }
wl() { # which gpus op gib env...
  local w=$1 g=$2 op=$3 gib=$4; shift 4
  echo "== $(date +%T) $op $g GPU(s) $w $*"
  env "$@" timeout 120 $(bin $w) --gpus $g --iters 3 --warmup 1 --op $op --gib $gib --variant mgi 2>&1 | grep -E "^$op|^# mgi|rror" | cut -c1-400
}
case "$1" in
x2)
  for r in 1 2; do for w in b6c new ni; do for gr in 1 2; do
    wl $w 2 exchange 2 MGI_SORTER_BLOCKS=48 MGI_STAGE_GROUPS=$gr
  done; done; done
  for op in groupby join; do for w in b6c new; do
    wl $w 2 $op 2 MGI_SORTER_BLOCKS=48 MGI_STAGE_GROUPS=2
  done; done ;;
x1)
  for r in 1 2; do for w in b6c new ni; do
    wl $w 1 exchange 0.5 MGI_SORTER_BLOCKS=32
  done; done ;;
esac
case "$1" in
pat)
  export MGI_SORTER_BLOCKS=48
  for op in p2p exchange many2one; do wl new 2 $op 2; done ;;
esac
case "$1" in
mend)
  for r in 1 2; do
    wl new 2 exchange 2 MGI_SORTER_BLOCKS=48
    wl new 2 p2p 2 MGI_SORTER_BLOCKS=48
    wl new 1 exchange 0.5 MGI_SORTER_BLOCKS=32
  done ;;
esac
case "$1" in
mend1)
  for r in 1 2; do wl new 1 exchange 0.5 MGI_SORTER_BLOCKS=32; done
  for g in 1 2; do
    echo "== $(date +%T) mgi_gpu_test shuffle -l 2 -s 16, MGI_STAGE_GROUPS=$g MGI_DEV_TILE_BATCH=65528"
    env UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_TIMEOUT_MS=30000 MGI_SORTER_BLOCKS=32 MGI_STAGE_GROUPS=$g MGI_DEV_TILE_BATCH=65528 timeout 60 $PWD/bundle/bin/mgi_gpu_test shuffle -l 2 -s 16 -n 16777216 -b 32 -K 4 -T 30 2>&1 | grep -E "^shuffle [0-9]|\(GPU|FAIL|rror|TIMEOUT"
  done ;;
esac

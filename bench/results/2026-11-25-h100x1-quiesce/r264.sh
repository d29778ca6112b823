#!/usr/bin/env bash
# run264: quiesce requests (new) against 64 rounds of block 0 (old =
# abbase/prev/libmgi.so.0 of ab73b15), alternating in one call: one rank
# and the stand-in (two ranks under MPS), each op; the channel creates'
# split from the info log; then the GPU suite on the new tree
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
lib() { [ "$1" = old ] && echo $PWD/abbase/prev:$PWD/bundle/lib || echo $PWD/bundle/lib; }
one() { v=$1; op=$2; shift 2; echo "== $(date +%T) $v one rank $op $*"; echo "== $v one $op $*" >> $R
  "${set_[@]}" LD_LIBRARY_PATH=$(lib $v) "$@" timeout 60 $B/mgi_workloads --op $op --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "total_ms|# mgi:|rror|FAIL" /tmp/o.txt | sed 's/sf=.*partition/partition/' | cut -c1-300
  grep -h "created in" /tmp/o.txt | tail -2 | sed 's/.*created/created/'; }
two() { v=$1; op=$2; shift 2; echo "== $(date +%T) $v stand-in $op $*"; echo "== $v two $op $*" >> $R
  "${set_[@]}" LD_LIBRARY_PATH=$(lib $v) MGI_WL_SHARE_GPUS=1 MGI_STAGE_GROUPS=2 "$@" timeout 60 $B/mgi_workloads --op $op --variant mgi --gpus 2 --gib 0.5 --iters 3 --warmup 1 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "total_ms|# mgi:|rror|FAIL" /tmp/o.txt | sed 's/sf=.*partition/partition/' | cut -c1-300
  grep -h "created in" /tmp/o.txt | tail -2 | sed 's/.*created/created/'; }
for r in 1 2; do for op in exchange groupby join; do for v in old new; do
  one $v $op UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=100000; done; done; done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "== MPS daemon started"; sleep 1
for r in 1 2; do for op in exchange groupby join; do for v in old new; do
  two $v $op UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=100000; done; done; done
echo quit | nvidia-cuda-mps-control; sleep 1
[ -n "$SUITE" ] && SUITE_S=420 bash abbase/r80b.sh suite '.' | tail -8

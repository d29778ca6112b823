#!/usr/bin/env bash
# run262: user blocks of 512 / 256 threads, 2 / 4 an SM, one rank
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
run() { name=$1; shift; echo "== $(date +%T) $name: $*"; echo "== $name $*" >> $R
  "${set_[@]}" "$@" > /tmp/o.txt 2>&1; cat /tmp/o.txt >> $R
  grep -E "GB/s|# mgi|rror|FAIL|fit|total_ms" /tmp/o.txt | sed 's/sf=.*partition/partition/' | cut -c1-400; }
W="timeout 60 $B/mgi_workloads --gpus 1 --gib 0.5 --iters 3 --warmup 1"
for op in ${OPS:-exchange}; do
for rep in 1 2; do
 run "$op t1024 b96" $W --op $op --variant mgi
 run "$op t512 b192" MGI_WL_MGI_THREADS=512 MGI_WL_MGI_BLOCKS=192 $W --op $op --variant mgi
 run "$op t512 b192 tile8" MGI_WL_MGI_THREADS=512 MGI_WL_MGI_BLOCKS=192 MGI_WL_MGI_TILE=8 $W --op $op --variant mgi
 run "$op t256 b384 tile16" MGI_WL_MGI_THREADS=256 MGI_WL_MGI_BLOCKS=384 MGI_WL_MGI_TILE=16 $W --op $op --variant mgi
 run "$op t512 b96" MGI_WL_MGI_THREADS=512 MGI_WL_MGI_BLOCKS=96 MGI_WL_MGI_TILE=8 $W --op $op --variant mgi
done; done
[ -n "$PROF" ] && run "prof t512 b192" MGI_WL_MGI_PROFILE=1 MGI_WL_MGI_THREADS=512 MGI_WL_MGI_BLOCKS=192 $W --op exchange --variant mgi

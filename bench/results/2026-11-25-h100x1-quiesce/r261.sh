#!/usr/bin/env bash
# run261: where a one-rank Exchange's time goes (profile, sorter info lines),
# its baselines, and the user/sorter block split on one GPU
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
nvidia-smi -L
P=$(python3 -c 'import nvidia.nccl,os;print(os.path.dirname(nvidia.nccl.__file__)+"/lib/libnccl.so.2")' 2>/dev/null); [ -n "$P" ] && export MGI_NCCL_LIB=$P
run() { name=$1; shift; echo "== $(date +%T) $name: $*"; echo "== $name $*" >> $R
  "${set_[@]}" "$@" > /tmp/o.txt 2>&1; cat /tmp/o.txt >> $R
  grep -E "GB/s|# mgi|rror|FAIL|fit|sorter.*(rounds|whole|cycles)" /tmp/o.txt | cut -c1-600; }
W="timeout 60 $B/mgi_workloads --gpus 1 --gib 0.5 --iters 3 --warmup 1"
run all $W --op exchange --variant all
run prof MGI_WL_MGI_PROFILE=1 $W --op exchange --variant mgi
run info UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=100000 $W --op exchange --variant mgi
for s in 16 24 32 48; do for u in 64 96; do
 run "s$s u$u" MGI_SORTER_BLOCKS=$s MGI_WL_MGI_BLOCKS=$u $W --op exchange --variant mgi; done; done
for t in 2 8; do run "tile$t" MGI_WL_MGI_TILE=$t $W --op exchange --variant mgi; done

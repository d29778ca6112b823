#!/usr/bin/env bash
# run460 (2 x H200): run450 with the most segments a lane held at an issue step and the most RTail moved between two pulls; run450: run440 with the stop check reading RTail and RHead with acquire loads (plain loads may hit a stale L1 line) and the commit word it found; run440: run430 with the segments an owner's issue steps find whole and ready, the steps without a free job slot, and their cycles; run430:
# stop: at a segment below RTail whose commit word is not yet the
# segment's size, or at another. Called with the
# device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-poll/r460.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
info() { # NAME ENV...: one exchange with info logs, its lane and mover lines
  local n=$1; shift
  env "$@" UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-$n.txt 2>&1
  echo "-- $n: $*"
  grep -E "^exchange|lanes from other|sorter rounds|a lane's owner" $O/info-$n.txt | sed 's/.*INFO  //;s/ sf=.*partition_ms=0.000//' | cut -c1-520
}
nvidia-smi -L
echo "== $(date +%T) [${SECONDS}s] info logs"
info batch-y UCX_CUDA_MGI_BATCH=y
info batch-n UCX_CUDA_MGI_BATCH=n
echo "== $(date +%T) done in ${SECONDS}s"

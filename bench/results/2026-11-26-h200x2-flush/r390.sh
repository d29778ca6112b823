#!/usr/bin/env bash
# run390 (2 x H200): the A/B of run380 again, done right: UCX loads its
# modules from bundle/lib/ucx before UCX_MODULE_DIR, so run380's "old"
# runs had the new transport too. Here the old module file
# (bundle/lib/ucx-3920df1/libuct_cuda_mgi.so.0.0.0, the transport of
# 3920df1) is copied over the new one for the "old" runs and back.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-flush/r390.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
M=$PWD/bundle/lib/ucx/libuct_cuda_mgi.so.0.0.0
cp $M /tmp/new.so
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
use() { if [ "$1" = old ]; then cp bundle/lib/ucx-3920df1/libuct_cuda_mgi.so.0.0.0 $M; else cp /tmp/new.so $M; fi; echo "-- $1 ($(md5sum < $M | cut -c1-8))"; }
nvidia-smi -L
echo "== $(date +%T) [${SECONDS}s] 1 the flush test, new then old"
for v in new old; do
  use $v
  timeout 60 $B/gtest_cuda_mgi --gtest_filter='uct_cuda_mgi.flush_waits_only_for_earlier' 2>&1 | grep -E "^\[ *(OK|FAILED|PASSED) |flush completed|all 64" | cut -c1-250 | head -4
done
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
echo "== $(date +%T) [${SECONDS}s] 2 exchange, new and old in turn"
for v in new old old new new old old new; do
  use $v
  timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange 2>&1 | grep -E "^exchange +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'
done
echo "== $(date +%T) [${SECONDS}s] 3 groupby and join, new and old in turn"
for op in groupby join; do
  for v in new old old new; do
    use $v
    timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'
  done
done
use new
echo "== $(date +%T) done in ${SECONDS}s"

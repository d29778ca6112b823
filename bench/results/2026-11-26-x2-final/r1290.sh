#!/usr/bin/env bash
# run1290 (2 GPUs): the workloads' MGI tile sends prefetching the next
# tile into L2 while the current one is sent (mgi_workloads-pf: built
# with -DWL_MGI_PREFETCH=1, sm_90 only) against the bundle's mgi_workloads,
# in turn with run.sh's set: Exchange three rounds, GroupBy and Join once.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-final/r1290.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's settings: binary, op
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    timeout 90 $B/$1 --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $2 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-140 )
}
for r in 1 2 3; do for x in mgi_workloads mgi_workloads-pf; do echo "-- r$r $x: $(wl $x exchange)"; done; done
for op in groupby join; do for x in mgi_workloads mgi_workloads-pf; do echo "-- $op $x: $(wl $x $op)"; done; done
echo "== $(date +%T) done in ${SECONDS}s"

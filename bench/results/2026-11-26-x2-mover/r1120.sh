#!/usr/bin/env bash
# run1120 (2 GPUs): the workloads' GroupBy with its inserts in the
# shuffle's receives (MGI_WL_MGI_FUSE=2) against after the shuffle (1, the
# default), in turn, without skew and at Zipf 1.5, on the final tree.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mover/r1120.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's settings, then VAR=value settings / --zipf: OP
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    op=$1; shift; z=; for v in "$@"; do case $v in --zipf=*) z="--zipf ${v#--zipf=}";; *) export "$v";; esac; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op $z 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-140 )
}
for r in 1 2 3; do
  for f in 1 2; do echo "-- r$r FUSE=$f: $(wl groupby MGI_WL_MGI_FUSE=$f)"; done
done
for f in 1 2; do echo "-- zipf 1.5 FUSE=$f: $(wl groupby MGI_WL_MGI_FUSE=$f --zipf=1.5)"; done
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run670: GroupBy with its aggregation in the shuffle's receives
# (MGI_WL_MGI_FUSE=2) against after the shuffle (1, the default), in turn,
# at Zipf theta 0 (off), 1.0 and 1.5. Called with the device tool, bundle/
# carried:
#   bash bench/results/2026-11-26-h200x2-sendpath/r670.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's settings (Zipf theta $Z): op, then VAR=value settings
  ( export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    op=$1; shift; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op ${Z:+--zipf $Z} 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-200 )
}
for z in "" 1.0 1.5; do
  for f in 1 2 2 1; do
    echo "-- groupby zipf ${z:-off} fuse $f: $(Z=$z wl groupby MGI_WL_MGI_FUSE=$f)"
  done
done
echo "== $(date +%T) done in ${SECONDS}s"

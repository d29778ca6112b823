#!/usr/bin/env bash
# run1500 (2 GPUs): user blocks per SM, settings only (fdb694b's build,
# bundle/bin/mgi_workloads-base): a block sends one tile at a time and
# waits at each of its barriers, so two or four smaller blocks an SM
# overlap one's waits with another's work. Exchange with run.sh's set and
# MGI_WL_MGI_BLOCKS x MGI_WL_MGI_THREADS (x MGI_WL_MGI_TILE) in turn.
#   bash bench/results/2026-11-26-x2-lease/r1500.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's set: BINARY OP [VAR=value ...]
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    bin=$1; op=$2; shift 2; for v in "$@"; do export "$v"; done
    timeout 90 $B/$bin --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z]+ +mgi|rror|refus" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-140
    grep -E "# mgi profile rank [01]: user blocks" /tmp/wl.txt | grep -oE "rank [01]: .*cycles per call" | cut -c1-160 )
}
for r in 1 2; do
  for c in "92 1024 4" "184 512 4" "184 512 8" "368 256 8" "276 256 8"; do
    set -- $c
    echo "-- r$r ${1}x$2 tile $3: $(wl mgi_workloads-base exchange MGI_WL_MGI_BLOCKS=$1 MGI_WL_MGI_THREADS=$2 MGI_WL_MGI_TILE=$3)"
  done
done
for c in "92 1024 4" "184 512 4" "184 512 8"; do
  set -- $c
  for op in groupby join; do
    echo "-- $op ${1}x$2 tile $3: $(wl mgi_workloads-base $op MGI_WL_MGI_BLOCKS=$1 MGI_WL_MGI_THREADS=$2 MGI_WL_MGI_TILE=$3)"
  done
done
echo "== $(date +%T) done in ${SECONDS}s"

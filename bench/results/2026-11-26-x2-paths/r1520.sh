#!/usr/bin/env bash
# run1520 (2 GPUs): is the Exchange bound by the mover's transfer, and do
# more paths or more copy engines move it? Settings only, on the tree of
# 9644188 (code of fdb694b), the workloads' MGI variant with run.sh's set,
# each setting in turn with the base:
#   - UCX_CUDA_MGI_PEER_STREAMS=2/4: a peer's copies on 2/4 streams (copy
#     engines) in turn instead of one
#   - UCX_CUDA_MGI_MULTIPATH_THRESH=1m: the mover's puts (~2 MB) striped
#     over the direct path and the host path (PCIe both sides), chunks of
#     2 MB and of 512 KB
#   - MGI_PEER_DIRECT=1: the sorters write into the other GPU's lane (SM
#     stores over NVLink, no copy engine)
# then the base with the mover's info lines (UCX_LOG_LEVEL=info).
#   bash bench/results/2026-11-26-x2-paths/r1520.sh   (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's set: OP [VAR=value ...]
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    op=$1; shift; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-150 )
}
for r in 1 2; do
  for a in "BASE=1" "UCX_CUDA_MGI_PEER_STREAMS=2" "UCX_CUDA_MGI_PEER_STREAMS=4" \
           "UCX_CUDA_MGI_MULTIPATH_THRESH=1m" \
           "UCX_CUDA_MGI_MULTIPATH_THRESH=1m UCX_CUDA_MGI_CHUNK_SIZE=512k" \
           "MGI_PEER_DIRECT=1"; do
    echo "-- r$r $a: $(wl exchange $a)"
  done
done
echo "-- groupby base: $(wl groupby)"
echo "-- groupby PEER_STREAMS=2: $(wl groupby UCX_CUDA_MGI_PEER_STREAMS=2)"
echo "-- groupby MULTIPATH_THRESH=1m: $(wl groupby UCX_CUDA_MGI_MULTIPATH_THRESH=1m)"
echo "-- info:"
( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
  export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi UCX_LOG_LEVEL=info
  timeout 90 $B/mgi_workloads --gpus 2 --iters 1 --warmup 0 --gib 2 --variant mgi --op exchange > $O/info-exchange.txt 2>&1 )
grep -E "^[a-z]+ +mgi" $O/info-exchange.txt | cut -c1-200
grep "mover (rank" $O/info-exchange.txt | grep -v " 0 segments/s" | cut -c60-400 | head -12
grep -E "cuda_mgi|striped" $O/info-exchange.txt | head -8 | cut -c1-300
echo "== $(date +%T) done in ${SECONDS}s"

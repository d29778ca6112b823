#!/usr/bin/env bash
# run840 (4 GPUs): the MGI variant's block split on 4 GPUs -- run.sh's
# 2-GPU settings (40 sorter blocks beside 92 user blocks) against more
# sorter blocks (each GPU now owns 3 receive lanes from other ranks), for
# the Exchange, the Join and many-to-one. Called with the device tool,
# bundle/ carried:
#   bash bench/results/2026-11-26-x4-relays/r840.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the MGI variant with run.sh's settings, then VAR=value settings: OP ...
  ( export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    op=$1; shift; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 4 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z0-9]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-200 )
}
for op in exchange join many2one; do
  for a in "" "MGI_SORTER_BLOCKS=56" "MGI_SORTER_BLOCKS=64 MGI_WL_MGI_BLOCKS=68" "MGI_SORTER_BLOCKS=32" ""; do
    echo "-- $op ${a:-as run.sh}: $(wl $op $a)"
  done
done
echo "== done in ${SECONDS}s"

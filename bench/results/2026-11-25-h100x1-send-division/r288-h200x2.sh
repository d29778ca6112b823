#!/usr/bin/env bash
# For the next 2 x H200 session (not run here: only one-GPU kinds were
# lent). Copy to abbase/ and call with the device tool, carrying bundle and
# abbase; about 4 minutes. 1) #5's device send GPU0 -> GPU1 in one process
# (64 B and 16 B, tiles): the user blocks and threads of the source (on two
# GPUs each GPU holds one endpoint's kernels: room for more than on one),
# and the sorters' copies replaced by references (MGI_SEND_ZCOPY=1,
# MGI_RECV_ZCOPY=1), and the mover's copies on 1 or 4 streams
# (MGI_MOVER_STREAMS; the last such run had all 16 flushes in flight in
# thousands of rounds); each with the copy engine measured in the same run.
# 2) the three operators as r254-h200x2.sh (../2026-11-25-h100x1-send-ref/).
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0
export MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
nvidia-smi -L
tuned=(env UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SORTER_BLOCKS=48 MGI_DEV_TILE_BATCH=65528)
for s in 64 16; do
  for v in "48 256 4 0 0 16 1" "48 256 4 0 0 16 4" "48 512 4 0 0 16 4" "80 256 4 0 0 16 4" "48 256 8 0 0 16 4" "48 256 4 1 1 32 4" "48 512 4 1 1 32 4" "80 256 4 1 1 32 4" "48 256 4 0 1 16 4"; do
    set -- $v
    echo "== $(date +%T) mgi_gpu_test bench -l 2 -s $s -b $1 -t $2 -K $3, MGI_SEND_ZCOPY=$4 MGI_RECV_ZCOPY=$5 MGI_STAGE_DEPTH=$6 MGI_MOVER_STREAMS=$7"
    "${tuned[@]}" MGI_SEND_ZCOPY=$4 MGI_RECV_ZCOPY=$5 MGI_STAGE_DEPTH=$6 MGI_MOVER_STREAMS=$7 timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n 67108864 -b $1 -t $2 -K $3 -T 40 2>&1 | grep -E "^send_bw [0-9]|user blocks|FAIL|rror|TIMEOUT" | grep -v "ep 1:" | cut -c1-300
  done
done
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
for op in exchange exchange join groupby; do
  for v in "0 16 48 0" "1 32 48 1" "1 32 32 1" "0 16 48 1"; do
    set -- $v
    echo "== $(date +%T) $op 2 GPUs mgi MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2 MGI_SORTER_BLOCKS=$3 MGI_RECV_ZCOPY=$4"
    MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2 MGI_SORTER_BLOCKS=$3 MGI_RECV_ZCOPY=$4 timeout 100 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op $op --gib 2 --variant mgi 2>&1 | grep -E "^$op|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
  done
done

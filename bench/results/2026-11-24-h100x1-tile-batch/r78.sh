#!/usr/bin/env bash
# run78: sorter totals (UCX_LOG_LEVEL=info) of the one-GPU exchange and send_bw
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
tuned=(env MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
f='sorter totals|sorter rounds|sorter passes|whole stage|mover|GB/s|verify'
for BA in ${BAS:-0 65528}; do
  echo "== $(date +%T) workloads exchange 1 GPU MGI_DEV_MSG_BATCH=$BA"
  UCX_LOG_LEVEL=info MGI_DEV_MSG_BATCH=$BA "${tuned[@]}" timeout 100 $B/mgi_workloads --op exchange --variant mgi --gpus 1 --gib 0.5 --iters 1 --warmup 0 2>&1 | grep -E "$f" | sed 's/^\[[^]]*\] *//' | cut -c1-400
  echo "== $(date +%T) bench 16 B K=4 MGI_DEV_MSG_BATCH=$BA"
  UCX_LOG_LEVEL=info MGI_DEV_MSG_BATCH=$BA "${tuned[@]}" timeout 40 $B/mgi_gpu_test bench -l 2 -s 16 -n 33554432 -b 32 -K 4 -T 30 2>&1 | grep -E "$f" | sed 's/^\[[^]]*\] *//' | cut -c1-400
done

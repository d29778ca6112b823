#!/usr/bin/env bash
# run490 (2 x H200): MGI_LANE_APART only with two stage rings a sorter
# block or more (the workloads' two groups: yes; device send with one
# ring a block: no), and a lane's owner compares RHead with the value it
# last stored instead of reading the host word back each round. Info log,
# the Exchange / GroupBy / Join apart 1 and 0 in turn, device send 64 B
# between two processes. Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-poll/r490.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
wl() { timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op "$@" 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'; }
nvidia-smi -L
echo "== $(date +%T) [${SECONDS}s] 1 info log"
UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-exchange.txt 2>&1
grep -E "^exchange|sorter rounds|a lane's owner|LANE_APART" $O/info-exchange.txt | sed 's/.*INFO  //;s/ sf=.*partition_ms=0.000//' | cut -c1-700
echo "== $(date +%T) [${SECONDS}s] 2 apart 1 / 0 in turn"
for op in exchange exchange groupby join; do
  for v in 1 0 0 1; do echo "- MGI_LANE_APART=$v"; MGI_LANE_APART=$v wl $op; done
done
echo "== $(date +%T) [${SECONDS}s] 3 device send 64 B, two processes"
for r in 1 2 3; do
  (export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_SEND_ZCOPY=0 MGI_STAGE_DEPTH=16 MGI_DEV_TILE_BATCH=65528
   timeout 60 $B/mgi_launch -n 2 -t 55 -- $B/mgi_gpu_test bench -s 64 -n 67108864 -b 64 -K 4 -T 40 2>&1 | grep -E "^send_bw 64|FAIL|rror|TIMEOUT" | cut -c1-300)
done
echo "== $(date +%T) done in ${SECONDS}s"

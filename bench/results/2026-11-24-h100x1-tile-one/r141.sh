#!/usr/bin/env bash
# run141: one GPU, the one-slot tile send (new) against 43adf0e (b43)
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=${SB:-32} MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
pat='^shuffle [0-9]|^send_bw [0-9]|\(GPU|FAIL|rror|TIMEOUT|timeouts 0x[1-9]|user blocks|sorter totals|sorter rounds|whole stage|sorter passes|OK'
nvidia-smi -L
case "$1" in
ab)
  for r in ${RS:-1 2}; do for s in ${SS:-64 16}; do for K in ${KS:-4 0}; do for b in ${BS:-abbase/b43 bundle/bin}; do
    echo "== $(date +%T) round $r $b mgi_gpu_test bench -l 2 -s $s -K $K ${V:-}"
    "${set_[@]}" ${V:-} UCX_LOG_LEVEL=${LL:-warn} timeout 45 $b/mgi_gpu_test bench -l 2 -s $s -n ${N:-33554432} -b ${UB:-32} -K $K -T 30 2>&1 | grep -E "$pat" | sed 's/^\[[^]]*\] *//' | cut -c1-400
  done; done; done; done ;;
esac
case "$1" in
wl)
  for r in ${RS:-1 2}; do for op in ${OPS:-exchange}; do for b in ${BS:-abbase/b43 bundle/bin}; do
    echo "== $(date +%T) round $r $b mgi_workloads --op $op"
    "${set_[@]}" MGI_WL_ITERS=3 timeout 120 $b/mgi_workloads --op $op --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 2>&1 | grep -E "verify|GB/s|ms|rror|FAIL" | head -8
  done; done; done ;;
esac

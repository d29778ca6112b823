#!/usr/bin/env bash
# run81: whole loopback segments straight to final rings (MGI_LOOP_DIRECT)
# A/B on one GPU, alternating; VS: "DIRECT ..."
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
pat='^shuffle [0-9]|^send_bw [0-9]|\(GPU|FAIL|rror|TIMEOUT|timeouts 0x[1-9]|straight'
case "$1" in
wl)
  for op in ${OPS:-exchange}; do for D in ${VS:-0 1}; do
    echo "== $(date +%T) $op 1 GPU MGI_LOOP_DIRECT=$D"
    MGI_LOOP_DIRECT=$D "${set_[@]}" timeout 100 $B/mgi_workloads --op $op --variant mgi --gpus 1 --gib ${GIB:-0.5} --iters ${IT:-3} --warmup 1 2>&1 | grep -E "^$op|rror"
  done; done ;;
info)
  for D in ${VS:-0 1}; do
    echo "== $(date +%T) exchange 1 GPU MGI_LOOP_DIRECT=$D, sorter totals"
    UCX_LOG_LEVEL=info MGI_LOOP_DIRECT=$D "${set_[@]}" timeout 100 $B/mgi_workloads --op exchange --variant mgi --gpus 1 --gib 0.5 --iters 1 --warmup 0 2>&1 | grep -E "sorter totals|sorter rounds|whole stage|^exchange" | sed 's/^\[[^]]*\] *//' | cut -c1-420
  done ;;
sh)
  for D in ${VS:-0 1}; do
    echo "== $(date +%T) mgi_gpu_test ${M:-shuffle} -s ${S:-16} MGI_LOOP_DIRECT=$D ${EXTRA:-}"
    env $EXTRA MGI_LOOP_DIRECT=$D "${set_[@]}" timeout 40 $B/mgi_gpu_test ${M:-shuffle} -l 2 -s ${S:-16} -n ${N:-16777216} -b 32 -K ${K:-4} -T 30 2>&1 | grep -E "$pat"
  done ;;
esac

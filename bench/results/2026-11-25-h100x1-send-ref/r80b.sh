#!/usr/bin/env bash
# run80b: as run77, the knob MGI_DEV_TILE_BATCH
# on one GPU; log into $OUT as it goes. VS: "K:BATCH ..." variants.
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
O=/tmp/o; mkdir -p $O
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
tuned=(env MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
pat='^shuffle [0-9]|^send_bw [0-9]|\(GPU|user blocks|FAIL|rror|TIMEOUT|timeouts 0x[1-9]'
case "$1" in
suite)
  MGI_SUITE_BUDGET_S=${SUITE_S:-200} bash bundle/run/mgi-gpu-suite.sh $B $O/suite "$2" > $O/suite.txt 2>&1
  grep -E "^(PASS|FAIL|SKIP)|^== " $O/suite.txt
  grep -E "^shuffle [0-9]|^send_bw [0-9]|^sorter GPU" $O/suite.txt
  cp $O/suite.txt ${OUT:-/tmp}/suite-$(date +%H%M%S).txt ;;
ab|sh)
  m=bench; [ "$1" = sh ] && m=shuffle
  for v in ${VS:-0:0 4:0 4:32768}; do
    K=${v%%:*} BA=${v##*:}
    echo "== $(date +%T) $m ${S:-64} K=$K MGI_DEV_TILE_BATCH=$BA"
    MGI_DEV_TILE_BATCH=$BA "${tuned[@]}" timeout 40 $B/mgi_gpu_test $m -l 2 -s ${S:-64} -n ${N:-4194304} -b ${BL:-32} -K $K -T 30 2>&1 | grep -E "$pat"
  done ;;
wl)
  for v in ${VS:-4:0 4:32768}; do
    K=${v%%:*} BA=${v##*:}
    echo "== $(date +%T) workloads ${OP:-exchange} 1 GPU ${VAR:-mgi} MGI_WL_MGI_TILE=$K MGI_DEV_TILE_BATCH=$BA"
    MGI_DEV_TILE_BATCH=$BA MGI_WL_MGI_TILE=$K "${tuned[@]}" timeout 100 $B/mgi_workloads --op ${OP:-exchange} --variant ${VAR:-mgi} --gpus 1 --gib ${GIB:-0.25} --iters 3 --warmup 1 2>&1 | tail -${TL:-8}
  done ;;
esac

#!/usr/bin/env bash
# run80: as run79, the knob MGI_DEV_TILE_BATCH (mgi_workloads: 65528 unless set)
# batched tile sends (MGI_DEV_TILE_BATCH) A/B, alternating, and user/sorter
# block splits. VS: "BATCH:USERBLOCKS:SORTERBLOCKS ..."
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
for op in ${OPS:-exchange}; do
for v in ${VS:-0:32:32 65528:32:32}; do
  BA=${v%%:*} r=${v#*:} UB=${r%%:*} SB=${r##*:}
  echo "== $(date +%T) $op 1 GPU MGI_DEV_TILE_BATCH=$BA user blocks $UB sorter blocks $SB"
  MGI_DEV_TILE_BATCH=$BA MGI_WL_MGI_BLOCKS=$UB MGI_SORTER_BLOCKS=$SB "${set_[@]}" timeout 100 $B/mgi_workloads --op $op --variant mgi --gpus 1 --gib ${GIB:-0.5} --iters ${IT:-3} --warmup 1 2>&1 | grep -E "^$op|rror|SMs"
done; done

#!/usr/bin/env bash
# run1550 (2 GPUs): stage rings shallower than run.sh's 32 (the backlog a
# block's stage rings hold when it ends sending drains after it; 64 was
# slower in run1540), deeper final rings, more flushes in flight, with the
# receive every 8th send (default) and only when a ring is full (0); the
# Exchange, in turn, two rounds; then GroupBy and Join of the best.
#   bash bench/results/2026-11-26-x2-paths/r1550.sh   (bundle/ carried)
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
    grep -E "^[a-z0-9]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=[0-9.]*//;s/ input_GB.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-150
    grep -E "# mgi profile rank 0" /tmp/wl.txt | cut -c1-420 )
}
for r in 1 2; do
  for e in 8 0; do
    for a in "MGI_STAGE_DEPTH=32" "MGI_STAGE_DEPTH=16" "MGI_STAGE_DEPTH=24" "MGI_STAGE_DEPTH=8" \
             "MGI_FINAL_DEPTH=128" "MGI_MOVER_FLUSHES=32" "MGI_STAGE_DEPTH=16 MGI_FINAL_DEPTH=128"; do
      echo "-- r$r RECV_EVERY=$e $a: $(wl exchange MGI_WL_MGI_RECV_EVERY=$e $a)"
    done
  done
done
for a in "MGI_STAGE_DEPTH=16" "MGI_STAGE_DEPTH=16 MGI_WL_MGI_RECV_EVERY=0"; do
  echo "-- profile $a:"; wl exchange MGI_WL_MGI_PROFILE=1 $a
done
echo "== $(date +%T) done in ${SECONDS}s"

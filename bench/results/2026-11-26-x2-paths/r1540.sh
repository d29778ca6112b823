#!/usr/bin/env bash
# run1540 (2 GPUs): user blocks that receive only when a stage ring is
# full and after their last send (MGI_WL_MGI_RECV_EVERY=0) against every
# 8th send (8, the default), in turn, over the operators, Zipf skew and the
# patterns; with deeper final or stage rings; then the mover's and the
# sorter's info lines every millisecond of one Exchange
# (UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=1).
#   bash bench/results/2026-11-26-x2-paths/r1540.sh   (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's set: OP [--zipf T] [VAR=value ...]
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    op=$1; shift; z=""; [ "${1:-}" = --zipf ] && { z="--zipf $2"; shift 2; }
    for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op $z > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z0-9]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=[0-9.]*//;s/ input_GB.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-150 )
}
for r in 1 2; do
  for a in "MGI_WL_MGI_RECV_EVERY=8" "MGI_WL_MGI_RECV_EVERY=0"; do
    for op in exchange groupby join; do echo "-- r$r $a: $(wl $op $a)"; done
  done
done
for a in "MGI_WL_MGI_RECV_EVERY=0 MGI_FINAL_DEPTH=128" "MGI_WL_MGI_RECV_EVERY=0 MGI_STAGE_DEPTH=64" \
         "MGI_WL_MGI_RECV_EVERY=2" "MGI_WL_MGI_RECV_EVERY=0 MGI_SORTER_BLOCKS=36 MGI_WL_MGI_BLOCKS=96"; do
  echo "-- $a: $(wl exchange $a)"
done
for z in 0.5 1.0 1.5; do
  for a in "MGI_WL_MGI_RECV_EVERY=8" "MGI_WL_MGI_RECV_EVERY=0"; do
    for op in exchange groupby join; do echo "-- zipf $z $a: $(wl $op --zipf $z $a)"; done
  done
done
for op in many2one one2many p2p; do
  for a in "MGI_WL_MGI_RECV_EVERY=8" "MGI_WL_MGI_RECV_EVERY=0"; do echo "-- $a: $(wl $op $a)"; done
done
echo "-- info (RECV_EVERY=8):"
( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
  export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=1
  timeout 90 $B/mgi_workloads --gpus 2 --iters 2 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-exchange.txt 2>&1 )
grep -E "^[a-z]+ +mgi" $O/info-exchange.txt | cut -c1-200
grep "mover (rank 0)" $O/info-exchange.txt | grep -v " 0 segments/s" | cut -c60-330 | head -30
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1750 (2 GPUs): run.sh's MGI_SEND_ZCOPY=1 (the mover puts whole stage
# segments from the stage rings, by reference, one at a time) against 0
# (the sorter copies them into sort rings first) and runs of 4 and 8
# segments a reference, on the current tree: point-to-point moved 20 %
# more with 0 in run1730. Exchange, point-to-point and one-to-many in
# turn, twice; GroupBy and Join with 0 and 1.
#   bash bench/results/2026-11-27-h200x2-send-zcopy/r1750.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's set: BINARY OP [VAR=value ...]
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    bin=$1; op=$2; shift 2; for v in "$@"; do export "$v"; done
    timeout 90 $B/$bin --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z0-9]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-150
    grep -E "# mgi profile rank [01]" /tmp/wl.txt | cut -c1-420 )
}
for r in 1 2; do
  for z in 1 0 4 8; do
    for op in exchange p2p one2many; do
      echo "-- r$r SEND_ZCOPY=$z $op: $(wl mgi_workloads $op MGI_SEND_ZCOPY=$z)"
    done
  done
done
for z in 1 0; do
  for op in groupby join; do echo "-- SEND_ZCOPY=$z $op: $(wl mgi_workloads $op MGI_SEND_ZCOPY=$z)"; done
done
echo "== $(date +%T) done in ${SECONDS}s"

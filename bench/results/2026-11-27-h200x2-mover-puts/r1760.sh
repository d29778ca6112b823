#!/usr/bin/env bash
# run1760 (2 GPUs): is the MGI Exchange's remote half bound by the copy
# engine's cost per copy? Between processes each mover put is one copy
# (cuda_mgi posts them one by one unless UCX_CUDA_MGI_BATCH=y), of ~2 MB
# (a run of stage segments, MGI_SEND_ZCOPY), and copy_sizes measured 2 MB
# copies both ways at 489 GB/s one at a time against 766 for 64 MB ones
# (bench/results/2026-11-26-h200x2-copy-sizes/). In turn, twice:
# run.sh's set; UCX_CUDA_MGI_BATCH=y (copies that wait go together in one
# cuMemcpyBatchAsync); runs of stage segments that wait longer to grow
# (MGI_SEND_WAIT_ROUNDS=64); both; longer runs (MGI_MOVER_BATCH=64
# MGI_STAGE_DEPTH=64). Then the mover's info lines for the base and
# UCX_CUDA_MGI_BATCH=y, and GroupBy / Join / p2p with UCX_CUDA_MGI_BATCH=y.
#   bash bench/results/2026-11-27-h200x2-mover-puts/r1760.sh  (bundle/ carried)
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
  echo "-- r$r base: $(wl mgi_workloads exchange)"
  echo "-- r$r BATCH=y: $(wl mgi_workloads exchange UCX_CUDA_MGI_BATCH=y)"
  echo "-- r$r WAIT=64: $(wl mgi_workloads exchange MGI_SEND_WAIT_ROUNDS=64)"
  echo "-- r$r BATCH=y WAIT=64: $(wl mgi_workloads exchange UCX_CUDA_MGI_BATCH=y MGI_SEND_WAIT_ROUNDS=64)"
  echo "-- r$r MOVER_BATCH=64 STAGE_DEPTH=64: $(wl mgi_workloads exchange MGI_MOVER_BATCH=64 MGI_STAGE_DEPTH=64)"
done
for op in groupby join p2p; do
  echo "-- $op base: $(wl mgi_workloads $op)"
  echo "-- $op BATCH=y: $(wl mgi_workloads $op UCX_CUDA_MGI_BATCH=y)"
done
for a in base UCX_CUDA_MGI_BATCH=y; do
  v=; [ $a = base ] || v=$a
  wl mgi_workloads exchange UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=1 $v > /dev/null
  cp /tmp/wl.txt $O/info-$a.txt
  echo "-- info $a: $(grep -E '^exchange +mgi' /tmp/wl.txt | cut -c1-140)"
  grep "mover (rank 0)" /tmp/wl.txt | grep -v " 0 segments/s" | sed -n '3p;6p;9p' | cut -c60-520
  grep -E "cuda_mgi iface.*(striped|batch|posted)" /tmp/wl.txt | head -3 | cut -c60-400
done
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1720 (2 GPUs): how the MGI Exchange moves with the SMs split otherwise
# between sorter and user blocks (sorter + user: 40 + 92 is run.sh's;
# 40 + 64, 24 + 92, 64 + 68), in turn, twice; then the whole workloads
# harness (every phase, run.sh's default iterations, every answer
# verified), its JSON, tables and charts in one archive.
#   bash bench/results/2026-11-27-x2-settings/r1720.sh   (bundle/ carried)
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
    grep -E "^[a-z]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-150
    grep -E "# mgi profile rank [01]" /tmp/wl.txt | cut -c1-420 )
}
for r in 1 2; do
  for s in "40 92" "40 64" "24 92" "64 68"; do set -- $s
    echo "-- r$r $1+$2: $(wl mgi_workloads exchange MGI_SORTER_BLOCKS=$1 MGI_WL_MGI_BLOCKS=$2)"
  done
done
echo "== $(date +%T) workloads harness"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 420 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null; cat $O/ratios.txt
(cd /tmp/wl && tar czf $O/wl.tgz *.json *.txt png 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"

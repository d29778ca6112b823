#!/usr/bin/env bash
# run1770 (2 GPUs): the final tree. libmgi now gives its own UCP context
# cuda_mgi's UCX_CUDA_MGI_BATCH=y where its transports name cuda_mgi
# (unless the variable is set), so the mover's puts of a round go to the
# copy engine in one batch.
# 1. the MGI GPU suite (two new steps check the batching and that
#    UCX_CUDA_MGI_BATCH=n is kept);
# 2. MGI variant, 2 GiB a GPU, the patterns and the Exchange with
#    UCX_CUDA_MGI_BATCH=n (as before) and without it (batched), in turn,
#    twice;
# 3. the whole workloads harness (every phase, run.sh's defaults, every
#    answer verified), its JSON, tables and charts in one archive.
#   bash bench/results/2026-11-27-h200x2-mover-puts/r1770.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 260 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -6
grep -E "^PASS mover_puts|^FAIL mover_puts|copies posted in" $O/mgi-suite.txt | cut -c1-160
wl() {  # the workloads' MGI variant with run.sh's set: BINARY OP [VAR=value ...]
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    bin=$1; op=$2; shift 2; for v in "$@"; do export "$v"; done
    timeout 90 $B/$bin --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z0-9]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-150 )
}
echo "== $(date +%T) batched or not"
for r in 1 2; do
  for op in p2p many2one one2many exchange; do
    echo "-- r$r $op BATCH=n: $(wl mgi_workloads $op UCX_CUDA_MGI_BATCH=n)"
    echo "-- r$r $op batched: $(wl mgi_workloads $op)"
  done
done
echo "== $(date +%T) workloads harness"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 300 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null; cat $O/ratios.txt
(cd /tmp/wl && tar czf $O/wl.tgz *.json *.txt png 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"

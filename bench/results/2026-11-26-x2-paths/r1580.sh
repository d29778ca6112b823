#!/usr/bin/env bash
# run1580 (2 GPUs): the scatter kernel in two kinds (run1570): one array
# and index cursors for the baselines' partition, a pointer per
# destination for the peer variant. The Exchange, GroupBy and Join of
# nccl and peer in turn with run1570's one-base build
# (bundle/bin/mgi_workloads-onebase), then the whole harness on this tree
# (every phase, run.sh's default iterations, every answer verified).
#   bash bench/results/2026-11-26-x2-paths/r1580.sh   (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
for b in mgi_workloads-onebase mgi_workloads; do
  echo "== $(date +%T) $b"
  LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_BIN=$PWD/bundle/bin/$b MGI_WL_TIMEOUT=60 MGI_WL_PHASES=ops MGI_WL_VARIANTS=nccl,peer \
    timeout 200 bash bundle/run/workloads.sh /tmp/wl-$b 2 2 > $O/ab-$b.txt 2>&1; echo "rc=$?"
  grep -E "^(exchange|groupby|join) +(nccl|peer) .*verify" $O/ab-$b.txt | sort -u | sed 's/ sf=[0-9.]*//;s/ input_GB=[0-9.]* cross_GB=[0-9.]*//' | cut -c1-200
done
echo "== $(date +%T) workloads harness"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 450 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null; cat $O/ratios.txt
mkdir -p $O/png && cp /tmp/wl/png/*.png $O/png/ 2>/dev/null
echo "== $(date +%T) done in ${SECONDS}s"

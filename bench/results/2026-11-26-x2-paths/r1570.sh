#!/usr/bin/env bash
# run1570 (2 GPUs): run1560's baselines partitioned in 3.0 ms against
# run1430's 2.5: the scatter kernel of 6e519a0 took a struct of a
# pointer per destination and shared pointers. The kernel is back to one
# base and cursors in tuples from it (the peer variant's distance to the
# other GPUs' buffers taken modulo 2^64), as before 6e519a0. First the
# Exchange's nccl and peer variants of 6e519a0's build
# (bundle/bin/mgi_workloads-struct, run1560's) and of this tree's, in
# turn, then the whole harness on this tree (every phase, run.sh's
# default iterations, every answer verified).
#   bash bench/results/2026-11-26-x2-paths/r1570.sh   (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
for r in 1 2; do
  for b in mgi_workloads-struct mgi_workloads; do
    echo "== $(date +%T) r$r $b"
    LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_BIN=$PWD/bundle/bin/$b MGI_WL_TIMEOUT=60 MGI_WL_PHASES=ops MGI_WL_VARIANTS=nccl,peer \
      timeout 200 bash bundle/run/workloads.sh /tmp/wl-$b-$r 2 2 > $O/ab-$b-$r.txt 2>&1; echo "rc=$?"
    grep -E "^(exchange|groupby|join) +(nccl|peer) .*verify" $O/ab-$b-$r.txt | sed 's/ sf=[0-9.]*//;s/ input_GB=[0-9.]* cross_GB=[0-9.]*//' | cut -c1-200
  done
done
echo "== $(date +%T) workloads harness"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 timeout 450 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
grep -A100 "^== summary" $O/harness.txt | cut -c1-200 | head -60
cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null; cat $O/ratios.txt
(cd /tmp/wl && tar czf $O/wl.tgz *.json *.txt png 2>/dev/null)
echo "== $(date +%T) done in ${SECONDS}s"

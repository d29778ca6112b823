#!/usr/bin/env bash
# run2190 (2 GPUs): run1700's device-send measurement (issue of the 0.85
# goal: device send of 64-byte tuples GPU0 -> GPU1 against the copy engine
# in the same run; bench/results/2026-11-27-h200x2-send/r1700.sh, its ds()
# and cases unchanged: set D, 16 GiB in shared tiles and 8 GiB in 59
# slices, twice each, then 16-byte tuples) on the current tree, whose
# ring defaults are now the GPU set (ds() sets every ring setting itself).
#   bash bench/results/2026-11-28-h200x2-defaults/r2190.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
eval "$(sed -n '/^ds() {/,/^}/p' bench/results/2026-11-27-h200x2-send/r1700.sh)"
echo "== $(date +%T) device send"
for a in "-D -n268435456" "-b59" "-D -n268435456" "-b59" "-s16 -D -n1073741824"; do
  ds $a > /tmp/ds.txt 2>&1
  echo "-- $a: $(grep -E '^send_bw (64|16) B|FAIL|rror' /tmp/ds.txt | head -2 | cut -c1-112)"
  cat /tmp/ds.txt >> $O/ds.txt
done
echo "== $(date +%T) done in ${SECONDS}s"

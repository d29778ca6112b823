#!/usr/bin/env bash
# run2170 (2 GPUs): libmgi with two sets of ring defaults (MGI_GPU_DEFAULTS:
# on this machine, whose driver lists GPUs, the GPU set: run2150's S3):
# 1. the whole MGI GPU suite (every step without ring settings of its own
#    now runs with the GPU set; groupby_2proc_cpu_defaults and
#    send_bw_64B_2proc_cpu_defaults with the CPU one);
# 2. device send of 64-byte tuples GPU0 -> GPU1 (2 processes, 32 user
#    blocks, 1 GiB) with no ring settings and with MGI_GPU_DEFAULTS=0, twice
#    in turn; the workloads' MGI Exchange and GroupBy with no ring settings;
#    the context's info line.
#   bash bench/results/2026-11-28-h200x2-defaults/r2170.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) the whole MGI GPU suite"
MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 260 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
awk '/^== send_bw/{n=$2} /^send_bw [0-9]+ B tuples/{print n, $0}' $O/mgi-suite.txt | cut -c1-170
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
echo "== $(date +%T) device send and the workloads, no ring settings"
for r in 1 2; do
  for s in "" "MGI_GPU_DEFAULTS=0"; do
    echo "-- '$s' send_bw: $(env $s timeout 90 $B/mgi_launch -n 2 -t 85 -- $B/mgi_gpu_test bench -s 64 -n 16777216 -b 32 -T 60 2>&1 | tee -a $O/sendbw.txt | grep -E '^send_bw [0-9]+ B tuples|FAIL|rror' | cut -c1-160)"
  done
done
for op in exchange groupby; do
  timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
  cat /tmp/wl.txt >> $O/wl.txt
  echo "-- $op: $(grep -E "^$op +mgi|rror|FAIL" /tmp/wl.txt | sed 's/ sf=.*cross_GB=[0-9.]*//' | cut -c1-200)"
done
UCX_LOG_LEVEL=info timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 1048576 -b 32 -T 30 2>&1 | grep -E "mgi context|mgi ep [0-9]+: GPU" | sed 's/^.*UCX  INFO  //' | head -2
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run161: user-block shapes, two ranks on one GPU under MPS (r160.sh's
# LIST), then one rank alone
LIST="$LIST1" bash abbase/r160.sh
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
while read -r name v; do
  echo "== $(date +%T) one GPU $name: ${OP:-exchange}, $v"
  env ${v//,/ } timeout 120 $B/mgi_workloads --op ${OP:-exchange} --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 > $OUT/one-$name.txt 2>&1
  grep -E "GB/s|# mgi|rror|FAIL" $OUT/one-$name.txt | cut -c1-400
done <<LIST
$LIST2
LIST

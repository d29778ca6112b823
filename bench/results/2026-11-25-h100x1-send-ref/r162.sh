#!/usr/bin/env bash
# (ARGS: more mgi_workloads options, VARIANT: its --variant, default mgi)
# (WL: the mgi_workloads binary, default bundle/bin/mgi_workloads)
# run162: user-block shapes with the occupancy check, two ranks on one GPU
# under MPS (LIST1) and one rank alone (LIST2); raw outputs in one file
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
nvidia-smi -L
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "== MPS daemon started"; sleep 1
while read -r name v; do
  [ -z "$name" ] && continue
  echo "== $(date +%T) $name: ${OP:-exchange}, 2 ranks on one GPU, $v"
  echo "== $name" >> $R
  "${set_[@]}" MGI_WL_SHARE_GPUS=1 MGI_STAGE_GROUPS=2 ${v//,/ } timeout 60 ${WL:-$B/mgi_workloads} --op ${OP:-exchange} --variant ${VARIANT:-mgi} --gpus 2 --gib 0.5 --iters 3 --warmup 1 ${ARGS:-} > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R
  grep -E "GB/s|# mgi|rror|FAIL|fit" /tmp/o.txt | cut -c1-400
done <<LIST
$LIST1
LIST
echo quit | nvidia-cuda-mps-control; sleep 1
while read -r name v; do
  [ -z "$name" ] && continue
  echo "== $(date +%T) one GPU $name: ${OP:-exchange}, $v"
  echo "== one $name" >> $R
  "${set_[@]}" ${v//,/ } timeout 60 ${WL:-$B/mgi_workloads} --op ${OP:-exchange} --variant ${VARIANT:-mgi} --gpus 1 --gib 0.5 --iters 3 --warmup 1 ${ARGS:-} > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R
  grep -E "GB/s|# mgi|rror|FAIL|fit" /tmp/o.txt | cut -c1-400
done <<LIST
$LIST2
LIST

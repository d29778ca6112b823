#!/usr/bin/env bash
# run160: the Exchange between two ranks on one GPU under MPS, with the
# profile (64 registers now) and the mover's backlog in the info log
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=${SB:-32} MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_WL_MGI_BLOCKS=${UB:-32} MGI_WL_SHARE_GPUS=1 MGI_STAGE_GROUPS=2)
nvidia-smi -L
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "== MPS daemon started"; sleep 1
i=0
while read -r name v; do
  i=$((i+1))
  echo "== $(date +%T) $name: exchange, 2 ranks on one GPU, $v"
  "${set_[@]}" ${v//,/ } timeout 120 $B/mgi_workloads --op ${OP:-exchange} --variant mgi --gpus 2 --gib ${GIB:-0.5} --iters 3 --warmup 1 > $OUT/$name.txt 2>&1
  grep -E "GB/s|# mgi|rror|FAIL" $OUT/$name.txt | cut -c1-400
  grep -E "mover \(rank|sorter (totals|rounds)|whole stage" $OUT/$name.txt | grep -v " 0 segments/s" | sed 's/^\[[^]]*\] *//' | cut -c1-600 | head -${HN:-0}
done <<LIST
${LIST:-base BASE=1
prof MGI_WL_MGI_PROFILE=1}
LIST
echo quit | nvidia-cuda-mps-control; sleep 1

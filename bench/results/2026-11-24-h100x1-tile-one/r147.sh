#!/usr/bin/env bash
# run147: the workloads with two ranks on one GPU (MGI_WL_SHARE_GPUS=1)
# under MPS: the Exchange between processes
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=${SB:-32} MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_WL_MGI_BLOCKS=${UB:-32} MGI_WL_SHARE_GPUS=1)
nvidia-smi -L
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "== MPS daemon started"; sleep 1
for r in ${RS:-1}; do for op in ${OPS:-exchange groupby join}; do for v in ${VS:-MGI_STAGE_GROUPS=2}; do
  echo "== $(date +%T) round $r --op $op --gpus 2 on one GPU, $v ${V:-}"
  "${set_[@]}" $v ${V:-} timeout 150 $B/mgi_workloads --op $op --variant ${VAR:-ucx,ucx_mgi,mgi} --gpus 2 --gib ${GIB:-0.5} --iters 3 --warmup 1 > $OUT/wl-$op-$r.txt 2>&1
  grep -E "GB/s|verify|# mgi|absent|rror|FAIL|mover \(" $OUT/wl-$op-$r.txt | grep -v " 0 segments/s" | sed 's/^\[[^]]*\] *//' | cut -c1-330 | head -${HN:-16}
done; done; done
echo quit | nvidia-cuda-mps-control; sleep 1
if [ -n "$SWEEP" ]; then
  nvidia-cuda-mps-control -d && echo "== MPS daemon started (sweep)"; sleep 1
  for v in "" $SWEEP; do
    echo "== $(date +%T) sweep exchange mgi ${v//,/ }"
    "${set_[@]}" MGI_STAGE_GROUPS=2 ${v//,/ } timeout 150 $B/mgi_workloads --op exchange --variant mgi --gpus 2 --gib ${GIB:-0.5} --iters 3 --warmup 1 2>&1 | grep -E "GB/s|rror" | cut -c1-300
  done
  echo quit | nvidia-cuda-mps-control; sleep 1
fi

#!/usr/bin/env bash
# run273: the final tree on one GPU, every variant (nccl, ucx, ucx_mgi,
# single, mgi) per op; and the stand-in with MGI_SEND_ZCOPY=1
# MGI_RECV_ZCOPY=1 MGI_STAGE_DEPTH=32 MGI_SORTER_BLOCKS=20 ("ref20z")
# against the ring set, alternating
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
P=$(python3 -c 'import nvidia.nccl,os;print(os.path.dirname(nvidia.nccl.__file__)+"/lib/libnccl.so.2")' 2>/dev/null); [ -n "$P" ] && export MGI_NCCL_LIB=$P
for op in exchange groupby join; do echo "== $(date +%T) one GPU, every variant, $op"
  "${set_[@]}" timeout 90 $B/mgi_workloads --op $op --variant all --gpus 1 --gib 0.5 --iters 3 --warmup 1 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "total_ms|rror|FAIL|absent" /tmp/o.txt | sed 's/sf=.*partition/partition/' | cut -c1-300; done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "== MPS daemon started"; sleep 1
for r in 1 2; do for op in exchange join groupby; do for v in set ref20z; do
  X=""; [ $v = ref20z ] && X="MGI_SEND_ZCOPY=1 MGI_RECV_ZCOPY=1 MGI_STAGE_DEPTH=32 MGI_SORTER_BLOCKS=20"
  echo "== $(date +%T) stand-in $op $v"
  "${set_[@]}" $X MGI_WL_SHARE_GPUS=1 MGI_STAGE_GROUPS=2 timeout 60 $B/mgi_workloads --op $op --variant mgi --gpus 2 --gib 0.5 --iters 3 --warmup 1 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "total_ms|# mgi:|rror|FAIL" /tmp/o.txt | sed 's/sf=.*partition/partition/' | cut -c1-300; done; done; done
echo quit | nvidia-cuda-mps-control; sleep 1

#!/usr/bin/env bash
# run530 (2 x H200, the machine of run510, warm): run.sh's new split (40
# sorter + 92 user blocks) with the lane owners apart or not, in turn.
# Called with the device tool as this one command line, bundle/ carried:
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4; for op in exchange groupby join; do for v in 1 0 0 1; do echo "- $op MGI_LANE_APART=$v (40 sorter + 92 user blocks)"; MGI_LANE_APART=$v timeout 60 bundle/bin/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'; done; done 2>&1 | tee $OUT/log.txt

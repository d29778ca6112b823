#!/usr/bin/env bash
# run410 (2 x H200): where a lane from the other rank waits. The info
# logs now say, for the sorter, how many whole moves a remote lane's
# owner has in flight and how many segments wait in the lane when it
# issues, how long a move waits for a helper and how long until the owner
# retires it; for the mover, where a lane's slots are when it is short of
# credits (in flushes, or published and not yet released). Called with the
# device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-poll/r410.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
       MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
       MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
wl() { timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op "$@" 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//'; }
info() { # NAME ENV...: one exchange with info logs, its lane and mover lines
  local n=$1; shift
  env "$@" UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 $B/mgi_workloads --gpus 2 --iters 1 --warmup 1 --gib 2 --variant mgi --op exchange > $O/info-$n.txt 2>&1
  echo "-- $n: $*"
  grep -E "^exchange|lanes from other|sorter rounds" $O/info-$n.txt | sed 's/.*INFO  //;s/ sf=.*partition_ms=0.000//' | cut -c1-420
  grep -E "mover \(rank" $O/info-$n.txt | grep -v " 0 segments/s" | sed 's/.*INFO  //' | awk 'NR%3==2' | sed 's/ puts so far.*sort segments/ ... sort segments/' | cut -c1-600 | tail -6
}
nvidia-smi -L
echo "== $(date +%T) [${SECONDS}s] 1 info logs"
info batch-n UCX_CUDA_MGI_BATCH=n
info batch-y UCX_CUDA_MGI_BATCH=y
info batch-y-recvz UCX_CUDA_MGI_BATCH=y MGI_RECV_ZCOPY=1
echo "== $(date +%T) [${SECONDS}s] 2 settings with BATCH=y, in turn"
export UCX_CUDA_MGI_BATCH=y
for r in 1 2; do
  echo "- base"; wl exchange
  echo "- MGI_RECV_ZCOPY=1"; MGI_RECV_ZCOPY=1 wl exchange
  echo "- MGI_RECV_DEPTH=2048"; MGI_RECV_DEPTH=2048 wl exchange
done
echo "== $(date +%T) done in ${SECONDS}s"

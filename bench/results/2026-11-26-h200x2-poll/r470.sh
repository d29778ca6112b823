#!/usr/bin/env bash
# run470 (2 x H200): the owners of the receive lanes from the other rank
# take no stage rings (MGI_LANE_APART=1) against the old split (=0): info
# logs of both, then the Exchange, GroupBy and Join in turn. Called with
# the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-poll/r470.sh
# (run470 ran part 3 as `env $v wl exchange`, which cannot call a shell
# function: it printed nothing; fixed here, rerun as part of run480)
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
  grep -E "^exchange|sorter rounds|a lane's owner|LANE_APART" $O/info-$n.txt | sed 's/.*INFO  //;s/ sf=.*partition_ms=0.000//' | cut -c1-700
  grep -E "mover \(rank" $O/info-$n.txt | grep -v " 0 segments/s" | sed 's/.*INFO  //' | awk 'NR%3==2' | sed 's/ puts so far.*flushes done/ ... flushes done/;s/ stage segments put by reference;.*//' | cut -c1-400 | tail -4
}
nvidia-smi -L
echo "== $(date +%T) [${SECONDS}s] 1 info logs"
info apart1 MGI_LANE_APART=1
info apart0 MGI_LANE_APART=0
echo "== $(date +%T) [${SECONDS}s] 2 apart 1 / 0 in turn"
for op in exchange exchange groupby join; do
  for v in 1 0 0 1; do echo "- MGI_LANE_APART=$v"; MGI_LANE_APART=$v wl $op; done
done
echo "== $(date +%T) [${SECONDS}s] 3 apart 1 with UCX_CUDA_MGI_BATCH=y, MGI_RECV_ZCOPY=1"
for v in "UCX_CUDA_MGI_BATCH=y" "MGI_RECV_ZCOPY=1" "UCX_CUDA_MGI_BATCH=y MGI_RECV_ZCOPY=1"; do
  echo "- $v"; (export $v; wl exchange; wl exchange)
done
echo "== $(date +%T) done in ${SECONDS}s"

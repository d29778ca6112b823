#!/usr/bin/env bash
# run1410 (2 GPUs): settings only, no code change, on the final tree
# (contrib/bundle.sh's bundle of 061eaa6): does the tile send's per-call
# chain shrink with fewer slot changes or with one stage group? The
# workloads' Exchange with run.sh's set, and with
#   A: MGI_SEG_SIZE=262144 MGI_STAGE_DEPTH=16 (the same stage memory, a
#      fresh slot every four 64 KB calls instead of every two)
#   B: A with MGI_SORT_DEPTH=128 (the same sort-ring memory)
#   C: MGI_STAGE_GROUPS=1 (one reservation a call, segments of both
#      destinations, which the sorter walks)
# in turn, twice, with the user blocks' profile; GroupBy and Join once
# each with run.sh's set and with A.
# Called with the device tool, bundle/ carried (gtest_cuda_mgi and
# ucx_perftest left out to stay within what a call carries):
#   bash bench/results/2026-11-26-x2-mend/r1410.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's settings and the profile: OP [VAR=value ...]
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 MGI_WL_MGI_PROFILE=1
    op=$1; shift; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-140
    grep -E "# mgi profile rank [01]: user blocks" /tmp/wl.txt | grep -oE "rank [01]: .*cycles per call" | cut -c1-160 )
}
declare -A C=(
  [0]=""
  [A]="MGI_SEG_SIZE=262144 MGI_STAGE_DEPTH=16"
  [B]="MGI_SEG_SIZE=262144 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=128"
  [C]="MGI_STAGE_GROUPS=1"
)
for r in 1 2; do
  for k in 0 A B C; do echo "-- r$r $k (${C[$k]:-run.sh}):"; wl exchange ${C[$k]}; done
done
for op in groupby join; do
  for k in 0 A; do echo "-- $op $k: $(wl $op ${C[$k]} | head -1)"; done
done
echo "== $(date +%T) done in ${SECONDS}s"

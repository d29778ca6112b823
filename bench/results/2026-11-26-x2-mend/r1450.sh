#!/usr/bin/env bash
# run1450 (2 GPUs): the review mend d05330b (the mover sets up an
# endpoint's new routes where they appear, a count per endpoint, instead
# of a per-route flag checked in every issue pass) on a GPU: MGI's GPU
# suite; device send 64 B GPU0 -> GPU1 with set D (16 GiB shared tiles,
# 8 GiB 59 slices) and 16 B; the workloads' Exchange, GroupBy and Join
# with run.sh's set (stage segments of 133120 bytes).
# contrib/bundle.sh's bundle of d05330b, carried without gtest_cuda_mgi
# and ucx_perftest to stay within what a call carries:
#   bash bench/results/2026-11-26-x2-mend/r1450.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -6
ds() {  # device send, one process: -bN / -D / -sN / -nN
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d > /tmp/ds.txt 2>&1
    cat /tmp/ds.txt >> $O/ds.txt
    grep -E '^send_bw (64|16) B|FAIL|rror' /tmp/ds.txt | head -2 | sed 's/, tile sends.*//' | cut -c1-120 )
}
echo "== $(date +%T) device send"
for a in "-D -n268435456" "-b59" "-s16 -D -n1073741824"; do echo "-- $a: $(ds $a)"; done
echo "== $(date +%T) workloads, run.sh's set"
for op in exchange groupby join; do
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    echo "-- $op (MGI_SEG_SIZE=$MGI_SEG_SIZE): $(grep -E "^[a-z]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-130)" )
done
echo "== $(date +%T) done in ${SECONDS}s"

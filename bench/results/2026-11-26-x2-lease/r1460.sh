#!/usr/bin/env bash
# run1460 (2 GPUs): tile sends in the blocks' leased stage segments
# (mgi_dev_lease_t: a reservation, a mark and a commit a segment instead
# of a call) against the tree before them, in turn, same machine: the
# workloads' Exchange (the last round with the user blocks' profile),
# GroupBy and Join with run.sh's set; device send 64 B (16 GiB shared
# tiles) and 16 B without and with -L; then MGI's GPU suite on the new
# tree (the *_lease steps new).
# bundle/bin is contrib/bundle.sh's of the new tree, carried without
# gtest_cuda_mgi and ucx_perftest; bundle/bin/*-base are contrib/bundle.sh's
# of fdb694b (the tree before).
#   bash bench/results/2026-11-26-x2-lease/r1460.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's set: BINARY OP [VAR=value ...]
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    bin=$1; op=$2; shift 2; for v in "$@"; do export "$v"; done
    timeout 90 $B/$bin --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-140
    grep -E "# mgi profile rank [01]: user blocks" /tmp/wl.txt | grep -oE "rank [01]: .*cycles per call" | cut -c1-160 )
}
ds() {  # device send, one process: BINARY [-L] -bN / -D / -sN / -nN
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    bin=$1; shift; b=64; n=134217728; s=64; d=; l=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; -L) l=-L;; esac; done
    timeout 60 $B/$bin bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d $l > /tmp/ds.txt 2>&1
    cat /tmp/ds.txt >> $O/ds.txt
    grep -E '^send_bw (64|16) B|FAIL|rror' /tmp/ds.txt | head -2 | sed 's/send_bw //;s/, tile sends.*//' | cut -c1-112 )
}
echo "== $(date +%T) Exchange, in turn"
for r in 1 2 3; do
  p=; [ $r = 3 ] && p=MGI_WL_MGI_PROFILE=1
  for b in mgi_workloads-base mgi_workloads; do echo "-- r$r $b: $(wl $b exchange $p)"; done
done
echo "== $(date +%T) GroupBy, Join"
for r in 1 2; do for op in groupby join; do
  for b in mgi_workloads-base mgi_workloads; do echo "-- r$r $op $b: $(wl $b $op | head -1)"; done
done; done
echo "== $(date +%T) device send, in turn"
for a in "-D -n268435456" "-s16 -D -n1073741824"; do
  for b in "mgi_gpu_test-base" "mgi_gpu_test" "mgi_gpu_test -L"; do echo "-- $a $b: $(ds $b $a)"; done
done
echo "== $(date +%T) MGI GPU suite (new tree)"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=170 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 220 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -6
grep -E "lease" -A3 $O/mgi-suite.txt | grep -E "^==|PASS|FAIL" | cut -c1-150
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1470 (2 GPUs): where a leased tile send's cycles go. The Exchange
# with the measurement builds (tile-phases-lease.patch in this folder on
# the lease tree, built as ../2026-11-26-x2-final/r1320.sh says, into
# bundle/bin/mgi_workloads-tp; ../2026-11-26-x2-mend/tile-phases3.patch on
# fdb694b into bundle/bin/mgi_workloads-tp-base), in turn; then the lease
# tree with the lease's room check from shared memory alone (its ring's
# capacity kept in the lease) and one-destination leases kept to their
# last tuple, against fdb694b (mgi_workloads-base), in turn; device send
# without and with -L (the same binary); the suite's *_lease steps.
#   bash bench/results/2026-11-26-x2-lease/r1470.sh
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
    grep -E "# mgi profile rank [01]: user blocks" /tmp/wl.txt | grep -oE "rank [01]: .*cycles per call" | cut -c1-160
    grep -E "# mgi tile send" /tmp/wl.txt | cut -c1-230 )
}
ds() {  # device send, one process: [-L] -bN / -D / -sN / -nN
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    b=64; n=134217728; s=64; d=; l=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; -L) l=-L;; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d $l > /tmp/ds.txt 2>&1
    cat /tmp/ds.txt >> $O/ds.txt
    grep -E '^send_bw (64|16) B|FAIL|rror' /tmp/ds.txt | head -2 | sed 's/send_bw //;s/, tile sends.*//' | cut -c1-112 )
}
echo "== $(date +%T) Exchange, phases, in turn"
for r in 1 2; do
  for b in mgi_workloads-tp-base mgi_workloads-tp; do echo "-- r$r $b: $(wl $b exchange MGI_WL_MGI_PROFILE=1)"; done
done
echo "== $(date +%T) Exchange, in turn"
for r in 1 2 3; do
  for b in mgi_workloads-base mgi_workloads; do echo "-- r$r $b: $(wl $b exchange)"; done
done
echo "== $(date +%T) GroupBy, Join"
for op in groupby join; do
  for b in mgi_workloads-base mgi_workloads; do echo "-- $op $b: $(wl $b $op | head -1)"; done
done
echo "== $(date +%T) device send, in turn"
for r in 1 2; do
for a in "-D -n268435456" "-s16 -D -n1073741824"; do
  for l in "" "-L"; do echo "-- r$r $a $l: $(ds $a $l)"; done
done; done
echo "== $(date +%T) MGI GPU suite, the lease steps"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=100 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 150 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite lease > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(PASS|FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | cut -c1-150
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1030 (2 GPUs): on the tree of 751103f (new: bundle/lib) and with
# helpers claiming whole moves in parallel (pc: bundle/lib-pc, the tree
# plus r1030-parallel-claim.patch), in turn: device send 64 B GPU0 -> GPU1
# (one process), the source's tiles shared (-D) or 59 user blocks with a
# slice each, with the mover's copies of run510's settings, larger ones
# (BIG), and BIG with 2 or 1 sort rings a hop (longer runs to copy); then
# the workloads' MGI variant.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mover/r1030.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
lib() { case $1 in new) echo $PWD/bundle/lib;; pc) echo $PWD/bundle/lib-pc:$PWD/bundle/lib;; esac; }
ds() {  # device send, one process: LIB, then -bN / -D / -sN / VAR=value settings
  ( export LD_LIBRARY_PATH=$(lib $1); shift
    export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
BIG="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32"
line() { echo "$(grep -E '^send_bw (64|16) B' $1 | sed 's/send_bw //;s/ (GPU0 -> GPU1)//;s/, tile sends.*//') | $(grep -E 'last sends returned' $1 | sed 's/.*returned //;s/ after the first.*//')"; }
for r in 1 2; do
  for cfg in "-D" "-D $BIG" "-D $BIG MGI_SORT_RINGS=2" "-D $BIG MGI_SORT_RINGS=1" "-b59 $BIG"; do
    for l in new pc; do
      f=/tmp/ds-$l.txt
      if [ $r = 1 ]; then ds $l $cfg UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=4 > $f 2>&1; else ds $l $cfg > $f 2>&1; fi
      echo "-- r$r $l $(echo $cfg | sed "s/$BIG/BIG/"): $(line $f)"
      if [ $r = 1 ]; then
        grep -E "ep 1: lanes from other|block 0: [0-9]+ busy" $f | sed 's/.*INFO  //' | cut -c1-330
        grep -E "mover \(rank" $f | grep -v ": 0 segments/s" | sed -E 's/.*mover \(rank 0\): [0-9]+ segments\/s, ([0-9.]+) MB\/s, ([0-9]+) rounds without credit, ([0-9]+) with.* ([0-9]+) KB and ([0-9.]+) us in cudaMemcpyAsync each; [0-9]+ flushes done ([0-9.]+) us.*waiting when it found some ([0-9.]+) on average.*found ([0-9.]+) of its 1024 slots in flushes and ([0-9.]+) published.*/  mover \1 MB\/s, no-credit rounds \2, all flushes \3, copies \4 KB, done \6 us, sort backlog \7, short-credit reads: \8 in flight \9 held/' | sort -t' ' -k4 -n -r | head -2
      fi
    done
  done
done
for l in new pc; do echo "-- $l 16 B -D: $(ds $l -s16 -D > /tmp/d16.txt; line /tmp/d16.txt)"; done
echo "== $(date +%T) workloads (3 iterations)"
for r in 1 2; do for l in new pc; do
( export LD_LIBRARY_PATH=$(lib $l) MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
    MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
  for op in exchange groupby join; do
  echo "-- r$r $l $(timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//' | cut -c1-160)"; done )
done; done
echo "== $(date +%T) done in ${SECONDS}s"

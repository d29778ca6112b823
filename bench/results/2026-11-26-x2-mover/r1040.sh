#!/usr/bin/env bash
# run1040 (2 GPUs): the tree with helpers claiming whole moves in parallel
# (bundle/lib): device send 64 B GPU0 -> GPU1 (one process), the source's
# tiles shared (-D), with larger mover copies (BIG) and deeper receive
# lanes / more flushes / larger batches, to find where the mover's copies
# stop growing; then the best with a slice a block (59 user blocks) and
# 16-byte tuples.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mover/r1040.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
ds() {  # device send, one process: -bN / -D / -sN / VAR=value settings
  ( export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
BIG="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32"
line() { echo "$(grep -E '^send_bw (64|16) B' $1 | sed 's/send_bw //;s/ (GPU0 -> GPU1)//;s/, tile sends.*//') | $(grep -E 'last sends returned' $1 | sed 's/.*returned //;s/ after the first.*//')"; }
mov() { grep -E "mover \(rank" $1 | grep -v ": 0 segments/s" | sed -E 's/.*mover \(rank 0\): [0-9]+ segments\/s, ([0-9.]+) MB\/s, ([0-9]+) rounds without credit, ([0-9]+) with.* ([0-9]+) KB and ([0-9.]+) us in cudaMemcpyAsync each; [0-9]+ flushes done ([0-9.]+) us.*waiting when it found some ([0-9.]+) on average.*found ([0-9.]+) of its [0-9]+ slots in flushes and ([0-9.]+) published.*/  mover \1 MB\/s, no-credit rounds \2, all flushes \3, copies \4 KB, done \6 us, sort backlog \7, short-credit reads: \8 in flight \9 held/' | sort -t' ' -k4 -n -r | head -2; }
declare -A C=(
  [A]="$BIG"
  [B]="$BIG MGI_RECV_DEPTH=2048"
  [C]="$BIG MGI_RECV_DEPTH=2048 MGI_MOVER_FLUSHES=32"
  [D]="MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096"
  [E]="$BIG MGI_RECV_DEPTH=2048 MGI_FINAL_DEPTH=128"
)
for r in 1 2; do
  for k in A B C D E; do
    f=/tmp/ds.txt
    if [ $r = 1 ]; then ds -D ${C[$k]} UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=4 > $f 2>&1; else ds -D ${C[$k]} > $f 2>&1; fi
    echo "-- r$r $k (${C[$k]}) -D: $(line $f)"
    [ $r = 1 ] && { mov $f; grep -E "block 0: [0-9]+ busy" $f | sed 's/.*INFO  //' | cut -c1-330; }
  done
done
for k in A B D; do
  echo "-- $k -b59 slices: $(ds -b59 ${C[$k]} > /tmp/ds.txt; line /tmp/ds.txt)"
  echo "-- $k 16 B -D: $(ds -s16 -D ${C[$k]} > /tmp/ds.txt; line /tmp/ds.txt)"
done
echo "== $(date +%T) done in ${SECONDS}s"

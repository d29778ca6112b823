#!/usr/bin/env bash
# run1020 (2 GPUs): the sort rings' mirrors synced by sorter blocks with the
# fewest stage rings (mgi_gpu_route_first) and lane owners apart whenever
# every stage ring still has a block of its own (new: bundle/lib) against
# the tree before (head: bundle/lib-head, libmgi of 669388e), in turn:
# device send GPU0 -> GPU1 (one process) with 64 and 59 user blocks, the
# source's tiles a slice a block or shared (-D), run510's settings and
# larger mover copies (BIG); then the workloads' MGI variant.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mover/r1020.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
lib() { case $1 in new) echo $PWD/bundle/lib;; head) echo $PWD/bundle/lib-head:$PWD/bundle/lib;; esac; }
ds() {  # device send, one process: LIB, then -bN / -D / -sN / VAR=value settings
  ( export LD_LIBRARY_PATH=$(lib $1); shift
    export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
BIG="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32"
for r in 1 2; do
  for a in "" "$BIG"; do
    for b in -b64 -b59; do
      for d in "" -D; do
        for l in head new; do
          f=/tmp/ds.txt
          if [ $r$l = 1new ]; then ds $l $b $d $a UCX_LOG_LEVEL=info > $f 2>&1; else ds $l $b $d $a > $f 2>&1; fi
          echo "-- r$r $l ${a:+BIG }$b ${d:-slices}: $(grep -E '^send_bw 64' $f | cut -c30-95) | $(grep -E 'last sends returned' $f | sed 's/.*returned //;s/ after the first.*the last blocks:/; last:/' | cut -c1-150)"
          [ $r$l = 1new ] && grep -E "take no stage|sync the sort|ep 1: lanes from other" $f | sed 's/.*INFO  //' | cut -c1-300
        done
      done
    done
  done
done
for l in head new; do for b in -b64 -b59; do for d in "" -D; do
  echo "-- $l 16 B $b ${d:-slices}: $(ds $l -s16 $b $d | grep -E '^send_bw 16|FAIL|rror' | cut -c20-100)"; done; done; done
echo "== $(date +%T) workloads (3 iterations)"
for r in 1 2; do for l in head new; do
( export LD_LIBRARY_PATH=$(lib $l) MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
    MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
  for op in exchange groupby join; do
  echo "-- r$r $l $(timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-160)"; done )
done; done
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1010 (2 GPUs): device send GPU0 -> GPU1 (one process): when each user
# block's last send returned (the tail of run1000), the source's blocks
# taking tiles from a shared count (-D) against a slice each, with the
# mover's copies of run510's settings and larger ones (BIG), on the
# libmgi of the tree (base) and with helpers claiming whole moves in
# parallel (pc: bundle/lib-pc, ../2026-11-26-h200x2-owner-steps/
# r940-parallel-claim.patch on this tree). Then the Exchange's profile.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mover/r1010.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
lib() { case $1 in base) echo $PWD/bundle/lib;; pc) echo $PWD/bundle/lib-pc:$PWD/bundle/lib;; esac; }
ds() {  # device send, one process: LIB, then -D / -sN / VAR=value settings
  ( export LD_LIBRARY_PATH=$(lib $1); shift
    export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
BIG="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32"
for r in 1 2; do
  for l in base pc; do
    for a in "" "$BIG"; do
      for d in "" -D; do
        f=$O/ds-$l-$r${a:+-big}$d.txt
        if [ $r = 1 ]; then ds $l $d $a UCX_LOG_LEVEL=info > $f 2>&1; else ds $l $d $a > $f 2>&1; fi
        echo "-- $l ${a:+BIG }${d:-slices} r$r: $(grep -E '^send_bw 64' $f | cut -c20-95)"
        grep -E "last sends returned" $f | sed 's/.*ep 0: //' | cut -c1-250
        [ $r = 1 ] && grep -E "ep 1: lanes from other|block 0: [0-9]+ busy" $f | sed 's/.*INFO  //' | cut -c1-330
      done
    done
  done
  if [ $r = 2 ]; then for l in base pc; do for d in "" -D; do
    echo "-- $l 16 B ${d:-slices}: $(ds $l -s16 $d | grep -E '^send_bw 16|FAIL|rror' | cut -c1-110)"; done; done; fi
done > >(grep -v "^$") 
echo "== $(date +%T) Exchange profile (3 iterations), base and pc"
for l in base pc; do
( export LD_LIBRARY_PATH=$(lib $l) MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
    MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 MGI_WL_MGI_PROFILE=1
  for op in exchange groupby join; do
  timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|profile|rror" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-700; done ) > $O/wl-$l.txt 2>&1
echo "-- $l"; grep -E "^[a-z]+ +mgi" $O/wl-$l.txt
done
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1150 (2 GPUs): device send 64 B GPU0 -> GPU1, 16 GiB, shared tiles,
# the deeper set, with the mover's flushes on 1, 2 or 4 CUDA streams
# (MGI_MOVER_STREAMS: consecutive flushes' batches may then run on
# different copy engines), in turn, two rounds.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mover/r1150.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
ds() {  # device send, one process: -bN / -D / -sN / -nN / VAR=value settings
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib CUDA_MODULE_LOADING=EAGER UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
for r in 1 2; do for st in 1 2 4; do
  ds -D -n268435456 MGI_MOVER_STREAMS=$st > /tmp/ds.txt 2>&1
  echo "-- r$r streams $st: $(grep -E '^send_bw (64|16) B|FAIL|rror' /tmp/ds.txt | head -2 | cut -c1-112)"
  grep -E "^json" /tmp/ds.txt >> $O/ds-json.txt
done; done
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1060 (2 GPUs): the mover's copies inside the process posted as one
# cudaMemcpyBatchAsync per flush (MGI_MOVER_COPY_BATCH=1, the default)
# against one cudaMemcpyAsync each (=0), in turn: device send 64 B GPU0 ->
# GPU1 (one process) with the sets of run1040 (D: copies of up to 32 MiB,
# B: up to 16 MiB) and run510's, tiles shared (-D) or a slice a block.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mover/r1060.sh
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
line() { echo "$(grep -E '^send_bw (64|16) B' $1 | sed 's/send_bw //;s/ (GPU0 -> GPU1)//;s/, tile sends.*//') | $(grep -E 'last sends returned' $1 | sed 's/.*returned //;s/ after the first.*//')"; }
D="MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096"
Bs="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=2048"
for cb in 1 0; do
  ds -D $D MGI_MOVER_COPY_BATCH=$cb UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 > $O/ds-D-batch$cb-info.txt 2>&1
  echo "-- copy batch $cb, D -D, info: $(line $O/ds-D-batch$cb-info.txt)"
  grep -E "mover \(rank" $O/ds-D-batch$cb-info.txt | sed -E 's/^\[([0-9.]+)\].*mover \(rank [0-9]\): ([0-9]+) segments\/s.* ([0-9]+) copies inside the process, ([0-9]+) KB and ([0-9.]+) us.*flushes done ([0-9.]+) us.*/\1 \2 \3 \4 \5 \6/' | awk 'NR>1{dt=$1-p; if ($2>0) printf "  %.4f dt=%.2fms GB/s=%.1f copies=%d KB=%d post_us=%s done_us=%s\n",$1,dt*1e3,$2*131072/1e9,$3,$4,$5,$6} {p=$1}'
done
for r in 1 2 3; do
  for cfg in "-D $D" "-D $Bs" "-D" "-b59 $D"; do
    for cb in 1 0; do
      echo "-- r$r batch $cb $(echo $cfg | sed "s/$D/D/;s/$Bs/B/"): $(ds $cfg MGI_MOVER_COPY_BATCH=$cb > /tmp/ds.txt; line /tmp/ds.txt)"
    done
  done
done
for cb in 1 0; do echo "-- 16 B batch $cb -D D: $(ds -s16 -D $D MGI_MOVER_COPY_BATCH=$cb > /tmp/ds.txt; line /tmp/ds.txt)"; done
echo "== $(date +%T) done in ${SECONDS}s"

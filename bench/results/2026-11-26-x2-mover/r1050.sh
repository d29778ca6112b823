#!/usr/bin/env bash
# run1050 (2 GPUs): the tree with helpers claiming whole moves in parallel
# (bundle/lib): device send 64 B GPU0 -> GPU1 (one process, -D) with
# run1040's set D (copies of up to 32 MiB), its mover's rate every 2 ms
# (the start and the end of a run), and copies of up to 64 MiB (F), fewer
# flushes in flight (G), deeper stage rings (H).
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mover/r1050.sh
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
declare -A C=(
  [D]="$D"
  [F]="MGI_MOVER_BATCH=512 MGI_SORT_DEPTH=4096 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=8192"
  [G]="$D MGI_MOVER_FLUSHES=8"
  [H]="$D MGI_STAGE_DEPTH=64"
)
ds -D $D UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 > $O/ds-D-info.txt 2>&1
echo "-- D -D, info: $(line $O/ds-D-info.txt)"
grep -E "mover \(rank" $O/ds-D-info.txt | sed -E 's/^\[([0-9.]+)\].*mover \(rank [0-9]\): ([0-9]+) segments\/s.* ([0-9]+) copies inside the process, ([0-9]+) KB.*/\1 \2 \3 \4/' | awk 'NR>1{dt=$1-p; if ($2>0) printf "  %.4f dt=%.2fms GB/s=%.1f copies=%d KB=%d\n",$1,dt*1e3,$2*131072/1e9,$3,$4} {p=$1}'
for r in 1 2; do
  for k in D F G H; do
    echo "-- r$r $k (${C[$k]}) -D: $(ds -D ${C[$k]} > /tmp/ds.txt; line /tmp/ds.txt)"
  done
done
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1220 (2 GPUs): where a device-send kernel's event time goes outside
# its blocks: mgi_gpu_test now launches a one-thread kernel just before
# and just after the timed one on its stream and prints their times
# against the first block's start and the last block's end; 64 B twice
# (16 GiB shared tiles, set D), 16 B once; then the workloads' Exchange
# with the user blocks' profile (MGI_WL_MGI_PROFILE=1).
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-eof-runs/r1220.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
ds() {  # device send, one process: -bN / -D / -sN / -nN / VAR=value settings
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
echo "== $(date +%T) device send, timeline"
for a in "-D -n268435456" "-D -n268435456" "-s16 -D -n1073741824" "-D -n33554432"; do
  ds $a > /tmp/ds.txt 2>&1
  echo "-- $a"; grep -E "^send_bw (64|16) B|FAIL|rror|received from|done \(|last sends" /tmp/ds.txt | cut -c1-330
  cat /tmp/ds.txt >> $O/ds.txt
done
echo "== $(date +%T) Exchange, profile"
( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 MGI_WL_MGI_PROFILE=1
  timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange > $O/exchange-profile.txt 2>&1 )
grep -E "^[a-z]+ +mgi|^# mgi" $O/exchange-profile.txt | cut -c1-700
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1080 (2 GPUs): where device send's time outside the mover's run goes
# (mgi_gpu_test now prints when the receiving blocks first and last got
# tuples, of the kernel's time), and the workloads' Exchange with deeper
# lanes, larger mover puts, or the transport's batched copies.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mover/r1080.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
ds() {  # device send, one process: -bN / -D / -sN / VAR=value settings
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib CUDA_MODULE_LOADING=EAGER UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
for r in 1 2; do for a in "-D" "-b59" "-D -n268435456"; do
  ds $a > /tmp/ds.txt 2>&1
  echo "-- r$r $a: $(grep -E '^send_bw (64|16) B' /tmp/ds.txt | cut -c1-110)"
  grep -E "last sends returned|tuples received from" /tmp/ds.txt | sed 's/^send_bw rank 0 //' | cut -c1-200
done; done
wl() {  # the workloads' MGI variant with run.sh's settings, then VAR=value settings: OP
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    op=$1; shift; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//' | cut -c1-140 )
}
for r in 1 2; do
  for cfg in "" "MGI_RECV_DEPTH=2048" "MGI_STAGE_DEPTH=64 MGI_MOVER_BATCH=64" "UCX_CUDA_MGI_BATCH=y" "MGI_SORTER_BLOCKS=32"; do
    echo "-- r$r ${cfg:-run.sh}: $(wl exchange $cfg)"
  done
done
echo "== $(date +%T) done in ${SECONDS}s"

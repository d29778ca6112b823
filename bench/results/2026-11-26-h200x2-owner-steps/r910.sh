#!/usr/bin/env bash
# run910 (2 x H200): as run900, with the cycles of the lane step parts; why a receive lane's owner issues few whole moves a
# step. The owners' new counters of busy issue steps (segments ready beyond
# the jobs in flight) and why each step's issue stopped, in the sorter's
# info lines at the end; device send 64 B with run510's settings and with
# larger mover copies (BIG, 1 GiB more so the steady state dominates).
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-owner-steps/r910.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
ds() {  # device send, one process: extra VAR=value settings as arguments
  ( export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
    b=64; n=67108864; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s ${S:-64} -n $n -b $b -K 4 -T 40 2>&1 )
}
wl() {  # the workloads' MGI variant with run.sh's settings, then VAR=value settings
  ( export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    op=$1; shift; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters ${IT:-3} --warmup 1 --gib 2 --variant mgi --op $op 2>&1 )
}
BIG="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32"
for a in "" "$BIG"; do
  f=$O/ds-info${a:+-big}.txt
  ds -n268435456 $a UCX_LOG_LEVEL=info > $f 2>&1
  echo "-- ${a:-as run510}, 256 Mi tuples: $(grep -E '^send_bw 64' $f | cut -c1-200)"
  grep -E "sorter block [0-9]+|lanes from other|final rings|sorter rounds" $f | sed 's/.*INFO  //' | cut -c1-700
done

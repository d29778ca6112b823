#!/usr/bin/env bash
# run1240 (2 GPUs): the mover sets a route up (its lane; for copies inside
# the process its CUDA streams and events and the GPUs' peer access) when
# the route appears, instead of at its first segment (bundle/lib-setup)
# against the tree of e263e9c (bundle/lib), in turn: device send 64 B
# GPU0 -> GPU1, set D, 16 GiB shared tiles, 8 GiB 59 slices, 2 GiB; the
# workloads' Exchange once each.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-eof-runs/r1240.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
ds() {  # device send, one process: library folder, then -bN / -D / -sN / -nN / VAR=value settings
  ( L=$1; shift
    export LD_LIBRARY_PATH=$PWD/bundle/$L:$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
wl() {  # the workloads' MGI variant with run.sh's settings: library folder, op
  ( export LD_LIBRARY_PATH=$PWD/bundle/$1:$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $2 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-140 )
}
echo "== $(date +%T) device send, tree (lib) and the change (lib-setup) in turn"
for r in 1 2; do
  for a in "-D -n268435456" "-b59" "-D -n33554432"; do
    for L in lib lib-setup; do
      ds $L $a > /tmp/ds.txt 2>&1
      echo "-- r$r $L $a: $(grep -E '^send_bw (64|16) B|FAIL|rror' /tmp/ds.txt | head -2 | cut -c1-112)"
      grep -E "tuples received from" /tmp/ds.txt | sed 's/^send_bw rank 0 //' | cut -c1-200
      grep -E "^json" /tmp/ds.txt | sed "s/^/$L /" >> $O/ds-json.txt
    done
  done
done
echo "== $(date +%T) Exchange"
for L in lib lib-setup; do echo "-- $L: $(wl $L exchange)"; done
echo "== $(date +%T) done in ${SECONDS}s"

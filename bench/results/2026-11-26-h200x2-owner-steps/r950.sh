#!/usr/bin/env bash
# run950 (2 x H200): whole stage moves that pass RTail at their reservation
# (mgi_gpu_whole_reserve: new) against RTail left at the filled slot until
# the commit (base: bundle/lib-base, libmgi of the same tree built with
# -DMGI_GPU_NO_WHOLE_PASS), in turn: device send 64 B and 16 B GPU0 -> GPU1
# (one process), then the workloads' MGI variant (Exchange, GroupBy, Join),
# then the MGI GPU suite on the new libmgi.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-owner-steps/r950.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
lib() { case $1 in new) echo $PWD/bundle/lib;; base) echo $PWD/bundle/lib-base:$PWD/bundle/lib;; j256) echo $PWD/bundle/lib-j256:$PWD/bundle/lib;; esac; }
ds() {  # device send, one process: LIB, then VAR=value settings
  ( export LD_LIBRARY_PATH=$(lib $1); shift
    export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
    b=64; n=67108864; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s ${S:-64} -n $n -b $b -K 4 -T 40 2>&1 )
}
wl() {  # the workloads' MGI variant with run.sh's settings: LIB OP
  ( export LD_LIBRARY_PATH=$(lib $1)
    export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $2 2>&1 | grep -E "^[a-z]+ +mgi|rror" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-200 )
}
BIG="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32"
for r in 1 2; do
  for l in base new; do
    for a in "" "$BIG"; do
      f=$O/ds-$l-$r${a:+-big}.txt
      ds $l -n134217728 $a UCX_LOG_LEVEL=info > $f 2>&1
      echo "-- $l ${a:-as run510}: $(grep -E '^send_bw 64' $f | cut -c1-120)"
      grep -E "whole stage moves" $f | sed 's/.*INFO  //' | cut -c1-400
    done
    echo "-- $l 16 B: $(S=16 ds $l | grep -E '^send_bw 16|FAIL|rror' | cut -c1-120)"
  done
done
for r in 1; do
  for l in base new; do
    for op in exchange groupby join; do echo "-- $l $op: $(wl $l $op)"; done
  done
done
MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy LD_LIBRARY_PATH=$PWD/bundle/lib timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -6

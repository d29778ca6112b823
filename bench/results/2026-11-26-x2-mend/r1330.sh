#!/usr/bin/env bash
# run1330 (2 GPUs, whichever came for nvidia-h200-x2): the tree after the
# review mend of the mover's route setup (061eaa6), on a GPU for the first
# time: MGI's GPU suite, device send 64 B GPU0 -> GPU1 with set D (16 GiB
# shared tiles, 8 GiB 59 slices) and 16 B; then the tile send's phases
# inside the Exchange on 2 GPUs and on 1 (the measurement build of
# ../2026-11-26-x2-final/tile-phases.patch, built as r1320.sh says, as
# bundle/bin/mgi_workloads-tp).
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mend/r1330.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -6
ds() {  # device send, one process: -bN / -D / -sN / -nN / VAR=value settings
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
echo "== $(date +%T) device send"
for a in "-D -n268435456" "-b59" "-D -n268435456" "-b59" "-s16 -D -n1073741824"; do
  ds $a > /tmp/ds.txt 2>&1
  echo "-- $a: $(grep -E '^send_bw (64|16) B|FAIL|rror' /tmp/ds.txt | head -2 | cut -c1-112)"
  grep -E "received from" /tmp/ds.txt | sed 's/^send_bw rank 0 //' | cut -c1-200
  cat /tmp/ds.txt >> $O/ds.txt
done
for g in 2 1; do
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 MGI_WL_MGI_PROFILE=1
    echo "== $(date +%T) tile phases: Exchange, $g GPU(s)"
    timeout 90 $B/mgi_workloads-tp --gpus $g --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange > /tmp/tp.txt 2>&1
    grep -E "^[a-z]+ +mgi|^# mgi|rror" /tmp/tp.txt | cut -c1-400; cat /tmp/tp.txt >> $O/tile-phases.txt )
done
echo "== $(date +%T) done in ${SECONDS}s"

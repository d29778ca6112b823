#!/usr/bin/env bash
# run1350 (2 GPUs): the reservation phase of run1330's tile send, whose
# Exchange reserves per stage group (one group per GPU), split further:
# lane 0 of warp 0's cycles for the layout (thread 0), the look at every
# group's ring after a full one, the reserves, the marks (their CAS
# answers waited for here), the places, in the Exchange with run.sh's
# set, twice. Build first, on the build machine, as
# ../2026-11-26-x2-final/r1320.sh says but with tile-phases3.patch (this
# folder) and the binary named bundle/bin/mgi_workloads-tp3; then, with
# the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mend/r1350.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
for i in 1 2; do
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 MGI_WL_MGI_PROFILE=1
    echo "== $(date +%T) tile phases: Exchange, 2 GPUs, $i"
    timeout 90 $B/mgi_workloads-tp3 --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange > /tmp/tp.txt 2>&1
    grep -E "^[a-z]+ +mgi|^# mgi tile|rror" /tmp/tp.txt | cut -c1-400; cat /tmp/tp.txt >> $O/tile-phases3.txt )
done
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1320 (2 GPUs; NOT RUN yet, no device time was left): where a tile
# send's cycles go inside the Exchange. Build first, on the build machine
# (sm_90, ~5 min):
#   git apply bench/results/2026-11-26-x2-final/tile-phases.patch
#   (cd bench/workloads && nvcc -O3 -gencode=arch=compute_90,code=sm_90 \
#      -std=c++17 -Xcompiler -Wall,-fopenmp -DMGI_DEV_TILE_PHASES \
#      -I../../src/ucp_ext -I. -I../../.deps/ucx/include \
#      -I/usr/local/cuda/include -c -o /tmp/wl-tp.o mgi_workloads.cu &&
#    g++ -o ../../bundle/bin/mgi_workloads-tp /tmp/wl-tp.o mgi_tpch-cu.o \
#      libmgi_wl_host.a -L../../src/ucp_ext/.libs -lmgi \
#      -L../../.deps/ucx/lib -L/usr/local/cuda/lib64 -lucs -luct -lucp \
#      -lucm -lcudart -ldl -fopenmp -lpthread &&
#    patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN/../lib/ucx' \
#      ../../bundle/bin/mgi_workloads-tp)
#   git checkout src/ucp_ext/mgi/mgi_device.cuh bench/workloads/mgi_workloads.cu
# then, with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-final/r1320.sh
# Prints per rank the thread 0 cycles of a taken tile send by phase (room
# and loads, count, reservation and places, writes, commit) beside the
# user blocks' profile, for the Exchange with run.sh's set; and the same
# in the one-GPU Exchange for comparison.
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
nvidia-smi -L
for g in 2 1; do
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 MGI_WL_MGI_PROFILE=1
    echo "== $(date +%T) Exchange, $g GPU(s)"
    timeout 90 $B/mgi_workloads-tp --gpus $g --iters 3 --warmup 1 --gib 2 --variant mgi --op exchange 2>&1 | grep -E "^[a-z]+ +mgi|^# mgi|rror" | cut -c1-400 )
done
echo "== $(date +%T) done in ${SECONDS}s"

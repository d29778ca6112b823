#!/usr/bin/env bash
# run1380 (2 GPUs): the workloads' shuffle kernel taking the channel's
# device handle as a __grid_constant__ parameter (read in place from the
# parameter space, no 88-byte copy in each thread's local memory),
# bundle/bin/mgi_workloads-gc, against the tree's binary
# (mgi_workloads-base, 061eaa6), in turn on one pair: Exchange three times
# each with the user blocks' profile, GroupBy and Join twice each.
# mgi_workloads-gc: 061eaa6 with the one-line change to
# wl_mgi_shuffle_kernel's first parameter, make -C bench/workloads, then
# patchelf --set-rpath '$ORIGIN/../lib:$ORIGIN/../lib/ucx'.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-mend/r1380.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's settings and the profile: BINARY OP
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 MGI_WL_MGI_PROFILE=1
    timeout 90 $B/$1 --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $2 > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-140
    grep -E "# mgi profile rank [01]: user blocks" /tmp/wl.txt | sed 's/^# mgi profile //' | grep -oE "rank [01]: .*cycles per call" | cut -c1-160 )
}
for r in 1 2 3; do
  for b in mgi_workloads-base mgi_workloads-gc; do echo "-- r$r $b:"; wl $b exchange; done
done
for r in 1 2; do for op in groupby join; do
  for b in mgi_workloads-base mgi_workloads-gc; do echo "-- r$r $op $b: $(wl $b $op | head -1)"; done
done; done
echo "== $(date +%T) done in ${SECONDS}s"

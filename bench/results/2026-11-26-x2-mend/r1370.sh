#!/usr/bin/env bash
# run1370 (2 GPUs): run1360's Exchange in turn again, now with the user
# blocks' profile (MGI_WL_MGI_PROFILE=1, which run1360's script meant to
# set and did not): does the primed tile send (bundle/bin/mgi_workloads)
# take fewer cycles per call than the tree before it (mgi_workloads-base)?
# Called with the device tool, bundle/ carried as for run1360:
#   bash bench/results/2026-11-26-x2-mend/r1370.sh
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
    grep -E "^[a-z]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //;s/ compute_ms.*GB.s=/ GB\/s=/' | cut -c1-140
    grep -E "# mgi profile rank [01]: user blocks" /tmp/wl.txt | sed 's/^# mgi profile //' | cut -c1-300 )
}
for r in 1 2; do
  for b in mgi_workloads-base mgi_workloads; do echo "-- r$r $b:"; wl $b exchange; done
done
echo "== $(date +%T) done in ${SECONDS}s"

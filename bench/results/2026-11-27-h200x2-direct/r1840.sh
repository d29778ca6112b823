#!/usr/bin/env bash
# run1840 (2 GPUs): the workloads' Exchange with direct rings
# (MGI_DIRECT_RINGS=1, 1 sorter block), 2 GiB a GPU, MGI variant only:
# the ring size (its memory is made, mapped and zeroed at each channel
# create), user blocks; GroupBy and Join with the best; a profile.
#   bash bench/results/2026-11-27-h200x2-direct/r1840.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # OP [VAR=value ...]: the MGI variant with run.sh's set, direct rings
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    export MGI_DIRECT_RINGS=1 MGI_SORTER_BLOCKS=1 MGI_WL_MGI_BLOCKS=128 MGI_TIMEOUT_MS=20000
    op=$1; shift; for x in "$@"; do export "$x"; done
    timeout 45 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z0-9]+ +mgi +gpus|rror|FAIL" /tmp/wl.txt | sed 's/ sf=.*cross_GB=[0-9.]*//;s/ iters=3//;s/gpus=2 //' | cut -c1-200
    grep -E "# mgi profile rank [01]" /tmp/wl.txt | cut -c1-420 )
}
for s in "" MGI_DIRECT_RING_KB=64 MGI_DIRECT_RING_KB=128 MGI_DIRECT_RING_KB=256 MGI_DIRECT_RING_KB=512 \
         "MGI_DIRECT_RING_KB=256 MGI_WL_MGI_BLOCKS=130" "MGI_DIRECT_RING_KB=128 MGI_WL_MGI_BLOCKS=130"; do
  echo "-- exchange $s: $(wl exchange $s)"
done
for k in 128 256 1024; do
  echo "-- groupby ring $k: $(wl groupby MGI_DIRECT_RING_KB=$k)"
  echo "-- join ring $k: $(wl join MGI_DIRECT_RING_KB=$k)"
done
echo "-- profile, ring 256:"; wl exchange MGI_WL_MGI_PROFILE=1 MGI_DIRECT_RING_KB=256
echo "== $(date +%T) done in ${SECONDS}s"

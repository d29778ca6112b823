#!/usr/bin/env bash
# run1710 (2 GPUs): settings of the MGI Exchange not measured on the x2
# pipeline before, each in turn with run.sh's set (c7f27cf's bundle):
# receive lanes' whole segments to final rings by reference
# (MGI_RECV_ZCOPY=1, the sorter's lane -> final copy gone), and the SMs
# split otherwise between sorter and user blocks (32 + 100, 48 + 84 against
# 40 + 92). Exchange twice each, then GroupBy and Join with RECV_ZCOPY.
#   bash bench/results/2026-11-27-x2-settings/r1710.sh   (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's set: BINARY OP [VAR=value ...]
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    bin=$1; op=$2; shift 2; for v in "$@"; do export "$v"; done
    timeout 90 $B/$bin --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-150
    grep -E "# mgi profile rank [01]" /tmp/wl.txt | cut -c1-420 )
}
for r in 1 2; do
  echo "-- r$r base: $(wl mgi_workloads exchange)"
  echo "-- r$r RECV_ZCOPY=1: $(wl mgi_workloads exchange MGI_RECV_ZCOPY=1)"
  echo "-- r$r 32+100: $(wl mgi_workloads exchange MGI_SORTER_BLOCKS=32 MGI_WL_MGI_BLOCKS=100)"
  echo "-- r$r 48+84: $(wl mgi_workloads exchange MGI_SORTER_BLOCKS=48 MGI_WL_MGI_BLOCKS=84)"
  echo "-- r$r RECV_ZCOPY=1 32+100: $(wl mgi_workloads exchange MGI_RECV_ZCOPY=1 MGI_SORTER_BLOCKS=32 MGI_WL_MGI_BLOCKS=100)"
done
for op in groupby join; do
  echo "-- $op base: $(wl mgi_workloads $op)"
  echo "-- $op RECV_ZCOPY=1: $(wl mgi_workloads $op MGI_RECV_ZCOPY=1)"
done
echo "-- profile base:"; wl mgi_workloads exchange MGI_WL_MGI_PROFILE=1
echo "-- profile RECV_ZCOPY=1:"; wl mgi_workloads exchange MGI_WL_MGI_PROFILE=1 MGI_RECV_ZCOPY=1
echo "== $(date +%T) done in ${SECONDS}s"

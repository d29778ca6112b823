#!/usr/bin/env bash
# run1530 (2 GPUs): what the user blocks' receive copy costs the Exchange.
# mgi_workloads-nocopy: an ablation build (bench/workloads/mgi_workloads.cu
# with `#ifdef WL_ABL_NOCOPY return NULL; #endif` before `return recv +
# base;` in wl_mgi_recv, built with -DWL_ABL_NOCOPY as
# ../2026-11-26-x2-final/r1320.sh says): every round of a receive is taken
# and counted but not copied to the output, so its answer fails the check
# (verify=FAIL expected) and only its times count. In turn with the plain
# build, run.sh's set; then MGI_WL_MGI_RECV_EVERY=0 (receive only when a
# stage ring is full, and after the last send); the profile of each.
#   bash bench/results/2026-11-26-x2-paths/r1530.sh   (bundle/ carried)
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
  for b in mgi_workloads mgi_workloads-nocopy; do
    echo "-- r$r $b: $(wl $b exchange)"
    echo "-- r$r $b RECV_EVERY=0: $(wl $b exchange MGI_WL_MGI_RECV_EVERY=0)"
  done
done
for b in mgi_workloads mgi_workloads-nocopy; do echo "-- profile $b:"; wl $b exchange MGI_WL_MGI_PROFILE=1; done
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1490 (2 GPUs): the channel handle in shared memory. The workloads'
# kernel took its handle by value (a copy in local memory) and read its
# fields in every send and receive; every acquire of the receives empties
# the SM's L1, so such a read was an L2 round trip (run1470/1480: a leased
# call's room check from shared memory alone still took ~2 k cycles). Four
# builds, in turn, same machine, run.sh's set:
#   mgi_workloads-base   fdb694b
#   mgi_workloads-sbase  fdb694b, the kernel's handle copied to shared memory
#   mgi_workloads-lease  the lease tree (run1480's build)
#   mgi_workloads        the lease tree, handle in shared memory
# (-sbase and the last built for sm_90 as ../2026-11-26-x2-final/r1320.sh
# says, without -DMGI_DEV_TILE_PHASES.)
#   bash bench/results/2026-11-26-x2-lease/r1490.sh
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
    grep -E "^[a-z]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-140
    grep -E "# mgi profile rank [01]: user blocks" /tmp/wl.txt | grep -oE "rank [01]: .*cycles per call" | cut -c1-160 )
}
V="mgi_workloads-base mgi_workloads-sbase mgi_workloads-lease mgi_workloads"
echo "== $(date +%T) Exchange, in turn"
for r in 1 2 3 4; do
  p=; [ $r = 4 ] && p=MGI_WL_MGI_PROFILE=1
  for b in $V; do echo "-- r$r $b: $(wl $b exchange $p)"; done
done
echo "== $(date +%T) GroupBy, Join, in turn"
for r in 1 2; do for op in groupby join; do
  for b in $V; do echo "-- r$r $op $b: $(wl $b $op | head -1)"; done
done; done
echo "== $(date +%T) done in ${SECONDS}s"

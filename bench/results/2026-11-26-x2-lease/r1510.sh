#!/usr/bin/env bash
# run1510 (2 GPUs): the tile send's phases again, measured without waiting
# on the measurement. tile-phases3.patch (../2026-11-26-x2-mend/) added
# each phase's cycles to global counters with `+=` (a load, an add, a
# store) inside the phases it timed and just before its last clock read:
# the load's L2 round trip (~2 k cycles under the Exchange's load) fell
# into the phase (run1470/1480: the lease's room check from shared memory
# alone, and a "commit" phase that no longer committed, each timed at
# ~2-2.7 k). tile-phases-red.patch (this folder, on fdb694b) adds them
# with atomicAdd and no use of the result (a reduction, nothing waited
# for); built as ../2026-11-26-x2-final/r1320.sh says into
# bundle/bin/mgi_workloads-tpr. Exchange with run.sh's set and the
# profile, against the plain build (mgi_workloads-base), in turn.
#   bash bench/results/2026-11-26-x2-lease/r1510.sh
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
    grep -E "# mgi profile rank [01]: user blocks" /tmp/wl.txt | grep -oE "rank [01]: .*cycles per call" | cut -c1-160
    grep -E "# mgi tile send" /tmp/wl.txt | cut -c1-230 )
}
for r in 1 2 3; do
  for b in mgi_workloads-base mgi_workloads-tpr; do echo "-- r$r $b: $(wl $b exchange MGI_WL_MGI_PROFILE=1)"; done
done
echo "== $(date +%T) done in ${SECONDS}s"

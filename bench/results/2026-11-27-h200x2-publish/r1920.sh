#!/usr/bin/env bash
# run1920 (2 GPUs): direct-ring tile sends with 16-byte loads and stores,
# the receive's copy in 16-byte words. The whole MGI GPU suite, then the
# workloads (2 GiB a GPU, every variant in one invocation) built twice:
# bundle/bin/mgi_workloads with the tuple type 16-byte aligned (every
# variant's kernels load and store a tuple in one access) and
# bundle/bin/mgi_workloads_u with it 8-byte aligned (as before).
#   bash bench/results/2026-11-27-h200x2-publish/r1920.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) the whole MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 260 bash bundle/run/mgi-gpu-suite.sh bundle/bin /tmp/suite > $O/mgi-suite.txt 2>&1
tail -n 3 $O/mgi-suite.txt; grep -E "^FAIL" $O/mgi-suite.txt | head
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
eval "$(sed -n '/^find_nccl()/,/^}/p' bundle/run/workloads.sh)"; NCCL=$(find_nccl); echo "# NCCL $NCCL"
wl() {  # OP VARIANTS [VAR=value ...]: run.sh's set, direct rings
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_NCCL_LIB=$NCCL
    export UCX_TLS=sm,self,cuda_copy,cuda_ipc
    export MGI_DIRECT_RINGS=1 MGI_SORTER_BLOCKS=1 MGI_WL_MGI_BLOCKS=128 MGI_TIMEOUT_MS=20000
    op=$1; v=$2; shift 2; for x in "$@"; do export "$x"; done
    timeout 60 $B/${WLB:-mgi_workloads} --gpus 2 --iters 3 --warmup 1 --gib 2 --variant $v --op $op ${ZA:-} > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z0-9]+ +[a-z_]+ +gpus|rror|FAIL" /tmp/wl.txt | sed 's/ sf=.*cross_GB=[0-9.]*//;s/ iters=3//;s/gpus=2 //' | cut -c1-200
    grep -E "# mgi profile rank [01]" /tmp/wl.txt | cut -c1-420 )
}
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
for b in mgi_workloads mgi_workloads_u; do
  echo "== $(date +%T) $b, exchange, $S"; WLB=$b wl exchange nccl,ucx,peer,mgi $S
  echo "-- $b, exchange, 128 user blocks of 1024 threads:"; WLB=$b wl exchange mgi
  echo "-- $b, profile:"; WLB=$b wl exchange mgi $S MGI_WL_MGI_PROFILE=1
done
echo "== $(date +%T) mgi_workloads, groupby, join, $S"
wl groupby nccl,ucx,mgi $S; wl join nccl,ucx,mgi $S
for s in MGI_DIRECT_PUBLISH_KB=64 MGI_DIRECT_PUBLISH_KB=256 MGI_DIRECT_RING_KB=256 MGI_WL_MGI_RECV_EVERY=4; do
  echo "-- exchange $S $s: $(wl exchange mgi $S $s)"
done
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"

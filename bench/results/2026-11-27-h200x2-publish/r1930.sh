#!/usr/bin/env bash
# run1930 (2 GPUs): the fused receives read a tuple as two 8-byte words
# (run1920's fused steps failed with the 16-byte aligned tuple type: final
# rings hold tuples at 8-byte places). The suite's workloads steps, then the
# Exchange (2 GiB a GPU) of three builds of mgi_workloads on one machine:
#   mgi_workloads     direct-ring tile sends store in 16-byte words,
#                     tails published every MGI_DIRECT_PUBLISH_KB (loads
#                     and the receive's copy in 8-byte words: run1920's
#                     16-byte ones made the shuffle kernel spill 1.1 KB)
#   mgi_workloads_b   the same, -DMGI_DEV_DRING_V16=0 (8-byte words)
#   mgi_workloads_c   the device header of 5626a5c (8-byte words, a tail
#                     published after every send) with this libmgi
# all with the 16-byte aligned tuple type.
#   bash bench/results/2026-11-27-h200x2-publish/r1930.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) the MGI GPU suite, workloads steps"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 260 bash bundle/run/mgi-gpu-suite.sh bundle/bin /tmp/suite workloads > $O/mgi-suite.txt 2>&1
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
echo "== $(date +%T) exchange, every variant, $S"; wl exchange nccl,ucx,ucx_mgi,peer,mgi $S
for r in 1 2; do
  for b in mgi_workloads mgi_workloads_b mgi_workloads_c; do
    echo "-- $b $S: $(WLB=$b wl exchange mgi $S)"
    echo "-- $b 128 x 1024: $(WLB=$b wl exchange mgi)"
  done
done
for b in mgi_workloads mgi_workloads_b; do echo "-- $b profile:"; WLB=$b wl exchange mgi $S MGI_WL_MGI_PROFILE=1; done
echo "== $(date +%T) groupby, join, $S"
wl groupby nccl,ucx,mgi $S; wl join nccl,ucx,mgi $S
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"

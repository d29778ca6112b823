#!/usr/bin/env bash
# run1900 (2 GPUs): direct rings whose tails are published every
# MGI_DIRECT_PUBLISH_KB (0: after every send, the earlier build's way):
# the '_direct' steps of the GPU suite, then the workloads' Exchange,
# 2 GiB a GPU: NCCL, UCX-only, peer and MGI in one invocation, then MGI
# alone over publish sizes and user-block shapes.
#   bash bench/results/2026-11-27-h200x2-publish/r1900.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) GPU suite, _direct steps"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 200 bash bundle/run/mgi-gpu-suite.sh bundle/bin /tmp/suite '_direct' > $O/mgi-suite.txt 2>&1
tail -4 $O/mgi-suite.txt; grep -E "FAIL" $O/mgi-suite.txt | head
tar czf $O/suite-logs.tgz -C /tmp suite 2>/dev/null
eval "$(sed -n '/^find_nccl()/,/^}/p' bundle/run/workloads.sh)"; NCCL=$(find_nccl); echo "# NCCL $NCCL"
wl() {  # OP VARIANTS [VAR=value ...]: run.sh's set, direct rings
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_NCCL_LIB=$NCCL
    export UCX_TLS=sm,self,cuda_copy,cuda_ipc
    export MGI_DIRECT_RINGS=1 MGI_SORTER_BLOCKS=1 MGI_WL_MGI_BLOCKS=128 MGI_TIMEOUT_MS=20000
    op=$1; v=$2; shift 2; for x in "$@"; do export "$x"; done
    timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant $v --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z0-9]+ +[a-z_]+ +gpus|rror|FAIL" /tmp/wl.txt | sed 's/ sf=.*cross_GB=[0-9.]*//;s/ iters=3//;s/gpus=2 //' | cut -c1-200
    grep -E "# mgi profile rank [01]" /tmp/wl.txt | cut -c1-420 )
}
echo "== $(date +%T) exchange, all variants"; wl exchange nccl,ucx,peer,mgi
for s in MGI_DIRECT_PUBLISH_KB=0 MGI_DIRECT_PUBLISH_KB=32 MGI_DIRECT_PUBLISH_KB=64 MGI_DIRECT_PUBLISH_KB=256 \
         "MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512" \
         "MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512 MGI_DIRECT_PUBLISH_KB=0" \
         "MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512 MGI_DIRECT_RING_KB=256" \
         "MGI_WL_MGI_BLOCKS=264 MGI_WL_MGI_THREADS=512" \
         "MGI_WL_MGI_BLOCKS=512 MGI_WL_MGI_THREADS=256"; do
  echo "-- exchange $s: $(wl exchange mgi $s)"
done
echo "-- profile:"; wl exchange mgi MGI_WL_MGI_PROFILE=1
echo "-- groupby/join:"; wl groupby nccl,mgi; wl join nccl,mgi
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"

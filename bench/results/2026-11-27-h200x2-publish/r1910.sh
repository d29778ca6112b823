#!/usr/bin/env bash
# run1910 (2 GPUs): the same build as run1900; the Exchange, 2 GiB a GPU,
# MGI alone with 256 user blocks of 512 threads (2 an SM) over publish
# sizes, ring sizes, receive pacing and block shapes; then NCCL, UCX-only,
# peer and MGI in one invocation with that shape, GroupBy and Join too.
#   bash bench/results/2026-11-27-h200x2-publish/r1910.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
eval "$(sed -n '/^find_nccl()/,/^}/p' bundle/run/workloads.sh)"; NCCL=$(find_nccl); echo "# NCCL $NCCL"
wl() {  # OP VARIANTS [VAR=value ...]: run.sh's set, direct rings
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_NCCL_LIB=$NCCL
    export UCX_TLS=sm,self,cuda_copy,cuda_ipc
    export MGI_DIRECT_RINGS=1 MGI_SORTER_BLOCKS=1 MGI_WL_MGI_BLOCKS=128 MGI_TIMEOUT_MS=20000
    op=$1; v=$2; shift 2; for x in "$@"; do export "$x"; done
    timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant $v --op $op ${ZA:-} > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z0-9]+ +[a-z_]+ +gpus|rror|FAIL" /tmp/wl.txt | sed 's/ sf=.*cross_GB=[0-9.]*//;s/ iters=3//;s/gpus=2 //' | cut -c1-200
    grep -E "# mgi profile rank [01]" /tmp/wl.txt | cut -c1-420 )
}
S="MGI_WL_MGI_BLOCKS=256 MGI_WL_MGI_THREADS=512"
for s in "" "" MGI_DIRECT_PUBLISH_KB=64 MGI_DIRECT_PUBLISH_KB=256 MGI_DIRECT_RING_KB=1024 \
         "MGI_DIRECT_RING_KB=1024 MGI_DIRECT_PUBLISH_KB=512" \
         MGI_WL_MGI_RECV_EVERY=4 MGI_WL_MGI_RECV_EVERY=16 MGI_WL_MGI_RECV_TUPLES=16384 \
         MGI_WL_MGI_TILE=2 MGI_WL_MGI_BLOCKS=262 MGI_WL_MGI_BLOCKS=192 \
         "MGI_WL_MGI_BLOCKS=384 MGI_WL_MGI_THREADS=256" "MGI_WL_MGI_BLOCKS=128 MGI_WL_MGI_THREADS=1024"; do
  echo "-- exchange $S $s: $(wl exchange mgi $S $s)"
done
echo "-- profile:"; wl exchange mgi $S MGI_WL_MGI_PROFILE=1
echo "== $(date +%T) all variants, $S"
wl exchange nccl,ucx,ucx_mgi,peer,mgi $S; wl groupby nccl,ucx,mgi $S; wl join nccl,ucx,mgi $S
for z in 0.5 1.5; do echo "-- zipf $z"; ZA="--zipf $z" wl exchange nccl,mgi $S; done
tar czf $O/wl.tgz -C $O wl.txt && rm -f $O/wl.txt
echo "== $(date +%T) done in ${SECONDS}s"

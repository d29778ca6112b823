# Sourced by this folder's later run scripts (r1960.sh on): the run's log,
# the environment, and wl OP VARIANTS [VAR=value ...], which runs
# mgi_workloads (or $WLB) with run.sh's ring settings and direct rings,
# 2 GiB a GPU, 3 iterations, and prints its result lines.
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
    timeout 60 $B/${WLB:-mgi_workloads} --gpus 2 --iters 3 --warmup 1 --gib 2 --variant $v --op $op ${ZA:-} > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z0-9]+ +[a-z_]+ +gpus|rror|FAIL" /tmp/wl.txt | sed 's/ sf=.*cross_GB=[0-9.]*//;s/ iters=3//;s/gpus=2 //' | cut -c1-200
    grep -E "# mgi profile rank [01]" /tmp/wl.txt | cut -c1-420 )
}

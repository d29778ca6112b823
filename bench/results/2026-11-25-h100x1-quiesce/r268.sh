#!/usr/bin/env bash
# run268: the user kernel with the one-destination tile send called
# directly (wlone: -DWL_SPECIAL_ONE, ~0.26-0.39 MB of SASS a shuffle kernel)
# against the tree's dispatch (wl1024: ~0.96-0.99 MB); sm_90 builds of HEAD
B=$PWD/bundle/bin
for f in wlone wl1024; do gunzip -c abbase/prev/$f.gz > /tmp/$f; chmod +x /tmp/$f; done
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
one() { name=$1; bin=$2; op=$3; shift 3; echo "== $(date +%T) $name $op $*"; echo "== $name $op $*" >> $R
  "${set_[@]}" "$@" timeout 60 $bin --op $op --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "total_ms|# mgi|rror|FAIL|fit" /tmp/o.txt | sed 's/sf=.*partition/partition/' | cut -c1-420; }
for r in 1 2; do for op in exchange join groupby; do
  one tree /tmp/wl1024 $op
  one one /tmp/wlone $op
done; done
one treep /tmp/wl1024 exchange MGI_WL_MGI_PROFILE=1
one onep /tmp/wlone exchange MGI_WL_MGI_PROFILE=1

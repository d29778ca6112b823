#!/usr/bin/env bash
# run267: the user kernel at 128 registers a thread (launch bounds 512, wl512)
# against 64 (launch bounds 1024, wl1024; the tree's), sm_90 builds of HEAD
B=$PWD/bundle/bin
for f in wl512 wl1024; do gunzip -c abbase/prev/$f.gz > /tmp/$f; chmod +x /tmp/$f; done
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
one() { name=$1; bin=$2; op=$3; shift 3; echo "== $(date +%T) $name $op $*"; echo "== $name $op $*" >> $R
  "${set_[@]}" "$@" timeout 60 $bin --op $op --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "total_ms|# mgi|rror|FAIL|fit" /tmp/o.txt | sed 's/sf=.*partition/partition/' | cut -c1-420; }
for r in 1 2; do for op in exchange join groupby; do
  one r64 /tmp/wl1024 $op
  one r128-t512-tile8 /tmp/wl512 $op MGI_WL_MGI_THREADS=512 MGI_WL_MGI_TILE=8
  one r128-t512-tile4 /tmp/wl512 $op MGI_WL_MGI_THREADS=512
done; done
one r64p /tmp/wl1024 exchange MGI_WL_MGI_PROFILE=1
one r128p /tmp/wl512 exchange MGI_WL_MGI_PROFILE=1 MGI_WL_MGI_THREADS=512 MGI_WL_MGI_TILE=8

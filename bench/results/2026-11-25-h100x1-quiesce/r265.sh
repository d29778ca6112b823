#!/usr/bin/env bash
# run265: tile sends of one destination in one call across a segment end
# (new = bundle, old = abbase/prev/mgi_workloads of 98905d0), alternating;
# one rank, and the stand-in (two destinations: the batched path, unchanged)
B=$PWD/bundle/bin; [ -f abbase/prev/mgi_workloads.gz ] && gunzip -kf abbase/prev/mgi_workloads.gz
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
wl() { [ "$1" = old ] && echo $PWD/abbase/prev/mgi_workloads || echo $B/mgi_workloads; }
one() { v=$1; op=$2; shift 2; echo "== $(date +%T) $v one rank $op $*"; echo "== $v one $op $*" >> $R
  "${set_[@]}" "$@" timeout 60 $(wl $v) --op $op --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "total_ms|# mgi profile|rror|FAIL" /tmp/o.txt | sed 's/sf=.*partition/partition/' | cut -c1-420; }
for r in 1 2 3; do for op in exchange join groupby; do for v in old new; do one $v $op; done; done; done
for v in old new; do one $v exchange MGI_WL_MGI_PROFILE=1; done
for v in new; do
  G=$B/mgi_gpu_test; [ $v = old ] && G=$PWD/abbase/prev/mgi_gpu_test
  for s in 16 64; do echo "== $v send_bw -l 2 -s $s -K 4 (tile batch)"
  MGI_DEV_TILE_BATCH=65528 "${set_[@]}" timeout 60 $G bench -l 2 -s $s -n 33554432 -b 32 -K 4 -T 30 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror" | cut -c1-250; done; done

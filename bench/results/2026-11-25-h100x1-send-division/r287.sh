#!/usr/bin/env bash
# run287: the one-destination tile send with the message index carried
# (new = bundle) against the division per word (old: abbase/prev/wl_head, the
# bundle of 0692a1c, and abbase/gtp), alternating: one rank (one destination:
# mgi_dev_send_tile_one, the changed path) and the stand-in (two: the batch,
# unchanged), every op; #5's device send in one process (-l 2, tiles: gtp
# against gtp2, both timed by phase)
B=$PWD/bundle/bin
gunzip -c abbase/prev/wl_head.gz > /tmp/wl_old; cp abbase/gtp /tmp/gt_old; chmod +x /tmp/wl_old /tmp/gt_old
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
wl() { [ "$1" = old ] && echo /tmp/wl_old || echo $B/mgi_workloads; }
one() { v=$1; op=$2; shift 2; echo "== $(date +%T) $v one rank $op $*"; echo "== $v one $op $*" >> $R
  "${set_[@]}" "$@" timeout 60 $(wl $v) --op $op --variant mgi --gpus 1 --gib 0.5 --iters 3 --warmup 1 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "total_ms|# mgi profile|rror|FAIL" /tmp/o.txt | sed 's/sf=.*partition/partition/' | cut -c1-420; }
two() { v=$1; op=$2; shift 2; echo "== $(date +%T) $v stand-in $op $*"; echo "== $v two $op $*" >> $R
  "${set_[@]}" MGI_WL_SHARE_GPUS=1 MGI_STAGE_GROUPS=2 "$@" timeout 60 $(wl $v) --op $op --variant mgi --gpus 2 --gib 0.5 --iters 3 --warmup 1 > /tmp/o.txt 2>&1
  cat /tmp/o.txt >> $R; grep -E "total_ms|# mgi profile|rror|FAIL" /tmp/o.txt | sed 's/sf=.*partition/partition/' | cut -c1-420; }
for r in 1 2; do for op in exchange join groupby; do for v in old new; do one $v $op; done; done; done
for v in old new; do one $v exchange MGI_WL_MGI_PROFILE=1; done
for v in old new; do G=abbase/gtp2; [ $v = old ] && G=/tmp/gt_old
  for s in 64 16; do for r in 1 2; do echo "== $v send_bw -l 2 -s $s -b 32 -K 4"
  MGI_DEV_TILE_BATCH=65528 "${set_[@]}" timeout 60 $G bench -l 2 -s $s -n 33554432 -b 32 -K 4 -T 30 2>&1 | grep -E "^send_bw [0-9]|tile_one|FAIL|rror" | cut -c1-250; done; done; done
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
nvidia-cuda-mps-control -d && echo "== MPS daemon started"; sleep 1
for r in 1 2; do for op in exchange join groupby; do for v in old new; do two $v $op; done; done; done
for v in old new; do two $v exchange MGI_WL_MGI_PROFILE=1; done
echo quit | nvidia-cuda-mps-control; sleep 1
[ -n "$SUITE" ] && SUITE_S=420 bash abbase/r80b.sh suite '.' | tail -8

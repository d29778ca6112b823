#!/usr/bin/env bash
# run263: how often and how much the user blocks receive, ring depths; one rank
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 NCCL_NVLS_ENABLE=0 UCX_TLS=sm,self,cuda_copy,cuda_ipc
L=${OUT:-/tmp}/log.txt; R=${OUT:-/tmp}/raw.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
run() { name=$1; shift; echo "== $(date +%T) $name: $*"; echo "== $name $*" >> $R
  "${set_[@]}" "$@" > /tmp/o.txt 2>&1; cat /tmp/o.txt >> $R
  grep -E "GB/s|# mgi|rror|FAIL|fit|total_ms" /tmp/o.txt | grep -v "^# mgi: " | sed 's/sf=.*partition/partition/' | cut -c1-700; }
W="timeout 60 $B/mgi_workloads --gpus 1 --gib 0.5 --iters 3 --warmup 1"
while read -r name v; do [ -z "$name" ] && continue
  run "$name" ${v//,/ } $W --op ${OP:-exchange} --variant mgi
done <<LIST
$LIST1
LIST

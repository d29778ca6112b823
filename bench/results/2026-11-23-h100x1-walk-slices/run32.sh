#!/usr/bin/env bash
# Probe (varI: this tree + clocks of thread 0's copy loop and fence in the
# "whole stage moves" fields): does the placing copy's time follow the
# rings' footprint? Exchange 64 B with the tuned settings, with smaller
# ring depths, with MGI_RECV_ZCOPY=1, with 64 KiB segments; info logs.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|sorter (totals|rounds|passes)|whole stage|of the placing|mover.*segments/s'
run() { n=$1; shift; f=$O/shuffle-info-64B-$n.txt
  env $tuned "$@" UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 LD_LIBRARY_PATH=$PWD/abbase/varI:$PWD/bundle/lib timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $f 2>&1
  echo "== $n: $*"; grep -E "$pick" $f | sed 's/^.*INFO  //' | grep -vE "mover.* 0 segments/s" | tail -12
}
run tuned MGI_SORTER_COALESCE=2
run small MGI_RECV_DEPTH=128 MGI_SORT_DEPTH=64 MGI_FINAL_DEPTH=16
run zcopy MGI_RECV_ZCOPY=1
run seg64k MGI_SEG_SIZE=65536 MGI_STAGE_DEPTH=32 MGI_SORT_DEPTH=512 MGI_RECV_DEPTH=2048 MGI_FINAL_DEPTH=128
run blocks16 MGI_SORTER_BLOCKS=16

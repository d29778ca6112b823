#!/usr/bin/env bash
# run259: a reference takes at most half a stage ring (its block fills the
# other half meanwhile): device send between two endpoints of one process
# and the stand-in against the mover's copies, alternating; then the whole
# GPU suite
O=${OUT:-/tmp}
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
tuned=(env UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for s in 64 16; do
for v in "0 16" "1 32" "1 64" "0 16" "1 32" "1 64"; do
  set -- $v
  echo "== $(date +%T) bench -l 2 -s $s -K 4 MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2"
  "${tuned[@]}" MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2 timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n 16777216 -b 32 -K 4 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror|TIMEOUT" | cut -c1-300
done
done
R20=MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=20
for op in exchange join groupby; do
OP=$op LIST1="mover MGI_SEND_ZCOPY=0
ref20 $R20
ref20z $R20,MGI_RECV_ZCOPY=1
mover MGI_SEND_ZCOPY=0
ref20 $R20
ref20z $R20,MGI_RECV_ZCOPY=1" LIST2= bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done
SUITE_S=420 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT"

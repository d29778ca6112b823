#!/usr/bin/env bash
# run251 (as run250, after the credit fix and the runs that wait to grow):
# run250: MGI_SEND_ZCOPY (whole stage segments put by the mover from the
# stage ring, several side by side a put): the GPU suite's send_ref steps,
# then A/B on one H100: device send between two endpoints of one process
# (the mover's CUDA copies), the stand-in (two ranks under MPS, the mover's
# UCP puts through cuda_mgi), alternating in one call
O=${OUT:-/tmp}
SUITE_S=300 bash abbase/r80b.sh suite 'send_ref' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT|^PASS"
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
tuned=(env UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for r in 1 2; do
for v in "0 16" "1 16" "1 32"; do
  set -- $v
  echo "== $(date +%T) bench -l 2 -s 64 -K 4 MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2"
  "${tuned[@]}" MGI_SEND_ZCOPY=$1 MGI_STAGE_DEPTH=$2 timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 16777216 -b 32 -K 4 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror|TIMEOUT" | cut -c1-300
done
done
echo "== $(date +%T) info: bench -l 2 MGI_SEND_ZCOPY=1"
"${tuned[@]}" MGI_SEND_ZCOPY=1 MGI_STAGE_DEPTH=32 UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=100000 timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 16777216 -b 32 -K 4 -T 40 > $O/info1.txt 2>&1
grep -E "by reference|mover \(rank|^send_bw [0-9]" $O/info1.txt | cut -c1-400 | tail -8
for op in exchange join; do
  OP=$op LIST1=$'mover MGI_SEND_ZCOPY=0\nref MGI_SEND_ZCOPY=1\nref32 MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32\nmover MGI_SEND_ZCOPY=0\nref MGI_SEND_ZCOPY=1\nref32 MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32' LIST2= bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL|^$op" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done

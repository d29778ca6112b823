#!/usr/bin/env bash
# run260: the review's mend (MGI_SEND_WAIT_ROUNDS a variable, default 16;
# the mover's one put helper; one peer-access helper; the table's flag from
# the endpoint's setting): the whole GPU suite, then how long a short run
# should wait: 0 / 4 / 16 / 64 rounds, the stand-in's Exchange and Join
# (ref20z) and device send in one process, alternating
O=${OUT:-/tmp}
SUITE_S=420 bash abbase/r80b.sh suite '.' 2>&1 | grep -E "^== [0-9]|^FAIL|^TIMEOUT"
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
R=MGI_SEND_ZCOPY=1,MGI_STAGE_DEPTH=32,MGI_SORTER_BLOCKS=20,MGI_RECV_ZCOPY=1
for op in exchange join; do
OP=$op LIST1="w0 $R,MGI_SEND_WAIT_ROUNDS=0
w4 $R,MGI_SEND_WAIT_ROUNDS=4
w16 $R
w64 $R,MGI_SEND_WAIT_ROUNDS=64
w0 $R,MGI_SEND_WAIT_ROUNDS=0
w4 $R,MGI_SEND_WAIT_ROUNDS=4
w16 $R
w64 $R,MGI_SEND_WAIT_ROUNDS=64" LIST2= bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done
tuned=(env UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528 MGI_STAGE_DEPTH=64)
for w in 0 4 16 64 0 4 16 64; do
  echo "== $(date +%T) bench -l 2 -s 64 -K 4 MGI_SEND_ZCOPY=1 MGI_STAGE_DEPTH=64 MGI_SEND_WAIT_ROUNDS=$w"
  "${tuned[@]}" MGI_SEND_ZCOPY=1 MGI_SEND_WAIT_ROUNDS=$w timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 16777216 -b 32 -K 4 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror|TIMEOUT" | cut -c1-200
done

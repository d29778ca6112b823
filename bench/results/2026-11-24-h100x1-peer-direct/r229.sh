#!/usr/bin/env bash
# run229: MGI_PEER_DIRECT=1 first look: the suite's peer steps, then the
# stand-in A/B (two ranks under MPS) of the Exchange, Join, GroupBy, and
# mgi_gpu_test bench/shuffle -l 2 with the tuned ring set
SUITE_S=300 bash abbase/r80b.sh suite 'peer' 2>&1 | grep -vE "^(shuffle|send_bw|sorter) "
for op in exchange join; do
  OP=$op LIST1=$'p0 MGI_PEER_DIRECT=0\np1 MGI_PEER_DIRECT=1\np0 MGI_PEER_DIRECT=0\np1 MGI_PEER_DIRECT=1' LIST2='' bash abbase/r162.sh 2>&1 | grep -E "^== [0-9]|GB/s|rror|FAIL|# mgi profile" | sed 's/^\(exchange\|join\|groupby\)  *mgi  *//; s/ sf=.*partition_ms=0.000//' | cut -c1-300
done
B=$PWD/bundle/bin; export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
tuned=(env MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528 MGI_STAGE_GROUPS=2)
for r in 1 2; do for p in 0 1; do for m in "bench -s 64 -K 4" "shuffle -s 16 -K 4"; do
  echo "== $(date +%T) MGI_PEER_DIRECT=$p mgi_gpu_test $m -l 2 -b 32"
  MGI_PEER_DIRECT=$p "${tuned[@]}" timeout 40 $B/mgi_gpu_test ${m%% *} -l 2 ${m#* } -n 16777216 -b 32 -T 30 2>&1 | grep -E "^shuffle [0-9]|^send_bw [0-9]|GB/s|FAIL|rror|TIMEOUT" | cut -c1-250
done; done; done

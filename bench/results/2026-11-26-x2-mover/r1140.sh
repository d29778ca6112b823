#!/usr/bin/env bash
# run1140 (2 GPUs, the machine of run1130): device send 64 B GPU0 -> GPU1,
# 16 GiB, shared tiles, the deeper set; once plain, once with the mover's
# line every 2 ms. Called with the device tool, bundle/ carried, as one
# command (reproduced here):
#   bash bench/results/2026-11-26-x2-mover/r1140.sh
export LD_LIBRARY_PATH=$PWD/bundle/lib CUDA_MODULE_LOADING=EAGER UCX_WARN_UNUSED_ENV_VARS=n UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
nproc; lscpu | grep -E "Model name|MHz" | head -3
timeout 60 bundle/bin/mgi_gpu_test bench -l 2 -s 64 -n 268435456 -b 64 -K 4 -T 40 -D > $OUT/ds-info.txt 2>&1 < /dev/null
UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=2 timeout 60 bundle/bin/mgi_gpu_test bench -l 2 -s 64 -n 268435456 -b 64 -K 4 -T 40 -D > $OUT/ds-info2.txt 2>&1
grep -E "^send_bw 64|received from" $OUT/ds-info.txt $OUT/ds-info2.txt | cut -c1-160
grep -E "mover \(rank" $OUT/ds-info2.txt | sed -E 's/^\[([0-9.]+)\].*mover \(rank [0-9]\): ([0-9]+) segments\/s.* ([0-9]+) copies inside the process, ([0-9]+) KB and ([0-9.]+) us.*flushes done ([0-9.]+) us.*rounds of ([0-9.]+) us.*/\1 \2 \3 \4 \5 \6 \7/' | awk 'NR>1{dt=$1-p; if ($2>0) printf "  %.4f GB/s=%.1f copies=%d KB=%d post_us=%s done_us=%s round_us=%s\n",$1,$2*131072/1e9,$3,$4,$5,$6,$7} {p=$1}'

#!/usr/bin/env bash
# run640: device send 64 B GPU0 -> GPU1 (one process) by amount sent, with
# run510's mover settings and with larger mover copies; a fixed cost per
# run shows as a rate that grows with the amount. Called with the device
# tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-sendpath/r640.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
ds() {  # device send, one process: extra VAR=value settings as arguments
  ( export UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64
    b=64; n=67108864; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s ${S:-64} -n $n -b $b -K 4 -T 40 2>&1 )
}
BIG="MGI_MOVER_BATCH=128 MGI_SORT_DEPTH=1024 MGI_STAGE_DEPTH=32"
for n in 16777216 67108864 268435456; do
  for a in "" "$BIG"; do
    echo "-- n $n ${a:-as run510}: $(ds -n$n $a | grep -E "^send_bw 64|^send_bw rank 0:|FAIL|rror|TIMEOUT|refus" | sed 's/.*(one process), //' | cut -c1-200 | tr '\n' ' ')"
  done
done
echo "-- 16 B, $BIG: $(S=16 ds $BIG | grep -E "^send_bw 16|FAIL|rror|TIMEOUT|refus" | cut -c1-200)"
S=64 ds $BIG UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=1 > $O/ds-info-big.txt 2>&1
grep "^send_bw 64" $O/ds-info-big.txt
echo "== $(date +%T) done in ${SECONDS}s"

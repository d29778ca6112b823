#!/usr/bin/env bash
# run1740 (2 GPUs): why the device send between two processes waits ~88 ms
# before its first tuple (run1730): the device send's set, 8 GiB, two
# processes, with the receive lanes 4096 (the set's) and 256 segments deep,
# with the lane control words through UCP instead of shared memory
# (MGI_CTL_SHM=0), and once with info logs every millisecond (mover and
# sorter speeds, the first put's time); 16 GiB once for the steady rate.
#   bash bench/results/2026-11-27-h200x2-tile-map/r1740.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
ds() {  # device send, two processes, the device send's set: N [VAR=value ...]
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    n=$1; shift; for v in "$@"; do export "$v"; done
    timeout 70 $B/mgi_launch -n 2 -t 60 -- $B/mgi_gpu_test bench -s 64 -n $n -b 64 -K 4 -T 40 -D 2>&1 )
}
for a in "" "MGI_RECV_DEPTH=256" "MGI_CTL_SHM=0" "MGI_RECV_DEPTH=256 MGI_CTL_SHM=0"; do
  ds 134217728 $a > /tmp/ds.txt 2>&1; cat /tmp/ds.txt >> $O/ds.txt
  echo "-- 8 GiB ${a:-set}: $(grep -E '^send_bw 64 B|FAIL|rror' /tmp/ds.txt | head -2 | cut -c1-110 | tr '\n' ' ')"
  grep -E "received from|source kernel" /tmp/ds.txt | sed 's/^send_bw rank //' | cut -c1-150
done
ds 268435456 > /tmp/ds.txt 2>&1; cat /tmp/ds.txt >> $O/ds.txt
echo "-- 16 GiB: $(grep -E '^send_bw 64 B|FAIL|rror' /tmp/ds.txt | head -2 | cut -c1-110)"
grep -E "received from" /tmp/ds.txt | sed 's/^send_bw rank //' | cut -c1-150
echo "-- info:"
ds 134217728 UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=1 > $O/info.txt 2>&1
grep -E '^send_bw 64 B|received from' $O/info.txt | cut -c1-150
grep -E "mover \(rank 0\)" $O/info.txt | head -3 | cut -c1-300
grep -E "mover \(rank 0\)" $O/info.txt | grep -v " 0 segments/s" | head -3 | cut -c1-300
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1210 (2 GPUs): the tree of this folder's first commit (the EOF-run
# issue in): the transport's GPU suite; then device send 64 B GPU0 -> GPU1,
# set D, 16 GiB shared tiles, with mgi_gpu_test's timeline of a run's end
# (user blocks' flushes delivered, EOF seen), plain and with the mover's
# and sorters' info lines every millisecond.
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-x2-eof-runs/r1210.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
ds() {  # device send, one process: -bN / -D / -sN / -nN / VAR=value settings
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
echo "== $(date +%T) device send, timeline"
for r in 1 2; do
  ds -D -n268435456 > $O/ds-$r.txt 2>&1
  grep -E "^send_bw (64|16) B|FAIL|rror|received from|done \(|last sends" $O/ds-$r.txt | cut -c1-260
done
ds -s16 -D -n1073741824 > $O/ds-16.txt 2>&1
grep -E "^send_bw (64|16) B|FAIL|rror|received from|done \(|last sends" $O/ds-16.txt | cut -c1-260
echo "== $(date +%T) device send, info every 1 ms"
ds -D -n268435456 UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=1 > $O/ds-info.txt 2>&1
grep -E "^send_bw (64|16) B|received from|done \(|last sends" $O/ds-info.txt | cut -c1-260
grep -E "mover \(rank" $O/ds-info.txt | sed 's/.*INFO  //' | tail -6 | cut -c1-400
echo "== $(date +%T) transport GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib timeout 300 bash bundle/run/gpu-suite.sh /tmp/gs > $O/gtest-suite.txt 2>&1; echo "rc=$?"
grep -E "^\[  (PASSED|FAILED) |tests? ran" $O/gtest-suite.txt | head -20
echo "skipped: $(grep -c '^\[  SKIPPED \]' $O/gtest-suite.txt)"
echo "== $(date +%T) done in ${SECONDS}s"

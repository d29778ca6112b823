#!/usr/bin/env bash
# Call 1: the test's receive check with every load issued before any test
# (new, bundle/bin) against the check of 0d28934 that tests and branches
# after each load (abbase/chk0); both print where the user blocks' time
# went. Alternating, 3 rounds; then one info run of the new check and a
# user:sorter block split sweep with it.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
export LD_LIBRARY_PATH=$PWD/bundle/lib
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2 3; do for v in new chk0; do
  T=$B/mgi_gpu_test; [ $v = chk0 ] && T=$PWD/abbase/chk0/mgi_gpu_test
  for s in 64 16; do
    echo "-- rep $rep $v shuffle ${s}B"; env $tuned timeout 60 $T shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|user blocks|FAIL|rror"
  done
  echo "-- rep $rep $v send_bw 64B"; env $tuned timeout 60 $T bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|user blocks|FAIL|rror"
done; done 2>&1 | tee $O/check-ab.txt
env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $O/shuffle-info-64B-new.txt 2>&1
for sp in 24:40 28:36 32:32 36:28 40:24; do u=${sp%:*}; so=${sp#*:}
  for s in 64 16; do
    echo "-- split $sp shuffle ${s}B"; env $tuned MGI_SORTER_BLOCKS=$so timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b $u -T 40 2>&1 | grep -E "^shuffle [0-9]|user blocks|FAIL|rror"
  done
done 2>&1 | tee $O/split-sweep.txt

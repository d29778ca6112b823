#!/usr/bin/env bash
# Call 6: the sorter places a pass after one look per target (relaxed
# loads of RTail and RHead together) and one add at the slot the look
# found (mgi_ring_append_reserve_at), its mark CAS under way during the
# copy (new, bundle) against f95da26 (abbase/base3); alternating, 3
# rounds; an info run of the new build; then the channels suite.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
pat="^shuffle [0-9]|^send_bw [0-9]|\(GPU|user blocks|FAIL|rror"
(
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2 3; do for v in new base3; do
  T=$B/mgi_gpu_test; L=$PWD/bundle/lib
  [ $v != new ] && T=$PWD/abbase/$v/mgi_gpu_test && L=$PWD/abbase/$v:$PWD/bundle/lib
  for s in 64 16; do
    echo "-- rep $rep $v shuffle ${s}B"; env $tuned LD_LIBRARY_PATH=$L timeout 60 $T shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "$pat"
  done
  echo "-- rep $rep $v send_bw 64B"; env $tuned LD_LIBRARY_PATH=$L timeout 60 $T bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "$pat"
done; done
) 2>&1 | tee $O/place-ab.txt
env $tuned UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 LD_LIBRARY_PATH=$PWD/bundle/lib UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $O/shuffle-info-64B-new.txt 2>&1
MGI_SUITE_BUDGET_S=300 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/channels-suite.txt 2>&1
tail -3 $O/channels-suite.txt

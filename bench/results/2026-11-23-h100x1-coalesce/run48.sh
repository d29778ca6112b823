#!/usr/bin/env bash
# Session 6, call 3. mgi_gpu_test's receiving check read each tuple with
# memcpy(v, p, tsize): a byte loop through local memory (64 byte loads and
# stores for a 64 B tuple). Now it reads words. old = the test binary
# before (abbase/oldtest), new = the bundle's; same libmgi. Alternating
# rounds, an info log of the new one, then user / sorter block splits.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
bin() { [ $1 = old ] && echo $PWD/abbase/oldtest/mgi_gpu_test || echo $B/mgi_gpu_test; }
for rep in 1 2 3; do for v in new old; do
  for s in 64 16; do
    echo "-- rep $rep $v shuffle ${s}B"; env $tuned timeout 60 $(bin $v) shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
  done
  echo "-- rep $rep $v send_bw 64B"; env $tuned timeout 60 $(bin $v) bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
done; done 2>&1 | tee $O/check-ab.txt
pick='^shuffle|sorter (totals|rounds|passes)|of the placing|mover'
f=$O/shuffle-info-64B-new.txt
env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $f 2>&1
echo "== info 64B rc=$?"; grep -E "$pick" $f | sed 's/^.*INFO  //' | grep -v " 0 segments/s" | cut -c1-260
for split in 32:32 40:24 48:16 56:8; do ub=${split%:*}; sb=${split#*:}
  for s in 64 16; do
    echo "-- user $ub sorter $sb shuffle ${s}B"; env $tuned MGI_SORTER_BLOCKS=$sb timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b $ub -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
  done
  echo "-- user $ub sorter $sb send_bw 64B"; env $tuned MGI_SORTER_BLOCKS=$sb timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b $ub -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
done 2>&1 | tee $O/split-sweep.txt

#!/usr/bin/env bash
# Call 8: settings on the tree (aae17b5 + the test's time split): the tuned
# set, MGI_RECV_ZCOPY=1, MGI_SORT_RINGS=2, MGI_FINAL_DEPTH=128,
# MGI_MOVER_BATCH=64; alternating, 2 rounds.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
pat="^shuffle [0-9]|^send_bw [0-9]|\(GPU|user blocks|FAIL|rror"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
export LD_LIBRARY_PATH=$PWD/bundle/lib
for rep in 1 2; do for v in tuned MGI_RECV_ZCOPY=1 MGI_SORT_RINGS=2 MGI_FINAL_DEPTH=128 MGI_MOVER_BATCH=64; do
  x=; [ $v != tuned ] && x=$v
  for s in 64 16; do
    echo "-- rep $rep $v shuffle ${s}B"; env $tuned $x timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "$pat"
  done
  echo "-- rep $rep $v send_bw 64B"; env $tuned $x timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "$pat"
done; done 2>&1 | tee $O/settings-ab.txt

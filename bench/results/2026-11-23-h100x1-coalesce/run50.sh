#!/usr/bin/env bash
# Session 6, call 5: with the test's check by words the receiving side is
# no longer the test's own loop, so the settings measured against it
# before are measured again, 2 rounds, configurations alternating in each
# round: base (tuned), MGI_SORTER_THREADS=512, MGI_SORT_RINGS=2 and 8,
# MGI_RECV_ZCOPY=1, MGI_STAGE_GROUPS=2, both of the last two.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
cfgs="base:X=0 thr512:MGI_SORTER_THREADS=512 rings2:MGI_SORT_RINGS=2 rings8:MGI_SORT_RINGS=8 zcopy:MGI_RECV_ZCOPY=1 groups2:MGI_STAGE_GROUPS=2 zc_g2:MGI_RECV_ZCOPY=1,MGI_STAGE_GROUPS=2"
for rep in 1 2; do for c in $cfgs; do n=${c%%:*}; e=$(echo ${c#*:} | tr ',' ' ')
  for s in 64 16; do
    echo "-- rep $rep $n shuffle ${s}B"; env $tuned $e timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
  done
  echo "-- rep $rep $n send_bw 64B"; env $tuned $e timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
done; done 2>&1 | tee $O/settings-ab.txt

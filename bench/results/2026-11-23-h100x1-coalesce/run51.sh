#!/usr/bin/env bash
# Session 6, call 6: sort rings per next hop (MGI_SORT_RINGS) 1, 2, 4,
# alternating, 3 rounds (run50: 2 rings 2-4 % above 4, 8 as 4).
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2 3; do for r in 1 2 4; do
  for s in 64 16; do
    echo "-- rep $rep rings $r shuffle ${s}B"; env $tuned MGI_SORT_RINGS=$r timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
  done
  echo "-- rep $rep rings $r send_bw 64B"; env $tuned MGI_SORT_RINGS=$r timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
done; done 2>&1 | tee $O/sort-rings-ab.txt

#!/usr/bin/env bash
# Bulk copies (TMA) in the sorter against the block's thread copies (ILP 8
# = the code before, ILP 16), alternating, one GPU, one process.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
lib() { case $1 in tma) echo "";; *) echo "$PWD/abbase/$1";; esac; }
for rep in 1 2; do
  for v in tma notma ilp16; do
    L=$(lib $v)
    echo "-- $v rep $rep send_bw 64B 4GiB b=32"
    env LD_LIBRARY_PATH=$L $tuned timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|rror|FAIL"
    echo "-- $v rep $rep send_bw 64B 4GiB b=64"
    env LD_LIBRARY_PATH=$L $tuned timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 64 -T 40 2>&1 | grep -E "^send_bw [0-9]|rror|FAIL"
    echo "-- $v rep $rep send_bw 16B 2GiB b=32"
    env LD_LIBRARY_PATH=$L $tuned timeout 60 mgi_gpu_test bench -l 2 -s 16 -n 134217728 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|rror|FAIL"
    echo "-- $v rep $rep sorter 64B b=32"
    env LD_LIBRARY_PATH=$L MGI_SORTER_BLOCKS=16 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=256 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=16 MGI_SORT_RINGS=4 timeout 60 mgi_gpu_test sorter -r per-block -c 1 -s 64 -n 16777216 -b 32 2>&1 | grep -E "^sorter GPU|rror|FAIL"
    echo "-- $v rep $rep sorter 16B b=32"
    env LD_LIBRARY_PATH=$L MGI_SORTER_BLOCKS=16 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=256 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=16 MGI_SORT_RINGS=4 timeout 60 mgi_gpu_test sorter -r per-block -c 1 -s 16 -n 67108864 -b 32 2>&1 | grep -E "^sorter GPU|rror|FAIL"
    echo "-- $v rep $rep groupby -l 2"
    env LD_LIBRARY_PATH=$L $tuned MGI_SORT_RINGS=1 timeout 60 mgi_gpu_test groupby -l 2 -n 8000000 -b 32 2>&1 | grep -E "groupby|rror|FAIL" | tail -2
  done
done
for v in tma notma; do
  echo "== info $v"
  env LD_LIBRARY_PATH=$(lib $v) $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 > $O/info-$v.txt 2>&1
  grep -E "mover|sorter|send_bw [0-9]" $O/info-$v.txt | sed 's/.*INFO  //' | grep -v "kernel on" | tail -9
done

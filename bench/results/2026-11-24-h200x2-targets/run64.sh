#!/usr/bin/env bash
# 2 x H200, call 4: the wider splits again (device send 64 B and 16 B,
# exchange), 2-3 rounds; the workloads' ops with the mgi variant at 64 user
# + 64 sorter blocks and 48 + 48 (128 + 64 did not fit 132 SMs).
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n LD_LIBRARY_PATH=$PWD/bundle/lib
O=${OUT:-/tmp/out}
tuned="MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
pat="^shuffle [0-9]|^send_bw [0-9]|\(GPU|user blocks|FAIL|rror|TIMEOUT"
(
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2 3; do for sp in 40:40 48:48 56:56 64:64; do u=${sp%:*}; so=${sp#*:}
  echo "-- rep $rep split $sp send_bw 64B"; env $tuned MGI_SORTER_BLOCKS=$so timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b $u -T 40 2>&1 | grep -E "$pat"
  echo "-- rep $rep split $sp send_bw 16B"; env $tuned MGI_SORTER_BLOCKS=$so timeout 60 mgi_gpu_test bench -l 2 -s 16 -n 268435456 -b $u -T 40 2>&1 | grep -E "$pat"
  for s in 64 16; do
    echo "-- rep $rep split $sp shuffle ${s}B"; env $tuned MGI_SORTER_BLOCKS=$so timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b $u -T 40 2>&1 | grep -E "$pat"
  done
done; done
) 2>&1 | tee $O/split-2gpu-2.txt | grep -E '^--|GB/s' | grep -v rank | paste - - | awk '{print $3,$5,$6,$7,$(NF-5),$(NF-4),$(NF-3),$(NF-2),$(NF-1),$NF}'
W=/tmp/wl4; rm -rf $W; mkdir -p $W
for cfg in 64:64 48:48; do u=${cfg%:*}; so=${cfg#*:}
  env $tuned MGI_SORTER_BLOCKS=$so MGI_WL_MGI_BLOCKS=$u MGI_WL_ITERS=3 MGI_WL_PHASES=ops MGI_WL_TIMEOUT=100 timeout 150 bash bundle/run/workloads.sh $W/wl-b$u-s$so 2 2 > $W/run-b$u-s$so.txt 2>&1
  echo "== mgi blocks $u, sorter blocks $so"; grep -E '^(exchange|groupby|join)' $W/wl-b$u-s$so/ratios.txt
done 2>&1 | tee $O/wl-blocks-2.txt
tar czf $O/wl-blocks-2.tar.gz -C $W .

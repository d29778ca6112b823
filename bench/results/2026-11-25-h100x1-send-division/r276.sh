#!/usr/bin/env bash
# run276: copy-engine copies over 1..8 streams (streambench), and
# ucx_perftest put_bw of cuda_mgi / cuda_ipc between two processes on one GPU
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
nvidia-smi -L
abbase/streambench
port=14000
for s in 131072 1048576 4194304 67108864; do for tl in cuda_mgi cuda_ipc; do
  port=$((port+1)); n=$(( 4294967296 / s )); [ $n -gt 50000 ] && n=50000
  timeout 60 $B/ucx_perftest -d cuda -x $tl -p $port > /dev/null 2>&1 &
  sleep 1.5
  r=$(timeout 50 $B/ucx_perftest 127.0.0.1 -p $port -d cuda -x $tl -t put_bw -m cuda -D zcopy -s $s -n $n 2>&1)
  wait
  echo "put_bw $tl $s: $(echo "$r" | awk '/Final:/ {printf "%.2f GB/s", $6 * 1048576 / 1e9}') $(echo "$r" | grep -iE 'error|fail' | head -2)"
done; done

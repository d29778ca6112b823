#!/usr/bin/env bash
# run277: host cost of copy issue by API (copycost); ucx_perftest put_bw on one GPU
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
timeout 100 abbase/copythreads
port=14100
for s in 1048576 4194304; do for tl in cuda_mgi cuda_ipc; do
  port=$((port+1)); n=$(( 2147483648 / s ))
  timeout 30 $B/ucx_perftest -d cuda -x $tl -p $port > /tmp/srv.txt 2>&1 &
  sp=$!; sleep 1.5
  r=$(timeout 20 $B/ucx_perftest 127.0.0.1 -p $port -d cuda -x $tl -t put_bw -m cuda -D zcopy -s $s -n $n 2>&1)
  kill $sp 2>/dev/null; wait $sp
  echo "put_bw $tl $s: $(echo "$r" | awk '/Final:/ {printf "%.2f GB/s", $6 * 1048576 / 1e9}')"
  echo "$r" | grep -vE '^\+|^\||^$|Final' | tail -4 | cut -c1-200
done; done

#!/usr/bin/env bash
# Where a walked pass's reservation time goes: variant E (clocks: room
# check, reserve, slots passed), F (E with relaxed loads in the reserve and
# room check, a probe), G (E with GPU-scope acquire loads there).
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|^send_bw [0-9]|sorter (rounds|passes)|whole stage|of the placing'
run() { v=$1; shift
  if [ "$v" = new ]; then env $tuned timeout 60 mgi_gpu_test "$@"
  else env $tuned LD_LIBRARY_PATH=$PWD/abbase/$v:$PWD/bundle/lib timeout 60 mgi_gpu_test "$@"; fi
}
for v in varE varF varG; do
  f=$O/shuffle-info-64B-$v.txt
  UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 run $v shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $f 2>&1
  echo "== info shuffle 64B $v"; grep -E "$pick" $f | sed 's/^.*INFO  //'
done
f=$O/send-bw-info-64B-varG.txt
UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 run varG bench -l 2 -s 64 -n 67108864 -b 32 -T 40 > $f 2>&1
echo "== info send_bw 64B varG"; grep -E "$pick" $f | sed 's/^.*INFO  //'
{
for rep in 1 2; do
  for v in new varF varG; do
    echo "-- rep $rep $v shuffle 64B"; run $v shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    echo "-- rep $rep $v shuffle 16B"; run $v shuffle -l 2 -s 16 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    echo "-- rep $rep $v send_bw 64B"; run $v bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
  done
done
} > $O/acq-ab.txt 2>&1
grep -E "^--|GB/s" $O/acq-ab.txt | paste - - | sed 's/received in all, slowest kernel [0-9.]* ms, //; s/copy engine.*//'

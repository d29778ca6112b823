#!/usr/bin/env bash
# Final tree: where the sorter's stage-ring time goes (info logs with the
# reservation / copy split), receive by reference against copy in one
# invocation, then the whole channels suite.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pick='^shuffle [0-9]|^send_bw [0-9]|sorter (totals|rounds|passes)|whole stage|mover \(rank.*[1-9][0-9]* segments'
for g in 1 2; do
  f=$O/shuffle-info-64B-groups$g.txt
  env $tuned MGI_STAGE_GROUPS=$g UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 > $f 2>&1
  echo "== info shuffle 64B groups $g"; grep -E "$pick" $f | grep -v "mover" | sed 's/^.*INFO  //'
done
f=$O/send-bw-info-64B.txt
env $tuned UCX_LOG_LEVEL=info MGI_LOG_INTERVAL_MS=10 timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 > $f 2>&1
echo "== info send_bw 64B"; grep -E "$pick" $f | grep -v mover | sed 's/^.*INFO  //'
{
for rep in 1 2 3; do
  for z in 0 1; do
    for g in 1 2; do
      echo "-- rep $rep zcopy $z groups $g shuffle 64B"; env $tuned MGI_STAGE_GROUPS=$g MGI_RECV_ZCOPY=$z timeout 60 mgi_gpu_test shuffle -l 2 -s 64 -n 33554432 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
      echo "-- rep $rep zcopy $z groups $g shuffle 16B"; env $tuned MGI_STAGE_GROUPS=$g MGI_RECV_ZCOPY=$z timeout 60 mgi_gpu_test shuffle -l 2 -s 16 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
    done
    echo "-- rep $rep zcopy $z send_bw 64B"; env $tuned MGI_RECV_ZCOPY=$z timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|FAIL|rror"
  done
done
} > $O/zcopy-ab.txt 2>&1
grep -E "^--|GB/s" $O/zcopy-ab.txt | paste - - | sed 's/received in all, slowest kernel [0-9.]* ms, //; s/copy engine.*//' 
MGI_RECV_ZCOPY=1 MGI_SUITE_BUDGET_S=200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgiz 'groupby|shuffle|send_bw_64B_2proc$|send_bw_64B_1proc$|tuned' > $O/suite-zcopy.txt 2>&1
grep -E "^(FAIL|TIMEOUT|== [0-9])" $O/suite-zcopy.txt
MGI_SUITE_BUDGET_S=330 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(FAIL|TIMEOUT|== [0-9])" $O/suite.txt
for f in $(grep -ohE "log /tmp/mgi[z]?/[^)]*" $O/suite.txt $O/suite-zcopy.txt | cut -d' ' -f2); do cp $f $O/; done

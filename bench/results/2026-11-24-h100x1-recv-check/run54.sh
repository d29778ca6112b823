#!/usr/bin/env bash
# Call 2: the run check of mgi_dev_recv_block_runs with its loads in flight
# (new, bundle/bin) against the check that tests after each load
# (abbase/hdr0; both with the new test check), alternating, 3 rounds; a
# probe build that times the receive rounds' body and check; then threads
# per user block (-t) with the new build.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
export LD_LIBRARY_PATH=$PWD/bundle/lib
O=${OUT:-/tmp/out}
nvidia-smi -L
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
pat="^shuffle [0-9]|^send_bw [0-9]|user blocks|probe|FAIL|rror"
for rep in 1 2 3; do for v in new hdr0; do
  T=$B/mgi_gpu_test; [ $v = hdr0 ] && T=$PWD/abbase/hdr0/mgi_gpu_test
  for s in 64 16; do
    echo "-- rep $rep $v shuffle ${s}B"; env $tuned timeout 60 $T shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "$pat"
  done
  echo "-- rep $rep $v send_bw 64B"; env $tuned timeout 60 $T bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "$pat"
done; done 2>&1 | tee $O/runcheck-ab.txt
T=$PWD/abbase/probe/mgi_gpu_test
for s in 64 16; do
  echo "-- probe shuffle ${s}B"; env $tuned timeout 60 $T shuffle -l 2 -s $s -n $((2147483648/s)) -b 32 -T 40 2>&1 | grep -E "$pat"
done 2>&1 | tee $O/probe.txt
echo "-- probe send_bw 64B"; env $tuned timeout 60 $T bench -l 2 -s 64 -n 67108864 -b 32 -T 40 2>&1 | grep -E "$pat" | tee -a $O/probe.txt
for tp in 256:32:16 512:32:8 1024:32:4 1024:32:16 1024:16:4 512:16:8; do
  t=${tp%%:*}; r=${tp#*:}; b=${r%:*}; p=${r#*:}
  for s in 64 16; do
    echo "-- t $t b $b P $p shuffle ${s}B"; env $tuned timeout 60 mgi_gpu_test shuffle -l 2 -s $s -n $((2147483648/s)) -b $b -t $t -P $p -T 40 2>&1 | grep -E "$pat"
  done
  echo "-- t $t b $b send_bw 64B"; env $tuned timeout 60 mgi_gpu_test bench -l 2 -s 64 -n 67108864 -b $b -t $t -T 40 2>&1 | grep -E "$pat"
done 2>&1 | tee $O/threads-sweep.txt

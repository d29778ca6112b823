#!/usr/bin/env bash
# One-GPU session run: transport gtest, channels suite, A/B of the device
# send chain (base = tree 5b39092, new = working tree), perftest vs cuda_ipc.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0
O=${OUT:-/tmp/out}
nvidia-smi -L; nvidia-smi --query-gpu=name,clocks.max.sm,memory.total --format=csv
echo "== transport gtest (one GPU)"
timeout -k 5 200 $B/gtest_cuda_mgi 2>&1 | grep -E "^\[|SKIPPED|note:|wrong|error" | grep -v "^\[ RUN" > $O/gtest.txt
tail -45 $O/gtest.txt
echo "== channels suite (one GPU)"
MGI_SUITE_BUDGET_S=150 bash bundle/run/mgi-gpu-suite.sh $B /tmp/mgi > $O/suite.txt 2>&1
grep -E "^(PASS|FAIL|SKIPPED|TIMEOUT|==|send_bw [0-9]|sorter GPU)" $O/suite.txt
echo "== A/B: base (5b39092) vs new, alternating"
tuned="MGI_SORTER_BLOCKS=16 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=256 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=16 MGI_SORT_RINGS=4"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
for rep in 1 2 3; do
  for v in base new; do
    if [ $v = base ]; then BIN=$PWD/abbase/bin; LDP=$PWD/abbase/lib; else BIN=$B; LDP=; fi
    for b in 32 128; do
      echo "-- $v rep $rep sorter 64B b=$b"
      env $tuned LD_LIBRARY_PATH=$LDP timeout 60 $BIN/mgi_gpu_test sorter -r per-block -c 1 -s 64 -n 16777216 -b $b -T 40 2>&1 | grep -E "^sorter|rror"
    done
    echo "-- $v rep $rep sorter 16B b=32"
    env $tuned LD_LIBRARY_PATH=$LDP timeout 60 $BIN/mgi_gpu_test sorter -r per-block -c 1 -s 16 -n 67108864 -b 32 -T 40 2>&1 | grep -E "^sorter|rror"
    echo "-- $v rep $rep send_bw 64B 2proc (one GPU) b=32"
    env $tuned LD_LIBRARY_PATH=$LDP timeout 80 $B/mgi_launch -n 2 -t 70 -- $BIN/mgi_gpu_test bench -s 64 -n 16777216 -b 32 -T 40 2>&1 | grep -E "^send_bw [0-9]|rror|FAIL"
  done
done
echo "== ring_block ring test, base vs new"
for v in base new; do
  if [ $v = base ]; then BIN=$PWD/abbase/bin; else BIN=$B; fi
  for m in thread warp block; do echo "-- $v $m"; timeout 60 $BIN/gpu_ring_test $m 200 2>&1 | tail -2; done
done
echo "== perftest cuda_mgi vs cuda_ipc, two processes on one GPU"
MGI_PERF_MODES="put_lat put_bw" timeout 200 bash bundle/run/perftest_compare.sh 8,4096,65536,1048576,67108864 5 2>&1 | tee $O/perftest.txt

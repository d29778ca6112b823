#!/usr/bin/env bash
# run209: (1) where a receive round goes (mgi_workloads_prof: the new
# receive copy with clock counters in mgi_dev_recv_block_runs, sm_90 only),
# one rank's Exchange; (2) mgi_gpu_test shuffle -l 2, old against new
# receive copy, 64 B and 16 B tuples, tile sends
I=MGI_WL_MGI_PROFILE=1
WL=$PWD/abbase/old/mgi_workloads_prof OP=exchange LIST1= LIST2=$'prof '$I bash abbase/r162.sh 2>&1 | grep -E "GB/s|recvprof|profile rank 0: user" | cut -c1-500
grep recvprof ${OUT:-/tmp}/raw.txt
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
tuned=(env MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
for s in 64 16; do
  for b in old new old new; do
    G=$PWD/bundle/bin/mgi_gpu_test; [ $b = old ] && G=$PWD/abbase/old/mgi_gpu_test
    echo "== $b shuffle -s $s"
    "${tuned[@]}" timeout 40 $G shuffle -l 2 -s $s -n 16777216 -b 32 -K 4 -T 30 2>&1 | grep -E "^shuffle [0-9]|FAIL|rror"
  done
done

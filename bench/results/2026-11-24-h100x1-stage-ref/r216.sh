#!/usr/bin/env bash
# run216: where the batched tile send of two destinations goes on the
# stand-in (mgi_workloads_sprof: clock stamps in mgi_dev_send_tile_batch_w,
# sm_90 build of the tree eca4c5a), Exchange and Join
for op in exchange join; do
  WL=$PWD/abbase/old/mgi_workloads_sprof OP=$op LIST1=$'sp MGI_WL_MGI_PROFILE=1\nsp MGI_WL_MGI_PROFILE=1' LIST2= bash abbase/r162.sh 2>&1 | grep -E "GB/s|sendprof|profile rank 0: user" | cut -c1-300
done

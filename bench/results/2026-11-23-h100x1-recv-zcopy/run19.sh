#!/usr/bin/env bash
# An idle endpoint beside the application's copies within its GPU: its
# sorter blocks sleeping when idle (MGI_SORTER_IDLE_NS=1000, the default),
# polling on (0), with 2 (default) and 32 sorter blocks.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n UCX_TLS=sm,self,cuda_mgi,cuda_copy
O=${OUT:-/tmp/out}
for rep in 1 2; do
  for sb in 2 32; do
    for ns in 1000 0; do
      echo "-- rep $rep sorter blocks $sb idle_ns $ns"
      env MGI_SORTER_BLOCKS=$sb MGI_SORTER_IDLE_NS=$ns timeout 60 mgi_gpu_test idle_copy 2>&1 | grep -E "^idle_copy|rror"
    done
  done
done 2>&1 | tee $O/idle-copy.txt

#!/usr/bin/env bash
# (1) TMA against thread copies (LD_LIBRARY_PATH fixed); (2) user blocks of
# 512 / 1024 threads with segments sized for whole reservations.
set -uo pipefail
B=$PWD/bundle/bin
export PATH=$B:$PATH UCX_WARN_UNUSED_ENV_VARS=n
O=${OUT:-/tmp/out}
tuned="MGI_SORTER_BLOCKS=32 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64"
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
lib() { case $1 in tma) echo "$PWD/bundle/lib";; *) echo "$PWD/abbase/$1:$PWD/bundle/lib";; esac; }
sb() { local e=(); while [ "$1" != "--" ]; do e+=("$1"); shift; done; shift; env "${e[@]}" timeout 60 mgi_gpu_test bench -l 2 -n 67108864 -T 40 "$@" 2>&1 | grep -E "^send_bw [0-9]|source kernel|rror|FAIL" | sed 's/^send_bw rank 0 ep 0 (GPU 0): //'; }
for rep in 1 2; do
  for v in tma notma ilp16; do
    L=$(lib $v)
    echo "-- $v rep $rep send_bw 64B 4GiB b=32"; sb LD_LIBRARY_PATH=$L $tuned -- -s 64 -b 32
    echo "-- $v rep $rep sorter 64B b=32"
    env LD_LIBRARY_PATH=$L MGI_SORTER_BLOCKS=16 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=256 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=16 MGI_SORT_RINGS=4 timeout 60 mgi_gpu_test sorter -r per-block -c 1 -s 64 -n 16777216 -b 32 2>&1 | grep -E "^sorter GPU|rror|FAIL"
    echo "-- $v rep $rep sorter 16B b=32"
    env LD_LIBRARY_PATH=$L MGI_SORTER_BLOCKS=16 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=256 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=16 MGI_SORT_RINGS=4 timeout 60 mgi_gpu_test sorter -r per-block -c 1 -s 16 -n 67108864 -b 32 2>&1 | grep -E "^sorter GPU|rror|FAIL"
  done
done
echo "== user block threads x segment size (tma)"
for rep in 1 2; do
 for t in 256 512 1024; do
  for seg in 131072 147584; do
   for b in 16 32; do
    echo "-- t=$t seg=$seg b=$b"
    sb $tuned MGI_SEG_SIZE=$seg -- -s 64 -b $b -t $t
   done
  done
 done
done

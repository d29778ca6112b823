#!/usr/bin/env bash
# run1700 (2 GPUs, asked as nvidia-h200-x2 with needs_h200): the final tree's
# device send 64 B GPU0 -> GPU1 with set D (16 GiB shared tiles, 8 GiB 59
# slices, twice each) and 16 B; on H200s also MGI's GPU suite and the
# workloads' ops (Exchange, GroupBy, Join; 3 iterations).
# Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-27-h200x2-send/r1700.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
h200=0; nvidia-smi -L | grep -q H200 && h200=1
ds() {  # device send, one process: -bN / -D / -sN / -nN / VAR=value settings
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    b=64; n=134217728; s=64; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -s*) s=${v#-s};; -D) d=-D;; *) export "$v";; esac; done
    timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $b -K 4 -T 40 $d 2>&1 )
}
echo "== $(date +%T) device send"
for a in "-D -n268435456" "-b59" "-D -n268435456" "-b59" "-s16 -D -n1073741824"; do
  ds $a > /tmp/ds.txt 2>&1
  echo "-- $a: $(grep -E '^send_bw (64|16) B|FAIL|rror' /tmp/ds.txt | head -2 | cut -c1-112)"
  grep -E "received from" /tmp/ds.txt | sed 's/^send_bw rank 0 //' | cut -c1-200
  cat /tmp/ds.txt >> $O/ds.txt
done
if [ $h200 = 1 ]; then
  echo "== $(date +%T) MGI GPU suite"
  LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
    timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
  grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -6
  echo "== $(date +%T) workloads, ops"
  LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops" timeout 200 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
  cat /tmp/wl/ratios.txt
  (cd /tmp/wl && tar czf $O/wl.tgz *.json *.txt 2>/dev/null)
fi
echo "== $(date +%T) done in ${SECONDS}s"

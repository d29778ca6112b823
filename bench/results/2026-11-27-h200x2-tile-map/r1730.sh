#!/usr/bin/env bash
# run1730 (2 GPUs): tile sends with a destination per tuple by the
# caller's rule (mgi_dev_send_block_tile_map), which the workloads'
# many-to-one now sends with, instead of block sends of a tuple a thread.
# 1. the MGI GPU suite on the new tree (bundle/);
# 2. many-to-one (and one-to-many, unchanged, for reference), MGI variant,
#    2 GiB a GPU, the build before (bundle/bin/mgi_workloads-base, from
#    c7f27cf) and after, in turn, twice; the profile of each;
# 3. point-to-point (unchanged) with run.sh's set and with parts of the
#    device send's set (mgi_gpu_test bench moves 360 GB/s GPU0 -> GPU1);
#    and the device send 64 B GPU0 -> GPU1, 8 GiB, with the device send's
#    set in one process (-l 2) and in two (mgi_launch -n 2), in turn;
# 4. the harness's patterns phase (every variant, answers verified).
#   bash bench/results/2026-11-27-h200x2-tile-map/r1730.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) MGI GPU suite"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=200 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 260 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -6
grep -E -A3 "^== workloads_many2one" $O/mgi-suite.txt | grep -E "^==|mgi " | cut -c1-200
wl() {  # the workloads' MGI variant with run.sh's set: BINARY OP [VAR=value ...]
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    bin=$1; op=$2; shift 2; for v in "$@"; do export "$v"; done
    timeout 90 $B/$bin --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z0-9]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-150
    grep -E "# mgi profile rank [01]" /tmp/wl.txt | cut -c1-420 )
}
echo "== $(date +%T) many-to-one, before and after"
for r in 1 2; do
  for b in mgi_workloads-base mgi_workloads; do
    echo "-- r$r $b many2one: $(wl $b many2one)"
    echo "-- r$r $b one2many: $(wl $b one2many)"
  done
done
for b in mgi_workloads-base mgi_workloads; do echo "-- profile $b many2one:"; wl $b many2one MGI_WL_MGI_PROFILE=1; done
echo "== $(date +%T) point-to-point settings"
for r in 1 2; do
  echo "-- r$r p2p base: $(wl mgi_workloads p2p)"
  echo "-- r$r p2p SEND_ZCOPY=0: $(wl mgi_workloads p2p MGI_SEND_ZCOPY=0)"
  echo "-- r$r p2p RECV_DEPTH=4096 MOVER_BATCH=256 SORT_DEPTH=2048: $(wl mgi_workloads p2p MGI_RECV_DEPTH=4096 MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048)"
  echo "-- r$r p2p 64+64: $(wl mgi_workloads p2p MGI_SORTER_BLOCKS=64 MGI_WL_MGI_BLOCKS=64)"
done
echo "-- profile p2p base:"; wl mgi_workloads p2p MGI_WL_MGI_PROFILE=1
ds() {  # device send with the device send's set (r1700.sh): 1proc|2proc [VAR=value ...]
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    p=$1; shift; for v in "$@"; do export "$v"; done
    if [ $p = 1proc ]; then timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 134217728 -b 64 -K 4 -T 40 -D 2>&1
    else timeout 70 $B/mgi_launch -n 2 -t 60 -- $B/mgi_gpu_test bench -s 64 -n 134217728 -b 64 -K 4 -T 40 -D 2>&1; fi )
}
for r in 1 2; do
  for p in 1proc 2proc; do
    ds $p > /tmp/ds.txt 2>&1; cat /tmp/ds.txt >> $O/ds.txt
    echo "-- r$r device send $p: $(grep -E '^send_bw (64|16) B|FAIL|rror|received [0-9]' /tmp/ds.txt | head -3 | cut -c1-150 | tr '\n' ' ')"
  done
done
echo "== $(date +%T) workloads harness, patterns"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_TIMEOUT=60 MGI_WL_PHASES=patterns timeout 200 bash bundle/run/workloads.sh /tmp/wl 2 2 > $O/harness.txt 2>&1; echo "rc=$?"
cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null; cat $O/ratios.txt
echo "== $(date +%T) done in ${SECONDS}s"

#!/usr/bin/env bash
# run1440 (2 GPUs): a batched tile send with stage groups sized so each
# group's share, split as the block's last call split it, fits the room
# left in its slot (mgi_dev_tile_groups_room), against the tree before it
# (061eaa6), in turn on one pair: the workloads' Exchange with stage
# segments of 131072 and of 133120 bytes (the sorters' totals of stage
# segments moved whole, UCX_LOG_LEVEL=info), GroupBy and Join with
# run.sh's set (133120); device send 64 B (-D, -b59); then MGI's GPU
# suite on the new tree.
# bundle/bin/mgi_workloads and mgi_gpu_test are built with groups-room.patch
# (this folder) applied to 061eaa6 (make -C
# bench/workloads, make -C test/ucp_ext mgi_gpu_test, then patchelf
# --set-rpath '$ORIGIN/../lib:$ORIGIN/../lib/ucx'); bundle/bin/*-base are
# contrib/bundle.sh's from 061eaa6.
# Called with the device tool, bundle/ carried (gtest_cuda_mgi and
# ucx_perftest left out to stay within what a call carries):
#   bash bench/results/2026-11-26-x2-mend/r1440.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's settings: BINARY OP SEG_SIZE
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 UCX_LOG_LEVEL=info
    export MGI_SEG_SIZE=$3
    timeout 90 $B/$1 --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $2 > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    echo "$(grep -E "^[a-z]+ +mgi|rror|FAIL" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-120)" \
         "| segments: $(grep -oE "[0-9]+ stage segments moved whole" /tmp/wl.txt | cut -d' ' -f1 | tr '\n' ' ')" )
}
ds() {  # device send, one process: BINARY -bN / -D / -nN
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DEV_TILE_BATCH=65528 \
      MGI_SORTER_BLOCKS=64 MGI_SEG_SIZE=131072 MGI_SORT_RINGS=4 MGI_FINAL_DEPTH=64 \
      MGI_MOVER_BATCH=256 MGI_SORT_DEPTH=2048 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=4096
    bin=$1; shift; b=64; n=134217728; d=; for v in "$@"; do case $v in -b*) b=${v#-b};; -n*) n=${v#-n};; -D) d=-D;; esac; done
    timeout 60 $B/$bin bench -l 2 -s 64 -n $n -b $b -K 4 -T 40 $d > /tmp/ds.txt 2>&1
    cat /tmp/ds.txt >> $O/ds.txt
    grep -E '^send_bw 64 B|FAIL|rror' /tmp/ds.txt | head -2 | sed 's/send_bw //;s/, tile sends.*//' | cut -c1-112 )
}
echo "== $(date +%T) Exchange, in turn"
for r in 1 2; do for s in 131072 133120; do
  for b in mgi_workloads-base mgi_workloads; do echo "-- r$r seg $s $b: $(wl $b exchange $s)"; done
done; done
echo "== $(date +%T) GroupBy, Join (133120)"
for op in groupby join; do
  for b in mgi_workloads-base mgi_workloads; do echo "-- $op $b: $(wl $b $op 133120)"; done
done
echo "== $(date +%T) device send, in turn"
for a in "-D -n268435456" "-b59"; do
  for b in mgi_gpu_test-base mgi_gpu_test; do echo "-- $a $b: $(ds $b $a)"; done
done
echo "== $(date +%T) MGI GPU suite (new tree)"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(FAIL|SKIP)|^== [0-9]" $O/mgi-suite.txt | tail -6
echo "== $(date +%T) done in ${SECONDS}s"

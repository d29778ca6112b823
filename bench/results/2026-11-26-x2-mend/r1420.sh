#!/usr/bin/env bash
# run1420 (2 GPUs): settings only, the final tree (contrib/bundle.sh's
# bundle of 061eaa6). With stage groups a tile send's reservation in a
# group's ring is ~32 KB (half of a 64 KB tile of 16-byte tuples) and
# does not look at the room left in the slot: four of them need ~131104
# bytes on average against a 131072-byte segment's 131056, so the fourth
# fits about half of the time and the rest of the segment is padded. Are
# the padded segments there (the sorters' totals, UCX_LOG_LEVEL=info), and
# does a segment a little larger (133120: 2 KB of margin, ~2 standard
# deviations of four shares; 139264: 8 KB) move the Exchange faster? In
# turn, twice; then GroupBy and Join with the best.
# Called with the device tool, bundle/ carried (gtest_cuda_mgi and
# ucx_perftest left out to stay within what a call carries):
#   bash bench/results/2026-11-26-x2-mend/r1420.sh
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
wl() {  # the workloads' MGI variant with run.sh's settings: OP SEG_SIZE [VAR=value ...]
  ( export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=40 MGI_SEND_ZCOPY=1 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 \
      MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 UCX_LOG_LEVEL=info
    op=$1; export MGI_SEG_SIZE=$2; shift 2; for v in "$@"; do export "$v"; done
    timeout 90 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant mgi --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z]+ +mgi|rror" /tmp/wl.txt | sed 's/ sf=.*partition_ms=0.000//;s/ iters=3//;s/gpus=2 //' | cut -c1-140
    grep -oE "mgi ep [0-9]+: sorter totals: [0-9]+ rounds, [0-9]+ tuples sorted and [0-9]+ stage segments moved whole \([0-9]+ of them to the loopback lane, [0-9]+ straight to final rings, [0-9]+ of those by reference\)" /tmp/wl.txt | cut -c1-220 )
}
for r in 1 2; do
  for s in 131072 133120 139264; do echo "-- r$r exchange seg $s:"; wl exchange $s; done
done
for op in groupby join; do
  for s in 131072 133120; do echo "-- $op seg $s: $(wl $op $s | head -1)"; done
done
echo "== $(date +%T) done in ${SECONDS}s"

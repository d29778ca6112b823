#!/usr/bin/env bash
# run340 (2 x H200): the harness on the final tree (run.sh's set), every
# op and the Zipf sweep, every variant in one invocation per op and theta;
# then the mgi Join alone four times at Zipf 0 and 1.0 (run330 had them
# slower than run310). Called with the device tool, bundle/ carried:
#   bash bench/results/2026-11-26-h200x2-memh/r340.sh
O=${OUT:-/tmp}; LIMIT=${LIMIT:-400}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n \
       NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
part() { if [ $SECONDS -gt $LIMIT ]; then echo "== $(date +%T) SKIPPED $1 (${SECONDS}s > ${LIMIT}s)"; return 1; fi; echo "== $(date +%T) [${SECONDS}s] $1"; }
nvidia-smi -L
if part "1 harness ops + zipf"; then
  MGI_WL_TIMEOUT=60 MGI_WL_ITERS=3 MGI_WL_PHASES="ops zipf" \
    bash bundle/run/workloads.sh /tmp/wl 2 2 2>&1 | grep -E '^(exchange|groupby|join)|^== |FAIL|rror|signal' | cut -c1-300
  cp /tmp/wl/ratios.txt $O/ratios.txt 2>/dev/null
  tar czf $O/wl.tgz -C /tmp wl 2>/dev/null
fi
if part "2 mgi join alone"; then
  export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=64 MGI_SEND_ZCOPY=1 \
         MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=32 MGI_RECV_DEPTH=1024 \
         MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4
  for z in 0 1.0 0 1.0 0 1.0 0 1.0; do
    echo "-- join zipf $z"
    timeout 60 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --zipf $z --variant mgi --op join 2>&1 | grep -E "^join +mgi|rror|FAIL" | sed 's/ sf=.*partition_ms=0.000//' | cut -c1-300
  done
fi
echo "== $(date +%T) done in ${SECONDS}s"

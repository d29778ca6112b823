#!/usr/bin/env bash
# run110: 2 x H200, tree bc85250: the workloads (every variant), #5's
# device send GPU0 -> GPU1, the mgi variant's user blocks
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
nvidia-smi -L; nvidia-smi topo -m | head -4
case "$1" in
ops)
  MGI_WL_TIMEOUT=150 MGI_WL_ITERS=3 MGI_WL_PHASES="${PH:-ops}" MGI_WL_ZIPF_OPS=exchange bash bundle/run/workloads.sh $O/wl 2 2 2>&1 | grep -E "^(exchange|groupby|join|many2one|one2many|p2p)|^== |FAIL|rror" | cut -c1-400 ;;
bench)
  tuned=(env UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64)
  for v in ${VS:-48:48:0 48:48:4 32:32:0}; do
    u=${v%%:*}; r=${v#*:}; sb=${r%%:*}; k=${r##*:}
    for s in 64 16; do
      n=67108864; [ $s = 16 ] && n=268435456
      echo "== $(date +%T) mgi_gpu_test bench -l 2 -s $s -b $u -K $k, MGI_SORTER_BLOCKS=$sb"
      "${tuned[@]}" MGI_SORTER_BLOCKS=$sb timeout 60 $B/mgi_gpu_test bench -l 2 -s $s -n $n -b $u -K $k -T 40 2>&1 | grep -E "^send_bw|FAIL|rror|TIMEOUT" | cut -c1-300
    done
  done ;;
blocks)
  export MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi MGI_SORTER_BLOCKS=32 MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_RECV_DEPTH=1024 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_FINAL_DEPTH=64 MGI_SORT_RINGS=4 CUDA_MODULE_LOADING=EAGER
  for v in ${VS:-MGI_WL_MGI_BLOCKS=48 MGI_WL_MGI_BLOCKS=64 MGI_WL_MGI_BLOCKS=96}; do
    echo "== $(date +%T) ${OP:-exchange} 2 GPUs ${VAR:-mgi} ${v//,/ }"
    env ${v//,/ } ${EXTRA:-} timeout 120 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --op ${OP:-exchange} --gib 2 --variant ${VAR:-mgi} 2>&1 | grep -E "^${OP:-exchange}|^# mgi|rror|sorter totals|sorter rounds|whole stage|mover" | sed 's/^\[[^]]*\] *//' | cut -c1-600
  done ;;
esac

#!/usr/bin/env bash
# run144: one GPU, stage-group reservations by warp 0 (new) against c928;
# one process (-l 2) and two processes under MPS
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=${SB:-32} MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
pat='^shuffle [0-9]|^send_bw [0-9]|\(GPU|FAIL|rror|TIMEOUT|timeouts 0x[1-9]|user blocks|whole stage|sorter rounds|mover \('
nvidia-smi -L
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
for P in ${PS:-1 2}; do
  if [ $P = 2 ]; then nvidia-cuda-mps-control -d && echo "== MPS daemon started"; sleep 1; fi
  for r in ${RS:-1 2}; do for m in ${MS:-shuffle}; do for s in ${SS:-16 64}; do for v in ${VS:-MGI_STAGE_GROUPS=2}; do for b in ${BS:-abbase/c928 bundle/bin}; do
    if [ $P = 1 ]; then run=($b/mgi_gpu_test $m -l 2); else run=(timeout 45 $B/mgi_launch -n 2 -t 40 -- $b/mgi_gpu_test $m); fi
    echo "== $(date +%T) P=$P round $r $b $m -s $s $v ${V:-}"
    "${set_[@]}" $v ${V:-} UCX_LOG_LEVEL=${LL:-info} timeout 45 "${run[@]}" -s $s -n ${N:-33554432} -b ${UB:-32} -K ${K:-4} -T 30 2>&1 | grep -E "$pat" | grep -v " 0 segments/s" | sed 's/^\[[^]]*\] *//' | cut -c1-330
  done; done; done; done; done
  if [ $P = 2 ]; then echo quit | nvidia-cuda-mps-control; sleep 1; fi
done

#!/usr/bin/env bash
# run140: one GPU, two processes under MPS (if the machine has it): the
# path between processes without the time slicing of separate contexts
L=${OUT:-/tmp}/mps.txt
exec > >(tee -a $L) 2>&1
ls -l $(command -v nvidia-cuda-mps-control nvidia-cuda-mps-server 2>/dev/null) 2>&1
ls /usr/bin/nvidia-cuda-mps* /usr/local/nvidia/bin 2>&1 | head
nvidia-smi -q | grep -i -E "compute mode|mig mode" -A1 | head
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
mps=0
if command -v nvidia-cuda-mps-control >/dev/null; then
  nvidia-cuda-mps-control -d && mps=1 && echo "== MPS daemon started"
  sleep 1
fi
for m in ${MODES:-d2}; do
  if [ $mps = 1 ] || [ "$m" = l2 ]; then bash abbase/r130.sh $m; fi
done
if [ $mps = 1 ]; then
  echo get_server_list | nvidia-cuda-mps-control
  echo quit | nvidia-cuda-mps-control; sleep 1
  cat $CUDA_MPS_LOG_DIRECTORY/control.log 2>/dev/null | tail -5
  cat $CUDA_MPS_LOG_DIRECTORY/server.log 2>/dev/null | tail -8
fi

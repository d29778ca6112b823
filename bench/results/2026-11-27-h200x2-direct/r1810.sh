#!/usr/bin/env bash
# run1810 (2 GPUs): direct rings (MGI_DIRECT_RINGS=1), after run1800
# (which hung: no device printf now; peer access set from the
# endpoint's GPU).
# 1. the GPU suite's *_direct steps (groupby, shuffle, send_bw, workloads
#    ops, every answer checked);
# 2. the workloads' Exchange, 2 GiB a GPU: NCCL and MGI with direct rings
#    (1 sorter block, user blocks 92 / 128), MGI through the sorters and
#    movers (run.sh's set) for reference; a profile of the direct one;
# 3. the device send 64 B GPU0 -> GPU1 with direct rings, one process.
#   bash bench/results/2026-11-27-h200x2-direct/r1810.sh  (bundle/ carried)
O=${OUT:-/tmp}
exec > >(tee -a $O/log.txt) 2>&1
B=$PWD/bundle/bin
export UCX_WARN_UNUSED_ENV_VARS=n NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 CUDA_MODULE_LOADING=EAGER
nvidia-smi -L
echo "== $(date +%T) MGI GPU suite, direct rings"
LD_LIBRARY_PATH=$PWD/bundle/lib MGI_SUITE_BUDGET_S=150 UCX_TLS=sm,self,cuda_mgi,cuda_copy \
  timeout 200 bash bundle/run/mgi-gpu-suite.sh $B /tmp/suite '_direct' > $O/mgi-suite.txt 2>&1; echo "rc=$?"
grep -E "^(PASS|FAIL|SKIP|TIMEOUT)|^== [0-9]" $O/mgi-suite.txt
grep -E "^send_bw|GB/s" $O/mgi-suite.txt | head -8 | cut -c1-200
for f in /tmp/suite/*.log; do grep -q -E "FAIL|rror" $f && { echo "-- $f"; grep -E "FAIL|rror|TIMEOUT" $f | head -4 | cut -c1-300; }; done
find_nccl() { ls /opt/torch/.venv/lib/python3*/site-packages/nvidia/nccl/lib/libnccl.so.2 /usr/local/lib/python3*/dist-packages/nvidia/nccl/lib/libnccl.so.2 2>/dev/null | head -1; }
export MGI_NCCL_LIB=$(find_nccl)
wl() {  # VARIANTS OP [VAR=value ...]: the workloads with run.sh's set
  ( . <(sed -n '/^export MGI_SORTER_BLOCKS/,/^export MGI_SORT_RINGS/p' bundle/run/workloads.sh)
    export LD_LIBRARY_PATH=$PWD/bundle/lib MGI_WL_MGI_TLS=sm,self,cuda_copy,cuda_mgi
    export UCX_TLS=sm,self,cuda_copy,cuda_ipc
    v=$1; op=$2; shift 2; for x in "$@"; do export "$x"; done
    timeout 75 $B/mgi_workloads --gpus 2 --iters 3 --warmup 1 --gib 2 --variant $v --op $op > /tmp/wl.txt 2>&1
    cat /tmp/wl.txt >> $O/wl.txt
    grep -E "^[a-z0-9]+ +[a-z_]+ +gpus|rror|FAIL|mgi device" /tmp/wl.txt | sed 's/ sf=.*cross_GB=[0-9.]*//;s/ iters=3//;s/gpus=2 //' | cut -c1-200
    grep -E "# mgi profile rank [01]" /tmp/wl.txt | cut -c1-420 )
}
D="MGI_DIRECT_RINGS=1 MGI_SORTER_BLOCKS=1 MGI_TIMEOUT_MS=20000"
echo "== $(date +%T) Exchange"
echo "-- nccl + mgi direct 128 blocks:"; wl nccl,mgi exchange $D MGI_WL_MGI_BLOCKS=128
echo "-- mgi direct 92 blocks:"; wl mgi exchange $D MGI_WL_MGI_BLOCKS=92
echo "-- mgi direct 128 blocks, 4 MiB rings:"; wl mgi exchange $D MGI_WL_MGI_BLOCKS=128 MGI_DIRECT_RING_KB=4096
echo "-- mgi direct 128 blocks, a receive every 2nd send:"; wl mgi exchange $D MGI_WL_MGI_BLOCKS=128 MGI_WL_MGI_RECV_EVERY=2
echo "-- mgi through sorters and movers:"; wl mgi exchange
echo "-- profile, direct 128:"; wl mgi exchange $D MGI_WL_MGI_BLOCKS=128 MGI_WL_MGI_PROFILE=1
echo "== $(date +%T) GroupBy, Join, direct 128 against NCCL"
wl nccl,mgi groupby $D MGI_WL_MGI_BLOCKS=128
wl nccl,mgi join $D MGI_WL_MGI_BLOCKS=128
echo "== $(date +%T) device send, direct"
for b in 64 128; do
  LD_LIBRARY_PATH=$PWD/bundle/lib UCX_TLS=sm,self,cuda_mgi,cuda_copy MGI_DIRECT_RINGS=1 MGI_SORTER_BLOCKS=1 \
    timeout 60 $B/mgi_gpu_test bench -l 2 -s 64 -n 134217728 -b $b -K 4 -T 40 -D > /tmp/ds.txt 2>&1
  cat /tmp/ds.txt >> $O/ds.txt
  echo "-- $b blocks: $(grep -E '^send_bw (64|16) B|FAIL|rror|received [0-9]' /tmp/ds.txt | head -3 | cut -c1-160 | tr '\n' ' ')"
done
echo "== $(date +%T) done in ${SECONDS}s"

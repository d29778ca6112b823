#!/usr/bin/env bash
# run130: one GPU, where the path between endpoints spends its time
B=$PWD/bundle/bin
export LD_LIBRARY_PATH=$PWD/bundle/lib UCX_WARN_UNUSED_ENV_VARS=n
export UCX_TLS=sm,self,cuda_mgi,cuda_copy CUDA_MODULE_LOADING=EAGER MGI_TIMEOUT_MS=30000
L=${OUT:-/tmp}/log.txt
exec > >(tee -a $L) 2>&1
set_=(env MGI_SORTER_BLOCKS=${SB:-32} MGI_SORTER_THREADS=512 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32 MGI_SORT_RINGS=4 MGI_RECV_DEPTH=1024 MGI_FINAL_DEPTH=64 MGI_DEV_TILE_BATCH=65528)
pat='^shuffle [0-9]|^send_bw [0-9]|\(GPU|FAIL|rror|TIMEOUT|timeouts 0x[1-9]|user blocks|sorter totals|sorter rounds|whole stage|mover \(|sorter passes'
nvidia-smi -L
case "$1" in
d2)
  for v in ${VS:-MGI_STAGE_GROUPS=1 MGI_STAGE_GROUPS=2}; do for m in ${MS:-shuffle bench}; do for s in ${SS:-16 64}; do
    echo "== $(date +%T) 2 procs mgi_gpu_test $m -s $s ${v//,/ }"
    "${set_[@]}" ${v//,/ } UCX_LOG_LEVEL=info timeout 45 $B/mgi_launch -n 2 -t 40 -- $B/mgi_gpu_test $m -s $s -n 33554432 -b ${UB:-32} -K 4 -T 30 2>&1 | grep -E "$pat" | sed 's/^\[[^]]*\] *//' | cut -c1-500
  done; done; done ;;
esac
case "$1" in
l2)
  for v in ${VS:-MGI_STAGE_GROUPS=1 MGI_STAGE_GROUPS=2}; do for m in ${MS:-shuffle bench}; do for s in ${SS:-16 64}; do
    echo "== $(date +%T) 1 proc mgi_gpu_test $m -l 2 -s $s ${v//,/ }"
    "${set_[@]}" ${v//,/ } UCX_LOG_LEVEL=info timeout 45 $B/mgi_gpu_test $m -l 2 -s $s -n 33554432 -b ${UB:-32} -K 4 -T 30 2>&1 | grep -E "$pat" | sed 's/^\[[^]]*\] *//' | cut -c1-500
  done; done; done ;;
esac
case "$1" in
mv)
  for t in ${TS:-sm,self,cuda_mgi,cuda_copy sm,self,cuda_ipc,cuda_copy}; do for s in ${SS:-64}; do
    echo "== $(date +%T) 2 procs mgi_gpu_test bench -s $s UCX_TLS=$t ${V:-}"
    "${set_[@]}" ${V:-} UCX_TLS=$t UCX_PROTO_INFO=y MGI_LOG_INTERVAL_MS=10 UCX_LOG_LEVEL=info timeout 45 $B/mgi_launch -n 2 -t 40 -- $B/mgi_gpu_test bench -s $s -n 33554432 -b ${UB:-32} -K 4 -T 30 2>&1 | grep -E "$pat|mover|put|\|" | sed 's/^\[[^]]*\] *//' | cut -c1-300 | head -${HN:-80}
  done; done ;;
esac
case "$1" in
mv2)
  for t in ${TS:-sm,self,cuda_mgi,cuda_copy}; do for m in ${MS:-bench shuffle}; do for s in ${SS:-64}; do
    echo "== $(date +%T) 2 procs mgi_gpu_test $m -s $s UCX_TLS=$t ${V:-}"
    "${set_[@]}" ${V:-} UCX_TLS=$t MGI_LOG_INTERVAL_MS=${LI:-20} UCX_LOG_LEVEL=info timeout 45 $B/mgi_launch -n 2 -t 40 -- $B/mgi_gpu_test $m -s $s -n 33554432 -b ${UB:-32} -K 4 -T 30 > $OUT/mv2-$m-$s.txt 2>&1
    grep -E "$pat|mover|ERROR" $OUT/mv2-$m-$s.txt | grep -v " 0 segments/s" | sed 's/^\[[^]]*\] *//' | cut -c1-420 | head -${HN:-40}
  done; done; done ;;
esac
case "$1" in
mv1)
  which perf nsys ncu 2>&1 | head -3
  for m in ${MS:-bench}; do for s in ${SS:-64}; do
    echo "== $(date +%T) 1 proc mgi_gpu_test $m -l 2 -s $s ${V:-}"
    "${set_[@]}" ${V:-} MGI_LOG_INTERVAL_MS=${LI:-20} UCX_LOG_LEVEL=info timeout 45 $B/mgi_gpu_test $m -l 2 -s $s -n 33554432 -b ${UB:-32} -K 4 -T 30 > $OUT/mv1-$m-$s.txt 2>&1
    grep -E "$pat|mover|ERROR" $OUT/mv1-$m-$s.txt | grep -v " 0 segments/s" | sed 's/^\[[^]]*\] *//' | cut -c1-420 | head -${HN:-40}
  done; done ;;
esac
case "$1" in
pt)
  P=$B/ucx_perftest; port=13337
  for s in ${SZ:-131072 1048576 4194304 33554432}; do for t in put_bw ucp_put_bw; do
    port=$((port+1)); n=$(( 4294967296 / s )); [ $n -gt 20000 ] && n=20000
    if [ $t = put_bw ]; then a=(-d cuda -x cuda_mgi); c=(-t put_bw -m cuda -D zcopy); e=(); else a=(); c=(-t ucp_put_bw -m cuda); e=(UCX_TLS=sm,self,cuda_mgi,cuda_copy); fi
    env "${e[@]}" timeout 60 $P "${a[@]}" -p $port > /dev/null 2>&1 & sp=$!
    sleep 1.5
    r=$(env "${e[@]}" timeout 50 $P 127.0.0.1 -p $port "${a[@]}" "${c[@]}" -s $s -n $n 2>&1 | awk '/Final:/ {printf "%.2f GB/s, %.2f us a put", $6*1048576/1e9, $4}')
    wait $sp
    echo "== one GPU, two processes, $t $s B x $n: $r"
  done; done ;;
esac

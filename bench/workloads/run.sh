#!/usr/bin/env bash
#
# The paper's workload evaluation on one GPU host: Exchange, GroupBy, Join,
# the many-to-one / one-to-many / point-to-point patterns, and the Zipf
# sweep of the partition key, every variant in the same invocation on the
# same data, every answer checked.  mgi_workloads starts one process per GPU
# itself.
#
# Usage: run.sh [OUTDIR] [GIB_PER_GPU] [GPUS]
#   OUTDIR       default /tmp/mgi_workloads-<date>
#   GIB_PER_GPU  lineitem tuples per GPU in GiB (16-byte tuples), default 2
#   GPUS         default: every GPU nvidia-smi lists
# Environment:
#   MGI_WL_BIN       the program (default: ../bin/mgi_workloads in a bundle,
#                    or ./mgi_workloads next to this script)
#   MGI_NCCL_LIB     libnccl.so.2 (default: found in Python site-packages)
#   MGI_WL_ITERS     measured iterations per variant (default 5)
#   MGI_WL_THETAS    Zipf sweep (default "0 0.5 1.0 1.5")
#   MGI_WL_ZIPF_OPS  ops of the sweep (default "exchange groupby join")
#   MGI_WL_VARIANTS  default all (nccl, ucx, ucx_mgi, mgi, single)
#   MGI_WL_UCX_TLS   transports of the ucx variant
#                    (default sm,self,cuda_copy,cuda_ipc)
#   MGI_WL_MGI_TLS   transports of the mgi variant's UCP context (the
#                    program's default: sm,self,cuda_copy,cuda_mgi)
#   MGI_DIRECT_RINGS 1 (default): the mgi variant's channels get libmgi's
#                    direct rings (then 1 sorter block and 256 user blocks
#                    of 512 threads unless MGI_SORTER_BLOCKS /
#                    MGI_WL_MGI_BLOCKS / MGI_WL_MGI_THREADS are set);
#                    0: through the sorters and movers
#   MGI_WL_MGI_BLOCKS  user blocks per GPU of the mgi variant (default 256
#                    with direct rings, else 92, or what fits beside the
#                    sorter blocks)
#   MGI_WL_MGI_THREADS threads per user block (default 512 with direct
#                    rings, else 1024)
#   MGI_WL_MGI_TILE  tuples per thread of a tile send (default 4; 0: a
#                    tuple per thread per mgi_dev_send_block)
#   MGI_DEV_TILE_BATCH payload bytes of a tile send's messages (the
#                    program's default 65528; 0: a message per tuple)
#   MGI_WL_MGI_RECV_TUPLES  most tuples a receive call takes (default
#                    65536)
#   MGI_WL_MGI_DYNAMIC 1 (default): user blocks claim input tiles as they
#                    go; 0: each its own share
#   MGI_WL_MGI_FUSE  operators whose step runs in the shuffle's receives:
#                    1 (default) the Join, 2 GroupBy too, 0 none
#   MGI_WL_MGI_LAND  1 (default): with direct rings, the shuffles that copy
#                    out (Exchange, the patterns) land their tuples in the
#                    receive buffer (mgi_ch_params_t.land); 0: through the
#                    rings
#   MGI_WL_MGI_RECV_EVERY  a receive after every N sends of a user block
#                    (default 8; 0: only when its stage ring is full)
#                    MGI_* variables of libmgi (MGI_SORTER_BLOCKS,
#                    MGI_TIMEOUT_MS, ...) pass through
#   MGI_WL_FORCE     set: go on to the large runs after a failed smoke run
#   MGI_WL_TIMEOUT   seconds one run may take (default 300)
#   MGI_WL_PHASES    which parts, default "gencheck smoke ops patterns zipf";
#                    a subset splits the evaluation over several calls into
#                    the same OUTDIR (summary, ratios and charts cover all)
#
# Writes OUTDIR/<run>.txt (all output) and OUTDIR/<run>.json per run,
# OUTDIR/summary.txt (the result lines), OUTDIR/png/ (when matplotlib is
# there).  Exit status 1 if any run failed or any answer was wrong.
#
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-/tmp/mgi_workloads-$(date -u +%Y%m%d-%H%M%S)}
gib=${2:-2}
gpus=${3:-$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')}
iters=${MGI_WL_ITERS:-5}
thetas=${MGI_WL_THETAS:-"0 0.5 1.0 1.5"}
zipf_ops=${MGI_WL_ZIPF_OPS:-"exchange groupby join"}
variants=${MGI_WL_VARIANTS:-all}
phases=" ${MGI_WL_PHASES:-gencheck smoke ops patterns zipf} "
phase() { [[ $phases == *" $1 "* ]]; }

die() { echo "run.sh: $*" >&2; exit 2; }

bin=${MGI_WL_BIN:-}
if [ -z "$bin" ]; then
    for c in "$here/../bin/mgi_workloads" "$here/mgi_workloads"; do
        [ -x "$c" ] && { bin=$c; break; }
    done
fi
[ -n "$bin" ] && [ -x "$bin" ] || die "no mgi_workloads (set MGI_WL_BIN)"
[ "${gpus:-0}" -ge 2 ] || die "needs 2 or more GPUs (found ${gpus:-0})"

# NCCL: the GPU host has it in a Python package (nvidia-nccl-cu13), not
# installed system-wide; it is found there, never carried in the bundle.
find_nccl() {
    local py c tail=nvidia/nccl/lib/libnccl.so.2
    for c in /opt/torch/.venv/lib/python3*/site-packages/$tail \
             /usr/local/lib/python3*/dist-packages/$tail \
             /usr/lib/python3/dist-packages/$tail; do
        [ -e "$c" ] && { echo "$c"; return 0; }
    done
    for py in /opt/torch/.venv/bin/python python3; do
        c=$("$py" -c 'import os, nvidia.nccl as n; p = list(n.__path__)[0]
print(os.path.join(p, "lib", "libnccl.so.2"))' 2>/dev/null) &&
            [ -e "$c" ] && { echo "$c"; return 0; }
    done
    return 1
}
if [ -z "${MGI_NCCL_LIB:-}" ]; then
    MGI_NCCL_LIB=$(find_nccl) ||
        echo "run.sh: libnccl.so.2 not found in Python site-packages;" \
             "the nccl variant will report itself absent" >&2
fi
export MGI_NCCL_LIB=${MGI_NCCL_LIB:-}

# multicast stays off on shared GPU hosts
export NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1
export UCX_TLS=${MGI_WL_UCX_TLS:-sm,self,cuda_copy,cuda_ipc}
export UCX_WARN_UNUSED_ENV_VARS=n
# the mgi variant: its context takes MGI_WL_MGI_TLS (cuda_mgi moves the
# segments GPU to GPU), and its sorter is a persistent kernel, so every
# kernel loads up front (mgi_workloads sets this too when mgi runs)
export MGI_WL_MGI_TLS=${MGI_WL_MGI_TLS:-sm,self,cuda_copy,cuda_mgi}
# libmgi's ring defaults on a GPU machine are its set for GPU endpoints
# (MGI_GPU_DEFAULTS); the mgi variant runs the larger settings below
# unless the caller sets them (src/ucp_ext/README.md, Tunables).
# With 32 user blocks of 1024 threads, deeper receive lanes and final
# rings and 4 sort rings per hop took GroupBy from 71.5 to 56.4 ms and
# Join from 103.9 to 79.6 ms on 2 x H200, the Exchange 60.3 to 70.9 GB/s.
# 64 sorter blocks a GPU beside the program's 64 user blocks, and whole
# stage segments put by the mover straight from the stage rings
# (MGI_SEND_ZCOPY=1, stage rings of 32): on 2 x H200 the Exchange moved
# 358-376 GB/s against 275-283 with 48 + 48 blocks and the mover's
# copies, GroupBy 16.6-16.9 against 20.0-20.5 ms, the Join 22.6 against
# 27.4-28.1 ms. Since the owners of the receive lanes take no stage rings
# (MGI_LANE_APART), 40 sorter blocks beside 92 user blocks (the program's
# default: what fits) moved the Exchange at 421-422 against 411-415 GB/s
# with 64 + 64, GroupBy 14.9 against 15.1 ms, the Join 19.0 against 23.2
# ms; 32 + 100 lost (368-372 GB/s).
# Direct rings (MGI_DIRECT_RINGS=1, the default here): every user block
# stores its tuples in a ring of its own in each destination GPU's memory,
# read there by the destination's user blocks, so no sorter and no mover
# carry them and one sorter block a GPU is enough. 256 user blocks of 512
# threads, two an SM, so one block's stores go on while the other waits
# for a publish (MGI_DIRECT_PUBLISH_KB): on 2 x H200 the Exchange moved
# 1019.5-1063.9 GB/s against 991.2-992.6 with 128 blocks of 1024 threads
# (384 of 256 threads, 192 or 262 of 512 were slower). 0 runs the settings
# below
export MGI_DIRECT_RINGS=${MGI_DIRECT_RINGS:-1}
if [ "$MGI_DIRECT_RINGS" = 1 ]; then
    export MGI_SORTER_BLOCKS=${MGI_SORTER_BLOCKS:-1}
    export MGI_WL_MGI_BLOCKS=${MGI_WL_MGI_BLOCKS:-256}
    export MGI_WL_MGI_THREADS=${MGI_WL_MGI_THREADS:-512}
fi
export MGI_SORTER_BLOCKS=${MGI_SORTER_BLOCKS:-40}
export MGI_SEND_ZCOPY=${MGI_SEND_ZCOPY:-1}
export MGI_SORTER_THREADS=${MGI_SORTER_THREADS:-512}
# Stage segments of 133120 bytes, not 131072: with a stage group per GPU a
# 64 KB tile of 16-byte tuples reserves ~32776 bytes a group, and four of
# those overran a 131072-byte segment's 131056 about half of the time, the
# rest of the segment then padded and put to the other GPU with it; 2 KB
# more (about two standard deviations of four shares) took the Exchange
# from 460.1-460.6 to 486.8-492.1 GB/s, 76.6 k stage segments a GPU to
# 66.4 k, GroupBy 15.15 to 14.61 ms, the Join 17.89 to 17.53 ms on 2 x H100
# (139264: 477-480 GB/s)
export MGI_SEG_SIZE=${MGI_SEG_SIZE:-133120}
export MGI_STAGE_DEPTH=${MGI_STAGE_DEPTH:-32}
export MGI_RECV_DEPTH=${MGI_RECV_DEPTH:-1024}
export MGI_SORT_DEPTH=${MGI_SORT_DEPTH:-256}
export MGI_MOVER_BATCH=${MGI_MOVER_BATCH:-32}
export MGI_FINAL_DEPTH=${MGI_FINAL_DEPTH:-64}
export MGI_SORT_RINGS=${MGI_SORT_RINGS:-4}
# MGI_PEER_DIRECT (the GPU endpoints append to each other's receive lanes)
# stays off: faster between two ranks on one H100, but between two H200
# over NVLink the Exchange moved 109-139 against 232-238 GB/s through the
# mover
export CUDA_MODULE_LOADING=EAGER
# the CPU reference runs in every rank: share the cores
ncpu=$(nproc 2>/dev/null || echo 2)
threads=$(( ncpu / gpus > 0 ? ncpu / gpus : 1 ))
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$threads}

mkdir -p "$out" || die "cannot create $out"
failed=0
[ -e "$out/machine.txt" ] || {
    echo "# $(date -u) $(hostname)"
    echo "# bin $bin"
    echo "# MGI_NCCL_LIB=$MGI_NCCL_LIB UCX_TLS=$UCX_TLS" \
         "MGI_WL_MGI_TLS=$MGI_WL_MGI_TLS OMP_NUM_THREADS=$OMP_NUM_THREADS"
    env | grep '^MGI_' | sort | sed 's/^/# /'    # libmgi's tunables too
    nvidia-smi -L
    nvidia-smi topo -m 2>&1 | head -20
} > "$out/machine.txt" 2>&1
cat "$out/machine.txt"

run() {  # NAME ARGS...
    local name=$1; shift
    echo "== $name: $*"
    timeout "${MGI_WL_TIMEOUT:-300}" "$bin" --gpus "$gpus" --iters "$iters" \
        --json "$out/$name.json" "$@" 2>&1 | tee "$out/$name.txt"
    local rc=${PIPESTATUS[0]}
    if [ "$rc" -ne 0 ]; then
        echo "== $name: FAILED (exit $rc)"
        failed=1
    fi
}

# the GPU generator equals the host reference byte for byte
if phase gencheck; then
    run gencheck --op gencheck --sf 1 --zipf 1.0
fi

# every op once on small data first: a crash or a wrong answer shows in
# seconds, not after the large runs (results under smoke/, not plotted)
if phase smoke; then
    mkdir -p "$out/smoke"
    for op in exchange groupby join many2one one2many p2p; do
        run "smoke/$op" --op "$op" --sf 0.05 --warmup 0 --variant "$variants"
    done
    if [ "$failed" -ne 0 ] && [ -z "${MGI_WL_FORCE:-}" ]; then
        echo "== smoke runs failed: stopping (MGI_WL_FORCE=1 goes on)"
        exit 1
    fi
fi

if phase ops; then
    for op in exchange groupby join; do
        run "${op}" --op "$op" --gib "$gib" --variant "$variants"
    done
fi
if phase patterns; then
    for op in many2one one2many p2p; do
        run "${op}" --op "$op" --gib "$gib" --variant "$variants"
    done
fi
if phase zipf; then
    for op in $zipf_ops; do
        for t in $thetas; do
            run "${op}_zipf${t}" --op "$op" --gib "$gib" --zipf "$t" \
                --variant "$variants"
        done
    done
fi

grep -hE '^(gencheck|[a-z0-9]+ +[a-z_]+ +(gpus=|absent))' "$out"/*.txt \
    > "$out/summary.txt"
echo "== summary"
cat "$out/summary.txt"
if grep -q 'verify=FAILED' "$out/summary.txt"; then
    echo "== some answers were WRONG"
    failed=1
fi

# ratios against nccl and ucx (GB/s: higher is better; ms: x = base/this);
# none when only the smoke runs were asked for (they are not plotted)
if ! ls "$out"/*.json >/dev/null 2>&1; then
    echo "== results in $out (smoke runs only: no charts)"
    exit $failed
fi
python3 "$here/plot.py" --table "$out" | tee "$out/ratios.txt" ||
    /opt/torch/.venv/bin/python "$here/plot.py" --table "$out" \
        > "$out/ratios.txt"
for py in /opt/torch/.venv/bin/python python3; do
    if "$py" -c 'import matplotlib' 2>/dev/null; then
        "$py" "$here/plot.py" "$out/png" "$out" || failed=1
        break
    fi
done
echo "== results in $out"
exit $failed

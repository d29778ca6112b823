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
#   MGI_WL_MGI_BLOCKS  user blocks per GPU of the mgi variant (default 256
#                    with direct rings, libmgi's default between the GPUs
#                    of one host, else 92; or what fits beside the sorter)
#   MGI_WL_MGI_THREADS threads per user block (default 512 with direct
#                    rings, else 1024)
#   MGI_WL_MGI_TILE  tuples per thread of a tile send (default 4; 0: a
#                    tuple per thread per mgi_dev_send_block)
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
#   libmgi's own MGI_* variables are not set here: the runs take
#                    libmgi's defaults, and machine.txt and the tables
#                    say which are set where the caller set some
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
    mgi_env=$(env | grep '^MGI_' | grep -v '^MGI_WL_\|^MGI_NCCL_LIB=' | sort)
    echo "# libmgi settings: ${mgi_env:-none (no MGI_* set: its defaults)}" |
        tr '\n' ' '; echo
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

{
    grep -h '^# libmgi settings:' "$out/machine.txt"
    grep -hE '^(gencheck|[a-z0-9]+ +[a-z_]+ +(gpus=|absent))' "$out"/*.txt
} > "$out/summary.txt"
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

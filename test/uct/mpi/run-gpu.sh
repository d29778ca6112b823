#!/usr/bin/env bash
#
# mgi_mpi_test on device buffers over Open MPI's pml ucx, on a node with
# 2 GPUs: with UCX_TLS=sm,cuda_mgi,cuda_copy, then sm,cuda_ipc,cuda_copy,
# in one invocation, and their ratio.
#
# Usage: run-gpu.sh [OUTDIR] [PROGRAM OPTIONS...]
#   OUTDIR     where the results go (default mpi-gpu-DATE in the current
#              folder)
#   options    mgi_mpi_test's (default: all, full sizes 1 B .. 256 MiB)
#
# From a bundle (contrib/bundle.sh, then contrib/mpi-bundle.sh) as
# run/mpi-gpu.sh: bin/mgi_mpi_test, the bundle's UCX in lib/ and the
# relocated Open MPI in openmpi/ (its env.sh) beside it.  From a source
# tree: test/uct/mpi/mgi_mpi_test, the UCX of MGI_UCX (a prefix; default
# the tree's .deps/ucx) and the mpirun on the PATH.
#
# OUTDIR gets, for each transport T:
#   T.txt, T.N.txt  the program's output (the tables) of the first run and
#                 of run N after it
#   T.err, T.N.err  mpirun's and the ranks' messages
#   T.lanes       UCX's endpoint configuration from a short run at
#                 UCX_LOG_LEVEL=info: which transports carried what
# and compare.txt: for every table, per size, the median of each
# transport's runs and cuda_mgi / cuda_ipc (bandwidth: above 1 is cuda_mgi
# faster; latency: below 1).
#
# Environment: MGI_MPI_NP (default 2), MGI_MPIRUN_ARGS (more mpirun
# options), MGI_UCX, MGI_MPI_REPEAT (runs of each transport, default 3:
# the two alternate, and compare.txt takes each one's median per size; a
# single run of either moved by up to a fifth from one run to the next at
# 64 KiB to 2 MiB, as ucx_perftest's 64 KiB put_bw and tag_bw did).
#
# Exit status: 0 when both runs got every byte right, else the first
# failing run's (77: cannot run here, e.g. no GPU).
#
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd -P)
if [ -x "$here/../bin/mgi_mpi_test" ]; then
    # the bundle
    prog=$here/../bin/mgi_mpi_test
    export MGI_UCX=${MGI_UCX:-$(cd "$here/.." && pwd -P)}
    if [ -f "$here/../openmpi/env.sh" ]; then
        # shellcheck disable=SC1091
        . "$here/../openmpi/env.sh"
    fi
else
    prog=$here/mgi_mpi_test
    export MGI_UCX=${MGI_UCX:-$here/../../../.deps/ucx}
    export LD_LIBRARY_PATH="$MGI_UCX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
[ -x "$prog" ] || { echo "run-gpu.sh: no mgi_mpi_test at $prog" >&2; exit 2; }
[ -e "$MGI_UCX/lib/libucp.so.0" ] ||
    { echo "run-gpu.sh: no UCX in $MGI_UCX (set MGI_UCX to a UCX prefix)" >&2; exit 2; }

out=${1:-mpi-gpu-$(date +%Y%m%d-%H%M%S)}
[ $# -gt 0 ] && shift
[ $# -gt 0 ] || set -- all
mkdir -p "$out"

ompi_version=$(mpirun --version 2>/dev/null | head -1)
launch=(mpirun -np "${MGI_MPI_NP:-2}"
        # Open MPI 4.1 and 5.0 take pml ucx only with a transport they know
        # (cuda_ipc, verbs) unless told any will do; Debian's configuration
        # turns pml ucx off, so name it
        --mca pml ucx --mca pml_ucx_tls any --mca pml_ucx_devices any
        -x LD_LIBRARY_PATH -x UCX_TLS -x UCX_WARN_UNUSED_ENV_VARS=n)
[ "$(id -u)" = 0 ] && launch+=(--allow-run-as-root)
# shellcheck disable=SC2206
launch+=(${MGI_MPIRUN_ARGS:-})

{
    echo "# run-gpu.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
    echo "# $ompi_version; UCX $MGI_UCX; options: $*"
    nvidia-smi -L 2>/dev/null | sed 's/^/# /'
} | tee "$out/README"

repeat=${MGI_MPI_REPEAT:-3}
case $repeat in
    ''|*[!0-9]*|0) echo "run-gpu.sh: MGI_MPI_REPEAT=$repeat: a count of runs" \
                      "(1 or more)" >&2; exit 2 ;;
esac
# the transports compared, each beside sm and cuda_copy (UCX_TLS=sm,T,cuda_copy)
transports=(cuda_mgi cuda_ipc)
status=0
for name in "${transports[@]}"; do
    echo "== UCX_TLS=sm,$name,cuda_copy: which transports UCP chose, from a" \
         "short run"
    UCX_TLS=sm,$name,cuda_copy UCX_LOG_LEVEL=info "${launch[@]}" \
        -x UCX_LOG_LEVEL "$prog" --mem cuda --size 1M:1M --iterations 1 \
        --warmup 0 check >"$out/$name.probe" 2>&1
    grep -h 'ep_cfg\[' "$out/$name.probe" | sed 's/^.*UCX  *INFO  *//' |
        sort -u >"$out/$name.lanes"
    sed 's/^/   lanes: /' "$out/$name.lanes"
done
pattern='^# (every byte right|FAILED)|cannot run here|timeout:'
files=()     # every run's tables, for compare.txt
for run in $(seq 1 "$repeat"); do
    for name in "${transports[@]}"; do
        file=$name; [ "$run" -gt 1 ] && file=$name.$run
        export UCX_TLS=sm,$name,cuda_copy
        "${launch[@]}" "$prog" --mem cuda "$@" >"$out/$file.txt" \
            2>"$out/$file.err"
        rc=$?
        files+=("$out/$file.txt")
        echo "== UCX_TLS=$UCX_TLS, run $run of $repeat: exit $rc:" \
             "$(grep -h -m1 -E "$pattern" "$out/$file.txt" "$out/$file.err" |
                head -1)"
        [ $rc -ne 0 ] && [ $status -eq 0 ] && status=$rc
    done
done

# per table and size: each transport's median over its runs, and their
# ratio
awk '
    function median(list,    v, k, i, j, t) {
        k = split(list, v, " ")
        for (i = 2; i <= k; i++) {          # insertion sort, k is small
            t = v[i] + 0
            for (j = i - 1; j >= 1 && v[j] + 0 > t; j--) v[j + 1] = v[j]
            v[j + 1] = t
        }
        if (k == 0) return ""
        if (k % 2) return v[(k + 1) / 2]
        return sprintf("%.2f", (v[k / 2] + v[k / 2 + 1]) / 2)
    }
    FNR == 1 { tl = (FILENAME ~ /cuda_mgi[^\/]*$/) ? "mgi" : "ipc"; runs[tl]++ }
    /^# MGI MPI / { table = substr($0, 3); if (!(table in seen)) { seen[table] = 1; order[++n] = table } next }
    /^# Size/ { next }
    /^[0-9]/ && NF >= 2 && $2 ~ /^[0-9.]+$/ {
        key = table SUBSEP $1
        if (!(key in size_seen)) { size_seen[key] = 1; sizes[table, ++count[table]] = $1 }
        value[tl, key] = value[tl, key] " " $2
    }
    END {
        printf "# the median of %d run(s) of cuda_mgi and %d of cuda_ipc, alternating\n",
               runs["mgi"], runs["ipc"]
        for (t = 1; t <= n; t++) {
            table = order[t]
            if (count[table] == 0) continue
            printf "\n# cuda_mgi / cuda_ipc: %s\n", table
            printf "# %-8s %16s %16s %8s\n", "Size", "cuda_mgi", "cuda_ipc", "ratio"
            for (i = 1; i <= count[table]; i++) {
                key = table SUBSEP sizes[table, i]
                a = median(value["mgi", key]); b = median(value["ipc", key])
                printf "%-10s %16s %16s %8s\n", sizes[table, i], a, b,
                       (a != "" && b > 0) ? sprintf("%.3f", a / b) : "-"
            }
        }
    }' "${files[@]}" >"$out/compare.txt"
echo "== $out/compare.txt"
awk '/^# cuda_mgi/ { show = /Bandwidth Test, window/ } show' "$out/compare.txt"
exit $status

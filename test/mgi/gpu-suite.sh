#!/usr/bin/env bash
#
# MGI channels on GPUs: the checks and benchmarks of GPU endpoints, from a
# bundle's bin directory, on a machine with 2 or more GPUs. With one GPU
# every step runs with both endpoints on it (GPU0 -> GPU0, send_bw's
# baseline a copy within the GPU): the two-process steps check the data
# only (two processes' kernels take turns on one GPU, so their speed says
# nothing), the one-process steps (*_1proc*) run both endpoints' kernels
# side by side and their figures measure the GPU-local pipeline.
#
#   gpu-suite.sh BINDIR [OUTDIR [STEP_REGEX]]
#
# STEP_REGEX picks steps by name (e.g. 'groupby|send_bw'). MGI_SUITE_WRAP
# puts a command before each step's (a compute-sanitizer tool, as
# contrib/gpu-sanitize.sh does), and MGI_SUITE_SLOW=N gives each step and
# its launcher N times their time limits. The whole run
# keeps within MGI_SUITE_BUDGET_S (default 540 s): a step that would start
# after that is reported SKIPPED, so one invocation fits a 10-minute slot
# even when steps hang until their limits.
#
# BINDIR holds mgi_gpu_test, mgi_launch, gpu_ring_test and shuffle (the
# first example, examples/shuffle.cu; libmgi and UCX found through their
# rpaths). Every step is bounded by timeout(1), prints
# PASS/FAIL, and its JSON lines are collected in OUTDIR/results.jsonl.
# Exit status: the number of failed steps.
#
#   example_shuffle_defaults  examples/shuffle.cu, the new user's program,
#                 2 processes, with libmgi's defaults: no MGI_*, no UCX_TLS,
#                 no CUDA_MODULE_LOADING set (it sets that itself)
#   *_defaults    GPU steps with libmgi's defaults: direct rings between
#                 the GPU endpoints, thread-level sends and receives there
#   ring_*        ring protocol + device send calls (one GPU, no library)
#   groupby_*     paper Fig. 3 GroupBy over the device API, checked against
#                 a CPU reference: 2 processes x 1 GPU, 1 process x 2 GPUs,
#                 and with tiny rings (flow control, credits, wrap-around)
#   *_channels    channels one after the other over 2 channel ids
#                 (MGI_TEST_MAX_CHANNELS=2), each checked: ids and the sorter's
#                 table entries reused; with -H rank 0 holds the first
#                 channel meanwhile, and the others must not take its id
#   send_bw_*     device send GPU0 -> GPU1 of 64 B / 16 B tuples, receiver
#                 checks count + checksum; cudaMemcpyPeerAsync of the same
#                 bytes in the same run; prints the ratio
#   sorter_*      sorter micro-benchmark (paper §6.6) on one GPU, loopback:
#                 per-block vs one global stage ring (the sorter writes in
#                 segment order)
#   shuffle_*     exchange between two endpoints by partition key, each
#                 checking count + checksum of what it received
#   *_groups*     MGI_TEST_STAGE_GROUPS: a stage ring per destination in each
#                 user block (keyed sends, a flush's EOF in every ring,
#                 with tiny rings a reservation given back as padding)
#   *_stage_ref   whole stage segments for the endpoint itself reach the
#                 final rings by reference and are read in the stage
#                 ring: a stage group per destination, so that they are
#                 whole, and tiny rings, which fill with them
#   *_direct      MGI_DIRECT_RINGS=1: each user block stores its tuples
#                 in a ring of its own in every destination GPU's memory,
#                 read there by the destination's user blocks (no sorter,
#                 no mover); 4 KiB rings fill and wrap
#   *_land        ... and a landing buffer at each destination
#                 (mgi_ch_params_t.land): tuples stored straight into it,
#                 what does not fit through the rings (_half: room for
#                 half)
#   *_send_ref    MGI_TEST_SEND_ZCOPY=1: whole stage segments for another
#                 endpoint go to the sort ring by reference, several side
#                 by side in one, and the mover puts them from the stage
#                 ring (CUDA copies in one process, UCP puts through
#                 cuda_mgi between two); with tiny rings the stage rings
#                 fill with segments waiting for their put
#   peer_dies_2proc  rank 1 ends after the channel's create; rank 0's
#                 kernel, waiting for rank 1's tuples, sees mgi_dev_failed,
#                 its flush and its destroy return
#   ring_budget   rings larger than the GPU's memory refused at the
#                 endpoint's and the channel's create, naming the setting
#   idle_copy     the application's copies within GPU 0 before, beside
#                 and after an idle endpoint (a figure, always passes when
#                 the copies end)
#   *_wide        send_bw, 4 GiB, 128 user and 32 sorter blocks, 1024-deep
#                 receive lanes
#   *_relay       three endpoints at the vertices of a declared line of
#                 GPUs: the middle one's sorter forwards the outer pair's
#                 tuples and EOFs (an ordered channel: one path a pair)
#   *_split       four endpoints at a declared square of GPUs: the
#                 opposite corners spread their tuples over both relays
#                 (the default channel), every tuple checked
#   *_fan         five endpoints at a declared fan of GPUs: the relay
#                 next to the source spreads what it forwards over two
#   *_split_tiny_rings  the square with two-segment sort and receive
#                 rings: the plan keeps its relays' waits free of cycles
#   *_tile        tile sends (mgi_dev_send_block_tile, -K): a block sends
#                 K x blockDim tuples from memory with one reservation
#   *_tuned       send_bw and sorter again, 1 GiB, with the settings
#                 measured for GPU endpoints before they became libmgi's
#                 defaults on a machine with a GPU
#   *_cpu_defaults  GroupBy and send_bw with the ring defaults sized for
#                 CPU endpoints (MGI_TEST_GPU_DEFAULTS=0: small segments, 8
#                 credits, 2 sorter blocks): every other step without ring
#                 settings of its own runs with the GPU ones
#   workloads_*   bench/workloads' mgi variant on a small data set (two
#                 GPUs where there are, else one), every answer checked
#                 against the CPU reference: Exchange, GroupBy and Join,
#                 with the operators' steps in the shuffle's receives
#                 (MGI_WL_MGI_FUSE) and after, tiles claimed and static;
#                 the Exchange of the ucx and peer variants (the
#                 partition kernel's two kinds of scatter); many-to-one in
#                 tiles routed by its rule (mgi_dev_send_block_tile_map)
#                 and untiled
#   regions_*     two GPUs: bench/workloads' region programs on small data
#                 (where BINDIR has them), every answer checked: MGG's
#                 aggregation (in-kernel gets mapped and through the proxy,
#                 NCCL all-gather, managed memory, one GPU) and PROACT's
#                 push / bulk / remote stores; the device get / put
#                 bandwidth against the copy engine
#   mover_puts_*  two GPUs: the workloads' point-to-point between two
#                 processes, whose mover's copies cuda_mgi batches by
#                 default, and not with UCX_CUDA_MGI_BATCH=n; no unused-key
#                 warning either way
#
set -uo pipefail

bin=${1:?usage: gpu-suite.sh BINDIR [OUTDIR [STEP_REGEX]]}
bin=$(cd "$bin" && pwd)
here=$(cd "$(dirname "$0")" && pwd)   # topo/ beside it
out=${2:-/tmp/mgi-gpu-suite}
only=${3:-.}
budget=${MGI_SUITE_BUDGET_S:-540}
suite_t0=$(date +%s)
mkdir -p "$out"
: > "$out/results.jsonl"

export PATH=$bin:$PATH
export UCX_WARN_UNUSED_ENV_VARS=n
# movers put from GPU memory: cuda_mgi carries GPU to GPU, cuda_copy serves
# a process's own endpoints, sm/self the host-memory control words
export UCX_TLS=${UCX_TLS:-sm,self,cuda_mgi,cuda_copy}
# the sorter is a persistent kernel: never load a kernel lazily beside it
export CUDA_MODULE_LOADING=EAGER
export MGI_TIMEOUT_MS=${MGI_TIMEOUT_MS:-30000}
T=${MGI_KERNEL_TIMEOUT_S:-60}   # device-side bound of every test kernel
export NCCL_NVLS_ENABLE=0
# The steps test the sorters and movers unless they say otherwise: those
# named *_direct set MGI_DIRECT_RINGS=1, the *_defaults ones run with no
# MGI_* at all (libmgi's default there: direct rings)
export MGI_DIRECT_RINGS=${MGI_DIRECT_RINGS:-0}
defaults=(env -u MGI_DIRECT_RINGS -u MGI_TIMEOUT_MS -u UCX_TLS
          -u CUDA_MODULE_LOADING)

# a command put before every step's (contrib/gpu-sanitize.sh: a
# compute-sanitizer tool); empty for the suite itself
wrap=${MGI_SUITE_WRAP:-}
slow=${MGI_SUITE_SLOW:-1}

fails=0
skipped=0
skip() {  # NAME WHY
    [[ $1 =~ $only ]] || return 0
    echo "SKIPPED $1 ($2)"
    skipped=$((skipped + 1))
}
step() {
    local name=$1 limit=$2
    shift 2
    [[ $name =~ $only ]] || return 0
    local left=$(( budget - ($(date +%s) - suite_t0) ))
    if [ "$left" -lt 20 ]; then
        echo "SKIPPED $name (suite budget of $budget s spent)"
        skipped=$((skipped + 1))
        return 0
    fi
    # MGI_SUITE_SLOW: the step's limit and its launcher's (-t before --)
    # that many times longer
    if [ "$slow" -gt 1 ]; then
        local a in_launch=0 prev= args=()
        limit=$((limit * slow))
        for a in "$@"; do
            case $a in mgi_launch) in_launch=1 ;; --) in_launch=0 ;; esac
            if [ $in_launch = 1 ] && [ "$prev" = -t ] && [[ $a =~ ^[0-9]+$ ]]; then
                a=$((a * slow))
            fi
            args+=("$a") prev=$a
        done
        set -- "${args[@]}"
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    echo "== $name: $*"
    local t0=$(date +%s)
    # shellcheck disable=SC2086  # MGI_SUITE_WRAP is a command prefix
    timeout -k 10 "$limit" $wrap "$@" > "$out/$name.log" 2>&1
    local rc=$?
    grep -v '^json: ' "$out/$name.log" | tail -15
    grep '^json: ' "$out/$name.log" | sed 's/^json: //' |
        tee -a "$out/results.jsonl"
    if [ $rc -eq 0 ]; then
        echo "PASS $name ($(( $(date +%s) - t0 )) s)"
    else
        [ $rc -eq 124 ] && echo "TIMEOUT after $limit s"
        echo "FAIL $name (exit $rc, log $out/$name.log)"
        fails=$((fails + 1))
    fi
}

echo "== machine"
nvidia-smi -L
ngpu=$(nvidia-smi -L | grep -c '^GPU')
[ "$ngpu" -ge 1 ] || { echo "need a GPU, found none"; exit 99; }
[ "$ngpu" -ge 2 ] || echo "one GPU: every endpoint on GPU 0; the two-process" \
    "steps' speeds are of time-sliced contexts, not of the pipeline"

for m in thread warp block batch; do
    step ring_$m 60 gpu_ring_test $m 200
done

n=${MGI_SUITE_TUPLES:-1000000}   # GroupBy tuples a rank (fewer under a sanitizer)
# tuples of the shuffles that a sanitizer runs (there as many as GroupBy's;
# a relay's, a fifth of that: its serial walks under racecheck)
big_n=4194304
relay_n=$n
[ -n "$wrap" ] && big_n=$n relay_n=$((n / 5))
# the first example with libmgi's defaults: every tuple checked, the rate
# across per rank printed
step example_shuffle_defaults 120 "${defaults[@]}" \
    mgi_launch -n 2 -t 110 -- shuffle $big_n
# thread-level receives (-R thread) and sends (peer_dies: thread 0 sends
# 16 tuples, then waits for the other rank, which ends) on the default
# channel kind between GPU endpoints: direct rings
step peer_dies_2proc_defaults 60 "${defaults[@]}" \
    mgi_launch -n 2 -t 55 -- mgi_gpu_test peer_dies
step groupby_2proc_defaults_thread_recv 100 "${defaults[@]}" \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test groupby -n $n -b 8 -R thread -T $T
step groupby_1proc_2gpu_defaults 100 "${defaults[@]}" \
    mgi_gpu_test groupby -l 2 -n $n -b 8 -T $T

step groupby_2proc 100 mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test groupby -n $n -b 8 -T $T
step groupby_1proc_2gpu 100 mgi_gpu_test groupby -l 2 -n $n -b 8 -T $T
MGI_TEST_GPU_DEFAULTS=0 step groupby_2proc_cpu_defaults 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test groupby -n $n -b 8 -T $T
MGI_TEST_GPU_DEFAULTS=0 step send_bw_64B_2proc_cpu_defaults 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test bench -s 64 -n 4194304 -b 32 -T $T
MGI_SEG_SIZE=1024 MGI_STAGE_DEPTH=2 MGI_SORT_DEPTH=2 MGI_RECV_DEPTH=2 \
MGI_FINAL_DEPTH=2 MGI_MOVER_BATCH=3 \
    step groupby_2proc_tiny_rings 100 mgi_launch -n 2 -t 95 -- \
        mgi_gpu_test groupby -n 200000 -b 4 -t 32 -T $T
# the thread-level receive (mgi_dev_recv, thread 0 of a block) through
# the sorters' final rings (the defaults' step above: direct rings)
step groupby_2proc_thread_recv 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test groupby -n $n -b 8 -R thread -T $T
MGI_TEST_MAX_CHANNELS=2 step groupby_2proc_channels 100 mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test groupby -n 200000 -b 8 -C 5 -H -T $T
MGI_TEST_MAX_CHANNELS=2 step groupby_1proc_2gpu_channels 100 \
    mgi_gpu_test groupby -l 2 -n 200000 -b 8 -C 5 -T $T

# stage groups: a stage ring per destination (or 8, 6 of them carrying
# only EOFs), keyed sends moved whole, loopback too
MGI_TEST_STAGE_GROUPS=2 step groupby_2proc_groups2 100 mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test groupby -n $n -b 8 -T $T
MGI_TEST_STAGE_GROUPS=2 step groupby_1proc_2gpu_groups2 100 \
    mgi_gpu_test groupby -l 2 -n $n -b 8 -T $T
MGI_TEST_STAGE_GROUPS=8 step groupby_1proc_2gpu_groups8 100 \
    mgi_gpu_test groupby -l 2 -n $n -b 8 -T $T
MGI_TEST_STAGE_GROUPS=2 MGI_SEG_SIZE=1024 MGI_STAGE_DEPTH=2 MGI_SORT_DEPTH=2 \
MGI_RECV_DEPTH=2 MGI_FINAL_DEPTH=2 MGI_MOVER_BATCH=3 \
    step groupby_2proc_tiny_rings_groups2 100 mgi_launch -n 2 -t 95 -- \
        mgi_gpu_test groupby -n 200000 -b 4 -t 32 -T $T
step shuffle_64B_1proc 100 mgi_gpu_test shuffle -l 2 -s 64 -n 4194304 \
    -b 32 -T $T
MGI_TEST_STAGE_GROUPS=2 step shuffle_64B_1proc_groups2 100 \
    mgi_gpu_test shuffle -l 2 -s 64 -n 4194304 -b 32 -T $T
MGI_TEST_STAGE_GROUPS=2 step shuffle_16B_2proc_groups2 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test shuffle -s 16 -n 8388608 -b 32 -T $T
MGI_TEST_STAGE_GROUPS=2 step send_bw_64B_2proc_blocking_flush_groups2 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test bench -s 64 -n 4194304 -b 32 -F \
    -T $T

# stage segments by reference: read in the stage ring, released in ring
# order once read, while the sorter passes the ones behind them; tiny
# rings fill with them
MGI_TEST_STAGE_GROUPS=2 MGI_SEG_SIZE=2048 MGI_STAGE_DEPTH=2 MGI_SORT_DEPTH=2 \
MGI_RECV_DEPTH=2 MGI_FINAL_DEPTH=2 MGI_MOVER_BATCH=3 \
    step shuffle_24B_1proc_tiny_rings_stage_ref 100 mgi_gpu_test shuffle \
        -l 2 -s 24 -n 200000 -b 4 -t 32 -K 5 -T $T
MGI_TEST_STAGE_GROUPS=2 MGI_SEG_SIZE=2048 MGI_STAGE_DEPTH=2 MGI_SORT_DEPTH=2 \
MGI_RECV_DEPTH=2 MGI_FINAL_DEPTH=2 MGI_MOVER_BATCH=3 \
    step groupby_2proc_tiny_rings_stage_ref 100 mgi_launch -n 2 -t 95 -- \
        mgi_gpu_test groupby -n 200000 -b 4 -t 32 -T $T
# a rank that ends without its destroy: the other's kernel, waiting for its
# tuples, learns it (mgi_dev_failed), its flush returns, its destroy too
step peer_dies_2proc 60 mgi_launch -n 2 -t 55 -- mgi_gpu_test peer_dies
# rings larger than the GPU's memory: an endpoint's receive lanes of 2^20
# segments (256 GiB) are refused at its create, final rings of 2^22
# segments (512 GiB each) at the channel's, each naming its setting; the
# program ends (it must fail) instead of hanging or crashing
expect_refusal() {  # LOG VAR=value PATTERN: mgi_gpu_test fails, says it
    local log=$1 set=$2 pat=$3 rc
    env "$set" mgi_gpu_test groupby -l 2 -n 10000 -b 8 -T 20 > "$log" 2>&1
    rc=$?
    cat "$log"
    [ $rc -ne 0 ] && [ $rc -lt 124 ] && grep -q -- "$pat" "$log" &&
        echo "refused as it should: $set"
}
step ring_budget 60 bash -c "$(declare -f expect_refusal)"'
    expect_refusal "$0.recv" MGI_RECV_DEPTH=1048576 \
        "MiB of device memory.*MGI_RECV_DEPTH" &&
    expect_refusal "$0.sort" MGI_SORT_DEPTH=1048576 \
        "(MGI_SORT_DEPTH).*MiB of device memory" &&
    expect_refusal "$0.final" MGI_FINAL_DEPTH=1048576 \
        "no device memory for final ring.*MGI_FINAL_DEPTH=1048576"' \
    "$out/ring_budget.out"
# direct rings (MGI_DIRECT_RINGS=1): a user block stores its tuples in a
# ring of its own in each destination GPU's memory (peer access in one
# process, CUDA IPC between two), which the destination's user blocks read
# there: no sorter, no mover. Block sends and tile sends (from registers,
# in 16-byte stores, and of 24-byte tuples byte by byte), 4 KiB rings that
# fill and wrap (a ring's tail then published when it is full, half a ring
# of MGI_TEST_DIRECT_PUBLISH_KB being more), a tail published after every send
# (MGI_TEST_DIRECT_PUBLISH_KB=0), channels made and deleted one after the other
# (their rings' EOFs and reads checked at the delete)
MGI_DIRECT_RINGS=1 step groupby_2proc_direct 100 mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test groupby -n $n -b 8 -T $T
MGI_DIRECT_RINGS=1 step groupby_1proc_2gpu_direct 100 \
    mgi_gpu_test groupby -l 2 -n $n -b 8 -T $T
MGI_DIRECT_RINGS=1 MGI_TEST_DIRECT_RING_KB=4 step groupby_2proc_tiny_direct 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test groupby -n 200000 -b 4 -t 32 -T $T
MGI_DIRECT_RINGS=1 MGI_TEST_MAX_CHANNELS=2 step groupby_2proc_channels_direct 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test groupby -n 200000 -b 8 -C 5 -H \
    -T $T
MGI_DIRECT_RINGS=1 MGI_TEST_DIRECT_RING_KB=4 step shuffle_24B_1proc_tiny_direct \
    100 mgi_gpu_test shuffle -l 2 -s 24 -n 200000 -b 4 -t 32 -K 5 -T $T
MGI_DIRECT_RINGS=1 step shuffle_64B_1proc_direct_tile 100 \
    mgi_gpu_test shuffle -l 2 -s 64 -n $big_n -b 32 -K 3 -T $T
MGI_DIRECT_RINGS=1 step shuffle_16B_2proc_direct_tile 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test shuffle -s 16 -n 8388608 -b 32 \
    -K 4 -T $T
MGI_DIRECT_RINGS=1 MGI_TEST_DIRECT_PUBLISH_KB=0 \
    step shuffle_16B_2proc_direct_tile_publish0 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test shuffle -s 16 -n 8388608 -b 32 \
    -K 4 -T $T
MGI_DIRECT_RINGS=1 MGI_TEST_DIRECT_RING_KB=4 step shuffle_16B_2proc_tiny_direct_tile \
    100 mgi_launch -n 2 -t 95 -- mgi_gpu_test shuffle -s 16 -n 200000 -b 4 \
    -t 32 -K 4 -T $T
# landing buffers (mgi_ch_params_t.land): the sources store each run
# straight into the destination's buffer at a place taken by an atomic
# add; room for all (every tuple must land), for half (the rest through
# the rings: after the first run that did not fit, a block goes to the
# ring), with 4 KiB rings that fill, 24-byte tuples byte by byte
MGI_DIRECT_RINGS=1 step shuffle_16B_2proc_direct_tile_land 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test shuffle -s 16 -n 8388608 -b 32 \
    -K 4 -L 100 -T $T
MGI_DIRECT_RINGS=1 step shuffle_16B_1proc_direct_tile_land_half 100 \
    mgi_gpu_test shuffle -l 2 -s 16 -n 8388608 -b 32 -K 4 -L 50 -T $T
MGI_DIRECT_RINGS=1 MGI_TEST_DIRECT_RING_KB=4 \
    step shuffle_16B_2proc_tiny_direct_tile_land_half 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test shuffle -s 16 -n 200000 -b 4 \
    -t 32 -K 4 -L 50 -T $T
MGI_DIRECT_RINGS=1 MGI_TEST_DIRECT_RING_KB=4 \
    step shuffle_24B_1proc_tiny_direct_land 100 mgi_gpu_test shuffle -l 2 \
    -s 24 -n 200000 -b 4 -t 32 -K 5 -L 75 -T $T
MGI_DIRECT_RINGS=1 step send_bw_64B_2proc_direct 100 mgi_launch -n 2 -t 95 \
    -- mgi_gpu_test bench -s 64 -n 4194304 -b 32 -F -T $T
MGI_DIRECT_RINGS=1 step send_bw_64B_1proc_direct 100 mgi_gpu_test bench \
    -l 2 -s 64 -n 4194304 -b 32 -T $T
# whole stage segments put by the mover from the stage ring
# (MGI_TEST_SEND_ZCOPY=1): a stage group per destination, so that they are
# whole; tiny rings that fill with segments waiting for their put
MGI_TEST_SEND_ZCOPY=1 MGI_TEST_STAGE_GROUPS=2 step groupby_2proc_send_ref 100     mgi_launch -n 2 -t 95 -- mgi_gpu_test groupby -n $n -b 8 -T $T
MGI_TEST_SEND_ZCOPY=1 MGI_TEST_STAGE_GROUPS=2 step groupby_1proc_2gpu_send_ref 100     mgi_gpu_test groupby -l 2 -n $n -b 8 -T $T
MGI_TEST_SEND_ZCOPY=1 MGI_TEST_STAGE_GROUPS=2 MGI_SEG_SIZE=2048 MGI_STAGE_DEPTH=4 MGI_SORT_DEPTH=2 MGI_RECV_DEPTH=4 MGI_FINAL_DEPTH=2 MGI_MOVER_BATCH=3     step shuffle_24B_1proc_tiny_rings_send_ref 100 mgi_gpu_test shuffle         -l 2 -s 24 -n 200000 -b 4 -t 32 -K 5 -T $T
MGI_TEST_SEND_ZCOPY=1 MGI_TEST_STAGE_GROUPS=2 MGI_SEG_SIZE=2048 MGI_STAGE_DEPTH=4 MGI_SORT_DEPTH=2 MGI_RECV_DEPTH=4 MGI_FINAL_DEPTH=2 MGI_MOVER_BATCH=3     step groupby_2proc_tiny_rings_send_ref 100 mgi_launch -n 2 -t 95 --         mgi_gpu_test groupby -n 200000 -b 4 -t 32 -T $T
MGI_TEST_SEND_ZCOPY=1 MGI_TEST_STAGE_GROUPS=2 MGI_TEST_DEV_TILE_BATCH=65528     step shuffle_16B_2proc_groups2_send_ref_tile 100 mgi_launch -n 2 -t 95         -- mgi_gpu_test shuffle -s 16 -n 8388608 -b 32 -K 4 -T $T
MGI_TEST_SEND_ZCOPY=1 step send_bw_64B_2proc_blocking_flush_send_ref 100     mgi_launch -n 2 -t 95 -- mgi_gpu_test bench -s 64 -n 4194304 -b 32 -F     -T $T

# tile sends (mgi_dev_send_block_tile, -K tuples per thread a send): one
# reservation per tile, sized to the room left in the block's segment;
# with stage groups as block sends of a tuple per thread; with batched
# messages (MGI_TEST_DEV_TILE_BATCH) a message per
# destination and batch, the tile partitioned in the block; with tiny rings a tile larger than a
# segment is taken in parts
step shuffle_64B_1proc_tile 100 mgi_gpu_test shuffle -l 2 -s 64 -n $big_n \
    -b 32 -K 4 -T $T
step shuffle_16B_2proc_tile 100 mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test shuffle -s 16 -n 8388608 -b 32 -K 4 -T $T
MGI_TEST_STAGE_GROUPS=2 step shuffle_64B_1proc_groups2_tile 100 \
    mgi_gpu_test shuffle -l 2 -s 64 -n 4194304 -b 32 -K 3 -T $T
MGI_SEG_SIZE=2048 MGI_STAGE_DEPTH=2 MGI_SORT_DEPTH=2 MGI_RECV_DEPTH=2 \
MGI_FINAL_DEPTH=2 MGI_MOVER_BATCH=3 \
    step shuffle_24B_2proc_tiny_rings_tile 100 mgi_launch -n 2 -t 95 -- \
        mgi_gpu_test shuffle -s 24 -n 200000 -b 4 -t 32 -K 5 -T $T
# a relay (paper Fig. 8) through a GPU endpoint's sorter kernel: three
# endpoints of one process at the vertices of a declared line of GPUs
# (topo/gpuchain3.topo: gpu0 and gpu2 have no link of their own), every
# tuple checked, endpoint 0's to endpoint 2 through endpoint 1 (-E), an
# ordered channel (-O: else endpoint 0 spreads over the relay and the
# PCIe path through the host); with libmgi's defaults too (direct rings
# refused: the plan relays); the same three endpoints without the file,
# every pair direct. Then four endpoints at a square (topo/gpusplit4.topo:
# gpu0 and gpu3 reach each other through gpu1 or gpu2), the default
# channel: the opposite corners spread over both; and five at a fan
# (topo/gpufan5.topo: gpu0 reaches gpu4 through gpu1, which spreads over
# gpu2 and gpu3), with half the sorter and user blocks (racecheck runs it;
# under memcheck and synccheck the fifth endpoint's kernels do not start
# beside the others' even so)
UCX_CUDA_MGI_TOPO_FILE=$here/topo/gpuchain3.topo \
    step shuffle_16B_3ep_relay 100 mgi_gpu_test shuffle -l 3 -s 16 \
        -n $relay_n -b 8 -V gpu%d -E 0,1,2 -O -T $T
UCX_CUDA_MGI_TOPO_FILE=$here/topo/gpuchain3.topo \
    step shuffle_16B_3ep_relay_defaults 100 "${defaults[@]}" mgi_gpu_test \
        shuffle -l 3 -s 16 -n $relay_n -b 8 -V gpu%d -E 0,1,2 -O -T $T
UCX_CUDA_MGI_TOPO_FILE=$here/topo/gpusplit4.topo \
    step shuffle_16B_4ep_split 100 mgi_gpu_test shuffle -l 4 -s 16 \
        -n $relay_n -b 8 -V gpu%d -T $T
UCX_CUDA_MGI_TOPO_FILE=$here/topo/gpufan5.topo MGI_SORTER_BLOCKS=8 \
    step shuffle_16B_5ep_fan 100 mgi_gpu_test shuffle -l 5 -s 16 \
        -n $relay_n -b 4 -V gpu%d -T $T
# the square with two-segment sort and receive rings: its relays pass
# tuples to each other through lanes they hold, a cycle of waits that
# stalled every endpoint; the plan reaches a destination on it directly
UCX_CUDA_MGI_TOPO_FILE=$here/topo/gpusplit4.topo MGI_SORTER_BLOCKS=8 \
MGI_SORT_DEPTH=2 MGI_RECV_DEPTH=2 \
    step shuffle_24B_4ep_split_tiny_rings 100 mgi_gpu_test shuffle -l 4 \
        -s 24 -n 200000 -b 4 -t 32 -V gpu%d -T $T
step shuffle_16B_3ep 100 mgi_gpu_test shuffle -l 3 -s 16 -n $n -b 8 -T $T
MGI_SEG_SIZE=2048 MGI_STAGE_DEPTH=2 MGI_SORT_DEPTH=2 MGI_RECV_DEPTH=2 \
MGI_FINAL_DEPTH=2 MGI_MOVER_BATCH=3 \
    step send_bw_40B_1proc_tiny_rings_tile 100 mgi_gpu_test bench -l 2 \
        -s 40 -n 300000 -b 4 -t 32 -K 3 -T $T
MGI_TEST_DEV_TILE_BATCH=65528 step send_bw_16B_2proc_batch_tile 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test bench -s 16 -n 8388608 -b 32 -K 4 \
    -T $T
step idle_copy 60 mgi_gpu_test idle_copy

# 256 MiB of tuples each
step send_bw_64B_2proc 100 mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test bench -s 64 -n 4194304 -b 32 -T $T
# the movers' puts of GPU memory on endpoints with peer error handling go
# zero-copy over cuda_mgi, not through UCP's software emulation over shared
# memory (UCX 1.18+ needs the MD's UCT_MD_FLAG_INVALIDATE_RMA for that);
# UCP prints its protocol table with UCX_PROTO_INFO=y where its second
# protocol layer selects RMA protocols (UCX 1.13.1 prints none)
UCX_PROTO_INFO=y step send_bw_64B_2proc_protocol 100 bash -c \
    '"$@" > "$0" 2>&1; rc=$?; cat "$0"; [ $rc -eq 0 ] || exit $rc
     t=$(grep -A8 "ucp_put\* from cuda/GPU[0-9]* to cuda/" "$0")
     [ -z "$t" ] && { echo "no protocol table (UCX before 1.18?)"; exit 0; }
     ! echo "$t" | grep -q "software emulation" &&
         echo "$t" | grep -q "zero-copy *| *cuda_mgi/"' \
    "$out/send-bw-protocol.out" mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test bench -s 64 -n 4194304 -b 32 -T $T
step send_bw_16B_2proc 100 mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test bench -s 16 -n 16777216 -b 32 -T $T
step send_bw_64B_1proc 100 mgi_gpu_test bench -l 2 -s 64 -n 4194304 -b 32 \
    -T $T
# the source's blocks flush with the blocking mgi_dev_flush (it returns
# once the block's tuples are delivered); the receiver checks every tuple
step send_bw_64B_2proc_blocking_flush 100 mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test bench -s 64 -n 4194304 -b 32 -F -T $T
# more sorter blocks: the sender's stage rings spread over them
MGI_SORTER_BLOCKS=8 step send_bw_64B_2proc_8sorters 100 \
    mgi_launch -n 2 -t 95 -- mgi_gpu_test bench -s 64 -n 4194304 -b 32 -T $T

for r in per-block global; do
    step sorter_${r} 100 mgi_gpu_test sorter -r $r -s 64 -n 4194304 -b 32 \
        -T $T
done

# the same with the settings measured for GPU endpoints (src/ucp_ext/
# README.md, Tunables), 1 GiB of tuples: the throughput figures
tuned=(env MGI_SORTER_BLOCKS=16 MGI_SEG_SIZE=131072 MGI_STAGE_DEPTH=16
       MGI_RECV_DEPTH=256 MGI_SORT_DEPTH=256 MGI_MOVER_BATCH=32
       MGI_FINAL_DEPTH=16 MGI_TEST_SORT_RINGS=4)
step send_bw_64B_2proc_tuned 100 "${tuned[@]}" mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test bench -s 64 -n 16777216 -b 32 -T $T
step send_bw_16B_2proc_tuned 100 "${tuned[@]}" mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test bench -s 16 -n 67108864 -b 32 -T $T
step send_bw_64B_1proc_tuned 100 "${tuned[@]}" mgi_gpu_test bench -l 2 \
    -s 64 -n 16777216 -b 32 -T $T
step send_bw_64B_1proc_tuned_tile 100 "${tuned[@]}" mgi_gpu_test bench \
    -l 2 -s 64 -n 16777216 -b 32 -K 4 -T $T
step send_bw_16B_1proc_tuned_tile 100 "${tuned[@]}" mgi_gpu_test bench \
    -l 2 -s 16 -n 67108864 -b 32 -K 4 -T $T
# more user and sorter blocks, deeper receive lanes, 4 GiB: the widest
# setting measured
wide=("${tuned[@]}" MGI_SORTER_BLOCKS=32 MGI_RECV_DEPTH=1024)
step send_bw_64B_2proc_wide 100 "${wide[@]}" mgi_launch -n 2 -t 95 -- \
    mgi_gpu_test bench -s 64 -n 67108864 -b 128 -T $T
if [ "$ngpu" -ge 2 ]; then
    step send_bw_64B_1proc_wide 100 "${wide[@]}" mgi_gpu_test bench -l 2 \
        -s 64 -n 67108864 -b 128 -T $T
else
    # both endpoints' 128 user and 32 sorter blocks do not all start on
    # one GPU (the kernel says so and fails): with 131072-byte segments a
    # sorter block takes an SM's shared memory, and the send kernel's 83
    # registers a thread leave room for 200 of its blocks beside 64 sorter
    # blocks on 132 SMs
    skip send_bw_64B_1proc_wide "two endpoints of 128 user and 32 sorter \
blocks need 2 GPUs"
fi
for r in per-block global; do
    step sorter_${r}_tuned 100 "${tuned[@]}" mgi_gpu_test sorter -r $r \
        -s 64 -n 16777216 -b 32 -T $T
done

# the workloads program's MGI variant (bench/workloads), 1/16 GiB of
# lineitem per GPU, run.sh's ring set for GPU endpoints (the wide set, 512
# sorter threads, 64-segment final rings): the Exchange,
# GroupBy after the shuffle and in its receives (MGI_WL_MGI_FUSE=2, also
# at Zipf 1.5), the Join in the receives (the default) and after (=0);
# tiles claimed (the default), and static shares for the Exchange and the
# unfused Join. A step passes only on a "verify=ok" line (the answer
# matched the CPU reference): a variant whose setup fails is reported
# absent with exit status 0.
wg=$(( ngpu >= 2 ? 2 : 1 ))
wl=("${wide[@]}" MGI_TEST_SORTER_THREADS=512 MGI_FINAL_DEPTH=64
    bash -c 'set -o pipefail; "$@" | tee /dev/stderr | grep "verify=ok" > /dev/null'
    workloads mgi_workloads --gpus $wg --gib 0.0625 --iters 1 --warmup 1
    --variant mgi)
step workloads_exchange 100 "${wl[@]}" --op exchange
MGI_WL_MGI_DYNAMIC=0 step workloads_exchange_static 100 "${wl[@]}" \
    --op exchange
step workloads_groupby 100 "${wl[@]}" --op groupby
MGI_WL_MGI_FUSE=2 step workloads_groupby_fused 100 "${wl[@]}" --op groupby
MGI_WL_MGI_FUSE=2 step workloads_groupby_fused_zipf 100 "${wl[@]}" \
    --op groupby --zipf 1.5
step workloads_join_fused 100 "${wl[@]}" --op join
MGI_WL_MGI_FUSE=0 MGI_WL_MGI_DYNAMIC=0 step workloads_join 100 "${wl[@]}" \
    --op join
# the partition kernel's two kinds of scatter (the last --variant wins):
# into one array (the baselines', here UCX-only over cuda_ipc) and straight
# into every destination's receive buffer (the peer variant; the Join
# shuffles two tables)
UCX_TLS=sm,self,cuda_copy,cuda_ipc step workloads_exchange_ucx 100 \
    "${wl[@]}" --op exchange --variant ucx
step workloads_exchange_peer_variant 100 "${wl[@]}" --op exchange \
    --variant peer
step workloads_join_peer_variant 100 "${wl[@]}" --op join \
    --variant peer
# many-to-one, whose rule (key % G == 0 to rank 0, else kept) is not the
# key modulo the destinations: tile sends with a destination per tuple by
# the rule (mgi_dev_send_block_tile_map); without tiles, block sends of a
# tuple a thread, each naming its destination
if [ "$ngpu" -ge 2 ] && [ -x "$bin/mgi_mgg" ] && [ -x "$bin/mgi_proact" ]; then
    UCX_TLS=sm,self,cuda_copy,cuda_ipc step regions_mgg 150 \
        mgi_mgg --gpus 2 --scale 16 --dim 128 --iters 2 \
        --variant region,cache,nccl,uvm,single
    # embeddings of 128 MiB, more than an H200's L2 (MGG's bar is set
    # where they do not fit it)
    UCX_TLS=sm,self,cuda_copy,cuda_ipc step regions_mgg_beyond_l2 150 \
        mgi_mgg --gpus 2 --scale 18 --dim 128 --iters 5 \
        --variant region,cache,nccl,uvm,single
    # every remote row through the proxy thread and UCP, as across hosts:
    # a request a row (about 1 ms each), so a smaller graph: about 4,000
    # requests a rank
    UCX_TLS=sm,self,cuda_copy,cuda_ipc step regions_mgg_proxy 100 \
        mgi_mgg --gpus 2 --scale 10 --dim 128 --iters 1 --variant proxy
    UCX_TLS=sm,self,cuda_copy,cuda_ipc step regions_proact 150 \
        mgi_proact --mib 64 --iters 2 --tiles 16K,1M
    UCX_TLS=sm,self,cuda_copy,cuda_ipc step regions_bw 100 mgi_proact --bw
else
    why="regions need 2 GPUs"
    [ "$ngpu" -ge 2 ] && why="no mgi_mgg or mgi_proact in $bin"
    for s in regions_mgg regions_mgg_beyond_l2 regions_mgg_proxy \
             regions_proact regions_bw; do
        skip $s "$why"
    done
fi
if [ "$wg" -ge 2 ]; then
    step workloads_many2one_tile_map 100 "${wl[@]}" --op many2one
    MGI_WL_MGI_TILE=0 step workloads_many2one_untiled 100 "${wl[@]}" \
        --op many2one
else
    skip workloads_many2one_tile_map "many-to-one needs 2 GPUs"
    skip workloads_many2one_untiled "many-to-one needs 2 GPUs"
fi
# libmgi's mover's copies go to the copy engine in batches (cuda_mgi's
# UCX_CUDA_MGI_BATCH, y by default): the cuda_mgi interface's info line at
# its close counts the batches (cuMemcpyBatchAsync, CUDA 12.8 drivers and
# later) and UCP warns of no unused key; with UCX_CUDA_MGI_BATCH=n there
# are none. Point-to-point between two processes keeps the mover's copies
# overlapping (an idle interface posts at once, so a slow flow has nothing
# to batch)
if [ "$wg" -ge 2 ]; then
    p2p=("${wide[@]}" MGI_TEST_SORTER_THREADS=512 MGI_FINAL_DEPTH=64 bash -c
         '"$@" > "$0" 2>&1; rc=$?; cat "$0"; [ $rc -eq 0 ] &&
          grep -q "verify=ok" "$0" && ! grep -q "invalid configuration" "$0" &&
          if [ -n "${UCX_CUDA_MGI_BATCH:-}" ]; then
              ! grep -q "batches (cuMemcpyBatchAsync)" "$0"
          else
              grep -q "posted in [0-9]* batches (cuMemcpyBatchAsync)" "$0"
          fi' "$out/p2p-batch.out" mgi_workloads --gpus 2 --gib 0.0625
         --iters 1 --warmup 1 --variant mgi --op p2p)
    UCX_LOG_LEVEL=info step mover_puts_batched_p2p 100 "${p2p[@]}"
    UCX_LOG_LEVEL=info UCX_CUDA_MGI_BATCH=n step mover_puts_unbatched_p2p \
        100 "${p2p[@]}"
else
    skip mover_puts_batched_p2p "point-to-point needs 2 GPUs"
    skip mover_puts_unbatched_p2p "point-to-point needs 2 GPUs"
fi
# tile sends without batches (a message a tuple; with two stage groups,
# block sends of a tuple a thread): their per-destination counts, which
# the program checks against the reference, come from mgi_dev_tile_count
MGI_TEST_DEV_TILE_BATCH=0 step workloads_exchange_unbatched 100 "${wl[@]}" \
    --op exchange
MGI_TEST_DEV_TILE_BATCH=0 MGI_TEST_STAGE_GROUPS=2 step \
    workloads_exchange_unbatched_groups 100 "${wl[@]}" --op exchange
# direct rings: tile sends by key, by the pattern's rule (many-to-one)
# and to one destination (point-to-point), block sends (untiled), the
# Join's and GroupBy's steps in the receives
for op in exchange groupby join many2one one2many p2p; do
    if [ "$wg" -lt 2 ] && [[ $op =~ many2one|p2p ]]; then
        skip workloads_${op}_direct "$op needs 2 GPUs"
        continue
    fi
    MGI_DIRECT_RINGS=1 step workloads_${op}_direct 100 "${wl[@]}" --op $op
done
MGI_DIRECT_RINGS=1 MGI_WL_MGI_TILE=0 step workloads_exchange_untiled_direct \
    100 "${wl[@]}" --op exchange
# the Exchange and the patterns above land their tuples in the receive
# buffer (MGI_WL_MGI_LAND=1, the default); through the rings:
MGI_DIRECT_RINGS=1 MGI_WL_MGI_LAND=0 step workloads_exchange_direct_rings \
    100 "${wl[@]}" --op exchange
# the mover puts whole stage segments from the stage rings (between GPUs)
MGI_TEST_SEND_ZCOPY=1 step workloads_exchange_send_ref 100 "${wl[@]}" \
    --op exchange
MGI_TEST_SEND_ZCOPY=1 step workloads_join_fused_send_ref 100 "${wl[@]}" --op join

echo "== $fails failed, $skipped skipped step(s) in $(( $(date +%s) - \
suite_t0 )) s; results: $out/results.jsonl"
exit $fails

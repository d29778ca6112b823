/**
 * GPU checks and benchmarks of MGI channels with GPU endpoints (needs GPUs;
 * built by `make`, run by gpu-suite.sh, not by `make check`).
 *
 *   mgi_gpu_test groupby [-l NEPS] [-n TUPLES] [-b BLOCKS] [-k KEYS]
 *                        [-R block|thread]
 *       The paper's Fig. 3 GroupBy over the device API: every endpoint
 *       sends its partition (schema {int32 key, int64 value}, partition
 *       key 0) while receiving and aggregating (count, sum per key), then
 *       flushes and receives until EOF. Checked against a CPU reference.
 *       One endpoint per process on GPU rank % ngpus (run it under
 *       mgi_launch -n 2), or -l NEPS endpoints in one process on GPUs
 *       0..NEPS-1. -R thread: thread 0 of a block receives with the
 *       thread-level mgi_dev_recv instead of the block receive.
 *   mgi_gpu_test bench [-l 2] [-s TUPLE_BYTES] [-n TUPLES] [-b BLOCKS] [-F]
 *       Device send GPU0 -> GPU1: source kernel sends, destination kernel
 *       receives until EOF and checks count and checksum; the same bytes
 *       copied with cudaMemcpyPeerAsync in the same run (process of GPU0);
 *       prints both and the ratio. On a machine with one GPU both
 *       endpoints live on it (GPU0 -> GPU0, the baseline a copy within
 *       GPU 0); only with -l 2 do their kernels run side by side: two
 *       processes on one GPU take turns (time slices of their contexts),
 *       so their figures check the data, not the speed. -F: the
 *       source blocks flush with the blocking mgi_dev_flush (it waits for
 *       delivery) instead of mgi_dev_flush_nb. -S NS: a source block whose
 *       send found its stage ring full pauses NS ns before it tries again
 *       (default 0: it tries again at once). The time is the
 *       destination kernel's, from events around it: its results are
 *       kept in device memory and copied back after the stop event, and
 *       it prints when its blocks began, received the first and last
 *       tuples and were done, against one-thread kernels just before and
 *       after it on its stream.
 *   mgi_gpu_test shuffle [-l N] [-s TUPLE_BYTES] [-n TUPLES] [-b BLOCKS]
 *       [-V VERTEX_FMT]
 *       Exchange between the job's N >= 2 endpoints (-l N in one process,
 *       or one a process): each sends TUPLES tuples (word 0, the partition
 *       key, numbers them across all) while receiving, the key choosing
 *       the destination (key % N); each checks count and checksum of what
 *       it received. -V: endpoint i sits at vertex VERTEX_FMT % i of the
 *       topology file (UCX_CUDA_MGI_TOPO_FILE), and rank 0 prints each
 *       pair's hops (mgi_ch_path); -E I,J,..,K: the hops from endpoint I
 *       to K must be these (job endpoint numbers), else it fails. Prints each
 *       endpoint's received bytes per second of its kernel and both
 *       endpoints' bytes per second of the slower kernel (-l 2). With
 *       MGI_TEST_STAGE_GROUPS=2 each user block has a stage ring per
 *       destination. -L PCT (MGI_DIRECT_RINGS=1): each destination has a
 *       landing buffer for PCT % of what it receives (mgi_ch_params_t.land):
 *       what lands there is checked after the kernel, the rest is
 *       received from the rings; 100 or more: every tuple must land.
 *   mgi_gpu_test idle_copy
 *       What an idle GPU endpoint costs the application's own copies on
 *       GPU 0: cudaMemcpyAsync device to device (1 GiB in 4 MiB copies)
 *       before the endpoint exists, beside it (its sorter kernel resident
 *       and idle), and after it is deleted.
 *   mgi_gpu_test sorter [-r per-block|global] [-n TUPLES] [-b B]
 *       Sorter micro-benchmark (paper §6.6) on one GPU: a loopback
 *       channel, so tuples go stage ring -> sorter -> receive ring ->
 *       sorter -> final ring with no mover; stage rings per user block or
 *       one global ring; the sorter writes runs in segment order.
 *
 * Every mode prints one line per result and one JSON line ("json: {...}");
 * exit status 0 only when the data checked out. Every wait is bounded
 * (-T seconds, default 120) and says what it waited for.
 *
 * This file: the options and the mode chosen. The modes: mgi_gpu_groupby.cu,
 * mgi_gpu_stream.cu (bench, sorter, shuffle), mgi_gpu_copy.cu (idle_copy,
 * copy_sizes), mgi_gpu_peer_dies.cu; mgi_gpu_host.cu and
 * mgi_gpu_test_dev.cuh the host and device parts they share.
 */
#include "mgi_gpu_test.h"

int g_rank = 0;

static void usage(void)
{
    fprintf(stderr,
            "usage: mgi_gpu_test groupby|bench|shuffle|sorter|idle_copy|"
            "peer_dies|copy_sizes "
            "[-l LOCAL_EPS] "
            "[-n TUPLES] [-b BLOCKS] [-t THREADS] [-k KEYS] [-s BYTES] "
            "[-r per-block|global] [-R block|thread] [-F] "
            "[-S BACKOFF_NS] [-P RECV_EVERY] [-T TIMEOUT_S] [-K TILE] "
            "[-C ROUNDS] [-H] [-D] [-L LAND_PCT] [-V VERTEX_FMT] "
            "[-E I,J,...] [-O]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    opts o;
    int c;

    /* the sorter is a persistent kernel: load every kernel up front */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    if (argc < 2) {
        usage();
    }
    memset(&o, 0, sizeof(o));
    o.mode      = argv[1];
    o.tuples    = 1 << 20;
    o.blocks    = 8;
    o.threads   = 256;
    o.keys      = 4096;
    o.size      = 64;
    o.timeout_s = 120;
    o.rounds    = 1;
    /* shuffle, sorter: blocks that receive only when a send finds the
     * stage ring full left the receive side behind; on one H100 a receive
     * call every 16 block sends made the exchange of 16-byte tuples 1.45x
     * (46-47 against 30-33 GB/s) and of 64-byte ones 1.1x, the tuned
     * sorter benchmark (per-block rings) 55.5 against 36.4 GB/s (-P 0
     * keeps the old way) */
    o.recv_every = 16;
    optind      = 2;
    while ((c = getopt(argc, argv, "l:n:b:t:k:s:r:R:FS:P:T:K:C:HDL:V:E:O")) !=
           -1) {
        switch (c) {
        case 'l': o.local = atoi(optarg); break;
        case 'n': o.tuples = atol(optarg); break;
        case 'b': o.blocks = atoi(optarg); break;
        case 't': o.threads = atoi(optarg); break;
        case 'k': o.keys = atoi(optarg); break;
        case 's': o.size = atoi(optarg); break;
        case 'r': o.global_ring = !strcmp(optarg, "global"); break;
        case 'R': o.thread_recv = !strcmp(optarg, "thread"); break;
        case 'F': o.blocking_flush = 1; break;
        case 'S': o.send_backoff_ns = (unsigned)atoi(optarg); break;
        case 'P': o.recv_every = (unsigned)atoi(optarg); break;
        case 'T': o.timeout_s = atoi(optarg); break;
        case 'K': o.tile = (unsigned)atoi(optarg); break;
        case 'C': o.rounds = (unsigned)atoi(optarg); break;
        case 'H': o.hold = 1; break;
        case 'D': o.dyn_tiles = 1; break;
        case 'L': o.land_pct = (unsigned)atoi(optarg); break;
        case 'V': o.vertex_fmt = optarg; break;
        case 'E': o.expect_path = optarg; break;
        case 'O': o.ordered = 1; break;
        default: usage();
        }
    }
    if ((o.rounds == 0) || (o.hold && (o.rounds < 2))) {
        fprintf(stderr, "mgi_gpu_test: -C takes 1 or more rounds, and -H "
                "(a channel held across the rounds) at least 2\n");
        return 2;
    }
    if (o.dyn_tiles && (o.tile == 0)) {
        fprintf(stderr, "mgi_gpu_test: -D (tiles from a shared count) "
                "needs tile sends: give -K TILE too\n");
        return 2;
    }
    if (!strcmp(o.mode, "groupby")) {
        return run_groupby(o);
    } else if (!strcmp(o.mode, "bench")) {
        return run_stream(o, STREAM_BENCH);
    } else if (!strcmp(o.mode, "sorter")) {
        return run_stream(o, STREAM_SORTER);
    } else if (!strcmp(o.mode, "shuffle")) {
        return run_stream(o, STREAM_SHUFFLE);
    } else if (!strcmp(o.mode, "idle_copy")) {
        return run_idle_copy(o);
    } else if (!strcmp(o.mode, "peer_dies")) {
        return run_peer_dies(o);
    } else if (!strcmp(o.mode, "copy_sizes")) {
        return run_copy_sizes(o);
    }
    usage();
    return 2;
}

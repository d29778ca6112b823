/**
 * Shared by the parts of mgi_gpu_test (see mgi_gpu_test.cu for the program
 * and its modes): the options, the error checks, an endpoint's state and
 * its kernels' results, and the host helpers and modes one part calls in
 * another. Host code only: each kernel lives in the unit that launches
 * it (no relocatable device code).
 */
#ifndef MGI_GPU_TEST_H
#define MGI_GPU_TEST_H

#include <mgi/mgi.h>
#include <mgi/mgi_device.cuh>

#include <cuda_runtime.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <string>
#include <algorithm>
#include <vector>

#define CHECK_CUDA(_call) \
    do { \
        cudaError_t _e = (_call); \
        if (_e != cudaSuccess) { \
            fprintf(stderr, "rank %d: %s: %s\n", g_rank, #_call, \
                    cudaGetErrorString(_e)); \
            exit(1); \
        } \
    } while (0)

#define CHECK_UCS(_call) \
    do { \
        ucs_status_t _s = (_call); \
        if (_s != UCS_OK) { \
            fprintf(stderr, "rank %d: %s: %s\n", g_rank, #_call, \
                    ucs_status_string(_s)); \
            exit(1); \
        } \
    } while (0)

/* the most user blocks whose finish times a result holds (-b beyond it:
 * the blocks past it are not timed) */
#define MAX_BLOCKS 1024

extern int g_rank;

struct opts {
    const char *mode;
    int        local;        /* endpoints in this process (0: one) */
    long       tuples;       /* per source endpoint */
    unsigned   blocks;       /* user blocks per endpoint */
    unsigned   threads;
    unsigned   keys;
    unsigned   size;         /* bench: tuple bytes */
    int        global_ring;  /* sorter: one stage ring */
    int        thread_recv;  /* groupby: mgi_dev_recv, not the block's */
    int        blocking_flush; /* bench: mgi_dev_flush at the source */
    unsigned   send_backoff_ns; /* bench: pause after a full stage ring */
    unsigned   recv_every;      /* shuffle, sorter (blocks that send and
                                 * receive): a receive call after every
                                 * this many block sends, 16 (-P); 0: only
                                 * when a send finds the stage ring full */
    unsigned   tile;         /* bench, shuffle, sorter: tuples per
                              * thread of a tile send (-K,
                              * mgi_dev_send_block_tile); 0: a tuple per
                              * thread (mgi_dev_send_block) */
    unsigned   timeout_s;
    int        dyn_tiles;    /* bench, tile sends (-D): blocks take the
                              * next tile from a shared count instead of
                              * a fixed slice each */
    unsigned   rounds;       /* groupby: channels one after the other
                              * (-C), each checked and deleted */
    unsigned   land_pct;     /* shuffle with direct rings (-L): each
                              * destination's landing buffer holds this
                              * percentage of what it receives (0: no
                              * landing buffer) */
    int        hold;         /* groupby: rank 0 keeps the first channel
                              * until the last round is done (-H): the
                              * other ranks' next channels must not take
                              * its id */
    const char *vertex_fmt;  /* shuffle (-V FMT): endpoint number i of the
                              * job sits at vertex FMT % i of the topology
                              * (UCX_CUDA_MGI_TOPO_FILE) */
    const char *expect_path; /* shuffle (-E I,J,..): the channel's hops from
                              * job endpoint I to the last one named must
                              * be these */
    int        ordered;      /* shuffle (-O): MGI_CH_FLAG_ORDERED, each
                              * pair on one path */
};

struct dev_result {
    unsigned long long sent;
    unsigned long long received;
    unsigned long long checksum;
    unsigned long long landed;     /* of received: in the landing buffer */
    unsigned           timeouts;   /* which phase timed out: bit mask */
    unsigned           eof_blocks;
    unsigned           done_sending;
    unsigned long long recv_calls;  /* block receives, and those that */
    unsigned long long recv_empty;  /* found nothing ready */
    unsigned long long send_calls;  /* block sends, and those that found */
    unsigned long long send_full;   /* the stage ring full */
    unsigned long long cyc_all;     /* user blocks' clock cycles (thread */
    unsigned long long cyc_send;    /* 0's): the kernel, in block sends, */
    unsigned long long cyc_recv;    /* in block receives, and after */
    unsigned long long cyc_tail;    /* the last send (flush, EOF wait) */
    unsigned           started;     /* blocks that began (wait_resident),
                                     * counted in mapped host memory: the
                                     * stream kernel's device copy keeps
                                     * 0, which its copy back after the
                                     * kernel writes over it */
    unsigned long long t_recv_first; /* %globaltimer: tuples first and */
    unsigned long long t_recv_last;  /* last received by a block */
    unsigned long long t_begin;     /* %globaltimer: the first block's */
    unsigned long long t_sent[MAX_BLOCKS]; /* start; when each block's
                                            * last send returned */
    unsigned long long t_end_first; /* %globaltimer: blocks done (flush */
    unsigned long long t_end_last;  /* delivered, EOF seen): first, last */
    unsigned long long t_stamp[2];  /* %globaltimer: one-thread kernels
                                     * on the stream just before the
                                     * timed kernel and just after it */
};

struct gpu_ep {
    int            dev;
    mgi_ep_id_t    id;
    cudaStream_t   stream;
    dev_result     *res;      /* mapped host memory */
    dev_result     *dres;     /* device memory: the stream kernel's
                               * results, copied to res after it (its
                               * blocks' last atomics, 64 at once on
                               * mapped host memory, held the kernel's
                               * end ~0.9 ms) */
    mgi_dev_ch_t   h;
    unsigned       *cnt;
    unsigned long long *sum;
    cudaEvent_t    start, stop;
    char           *scratch;  /* -K: a tile per block, else NULL */
    char           *land;     /* -L: the landing buffer, else NULL */
    uint64_t       land_tuples;
};

/* bench: GPU0 -> GPU1; sorter: loopback on one GPU. */
enum { STREAM_BENCH, STREAM_SORTER, STREAM_SHUFFLE };

/* mgi_gpu_host.cu: time, bounded waits, endpoints, the context */
double now_s(void);
int wait_stream(cudaStream_t s, double timeout_s, const char *what);
void ep_setup(mgi_context_h ctx, gpu_ep *e, int dev, unsigned blocks,
              size_t scratch = 0, size_t land = 0,
              const char *vertex = NULL);
int ngpus(void);
std::vector<mgi_ep_id_t> all_eps(mgi_context_h ctx, int local);
void barrier(mgi_context_h ctx);
mgi_context_h ctx_create(const opts &o, unsigned tuple_size);

/* the modes: mgi_gpu_groupby.cu, mgi_gpu_stream.cu (bench, sorter,
 * shuffle), mgi_gpu_copy.cu (idle_copy, copy_sizes), mgi_gpu_peer_dies.cu */
int run_groupby(const opts &o);
int run_stream(const opts &o, int mode);
int run_idle_copy(const opts &o);
int run_copy_sizes(const opts &o);
int run_peer_dies(const opts &o);

/* Every block of each endpoint's kernel starts (dev_result.started), or
 * the blocks that did keep finishing so that more start: they wait for
 * each other's tuples and EOFs, so a block that finds no room on the GPU
 * beside the others and the sorter kernels can hold the rest until their
 * timeout. When no more blocks start for 5 s while some wait, the program
 * says so and ends at once (its kernels are stuck). */
template <typename E>
static void wait_resident(const std::vector<E> &eps, unsigned blocks,
                          unsigned threads, const char *what)
{
    const double stall = 5.0;
    mgi_context_params_t p;

    for (const E &e : eps) {
        double since = now_s();
        unsigned got, last = 0;
        while ((got = __atomic_load_n(&e.res->started, __ATOMIC_ACQUIRE)) <
               blocks) {
            if (cudaStreamQuery(e.stream) != cudaErrorNotReady) {
                break;  /* ended (an error is wait_stream's to report) */
            }
            if (got != last) {
                last  = got;
                since = now_s();
            } else if (now_s() - since > stall) {
                mgi_context_params_init(&p);
                fprintf(stderr, "rank %d: FAIL: %u of %u blocks of %u "
                        "threads of the %s on endpoint %u (GPU %d) started, "
                        "none more in %.0f s: they do not all fit beside the "
                        "other kernels on the GPU (every endpoint's sorter "
                        "kernel takes MGI_SORTER_BLOCKS=%u blocks): use "
                        "fewer blocks (-b) or threads (-t), or fewer sorter "
                        "blocks\n", g_rank, got, blocks, threads, what,
                        e.id, e.dev, stall, p.sorter_blocks);
                fflush(stdout);
                _exit(1);
            }
            usleep(100);
        }
    }
}

#endif

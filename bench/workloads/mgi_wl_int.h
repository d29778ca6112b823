/**
 * mgi_workloads' private header: what its translation units share.  The
 * options, the rank's state (tables, the baselines' and the MGI variant's
 * settings and handles), the variant table's entry and the functions one
 * unit calls in another.  The device helpers the partition, operator and
 * MGI shuffle kernels share are in mgi_wl_dev.cuh; every kernel is in the
 * unit that launches it, so no unit needs relocatable device code.
 */
#ifndef MGI_WL_INT_H
#define MGI_WL_INT_H

#include "mgi_tpch.h"
#include "mgi_wl_comm.h"
#include "mgi_wl_ref.h"
#include "mgi_wl_report.h"

#include <mgi/mgi.h>
#include <mgi/mgi_device.cuh>

#include <cuda_runtime.h>

#include <algorithm>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <dlfcn.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

#define WL_BLOCK          256
#define WL_ITEMS          8      /* tuples per thread in a partition tile */
#define WL_TILE           (WL_BLOCK * WL_ITEMS)
#define WL_REDUCE_BLOCKS  1024

#define WL_CUDA(_call) \
    do { \
        cudaError_t _e = (_call); \
        if (_e != cudaSuccess) { \
            fprintf(stderr, "mgi_workloads rank %d: %s failed: %s " \
                    "(%s:%d)\n", wl_rank_id, #_call, \
                    cudaGetErrorString(_e), __FILE__, __LINE__); \
            return -1; \
        } \
    } while (0)

#define WL_CHECK(_call) \
    do { \
        if ((_call) != 0) { \
            return -1; \
        } \
    } while (0)

extern int wl_rank_id;

/* ------------------------------------------------------------- options */

typedef enum {
    WL_OP_EXCHANGE, WL_OP_GROUPBY, WL_OP_JOIN, WL_OP_MANY2ONE,
    WL_OP_ONE2MANY, WL_OP_P2P, WL_OP_GENCHECK
} wl_op_t;

extern const char *wl_op_names[];

typedef struct {
    wl_op_t     op;
    char        variants[256];
    int         gpus;
    double      sf;
    double      gib;
    double      zipf;       /* < 0: no Zipf key */
    uint64_t    seed;
    int         iters;
    int         warmup;
    const char *json;
} wl_opts_t;

typedef struct {
    unsigned long long key;    /* 0: empty (keys are >= 1) */
    unsigned long long val;
} wl_slot_t;

/* --------------------------------------------------------- rank state */

typedef mgi_wl_times_t wl_times_t;

/* one table's shuffle: input, partitioned output, received tuples */
typedef struct {
    mgi_wl_tuple_t *in;
    uint64_t        n_in;
    mgi_wl_tuple_t *part;           /* n_in tuples, grouped by destination */
    mgi_wl_tuple_t *recv;           /* cap tuples */
    uint64_t        cap;
    uint64_t        send_off[MGI_WL_MAX_GPUS + 1];  /* tuples */
    uint64_t        recv_off[MGI_WL_MAX_GPUS + 1];
    int             by_source;      /* recv grouped by source (recv_off) */
    int             fused;          /* taken by the MGI shuffle's consumer,
                                     * not into recv (MGI_WL_MGI_FUSE) */
    unsigned long long fused_sum;   /* then: the hashes of what it took */
} wl_table_t;

/* MGI variant (see its section): threads per block (a tuple per thread
 * per send), tuples a block receives at once, default user blocks per GPU
 * ($MGI_WL_MGI_BLOCKS), transports of its UCP context ($MGI_WL_MGI_TLS).
 * 92 blocks with several GPUs, 96 with one (fewer where they and the
 * sorter's would not all fit the SMs). Between GPUs the sorters walk every
 * stage segment and bound, so user and sorter blocks share the SMs: on
 * 2 x H200 64 user + 64 sorter blocks moved the Exchange at 305-314 GB/s
 * against 275-283 with 48 + 48, 271 with 48 user + 64 sorter blocks, 279
 * with 72 + 56 and 233 with 96 + 32, GroupBy 18.7-19.1 against 20.5 ms,
 * Join 22.8-22.9 against 27.4-27.6 ms (the code of 2026-11-24 had moved
 * it at 118-122 GB/s with 48 + 48 against 108 with 64 + 64). With one
 * GPU every
 * segment goes whole to the final rings, and more user blocks paid: on
 * one H100 with 32 sorter blocks the Exchange step took 2.99-3.04 ms with
 * 96 against 4.36-4.40 with 48 (3.74 with 64, 3.05-3.08 with 100),
 * GroupBy 4.3-4.6 against 5.8 ms, Join 7.7-8.0 against 9.5 ms. Threads
 * of 1024 for every op: on 2 x H200 the Exchange moved
 * 80.4 against 67.7 GB/s with 64 x 256, GroupBy took 55.9 against 68.0 ms
 * and Join 80.0 against 99.4 ms; many-to-one and point-to-point took them
 * already (13.9 and 47.7 GB/s cross against 8.8 and 34.4 with 64 x 256) */
#define WL_MGI_THREADS  1024   /* default ($MGI_WL_MGI_THREADS) */
#define WL_MGI_MAX_THREADS 1024
#define WL_MGI_RECV_MAX (1u << 22) /* MGI_WL_MGI_RECV_TUPLES at most */
#define WL_MGI_RECV     65536   /* tuples a receive call takes at most
                                 * (default of MGI_WL_MGI_RECV_TUPLES):
                                 * a call costs barriers and ring reads,
                                 * so each should take much */
#define WL_MGI_BLOCKS   92      /* several GPUs: an H200 or H100 SXM's
                                 * 132 SMs less run.sh's 40 sorter blocks
                                 * (fewer where fewer fit) */
#define WL_MGI_BLOCKS_1 96      /* one GPU */
/* With direct rings (libmgi's default between the GPUs of one host) each
 * user block stores its tuples in the destinations' memory and no sorter
 * carries them: 256 blocks of 512 threads, two an SM, so that one
 * block's stores go on while the other waits for a publish; on 2 x H200
 * the Exchange moved 1019.5-1063.9 GB/s against 991.2-992.6 with 128
 * blocks of 1024 threads (384 of 256 threads, 192 or 262 of 512 were
 * slower). Fewer where fewer fit (wl_mgi_prepare). */
#define WL_MGI_DIRECT_BLOCKS  256
#define WL_MGI_DIRECT_THREADS 512
#define WL_MGI_TILE_BATCH MGI_MSG_MAX_LEN /* payload bytes of a tile's
                                   messages ($MGI_TEST_DEV_TILE_BATCH) */
#define WL_MGI_TILE     4      /* tuples per thread of a tile send
                                  (MGI_WL_MGI_TILE; 0: a tuple per thread
                                  per mgi_dev_send_block) */
#define WL_MGI_TILE_MAX 64     /* a tile send takes at most a segment */
#define WL_MGI_RECV_EVERY 8    /* a receive after every 8th send of a
                                   block (MGI_WL_MGI_RECV_EVERY; 0: only
                                   when the stage ring is full). Between
                                   two processes 1 spent the time between
                                   sends in receives that found nothing */
#define WL_MGI_TLS      "sm,self,cuda_copy,cuda_mgi"

enum {  /* wl_mgi_res_t::flags: what went wrong in the shuffle kernel */
    WL_MGI_LATE_SEND  = 1u << 0,
    WL_MGI_LATE_FLUSH = 1u << 1,
    WL_MGI_LATE_RECV  = 1u << 2,
    WL_MGI_OVERFLOW   = 1u << 3,
    WL_MGI_TABLE_FULL = 1u << 4
};

/* MGI_WL_MGI_FUSE: which operators run their step in the shuffle's
 * receives.  The Join by default: on one H100 its build and probe there
 * took 6.3-6.5 against 7.3-7.5 ms a Join (the stand-in for two GPUs 16.4-
 * 16.7 against 18.9-19.4); GroupBy's insert there took 4.8-5.2 against
 * 4.1-4.2 ms (12.9 against 12.1): the user blocks, one an SM, are fewer
 * threads than its own kernel's to wait out its atomics (and one atomic
 * per key and warp, cooperative_groups::labeled_partition, was slower
 * still: 5.5-5.8 ms).  At Zipf 1.5 GroupBy fused took 13.4 against 14.3
 * ms (26.5 against 38.3-39.7): the separate kernel's atomics pile onto
 * the hot groups.  On 2 x
 * H200 with direct rings, both inserts adding up a warp's tuples of a
 * group first (wl_group_add): fused 8.84-8.89 against 8.48-8.58 ms, at
 * Zipf 1.0 13.6 against 14.4-14.6, at 1.5 13.9 against 12.4-12.5 (before
 * that sum, fused 7.78 against 8.43 ms uniform, 86 against 87 at Zipf
 * 1.5: the sum's match in every receive costs more there than in the
 * separate kernel). */
enum {
    WL_FUSE_NONE,   /* 0: every operator after its shuffles */
    WL_FUSE_JOIN,   /* 1: the Join (default) */
    WL_FUSE_ALL     /* 2: the Join and GroupBy */
};

/* What a shuffle kernel's receives do with the tuples they take: copy
 * them into t->recv, or (MGI_WL_MGI_FUSE) the operator's own step on each
 * tuple where it lies in the final ring, while the shuffle goes on */
enum {
    WL_C_COPY,      /* into t->recv (Exchange, and the unfused operators) */
    WL_C_GROUPBY,   /* lineitem into the GroupBy table */
    WL_C_BUILD,     /* orders into the Join's table */
    WL_C_PROBE,     /* lineitem probes it */
    WL_C_N
};

/* Where the user blocks' time goes (MGI_WL_MGI_PROFILE=1): thread 0's
 * clock cycles, summed over the blocks, and the calls behind them */
enum {
    WL_P_ALL,       /* the whole kernel */
    WL_P_SEND,      /* in send calls, refused ones too */
    WL_P_RECV,      /* in wl_mgi_recv (copying to the output included) */
    WL_P_TAIL,      /* after the last send: flush, receiving until EOF */
    WL_P_SENDS,     /* send calls, and those that found the stage ring */
    WL_P_FULL,      /* full */
    WL_P_RECVS,     /* receive calls, and those that found nothing */
    WL_P_EMPTY,
    WL_P_GOT,       /* tuples received, and of them */
    WL_P_GOT_SENT,  /* by the end of the block's sending */
    WL_P_RECV_NONE, /* cycles of the receive calls that found nothing */
    WL_P_ROUNDS,    /* rounds the receive calls that took tuples made */
    WL_P_N
};

/* Points of a block's run whose first and last time the profile gives:
 * start, end of sending, its flush delivered, the last receive that took
 * tuples, EOF */
enum { WL_T_START, WL_T_SENT, WL_T_FLUSHED, WL_T_DATA, WL_T_EOF, WL_T_N };

/* What the shuffle kernel reports (device memory, copied back) */
typedef struct {
    unsigned long long sent[MGI_WL_MAX_GPUS];  /* tuples per destination */
    unsigned long long received;               /* cursor into t->recv */
    unsigned long long next_tile;              /* the input's next tile
                                                * (MGI_WL_MGI_DYNAMIC) */
    unsigned long long rsum;                   /* fused: hashes taken */
    unsigned           flags;
    unsigned           eof_blocks;             /* blocks that read EOF */
    unsigned           top;                    /* set before the kernel:
                                                * received tuples go to
                                                * recv from its end (a
                                                * landing buffer fills it
                                                * from the start) */
    unsigned long long prof[WL_P_N];           /* with MGI_WL_MGI_PROFILE */
    /* and when (%globaltimer, ns) blocks started, ended sending and read
     * EOF: the first as ~max(~t), the last as max(t) */
    unsigned long long first[WL_T_N], last[WL_T_N];
} wl_mgi_res_t;

/* Endpoint of each rank, by value into the kernel */
typedef struct {
    uint16_t ep[MGI_WL_MAX_GPUS];
} wl_mgi_dsts_t;

typedef struct {
    mgi_context_h  ctx;
    mgi_ep_id_t    ep;                      /* this rank's GPU endpoint */
    mgi_ep_id_t    eps[MGI_WL_MAX_RANKS];   /* every rank's, rank order */
    unsigned       blocks;                  /* user blocks = stage rings */
    unsigned       threads;                 /* per user block */
    unsigned       recv_every;              /* a receive every N sends */
    unsigned       recv_tuples;             /* most tuples a receive call
                                               takes (MGI_WL_MGI_RECV_TUPLES) */
    unsigned       dynamic;                 /* MGI_WL_MGI_DYNAMIC: blocks
                                               claim tiles as they go */
    unsigned       fuse;                    /* MGI_WL_MGI_FUSE (WL_FUSE_*) */
    mgi_ch_id_t    next_ch;                 /* a channel made ahead for the
                                               next shuffle (next_ready) */
    mgi_dev_ch_t   next_h;                  /* and its device handle */
    int            next_ready;
    unsigned       tile;                    /* tuples per thread of a tile
                                             * send; 0: one per send */
    unsigned       timeout_ms;              /* MGI_TIMEOUT_MS */
    unsigned       profile;                 /* MGI_WL_MGI_PROFILE */
    unsigned       land;                    /* MGI_WL_MGI_LAND: with
                                             * direct rings, the shuffles
                                             * that copy out (Exchange, the
                                             * patterns) give the channel
                                             * their receive buffer as its
                                             * landing buffer */
    int            direct;                  /* MGI_DIRECT_RINGS asked */
    unsigned long long prof[WL_P_N];        /* its sums over shuffles */
    double         when_us[2 * WL_T_N];     /* first, last of each WL_T_*
                                             * after the first start, */
    int            when_n[WL_T_N];          /* over this many shuffles */
    wl_mgi_res_t  *d_res;
    wl_mgi_res_t  *h_res;                   /* pinned */
    double         create_ms, kernel_ms, delete_ms;   /* sums, rank 0 log */
    double         first_create_ms; /* the context's first channel: it
                                     * allocates what later ones reuse */
    int            shuffles;
} wl_mgi_t;

/* The peer variant: every rank's receive buffers mapped here (CUDA IPC),
 * [0] lineitem's, [1] orders'; this rank's own are its tables' */
typedef struct {
    mgi_wl_tuple_t *recv[2][MGI_WL_MAX_RANKS];
    int             opened[2][MGI_WL_MAX_RANKS];
} wl_peer_t;

typedef struct wl_rank {
    mgi_wl_boot_t     *boot;
    const wl_opts_t   *opts;
    int                me, G;
    mgi_wl_spec_t      spec;
    mgi_tpch_zipf_t   *zipf_host;
    mgi_tpch_zipf_t   *zipf_dev;
    cudaStream_t       stream;
    cudaEvent_t        ev[4];
    unsigned long long *d_count;    /* G counts / cursors, 2 accumulators */
    unsigned long long *d_acc;
    wl_table_t         l, o;        /* lineitem, orders */
    wl_slot_t         *table;
    uint64_t           table_size;  /* slots, a power of two */
    mgi_wl_answer_t    ref;
    mgi_wl_nccl_t      nccl;
    ncclComm_t         comm;
    mgi_wl_ucx_t       ucx;
    wl_mgi_t           mgi;
    wl_peer_t          peer;
    int                have_nccl, have_ucx;
    int                dev;         /* this rank's GPU */
    int                shared;      /* ranks share GPUs (MGI_WL_SHARE_GPUS) */
    int                on_dev;      /* ranks on this rank's GPU, itself
                                     * included */
} wl_rank_t;

/* The tile sends of the MGI shuffle kernel beside MGI_DEV_TILE_ONE and
 * _MANY (mgi_wl_mgi_kernel.cu) */
#define WL_SEND_GENERIC 3u  /* SL of a kernel whose tiles the typed send
                               * does not serve: mgi_dev_send_block_tile */
#define WL_SEND_MAP     4u  /* SL of a kernel whose tuples name their
                               * destination by the pattern's rule:
                               * mgi_dev_send_block_tile_map */

/* An instance of the MGI shuffle kernel (mgi_wl_mgi_kernel.cu) */
typedef void (*wl_mgi_kern_t)(mgi_dev_ch_t ch, const mgi_wl_tuple_t *in,
                              uint64_t n, mgi_wl_pattern_t pat, int by_key,
                              int me, int G, wl_mgi_dsts_t dsts, int tdst,
                              mgi_wl_tuple_t *recv, uint64_t cap,
                              wl_mgi_res_t *res, unsigned recv_every,
                              unsigned rmax, unsigned long long timeout_ns,
                              unsigned tile, unsigned dynamic,
                              wl_slot_t *tab, uint64_t mask,
                              unsigned long long *acc);

/* ------------------------------------------------------ variant table */

/*
 * A variant moves one table from t->in (this rank's input) to t->recv.
 *
 *   transfer  the baselines: the common partition kernel (wl_partition)
 *             has grouped t->part by destination and filled t->send_off;
 *             transfer moves the groups and fills t->recv grouped by
 *             source (t->recv_off), so the answer is checked per source.
 *   shuffle   partition and transfer as one step, the variant's own.  The
 *             peer variant (wl_peer_shuffle) fills t->send_off and
 *             t->recv_off as the baselines do (grouped by source).  The
 *             MGI hook: partition and transfer as one pipelined step
 *             (wl_mgi_shuffle: a kernel calls mgi_dev_send_block on a
 *             channel whose partition key is the tuple's key and drains
 *             mgi_dev_recv_block into t->recv).  It fills t->send_off
 *             (tuples sent to each destination) and sets t->recv_off[0] =
 *             0, t->recv_off[G] = tuples received, t->by_source = 0:
 *             arrival order mixes sources, so the answer is checked as
 *             this destination's total; where it fused the operator's
 *             step into its receives (MGI_WL_MGI_FUSE) nothing is in
 *             t->recv, t->fused is set and t->fused_sum holds the hashes
 *             of the tuples taken.  It adds its own phases' times
 *             into *times (called twice for a join; partition_ms may stay
 *             0 where the phases overlap).
 *
 * An entry with neither is reported absent with its reason.
 */
typedef struct wl_variant {
    const char *name;
    int       (*init)(wl_rank_t *w);
    void      (*fini)(wl_rank_t *w, int sync);  /* sync: all ranks call */
    int       (*transfer)(wl_rank_t *w, wl_table_t *t);
    int       (*shuffle)(wl_rank_t *w, wl_table_t *t, wl_times_t *times);
    const char *absent;   /* why there is no implementation */
} wl_variant_t;

/* mgi_wl_runs.cu: clocks, the report, the runs of a variant */
extern mgi_wl_report_t wl_report;     /* filled on rank 0 */
double wl_now_ms(void);
double wl_event_ms(cudaEvent_t a, cudaEvent_t b);
void wl_save(wl_rank_t *w);
int wl_run_variant(wl_rank_t *w, const wl_variant_t *v);
int wl_run_single(wl_rank_t *w);

/* mgi_wl_data.cu: the data on each GPU, its tables, the generator check */
int wl_gen_lineitem(wl_rank_t *w, uint64_t b, uint64_t e,
                    mgi_wl_tuple_t **out, uint64_t *n);
int wl_gen_orders(wl_rank_t *w, uint64_t b, uint64_t e,
                  mgi_wl_tuple_t **out, uint64_t *n);
int wl_table_setup(wl_rank_t *w, wl_table_t *t, int orders);
void wl_table_free(wl_table_t *t);
int wl_table_reserve(wl_rank_t *w, uint64_t keys);
int wl_gencheck(wl_rank_t *w);

/* mgi_wl_baselines.cu: the partition kernel and the variants that use it
 * (nccl, ucx, ucx_mgi, peer) */
int wl_partition(wl_rank_t *w, wl_table_t *t);
int wl_nccl_init(wl_rank_t *w);
void wl_nccl_fini(wl_rank_t *w, int sync);
int wl_nccl_transfer(wl_rank_t *w, wl_table_t *t);
void wl_ucx_fini(wl_rank_t *w, int sync);
int wl_ucx_init(wl_rank_t *w);
int wl_ucx_mgi_init(wl_rank_t *w);
int wl_ucx_transfer(wl_rank_t *w, wl_table_t *t);
void wl_peer_fini(wl_rank_t *w, int sync);
int wl_peer_init(wl_rank_t *w);
int wl_peer_shuffle(wl_rank_t *w, wl_table_t *t, wl_times_t *times);

/* mgi_wl_operators.cu: GroupBy, Join and the checks of their answers */
unsigned wl_grid(uint64_t n, unsigned per_block);
int wl_acc_get(wl_rank_t *w, unsigned long long acc[2]);
int wl_groupby_answer(wl_rank_t *w, unsigned long long acc[2]);
int wl_groupby(wl_rank_t *w, const mgi_wl_tuple_t *in, uint64_t n,
               unsigned long long acc[2]);
int wl_join(wl_rank_t *w, const mgi_wl_tuple_t *orders, uint64_t no,
            const mgi_wl_tuple_t *lines, uint64_t nl,
            unsigned long long acc[2]);
int wl_verify_recv(wl_rank_t *w, wl_table_t *t, int orders, int *ok);
void wl_verify_acc(wl_rank_t *w, const char *what,
                   const unsigned long long acc[2], uint64_t want_n,
                   uint64_t want_sum, int *ok);

/* mgi_wl_mgi_kernel.cu: the MGI shuffle kernel of a profile flag, a send
 * kind, a consumer and a kind of tile send */
wl_mgi_kern_t wl_mgi_kernel(int profile, int tiled, int c, unsigned sl);

/* mgi_wl_mgi.cu: the MGI variant, and the MGI_WL_* settings' reader */
int wl_env_uint(const wl_rank_t *w, const char *name, unsigned def,
                unsigned max, unsigned *out);
int wl_mgi_init(wl_rank_t *w);
void wl_mgi_fini(wl_rank_t *w, int sync);
int wl_mgi_shuffle(wl_rank_t *w, wl_table_t *t, wl_times_t *times);

#endif

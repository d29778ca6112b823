/**
 * mgi_workloads: the paper's data-processing evaluation (§6.1-6.3, §6.6) as
 * one program.  One process per GPU (forked here), TPC-H-like data
 * generated on each GPU in place, and every variant run on the same data in
 * the same invocation:
 *
 *   nccl    partition kernel, then grouped ncclSend/ncclRecv (counts, data)
 *   ucx     partition kernel, then ucp_tag_send_nbx/recv_nbx per peer
 *           (transports from UCX_TLS, e.g. sm,self,cuda_copy,cuda_ipc)
 *   ucx_mgi the same with the transports set to sm,self,cuda_copy,cuda_mgi
 *           (or $MGI_WL_UCX_MGI_TLS)
 *   peer    no communication library: the partition kernel's second pass
 *           stores each tuple straight into its destination's receive
 *           buffer, another GPU's over NVLink or PCIe (CUDA IPC), so
 *           partition and transfer are one pass of the SMs; the bound of
 *           a fused shuffle on one host
 *   single  GroupBy / Join of the whole data set on GPU 0, no exchange
 *   mgi     MGI channels with GPU endpoints and the device API: one kernel
 *           per shuffle sends, receives and flushes (partition + transfer
 *           as one pipelined step; transports $MGI_WL_MGI_TLS, default
 *           sm,self,cuda_copy,cuda_mgi)
 *
 * Every run checks each variant's answer (per-source tuple counts and
 * checksums after the shuffle, groups and matches with their checksums)
 * against the CPU reference computed from the generator, prints one line
 * per measurement and writes JSON.
 *
 * Usage: mgi_workloads --op exchange|groupby|join|many2one|one2many|p2p|
 *                      gencheck  [--variant nccl,ucx,ucx_mgi,peer,mgi,single|all]
 *                      [--gpus G] [--sf SF | --gib GIB_PER_GPU] [--zipf T]
 *                      [--seed S] [--iters N] [--warmup N] [--json FILE]
 */
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

static int wl_rank_id = -1;

/* ------------------------------------------------------------- options */

typedef enum {
    WL_OP_EXCHANGE, WL_OP_GROUPBY, WL_OP_JOIN, WL_OP_MANY2ONE,
    WL_OP_ONE2MANY, WL_OP_P2P, WL_OP_GENCHECK
} wl_op_t;

static const char *wl_op_names[] = {"exchange", "groupby", "join",
                                    "many2one", "one2many", "p2p",
                                    "gencheck"};

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

/* ------------------------------------------------------------- kernels */

static unsigned wl_grid(uint64_t n, unsigned per_block)
{
    uint64_t g = (n + per_block - 1) / per_block;

    return (unsigned)std::max<uint64_t>(1, std::min<uint64_t>(g, 1u << 20));
}

static __global__ void wl_pack_lineitem(const int64_t *key,
                                        const int64_t *val, uint64_t n,
                                        mgi_wl_tuple_t *out)
{
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        out[i].key = key[i];
        out[i].val = val[i];
    }
}

static __global__ void wl_pack_orders(const int64_t *key, const int32_t *val,
                                      uint64_t n, mgi_wl_tuple_t *out)
{
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        out[i].key = key[i];
        out[i].val = val[i];
    }
}

/*
 * Count `dst` in the block's shared histogram, one shared atomic per group
 * of lanes with the same destination (with few destinations, a per-thread
 * atomic would serialize most of the warp on one address).  Every lane of
 * the warp calls it; dst < 0 counts nothing.  Returns the lane's position
 * among the block's tuples for dst.
 */
static __device__ __forceinline__ unsigned wl_warp_count(unsigned int *hist,
                                                         int dst)
{
    unsigned lane  = threadIdx.x % 32;
    unsigned peers = __match_any_sync(0xffffffffu, dst);
    int leader     = __ffs(peers) - 1;
    unsigned base  = 0;

    if ((dst >= 0) && ((int)lane == leader)) {
        base = atomicAdd(&hist[dst], (unsigned)__popc(peers));
    }
    base = __shfl_sync(0xffffffffu, base, leader);
    return base + __popc(peers & ((1u << lane) - 1));
}

/* Partition, pass 1: tuples per destination (shared-memory histogram per
 * tile, one global atomic per block and destination). */
static __global__ void wl_histogram(const mgi_wl_tuple_t *in, uint64_t n,
                                    mgi_wl_pattern_t pat, int me, int G,
                                    unsigned long long *count)
{
    __shared__ unsigned int hist[MGI_WL_MAX_GPUS];
    uint64_t tile, i;
    int k;

    if (threadIdx.x < G) {
        hist[threadIdx.x] = 0;
    }
    __syncthreads();
    for (tile = (uint64_t)blockIdx.x * WL_TILE; tile < n;
         tile += (uint64_t)gridDim.x * WL_TILE) {
        for (k = 0; k < WL_ITEMS; ++k) {
            i = tile + (uint64_t)k * WL_BLOCK + threadIdx.x;
            wl_warp_count(hist, (i < n) ?
                          mgi_wl_dest(pat, in[i].key, me, G) : -1);
        }
    }
    __syncthreads();
    if (threadIdx.x < G) {
        atomicAdd(&count[threadIdx.x], (unsigned long long)hist[threadIdx.x]);
    }
}

/* Where the scatter puts destination d's tuples, as two kinds of output:
 * wl_out_one, one array and a cursor per destination in tuples from its
 * start (the partition: t->part, cursors from send_off), and wl_out_each,
 * an array per destination (the peer variant: the destinations' receive
 * buffers, another GPU's over NVLink or PCIe, the cursors at this source's
 * place there). base_t is what a block keeps per destination once it has
 * reserved its range: with one array an index (a pointer per destination
 * made the partition ~20 % slower: 3.0 against 2.5 ms between two H100),
 * with an array each a pointer (an index into the destination's own
 * array made the peer variant's scatter ~10 % slower: 4.0 against 3.6
 * ms between two H100). */
typedef struct {
    typedef unsigned long long base_t;
    mgi_wl_tuple_t *p;
    __device__ base_t take(int, unsigned long long at) const { return at; }
    __device__ mgi_wl_tuple_t *put(base_t b, unsigned pos) const {
        return &p[b + pos];
    }
} wl_out_one_t;

typedef struct {
    typedef mgi_wl_tuple_t *base_t;
    mgi_wl_tuple_t *p[MGI_WL_MAX_GPUS];
    __device__ base_t take(int d, unsigned long long at) const {
        return p[d] + at;
    }
    __device__ mgi_wl_tuple_t *put(base_t b, unsigned pos) const {
        return b + pos;
    }
} wl_out_each_t;

/* Partition, pass 2: scatter a tile per block; each block reserves its
 * range per destination with one atomic on the destination's cursor.
 * Launched with the same grid as wl_histogram. */
template <typename OUT>
static __global__ void wl_scatter(const mgi_wl_tuple_t *in, uint64_t n,
                                  mgi_wl_pattern_t pat, int me, int G,
                                  unsigned long long *cursor, OUT out)
{
    __shared__ unsigned int hist[MGI_WL_MAX_GPUS];
    __shared__ typename OUT::base_t base[MGI_WL_MAX_GPUS];
    mgi_wl_tuple_t t[WL_ITEMS];
    unsigned pos[WL_ITEMS];
    int dst[WL_ITEMS], k;
    uint64_t tile, i;

    for (tile = (uint64_t)blockIdx.x * WL_TILE; tile < n;
         tile += (uint64_t)gridDim.x * WL_TILE) {
        if (threadIdx.x < G) {
            hist[threadIdx.x] = 0;
        }
        __syncthreads();
        for (k = 0; k < WL_ITEMS; ++k) {
            i      = tile + (uint64_t)k * WL_BLOCK + threadIdx.x;
            dst[k] = -1;
            if (i < n) {
                t[k]   = in[i];
                dst[k] = mgi_wl_dest(pat, t[k].key, me, G);
            }
            pos[k] = wl_warp_count(hist, dst[k]);
        }
        __syncthreads();
        if (threadIdx.x < G) {
            base[threadIdx.x] = out.take(threadIdx.x,
                    atomicAdd(&cursor[threadIdx.x],
                              (unsigned long long)hist[threadIdx.x]));
        }
        __syncthreads();
        for (k = 0; k < WL_ITEMS; ++k) {
            if (dst[k] >= 0) {
                *out.put(base[dst[k]], pos[k]) = t[k];
            }
        }
        __syncthreads();
    }
}

/* Warp: add every lane's s (and c, where given) into acc[0] (acc[1]) with
 * one atomic per warp. All 32 lanes call it. */
static __device__ void wl_warp_add(unsigned long long *acc,
                                   unsigned long long s,
                                   const unsigned long long *c)
{
    unsigned long long n = (c != NULL) ? *c : 0;
    int o;

    for (o = 16; o > 0; o /= 2) {
        s += __shfl_down_sync(0xffffffffu, s, o);
        n += __shfl_down_sync(0xffffffffu, n, o);
    }
    if ((threadIdx.x % 32) == 0) {
        atomicAdd(&acc[0], s);
        if (c != NULL) {
            atomicAdd(&acc[1], n);
        }
    }
}

/* Sum of tuple hashes of in[0..n) into acc[0] (and n into acc[1]) */
static __global__ void wl_checksum(const mgi_wl_tuple_t *in, uint64_t n,
                                   unsigned long long *acc)
{
    unsigned long long s = 0;
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        s += mgi_wl_tuple_hash(in[i].key, in[i].val);
    }
    wl_warp_add(acc, s, NULL);
}

typedef struct {
    unsigned long long key;    /* 0: empty (keys are >= 1) */
    unsigned long long val;
} wl_slot_t;

static __device__ __forceinline__ uint64_t wl_slot_of(int64_t key,
                                                      uint64_t mask)
{
    return mgi_tpch_mix64((uint64_t)key) & mask;
}

/* GroupBy: v into key's group (keys >= 1; 0 marks an empty slot).
 * Returns 0 if no slot was left for a new group. */
static __device__ __forceinline__ int wl_group_add_one(wl_slot_t *tab,
                                                       uint64_t mask,
                                                       int64_t k,
                                                       unsigned long long v)
{
    const unsigned long long key = (unsigned long long)k;
    unsigned long long prev;
    uint64_t h = wl_slot_of(k, mask), tries;

    for (tries = 0; tries <= mask; ++tries, h = (h + 1) & mask) {
        prev = tab[h].key;
        if (prev == 0) {
            prev = atomicCAS(&tab[h].key, 0ull, key);
        }
        if ((prev == 0) || (prev == key)) {
            atomicAdd(&tab[h].val, v);
            return 1;
        }
    }
    return 0;
}

/* Sum of v over the lanes of `lanes` (each of them calls it with the same
 * lanes), modulo 2^64: 3 warp reductions of 24-bit pieces (32 of them
 * fit in 32 bits; the hardware reduction adds 32-bit words only). */
static __device__ __forceinline__ unsigned long long
wl_lanes_sum64(unsigned lanes, unsigned long long v)
{
    const unsigned p = 0xffffffu;

    return (unsigned long long)__reduce_add_sync(lanes, (unsigned)v & p) +
           ((unsigned long long)__reduce_add_sync(lanes,
                                    (unsigned)(v >> 24) & p) << 24) +
           ((unsigned long long)__reduce_add_sync(lanes,
                                    (unsigned)(v >> 48)) << 48);
}

/* GroupBy: wl_group_add_one, the lanes of the warp here now with the same
 * key adding up their values first, so that a group takes one atomic a
 * warp, not one a tuple.  A skewed key's hot groups had taken every
 * variant's inserts to 81.8 ms at Zipf 1.5 and 19.7-20.6 at 1.0, all on
 * a few addresses; with the sum 7.6 and 10.4-10.7 ms, uniform 4.62-4.67
 * against 4.51-4.53 (2 x H200).  Returns 0 if no slot was left for a new
 * group. */
static __device__ __forceinline__ int wl_group_add(wl_slot_t *tab,
                                                   uint64_t mask, int64_t k,
                                                   int64_t v)
{
    const unsigned lanes = __match_any_sync(__activemask(),
                                            (unsigned long long)k);
    const unsigned me    = 1u << (threadIdx.x & 31u);
    unsigned long long s = (unsigned long long)v;

    if (lanes != me) {
        s = wl_lanes_sum64(lanes, s);
        if ((lanes & (me - 1u)) != 0) {
            return 1;   /* a lower lane adds the group's sum */
        }
    }
    return wl_group_add_one(tab, mask, k, s);
}

/* Join build: key -> val (build keys are unique: orderkey).  Returns 0 if
 * no slot was left. */
static __device__ __forceinline__ int wl_join_put(wl_slot_t *tab,
                                                  uint64_t mask, int64_t k,
                                                  int64_t v)
{
    uint64_t h = wl_slot_of(k, mask), tries;

    for (tries = 0; tries <= mask; ++tries, h = (h + 1) & mask) {
        if (atomicCAS(&tab[h].key, 0ull, (unsigned long long)k) == 0) {
            tab[h].val = (unsigned long long)v;
            return 1;
        }
    }
    return 0;
}

/* Join probe: a match of key adds its join hash to *s and one to *c */
static __device__ __forceinline__ void wl_join_find(const wl_slot_t *tab,
                                                    uint64_t mask, int64_t k,
                                                    int64_t v,
                                                    unsigned long long *s,
                                                    unsigned long long *c)
{
    unsigned long long key;
    uint64_t h = wl_slot_of(k, mask), tries;

    for (tries = 0; tries <= mask; ++tries, h = (h + 1) & mask) {
        key = tab[h].key;
        if (key == (unsigned long long)k) {
            *s += mgi_wl_join_hash(k, v, (int64_t)tab[h].val);
            *c += 1;
            return;
        }
        if (key == 0) {
            return;
        }
    }
}

static __global__ void wl_groupby_insert(const mgi_wl_tuple_t *in, uint64_t n,
                                         wl_slot_t *tab, uint64_t mask)
{
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        (void)wl_group_add(tab, mask, in[i].key, in[i].val);
    }
}

/* groups into acc[1], sum of group hashes into acc[0] */
static __global__ void wl_groupby_result(const wl_slot_t *tab, uint64_t size,
                                         unsigned long long *acc)
{
    unsigned long long s = 0, c = 0;
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < size;
         i += (uint64_t)gridDim.x * blockDim.x) {
        if (tab[i].key != 0) {
            s += mgi_wl_group_hash((int64_t)tab[i].key, (int64_t)tab[i].val);
            ++c;
        }
    }
    wl_warp_add(acc, s, &c);
}

/* build side keys are unique (orderkey) */
static __global__ void wl_join_build(const mgi_wl_tuple_t *in, uint64_t n,
                                     wl_slot_t *tab, uint64_t mask)
{
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        (void)wl_join_put(tab, mask, in[i].key, in[i].val);
    }
}

/* matches into acc[1], sum of join hashes into acc[0] */
static __global__ void wl_join_probe(const mgi_wl_tuple_t *in, uint64_t n,
                                     const wl_slot_t *tab, uint64_t mask,
                                     unsigned long long *acc)
{
    unsigned long long s = 0, c = 0;
    uint64_t i;

    for (i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        wl_join_find(tab, mask, in[i].key, in[i].val, &s, &c);
    }
    wl_warp_add(acc, s, &c);
}

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

static double wl_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double wl_event_ms(cudaEvent_t a, cudaEvent_t b)
{
    float ms = 0;

    cudaEventElapsedTime(&ms, a, b);
    return ms;
}

/* ----------------------------------------------------- data generation */

/* Generate this rank's lineitem slice (orders [b, e)) as tuples. */
static int wl_gen_lineitem(wl_rank_t *w, uint64_t b, uint64_t e,
                           mgi_wl_tuple_t **out, uint64_t *n)
{
    mgi_tpch_lineitem_t c;
    uint64_t *offsets = NULL;
    int64_t *key = NULL, *val = NULL;

    WL_CHECK(mgi_tpch_gpu_lineitem_offsets(&w->spec.tpch, b, e, &offsets, n,
                                           w->stream));
    WL_CUDA(cudaMalloc((void**)&key, (*n + 1) * sizeof(int64_t)));
    WL_CUDA(cudaMalloc((void**)&val, (*n + 1) * sizeof(int64_t)));
    WL_CUDA(cudaMalloc((void**)out, (*n + 1) * sizeof(mgi_wl_tuple_t)));
    memset(&c, 0, sizeof(c));
    if (w->spec.zipf != NULL) {
        c.zkey = key;
    } else {
        c.orderkey = key;
    }
    c.extendedprice = val;
    WL_CHECK(mgi_tpch_gpu_lineitem_gen(&w->spec.tpch, w->zipf_dev, b, e,
                                       offsets, &c, w->stream));
    wl_pack_lineitem<<<wl_grid(*n, WL_BLOCK), WL_BLOCK, 0, w->stream>>>(
            key, val, *n, *out);
    WL_CUDA(cudaGetLastError());
    WL_CUDA(cudaStreamSynchronize(w->stream));
    cudaFree(offsets);
    cudaFree(key);
    cudaFree(val);
    return 0;
}

static int wl_gen_orders(wl_rank_t *w, uint64_t b, uint64_t e,
                         mgi_wl_tuple_t **out, uint64_t *n)
{
    mgi_tpch_orders_t c;
    int64_t *key = NULL;
    int32_t *val = NULL;

    *n = e - b;
    WL_CUDA(cudaMalloc((void**)&key, (*n + 1) * sizeof(int64_t)));
    WL_CUDA(cudaMalloc((void**)&val, (*n + 1) * sizeof(int32_t)));
    WL_CUDA(cudaMalloc((void**)out, (*n + 1) * sizeof(mgi_wl_tuple_t)));
    c.orderkey  = key;
    c.custkey   = val;
    c.orderdate = NULL;
    WL_CHECK(mgi_tpch_gpu_orders_gen(&w->spec.tpch, b, e, &c, w->stream));
    wl_pack_orders<<<wl_grid(*n, WL_BLOCK), WL_BLOCK, 0, w->stream>>>(
            key, val, *n, *out);
    WL_CUDA(cudaGetLastError());
    WL_CUDA(cudaStreamSynchronize(w->stream));
    cudaFree(key);
    cudaFree(val);
    return 0;
}

/* Input of this rank and room to receive: the receive capacity is every
 * rank's input (any skew fits). */
static int wl_table_setup(wl_rank_t *w, wl_table_t *t, int orders)
{
    uint64_t b, e, all[MGI_WL_MAX_RANKS];
    int r;

    memset(t, 0, sizeof(*t));
    mgi_tpch_slice(w->spec.tpch.n_orders, w->me, w->G, &b, &e);
    if (!mgi_wl_has_input(w->spec.pattern, w->me)) {
        e = b;
    }
    if (orders) {
        WL_CHECK(wl_gen_orders(w, b, e, &t->in, &t->n_in));
    } else {
        WL_CHECK(wl_gen_lineitem(w, b, e, &t->in, &t->n_in));
    }
    WL_CHECK(mgi_wl_allgather(w->boot, &t->n_in, sizeof(t->n_in), all));
    for (r = 0; r < w->G; ++r) {
        t->cap += all[r];
    }
    WL_CUDA(cudaMalloc((void**)&t->part,
                       (t->n_in + 1) * sizeof(mgi_wl_tuple_t)));
    WL_CUDA(cudaMalloc((void**)&t->recv,
                       (t->cap + 1) * sizeof(mgi_wl_tuple_t)));
    return 0;
}

static void wl_table_free(wl_table_t *t)
{
    cudaFree(t->in);
    cudaFree(t->part);
    cudaFree(t->recv);
    memset(t, 0, sizeof(*t));
}

static int wl_table_reserve(wl_rank_t *w, uint64_t keys)
{
    uint64_t size = 1024;

    while (size < 2 * keys) {
        size *= 2;
    }
    if (size <= w->table_size) {
        return 0;
    }
    cudaFree(w->table);
    w->table = NULL;
    WL_CUDA(cudaMalloc((void**)&w->table, size * sizeof(wl_slot_t)));
    w->table_size = size;
    return 0;
}

/* ------------------------------------------------------------ partition */

/* Partition, pass 1 on the host's side: the histogram of t->in, tuples
 * per destination into count[] and t->send_off. */
static int wl_count(wl_rank_t *w, wl_table_t *t,
                    unsigned long long count[MGI_WL_MAX_GPUS])
{
    int d;

    WL_CUDA(cudaMemsetAsync(w->d_count, 0, w->G * sizeof(*w->d_count),
                            w->stream));
    if (t->n_in > 0) {
        wl_histogram<<<wl_grid(t->n_in, WL_TILE), WL_BLOCK, 0, w->stream>>>(
                t->in, t->n_in, w->spec.pattern, w->me, w->G, w->d_count);
        WL_CUDA(cudaGetLastError());
    }
    WL_CUDA(cudaMemcpyAsync(count, w->d_count, w->G * sizeof(*count),
                            cudaMemcpyDeviceToHost, w->stream));
    WL_CUDA(cudaStreamSynchronize(w->stream));
    t->send_off[0] = 0;
    for (d = 0; d < w->G; ++d) {
        t->send_off[d + 1] = t->send_off[d] + count[d];
    }
    return 0;
}

/* Partition, pass 2: t->in's tuples for destination d to out's array of
 * d from cursor[d] (tuples) on, then wait for it. */
template <typename OUT>
static int wl_scatter_to(wl_rank_t *w, wl_table_t *t, const OUT &out,
                         const unsigned long long cursor[MGI_WL_MAX_GPUS])
{
    WL_CUDA(cudaMemcpyAsync(w->d_count, cursor, w->G * sizeof(*cursor),
                            cudaMemcpyHostToDevice, w->stream));
    if (t->n_in > 0) {
        wl_scatter<OUT><<<wl_grid(t->n_in, WL_TILE), WL_BLOCK, 0,
                          w->stream>>>(t->in, t->n_in, w->spec.pattern, w->me,
                                       w->G, w->d_count, out);
        WL_CUDA(cudaGetLastError());
    }
    WL_CUDA(cudaStreamSynchronize(w->stream));
    return 0;
}

/* Histogram + scatter of t->in into t->part; fills t->send_off.  Timed with
 * CUDA events by the caller. */
static int wl_partition(wl_rank_t *w, wl_table_t *t)
{
    unsigned long long count[MGI_WL_MAX_GPUS];
    wl_out_one_t out = {t->part};
    int d;

    WL_CHECK(wl_count(w, t, count));
    for (d = 0; d < w->G; ++d) {
        count[d] = t->send_off[d];        /* cursors */
    }
    return wl_scatter_to(w, t, out, count);
}

/* Received tuples from self: a local copy, in every variant. */
static int wl_copy_self(wl_rank_t *w, wl_table_t *t)
{
    uint64_t n = t->send_off[w->me + 1] - t->send_off[w->me];

    if (n > 0) {
        WL_CUDA(cudaMemcpyAsync(t->recv + t->recv_off[w->me],
                                t->part + t->send_off[w->me],
                                n * sizeof(mgi_wl_tuple_t),
                                cudaMemcpyDeviceToDevice, w->stream));
    }
    return 0;
}

static int wl_recv_layout(wl_rank_t *w, wl_table_t *t, const uint64_t *got)
{
    int s;

    t->by_source   = 1;
    t->recv_off[0] = 0;
    for (s = 0; s < w->G; ++s) {
        t->recv_off[s + 1] = t->recv_off[s] + got[s];
    }
    if (t->recv_off[w->G] > t->cap) {
        fprintf(stderr, "mgi_workloads rank %d: %llu tuples to receive, "
                "room for %llu\n", w->me,
                (unsigned long long)t->recv_off[w->G],
                (unsigned long long)t->cap);
        return -1;
    }
    return 0;
}

/* --------------------------------------------------------------- NCCL */

#define WL_NCCL(_call) \
    do { \
        ncclResult_t _r = (_call); \
        if (_r != ncclSuccess) { \
            fprintf(stderr, "mgi_workloads rank %d: %s failed: %s\n", \
                    wl_rank_id, #_call, w->nccl.GetErrorString(_r)); \
            return -1; \
        } \
    } while (0)

static int wl_nccl_init(wl_rank_t *w)
{
    ncclUniqueId id, all[MGI_WL_MAX_RANKS];
    int loaded, loads[MGI_WL_MAX_RANKS], r;

    if (w->shared) {
        /* the same answer on every rank, before any collective */
        fprintf(stderr, "mgi_workloads rank %d: NCCL needs a GPU per rank, "
                "and the ranks share GPUs (MGI_WL_SHARE_GPUS=1)\n", w->me);
        return -1;
    }
    /* all ranks agree that NCCL is there before any waits inside it */
    loaded = (w->nccl.lib != NULL) || (mgi_wl_nccl_load(&w->nccl) == 0);
    WL_CHECK(mgi_wl_allgather(w->boot, &loaded, sizeof(loaded), loads));
    for (r = 0; r < w->G; ++r) {
        if (!loads[r]) {
            return -1;
        }
    }
    if (w->me == 0) {
        printf("# NCCL %d from %s\n", w->nccl.version, w->nccl.path);
        fflush(stdout);
    }
    memset(&id, 0, sizeof(id));
    if (w->me == 0) {
        WL_NCCL(w->nccl.GetUniqueId(&id));
    }
    WL_CHECK(mgi_wl_allgather(w->boot, &id, sizeof(id), all));
    WL_NCCL(w->nccl.CommInitRank(&w->comm, w->G, all[0], w->me));
    w->have_nccl = 1;
    return 0;
}

static void wl_nccl_fini(wl_rank_t *w, int sync)
{
    (void)sync;
    if (w->have_nccl) {
        w->nccl.CommDestroy(w->comm);
        w->have_nccl = 0;
    }
}

static int wl_nccl_transfer(wl_rank_t *w, wl_table_t *t)
{
    unsigned long long *d_send = w->d_count, *d_recv = w->d_count + 16;
    uint64_t cnt[MGI_WL_MAX_GPUS], got[MGI_WL_MAX_GPUS];
    int p;

    /* counts first: 8 bytes to and from every peer, one group */
    for (p = 0; p < w->G; ++p) {
        cnt[p] = t->send_off[p + 1] - t->send_off[p];
    }
    WL_CUDA(cudaMemcpyAsync(d_send, cnt, w->G * sizeof(*cnt),
                            cudaMemcpyHostToDevice, w->stream));
    WL_NCCL(w->nccl.GroupStart());
    for (p = 0; p < w->G; ++p) {
        if (p != w->me) {
            WL_NCCL(w->nccl.Send(d_send + p, 1, ncclUint64, p, w->comm,
                                 w->stream));
            WL_NCCL(w->nccl.Recv(d_recv + p, 1, ncclUint64, p, w->comm,
                                 w->stream));
        }
    }
    WL_NCCL(w->nccl.GroupEnd());
    WL_CUDA(cudaMemcpyAsync(got, d_recv, w->G * sizeof(*got),
                            cudaMemcpyDeviceToHost, w->stream));
    WL_CUDA(cudaStreamSynchronize(w->stream));
    got[w->me] = cnt[w->me];
    WL_CHECK(wl_recv_layout(w, t, got));
    /* then the data, one group */
    WL_NCCL(w->nccl.GroupStart());
    for (p = 0; p < w->G; ++p) {
        if ((p == w->me)) {
            continue;
        }
        if (cnt[p] > 0) {
            WL_NCCL(w->nccl.Send(t->part + t->send_off[p],
                                 cnt[p] * sizeof(mgi_wl_tuple_t), ncclUint8,
                                 p, w->comm, w->stream));
        }
        if (got[p] > 0) {
            WL_NCCL(w->nccl.Recv(t->recv + t->recv_off[p],
                                 got[p] * sizeof(mgi_wl_tuple_t), ncclUint8,
                                 p, w->comm, w->stream));
        }
    }
    WL_NCCL(w->nccl.GroupEnd());
    WL_CHECK(wl_copy_self(w, t));
    WL_CUDA(cudaStreamSynchronize(w->stream));
    return 0;
}

/* ---------------------------------------------------------------- UCX */

static void wl_ucx_fini(wl_rank_t *w, int sync)
{
    if (w->have_ucx) {
        mgi_wl_ucx_cleanup(&w->ucx, sync);
        w->have_ucx = 0;
    }
}

/* UCX with the cuda transports that were asked for, or not at all */
static int wl_ucx_setup(wl_rank_t *w, const char *tls)
{
    const char *asked = (tls != NULL) ? tls : getenv("UCX_TLS");
    const char *missing;
    char buf[64];

    WL_CHECK(mgi_wl_ucx_init(&w->ucx, w->boot, tls));
    missing = mgi_wl_ucx_missing_tl(&w->ucx, asked, buf, sizeof(buf));
    if (missing != NULL) {
        fprintf(stderr, "mgi_workloads rank %d: UCX did not load %s (of "
                "%s)\n", w->me, missing, asked);
        mgi_wl_ucx_cleanup(&w->ucx, 0);
        return -1;
    }
    w->have_ucx = 1;
    return 0;
}

static int wl_ucx_init(wl_rank_t *w)
{
    return wl_ucx_setup(w, NULL);
}

/* The same UCX-only exchange over the cuda_mgi transport (striping across
 * the planner's paths), in the same run as the others. */
static int wl_ucx_mgi_init(wl_rank_t *w)
{
    const char *tls = getenv("MGI_WL_UCX_MGI_TLS");

    return wl_ucx_setup(w, (tls != NULL) ? tls :
                           "sm,self,cuda_copy,cuda_mgi");
}

static int wl_ucx_transfer(wl_rank_t *w, wl_table_t *t)
{
    uint64_t cnt[MGI_WL_MAX_GPUS], got[MGI_WL_MAX_GPUS];
    uint64_t soff[MGI_WL_MAX_GPUS + 1], roff[MGI_WL_MAX_GPUS + 1];
    int p;

    for (p = 0; p < w->G; ++p) {
        cnt[p] = t->send_off[p + 1] - t->send_off[p];
    }
    WL_CHECK(mgi_wl_ucx_alltoall_u64(&w->ucx, cnt, got));
    WL_CHECK(wl_recv_layout(w, t, got));
    for (p = 0; p <= w->G; ++p) {
        soff[p] = t->send_off[p] * sizeof(mgi_wl_tuple_t);
        roff[p] = t->recv_off[p] * sizeof(mgi_wl_tuple_t);
    }
    WL_CHECK(wl_copy_self(w, t));
    WL_CHECK(mgi_wl_ucx_alltoallv(&w->ucx, t->part, soff, t->recv, roff));
    WL_CUDA(cudaStreamSynchronize(w->stream));
    return 0;
}

/* --------------------------------------------------------------- peer */

static void wl_peer_fini(wl_rank_t *w, int sync)
{
    wl_peer_t *p = &w->peer;
    int k, r;

    (void)sync;
    for (k = 0; k < 2; ++k) {
        for (r = 0; r < w->G; ++r) {
            if (p->opened[k][r]) {
                (void)cudaIpcCloseMemHandle(p->recv[k][r]);
            }
        }
    }
    memset(p, 0, sizeof(*p));
}

/* Every rank's receive buffers (those of the tables this run has) mapped
 * into this process. The same answer on every rank before the collective;
 * a rank whose handle failed makes every rank give up after it. */
static int wl_peer_init(wl_rank_t *w)
{
    wl_peer_t *p             = &w->peer;
    const wl_table_t *tab[2] = {&w->l, &w->o};
    struct {
        cudaIpcMemHandle_t h[2];
        int32_t            ok;
    } me, all[MGI_WL_MAX_RANKS];
    cudaError_t ce;
    int k, r;

    memset(p, 0, sizeof(*p));
    if (w->shared) {
        fprintf(stderr, "mgi_workloads rank %d: the peer variant needs a "
                "GPU per rank, and the ranks share GPUs "
                "(MGI_WL_SHARE_GPUS=1): give each rank a GPU, or leave the "
                "variant out (--variant nccl,ucx,ucx_mgi,mgi)\n", w->me);
        return -1;
    }
    memset(&me, 0, sizeof(me));
    me.ok = 1;
    for (k = 0; k < 2; ++k) {
        p->recv[k][w->me] = tab[k]->recv;
        if ((tab[k]->recv != NULL) &&
            ((ce = cudaIpcGetMemHandle(&me.h[k], tab[k]->recv)) !=
             cudaSuccess)) {
            fprintf(stderr, "mgi_workloads rank %d: cudaIpcGetMemHandle of "
                    "the %s receive buffer: %s (the peer variant needs CUDA "
                    "IPC; leave it out with --variant "
                    "nccl,ucx,ucx_mgi,mgi)\n", w->me,
                    k ? "orders" : "lineitem", cudaGetErrorString(ce));
            me.ok = 0;
        }
    }
    WL_CHECK(mgi_wl_allgather(w->boot, &me, sizeof(me), all));
    for (r = 0; r < w->G; ++r) {
        if (!all[r].ok) {
            return -1;
        }
    }
    for (k = 0; k < 2; ++k) {
        for (r = 0; (tab[k]->recv != NULL) && (r < w->G); ++r) {
            if (r == w->me) {
                continue;
            }
            ce = cudaIpcOpenMemHandle((void**)&p->recv[k][r], all[r].h[k],
                                      cudaIpcMemLazyEnablePeerAccess);
            if (ce != cudaSuccess) {
                fprintf(stderr, "mgi_workloads rank %d: cudaIpcOpenMemHandle "
                        "of rank %d's %s receive buffer: %s (the peer "
                        "variant needs every GPU visible to every rank, "
                        "with peer access: no per-rank "
                        "CUDA_VISIBLE_DEVICES; or leave it out with "
                        "--variant nccl,ucx,ucx_mgi,mgi)\n", w->me, r,
                        k ? "orders" : "lineitem", cudaGetErrorString(ce));
                return -1;
            }
            p->opened[k][r] = 1;
        }
    }
    return 0;
}

/* The `shuffle` hook of the peer variant: the histogram, the counts to
 * every rank (so each source knows its place in each destination's
 * buffer, grouped by source as the baselines receive), then the scatter
 * straight into the destinations' buffers, and a barrier: every source's
 * kernel is done, so its stores are in this rank's buffer. */
static int wl_peer_shuffle(wl_rank_t *w, wl_table_t *t, wl_times_t *times)
{
    const int k = (t == &w->o);
    unsigned long long count[MGI_WL_MAX_GPUS], cursor[MGI_WL_MAX_GPUS];
    uint64_t mine[MGI_WL_MAX_GPUS], all[MGI_WL_MAX_RANKS][MGI_WL_MAX_GPUS];
    uint64_t got[MGI_WL_MAX_GPUS];
    wl_out_each_t out;
    double t0 = wl_now_ms(), t1;
    int s, d;

    WL_CHECK(wl_count(w, t, count));
    memset(mine, 0, sizeof(mine));
    for (d = 0; d < w->G; ++d) {
        mine[d] = count[d];
    }
    WL_CHECK(mgi_wl_allgather(w->boot, mine, sizeof(mine), all));
    for (s = 0; s < w->G; ++s) {
        got[s] = all[s][w->me];
    }
    WL_CHECK(wl_recv_layout(w, t, got));
    for (d = 0; d < w->G; ++d) {
        out.p[d]  = w->peer.recv[k][d];
        cursor[d] = 0;
        for (s = 0; s < w->me; ++s) {
            cursor[d] += all[s][d];
        }
    }
    t1 = wl_now_ms();
    times->partition_ms += t1 - t0;
    WL_CHECK(wl_scatter_to(w, t, out, cursor));
    WL_CHECK(mgi_wl_barrier(w->boot));
    times->transfer_ms += wl_now_ms() - t1;
    return 0;
}

/* -------------------------------------------------------------- report */

static mgi_wl_report_t wl_report;     /* filled on rank 0 */

/* JSON after every variant, so a later failure keeps what was measured */
static void wl_save(wl_rank_t *w)
{
    if ((w->me == 0) && (w->opts->json != NULL)) {
        wl_report.nccl_version = (w->nccl.lib != NULL) ? w->nccl.version : 0;
        mgi_wl_report_json(&wl_report, w->opts->json);
    }
}

/* ---------------------------------------------------------------- MGI */

/*
 * MGI channels with GPU endpoints (src/ucp_ext, mgi/mgi.h): partition and
 * transfer as one pipelined step.  Per variant: one context over the
 * launcher's allgather and one GPU endpoint per rank (its sorter is a
 * persistent kernel, started once).  Per shuffle: a channel with every
 * rank's endpoint as source and destination, schema {key, val} with the
 * key as partition key, and one kernel: each block sends its slice of
 * t->in, in tiles of $MGI_WL_MGI_TILE tuples per thread straight from
 * t->in (mgi_dev_send_block_tile_of) where the channel tells each tuple's
 * destination (by key, or rank 1 for point-to-point), else a tuple per
 * thread (mgi_dev_send_block, many-to-one), receiving into t->recv
 * whenever its stage ring is full, flushes without blocking
 * (mgi_dev_flush_nb) while receiving, then receives until EOF; then the
 * channel is deleted (its ids are not reused: max_channels is raised to
 * what the run needs).  Tuples a rank keeps go through the channel too
 * (the loopback lane).  Every wait is bounded: the kernel by a device-side
 * deadline (MGI_TIMEOUT_MS), the host by cudaStreamQuery and a timeout.
 *
 * While the endpoint lives, nothing here may cudaFree or
 * cudaDeviceSynchronize on this GPU (they wait for the sorter): every
 * buffer is allocated in init, before the endpoint, and the hash table of
 * GroupBy / Join is reserved there for the expected tuples.
 */

/* Rank d's tuples go to eps[d]: the channel's destination of a key is
 * dst[key % ndst] (little-endian key at offset 0), with dst in rank order
 * that is mgi_wl_dest()'s key % G. */
static_assert((offsetof(mgi_wl_tuple_t, key) == 0) &&
              (sizeof(((mgi_wl_tuple_t*)0)->key) == 8) &&
              (sizeof(mgi_wl_tuple_t) == 16),
              "the MGI schema is {int64 key, int64 val}");

static __device__ __forceinline__ unsigned long long wl_dev_now(void)
{
    unsigned long long t;

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Block: past the deadline?  The same answer in every thread: the device
 * calls hold barriers, a thread leaving alone would hang the others. */
static __device__ int wl_mgi_late(unsigned long long deadline)
{
    return __syncthreads_or(wl_dev_now() > deadline);
}

/* Thread 0, with the profile (P): clock cycles since c0 into pf[k] */
template <bool P>
static __device__ __forceinline__ long long wl_prof_t0(void)
{
    return P ? clock64() : 0;
}

template <bool P>
static __device__ __forceinline__ void wl_prof_add(unsigned long long *pf,
                                                   int k, long long c0)
{
    if (P && (threadIdx.x == 0)) {
        pf[k] += (unsigned long long)(clock64() - c0);
    }
}

/* Thread 0, with the profile: the block reached point k (WL_T_*) now */
template <bool P>
static __device__ __forceinline__ void wl_prof_when(wl_mgi_res_t *res, int k)
{
    unsigned long long t;

    if (P && (threadIdx.x == 0)) {
        t = wl_dev_now();
        atomicMax(&res->first[k], ~t);
        atomicMax(&res->last[k], t);
    }
}

template <bool P>
static __device__ __forceinline__ void wl_prof_count(unsigned long long *pf,
                                                     int k, int yes)
{
    if (P && (threadIdx.x == 0)) {
        pf[k] += (yes != 0);
    }
}

/* A fused consumer's state in each thread (registers): the table, and
 * what the thread's tuples added up to */
typedef struct {
    wl_slot_t          *tab;    /* GroupBy's or the Join's table */
    uint64_t            mask;   /* its slots less one */
    unsigned long long  sum;    /* hashes of the tuples taken */
    unsigned long long  js, jc; /* probe: join hashes, matches */
    int                 full;   /* a tuple found no slot */
} wl_fuse_t;

/* Block: receive what is ready.  C = WL_C_COPY: straight into recv, each
 * round of the receive at a place taken by one atomic add on the cursor
 * (mgi_dev_recv_block_to; a buffer of the block's and a second copy from
 * it to recv cost 9-10 % of the kernel on one H100).  Else the operator's
 * step on each tuple where it lies in the final ring
 * (mgi_dev_recv_block_each, paper Fig. 3), the cursor only counting.
 * Returns bytes, 0 or MGI_DEV_EOF (the same in every thread). */
template <bool P, int C>
static __device__ int wl_mgi_recv(const mgi_dev_ch_t *h, mgi_wl_tuple_t *recv,
                                  uint64_t cap, unsigned rmax,
                                  wl_mgi_res_t *res, unsigned long long *pf,
                                  wl_fuse_t &fz)
{
    const long long c0 = wl_prof_t0<P>();
    int n;

    if (C == WL_C_COPY) {
        n = mgi_dev_recv_block_to(h, rmax,
            [&](uint32_t bytes, uint32_t) -> void* {
                const unsigned long long k = bytes / sizeof(*recv);
                const unsigned long long base = atomicAdd(&res->received, k);

                wl_prof_count<P>(pf, WL_P_ROUNDS, 1);

                if (base + k > cap) {
                    /* taken and dropped: the run fails on the flag */
                    atomicOr(&res->flags, (unsigned)WL_MGI_OVERFLOW);
                    return NULL;
                }
                return res->top ? recv + (cap - base - k) : recv + base;
            });
    } else {
        n = mgi_dev_recv_block_each(h, rmax,
            [&](const char *p, unsigned) {
                /* 8-byte words: a final ring's tuples follow 8-byte
                 * message headers, not on mgi_wl_tuple_t's 16 */
                const int64_t *x = (const int64_t*)p;
                const int64_t k = x[0], v = x[1];

                fz.sum += mgi_wl_tuple_hash(k, v);
                if (C == WL_C_GROUPBY) {
                    fz.full |= !wl_group_add(fz.tab, fz.mask, k, v);
                } else if (C == WL_C_BUILD) {
                    fz.full |= !wl_join_put(fz.tab, fz.mask, k, v);
                } else {
                    wl_join_find(fz.tab, fz.mask, k, v, &fz.js, &fz.jc);
                }
            });
        if ((n > 0) && (threadIdx.x == 0)) {
            atomicAdd(&res->received,
                      (unsigned long long)n / sizeof(*recv));
        }
    }

    if (n > 0) {
        wl_prof_when<P>(res, WL_T_DATA);
        if (P && (threadIdx.x == 0)) {
            pf[WL_P_GOT] += (unsigned)n / sizeof(*recv);
        }
    }
    wl_prof_add<P>(pf, WL_P_RECV, c0);
    if (n == 0) {
        wl_prof_add<P>(pf, WL_P_RECV_NONE, c0);
    }
    wl_prof_count<P>(pf, WL_P_RECVS, 1);
    wl_prof_count<P>(pf, WL_P_EMPTY, n == 0);
    return n;
}

/* Block: after a send that took (ok) or found the stage ring full.  Took:
 * every recv_every-th send receives what came in, so the receive side's
 * rings drain while this block sends, not only once its stage ring is
 * full.  Full: drain what came in meanwhile.  Returns WL_MGI_LATE_SEND when
 * a full ring met the deadline, else 0 (the same in every thread). */
template <bool P, int C>
static __device__ unsigned wl_mgi_sent(const mgi_dev_ch_t *h, int ok,
                                       unsigned *sends, unsigned recv_every,
                                       mgi_wl_tuple_t *recv, uint64_t cap,
                                       unsigned rmax, wl_mgi_res_t *res,
                                       unsigned long long deadline,
                                       unsigned long long *pf, wl_fuse_t &fz)
{
    wl_prof_count<P>(pf, WL_P_SENDS, 1);
    wl_prof_count<P>(pf, WL_P_FULL, !ok);
    if (ok) {
        if ((recv_every > 0) && ((++*sends % recv_every) == 0)) {
            wl_mgi_recv<P, C>(h, recv, cap, rmax, res, pf, fz);
        }
        return 0;
    }
    wl_mgi_recv<P, C>(h, recv, cap, rmax, res, pf, fz);
    return wl_mgi_late(deadline) ? WL_MGI_LATE_SEND : 0;
}

/* One shuffle on one GPU: launched with the endpoint's `blocks` blocks of
 * WL_MGI_THREADS threads.  by_key: the channel's partition key routes
 * (exchange, one-to-many); else each tuple names its destination
 * (many-to-one keeps most tuples, point-to-point sends all to rank 1).
 * P: where the time goes into res->prof (MGI_WL_MGI_PROFILE).  One block
 * an SM at most (the persistent sorter and the other blocks share the
 * SMs): without saying so, ptxas sized the profiled kernel for two and gave
 * it 32 registers instead of 64, so the profile measured spills the kernel
 * it stood for does not make. */
#define WL_SEND_GENERIC 3u  /* SL of a kernel whose tiles the typed send
                               * does not serve: mgi_dev_send_block_tile */
#define WL_SEND_MAP     4u  /* SL of a kernel whose tuples name their
                               * destination by the pattern's rule:
                               * mgi_dev_send_block_tile_map */

/* A tile send's destination number of a tuple by the pattern's rule (the
 * channel's destinations are the ranks in order): for many-to-one, whose
 * rule is not the key modulo the destinations */
typedef struct wl_dest_of {
    mgi_wl_pattern_t pat;
    int              me, G;

    __device__ uint32_t operator()(const void *t) const
    {
        return (uint32_t)mgi_wl_dest(pat, *(const int64_t*)t,
                                     me, G);
    }
} wl_dest_of_t;

template <bool TILED, bool P, int C, unsigned SL = WL_SEND_GENERIC>
static __global__ void __launch_bounds__(WL_MGI_MAX_THREADS, 1)
wl_mgi_shuffle_kernel(mgi_dev_ch_t ch, const mgi_wl_tuple_t *in, uint64_t n,
                      mgi_wl_pattern_t pat, int by_key, int me, int G,
                      wl_mgi_dsts_t dsts, int tdst, mgi_wl_tuple_t *recv,
                      uint64_t cap,
                      wl_mgi_res_t *res, unsigned recv_every,
                      unsigned rmax, unsigned long long timeout_ns,
                      unsigned tile, unsigned dynamic, wl_slot_t *tab,
                      uint64_t mask, unsigned long long *acc)
{
    __shared__ unsigned int hist[MGI_WL_MAX_GPUS];
    __shared__ uint32_t flush_state;
    __shared__ uint64_t s_tile;
    __shared__ unsigned long long pf[P ? WL_P_N : 1];
    const mgi_dev_ch_t *h = &ch;
    const unsigned long long deadline = wl_dev_now() + timeout_ns;
    const long long c_all = wl_prof_t0<P>();
    uint64_t per   = (n + gridDim.x - 1) / gridDim.x;
    uint64_t begin = min(n, per * blockIdx.x), end = min(n, begin + per);
    uint64_t b, i;
    unsigned flags = 0, sends = 0;
    long long c0;
    mgi_wl_tuple_t t;
    wl_fuse_t fz = {tab, mask, 0, 0, 0, 0};
    int d, r;

    if (threadIdx.x < MGI_WL_MAX_GPUS) {
        hist[threadIdx.x] = 0;
    }
    if (threadIdx.x == 0) {
        flush_state = 0;
    }
    if (P && (threadIdx.x < WL_P_N)) {
        pf[threadIdx.x] = 0;
    }
    wl_prof_when<P>(res, WL_T_START);
    __syncthreads();
    if (TILED) {
        /* tiles of t->in straight from memory, tile x blockDim.x tuples
         * a send (mgi_dev_send_block_tile_of: the one path for its tuple
         * size and SL, tiles of one destination or of several, alone in
         * this kernel; mgi_dev_send_block_tile where that does not fit
         * the channel, e.g. MGI_TEST_DEV_TILE_BATCH=0) */
        const uint64_t step = (uint64_t)tile * blockDim.x;
        /* dynamic: the blocks claim the input's tiles one at a time
         * (thread 0 claims the next one while the block works on this
         * one), so they end sending together; else each its share */
        const uint64_t lim = dynamic ? n : end;
        /* the tuples per destination: the tile send's own count where
         * the key or the pattern's rule routes (each destination number
         * is a rank), else all to tdst's rank */
        const int trank    = (by_key || (SL == WL_SEND_MAP)) ? -1 :
                             mgi_wl_dest(pat, 0, me, G);
        uint64_t cnt, done, nb = 0;
        unsigned took;

        if (threadIdx.x == 0) {
            s_tile = dynamic ? atomicAdd(&res->next_tile, step) : begin;
        }
        __syncthreads();
        for (b = s_tile; (b < lim) && (flags == 0); b = s_tile) {
            if (threadIdx.x == 0) {
                nb = dynamic ? atomicAdd(&res->next_tile, step) : b + step;
            }
            cnt = min(step, lim - b);
            for (done = 0; (done < cnt) && (flags == 0); done += took) {
                c0    = wl_prof_t0<P>();
                if constexpr (SL == WL_SEND_GENERIC) {
                    took = mgi_dev_send_block_tile(
                                h, in + b + done, (unsigned)(cnt - done),
                                tdst, by_key ? hist : NULL);
                } else if constexpr (SL == WL_SEND_MAP) {
                    took = mgi_dev_send_block_tile_map<sizeof(*in)>(
                                h, in + b + done, (unsigned)(cnt - done),
                                wl_dest_of_t{pat, me, G}, hist);
                } else {
                    took = mgi_dev_send_block_tile_of<sizeof(*in), SL>(
                                h, in + b + done, (unsigned)(cnt - done),
                                tdst, by_key ? hist : NULL);
                }
                if ((trank >= 0) && (threadIdx.x == 0)) {
                    hist[trank] += took;
                }
                wl_prof_add<P>(pf, WL_P_SEND, c0);
                flags = wl_mgi_sent<P, C>(h, took > 0, &sends, recv_every,
                                          recv, cap, rmax, res, deadline, pf,
                                          fz);
            }
            __syncthreads();        /* every thread has read s_tile */
            if (threadIdx.x == 0) {
                s_tile = nb;
            }
            __syncthreads();
        }
    }
    for (b = begin; !TILED && (b < end) && (flags == 0); b += blockDim.x) {
        i     = b + threadIdx.x;
        d     = -1;
        t.key = t.val = 0;
        if (i < end) {
            t = in[i];
            d = mgi_wl_dest(pat, t.key, me, G);
        }
        wl_warp_count(hist, d);
        do {
            c0    = wl_prof_t0<P>();
            r     = mgi_dev_send_block(h, &t, (d >= 0) ? sizeof(t) : 0,
                                       (by_key || (d < 0)) ?
                                       MGI_DEV_DST_AUTO : dsts.ep[d]);
            r     = __syncthreads_or(r > 0);
            wl_prof_add<P>(pf, WL_P_SEND, c0);
            flags = wl_mgi_sent<P, C>(h, r, &sends, recv_every, recv, cap,
                                      rmax, res, deadline, pf, fz);
        } while (!r && (flags == 0));
    }
    /* every block flushes once (a source's EOF counts its blocks), and
     * keeps receiving until its flush is delivered: the others' delivery
     * may need this endpoint to drain */
    c0 = wl_prof_t0<P>();
    wl_prof_when<P>(res, WL_T_SENT);
    if (P && (threadIdx.x == 0)) {
        pf[WL_P_GOT_SENT] = pf[WL_P_GOT];
    }
    while ((flags == 0) && !mgi_dev_flush_nb(h, &flush_state)) {
        wl_mgi_recv<P, C>(h, recv, cap, rmax, res, pf, fz);
        if (wl_mgi_late(deadline)) {
            flags = WL_MGI_LATE_FLUSH;
        }
    }
    wl_prof_when<P>(res, WL_T_FLUSHED);
    while (flags == 0) {
        r = wl_mgi_recv<P, C>(h, recv, cap, rmax, res, pf, fz);
        if (r == MGI_DEV_EOF) {
            break;
        }
        if ((r == 0) && wl_mgi_late(deadline)) {
            flags = WL_MGI_LATE_RECV;
        }
    }
    if (C != WL_C_COPY) {
        wl_warp_add(&res->rsum, fz.sum, NULL);
        if (C == WL_C_PROBE) {
            wl_warp_add(acc, fz.js, &fz.jc);
        }
        if (__syncthreads_or(fz.full) && (threadIdx.x == 0)) {
            flags |= WL_MGI_TABLE_FULL;
        }
    }
    __syncthreads();
    wl_prof_when<P>(res, WL_T_EOF);
    wl_prof_add<P>(pf, WL_P_TAIL, c0);
    wl_prof_add<P>(pf, WL_P_ALL, c_all);
    __syncthreads();
    if (P && (threadIdx.x < WL_P_N)) {
        atomicAdd(&res->prof[threadIdx.x], pf[threadIdx.x]);
    }
    if ((threadIdx.x < G) && (hist[threadIdx.x] > 0)) {
        atomicAdd(&res->sent[threadIdx.x],
                  (unsigned long long)hist[threadIdx.x]);
    }
    if (threadIdx.x == 0) {
        if (flags != 0) {
            atomicOr(&res->flags, flags);
        } else {
            atomicAdd(&res->eof_blocks, 1u);
        }
    }
}

typedef decltype(&wl_mgi_shuffle_kernel<true, false, WL_C_COPY,
                                        WL_SEND_GENERIC>) wl_mgi_kern_t;

/* The tiled shuffle kernel of a profile flag, a consumer and a kind of
 * tile (SL: one destination a tile, or several) */
template <bool P, unsigned SL>
static wl_mgi_kern_t wl_mgi_kernel_t(int c)
{
    switch (c) {
    case WL_C_GROUPBY:
        return wl_mgi_shuffle_kernel<true, P, WL_C_GROUPBY, SL>;
    case WL_C_BUILD:
        return wl_mgi_shuffle_kernel<true, P, WL_C_BUILD, SL>;
    case WL_C_PROBE:
        return wl_mgi_shuffle_kernel<true, P, WL_C_PROBE, SL>;
    default:
        return wl_mgi_shuffle_kernel<true, P, WL_C_COPY, SL>;
    }
}

/* The shuffle kernel of a profile flag, a send kind, a consumer (the fused
 * consumers with tile sends only) and, for tile sends, SL: MGI_DEV_TILE_ONE
 * or _MANY where the typed send serves the channel's tiles, WL_SEND_MAP
 * where the pattern's rule routes (many-to-one: no operator, no fused
 * consumer), else WL_SEND_GENERIC */
template <bool P>
static wl_mgi_kern_t wl_mgi_kernel_p(int tiled, int c, unsigned sl)
{
    if (!tiled) {
        return wl_mgi_shuffle_kernel<false, P, WL_C_COPY>;
    }
    switch (sl) {
    case WL_SEND_MAP:
        return wl_mgi_shuffle_kernel<true, P, WL_C_COPY, WL_SEND_MAP>;
    case MGI_DEV_TILE_ONE:
        return wl_mgi_kernel_t<P, MGI_DEV_TILE_ONE>(c);
    case MGI_DEV_TILE_MANY:
        return wl_mgi_kernel_t<P, MGI_DEV_TILE_MANY>(c);
    default:
        return wl_mgi_kernel_t<P, WL_SEND_GENERIC>(c);
    }
}

static wl_mgi_kern_t wl_mgi_kernel(int profile, int tiled, int c,
                                   unsigned sl)
{
    return profile ? wl_mgi_kernel_p<true>(tiled, c, sl) :
                     wl_mgi_kernel_p<false>(tiled, c, sl);
}

static int wl_mgi_oob_allgather(const void *sbuf, void *rbuf, size_t len,
                                void *arg)
{
    return mgi_wl_allgather((mgi_wl_boot_t*)arg, sbuf, len, rbuf);
}

/* Collective: did every rank get through `step`?  For steps that can fail
 * on one rank alone; the tag catches ranks that are at different steps
 * (the launcher's allgather only checks lengths). */
static int wl_mgi_vote(wl_rank_t *w, int ok, const char *step, int *all_ok)
{
    struct {
        char    tag[60];
        int32_t ok;
    } me, all[MGI_WL_MAX_RANKS];
    int r;

    memset(&me, 0, sizeof(me));
    snprintf(me.tag, sizeof(me.tag), "mgi_workloads mgi: %s", step);
    me.ok = ok;
    WL_CHECK(mgi_wl_allgather(w->boot, &me, sizeof(me), all));
    *all_ok = 1;
    for (r = 0; r < w->G; ++r) {
        if (strncmp(all[r].tag, me.tag, sizeof(me.tag)) != 0) {
            fprintf(stderr, "mgi_workloads rank %d: at '%s', rank %d is "
                    "elsewhere\n", w->me, step, r);
            return -1;
        }
        *all_ok &= (all[r].ok != 0);
    }
    return 0;
}

/* Every rank failed the variant at the same point (a vote or a collective
 * call said so): record why, since the run ends here; the channel left
 * behind is in no state to go on. */
static int wl_mgi_failed(wl_rank_t *w, const char *why)
{
    char buf[160];

    if (w->me == 0) {
        snprintf(buf, sizeof(buf), "FAILED: %s (see stderr)", why);
        mgi_wl_report_absent(&wl_report, "mgi", buf, stdout);
        wl_save(w);
    }
    return -1;
}

/* UCX drops a transport it cannot load with a warning only: check that
 * the ones asked for (cuda_mgi) load, as the ucx variants do. */
static int wl_mgi_check_tls(wl_rank_t *w, const char *tls)
{
    mgi_wl_ucx_t u;
    ucp_config_t *config;
    ucp_params_t params;
    ucs_status_t status;
    const char *missing;
    char buf[64];

    memset(&u, 0, sizeof(u));
    status = ucp_config_read(NULL, NULL, &config);
    if (status == UCS_OK) {
        status = ucp_config_modify(config, "TLS", tls);
        if (status == UCS_OK) {
            memset(&params, 0, sizeof(params));
            params.field_mask = UCP_PARAM_FIELD_FEATURES;
            params.features   = UCP_FEATURE_RMA;
            status = ucp_init(&params, config, &u.context);
        }
        ucp_config_release(config);
    }
    if (status != UCS_OK) {
        fprintf(stderr, "mgi_workloads rank %d: UCX with %s: %s\n", w->me,
                tls, ucs_status_string(status));
        return -1;
    }
    missing = mgi_wl_ucx_missing_tl(&u, tls, buf, sizeof(buf));
    ucp_cleanup(u.context);
    if (missing != NULL) {
        fprintf(stderr, "mgi_workloads rank %d: UCX did not load %s (of %s)"
                "\n", w->me, missing, tls);
        return -1;
    }
    return 0;
}

/* Tuples this rank receives in one table's shuffle, by the reference. */
static uint64_t wl_mgi_expected(const wl_rank_t *w, int orders)
{
    uint64_t n = 0;
    int s;

    for (s = 0; s < w->G; ++s) {
        n += orders ? w->ref.o_count[s][w->me] : w->ref.l_count[s][w->me];
    }
    return n;
}

/* How many user blocks of the rank's shuffle kernel fit at once beside
 * the sorters: the kernel's blocks an SM (the fewest of its variants, at
 * m->threads threads), on the SMs left once every rank on this GPU has an
 * SM for each sorter block (a sorter block's shared memory takes most of
 * one), shared among those ranks. */
static int wl_mgi_user_room(wl_rank_t *w, const mgi_context_params_t *p,
                            int nsm, unsigned *per_sm, unsigned *room)
{
    const long sorters = (long)w->on_dev * p->sorter_blocks;
    int p_, tiled, c, n, fewest = INT_MAX;
    unsigned sl;

    /* every kernel: profile flag, tiled, consumer, kind of tile send */
    for (p_ = 0; p_ < 2; ++p_) {
        for (tiled = 0; tiled < 2; ++tiled) {
            for (c = 0; c < WL_C_N; ++c) {
                for (sl = MGI_DEV_TILE_ONE; sl <= WL_SEND_GENERIC; ++sl) {
                    WL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                            &n, (const void*)wl_mgi_kernel(p_, tiled, c, sl),
                            (int)w->mgi.threads, 0));
                    fewest = std::min(fewest, n);
                }
            }
        }
    }
    *per_sm = (unsigned)fewest;
    *room   = (sorters < nsm) ?
              (unsigned)((nsm - sorters) * fewest / w->on_dev) : 0;
    return 0;
}

/* Local setup before the endpoint: checks, buffers, the hash table. */
static int wl_mgi_prepare(wl_rank_t *w, const mgi_context_params_t *p,
                          const char *tls)
{
    wl_mgi_t *m = &w->mgi;
    size_t seg, msg = mgi_msg_size(sizeof(mgi_wl_tuple_t));
    unsigned per_sm, room;
    cudaDeviceProp prop;

    /* a block's send must fit a segment (mgi_dev_send_block refuses more) */
    if (mgi_params_seg_size(p, &seg) != UCS_OK) {
        fprintf(stderr, "mgi_workloads rank %d: libmgi refuses the MGI_* "
                "settings (see its message)\n", w->me);
        return -1;
    }
    if ((m->threads < 32) || (m->threads > WL_MGI_MAX_THREADS) ||
        (m->threads % 32 != 0)) {
        fprintf(stderr, "mgi_workloads rank %d: MGI_WL_MGI_THREADS=%u: a "
                "multiple of 32 from 32 to %d\n", w->me, m->threads,
                WL_MGI_MAX_THREADS);
        return -1;
    }
    if (m->threads * msg > seg - MGI_SEG_HDR_SIZE) {
        fprintf(stderr, "mgi_workloads rank %d: %u threads x %zu-byte "
                "messages do not fit a segment of %zu bytes: raise "
                "MGI_SEG_SIZE\n", w->me, m->threads, msg, seg);
        return -1;
    }
    /* the kernel's blocks wait for each other's EOF: all must be resident
     * beside the sorters (an SM each at worst), of every rank on this GPU
     * (MGI_WL_SHARE_GPUS, under MPS); the default gives way */
    WL_CUDA(cudaGetDeviceProperties(&prop, w->dev));
    WL_CHECK(wl_mgi_user_room(w, p, prop.multiProcessorCount, &per_sm,
                              &room));
    if ((getenv("MGI_WL_MGI_BLOCKS") == NULL) && (m->blocks > room) &&
        (room > 0)) {
        m->blocks = room;
    }
    if ((m->blocks < 1) || (m->blocks > room)) {
        fprintf(stderr, "mgi_workloads rank %d: %u user blocks of %u "
                "threads do not fit beside the sorters: %d SMs less %u "
                "sorter blocks for each of the %d rank(s) on this GPU leave "
                "room for %u blocks a rank (%u an SM): set MGI_WL_MGI_BLOCKS "
                "to at most %u, or MGI_SORTER_BLOCKS lower\n", w->me,
                m->blocks, m->threads, prop.multiProcessorCount,
                p->sorter_blocks, w->on_dev, room, per_sm, room);
        return -1;
    }
    WL_CHECK(wl_mgi_check_tls(w, tls));
    if (w->opts->op == WL_OP_GROUPBY) {
        WL_CHECK(wl_table_reserve(w, std::min<uint64_t>(
                wl_mgi_expected(w, 0), w->spec.tpch.n_orders)));
    } else if (w->opts->op == WL_OP_JOIN) {
        WL_CHECK(wl_table_reserve(w, wl_mgi_expected(w, 1)));
    }
    WL_CUDA(cudaMalloc((void**)&m->d_res, sizeof(*m->d_res)));
    WL_CUDA(cudaHostAlloc((void**)&m->h_res, sizeof(*m->h_res),
                          cudaHostAllocDefault));
    return 0;
}

static void wl_mgi_release(wl_rank_t *w)
{
    wl_mgi_t *m = &w->mgi;

    cudaFree(m->d_res);
    cudaFreeHost(m->h_res);
    m->d_res   = NULL;
    m->h_res = NULL;
}

/* $name as a whole number from 0 to max, def when unset. -1, with a
 * message that names it, when it is something else. */
static int wl_env_uint(const wl_rank_t *w, const char *name, unsigned def,
                       unsigned max, unsigned *out)
{
    const char *v = getenv(name);
    unsigned long x;
    char *end;

    if (v == NULL) {
        *out = def;
        return 0;
    }
    errno = 0;
    x     = strtoul(v, &end, 10);
    if ((v[0] < '0') || (v[0] > '9') || (*end != '\0') || (errno != 0) ||
        (x > max)) {
        fprintf(stderr, "mgi_workloads rank %d: %s=%s: set a whole number "
                "from 0 to %u, or unset it for %u\n", w->me, name, v, max,
                def);
        return -1;
    }
    *out = (unsigned)x;
    return 0;
}

static int wl_mgi_init(wl_rank_t *w)
{
    wl_mgi_t *m      = &w->mgi;
    const char *tls  = getenv("MGI_WL_MGI_TLS");
    mgi_context_params_t p;
    mgi_ep_params_t ep;
    ucs_status_t status;
    unsigned need;
    int ok, all_ok;

    memset(m, 0, sizeof(*m));
    tls = (tls != NULL) ? tls : WL_MGI_TLS;
    mgi_context_params_init(&p);
    /* libmgi gives a channel between the GPU endpoints of one host direct
     * rings unless MGI_DIRECT_RINGS=0: every channel here is one */
    m->direct = (p.direct_rings != 0);
    if (m->direct && (getenv("MGI_SORTER_BLOCKS") == NULL)) {
        /* no tuple of ours goes through a sorter: one block holds the
         * endpoint's sorter, the SMs are the user blocks' */
        p.sorter_blocks = 1;
    }
    /* the blocks and threads are checked against the GPU and the
     * segments in wl_mgi_prepare */
    ok  = (wl_env_uint(w, "MGI_WL_MGI_BLOCKS",
                       m->direct ? WL_MGI_DIRECT_BLOCKS :
                       (w->G == 1) ? WL_MGI_BLOCKS_1 : WL_MGI_BLOCKS, 65535,
                       &m->blocks) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_THREADS",
                       m->direct ? WL_MGI_DIRECT_THREADS : WL_MGI_THREADS,
                       WL_MGI_MAX_THREADS, &m->threads) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_TILE", WL_MGI_TILE, WL_MGI_TILE_MAX,
                       &m->tile) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_RECV_EVERY", WL_MGI_RECV_EVERY,
                       1u << 20, &m->recv_every) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_RECV_TUPLES", WL_MGI_RECV,
                       WL_MGI_RECV_MAX, &m->recv_tuples) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_DYNAMIC", 1, 1, &m->dynamic) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_FUSE", WL_FUSE_JOIN, WL_FUSE_ALL,
                       &m->fuse) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_PROFILE", 0, 1, &m->profile) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_LAND", 1, 1, &m->land) == 0);
    if (ok && (m->recv_tuples == 0)) {
        fprintf(stderr, "mgi_workloads rank %d: MGI_WL_MGI_RECV_TUPLES=0: "
                "a receive call must take at least one tuple\n", w->me);
        ok = 0;
    }
    if (getenv("MGI_TEST_TUPLE_SIZE") == NULL) {
        p.tuple_size = sizeof(mgi_wl_tuple_t);
    }
    if (getenv("MGI_TEST_DEV_TILE_BATCH") == NULL) {
        /* a tile's tuples of one destination in messages of up to 64 KB:
         * 1.10-1.15x on one H100 (bench/workloads/README.md) */
        p.dev_tile_batch = WL_MGI_TILE_BATCH;
    }
    if (getenv("MGI_TEST_STAGE_GROUPS") == NULL) {
        /* a stage ring per destination: segments of one destination,
         * moved whole instead of walked; on 2 x H200 the Exchange moved
         * 163.1-163.7 GB/s against 121.6-122.2 with one group, many-to-one
         * 40.3 against 27.6 and one-to-many 52.2 against 43.0 GB/s; not
         * point-to-point, whose one destination needs none (78.4 against
         * 143.0 GB/s) */
        p.stage_groups = (w->spec.pattern == MGI_WL_PATTERN_P2P) ? 1u :
                         (unsigned)std::min(w->G, MGI_STAGE_GROUPS_MAX);
    }
    /* two channels at once at most: a Join's lineitem channel is made
     * while the orders' kernel runs (ids come back after a delete) */
    need = 2;
    p.max_channels = std::max(p.max_channels, need);
    m->timeout_ms  = p.timeout_ms;
    ok = ok && (wl_mgi_prepare(w, &p, tls) == 0);
    WL_CHECK(wl_mgi_vote(w, ok, "setup", &all_ok));
    if (!all_ok) {
        wl_mgi_release(w);
        return -1;
    }

    p.ucx_tls       = tls;
    p.oob.allgather = wl_mgi_oob_allgather;
    p.oob.arg       = w->boot;
    p.oob.rank      = w->me;
    p.oob.size      = w->G;
    status = mgi_context_create(&p, &m->ctx);
    if (status != UCS_OK) {
        /* collective: the ranks are out of step now, the run ends */
        fprintf(stderr, "mgi_workloads rank %d: mgi_context_create: %s\n",
                w->me, ucs_status_string(status));
        m->ctx = NULL;
        wl_mgi_release(w);
        return -1;
    }
    memset(&ep, 0, sizeof(ep));
    ep.device = w->dev;
    ep.blocks = m->blocks;
    status    = mgi_ep_create(m->ctx, &ep, &m->ep);
    if (status != UCS_OK) {
        fprintf(stderr, "mgi_workloads rank %d: mgi_ep_create on GPU %d, %u "
                "blocks: %s\n", w->me, w->me, m->blocks,
                ucs_status_string(status));
    }
    WL_CHECK(wl_mgi_vote(w, status == UCS_OK, "endpoint", &all_ok));
    if (all_ok) {
        WL_CHECK(mgi_wl_allgather(w->boot, &m->ep, sizeof(m->ep), m->eps));
        return 0;
    }
    mgi_context_destroy(m->ctx);   /* every rank: collective */
    m->ctx = NULL;
    wl_mgi_release(w);
    return -1;
}

/* Where the user blocks' time went (MGI_WL_MGI_PROFILE=1), over every
 * shuffle of this rank: thread 0's clock cycles in send calls and in
 * receive calls (copying to the
 * output included); the time after a block's last send (its
 * flush, and receiving until EOF) is given apart too. */
static void wl_mgi_print_profile(const wl_rank_t *w)
{
    const wl_mgi_t *m = &w->mgi;
    const unsigned long long *f = m->prof;
    const double all = (f[WL_P_ALL] > 0) ? (double)f[WL_P_ALL] : 1.0;
    double us[2 * WL_T_N];
    int k;

    static_assert(WL_T_N == 5, "the second line prints five points");

    printf("# mgi profile rank %d: user blocks %.0f k cycles each per "
           "shuffle; %.1f%% in sends (%llu calls, %llu "
           "found the stage ring full, %.1f k cycles per call), %.1f%% in "
           "receives (%llu calls, %llu found nothing, %.1f k cycles per "
           "call, copying to the output included; %.1f%% in the calls that "
           "found nothing, %.1f k cycles each; the others %.1f k cycles "
           "each, %.2f rounds each); %.1f%% after the last send\n", w->me,
           all / 1e3 / m->blocks / m->shuffles,
           100.0 * f[WL_P_SEND] / all,
           f[WL_P_SENDS], f[WL_P_FULL],
           (f[WL_P_SENDS] > 0) ? f[WL_P_SEND] / 1e3 / f[WL_P_SENDS] : 0.0,
           100.0 * f[WL_P_RECV] / all, f[WL_P_RECVS], f[WL_P_EMPTY],
           (f[WL_P_RECVS] > 0) ? f[WL_P_RECV] / 1e3 / f[WL_P_RECVS] : 0.0,
           100.0 * f[WL_P_RECV_NONE] / all,
           (f[WL_P_EMPTY] > 0) ? f[WL_P_RECV_NONE] / 1e3 / f[WL_P_EMPTY] :
                                 0.0,
           (f[WL_P_RECVS] > f[WL_P_EMPTY]) ?
               (f[WL_P_RECV] - f[WL_P_RECV_NONE]) / 1e3 /
               (f[WL_P_RECVS] - f[WL_P_EMPTY]) : 0.0,
           (f[WL_P_RECVS] > f[WL_P_EMPTY]) ?
               (double)f[WL_P_ROUNDS] / (f[WL_P_RECVS] - f[WL_P_EMPTY]) :
               0.0,
           100.0 * f[WL_P_TAIL] / all);
    for (k = 0; k < 2 * WL_T_N; ++k) {
        us[k] = (m->when_n[k / 2] > 0) ? m->when_us[k] / m->when_n[k / 2] :
                                         -1.0;
    }
    printf("# mgi profile rank %d: after the first block started (us, "
           "means per shuffle, -1: never): blocks started %.0f-%.0f, ended "
           "sending %.0f-%.0f (having received %.1f%% of their tuples), "
           "their flushes delivered %.0f-%.0f, receives took tuples from "
           "%.0f to %.0f, read EOF %.0f-%.0f\n",
           w->me, us[0], us[1], us[2], us[3],
           100.0 * f[WL_P_GOT_SENT] / (f[WL_P_GOT] ? f[WL_P_GOT] : 1),
           us[4], us[5], us[6], us[7], us[8], us[9]);
    fflush(stdout);
}

static void wl_mgi_fini(wl_rank_t *w, int sync)
{
    wl_mgi_t *m = &w->mgi;

    if (m->ctx != NULL) {
        if (!sync) {
            /* not reached: init fails on every rank or on none, and then
             * destroys the context itself (destroy is collective) */
            return;
        }
        if (m->profile && (m->shuffles > 0)) {
            wl_mgi_print_profile(w);
        }
        if ((w->me == 0) && (m->shuffles > 0)) {
            /* the first create apart: it allocates the final rings */
            printf("# mgi: %u blocks x %u threads per GPU; per shuffle on "
                   "rank 0: channel create %.2f ms (the first one %.2f "
                   "ms), kernel %.2f ms, delete %.2f ms (means)\n",
                   m->blocks, m->threads,
                   (m->shuffles > 1) ? (m->create_ms - m->first_create_ms) /
                                       (m->shuffles - 1) : 0.0,
                   m->first_create_ms, m->kernel_ms / m->shuffles,
                   m->delete_ms / m->shuffles);
            fflush(stdout);
        }
        mgi_context_destroy(m->ctx);
        m->ctx = NULL;
    }
    wl_mgi_release(w);
}

/* Wait for this rank's stream, bounded (cudaStreamSynchronize is not: a
 * lost tuple would hang it). */
static int wl_wait_stream(wl_rank_t *w, double timeout_ms, const char *what)
{
    double t0 = wl_now_ms();
    cudaError_t e;

    while ((e = cudaStreamQuery(w->stream)) == cudaErrorNotReady) {
        if (wl_now_ms() - t0 > timeout_ms) {
            fprintf(stderr, "mgi_workloads rank %d: TIMEOUT: %s not done "
                    "after %.0f s\n", w->me, what, timeout_ms / 1e3);
            return -1;
        }
        usleep(10);     /* 50: up to that much on every shuffle's time */
    }
    if (e != cudaSuccess) {
        fprintf(stderr, "mgi_workloads rank %d: %s: %s\n", w->me, what,
                cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

/* What the shuffle's receives do with the tuples (WL_C_*): with tile
 * sends and MGI_WL_MGI_FUSE, the Join builds and probes there (orders
 * first, see wl_iteration), and at 2 GroupBy aggregates there; else they
 * copy. */
static int wl_mgi_consumer(const wl_rank_t *w, int tiled, int orders)
{
    if (!tiled) {
        return WL_C_COPY;
    }
    switch (w->opts->op) {
    case WL_OP_GROUPBY:
        return (w->mgi.fuse >= WL_FUSE_ALL) ? WL_C_GROUPBY : WL_C_COPY;
    case WL_OP_JOIN:
        return (w->mgi.fuse < WL_FUSE_JOIN) ? WL_C_COPY :
               orders ? WL_C_BUILD : WL_C_PROBE;
    default:
        return WL_C_COPY;
    }
}

/* Does table t's shuffle land its tuples in t->recv (MGI_WL_MGI_LAND,
 * direct rings, a consumer that copies them out)? */
static int wl_mgi_lands(const wl_rank_t *w, const wl_table_t *t)
{
    return w->mgi.land && w->mgi.direct &&
           (wl_mgi_consumer(w, 1, t == &w->o) == WL_C_COPY);
}

/* A channel for table t's shuffle (collective): every rank's endpoint
 * as source and destination, schema {int64 key, int64 val}, the key as
 * partition key; t->recv its landing buffer where wl_mgi_lands. */
static int wl_mgi_open(wl_rank_t *w, const wl_table_t *t, mgi_ch_id_t *ch,
                       mgi_dev_ch_t *h)
{
    wl_mgi_t *m = &w->mgi;
    void *land[MGI_WL_MAX_RANKS];
    uint64_t land_tuples[MGI_WL_MAX_RANKS];
    mgi_schema_t schema;
    mgi_ch_params_t cp;
    ucs_status_t status;
    int d;

    memset(&schema, 0, sizeof(schema));
    schema.nattrs       = 2;
    schema.attr_size[0] = sizeof(int64_t);      /* key: partition key */
    schema.attr_size[1] = sizeof(int64_t);      /* val */
    memset(&cp, 0, sizeof(cp));
    cp.src      = m->eps;
    cp.nsrc     = w->G;
    cp.dst      = m->eps;
    cp.ndst     = w->G;
    cp.schema   = &schema;
    cp.part_key = 0;
    if (wl_mgi_lands(w, t)) {
        /* only this rank's entry is read */
        for (d = 0; d < w->G; ++d) {
            land[d]        = (d == w->me) ? (void*)t->recv : NULL;
            land_tuples[d] = t->cap;
        }
        cp.land        = land;
        cp.land_tuples = land_tuples;
    }
    status = mgi_ch_create(m->ctx, &cp, ch);
    if (status != UCS_OK) {
        /* collective: every rank got the same answer */
        fprintf(stderr, "mgi_workloads rank %d: mgi_ch_create: %s\n", w->me,
                ucs_status_string(status));
        return wl_mgi_failed(w, "mgi_ch_create failed");
    }
    status = mgi_ch_device_handle(m->ctx, *ch, m->ep, h);
    if (status != UCS_OK) {
        fprintf(stderr, "mgi_workloads rank %d: mgi_ch_device_handle: %s\n",
                w->me, ucs_status_string(status));
        return -1;
    }
    return 0;
}

/* After a shuffle that landed (res->top): the tuples in the landing
 * buffer, at t->recv's start, and those received from the rings, at its
 * end, made one run from its start (the second part moved down, in pieces
 * that do not overlap); res->received counts both.  Both parts in the
 * buffer: WL_MGI_OVERFLOW otherwise. */
static int wl_mgi_landed(wl_rank_t *w, wl_table_t *t, mgi_ch_id_t ch,
                         wl_mgi_res_t *res)
{
    const uint64_t r = res->received;
    mgi_ch_attr_t attr;
    ucs_status_t status;
    uint64_t src, dst, k, c;

    status = mgi_ch_query(w->mgi.ctx, ch, w->mgi.ep, &attr);
    if (status != UCS_OK) {
        fprintf(stderr, "mgi_workloads rank %d: mgi_ch_query: %s\n", w->me,
                ucs_status_string(status));
        return -1;
    }
    if (attr.land_tuples + r > t->cap) {
        res->flags |= WL_MGI_OVERFLOW;
        return 0;
    }
    src = t->cap - r;
    dst = attr.land_tuples;
    for (k = 0; (k < r) && (src > dst); k += c) {
        c = std::min(r - k, src - dst);
        WL_CUDA(cudaMemcpyAsync(t->recv + dst + k, t->recv + src + k,
                                c * sizeof(*t->recv),
                                cudaMemcpyDeviceToDevice, w->stream));
    }
    WL_CUDA(cudaStreamSynchronize(w->stream));
    res->received = attr.land_tuples + r;
    return 0;
}

/* The `shuffle` hook (see the variant table).  transfer_ms is the whole
 * step, channel create to delete; partition_ms stays 0 (it overlaps).  A
 * Join's lineitem channel is created while the orders' kernel runs, so
 * its create is off the Join's path. */
static int wl_mgi_shuffle(wl_rank_t *w, wl_table_t *t, wl_times_t *times)
{
    wl_mgi_t *m       = &w->mgi;
    wl_mgi_res_t *res = m->h_res;
    int orders        = (t == &w->o);
    mgi_wl_pattern_t pat = w->spec.pattern;
    int by_key = (pat == MGI_WL_PATTERN_EXCHANGE) ||
                 (pat == MGI_WL_PATTERN_ONE2MANY);
    mgi_dev_ch_t h;
    mgi_ch_id_t ch;
    wl_mgi_dsts_t dsts;
    ucs_status_t status;
    char why[160] = "";
    double t0, t1, t2, t3;
    uint64_t want;
    int all_ok, d;

    for (d = 0; d < w->G; ++d) {
        dsts.ep[d] = m->eps[d];
    }

    t0 = wl_now_ms();
    if (m->next_ready) {
        ch            = m->next_ch;
        h             = m->next_h;
        m->next_ready = 0;
    } else {
        WL_CHECK(wl_mgi_open(w, t, &ch, &h));
    }
    t1 = wl_now_ms();
    WL_CUDA(cudaMemsetAsync(m->d_res, 0, sizeof(*m->d_res), w->stream));
    res->top = (unsigned)wl_mgi_lands(w, t);
    WL_CUDA(cudaMemcpyAsync(&m->d_res->top, &res->top, sizeof(res->top),
                            cudaMemcpyHostToDevice, w->stream));
    /* tile sends where the channel tells each tuple's destination (the
     * key, or rank 1 for point-to-point), or the pattern's rule does
     * (many-to-one: mgi_dev_send_block_tile_map, where its channel fits
     * it); a kernel of its own, so the other one keeps its registers */
    const int map   = (pat == MGI_WL_PATTERN_MANY2ONE) &&
                      mgi_dev_tile_of_fits(&h, sizeof(mgi_wl_tuple_t),
                                           MGI_DEV_TILE_MANY,
                                           MGI_DEV_DST_MAP);
    const int tiled = (m->tile > 0) &&
                      (by_key || map || (pat == MGI_WL_PATTERN_P2P));
    const int c     = wl_mgi_consumer(w, tiled, orders);
    if ((c == WL_C_GROUPBY) || (c == WL_C_BUILD)) {
        /* sized at wl_mgi_init: nothing is allocated under the sorter */
        WL_CUDA(cudaMemsetAsync(w->table, 0,
                                w->table_size * sizeof(wl_slot_t),
                                w->stream));
    } else if (c == WL_C_PROBE) {
        WL_CUDA(cudaMemsetAsync(w->d_acc, 0, 2 * sizeof(*w->d_acc),
                                w->stream));
    }
    /* the tiles' destination (the kernel sends to it), and their kind: one
     * destination where it names one, or where the key has one to choose
     * from; the typed send where it serves the channel
     * (mgi_dev_tile_of_fits), else the generic one */
    const int tdst    = by_key ? MGI_DEV_DST_AUTO : map ? MGI_DEV_DST_MAP :
                        (int)dsts.ep[mgi_wl_dest(pat, 0, w->me, w->G)];
    const unsigned sl = (!by_key || (w->G == 1)) ? MGI_DEV_TILE_ONE :
                                                   MGI_DEV_TILE_MANY;
    wl_mgi_kernel(m->profile, tiled, c,
                  map ? WL_SEND_MAP :
                  mgi_dev_tile_of_fits(&h, sizeof(mgi_wl_tuple_t), sl,
                                       tdst) ? sl : WL_SEND_GENERIC)<<<
            m->blocks, m->threads, 0, w->stream>>>(
            h, t->in, t->n_in, pat, by_key, w->me, w->G, dsts, tdst,
            t->recv, t->cap, m->d_res,
            /* landing: only what does not fit comes through the rings,
             * and a send that finds its ring full receives */
            res->top ? 0u : m->recv_every,
            m->recv_tuples * (unsigned)sizeof(mgi_wl_tuple_t),
            (unsigned long long)m->timeout_ms * 1000000ull, m->tile,
            m->dynamic, w->table, w->table_size - 1, w->d_acc);
    WL_CUDA(cudaGetLastError());
    if (orders && (w->opts->op == WL_OP_JOIN)) {
        /* the lineitem channel, while this kernel runs (collective: every
         * rank shuffles its orders now) */
        WL_CHECK(wl_mgi_open(w, &w->l, &m->next_ch, &m->next_h));
        m->next_ready = 1;
    }
    WL_CUDA(cudaMemcpyAsync(res, m->d_res, sizeof(*res),
                            cudaMemcpyDeviceToHost, w->stream));
    /* the kernel gives up at its own deadline first */
    if (wl_wait_stream(w, m->timeout_ms + 10000.0, "the MGI shuffle kernel")
        != 0) {
        return -1;
    }
    t2   = wl_now_ms();
    want = wl_mgi_expected(w, orders);
    if (res->top && (res->flags == 0) &&
        (wl_mgi_landed(w, t, ch, res) != 0)) {
        /* said above; every rank hears of it in the vote below */
        snprintf(why, sizeof(why), " the landed tuples could not be "
                 "counted or moved");
    } else if (res->flags != 0) {
        snprintf(why, sizeof(why), "%s%s%s%s%s",
                 (res->flags & WL_MGI_LATE_SEND) ? " send timed out" : "",
                 (res->flags & WL_MGI_LATE_FLUSH) ? " flush timed out" : "",
                 (res->flags & WL_MGI_LATE_RECV) ? " receive timed out" : "",
                 (res->flags & WL_MGI_OVERFLOW) ? " more tuples than room" :
                                                  "",
                 (res->flags & WL_MGI_TABLE_FULL) ? " the hash table had "
                                                    "no slot left" : "");
    } else if (res->eof_blocks != m->blocks) {
        snprintf(why, sizeof(why), " EOF in %u of %u blocks",
                 res->eof_blocks, m->blocks);
    } else if (res->received > want) {
        /* GroupBy / Join would grow their table: cudaFree under the
         * sorter never returns */
        snprintf(why, sizeof(why), " %llu tuples received, the reference "
                 "says %llu", res->received, (unsigned long long)want);
    } else if ((status = mgi_ch_delete(m->ctx, ch)) != UCS_OK) {
        snprintf(why, sizeof(why), " mgi_ch_delete: %s",
                 ucs_status_string(status));
    }
    t3 = wl_now_ms();
    if (why[0] != '\0') {
        fprintf(stderr, "mgi_workloads rank %d: %s channel %u (timeout %u "
                "ms, MGI_TIMEOUT_MS):%s\n", w->me,
                orders ? "orders" : "lineitem", ch, m->timeout_ms, why);
    }
    WL_CHECK(wl_mgi_vote(w, why[0] == '\0', "shuffle", &all_ok));
    if (!all_ok) {
        return wl_mgi_failed(w, "the shuffle kernel or channel failed");
    }

    t->send_off[0] = 0;
    for (d = 0; d < w->G; ++d) {
        t->send_off[d + 1] = t->send_off[d] + res->sent[d];
    }
    memset(t->recv_off, 0, sizeof(t->recv_off));
    t->recv_off[w->G] = res->received;
    t->by_source      = 0;
    t->fused          = (c != WL_C_COPY);
    t->fused_sum      = res->rsum;
    times->transfer_ms += t3 - t0;
    m->create_ms += t1 - t0;
    if (m->shuffles == 0) {
        m->first_create_ms = t1 - t0;
    }
    m->kernel_ms += t2 - t1;
    for (d = 0; d < WL_P_N; ++d) {
        m->prof[d] += res->prof[d];
    }
    for (d = 0; m->profile && (d < WL_T_N); ++d) {
        if (res->first[d] == 0) {
            continue;       /* no block got there (took no tuples) */
        }
        ++m->when_n[d];
        m->when_us[2 * d]     += (double)(~res->first[d] -
                                          ~res->first[WL_T_START]) / 1e3;
        m->when_us[2 * d + 1] += (double)(res->last[d] -
                                          ~res->first[WL_T_START]) / 1e3;
    }
    m->delete_ms += t3 - t2;
    ++m->shuffles;
    return 0;
}

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

static const wl_variant_t mgi_wl_variants[] = {
    {"nccl", wl_nccl_init, wl_nccl_fini, wl_nccl_transfer, NULL, NULL},
    {"ucx", wl_ucx_init, wl_ucx_fini, wl_ucx_transfer, NULL, NULL},
    {"ucx_mgi", wl_ucx_mgi_init, wl_ucx_fini, wl_ucx_transfer, NULL, NULL},
    {"peer", wl_peer_init, wl_peer_fini, NULL, wl_peer_shuffle, NULL},
    /* last: a failed MGI shuffle ends the run (its channel is in no state
     * to go on), and the baselines are measured by then */
    {"mgi", wl_mgi_init, wl_mgi_fini, NULL, wl_mgi_shuffle, NULL},
};

static int wl_variant_selected(const wl_opts_t *o, const char *name)
{
    char buf[256], *tok, *save = NULL;

    snprintf(buf, sizeof(buf), "%s", o->variants);
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        if ((strcmp(tok, "all") == 0) || (strcmp(tok, name) == 0)) {
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------------------- compute */

/* acc[2] from w->d_acc once the stream got there */
static int wl_acc_get(wl_rank_t *w, unsigned long long acc[2])
{
    WL_CUDA(cudaMemcpyAsync(acc, w->d_acc, 2 * sizeof(*acc),
                            cudaMemcpyDeviceToHost, w->stream));
    WL_CUDA(cudaStreamSynchronize(w->stream));
    return 0;
}

/* GroupBy's answer from its filled table into acc */
static int wl_groupby_answer(wl_rank_t *w, unsigned long long acc[2])
{
    WL_CUDA(cudaMemsetAsync(w->d_acc, 0, 2 * sizeof(*w->d_acc), w->stream));
    wl_groupby_result<<<WL_REDUCE_BLOCKS, WL_BLOCK, 0, w->stream>>>(
            w->table, w->table_size, w->d_acc);
    WL_CUDA(cudaGetLastError());
    return wl_acc_get(w, acc);
}

static int wl_groupby(wl_rank_t *w, const mgi_wl_tuple_t *in, uint64_t n,
                      unsigned long long acc[2])
{
    /* groups: at most the tuples, and at most the orders (every key, Zipf
     * or not, is some order's orderkey) */
    WL_CHECK(wl_table_reserve(w, std::min<uint64_t>(n,
                                                    w->spec.tpch.n_orders)));
    WL_CUDA(cudaMemsetAsync(w->table, 0, w->table_size * sizeof(wl_slot_t),
                            w->stream));
    wl_groupby_insert<<<wl_grid(n, WL_BLOCK), WL_BLOCK, 0, w->stream>>>(
            in, n, w->table, w->table_size - 1);
    WL_CUDA(cudaGetLastError());
    return wl_groupby_answer(w, acc);
}

static int wl_join(wl_rank_t *w, const mgi_wl_tuple_t *orders, uint64_t no,
                   const mgi_wl_tuple_t *lines, uint64_t nl,
                   unsigned long long acc[2])
{
    WL_CHECK(wl_table_reserve(w, no));
    WL_CUDA(cudaMemsetAsync(w->table, 0, w->table_size * sizeof(wl_slot_t),
                            w->stream));
    WL_CUDA(cudaMemsetAsync(w->d_acc, 0, 2 * sizeof(*w->d_acc), w->stream));
    wl_join_build<<<wl_grid(no, WL_BLOCK), WL_BLOCK, 0, w->stream>>>(
            orders, no, w->table, w->table_size - 1);
    WL_CUDA(cudaGetLastError());
    wl_join_probe<<<wl_grid(nl, WL_BLOCK), WL_BLOCK, 0, w->stream>>>(
            lines, nl, w->table, w->table_size - 1, w->d_acc);
    WL_CUDA(cudaGetLastError());
    return wl_acc_get(w, acc);
}

/* ------------------------------------------------------- verification */

/* Per-source checksums of t->recv against the reference. */
static int wl_verify_recv(wl_rank_t *w, wl_table_t *t, int orders, int *ok)
{
    unsigned long long acc[2];
    uint64_t n, want_n, want_sum;
    int s, first, last;

    /* per source where the layout says, else this destination's total */
    for (s = 0; s < (t->by_source ? w->G : 1); ++s) {
        first    = t->by_source ? s : 0;
        last     = t->by_source ? s : w->G - 1;
        n        = t->recv_off[t->by_source ? s + 1 : w->G] -
                   t->recv_off[first];
        want_n   = 0;
        want_sum = 0;
        for (int src = first; src <= last; ++src) {
            want_n   += orders ? w->ref.o_count[src][w->me] :
                                 w->ref.l_count[src][w->me];
            want_sum += orders ? w->ref.o_sum[src][w->me] :
                                 w->ref.l_sum[src][w->me];
        }
        if (t->fused) {
            /* nothing in recv: the consumer summed what it took */
            acc[0] = t->fused_sum;
        } else {
            WL_CUDA(cudaMemsetAsync(w->d_acc, 0, 2 * sizeof(*w->d_acc),
                                    w->stream));
            if (n > 0) {
                wl_checksum<<<wl_grid(n, WL_BLOCK * 8), WL_BLOCK, 0,
                              w->stream>>>(t->recv + t->recv_off[first], n,
                                           w->d_acc);
                WL_CUDA(cudaGetLastError());
            }
            WL_CHECK(wl_acc_get(w, acc));
        }
        if ((n != want_n) || (acc[0] != want_sum)) {
            fprintf(stderr, "mgi_workloads rank %d: %s from %s %d: %llu "
                    "tuples sum %016llx, expected %llu sum %016llx\n",
                    w->me, orders ? "orders" : "lineitem",
                    t->by_source ? "rank" : "all ranks, first", first,
                    (unsigned long long)n, acc[0],
                    (unsigned long long)want_n,
                    (unsigned long long)want_sum);
            *ok = 0;
        }
    }
    /* what this rank sent must be what the reference says too */
    for (s = 0; s < w->G; ++s) {
        n      = t->send_off[s + 1] - t->send_off[s];
        want_n = orders ? w->ref.o_count[w->me][s] : w->ref.l_count[w->me][s];
        if (n != want_n) {
            fprintf(stderr, "mgi_workloads rank %d: sent %llu tuples to %d, "
                    "expected %llu\n", w->me, (unsigned long long)n, s,
                    (unsigned long long)want_n);
            *ok = 0;
        }
    }
    return 0;
}

static void wl_verify_acc(wl_rank_t *w, const char *what,
                          const unsigned long long acc[2], uint64_t want_n,
                          uint64_t want_sum, int *ok)
{
    if ((acc[1] != want_n) || (acc[0] != want_sum)) {
        fprintf(stderr, "mgi_workloads rank %d: %s: %llu, sum %016llx; "
                "expected %llu, sum %016llx\n", w->me, what, acc[1], acc[0],
                (unsigned long long)want_n, (unsigned long long)want_sum);
        *ok = 0;
    }
}

/* ------------------------------------------------------------ the runs */

/* max of each time over ranks; verified only if every rank verified */
static int wl_gather(wl_rank_t *w, const wl_times_t *mine, int my_ok,
                     wl_times_t *max, int *all_ok)
{
    struct { wl_times_t t; int ok; } me, all[MGI_WL_MAX_RANKS];
    int r;

    memset(&me, 0, sizeof(me));
    me.t  = *mine;
    me.ok = my_ok;
    WL_CHECK(mgi_wl_allgather(w->boot, &me, sizeof(me), all));
    memset(max, 0, sizeof(*max));
    *all_ok = 1;
    for (r = 0; r < w->G; ++r) {
        max->partition_ms = std::max(max->partition_ms, all[r].t.partition_ms);
        max->transfer_ms  = std::max(max->transfer_ms, all[r].t.transfer_ms);
        max->compute_ms   = std::max(max->compute_ms, all[r].t.compute_ms);
        max->total_ms     = std::max(max->total_ms, all[r].t.total_ms);
        *all_ok          &= all[r].ok;
    }
    return 0;
}

/* The answer of an operator fused into the MGI shuffle: GroupBy's groups
 * from its table, the Join's matches as the probe summed them */
static int wl_fused_result(wl_rank_t *w, unsigned long long acc[2])
{
    return (w->opts->op == WL_OP_GROUPBY) ? wl_groupby_answer(w, acc) :
                                            wl_acc_get(w, acc);
}

/* One iteration of a distributed variant: shuffle the table(s), compute. */
static int wl_iteration(wl_rank_t *w, const wl_variant_t *v, wl_times_t *t,
                        int verify, int *ok)
{
    wl_op_t op = w->opts->op;
    int join   = (op == WL_OP_JOIN);
    unsigned long long acc[2];
    /* a join's build side first: a fused probe needs the table built */
    wl_table_t *tabs[2] = {join ? &w->o : &w->l, &w->l};
    double t0, t1;
    int k;

    memset(t, 0, sizeof(*t));
    w->l.fused = w->o.fused = 0;
    WL_CHECK(mgi_wl_barrier(w->boot));
    t0 = wl_now_ms();
    for (k = 0; k < (join ? 2 : 1); ++k) {
        if (v->shuffle != NULL) {
            WL_CHECK(v->shuffle(w, tabs[k], t));
            continue;
        }
        WL_CUDA(cudaEventRecord(w->ev[0], w->stream));
        WL_CHECK(wl_partition(w, tabs[k]));
        WL_CUDA(cudaEventRecord(w->ev[1], w->stream));
        WL_CUDA(cudaEventSynchronize(w->ev[1]));
        t->partition_ms += wl_event_ms(w->ev[0], w->ev[1]);
        t1 = wl_now_ms();
        WL_CHECK(v->transfer(w, tabs[k]));
        t->transfer_ms += wl_now_ms() - t1;
    }
    WL_CUDA(cudaEventRecord(w->ev[2], w->stream));
    if (w->l.fused) {
        WL_CHECK(wl_fused_result(w, acc));
    } else if (op == WL_OP_GROUPBY) {
        WL_CHECK(wl_groupby(w, w->l.recv, w->l.recv_off[w->G], acc));
    } else if (join) {
        WL_CHECK(wl_join(w, w->o.recv, w->o.recv_off[w->G], w->l.recv,
                         w->l.recv_off[w->G], acc));
    }
    WL_CUDA(cudaEventRecord(w->ev[3], w->stream));
    WL_CUDA(cudaEventSynchronize(w->ev[3]));
    t->compute_ms = wl_event_ms(w->ev[2], w->ev[3]);
    t->total_ms   = wl_now_ms() - t0;
    if (!verify) {
        return 0;
    }
    WL_CHECK(wl_verify_recv(w, &w->l, 0, ok));
    if (join) {
        WL_CHECK(wl_verify_recv(w, &w->o, 1, ok));
        wl_verify_acc(w, "join matches", acc, w->ref.matches[w->me],
                      w->ref.join_sum[w->me], ok);
    } else if (op == WL_OP_GROUPBY) {
        wl_verify_acc(w, "groups", acc, w->ref.groups[w->me],
                      w->ref.group_sum[w->me], ok);
    }
    return 0;
}

static double wl_cross_bytes(const wl_rank_t *w)
{
    double b = 0;
    int s, d;

    for (s = 0; s < w->G; ++s) {
        for (d = 0; d < w->G; ++d) {
            if (s != d) {
                b += (double)w->ref.l_count[s][d];
                if (w->opts->op == WL_OP_JOIN) {
                    b += (double)w->ref.o_count[s][d];
                }
            }
        }
    }
    return b * sizeof(mgi_wl_tuple_t);
}

static double wl_input_bytes(const wl_rank_t *w)
{
    double b = 0;
    int s, d;

    for (s = 0; s < w->G; ++s) {
        for (d = 0; d < w->G; ++d) {
            b += (double)w->ref.l_count[s][d];
            if (w->opts->op == WL_OP_JOIN) {
                b += (double)w->ref.o_count[s][d];
            }
        }
    }
    return b * sizeof(mgi_wl_tuple_t);
}

static int wl_run_variant(wl_rank_t *w, const wl_variant_t *v)
{
    const wl_opts_t *o = w->opts;
    mgi_wl_result_t res;
    wl_times_t t, tmax;
    int i, ok, all_ok, init_ok, inits[MGI_WL_MAX_RANKS], r;

    memset(&res, 0, sizeof(res));
    snprintf(res.op, sizeof(res.op), "%s", wl_op_names[o->op]);
    snprintf(res.variant, sizeof(res.variant), "%s", v->name);
    init_ok = (v->init(w) == 0);
    WL_CHECK(mgi_wl_allgather(w->boot, &init_ok, sizeof(init_ok), inits));
    for (r = 0; r < w->G; ++r) {
        if (!inits[r]) {
            if (w->me == 0) {
                mgi_wl_report_absent(&wl_report, v->name,
                                     "setup failed on a rank (see stderr)",
                                     stdout);
            }
            v->fini(w, 0);
            return 0;
        }
    }
    all_ok = 1;
    for (i = 0; i < o->warmup + o->iters; ++i) {
        ok = 1;
        /* every iteration is checked: a variant that is right once and
         * wrong later is wrong */
        WL_CHECK(wl_iteration(w, v, &t, 1, &ok));
        WL_CHECK(wl_gather(w, &t, ok, &tmax, &r));
        all_ok &= r;
        if (i >= o->warmup) {
            res.t[res.iters++] = tmax;
        }
    }
    v->fini(w, 1);
    res.verified    = all_ok;
    res.input_bytes = wl_input_bytes(w);
    res.cross_bytes = wl_cross_bytes(w);
    if (w->me == 0) {
        mgi_wl_report_add(&wl_report, &res, stdout);
        wl_save(w);
    }
    return all_ok ? 0 : 1;
}

/* GroupBy / Join of the whole data set on this GPU alone: data generated
 * in place (not timed), then the operator, timed, every iteration checked
 * against the reference totals.  Returns -1 on a CUDA error. */
static int wl_single_compute(wl_rank_t *w, mgi_wl_result_t *res,
                             mgi_wl_tuple_t **l, mgi_wl_tuple_t **ord)
{
    const wl_opts_t *o = w->opts;
    uint64_t nl = 0, no = 0, want_n = 0, want_sum = 0;
    unsigned long long acc[2];
    wl_times_t t;
    int i, d, ok = 1;

    WL_CHECK(wl_gen_lineitem(w, 0, w->spec.tpch.n_orders, l, &nl));
    if (o->op == WL_OP_JOIN) {
        WL_CHECK(wl_gen_orders(w, 0, w->spec.tpch.n_orders, ord, &no));
    }
    for (d = 0; d < w->G; ++d) {
        want_n   += (o->op == WL_OP_JOIN) ? w->ref.matches[d] :
                                            w->ref.groups[d];
        want_sum += (o->op == WL_OP_JOIN) ? w->ref.join_sum[d] :
                                            w->ref.group_sum[d];
    }
    for (i = 0; i < o->warmup + o->iters; ++i) {
        memset(&t, 0, sizeof(t));
        WL_CUDA(cudaEventRecord(w->ev[2], w->stream));
        if (o->op == WL_OP_JOIN) {
            WL_CHECK(wl_join(w, *ord, no, *l, nl, acc));
        } else {
            WL_CHECK(wl_groupby(w, *l, nl, acc));
        }
        WL_CUDA(cudaEventRecord(w->ev[3], w->stream));
        WL_CUDA(cudaEventSynchronize(w->ev[3]));
        t.compute_ms = wl_event_ms(w->ev[2], w->ev[3]);
        t.total_ms   = t.compute_ms;
        wl_verify_acc(w, "single", acc, want_n, want_sum, &ok);
        if (i >= o->warmup) {
            res->t[res->iters++] = t;
        }
    }
    res->verified    = ok;
    res->input_bytes = (double)(nl + no) * sizeof(mgi_wl_tuple_t);
    return 0;
}

/* Rank 0 runs the single-GPU variant while the others wait; a failure
 * (e.g. the whole data set does not fit one GPU) is reported, not fatal. */
static int wl_run_single(wl_rank_t *w)
{
    mgi_wl_tuple_t *l = NULL, *ord = NULL;
    mgi_wl_result_t res;
    int rc = 0;

    memset(&res, 0, sizeof(res));
    snprintf(res.op, sizeof(res.op), "%s", wl_op_names[w->opts->op]);
    snprintf(res.variant, sizeof(res.variant), "single");
    if (w->me == 0) {
        if (wl_single_compute(w, &res, &l, &ord) == 0) {
            mgi_wl_report_add(&wl_report, &res, stdout);
            rc = res.verified ? 0 : 1;
        } else {
            mgi_wl_report_absent(&wl_report, "single",
                                 "failed on GPU 0 (see stderr)", stdout);
            cudaGetLastError();     /* not sticky: clear it */
        }
        cudaFree(l);
        cudaFree(ord);
        cudaFree(w->table);
        w->table      = NULL;
        w->table_size = 0;
    }
    WL_CHECK(mgi_wl_barrier(w->boot));
    return rc;
}

/* GPU generator against the host generator, byte for byte, this rank's
 * slice, all columns. */
static int wl_gencheck(wl_rank_t *w)
{
    uint64_t b, e, n, *offsets = NULL;
    mgi_tpch_lineitem_t dc, hc;
    mgi_tpch_orders_t dor, hor;
    int ok = 1, all[MGI_WL_MAX_RANKS], r;
    std::vector<char> h, g;
    size_t k;

    mgi_tpch_slice(w->spec.tpch.n_orders, w->me, w->G, &b, &e);
    WL_CHECK(mgi_tpch_gpu_lineitem_offsets(&w->spec.tpch, b, e, &offsets, &n,
                                           w->stream));
    if (n != mgi_tpch_lineitem_count(&w->spec.tpch, b, e)) {
        fprintf(stderr, "gencheck rank %d: GPU counts %llu lineitems\n",
                w->me, (unsigned long long)n);
        ok = 0;
    }
    /* columns back to back: 8+8+4+1+4+8+4+4 = 41 bytes a row */
    const size_t widths[] = {8, 8, 4, 1, 4, 8, 4, 4};
    size_t off[9] = {0};
    for (k = 0; k < 8; ++k) {
        /* every column 8-byte aligned: the GPU faults on misaligned stores */
        off[k + 1] = off[k] + (widths[k] * (n + 1) + 7) / 8 * 8;
    }
    h.assign(off[8], 0);
    g.assign(off[8], 1);
    char *d = NULL;
    WL_CUDA(cudaMalloc((void**)&d, off[8]));
    WL_CUDA(cudaMemset(d, 0, off[8]));
#define WL_COLS(_c, _base) \
    _c.orderkey      = (int64_t*)(_base + off[0]); \
    _c.zkey          = (w->spec.zipf != NULL) ? \
                       (int64_t*)(_base + off[1]) : NULL; \
    _c.partkey       = (int32_t*)(_base + off[2]); \
    _c.linenumber    = (int8_t*)(_base + off[3]); \
    _c.quantity      = (int32_t*)(_base + off[4]); \
    _c.extendedprice = (int64_t*)(_base + off[5]); \
    _c.discount      = (int32_t*)(_base + off[6]); \
    _c.tax           = (int32_t*)(_base + off[7]);
    WL_COLS(dc, d);
    WL_COLS(hc, h.data());
#undef WL_COLS
    WL_CHECK(mgi_tpch_gpu_lineitem_gen(&w->spec.tpch, w->zipf_dev, b, e,
                                       offsets, &dc, w->stream));
    WL_CUDA(cudaStreamSynchronize(w->stream));
    WL_CUDA(cudaMemcpy(g.data(), d, off[8], cudaMemcpyDeviceToHost));
    mgi_tpch_lineitem_gen(&w->spec.tpch, w->spec.zipf, b, e, &hc);
    if (h != g) {
        fprintf(stderr, "gencheck rank %d: lineitem bytes differ\n", w->me);
        ok = 0;
    }
    cudaFree(d);
    cudaFree(offsets);
    /* orders */
    size_t no = e - b, ob = no * (8 + 4 + 4);
    std::vector<char> ho(ob, 0), go(ob, 1);
    WL_CUDA(cudaMalloc((void**)&d, ob + 1));
    dor.orderkey  = (int64_t*)d;
    dor.custkey   = (int32_t*)(d + no * 8);
    dor.orderdate = (int32_t*)(d + no * 12);
    hor.orderkey  = (int64_t*)ho.data();
    hor.custkey   = (int32_t*)(ho.data() + no * 8);
    hor.orderdate = (int32_t*)(ho.data() + no * 12);
    WL_CHECK(mgi_tpch_gpu_orders_gen(&w->spec.tpch, b, e, &dor, w->stream));
    WL_CUDA(cudaStreamSynchronize(w->stream));
    WL_CUDA(cudaMemcpy(go.data(), d, ob, cudaMemcpyDeviceToHost));
    mgi_tpch_orders_gen(&w->spec.tpch, b, e, &hor);
    if (ho != go) {
        fprintf(stderr, "gencheck rank %d: orders bytes differ\n", w->me);
        ok = 0;
    }
    cudaFree(d);
    WL_CHECK(mgi_wl_allgather(w->boot, &ok, sizeof(ok), all));
    for (r = 0; r < w->G; ++r) {
        ok &= all[r];
    }
    if (w->me == 0) {
        printf("gencheck  gpus=%d sf=%.3f zipf=%s rows=%llu(rank0) "
               "gpu_equals_host=%s\n", w->G, w->spec.tpch.sf,
               (w->spec.zipf != NULL) ? "on" : "off", (unsigned long long)n,
               ok ? "ok" : "FAILED");
    }
    return ok ? 0 : 1;
}

/* A crash report that names the caller: a call through a NULL function
 * pointer leaves UCX's backtrace nothing to unwind (the program counter is
 * 0), but the return address is still on the stack. */
static void wl_crash_symbol(const char *what, void *pc)
{
    Dl_info info;

    if ((pc != NULL) && dladdr(pc, &info) && (info.dli_fname != NULL)) {
        fprintf(stderr, "mgi_workloads rank %d:   %s %p = %s+0x%lx (%s)\n",
                wl_rank_id, what, pc,
                (info.dli_sname != NULL) ? info.dli_sname : "?",
                (unsigned long)((char*)pc - (char*)((info.dli_sname != NULL) ?
                                                    info.dli_saddr :
                                                    info.dli_fbase)),
                info.dli_fname);
    } else {
        fprintf(stderr, "mgi_workloads rank %d:   %s %p\n", wl_rank_id, what,
                pc);
    }
}

static void wl_crash_report(int sig, siginfo_t *si, void *ctx)
{
#if defined(__x86_64__)
    const ucontext_t *uc = (const ucontext_t*)ctx;
    void **sp = (void**)uc->uc_mcontext.gregs[REG_RSP];

    fprintf(stderr, "mgi_workloads rank %d: signal %d at address %p\n",
            wl_rank_id, sig, si->si_addr);
    wl_crash_symbol("pc", (void*)uc->uc_mcontext.gregs[REG_RIP]);
    wl_crash_symbol("return address on the stack", sp[0]);
#else
    (void)si;
    (void)ctx;
    fprintf(stderr, "mgi_workloads rank %d: signal %d\n", wl_rank_id, sig);
#endif
    signal(sig, SIG_DFL);
    raise(sig);
}

static int wl_rank_main(mgi_wl_boot_t *boot, void *arg)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = wl_crash_report;
    sa.sa_flags     = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    const wl_opts_t *o = (const wl_opts_t*)arg;
    wl_rank_t *w = new wl_rank_t();
    unsigned what = 0;
    char device[256] = "", line[600];
    cudaDeviceProp prop;
    int ndev = 0, failed = 0, i, rc;
    unsigned share;
    size_t k;
    double t0;

    wl_rank_id = boot->rank;
    w->boot    = boot;
    w->opts    = o;
    w->me      = boot->rank;
    w->G       = boot->size;
    WL_CUDA(cudaGetDeviceCount(&ndev));
    if (ndev < 1) {
        fprintf(stderr, "mgi_workloads: no GPU visible\n");
        return 1;
    }
    if (wl_env_uint(w, "MGI_WL_SHARE_GPUS", 0, 1, &share) != 0) {
        return 1;
    }
    if ((ndev < w->G) && !share) {
        fprintf(stderr, "mgi_workloads: %d GPUs asked, %d visible "
                "(MGI_WL_SHARE_GPUS=1 runs rank r on GPU r %% %d)\n", w->G,
                ndev, ndev);
        return 1;
    }
    /* ranks sharing a GPU: a check of the path between processes where
     * fewer GPUs are at hand (under MPS they run side by side) */
    w->shared = (ndev < w->G);
    w->dev    = w->me % ndev;
    w->on_dev = (w->G - w->dev + ndev - 1) / ndev; /* r % ndev == dev */
    WL_CUDA(cudaSetDevice(w->dev));
    WL_CUDA(cudaGetDeviceProperties(&prop, w->dev));
    snprintf(device, sizeof(device), "%s", prop.name);
    WL_CUDA(cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking));
    for (i = 0; i < 4; ++i) {
        WL_CUDA(cudaEventCreate(&w->ev[i]));
    }
    WL_CUDA(cudaMalloc((void**)&w->d_count, 32 * sizeof(*w->d_count)));
    WL_CUDA(cudaMalloc((void**)&w->d_acc, 2 * sizeof(*w->d_acc)));

    memset(&w->spec, 0, sizeof(w->spec));
    mgi_tpch_params_init(&w->spec.tpch, o->seed, o->sf);
    w->spec.gpus    = w->G;
    w->spec.pattern = (o->op == WL_OP_MANY2ONE) ? MGI_WL_PATTERN_MANY2ONE :
                      (o->op == WL_OP_ONE2MANY) ? MGI_WL_PATTERN_ONE2MANY :
                      (o->op == WL_OP_P2P) ? MGI_WL_PATTERN_P2P :
                                             MGI_WL_PATTERN_EXCHANGE;
    if (o->zipf >= 0) {
        w->zipf_host = new mgi_tpch_zipf_t;
        if (mgi_tpch_zipf_init(w->zipf_host, w->spec.tpch.n_orders,
                               o->zipf) != 0) {
            fprintf(stderr, "mgi_workloads: bad Zipf theta %g\n", o->zipf);
            return 1;
        }
        WL_CHECK(mgi_tpch_gpu_zipf_upload(w->zipf_host, &w->zipf_dev));
        w->spec.zipf = w->zipf_host;
    }
    snprintf(wl_report.op, sizeof(wl_report.op), "%s", wl_op_names[o->op]);
    wl_report.gpus     = w->G;
    wl_report.sf       = w->spec.tpch.sf;
    wl_report.seed     = o->seed;
    wl_report.n_orders = w->spec.tpch.n_orders;
    wl_report.zipf     = o->zipf;
    snprintf(wl_report.device, sizeof(wl_report.device), "%s", device);
    snprintf(wl_report.ucx_tls, sizeof(wl_report.ucx_tls), "%s",
             (getenv("UCX_TLS") != NULL) ? getenv("UCX_TLS") : "");
    mgi_wl_mgi_settings(wl_report.mgi_settings,
                        sizeof(wl_report.mgi_settings));
    if (o->op == WL_OP_GENCHECK) {
        return wl_gencheck(w);
    }

    /* data in place on each GPU, then the reference on the host */
    t0 = wl_now_ms();
    WL_CHECK(wl_table_setup(w, &w->l, 0));
    if (o->op == WL_OP_JOIN) {
        WL_CHECK(wl_table_setup(w, &w->o, 1));
    }
    what = MGI_WL_REF_EXCHANGE |
           ((o->op == WL_OP_JOIN) ? MGI_WL_REF_ORDERS | MGI_WL_REF_JOIN : 0) |
           ((o->op == WL_OP_GROUPBY) ? MGI_WL_REF_GROUPBY : 0);
    if (mgi_wl_ref_compute(&w->spec, what, &w->ref) != 0) {
        fprintf(stderr, "mgi_workloads: reference failed\n");
        return 1;
    }
    WL_CHECK(mgi_wl_barrier(boot));
    if (w->me == 0) {
        printf("# %s on %d x %s: sf %.3f, %llu orders, lineitem tuples "
               "%.3f GB/GPU (rank 0), zipf %s, setup + reference %.1f s\n",
               wl_op_names[o->op], w->G, device, w->spec.tpch.sf,
               (unsigned long long)w->spec.tpch.n_orders,
               w->l.n_in * 16.0 / 1e9, (o->zipf < 0) ? "off" : "on",
               (wl_now_ms() - t0) / 1e3);
        printf("# %s\n", mgi_wl_mgi_settings_line(wl_report.mgi_settings,
                                                   line, sizeof(line)));
        fflush(stdout);
    }

    for (k = 0; k < sizeof(mgi_wl_variants) / sizeof(mgi_wl_variants[0]);
         ++k) {
        const wl_variant_t *v = &mgi_wl_variants[k];
        if (!wl_variant_selected(o, v->name)) {
            continue;
        }
        if ((v->transfer == NULL) && (v->shuffle == NULL)) {
            if (w->me == 0) {
                mgi_wl_report_absent(&wl_report, v->name, v->absent, stdout);
            }
            continue;
        }
        rc = wl_run_variant(w, v);
        if (rc < 0) {
            /* an error mid-variant leaves the ranks out of step: end the
             * run (the hub stops the others; the JSON has what was done) */
            return 1;
        }
        failed |= rc;
    }
    if (wl_variant_selected(o, "single") &&
        ((o->op == WL_OP_GROUPBY) || (o->op == WL_OP_JOIN))) {
        wl_table_free(&w->l);
        wl_table_free(&w->o);
        rc = wl_run_single(w);
        if (rc < 0) {
            return 1;
        }
        failed |= rc;
    }
    if ((w->me == 0) && (o->json != NULL)) {
        wl_report.nccl_version = (w->nccl.lib != NULL) ? w->nccl.version : 0;
        failed |= (mgi_wl_report_json(&wl_report, o->json) != 0);
    }
    return failed;
}

/* ---------------------------------------------------------------- main */

static void wl_usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s --op exchange|groupby|join|many2one|one2many|p2p|"
            "gencheck\n"
            "          [--variant nccl,ucx,ucx_mgi,peer,mgi,single|all] [--gpus G]\n"
            "          [--sf SF | --gib LINEITEM_GIB_PER_GPU] [--zipf THETA]\n"
            "          [--seed S] [--iters N] [--warmup N] [--json FILE]\n",
            argv0);
}

/* Option opt's value v as a number from lo to hi (whole when `whole`):
 * 0, or -1 with a line that names the option and the value. */
static int wl_arg_num(const char *opt, const char *v, double lo, double hi,
                      int whole, double *out)
{
    char *end;
    double x;

    errno = 0;
    x     = strtod(v, &end);
    if ((end == v) || (*end != '\0') || (errno != 0) || !(x >= lo) ||
        !(x <= hi) || (whole && (x != (double)(long long)x))) {
        fprintf(stderr, "mgi_workloads: %s %s: not a%s number from %g to "
                "%g\n", opt, v, whole ? " whole" : "", lo, hi);
        return -1;
    }
    *out = x;
    return 0;
}

/* Every name of a --variant list is a variant's, or "all". */
static int wl_variants_known(const char *list)
{
    char buf[256], *tok, *save = NULL;
    size_t k;

    snprintf(buf, sizeof(buf), "%s", list);
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        for (k = 0; k < sizeof(mgi_wl_variants) / sizeof(mgi_wl_variants[0]);
             ++k) {
            if (strcmp(tok, mgi_wl_variants[k].name) == 0) {
                break;
            }
        }
        if ((strcmp(tok, "all") != 0) &&
            (k == sizeof(mgi_wl_variants) / sizeof(mgi_wl_variants[0]))) {
            fprintf(stderr, "mgi_workloads: --variant %s: no variant '%s'\n",
                    list, tok);
            return 0;
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    wl_opts_t o;
    double x = 0;
    int i, k, bad = 0;

    memset(&o, 0, sizeof(o));
    o.op     = WL_OP_EXCHANGE;
    snprintf(o.variants, sizeof(o.variants), "all");
    o.gpus   = 2;
    o.sf     = 1.0;
    o.zipf   = -1;
    o.seed   = 20260101;
    o.iters  = 5;
    o.warmup = 1;
    for (i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        if ((v == NULL) && (strcmp(a, "--help") != 0)) {
            wl_usage(argv[0]);
            return 2;
        }
        if (strcmp(a, "--op") == 0) {
            for (k = 0; k <= WL_OP_GENCHECK; ++k) {
                if (strcmp(v, wl_op_names[k]) == 0) {
                    break;
                }
            }
            if (k > WL_OP_GENCHECK) {
                wl_usage(argv[0]);
                return 2;
            }
            o.op = (wl_op_t)k;
        } else if (strcmp(a, "--variant") == 0) {
            snprintf(o.variants, sizeof(o.variants), "%s", v);
            bad |= !wl_variants_known(v);
        } else if (strcmp(a, "--gpus") == 0) {
            bad |= wl_arg_num(a, v, 1, MGI_WL_MAX_GPUS, 1, &x) != 0;
            o.gpus = (int)x;
        } else if (strcmp(a, "--sf") == 0) {
            bad |= wl_arg_num(a, v, 1e-6, 1e6, 0, &o.sf) != 0;
        } else if (strcmp(a, "--gib") == 0) {
            bad |= wl_arg_num(a, v, 1e-6, 1e4, 0, &o.gib) != 0;
        } else if (strcmp(a, "--zipf") == 0) {
            bad |= wl_arg_num(a, v, 0, 10, 0, &o.zipf) != 0;
        } else if (strcmp(a, "--seed") == 0) {
            bad |= wl_arg_num(a, v, 0, 9007199254740992.0, 1, &x) != 0;
            o.seed = (unsigned long long)x;
        } else if (strcmp(a, "--iters") == 0) {
            bad |= wl_arg_num(a, v, 1, 63, 1, &x) != 0;
            o.iters = (int)x;
        } else if (strcmp(a, "--warmup") == 0) {
            bad |= wl_arg_num(a, v, 0, 63, 1, &x) != 0;
            o.warmup = (int)x;
        } else if (strcmp(a, "--json") == 0) {
            o.json = v;
        } else {
            wl_usage(argv[0]);
            return 2;
        }
        ++i;
    }
    if (bad || (o.gpus < 1) || (o.gpus > MGI_WL_MAX_GPUS) || (o.iters < 1) ||
        (o.iters + o.warmup > 64) || (o.warmup < 0) || !(o.sf > 0) ||
        ((o.op == WL_OP_P2P) && (o.gpus < 2)) || (o.zipf > 10)) {
        wl_usage(argv[0]);
        return 2;
    }
    if (o.gib > 0) {
        /* 16-byte lineitem tuples, 6M lineitems per SF (4 per order) */
        o.sf = o.gib * 1073741824.0 * o.gpus / 16.0 /
               (4.0 * MGI_TPCH_ORDERS_PER_SF);
    }
    /* multicast stays off on shared GPU hosts */
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    if (wl_variant_selected(&o, "mgi")) {
        /* MGI's sorter is a persistent kernel: a kernel loaded lazily while
         * it runs may wait for it forever (ranks inherit this) */
        setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    }
    return mgi_wl_boot_run(o.gpus, wl_rank_main, &o);
}

/**
 * The first program: two processes shuffle 16-byte {key, value} tuples
 * over an MGI channel, each from a GPU endpoint of its own, and check
 * every tuple that arrives. Written from src/ucp_ext/README.md, with
 * libmgi's defaults (no MGI_* set).
 *
 *   mgi_launch -n 2 -t 120 -- ./shuffle [TUPLES_PER_RANK]
 *
 * (any launcher that sets MGI_BOOTSTRAP=host:port, MGI_RANK and
 * MGI_NRANKS for libmgi's TCP bootstrap will do; TUPLES_PER_RANK default
 * 4194304). Each rank:
 *   1. creates a context, a GPU endpoint on GPU rank % GPUs with as many
 *      user blocks as run beside its sorter (mgi_context_user_blocks),
 *      and an all-to-all channel keyed on the tuple's key;
 *   2. launches one kernel: each block builds tiles of tuples in shared
 *      memory and sends them with the typed tile send where the channel
 *      takes it (mgi_ch_tile_fits), else the generic one; a send that
 *      finds no room receives instead; then it flushes with the
 *      non-blocking flush while receiving, and receives until EOF. Every
 *      wait of the kernel is bounded (mgi_dev_deadline), and a kernel
 *      that gives up says why (mgi_context_device_error);
 *   3. checks that every key destined to it arrived exactly once with its
 *      value, and prints the rate.
 * Exit status 0 when every tuple checked, else 1.
 */
#include <mgi/mgi.h>
#include <mgi/mgi_device.cuh>

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <algorithm>
#include <vector>

#define THREADS 512                 /* threads of a user block */
/* tuples of a tile: as many as one typed tile send takes at once (4 a
 * thread: 32 KiB), which moved about 1.3x the bytes of half that; the
 * generic tile send holds about 19 KiB of static shared memory of its own
 * and a block's is at most 48 KiB, so its kernel's tiles are 16 KiB */
#define TILE_TYPED   (THREADS * 4)
#define TILE_GENERIC (THREADS * 2)
#define RECV_MAX (1u << 20)         /* bytes a receive call takes at most */

struct tuple {
    uint64_t key;                   /* the partition key: attribute 0 */
    uint64_t value;
};

/* The value each key carries, so a receiver can check it. */
__host__ __device__ static inline uint64_t value_of(uint64_t key)
{
    return (key * 0x9e3779b97f4a7c15ull) ^ (key >> 17);
}

/* What the kernel tells the host. */
struct counts {
    unsigned long long received;    /* tuples taken by the receives */
    unsigned long long bad;         /* a wrong value, key or a second copy */
    int                timed_out;   /* a wait passed its deadline */
};

/* Block level: one receive that checks each tuple where it lies and marks
 * its key in `seen` (a bit a key of this rank's keys). The lanes of a warp
 * that mark bits of one word join them first, so that the word takes one
 * atomic instead of one a lane (consecutive keys share a word); the tuples
 * are counted once a call. */
__device__ static int receive(const mgi_dev_ch_t *h, uint32_t *seen,
                              int me, unsigned nranks, counts *c)
{
    const int r = mgi_dev_recv_each<MGI_DEV_BLOCK>(h, RECV_MAX,
        [&](const char *p, unsigned len) {
            const tuple *t   = (const tuple*)p;
            const uint64_t k = t->key;
            uint32_t *word, bit, bits;
            unsigned same;

            if ((len != sizeof(tuple)) || (k % nranks != (uint64_t)me) ||
                (t->value != value_of(k))) {
                atomicAdd(&c->bad, 1ull);
                return;
            }
            word = &seen[(k / nranks) / 32];
            bit  = 1u << ((k / nranks) % 32);
            same = __match_any_sync(__activemask(), (unsigned long long)word);
            bits = __reduce_or_sync(same, bit);
            if (__popc(same) != __popc(bits)) {
                atomicAdd(&c->bad, 1ull);       /* twice in this round */
            }
            if (((threadIdx.x % 32) == (unsigned)(__ffs(same) - 1)) &&
                (atomicOr(word, bits) & bits)) {
                atomicAdd(&c->bad, 1ull);       /* arrived twice */
            }
        });

    if ((r > 0) && (threadIdx.x == 0)) {
        atomicAdd(&c->received, (unsigned long long)r / sizeof(tuple));
    }
    return r;
}

/* Block level: past the deadline? The same answer in every thread (each
 * read the clock for itself), so the block leaves its loop together. */
__device__ static int give_up(uint64_t deadline)
{
    return __syncthreads_or(mgi_dev_past(deadline));
}

/* Every user block: tiles of keys first + [block's tiles], sent, then the
 * flush and the receives until EOF. TYPED: the typed tile send. Registers
 * for three blocks an SM (40 a thread; the typed kernel spills a few, the
 * generic fallback more): the stores across
 * the link and the receives wait on memory, and more warps hide it; one
 * block an SM moved about 0.63 of three's bytes, two about 0.93. Both
 * kernels launch the same blocks, as the endpoint is created for them
 * before the channel says which one runs. */
template <bool TYPED>
__global__ void __launch_bounds__(THREADS, 3)
shuffle_kernel(mgi_dev_ch_t h, uint64_t first, uint64_t n, int me,
               unsigned nranks, uint32_t *seen, counts *c)
{
    constexpr unsigned TILE = TYPED ? TILE_TYPED : TILE_GENERIC;
    __shared__ tuple tile[TILE];
    __shared__ uint32_t flush_state;
    const uint64_t deadline = mgi_dev_deadline(&h);
    uint64_t base, cnt, i;
    unsigned off, took;
    int r = 0;

    for (base = (uint64_t)blockIdx.x * TILE; base < n;
         base += (uint64_t)gridDim.x * TILE) {
        cnt = min((uint64_t)TILE, n - base);
        for (i = threadIdx.x; i < cnt; i += blockDim.x) {
            tile[i].key   = first + base + i;
            tile[i].value = value_of(first + base + i);
        }
        __syncthreads();
        for (off = 0; off < cnt; off += took) {
            took = TYPED ?
                   mgi_dev_send_tile_of<MGI_DEV_BLOCK, sizeof(tuple)>(
                           &h, tile + off, (unsigned)cnt - off,
                           MGI_DEV_DST_AUTO) :
                   mgi_dev_send_tile<MGI_DEV_BLOCK>(&h, tile + off,
                                                    (unsigned)cnt - off,
                                                    MGI_DEV_DST_AUTO);
            if (took == 0) {
                /* no room: the destinations' rings drain as we receive */
                r = receive(&h, seen, me, nranks, c);
                if ((r == 0) && give_up(deadline)) {
                    goto timed_out;
                }
            }
        }
        __syncthreads();    /* the tile is rebuilt next */
    }
    if (threadIdx.x == 0) {
        flush_state = 0;
    }
    __syncthreads();
    while (!mgi_dev_flush_nb<MGI_DEV_BLOCK>(&h, &flush_state)) {
        r = receive(&h, seen, me, nranks, c);
        if ((r == 0) && give_up(deadline)) {
            goto timed_out;
        }
    }
    while (r != MGI_DEV_EOF) {
        r = receive(&h, seen, me, nranks, c);
        if ((r == 0) && give_up(deadline)) {
            goto timed_out;
        }
    }
    return;

timed_out:
    if (threadIdx.x == 0) {
        c->timed_out = 1;
        mgi_dev_report(&h, MGI_DEV_ERR_KERNEL_TIMEOUT);
    }
}

#define CHECK_CUDA(_call) \
    do { \
        cudaError_t _e = (_call); \
        if (_e != cudaSuccess) { \
            fprintf(stderr, "shuffle rank %d: %s: %s: %s\n", rank, #_call, \
                    cudaGetErrorName(_e), cudaGetErrorString(_e)); \
            return 1; \
        } \
    } while (0)

#define CHECK_MGI(_call) \
    do { \
        ucs_status_t _s = (_call); \
        if (_s != UCS_OK) { \
            fprintf(stderr, "shuffle rank %d: %s: %s\n", rank, #_call, \
                    ucs_status_string(_s)); \
            return 1; \
        } \
    } while (0)

static double now_s(void)
{
    struct timeval tv;

    gettimeofday(&tv, NULL);
    return tv.tv_sec + tv.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    const uint64_t n = (argc > 1) ? strtoull(argv[1], NULL, 0) : 4194304;
    mgi_context_params_t cp;
    mgi_ep_params_t ep_params = {};
    mgi_ch_params_t chp       = {};
    mgi_schema_t schema       = {};
    mgi_context_h ctx;
    mgi_ep_id_t ep;
    mgi_ch_id_t ch;
    mgi_dev_ch_t h;
    cudaStream_t stream;
    std::vector<mgi_ep_id_t> eps;
    std::vector<uint32_t> seen_h;
    uint32_t *seen;
    counts *c, c_h;
    unsigned blocks, generic_blocks, nranks, missing = 0;
    int rank = -1, ngpu = 0, typed, ok, all_ok;
    double t0, t1;
    char why[320];
    uint64_t k, mine;

    /* the sorter is a persistent kernel: a kernel loaded lazily beside it
     * may wait for it forever, so every kernel loads up front */
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);

    mgi_context_params_init(&cp);   /* MGI_BOOTSTRAP, MGI_RANK, MGI_NRANKS */
    CHECK_MGI(mgi_context_create(&cp, &ctx));
    rank   = mgi_context_rank(ctx);
    nranks = (unsigned)mgi_context_size(ctx);
    CHECK_CUDA(cudaGetDeviceCount(&ngpu));
    CHECK_CUDA(cudaSetDevice(rank % ngpu));

    /* as many user blocks as are resident beside the endpoint's sorter,
     * for either kernel (which one runs is known once the channel is) */
    CHECK_MGI(mgi_context_user_blocks(ctx, rank % ngpu,
                                      (const void*)shuffle_kernel<true>,
                                      THREADS, 0, &blocks));
    CHECK_MGI(mgi_context_user_blocks(ctx, rank % ngpu,
                                      (const void*)shuffle_kernel<false>,
                                      THREADS, 0, &generic_blocks));
    blocks = std::min(blocks, generic_blocks);
    ep_params.device = rank % ngpu;
    ep_params.blocks = blocks;
    CHECK_MGI(mgi_ep_create(ctx, &ep_params, &ep));

    /* every rank's endpoint sends to every rank's: all to all */
    for (unsigned r = 0; r < nranks; ++r) {
        eps.push_back(MGI_EP_ID(r, 0));
    }
    schema.nattrs       = 2;
    schema.attr_size[0] = sizeof(uint64_t);  /* key */
    schema.attr_size[1] = sizeof(uint64_t);  /* value */
    chp.src      = eps.data();
    chp.nsrc     = nranks;
    chp.dst      = eps.data();
    chp.ndst     = nranks;
    chp.schema   = &schema;
    chp.part_key = 0;                        /* destination: key % ranks */
    CHECK_MGI(mgi_ch_create(ctx, &chp, &ch));
    CHECK_MGI(mgi_ch_device_handle(ctx, ch, ep, &h));
    typed = mgi_ch_tile_fits(ctx, ch, ep, sizeof(tuple), MGI_DEV_TILE_ANY,
                             MGI_DST_AUTO);

    /* this rank's keys: [rank n, rank n + n); it receives key % ranks ==
     * rank of every rank's, one bit each */
    mine = (n * nranks + nranks - 1 - rank) / nranks;
    seen_h.assign((mine + 31) / 32 + 1, 0);
    CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaMalloc((void**)&seen, seen_h.size() * sizeof(uint32_t)));
    CHECK_CUDA(cudaMalloc((void**)&c, sizeof(*c)));
    CHECK_CUDA(cudaMemsetAsync(seen, 0, seen_h.size() * sizeof(uint32_t),
                               stream));
    CHECK_CUDA(cudaMemsetAsync(c, 0, sizeof(*c), stream));
    CHECK_CUDA(cudaStreamSynchronize(stream));

    /* every rank starts its clock together (an allgather is a barrier), so
     * that one rank's rate does not count the other's start-up */
    {
        std::vector<int> ready(nranks);
        CHECK_MGI(mgi_context_allgather(ctx, &rank, ready.data(),
                                        sizeof(rank)));
    }
    t0 = now_s();
    if (typed) {
        shuffle_kernel<true><<<blocks, THREADS, 0, stream>>>(
                h, (uint64_t)rank * n, n, rank, nranks, seen, c);
    } else {
        shuffle_kernel<false><<<blocks, THREADS, 0, stream>>>(
                h, (uint64_t)rank * n, n, rank, nranks, seen, c);
    }
    CHECK_CUDA(cudaGetLastError());
    /* never cudaDeviceSynchronize while an endpoint lives: the sorter
     * kernel never ends */
    CHECK_CUDA(cudaStreamSynchronize(stream));
    t1 = now_s();
    CHECK_CUDA(cudaMemcpy(&c_h, c, sizeof(c_h), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(seen_h.data(), seen,
                          seen_h.size() * sizeof(uint32_t),
                          cudaMemcpyDeviceToHost));
    for (k = 0; k < mine; ++k) {
        missing += !((seen_h[k / 32] >> (k % 32)) & 1);
    }
    ok = !c_h.timed_out && (c_h.bad == 0) && (missing == 0) &&
         (c_h.received == mine);
    if (c_h.timed_out &&
        (mgi_context_device_error(ctx, why, sizeof(why)) != 0)) {
        fprintf(stderr, "shuffle rank %d: %s\n", rank, why);
    }
    printf("shuffle rank %d: %s: %llu of %llu tuples received, %llu bad, "
           "%u missing; %u blocks x %d threads, %s tile send; %.3f s, "
           "%.1f GB/s sent, %.1f GB/s across per rank\n", rank,
           ok ? "PASS" : "FAIL", c_h.received, (unsigned long long)mine,
           c_h.bad, missing, blocks, THREADS, typed ? "typed" : "generic",
           t1 - t0, n * sizeof(tuple) / (t1 - t0) / 1e9,
           (double)n * (nranks - 1) / nranks * sizeof(tuple) /
           (t1 - t0) / 1e9);

    /* every rank agrees on the answer before the collective deletes */
    all_ok = ok;
    {
        std::vector<int> all(nranks);
        CHECK_MGI(mgi_context_allgather(ctx, &ok, all.data(), sizeof(ok)));
        for (unsigned r = 0; r < nranks; ++r) {
            all_ok &= all[r];
        }
    }
    CHECK_MGI(mgi_ch_delete(ctx, ch));
    CHECK_MGI(mgi_ep_delete(ctx, ep));
    cudaFree(seen);
    cudaFree(c);
    cudaStreamDestroy(stream);
    mgi_context_destroy(ctx);
    return all_ok ? 0 : 1;
}

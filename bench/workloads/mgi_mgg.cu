/**
 * mgi_mgg: MGG's GNN neighbour aggregation (../shared/papers/
 * mgg-gnn-pipeline.txt) over MGI regions. out[v] = sum of emb[u] over v's
 * in-neighbours u, embeddings of dimension --dim, on an R-MAT power-law
 * graph (mgi_graph.h, deterministic from --seed) split over --gpus GPUs
 * by edges. Every variant runs on the same graph in one invocation and its
 * answer is checked against the CPU reference, exactly (integer-valued
 * embeddings):
 *
 *   region  each GPU's embedding rows registered as a region; one kernel,
 *           a warp per neighbour partition (MGG's warp-based mapping):
 *           local partitions read the local rows, remote ones fetch their
 *           rows with mgi_dev_region_get_warp (a load over NVLink where
 *           the peer is mapped, the proxy otherwise) into shared memory,
 *           remote and local partitions interleaved (--dist) so warps of
 *           one SM overlap fetches with aggregation (MGG's pipeline)
 *   proxy   the same with every remote row through the regions' proxy
 *           and UCP (MGI_REGION_F_PROXY_ONLY), the path across hosts
 *   cache   each distinct remote row fetched once (a power-law graph's
 *           hubs are read by many partitions), in runs of consecutive
 *           rows, by a kernel of warp gets into a local cache on a second
 *           stream while the local partitions aggregate; then the remote
 *           partitions aggregate from the cache
 *   nccl    all-gather of the embeddings first (grouped ncclSend /
 *           ncclRecv), then the same kernel on the full local table
 *   uvm     one process, one managed table, each part preferred on its
 *           GPU and accessed by all, the same kernel on every GPU; run
 *           only where the table fits every GPU's free memory (an
 *           oversubscribed managed table can hang a GPU)
 *   single  the whole table and graph on GPU 0
 *
 * --cpu: the region variant's code on host threads over host memory (the
 * thread-level region calls through the proxy, UCP over UCX_TLS), checked
 * the same way: make check runs it.
 *
 * Usage: mgi_mgg [--gpus G] [--scale S] [--deg D] [--dim D] [--seed S]
 *                [--ps P] [--dist K] [--iters N]
 *                [--variant region,proxy,cache,nccl,uvm,single|all] [--cpu]
 * --dim: a multiple of 4 from 4 to 256 (the kernel reads rows in 16-byte
 * loads).
 * Output: one line per variant: median ms over the iterations (the slowest
 * GPU's), GB of remote rows per second, checked yes / NO.
 */
#include "mgi_graph.h"
#include "mgi_region_wl.h"

#include <mgi/mgi_region_device.cuh>

#include <cuda_runtime.h>
#include <limits.h>
#include <pthread.h>

#define MGG_WARPS     8        /* warps per block */
#define MGG_MAX_DIM   256
#define MGG_MAX_PS    32
#define MGG_CPU_THREADS 4      /* --cpu: host threads a rank */

typedef struct mgg_opts {
    int      gpus, scale, deg, dim, ps, dist, iters, cpu;
    uint64_t seed;
    char     variant[128];
} mgg_opts_t;

typedef struct mgg_shared {
    mgg_opts_t  o;
    mgi_graph_t g;
    uint32_t    lo[MGI_GRAPH_MAX_PARTS + 1];
} mgg_shared_t;

/* ------------------------------------------------------------- kernels */

__global__ void mgg_fill(float *rows, uint32_t v0, uint32_t nv, int dim,
                         uint64_t seed)
{
    const uint64_t n = (uint64_t)nv * dim;

    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        rows[i] = mgi_graph_emb(seed, v0 + (uint32_t)(i / dim),
                                (uint32_t)(i % dim));
    }
}

__device__ static unsigned mgg_owner(const uint32_t *lo, unsigned n,
                                     uint32_t v)
{
    unsigned a = 0, b = n - 1, m;

    while (a < b) {
        m = (a + b + 1) / 2;
        if (lo[m] <= v) {
            a = m;
        } else {
            b = m - 1;
        }
    }
    return a;
}

/* The cache variant's fetch: warp k gets run k of the distinct remote
 * rows (grid-stride) into cache, at the rows' places there; a warp whose
 * rows went through the proxy waits for them (quiet) */
__global__ void mgg_fetch(mgi_dev_region_t h, const uint32_t *rows,
                          const uint32_t *run, uint64_t nruns,
                          const uint32_t *lo, unsigned nparts, int dim,
                          float *cache, int *err)
{
    const uint64_t warps = (uint64_t)gridDim.x * (blockDim.x / 32);
    const size_t row_bytes = (size_t)dim * sizeof(float);
    ucs_status_t st = UCS_OK;
    int proxied = 0;

    for (uint64_t k = blockIdx.x * (uint64_t)(blockDim.x / 32) +
                      threadIdx.x / 32;
         (k < nruns) && (st == UCS_OK); k += warps) {
        const uint32_t a = run[k], u = rows[a];
        const unsigned o = mgg_owner(lo, nparts, u);

        proxied |= (h.ptrs[o] == NULL);
        st = mgi_dev_region_get_warp(&h, cache + (size_t)a * dim, o,
                                     (uint64_t)(u - lo[o]) * row_bytes,
                                     (uint64_t)(run[k + 1] - a) * row_bytes);
    }
    if ((st == UCS_OK) && proxied) {
        st = mgi_dev_region_quiet_warp(&h);
    }
    if ((st != UCS_OK) && (threadIdx.x % 32 == 0)) {
        atomicExch(err, (int)st);
    }
}

/* A warp's share of one output row: lane l holds floats
 * 4 * (l + 32 * j) + c of it in acc[4 * j + c] (dim a multiple of 4) */
#define MGG_LANE_F4 (MGG_MAX_DIM / 128)   /* float4s a lane, at most */
#define MGG_UNROLL  4   /* rows whose loads go out before their sums */

__device__ static inline void mgg_add(float *acc, const float4 *x)
{
#pragma unroll
    for (int j = 0; j < MGG_LANE_F4; ++j) {
        acc[4 * j]     += x[j].x;
        acc[4 * j + 1] += x[j].y;
        acc[4 * j + 2] += x[j].z;
        acc[4 * j + 3] += x[j].w;
    }
}

__device__ static inline void mgg_load(float4 *x, const float *row, int n4,
                                       unsigned lane)
{
    const float4 *r = (const float4*)row;

#pragma unroll
    for (int j = 0; j < MGG_LANE_F4; ++j) {
        const int q = lane + 32 * j;
        x[j] = (q < n4) ? r[q] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
}

/* acc += rows row_of(0) .. row_of(cnt - 1), dim floats each, 16-byte
 * aligned: 16-byte loads, MGG_UNROLL rows' loads out at once (a warp waits
 * for memory once per MGG_UNROLL rows, not once a row) */
template <typename R>
__device__ static inline void mgg_sum(float *acc, uint32_t cnt, int dim,
                                      unsigned lane, R row_of)
{
    const int n4 = dim / 4;
    float4 x[MGG_UNROLL][MGG_LANE_F4];
    uint32_t i = 0;

    for (; i + MGG_UNROLL <= cnt; i += MGG_UNROLL) {
#pragma unroll
        for (int u = 0; u < MGG_UNROLL; ++u) {
            mgg_load(x[u], row_of(i + u), n4, lane);
        }
#pragma unroll
        for (int u = 0; u < MGG_UNROLL; ++u) {
            mgg_add(acc, x[u]);
        }
    }
    for (; i < cnt; ++i) {
        mgg_load(x[0], row_of(i), n4, lane);
        mgg_add(acc, x[0]);
    }
}

/* out[0..3] += a[0..3]; a vertex's neighbour partitions add into its row
 * from several warps: one 16-byte atomic where the GPU has them (compute
 * capability 9.0), four otherwise */
__device__ static inline void mgg_add_out(float *out, const float *a)
{
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900)
    atomicAdd((float4*)out, make_float4(a[0], a[1], a[2], a[3]));
#else
    atomicAdd(&out[0], a[0]);
    atomicAdd(&out[1], a[1]);
    atomicAdd(&out[2], a[2]);
    atomicAdd(&out[3], a[3]);
#endif
}

/* Which partitions a launch of mgg_aggregate takes */
enum {
    MGG_PASS_ALL    = 0,
    MGG_PASS_LOCAL  = 1,   /* the cache variant's first pass */
    MGG_PASS_REMOTE = 2    /* its second: remote rows from the cache */
};

/* One warp per neighbour partition (grid-stride). full != NULL: every
 * row is read there (nccl, uvm, single); else local rows from h.base, and
 * remote rows from cache (row cslot[i] for neighbour slot i) where given,
 * else fetched with warp gets into this warp's shared slots. */
__global__ void mgg_aggregate(mgi_dev_region_t h, const float *full,
                              const mgi_graph_np_t *np, uint64_t nnp,
                              const uint32_t *nbr, const uint32_t *lo,
                              unsigned nparts, unsigned me, int dim, int ps,
                              float *gstage, const float *cache,
                              const uint32_t *cslot, int pass, float *out,
                              int *err)
{
    extern __shared__ __align__(16) float mgg_slots[];
    const unsigned lane = threadIdx.x % 32, wib = threadIdx.x / 32;
    const uint64_t warps = (uint64_t)gridDim.x * MGG_WARPS;
    /* a mapped row lands in shared memory; a proxied one in this warp's
     * global staging slots (the proxy's UCP get cannot reach shared
     * memory) */
    float *slot = mgg_slots + (size_t)wib * ps * dim;
    float *gslot = (gstage == NULL) ? NULL :
                   gstage + ((size_t)blockIdx.x * MGG_WARPS + wib) * ps * dim;
    const uint32_t v0 = lo[me];
    float acc[4 * MGG_LANE_F4];

    for (uint64_t k = blockIdx.x * (uint64_t)MGG_WARPS + wib; k < nnp;
         k += warps) {
        const mgi_graph_np_t p = np[k];
        ucs_status_t st = UCS_OK;
        int proxied = 0;

        if (((pass == MGG_PASS_LOCAL) && p.remote) ||
            ((pass == MGG_PASS_REMOTE) && !p.remote)) {
            continue;
        }
#pragma unroll
        for (int j = 0; j < 4 * MGG_LANE_F4; ++j) {
            acc[j] = 0;
        }
        if ((cache != NULL) && p.remote) {
            const uint32_t *cs = cslot + p.start;
            mgg_sum(acc, p.cnt, dim, lane, [&](uint32_t i) {
                return cache + (size_t)cs[i] * dim;
            });
        } else if ((full != NULL) || !p.remote) {
            const float *base = (full != NULL) ? full :
                                (const float*)h.base;
            const uint32_t off = (full != NULL) ? 0 : v0;
            const uint32_t *nb  = nbr + p.start;
            mgg_sum(acc, p.cnt, dim, lane, [&](uint32_t i) {
                return base + (size_t)(nb[i] - off) * dim;
            });
        } else {
            /* the partition's remote rows: their gets go out together */
            uint32_t via = 0;   /* bit i: row i came through the proxy */
            for (uint32_t i = 0; (i < p.cnt) && (st == UCS_OK); ++i) {
                const uint32_t u = nbr[p.start + i];
                const unsigned o = mgg_owner(lo, nparts, u);
                const int px = (h.ptrs[o] == NULL);
                float *dst = (px ? gslot : slot) + (size_t)i * dim;
                if (px && (gslot == NULL)) {
                    st = UCS_ERR_UNREACHABLE;
                    break;
                }
                via     |= (uint32_t)px << i;
                proxied |= px;
                st = mgi_dev_region_get_warp(&h, dst, o,
                                             (uint64_t)(u - lo[o]) * dim *
                                             sizeof(float),
                                             dim * sizeof(float));
            }
            if ((st == UCS_OK) && proxied) {
                st = mgi_dev_region_quiet_warp(&h);
            }
            __syncwarp();
            mgg_sum(acc, p.cnt, dim, lane, [&](uint32_t i) {
                return (((via >> i) & 1) ? gslot : slot) + (size_t)i * dim;
            });
            __syncwarp();
            if ((st != UCS_OK) && (lane == 0)) {
                atomicExch(err, (int)st);
            }
        }
#pragma unroll
        for (int j = 0; j < MGG_LANE_F4; ++j) {
            const int d = 4 * (lane + 32 * j);
            if (d < dim) {
                mgg_add_out(&out[(size_t)(p.v - v0) * dim + d], &acc[4 * j]);
            }
        }
    }
}

/* ------------------------------------------------------------- helpers */

typedef struct mgg_dev_work {
    mgi_graph_np_t *np;
    uint32_t       *nbr;
    uint32_t       *lo;
    uint64_t       nnp;
} mgg_dev_work_t;

static int mgg_work_to_dev(const mgi_graph_work_t *w, const uint32_t *lo,
                           unsigned nparts, mgg_dev_work_t *d)
{
    RWL_CUDA(cudaMalloc(&d->np, (w->nnp + 1) * sizeof(*d->np)));
    RWL_CUDA(cudaMalloc(&d->nbr, (w->nnbr + 1) * sizeof(*d->nbr)));
    RWL_CUDA(cudaMalloc(&d->lo, (nparts + 1) * sizeof(*d->lo)));
    RWL_CUDA(cudaMemcpy(d->np, w->np, w->nnp * sizeof(*d->np),
                        cudaMemcpyHostToDevice));
    RWL_CUDA(cudaMemcpy(d->nbr, w->nbr, w->nnbr * sizeof(*d->nbr),
                        cudaMemcpyHostToDevice));
    RWL_CUDA(cudaMemcpy(d->lo, lo, (nparts + 1) * sizeof(*d->lo),
                        cudaMemcpyHostToDevice));
    d->nnp = w->nnp;
    return 0;
}

static void mgg_work_free_dev(mgg_dev_work_t *d)
{
    cudaFree(d->np);
    cudaFree(d->nbr);
    cudaFree(d->lo);
}

static size_t mgg_smem(const mgg_opts_t *o)
{
    return (size_t)MGG_WARPS * o->ps * o->dim * sizeof(float);
}

/* Blocks of MGG_WARPS warps for n items a warp each (grid-stride): enough
 * for every item, at most per_sm per SM */
static int mgg_blocks(uint64_t n, unsigned per_sm, unsigned *blocks_p)
{
    int sms = 0, dev = 0;

    RWL_CUDA(cudaGetDevice(&dev));
    RWL_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                    dev));
    *blocks_p = (unsigned)std::min<uint64_t>((n + MGG_WARPS - 1) /
                                             MGG_WARPS + 1,
                                             (uint64_t)sms * per_sm);
    return 0;
}

/* The aggregation: at most 8 blocks per SM (the staging slots of the
 * proxied path are sized for that many); the cache variant's fetch: 2,
 * the rest of the GPU left to the local partitions beside it */
#define MGG_AGG_PER_SM   8
#define MGG_FETCH_PER_SM 2

static int mgg_launch_pass(const mgg_opts_t *o, const mgi_dev_region_t *h,
                           const float *full, const mgg_dev_work_t *d,
                           unsigned nparts, unsigned me, float *gstage,
                           const float *cache, const uint32_t *cslot,
                           int pass, float *out, int *err, cudaStream_t s)
{
    unsigned blocks;

    if (mgg_blocks(d->nnp, MGG_AGG_PER_SM, &blocks) != 0) {
        return -1;
    }
    /* the warps' shared slots only where remote rows are fetched into
     * them (region, proxy): the other launches fit more blocks an SM */
    const size_t smem = ((full == NULL) && (cache == NULL) &&
                         (pass == MGG_PASS_ALL)) ? mgg_smem(o) : 0;

    mgg_aggregate<<<blocks, MGG_WARPS * 32, smem, s>>>(
        *h, full, d->np, d->nnp, d->nbr, d->lo, nparts, me, o->dim, o->ps,
        gstage, cache, cslot, pass, out, err);
    RWL_CUDA(cudaGetLastError());
    return 0;
}

static int mgg_launch(const mgg_opts_t *o, const mgi_dev_region_t *h,
                      const float *full, const mgg_dev_work_t *d,
                      unsigned nparts, unsigned me, float *gstage,
                      float *out, int *err, cudaStream_t s)
{
    return mgg_launch_pass(o, h, full, d, nparts, me, gstage, NULL, NULL,
                           MGG_PASS_ALL, out, err, s);
}

/* The rows [v0, v1) of out against the reference; prints the first
 * difference. */
static int mgg_check(const mgg_shared_t *sh, uint32_t v0, uint32_t v1,
                     const float *out, const char *variant, int rank)
{
    uint32_t first = 0;
    uint64_t bad = mgi_graph_check(&sh->g, sh->o.seed, sh->o.dim, v0, v1,
                                   out, &first);

    if (bad != 0) {
        fprintf(stderr, "mgi_mgg rank %d: %s: %llu of %u rows wrong, the "
                "first vertex %u\n", rank, variant, (unsigned long long)bad,
                v1 - v0, first);
    }
    return bad == 0;
}

static void mgg_line(const mgg_shared_t *sh, const char *variant, double ms,
                     double remote_bytes, int ok)
{
    printf("mgg variant=%-6s gpus=%d nv=%u ne=%llu dim=%d ps=%d dist=%d "
           "ms=%.3f remote_GBps=%.1f checked=%s\n", variant, sh->o.gpus,
           sh->g.nv, (unsigned long long)sh->g.ne, sh->o.dim, sh->o.ps,
           sh->o.dist, ms, (ms > 0) ? remote_bytes / ms / 1e6 : 0.0,
           ok ? "yes" : "NO");
    fflush(stdout);
}

/* ------------------------------------------------------- CPU check mode */

typedef struct mgg_cpu_arg {
    const mgg_shared_t *sh;
    const mgi_graph_work_t *w;
    mgi_dev_region_t h;
    unsigned me, t, nt;
    float *out;
    int failed;
    /* the cache variant: 1: fetch runs k % nt == t of c into cache; 2:
     * aggregate, remote partitions from cache; 0: every row by a get */
    int phase;
    const mgi_graph_cache_t *c;
    float *cache;
} mgg_cpu_arg_t;

static void mgg_cpu_fail(mgg_cpu_arg_t *x, const char *what, uint64_t k,
                         ucs_status_t st)
{
    fprintf(stderr, "mgi_mgg rank %u thread %u: %s %llu: %s\n", x->me, x->t,
            what, (unsigned long long)k, ucs_status_string(st));
    x->failed = 1;
}

/* the cache variant's fetch on a host thread: its runs of the distinct
 * remote rows, each by one get */
static void mgg_cpu_fetch(mgg_cpu_arg_t *x)
{
    const int dim = x->sh->o.dim;
    const uint32_t *lo = x->sh->lo;
    ucs_status_t st = UCS_OK;

    for (uint64_t k = x->t; (k < x->c->nruns) && (st == UCS_OK);
         k += x->nt) {
        const uint32_t a = x->c->run[k], u = x->c->rows[a];
        const unsigned q = mgi_graph_owner(lo, x->sh->o.gpus, u);
        st = mgi_dev_region_get(&x->h, x->cache + (size_t)a * dim, q,
                                (uint64_t)(u - lo[q]) * dim * 4,
                                (uint64_t)(x->c->run[k + 1] - a) * dim * 4);
        if (st != UCS_OK) {
            mgg_cpu_fail(x, "run", k, st);
        }
    }
    if (st == UCS_OK) {
        st = mgi_dev_region_quiet(&x->h);
        if (st != UCS_OK) {
            mgg_cpu_fail(x, "quiet after run", x->c->nruns, st);
        }
    }
}

/* the kernel's work on a host thread: the partitions of the vertices
 * v % nt == t (no two threads add into one row) */
static void *mgg_cpu_thread(void *a)
{
    mgg_cpu_arg_t *x = (mgg_cpu_arg_t*)a;
    const int dim = x->sh->o.dim;
    const uint32_t *lo = x->sh->lo;
    std::vector<float> slot((size_t)MGG_MAX_PS * dim);

    if (x->phase == 1) {
        mgg_cpu_fetch(x);
        return NULL;
    }
    for (uint64_t k = 0; k < x->w->nnp; ++k) {
        const mgi_graph_np_t p = x->w->np[k];
        float *o = x->out + (size_t)(p.v - lo[x->me]) * dim;
        ucs_status_t st = UCS_OK;

        if (p.v % x->nt != x->t) {
            continue;
        }
        if ((x->phase == 2) && p.remote) {
            for (uint32_t i = 0; i < p.cnt; ++i) {
                const float *row = x->cache +
                                   (size_t)x->c->slot[p.start + i] * dim;
                for (int d = 0; d < dim; ++d) {
                    o[d] += row[d];
                }
            }
            continue;
        }
        for (uint32_t i = 0; (i < p.cnt) && (st == UCS_OK); ++i) {
            const uint32_t u = x->w->nbr[p.start + i];
            const unsigned q = mgi_graph_owner(lo, x->sh->o.gpus, u);
            st = mgi_dev_region_get(&x->h, &slot[(size_t)i * dim], q,
                                    (uint64_t)(u - lo[q]) * dim * 4,
                                    dim * 4);
        }
        if (st == UCS_OK) {
            st = mgi_dev_region_quiet(&x->h);
        }
        if (st != UCS_OK) {
            mgg_cpu_fail(x, "partition", k, st);
            return NULL;
        }
        for (uint32_t i = 0; i < p.cnt; ++i) {
            for (int d = 0; d < dim; ++d) {
                o[d] += slot[(size_t)i * dim + d];
            }
        }
    }
    return NULL;
}

/* Threads of mgg_cpu_thread in phase, joined: whether none failed */
static int mgg_cpu_threads(mgg_cpu_arg_t *args, unsigned nt, int phase)
{
    pthread_t th[MGG_CPU_THREADS];
    int ok = 1;

    unsigned started;

    for (started = 0; started < nt; ++started) {
        args[started].phase  = phase;
        args[started].failed = 0;
        if (pthread_create(&th[started], NULL, mgg_cpu_thread,
                           &args[started]) != 0) {
            fprintf(stderr, "mgi_mgg rank %u: cannot start host thread "
                    "%u of %u\n", args[started].me, started, nt);
            ok = 0;
            break;
        }
    }
    for (unsigned t = 0; t < started; ++t) {
        pthread_join(th[t], NULL);
        ok &= !args[t].failed;
    }
    return ok;
}

/* --cpu: the region variant ("cpu"), and where listed the cache variant
 * ("cpu-cache": the distinct remote rows fetched first, then the
 * aggregation with the remote partitions from them) */
static int mgg_rank_cpu(mgi_wl_boot_t *boot, mgg_shared_t *sh,
                        mgi_context_h ctx, const mgi_graph_work_t *w)
{
    const unsigned me = boot->rank, nt = MGG_CPU_THREADS;
    const uint32_t nown = sh->lo[me + 1] - sh->lo[me];
    const size_t nout = (size_t)nown * sh->o.dim;
    std::vector<float> rows(nout + 1), out(nout + 1), cache;
    mgi_region_params_t rp = {};
    mgg_cpu_arg_t args[MGG_CPU_THREADS];
    mgi_graph_cache_t c = {};
    mgi_region_h reg;
    double t0, ms;
    int ok = 1, all_ok = 1;

    for (size_t i = 0; i < nout; ++i) {
        rows[i] = mgi_graph_emb(sh->o.seed, sh->lo[me] + i / sh->o.dim,
                                i % sh->o.dim);
    }
    rp.addr   = rows.data();
    rp.length = nout * sizeof(float);
    if (mgi_region_register(ctx, &rp, &reg) != UCS_OK) {
        return -1;
    }
    if (rwl_listed(sh->o.variant, "cache")) {
        if (mgi_graph_cache_build(w, sh->lo, sh->o.gpus, &c) != 0) {
            return -1;
        }
        cache.resize(c.nrows * sh->o.dim + 1);
    }
    for (unsigned t = 0; t < nt; ++t) {
        args[t] = {sh, w, {}, me, t, nt, out.data(), 0, 0, &c,
                   cache.data()};
        ok &= (mgi_region_device_handle(reg, &args[t].h) == UCS_OK);
    }
    for (int v = 0; v < 2; ++v) {
        const char *name = v ? "cpu-cache" : "cpu";

        if (v && !rwl_listed(sh->o.variant, "cache")) {
            continue;
        }
        std::fill(out.begin(), out.end(), 0.0f);
        mgi_wl_barrier(boot);
        t0 = rwl_now_ms();
        if (v) {
            ok &= mgg_cpu_threads(args, nt, 1) &&
                  mgg_cpu_threads(args, nt, 2);
        } else {
            ok &= mgg_cpu_threads(args, nt, 0);
        }
        ms  = rwl_now_ms() - t0;
        ok &= mgg_check(sh, sh->lo[me], sh->lo[me + 1], out.data(), name,
                        boot->rank);
        ok  = rwl_all(boot, ok);
        ms  = rwl_max(boot, ms);
        if (me == 0) {
            mgg_line(sh, name, ms,
                     v ? (double)c.nrows * sh->o.dim * sizeof(float) : 0, ok);
        }
        all_ok &= ok;
        ok      = 1;
    }
    mgi_wl_barrier(boot);
    mgi_graph_cache_free(&c);
    if (mgi_region_deregister(reg) != UCS_OK) {
        all_ok = 0;
    }
    return all_ok ? 0 : -1;
}

/* -------------------------------------------------------- GPU variants */

static int mgg_nccl_allgather(mgi_wl_nccl_t *n, ncclComm_t comm,
                              const mgg_shared_t *sh, const float *mine,
                              float *full, unsigned me, cudaStream_t s)
{
    const size_t row = sh->o.dim;

    if (n->GroupStart() != ncclSuccess) {
        return -1;
    }
    for (int p = 0; p < sh->o.gpus; ++p) {
        if ((unsigned)p == me) {
            continue;
        }
        n->Send(mine, (size_t)(sh->lo[me + 1] - sh->lo[me]) * row, ncclFloat,
                p, comm, s);
        n->Recv(full + (size_t)sh->lo[p] * row,
                (size_t)(sh->lo[p + 1] - sh->lo[p]) * row, ncclFloat, p, comm,
                s);
    }
    if (n->GroupEnd() != ncclSuccess) {
        return -1;
    }
    RWL_CUDA(cudaMemcpyAsync(full + (size_t)sh->lo[me] * row, mine,
                             (size_t)(sh->lo[me + 1] - sh->lo[me]) * row *
                             sizeof(float), cudaMemcpyDeviceToDevice, s));
    return 0;
}

/* A GPU variant in one invocation: launch(s) iters + 1 times between all
 * ranks' barriers (the first warms up), timed by events on s; then its
 * answer checked on every rank and its line (median of the slowest
 * rank's times). 1: right, 0: wrong, -1: a call failed. */
template <typename L>
static int mgg_timed(mgi_wl_boot_t *boot, const mgg_shared_t *sh,
                     const char *name, double remote_bytes, float *out,
                     int *err, cudaStream_t s, L launch)
{
    const unsigned me = boot->rank;
    const size_t own_bytes = (size_t)(sh->lo[me + 1] - sh->lo[me]) *
                             sh->o.dim * sizeof(float);
    std::vector<float> host_out(own_bytes / sizeof(float) + 1);
    std::vector<double> t;
    cudaEvent_t e0, e1;
    int herr = 0, ok = 1;
    float ms;

    RWL_CUDA(cudaEventCreate(&e0));
    RWL_CUDA(cudaEventCreate(&e1));
    for (int it = 0; it < sh->o.iters + 1; ++it) {
        RWL_CUDA(cudaMemsetAsync(out, 0, own_bytes, s));
        RWL_CUDA(cudaMemsetAsync(err, 0, sizeof(int), s));
        RWL_CUDA(cudaStreamSynchronize(s));
        mgi_wl_barrier(boot);
        RWL_CUDA(cudaEventRecord(e0, s));
        if (launch(e0) != 0) {
            return -1;
        }
        RWL_CUDA(cudaEventRecord(e1, s));
        RWL_CUDA(cudaStreamSynchronize(s));
        RWL_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        if (it > 0) {
            t.push_back(ms);
        }
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    RWL_CUDA(cudaMemcpy(&herr, err, sizeof(int), cudaMemcpyDeviceToHost));
    if (herr != 0) {
        fprintf(stderr, "mgi_mgg rank %u: %s: a device call returned %s\n",
                me, name, ucs_status_string((ucs_status_t)herr));
        ok = 0;
    }
    RWL_CUDA(cudaMemcpy(host_out.data(), out, own_bytes,
                        cudaMemcpyDeviceToHost));
    ok &= mgg_check(sh, sh->lo[me], sh->lo[me + 1], host_out.data(), name,
                    me);
    ok  = rwl_all(boot, ok);
    rwl_wrong |= !ok;
    ms  = (float)rwl_max(boot, rwl_median(t));
    remote_bytes = rwl_max(boot, remote_bytes);
    if (me == 0) {
        mgg_line(sh, name, ms, remote_bytes, ok);
    }
    mgi_wl_barrier(boot);
    return ok;
}

/* The cache variant's rows and slots on the device, the cache, and the
 * neighbour partitions local ones first (np[0 .. nloc)), so that each
 * pass's warps take only partitions of their pass, none skipped */
typedef struct mgg_dev_cache {
    uint32_t       *rows, *run, *slot;
    uint64_t       nrows, nruns;
    float          *cache;
    mgi_graph_np_t *np;
    uint64_t       nloc;
} mgg_dev_cache_t;

static int mgg_cache_to_dev(const mgi_graph_work_t *w, const uint32_t *lo,
                            unsigned nparts, int dim, mgg_dev_cache_t *d)
{
    mgi_graph_cache_t c;

    if (mgi_graph_cache_build(w, lo, nparts, &c) != 0) {
        fprintf(stderr, "mgi_mgg: no memory for the cache's rows\n");
        return -1;
    }
    d->nrows = c.nrows;
    d->nruns = c.nruns;
    RWL_CUDA(cudaMalloc(&d->rows, (c.nrows + 1) * sizeof(*d->rows)));
    RWL_CUDA(cudaMalloc(&d->run, (c.nruns + 1) * sizeof(*d->run)));
    RWL_CUDA(cudaMalloc(&d->slot, (w->nnbr + 1) * sizeof(*d->slot)));
    RWL_CUDA(cudaMalloc(&d->cache, (c.nrows * dim + 4) * sizeof(float)));
    RWL_CUDA(cudaMemcpy(d->rows, c.rows, c.nrows * sizeof(*d->rows),
                        cudaMemcpyHostToDevice));
    RWL_CUDA(cudaMemcpy(d->run, c.run, (c.nruns + 1) * sizeof(*d->run),
                        cudaMemcpyHostToDevice));
    RWL_CUDA(cudaMemcpy(d->slot, c.slot, w->nnbr * sizeof(*d->slot),
                        cudaMemcpyHostToDevice));
    mgi_graph_cache_free(&c);

    std::vector<mgi_graph_np_t> np(w->np, w->np + w->nnp);
    d->nloc = std::stable_partition(np.begin(), np.end(),
                                    [](const mgi_graph_np_t &p) {
                                        return !p.remote;
                                    }) - np.begin();
    RWL_CUDA(cudaMalloc(&d->np, (w->nnp + 1) * sizeof(*d->np)));
    RWL_CUDA(cudaMemcpy(d->np, np.data(), w->nnp * sizeof(*d->np),
                        cudaMemcpyHostToDevice));
    return 0;
}

static void mgg_cache_free_dev(mgg_dev_cache_t *d)
{
    cudaFree(d->rows);
    cudaFree(d->run);
    cudaFree(d->slot);
    cudaFree(d->cache);
    cudaFree(d->np);
}

static int mgg_rank_gpu(mgi_wl_boot_t *boot, mgg_shared_t *sh,
                        mgi_context_h ctx, const mgi_graph_work_t *w)
{
    const mgg_opts_t *o = &sh->o;
    const unsigned me = boot->rank;
    const uint32_t nown = sh->lo[me + 1] - sh->lo[me];
    const size_t own_bytes = (size_t)nown * o->dim * sizeof(float);
    const double remote_bytes = (double)w->nremote * o->dim * sizeof(float);
    mgi_region_params_t rp = {};
    mgi_dev_region_t h = {};
    mgg_dev_work_t d = {};
    mgi_region_h reg;
    float *rows, *out, *full = NULL, *gstage;
    unsigned blocks;
    cudaStream_t s, s2;
    cudaEvent_t fetched;
    int *err, ok;

    RWL_CUDA(cudaMalloc(&rows, own_bytes + 16));
    RWL_CUDA(cudaMalloc(&out, own_bytes + 16));
    RWL_CUDA(cudaMalloc(&err, sizeof(int)));
    RWL_CUDA(cudaStreamCreate(&s));
    RWL_CUDA(cudaStreamCreate(&s2));
    RWL_CUDA(cudaEventCreateWithFlags(&fetched, cudaEventDisableTiming));
    RWL_CUDA(cudaFuncSetAttribute(mgg_aggregate,
                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)mgg_smem(o)));
    mgg_fill<<<1024, 256>>>(rows, sh->lo[me], nown, o->dim, o->seed);
    RWL_CUDA(cudaDeviceSynchronize());
    if ((mgg_work_to_dev(w, sh->lo, o->gpus, &d) != 0) ||
        (mgg_blocks(d.nnp, MGG_AGG_PER_SM, &blocks) != 0)) {
        return -1;
    }
    RWL_CUDA(cudaMalloc(&gstage, (size_t)blocks * MGG_WARPS * o->ps *
                                 o->dim * sizeof(float)));
    /* (a) region: mapped peers where there are (proxy: every remote row
     * through the proxy and UCP, as across hosts); cache: each distinct
     * remote row fetched once into a cache by a kernel of warp gets on a
     * second stream while the local partitions aggregate, then the remote
     * partitions from the cache */
    for (int pv = 0; pv < 3; ++pv) {
        static const char *const names[] = {"region", "proxy", "cache"};
        const char *name = names[pv];
        mgg_dev_cache_t dc = {};

        if (!rwl_listed(o->variant, name)) {
            continue;
        }
        rp.addr   = rows;
        rp.length = own_bytes;
        rp.flags  = (pv == 1) ? MGI_REGION_F_PROXY_ONLY : 0;
        if ((mgi_region_register(ctx, &rp, &reg) != UCS_OK) ||
            (mgi_region_device_handle(reg, &h) != UCS_OK)) {
            return -1;
        }
        if ((me == 0) && (pv == 0)) {
            for (int p = 0; p < o->gpus; ++p) {
                printf("# rank 0 reaches rank %d's rows %s\n", p,
                       mgi_region_direct(reg, p) ? "by loads (mapped)" :
                       "through the proxy (UCP)");
            }
        }
        if (pv < 2) {
            ok = mgg_timed(boot, sh, name, remote_bytes, out, err, s,
                           [&](cudaEvent_t) {
                return mgg_launch(o, &h, NULL, &d, o->gpus, me, gstage, out,
                                  err, s);
            });
        } else {
            mgg_dev_work_t dl = d, dr = d;
            unsigned fetch_blocks;

            if ((mgg_cache_to_dev(w, sh->lo, o->gpus, o->dim, &dc) != 0) ||
                (mgg_blocks(dc.nruns, MGG_FETCH_PER_SM, &fetch_blocks) !=
                 0)) {
                return -1;
            }
            dl.np  = dc.np;
            dl.nnp = dc.nloc;
            dr.np  = dc.np + dc.nloc;
            dr.nnp = d.nnp - dc.nloc;
            ok = mgg_timed(boot, sh, name,
                           (double)dc.nrows * o->dim * sizeof(float), out,
                           err, s, [&](cudaEvent_t start) {
                /* the fetch first, so its blocks are placed before the
                 * local pass fills the rest of the GPU */
                RWL_CUDA(cudaStreamWaitEvent(s2, start, 0));
                mgg_fetch<<<fetch_blocks, MGG_WARPS * 32, 0, s2>>>(
                    h, dc.rows, dc.run, dc.nruns, d.lo, o->gpus, o->dim,
                    dc.cache, err);
                RWL_CUDA(cudaGetLastError());
                RWL_CUDA(cudaEventRecord(fetched, s2));
                if (mgg_launch_pass(o, &h, NULL, &dl, o->gpus, me, NULL,
                                    NULL, NULL, MGG_PASS_LOCAL, out, err,
                                    s) != 0) {
                    return -1;
                }
                RWL_CUDA(cudaStreamWaitEvent(s, fetched, 0));
                return mgg_launch_pass(o, &h, NULL, &dr, o->gpus, me, NULL,
                                       dc.cache, dc.slot, MGG_PASS_REMOTE,
                                       out, err, s);
            });
            mgg_cache_free_dev(&dc);
        }
        if ((ok < 0) || (mgi_region_deregister(reg) != UCS_OK)) {
            return -1;
        }
    }

    /* (b) NCCL all-gather, then the local kernel */
    if (rwl_listed(o->variant, "nccl")) {
        mgi_wl_nccl_t n = {};
        ncclUniqueId id, all[MGI_WL_MAX_RANKS];
        ncclComm_t comm;
        int loaded = (mgi_wl_nccl_load(&n) == 0);

        if (!rwl_all(boot, loaded)) {
            if (me == 0) {
                printf("mgg variant=nccl absent: NCCL not loaded on every "
                       "rank (set MGI_NCCL_LIB)\n");
            }
        } else {
            memset(&id, 0, sizeof(id));
            if (me == 0) {
                n.GetUniqueId(&id);
            }
            mgi_wl_allgather(boot, &id, sizeof(id), all);
            if (n.CommInitRank(&comm, o->gpus, all[0], me) != ncclSuccess) {
                return -1;
            }
            RWL_CUDA(cudaMalloc(&full, (size_t)sh->g.nv * o->dim *
                                       sizeof(float) + 16));
            ok = mgg_timed(boot, sh, "nccl", 0, out, err, s,
                           [&](cudaEvent_t) {
                if (mgg_nccl_allgather(&n, comm, sh, rows, full, me, s) !=
                    0) {
                    return -1;
                }
                return mgg_launch(o, &h, full, &d, o->gpus, me, NULL, out,
                                  err, s);
            });
            n.CommDestroy(comm);
            cudaFree(full);
            if (ok < 0) {
                return -1;
            }
        }
    }
    mgi_wl_barrier(boot);
    mgg_work_free_dev(&d);
    cudaEventDestroy(fetched);
    cudaStreamDestroy(s2);
    cudaFree(gstage);
    cudaFree(rows);
    cudaFree(out);
    cudaFree(err);
    return rwl_wrong ? -1 : 0;
}

/* The graph and its split, said once (say) */
static int mgg_graph(mgg_shared_t *sh, int say)
{
    const mgg_opts_t *o = &sh->o;

    if (mgi_graph_rmat(&sh->g, o->scale, o->deg, o->seed) != 0) {
        fprintf(stderr, "mgi_mgg: no memory for a graph of scale %d\n",
                o->scale);
        return -1;
    }
    mgi_graph_split(&sh->g, o->gpus, sh->lo);
    if (say) {
        printf("# mgg: R-MAT scale %d (%u vertices, %llu edges, max "
               "in-degree %u), seed %llu, %d parts, embeddings %zu MiB\n",
               o->scale, sh->g.nv, (unsigned long long)sh->g.ne,
               sh->g.max_deg, (unsigned long long)o->seed, o->gpus,
               ((size_t)sh->g.nv * o->dim * sizeof(float)) >> 20);
    }
    return 0;
}

static int mgg_rank_main(mgi_wl_boot_t *boot, void *arg)
{
    mgg_shared_t *sh = (mgg_shared_t*)arg;
    mgi_graph_work_t w;
    mgi_context_h ctx;
    int ndev = 0, ret;

    rwl_rank = boot->rank;
    if (mgg_graph(sh, boot->rank == 0) != 0) {
        return 1;
    }
    if (!sh->o.cpu) {
        RWL_CUDA(cudaGetDeviceCount(&ndev));
        RWL_CUDA(cudaSetDevice(boot->rank % ndev));
    }
    if (mgi_graph_work_build(&sh->g, sh->lo, sh->o.gpus, boot->rank,
                             sh->o.ps, sh->o.dist, &w) != 0) {
        fprintf(stderr, "mgi_mgg rank %d: no memory for its work\n",
                boot->rank);
        return 1;
    }
    if (rwl_context(boot, &ctx) != 0) {
        return 1;
    }
    ret = sh->o.cpu ? mgg_rank_cpu(boot, sh, ctx, &w) :
          mgg_rank_gpu(boot, sh, ctx, &w);
    mgi_context_destroy(ctx);
    mgi_graph_work_free(&w);
    return (ret == 0) ? 0 : 1;
}

/* ------------------------------------------------ one-process variants */

/* (c) managed memory over every GPU, (d) GPU 0 alone */
static int mgg_in_process(mgg_shared_t *sh)
{
    const mgg_opts_t *o = &sh->o;
    const size_t table = (size_t)sh->g.nv * o->dim * sizeof(float);
    const unsigned G = o->gpus;
    mgi_dev_region_t none = {};
    int ndev = 0, ok;
    size_t fr, tot, min_free = SIZE_MAX;

    rwl_rank = -1;
    RWL_CUDA(cudaGetDeviceCount(&ndev));
    for (unsigned p = 0; p < std::min(G, (unsigned)ndev); ++p) {
        RWL_CUDA(cudaSetDevice(p));
        RWL_CUDA(cudaMemGetInfo(&fr, &tot));
        min_free = std::min(min_free, fr);
    }

    if (rwl_listed(o->variant, "uvm")) {
        if (ndev < (int)G) {
            printf("mgg variant=uvm absent: %d GPUs visible, %u asked\n",
                   ndev, G);
        } else if (table + (64ull << 20) > min_free) {
            printf("mgg variant=uvm absent: the table (%zu MiB) does not fit "
                   "the smallest free GPU memory (%zu MiB): managed memory "
                   "would oversubscribe it\n", table >> 20, min_free >> 20);
        } else {
            std::vector<mgg_dev_work_t> d(G);
            std::vector<float*> out(G);
            std::vector<cudaStream_t> s(G);
            std::vector<double> t;
            float *full;
            int *err;

            RWL_CUDA(cudaSetDevice(0));
            RWL_CUDA(cudaMallocManaged(&full, table));
            RWL_CUDA(cudaMallocManaged(&err, sizeof(int)));
            for (unsigned p = 0; p < G; ++p) {
                const size_t off = (size_t)sh->lo[p] * o->dim;
                const size_t len = (size_t)(sh->lo[p + 1] - sh->lo[p]) *
                                   o->dim * sizeof(float);
                cudaMemLocation loc = {cudaMemLocationTypeDevice, (int)p};
                mgi_graph_work_t w;

                RWL_CUDA(cudaSetDevice(p));
                RWL_CUDA(cudaMemAdvise(full + off, len,
                                       cudaMemAdviseSetPreferredLocation,
                                       loc));
                for (unsigned q = 0; q < G; ++q) {
                    cudaMemLocation lq = {cudaMemLocationTypeDevice, (int)q};
                    RWL_CUDA(cudaMemAdvise(full + off, len,
                                           cudaMemAdviseSetAccessedBy, lq));
                }
                mgg_fill<<<1024, 256>>>(full + off, sh->lo[p],
                                        sh->lo[p + 1] - sh->lo[p], o->dim,
                                        o->seed);
                RWL_CUDA(cudaStreamCreate(&s[p]));
                RWL_CUDA(cudaMalloc(&out[p], len + 16));
                RWL_CUDA(cudaFuncSetAttribute(
                    mgg_aggregate,
                    cudaFuncAttributeMaxDynamicSharedMemorySize,
                    (int)mgg_smem(o)));
                if ((mgi_graph_work_build(&sh->g, sh->lo, G, p, o->ps,
                                          o->dist, &w) != 0) ||
                    (mgg_work_to_dev(&w, sh->lo, G, &d[p]) != 0)) {
                    return -1;
                }
                mgi_graph_work_free(&w);
                RWL_CUDA(cudaDeviceSynchronize());
            }
            *err = 0;
            for (int it = 0; it < o->iters + 1; ++it) {
                double t0 = rwl_now_ms();
                for (unsigned p = 0; p < G; ++p) {
                    RWL_CUDA(cudaSetDevice(p));
                    RWL_CUDA(cudaMemsetAsync(out[p], 0,
                                             (size_t)(sh->lo[p + 1] -
                                                      sh->lo[p]) * o->dim *
                                             sizeof(float), s[p]));
                    if (mgg_launch(o, &none, full, &d[p], G, p, NULL, out[p],
                                   err, s[p]) != 0) {
                        return -1;
                    }
                }
                for (unsigned p = 0; p < G; ++p) {
                    RWL_CUDA(cudaStreamSynchronize(s[p]));
                }
                if (it > 0) {
                    t.push_back(rwl_now_ms() - t0);
                }
            }
            ok = 1;
            for (unsigned p = 0; p < G; ++p) {
                const uint32_t n = sh->lo[p + 1] - sh->lo[p];
                std::vector<float> h((size_t)n * o->dim + 1);
                RWL_CUDA(cudaSetDevice(p));
                RWL_CUDA(cudaMemcpy(h.data(), out[p], (size_t)n * o->dim *
                                    sizeof(float), cudaMemcpyDeviceToHost));
                ok &= mgg_check(sh, sh->lo[p], sh->lo[p + 1], h.data(),
                                "uvm", p);
                cudaFree(out[p]);
                mgg_work_free_dev(&d[p]);
                cudaStreamDestroy(s[p]);
            }
            mgg_line(sh, "uvm", rwl_median(t), 0, ok);
            rwl_wrong |= !ok;
            cudaFree(full);
            cudaFree(err);
        }
    }

    if (rwl_listed(o->variant, "single")) {
        uint32_t lo1[2] = {0, sh->g.nv};
        mgi_graph_work_t w;
        mgg_dev_work_t d;
        std::vector<double> t;
        std::vector<float> h((size_t)sh->g.nv * o->dim + 1);
        float *full, *out, ms;
        cudaEvent_t e0, e1;
        int *err;

        RWL_CUDA(cudaSetDevice(0));
        RWL_CUDA(cudaMemGetInfo(&fr, &tot));
        if (2 * table + (256ull << 20) > fr) {
            printf("mgg variant=single absent: table and output (%zu MiB) "
                   "exceed GPU 0's free memory (%zu MiB)\n",
                   (2 * table) >> 20, fr >> 20);
            return 0;
        }
        RWL_CUDA(cudaMalloc(&full, table));
        RWL_CUDA(cudaMalloc(&out, table));
        RWL_CUDA(cudaMalloc(&err, sizeof(int)));
        RWL_CUDA(cudaEventCreate(&e0));
        RWL_CUDA(cudaEventCreate(&e1));
        RWL_CUDA(cudaFuncSetAttribute(
            mgg_aggregate, cudaFuncAttributeMaxDynamicSharedMemorySize,
            (int)mgg_smem(o)));
        mgg_fill<<<1024, 256>>>(full, 0, sh->g.nv, o->dim, o->seed);
        if ((mgi_graph_work_build(&sh->g, lo1, 1, 0, o->ps, o->dist, &w) !=
             0) || (mgg_work_to_dev(&w, lo1, 1, &d) != 0)) {
            return -1;
        }
        mgi_graph_work_free(&w);
        for (int it = 0; it < o->iters + 1; ++it) {
            RWL_CUDA(cudaMemset(out, 0, table));
            RWL_CUDA(cudaEventRecord(e0, 0));
            if (mgg_launch(o, &none, full, &d, 1, 0, NULL, out, err, 0) != 0) {
                return -1;
            }
            RWL_CUDA(cudaEventRecord(e1, 0));
            RWL_CUDA(cudaEventSynchronize(e1));
            RWL_CUDA(cudaEventElapsedTime(&ms, e0, e1));
            if (it > 0) {
                t.push_back(ms);
            }
        }
        RWL_CUDA(cudaMemcpy(h.data(), out, table, cudaMemcpyDeviceToHost));
        ok = mgg_check(sh, 0, sh->g.nv, h.data(), "single", 0);
        rwl_wrong |= !ok;
        mgg_line(sh, "single", rwl_median(t), 0, ok);
        mgg_work_free_dev(&d);
        cudaFree(full);
        cudaFree(out);
        cudaFree(err);
    }
    return rwl_wrong ? -1 : 0;
}

/* ---------------------------------------------------------------- main */

static void mgg_usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--gpus G] [--scale S] [--deg D] [--dim D] "
            "[--seed S]\n"
            "          [--ps P] [--dist K] [--iters N]\n"
            "          [--variant region,proxy,cache,nccl,uvm,single|all] [--cpu]\n",
            argv0);
}

int main(int argc, char **argv)
{
    static const char *const variants[] = {"region", "proxy", "cache", "nccl",
                                           "uvm", "single", NULL};
    static mgg_shared_t sh;
    mgg_opts_t *o = &sh.o;
    int scale_set = 0, ret = 0, ran = 0;

    rwl_prog = "mgi_mgg";
    *o = {2, 20, 16, 128, 8, 2, 5, 0, 42, "all"};
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (!strcmp(a, "--cpu")) {
            o->cpu = 1;
            continue;
        }
        if (v == NULL) {
            mgg_usage(argv[0]);
            return 2;
        }
        ++i;
        long long x = 0;
        if (!strcmp(a, "--variant")) {
            snprintf(o->variant, sizeof(o->variant), "%s", v);
            if (!rwl_list_valid(o->variant, variants)) {
                return 2;
            }
            continue;
        }
        struct {
            const char *name;
            long long  lo, hi;
            int        *dst;
        } const num[] = {
            {"--gpus", 1, MGI_GRAPH_MAX_PARTS, &o->gpus},
            {"--scale", 4, 28, &o->scale}, {"--deg", 1, 1024, &o->deg},
            {"--dim", 4, MGG_MAX_DIM, &o->dim}, {"--ps", 1, MGG_MAX_PS, &o->ps},
            {"--dist", 0, 1024, &o->dist}, {"--iters", 1, 1000, &o->iters}
        };
        int found = 0;
        for (const auto &n : num) {
            if (!strcmp(a, n.name)) {
                if (!rwl_int(a, v, n.lo, n.hi, &x)) {
                    return 2;
                }
                *n.dst    = (int)x;
                found     = 1;
                scale_set |= !strcmp(a, "--scale");
            }
        }
        if (!strcmp(a, "--seed")) {
            if (!rwl_int(a, v, 0, LLONG_MAX, &x)) {
                return 2;
            }
            o->seed = (uint64_t)x;
            found   = 1;
        }
        if (!found) {
            mgg_usage(argv[0]);
            return 2;
        }
    }
    if (o->dim % 4 != 0) {
        /* the kernel's 16-byte loads take a row 4 floats at a time */
        fprintf(stderr, "mgi_mgg: --dim %d: not a multiple of 4: use %d or "
                "%d\n", o->dim, o->dim / 4 * 4, std::min(o->dim / 4 * 4 + 4,
                                                      MGG_MAX_DIM));
        return 2;
    }
    if ((size_t)MGG_WARPS * o->ps * o->dim * sizeof(float) > (200u << 10)) {
        fprintf(stderr, "mgi_mgg: --ps %d x --dim %d: %d warps' staging "
                "(%zu KiB of shared memory a block) exceeds 200 KiB: lower "
                "--ps\n", o->ps, o->dim, MGG_WARPS,
                ((size_t)MGG_WARPS * o->ps * o->dim * sizeof(float)) >> 10);
        return 2;
    }
    if (o->cpu && !scale_set) {
        o->scale = 12;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* the ranks fork before this process makes any CUDA call, and before
     * it runs OpenMP (whose threads a fork's child would wait for): each
     * generates the graph itself */
    if (o->cpu || rwl_listed(o->variant, "region") ||
        rwl_listed(o->variant, "proxy") || rwl_listed(o->variant, "nccl")) {
        ret = mgi_wl_boot_run(o->gpus, mgg_rank_main, &sh);
        ran = 1;
    }
    if ((ret == 0) && !o->cpu &&
        (rwl_listed(o->variant, "uvm") || rwl_listed(o->variant, "single"))) {
        ret = (mgg_graph(&sh, !ran) != 0) || (mgg_in_process(&sh) != 0);
    }
    mgi_graph_free(&sh.g);
    return ret;
}

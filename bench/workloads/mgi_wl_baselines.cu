/**
 * mgi_workloads' baselines: the partition kernel (a histogram, then a
 * scatter that groups each rank's tuples by destination) and the variants
 * built on it: nccl (grouped ncclSend/ncclRecv), ucx and ucx_mgi (UCP tag
 * sends per peer), and peer, whose scatter stores each tuple straight into
 * its destination's receive buffer (CUDA IPC).
 */
#include "mgi_wl_int.h"
#include "mgi_wl_dev.cuh"

/* ------------------------------------------------------------- kernels */

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
int wl_partition(wl_rank_t *w, wl_table_t *t)
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

int wl_nccl_init(wl_rank_t *w)
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

void wl_nccl_fini(wl_rank_t *w, int sync)
{
    (void)sync;
    if (w->have_nccl) {
        w->nccl.CommDestroy(w->comm);
        w->have_nccl = 0;
    }
}

int wl_nccl_transfer(wl_rank_t *w, wl_table_t *t)
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

void wl_ucx_fini(wl_rank_t *w, int sync)
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

int wl_ucx_init(wl_rank_t *w)
{
    return wl_ucx_setup(w, NULL);
}

/* The same UCX-only exchange over the cuda_mgi transport (striping across
 * the planner's paths), in the same run as the others. */
int wl_ucx_mgi_init(wl_rank_t *w)
{
    const char *tls = getenv("MGI_WL_UCX_MGI_TLS");

    return wl_ucx_setup(w, (tls != NULL) ? tls :
                           "sm,self,cuda_copy,cuda_mgi");
}

int wl_ucx_transfer(wl_rank_t *w, wl_table_t *t)
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

void wl_peer_fini(wl_rank_t *w, int sync)
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
int wl_peer_init(wl_rank_t *w)
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
int wl_peer_shuffle(wl_rank_t *w, wl_table_t *t, wl_times_t *times)
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

/**
 * mgi_proact: PROACT's proactive transfers (../shared/papers/
 * proact-fine-grained-transfers.txt) over MGI regions. Rank 0's producer
 * kernel writes --mib MiB in tiles (each word `--work` rounds of mixing,
 * the compute); rank 1's consumer kernel takes each tile as it arrives
 * (waits on the tile's signal word, then sums its words). The time is the
 * consumer's, from a common start to its kernel's end; every tile's sum is
 * checked against the CPU reference. Variants, each tile size of --tiles:
 *
 *   push    the producer block that finished a tile pushes it with
 *           mgi_dev_region_put_signal_block (NVLink stores where the
 *           consumer's part is mapped, the proxy otherwise): transfer
 *           during the kernel, per tile
 *   bulk    the producer kernel, then one copy of everything
 *           (cudaMemcpyAsync to the mapped part, as cudaMemcpyPeerAsync;
 *           host RMA without a mapping) and then the tiles' signals
 *   stores  the producer stores each word straight into the consumer's
 *           part (fine-grained remote stores), a signal per tile; needs
 *           the part mapped
 *
 * Before them: the producer kernel alone (compute) and the bulk copy alone
 * (transfer), to set --work where the two take about as long.
 *
 * --cpu: push and bulk on host threads over host memory (the thread-level
 * region calls through the proxy), checked the same way: make check runs
 * it.
 *
 * --bw: the device API's bandwidth instead: rank 0's block-level puts to
 * and gets from rank 1's part, 64 KiB - 64 MiB, against the copy engine
 * (cudaMemcpyAsync to the mapped part), the bytes checked.
 *
 * Usage: mgi_proact [--mib M] [--tiles 16K,64K,...] [--work W] [--seed S]
 *                   [--iters N] [--variant push,bulk,stores|all] [--cpu]
 *        mgi_proact --bw
 */
#include "mgi_graph.h"
#include "mgi_region_wl.h"

#include <mgi/mgi_region_device.cuh>

#include <cuda_runtime.h>
#include <limits.h>

#define PRO_THREADS  256
#define PRO_MAX_TILES 16
/* The producer's blocks an SM: with 4, a block that pushes its finished
 * tile (loads here, stores over NVLink) leaves the SM to others that
 * compute; with 2 the pushes held the compute back (every variant runs
 * the same producer, and its compute alone takes as long with 2 or 4) */
#define PRO_PRODUCER_PER_SM 4

enum { PRO_LOCAL = 0, PRO_PUSH = 1, PRO_STORES = 2 };

typedef struct pro_opts {
    uint64_t bytes;
    uint64_t tiles[PRO_MAX_TILES];
    int      ntiles, work, iters, cpu, bw;
    uint64_t seed;
    char     variant[128];
} pro_opts_t;

/* signal words (one per smallest tile), then the data */
static uint64_t pro_data_off(const pro_opts_t *o)
{
    return ((o->bytes / MGI_PROACT_UNIT) * 8 + 4095) & ~4095ull;
}

/* ------------------------------------------------------------- kernels */

__global__ void pro_produce(mgi_dev_region_t h, uint32_t peer,
                            uint64_t data_off, uint64_t bytes, uint64_t tile,
                            unsigned work, uint64_t seed, uint64_t epoch,
                            int mode, int *err)
{
    const uint64_t ntiles = bytes / tile, wpt = tile / 8;
    ucs_status_t st = UCS_OK;

    for (uint64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const uint64_t off = data_off + t * tile;
        uint64_t *dst = (uint64_t*)(((mode == PRO_STORES) ? h.ptrs[peer] :
                                     h.base) + off);

        for (uint64_t k = threadIdx.x; k < wpt; k += blockDim.x) {
            dst[k] = mgi_proact_word(seed, t * wpt + k, work);
        }
        if (mode == PRO_PUSH) {
            st = mgi_dev_region_put_signal_block(&h, peer, off, h.base + off,
                                                 tile, 8 * t, epoch);
        } else if (mode == PRO_STORES) {
            __syncthreads();    /* every thread's stores, then the signal */
            if (threadIdx.x == 0) {
                st = mgi_dev_region_signal(&h, peer, 8 * t, epoch);
            }
            st = mgi_region_block_bcast(st);
        }
        if (st != UCS_OK) {     /* the same in every thread: all leave */
            if (threadIdx.x == 0) {
                atomicExch(err, (int)st);
            }
            return;
        }
    }
}

/* after a bulk copy (stream order): every tile's signal */
__global__ void pro_signal_all(mgi_dev_region_t h, uint32_t peer,
                               uint64_t ntiles, uint64_t epoch, int *err)
{
    for (uint64_t t = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
         t < ntiles; t += (uint64_t)gridDim.x * blockDim.x) {
        ucs_status_t st = mgi_dev_region_signal(&h, peer, 8 * t, epoch);
        if (st != UCS_OK) {
            atomicExch(err, (int)st);
        }
    }
}

__global__ void pro_consume(mgi_dev_region_t h, uint64_t data_off,
                            uint64_t bytes, uint64_t tile, uint64_t epoch,
                            unsigned long long *sums, int *err)
{
    __shared__ unsigned long long block_sum;
    const uint64_t ntiles = bytes / tile, wpt = tile / 8;

    for (uint64_t t = blockIdx.x; t < ntiles; t += gridDim.x) {
        const uint64_t *w = (const uint64_t*)(h.base + data_off + t * tile);
        unsigned long long s = 0;
        ucs_status_t st;

        st = mgi_dev_region_wait_signal_block(&h, 8 * t, MGI_REGION_CMP_GE,
                                              epoch, 0);
        if (st != UCS_OK) {     /* the same in every thread */
            if (threadIdx.x == 0) {
                atomicExch(err, (int)st);
            }
            return;
        }
        if (threadIdx.x == 0) {
            block_sum = 0;
        }
        __syncthreads();
        for (uint64_t k = threadIdx.x; k < wpt; k += blockDim.x) {
            s += w[k];
        }
        atomicAdd(&block_sum, s);
        __syncthreads();
        if (threadIdx.x == 0) {
            sums[t] = block_sum;
        }
    }
}

/* ------------------------------------------------------------- helpers */

/* Each tile's reference sum from the units' */
static void pro_ref_tiles(const std::vector<uint64_t> &units, uint64_t tile,
                          std::vector<uint64_t> &ref)
{
    const uint64_t upt = tile / MGI_PROACT_UNIT;

    ref.assign(units.size() / upt, 0);
    for (size_t u = 0; u < units.size(); ++u) {
        ref[u / upt] += units[u];
    }
}

static int pro_check(const std::vector<uint64_t> &ref, const uint64_t *sums,
                     const char *variant, uint64_t tile)
{
    uint64_t bad = 0, first = 0;

    for (size_t t = 0; t < ref.size(); ++t) {
        if (sums[t] != ref[t]) {
            first = bad++ ? first : t;
        }
    }
    if (bad != 0) {
        fprintf(stderr, "mgi_proact: %s tile %llu: %llu of %zu tiles wrong, "
                "the first %llu\n", variant, (unsigned long long)tile,
                (unsigned long long)bad, ref.size(),
                (unsigned long long)first);
    }
    return bad == 0;
}

static void pro_line(const pro_opts_t *o, const char *variant, uint64_t tile,
                     double ms, int ok)
{
    printf("proact variant=%-6s tile=%llu mib=%llu work=%d ms=%.3f "
           "GBps=%.1f checked=%s\n", variant, (unsigned long long)tile,
           (unsigned long long)(o->bytes >> 20), o->work, ms,
           (ms > 0) ? o->bytes / ms / 1e6 : 0.0, ok ? "yes" : "NO");
    fflush(stdout);
}

/* ------------------------------------------------------- CPU check mode */

static int pro_rank_cpu(mgi_wl_boot_t *boot, pro_opts_t *o,
                        mgi_context_h ctx)
{
    const uint64_t doff = pro_data_off(o), len = doff + o->bytes;
    const int me = boot->rank;
    std::vector<uint64_t> part(len / 8, 0), units, ref, sums;
    mgi_region_params_t rp = {};
    mgi_dev_region_t h;
    mgi_region_h reg;
    uint64_t epoch = 0;
    int ok = 1;

    if (me == 1) {
        units.resize(o->bytes / MGI_PROACT_UNIT);
        mgi_proact_unit_sums(o->seed, o->work, o->bytes, units.data());
    }
    rp.addr   = part.data();
    rp.length = len;
    if ((mgi_region_register(ctx, &rp, &reg) != UCS_OK) ||
        (mgi_region_device_handle(reg, &h) != UCS_OK)) {
        return -1;
    }
    for (int v = 0; v < 2; ++v) {
        const char *name = v ? "bulk" : "push";
        if (!rwl_listed(o->variant, name)) {
            continue;
        }
        for (int ti = 0; ti < o->ntiles; ++ti) {
            const uint64_t tile = o->tiles[ti], nt = o->bytes / tile;
            double t0;
            ++epoch;
            mgi_wl_barrier(boot);
            t0 = rwl_now_ms();
            if (me == 0) {
                char *data = (char*)part.data() + doff;
                ucs_status_t st = UCS_OK;
                for (uint64_t t = 0; (t < nt) && (st == UCS_OK); ++t) {
                    uint64_t *w = (uint64_t*)(data + t * tile);
                    for (uint64_t k = 0; k < tile / 8; ++k) {
                        w[k] = mgi_proact_word(o->seed, t * (tile / 8) + k,
                                               o->work);
                    }
                    if (v == 0) {
                        st = mgi_dev_region_put_signal(&h, 1, doff + t * tile,
                                                       w, tile, 8 * t,
                                                       epoch);
                    }
                }
                if (v == 1) {
                    std::vector<uint64_t> sig(nt, epoch);
                    st = mgi_region_put(reg, 1, doff, data, o->bytes);
                    if (st == UCS_OK) {
                        st = mgi_region_quiet(reg);
                    }
                    if (st == UCS_OK) {
                        st = mgi_region_put(reg, 1, 0, sig.data(), nt * 8);
                    }
                    if (st == UCS_OK) {
                        st = mgi_region_quiet(reg);
                    }
                } else if (st == UCS_OK) {
                    st = mgi_dev_region_quiet(&h);
                }
                if (st != UCS_OK) {
                    fprintf(stderr, "mgi_proact rank 0: %s: %s\n", name,
                            ucs_status_string(st));
                    ok = 0;
                }
            } else if (me == 1) {
                sums.assign(nt, 0);
                for (uint64_t t = 0; t < nt; ++t) {
                    const uint64_t *w = (const uint64_t*)
                                        ((char*)part.data() + doff + t * tile);
                    if (mgi_dev_region_wait_signal(&h, 8 * t,
                                                   MGI_REGION_CMP_GE, epoch,
                                                   0, NULL) != UCS_OK) {
                        fprintf(stderr, "mgi_proact rank 1: %s: tile %llu "
                                "never signalled\n", name,
                                (unsigned long long)t);
                        ok = 0;
                        break;
                    }
                    for (uint64_t k = 0; k < tile / 8; ++k) {
                        sums[t] += w[k];
                    }
                }
                pro_ref_tiles(units, tile, ref);
                ok &= pro_check(ref, sums.data(), name, tile);
            }
            double ms = rwl_max(boot, rwl_now_ms() - t0);
            ok = rwl_all(boot, ok);
            if (me == 1) {
                pro_line(o, name, tile, ms, ok);
            }
        }
    }
    mgi_wl_barrier(boot);
    if (mgi_region_deregister(reg) != UCS_OK) {
        ok = 0;
    }
    return ok ? 0 : -1;
}

/* ------------------------------------------------------------- GPU run */

/* bulk: everything after the producer kernel, then the tiles' signals */
static int pro_bulk_copy(mgi_region_h reg, const mgi_dev_region_t *h,
                         char *rpart, const char *part, uint64_t doff,
                         uint64_t bytes, uint64_t nt, uint64_t epoch,
                         int *err, cudaStream_t s)
{
    if (rpart != NULL) {
        RWL_CUDA(cudaMemcpyAsync(rpart + doff, part + doff, bytes,
                                 cudaMemcpyDeviceToDevice, s));
        pro_signal_all<<<(unsigned)((nt + 255) / 256), 256, 0, s>>>(
            *h, 1, nt, epoch, err);
        RWL_CUDA(cudaGetLastError());
        return 0;
    }
    /* no mapping: host RMA once the kernel is done */
    std::vector<uint64_t> sig(nt, epoch);
    RWL_CUDA(cudaStreamSynchronize(s));
    if ((mgi_region_put(reg, 1, doff, part + doff, bytes) != UCS_OK) ||
        (mgi_region_quiet(reg) != UCS_OK) ||
        (mgi_region_put(reg, 1, 0, sig.data(), nt * 8) != UCS_OK) ||
        (mgi_region_quiet(reg) != UCS_OK)) {
        return -1;
    }
    return 0;
}

static int pro_rank_gpu(mgi_wl_boot_t *boot, pro_opts_t *o,
                        mgi_context_h ctx)
{
    static const char *const names[] = {"push", "bulk", "stores"};
    const uint64_t doff = pro_data_off(o), len = doff + o->bytes;
    const uint64_t nunits = o->bytes / MGI_PROACT_UNIT;
    const int me = boot->rank;
    std::vector<uint64_t> units, ref, hsums(nunits);
    mgi_region_params_t rp = {};
    unsigned long long *sums;
    mgi_dev_region_t h;
    mgi_region_h reg;
    uint64_t epoch = 0;
    cudaEvent_t e0, e1;
    cudaStream_t s;
    int *err, sms = 0, dev = 0, direct, herr = 0;
    char *part, *rpart = NULL;
    float fms;

    RWL_CUDA(cudaGetDevice(&dev));
    RWL_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                    dev));
    RWL_CUDA(cudaMalloc(&part, len));
    RWL_CUDA(cudaMemset(part, 0, len));
    RWL_CUDA(cudaMalloc(&sums, nunits * sizeof(*sums)));
    RWL_CUDA(cudaMalloc(&err, sizeof(int)));
    RWL_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    RWL_CUDA(cudaEventCreate(&e0));
    RWL_CUDA(cudaEventCreate(&e1));
    if (me == 1) {
        units.resize(nunits);
        mgi_proact_unit_sums(o->seed, o->work, o->bytes, units.data());
    }
    rp.addr   = part;
    rp.length = len;
    if ((mgi_region_register(ctx, &rp, &reg) != UCS_OK) ||
        (mgi_region_device_handle(reg, &h) != UCS_OK)) {
        return -1;
    }
    if (me == 0) {
        rpart = (char*)mgi_region_peer_ptr(reg, 1);
    }
    direct = rwl_all(boot, (me != 0) || (rpart != NULL));
    if (me == 0) {
        printf("# proact: %llu MiB, the consumer's part %s\n",
               (unsigned long long)(o->bytes >> 20), direct ?
               "mapped (loads and stores over NVLink / PCIe)" :
               "not mapped (the proxy, UCP)");
        /* alone: the producer's compute, then the bulk copy */
        RWL_CUDA(cudaEventRecord(e0, s));
        pro_produce<<<sms * PRO_PRODUCER_PER_SM, PRO_THREADS, 0, s>>>(
            h, 1, doff, o->bytes, o->tiles[0], o->work, o->seed, 0,
            PRO_LOCAL, err);
        RWL_CUDA(cudaEventRecord(e1, s));
        RWL_CUDA(cudaEventSynchronize(e1));
        RWL_CUDA(cudaEventElapsedTime(&fms, e0, e1));
        printf("proact alone compute_ms=%.3f", fms);
        if (direct) {
            RWL_CUDA(cudaEventRecord(e0, s));
            RWL_CUDA(cudaMemcpyAsync(rpart + doff, part + doff, o->bytes,
                                     cudaMemcpyDeviceToDevice, s));
            RWL_CUDA(cudaEventRecord(e1, s));
            RWL_CUDA(cudaEventSynchronize(e1));
            RWL_CUDA(cudaEventElapsedTime(&fms, e0, e1));
            printf(" copy_ms=%.3f (--work so that they match: where "
                   "compute and transfer take as long)", fms);
        }
        printf("\n");
    }
    mgi_wl_barrier(boot);

    for (int v = 0; v < 3; ++v) {
        if (!rwl_listed(o->variant, names[v])) {
            continue;
        }
        if ((v == 2) && !direct) {
            if (me == 1) {
                printf("proact variant=stores absent: the consumer's part is "
                       "not mapped here (no peer path)\n");
            }
            continue;
        }
        for (int ti = 0; ti < o->ntiles; ++ti) {
            const uint64_t tile = o->tiles[ti], nt = o->bytes / tile;
            std::vector<double> t;
            int ok = 1;

            for (int it = 0; it < o->iters + 1; ++it) {
                double t0;
                ++epoch;
                RWL_CUDA(cudaMemsetAsync(err, 0, sizeof(int), s));
                if (me == 1) {
                    /* waits for the tiles: running before the start */
                    pro_consume<<<sms * 2, PRO_THREADS, 0, s>>>(
                        h, doff, o->bytes, tile, epoch, sums, err);
                    RWL_CUDA(cudaGetLastError());
                } else {
                    RWL_CUDA(cudaStreamSynchronize(s));
                }
                mgi_wl_barrier(boot);
                t0 = rwl_now_ms();
                if (me == 0) {
                    pro_produce<<<sms * PRO_PRODUCER_PER_SM, PRO_THREADS, 0,
                                  s>>>(
                        h, 1, doff, o->bytes, tile, o->work, o->seed, epoch,
                        (v == 0) ? PRO_PUSH : (v == 2) ? PRO_STORES :
                        PRO_LOCAL, err);
                    RWL_CUDA(cudaGetLastError());
                    if ((v == 1) &&
                        (pro_bulk_copy(reg, &h, rpart, part, doff, o->bytes,
                                       nt, epoch, err, s) != 0)) {
                        return -1;
                    }
                }
                RWL_CUDA(cudaStreamSynchronize(s));
                if (it > 0) {
                    t.push_back(rwl_now_ms() - t0);  /* the first warms */
                }
                if ((me == 0) && (mgi_region_quiet(reg) != UCS_OK)) {
                    ok = 0;     /* the proxy's requests, drained */
                }
                mgi_wl_barrier(boot);
            }
            RWL_CUDA(cudaMemcpy(&herr, err, sizeof(int),
                                cudaMemcpyDeviceToHost));
            if (herr != 0) {
                fprintf(stderr, "mgi_proact rank %d: %s tile %llu: a device "
                        "call returned %s\n", me, names[v],
                        (unsigned long long)tile,
                        ucs_status_string((ucs_status_t)herr));
                ok = 0;
            }
            if (me == 1) {
                RWL_CUDA(cudaMemcpy(hsums.data(), sums, nt * sizeof(*sums),
                                    cudaMemcpyDeviceToHost));
                pro_ref_tiles(units, tile, ref);
                ok &= pro_check(ref, hsums.data(), names[v], tile);
            }
            ok = rwl_all(boot, ok);
            rwl_wrong |= !ok;
            /* the consumer's time: it ends last */
            double ms = rwl_max(boot, (me == 1) ? rwl_median(t) : 0.0);
            if (me == 1) {
                pro_line(o, names[v], tile, ms, ok);
            }
        }
    }
    mgi_wl_barrier(boot);
    if (mgi_region_deregister(reg) != UCS_OK) {
        return -1;
    }
    cudaFree(part);
    cudaFree(sums);
    cudaFree(err);
    return rwl_wrong ? -1 : 0;
}

/* ------------------------------------------------- get / put bandwidth */

/* One transfer of `len` bytes split over the grid: block b moves its
 * share with the block-level call (put: here -> rank peer; get: rank
 * peer -> here) */
__global__ void pro_bw(mgi_dev_region_t h, uint32_t peer, uint64_t off,
                       uint64_t len, uint64_t get_dst, int get, int reps,
                       int *err)
{
    /* (rounded up, so that the blocks cover all of len) */
    const uint64_t share = ((len + gridDim.x - 1) / gridDim.x + 15) &
                           ~15ull;
    const uint64_t b0 = blockIdx.x * share;
    const uint64_t n = (b0 >= len) ? 0 : ((len - b0 < share) ? len - b0 :
                                          share);
    ucs_status_t st = UCS_OK;

    for (int r = 0; (r < reps) && (n > 0) && (st == UCS_OK); ++r) {
        st = get ? mgi_dev_region_get_block(&h, h.base + get_dst + b0,
                                            peer, off + b0, n) :
                   mgi_dev_region_put_block(&h, peer, off + b0,
                                            h.base + off + b0, n);
    }
    if (st == UCS_OK) {
        st = mgi_dev_region_quiet_block(&h);
    }
    if ((st != UCS_OK) && (threadIdx.x == 0)) {
        atomicExch(err, (int)st);
    }
}

/* --bw: rank 0's device put and get to / from rank 1's part against the
 * copy engine (cudaMemcpyAsync to the mapped part) at each size, the
 * bytes checked after each; rank 1 waits. */
static int pro_rank_bw(mgi_wl_boot_t *boot, pro_opts_t *o,
                       mgi_context_h ctx)
{
    static const uint64_t sizes[] = {64u << 10, 256u << 10, 1u << 20,
                                     4u << 20, 16u << 20, 64u << 20};
    const uint64_t max = sizes[5], len = 2 * max + 4096;
    const int me = boot->rank, reps = 20;
    mgi_region_params_t rp = {};
    std::vector<char> a, b;
    mgi_dev_region_t h;
    mgi_region_h reg;
    cudaEvent_t e0, e1;
    cudaStream_t s;
    int *err, sms = 0, dev = 0, herr = 0, ok = 1;
    char *part, *rpart;
    float ms;

    RWL_CUDA(cudaGetDevice(&dev));
    RWL_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                                    dev));
    RWL_CUDA(cudaMalloc(&part, len));
    RWL_CUDA(cudaMemset(part, me + 1, len));
    RWL_CUDA(cudaMalloc(&err, sizeof(int)));
    RWL_CUDA(cudaMemset(err, 0, sizeof(int)));
    RWL_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    RWL_CUDA(cudaEventCreate(&e0));
    RWL_CUDA(cudaEventCreate(&e1));
    rp.addr   = part;
    rp.length = len;
    if ((mgi_region_register(ctx, &rp, &reg) != UCS_OK) ||
        (mgi_region_device_handle(reg, &h) != UCS_OK)) {
        return -1;
    }
    rpart = (char*)mgi_region_peer_ptr(reg, 1);
    if (me == 0) {
        /* a pattern to move: byte i of the first max bytes is i * 7 + 3 */
        a.resize(max);
        for (uint64_t i = 0; i < max; ++i) {
            a[i] = (char)(i * 7 + 3);
        }
        RWL_CUDA(cudaMemcpy(part, a.data(), max, cudaMemcpyHostToDevice));
        for (uint64_t sz : sizes) {
            double t_put = 0, t_get = 0, t_ce = 0;   /* each set by its pass */
            for (int k = 0; k < 3; ++k) {      /* put, get, copy engine */
                if ((k == 2) && (rpart == NULL)) {
                    break;
                }
                RWL_CUDA(cudaEventRecord(e0, s));
                if (k < 2) {
                    pro_bw<<<sms * 2, 512, 0, s>>>(h, 1, 0, sz, max, k == 1,
                                                   reps, err);
                    RWL_CUDA(cudaGetLastError());
                } else {
                    for (int r = 0; r < reps; ++r) {
                        RWL_CUDA(cudaMemcpyAsync(rpart, part, sz,
                                                 cudaMemcpyDeviceToDevice,
                                                 s));
                    }
                }
                RWL_CUDA(cudaEventRecord(e1, s));
                RWL_CUDA(cudaEventSynchronize(e1));
                RWL_CUDA(cudaEventElapsedTime(&ms, e0, e1));
                (k == 0 ? t_put : k == 1 ? t_get : t_ce) = ms / reps;
            }
            /* the bytes: put landed at rank 1, get brought them back */
            int size_ok = 1;
            b.assign(sz, 0);
            if (rpart != NULL) {
                RWL_CUDA(cudaMemcpy(b.data(), rpart, sz,
                                    cudaMemcpyDeviceToHost));
                size_ok &= (memcmp(a.data(), b.data(), sz) == 0);
            }
            RWL_CUDA(cudaMemcpy(b.data(), part + max, sz,
                                cudaMemcpyDeviceToHost));
            size_ok &= (memcmp(a.data(), b.data(), sz) == 0);
            ok      &= size_ok;
            printf("proact bw size=%llu put_GBps=%.1f get_GBps=%.1f "
                   "copy_engine_GBps=%.1f put/ce=%.2f get/ce=%.2f "
                   "checked=%s\n", (unsigned long long)sz, sz / t_put / 1e6,
                   sz / t_get / 1e6, (t_ce > 0) ? sz / t_ce / 1e6 : 0.0,
                   (t_ce > 0) ? t_ce / t_put : 0.0,
                   (t_ce > 0) ? t_ce / t_get : 0.0,
                   size_ok ? "yes" : "NO");
        }
        RWL_CUDA(cudaMemcpy(&herr, err, sizeof(int), cudaMemcpyDeviceToHost));
        if (herr != 0) {
            fprintf(stderr, "mgi_proact: bw: a device call returned %s\n",
                    ucs_status_string((ucs_status_t)herr));
            ok = 0;
        }
    }
    ok = rwl_all(boot, ok);
    rwl_wrong |= !ok;
    if (mgi_region_deregister(reg) != UCS_OK) {
        return -1;
    }
    cudaFree(part);
    cudaFree(err);
    return ok ? 0 : -1;
}

static int pro_rank_main(mgi_wl_boot_t *boot, void *arg)
{
    pro_opts_t *o = (pro_opts_t*)arg;
    mgi_context_h ctx;
    int ndev = 0, ret;

    rwl_rank = boot->rank;
    if (!o->cpu) {
        RWL_CUDA(cudaGetDeviceCount(&ndev));
        if (ndev < 2) {
            fprintf(stderr, "mgi_proact: %d GPU(s) visible, 2 needed (or "
                    "--cpu)\n", ndev);
            return 1;
        }
        RWL_CUDA(cudaSetDevice(boot->rank));
    }
    if (rwl_context(boot, &ctx) != 0) {
        return 1;
    }
    ret = o->cpu ? pro_rank_cpu(boot, o, ctx) :
          o->bw ? pro_rank_bw(boot, o, ctx) : pro_rank_gpu(boot, o, ctx);
    mgi_context_destroy(ctx);
    return (ret == 0) ? 0 : 1;
}

/* ---------------------------------------------------------------- main */

static void pro_usage(const char *argv0)
{
    fprintf(stderr,
            "usage: %s [--mib M] [--tiles 16K,64K,256K,1M,4M] [--work W] "
            "[--seed S]\n"
            "          [--iters N] [--variant push,bulk,stores|all] [--cpu]\n"
            "       %s --bw\n", argv0,
            argv0);
}

/* "16K,1M,...": sizes, each a power of two multiple of 16 KiB that
 * divides the buffer */
static int pro_parse_tiles(const char *list, pro_opts_t *o)
{
    char buf[256], *tok, *save = NULL, *end;

    snprintf(buf, sizeof(buf), "%s", list);
    o->ntiles = 0;
    for (tok = strtok_r(buf, ",", &save); tok != NULL;
         tok = strtok_r(NULL, ",", &save)) {
        uint64_t v = strtoull(tok, &end, 0);
        if ((*end == 'K') || (*end == 'k')) {
            v <<= 10;
            ++end;
        } else if ((*end == 'M') || (*end == 'm')) {
            v <<= 20;
            ++end;
        }
        if ((*end != '\0') || (v < MGI_PROACT_UNIT) || (v & (v - 1)) ||
            (o->ntiles == PRO_MAX_TILES)) {
            fprintf(stderr, "mgi_proact: --tiles %s: '%s' is not a power of "
                    "two of at least 16K (at most %d sizes)\n", list, tok,
                    PRO_MAX_TILES);
            return -1;
        }
        o->tiles[o->ntiles++] = v;
    }
    return (o->ntiles > 0) ? 0 : -1;
}

int main(int argc, char **argv)
{
    static const char *const variants[] = {"push", "bulk", "stores", NULL};
    static pro_opts_t o;
    const char *tiles = NULL;
    long mib = -1;

    rwl_prog = "mgi_proact";
    o.work  = 8;
    o.iters = 5;
    o.seed  = 42;
    snprintf(o.variant, sizeof(o.variant), "all");
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i], *v = (i + 1 < argc) ? argv[i + 1] : NULL;
        if (!strcmp(a, "--cpu")) {
            o.cpu = 1;
            continue;
        }
        if (!strcmp(a, "--bw")) {
            o.bw = 1;
            continue;
        }
        if (v == NULL) {
            pro_usage(argv[0]);
            return 2;
        }
        ++i;
        long long x = 0;
        if (!strcmp(a, "--tiles")) {
            tiles = v;
        } else if (!strcmp(a, "--variant")) {
            snprintf(o.variant, sizeof(o.variant), "%s", v);
            if (!rwl_list_valid(o.variant, variants)) {
                return 2;
            }
        } else if (!strcmp(a, "--mib")) {
            if (!rwl_int(a, v, 1, 16384, &x)) {
                return 2;
            }
            mib = (long)x;
        } else if (!strcmp(a, "--work")) {
            if (!rwl_int(a, v, 0, 4096, &x)) {
                return 2;
            }
            o.work = (int)x;
        } else if (!strcmp(a, "--iters")) {
            if (!rwl_int(a, v, 1, 1000, &x)) {
                return 2;
            }
            o.iters = (int)x;
        } else if (!strcmp(a, "--seed")) {
            if (!rwl_int(a, v, 0, LLONG_MAX, &x)) {
                return 2;
            }
            o.seed = (uint64_t)x;
        } else {
            pro_usage(argv[0]);
            return 2;
        }
    }
    if (mib < 0) {
        mib = o.cpu ? 4 : 256;
    }
    if (pro_parse_tiles((tiles != NULL) ? tiles :
                        o.cpu ? "16K,256K" : "16K,64K,256K,1M,4M", &o) != 0) {
        return 2;
    }
    o.bytes = (uint64_t)mib << 20;
    for (int t = 0; t < o.ntiles; ++t) {
        if ((o.bytes == 0) || (o.bytes % o.tiles[t] != 0)) {
            fprintf(stderr, "mgi_proact: --mib %ld is not a multiple of the "
                    "tile %llu\n", mib, (unsigned long long)o.tiles[t]);
            return 2;
        }
    }
    if (o.cpu && o.bw) {
        fprintf(stderr, "mgi_proact: --bw needs GPUs (no --cpu)\n");
        return 2;
    }
    if (o.cpu && rwl_listed(o.variant, "stores") && strcmp(o.variant, "all")) {
        fprintf(stderr, "mgi_proact: --variant stores needs GPUs (--cpu "
                "runs push and bulk)\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* producer rank 0 -> consumer rank 1 */
    return mgi_wl_boot_run(2, pro_rank_main, &o);
}

/**
 * The MGI variant's shuffle kernel: each block sends its slice of the
 * input on a channel (tiles, or a tuple per thread), receives what is
 * ready while it sends, flushes and receives until EOF; its receives copy
 * the tuples out or run the operator's step on them (a fused consumer).
 * Its instances by profile flag, send kind, consumer and kind of tile
 * send, for the host side (mgi_wl_mgi.cu) to launch.
 */
#include "mgi_wl_int.h"
#include "mgi_wl_dev.cuh"

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

wl_mgi_kern_t wl_mgi_kernel(int profile, int tiled, int c,
                            unsigned sl)
{
    return profile ? wl_mgi_kernel_p<true>(tiled, c, sl) :
                     wl_mgi_kernel_p<false>(tiled, c, sl);
}

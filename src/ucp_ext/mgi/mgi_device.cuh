/**
 * MGI device API (paper §3.1): Send, Flush and Recv called from kernels,
 * non-blocking, at thread, warp and block level, over the same ring
 * protocol as the host (mgi/mgi_ring.h).
 *
 *   send  returns bytes accepted, or 0 when the block's stage ring is full;
 *         destination: explicit dst wins, else schema + partition key
 *         choose key % |DstEps|, else broadcast.
 *   flush (block level) appends EOF to the block's stage ring and waits
 *         until the sorter/mover report the block's tuples delivered.
 *   recv  returns bytes, 0 when nothing is ready, or MGI_DEV_EOF once every
 *         source flushed and the block's final ring is drained.
 *
 * _warp variants are called by all 32 lanes together, _block variants by
 * all threads of the block; they reserve once and write their tuples
 * side by side (coalesced).
 *
 * The host fills an mgi_dev_ch_t for a GPU endpoint with
 * mgi_ch_device_handle() (mgi.h); pass it to kernels by value and take its
 * address. Flush counts one EOF per stage ring: launch the kernel with
 * `blocks` blocks (mgi_ep_params_t) and let every block flush once.
 */
#ifndef MGI_DEVICE_CUH_
#define MGI_DEVICE_CUH_

#include "mgi_ring.h"
#include "mgi_dev_ch.h"

#define MGI_DEV_DST_AUTO  (-1)
#define MGI_DEV_EOF       (-1000)   /* == MGI_EOF of mgi.h */
#define MGI_DEV_RECV_ILP  8         /* loads per thread in flight */


__device__ static inline mgi_ring_t *mgi_dev_stage(const mgi_dev_ch_t *h)
{
    return h->stage[blockIdx.x % h->nblocks];
}

__device__ static inline uint16_t mgi_dev_route(const mgi_dev_ch_t *h,
                                                const void *tuple, int dst)
{
    const uint8_t *p;
    uint64_t key = 0;
    uint32_t i;

    if (dst >= 0) {
        return (uint16_t)dst;
    }
    if (h->part_key >= 0) {
        p = (const uint8_t*)tuple + h->key_off;
        for (i = 0; i < h->key_size; ++i) {
            key |= (uint64_t)p[i] << (8 * i);   /* little endian */
        }
        return h->dst[key % h->ndst];
    }
    return MGI_EP_ID_ALL;
}

__device__ static inline void mgi_dev_write_msg(char *p, const mgi_dev_ch_t *h,
                                                uint16_t dst,
                                                const void *tuple,
                                                unsigned len)
{
    mgi_msg_hdr_t hdr;

    hdr.ch  = h->ch;
    hdr.dst = dst;
    hdr.src = h->self;
    hdr.len = (uint16_t)len;
    *(mgi_msg_hdr_t*)p = hdr;
    mgi_copy_bytes(p + MGI_MSG_HDR_SIZE, tuple, len);
}

/* Warp: the mark key shared by every lane of `mask` that passes `key`
 * with `has` set (MGI_SEG_KEY of its message, or MGI_SEG_MIXED),
 * MGI_SEG_MIXED when two differ; 0 when none has one. Every lane of mask
 * calls it (before sm_80: the whole warp). */
__device__ static inline uint32_t mgi_dev_warp_key(unsigned mask,
                                                   uint32_t key, int has)
{
    uint32_t lo = has ? key : 0xffffffffu, hi = has ? key : 0u;

    if (!__any_sync(mask, has)) {
        return 0;
    }
#if __CUDA_ARCH__ >= 800
    lo = __reduce_min_sync(mask, lo);
    hi = __reduce_max_sync(mask, hi);
#else
    for (int i = 16; i > 0; i >>= 1) {
        uint32_t v = __shfl_xor_sync(mask, lo, i);
        lo         = (v < lo) ? v : lo;
        v          = __shfl_xor_sync(mask, hi, i);
        hi         = (v > hi) ? v : hi;
    }
#endif
    return (lo == hi) ? lo : MGI_SEG_MIXED;
}

/* The mark key of a message for `route`. */
__device__ static inline uint32_t mgi_dev_msg_key(const mgi_dev_ch_t *h,
                                                  uint16_t route)
{
    return (route == MGI_EP_ID_ALL) ? MGI_SEG_MIXED :
           MGI_SEG_KEY(h->ch, route);
}

/* Thread level: one tuple. */
__device__ static inline int mgi_dev_send(const mgi_dev_ch_t *h,
                                          const void *tuple, unsigned len,
                                          int dst)
{
    mgi_ring_t *r = mgi_dev_stage(h);
    mgi_msg_hdr_t hdr;

    if ((len == 0) || (len > MGI_MSG_MAX_LEN)) {
        return 0;
    }
    hdr.ch  = h->ch;
    hdr.dst = mgi_dev_route(h, tuple, dst);
    hdr.src = h->self;
    hdr.len = (uint16_t)len;
    return (mgi_ring_append(r, &hdr, tuple, NULL) == MGI_RING_OK) ? (int)len :
           0;
}

/* Warp level: every lane passes its tuple (len 0: nothing); one
 * reservation for the warp. All or nothing: every lane gets its len or 0. */
__device__ static inline int mgi_dev_send_warp(const mgi_dev_ch_t *h,
                                               const void *tuple, unsigned len,
                                               int dst)
{
    const unsigned lane = threadIdx.x % 32;
    mgi_ring_t *r       = mgi_dev_stage(h);
    unsigned sz         = (len > 0) ? mgi_msg_size(len) : 0;
    unsigned incl       = sz, total, v;
    unsigned long long seg_ptr = 0;
    uint32_t off = 0, pos = 0, key;
    uint16_t route = MGI_EP_ID_ALL;
    int ok = 0, i;

    for (i = 1; i < 32; i <<= 1) {       /* inclusive prefix sum */
        v = __shfl_up_sync(0xffffffffu, incl, i);
        if ((int)lane >= i) {
            incl += v;
        }
    }
    total = __shfl_sync(0xffffffffu, incl, 31);
    if (total > mgi_ring_cap(r)) {
        return 0; /* never fits a segment: size segments for the warp */
    }
    if ((lane == 0) && (total > 0)) {
        mgi_seg_hdr_t *seg;
        ok = (mgi_ring_append_reserve(r, total, &seg, &off, &pos) ==
              MGI_RING_OK);
        seg_ptr = (unsigned long long)(uintptr_t)seg;
    }
    ok      = __shfl_sync(0xffffffffu, ok, 0);
    seg_ptr = __shfl_sync(0xffffffffu, seg_ptr, 0);
    off     = __shfl_sync(0xffffffffu, off, 0);
    pos     = __shfl_sync(0xffffffffu, pos, 0);
    if (!ok) {
        return 0;
    }
    if (sz > 0) {
        route = mgi_dev_route(h, tuple, dst);
        mgi_dev_write_msg(mgi_seg_payload((mgi_seg_hdr_t*)seg_ptr) + off +
                          (incl - sz), h, route, tuple, len);
    }
    key = mgi_dev_warp_key(0xffffffffu, mgi_dev_msg_key(h, route), sz > 0);
    __syncwarp();
    if (lane == 0) {
        mgi_seg_mark((mgi_seg_hdr_t*)seg_ptr, key);
        __threadfence(); /* stage rings: the sorter is on this GPU */
        mgi_ring_append_commit(r, (mgi_seg_hdr_t*)seg_ptr, off, total, pos);
    }
    return (int)len;
}

/* Block level: every thread passes its tuple (len 0: nothing). */
__device__ static inline int mgi_dev_send_block(const mgi_dev_ch_t *h,
                                                const void *tuple,
                                                unsigned len, int dst)
{
    __shared__ unsigned s_total;
    __shared__ int s_ok;
    __shared__ mgi_seg_hdr_t *s_seg;
    __shared__ uint32_t s_off, s_pos, s_klo, s_khi;
    unsigned sz = (len > 0) ? mgi_msg_size(len) : 0;
    unsigned my_off;
    uint32_t key;
    uint16_t route;

    if (threadIdx.x == 0) {
        s_total = 0;
        s_klo   = 0xffffffffu;
        s_khi   = 0;
    }
    __syncthreads();
    my_off = (sz > 0) ? atomicAdd(&s_total, sz) : 0;
    __syncthreads();
    if (threadIdx.x == 0) {
        /* a reservation larger than a segment would never fit: refuse it
         * (MGI_SEG_SIZE / MGI_TUPLE_SIZE size segments for the block) */
        s_ok = (s_total > 0) && (s_total <= mgi_ring_cap(mgi_dev_stage(h))) &&
               (mgi_ring_append_reserve(mgi_dev_stage(h), s_total, &s_seg,
                                        &s_off, &s_pos) == MGI_RING_OK);
    }
    __syncthreads();
    if (!s_ok) {
        return 0;
    }
    route = (sz > 0) ? mgi_dev_route(h, tuple, dst) : MGI_EP_ID_ALL;
    if (sz > 0) {
        mgi_dev_write_msg(mgi_seg_payload(s_seg) + s_off + my_off, h, route,
                          tuple, len);
    }
    /* one (channel, destination) for the whole reservation? */
    key = mgi_dev_warp_key(__activemask(), mgi_dev_msg_key(h, route), sz > 0);
    if (((threadIdx.x % 32) == 0) && (key != 0)) {
        atomicMin(&s_klo, key);
        atomicMax(&s_khi, key);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        mgi_seg_mark(s_seg, (s_klo == s_khi) ? s_klo : MGI_SEG_MIXED);
        __threadfence(); /* stage rings: the sorter is on this GPU */
        mgi_ring_append_commit(mgi_dev_stage(h), s_seg, s_off, s_total,
                               s_pos);
    }
    return (int)len;
}

/* The EOF record of a block's flush number `seq`: to every destination,
 * counting the channel's `nblocks` producers of this endpoint. */
__device__ static inline void mgi_dev_eof_msg(const mgi_dev_ch_t *h,
                                              uint32_t seq,
                                              mgi_msg_hdr_t *hdr,
                                              uint32_t payload[2])
{
    hdr->ch    = h->ch;
    hdr->dst   = MGI_EP_ID_ALL;
    hdr->src   = h->self;
    hdr->len   = MGI_MSG_LEN_EOF;
    payload[0] = h->nblocks;
    payload[1] = seq;
}

/* Block level: EOF for this block, then wait for delivery. Returns 0, or
 * -1 when it gave up after `spin_limit` polls (0: wait forever). */
__device__ static inline int mgi_dev_flush(const mgi_dev_ch_t *h,
                                           unsigned long long spin_limit)
{
    __shared__ int s_ret;
    mgi_ring_t *r = mgi_dev_stage(h);
    unsigned long long spins = 0;
    uint32_t payload[2], seq;
    mgi_msg_hdr_t hdr;

    __syncthreads();
    if (threadIdx.x == 0) {
        s_ret = 0;
        seq   = mgi_fadd32(&r->flush_seq, 1) + 1;
        mgi_dev_eof_msg(h, seq, &hdr, payload);
        while (mgi_ring_append(r, &hdr, payload, NULL) != MGI_RING_OK) {
            if (spin_limit && (++spins > spin_limit)) {
                s_ret = -1;
                break;
            }
            mgi_cpu_relax();
        }
        if (s_ret == 0) {
            mgi_ring_append_close(r);
            while ((int32_t)(mgi_ld_acq32(&r->flush_done) - seq) < 0) {
                if (spin_limit && (++spins > spin_limit)) {
                    s_ret = -1;
                    break;
                }
                mgi_cpu_relax();
            }
        }
    }
    __syncthreads();
    return s_ret;
}

/* Block level, non-blocking flush: *state is a __shared__ word the block
 * set to 0 before its first call. The first call that finds room appends
 * the EOF; returns 1 once this block's tuples were delivered, else 0 (keep
 * receiving meanwhile: delivery may need this endpoint to drain its final
 * rings, as when every endpoint flushes at once). */
__device__ static inline int mgi_dev_flush_nb(const mgi_dev_ch_t *h,
                                              uint32_t *state)
{
    __shared__ int s_done;
    mgi_ring_t *r = mgi_dev_stage(h);
    uint32_t payload[2], seq;
    mgi_msg_hdr_t hdr;

    __syncthreads();
    if (threadIdx.x == 0) {
        s_done = 0;
        if (*state == 0) {
            /* the sequence number is taken only once the EOF is in */
            seq = mgi_ld_acq32(&r->flush_seq) + 1;
            mgi_dev_eof_msg(h, seq, &hdr, payload);
            if (mgi_ring_append(r, &hdr, payload, NULL) == MGI_RING_OK) {
                mgi_st_rel32(&r->flush_seq, seq);
                mgi_ring_append_close(r);
                *state = seq;
            }
        }
        if ((*state != 0) &&
            ((int32_t)(mgi_ld_acq32(&r->flush_done) - *state) >= 0)) {
            s_done = 1;
        }
    }
    __syncthreads();
    return s_done;
}

/* Thread level: whole tuples into buf, as many as fit (schemaless: one). */
__device__ static inline int mgi_dev_recv(const mgi_dev_ch_t *h, void *buf,
                                          unsigned cap)
{
    const unsigned b  = blockIdx.x % h->nblocks;
    mgi_ring_t *r     = h->final[b];
    const uint32_t scap = mgi_ring_cap(r);
    unsigned done     = 0;
    mgi_seg_hdr_t *seg;
    mgi_msg_hdr_t *m;
    uint32_t off;
    int eof;

    if (atomicCAS(&h->final_lock[b], 0u, 1u) != 0u) {
        return 0; /* another thread of the block is receiving */
    }
    __threadfence();
    eof = (mgi_ld_acq32(&h->eof_sources[b]) == h->nsrc);
    while ((seg = mgi_ring_peek(r, 0)) != NULL) {
        off = r->cons_off;
        while ((m = mgi_seg_next(seg, scap, &off)) != NULL) {
            if (done + m->len > cap) {
                break;
            }
            mgi_copy_bytes((char*)buf + done, (char*)m + MGI_MSG_HDR_SIZE,
                           m->len);
            done += m->len;
            off  += mgi_msg_size(m->len);
            if (h->tuple_size == 0) {
                break;
            }
        }
        r->cons_off = off;
        if (mgi_seg_next(seg, scap, &off) != NULL) {
            break;
        }
        mgi_ring_release(r, 1);
        if (h->tuple_size == 0) {
            break;
        }
    }
    __threadfence();
    atomicExch(&h->final_lock[b], 0u);
    if ((done == 0) && eof) {
        return MGI_DEV_EOF;
    }
    return (int)done;
}

/* Block level, the walker behind mgi_dev_recv_block[_each]: every thread
 * of the block calls it. Takes runs of whole tuples from the block's final
 * ring, at most `cap` payload bytes, and calls body(msgs, msz, len, n,
 * done) with every thread for each run: n messages of `len` payload bytes
 * at `msgs`, `msz` bytes apart (header first), `done` bytes taken before
 * the run. Returns the same to every thread: bytes, 0 when nothing is
 * ready, or MGI_DEV_EOF once every source flushed and the final ring is
 * drained.
 *
 * The messages of a final ring are walked without a serial pass: a run of
 * messages of the first one's channel and length is found in parallel
 * (the k-th header of the run is a message boundary because the k-1 before
 * it were messages of that size). Pads, or a message of another length,
 * end a run; the next round starts after it. */
template <typename B>
__device__ static inline int mgi_dev_recv_block_runs(const mgi_dev_ch_t *h,
                                                     unsigned cap, B body)
{
    __shared__ int s_ret, s_eof, s_n, s_bad;
    __shared__ uint32_t s_off, s_len, s_msz, s_done;
    __shared__ uint16_t s_ch;
    __shared__ mgi_seg_hdr_t *s_seg;
    const unsigned b    = blockIdx.x % h->nblocks;
    mgi_ring_t *r       = h->final[b];
    const uint32_t scap = mgi_ring_cap(r);
    mgi_seg_hdr_t *seg;
    mgi_msg_hdr_t *m;
    uint32_t off, i;
    int ret, n;

    __syncthreads();
    if (threadIdx.x == 0) {
        s_done = 0;
        s_ret  = 1;
        if (atomicCAS(&h->final_lock[b], 0u, 1u) != 0u) {
            s_ret = 0; /* another block of this final ring is receiving */
        } else {
            __threadfence();
            s_eof = (mgi_ld_acq32(&h->eof_sources[b]) == h->nsrc);
        }
    }
    __syncthreads();
    if (s_ret == 0) {
        return 0;
    }
    for (;;) {
        if (threadIdx.x == 0) {
            s_n   = -1; /* stop */
            s_bad = 0;
            seg   = mgi_ring_peek(r, 0);
            if (seg != NULL) {
                off = r->cons_off;
                m   = mgi_seg_next(seg, scap, &off);
                if (m == NULL) {
                    mgi_ring_release(r, 1); /* drained: the next one */
                    s_n = 0;
                } else if (s_done + m->len <= cap) {
                    s_seg = seg;
                    s_off = off;
                    s_ch  = m->ch;
                    s_len = m->len;
                    s_msz = mgi_msg_size(m->len);
                    n     = min((cap - s_done) / max(s_len, 1u),
                                (scap - off) / s_msz);
                    s_n   = n;
                    s_bad = n;
                }
            }
        }
        __syncthreads();
        n = s_n;
        if (n < 0) {
            break;
        }
        if (n > 0) {
            for (i = threadIdx.x; i < (uint32_t)n; i += blockDim.x) {
                m = (mgi_msg_hdr_t*)(mgi_seg_payload(s_seg) + s_off +
                                     i * s_msz);
                if ((m->ch != s_ch) || (m->len != s_len)) {
                    atomicMin(&s_bad, (int)i);
                }
            }
            __syncthreads();
            n = s_bad; /* >= 1: the first header was read above */
            body((const char*)mgi_seg_payload(s_seg) + s_off, s_msz, s_len,
                 (unsigned)n, s_done);
            __syncthreads();
            if (threadIdx.x == 0) {
                s_done     += n * s_len;
                r->cons_off = s_off + n * s_msz;
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        __threadfence();
        atomicExch(&h->final_lock[b], 0u);
        s_ret = ((s_done == 0) && s_eof) ? MGI_DEV_EOF : (int)s_done;
    }
    __syncthreads();
    ret = s_ret;
    return ret;
}

/* Block level: every thread of the block calls it; whole tuples into buf
 * (shared or global memory), as many as fit, copied by the whole block
 * word by word. Returns the same to every thread: bytes, 0 when nothing is
 * ready, or MGI_DEV_EOF once every source flushed and the final ring is
 * drained. Schemaless channels (tuple_size 0) take one tuple per call. */
__device__ static inline int mgi_dev_recv_block(const mgi_dev_ch_t *h,
                                                void *buf, unsigned cap)
{
    __shared__ int s_ret;

    if (h->tuple_size == 0) {
        __syncthreads();
        if (threadIdx.x == 0) {
            s_ret = mgi_dev_recv(h, buf, cap);
        }
        __syncthreads();
        return s_ret;
    }
    return mgi_dev_recv_block_runs(h, cap,
        [&](const char *msgs, uint32_t msz, uint32_t len, unsigned n,
            uint32_t done) {
            uint32_t w, t, k, words, u, base;

            if (((len % 8) == 0) && ((((uintptr_t)buf + done) % 8) == 0)) {
                /* MGI_DEV_RECV_ILP loads in flight per thread: a block
                 * copies at (bytes in flight / memory latency) */
                uint64_t v[MGI_DEV_RECV_ILP];
                uint64_t *out = (uint64_t*)((char*)buf + done);

                words = len / 8;
                for (base = threadIdx.x; base < n * words;
                     base += blockDim.x * MGI_DEV_RECV_ILP) {
#pragma unroll
                    for (u = 0; u < MGI_DEV_RECV_ILP; ++u) {
                        w = base + u * blockDim.x;
                        if (w < n * words) {
                            t    = w / words;
                            k    = w - t * words;
                            v[u] = __ldcg((const unsigned long long*)
                                          (msgs + t * msz +
                                           MGI_MSG_HDR_SIZE + 8 * k));
                        }
                    }
#pragma unroll
                    for (u = 0; u < MGI_DEV_RECV_ILP; ++u) {
                        w = base + u * blockDim.x;
                        if (w < n * words) {
                            out[w] = v[u];
                        }
                    }
                }
            } else {
                for (w = threadIdx.x; w < n * len; w += blockDim.x) {
                    t = w / len;
                    k = w - t * len;
                    ((char*)buf)[done + w] =
                        msgs[t * msz + MGI_MSG_HDR_SIZE + k];
                }
            }
        });
}

/* Block level, zero copy: every thread of the block calls it; the block's
 * threads call f(tuple, len) for each tuple in place in the final ring
 * (tuple i of a run on thread i % blockDim.x), up to `max_bytes` of
 * payload, and the ring slots are freed after. f may read the tuple only
 * during the call. Returns what mgi_dev_recv_block returns: bytes, 0, or
 * MGI_DEV_EOF. The receive of kernels that consume tuples where they are
 * (aggregations, probes): no copy, any amount per call. */
template <typename F>
__device__ static inline int mgi_dev_recv_block_each(const mgi_dev_ch_t *h,
                                                     unsigned max_bytes, F f)
{
    return mgi_dev_recv_block_runs(h, max_bytes,
        [&](const char *msgs, uint32_t msz, uint32_t len, unsigned n,
            uint32_t done) {
            for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
                f(msgs + (size_t)i * msz + MGI_MSG_HDR_SIZE, len);
            }
        });
}

#endif

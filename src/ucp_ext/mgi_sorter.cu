/**
 * MGI sorter of a GPU endpoint (paper §5.4, Fig. 9) and the host side of
 * GPU endpoints: ring memory on the device, device tables of routes and
 * channels, the persistent sorter kernel.
 *
 * The sorter kernel runs `sorter_blocks` blocks for the endpoint's whole
 * life. Block b owns the stage rings, receive lanes and sort rings whose
 * index is b modulo the grid, so every ring has one consumer and the hot
 * path has no grid-wide atomics: a block copies a full segment into
 * shared memory, one thread walks its messages and assigns each to a
 * target ring (a sort ring by the route of its destination, the loopback
 * lane of the receive ring for this endpoint, or a final ring on the
 * receive side), counting bytes per target (shared memory, in message
 * order). Then the block reserves once per target (one device atomic on
 * that ring's STail per segment and target) and writes the tuples grouped
 * by target, consecutive threads writing consecutive 8-byte words
 * (coalesced; MGI_SORTER_COALESCE=0 writes one tuple per thread instead,
 * for the micro-benchmark). A pass is all or nothing: when a target ring
 * is full, the reservations already taken are committed as padding and
 * the segment is tried again in the next round, so no state is kept
 * between rounds but the read offset of the ring.
 *
 * Host and device meet in three places only:
 *  - tables (routes, channels) written by the host with cudaMemcpyAsync
 *    on a control stream while the kernel runs, read with volatile loads;
 *  - sort-ring mirrors (mgi_ring_mirror_t, pinned host memory mapped into
 *    the GPU): the kernel publishes full segments there and recycles what
 *    the host mover released (mgi_ring_mirror_sync), so the mover never
 *    reads or writes control words in device memory;
 *  - a status block in mapped host memory: stop flag, epoch, counters.
 *
 * A persistent kernel makes every device-wide synchronization hang:
 * cudaFree and cudaDeviceSynchronize on the endpoint's device wait for it.
 * So device memory freed while the sorter runs is only queued here and
 * freed once it stopped (mgi_ep_delete, mgi_context_destroy), and
 * applications use streams (cudaStreamSynchronize) and CUDA_MODULE_LOADING
 * =EAGER (lazy loading of a later kernel may wait for the sorter too).
 */
#include "mgi_int.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MGI_GPU_MAX_ROUTES      256    /* sort rings of one GPU endpoint */
#define MGI_GPU_MAX_EMIT        1024   /* messages placed in one pass */
#define MGI_GPU_MAX_PENDING     16     /* flushes in flight per block */
#define MGI_GPU_MAX_SORTERS     64     /* sorter blocks */
#define MGI_GPU_SLOT_NONE       (-1)
#define MGI_GPU_SLOT_LOOPBACK   (-2)
#define MGI_GPU_NO_DST          0xffffu
#define MGI_GPU_STOP_POLL       32     /* rounds between stop-flag reads */
#define MGI_GPU_DST_CACHE       16     /* route lookups cached per walk */

#define MGI_CUDA_CALL(_call, _fmt, ...) \
    ({ \
        cudaError_t _e = (_call); \
        if (_e != cudaSuccess) { \
            ucs_error("mgi " _fmt ": %s failed: %s", ##__VA_ARGS__, #_call, \
                      cudaGetErrorString(_e)); \
        } \
        (_e == cudaSuccess) ? UCS_OK : UCS_ERR_IO_ERROR; \
    })

/* ---------------------------------------------------- device structures */

/* Status block in mapped host memory. */
typedef struct mgi_gpu_status {
    volatile uint32_t stop;
    volatile uint32_t epoch;        /* block 0: rounds / MGI_GPU_STOP_POLL */
    uint32_t          reserved[6];
    /* one writer each (thread 0 of the block): no atomics on host memory,
     * which PCIe may not offer */
    struct {
        volatile unsigned long long sorted;
        volatile unsigned long long dispatched;
        volatile uint32_t           started;
        volatile uint32_t           dropped;    /* no channel or route */
        volatile uint32_t           eof_errors; /* extra EOF records */
        uint32_t                    reserved;
    } blk[MGI_GPU_MAX_SORTERS];
} mgi_gpu_status_t;

/* A channel at one GPU endpoint, in device memory. */
typedef struct mgi_gpu_dch {
    uint16_t   id;
    uint16_t   ndst;
    uint16_t   nsrc;
    uint16_t   self_dst;            /* index in dst, MGI_GPU_NO_DST */
    uint32_t   nfinal;              /* consuming blocks (0: not a dst) */
    uint32_t   rr;                  /* next final ring */
    uint16_t   dst[MGI_GPU_MAX_TARGETS];
    uint16_t   src[MGI_MAX_CH_SRC];
    uint32_t   eof_count[MGI_MAX_CH_SRC];
    mgi_ring_t **final;             /* [nfinal], behind this struct */
    uint32_t   *final_lock;         /* [nfinal] */
    uint32_t   *eof_sources;        /* [nfinal] */
} mgi_gpu_dch_t;

typedef struct mgi_gpu_pending {
    mgi_ring_t *stage;
    uint32_t   seq;
    uint32_t   n;
    mgi_ring_t *ring[MGI_GPU_MAX_TARGETS];
    uint32_t   pos[MGI_GPU_MAX_TARGETS];
} mgi_gpu_pending_t;

/* Per sorter block, device memory, used by its thread 0 only. */
typedef struct mgi_gpu_block {
    uint32_t          head, count;
    mgi_gpu_pending_t pending[MGI_GPU_MAX_PENDING];
} mgi_gpu_block_t;

/* The endpoint as the sorter kernel sees it, device memory. */
typedef struct mgi_gpu_dep {
    uint16_t          id;
    uint16_t          reserved;
    uint32_t          nstage;
    uint32_t          nlanes;       /* the last one is the loopback lane */
    uint32_t          coalesce;
    uint64_t          lane_bytes;
    char              *recv_mem;
    mgi_ring_t        **stage;      /* [nstage] */
    int16_t           *dst_slot;    /* [MGI_MAX_EPS]: route slot of a dst */
    mgi_gpu_dch_t     **chs;        /* [max_channels] */
    uint32_t          max_channels;
    uint32_t          nroutes;
    mgi_gpu_status_t  *status;
    mgi_gpu_block_t   *blk;         /* [sorter blocks] */
    mgi_ring_t        *sort[MGI_GPU_MAX_ROUTES];
    mgi_ring_mirror_t *mirror[MGI_GPU_MAX_ROUTES];
} mgi_gpu_dep_t;

/* Host state of a GPU endpoint (ep->gpu). */
typedef struct mgi_gpu_ep {
    int              device;
    cudaStream_t     ctl;           /* table updates */
    cudaStream_t     stream;        /* the sorter kernel */
    mgi_gpu_dep_t    *dep;          /* device */
    mgi_gpu_status_t *status;       /* mapped host memory */
    mgi_ring_t       **stage;       /* device array of stage rings */
    int16_t          *dst_slot;
    mgi_gpu_dch_t    **chs;
    mgi_gpu_block_t  *blk;
    unsigned         nblocks, nthreads;
    size_t           smem;
    int              running;
    void             **deferred;    /* device memory to free once stopped */
    unsigned         ndeferred, deferred_cap;
} mgi_gpu_ep_t;

/* Host state of a channel at a GPU endpoint (ch->gpu[ep->index]). */
typedef struct mgi_gpu_ch {
    mgi_gpu_dch_t *dch;             /* device blob */
    mgi_ring_t    **final;          /* host copy of the device pointers */
    unsigned      nfinal;
} mgi_gpu_ch_t;

/* ------------------------------------------------------- device: helpers */

template <typename T>
__device__ static inline T mgi_vld(const T *p)
{
    return *(const volatile T*)p;
}

/* Shared state of one pass over a segment. */
typedef struct mgi_gpu_pass {
    uint32_t      nemit, ntgt, end_off;
    int           at_end, stop_eof, blocked, progress;
    mgi_ring_t    *tgt_ring[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_bytes[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_cnt[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_first[MGI_GPU_MAX_TARGETS + 1];
    uint32_t      tgt_word0[MGI_GPU_MAX_TARGETS + 1];
    mgi_seg_hdr_t *tgt_seg[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_off[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_pos[MGI_GPU_MAX_TARGETS];
    int           tgt_ok[MGI_GPU_MAX_TARGETS];
    /* final rings touched since the lanes last ran dry */
    mgi_ring_t    *touched[MGI_GPU_MAX_TARGETS];
    uint32_t      ntouched;
    mgi_seg_hdr_t *seg;
    uint32_t      start;
    int           stop;
    unsigned long long sorted, dispatched;
} mgi_gpu_pass_t;

/* Emission arrays, dynamic shared memory after the segment copy. */
typedef struct mgi_gpu_emit {
    uint32_t *src;      /* message offset in the payload */
    uint32_t *dst_off;  /* offset in its target's reservation */
    uint16_t *size;     /* message bytes */
    uint16_t *dst;      /* header dst to write, MGI_GPU_NO_DST: keep */
    uint16_t *order;    /* emissions grouped by target, in order */
    uint8_t  *tgt;
} mgi_gpu_emit_t;

__device__ static inline void mgi_gpu_count(volatile uint32_t *c)
{
    *c = *c + 1;
}

__device__ static inline mgi_ring_t *mgi_gpu_lane(const mgi_gpu_dep_t *d,
                                                  uint32_t lane)
{
    return (mgi_ring_t*)(d->recv_mem + lane * d->lane_bytes);
}

__device__ static inline mgi_gpu_dch_t *mgi_gpu_ch(const mgi_gpu_dep_t *d,
                                                   uint16_t id)
{
    if (id >= d->max_channels) {
        return NULL;
    }
    return mgi_vld(&d->chs[id]);
}

/* Send side: the ring that takes a tuple for `dst`, or NULL. */
__device__ static inline mgi_ring_t *mgi_gpu_send_target(
        const mgi_gpu_dep_t *d, uint16_t dst)
{
    int16_t slot;

    if (dst == d->id) {
        return mgi_gpu_lane(d, d->nlanes - 1);
    }
    slot = mgi_vld(&d->dst_slot[dst]);
    if (slot == MGI_GPU_SLOT_LOOPBACK) {
        return mgi_gpu_lane(d, d->nlanes - 1);
    }
    if (slot < 0) {
        return NULL;
    }
    return mgi_vld(&d->sort[slot]);
}

/* Thread 0: target index of `ring` in this pass, or -1 when full. */
__device__ static inline int mgi_gpu_tgt(mgi_gpu_pass_t *p, mgi_ring_t *ring)
{
    uint32_t t;

    for (t = 0; t < p->ntgt; ++t) {
        if (p->tgt_ring[t] == ring) {
            return (int)t;
        }
    }
    if (p->ntgt == MGI_GPU_MAX_TARGETS) {
        return -1;
    }
    p->tgt_ring[p->ntgt]  = ring;
    p->tgt_bytes[p->ntgt] = 0;
    p->tgt_cnt[p->ntgt]   = 0;
    return (int)p->ntgt++;
}

__device__ static inline void mgi_gpu_emit_add(mgi_gpu_pass_t *p,
                                               mgi_gpu_emit_t *e, int t,
                                               uint32_t off, uint32_t size,
                                               uint16_t dst)
{
    uint32_t i = p->nemit++;

    e->src[i]      = off;
    e->size[i]     = (uint16_t)size;
    e->dst[i]      = dst;
    e->tgt[i]      = (uint8_t)t;
    e->dst_off[i]  = p->tgt_bytes[t];
    p->tgt_bytes[t] += size;
    p->tgt_cnt[t]++;
}

/* Thread 0: walk the segment copy from p->start and place messages. */
__device__ static void mgi_gpu_walk(const mgi_gpu_dep_t *d, mgi_gpu_pass_t *p,
                                    mgi_gpu_emit_t *e, const char *seg,
                                    uint32_t cap, int recv_side)
{
    uint32_t off = p->start, size, k, n, sum;
    const mgi_msg_hdr_t *h;
    mgi_gpu_dch_t *ch;
    mgi_ring_t *ring;
    uint16_t cache_id = 0xffff, ch_id = 0xffff;
    mgi_ring_t *cache_final = NULL;
    /* the tables change only by appending: cache lookups for the walk,
     * a global load per message would cost more than the walk itself */
    uint16_t dc_dst[MGI_GPU_DST_CACHE];
    mgi_ring_t *dc_ring[MGI_GPU_DST_CACHE];
    int t;

    p->nemit    = 0;
    p->ntgt     = 0;
    p->at_end   = 0;
    p->stop_eof = 0;
    ch          = NULL;
    for (k = 0; k < MGI_GPU_DST_CACHE; ++k) {
        dc_dst[k] = MGI_GPU_NO_DST;
    }
    for (;;) {
        if (off + MGI_MSG_HDR_SIZE > cap) {
            p->at_end = 1;
            break;
        }
        h = (const mgi_msg_hdr_t*)(seg + off);
        if (h->ch == MGI_MSG_CH_PAD) {
            off += MGI_MSG_HDR_SIZE + (uint32_t)h->len * MGI_MSG_ALIGN;
            continue;
        }
        if (h->len == MGI_MSG_LEN_EOF) {
            p->stop_eof = 1;
            break;
        }
        size = mgi_msg_size(h->len);
        if (h->ch != ch_id) {
            ch_id = h->ch;
            ch    = mgi_gpu_ch(d, ch_id);
        }
        if (ch == NULL) {
            mgi_gpu_count(&d->status->blk[blockIdx.x].dropped);
            off += size;
            continue;
        }
        if (recv_side) {
            if ((ch->self_dst == MGI_GPU_NO_DST) || (h->dst != d->id) ||
                (ch->nfinal == 0)) {
                mgi_gpu_count(&d->status->blk[blockIdx.x].dropped);
                off += size;
                continue;
            }
            if (h->ch != cache_id) {
                /* one final ring per (segment, channel): consuming blocks
                 * take turns by segment */
                cache_id    = h->ch;
                cache_final = ch->final[atomicAdd(&ch->rr, 1u) % ch->nfinal];
            }
            t = mgi_gpu_tgt(p, cache_final);
            if ((t < 0) || (p->nemit == MGI_GPU_MAX_EMIT)) {
                break;
            }
            mgi_gpu_emit_add(p, e, t, off, size, MGI_GPU_NO_DST);
        } else if (h->dst == MGI_EP_ID_ALL) {
            n = ch->ndst;
            if (p->nemit + n > MGI_GPU_MAX_EMIT) {
                break;
            }
            /* all targets must fit the pass before any is placed */
            sum = p->ntgt;
            for (k = 0; k < n; ++k) {
                ring = mgi_gpu_send_target(d, ch->dst[k]);
                if ((ring != NULL) && (mgi_gpu_tgt(p, ring) < 0)) {
                    break;
                }
            }
            if (k < n) {
                p->ntgt = sum; /* undo the targets added above */
                break;
            }
            for (k = 0; k < n; ++k) {
                ring = mgi_gpu_send_target(d, ch->dst[k]);
                if (ring == NULL) {
                    mgi_gpu_count(&d->status->blk[blockIdx.x].dropped);
                    continue;
                }
                mgi_gpu_emit_add(p, e, mgi_gpu_tgt(p, ring), off, size,
                                 ch->dst[k]);
            }
        } else {
            k = h->dst % MGI_GPU_DST_CACHE;
            if (dc_dst[k] != h->dst) {
                dc_dst[k]  = h->dst;
                dc_ring[k] = mgi_gpu_send_target(d, h->dst);
            }
            ring = dc_ring[k];
            if (ring == NULL) {
                mgi_gpu_count(&d->status->blk[blockIdx.x].dropped);
                off += size;
                continue;
            }
            t = mgi_gpu_tgt(p, ring);
            if ((t < 0) || (p->nemit == MGI_GPU_MAX_EMIT)) {
                break;
            }
            mgi_gpu_emit_add(p, e, t, off, size, MGI_GPU_NO_DST);
        }
        off += size;
    }
    p->end_off = off;

    /* group the emissions by target, keeping their order */
    p->tgt_first[0] = 0;
    p->tgt_word0[0] = 0;
    for (k = 0; k < p->ntgt; ++k) {
        p->tgt_first[k + 1] = p->tgt_first[k] + p->tgt_cnt[k];
        p->tgt_word0[k + 1] = p->tgt_word0[k] + p->tgt_bytes[k] / 8;
        p->tgt_cnt[k]       = 0;
    }
    for (k = 0; k < p->nemit; ++k) {
        t = e->tgt[k];
        e->order[p->tgt_first[t] + p->tgt_cnt[t]++] = (uint16_t)k;
    }
}

/* Thread 0: pad and commit a reservation that will not be used. */
__device__ static inline void mgi_gpu_unreserve(mgi_ring_t *r,
                                                mgi_seg_hdr_t *seg,
                                                uint32_t off, uint32_t sz,
                                                uint32_t pos)
{
    mgi_seg_write_pad(seg, off, sz);
    mgi_ring_append_commit(r, seg, off, sz, pos);
}

/* Block: reserve per target, copy, commit. Returns 0 when blocked. */
__device__ static int mgi_gpu_place(const mgi_gpu_dep_t *d,
                                    mgi_gpu_pass_t *p, mgi_gpu_emit_t *e,
                                    const char *seg)
{
    const unsigned tid = threadIdx.x, nth = blockDim.x;
    uint32_t t, w, lo, hi, mid, lw, k, i, words;
    uint64_t v;
    char *dst;

    if (tid == 0) {
        p->blocked = 0;
    }
    __syncthreads();
    for (t = tid; t < p->ntgt; t += nth) {
        p->tgt_ok[t] = (mgi_ring_append_reserve(p->tgt_ring[t],
                                                p->tgt_bytes[t],
                                                &p->tgt_seg[t],
                                                &p->tgt_off[t],
                                                &p->tgt_pos[t]) ==
                        MGI_RING_OK);
        if (!p->tgt_ok[t]) {
            p->blocked = 1;
        }
    }
    __syncthreads();
    if (p->blocked) {
        for (t = tid; t < p->ntgt; t += nth) {
            if (p->tgt_ok[t]) {
                mgi_gpu_unreserve(p->tgt_ring[t], p->tgt_seg[t],
                                  p->tgt_off[t], p->tgt_bytes[t],
                                  p->tgt_pos[t]);
            }
        }
        return 0;
    }

    if (d->coalesce) {
        /* word w of the output, grouped by target: consecutive threads
         * write consecutive words of one reservation */
        words = p->tgt_word0[p->ntgt];
        for (w = tid; w < words; w += nth) {
            lo = 0;
            hi = p->ntgt;
            while (hi - lo > 1) {             /* last target with word0<=w */
                mid = (lo + hi) / 2;
                if (p->tgt_word0[mid] <= w) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            t  = lo;
            lw = w - p->tgt_word0[t];
            lo = p->tgt_first[t];
            hi = p->tgt_first[t + 1];
            while (hi - lo > 1) {             /* its message */
                mid = (lo + hi) / 2;
                if (e->dst_off[e->order[mid]] / 8 <= lw) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            i = e->order[lo];
            k = lw - e->dst_off[i] / 8;
            v = *(const uint64_t*)(seg + e->src[i] + 8 * k);
            if ((k == 0) && (e->dst[i] != MGI_GPU_NO_DST)) {
                ((mgi_msg_hdr_t*)&v)->dst = e->dst[i];
            }
            dst = mgi_seg_payload(p->tgt_seg[t]) + p->tgt_off[t] + 8 * lw;
            *(uint64_t*)dst = v;
        }
    } else {
        /* one message per thread: strided writes */
        for (i = tid; i < p->nemit; i += nth) {
            t   = e->tgt[i];
            dst = mgi_seg_payload(p->tgt_seg[t]) + p->tgt_off[t] +
                  e->dst_off[i];
            for (k = 0; k < e->size[i] / 8u; ++k) {
                v = *(const uint64_t*)(seg + e->src[i] + 8 * k);
                if ((k == 0) && (e->dst[i] != MGI_GPU_NO_DST)) {
                    ((mgi_msg_hdr_t*)&v)->dst = e->dst[i];
                }
                ((uint64_t*)dst)[k] = v;
            }
        }
    }
    __threadfence();
    __syncthreads();
    for (t = tid; t < p->ntgt; t += nth) {
        mgi_ring_append_commit(p->tgt_ring[t], p->tgt_seg[t], p->tgt_off[t],
                               p->tgt_bytes[t], p->tgt_pos[t]);
    }
    return 1;
}

/* Thread 0, send side: forward the EOF at `h` to every destination. */
__device__ static int mgi_gpu_send_eof(const mgi_gpu_dep_t *d,
                                       mgi_gpu_block_t *b, mgi_ring_t *stage,
                                       const mgi_msg_hdr_t *h)
{
    const uint32_t sz = mgi_msg_size(MGI_MSG_LEN_EOF);
    mgi_gpu_dch_t *ch = mgi_gpu_ch(d, h->ch);
    mgi_ring_t *ring[MGI_GPU_MAX_TARGETS];
    mgi_seg_hdr_t *seg[MGI_GPU_MAX_TARGETS];
    uint32_t off[MGI_GPU_MAX_TARGETS], pos[MGI_GPU_MAX_TARGETS];
    mgi_gpu_pending_t *pd;
    uint32_t k, n;
    char *m;

    if (ch == NULL) {
        mgi_gpu_count(&d->status->blk[blockIdx.x].dropped);
        return 1;
    }
    if (b->count == MGI_GPU_MAX_PENDING) {
        return 0;
    }
    n = ch->ndst;
    for (k = 0; k < n; ++k) {
        ring[k] = mgi_gpu_send_target(d, ch->dst[k]);
        if ((ring[k] == NULL) ||
            (mgi_ring_append_reserve(ring[k], sz, &seg[k], &off[k],
                                     &pos[k]) != MGI_RING_OK)) {
            break;
        }
    }
    if (k < n) {
        if (ring[k] == NULL) {
            mgi_gpu_count(&d->status->blk[blockIdx.x].dropped);
        }
        while (k-- > 0) {
            mgi_gpu_unreserve(ring[k], seg[k], off[k], sz, pos[k]);
        }
        return 0;
    }
    pd        = &b->pending[(b->head + b->count) % MGI_GPU_MAX_PENDING];
    pd->stage = stage;
    pd->seq   = ((const uint32_t*)((const char*)h + MGI_MSG_HDR_SIZE))[1];
    pd->n     = 0;
    for (k = 0; k < n; ++k) {
        m = mgi_seg_payload(seg[k]) + off[k];
        memcpy(m, h, sz);
        ((mgi_msg_hdr_t*)m)->dst = ch->dst[k];
        __threadfence();
        mgi_ring_append_commit(ring[k], seg[k], off[k], sz, pos[k]);
        /* FULL: the segment with the EOF is closed already */
        mgi_ring_append_close(ring[k]);
        if (ch->dst[k] != d->id) {
            pd->ring[pd->n] = ring[k];
            pd->pos[pd->n]  = pos[k];
            pd->n++;
        }
    }
    b->count++;
    return 1;
}

/* Thread 0, receive side: account an EOF record at this destination. */
__device__ static void mgi_gpu_recv_eof(const mgi_gpu_dep_t *d,
                                        const mgi_msg_hdr_t *h)
{
    mgi_gpu_dch_t *ch = mgi_gpu_ch(d, h->ch);
    uint32_t nprod, si, k;

    if ((ch == NULL) || (ch->nfinal == 0)) {
        mgi_gpu_count(&d->status->blk[blockIdx.x].dropped);
        return;
    }
    /* tuples before the EOF must be readable before it counts */
    for (k = 0; k < ch->nfinal; ++k) {
        mgi_ring_append_close(ch->final[k]);
    }
    nprod = *(const uint32_t*)((const char*)h + MGI_MSG_HDR_SIZE);
    for (si = 0; (si < ch->nsrc) && (ch->src[si] != h->src); ++si) {
    }
    if ((si == ch->nsrc) || (ch->eof_count[si] >= nprod)) {
        mgi_gpu_count(&d->status->blk[blockIdx.x].eof_errors);
        return;
    }
    if (atomicAdd(&ch->eof_count[si], 1u) + 1 == nprod) {
        __threadfence();
        for (k = 0; k < ch->nfinal; ++k) {
            atomicAdd(&ch->eof_sources[k], 1u);
        }
    }
}

/* Thread 0: final rings with partial segments, closed when lanes run dry */
__device__ static void mgi_gpu_touch(mgi_gpu_pass_t *p)
{
    uint32_t t, k;

    for (t = 0; t < p->ntgt; ++t) {
        for (k = 0; k < p->ntouched; ++k) {
            if (p->touched[k] == p->tgt_ring[t]) {
                break;
            }
        }
        if (k < p->ntouched) {
            continue;
        }
        if (p->ntouched == MGI_GPU_MAX_TARGETS) {
            mgi_ring_append_close(p->tgt_ring[t]);
        } else {
            p->touched[p->ntouched++] = p->tgt_ring[t];
        }
    }
}

/* Block: consume ready segments of one ring (stage ring or receive lane).
 * Returns 1 on progress. */
__device__ static int mgi_gpu_ring(const mgi_gpu_dep_t *d, mgi_gpu_block_t *b,
                                   mgi_gpu_pass_t *p, mgi_gpu_emit_t *e,
                                   char *sseg, mgi_ring_t *ring,
                                   int recv_side)
{
    const unsigned tid = threadIdx.x, nth = blockDim.x;
    int progress = 0, ok;
    uint32_t cap, i, n, a16;
    const mgi_msg_hdr_t *h;

    for (;;) {
        __syncthreads(); /* everyone read the previous pass's decisions */
        if (tid == 0) {
            p->seg   = mgi_ring_peek(ring, 0);
            p->start = ring->cons_off;
        }
        __syncthreads();
        if (p->seg == NULL) {
            break;
        }
        cap = mgi_ring_cap(ring);           /* a multiple of 16 */
        a16 = p->start & ~15u;
        n   = (cap - a16) / 16;
        for (i = tid; i < n; i += nth) {      /* coalesced 16-byte loads */
            /* L2 only: this slot held another generation before */
            *(uint4*)(sseg + a16 + 16 * i) =
                    __ldcg((const uint4*)(mgi_seg_payload(p->seg) + a16 +
                                          16 * i));
        }
        __syncthreads();
        if (tid == 0) {
            mgi_gpu_walk(d, p, e, sseg, cap, recv_side);
        }
        __syncthreads();
        ok = 1;
        if (p->nemit > 0) {
            ok = mgi_gpu_place(d, p, e, sseg);
        }
        if (tid == 0) {
            if (ok && (p->nemit > 0)) {
                if (recv_side) {
                    p->dispatched += p->nemit;
                    mgi_gpu_touch(p);
                } else {
                    p->sorted += p->nemit;
                }
            }
            if (ok && (p->nemit == 0) && p->stop_eof) {
                h = (const mgi_msg_hdr_t*)(sseg + p->end_off);
                if (recv_side) {
                    mgi_gpu_recv_eof(d, h);
                } else {
                    ok = mgi_gpu_send_eof(d, b, ring, h);
                }
                if (ok) {
                    p->end_off += mgi_msg_size(MGI_MSG_LEN_EOF);
                }
            }
            p->blocked = !ok;
            if (ok) {
                ring->cons_off = p->end_off;
                if (p->at_end) {
                    mgi_ring_release(ring, 1);
                }
            }
        }
        __syncthreads();
        if (p->blocked) {
            break;
        }
        progress = 1;
    }
    __syncthreads(); /* p->seg and p->blocked read by all before reuse */
    return progress;
}

/* Thread 0: complete flushes whose EOF segments the mover delivered. */
__device__ static void mgi_gpu_flush_check(mgi_gpu_block_t *b)
{
    mgi_gpu_pending_t *pd;
    uint32_t k;

    while (b->count > 0) {
        pd = &b->pending[b->head];
        for (k = 0; k < pd->n; ++k) {
            if ((int32_t)(mgi_ld_acq32(&pd->ring[k]->cons_tail) -
                          pd->pos[k]) <= 0) {
                return;
            }
        }
        if ((int32_t)(pd->seq - mgi_ld_acq32(&pd->stage->flush_done)) > 0) {
            mgi_st_rel32(&pd->stage->flush_done, pd->seq);
        }
        b->head = (b->head + 1) % MGI_GPU_MAX_PENDING;
        b->count--;
    }
}

__global__ void mgi_sorter_kernel(const mgi_gpu_dep_t *d, uint32_t seg_cap)
{
    extern __shared__ uint4 mgi_smem[];
    __shared__ mgi_gpu_pass_t p;
    __shared__ int s_stop;
    mgi_gpu_block_t *b = &d->blk[blockIdx.x];
    char *sseg         = (char*)mgi_smem;
    char *earr         = sseg + ((seg_cap + 15) & ~15u);
    mgi_gpu_emit_t e;
    unsigned round = 0, idle = 0, i, nroutes;
    int progress, lane_progress;

    e.src     = (uint32_t*)earr;
    e.dst_off = e.src + MGI_GPU_MAX_EMIT;
    e.size    = (uint16_t*)(e.dst_off + MGI_GPU_MAX_EMIT);
    e.dst     = e.size + MGI_GPU_MAX_EMIT;
    e.order   = e.dst + MGI_GPU_MAX_EMIT;
    e.tgt     = (uint8_t*)(e.order + MGI_GPU_MAX_EMIT);
    if (threadIdx.x == 0) {
        p.ntouched   = 0;
        p.sorted     = 0;
        p.dispatched = 0;
        s_stop       = 0;
        d->status->blk[blockIdx.x].started = 1;
        __threadfence_system();
    }
    __syncthreads();

    while (!s_stop) {
        progress = 0;
        for (i = blockIdx.x; i < d->nstage; i += gridDim.x) {
            progress |= mgi_gpu_ring(d, b, &p, &e, sseg, d->stage[i], 0);
        }
        lane_progress = 0;
        for (i = blockIdx.x; i < d->nlanes; i += gridDim.x) {
            lane_progress |= mgi_gpu_ring(d, b, &p, &e, sseg,
                                          mgi_gpu_lane(d, i), 1);
        }
        if (threadIdx.x == 0) {
            nroutes = mgi_vld(&d->nroutes);
            for (i = blockIdx.x; i < nroutes; i += gridDim.x) {
                if (mgi_ring_mirror_sync(mgi_vld(&d->sort[i]),
                                         mgi_vld(&d->mirror[i])) > 0) {
                    progress = 1;
                }
            }
            mgi_gpu_flush_check(b);
            if (!lane_progress) {
                /* make partial batches readable when the lanes ran dry */
                for (i = 0; i < p.ntouched; ++i) {
                    mgi_ring_append_close(p.touched[i]);
                }
                p.ntouched = 0;
            }
            ++round;
            if ((round % MGI_GPU_STOP_POLL) == 0) {
                s_stop = mgi_vld(&d->status->stop);
                d->status->blk[blockIdx.x].sorted     = p.sorted;
                d->status->blk[blockIdx.x].dispatched = p.dispatched;
                if (blockIdx.x == 0) {
                    d->status->epoch = round / MGI_GPU_STOP_POLL;
                }
                __threadfence_system();
            }
        }
        progress |= lane_progress;
        if (progress) {
            idle = 0;
        } else if (idle < 8) {
            ++idle;
        } else {
            __nanosleep(1000);
        }
        __syncthreads();
    }
}

/* --------------------------------------------------------------- host */

/* Run on the endpoint's device, give the caller's device back after. */
typedef struct mgi_gpu_dev_guard {
    int prev;
} mgi_gpu_dev_guard_t;

static ucs_status_t mgi_gpu_enter(mgi_ep_t *ep, mgi_gpu_dev_guard_t *g)
{
    if (cudaGetDevice(&g->prev) != cudaSuccess) {
        g->prev = -1;
    }
    return MGI_CUDA_CALL(cudaSetDevice(ep->device), "ep %u", ep->id);
}

static void mgi_gpu_leave(mgi_gpu_dev_guard_t *g)
{
    if (g->prev >= 0) {
        cudaSetDevice(g->prev);
    }
}

static inline mgi_gpu_ep_t *mgi_gpu_ep(mgi_ep_t *ep)
{
    return (mgi_gpu_ep_t*)ep->gpu;
}

/* Write `len` bytes of a device table while the sorter may run. */
static ucs_status_t mgi_gpu_poke(mgi_ep_t *ep, void *dev, const void *src,
                                 size_t len)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;
    ucs_status_t status;

    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaMemcpyAsync(dev, src, len,
                                               cudaMemcpyHostToDevice,
                                               g->ctl), "ep %u", ep->id);
    }
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaStreamSynchronize(g->ctl), "ep %u",
                               ep->id);
    }
    mgi_gpu_leave(&guard);
    return status;
}

void mgi_gpu_bind_thread(int device)
{
    if (device != MGI_EP_HOST) {
        MGI_CUDA_CALL(cudaSetDevice(device), "mover thread, device %d",
                      device);
    }
}

static ucs_status_t mgi_gpu_defer(mgi_gpu_ep_t *g, void *p)
{
    void **n;

    if (g->ndeferred == g->deferred_cap) {
        n = (void**)realloc(g->deferred, (g->deferred_cap * 2 + 16) *
                                         sizeof(*n));
        if (n == NULL) {
            return UCS_ERR_NO_MEMORY; /* leak rather than hang */
        }
        g->deferred     = n;
        g->deferred_cap = g->deferred_cap * 2 + 16;
    }
    g->deferred[g->ndeferred++] = p;
    return UCS_OK;
}

static void mgi_gpu_dev_free(mgi_ep_t *ep, void *p)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;

    if (p == NULL) {
        return;
    }
    if (g->running) {
        /* cudaFree would wait for the persistent sorter */
        mgi_gpu_defer(g, p);
        return;
    }
    if (mgi_gpu_enter(ep, &guard) == UCS_OK) {
        MGI_CUDA_CALL(cudaFree(p), "ep %u", ep->id);
    }
    mgi_gpu_leave(&guard);
}

static void *mgi_gpu_dev_alloc(mgi_ep_t *ep, size_t len)
{
    mgi_gpu_dev_guard_t guard;
    void *p = NULL;

    if ((mgi_gpu_enter(ep, &guard) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMalloc(&p, len), "ep %u: %zu bytes", ep->id,
                       len) != UCS_OK)) {
        p = NULL;
    }
    mgi_gpu_leave(&guard);
    return p;
}

void *mgi_gpu_ring_create(mgi_ep_t *ep, const void *image, size_t len)
{
    void *ring = mgi_gpu_dev_alloc(ep, len);

    if ((ring != NULL) && (mgi_gpu_poke(ep, ring, image, len) != UCS_OK)) {
        mgi_gpu_dev_free(ep, ring);
        return NULL;
    }
    return ring;
}

void mgi_gpu_ring_free(mgi_ep_t *ep, void *ring)
{
    mgi_gpu_dev_free(ep, ring);
}

void *mgi_gpu_host_alloc(mgi_ep_t *ep, size_t len)
{
    void *p = NULL;

    if (MGI_CUDA_CALL(cudaHostAlloc(&p, len, cudaHostAllocMapped |
                                             cudaHostAllocPortable),
                      "ep %u: %zu bytes of mapped host memory", ep->id,
                      len) != UCS_OK) {
        return NULL;
    }
    memset(p, 0, len);
    return p;
}

void mgi_gpu_host_free(void *p)
{
    if (p != NULL) {
        cudaFreeHost(p);
    }
}

static void *mgi_gpu_host_dev_ptr(mgi_ep_t *ep, void *host)
{
    void *dev = NULL;

    if (MGI_CUDA_CALL(cudaHostGetDevicePointer(&dev, host, 0), "ep %u",
                      ep->id) != UCS_OK) {
        return NULL;
    }
    return dev;
}

static size_t mgi_gpu_smem(size_t seg_size)
{
    return ((seg_size + 15) & ~(size_t)15) +
           MGI_GPU_MAX_EMIT * (2 * sizeof(uint32_t) + 3 * sizeof(uint16_t) +
                               sizeof(uint8_t));
}

ucs_status_t mgi_gpu_ep_init(mgi_ep_t *ep, unsigned blocks)
{
    mgi_context_t *ctx = ep->ctx;
    const char *loading = getenv("CUDA_MODULE_LOADING");
    mgi_gpu_dev_guard_t guard;
    cudaDeviceProp prop;
    ucs_status_t status;
    mgi_gpu_ep_t *g;
    int ndev;

    if (cudaGetDeviceCount(&ndev) != cudaSuccess) {
        ndev = 0;
        cudaGetLastError();
    }
    if (ep->device >= ndev) {
        ucs_error("mgi ep %u: no CUDA device %d (%d found)", ep->id,
                  ep->device, ndev);
        return UCS_ERR_NO_DEVICE;
    }
    g = (mgi_gpu_ep_t*)calloc(1, sizeof(*g));
    if (g == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    g->device   = ep->device;
    g->nblocks  = ctx->params.sorter_blocks;
    g->nthreads = ctx->params.sorter_threads;
    g->smem     = mgi_gpu_smem(ctx->seg_size);
    ep->gpu     = g;

    status = mgi_gpu_enter(ep, &guard);
    if (status != UCS_OK) {
        goto err_free;
    }
    status = MGI_CUDA_CALL(cudaGetDeviceProperties(&prop, ep->device),
                           "ep %u", ep->id);
    if (status != UCS_OK) {
        goto err_leave;
    }
    if ((g->nblocks == 0) || (g->nblocks > MGI_GPU_MAX_SORTERS) ||
        (g->nthreads < 64) || (g->nthreads > 1024) ||
        (g->nthreads % 32) != 0) {
        ucs_error("mgi ep %u: sorter of %u blocks x %u threads; blocks "
                  "1..%d, threads a multiple of 32 in 64..1024 "
                  "(MGI_SORTER_BLOCKS, MGI_SORTER_THREADS)", ep->id,
                  g->nblocks, g->nthreads, MGI_GPU_MAX_SORTERS);
        status = UCS_ERR_INVALID_PARAM;
        goto err_leave;
    }
    if (g->smem + sizeof(mgi_gpu_pass_t) + 1024 >
        prop.sharedMemPerBlockOptin) {
        ucs_error("mgi ep %u: segments of %zu bytes need %zu bytes of shared "
                  "memory in the sorter, device %d has %zu; lower "
                  "MGI_SEG_SIZE", ep->id, ctx->seg_size, g->smem, ep->device,
                  prop.sharedMemPerBlockOptin);
        status = UCS_ERR_INVALID_PARAM;
        goto err_leave;
    }
    if ((loading == NULL) || (strcmp(loading, "EAGER") != 0)) {
        ucs_warn("mgi ep %u: CUDA_MODULE_LOADING is not EAGER: a kernel "
                 "loaded lazily while the persistent sorter runs may wait "
                 "for it forever", ep->id);
    }
    status = MGI_CUDA_CALL(cudaStreamCreateWithFlags(&g->ctl,
                                                     cudaStreamNonBlocking),
                           "ep %u", ep->id);
    if (status != UCS_OK) {
        goto err_leave;
    }
    status = MGI_CUDA_CALL(cudaStreamCreateWithFlags(&g->stream,
                                                     cudaStreamNonBlocking),
                           "ep %u", ep->id);
    if (status != UCS_OK) {
        goto err_ctl;
    }
    g->status = (mgi_gpu_status_t*)mgi_gpu_host_alloc(ep, sizeof(*g->status));
    if (g->status == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_stream;
    }
    if ((MGI_CUDA_CALL(cudaMalloc(&g->dep, sizeof(*g->dep)), "ep %u",
                       ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMalloc(&g->dst_slot, MGI_MAX_EPS *
                                  sizeof(*g->dst_slot)), "ep %u",
                       ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMalloc(&g->chs, ctx->params.max_channels *
                                  sizeof(*g->chs)), "ep %u",
                       ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMalloc(&g->blk, g->nblocks * sizeof(*g->blk)),
                       "ep %u", ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMalloc(&g->stage, blocks * sizeof(*g->stage)),
                       "ep %u", ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMemsetAsync(g->dep, 0, sizeof(*g->dep), g->ctl),
                       "ep %u", ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMemsetAsync(g->dst_slot, 0xff, MGI_MAX_EPS *
                                       sizeof(*g->dst_slot), g->ctl),
                       "ep %u", ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMemsetAsync(g->chs, 0, ctx->params.max_channels *
                                       sizeof(*g->chs), g->ctl), "ep %u",
                       ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMemsetAsync(g->blk, 0, g->nblocks *
                                       sizeof(*g->blk), g->ctl), "ep %u",
                       ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaFuncSetAttribute(
                           mgi_sorter_kernel,
                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                           (int)g->smem), "ep %u", ep->id) != UCS_OK) ||
        /* never cudaDeviceSynchronize: another endpoint's persistent
         * sorter may run on this device */
        (MGI_CUDA_CALL(cudaStreamSynchronize(g->ctl), "ep %u", ep->id) !=
         UCS_OK)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_mem;
    }
    mgi_gpu_leave(&guard);
    return UCS_OK;

err_mem:
    cudaFree(g->stage);
    cudaFree(g->blk);
    cudaFree(g->chs);
    cudaFree(g->dst_slot);
    cudaFree(g->dep);
    mgi_gpu_host_free(g->status);
err_stream:
    cudaStreamDestroy(g->stream);
err_ctl:
    cudaStreamDestroy(g->ctl);
err_leave:
    mgi_gpu_leave(&guard);
err_free:
    free(g);
    ep->gpu = NULL;
    return status;
}

void mgi_gpu_ep_fini(mgi_ep_t *ep)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;
    unsigned i;

    if (g == NULL) {
        return;
    }
    mgi_gpu_sorter_stop(ep);
    if (mgi_gpu_enter(ep, &guard) == UCS_OK) {
        for (i = 0; i < g->ndeferred; ++i) {
            cudaFree(g->deferred[i]);
        }
        cudaFree(g->stage);
        cudaFree(g->blk);
        cudaFree(g->chs);
        cudaFree(g->dst_slot);
        cudaFree(g->dep);
        cudaStreamDestroy(g->stream);
        cudaStreamDestroy(g->ctl);
    }
    mgi_gpu_leave(&guard);
    mgi_gpu_host_free(g->status);
    free(g->deferred);
    free(g);
    ep->gpu = NULL;
}

static unsigned mgi_gpu_started(mgi_gpu_ep_t *g)
{
    unsigned i, n = 0;

    for (i = 0; i < g->nblocks; ++i) {
        n += g->status->blk[i].started;
    }
    return n;
}

ucs_status_t mgi_gpu_sorter_start(mgi_ep_t *ep)
{
    mgi_context_t *ctx = ep->ctx;
    mgi_gpu_ep_t *g    = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;
    mgi_gpu_dep_t dep;
    ucs_status_t status;
    uint64_t deadline;
    unsigned i, started;

    memset(&dep, 0, sizeof(dep));
    dep.id           = ep->id;
    dep.nstage       = ep->nstage;
    dep.nlanes       = ep->nlanes;
    dep.coalesce     = ctx->params.sorter_coalesce;
    dep.lane_bytes   = ep->lane_bytes;
    dep.recv_mem     = (char*)ep->recv_mem;
    dep.stage        = g->stage;
    dep.dst_slot     = g->dst_slot;
    dep.chs          = g->chs;
    dep.max_channels = ctx->params.max_channels;
    dep.status       = (mgi_gpu_status_t*)mgi_gpu_host_dev_ptr(ep, g->status);
    dep.blk          = g->blk;
    if (dep.status == NULL) {
        return UCS_ERR_IO_ERROR;
    }
    status = mgi_gpu_poke(ep, g->stage, ep->stage,
                          ep->nstage * sizeof(*ep->stage));
    if (status == UCS_OK) {
        status = mgi_gpu_poke(ep, g->dep, &dep, sizeof(dep));
    }
    if (status != UCS_OK) {
        return status;
    }
    g->status->stop = 0;
    for (i = 0; i < g->nblocks; ++i) {
        g->status->blk[i].started = 0;
    }
    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        mgi_sorter_kernel<<<g->nblocks, g->nthreads, g->smem, g->stream>>>(
                g->dep, (uint32_t)(ctx->seg_size - MGI_SEG_HDR_SIZE));
        status = MGI_CUDA_CALL(cudaGetLastError(), "ep %u: sorter launch",
                               ep->id);
    }
    mgi_gpu_leave(&guard);
    if (status != UCS_OK) {
        return status;
    }
    g->running = 1;
    /* every block must be resident: a persistent kernel that only partly
     * started would leave rings without a consumer */
    deadline = mgi_time_ns() + (uint64_t)ctx->params.timeout_ms * 1000000ull;
    while ((started = mgi_gpu_started(g)) < g->nblocks) {
        if (cudaStreamQuery(g->stream) != cudaErrorNotReady) {
            ucs_error("mgi ep %u: sorter kernel ended at start: %s", ep->id,
                      cudaGetErrorString(cudaStreamQuery(g->stream)));
            g->running = 0;
            return UCS_ERR_IO_ERROR;
        }
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi ep %u: only %u of %u sorter blocks started within "
                      "%u ms (device busy?)", ep->id, started,
                      g->nblocks, ctx->params.timeout_ms);
            mgi_gpu_sorter_stop(ep);
            return UCS_ERR_TIMED_OUT;
        }
        usleep(10);
    }
    ep->sorter_running = 1;
    ucs_info("mgi ep %u: sorter kernel on device %d, %u blocks x %u threads, "
             "%zu bytes of shared memory, %s writes", ep->id, ep->device,
             g->nblocks, g->nthreads, g->smem,
             ctx->params.sorter_coalesce ? "coalesced" : "per-tuple");
    return UCS_OK;
}

void mgi_gpu_sorter_stop(mgi_ep_t *ep)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    uint64_t deadline;
    cudaError_t e;
    unsigned i;

    if ((g == NULL) || !g->running) {
        return;
    }
    g->status->stop = 1;
    __sync_synchronize();
    deadline = mgi_time_ns() +
               (uint64_t)ep->ctx->params.timeout_ms * 1000000ull;
    while ((e = cudaStreamQuery(g->stream)) == cudaErrorNotReady) {
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi ep %u: sorter kernel did not stop within %u ms; "
                      "its device memory is not freed", ep->id,
                      ep->ctx->params.timeout_ms);
            return; /* leave running = 1: nothing is freed under it */
        }
        usleep(100);
    }
    if (e != cudaSuccess) {
        ucs_error("mgi ep %u: sorter kernel failed: %s", ep->id,
                  cudaGetErrorString(e));
    }
    for (i = 0; i < g->nblocks; ++i) {
        if (g->status->blk[i].dropped || g->status->blk[i].eof_errors) {
            ucs_error("mgi ep %u: sorter block %u dropped %u message(s) "
                      "without a channel or route, saw %u extra EOF(s)",
                      ep->id, i, g->status->blk[i].dropped,
                      g->status->blk[i].eof_errors);
        }
        ucs_debug("mgi ep %u: sorter block %u sorted %llu, dispatched %llu",
                  ep->id, i, g->status->blk[i].sorted,
                  g->status->blk[i].dispatched);
    }
    g->running         = 0;
    ep->sorter_running = 0;
}

uint32_t mgi_gpu_sorter_epoch(mgi_ep_t *ep)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);

    return g->running ? g->status->epoch : 0;
}

ucs_status_t mgi_gpu_route_add(mgi_ep_t *ep, mgi_route_t *route)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_ring_mirror_t *mdev;
    uint32_t n;
    ucs_status_t status;

    if (route->slot >= MGI_GPU_MAX_ROUTES) {
        ucs_error("mgi ep %u: more than %d next hops", ep->id,
                  MGI_GPU_MAX_ROUTES);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    mdev = (mgi_ring_mirror_t*)mgi_gpu_host_dev_ptr(ep, route->mirror);
    if (mdev == NULL) {
        return UCS_ERR_IO_ERROR;
    }
    n      = route->slot + 1;
    status = mgi_gpu_poke(ep, &g->dep->sort[route->slot], &route->ring,
                          sizeof(route->ring));
    if (status == UCS_OK) {
        status = mgi_gpu_poke(ep, &g->dep->mirror[route->slot], &mdev,
                              sizeof(mdev));
    }
    if (status == UCS_OK) {
        status = mgi_gpu_poke(ep, &g->dep->nroutes, &n, sizeof(n));
    }
    return status;
}

ucs_status_t mgi_gpu_ch_add(mgi_ep_t *ep, mgi_channel_t *ch)
{
    mgi_context_t *ctx = ep->ctx;
    mgi_gpu_ep_t *g    = mgi_gpu_ep(ep);
    int di             = mgi_ch_dst_index(ch, ep->id);
    unsigned nfinal    = (di >= 0) ? ep->nstage : 0;
    size_t len         = sizeof(mgi_gpu_dch_t) +
                         nfinal * (sizeof(mgi_ring_t*) + 2 * sizeof(uint32_t));
    mgi_gpu_dch_t *img, *dev;
    mgi_gpu_ch_t *gc;
    ucs_status_t status;
    unsigned i;

    gc  = (mgi_gpu_ch_t*)calloc(1, sizeof(*gc));
    img = (mgi_gpu_dch_t*)calloc(1, len);
    if ((gc == NULL) || (img == NULL) ||
        ((nfinal > 0) &&
         ((gc->final = (mgi_ring_t**)calloc(nfinal, sizeof(*gc->final))) ==
          NULL))) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    gc->nfinal = nfinal;
    for (i = 0; i < nfinal; ++i) {
        gc->final[i] = mgi_ep_ring_create(ep, ctx->params.final_depth,
                                          MGI_RING_F_APPEND);
        if (gc->final[i] == NULL) {
            status = UCS_ERR_NO_MEMORY;
            goto err_free;
        }
    }
    dev = (mgi_gpu_dch_t*)mgi_gpu_dev_alloc(ep, len);
    if (dev == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    img->id       = ch->id;
    img->ndst     = ch->ndst;
    img->nsrc     = ch->nsrc;
    img->self_dst = (di >= 0) ? di : MGI_GPU_NO_DST;
    img->nfinal   = nfinal;
    memcpy(img->dst, ch->dst, ch->ndst * sizeof(*ch->dst));
    memcpy(img->src, ch->src, ch->nsrc * sizeof(*ch->src));
    img->final       = (mgi_ring_t**)(dev + 1);
    img->final_lock  = (uint32_t*)(img->final + nfinal);
    img->eof_sources = img->final_lock + nfinal;
    memcpy(img + 1, gc->final, nfinal * sizeof(*gc->final));
    gc->dch = dev;
    status  = mgi_gpu_poke(ep, dev, img, len);
    if (status == UCS_OK) {
        status = mgi_gpu_poke(ep, &g->chs[ch->id], &dev, sizeof(dev));
    }
    if (status != UCS_OK) {
        goto err_free;
    }
    free(img);
    ch->gpu[ep->index] = gc;
    return UCS_OK;

err_free:
    if (gc != NULL) {
        for (i = 0; i < gc->nfinal; ++i) {
            mgi_ep_ring_free(ep, gc->final[i]);
        }
        mgi_gpu_dev_free(ep, gc->dch);
        free(gc->final);
    }
    free(gc);
    free(img);
    return status;
}

ucs_status_t mgi_gpu_ch_routes(mgi_ep_t *ep, mgi_channel_t *ch)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_route_t *route;
    ucs_status_t status;
    mgi_ep_id_t hop;
    int16_t slot;
    unsigned i;

    if (mgi_ch_src_index(ch, ep->id) < 0) {
        return UCS_OK;
    }
    for (i = 0; i < ch->ndst; ++i) {
        hop = mgi_route_next_hop(ep->ctx, ep->id, ch->dst[i]);
        if (hop == ep->id) {
            slot = MGI_GPU_SLOT_LOOPBACK;
        } else {
            route = ep->routes[hop];
            if (route == NULL) {
                ucs_error("mgi channel %u: endpoint %u has no sort ring to "
                          "next hop %u", ch->id, ep->id, hop);
                return UCS_ERR_UNREACHABLE;
            }
            slot = (int16_t)route->slot;
        }
        status = mgi_gpu_poke(ep, &g->dst_slot[ch->dst[i]], &slot,
                              sizeof(slot));
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

ucs_status_t mgi_gpu_ch_check_done(mgi_ep_t *ep, mgi_channel_t *ch)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_ep_t *g  = mgi_gpu_ep(ep);
    uint32_t eof     = 0;
    mgi_gpu_dev_guard_t guard;
    ucs_status_t status;

    if ((gc == NULL) || (gc->nfinal == 0)) {
        return UCS_OK; /* a source: its kernels flushed, or they are late */
    }
    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaMemcpyAsync(&eof,
                                           (char*)gc->dch +
                                           sizeof(mgi_gpu_dch_t) +
                                           gc->nfinal * (sizeof(mgi_ring_t*) +
                                                         sizeof(uint32_t)),
                                           sizeof(eof),
                                           cudaMemcpyDeviceToHost, g->ctl),
                           "channel %u ep %u", ch->id, ep->id);
    }
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaStreamSynchronize(g->ctl),
                               "channel %u ep %u", ch->id, ep->id);
    }
    mgi_gpu_leave(&guard);
    if (status != UCS_OK) {
        return status;
    }
    if (eof < ch->nsrc) {
        ucs_error("mgi channel %u: busy, GPU endpoint %u has EOF from %u of "
                  "%u sources", ch->id, ep->id, eof, ch->nsrc);
        return UCS_ERR_BUSY;
    }
    return UCS_OK;
}

void mgi_gpu_ch_remove(mgi_ep_t *ep, mgi_channel_t *ch)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_ep_t *g  = mgi_gpu_ep(ep);
    mgi_gpu_dch_t *none = NULL;
    unsigned i;

    if (gc == NULL) {
        return;
    }
    mgi_gpu_poke(ep, &g->chs[ch->id], &none, sizeof(none));
    for (i = 0; i < gc->nfinal; ++i) {
        mgi_ep_ring_free(ep, gc->final[i]);
    }
    mgi_gpu_dev_free(ep, gc->dch);
    free(gc->final);
    free(gc);
    ch->gpu[ep->index] = NULL;
}

ucs_status_t mgi_gpu_ch_handle(mgi_ep_t *ep, mgi_channel_t *ch,
                               mgi_dev_ch_t *h)
{
    mgi_gpu_ch_t *gc  = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_ep_t *g   = mgi_gpu_ep(ep);
    mgi_gpu_dch_t *dc = gc->dch;

    memset(h, 0, sizeof(*h));
    h->ch         = ch->id;
    h->self       = ep->id;
    h->ndst       = ch->ndst;
    h->nsrc       = ch->nsrc;
    h->dst        = dc->dst;        /* address arithmetic only */
    h->tuple_size = ch->tuple_size;
    h->part_key   = ch->part_key;
    h->key_off    = ch->key_off;
    h->key_size   = ch->key_size;
    h->nblocks    = ep->nstage;
    h->stage      = g->stage;
    if (gc->nfinal > 0) {
        h->final       = (mgi_ring_t**)(dc + 1);
        h->final_lock  = (uint32_t*)(h->final + gc->nfinal);
        h->eof_sources = h->final_lock + gc->nfinal;
    }
    return UCS_OK;
}

/**
 * MGI device API: the receives, at thread and block level
 * (mgi_dev_recv, mgi_dev_recv_block, mgi_dev_recv_block_to,
 * mgi_dev_recv_block_each).
 *
 * A part of mgi/mgi_device.cuh, which includes its parts in order (each
 * uses those before it); kernels include <mgi/mgi_device.cuh>.
 */
#ifndef MGI_DEVICE_RECV_CUH_
#define MGI_DEVICE_RECV_CUH_

#ifndef MGI_DEVICE_CUH_
#  error "a part of the device API: include <mgi/mgi_device.cuh>"
#endif

/* Thread level: a look at final ring b without taking its lock. 1 when
 * it has no segment ready and not every source is at EOF: a receive there
 * has nothing to do. 0 when a segment or the EOF may be there. The loads
 * are relaxed and go out together: an empty receive that took the lock
 * and read the ring with acquire loads cost 7.5 k cycles of a user block
 * (mgi_workloads, MGI_WL_MGI_PROFILE); a stale answer only delays the
 * receive to the next call. */
__device__ static inline int mgi_dev_final_idle(const mgi_dev_ch_t *h,
                                                unsigned b)
{
    const uint32_t eof = mgi_ld_rlx32(&h->eof_sources[b]);

    return mgi_ring_looks_empty(h->final[b]) && (eof != h->nsrc);
}

/* Thread level: whole tuples into buf, as many as fit (schemaless: one). */
__device__ static inline int mgi_dev_recv(const mgi_dev_ch_t *h, void *buf,
                                          unsigned cap)
{
    const unsigned b = blockIdx.x % h->nblocks;
    unsigned done;
    int eof;

    if (h->direct) {
        return mgi_dev_dring_recv_one(h, buf, cap);
    }
    if (mgi_dev_final_idle(h, b) ||
        (atomicCAS(&h->final_lock[b], 0u, 1u) != 0u)) {
        return 0; /* another thread of the block is receiving */
    }
    __threadfence();
    eof  = (mgi_ld_acq32(&h->eof_sources[b]) == h->nsrc);
    done = (unsigned)mgi_ring_take(h->final[b], buf, cap, h->tuple_size,
                                   NULL);
    __threadfence();
    atomicExch(&h->final_lock[b], 0u);
    if ((done == 0) && eof) {
        return MGI_DEV_EOF;
    }
    return (int)done;
}

#define MGI_DEV_WALK 64   /* messages one serial receive walk takes */

/* What one round of mgi_dev_recv_block_runs takes: nr entries, entry e
 * being n[e] messages of len[e] payload bytes each, msz[e] bytes apart,
 * the first header at msgs[e] (a part of a message: shifted by the part
 * taken before, so that the payload is still at msgs + header); at[e]
 * payload bytes and tup[e] tuples come before it in the round. */
typedef struct mgi_dev_runs {
    const char *msgs[MGI_DEV_WALK];
    uint32_t   msz[MGI_DEV_WALK];
    uint32_t   len[MGI_DEV_WALK];
    uint32_t   n[MGI_DEV_WALK];
    uint32_t   at[MGI_DEV_WALK + 1];
    uint32_t   tup[MGI_DEV_WALK + 1];
    unsigned   nr;
    int        aligned;   /* every payload word 8-byte aligned */
    char       *dst;      /* where the round goes (mgi_dev_recv_block_to) */
} mgi_dev_runs_t;

/* A round as mgi_dev_recv_lay_out left it, and what its taking does to
 * the final ring (mgi_dev_recv_commit). */
typedef struct mgi_dev_round {
    int        stop;      /* no round: nothing (more) ready, or no room */
    uint32_t   start;     /* payload bytes of the call before the round */
    uint32_t   skip;      /* drained segments before its own: released */
    int        drained;   /* it drains its segment: released too */
    mgi_seg_hdr_t *seg;   /* its segment's messages */
    uint32_t   off, part; /* else the consumer's place in it after it */
    /* a run of like messages whose headers the group checks */
    const char *run;      /* the first header */
    uint32_t   run_msz, run_n;
    uint16_t   run_ch, run_len;
    int        bad;       /* the first unlike header, run_n: none */
} mgi_dev_round_t;

/* Where the next round starts: slot, offset and part taken, as the
 * consumer's ring fields say once every round before it is taken; RTail
 * as last read; payload bytes of the call's rounds laid out. */
typedef struct mgi_dev_cursor {
    uint32_t pos, off, part, prod, bytes;
} mgi_dev_cursor_t;

/* Where item x of a round lies (a payload word, unit 8, with p the
 * round's byte prefix at[] and scale 8; or a tuple, unit its size, 0:
 * the entry's message length, with p = tup[] and scale 1), its entry
 * stepped on from *e: a thread's items only grow, so it mostly stays,
 * where a binary search and a division an item made the block receive
 * bound by instructions (2.8 B a cycle a block). A one-message run (a
 * batch) needs no division. */
__device__ static __forceinline__ const char *mgi_dev_runs_item(
        const mgi_dev_runs_t *rs, const uint32_t *p, unsigned scale,
        unsigned unit, uint32_t x, uint32_t *e)
{
    uint32_t l, k, t = 0;
    unsigned u;

    while (p[*e + 1] <= scale * x) {
        ++*e;
    }
    u = (unit != 0) ? unit : rs->len[*e];
    l = x - p[*e] / scale;
    if (rs->n[*e] != 1) {
        k = rs->len[*e] / u;
        t = l / k;
        l = l - t * k;
    }
    return rs->msgs[*e] + (size_t)t * rs->msz[*e] + MGI_MSG_HDR_SIZE +
           (size_t)l * u;
}

/* Thread 0: add an entry of n messages of `len` bytes taken. */
__device__ static inline void mgi_dev_runs_add(mgi_dev_runs_t *rs,
                                               const mgi_dev_ch_t *h,
                                               const char *msgs, uint32_t msz,
                                               uint32_t len, uint32_t n)
{
    const unsigned e   = rs->nr++;
    const uint32_t tsz = (h->tuple_size != 0) ? h->tuple_size : len;

    rs->msgs[e]    = msgs;
    rs->msz[e]     = msz;
    rs->len[e]     = len;
    rs->n[e]       = n;
    rs->at[e + 1]  = rs->at[e] + n * len;
    rs->tup[e + 1] = rs->tup[e] + n * (len / tsz);
    if (((len % 8) != 0) || ((msz % 8) != 0) ||
        (((uintptr_t)msgs % 8) != 0)) {
        rs->aligned = 0;
    }
}

/* Group of nth threads, this one tid: the first of the n headers at `at`,
 * msz bytes apart, whose channel or length is not (ch, len) lowers *bad
 * (shared, n at the start). MGI_DEV_RECV_ILP headers in flight per
 * thread, one atomic per thread: a test and an atomic after each load
 * kept one load in flight. */
__device__ static inline void mgi_dev_run_check(const char *at, uint32_t msz,
                                                uint16_t ch, uint16_t len,
                                                uint32_t n, int *bad,
                                                unsigned tid, unsigned nth)
{
    /* mgi_msg_hdr_t as one little-endian word: ch in bits 0-15, len in
     * bits 48-63 */
    static_assert((offsetof(mgi_msg_hdr_t, ch) == 0) &&
                  (offsetof(mgi_msg_hdr_t, len) == 6),
                  "mgi_dev_run_check reads a header as one word");
    const uint64_t want = (uint64_t)ch | ((uint64_t)len << 48);
    const uint64_t mask = 0xffff00000000ffffull;
    uint64_t v[MGI_DEV_RECV_ILP];
    uint32_t i, j, u, first = n;

    for (i = tid; i < n; i += nth * MGI_DEV_RECV_ILP) {
#pragma unroll
        for (u = 0; u < MGI_DEV_RECV_ILP; ++u) {
            j    = i + u * nth;
            v[u] = (j < n) ? __ldcg((const unsigned long long*)
                                    (at + (size_t)j * msz)) : want;
        }
#pragma unroll
        for (u = 0; u < MGI_DEV_RECV_ILP; ++u) {
            j = i + u * nth;
            if ((v[u] & mask) != want) {
                first = min(first, j);
            }
        }
    }
    if (first < n) {
        atomicMin(bad, (int)first);
    }
}

/* Thread 0: round rd is taken (every thread's reads of it are done):
 * release the drained segments before it and its own if it drained it,
 * else keep the consumer's place in its segment. */
__device__ static inline void mgi_dev_recv_commit(mgi_ring_t *r,
                                                  const mgi_dev_round_t *rd)
{
    uint32_t i;

    for (i = 0; i < rd->skip; ++i) {
        mgi_ring_release_data(r);
    }
    if (rd->stop) {
        return;
    }
    if (rd->drained) {
        mgi_ring_release_data(r);
    } else {
        r->cons_off  = rd->off;
        r->cons_part = rd->part;
    }
}

/* The barrier of a group: warp 0 (WARP) or the block. */
template <bool WARP>
__device__ static __forceinline__ void mgi_dev_group_sync(void)
{
    if (WARP) {
        __syncwarp(mgi_dev_block_warp_mask());
    } else {
        __syncthreads();
    }
}

/* A group lays out the next round of a block receive from cursor *cur
 * into rs and rd: the block (WARP false; the call's first round), or warp
 * 0 alone (WARP true) while the block's other warps copy the round before
 * (thread 0 alone reads the ring: its loads depend on one another, ~11.5
 * k cycles a round, which the copy now hides). Nothing of the ring
 * changes: rounds are taken, in order, by mgi_dev_recv_commit. A round is
 * a run of messages of one channel and length found in parallel (the k-th
 * header of the run is a message boundary because the k-1 before it were
 * messages of that size): one tuple per message, as mgi_dev_send_warp and
 * the host send them. When the next message differs (batches of tuples,
 * mgi_dev_send_block), thread 0 walks up to MGI_DEV_WALK messages of any
 * length instead. A message of several tuples that does not fit what is
 * left of cap is taken in parts of whole tuples (mgi_msg_take). Thread 0
 * then calls pre(rs, start) (mgi_dev_recv_block_to's place). */
template <bool WARP, typename PRE>
__device__ static inline void mgi_dev_recv_lay_out(const mgi_dev_ch_t *h,
                                                   mgi_ring_t *r,
                                                   unsigned cap,
                                                   mgi_dev_cursor_t *cur,
                                                   mgi_dev_runs_t *rs,
                                                   mgi_dev_round_t *rd,
                                                   PRE pre)
{
    const uint32_t scap = mgi_ring_cap(r);
    const unsigned tid  = WARP ? threadIdx.x % 32 : threadIdx.x;
    const unsigned nth  = WARP ? min(blockDim.x, 32u) : blockDim.x;
    mgi_seg_hdr_t *seg;
    mgi_msg_hdr_t *m;
    uint32_t off, take, room, k, n, end;

    if (tid == 0) {
        rd->stop    = 1;
        rd->start   = cur->bytes;
        rd->skip    = 0;
        rd->drained = 0;
        rd->run     = NULL;
        rs->nr      = 0;
        rs->at[0]   = rs->tup[0] = 0;
        rs->aligned = 1;
        rs->dst     = NULL;
        room        = cap - cur->bytes;
        while (room > 0) {
            seg = mgi_ring_peek_pos(r, cur->pos, &cur->prod);
            if (seg == NULL) {
                break;
            }
            seg = mgi_seg_data(seg);
            off = cur->off;
            m   = mgi_seg_next(seg, scap, &off);
            if (m == NULL) {
                /* drained (padding after the last message taken) */
                rd->skip++;
                cur->pos++;
                cur->off = cur->part = 0;
                continue;
            }
            take = mgi_msg_take(m, cur->part, h->tuple_size, room);
            if (take == 0) {
                break;
            }
            rd->stop = 0;
            rd->seg  = seg;
            if ((cur->part == 0) && (take == m->len)) {
                /* a run of whole messages? */
                rd->run     = mgi_seg_payload(seg) + off;
                rd->run_ch  = m->ch;
                rd->run_len = m->len;
                rd->run_msz = mgi_msg_size(m->len);
                rd->run_n   = min(room / max((uint32_t)m->len, 1u),
                                  (scap - off) / rd->run_msz);
                rd->bad     = (int)rd->run_n;
                cur->off    = off;
            } else {
                /* the rest of a message, or a part */
                mgi_dev_runs_add(rs, h, (const char*)m + cur->part,
                                 mgi_msg_size(m->len), take, 1);
                mgi_msg_step(m, off, take, &cur->off, &cur->part);
            }
            break;
        }
    }
    mgi_dev_group_sync<WARP>();
    if (!rd->stop && (rd->run != NULL)) {
        mgi_dev_run_check(rd->run, rd->run_msz, rd->run_ch, rd->run_len,
                          rd->run_n, &rd->bad, tid, nth);
        mgi_dev_group_sync<WARP>();
    }
    if ((tid == 0) && !rd->stop) {
        seg  = rd->seg;
        room = cap - cur->bytes;
        if (rd->run != NULL) {
            n = (uint32_t)rd->bad; /* >= 1: the first header was read */
            mgi_dev_runs_add(rs, h, rd->run, rd->run_msz, rd->run_len, n);
            off = cur->off + n * rd->run_msz;
            /* one message, and the next is unlike it: walk */
            for (k = 1; (n == 1) && (k < MGI_DEV_WALK); ++k) {
                m = mgi_seg_next(seg, scap, &off);
                if ((m == NULL) || (m->ch != rd->run_ch) ||
                    (m->len == MGI_MSG_LEN_EOF) ||
                    (m->len > room - rs->at[rs->nr])) {
                    break;
                }
                if ((m->len == rs->len[rs->nr - 1]) &&
                    ((const char*)m == rs->msgs[rs->nr - 1] +
                                       rs->n[rs->nr - 1] *
                                       rs->msz[rs->nr - 1])) {
                    rs->n[rs->nr - 1]++;   /* like the one before */
                    rs->at[rs->nr]  += m->len;
                    rs->tup[rs->nr] += (h->tuple_size != 0) ?
                                       m->len / h->tuple_size : 1;
                } else {
                    mgi_dev_runs_add(rs, h, (const char*)m,
                                     mgi_msg_size(m->len), m->len, 1);
                }
                off += mgi_msg_size(m->len);
            }
            cur->off = off;
        }
        /* drained by this round: released once it is taken (a peek and
         * two barriers a segment when a round of its own found it so) */
        end = cur->off;
        if ((cur->part == 0) && (mgi_seg_next(seg, scap, &end) == NULL)) {
            rd->drained = 1;
            cur->pos++;
            cur->off = 0;
        } else {
            rd->off  = cur->off;
            rd->part = cur->part;
        }
        cur->bytes += rs->at[rs->nr];
        pre(rs, rd->start);
    }
    mgi_dev_group_sync<WARP>();
}

/* Block level, the walker behind mgi_dev_recv_block_to and _each: every
 * thread of the block calls it. Takes whole tuples from the block's final
 * ring, at most `cap` payload bytes, in rounds (mgi_dev_recv_lay_out);
 * for each, thread 0 calls pre(runs, done) as the round is laid out, and
 * copy(runs, done, tid, nth) is called by nth threads of the block, this
 * one tid (`done`: payload bytes of the rounds before in this call).
 * With two warps or more, warp 0 lays out the next round while the
 * others copy one. Returns the same to every thread: bytes, 0 when
 * nothing is ready, or MGI_DEV_EOF once every source flushed and the
 * final ring is drained. */
template <typename PRE, typename COPY>
__device__ static inline int mgi_dev_recv_block_runs(const mgi_dev_ch_t *h,
                                                     unsigned cap, PRE pre,
                                                     COPY copy)
{
    __shared__ mgi_dev_runs_t s_rs[2];
    __shared__ mgi_dev_round_t s_rd[2];
    __shared__ mgi_dev_cursor_t s_cur;
    __shared__ int s_ret;
    const unsigned b = blockIdx.x % h->nblocks;
    mgi_ring_t *r    = h->final[b];
    const bool both  = (blockDim.x > 32); /* lay out beside the copy */
    unsigned k;
    int ret;

    __syncthreads();
    if (threadIdx.x == 0) {
        s_ret = 1;
        if (mgi_dev_final_idle(h, b)) {
            s_ret = 0; /* nothing there */
        } else if (atomicCAS(&h->final_lock[b], 0u, 1u) != 0u) {
            s_ret = 0; /* another block of this final ring is receiving */
        } else {
            __threadfence();
            s_cur.pos   = mgi_ld_acq32(&r->cons_tail);
            s_cur.prod  = s_cur.pos;
            s_cur.off   = r->cons_off;
            s_cur.part  = r->cons_part;
            s_cur.bytes = 0;
        }
    }
    __syncthreads();
    if (s_ret == 0) {
        return 0;
    }
    mgi_dev_recv_lay_out<false>(h, r, cap, &s_cur, &s_rs[0], &s_rd[0], pre);
    for (k = 0; !s_rd[k % 2].stop; ++k) {
        if (!both) {
            copy(&s_rs[k % 2], s_rd[k % 2].start, threadIdx.x, blockDim.x);
            mgi_dev_recv_lay_out<true>(h, r, cap, &s_cur, &s_rs[(k + 1) % 2],
                                       &s_rd[(k + 1) % 2], pre);
        } else if (threadIdx.x < 32) {
            mgi_dev_recv_lay_out<true>(h, r, cap, &s_cur, &s_rs[(k + 1) % 2],
                                       &s_rd[(k + 1) % 2], pre);
        } else {
            copy(&s_rs[k % 2], s_rd[k % 2].start, threadIdx.x - 32,
                 blockDim.x - 32);
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            mgi_dev_recv_commit(r, &s_rd[k % 2]);
        }
    }
    if (threadIdx.x == 0) {
        mgi_dev_recv_commit(r, &s_rd[k % 2]); /* the drained ones it met */
        /* EOF: nothing taken, every source's EOF counted, and the ring
         * still empty after that count (its sources' tuples were in the
         * ring before it). Read only when nothing was taken: a round trip
         * the calls that take tuples do not pay */
        s_ret = (s_cur.bytes > 0) ? (int)s_cur.bytes :
                ((mgi_ld_acq32(&h->eof_sources[b]) == h->nsrc) &&
                 (mgi_ring_peek_data(r) == NULL)) ? (int)MGI_DEV_EOF : 0;
        __threadfence();
        atomicExch(&h->final_lock[b], 0u);
    }
    __syncthreads();
    ret = s_ret;
    return ret;
}

/* Block level: every thread of the block calls it; whole tuples, as many
 * as `cap` bytes hold, copied by the block word by word to where
 * place(bytes, done) says: thread 0 calls it once per round of the
 * receive, with the round's bytes (whole tuples) and those of the rounds
 * before in this call, and returns where they go (shared or global
 * memory; NULL: the round is taken and dropped). Returns the same to
 * every thread: bytes, 0 when nothing is ready, or MGI_DEV_EOF once every
 * source flushed and the final ring is drained. A kernel that appends what
 * it receives to an output of its own places the round there (an atomic
 * add on its cursor, say) instead of receiving into a buffer and copying
 * it again. place may be called for a round while the block still copies
 * the round before: shared memory it returns must not be that one's.
 * Schemaless
 * channels (tuple_size 0) take one tuple per call, placed before it is
 * taken: place(cap, 0) must return room for cap bytes (NULL: nothing is
 * taken). */
template <typename P>
__device__ static inline int mgi_dev_recv_block_to(const mgi_dev_ch_t *h,
                                                   unsigned cap, P place)
{
    __shared__ int s_ret;
    __shared__ char *s_dst;

    if (h->direct) {
        return mgi_dev_dring_recv_block(h, cap,
            [&](uint32_t bytes, uint32_t done) {
                return (char*)place(bytes, done);
            },
            [&](const char *src, uint32_t n, char *to) {
                if (to != NULL) {
                    mgi_dev_block_copy(to, src, n * h->tuple_size);
                }
            });
    }
    if (h->tuple_size == 0) {
        __syncthreads();
        if (threadIdx.x == 0) {
            /* room for the largest tuple first: its size is known only
             * once it is taken */
            s_dst = (char*)place(cap, 0u);
            s_ret = (s_dst != NULL) ? mgi_dev_recv(h, s_dst, cap) : 0;
        }
        __syncthreads();
        return s_ret;
    }
    return mgi_dev_recv_block_runs(h, cap,
        [&](mgi_dev_runs_t *rs, uint32_t done) {
            rs->dst = (char*)place(rs->at[rs->nr], done);
        },
        [&](const mgi_dev_runs_t *rs, uint32_t, unsigned tid, unsigned nth) {
            const uint32_t total = rs->at[rs->nr];
            char *buf            = rs->dst;
            uint32_t w, e, u, base;

            if (buf == NULL) {
                return;
            }
            if (rs->aligned && (((uintptr_t)buf % 8) == 0)) {
                /* MGI_DEV_RECV_ILP loads in flight per thread: a block
                 * copies at (bytes in flight / memory latency) */
                uint64_t v[MGI_DEV_RECV_ILP];
                uint64_t *out = (uint64_t*)buf;
                const uint32_t nw = total / 8;

                e = 0;
                for (base = tid; base < nw; base += nth * MGI_DEV_RECV_ILP) {
#pragma unroll
                    for (u = 0; u < MGI_DEV_RECV_ILP; ++u) {
                        w = base + u * nth;
                        if (w < nw) {
                            v[u] = __ldcg((const unsigned long long*)
                                          mgi_dev_runs_item(rs, rs->at, 8,
                                                            8, w, &e));
                        }
                    }
#pragma unroll
                    for (u = 0; u < MGI_DEV_RECV_ILP; ++u) {
                        w = base + u * nth;
                        if (w < nw) {
                            out[w] = v[u];
                        }
                    }
                }
            } else {
                e = 0;
                for (w = tid; w < total; w += nth) {
                    buf[w] = *mgi_dev_runs_item(rs, rs->at, 1, 1, w, &e);
                }
            }
        });
}

/* Block level: every thread of the block calls it; whole tuples into buf
 * (shared or global memory), as many as fit (mgi_dev_recv_block_to, the
 * rounds one after the other from buf on). Returns the same to every
 * thread: bytes, 0 when nothing is ready, or MGI_DEV_EOF once every source
 * flushed and the final ring is drained. Schemaless channels (tuple_size
 * 0) take one tuple per call. */
__device__ static inline int mgi_dev_recv_block(const mgi_dev_ch_t *h,
                                                void *buf, unsigned cap)
{
    return mgi_dev_recv_block_to(h, cap, [&](uint32_t, uint32_t done) {
        return (char*)buf + done;
    });
}

/* Block level, zero copy: every thread of the block calls it; the block's
 * threads call f(tuple, len) for each tuple in place in the final ring
 * (a round's tuples spread over the threads that copy it: all of the
 * block's but warp 0's, which lays out the next round, when it has two
 * warps or more; a batched message's tuples one by one), up to
 * `max_bytes` of payload, and the ring slots are freed after. f may read
 * the tuple only during the call. Returns what mgi_dev_recv_block
 * returns: bytes, 0, or MGI_DEV_EOF. The receive of kernels that consume
 * tuples where they are (aggregations, probes): no copy, any amount per
 * call. */
template <typename F>
__device__ static inline int mgi_dev_recv_block_each(const mgi_dev_ch_t *h,
                                                     unsigned max_bytes, F f)
{
    if (h->direct) {
        return mgi_dev_dring_recv_block(h, max_bytes,
            [&](uint32_t, uint32_t) { return (char*)NULL; },
            [&](const char *src, uint32_t n, char *) {
                for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
                    f(src + (size_t)i * h->tuple_size, h->tuple_size);
                }
            });
    }
    return mgi_dev_recv_block_runs(h, max_bytes,
        [&](mgi_dev_runs_t *, uint32_t) {},
        [&](const mgi_dev_runs_t *rs, uint32_t, unsigned tid, unsigned nth) {
            uint32_t i, e = 0;
            const char *at;

            for (i = tid; i < rs->tup[rs->nr]; i += nth) {
                at = mgi_dev_runs_item(rs, rs->tup, 1, h->tuple_size, i, &e);
                f(at, (h->tuple_size != 0) ? h->tuple_size : rs->len[e]);
            }
        });
}

#endif

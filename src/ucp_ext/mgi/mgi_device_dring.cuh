/**
 * MGI device API: direct rings (h->direct), the rings between the GPU
 * endpoints of one host: their block, thread and warp sends, flush and
 * receives, which the calls of the other parts hand a direct channel
 * to; then mgi_dev_block_copy, the copy of the block receives.
 *
 * A part of mgi/mgi_device.cuh, which includes its parts in order (each
 * uses those before it); kernels include <mgi/mgi_device.cuh>.
 */
#ifndef MGI_DEVICE_DRING_CUH_
#define MGI_DEVICE_DRING_CUH_

#ifndef MGI_DEVICE_CUH_
#  error "a part of the device API: include <mgi/mgi_device.cuh>"
#endif

/* ------------------------------------------------------------ direct rings
 * The default between the GPU endpoints of one host (h->direct): a user
 * block stores its tuples straight into its direct ring at each
 * destination (mgi_dring_t, in the destination GPU's memory), and the
 * destination's user blocks read them there: no stage ring, sorter, mover
 * or final ring on the way. The block is its rings' one producer: block
 * and tile sends reserve without atomics, and a sending kernel of more
 * blocks than the endpoint's user blocks traps there. Thread- and
 * warp-level sends take the ring's lock (a word of the block's record,
 * mgi_dev_dring_send_one), so any thread may call them, in a kernel of
 * any size. A receive takes a ring's tuples in order under the consuming
 * block's lock, at block or thread level. */

/* Block level: a sending kernel runs at most the endpoint's user blocks
 * (block b is the one producer of its rings). */
__device__ static inline void mgi_dev_dring_check_grid(const mgi_dev_ch_t *h)
{
    if (gridDim.x > h->nblocks) {
        __trap();   /* more blocks than the endpoint's user blocks */
    }
}

/* This block's ring at destination number i, and its own record of it
 * (MGI_DRING_PROD_WORDS: the tail it wrote to, the head it last read
 * there, the tail it published). */
__device__ static inline mgi_dring_t *mgi_dev_dring_to(const mgi_dev_ch_t *h,
                                                       unsigned i)
{
    return (mgi_dring_t*)(h->dbase[i] +
                          (uint64_t)(h->dfirst + blockIdx.x) * h->dstride);
}

__device__ static inline uint64_t *mgi_dev_dring_prod(const mgi_dev_ch_t *h,
                                                      unsigned i)
{
    return &h->dprod[MGI_DRING_PROD_WORDS *
                     ((uint64_t)i * h->nblocks + blockIdx.x)];
}

/* Ring k into this endpoint, and the place of a tuple count in a ring. */
__device__ static inline mgi_dring_t *mgi_dev_dring_in(const mgi_dev_ch_t *h,
                                                       unsigned k)
{
    return (mgi_dring_t*)(h->din + (uint64_t)k * h->dstride);
}

__device__ static inline char *mgi_dev_dring_at(const mgi_dev_ch_t *h,
                                                mgi_dring_t *r, uint64_t pos)
{
    return (char*)(r + 1) + (size_t)(pos & (h->dcap - 1)) * h->tuple_size;
}

/* The destination number of endpoint dst (an explicit destination). An
 * endpoint that is not one of the channel's traps: the tuple has no ring
 * to go to. */
__device__ static inline uint32_t mgi_dev_dring_index(const mgi_dev_ch_t *h,
                                                      int dst)
{
    uint32_t i;

    for (i = 0; i < h->ndst; ++i) {
        if (h->dst[i] == (uint16_t)dst) {
            return i;
        }
    }
    __trap();       /* dst is not one of the channel's destinations */
    return 0;
}

/* One thread of the block for this block's ring at destination number i:
 * the tail it wrote to, published where it is ahead of the one published
 * (all: in any case), a release at system scope: the tuples the block's
 * threads wrote before the last barrier are seen on the destination GPU
 * before the count. */
__device__ static inline void mgi_dev_dring_pub(const mgi_dev_ch_t *h,
                                                unsigned i, int all)
{
    uint64_t *st = mgi_dev_dring_prod(h, i);

    if (all || (st[2] != st[0])) {
        mgi_st_rel64_sys(&mgi_dev_dring_to(h, i)->tail, st[0]);
        st[2] = st[0];
    }
}

/* Block level: room for cnt[j] tuples in the ring of each target j < nt
 * (destination number di[j]), all or none; tail[j] is where they start.
 * A ring's head is read over the link only when the one read before
 * leaves too little room. None: every ring of the block with tuples not
 * yet published gets its tail published (its consumer may be waiting for
 * them to make room). Returns the same in every thread. */
__device__ static inline int mgi_dev_dring_reserve(const mgi_dev_ch_t *h,
                                                   unsigned nt,
                                                   const uint32_t *di,
                                                   const uint32_t *cnt,
                                                   uint64_t *tail)
{
    uint64_t *st, t, hd;
    unsigned j;
    int ok = 1;

    for (j = threadIdx.x; j < nt; j += blockDim.x) {
        if (cnt[j] == 0) {
            continue;
        }
        st = mgi_dev_dring_prod(h, di[j]);
        t  = st[0];
        hd = st[1];
        if (t + cnt[j] - hd > h->dcap) {
            /* an acquire: the consumer's reads of the slots before ours
             * are done before the block's writes after the barrier */
            hd    = mgi_ld_acq64(&mgi_dev_dring_to(h, di[j])->head);
            st[1] = hd;
        }
        ok     &= (t + cnt[j] - hd <= h->dcap);
        tail[j] = t;
    }
    if (__syncthreads_and(ok)) {
        return 1;
    }
    for (j = threadIdx.x; j < h->ndst; j += blockDim.x) {
        mgi_dev_dring_pub(h, j, 0);
    }
    return 0;
}

#define MGI_DEV_LANDED (~0ull) /* mgi_dev_dring_land: a target's tuples go
                                * to its landing buffer (no wrap) */

/* This endpoint's landing control (a destination's, mgi_dland_t). */
__device__ static inline mgi_dland_t *mgi_dev_dland_in(const mgi_dev_ch_t *h)
{
    return (mgi_dland_t*)(h->din + h->dland_off);
}

/* Block level, once the rings have room (mgi_dev_dring_reserve): where
 * each target j's cnt[j] tuples go, as ptr[j] + ((tail[j] + rank) &
 * pm[j]) * tuple size (mgi_dev_dring_slot). Into the destination's
 * landing buffer (mgi_ch_params_t.land) where it has one and a run of
 * them fits there (tail[j]: where the run starts, pm[j] MGI_DEV_LANDED:
 * the ring's tail stays), else into the ring. After the first run that
 * did not fit, the block goes to the ring at once (dprod word 3). The
 * ring's room was found first, so a send is still all or nothing: a
 * reservation in a landing buffer is never given back. */
__device__ static inline void mgi_dev_dring_land(const mgi_dev_ch_t *h,
                                                 unsigned nt,
                                                 const uint32_t *di,
                                                 const uint32_t *cnt,
                                                 uint64_t *tail, char **ptr,
                                                 uint64_t *pm)
{
    mgi_dland_t *l;
    uint64_t *st, b;
    unsigned j;

    for (j = threadIdx.x; j < nt; j += blockDim.x) {
        ptr[j] = (char*)(mgi_dev_dring_to(h, di[j]) + 1);
        pm[j]  = h->dcap - 1;
        if ((h->dland == NULL) || (h->dland[di[j]] == NULL) ||
            (cnt[j] == 0)) {
            continue;
        }
        st = mgi_dev_dring_prod(h, di[j]);
        if (st[3] != 0) {
            continue;                   /* the buffer was full */
        }
        l = (mgi_dland_t*)(h->dbase[di[j]] + h->dland_off);
        b = atomicAdd_system((unsigned long long*)&l->cur, cnt[j]);
        if (b + cnt[j] <= h->dland_cap[di[j]]) {
            ptr[j]  = h->dland[di[j]];
            pm[j]   = MGI_DEV_LANDED;
            tail[j] = b;
        } else {
            atomicMax_system((unsigned long long*)&l->fail, ~b);
            st[3] = 1;
        }
    }
    __syncthreads();
}

/* Where a target's tuple of the given rank goes (mgi_dev_dring_land). */
__device__ static __forceinline__ char *mgi_dev_dring_slot(
        const char *const *ptr, const uint64_t *pm, const uint64_t *tail,
        uint32_t slot, uint64_t rank, unsigned ts)
{
    return (char*)ptr[slot] + (size_t)((tail[slot] + rank) & pm[slot]) * ts;
}

/* Tuples that landed in this destination endpoint's landing buffer, at
 * its start: the whole count once every source's flush was seen (every
 * receive of the channel's consumers returned MGI_DEV_EOF, or the kernel
 * after it ended); 0 without a landing buffer. */
__device__ static inline uint64_t mgi_dev_landed(const mgi_dev_ch_t *h)
{
    const mgi_dland_t *l;

    if (!h->direct || (h->din == NULL)) {
        return 0;
    }
    l = mgi_dev_dland_in(h);
    return mgi_dland_count(mgi_ld_acq64(&l->cur), mgi_ld_acq64(&l->fail));
}

/* Block level, once the block wrote its tuples: each target's new tail
 * (not of those whose tuples landed, pm: mgi_dev_dring_land),
 * published (mgi_dev_dring_pub) once the tuples not yet published reach
 * h->dpub (0: every time). Fewer releases at system scope: each waits
 * until every store of the block before it has reached its GPU. */
__device__ static inline void mgi_dev_dring_publish(const mgi_dev_ch_t *h,
                                                    unsigned nt,
                                                    const uint32_t *di,
                                                    const uint32_t *cnt,
                                                    const uint64_t *tail,
                                                    const uint64_t *pm)
{
    unsigned j;
    uint64_t t;

    __syncthreads();
    for (j = threadIdx.x; j < nt; j += blockDim.x) {
        if ((cnt[j] > 0) && (pm[j] != MGI_DEV_LANDED)) {
            t = tail[j] + cnt[j];
            mgi_dev_dring_prod(h, di[j])[0] = t;
            if (t - mgi_dev_dring_prod(h, di[j])[2] >= h->dpub) {
                mgi_dev_dring_pub(h, di[j], 1);
            }
        }
    }
}

/* The 16-byte chunks C of a tuple of ts bytes where a warp's tuples may
 * go to their rings transposed (mgi_dev_dring_put_chunks, in a block of
 * whole warps): more than one chunk a tuple, at most cmax (what the
 * caller's registers hold), a whole number of tuples a warp; else 0 */
__host__ __device__ constexpr unsigned mgi_dev_dring_chunks(unsigned ts,
                                                            unsigned cmax)
{
    return (MGI_DEV_DRING_V16 && (ts % 16 == 0) && (ts / 16 > 1) &&
            (ts / 16 <= cmax) && (32 % (ts / 16) == 0)) ? ts / 16 : 0;
}

/* Every lane of a whole warp, each with a tuple of C 16-byte chunks in
 * registers (v: 2 * C words; 1 < C <= CMAX, 32 % C == 0, the same in
 * every lane) and its ring slot (at; NULL: none): the warp stores its
 * tuples chunk by chunk, so that one store instruction writes C
 * consecutive chunks of each of 32 / C tuples. With one tuple a lane, a
 * store of the warp would write a chunk every 16 * C bytes: a masked
 * write across the link for each, which held 64-byte tuples to about a
 * quarter of the link. Lane l takes chunk l % C of the tuple of lane
 * r * 32 / C + l / C in round r, by shuffles; tuples of one destination
 * from consecutive lanes are side by side in its ring, so a store writes
 * whole 32-byte sectors. */
template <unsigned CMAX>
__device__ static __forceinline__ void mgi_dev_dring_put_chunks(
        char *at, const uint64_t *v, unsigned C)
{
    const unsigned lane = threadIdx.x % 32;
    const unsigned c    = lane % C;
    unsigned long long a0, a1, x0, x1;
    unsigned r, k, q;
    char *to;

#pragma unroll
    for (r = 0; r < CMAX; ++r) {
        if (r >= C) {
            break;                      /* the same in every lane */
        }
        q  = r * (32 / C) + lane / C;
        to = (char*)__shfl_sync(0xffffffffu, (unsigned long long)at, q);
        x0 = 0;
        x1 = 0;
#pragma unroll
        for (k = 0; k < CMAX; ++k) {
            if (k < C) {
                a0 = __shfl_sync(0xffffffffu, (unsigned long long)v[2 * k],
                                 q);
                a1 = __shfl_sync(0xffffffffu,
                                 (unsigned long long)v[2 * k + 1], q);
                if (k == c) {
                    x0 = a0;
                    x1 = a1;
                }
            }
        }
        if (to != NULL) {
            ((ulonglong2*)to)[c] = make_ulonglong2(x0, x1);
        }
    }
}

/* Every lane of a whole warp, each with a tuple of ts bytes at `tuple`
 * (NULL: none): its 16-byte chunks in v (room for 4), and their count
 * where the warp can store its tuples with mgi_dev_dring_put_chunks
 * (mgi_dev_dring_chunks, every lane's tuple 16-byte aligned; the same in
 * every lane); else 0, and the caller copies each tuple by its own
 * thread. */
__device__ static __forceinline__ unsigned mgi_dev_dring_load_chunks(
        const void *tuple, unsigned ts, uint64_t *v)
{
    const unsigned C = mgi_dev_dring_chunks(ts, 4);
    ulonglong2 x;
    unsigned k;

    if ((C == 0) ||
        !__all_sync(0xffffffffu, (tuple == NULL) ||
                                 ((uintptr_t)tuple % 16 == 0))) {
        return 0;
    }
#pragma unroll
    for (k = 0; k < 4; ++k) {
        if ((k < C) && (tuple != NULL)) {
            x            = ((const ulonglong2*)tuple)[k];
            v[2 * k]     = x.x;
            v[2 * k + 1] = x.y;
        }
    }
    return C;
}

/* mgi_dev_send_block on a channel with direct rings: every thread passes
 * one tuple of the schema's size or none; an explicit destination, the
 * partition key, or (neither) every destination. All or nothing. */
__device__ static inline int mgi_dev_dring_send_block(const mgi_dev_ch_t *h,
                                                      const void *tuple,
                                                      unsigned len, int dst)
{
    __shared__ uint32_t s_uni[MGI_DEV_TILE_DSTS];  /* tuples for one */
    __shared__ uint32_t s_cnt[MGI_DEV_TILE_DSTS];  /* all of a target's */
    __shared__ uint32_t s_di[MGI_DEV_TILE_DSTS];
    __shared__ uint64_t s_tail[MGI_DEV_TILE_DSTS];
    __shared__ char *s_ptr[MGI_DEV_TILE_DSTS];
    __shared__ uint64_t s_pm[MGI_DEV_TILE_DSTS];
    __shared__ uint32_t s_nbc;                     /* tuples for every */
    const unsigned nd   = h->ndst, ts = h->tuple_size;
    const unsigned tid  = threadIdx.x;
    const unsigned mask = mgi_dev_block_warp_mask();
    const int has       = (len > 0);
    const int bc        = has && (dst < 0) && (h->part_key < 0);
    uint32_t slot = MGI_DEV_NO_SLOT, rk, rb;
    uint64_t v[8];      /* the tuple's chunks (mgi_dev_dring_load_chunks) */
    unsigned j, C;

    mgi_dev_dring_check_grid(h);
    if (has && (len != ts)) {
        __trap();   /* a tuple of another size than the schema's */
    }
    if (has && !bc) {
        slot = (dst >= 0) ? mgi_dev_dring_index(h, dst) :
                            mgi_dev_key_index(h, tuple);
    }
    for (j = tid; j < nd; j += blockDim.x) {
        s_uni[j] = 0;
        s_di[j]  = j;
    }
    if (tid == 0) {
        s_nbc = 0;
    }
    __syncthreads();
    rk = mgi_dev_warp_take(mask, slot, s_uni);
    rb = mgi_dev_warp_take(mask, bc ? 0 : MGI_DEV_NO_SLOT, &s_nbc);
    __syncthreads();
    for (j = tid; j < nd; j += blockDim.x) {
        s_cnt[j] = s_uni[j] + s_nbc;
    }
    __syncthreads();
    if (!mgi_dev_dring_reserve(h, nd, s_di, s_cnt, s_tail)) {
        return 0;
    }
    mgi_dev_dring_land(h, nd, s_di, s_cnt, s_tail, s_ptr, s_pm);
    C = (blockDim.x % 32 == 0) ?
        mgi_dev_dring_load_chunks(has ? tuple : NULL, ts, v) : 0;
    if (C > 0) {
        /* the warp's tuples chunk by chunk: those for every destination
         * (a broadcast's rings, where any lane of the warp has one), then
         * the others */
        const unsigned nbc = __any_sync(0xffffffffu, bc) ? nd : 0;

        for (j = 0; j < nbc; ++j) {
            mgi_dev_dring_put_chunks<4>(
                    bc ? mgi_dev_dring_slot(s_ptr, s_pm, s_tail, j,
                                            s_uni[j] + rb, ts) : NULL,
                    v, C);
        }
        mgi_dev_dring_put_chunks<4>(
                (has && !bc) ? mgi_dev_dring_slot(s_ptr, s_pm, s_tail, slot,
                                                  rk, ts) : NULL,
                v, C);
    } else if (bc) {
        for (j = 0; j < nd; ++j) {
            mgi_copy_bytes(mgi_dev_dring_slot(s_ptr, s_pm, s_tail, j,
                                              s_uni[j] + rb, ts),
                           tuple, ts);
        }
    } else if (has) {
        mgi_copy_bytes(mgi_dev_dring_slot(s_ptr, s_pm, s_tail, slot, rk, ts),
                       tuple, ts);
    }
    mgi_dev_dring_publish(h, nd, s_di, s_cnt, s_tail, s_pm);
    return has ? (int)len : 0;
}

/* Block level: this block's EOF at every destination (its tail published,
 * then the final tail + 1 at eof): the flush is done once it is stored,
 * the tuples being in the destinations' memory already. */
__device__ static inline void mgi_dev_dring_flush(const mgi_dev_ch_t *h)
{
    unsigned i;

    mgi_dev_dring_check_grid(h);
    __syncthreads();
    for (i = threadIdx.x; i < h->ndst; i += blockDim.x) {
        mgi_dev_dring_pub(h, i, 0);
        mgi_st_rel64_sys(&mgi_dev_dring_to(h, i)->eof,
                         mgi_dev_dring_prod(h, i)[0] + 1);
    }
    __syncthreads();
}

/* Thread 0 of a receive, under consuming block c's lock: the next run of
 * tuples in the block's rings (c, c + nblocks, ...; from the one after
 * the last it took, in turn), at most max, in one piece. Returns its
 * tuples (ring *rp from its head *hp), 0 when none is there now, or
 * MGI_DEV_EOF once every one of them was flushed and drained. */
__device__ static inline int mgi_dev_dring_pick(const mgi_dev_ch_t *h,
                                                unsigned c, uint32_t max,
                                                mgi_dring_t **rp,
                                                uint64_t *hp)
{
    const unsigned nb = h->nblocks;
    const unsigned nr = (c < h->nin) ? (h->nin - c + nb - 1) / nb : 0;
    unsigned j, k, fin = 0;
    uint64_t hd, e, t, m;
    mgi_dring_t *r;

    k = (nr > 0) ? h->dcur[c] % nr : 0;
    for (j = 0; j < nr; ++j, k = (k + 1 < nr) ? k + 1 : 0) {
        r  = mgi_dev_dring_in(h, c + k * nb);
        hd = *(volatile uint64_t*)&r->head;     /* ours, under the lock */
        e  = mgi_ld_acq64(&r->eof);             /* before the tail: the */
        t  = mgi_ld_acq64(&r->tail);            /* final one with it */
        if (t != hd) {
            m  = min(t - hd, (uint64_t)max);
            m  = min(m, (uint64_t)(h->dcap - (hd & (h->dcap - 1))));
            *rp = r;
            *hp = hd;
            h->dcur[c] = (k + 1 < nr) ? k + 1 : 0;
            return (int)m;
        }
        fin += (e != 0);
    }
    return (fin == nr) ? (int)MGI_DEV_EOF : 0;
}

/* Block level: a receive of up to cap bytes from this block's direct
 * rings, in rounds of one run of one ring each, the rings in turn, until
 * cap is reached or each ring was looked at. Thread 0 takes the block's
 * lock, finds a round's run and asks place(bytes, done) where it goes
 * (mgi_dev_recv_block_to's place, done the bytes of the rounds before;
 * NULL: taken and dropped); every thread then calls run(tuples, count,
 * to), and the ring's head moves past them, a release at system scope
 * (the producer on another GPU overwrites the slots only after the
 * block's reads). Returns bytes, 0, or MGI_DEV_EOF, the same in every
 * thread. */
template <typename PLACE, typename RUN>
__device__ static inline int mgi_dev_dring_recv_block(const mgi_dev_ch_t *h,
                                                      unsigned cap,
                                                      PLACE place, RUN run)
{
    __shared__ mgi_dring_t *s_r;
    __shared__ uint64_t s_hd;
    __shared__ char *s_dst;
    __shared__ int s_n, s_lk;
    const unsigned c  = blockIdx.x % h->nblocks;
    const unsigned ts = h->tuple_size;
    const unsigned nr = (c < h->nin) ?
                        (h->nin - c + h->nblocks - 1) / h->nblocks : 0;
    uint32_t done = 0;
    unsigned k;
    int n = 0;

    __syncthreads();
    if (threadIdx.x == 0) {
        s_lk = (atomicCAS(&h->final_lock[c], 0u, 1u) == 0u);
        __threadfence();
    }
    __syncthreads();
    if (s_lk == 0) {
        return 0;   /* another block of these rings is receiving */
    }
    /* a run ends at a ring's end too: one round more than the rings */
    for (k = 0; (k <= nr) && (cap - done >= ts); ++k) {
        if (threadIdx.x == 0) {
            s_n   = mgi_dev_dring_pick(h, c, (cap - done) / ts, &s_r,
                                       &s_hd);
            s_dst = (s_n > 0) ? (char*)place((uint32_t)s_n * ts, done) :
                                NULL;
        }
        __syncthreads();
        n = s_n;
        if (n <= 0) {
            break;
        }
        run((const char*)mgi_dev_dring_at(h, s_r, s_hd), (uint32_t)n, s_dst);
        __syncthreads();
        if (threadIdx.x == 0) {
            mgi_st_rel64_sys(&s_r->head, s_hd + (uint64_t)n);
        }
        done += (uint32_t)n * ts;
    }
    if (threadIdx.x == 0) {
        __threadfence();
        atomicExch(&h->final_lock[c], 0u);
    }
    return (done > 0) ? (int)done : n;
}

/* Thread- and warp-level sends on direct rings. Block b % nblocks's
 * record of its ring to destination i; its lock word serialises the
 * thread- and warp-level sends to the ring (of any block that maps to
 * it). Under the lock the record is read and written with volatile
 * accesses: the blocks that share it may be on other SMs. */
__device__ static inline volatile uint64_t *mgi_dev_dring_rec(
        const mgi_dev_ch_t *h, unsigned i)
{
    return &h->dprod[MGI_DRING_PROD_WORDS *
                     ((uint64_t)i * h->nblocks + blockIdx.x % h->nblocks)];
}

__device__ static inline mgi_dring_t *mgi_dev_dring_of(const mgi_dev_ch_t *h,
                                                       unsigned i)
{
    return (mgi_dring_t*)(h->dbase[i] +
                          (uint64_t)(h->dfirst + blockIdx.x % h->nblocks) *
                          h->dstride);
}

/* Take ring i's lock by the deadline (0: passed, said to the host). */
__device__ static inline int mgi_dev_dring_lock(const mgi_dev_ch_t *h,
                                                unsigned i, uint64_t dl)
{
    unsigned long long *w =
            (unsigned long long*)&mgi_dev_dring_rec(h, i)[4];
    unsigned n = 0;

    while (atomicCAS(w, 0ull, 1ull) != 0ull) {
        if ((++n % 256 == 0) && mgi_dev_past(dl)) {
            mgi_dev_report(h, MGI_DEV_ERR_SEND_TIMEOUT);
            return 0;
        }
    }
    __threadfence();
    return 1;
}

/* Release ring i's lock: the tuples written under it reach every scope
 * first, so the next holder's publish covers them. */
__device__ static inline void mgi_dev_dring_unlock(const mgi_dev_ch_t *h,
                                                   unsigned i)
{
    __threadfence_system();
    atomicExch((unsigned long long*)&mgi_dev_dring_rec(h, i)[4], 0ull);
}

/* Under ring i's lock: room for cnt more tuples; the tail they start at
 * in *t. The head is read over the link only when the one read before
 * leaves too little room. */
__device__ static inline int mgi_dev_dring_room(const mgi_dev_ch_t *h,
                                                unsigned i, uint32_t cnt,
                                                uint64_t *t)
{
    volatile uint64_t *st = mgi_dev_dring_rec(h, i);
    uint64_t hd           = st[1];

    *t = st[0];
    if (*t + cnt - hd > h->dcap) {
        hd    = mgi_ld_acq64(&mgi_dev_dring_of(h, i)->head);
        st[1] = hd;
    }
    return (*t + cnt - hd <= h->dcap);
}

/* Under ring i's lock, once cnt tuples were written at tail t (cnt 0:
 * none, the ring was full): the new tail, published once the tuples not
 * yet published reach h->dpub, or at once when the ring was full (its
 * consumer may be waiting for them to make room). */
__device__ static inline void mgi_dev_dring_advance(const mgi_dev_ch_t *h,
                                                    unsigned i, uint64_t t,
                                                    uint32_t cnt)
{
    volatile uint64_t *st = mgi_dev_dring_rec(h, i);

    if (cnt > 0) {
        st[0] = t + cnt;
    }
    if ((st[0] != st[2]) && ((cnt == 0) || (st[0] - st[2] >= h->dpub))) {
        __threadfence_system();
        mgi_st_rel64_sys(&mgi_dev_dring_of(h, i)->tail, st[0]);
        st[2] = st[0];
    }
}

/* The destinations a tuple goes to: [*lo, *hi) of the channel's, one for
 * an explicit destination or the partition key, every one for a
 * broadcast. */
__device__ static inline void mgi_dev_dring_targets(const mgi_dev_ch_t *h,
                                                    const void *tuple,
                                                    int dst, unsigned *lo,
                                                    unsigned *hi)
{
    if (dst >= 0) {
        *lo = mgi_dev_dring_index(h, dst);
        *hi = *lo + 1;
    } else if (h->part_key >= 0) {
        *lo = mgi_dev_key_index(h, tuple);
        *hi = *lo + 1;
    } else {
        *lo = 0;
        *hi = h->ndst;
    }
}

/* mgi_dev_send on direct rings: one tuple of the schema's size into the
 * calling block's ring at its destination (each destination's, for a
 * broadcast: all or none), under the rings' locks taken in order.
 * Returns len, or 0 when a ring is full or a lock was not had by the
 * context's timeout (then reported: mgi_dev_reported). */
__device__ static inline int mgi_dev_dring_send_one(const mgi_dev_ch_t *h,
                                                    const void *tuple,
                                                    unsigned len, int dst)
{
    const unsigned ts = h->tuple_size;
    unsigned lo, hi, i, got;
    uint64_t t, dl;
    int ok = 1;

    if (len == 0) {
        return 0;
    }
    if (len != ts) {
        __trap();   /* a tuple of another size than the schema's */
    }
    mgi_dev_dring_targets(h, tuple, dst, &lo, &hi);
    dl = mgi_dev_deadline(h);
    for (got = lo; (got < hi) && mgi_dev_dring_lock(h, got, dl); ++got) {
    }
    ok = (got == hi);
    for (i = lo; ok && (i < hi); ++i) {
        ok = mgi_dev_dring_room(h, i, 1, &t);
    }
    for (i = lo; i < got; ++i) {
        t = mgi_dev_dring_rec(h, i)[0];
        if (ok) {
            mgi_copy_bytes(mgi_dev_dring_at(h, mgi_dev_dring_of(h, i), t),
                           tuple, ts);
        }
        mgi_dev_dring_advance(h, i, t, ok ? 1 : 0);
        mgi_dev_dring_unlock(h, i);
    }
    return ok ? (int)len : 0;
}

/* OR of v over the warp. */
__device__ static inline uint64_t mgi_dev_warp_or64(uint64_t v)
{
    unsigned k;

    for (k = 16; k > 0; k /= 2) {
        v |= __shfl_xor_sync(0xffffffffu, v, k);
    }
    return v;
}

/* mgi_dev_send_warp on direct rings: every lane passes its tuple (len 0:
 * none); lane 0 takes the locks of the rings the warp's tuples go to, in
 * order, and finds room for each ring's count; the lanes then write their
 * tuples side by side in each. All or nothing: every lane gets its len or
 * 0. */
__device__ static inline int mgi_dev_dring_send_warp(const mgi_dev_ch_t *h,
                                                     const void *tuple,
                                                     unsigned len, int dst)
{
    const unsigned lane = threadIdx.x % 32, ts = h->tuple_size;
    const unsigned lt   = (1u << lane) - 1;
    unsigned lo = 0, hi = 0, i, n, rank, bal;
    unsigned long long mine = 0, all, taken = 0, rest;
    uint64_t dl, t = 0;
    int ok;

    if ((len != 0) && (len != ts)) {
        __trap();   /* a tuple of another size than the schema's */
    }
    if (len != 0) {
        mgi_dev_dring_targets(h, tuple, dst, &lo, &hi);
        mine = ((hi - lo == 64) ? ~0ull : ((1ull << (hi - lo)) - 1)) << lo;
    }
    all = mgi_dev_warp_or64(mine);
    if (all == 0) {
        return 0;
    }
    if (lane == 0) {
        dl = mgi_dev_deadline(h);
        for (rest = all; rest != 0; rest &= rest - 1) {
            i = __ffsll(rest) - 1;
            if (!mgi_dev_dring_lock(h, i, dl)) {
                break;
            }
            taken |= 1ull << i;
        }
    }
    taken = __shfl_sync(0xffffffffu, taken, 0);
    ok    = (taken == all);
    for (rest = taken; rest != 0; rest &= rest - 1) {
        i = __ffsll(rest) - 1;
        n = __popc(__ballot_sync(0xffffffffu, (mine >> i) & 1));
        if ((lane == 0) && ok) {
            ok = mgi_dev_dring_room(h, i, n, &t);
        }
    }
    ok = __shfl_sync(0xffffffffu, ok, 0);
    for (rest = taken; rest != 0; rest &= rest - 1) {
        i    = __ffsll(rest) - 1;
        bal  = __ballot_sync(0xffffffffu, (mine >> i) & 1);
        n    = __popc(bal);
        rank = __popc(bal & lt);
        if (lane == 0) {
            t = mgi_dev_dring_rec(h, i)[0];
        }
        t = __shfl_sync(0xffffffffu, (unsigned long long)t, 0);
        if (ok && ((mine >> i) & 1)) {
            mgi_copy_bytes(mgi_dev_dring_at(h, mgi_dev_dring_of(h, i),
                                            t + rank), tuple, ts);
        }
        __syncwarp();
        if (lane == 0) {
            mgi_dev_dring_advance(h, i, t, ok ? n : 0);
            mgi_dev_dring_unlock(h, i);
        }
    }
    return ok ? (int)len : 0;
}

/* mgi_dev_recv on direct rings: one run of tuples from the calling
 * block's rings (mgi_dev_dring_pick), as many as fit in cap, under the
 * consuming block's lock (another thread of the block receiving: 0). */
__device__ static inline int mgi_dev_dring_recv_one(const mgi_dev_ch_t *h,
                                                    void *buf, unsigned cap)
{
    const unsigned c  = blockIdx.x % h->nblocks;
    const unsigned ts = h->tuple_size;
    mgi_dring_t *r;
    uint64_t hd;
    int n;

    if ((cap < ts) || (atomicCAS(&h->final_lock[c], 0u, 1u) != 0u)) {
        return 0;
    }
    __threadfence();
    n = mgi_dev_dring_pick(h, c, cap / ts, &r, &hd);
    if (n > 0) {
        mgi_copy_bytes(buf, mgi_dev_dring_at(h, r, hd), (uint32_t)n * ts);
        /* the reads are done before the producer may overwrite them */
        __threadfence_system();
        mgi_st_rel64_sys(&r->head, hd + (uint64_t)n);
    }
    __threadfence();
    atomicExch(&h->final_lock[c], 0u);
    return (n > 0) ? n * (int)ts : n;
}

/* The block copies `bytes` from src to dst: 8-byte words, consecutive
 * threads on consecutive words, MGI_DEV_RECV_ILP loads a thread in flight,
 * where both are aligned; else byte by byte. (16-byte words made the
 * workloads' shuffle kernel spill 1.1 KB a thread instead of 0.2.) */
__device__ static inline void mgi_dev_block_copy(char *dst, const char *src,
                                                 uint32_t bytes)
{
    const unsigned tid = threadIdx.x, nth = blockDim.x;
    uint32_t w, u, base;

    if (((((uintptr_t)dst | (uintptr_t)src) % 8) == 0) && (bytes % 8 == 0)) {
        const uint32_t nw = bytes / 8;
        uint64_t v[MGI_DEV_RECV_ILP];

        for (base = tid; base < nw; base += nth * MGI_DEV_RECV_ILP) {
#pragma unroll
            for (u = 0; u < MGI_DEV_RECV_ILP; ++u) {
                w = base + u * nth;
                if (w < nw) {
                    v[u] = __ldcg((const unsigned long long*)src + w);
                }
            }
#pragma unroll
            for (u = 0; u < MGI_DEV_RECV_ILP; ++u) {
                w = base + u * nth;
                if (w < nw) {
                    ((uint64_t*)dst)[w] = v[u];
                }
            }
        }
    } else {
        for (w = tid; w < bytes; w += nth) {
            dst[w] = src[w];
        }
    }
}

#endif

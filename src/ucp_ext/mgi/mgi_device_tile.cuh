/**
 * MGI device API: the tile sends, a block's tile of tuples from memory
 * through direct rings or as batched messages in stage rings
 * (mgi_dev_send_block_tile, mgi_dev_send_block_tile_of and
 * mgi_dev_send_block_tile_map, mgi_dev_tile_of_fits).
 *
 * A part of mgi/mgi_device.cuh, which includes its parts in order (each
 * uses those before it); kernels include <mgi/mgi_device.cuh>.
 */
#ifndef MGI_DEVICE_TILE_CUH_
#define MGI_DEVICE_TILE_CUH_

#ifndef MGI_DEVICE_CUH_
#  error "a part of the device API: include <mgi/mgi_device.cuh>"
#endif

#ifndef MGI_DEV_TILE_WORDS
#  define MGI_DEV_TILE_WORDS 8  /* 8-byte words of a tile a thread holds in
                                  registers (mgi_dev_send_tile_batch_w) */
#endif

/* Tuples of w 8-byte words that a batch from registers takes (the sizes
 * mgi_dev_send_tile_batch_w is made for: 8, 16, 32 and 64 bytes, each
 * thread holding at least one tuple). Host or device: mgi_dev_tile_of_fits
 * asks it on the host. */
__host__ __device__ static constexpr inline bool mgi_dev_tile_reg_words(
        unsigned w)
{
    return ((w == 1) || (w == 2) || (w == 4) || (w == 8)) &&
           (w <= MGI_DEV_TILE_WORDS);
}

/* mgi_dev_send_tile_batch_w's routing: by the channel's partition key
 * (this tag), or a function of the caller's (mgi_dev_send_block_tile_map) */
typedef struct mgi_dev_by_key {
} mgi_dev_by_key_t;

/* A tuple's slot: its destination number by the key, found in word kw of
 * its words v (from registers) ... */
template <unsigned WD>
__device__ static __forceinline__ uint32_t mgi_dev_tile_map_slot(
        const mgi_dev_ch_t *h, mgi_dev_by_key_t, const uint64_t *v,
        unsigned kw, unsigned ksh, uint64_t kmask)
{
    uint64_t key = 0;
    unsigned k;

#pragma unroll
    for (k = 0; k < WD; ++k) {
        key = (k == kw) ? v[k] : key;   /* kw is not known at compile time */
    }
    return mgi_dev_key_mod(h, (key >> ksh) & kmask);
}

/* ... or as the caller's function names it. A number outside the
 * channel's destinations is the caller's error, and traps: the tuple has
 * nowhere to go, and a 0 would read as "the stage ring is full". */
template <unsigned WD, typename F>
__device__ static __forceinline__ uint32_t mgi_dev_tile_map_slot(
        const mgi_dev_ch_t *h, F map, const uint64_t *v, unsigned kw,
        unsigned ksh, uint64_t kmask)
{
    const uint32_t d = (uint32_t)map((const void*)v);

    if (d >= h->ndst) {
        __trap();   /* mgi_dev_send_block_tile_map: no such destination */
    }
    return d;
}

/* A tile send's first steps, shared by the direct-ring and the batched
 * tile sends. W > 0: each thread loads its U tuples of the tile's n into
 * registers (tuple tid + u blockDim.x in v[u WD ..], all loads in flight
 * at once) and finds each one's slot sl[u] (MGI_DEV_NO_SLOT past n; 0
 * with one slot). */
template <unsigned W, unsigned WD, unsigned U, typename F>
__device__ static __forceinline__ void mgi_dev_tile_load(
        const mgi_dev_ch_t *h, const char *t, unsigned n, unsigned nslot,
        F map, uint64_t *v, uint32_t *sl)
{
    const unsigned tid   = threadIdx.x, ts = h->tuple_size;
    const unsigned kw    = h->key_off / 8, ksh = 8 * (h->key_off % 8);
    const uint64_t kmask = (h->key_size >= 8) ? ~0ull :
                           (1ull << (8 * h->key_size)) - 1;
    unsigned i, k, u;

    if constexpr (W > 0) {
#pragma unroll
        for (k = 0; k < U * WD; ++k) {
            i    = tid + (k / WD) * blockDim.x;
            v[k] = (i < n) ? *((const uint64_t*)(t + (size_t)i * ts) +
                               k % WD) : 0;
        }
#pragma unroll
        for (u = 0; u < U; ++u) {
            sl[u] = (tid + u * blockDim.x >= n) ? MGI_DEV_NO_SLOT :
                    (nslot == 1) ? 0 :
                    mgi_dev_tile_map_slot<WD>(h, map, &v[u * WD], kw, ksh,
                                              kmask);
        }
    }
}

/* ... then, with several slots, the tile's tuples counted per slot into
 * s_cnt (zeroed before the barrier the caller passed): W > 0 from the
 * registers, each tuple's rank among its slot's into rk[u]; W = 0 read
 * from the tile. */
template <unsigned W, unsigned U>
__device__ static __forceinline__ void mgi_dev_tile_count(
        const mgi_dev_ch_t *h, const char *t, unsigned n, int dst,
        unsigned nslot, const uint32_t *sl, uint32_t *rk, uint32_t *s_cnt)
{
    const unsigned mask = mgi_dev_block_warp_mask();
    unsigned base, i, u;

    if (nslot <= 1) {
        return;
    }
    if constexpr (W > 0) {
#pragma unroll
        for (u = 0; u < U; ++u) {
            rk[u] = mgi_dev_warp_take(mask, sl[u], s_cnt);
        }
    } else {
        for (base = 0; base < n; base += blockDim.x) {
            i = base + threadIdx.x;
            mgi_dev_warp_take(mask, (i < n) ? mgi_dev_tile_slot(
                                                  h, t + (size_t)i *
                                                        h->tuple_size, dst) :
                                              MGI_DEV_NO_SLOT, s_cnt);
        }
    }
}

/* A tuple of WD 8-byte words from registers into its ring slot, by its
 * own thread (where mgi_dev_dring_put_chunks does not store it): 16-byte
 * stores where WD is even (the slot is aligned to them then: rings start
 * on MGI_RING_LINE boundaries, slots at multiples of the tuple size), so
 * two threads with consecutive 16-byte slots fill a 32-byte sector;
 * 8-byte ones else. Two 8-byte stores of a warp each fill every other 8
 * bytes of the sectors they touch, each a masked write across the link. */
template <unsigned WD>
__device__ static __forceinline__ void mgi_dev_dring_put(char *at,
                                                         const uint64_t *v)
{
    unsigned k;

    if constexpr ((WD % 2 == 0) && MGI_DEV_DRING_V16) {
#pragma unroll
        for (k = 0; k < WD / 2; ++k) {
            ((ulonglong2*)at)[k] = make_ulonglong2(v[2 * k], v[2 * k + 1]);
        }
    } else {
#pragma unroll
        for (k = 0; k < WD; ++k) {
            ((uint64_t*)at)[k] = v[k];
        }
    }
}

/* A tile send on a channel with direct rings (mgi_dev_send_block_tile and
 * the typed tile sends, same arguments and answers): the tile's tuples
 * are counted per target (with W > 0 from registers, as
 * mgi_dev_send_tile_batch_w loads them), room is found in every target's
 * ring at once, and each tuple is stored at its place there, the tuples
 * of one destination from consecutive threads side by side. Targets: the
 * destination numbers the key or the caller's function names (several
 * slots), the one explicit destination, or every destination (a
 * broadcast). At most MGI_DEV_TILE_WORDS words a thread a call with
 * W > 0, a ring's tuples at most; all or nothing. */
template <unsigned W, typename F = mgi_dev_by_key_t>
__device__ static inline unsigned mgi_dev_dring_tile(const mgi_dev_ch_t *h,
                                                     const void *tuples,
                                                     unsigned n, int dst,
                                                     uint32_t *counts,
                                                     F map = F())
{
    constexpr unsigned WD = (W > 0) ? W : 1;
    constexpr unsigned U  = (W == 0) ? 1 :
                            (MGI_DEV_TILE_WORDS >= WD) ?
                            MGI_DEV_TILE_WORDS / WD : 1;
    __shared__ uint32_t s_cnt[MGI_DEV_TILE_DSTS];
    __shared__ uint32_t s_run[MGI_DEV_TILE_DSTS];
    __shared__ uint32_t s_di[MGI_DEV_TILE_DSTS];
    __shared__ uint64_t s_tail[MGI_DEV_TILE_DSTS];
    __shared__ char *s_ptr[MGI_DEV_TILE_DSTS];
    __shared__ uint64_t s_pm[MGI_DEV_TILE_DSTS];
    const unsigned ts    = h->tuple_size;
    const unsigned nslot = mgi_dev_tile_nslot(h, dst);
    const unsigned nt    = (nslot > 1) ? nslot : (dst >= 0) ? 1 : h->ndst;
    const unsigned tid   = threadIdx.x;
    const unsigned mask  = mgi_dev_block_warp_mask();
    const char *const t  = (const char*)tuples;
    uint64_t v[U * WD];
    uint32_t sl[U], rk[U], slot;
    unsigned i, j, u, k, base;
    bool warps;         /* a block of whole warps */
    char *at;

    mgi_dev_dring_check_grid(h);
    n = min(n, h->dcap);
    if (W > 0) {
        n = min(n, U * blockDim.x);
    }
    mgi_dev_tile_load<W, WD, U>(h, t, n, nslot, map, v, sl);
    for (j = tid; j < nt; j += blockDim.x) {
        s_cnt[j] = (nslot == 1) ? n : 0;
        s_run[j] = 0;
        s_di[j]  = ((nslot > 1) || (dst < 0)) ? j : 0;
    }
    if ((tid == 0) && (nslot == 1) && (dst >= 0)) {
        s_di[0] = mgi_dev_dring_index(h, dst);
    }
    __syncthreads();
    mgi_dev_tile_count<W, U>(h, t, n, dst, nslot, sl, rk, s_cnt);
    __syncthreads();
    if (!mgi_dev_dring_reserve(h, nt, s_di, s_cnt, s_tail)) {
        return 0;
    }
    mgi_dev_dring_land(h, nt, s_di, s_cnt, s_tail, s_ptr, s_pm);
    /* chunk by chunk where the warp can (every lane in each round, with
     * a tuple or none), else each tuple by its own thread */
    warps = (blockDim.x % 32 == 0);
#pragma unroll
    for (u = 0; (W > 0) && (u < U); ++u) {
        for (j = 0; j < ((nslot > 1) ? 1 : nt); ++j) {
            slot = (nslot > 1) ? sl[u] : j;
            at   = (sl[u] == MGI_DEV_NO_SLOT) ? NULL :
                   mgi_dev_dring_slot(s_ptr, s_pm, s_tail, slot,
                                      (nslot > 1) ? rk[u] :
                                                    tid + u * blockDim.x,
                                      ts);
            if constexpr (mgi_dev_dring_chunks(WD * 8, 32) != 0) {
                if (warps) {
                    mgi_dev_dring_put_chunks<WD / 2>(at, &v[u * WD], WD / 2);
                    continue;
                }
            }
            if (at != NULL) {
                mgi_dev_dring_put<WD>(at, &v[u * WD]);
            }
        }
    }
    for (base = 0; (W == 0) && (base < n); base += blockDim.x) {
        i    = base + tid;
        slot = (i >= n) ? MGI_DEV_NO_SLOT : (nslot == 1) ? 0 :
               mgi_dev_tile_slot(h, t + (size_t)i * ts, dst);
        k    = (nslot > 1) ? mgi_dev_warp_take(mask, slot, s_run) : i;
        for (j = 0; (slot != MGI_DEV_NO_SLOT) &&
                    (j < ((nslot > 1) ? 1 : nt)); ++j) {
            u = (nslot > 1) ? slot : j;
            mgi_copy_bytes(mgi_dev_dring_slot(s_ptr, s_pm, s_tail, u, k, ts),
                           t + (size_t)i * ts, ts);
        }
    }
    mgi_dev_dring_publish(h, nt, s_di, s_cnt, s_tail, s_pm);
    for (i = tid; (counts != NULL) && (i < nslot);
         i += blockDim.x) {
        if (s_cnt[i] > 0) {
            atomicAdd(&counts[i], s_cnt[i]);
        }
    }
    return n;
}

/* mgi_dev_send_block_tile with MGI_DEV_TILE_BATCH (else MGI_DEV_MSG_BATCH;
 * up to MGI_DEV_TILE_DSTS destinations): a tile's tuples
 * of one destination go as messages of up to h->tile_batch payload
 * bytes, a header per batch instead of one per tuple (paper §5.3), so
 * fewer bytes travel and the sorter walks a few headers a segment. A
 * first pass counts the tile's tuples per destination, thread 0 lays out
 * the messages and reserves them all at once, a second pass writes each
 * tuple at its place (a shared-memory count per destination, no barrier
 * between the tuples). With stage groups each group's destinations take a
 * reservation in the group's ring (mgi_dev_tile_reserve_groups). Tuples
 * of one destination keep their order from call to call, not within one
 * call (with one destination, within it too).
 *
 * W > 0: several destinations (one goes to mgi_dev_send_tile_one), tuples
 * of W 8-byte words, 8-byte aligned, the key in one word: each thread
 * first loads its MGI_DEV_TILE_WORDS / W tuples into registers, all loads
 * in flight at once and during the reservation, and both passes work from
 * them (the caller's tile fits them: at most that many tuples per thread).
 * W = 0: any tuple, read from the tile in each pass, one load after the
 * other (a pass's stores may alias the next load); on one H100 a 64 KiB
 * tile of 16-byte tuples took 13.6 k cycles so.
 *
 * F: the key routes (mgi_dev_by_key_t), or with dst MGI_DEV_DST_MAP the
 * caller's function `map` names each tuple's destination number (W > 0
 * only: mgi_dev_send_block_tile_map). */
template <unsigned W, typename F = mgi_dev_by_key_t>
__device__ static inline unsigned mgi_dev_send_tile_batch_w(
        const mgi_dev_ch_t *h, const void *tuples, unsigned n, int dst,
        uint32_t *counts, F map = F())
{
    constexpr unsigned WD = (W > 0) ? W : 1;   /* W as a divisor */
    constexpr unsigned U  = (MGI_DEV_TILE_WORDS >= WD) ?
                            MGI_DEV_TILE_WORDS / WD : 1;
    __shared__ uint32_t s_cnt[MGI_DEV_TILE_DSTS];   /* tuples per slot */
    __shared__ uint32_t s_at[MGI_DEV_TILE_DSTS];    /* its first message */
    __shared__ uint32_t s_run[MGI_DEV_TILE_DSTS];   /* places handed out */
    __shared__ char *s_msg[MGI_DEV_TILE_DSTS];      /* its messages' place */
    __shared__ mgi_seg_hdr_t *s_seg[MGI_STAGE_GROUPS_MAX];
    __shared__ uint32_t s_off[MGI_STAGE_GROUPS_MAX];
    __shared__ uint32_t s_pos[MGI_STAGE_GROUPS_MAX];
    __shared__ uint32_t s_tot[MGI_STAGE_GROUPS_MAX]; /* bytes per group */
    __shared__ uint32_t s_key[MGI_STAGE_GROUPS_MAX]; /* its mark */
    __shared__ mgi_dev_groups_res_t s_gres;
    __shared__ int s_ok;
    __shared__ mgi_dev_tile_at_t s_at1;             /* one group's */
    const unsigned ts    = h->tuple_size;
    const unsigned per   = min(h->tile_batch, MGI_MSG_MAX_LEN) / ts;
    const unsigned nslot = mgi_dev_tile_nslot(h, dst);
    const unsigned ng    = mgi_dev_ngroups(h);
    const unsigned tid   = threadIdx.x;
    const unsigned mask  = mgi_dev_block_warp_mask();
    const char *const t  = (const char*)tuples;
    mgi_ring_t *const r  = mgi_dev_stage(h);
    uint64_t v[U * WD];
    uint32_t sl[U], rk[U];
    uint32_t total, slot, rank, used, one, mkey = 0, mark = 0;
    unsigned base, i, u, k;
    int got;
    char *at;

    /* with stage groups, room for all of it in a fresh segment */
    n = min(n, (ng == 1) ? mgi_dev_tile_room(r, &s_at1, ts, per, nslot) :
                           mgi_dev_tile_fit(mgi_ring_cap(r), ts, per, nslot));
    if (W > 0) {
        n = min(n, U * blockDim.x);
    }
    if (n == 0) {
        return 0;                           /* a tuple exceeds a segment */
    }
    /* the loads first, in flight during the count */
    mgi_dev_tile_load<W, WD, U>(h, t, n, nslot, map, v, sl);
    for (i = tid; i < nslot; i += blockDim.x) {
        s_cnt[i] = (nslot == 1) ? n : 0;
        s_run[i] = 0;
    }
    __syncthreads();                        /* s_at1 read by all */
    /* 1. tuples per destination; from registers, each tuple's rank
     * among its destination's is what the count handed it */
    mgi_dev_tile_count<W, U>(h, t, n, dst, nslot, sl, rk, s_cnt);
    __syncthreads();
    if ((tid == 0) && (ng == 1)) {
        /* mgi_dev_tile_layout for one group, in registers: through
         * shared memory, the kernels that send tiles spilled twice as
         * much (ptxas gave them 32 registers instead of 64) */
        total = 0;
        used  = 0;
        one   = 0;
        for (i = 0; i < nslot; ++i) {
            s_at[i] = total;
            total  += mgi_dev_batch_bytes(s_cnt[i], per, ts);
            used   += (s_cnt[i] > 0);
            one     = (s_cnt[i] > 0) ? i : one;
        }
        mkey = (used == 1) ?
               mgi_dev_msg_key(h, mgi_dev_tile_route(h, one, dst)) :
               MGI_SEG_MIXED;
        s_ok = mgi_dev_tile_reserve(r, total, mkey, &s_at1, &s_seg[0],
                                    &s_off[0], &s_pos[0], &mark);
    } else if ((ng > 1) && (tid < 32)) {
        /* warp 0: the groups' reservations side by side */
        if (tid == 0) {
            mgi_dev_tile_layout(h, dst, nslot, per, s_cnt, s_at, s_tot,
                                s_key);
        }
        __syncwarp(mask);
        got = mgi_dev_tile_reserve_groups(h, mask, s_tot, s_key, s_seg, s_off,
                                          s_pos, &s_gres);
        __syncwarp(mask);   /* the lanes' reservations seen by thread 0 */
        if (tid == 0) {
            s_ok = got;
        }
    }
    if ((tid == 0) && s_ok) {
        mgi_dev_tile_places(h, dst, nslot, s_cnt, s_at, s_seg, s_off, s_msg);
    }
    __syncthreads();
    if (!s_ok) {
        return 0;
    }
    /* 2. each tuple at its place: a batch's first tuple writes the
     * batch's header */
    if (W > 0) {
#pragma unroll
        for (u = 0; u < U; ++u) {
            if (sl[u] != MGI_DEV_NO_SLOT) {
                at = mgi_dev_batch_at(s_msg[sl[u]], h,
                                      mgi_dev_tile_route(h, sl[u], dst),
                                      rk[u], s_cnt[sl[u]], per);
#pragma unroll
                for (k = 0; k < WD; ++k) {
                    ((uint64_t*)at)[k] = v[u * WD + k];
                }
            }
        }
    }
    for (base = 0; (W == 0) && (base < n); base += blockDim.x) {
        i    = base + tid;
        slot = (i < n) ? mgi_dev_tile_slot(h, t + (size_t)i * ts, dst) :
                         MGI_DEV_NO_SLOT;
        rank = mgi_dev_warp_take(mask, slot, s_run);
        if (slot != MGI_DEV_NO_SLOT) {
            mgi_dev_batch_put(s_msg[slot], h, mgi_dev_tile_route(h, slot, dst),
                              rank, s_cnt[slot], per, t + (size_t)i * ts);
        }
    }
    __syncthreads();
    if ((tid == 0) && (ng == 1)) {
        mgi_dev_tile_commit(r, s_seg[0], s_off[0], total, s_pos[0], mark,
                            mkey);
    } else if ((ng > 1) && (tid < 32)) {
        mgi_dev_tile_commit_groups(h, mask, s_tot, s_key, s_seg, s_off, s_pos,
                                   &s_gres);
    }
    /* the count of step 1, for the caller (mgi_dev_send_block_tile) */
    for (i = tid; (counts != NULL) && (nslot > 1) && (i < nslot);
         i += blockDim.x) {
        if (s_cnt[i] > 0) {
            atomicAdd(&counts[i], s_cnt[i]);
        }
    }
    return n;
}

/* The next word's message q and place rm in it, nt words on (nt = sq *
 * wpm + sr, rm < wpm): q = w / wpm without a division. Host and device
 * (test/mgi/device_host_check.cu checks it on the host). */
__host__ __device__ static __forceinline__ void mgi_dev_tile_carry(
        uint32_t *q, uint32_t *rm, uint32_t sq, uint32_t sr, uint32_t wpm)
{
    *rm += sr;
    *q  += sq;
    if (*rm >= wpm) {
        *rm -= wpm;
        *q  += 1;
    }
}

/* A batched tile send with one slot (an explicit destination, or no
 * partition key): the tuples keep the tile's order, so the messages are the
 * tile itself cut every `per` tuples, each behind a header, and the block
 * copies it as 8-byte words, consecutive threads on consecutive words (a
 * warp's store is 256 bytes side by side), MGI_DEV_TILE_WORDS words a
 * thread in flight. The first of them are loaded before the reservation,
 * so they are under way while thread 0 reserves. A thread per tuple (the
 * other batched path) stores a 64-byte tuple as 8 words 64 bytes apart
 * from its neighbours', each 32-byte sector in four stores, and from the
 * tile one load after the other. Tuples 8-byte aligned, ts a multiple of
 * 8; the whole tile in one call when a stage segment has room. */
__device__ static inline unsigned mgi_dev_send_tile_one(const mgi_dev_ch_t *h,
                                                        const void *tuples,
                                                        unsigned n, int dst)
{
    constexpr unsigned K = MGI_DEV_TILE_WORDS;
    __shared__ mgi_seg_hdr_t *s_seg;
    __shared__ uint32_t s_off, s_pos;
    __shared__ int s_ok;
    __shared__ mgi_dev_tile_at_t s_at1;
    const unsigned ts     = h->tuple_size;
    const unsigned per    = min(h->tile_batch, MGI_MSG_MAX_LEN) / ts;
    const unsigned tid    = threadIdx.x, nt = blockDim.x;
    const uint32_t wpm    = per * (ts / 8); /* payload words of a message */
    const uint16_t route  = mgi_dev_tile_route(h, 0, dst);
    mgi_ring_t *const r   = mgi_dev_stage_of(h,
                                             mgi_dev_tile_group(h, 0, dst, 1));
    const uint64_t *const src = (const uint64_t*)tuples;
    uint64_t v[K];
    uint64_t *out, hw;
    mgi_msg_hdr_t hdr;
    uint32_t nw, w, m, total = 0, mkey = 0, mark = 0, q, rm, sq, sr;
    unsigned k;

    n = min(n, mgi_dev_tile_room(r, &s_at1, ts, per, 1));
    if (n == 0) {
        return 0;                           /* a tuple exceeds a segment */
    }
    nw = n * (ts / 8);
#pragma unroll
    for (k = 0; k < K; ++k) {
        w    = tid + k * nt;
        v[k] = (w < nw) ? src[w] : 0;
    }
    __syncthreads();                        /* s_at1 read by all */
    if (tid == 0) {
        total = mgi_dev_batch_bytes(n, per, ts);
        mkey  = mgi_dev_msg_key(h, route);
        s_ok  = mgi_dev_tile_reserve(r, total, mkey, &s_at1, &s_seg, &s_off,
                                     &s_pos, &mark);
    }
    __syncthreads();
    if (!s_ok) {
        return 0;
    }
    /* message m at word m (wpm + 1); tile word w after m + 1 headers:
     * out[w + q + 1] with q = w / wpm. A thread's words are tid, tid + nt,
     * ... in that order, so q is carried from one to the next (nt = sq *
     * wpm + sr) instead of divided out: a division a word made the copy
     * wait on the ALUs (8 warps a block of 256 hide little) */
    out     = (uint64_t*)(mgi_seg_payload(s_seg) + s_off);
    hdr.ch  = h->ch;
    hdr.dst = route;
    hdr.src = h->self;
    for (m = tid; m * per < n; m += nt) {
        hdr.len = (uint16_t)(min(per, n - m * per) * ts);
        memcpy(&hw, &hdr, sizeof(hw));
        out[(size_t)m * (wpm + 1)] = hw;
    }
    q  = tid / wpm;
    rm = tid - q * wpm;
    sq = nt / wpm;
    sr = nt - sq * wpm;
#pragma unroll
    for (k = 0; k < K; ++k) {
        w = tid + k * nt;
        if (w < nw) {
            out[w + q + 1] = v[k];
        }
        mgi_dev_tile_carry(&q, &rm, sq, sr, wpm);
    }
    for (w = tid + K * nt; w < nw; w += K * nt) {
#pragma unroll
        for (k = 0; k < K; ++k) {
            v[k] = (w + k * nt < nw) ? src[w + k * nt] : 0;
        }
#pragma unroll
        for (k = 0; k < K; ++k) {
            if (w + k * nt < nw) {
                out[w + k * nt + q + 1] = v[k];
            }
            mgi_dev_tile_carry(&q, &rm, sq, sr, wpm);
        }
    }
    __syncthreads();
    if (tid == 0) {
        mgi_dev_tile_commit(r, s_seg, s_off, total, s_pos, mark, mkey);
    }
    return n;
}

/* The batched tile send for the tile's tuples: one destination as the
 * tile itself in words (mgi_dev_send_tile_one) where the tuples are whole
 * 8-byte words, 8-byte aligned; several from registers where they are 8,
 * 16, 32 or 64 bytes with a key in one word and the registers hold the
 * whole tile; else read in each pass. */
__device__ static inline unsigned mgi_dev_send_tile_batch(
        const mgi_dev_ch_t *h, const void *tuples, unsigned n, int dst,
        uint32_t *counts)
{
    const unsigned ts = h->tuple_size;
    const int words   = ((((uintptr_t)tuples) % 8) == 0) && (ts != 0) &&
                        ((ts % 8) == 0);
    const int reg     = words && mgi_dev_tile_reg_words(ts / 8) &&
                        (n <= (8 * MGI_DEV_TILE_WORDS / ts) * blockDim.x) &&
                        mgi_dev_tile_key_word(h);

    if (words && (mgi_dev_tile_nslot(h, dst) == 1)) {
        return mgi_dev_send_tile_one(h, tuples, n, dst);
    }
    if (reg && (ts == 16)) {
        return mgi_dev_send_tile_batch_w<2>(h, tuples, n, dst,
                                            counts);
    } else if (reg && (ts == 8)) {
        return mgi_dev_send_tile_batch_w<1>(h, tuples, n, dst,
                                            counts);
    } else if (reg && (ts == 32)) {
        return mgi_dev_send_tile_batch_w<4>(h, tuples, n, dst,
                                            counts);
    } else if (reg && (ts == 64)) {
        return mgi_dev_send_tile_batch_w<8>(h, tuples, n, dst,
                                            counts);
    }
    return mgi_dev_send_tile_batch_w<0>(h, tuples, n, dst,
                                            counts);
}

/* Block: counts[i] += the first n tuples of the tile (tuples of the
 * channel's schema size) whose partition key chooses destination number
 * i; nothing when counts is NULL. For the tile sends that do not count
 * their tuples anyway (the batched ones do, mgi_dev_send_tile_batch_w). */
__device__ static inline void mgi_dev_tile_count(const mgi_dev_ch_t *h,
                                                 const char *t, unsigned n,
                                                 uint32_t *counts)
{
    const unsigned mask = mgi_dev_block_warp_mask();
    unsigned base, i;

    for (base = 0; (counts != NULL) && (base < n); base += blockDim.x) {
        i = base + threadIdx.x;
        mgi_dev_warp_take(mask, (i < n) ?
                                mgi_dev_key_index(h, t + (size_t)i *
                                                     h->tuple_size) :
                                MGI_DEV_NO_SLOT, counts);
    }
}

/* Block level, a tile: the block's threads together send tuples[0 .. n),
 * n tuples of the channel's schema size side by side in global or shared
 * memory (every thread passes the same arguments), to dst, or by the
 * partition key with MGI_DEV_DST_AUTO. Returns how many tuples it took,
 * from the front of the tile, the same in every thread: n, fewer when the
 * rest of the block's stage segment holds fewer (the next call starts a
 * segment), or 0 when the stage ring has no room (or the channel has no
 * schema, or a tuple is larger than a segment). Tuples of one destination
 * keep their order (within a batched call, see below, only from call to
 * call).
 *
 * Where mgi_dev_send_block reserves, marks and commits for every
 * blockDim.x tuples, a tile does so once for up to a stage segment: the
 * block's send is then bound by its writes. A block sizes its reservation
 * to the room it left in its segment, so tiles do not end a segment with
 * padding (the block is its stage ring's only producer; the room is a
 * hint, any value is safe). With MGI_DEV_TILE_BATCH or MGI_DEV_MSG_BATCH
 * (up to MGI_DEV_TILE_DSTS destinations) a tile's tuples of one
 * destination go as batched messages (mgi_dev_send_tile_batch, with stage
 * groups too; their order within a call is not kept); else, with stage
 * groups, the tile goes as mgi_dev_send_block calls of blockDim.x
 * tuples.
 *
 * counts (optional; shared or global memory, h->ndst counters): where the
 * partition key routes the tuples (dst MGI_DEV_DST_AUTO, a key in the
 * schema), counts[i] grows by the tuples taken for the channel's
 * destination number i (h->dst[i]); a batched send counts them anyway, so
 * a caller that keeps per-destination totals need not read the keys
 * again. Untouched with an explicit destination or without a key: the
 * return value says it all then. */
__device__ static inline unsigned mgi_dev_send_block_tile(
        const mgi_dev_ch_t *h, const void *tuples, unsigned n, int dst,
        uint32_t *counts = NULL)
{
    __shared__ uint32_t s_wcnt[32];     /* the warp's lanes with tuples */
    __shared__ uint32_t s_wkey[32];     /* mark key per warp */
    __shared__ mgi_seg_hdr_t *s_seg;
    __shared__ uint32_t s_off, s_pos;
    __shared__ int s_ok;
    __shared__ mgi_dev_tile_at_t s_at;  /* where the block reserved last */
    const unsigned tsz  = h->tuple_size;
    const unsigned tid  = threadIdx.x;
    const unsigned lane = tid % 32, warp = tid / 32;
    const unsigned mask = mgi_dev_block_warp_mask();
    const char *const t = (const char*)tuples;
    mgi_ring_t *const r = mgi_dev_stage(h);
    uint32_t sz, room, key = 0, k, total;
    unsigned i, done, c;
    uint16_t route = MGI_EP_ID_ALL;
    int has = 0, ret;

    if ((n == 0) || (tsz == 0)) {
        return 0;
    }
    if (dst == MGI_DEV_DST_MAP) {
        __trap();   /* a function per tuple: mgi_dev_send_block_tile_map */
    }
    if ((dst >= 0) || (h->part_key < 0)) {
        counts = NULL;      /* the key does not route: nothing to count */
    }
    if (h->direct) {
        return mgi_dev_dring_tile<0>(h, tuples, n, dst, counts);
    }
    if (mgi_dev_tile_batched(h, dst)) {
        if ((counts == NULL) || (h->ndst > 1)) {
            return mgi_dev_send_tile_batch(h, tuples, n, dst, counts);
        }
        /* one destination number: it takes them all */
        c = mgi_dev_send_tile_batch(h, tuples, n, dst, NULL);
        if ((tid == 0) && (c > 0)) {
            atomicAdd(&counts[0], c);
        }
        return c;
    }
    if ((mgi_dev_ngroups(h) > 1) || (h->msg_batch >= 2 * tsz) ||
        (tsz > MGI_MSG_MAX_LEN)) {
        /* as block sends of a tuple per thread, each all or nothing */
        for (done = 0; done < n; done += c) {
            c   = min(blockDim.x, n - done);
            i   = done + ((tid < c) ? tid : 0);
            ret = mgi_dev_send_block(h, t + (size_t)i * tsz,
                                     (tid < c) ? tsz : 0, dst);
            if (!__syncthreads_or(ret > 0)) {
                break;
            }
        }
        mgi_dev_tile_count(h, t, done, counts);
        return done;
    }
    /* what surely fits the block's last segment, else a fresh one */
    sz   = mgi_msg_size(tsz);
    room = mgi_dev_tile_avail(r, &s_at) / sz;
    n    = min(n, (room > 0) ? room : mgi_ring_cap(r) / sz);
    if (n == 0) {
        return 0;                           /* a tuple exceeds a segment */
    }
    total = n * sz;
    __syncthreads();                        /* s_at read by all */
    if (tid == 0) {
        s_ok = mgi_dev_tile_reserve_at(r, total, &s_at, &s_seg, &s_off,
                                       &s_pos);
    }
    if (tid < n) {
        /* the first tuple's route while the reservation is under way */
        route = mgi_dev_route(h, t + (size_t)tid * tsz, dst);
    }
    __syncthreads();
    if (!s_ok) {
        return 0;
    }
    for (i = tid; i < n; i += blockDim.x) {
        if (i != tid) {
            route = mgi_dev_route(h, t + (size_t)i * tsz, dst);
        }
        k   = mgi_dev_msg_key(h, route);
        key = (!has || (key == k)) ? k : MGI_SEG_MIXED;
        has = 1;
        mgi_dev_write_msg(mgi_seg_payload(s_seg) + s_off + (size_t)i * sz,
                          h, route, t + (size_t)i * tsz, tsz);
    }
    key = mgi_dev_warp_key(mask, key, has);
    has = __popc(__ballot_sync(mask, has)); /* a vote of every lane */
    if (lane == 0) {
        s_wcnt[warp] = (uint32_t)has;
        s_wkey[warp] = key;
    }
    __syncthreads();
    if (tid == 0) {
        /* one (channel, destination) for the whole reservation? */
        mgi_seg_mark(s_seg, mgi_dev_block_key(s_wcnt, s_wkey));
        /* the commit is a release at GPU scope, as in mgi_dev_send_block:
         * the writes this thread saw through the barrier, and the mark,
         * are ordered before the count */
        mgi_ring_append_commit(r, s_seg, s_off, total, s_pos);
    }
    mgi_dev_tile_count(h, t, n, counts);
    return n;
}

#define MGI_DEV_TILE_ANY  0u  /* mgi_dev_send_block_tile_of: either path */
#define MGI_DEV_TILE_ONE  1u  /*   one destination a tile */
#define MGI_DEV_TILE_MANY 2u  /*   tiles the key spreads over several */

/* Host or device: can mgi_dev_send_block_tile_of<ts, slots> send the tiles
 * of channel handle h to dst (an explicit destination, or
 * MGI_DEV_DST_AUTO)? The channel's schema size is ts, a multiple of 8;
 * its tiles are batched (MGI_DEV_TILE_BATCH, or MGI_DEV_MSG_BATCH, from
 * 2 ts up to MGI_MSG_MAX_LEN); a tile goes to one destination
 * (MGI_DEV_TILE_ONE: an explicit one, no partition key, or a channel of
 * one destination) or, for MGI_DEV_TILE_MANY, the key spreads it over up
 * to MGI_DEV_TILE_DSTS, tuples of 8, 16, 32 or 64 bytes with the key
 * within one 8-byte word; MGI_DEV_TILE_ANY: either. With dst
 * MGI_DEV_DST_MAP, can mgi_dev_send_block_tile_map<ts> send them (as
 * MGI_DEV_TILE_MANY, a key not needed; more than one destination)? A
 * kernel picks its send with this on the host: the typed send has no
 * other path. */
__host__ __device__ static inline int mgi_dev_tile_of_fits(
        const mgi_dev_ch_t *h, unsigned ts, unsigned slots, int dst)
{
    const unsigned nslot = mgi_dev_tile_nslot(h, dst);
    const unsigned w     = ts / 8;
    const int many       = (nslot > 1) && mgi_dev_tile_reg_words(w) &&
                           ((dst == MGI_DEV_DST_MAP) ||
                            mgi_dev_tile_key_word(h));

    if ((ts == 0) || ((ts % 8) != 0) || (h->tuple_size != ts) ||
        !(h->direct ? (nslot <= MGI_DEV_TILE_DSTS) :
                      mgi_dev_tile_batched(h, dst))) {
        return 0;
    }
    return (slots == MGI_DEV_TILE_ONE)  ? (nslot == 1) :
           (slots == MGI_DEV_TILE_MANY) ? many : ((nslot == 1) || many);
}

/* Block level, a tile of tuples of TS bytes (8-byte aligned), TS the
 * channel's schema size as the caller's kernel knows it: as
 * mgi_dev_send_block_tile (same arguments, same answers; a tile of
 * several destinations takes at most MGI_DEV_TILE_WORDS words a thread a
 * call), with the batched tile path for TS and SLOTS alone in the
 * caller's code: the one-destination copy (mgi_dev_send_tile_one,
 * MGI_DEV_TILE_ONE), the batch of several (mgi_dev_send_tile_batch_w for
 * TS, MGI_DEV_TILE_MANY), or both (MGI_DEV_TILE_ANY). Only for channels
 * that mgi_dev_tile_of_fits(h, TS, SLOTS, dst) accepts: the kernel traps
 * on any other, and on unaligned tuples; the host checks first and
 * launches a kernel with mgi_dev_send_block_tile where it does not fit.
 * mgi_dev_send_block_tile inlines every path for every size, and the
 * caller's kernel then runs from that much code: the workloads' shuffle
 * kernels had ~0.97 MB of SASS and 2.7 KB of spills a thread, and on one
 * H100 the one-GPU Exchange sent at 16.3 k cycles a 44 KB call and moved
 * 200-205 GB/s; with the one path (0.26-0.39 MB), 9.2 k and 256-262
 * GB/s. Keeping the generic send as a call out of line for what the typed
 * one does not serve still cost most of that (217-231 GB/s): the call
 * alone made the kernel's frame and spills. */
template <unsigned TS, unsigned SLOTS = MGI_DEV_TILE_ANY>
__device__ static inline unsigned mgi_dev_send_block_tile_of(
        const mgi_dev_ch_t *h, const void *tuples, unsigned n, int dst,
        uint32_t *counts = NULL)
{
    constexpr unsigned W = TS / 8;
    /* tiles of several destinations: a batch from registers, for these
     * sizes only (mgi_dev_tile_of_fits refuses the others) */
    constexpr bool REG = mgi_dev_tile_reg_words(W);
    static_assert((TS > 0) && (TS % 8 == 0),
                  "mgi_dev_send_block_tile_of: tuples of whole 8-byte words "
                  "(else call mgi_dev_send_block_tile)");
    static_assert(SLOTS <= MGI_DEV_TILE_MANY,
                  "mgi_dev_send_block_tile_of: SLOTS is MGI_DEV_TILE_ANY, "
                  "_ONE or _MANY");
    const unsigned nslot = mgi_dev_tile_nslot(h, dst);
    unsigned c;

    if (n == 0) {
        return 0;
    }
    if (!mgi_dev_tile_of_fits(h, TS, SLOTS, dst) ||
        ((((uintptr_t)tuples) % 8) != 0) || (dst == MGI_DEV_DST_MAP)) {
        __trap();   /* the host should have chosen the generic send (or
                     * mgi_dev_send_block_tile_map) */
    }
    if ((dst >= 0) || (h->part_key < 0)) {
        counts = NULL;      /* the key does not route: nothing to count */
    }
    if (h->direct) {
        return mgi_dev_dring_tile<REG ? W : 0>(h, tuples, n, dst, counts);
    }
    if ((SLOTS != MGI_DEV_TILE_MANY) && (nslot == 1)) {
        c = mgi_dev_send_tile_one(h, tuples, n, dst);
        if ((counts != NULL) && (threadIdx.x == 0) && (c > 0)) {
            atomicAdd(&counts[0], c);
        }
        return c;
    }
    if ((SLOTS != MGI_DEV_TILE_ONE) && REG) {
        /* the whole tile in registers: what they hold now, the rest next */
        n = min(n, (MGI_DEV_TILE_WORDS / (REG ? W : 1)) * blockDim.x);
        return mgi_dev_send_tile_batch_w<REG ? W : 1>(h, tuples, n, dst,
                                                      counts);
    }
    return 0;   /* not reached: mgi_dev_tile_of_fits refused the rest */
}

/* Block level, a tile of tuples of TS bytes (8, 16, 32 or 64; 8-byte
 * aligned; TS the channel's schema size) whose destinations the caller's
 * function names, one for each tuple: dst_of(const void *tuple) returns a
 * destination number of the channel (an index into the destinations it
 * was created with, as for counts), so a tile's tuples go where a rule of
 * the program's says, not only by key % |destinations| (the paper's
 * explicit destination, per tuple in one call). Otherwise as
 * mgi_dev_send_block_tile_of<TS, MGI_DEV_TILE_MANY> (same answers: the
 * tuples taken from the front, 0 when a stage ring has no room; at most
 * MGI_DEV_TILE_WORDS words a thread a call; counts[i], when given, grows
 * by those taken for destination number i; tuples of one destination
 * keep their order from call to call).
 *
 * dst_of runs on the tuple as loaded into registers: it should read the
 * tuple's words at constant places (((const uint64_t*)t)[0], a field of
 * the caller's struct), which keeps them there. A number outside the
 * channel's destinations traps. Only for channels that
 * mgi_dev_tile_of_fits(h, TS, MGI_DEV_TILE_MANY, MGI_DEV_DST_MAP) accepts
 * (batched tiles, 2 to MGI_DEV_TILE_DSTS destinations): the kernel traps
 * on any other; the host checks first. */
template <unsigned TS, typename F>
__device__ static inline unsigned mgi_dev_send_block_tile_map(
        const mgi_dev_ch_t *h, const void *tuples, unsigned n, F dst_of,
        uint32_t *counts = NULL)
{
    constexpr unsigned W = TS / 8;
    static_assert((TS > 0) && (TS % 8 == 0) && mgi_dev_tile_reg_words(W),
                  "mgi_dev_send_block_tile_map: tuples of 8, 16, 32 or 64 "
                  "bytes (up to MGI_DEV_TILE_WORDS words)");

    if (n == 0) {
        return 0;
    }
    if (!mgi_dev_tile_of_fits(h, TS, MGI_DEV_TILE_MANY, MGI_DEV_DST_MAP) ||
        ((((uintptr_t)tuples) % 8) != 0)) {
        __trap();   /* the host should have checked mgi_dev_tile_of_fits */
    }
    if (h->direct) {
        return mgi_dev_dring_tile<W, F>(h, tuples, n, MGI_DEV_DST_MAP,
                                        counts, dst_of);
    }
    n = min(n, (MGI_DEV_TILE_WORDS / W) * blockDim.x);
    return mgi_dev_send_tile_batch_w<W, F>(h, tuples, n, MGI_DEV_DST_MAP,
                                           counts, dst_of);
}

#endif

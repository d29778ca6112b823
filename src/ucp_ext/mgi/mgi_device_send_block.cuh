/**
 * MGI device API: the block-level send through stage rings
 * (mgi_dev_send_block): tuples batched per destination, one
 * reservation sized from a count, or one reservation per stage group.
 *
 * A part of mgi/mgi_device.cuh, which includes its parts in order (each
 * uses those before it); kernels include <mgi/mgi_device.cuh>.
 */
#ifndef MGI_DEVICE_SEND_BLOCK_CUH_
#define MGI_DEVICE_SEND_BLOCK_CUH_

#ifndef MGI_DEVICE_CUH_
#  error "a part of the device API: include <mgi/mgi_device.cuh>"
#endif

/* Block level, a channel with a schema, every thread passing one tuple or
 * none: the tuples of one destination go as batched messages of up to
 * h->msg_batch bytes of whole tuples (paper §5.3: a message's payload
 * batches tuples of one next hop), so sorters and receivers handle a
 * header per batch instead of one per tuple. Returns what
 * mgi_dev_send_block returns, or -1 (the same in every thread) when the
 * block's tuples have more destinations than MGI_DEV_GROUPS. */
__device__ static inline int mgi_dev_send_block_batch(const mgi_dev_ch_t *h,
                                                      const void *tuple,
                                                      unsigned len, int dst)
{
    __shared__ uint32_t s_key[MGI_DEV_GROUPS];  /* route + 1; 0: free */
    __shared__ uint32_t s_cnt[MGI_DEV_GROUPS];  /* tuples per route */
    __shared__ uint32_t s_at[MGI_DEV_GROUPS];   /* its first message */
    __shared__ uint8_t s_list[MGI_DEV_GROUPS];  /* slots in use */
    __shared__ unsigned s_ngroups, s_total;
    __shared__ int s_ok, s_over;
    __shared__ mgi_seg_hdr_t *s_seg;
    __shared__ uint32_t s_off, s_pos;
    const unsigned ts   = h->tuple_size;
    const unsigned per  = max(h->msg_batch / ts, 1u);
    const unsigned lane = threadIdx.x % 32;
    const unsigned mask = mgi_dev_block_warp_mask();
    unsigned grp, lead, slot = MGI_DEV_NO_SLOT, rank, i, k, g;
    uint16_t route = MGI_EP_ID_ALL;
    uint32_t old;

    for (i = threadIdx.x; i < MGI_DEV_GROUPS; i += blockDim.x) {
        s_key[i] = 0;
        s_cnt[i] = 0;
    }
    if (threadIdx.x == 0) {
        s_ngroups = 0;
        s_over    = 0;
    }
    __syncthreads();
    if (len > 0) {
        route = mgi_dev_route(h, tuple, dst);
    }
    /* the lanes of one route: their leader takes a slot and their places */
    grp  = __match_any_sync(mask, (len > 0) ? (uint32_t)route : 0x10000u);
    lead = __ffs(grp) - 1;
    if ((len > 0) && (lane == lead)) {
        slot = ((uint32_t)route * 2654435761u) % MGI_DEV_GROUPS;
        for (k = 0; k < MGI_DEV_GROUPS; ++k) {
            old = atomicCAS(&s_key[slot], 0u, (uint32_t)route + 1);
            if (old == 0) {
                s_list[atomicAdd(&s_ngroups, 1u)] = (uint8_t)slot;
                break;
            }
            if (old == (uint32_t)route + 1) {
                break;
            }
            slot = (slot + 1) % MGI_DEV_GROUPS;
        }
        if (k == MGI_DEV_GROUPS) {
            s_over = 1;
            slot   = MGI_DEV_NO_SLOT;
        }
    }
    slot = __shfl_sync(mask, slot, lead);
    rank = mgi_dev_warp_take(mask, slot, s_cnt);
    __syncthreads();
    if (s_over) {
        return -1;
    }
    if (threadIdx.x == 0) {
        s_total = 0;
        for (g = 0; g < s_ngroups; ++g) {
            i        = s_list[g];
            s_at[i]  = s_total;
            s_total += mgi_dev_batch_bytes(s_cnt[i], per, ts);
        }
        /* a reservation larger than a segment would never fit: refuse it
         * (MGI_SEG_SIZE / MGI_TUPLE_SIZE size segments for the block) */
        s_ok = (s_total > 0) &&
               (s_total <= mgi_ring_cap(mgi_dev_stage(h))) &&
               (mgi_ring_append_reserve(mgi_dev_stage(h), s_total, &s_seg,
                                        &s_off, &s_pos) == MGI_RING_OK);
    }
    __syncthreads();
    if (!s_ok) {
        return 0;
    }
    if (len > 0) {
        mgi_dev_batch_put(mgi_seg_payload(s_seg) + s_off + s_at[slot], h,
                          route, rank, s_cnt[slot], per, tuple);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        /* one (channel, destination) for the whole reservation? */
        route = (uint16_t)(s_key[s_list[0]] - 1);
        mgi_seg_mark(s_seg, (s_ngroups == 1) ? mgi_dev_msg_key(h, route) :
                                               MGI_SEG_MIXED);
        /* the commit is a release at GPU scope (the sorter is on this
         * GPU): the writes this thread saw through the barrier, and the
         * mark, are ordered before the count */
        mgi_ring_append_commit(mgi_dev_stage(h), s_seg, s_off, s_total,
                               s_pos);
    }
    return (int)len;
}

/* mgi_dev_send_block of a block whose tuples all have the schema's size
 * (or none), with one stage group: the reservation's size is known from
 * a count, so the reserving thread's round trip overlaps the other
 * threads' routes and ranks instead of following them. */
__device__ static inline int mgi_dev_send_block_uni(const mgi_dev_ch_t *h,
                                                    const void *tuple,
                                                    unsigned len, int dst)
{
    __shared__ uint32_t s_wcnt[32];     /* tuples per warp */
    __shared__ uint32_t s_wkey[32];     /* mark key per warp */
    __shared__ mgi_seg_hdr_t *s_seg;
    __shared__ uint32_t s_off, s_pos;
    __shared__ int s_ok;
    /* as mgi_dev_send_block's: a hint only, uninitialized at the start */
    __shared__ mgi_ring_hint_t s_hint;
    const unsigned tid  = threadIdx.x;
    const unsigned lane = tid % 32, warp = tid / 32;
    const unsigned mask = mgi_dev_block_warp_mask();
    const unsigned sz   = mgi_msg_size(h->tuple_size);
    mgi_ring_t *const r = mgi_dev_stage(h);
    uint16_t route = MGI_EP_ID_ALL;
    uint32_t key, old = 0, total, bits, base, w;
    unsigned g;

    total = sz * (uint32_t)__syncthreads_count(len > 0);
    if (total == 0) {
        return 0;                           /* no tuple in the block */
    }
    if (tid == 0) {
        /* a reservation larger than a segment would never fit: refuse
         * it (MGI_SEG_SIZE / MGI_TUPLE_SIZE size segments for the block) */
        s_ok = (total <= mgi_ring_cap(r)) &&
               (mgi_ring_append_reserve_hint(r, total, &s_hint, &s_seg,
                                             &s_off, &s_pos) == MGI_RING_OK);
    }
    if (len > 0) {
        route = mgi_dev_route_g(h, tuple, dst, &g);
    }
    bits = __ballot_sync(mask, len > 0);
    key  = mgi_dev_warp_key(mask, mgi_dev_msg_key(h, route), len > 0);
    if (lane == 0) {
        s_wcnt[warp] = __popc(bits);
        s_wkey[warp] = key;
    }
    __syncthreads();
    if (!s_ok) {
        return 0;
    }
    if (tid == 0) {
        /* one (channel, destination) for the whole reservation? The CAS
         * goes out before this thread's write, its answer is read after */
        key = mgi_dev_block_key(s_wcnt, s_wkey);
        old = mgi_seg_mark_begin(s_seg, key);
    }
    if (len > 0) {
        for (w = 0, base = 0; w < warp; ++w) {
            base += s_wcnt[w];
        }
        base += __popc(bits & ((1u << lane) - 1));
        mgi_dev_write_msg(mgi_seg_payload(s_seg) + s_off + base * sz, h,
                          route, tuple, len);
    }
    if (tid == 0) {
        mgi_seg_mark_end(s_seg, old, key);
    }
    __syncthreads();
    if (tid == 0) {
        /* the commit is a release at GPU scope, as in mgi_dev_send_block */
        mgi_ring_append_commit(r, s_seg, s_off, total, s_pos);
    }
    return (int)len;
}

/* Block level: every thread passes its tuple (len 0: nothing). On a
 * channel with a schema whose every tuple here has tuple_size bytes: with
 * MGI_DEV_MSG_BATCH (msg_batch) they are batched per destination
 * (mgi_dev_send_block_batch, in stage group 0); else, with one stage
 * group, one reservation sized from a count (mgi_dev_send_block_uni).
 * Else each stage group's tuples take one reservation in the group's
 * ring, made by one thread each; all or nothing: when one group's ring
 * has no room, no tuple is taken (a reservation made is given back as
 * padding), and every thread gets 0. */
__device__ static inline int mgi_dev_send_block(const mgi_dev_ch_t *h,
                                                const void *tuple,
                                                unsigned len, int dst)
{
    __shared__ unsigned s_total[MGI_STAGE_GROUPS_MAX];
    __shared__ mgi_seg_hdr_t *s_seg[MGI_STAGE_GROUPS_MAX];
    __shared__ uint32_t s_off[MGI_STAGE_GROUPS_MAX];
    __shared__ uint32_t s_pos[MGI_STAGE_GROUPS_MAX];
    __shared__ uint32_t s_klo[MGI_STAGE_GROUPS_MAX];
    __shared__ uint32_t s_khi[MGI_STAGE_GROUPS_MAX];
    /* where the block reserved last in each ring, kept between calls: a
     * hint only (mgi_ring_append_reserve_hint), uninitialized at the
     * kernel's start */
    __shared__ mgi_ring_hint_t s_hint[MGI_STAGE_GROUPS_MAX];
    /* the block's last send found a ring full: look for room in every
     * ring before reserving in any (a hint too: any value is safe) */
    __shared__ int s_careful;
    const unsigned ng   = mgi_dev_ngroups(h);
    const unsigned tid  = threadIdx.x;
    const unsigned lane = tid % 32;
    const unsigned mask = mgi_dev_block_warp_mask();
    const unsigned last = 31 - __clz(mask);
    unsigned sz = (len > 0) ? mgi_msg_size(len) : 0;
    unsigned my_off = 0, incl, v, base, g = 0, j, mine, nz;
    uint32_t key, mkey, old = 0;
    uint16_t route;
    mgi_ring_t *r = NULL;
    int ret, fail = 0, res = 0, careful, uni;

    if (h->direct) {
        return mgi_dev_dring_send_block(h, tuple, len, dst);
    }
    uni = (h->tuple_size != 0) &&
          __syncthreads_and((len == 0) || (len == h->tuple_size));
    if (uni && (h->msg_batch >= 2 * h->tuple_size)) {
        ret = mgi_dev_send_block_batch(h, tuple, len, dst);
        if (ret >= 0) {
            return ret;
        }
    }
    if (uni && (ng == 1) && (h->tuple_size <= MGI_MSG_MAX_LEN)) {
        return mgi_dev_send_block_uni(h, tuple, len, dst);
    }
    if (tid < ng) {
        s_total[tid] = 0;
        s_klo[tid]   = 0xffffffffu;
        s_khi[tid]   = 0;
    }
    __syncthreads();
    /* the route and each reservation's mark key before the reservations:
     * the reserving threads mark while the others write, not after a
     * barrier of their own */
    route = (sz > 0) ? mgi_dev_route_g(h, tuple, dst, &g) : MGI_EP_ID_ALL;
    mkey  = mgi_dev_msg_key(h, route);
    for (j = 0; j < ng; ++j) {
        /* the warp's messages of group j side by side: a prefix sum, one
         * shared atomic per warp (one per thread serialized 256 of them
         * on one word) */
        mine = (sz > 0) && (g == j);
        if (!__any_sync(mask, mine)) {
            continue;                       /* none in this warp */
        }
        /* (channel 0, endpoint 0) is key 0 too: no test for "none" */
        key  = mgi_dev_warp_key(mask, mkey, mine);
        incl = mgi_dev_warp_incl(mask, mine ? sz : 0);
        v    = __shfl_sync(mask, incl, last);   /* the warp's bytes */
        base = 0;
        if (lane == 0) {
            atomicMin(&s_klo[j], key);
            atomicMax(&s_khi[j], key);
            base = atomicAdd(&s_total[j], v);
        }
        base = __shfl_sync(mask, base, 0);
        if (mine) {
            my_off = base + incl - sz;
        }
    }
    __syncthreads();
    for (j = 0, nz = 0; j < ng; ++j) {
        nz += (s_total[j] > 0);
    }
    if (nz == 0) {
        return 0;                           /* no tuple in the block */
    }
    /* thread j reserves group j's bytes; a reservation larger than a
     * segment would never fit: refuse it (MGI_SEG_SIZE / MGI_TUPLE_SIZE
     * size segments for the block). A reservation that cannot be used
     * (another group's ring was full) becomes padding: after a send that
     * found a ring full, several groups look for room in every ring
     * first (the look costs a round trip, so not on every send). */
    careful = (nz > 1) && s_careful;
    if ((tid < ng) && (s_total[tid] > 0)) {
        r    = mgi_dev_stage_of(h, tid);
        fail = (s_total[tid] > mgi_ring_cap(r)) ||
               (careful && !mgi_ring_append_room(r, s_total[tid]));
    }
    if (careful && __syncthreads_or(fail)) {
        return 0;
    }
    if (!fail && (r != NULL)) {
        res  = (mgi_ring_append_reserve_hint(r, s_total[tid], &s_hint[tid],
                                             &s_seg[tid], &s_off[tid],
                                             &s_pos[tid]) == MGI_RING_OK);
        fail = !res;
    }
    if (__syncthreads_or(fail)) {
        if (res) {
            mgi_ring_append_cancel(r, s_seg[tid], s_off[tid], s_total[tid],
                                   s_pos[tid]);
        }
        if (tid == 0) {
            s_careful = 1;
        }
        return 0;
    }
    if ((tid == 0) && careful) {
        s_careful = 0;
    }
    if ((tid < ng) && (s_total[tid] > 0)) {
        /* one (channel, destination) for the whole reservation? The CAS
         * goes out before this thread's writes, its answer is read after */
        key = (s_klo[tid] == s_khi[tid]) ? s_klo[tid] : MGI_SEG_MIXED;
        old = mgi_seg_mark_begin(s_seg[tid], key);
    }
    if (sz > 0) {
        mgi_dev_write_msg(mgi_seg_payload(s_seg[g]) + s_off[g] + my_off, h,
                          route, tuple, len);
    }
    if ((tid < ng) && (s_total[tid] > 0)) {
        mgi_seg_mark_end(s_seg[tid], old, key);
    }
    __syncthreads();
    if ((tid < ng) && (s_total[tid] > 0)) {
        /* the commit is a release at GPU scope (the sorter is on this
         * GPU): the writes this thread saw through the barrier, and the
         * mark, are ordered before the count */
        mgi_ring_append_commit(r, s_seg[tid], s_off[tid], s_total[tid],
                               s_pos[tid]);
    }
    return (int)len;
}

#endif

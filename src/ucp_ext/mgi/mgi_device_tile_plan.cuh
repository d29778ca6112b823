/**
 * MGI device API: what a tile send settles before it writes: the
 * tile's slots, routes and stage groups, how many tuples fit, its
 * reservations in the stage rings and the layout of a batched tile's
 * messages there.
 *
 * A part of mgi/mgi_device.cuh, which includes its parts in order (each
 * uses those before it); kernels include <mgi/mgi_device.cuh>.
 */
#ifndef MGI_DEVICE_TILE_PLAN_CUH_
#define MGI_DEVICE_TILE_PLAN_CUH_

#ifndef MGI_DEVICE_CUH_
#  error "a part of the device API: include <mgi/mgi_device.cuh>"
#endif

/* A batched tile send's slots: the channel's destinations when the key
 * or the caller's function (MGI_DEV_DST_MAP) routes, else one (an
 * explicit destination or a broadcast). Host or device, as the two below
 * (mgi_dev_tile_of_fits asks them on the host). */
__host__ __device__ static inline unsigned mgi_dev_tile_nslot(
        const mgi_dev_ch_t *h, int dst)
{
    return (dst == MGI_DEV_DST_MAP) ? h->ndst :
           ((dst >= 0) || (h->part_key < 0)) ? 1 : h->ndst;
}

/* Are the channel's tiles to dst batched (MGI_DEV_TILE_BATCH, or
 * MGI_DEV_MSG_BATCH, from two tuples up to MGI_MSG_MAX_LEN, for up to
 * MGI_DEV_TILE_DSTS slots)? Else a tile goes as block sends. */
__host__ __device__ static inline int mgi_dev_tile_batched(
        const mgi_dev_ch_t *h, int dst)
{
    return (h->tuple_size != 0) && (h->tile_batch >= 2 * h->tuple_size) &&
           (h->tile_batch <= MGI_MSG_MAX_LEN) &&
           (mgi_dev_tile_nslot(h, dst) <= MGI_DEV_TILE_DSTS);
}

/* Does the partition key lie within one 8-byte word of a tuple (the
 * batches from registers read it there)? */
__host__ __device__ static inline int mgi_dev_tile_key_word(
        const mgi_dev_ch_t *h)
{
    return (h->key_off % 8) + h->key_size <= 8;
}

/* The slot of a tuple (its destination number, or 0) and the route of a
 * slot. */
__device__ static inline uint32_t mgi_dev_tile_slot(const mgi_dev_ch_t *h,
                                                    const void *tuple,
                                                    int dst)
{
    return (mgi_dev_tile_nslot(h, dst) == 1) ? 0 :
           mgi_dev_key_index(h, tuple);
}

__device__ static inline uint16_t mgi_dev_tile_route(const mgi_dev_ch_t *h,
                                                     uint32_t slot, int dst)
{
    return (dst >= 0) ? (uint16_t)dst :
           ((h->part_key >= 0) || (dst == MGI_DEV_DST_MAP)) ? h->dst[slot] :
           MGI_EP_ID_ALL;
}

/* The stage group of a slot: its destination number modulo the groups
 * when the key routes, else the explicit destination's (a broadcast's:
 * 0), as mgi_dev_route_g gives them; 0 without groups. */
__device__ static inline unsigned mgi_dev_tile_group(const mgi_dev_ch_t *h,
                                                     uint32_t slot, int dst,
                                                     unsigned nslot)
{
    unsigned g = 0;

    if (mgi_dev_ngroups(h) == 1) {
        return 0;
    }
    if (nslot > 1) {
        return slot % mgi_dev_ngroups(h);
    }
    if (dst >= 0) {
        (void)mgi_dev_route_g(h, NULL, dst, &g);
    }
    return g;
}

/* How many tuples of ts bytes surely fit `avail` bytes as batched
 * messages of up to `per` tuples for g destinations at most: each
 * destination may end in a partial message, and a message pads its
 * payload to 8 bytes. */
__device__ static inline unsigned mgi_dev_tile_fit(uint32_t avail,
                                                   unsigned ts, unsigned per,
                                                   unsigned g)
{
    /* n ts + (n / per + 1 + min(g, n)) 16 <= avail, with min(g, n) as g
     * and as n: either bound holds */
    const uint64_t a = (avail > 16 * (1 + g)) ?
                       (uint64_t)(avail - 16 * (1 + g)) * per /
                       ((uint64_t)ts * per + 16) : 0;
    const uint64_t b = (avail > 16) ?
                       (uint64_t)(avail - 16) * per /
                       ((uint64_t)ts * per + 16 + 16 * per) : 0;

    return (unsigned)max(a, b);
}

/* Where a block's last tile reservation in a stage ring left off: the
 * ring's hint and the offset after it. Block shared memory kept from call
 * to call, uninitialized at the kernel's start: any value is safe, the
 * room it gives is a hint (the block is the ring's one producer). */
typedef struct mgi_dev_tile_at {
    mgi_ring_hint_t hint;
    uint32_t        next;
} mgi_dev_tile_at_t;

/* The bytes surely left in the block's last segment of r (0: none, or
 * another ring's). */
__device__ static inline uint32_t mgi_dev_tile_avail(
        const mgi_ring_t *r, const mgi_dev_tile_at_t *a)
{
    const uint32_t cap = mgi_ring_cap(r);

    return ((a->hint.ring == r) && (a->next < cap)) ? cap - a->next : 0;
}

/* How many tuples a tile's reservation in r takes: what surely fits the
 * rest of the block's last segment there, else a fresh segment's worth,
 * so tiles end no segment with padding. */
__device__ static inline unsigned mgi_dev_tile_room(const mgi_ring_t *r,
                                                    const mgi_dev_tile_at_t *a,
                                                    unsigned ts, unsigned per,
                                                    unsigned nslot)
{
    const unsigned room = mgi_dev_tile_fit(mgi_dev_tile_avail(r, a), ts, per,
                                           nslot);

    return (room > 0) ? room :
           mgi_dev_tile_fit(mgi_ring_cap(r), ts, per, nslot);
}

/* Thread 0: a tile's reservation of sz bytes in r from the block's hint;
 * where it ends is the next one's start. */
__device__ static inline int mgi_dev_tile_reserve_at(mgi_ring_t *r,
                                                     uint32_t sz,
                                                     mgi_dev_tile_at_t *a,
                                                     mgi_seg_hdr_t **seg,
                                                     uint32_t *off,
                                                     uint32_t *pos)
{
    const int ok = (mgi_ring_append_reserve_hint(r, sz, &a->hint, seg, off,
                                                 pos) == MGI_RING_OK);

    a->next = ok ? *off + sz : 0;
    return ok;
}

/* Thread 0: mgi_dev_tile_reserve_at and the mark's CAS issued; *mark
 * holds the answer, read only at the commit (mgi_dev_tile_commit), so the
 * writes do not wait for it. */
__device__ static inline int mgi_dev_tile_reserve(mgi_ring_t *r, uint32_t sz,
                                                  uint32_t key,
                                                  mgi_dev_tile_at_t *a,
                                                  mgi_seg_hdr_t **seg,
                                                  uint32_t *off, uint32_t *pos,
                                                  uint32_t *mark)
{
    const int ok = mgi_dev_tile_reserve_at(r, sz, a, seg, off, pos);

    if (ok) {
        *mark = mgi_seg_mark_begin(*seg, key);
    }
    return ok;
}

/* After the block's barrier that follows the writes: the mark settled and
 * the reservation committed, a release at GPU scope as in
 * mgi_dev_send_block (the writes the committing thread saw through the
 * barrier, and the mark, are ordered before the count). */
__device__ static inline void mgi_dev_tile_commit(mgi_ring_t *r,
                                                  mgi_seg_hdr_t *seg,
                                                  uint32_t off, uint32_t sz,
                                                  uint32_t pos, uint32_t mark,
                                                  uint32_t key)
{
    mgi_seg_mark_end(seg, mark, key);
    mgi_ring_append_commit(r, seg, off, sz, pos);
}

/* Thread 0 of a batched tile send: the layout of the tile's messages.
 * Slot i's (cnt[i] tuples) start at at[i] in its stage group's
 * reservation of tot[g] bytes; key[g], where tot[g] > 0, is the mark of
 * that reservation: its one slot's (channel, destination), or
 * MGI_SEG_MIXED for several. */
__device__ static __forceinline__ void mgi_dev_tile_layout(const mgi_dev_ch_t *h,
                                                  int dst, unsigned nslot,
                                                  unsigned per,
                                                  const uint32_t *cnt,
                                                  uint32_t *at, uint32_t *tot,
                                                  uint32_t *key)
{
    const unsigned ng = mgi_dev_ngroups(h);
    unsigned g, i;

    for (g = 0; g < ng; ++g) {
        tot[g] = 0;
    }
    for (i = 0; i < nslot; ++i) {
        g     = mgi_dev_tile_group(h, i, dst, nslot);
        at[i] = tot[g];
        if (cnt[i] > 0) {
            key[g]  = (tot[g] == 0) ?
                      mgi_dev_msg_key(h, mgi_dev_tile_route(h, i, dst)) :
                      MGI_SEG_MIXED;
            tot[g] += mgi_dev_batch_bytes(cnt[i], per, h->tuple_size);
        }
    }
}

/* Thread 0 of a batched tile send, once the groups' reservations are
 * made: where each slot's messages go (NULL: a slot without tuples). */
__device__ static __forceinline__ void mgi_dev_tile_places(const mgi_dev_ch_t *h,
                                                  int dst, unsigned nslot,
                                                  const uint32_t *cnt,
                                                  const uint32_t *at,
                                                  mgi_seg_hdr_t **seg,
                                                  const uint32_t *off,
                                                  char **msg)
{
    unsigned g, i;

    for (i = 0; i < nslot; ++i) {
        g      = mgi_dev_tile_group(h, i, dst, nslot);
        msg[i] = (cnt[i] > 0) ? mgi_seg_payload(seg[g]) + off[g] + at[i] :
                                NULL;
    }
}

/* A block's reservation state in its stage groups' rings, shared memory
 * kept from call to call (uninitialized at the kernel's start: any value
 * is safe): a hint per group's ring, the marks' CAS answers of the call
 * under way, and whether the last call found a ring full. */
typedef struct mgi_dev_groups_res {
    mgi_ring_hint_t hint[MGI_STAGE_GROUPS_MAX];
    uint32_t        mark[MGI_STAGE_GROUPS_MAX];
    int             full;
} mgi_dev_groups_res_t;

/* Warp 0 of a batched tile send with stage groups, every lane of `mask`
 * calling, after mgi_dev_tile_layout: a reservation in each group's ring
 * that has messages, all or nothing, each marked; so a segment holds one
 * destination when the groups are as many. Lane g takes group g (and g +
 * the lanes), so the groups' round trips overlap: one add at the hinted
 * slot and RTail's load (mgi_ring_append_reserve_hint), the mark's CAS
 * issued and its answer read only at the commit (mgi_dev_tile_commit_groups).
 * Thread 0 going through the groups one after the other, a look, a
 * reserve of three round trips and a mark each, made a two-group call
 * cost twice a one-group call (21 k against 10 k cycles on one H100). A
 * reservation that cannot be used (another group's ring was full) is
 * given back as padding; after such a call the next one looks at every
 * ring first. Returns 0 in every lane when a ring lacked room. */
__device__ static __forceinline__ int mgi_dev_tile_reserve_groups(
        const mgi_dev_ch_t *h, unsigned mask, const uint32_t *tot,
        const uint32_t *key, mgi_seg_hdr_t **seg, uint32_t *off,
        uint32_t *pos, mgi_dev_groups_res_t *gr)
{
    const unsigned ng   = mgi_dev_ngroups(h);
    const unsigned lane = threadIdx.x % 32, nl = __popc(mask);
    const int look      = gr->full;
    unsigned g, got = 0;    /* got: bit g, this lane reserved group g */
    int ok = 1;

    __syncwarp(mask);       /* gr->full read by every lane */
    if (look) {
        for (g = lane; g < ng; g += nl) {
            ok &= (tot[g] == 0) ||
                  mgi_ring_append_room(mgi_dev_stage_of(h, g), tot[g]);
        }
        if (!__all_sync(mask, ok)) {
            return 0;
        }
    }
    for (g = lane; g < ng; g += nl) {
        if ((tot[g] != 0) &&
            (mgi_ring_append_reserve_hint(mgi_dev_stage_of(h, g), tot[g],
                                          &gr->hint[g], &seg[g], &off[g],
                                          &pos[g]) == MGI_RING_OK)) {
            got |= 1u << g;
        } else if (tot[g] != 0) {
            ok = 0;
        }
    }
    ok = __all_sync(mask, ok);
    for (g = lane; g < ng; g += nl) {
        if (!(got & (1u << g))) {
            continue;
        }
        if (ok) {
            /* the CAS goes out now; its answer is read at the commit */
            gr->mark[g] = mgi_seg_mark_begin(seg[g], key[g]);
        } else {
            mgi_ring_append_cancel(mgi_dev_stage_of(h, g), seg[g], off[g],
                                   tot[g], pos[g]);
        }
    }
    if (lane == 0) {
        gr->full = !ok;
    }
    return ok;
}

/* Warp 0, after the tuples of a batched tile send with stage groups are
 * written (and the block met at a barrier): the lanes commit their groups
 * (mgi_dev_tile_commit). */
__device__ static __forceinline__ void mgi_dev_tile_commit_groups(
        const mgi_dev_ch_t *h, unsigned mask, const uint32_t *tot,
        const uint32_t *key, mgi_seg_hdr_t *const *seg, const uint32_t *off,
        const uint32_t *pos, const mgi_dev_groups_res_t *gr)
{
    const unsigned ng   = mgi_dev_ngroups(h);
    const unsigned lane = threadIdx.x % 32, nl = __popc(mask);
    unsigned g;

    for (g = lane; g < ng; g += nl) {
        if (tot[g] != 0) {
            mgi_dev_tile_commit(mgi_dev_stage_of(h, g), seg[g], off[g],
                                tot[g], pos[g], gr->mark[g], key[g]);
        }
    }
}

#endif

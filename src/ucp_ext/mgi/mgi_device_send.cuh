/**
 * MGI device API: the thread- and warp-level sends through a block's
 * stage rings (mgi_dev_send, mgi_dev_send_warp), and what every send
 * shares: a tuple's route and stage group, its message in a ring, the
 * warp's votes and prefix sums, and batched messages.
 *
 * A part of mgi/mgi_device.cuh, which includes its parts in order (each
 * uses those before it); kernels include <mgi/mgi_device.cuh>.
 */
#ifndef MGI_DEVICE_SEND_CUH_
#define MGI_DEVICE_SEND_CUH_

#ifndef MGI_DEVICE_CUH_
#  error "a part of the device API: include <mgi/mgi_device.cuh>"
#endif

/* Thread- and warp-level calls on a channel with direct rings (defined
 * with the direct rings, mgi_device_dring.cuh). */
__device__ static inline int mgi_dev_dring_send_one(const mgi_dev_ch_t *h,
                                                    const void *tuple,
                                                    unsigned len, int dst);
__device__ static inline int mgi_dev_dring_send_warp(const mgi_dev_ch_t *h,
                                                     const void *tuple,
                                                     unsigned len, int dst);
__device__ static inline int mgi_dev_dring_recv_one(const mgi_dev_ch_t *h,
                                                    void *buf, unsigned cap);

/* A key's destination number, key % ndst (its index in h->dst). */
__device__ static inline uint32_t mgi_dev_key_mod(const mgi_dev_ch_t *h,
                                                  uint64_t key)
{
    const uint32_t n = h->ndst;

    /* a 64-bit remainder is a long subroutine; a power of two and a key
     * below 2^32 need none */
    return ((n & (n - 1)) == 0) ? (uint32_t)key & (n - 1) :
           ((key >> 32) == 0) ? (uint32_t)key % n : (uint32_t)(key % n);
}

/* A channel with a partition key: the tuple's destination number,
 * key % ndst (its index in h->dst). */
__device__ static inline uint32_t mgi_dev_key_index(const mgi_dev_ch_t *h,
                                                    const void *tuple)
{
    const uint8_t *p = (const uint8_t*)tuple + h->key_off;
    uint64_t key     = 0;
    uint32_t i;

    if ((h->key_size == 8) && (((uintptr_t)p % 8) == 0)) {
        key = *(const uint64_t*)p;          /* little endian, as */
    } else if ((h->key_size == 4) && (((uintptr_t)p % 4) == 0)) {
        key = *(const uint32_t*)p;          /* the bytes below */
    } else {
        for (i = 0; i < h->key_size; ++i) {
            key |= (uint64_t)p[i] << (8 * i);
        }
    }
    return mgi_dev_key_mod(h, key);
}

/* The route of a tuple (its destination endpoint, or MGI_EP_ID_ALL) and
 * its stage group (*g): the destination's index in h->dst modulo the
 * groups; 0 for a broadcast or an endpoint not in h->dst. */
__device__ static inline uint16_t mgi_dev_route_g(const mgi_dev_ch_t *h,
                                                  const void *tuple, int dst,
                                                  unsigned *g)
{
    const unsigned ng = mgi_dev_ngroups(h);
    uint32_t i;

    *g = 0;
    if (dst >= 0) {
        for (i = 0; (ng > 1) && (i < h->ndst); ++i) {
            if (h->dst[i] == (uint16_t)dst) {
                *g = i % ng;
                break;
            }
        }
        return (uint16_t)dst;
    }
    if (h->part_key >= 0) {
        i  = mgi_dev_key_index(h, tuple);
        *g = (ng == 1) ? 0 : i % ng;
        return h->dst[i];
    }
    return MGI_EP_ID_ALL;
}

__device__ static inline uint16_t mgi_dev_route(const mgi_dev_ch_t *h,
                                                const void *tuple, int dst)
{
    unsigned g;

    return mgi_dev_route_g(h, tuple, dst, &g);
}

/* One message at p (8-byte aligned). A tuple of whole 8-byte words at an
 * aligned address goes out with the header in 16-byte stores: the
 * messages of a warp lie side by side at a stride that is no multiple of
 * 32 bytes, so each store instruction touches a line per lane, and half
 * the instructions write the same bytes. */
__device__ static inline void mgi_dev_write_msg(char *p, const mgi_dev_ch_t *h,
                                                uint16_t dst,
                                                const void *tuple,
                                                unsigned len)
{
    mgi_msg_hdr_t hdr;
    uint64_t hw;

    hdr.ch  = h->ch;
    hdr.dst = dst;
    hdr.src = h->self;
    hdr.len = (uint16_t)len;
    if ((((uintptr_t)tuple | len) % 8) == 0) {
        const uint64_t *s = (const uint64_t*)tuple;
        const unsigned n  = 1 + len / 8;   /* words, the header's included */
        unsigned k        = 0;

        memcpy(&hw, &hdr, sizeof(hw));
        if (((uintptr_t)p % 16) != 0) {
            *(uint64_t*)p = hw;
            k             = 1;
        }
        for (; k + 2 <= n; k += 2) {
            *(ulonglong2*)(p + 8 * k) =
                make_ulonglong2((k == 0) ? hw : s[k - 1], s[k]);
        }
        if (k < n) {
            *(uint64_t*)(p + 8 * k) = (k == 0) ? hw : s[k - 1];
        }
        return;
    }
    *(mgi_msg_hdr_t*)p = hdr;
    mgi_copy_bytes(p + MGI_MSG_HDR_SIZE, tuple, len);
}

/* Block level: the lanes of this thread's warp that exist in the block,
 * for the warp votes, shuffles and reductions of a block call that every
 * thread makes. Not __activemask(): it names the lanes that happen to run
 * together, and a block call may start with its warp split (thread 0
 * still committing the block's last send, which follows the last
 * barrier); the lanes ahead would then sum and vote without it. The
 * _sync intrinsics wait for every lane of the mask. */
__device__ static inline unsigned mgi_dev_block_warp_mask(void)
{
    const unsigned warp = threadIdx.x / 32;

    return ((warp + 1) * 32 <= blockDim.x) ? 0xffffffffu :
           (1u << (blockDim.x % 32)) - 1;
}

/* Warp: the inclusive prefix sum of v over the lanes of mask (the lanes
 * 0..n-1 of the warp): where each lane's bytes end in the warp's. */
__device__ static inline unsigned mgi_dev_warp_incl(unsigned mask, unsigned v)
{
    const unsigned lane = threadIdx.x % 32;
    unsigned incl = v, u, i;

    for (i = 1; i < 32; i <<= 1) {
        u = __shfl_up_sync(mask, incl, i);
        if (lane >= i) {
            incl += u;
        }
    }
    return incl;
}

/* Warp: the mark key shared by every lane of `mask` that passes `key`
 * with `has` set (MGI_SEG_KEY of its message, or MGI_SEG_MIXED),
 * MGI_SEG_MIXED when two differ; 0 when none has one (as is the key of
 * channel 0 to endpoint 0: a caller that must tell them apart asks
 * __any_sync). Every lane of mask calls it (before sm_80: the whole
 * warp). */
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

/* Thread 0 of a block: the mark key of the block's reservation from its
 * warps' (mgi_dev_warp_key): the key every warp with tuples (wcnt[w] > 0)
 * shares, else MGI_SEG_MIXED. */
__device__ static inline uint32_t mgi_dev_block_key(const uint32_t *wcnt,
                                                    const uint32_t *wkey)
{
    uint32_t key = 0, w;
    int first = 1;

    for (w = 0; w < (blockDim.x + 31) / 32; ++w) {
        if (wcnt[w] > 0) {
            key   = first ? wkey[w] : (key == wkey[w]) ? key : MGI_SEG_MIXED;
            first = 0;
        }
    }
    return key;
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
    mgi_msg_hdr_t hdr;
    unsigned g;

    if (h->direct) {
        return mgi_dev_dring_send_one(h, tuple, len, dst);
    }
    if ((len == 0) || (len > MGI_MSG_MAX_LEN)) {
        return 0;
    }
    hdr.ch  = h->ch;
    hdr.dst = mgi_dev_route_g(h, tuple, dst, &g);
    hdr.src = h->self;
    hdr.len = (uint16_t)len;
    return (mgi_ring_append(mgi_dev_stage_of(h, g), &hdr, tuple, NULL) ==
            MGI_RING_OK) ? (int)len : 0;
}

/* Warp level: every lane passes its tuple (len 0: nothing); one
 * reservation for the warp, in the lanes' stage group when they share one,
 * else in group 0. All or nothing: every lane gets its len or 0. */
__device__ static inline int mgi_dev_send_warp(const mgi_dev_ch_t *h,
                                               const void *tuple, unsigned len,
                                               int dst)
{
    const unsigned lane = threadIdx.x % 32;
    unsigned sz         = (len > 0) ? mgi_msg_size(len) : 0;
    const unsigned incl = mgi_dev_warp_incl(0xffffffffu, sz);
    const unsigned total = __shfl_sync(0xffffffffu, incl, 31);
    unsigned long long seg_ptr = 0;
    uint32_t off = 0, pos = 0, key;
    uint16_t route = MGI_EP_ID_ALL;
    unsigned g = 0;
    mgi_ring_t *r;
    int ok = 0;

    if (h->direct) {
        return mgi_dev_dring_send_warp(h, tuple, len, dst);
    }
    /* route and mark key first: lane 0 marks beside the lanes' writes */
    if (sz > 0) {
        route = mgi_dev_route_g(h, tuple, dst, &g);
    }
    key = mgi_dev_warp_key(0xffffffffu, mgi_dev_msg_key(h, route), sz > 0);
    g   = (key == MGI_SEG_MIXED) ? 0 :
          __shfl_sync(0xffffffffu, g,
                      __ffs(__ballot_sync(0xffffffffu, sz > 0) | 1u) - 1);
    r   = mgi_dev_stage_of(h, g);
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
        mgi_dev_write_msg(mgi_seg_payload((mgi_seg_hdr_t*)seg_ptr) + off +
                          (incl - sz), h, route, tuple, len);
    }
    if (lane == 0) {
        mgi_seg_mark((mgi_seg_hdr_t*)seg_ptr, key);
    }
    __syncwarp();
    if (lane == 0) {
        /* the commit is a release at GPU scope (the sorter is on this
         * GPU): the writes this lane saw through the warp barrier, and the
         * mark, are ordered before the count */
        mgi_ring_append_commit(r, (mgi_seg_hdr_t*)seg_ptr, off, total, pos);
    }
    return (int)len;
}

#define MGI_DEV_GROUPS 128  /* destinations of one batched block send */
#define MGI_DEV_TILE_DSTS MGI_DIRECT_MAX_DSTS /* destinations of a batched
                                                * tile send, and of a
                                                * channel with direct
                                                * rings */
#define MGI_DEV_NO_SLOT 0xffffffffu /* mgi_dev_warp_take: no item */

/* Bytes of cnt tuples of ts bytes as batched messages of up to `per`
 * tuples: full batches, then the rest. */
__device__ static inline uint32_t mgi_dev_batch_bytes(uint32_t cnt,
                                                      unsigned per,
                                                      unsigned ts)
{
    return (cnt / per) * mgi_msg_size(per * ts) +
           (((cnt % per) != 0) ? mgi_msg_size((cnt % per) * ts) : 0);
}

/* Warp: a place for this lane's item in counters[slot] (MGI_DEV_NO_SLOT:
 * none), one shared-memory atomic per warp and slot; the lanes of a slot
 * take consecutive places in lane order. Every lane of mask calls it. */
__device__ static inline uint32_t mgi_dev_warp_take(unsigned mask,
                                                    uint32_t slot,
                                                    uint32_t *counters)
{
    const unsigned lane = threadIdx.x % 32;
    const unsigned grp  = __match_any_sync(mask, slot);
    const unsigned lead = __ffs(grp) - 1;
    uint32_t base = 0;

    if ((slot != MGI_DEV_NO_SLOT) && (lane == lead)) {
        base = atomicAdd(&counters[slot], (uint32_t)__popc(grp));
    }
    return __shfl_sync(mask, base, lead) + __popc(grp & ((1u << lane) - 1));
}

/* Where tuple number `rank` of a destination's cnt tuples goes in their
 * batched messages, which start at msg0: the first tuple of a batch
 * writes the batch's header. */
__device__ static inline char *mgi_dev_batch_at(char *msg0,
                                                const mgi_dev_ch_t *h,
                                                uint16_t route, uint32_t rank,
                                                uint32_t cnt, unsigned per)
{
    const unsigned ts = h->tuple_size;
    /* one batch holds them all in most calls: no division then */
    const uint32_t mi = (cnt <= per) ? 0 : rank / per;
    const uint32_t r  = rank - mi * per;
    char *msg         = msg0 + mi * mgi_msg_size(per * ts);
    mgi_msg_hdr_t hdr;

    if (r == 0) {
        hdr.ch  = h->ch;
        hdr.dst = route;
        hdr.src = h->self;
        hdr.len = (uint16_t)(min(per, cnt - mi * per) * ts);
        *(mgi_msg_hdr_t*)msg = hdr;
    }
    return msg + MGI_MSG_HDR_SIZE + r * ts;
}

/* The tuple itself there. */
__device__ static inline void mgi_dev_batch_put(char *msg0,
                                                const mgi_dev_ch_t *h,
                                                uint16_t route, uint32_t rank,
                                                uint32_t cnt, unsigned per,
                                                const void *tuple)
{
    mgi_copy_bytes(mgi_dev_batch_at(msg0, h, route, rank, cnt, per), tuple,
                   h->tuple_size);
}

#endif

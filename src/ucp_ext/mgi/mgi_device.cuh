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
 * side by side (coalesced). mgi_dev_send_block_tile sends a block's tile
 * of tuples from memory with one reservation for up to a stage segment.
 *
 * The host fills an mgi_dev_ch_t for a GPU endpoint with
 * mgi_ch_device_handle() (mgi.h); pass it to kernels by value and take its
 * address. Flush counts one EOF per stage ring: launch the kernel with
 * `blocks` blocks (mgi_ep_params_t) and let every block flush once.
 *
 * Stage groups (MGI_STAGE_GROUPS): a user block has h->ngroups stage
 * rings, and a tuple for the channel's destination number i goes to ring
 * i % ngroups (broadcasts, and a warp send whose lanes differ, to ring 0).
 * With a group per destination every stage segment holds one destination,
 * and the sorter moves it whole instead of walking its messages. A flush
 * appends its EOF to each of the block's rings. Tuples of one block for
 * one destination keep their order.
 */
#ifndef MGI_DEVICE_CUH_
#define MGI_DEVICE_CUH_

#include "mgi_ring.h"
#include "mgi_dev_ch.h"

#define MGI_DEV_DST_AUTO  (-1)
/* Tile sends only (mgi_dev_send_block_tile_map): a function of the
 * caller's names each tuple's destination number */
#define MGI_DEV_DST_MAP   (-2)
#define MGI_DEV_EOF       (-1000)   /* == MGI_EOF of mgi.h */
#define MGI_DEV_RECV_ILP  8         /* loads per thread in flight */
#ifndef MGI_DEV_DRING_V16
#  define MGI_DEV_DRING_V16 1   /* 0: direct-ring tile sends store in
                                 * 8-byte words only */
#endif

/* Stage rings per user block, as the device calls use them. */
__device__ static inline unsigned mgi_dev_ngroups(const mgi_dev_ch_t *h)
{
    return (h->ngroups <= 1) ? 1u :
           min(h->ngroups, (uint32_t)MGI_STAGE_GROUPS_MAX);
}

/* This block's stage ring of group g. */
__device__ static inline mgi_ring_t *mgi_dev_stage_of(const mgi_dev_ch_t *h,
                                                      unsigned g)
{
    return h->stage[g * h->nblocks + blockIdx.x % h->nblocks];
}

__device__ static inline mgi_ring_t *mgi_dev_stage(const mgi_dev_ch_t *h)
{
    return mgi_dev_stage_of(h, 0);
}

/* ------------------------------------------------- bounds and reports
 * Every wait of a device call ends by h->timeout_ns (the context's
 * MGI_TIMEOUT_MS) and says why to the host (mgi_dev_report). A kernel's
 * own loops (send until taken, receive until EOF) bound themselves the
 * same way: take mgi_dev_deadline once, test mgi_dev_past in the loop,
 * and report MGI_DEV_ERR_KERNEL_TIMEOUT before it gives up; the host then
 * reads the reason with mgi_context_device_error. */
#define MGI_DEV_TIMED_OUT (-1)  /* a wait of a device call passed its bound */
#define MGI_DEV_FAILED    (-2)  /* the context delivers nothing any more */

/* Nanoseconds of the GPU's global timer (the same on every SM). */
__device__ static inline uint64_t mgi_dev_now(void)
{
    uint64_t t;

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* When a wait that starts now must end: the context's timeout from now. */
__device__ static inline uint64_t mgi_dev_deadline(const mgi_dev_ch_t *h)
{
    return mgi_dev_now() + ((h->timeout_ns != 0) ? h->timeout_ns :
                            60000000000ull);
}

__device__ static inline int mgi_dev_past(uint64_t deadline)
{
    return mgi_dev_now() > deadline;
}

/* Tell the host why a device call (or the kernel) gave up: the first
 * report of the context is kept, with the channel, endpoint and block
 * (mgi_context_device_error; mgi_ch_delete names it too). Plain stores
 * to mapped host memory: two reports at once keep one of them. */
__device__ static inline void mgi_dev_report(const mgi_dev_ch_t *h,
                                             uint32_t code)
{
    volatile uint32_t *e = h->dev_err;

    if ((e == NULL) || (e[0] != MGI_DEV_ERR_NONE)) {
        return;
    }
    e[1] = ((uint32_t)h->ch << 16) | h->self;
    e[2] = blockIdx.x;
    __threadfence_system();
    e[0] = code;
    __threadfence_system();
}

/* The code of the context's first report, MGI_DEV_ERR_NONE if none. */
__device__ static inline uint32_t mgi_dev_reported(const mgi_dev_ch_t *h)
{
    return (h->dev_err != NULL) ? h->dev_err[0] : MGI_DEV_ERR_NONE;
}

/* Thread- and warp-level calls on a channel with direct rings (defined
 * with the direct rings below). */
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
    unsigned j;

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
    if (bc) {
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
    return (fin == nr) ? MGI_DEV_EOF : 0;
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

/* A tuple of WD 8-byte words from registers into its ring slot: 16-byte
 * stores where WD is even (the slot is aligned to them then: rings start
 * on MGI_RING_LINE boundaries, slots at multiples of the tuple size), so
 * two threads with consecutive slots fill a 32-byte sector; 8-byte ones
 * else. Two 8-byte stores of a warp each fill every other 8 bytes of the
 * sectors they touch, each a masked write across the link. */
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
    if (W > 0) {
#pragma unroll
        for (u = 0; u < U; ++u) {
            if (sl[u] == MGI_DEV_NO_SLOT) {
                continue;
            }
            for (j = 0; j < ((nslot > 1) ? 1 : nt); ++j) {
                slot = (nslot > 1) ? sl[u] : j;
                at   = mgi_dev_dring_slot(s_ptr, s_pm, s_tail, slot,
                                          (nslot > 1) ? rk[u] :
                                                        tid + u * blockDim.x,
                                          ts);
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
 * (test/ucp_ext/device_host_check.cu checks it on the host). */
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

/* The EOF record of a block's flush number `seq`: to every destination,
 * counting the channel's producers of this endpoint (every stage ring of
 * every user block sends one). */
__device__ static inline void mgi_dev_eof_msg(const mgi_dev_ch_t *h,
                                              uint32_t seq,
                                              mgi_msg_hdr_t *hdr,
                                              uint32_t payload[2])
{
    hdr->ch    = h->ch;
    hdr->dst   = MGI_EP_ID_ALL;
    hdr->src   = h->self;
    hdr->len   = MGI_MSG_LEN_EOF;
    payload[0] = h->nblocks * mgi_dev_ngroups(h);
    payload[1] = seq;
}

#define MGI_DEV_FLUSH_STEP 256u   /* flush numbers apart: the low bits of
                                     a flush state say which groups' rings
                                     took its EOF */

/* Thread 0: one step of a flush, *state 0 before the first. The flush's
 * number is taken from group 0's ring once its EOF is in, rounded up to a
 * multiple of MGI_DEV_FLUSH_STEP, and every group's EOF carries it; a ring
 * without room is tried again on the next step. *state is the number plus
 * a bit per group whose ring took the EOF. Returns 1 once every ring took
 * it and the sorter reported each delivered. */
__device__ static inline int mgi_dev_flush_step(const mgi_dev_ch_t *h,
                                                uint32_t *state)
{
    const unsigned ng  = mgi_dev_ngroups(h);
    const uint32_t all = (1u << ng) - 1;
    uint32_t payload[2], seq, bits = *state % MGI_DEV_FLUSH_STEP;
    mgi_msg_hdr_t hdr;
    mgi_ring_t *r;
    unsigned g;

    seq = (bits == 0) ?
          (mgi_ld_acq32(&mgi_dev_stage(h)->flush_seq) + MGI_DEV_FLUSH_STEP) &
          ~(MGI_DEV_FLUSH_STEP - 1) :
          *state - bits;
    mgi_dev_eof_msg(h, seq, &hdr, payload);
    for (g = 0; (g < ng) && ((g == 0) || (bits != 0)); ++g) {
        r = mgi_dev_stage_of(h, g);
        /* the EOF in a segment of its own: the tuples before it keep a
         * segment of one destination, which the sorter moves whole (with
         * MGI_LOOP_DIRECT, for this endpoint, to a final ring), where an
         * EOF among them made it walked, its tuples for this endpoint
         * through the loopback lane */
        if (((bits >> g) & 1) || (mgi_ring_append_close(r) != MGI_RING_OK) ||
            (mgi_ring_append(r, &hdr, payload, NULL) != MGI_RING_OK)) {
            continue;
        }
        if (g == 0) {
            /* the number is taken only once its EOF is in */
            mgi_st_rel32(&r->flush_seq, seq);
        }
        mgi_ring_append_close(r);       /* FULL: the EOF's segment is closed */
        bits |= 1u << g;
    }
    if (bits != 0) {
        *state = seq | bits;
    }
    if (bits != all) {
        return 0;
    }
    for (g = 0; g < ng; ++g) {
        if ((int32_t)(mgi_ld_acq32(&mgi_dev_stage_of(h, g)->flush_done) -
                      seq) < 0) {
            return 0;
        }
    }
    return 1;
}

/* Whether the channel's context delivers nothing any more: a rank of its
 * host ended before its destroy, or its mover stopped on an error (the
 * host calls then fail with that error). Kernels whose loops wait for
 * sends to be taken or tuples to arrive check it to end. */
__device__ static inline int mgi_dev_failed(const mgi_dev_ch_t *h)
{
    return (h->failed != NULL) && (*h->failed != 0);
}

/* Block level: EOF for this block, then wait for delivery. Returns 0,
 * MGI_DEV_TIMED_OUT when it gave up after `spin_limit` polls (0: at the
 * context's timeout, MGI_TIMEOUT_MS, reported to the host as
 * MGI_DEV_ERR_FLUSH_TIMEOUT), or MGI_DEV_FAILED once the context failed
 * (mgi_dev_failed). The same in every thread. */
__device__ static inline int mgi_dev_flush(const mgi_dev_ch_t *h,
                                           unsigned long long spin_limit)
{
    __shared__ int s_ret;
    unsigned long long spins = 0;
    uint32_t state = 0;

    if (h->direct) {
        mgi_dev_dring_flush(h);
        return 0;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        const uint64_t dl = mgi_dev_deadline(h);

        s_ret = 0;
        while (!mgi_dev_flush_step(h, &state)) {
            ++spins;
            if ((spin_limit != 0) ? (spins > spin_limit) :
                ((spins % 1024 == 0) && mgi_dev_past(dl))) {
                s_ret = MGI_DEV_TIMED_OUT;
                mgi_dev_report(h, MGI_DEV_ERR_FLUSH_TIMEOUT);
                break;
            }
            if ((spins % 1024 == 0) && mgi_dev_failed(h)) {
                s_ret = MGI_DEV_FAILED;
                break;
            }
            mgi_cpu_relax();
        }
    }
    __syncthreads();
    return s_ret;
}

/* Block level, non-blocking flush: *state is a __shared__ word the block
 * set to 0 before its first call. The calls append the EOF to each of the
 * block's stage rings as they find room; returns 1 once this block's
 * tuples were delivered, else 0 (keep receiving meanwhile: delivery may
 * need this endpoint to drain its final rings, as when every endpoint
 * flushes at once). */
__device__ static inline int mgi_dev_flush_nb(const mgi_dev_ch_t *h,
                                              uint32_t *state)
{
    __shared__ int s_done;

    if (h->direct) {
        mgi_dev_dring_flush(h);
        return 1;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        s_done = mgi_dev_flush_step(h, state);
    }
    __syncthreads();
    return s_done;
}

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
                 (mgi_ring_peek_data(r) == NULL)) ? MGI_DEV_EOF : 0;
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

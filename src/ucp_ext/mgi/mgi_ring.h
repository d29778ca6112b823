/**
 * MGI ring protocol (paper §5.3, Fig. 8), written once for host and device.
 *
 * A ring is one contiguous block: a 384-byte header (producer line, consumer
 * line, constant line, 128 bytes each) followed by `size` fixed segments of
 * `seg_size` bytes. Indices are free-running 32-bit counters masked by the
 * power-of-two size, as in DPDK's lib/ring. Because a ring is
 * self-describing and position-independent, a mover can address a remote
 * ring with base + offset arithmetic only, and moving a ring to device
 * memory changes nothing here.
 *
 *   prod_tail = RTail, cons_tail = RHead, segment header stail = STail.
 *
 * Two ways to fill a ring:
 *  - append mode (stage, sort, final and loopback rings): many producers
 *    append messages at the STail of the RTail segment; the producer whose
 *    reservation crosses the end pads the rest and advances RTail. A segment
 *    is ready for the consumer when its commit counter equals its capacity.
 *    STail carries the segment's generation (its ring position) in its high
 *    32 bits so that a producer that raced with a consumer wrapping around
 *    never writes into a later generation out of order.
 *  - segment mode (receive lanes, fed by movers with RMA): whole segments are
 *    copied into free slots and RTail is published afterwards (bulk enqueue
 *    / dequeue, multi-producer / multi-consumer, DPDK style).
 *
 * Messages (8-byte aligned inside a segment payload):
 *   | ch:16 | dst:16 | src:16 | len:16 | payload, padded to 8 bytes |
 * ch is the channel id and dst the destination endpoint id (paper: 2 B
 * each); src and len are this implementation's additions, needed for EOF
 * accounting per source and for schemaless tuples.
 */
#ifndef MGI_RING_H_
#define MGI_RING_H_

#include <stdint.h>
#include <stddef.h>
#include <string.h>

#if defined(__CUDACC__)
#  define MGI_HOST_DEVICE __host__ __device__
#else
#  define MGI_HOST_DEVICE
#endif

#define MGI_INLINE          MGI_HOST_DEVICE static inline

#define MGI_RING_LINE       128   /* GPU L2 line; >= any CPU cache line */
#define MGI_RING_HDR_SIZE   (3 * MGI_RING_LINE)
#define MGI_SEG_HDR_SIZE    16u
#define MGI_MSG_HDR_SIZE    8u
#define MGI_MSG_ALIGN       8u

#define MGI_RING_F_APPEND   1u    /* consumer also waits for commit == cap */
/* Producers on other GPUs than the ring's memory (a receive lane that the
 * sorters of other GPU endpoints append to, MGI_PEER_DIRECT): the
 * producers' atomics are at system scope, and a commit and a recycle are
 * releases at system scope, so what a peer GPU wrote over NVLink or PCIe
 * (its own threads' writes, and those it saw through a barrier) is seen
 * before the word that shows it. */
#define MGI_RING_F_SYS      2u

#define MGI_MSG_CH_PAD      0xffffu /* ch of a padding record */
#define MGI_MSG_LEN_EOF     0xffffu /* len of an end-of-stream record */
#define MGI_MSG_EOF_PAYLOAD 8u      /* EOF payload: nprod:32, block:32 */
#define MGI_MSG_MAX_LEN     0xfff8u /* largest tuple, 8-aligned */
#define MGI_EP_ID_ALL       0xffffu /* dst of a broadcast message */
#define MGI_MSG_BATCH_BYTES 4096u   /* payload a sender batches into one
                                       message of whole tuples, at most */

enum {
    MGI_RING_OK   = 0,
    MGI_RING_FULL = 1
};

/* ------------------------------------------------------------- atomics */

#if defined(__CUDA_ARCH__)
/* Acquire loads at system scope (a copy engine or a host thread may have
 * written the word: receive lanes, mirrors). Release stores and commits at
 * GPU scope: stage, sort, final and loopback rings are written and read on
 * their GPU only; what a host thread reads is published with
 * mgi_fence_publish() first (mirrors, status). A fence.sc.sys per ring
 * operation would cost microseconds each. */
MGI_INLINE uint32_t mgi_ld_acq32(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p)
                 : "memory");
    return v;
}
MGI_INLINE uint64_t mgi_ld_acq64(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p)
                 : "memory");
    return v;
}
/* A load for a look only (nothing read after it depends on it): the loads
 * of one look go out together instead of one round trip each. */
MGI_INLINE uint32_t mgi_ld_rlx32(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.relaxed.sys.u32 %0, [%1];" : "=r"(v) : "l"(p)
                 : "memory");
    return v;
}
MGI_INLINE void mgi_st_rel32(uint32_t *p, uint32_t v)
{
    asm volatile("st.release.gpu.u32 [%0], %1;" :: "l"(p), "r"(v)
                 : "memory");
}
MGI_INLINE void mgi_st_rel64(uint64_t *p, uint64_t v)
{
    asm volatile("st.release.gpu.u64 [%0], %1;" :: "l"(p), "l"(v)
                 : "memory");
}
/* A store another thread may race (atomics on the same word), ordered by
 * a later release of this thread. */
MGI_INLINE void mgi_st_rlx32(uint32_t *p, uint32_t v)
{
    asm volatile("st.relaxed.gpu.u32 [%0], %1;" :: "l"(p), "r"(v)
                 : "memory");
}
MGI_INLINE uint32_t mgi_fadd32(uint32_t *p, uint32_t v)
{
    __threadfence();
    return atomicAdd((unsigned int*)p, v);
}
MGI_INLINE uint64_t mgi_fadd64(uint64_t *p, uint64_t v)
{
    return atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
/* An add that acquires: what the writer of the value it read did before
 * its release store (a slot's recycle, mgi_ring_seg_recycle) is seen
 * after it. */
MGI_INLINE uint64_t mgi_fadd64_acq(uint64_t *p, uint64_t v)
{
    uint64_t old;
    asm volatile("atom.acquire.gpu.global.add.u64 %0, [%1], %2;"
                 : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
}
/* Before a store that a host thread or a copy engine acts on. */
MGI_INLINE void mgi_fence_publish(void)
{
    __threadfence_system();
}
MGI_INLINE int mgi_cas32(uint32_t *p, uint32_t expect, uint32_t v)
{
    return atomicCAS((unsigned int*)p, expect, v) == expect;
}
MGI_INLINE uint32_t mgi_cas32_old(uint32_t *p, uint32_t expect, uint32_t v)
{
    return atomicCAS((unsigned int*)p, expect, v);
}
/* Add with release semantics, the old value not wanted: one reduction
 * that orders this thread's earlier writes (and those it saw through a
 * barrier) before the count at GPU scope, instead of a full fence and an
 * atomic that waits for its answer. */
MGI_INLINE void mgi_add_rel32(uint32_t *p, uint32_t v)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" :: "l"(p), "r"(v)
                 : "memory");
}
/* System scope (MGI_RING_F_SYS rings): atomic with the other GPUs' too. */
MGI_INLINE uint64_t mgi_fadd64_sys(uint64_t *p, uint64_t v)
{
    uint64_t old;
    asm volatile("atom.acquire.sys.global.add.u64 %0, [%1], %2;"
                 : "=l"(old) : "l"(p), "l"(v) : "memory");
    return old;
}
MGI_INLINE uint32_t mgi_cas32_old_sys(uint32_t *p, uint32_t expect,
                                      uint32_t v)
{
    return atomicCAS_system((unsigned int*)p, expect, v);
}
MGI_INLINE int mgi_cas32_sys(uint32_t *p, uint32_t expect, uint32_t v)
{
    return mgi_cas32_old_sys(p, expect, v) == expect;
}
/* Releases at system scope: what this thread wrote, and what it saw
 * through a barrier, before the word, for readers on other GPUs too. */
MGI_INLINE void mgi_add_rel32_sys(uint32_t *p, uint32_t v)
{
    asm volatile("red.release.sys.global.add.u32 [%0], %1;" :: "l"(p), "r"(v)
                 : "memory");
}
MGI_INLINE void mgi_st_rel64_sys(uint64_t *p, uint64_t v)
{
    asm volatile("st.release.sys.u64 [%0], %1;" :: "l"(p), "l"(v)
                 : "memory");
}
MGI_INLINE void mgi_cpu_relax(void)
{
#  if __CUDA_ARCH__ >= 700
    __nanosleep(64);
#  endif
}
#else
MGI_INLINE uint32_t mgi_ld_acq32(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
MGI_INLINE uint64_t mgi_ld_acq64(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
MGI_INLINE uint32_t mgi_ld_rlx32(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}
MGI_INLINE void mgi_st_rel32(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
MGI_INLINE void mgi_st_rel64(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
MGI_INLINE void mgi_st_rlx32(uint32_t *p, uint32_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELAXED);
}
MGI_INLINE uint32_t mgi_fadd32(uint32_t *p, uint32_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
MGI_INLINE uint64_t mgi_fadd64(uint64_t *p, uint64_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
MGI_INLINE uint64_t mgi_fadd64_acq(uint64_t *p, uint64_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
MGI_INLINE int mgi_cas32(uint32_t *p, uint32_t expect, uint32_t v)
{
    return __atomic_compare_exchange_n(p, &expect, v, 0, __ATOMIC_ACQ_REL,
                                       __ATOMIC_ACQUIRE);
}
MGI_INLINE uint32_t mgi_cas32_old(uint32_t *p, uint32_t expect, uint32_t v)
{
    __atomic_compare_exchange_n(p, &expect, v, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    return expect;
}
MGI_INLINE void mgi_add_rel32(uint32_t *p, uint32_t v)
{
    __atomic_fetch_add(p, v, __ATOMIC_RELEASE);
}
MGI_INLINE uint64_t mgi_fadd64_sys(uint64_t *p, uint64_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
MGI_INLINE uint32_t mgi_cas32_old_sys(uint32_t *p, uint32_t expect,
                                      uint32_t v)
{
    return mgi_cas32_old(p, expect, v);
}
MGI_INLINE int mgi_cas32_sys(uint32_t *p, uint32_t expect, uint32_t v)
{
    return mgi_cas32(p, expect, v);
}
MGI_INLINE void mgi_add_rel32_sys(uint32_t *p, uint32_t v)
{
    mgi_add_rel32(p, v);
}
MGI_INLINE void mgi_st_rel64_sys(uint64_t *p, uint64_t v)
{
    mgi_st_rel64(p, v);
}
MGI_INLINE void mgi_fence_publish(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
MGI_INLINE void mgi_cpu_relax(void)
{
#  if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#  elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#  endif
}
#endif

/* ------------------------------------------------------------- layout */

typedef struct mgi_msg_hdr {
    uint16_t ch;     /* channel id, or MGI_MSG_CH_PAD */
    uint16_t dst;    /* destination endpoint id, or MGI_EP_ID_ALL */
    uint16_t src;    /* source endpoint id */
    uint16_t len;    /* payload bytes; MGI_MSG_LEN_EOF; pad: 8-byte units */
} mgi_msg_hdr_t;

typedef struct mgi_seg_hdr {
    uint64_t stail;  /* STail: generation << 32 | bytes reserved */
    uint32_t commit; /* bytes written; == capacity when the segment is full */
    uint32_t reserved; /* content mark, see mgi_seg_mark() */
} mgi_seg_hdr_t;

typedef struct mgi_ring {
    /* producer line: written by producers, read by consumers */
    uint32_t prod_head;     /* segment mode: reserved slots */
    uint32_t prod_tail;     /* RTail: published slots */
    uint32_t flush_seq;     /* last flush requested through this ring */
    uint8_t  prod_pad[MGI_RING_LINE - 3 * sizeof(uint32_t)];
    /* consumer line: written by consumers, read by producers */
    uint32_t cons_head;     /* segment mode: claimed slots */
    uint32_t cons_tail;     /* RHead: released slots */
    uint32_t cons_off;      /* tuple consumers: read offset in RHead seg */
    uint32_t flush_done;    /* last flush whose tuples were delivered */
    uint32_t cons_part;     /* tuple consumers: payload bytes of the
                               message at cons_off taken already */
    uint32_t cons_wait_sz;  /* consumer-private: bytes it could not place */
    struct mgi_ring *cons_wait; /* consumer-private: the ring (of this
                               consumer's output) that lacked room for
                               them, NULL: none (see the GPU sorter) */
    uint32_t cons_dep;      /* consumer-private: the RHead an output ring
                               must reach before this ring's next input
                               may pass it by (see the GPU sorter) */
    uint32_t cons_held;     /* consumer-private: segments after RHead
                               passed on but not released yet, waiting
                               for MGI_SEG_READ (GPU sorter, stage rings
                               with MGI_STAGE_ZCOPY); cons_off is then the
                               offset in the segment after them */
    uint32_t cons_since;    /* consumer-private: the sorter round (+ 1)
                               since which a run of whole segments waits
                               to grow (GPU sorter, MGI_SEND_ZCOPY), 0:
                               none */
    uint8_t  cons_pad[MGI_RING_LINE - 9 * sizeof(uint32_t) - sizeof(void*)];
    /* constant line: set once by mgi_ring_init */
    uint32_t size;          /* segments, a power of two */
    uint32_t mask;
    uint32_t seg_size;      /* bytes, header included, multiple of 128 */
    uint32_t flags;         /* MGI_RING_F_* */
    uint8_t  const_pad[MGI_RING_LINE - 4 * sizeof(uint32_t)];
} mgi_ring_t;

#if defined(__cplusplus)
#  define MGI_STATIC_ASSERT(_c, _m) static_assert(_c, _m)
#else
#  define MGI_STATIC_ASSERT(_c, _m) _Static_assert(_c, _m)
#endif

MGI_STATIC_ASSERT(sizeof(mgi_msg_hdr_t) == MGI_MSG_HDR_SIZE,
                  "message header is 8 bytes");
MGI_STATIC_ASSERT(sizeof(mgi_seg_hdr_t) == MGI_SEG_HDR_SIZE,
                  "segment header is 16 bytes");
MGI_STATIC_ASSERT(offsetof(mgi_ring_t, prod_head) == 0,
                  "producer state on line 0");
MGI_STATIC_ASSERT(offsetof(mgi_ring_t, cons_head) == MGI_RING_LINE,
                  "consumer state on its own 128-byte line");
MGI_STATIC_ASSERT(offsetof(mgi_ring_t, size) == 2 * MGI_RING_LINE,
                  "constant state on its own 128-byte line");
MGI_STATIC_ASSERT(sizeof(mgi_ring_t) == MGI_RING_HDR_SIZE,
                  "ring header is three 128-byte lines");

/* ------------------------------------------------------------- helpers */

MGI_INLINE uint32_t mgi_msg_size(uint32_t len)
{
    if (len == MGI_MSG_LEN_EOF) {
        return MGI_MSG_HDR_SIZE + MGI_MSG_EOF_PAYLOAD;
    }
    return MGI_MSG_HDR_SIZE +
           ((len + MGI_MSG_ALIGN - 1) & ~(MGI_MSG_ALIGN - 1));
}

MGI_INLINE size_t mgi_ring_mem_size(uint32_t size, uint32_t seg_size)
{
    return MGI_RING_HDR_SIZE + (size_t)size * seg_size;
}

MGI_INLINE uint32_t mgi_ring_cap(const mgi_ring_t *r)
{
    return r->seg_size - MGI_SEG_HDR_SIZE;
}

MGI_INLINE mgi_seg_hdr_t *mgi_ring_seg(mgi_ring_t *r, uint32_t pos)
{
    return (mgi_seg_hdr_t*)((char*)r + MGI_RING_HDR_SIZE +
                            (size_t)(pos & r->mask) * r->seg_size);
}

/* A producer's add to a slot's STail (acq: the slot is first seen by the
 * add, which acquires the consumer's resets of it). */
MGI_INLINE uint64_t mgi_ring_stail_add(const mgi_ring_t *r,
                                       mgi_seg_hdr_t *seg, uint32_t sz,
                                       int acq)
{
    if (r->flags & MGI_RING_F_SYS) {
        return mgi_fadd64_sys(&seg->stail, sz);
    }
    return acq ? mgi_fadd64_acq(&seg->stail, sz) : mgi_fadd64(&seg->stail, sz);
}

/* RTail from slot t to the next (a producer that closed slot t, or helps a
 * closed one on). */
MGI_INLINE void mgi_ring_tail_pass(mgi_ring_t *r, uint32_t t)
{
    if (r->flags & MGI_RING_F_SYS) {
        mgi_cas32_sys(&r->prod_tail, t, t + 1);
    } else {
        mgi_cas32(&r->prod_tail, t, t + 1);
    }
}

/* A producer's commit of n bytes of slot seg, after its writes there. */
MGI_INLINE void mgi_ring_commit_add(const mgi_ring_t *r, mgi_seg_hdr_t *seg,
                                    uint32_t n)
{
    if (r->flags & MGI_RING_F_SYS) {
        mgi_add_rel32_sys(&seg->commit, n);
    } else {
        mgi_add_rel32(&seg->commit, n);
    }
}

/* Offset of slot `pos` from the ring start: for addressing a remote ring. */
MGI_INLINE size_t mgi_ring_seg_offset(const mgi_ring_t *r, uint32_t pos)
{
    return MGI_RING_HDR_SIZE + (size_t)(pos & r->mask) * r->seg_size;
}

MGI_INLINE char *mgi_seg_payload(mgi_seg_hdr_t *seg)
{
    return (char*)seg + MGI_SEG_HDR_SIZE;
}

/* A look, relaxed loads that go out together: no slot published past
 * RHead. In append mode the segment at RTail is the open one, so nothing
 * is ready to consume; a stale answer is only late (the next look sees). */
MGI_INLINE int mgi_ring_looks_empty(const mgi_ring_t *r)
{
    return mgi_ld_rlx32(&r->prod_tail) == mgi_ld_rlx32(&r->cons_tail);
}

/* Occupied slots, as seen from any side. */
MGI_INLINE uint32_t mgi_ring_count(const mgi_ring_t *r)
{
    return mgi_ld_acq32(&r->prod_tail) - mgi_ld_acq32(&r->cons_tail);
}

/* Host-side initialization of ring memory of mgi_ring_mem_size() bytes.
 * size must be a power of two, seg_size a multiple of 128. */
MGI_INLINE int mgi_ring_init(mgi_ring_t *r, uint32_t size, uint32_t seg_size,
                             uint32_t flags)
{
    uint32_t i;

    if ((size == 0) || ((size & (size - 1)) != 0) ||
        (seg_size % MGI_RING_LINE) != 0 || (seg_size < MGI_RING_LINE)) {
        return -1;
    }
    memset(r, 0, MGI_RING_HDR_SIZE);
    r->size     = size;
    r->mask     = size - 1;
    r->seg_size = seg_size;
    r->flags    = flags;
    for (i = 0; i < size; ++i) {
        mgi_seg_hdr_t *seg = mgi_ring_seg(r, i);
        seg->stail    = (uint64_t)i << 32;
        seg->commit   = 0;
        seg->reserved = 0;
    }
    return 0;
}

/* Copy len bytes between buffers whose ends may be unaligned. On the GPU
 * in words where the pointers allow (memcpy of a run-time length there is
 * a byte loop: a 64-byte tuple took 64 stores); memcpy on the host. */
MGI_INLINE void mgi_copy_bytes(void *dst, const void *src, uint32_t len)
{
#if defined(__CUDA_ARCH__)
    const uintptr_t a = (uintptr_t)dst | (uintptr_t)src;
    char *d           = (char*)dst;
    const char *s     = (const char*)src;
    uint32_t i        = 0;

    if ((a % 8) == 0) {
        for (; i + 8 <= len; i += 8) {
            *(uint64_t*)(d + i) = *(const uint64_t*)(s + i);
        }
    } else if ((a % 4) == 0) {
        for (; i + 4 <= len; i += 4) {
            *(uint32_t*)(d + i) = *(const uint32_t*)(s + i);
        }
    }
    for (; i < len; ++i) {
        d[i] = s[i];
    }
#else
    memcpy(dst, src, len);
#endif
}

/* ------------------------------------------------- append mode: producers */

MGI_INLINE void mgi_seg_write_pad(mgi_seg_hdr_t *seg, uint32_t off,
                                  uint32_t bytes)
{
    mgi_msg_hdr_t *h = (mgi_msg_hdr_t*)(mgi_seg_payload(seg) + off);

    h->ch  = MGI_MSG_CH_PAD;
    h->dst = MGI_EP_ID_ALL;
    h->src = MGI_EP_ID_ALL;
    h->len = (uint16_t)((bytes - MGI_MSG_HDR_SIZE) / MGI_MSG_ALIGN);
}

/* Content mark of a segment (mgi_seg_hdr_t::reserved) in append-mode
 * rings: 0 nothing marked yet, MGI_SEG_KEY(ch, dst) + 1 while every message
 * appended is of one channel for one destination endpoint, MGI_SEG_MIXED
 * once two differ or one is an EOF or a broadcast. A producer marks its
 * reservation before it commits it, so a consumer that found the segment
 * full reads the mark of everything in it; padding needs no mark. GPU
 * sorters move a segment with one key whole, without walking it. */
#define MGI_SEG_KEY(_ch, _dst)  (((uint32_t)(_dst) << 16) | (uint32_t)(_ch))
#define MGI_SEG_MIXED           0xffffffffu

/* A segment of a final ring that refers to a segment elsewhere (a receive
 * lane's or a stage ring's, on the same GPU) instead of holding messages:
 * its payload starts with an mgi_seg_ref_t. The consumer reads the
 * messages where they are and, once it drained them, stores MGI_SEG_READ
 * into *done before it releases the
 * final segment (mgi_ring_peek_data, mgi_ring_release_data). Not a mark:
 * a key's destination is never MGI_EP_ID_ALL (a broadcast marks MIXED). */
#define MGI_SEG_REF             0xfffffffeu

/* The mark of a segment that holds EOF records only (and padding): a GPU
 * sorter closes a sort ring's open segment before it appends an EOF and
 * after, so the tuples before the EOF keep their segment's key, and the
 * next hop's sorter counts these EOFs in lane order after the whole moves
 * before them, without walking the segment (mgi_gpu_lane_whole). Marked
 * with mgi_seg_mark(seg, MGI_SEG_EOF_KEY): a tuple appended beside an EOF
 * makes the segment MIXED, like any two unlike keys. Not a key: its
 * destination is MGI_EP_ID_ALL. */
#define MGI_SEG_EOFS            0xfffffffdu
#define MGI_SEG_EOF_KEY         (MGI_SEG_EOFS - 1)

typedef struct mgi_seg_ref {
    mgi_seg_hdr_t *seg;   /* the segment holding the messages */
    uint32_t      *done;  /* set to MGI_SEG_READ by the consumer once
                           * drained */
    uint32_t      nseg;   /* a sort ring's reference (MGI_SEND_ZCOPY):
                           * the stage segments from `seg` on that it
                           * stands for, side by side; else 1 */
    uint32_t      pad;
} mgi_seg_ref_t;

/* What a consumer stores into mgi_seg_ref_t::done once it drained the
 * referred segment: a lane job's `done`, or the referred stage segment's
 * own `commit` word (a full segment's is its capacity, a multiple of 16,
 * and 0 once recycled: 1 is neither) */
#define MGI_SEG_READ            1u

/* The mark key of a message: its (channel, destination), or MIXED. */
MGI_INLINE uint32_t mgi_msg_key(const mgi_msg_hdr_t *h)
{
    return ((h->len == MGI_MSG_LEN_EOF) || (h->dst == MGI_EP_ID_ALL)) ?
           MGI_SEG_MIXED : MGI_SEG_KEY(h->ch, h->dst);
}

/* Mark seg for a reservation of messages of `key` (MGI_SEG_KEY or
 * MGI_SEG_MIXED). MIXED is final: the first mark is a CAS from 0, one that
 * finds another mark stores MIXED. One round trip: the CAS answers with
 * the mark there (a load first cost a second one on a fresh segment). */
MGI_INLINE uint32_t mgi_seg_mark_want(uint32_t key)
{
    return (key == MGI_SEG_MIXED) ? MGI_SEG_MIXED : key + 1;
}

/* The mark in two halves, so a producer can write its messages while the
 * CAS is under way: mgi_seg_mark_end(seg, mgi_seg_mark_begin(seg, key),
 * key) is mgi_seg_mark(seg, key). Both before the commit. MIXED needs no
 * CAS: whatever mark is there, the segment ends MIXED, so it is stored
 * without waiting for an answer (the commit's release orders it). */
MGI_INLINE uint32_t mgi_seg_mark_begin(mgi_seg_hdr_t *seg, uint32_t key)
{
    if (key == MGI_SEG_MIXED) {
        mgi_st_rlx32(&seg->reserved, MGI_SEG_MIXED);
        return MGI_SEG_MIXED;
    }
    return mgi_cas32_old(&seg->reserved, 0, mgi_seg_mark_want(key));
}

MGI_INLINE void mgi_seg_mark_end(mgi_seg_hdr_t *seg, uint32_t old,
                                 uint32_t key)
{
    if ((old != 0) && (old != mgi_seg_mark_want(key))) {
        mgi_st_rel32(&seg->reserved, MGI_SEG_MIXED);
    }
}

MGI_INLINE void mgi_seg_mark(mgi_seg_hdr_t *seg, uint32_t key)
{
    mgi_seg_mark_end(seg, mgi_seg_mark_begin(seg, key), key);
}

/* The same for a segment of ring r: at system scope in a MGI_RING_F_SYS
 * ring (its producers may be on several GPUs). */
MGI_INLINE uint32_t mgi_ring_mark_begin(const mgi_ring_t *r,
                                        mgi_seg_hdr_t *seg, uint32_t key)
{
    if ((r->flags & MGI_RING_F_SYS) && (key != MGI_SEG_MIXED)) {
        return mgi_cas32_old_sys(&seg->reserved, 0, mgi_seg_mark_want(key));
    }
    return mgi_seg_mark_begin(seg, key);
}

MGI_INLINE void mgi_ring_mark(const mgi_ring_t *r, mgi_seg_hdr_t *seg,
                              uint32_t key)
{
    mgi_seg_mark_end(seg, mgi_ring_mark_begin(r, seg, key), key);
}

/* Pads [off, min(off + sz, cap)) and commits it; returns 1 when this
 * reservation crossed the end of the segment (closed it). */
MGI_INLINE int mgi_seg_pad_reservation(const mgi_ring_t *r,
                                       mgi_seg_hdr_t *seg, uint32_t off,
                                       uint32_t sz)
{
    const uint32_t cap = mgi_ring_cap(r);
    uint32_t end;

    if (off >= cap) {
        return 0;
    }
    end = (off + sz > cap) ? cap : off + sz;
    mgi_seg_write_pad(seg, off, end - off);
    mgi_ring_commit_add(r, seg, end - off);
    return (off + sz >= cap);
}

/* RTail's slot as a producer finds it: MGI_RING_OK with the slot, its
 * segment and its STail when the slot is in its current generation (free,
 * or being filled); MGI_RING_FULL when the consumer has not recycled it
 * yet. No load of RHead: the consumer recycles slot t (mgi_ring_seg_recycle:
 * generation t, a release store) before RHead passes it, so generation t
 * means the slot is free and its last reader done with it, an older one
 * that the ring is full, a newer one that RTail moved on since we read it
 * (read again). */
MGI_INLINE int mgi_ring_tail_seg(mgi_ring_t *r, uint32_t *t_p,
                                 mgi_seg_hdr_t **seg_p, uint64_t *st_p)
{
    mgi_seg_hdr_t *seg;
    uint64_t st;
    uint32_t t, gen;

    for (;;) {
        t   = mgi_ld_acq32(&r->prod_tail);
        seg = mgi_ring_seg(r, t);
        st  = mgi_ld_acq64(&seg->stail);
        gen = (uint32_t)(st >> 32);
        if (gen == t) {
            *t_p   = t;
            *seg_p = seg;
            *st_p  = st;
            return MGI_RING_OK;
        }
        if ((int32_t)(gen - t) < 0) {
            return MGI_RING_FULL;
        }
    }
}

/**
 * Reserve sz bytes (a multiple of 8) at STail of the RTail segment.
 * On MGI_RING_OK, write the message at payload + *off_p and then call
 * mgi_ring_append_commit(). MGI_RING_FULL: no free segment (Send returns 0).
 *
 * A reservation that finds its slot closed (another producer's took the
 * rest, or ours crossed the end and was padded) helps RTail on and adds at
 * the next slot at once: that slot's generation, which the add returns,
 * says whether it is free, as mgi_ring_tail_seg's load would, and RTail is
 * past the closed slot, so the next slot is at RTail or behind it. A slot
 * that is not free (a full ring, or RTail moved on since) goes back to
 * RTail's load. A slot passed this way cost six dependent round trips
 * (the add, RTail and STail, the help, RTail and STail again), now two
 * that overlap. On one H100 a GPU sorter's whole-segment moves reserved
 * in 7.9 k cycles against 9.5 k; its walked passes rarely met a closed
 * slot.
 */
MGI_INLINE int mgi_ring_append_reserve(mgi_ring_t *r, uint32_t sz,
                                       mgi_seg_hdr_t **seg_p,
                                       uint32_t *off_p, uint32_t *pos_p)
{
    const uint32_t cap = mgi_ring_cap(r);
    mgi_seg_hdr_t *seg;
    uint64_t st;
    uint32_t t, gen, off;
    int next = 0;   /* 1: t is the slot after one we found closed */

    for (;;) {
        if (!next) {
            if (mgi_ring_tail_seg(r, &t, &seg, &st) != MGI_RING_OK) {
                return MGI_RING_FULL;
            }
            if ((uint32_t)st >= cap) {
                mgi_ring_tail_pass(r, t); /* help a closed one */
                continue;
            }
        }
        /* the next slot is first seen by the add: it acquires, so the
         * consumer's resets of the slot (before its release store of the
         * generation) come before our mark and commit; RTail's slot was
         * acquired by the load of its STail */
        st  = mgi_ring_stail_add(r, seg, sz, next);
        gen = (uint32_t)(st >> 32);
        off = (uint32_t)st;
        if (gen != t) {
            /* recycled under us, or (next) not free yet: give the space
             * back as a pad, so our messages never overtake each other,
             * and read RTail again */
            mgi_seg_pad_reservation(r, seg, off, sz);
            next = 0;
            continue;
        }
        if (off + sz > cap) {
            /* closed: by ours, padded, or before it */
            mgi_seg_pad_reservation(r, seg, off, sz);
            mgi_ring_tail_pass(r, t);
            ++t;
            seg  = mgi_ring_seg(r, t);
            next = 1;
            continue;
        }
        *seg_p = seg;
        *off_p = off;
        *pos_p = t;
        return MGI_RING_OK;
    }
}

/* A producer's hint for mgi_ring_append_reserve_hint: the ring and slot of
 * its last reservation that took (the next slot once that one filled its
 * segment). ring NULL, or another ring: no hint. It may start
 * uninitialized (a block's shared memory at a kernel's start). */
typedef struct mgi_ring_hint {
    mgi_ring_t *ring;
    uint32_t   t;
    uint32_t   fresh;   /* t is a slot this producer has not reserved in
                         * yet: the add acquires (any value is safe) */
} mgi_ring_hint_t;

/* mgi_ring_append_reserve, first trying the hinted slot: RTail's load
 * beside one atomic when RTail has not moved on since the last
 * reservation, instead of RTail's load, the slot's STail load and the
 * atomic, three dependent round trips. Any hint is safe, a garbage one
 * too: the reservation counts only in the slot's current generation and
 * at or behind RTail as loaded (a free slot ahead of RTail has its
 * generation too, and the producer's next reservations could land before
 * it); else it is padded, as one that raced a recycle is
 * (mgi_ring_append_reserve), and the reserve goes the usual way. A
 * failed reserve (MGI_RING_FULL) drops the hint: the next call looks
 * before it adds, so a producer retrying on a full ring adds nothing to
 * a full slot's STail (a blind add per retry overflowed its 32-bit
 * offset into the generation after a few hundred thousand retries). */
MGI_INLINE int mgi_ring_append_reserve_hint(mgi_ring_t *r, uint32_t sz,
                                            mgi_ring_hint_t *hint,
                                            mgi_seg_hdr_t **seg_p,
                                            uint32_t *off_p, uint32_t *pos_p)
{
    const uint32_t cap = mgi_ring_cap(r);
    mgi_seg_hdr_t *seg;
    uint32_t t, rt, off;
    uint64_t st;
    int ret;

    if (hint->ring == r) {
        t   = hint->t;
        seg = mgi_ring_seg(r, t);
        /* relaxed: a value RTail had; its round trip overlaps the add's.
         * A slot first seen by the add acquires, as in
         * mgi_ring_append_reserve: the consumer's resets of it come
         * before our mark and commit */
        rt  = *(volatile uint32_t*)&r->prod_tail;
        st  = mgi_ring_stail_add(r, seg, sz, hint->fresh);
        off = (uint32_t)st;
        if (((uint32_t)(st >> 32) == t) && (off + sz <= cap) &&
            ((int32_t)(t - rt) <= 0)) {
            *seg_p  = seg;
            *off_p  = off;
            *pos_p  = t;
            hint->fresh = (off + sz == cap);
            hint->t     = hint->fresh ? t + 1 : t;
            return MGI_RING_OK;
        }
        if (mgi_seg_pad_reservation(r, seg, off, sz) &&
            ((uint32_t)(st >> 32) == t)) {
            mgi_ring_tail_pass(r, t); /* we closed slot t */
        }
    }
    ret = mgi_ring_append_reserve(r, sz, seg_p, off_p, pos_p);
    if (ret == MGI_RING_OK) {
        hint->ring  = r;
        hint->fresh = (*off_p + sz == cap);
        hint->t     = hint->fresh ? *pos_p + 1 : *pos_p;
    } else {
        hint->ring = NULL;
    }
    return ret;
}

/* mgi_ring_append_reserve_hint for a reservation committed much later (a
 * GPU sorter's whole moves: reserved at their issue, committed once a
 * helper copied them); hint NULL: none (mgi_ring_append_reserve). One
 * that fills its slot passes RTail at once, as
 * its commit would (whose pass then finds RTail on and does nothing):
 * else RTail stays at the filled slot until the commit, so this producer's
 * next reservation missed its hint (the next slot is ahead of RTail), and
 * the way around it (RTail, STail, the add that finds the slot closed, the
 * pass, the add at the next slot) took about five dependent round trips.
 * Consumers of an append ring read a slot once its commits fill it, not
 * by RTail, and other producers already pass a closed slot before its
 * reservations are committed. */
MGI_INLINE int mgi_ring_append_reserve_late(mgi_ring_t *r, uint32_t sz,
                                            mgi_ring_hint_t *hint,
                                            mgi_seg_hdr_t **seg_p,
                                            uint32_t *off_p, uint32_t *pos_p)
{
    const int ret = (hint != NULL) ?
                    mgi_ring_append_reserve_hint(r, sz, hint, seg_p, off_p,
                                                 pos_p) :
                    mgi_ring_append_reserve(r, sz, seg_p, off_p, pos_p);

    if ((ret == MGI_RING_OK) && (*off_p + sz == mgi_ring_cap(r))) {
        mgi_ring_tail_pass(r, *pos_p);
    }
    return ret;
}

/* Would mgi_ring_append_reserve(r, sz) find room now? A look only (no
 * reservation, nothing padded): a consumer that places one input in
 * several rings checks them all first, since reservations it cannot use
 * become padding. Another producer may take the room before the reserve,
 * so the reserve can still fail. *t_p: RTail as the look loaded it, for
 * mgi_ring_append_reserve_at. Relaxed loads: RTail's and RHead's go out
 * together, and only a look acts on them. */
MGI_INLINE int mgi_ring_append_look(mgi_ring_t *r, uint32_t sz,
                                    uint32_t *t_p)
{
    const uint32_t t = mgi_ld_rlx32(&r->prod_tail);
    const uint32_t c = mgi_ld_rlx32(&r->cons_tail);
    uint64_t st;

    *t_p = t;
    if (t - c >= r->size) {
        return 0;
    }
    if (t - c + 1 < r->size) {
        return 1;   /* a free segment after the RTail one */
    }
    st = mgi_ld_acq64(&mgi_ring_seg(r, t)->stail);
    return ((uint32_t)(st >> 32) != t) ||
           ((uint32_t)st + sz <= mgi_ring_cap(r));
}

MGI_INLINE int mgi_ring_append_room(mgi_ring_t *r, uint32_t sz)
{
    uint32_t t;

    return mgi_ring_append_look(r, sz, &t);
}

/* mgi_ring_append_reserve after a look that found room with RTail at t:
 * one add at slot t (mgi_ring_append_reserve_hint, the slot first seen by
 * the add), instead of RTail's and STail's loads before it; the usual way
 * when slot t has moved on or has no room left. */
MGI_INLINE int mgi_ring_append_reserve_at(mgi_ring_t *r, uint32_t sz,
                                          uint32_t t, mgi_seg_hdr_t **seg_p,
                                          uint32_t *off_p, uint32_t *pos_p)
{
    mgi_ring_hint_t hint;

    hint.ring  = r;
    hint.t     = t;
    hint.fresh = 1;
    return mgi_ring_append_reserve_hint(r, sz, &hint, seg_p, off_p, pos_p);
}

MGI_INLINE void mgi_ring_append_commit(mgi_ring_t *r, mgi_seg_hdr_t *seg,
                                       uint32_t off, uint32_t sz, uint32_t pos)
{
    mgi_ring_commit_add(r, seg, sz);
    if (off + sz == mgi_ring_cap(r)) {
        mgi_ring_tail_pass(r, pos);
    }
}

/* Append one message. Returns MGI_RING_OK or MGI_RING_FULL. */
/* Give back a reservation that will not be used: padded and committed
 * (the consumer skips it). */
MGI_INLINE void mgi_ring_append_cancel(mgi_ring_t *r, mgi_seg_hdr_t *seg,
                                       uint32_t off, uint32_t sz, uint32_t pos)
{
    mgi_seg_write_pad(seg, off, sz);
    mgi_ring_append_commit(r, seg, off, sz, pos);
}

MGI_INLINE int mgi_ring_append(mgi_ring_t *r, const mgi_msg_hdr_t *hdr,
                               const void *payload, uint32_t *pos_p)
{
    uint32_t sz = mgi_msg_size(hdr->len);
    uint32_t plen = (hdr->len == MGI_MSG_LEN_EOF) ? MGI_MSG_EOF_PAYLOAD :
                    hdr->len;
    mgi_seg_hdr_t *seg;
    uint32_t off, pos;
    char *p;

    if (mgi_ring_append_reserve(r, sz, &seg, &off, &pos) != MGI_RING_OK) {
        return MGI_RING_FULL;
    }
    p = mgi_seg_payload(seg) + off;
    *(mgi_msg_hdr_t*)p = *hdr;
    mgi_copy_bytes(p + MGI_MSG_HDR_SIZE, payload, plen);
    mgi_seg_mark(seg, mgi_msg_key(hdr));
    mgi_ring_append_commit(r, seg, off, sz, pos);
    if (pos_p != NULL) {
        *pos_p = pos;
    }
    return MGI_RING_OK;
}

/**
 * Close the RTail segment if it holds data, so the consumer can take a
 * partial batch (Flush). Returns MGI_RING_OK, or MGI_RING_FULL when the ring
 * has no free segment to move on to (retry later).
 */
MGI_INLINE int mgi_ring_append_close(mgi_ring_t *r)
{
    const uint32_t cap = mgi_ring_cap(r);
    mgi_seg_hdr_t *seg;
    uint64_t st;
    uint32_t t, off;

    for (;;) {
        if (mgi_ring_tail_seg(r, &t, &seg, &st) != MGI_RING_OK) {
            return MGI_RING_FULL;
        }
        off = (uint32_t)st;
        if (off == 0) {
            return MGI_RING_OK; /* empty: nothing to close */
        }
        if (off >= cap) {
            mgi_ring_tail_pass(r, t);
            return MGI_RING_OK;
        }
        st = mgi_ring_stail_add(r, seg, cap, 0);
        if ((uint32_t)(st >> 32) != t) {
            mgi_seg_pad_reservation(r, seg, (uint32_t)st, cap);
            continue;
        }
        if (mgi_seg_pad_reservation(r, seg, (uint32_t)st, cap)) {
            mgi_ring_tail_pass(r, t);
        }
        return MGI_RING_OK;
    }
}

/* ------------------------------------------------------ consumers (RHead) */

/* The segment in slot pos (RHead or a slot behind it) if it is ready,
 * else NULL. Single consumer. *prod: RTail as the consumer last read it;
 * a slot below that needs no new read of RTail. */
MGI_INLINE mgi_seg_hdr_t *mgi_ring_peek_pos(mgi_ring_t *r, uint32_t pos,
                                            uint32_t *prod)
{
    mgi_seg_hdr_t *seg;

    if ((int32_t)(*prod - pos) <= 0) {
        *prod = mgi_ld_acq32(&r->prod_tail);
        if ((int32_t)(*prod - pos) <= 0) {
            return NULL;
        }
    }
    seg = mgi_ring_seg(r, pos);
    if ((r->flags & MGI_RING_F_APPEND) &&
        (mgi_ld_acq32(&seg->commit) != mgi_ring_cap(r))) {
        return NULL;
    }
    return seg;
}

/* The segment idx slots after RHead if it is ready, else NULL. Single
 * consumer. */
MGI_INLINE mgi_seg_hdr_t *mgi_ring_peek(mgi_ring_t *r, uint32_t idx)
{
    uint32_t c = mgi_ld_acq32(&r->cons_tail) + idx, prod = c;

    return mgi_ring_peek_pos(r, c, &prod);
}

/* The messages of a ready segment: the segment itself, or the one a
 * MGI_SEG_REF segment refers to. */
MGI_INLINE mgi_seg_hdr_t *mgi_seg_data(mgi_seg_hdr_t *seg)
{
    if (seg->reserved == MGI_SEG_REF) {
        return ((const mgi_seg_ref_t*)mgi_seg_payload(seg))->seg;
    }
    return seg;
}

/* The RHead segment's messages if it is ready, else NULL (mgi_seg_data).
 * Single consumer. */
MGI_INLINE mgi_seg_hdr_t *mgi_ring_peek_data(mgi_ring_t *r)
{
    mgi_seg_hdr_t *seg = mgi_ring_peek(r, 0);

    return (seg != NULL) ? mgi_seg_data(seg) : NULL;
}

/* Number of consecutive ready segments from RHead, at most max. */
MGI_INLINE uint32_t mgi_ring_ready(mgi_ring_t *r, uint32_t max)
{
    uint32_t n = 0;

    while ((n < max) && (mgi_ring_peek(r, n) != NULL)) {
        ++n;
    }
    return n;
}

/* Recycle slot pos for its next generation (its data was consumed). */
MGI_INLINE void mgi_ring_seg_recycle(mgi_ring_t *r, uint32_t pos)
{
    mgi_seg_hdr_t *seg = mgi_ring_seg(r, pos);

    seg->commit   = 0;
    seg->reserved = 0;
    if (r->flags & MGI_RING_F_SYS) {
        /* the resets before a peer GPU's adds */
        mgi_st_rel64_sys(&seg->stail, (uint64_t)(pos + r->size) << 32);
    } else {
        mgi_st_rel64(&seg->stail, (uint64_t)(pos + r->size) << 32);
    }
}

/* Publish RHead n slots on (recycled with mgi_ring_seg_recycle), the
 * consumer's offsets untouched: they may be those of a segment behind
 * the released ones (the GPU sorter's cons_held). */
MGI_INLINE void mgi_ring_pass_head(mgi_ring_t *r, uint32_t n)
{
    uint32_t c = r->cons_tail;

    r->cons_head = c + n;
    mgi_st_rel32(&r->cons_tail, c + n);
}

/* Move RHead past n slots recycled with mgi_ring_seg_recycle. */
MGI_INLINE void mgi_ring_advance(mgi_ring_t *r, uint32_t n)
{
    r->cons_off  = 0;
    r->cons_part = 0;
    mgi_ring_pass_head(r, n);
}

/* Release n segments at RHead: reset STail (next generation), advance. */
MGI_INLINE void mgi_ring_release(mgi_ring_t *r, uint32_t n)
{
    uint32_t c = r->cons_tail;
    uint32_t i;

    for (i = 0; i < n; ++i) {
        mgi_ring_seg_recycle(r, c + i);
    }
    mgi_ring_advance(r, n);
}

/* Release the drained RHead segment of mgi_ring_peek_data: a reference
 * first tells its owner that the referred segment is read. */
MGI_INLINE void mgi_ring_release_data(mgi_ring_t *r)
{
    mgi_seg_hdr_t *seg = mgi_ring_seg(r, r->cons_tail);

    if (seg->reserved == MGI_SEG_REF) {
        /* our reads of the referred segment before its owner reuses it */
        mgi_st_rel32(((mgi_seg_ref_t*)mgi_seg_payload(seg))->done,
                     MGI_SEG_READ);
    }
    mgi_ring_release(r, 1);
}

/* Walk the messages of a full segment: returns the message at *off and
 * moves *off past it, skipping pads; NULL at the end. */
MGI_INLINE mgi_msg_hdr_t *mgi_seg_next(mgi_seg_hdr_t *seg, uint32_t cap,
                                       uint32_t *off)
{
    mgi_msg_hdr_t *h;

    while (*off + MGI_MSG_HDR_SIZE <= cap) {
        h = (mgi_msg_hdr_t*)(mgi_seg_payload(seg) + *off);
        if (h->ch == MGI_MSG_CH_PAD) {
            *off += MGI_MSG_HDR_SIZE + (uint32_t)h->len * MGI_MSG_ALIGN;
            continue;
        }
        return h;
    }
    return NULL;
}

/* Tuple consumers of final rings. A message of a channel with a schema
 * holds one or more whole tuples of `tuple` bytes (senders batch the
 * tuples of one destination into one message, paper §5.3); a consumer
 * takes whole tuples and may take a message in parts: r->cons_part bytes
 * of the message at r->cons_off are taken already. Schemaless channels
 * (tuple 0): a message is one tuple, taken whole or not at all.
 *
 * The payload bytes of h, not yet taken, that whole tuples fit in `room`. */
MGI_INLINE uint32_t mgi_msg_take(const mgi_msg_hdr_t *h, uint32_t part,
                                 uint32_t tuple, size_t room)
{
    const uint32_t rem = (uint32_t)h->len - part;

    if (rem <= room) {
        return rem;
    }
    return (tuple == 0) ? 0 : (uint32_t)(room / tuple) * tuple;
}

/* After `take` more bytes of the message h at off: a consumer's position
 * (*pos_off, *pos_part: the part of the message taken before) moves past
 * the message once it is all taken. */
MGI_INLINE void mgi_msg_step(const mgi_msg_hdr_t *h, uint32_t off,
                             uint32_t take, uint32_t *pos_off,
                             uint32_t *pos_part)
{
    if (*pos_part + take >= h->len) {
        *pos_off  = off + mgi_msg_size(h->len);
        *pos_part = 0;
    } else {
        *pos_off   = off;
        *pos_part += take;
    }
}

/* The same for the consumer's fields of ring r. */
MGI_INLINE void mgi_msg_taken(mgi_ring_t *r, const mgi_msg_hdr_t *h,
                              uint32_t off, uint32_t take)
{
    mgi_msg_step(h, off, take, &r->cons_off, &r->cons_part);
}

/* One consumer of a final ring (host mgi_recv, device mgi_dev_recv): whole
 * tuples of the ready segments into buf, at most cap bytes, a message
 * taken in parts where cap ends in it, drained segments released;
 * schemaless (tuple 0): one message. Returns the bytes copied; *unfit_p
 * (when not NULL) is the message that did not fit, or NULL. */
MGI_INLINE size_t mgi_ring_take(mgi_ring_t *r, void *buf, size_t cap,
                                uint32_t tuple,
                                const mgi_msg_hdr_t **unfit_p)
{
    const uint32_t scap       = mgi_ring_cap(r);
    const mgi_msg_hdr_t *unfit = NULL;
    size_t done               = 0;
    uint32_t off, part, take;
    mgi_seg_hdr_t *seg;
    mgi_msg_hdr_t *h;

    while ((seg = mgi_ring_peek_data(r)) != NULL) {
        off = r->cons_off;
        while ((h = mgi_seg_next(seg, scap, &off)) != NULL) {
            part = r->cons_part;
            take = mgi_msg_take(h, part, tuple, cap - done);
            if (take == 0) {
                unfit = h;
                break;
            }
            mgi_copy_bytes((char*)buf + done,
                           (char*)h + MGI_MSG_HDR_SIZE + part, take);
            done += take;
            mgi_msg_taken(r, h, off, take);
            off = r->cons_off;
            if ((tuple == 0) || (r->cons_part != 0)) {
                break; /* one schemaless tuple, or buf is full */
            }
        }
        r->cons_off = off;
        if (mgi_seg_next(seg, scap, &off) != NULL) {
            break;
        }
        mgi_ring_release_data(r);
        if (tuple == 0) {
            break;
        }
    }
    if (unfit_p != NULL) {
        *unfit_p = unfit;
    }
    return done;
}

/* ------------------------------------- segment mode: bulk enqueue/dequeue */

/* Multi-producer bulk enqueue of n whole segments (each seg_size bytes,
 * header included). All or nothing: returns n or 0. */
MGI_INLINE uint32_t mgi_ring_enqueue_bulk(mgi_ring_t *r, const void *segs,
                                          uint32_t n)
{
    uint32_t head, i;

    do {
        head = mgi_ld_acq32(&r->prod_head);
        if (r->size - (head - mgi_ld_acq32(&r->cons_tail)) < n) {
            return 0;
        }
    } while (!mgi_cas32(&r->prod_head, head, head + n));

    for (i = 0; i < n; ++i) {
        memcpy(mgi_ring_seg(r, head + i),
               (const char*)segs + (size_t)i * r->seg_size, r->seg_size);
    }
    /* publish in reservation order */
    while (mgi_ld_acq32(&r->prod_tail) != head) {
        mgi_cpu_relax();
    }
    mgi_st_rel32(&r->prod_tail, head + n);
    return n;
}

/* Multi-consumer bulk dequeue of n whole segments. Returns n or 0. */
MGI_INLINE uint32_t mgi_ring_dequeue_bulk(mgi_ring_t *r, void *segs,
                                          uint32_t n)
{
    uint32_t head, i;

    do {
        head = mgi_ld_acq32(&r->cons_head);
        if (mgi_ld_acq32(&r->prod_tail) - head < n) {
            return 0;
        }
    } while (!mgi_cas32(&r->cons_head, head, head + n));

    for (i = 0; i < n; ++i) {
        memcpy((char*)segs + (size_t)i * r->seg_size,
               mgi_ring_seg(r, head + i), r->seg_size);
    }
    while (mgi_ld_acq32(&r->cons_tail) != head) {
        mgi_cpu_relax();
    }
    mgi_st_rel32(&r->cons_tail, head + n);
    return n;
}

MGI_INLINE uint32_t mgi_ring_enqueue(mgi_ring_t *r, const void *seg)
{
    return mgi_ring_enqueue_bulk(r, seg, 1);
}

MGI_INLINE uint32_t mgi_ring_dequeue(mgi_ring_t *r, void *seg)
{
    return mgi_ring_dequeue_bulk(r, seg, 1);
}

/* ------------------------------------------ mirror: a ring seen from afar */

/**
 * Control-word mirror of an append-mode ring whose segments live where its
 * consumer cannot read control words cheaply (a sort ring in GPU memory,
 * moved by a host mover thread). Segments stay in the ring; only two
 * counters cross, each on its own 128-byte line of memory both sides can
 * reach (pinned host memory mapped into the GPU):
 *   ready     written by the ring's producer side (the sorter): segments
 *             [released, ready) are full and committed, the consumer may
 *             read them in place (e.g. ucp_put_nbx from GPU memory);
 *   released  written by the consumer (the mover) once it is done with
 *             segments below it; the sorter then recycles them in the ring
 *             with mgi_ring_release(), so the ring's own atomics are only
 *             ever touched by the side that owns its memory.
 * Single publisher (one sorter thread or block per ring), single consumer.
 */
typedef struct mgi_ring_mirror {
    uint32_t ready;        /* producer side: segments published */
    uint32_t nrefs;        /* 0, or the ring's size: a table of that many
                            * mgi_ring_mirror_ref_t follows the mirror
                            * (mgi_ring_mirror_refs), written for each
                            * segment before `ready` passes it */
    uint8_t  ready_pad[MGI_RING_LINE - 2 * sizeof(uint32_t)];
    uint32_t released;     /* consumer side: segments given back */
    uint8_t  released_pad[MGI_RING_LINE - sizeof(uint32_t)];
} mgi_ring_mirror_t;

MGI_STATIC_ASSERT(offsetof(mgi_ring_mirror_t, released) == MGI_RING_LINE,
                  "mirror: consumer word on its own 128-byte line");
MGI_STATIC_ASSERT(sizeof(mgi_ring_mirror_t) == 2 * MGI_RING_LINE,
                  "mirror: two 128-byte lines");

/* Where a published segment's data is, for a consumer that cannot read
 * the ring (MGI_SEND_ZCOPY): addr 0, in the ring's own slot; else the
 * segment is a MGI_SEG_REF and its data the `nseg` segments from addr on
 * (stage segments, side by side in the memory of the ring's producer). */
typedef struct mgi_ring_mirror_ref {
    uint64_t addr;
    uint32_t nseg;
    uint32_t pad;
} mgi_ring_mirror_ref_t;

/* The table after a mirror with nrefs > 0: entry pos & (nrefs - 1). */
MGI_INLINE mgi_ring_mirror_ref_t *mgi_ring_mirror_refs(mgi_ring_mirror_t *m)
{
    return (mgi_ring_mirror_ref_t*)(m + 1);
}

/* Bytes of a mirror with a table of nrefs entries (0: none). */
MGI_INLINE size_t mgi_ring_mirror_size(uint32_t nrefs)
{
    return sizeof(mgi_ring_mirror_t) +
           (size_t)nrefs * sizeof(mgi_ring_mirror_ref_t);
}

/* Producer side: mirror of a freshly initialized ring; nrefs: 0, or the
 * ring's size for a table of references (mgi_ring_mirror_size). */
MGI_INLINE void mgi_ring_mirror_init(mgi_ring_mirror_t *m, const mgi_ring_t *r,
                                     uint32_t nrefs)
{
    memset(m, 0, mgi_ring_mirror_size(nrefs));
    m->ready    = r->cons_tail;
    m->released = r->cons_tail;
    m->nrefs    = nrefs;
}

/* Producer side: slots from the mirror's `ready` on that are closed (below
 * RTail) and still in the ring; mgi_ring_seg_full tells which are done. */
MGI_INLINE uint32_t mgi_ring_mirror_closed(mgi_ring_t *r,
                                           const mgi_ring_mirror_t *m)
{
    uint32_t n = mgi_ld_acq32(&r->prod_tail) - m->ready;

    if ((int32_t)n < 0) {
        return 0;
    }
    return (n < r->size - (m->ready - r->cons_tail)) ?
           n : r->size - (m->ready - r->cons_tail);
}

/* Slot pos holds a fully committed segment. */
MGI_INLINE int mgi_ring_seg_full(mgi_ring_t *r, uint32_t pos)
{
    return mgi_ld_acq32(&mgi_ring_seg(r, pos)->commit) == mgi_ring_cap(r);
}

/* Producer side: recycle what the consumer released, then publish the
 * segments that became ready. Returns segments published + recycled. */
MGI_INLINE uint32_t mgi_ring_mirror_sync(mgi_ring_t *r, mgi_ring_mirror_t *m)
{
    uint32_t rel = mgi_ld_acq32(&m->released);
    uint32_t ready = m->ready, n = 0, recycled, c;

    recycled = rel - r->cons_tail;
    if ((int32_t)recycled > 0) {
        mgi_ring_release(r, recycled);
    } else {
        recycled = 0;
    }
    /* segments from `ready` on: closed (below RTail) and fully committed */
    c = mgi_ring_mirror_closed(r, m);
    while ((n < c) && mgi_ring_seg_full(r, ready + n)) {
        ++n;
    }
    if (n > 0) {
        mgi_fence_publish(); /* the mover puts them with a copy engine */
        mgi_st_rel32(&m->ready, ready + n);
    }
    return n + recycled;
}

/* Consumer side: segments ready from position `cons` (its own count of
 * released segments). */
MGI_INLINE uint32_t mgi_ring_mirror_ready(const mgi_ring_mirror_t *m,
                                          uint32_t cons)
{
    return mgi_ld_acq32(&m->ready) - cons;
}

/* Consumer side: give back every segment below `cons`. */
MGI_INLINE void mgi_ring_mirror_release(mgi_ring_mirror_t *m, uint32_t cons)
{
    mgi_st_rel32(&m->released, cons);
}

#endif

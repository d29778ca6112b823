/**
 * MGI regions: what a kernel needs about one registered region (the
 * device handle) and the proxy queue through which a kernel reaches the
 * ranks it has no load/store path to. Plain C, so the host side
 * (mgi_region.c) fills it and runs the proxy; the device calls are in
 * mgi_region_device.cuh.
 *
 * The proxy queue is a ring of request slots in pinned host memory mapped
 * into the GPU. A device thread takes a ticket (an atomic add on a counter
 * in the GPU's own memory, mgi_dev_region_t.ticket: atomics on mapped host
 * memory would need PCIe atomics), waits until its slot is free (ticket -
 * done < depth),
 * fills the slot and publishes it by storing ticket + 1 in the slot's `seq`
 * with a release at system scope. The host proxy takes slots in ticket
 * order, carries them out with UCP RMA and advances `done` (a release)
 * once every request below it is complete at its target. So `done` says:
 * every request with a smaller ticket has landed.
 */
#ifndef MGI_REGION_DEV_H_
#define MGI_REGION_DEV_H_

#include "mgi_ring.h"          /* MGI_INLINE, MGI_RING_LINE */

#include <ucs/type/status.h>
#include <stdint.h>
#if !defined(__CUDA_ARCH__)
#  include <sched.h>
#  include <time.h>
#endif

#define MGI_REGION_PROXY_DEPTH 1024u  /* request slots of a proxy queue: a
                                        * power of two; enough for every
                                        * warp of a full H200 to have one
                                        * request in flight */
#define MGI_REGION_SIG_ALIGN   8u     /* signal words: 64-bit, aligned */

/* operations of a proxy request */
enum {
    MGI_REGION_OP_PUT        = 1,
    MGI_REGION_OP_GET        = 2,
    MGI_REGION_OP_PUT_SIGNAL = 3,    /* put, then the signal word */
    MGI_REGION_OP_SIGNAL     = 4,    /* the signal word alone, after
                                        every earlier request to `peer` */
    MGI_REGION_OP_FENCE      = 5     /* later requests start after the
                                        earlier ones completed */
};

/* Comparisons of wait_signal / test_signal: the wait ends once
 * (word CMP value) holds. */
enum {
    MGI_REGION_CMP_EQ = 0,
    MGI_REGION_CMP_NE = 1,
    MGI_REGION_CMP_GE = 2,    /* unsigned */
    MGI_REGION_CMP_GT = 3
};

/* One request: 64 bytes, two to a GPU sector pair. */
typedef struct mgi_region_req {
    uint64_t seq;        /* ticket + 1 once the slot is filled */
    uint32_t op;         /* MGI_REGION_OP_* */
    uint32_t peer;       /* target rank */
    uint64_t roff;       /* offset in the peer's region */
    uint64_t laddr;      /* local address: put source / get destination */
    uint64_t len;        /* bytes */
    uint64_t sig_off;    /* PUT_SIGNAL / SIGNAL: offset of the word in the
                            peer's region */
    uint64_t sig_val;    /* the value stored there (also the put's
                            source, so it lives until `done` passes) */
    uint64_t pad;
} mgi_region_req_t;

typedef struct mgi_region_proxy {
    uint64_t head;                   /* tickets taken, for a part in host
                                        memory (host threads); a GPU's
                                        are counted in its memory */
    uint8_t  pad0[MGI_RING_LINE - 8];
    uint64_t done;                   /* tickets complete (host) */
    uint64_t status;                 /* 0, or the first failed request's
                                        ucs_status_t (host; the queue
                                        serves nothing after it) */
    uint8_t  pad1[MGI_RING_LINE - 16];
    mgi_region_req_t req[MGI_REGION_PROXY_DEPTH];
} mgi_region_proxy_t;

/* What a kernel needs about one region; passed by value as a kernel
 * argument, valid until mgi_region_deregister. */
typedef struct mgi_dev_region {
    uint32_t           rank;       /* this process's rank */
    uint32_t           nranks;
    char               *base;      /* this rank's part of the region */
    uint64_t           len;
    char *const        *ptrs;      /* [nranks] rank r's part mapped for
                                      this GPU (peer access, CUDA IPC),
                                      NULL: through the proxy; device
                                      memory (host memory, and only this
                                      rank's part mapped, for a part in
                                      host memory) */
    const uint64_t     *lens;      /* [nranks] bytes of each rank's part,
                                      where ptrs is */
    mgi_region_proxy_t *proxy;     /* the proxy queue (mapped host memory
                                      for a part on a GPU); NULL: no
                                      proxy (every rank mapped, or
                                      MGI_REGION_F_NO_PROXY) */
    uint64_t           *ticket;    /* tickets taken: device memory of
                                      this GPU, or the queue's head */
    uint64_t           timeout_ns; /* bound of the device waits
                                      (MGI_TIMEOUT_MS of the context) */
} mgi_dev_region_t;

/* Range check of an access of `len` bytes at `off` in a part of `plen`
 * bytes, without overflow (host and device). */
MGI_INLINE int mgi_region_in_range(uint64_t off, uint64_t len, uint64_t plen)
{
    return (off <= plen) && (len <= plen - off);
}

/* Does (word CMP value) hold? */
MGI_INLINE int mgi_region_cmp(uint64_t word, int cmp, uint64_t value)
{
    switch (cmp) {
    case MGI_REGION_CMP_EQ: return word == value;
    case MGI_REGION_CMP_NE: return word != value;
    case MGI_REGION_CMP_GE: return word >= value;
    case MGI_REGION_CMP_GT: return word > value;
    default:                return 0;
    }
}

MGI_INLINE int mgi_region_cmp_valid(int cmp)
{
    return (cmp >= MGI_REGION_CMP_EQ) && (cmp <= MGI_REGION_CMP_GT);
}

/* ------------------------------------------------------------- atomics
 * On the GPU at system scope: the other side of a proxy queue is a host
 * thread, and a signal word may be stored by another GPU or a NIC. On the
 * host, the compiler's acquire / release. */
#if defined(__CUDA_ARCH__)
MGI_INLINE uint64_t mgi_region_ld_acq(const volatile uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p)
                 : "memory");
    return v;
}
MGI_INLINE uint32_t mgi_region_ld_acq32(const volatile uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p)
                 : "memory");
    return v;
}
MGI_INLINE void mgi_region_st_rel(volatile uint64_t *p, uint64_t v)
{
    asm volatile("st.release.sys.u64 [%0], %1;" :: "l"(p), "l"(v)
                 : "memory");
}
/* the ticket counter is in this GPU's memory, taken by its threads only */
MGI_INLINE uint64_t mgi_region_fadd(uint64_t *p, uint64_t v)
{
    return atomicAdd((unsigned long long*)p, v);
}
MGI_INLINE uint64_t mgi_region_now_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
MGI_INLINE void mgi_region_pause(void)
{
    __nanosleep(64);
}
/* this thread's earlier stores, before its later ones, at every scope */
MGI_INLINE void mgi_region_fence_sys(void)
{
    __threadfence_system();
}
#else
MGI_INLINE uint64_t mgi_region_ld_acq(const volatile uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
MGI_INLINE uint32_t mgi_region_ld_acq32(const volatile uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
MGI_INLINE void mgi_region_st_rel(volatile uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
MGI_INLINE uint64_t mgi_region_fadd(uint64_t *p, uint64_t v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_ACQ_REL);
}
MGI_INLINE uint64_t mgi_region_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
MGI_INLINE void mgi_region_pause(void)
{
    sched_yield();
}
MGI_INLINE void mgi_region_fence_sys(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#endif

/* ------------------------------------------------------- the proxy queue */

/* The proxy's error (a failed request, a rank that ended), UCS_OK while
 * it serves. */
MGI_INLINE ucs_status_t mgi_region_proxy_status(const mgi_dev_region_t *h)
{
    uint64_t st = mgi_region_ld_acq(&h->proxy->status);

    if (st != 0) {
        return (ucs_status_t)(int64_t)st;
    }
    return UCS_OK;
}

/* Post one request (a thread's own). Waits for a free slot, bounded by
 * timeout_ns without progress: a long queue that the proxy drains is no
 * failure, a proxy that completes nothing for that long is. A post that
 * timed out leaves its ticket unfilled: the proxy then fails the queue
 * (UCS_ERR_TIMED_OUT) once it has waited as long for it. */
MGI_INLINE ucs_status_t mgi_region_proxy_post(const mgi_dev_region_t *h,
                                              uint32_t op, uint32_t peer,
                                              uint64_t roff, uint64_t laddr,
                                              uint64_t len, uint64_t sig_off,
                                              uint64_t sig_val)
{
    mgi_region_proxy_t *q = h->proxy;
    uint64_t t, done, seen = 0, deadline = 0;
    mgi_region_req_t *r;
    ucs_status_t st;

    t = mgi_region_fadd(h->ticket, 1);
    while (t - (done = mgi_region_ld_acq(&q->done)) >=
           MGI_REGION_PROXY_DEPTH) {
        st = mgi_region_proxy_status(h);
        if (st != UCS_OK) {
            return st;
        }
        if ((deadline == 0) || (done != seen)) {
            seen     = done;
            deadline = mgi_region_now_ns() + h->timeout_ns;
        } else if (mgi_region_now_ns() > deadline) {
            return UCS_ERR_TIMED_OUT;
        }
        mgi_region_pause();
    }
    r          = &q->req[t & (MGI_REGION_PROXY_DEPTH - 1)];
    r->op      = op;
    r->peer    = peer;
    r->roff    = roff;
    r->laddr   = laddr;
    r->len     = len;
    r->sig_off = sig_off;
    r->sig_val = sig_val;
    mgi_region_st_rel(&r->seq, t + 1);
    return UCS_OK;
}

/* Wait until every request posted before this call (by any thread) is
 * complete at its target, bounded by timeout_ns without progress. */
MGI_INLINE ucs_status_t mgi_region_proxy_quiet(const mgi_dev_region_t *h)
{
    mgi_region_proxy_t *q = h->proxy;
    uint64_t upto = mgi_region_ld_acq(h->ticket), done, seen = 0;
    uint64_t deadline = 0;
    ucs_status_t st;

    while ((done = mgi_region_ld_acq(&q->done)) < upto) {
        st = mgi_region_proxy_status(h);
        if (st != UCS_OK) {
            return st;
        }
        if ((deadline == 0) || (done != seen)) {
            seen     = done;
            deadline = mgi_region_now_ns() + h->timeout_ns;
        } else if (mgi_region_now_ns() > deadline) {
            return UCS_ERR_TIMED_OUT;
        }
        mgi_region_pause();
    }
    return UCS_OK;
}

/* ------------------------------------------- thread-level calls (portable)
 * The calls of one thread, on the GPU (mgi_region_device.cuh adds the
 * warp- and block-level ones) or on a host thread with the handle of a
 * part in host memory. Each returns UCS_OK or an error:
 * UCS_ERR_INVALID_PARAM (a peer, range or signal word out of bounds),
 * UCS_ERR_UNREACHABLE (a rank neither mapped nor served by a proxy),
 * UCS_ERR_TIMED_OUT (a wait passed timeout_ns), or the proxy's error. */

MGI_INLINE ucs_status_t mgi_dev_region_check(const mgi_dev_region_t *h,
                                             uint32_t peer, uint64_t off,
                                             uint64_t len)
{
    if ((peer >= h->nranks) || !mgi_region_in_range(off, len, h->lens[peer])) {
        return UCS_ERR_INVALID_PARAM;
    }
    if ((h->ptrs[peer] == NULL) && (h->proxy == NULL)) {
        return UCS_ERR_UNREACHABLE;
    }
    return UCS_OK;
}

MGI_INLINE ucs_status_t mgi_dev_region_check_sig(const mgi_dev_region_t *h,
                                                 uint32_t peer,
                                                 uint64_t sig_off)
{
    if ((sig_off % MGI_REGION_SIG_ALIGN) != 0) {
        return UCS_ERR_INVALID_PARAM;
    }
    return mgi_dev_region_check(h, peer, sig_off, sizeof(uint64_t));
}

/* Bytes from src to dst by one thread: 16-byte words where both allow. */
MGI_INLINE void mgi_region_copy_thread(void *dst, const void *src,
                                       uint64_t len)
{
#if defined(__CUDA_ARCH__)
    uint64_t i = 0;

    if ((((uintptr_t)dst | (uintptr_t)src) % 16) == 0) {
        for (; i + 16 <= len; i += 16) {
            *(uint4*)((char*)dst + i) = *(const uint4*)((const char*)src + i);
        }
    }
    for (; i < len; ++i) {
        ((char*)dst)[i] = ((const char*)src)[i];
    }
#else
    memcpy(dst, src, len);
#endif
}

/* Load len bytes of rank peer's part at off into dst. Through the proxy,
 * dst holds them once mgi_dev_region_quiet returned; mapped, at return. */
MGI_INLINE ucs_status_t mgi_dev_region_get(const mgi_dev_region_t *h,
                                           void *dst, uint32_t peer,
                                           uint64_t off, uint64_t len)
{
    ucs_status_t st = mgi_dev_region_check(h, peer, off, len);

    if ((st != UCS_OK) || (len == 0)) {
        return st;
    }
    if (h->ptrs[peer] != NULL) {
        mgi_region_copy_thread(dst, h->ptrs[peer] + off, len);
        return UCS_OK;
    }
    return mgi_region_proxy_post(h, MGI_REGION_OP_GET, peer, off,
                                 (uint64_t)(uintptr_t)dst, len, 0, 0);
}

/* Store len bytes at src into rank peer's part at off. Complete at the
 * target (and src free to change, through the proxy) once
 * mgi_dev_region_quiet returned. */
MGI_INLINE ucs_status_t mgi_dev_region_put(const mgi_dev_region_t *h,
                                           uint32_t peer, uint64_t off,
                                           const void *src, uint64_t len)
{
    ucs_status_t st = mgi_dev_region_check(h, peer, off, len);

    if ((st != UCS_OK) || (len == 0)) {
        return st;
    }
    if (h->ptrs[peer] != NULL) {
        mgi_region_copy_thread(h->ptrs[peer] + off, src, len);
        return UCS_OK;
    }
    return mgi_region_proxy_post(h, MGI_REGION_OP_PUT, peer, off,
                                 (uint64_t)(uintptr_t)src, len, 0, 0);
}

/* Store `value` into the signal word at sig_off of rank peer's part after
 * every put this thread made to that rank before (mapped: a fence at
 * system scope and a release store; proxy: the earlier requests complete
 * first). */
MGI_INLINE ucs_status_t mgi_dev_region_signal(const mgi_dev_region_t *h,
                                              uint32_t peer, uint64_t sig_off,
                                              uint64_t value)
{
    ucs_status_t st = mgi_dev_region_check_sig(h, peer, sig_off);

    if (st != UCS_OK) {
        return st;
    }
    if (h->ptrs[peer] != NULL) {
        mgi_region_fence_sys();
        mgi_region_st_rel((volatile uint64_t*)(h->ptrs[peer] + sig_off),
                          value);
        return UCS_OK;
    }
    return mgi_region_proxy_post(h, MGI_REGION_OP_SIGNAL, peer, 0, 0, 0,
                                 sig_off, value);
}

/* put, then the signal word: whoever sees `value` there sees the data. */
MGI_INLINE ucs_status_t mgi_dev_region_put_signal(const mgi_dev_region_t *h,
                                                  uint32_t peer, uint64_t off,
                                                  const void *src,
                                                  uint64_t len,
                                                  uint64_t sig_off,
                                                  uint64_t value)
{
    ucs_status_t st = mgi_dev_region_check(h, peer, off, len);

    if (st == UCS_OK) {
        st = mgi_dev_region_check_sig(h, peer, sig_off);
    }
    if (st != UCS_OK) {
        return st;
    }
    if (h->ptrs[peer] != NULL) {
        mgi_region_copy_thread(h->ptrs[peer] + off, src, len);
        return mgi_dev_region_signal(h, peer, sig_off, value);
    }
    return mgi_region_proxy_post(h, MGI_REGION_OP_PUT_SIGNAL, peer, off,
                                 (uint64_t)(uintptr_t)src, len, sig_off,
                                 value);
}

/* This rank's signal word at sig_off: UCS_OK once (word cmp value) holds,
 * else UCS_INPROGRESS. An acquire at system scope: what was stored before
 * the word's release (put_signal) is seen after an UCS_OK. */
MGI_INLINE ucs_status_t mgi_dev_region_test_signal(const mgi_dev_region_t *h,
                                                   uint64_t sig_off, int cmp,
                                                   uint64_t value,
                                                   uint64_t *word_p)
{
    uint64_t w;

    if (((sig_off % MGI_REGION_SIG_ALIGN) != 0) ||
        !mgi_region_in_range(sig_off, sizeof(uint64_t), h->len) ||
        !mgi_region_cmp_valid(cmp)) {
        return UCS_ERR_INVALID_PARAM;
    }
    w = mgi_region_ld_acq((const volatile uint64_t*)(h->base + sig_off));
    if (word_p != NULL) {
        *word_p = w;
    }
    return mgi_region_cmp(w, cmp, value) ? UCS_OK : UCS_INPROGRESS;
}

/* test_signal until UCS_OK, bounded by timeout_ns (0: the handle's). */
MGI_INLINE ucs_status_t mgi_dev_region_wait_signal(const mgi_dev_region_t *h,
                                                   uint64_t sig_off, int cmp,
                                                   uint64_t value,
                                                   uint64_t timeout_ns,
                                                   uint64_t *word_p)
{
    uint64_t deadline = 0;
    ucs_status_t st;

    while ((st = mgi_dev_region_test_signal(h, sig_off, cmp, value,
                                            word_p)) == UCS_INPROGRESS) {
        if (deadline == 0) {
            deadline = mgi_region_now_ns() +
                       ((timeout_ns != 0) ? timeout_ns : h->timeout_ns);
        } else if (mgi_region_now_ns() > deadline) {
            return UCS_ERR_TIMED_OUT;
        }
        mgi_region_pause();
    }
    return st;
}

/* This thread's puts and signals to a rank made before the fence land
 * before those made after it (mapped: a fence at system scope; proxy: the
 * later requests start once the earlier ones completed). */
MGI_INLINE ucs_status_t mgi_dev_region_fence(const mgi_dev_region_t *h)
{
    mgi_region_fence_sys();
    if (h->proxy == NULL) {
        return UCS_OK;
    }
    return mgi_region_proxy_post(h, MGI_REGION_OP_FENCE, 0, 0, 0, 0, 0, 0);
}

/* Every put, get and signal this thread made is complete at its target
 * (and visible to a thread there that then acquires: a signal word, a
 * kernel boundary), and every get's destination holds its bytes. */
MGI_INLINE ucs_status_t mgi_dev_region_quiet(const mgi_dev_region_t *h)
{
    mgi_region_fence_sys();
    if (h->proxy == NULL) {
        return UCS_OK;
    }
    return mgi_region_proxy_quiet(h);
}

#endif

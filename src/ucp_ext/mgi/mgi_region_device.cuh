/**
 * MGI regions: device API (host API: mgi_region.h; memory model and a
 * minimal kernel: docs/regions.md).
 *
 * Thread-level calls (mgi_region_dev.h, also callable from host threads
 * for a part in host memory):
 *   mgi_dev_region_get / put / put_signal / signal
 *   mgi_dev_region_test_signal / wait_signal
 *   mgi_dev_region_fence / quiet
 * Warp- and block-level calls (here): every thread of the warp (all 32
 * lanes, converged) or of the block calls with the same arguments; the
 * bytes are split over the threads, one request goes to the proxy, and
 * every thread gets the same status. A get, put or put_signal of a warp
 * or block begins with a barrier of its threads: what any of them wrote
 * to src before the call is what is sent, and none still reads dst from
 * before when the call writes it; it ends with one too (a get's dst is
 * then whole for every thread, where it is mapped).
 *
 * Every call returns a ucs_status_t: UCS_OK; UCS_INPROGRESS (test_signal:
 * not yet); UCS_ERR_INVALID_PARAM (rank, range, signal word or comparison
 * out of bounds: nothing was done); UCS_ERR_UNREACHABLE (a rank neither
 * mapped nor served by a proxy, MGI_REGION_F_NO_PROXY); UCS_ERR_TIMED_OUT
 * (a wait passed the handle's timeout_ns or the one given); or the
 * proxy's error (UCS_ERR_* of the failed UCP request; the proxy serves no
 * more after one).
 *
 * Ordering (mapped ranks: loads and stores over NVLink / PCIe; proxy
 * ranks: UCP RMA by a host thread; the rules are the same):
 *   - put_signal / signal: the data of the call and every put of the
 *     calling thread (warp, block) to that rank before it are visible to
 *     whoever observes the signal's new value with an acquire
 *     (test_signal / wait_signal, which load at system scope).
 *   - fence: this thread's puts and signals before it land before those
 *     after it (per target); it does not wait.
 *   - quiet: this thread's puts, signals and gets are complete: puts are
 *     visible at their targets to a later acquire there, gets' buffers
 *     hold their bytes, put sources may be reused.
 *   - a get from a mapped rank holds its bytes at return; from a proxy
 *     rank only after quiet. Use quiet before reading a get's buffer.
 *   - nothing orders region accesses against a kernel of the target that
 *     reads without acquiring: read a signal word first.
 *
 * Buffers: a get's destination and a put's source that may go through
 * the proxy (mgi_region_direct() is 0 for the rank) must be global memory
 * (cudaMalloc, or mapped host memory): the proxy's host thread copies
 * them with UCP, and cannot reach shared memory, registers or local
 * arrays. To mapped ranks any memory the thread can address will do.
 */
#ifndef MGI_REGION_DEVICE_CUH_
#define MGI_REGION_DEVICE_CUH_

#include "mgi_region_dev.h"

#include <cuda_runtime.h>

/* Bytes from src to dst by `n` cooperating threads, this one number `i`:
 * 16-byte words where both allow, each thread a stripe, so the loads of a
 * warp go out together. The loads skip L1 (__ldcg): a get reads what the
 * peer's memory holds now, not a line an earlier get left in this SM. */
__device__ static inline void mgi_region_copy_coop(void *dst, const void *src,
                                                   uint64_t len, unsigned i,
                                                   unsigned n)
{
    uint64_t k, done = 0;

    if ((((uintptr_t)dst | (uintptr_t)src) % 16) == 0) {
        const uint64_t words = len / 16;
        for (k = i; k < words; k += n) {
            ((uint4*)dst)[k] = __ldcg((const uint4*)src + k);
        }
        done = words * 16;
    } else if ((((uintptr_t)dst | (uintptr_t)src) % 8) == 0) {
        const uint64_t words = len / 8;
        for (k = i; k < words; k += n) {
            ((uint64_t*)dst)[k] =
                __ldcg((const unsigned long long*)src + k);
        }
        done = words * 8;
    }
    for (k = done + i; k < len; k += n) {
        ((char*)dst)[k] = __ldcg((const char*)src + k);
    }
}

/* ------------------------------------------------------------- warp */

#define MGI_REGION_FULL_WARP 0xffffffffu

__device__ static inline unsigned mgi_region_lane(void)
{
    return threadIdx.x % 32;
}

/* A status from lane 0 to every lane. */
__device__ static inline ucs_status_t mgi_region_warp_bcast(ucs_status_t st)
{
    return (ucs_status_t)__shfl_sync(MGI_REGION_FULL_WARP, (int)st, 0);
}

__device__ static inline ucs_status_t
mgi_dev_region_get_warp(const mgi_dev_region_t *h, void *dst, uint32_t peer,
                        uint64_t off, uint64_t len)
{
    ucs_status_t st = mgi_dev_region_check(h, peer, off, len);

    if ((st != UCS_OK) || (len == 0)) {
        return st;
    }
    __syncwarp();       /* the lanes' earlier reads of dst, before it */
    if (h->ptrs[peer] != NULL) {
        mgi_region_copy_coop(dst, h->ptrs[peer] + off, len,
                             mgi_region_lane(), 32);
        __syncwarp();
        return UCS_OK;
    }
    if (mgi_region_lane() == 0) {
        st = mgi_region_proxy_post(h, MGI_REGION_OP_GET, peer, off,
                                   (uint64_t)(uintptr_t)dst, len, 0, 0);
    }
    return mgi_region_warp_bcast(st);
}

__device__ static inline ucs_status_t
mgi_dev_region_put_warp(const mgi_dev_region_t *h, uint32_t peer,
                        uint64_t off, const void *src, uint64_t len)
{
    ucs_status_t st = mgi_dev_region_check(h, peer, off, len);

    if ((st != UCS_OK) || (len == 0)) {
        return st;
    }
    __syncwarp();       /* the lanes' writes of src, before it is read */
    if (h->ptrs[peer] != NULL) {
        mgi_region_copy_coop(h->ptrs[peer] + off, src, len,
                             mgi_region_lane(), 32);
        __syncwarp();
        return UCS_OK;
    }
    if (mgi_region_lane() == 0) {
        st = mgi_region_proxy_post(h, MGI_REGION_OP_PUT, peer, off,
                                   (uint64_t)(uintptr_t)src, len, 0, 0);
    }
    return mgi_region_warp_bcast(st);
}

/* The lanes store their stripes, meet, and lane 0 stores the signal with
 * a fence and a release at system scope: cumulative, so the other lanes'
 * stores (ordered before it by __syncwarp) are visible first. */
__device__ static inline ucs_status_t
mgi_dev_region_put_signal_warp(const mgi_dev_region_t *h, uint32_t peer,
                               uint64_t off, const void *src, uint64_t len,
                               uint64_t sig_off, uint64_t value)
{
    ucs_status_t st = mgi_dev_region_check(h, peer, off, len);

    if (st == UCS_OK) {
        st = mgi_dev_region_check_sig(h, peer, sig_off);
    }
    if (st != UCS_OK) {
        return st;
    }
    __syncwarp();       /* the lanes' writes of src, before it is read */
    if (h->ptrs[peer] != NULL) {
        mgi_region_copy_coop(h->ptrs[peer] + off, src, len,
                             mgi_region_lane(), 32);
        __syncwarp();
        if (mgi_region_lane() == 0) {
            st = mgi_dev_region_signal(h, peer, sig_off, value);
        }
        return mgi_region_warp_bcast(st);
    }
    if (mgi_region_lane() == 0) {
        st = mgi_region_proxy_post(h, MGI_REGION_OP_PUT_SIGNAL, peer, off,
                                   (uint64_t)(uintptr_t)src, len, sig_off,
                                   value);
    }
    return mgi_region_warp_bcast(st);
}

__device__ static inline ucs_status_t
mgi_dev_region_wait_signal_warp(const mgi_dev_region_t *h, uint64_t sig_off,
                                int cmp, uint64_t value, uint64_t timeout_ns)
{
    ucs_status_t st = UCS_OK;

    if (mgi_region_lane() == 0) {
        st = mgi_dev_region_wait_signal(h, sig_off, cmp, value, timeout_ns,
                                        NULL);
    }
    return mgi_region_warp_bcast(st);  /* the shuffle orders the lanes'
                                          later loads after lane 0's
                                          acquire */
}

__device__ static inline ucs_status_t
mgi_dev_region_quiet_warp(const mgi_dev_region_t *h)
{
    ucs_status_t st = UCS_OK;

    __syncwarp();
    if (mgi_region_lane() == 0) {
        st = mgi_dev_region_quiet(h);
    }
    return mgi_region_warp_bcast(st);
}

/* ------------------------------------------------------------- block */

__device__ static inline unsigned mgi_region_tid(void)
{
    return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}

__device__ static inline unsigned mgi_region_nthreads(void)
{
    return blockDim.x * blockDim.y * blockDim.z;
}

/* A status from thread 0 to every thread of the block (a barrier on each
 * side, so the call can follow itself). */
__device__ static inline ucs_status_t mgi_region_block_bcast(ucs_status_t st)
{
    __shared__ int mgi_region_st;

    if (mgi_region_tid() == 0) {
        mgi_region_st = (int)st;
    }
    __syncthreads();
    st = (ucs_status_t)mgi_region_st;
    __syncthreads();
    return st;
}

__device__ static inline ucs_status_t
mgi_dev_region_get_block(const mgi_dev_region_t *h, void *dst, uint32_t peer,
                         uint64_t off, uint64_t len)
{
    ucs_status_t st = mgi_dev_region_check(h, peer, off, len);

    if ((st != UCS_OK) || (len == 0)) {
        return st;
    }
    __syncthreads();    /* the threads' earlier reads of dst, before it */
    if (h->ptrs[peer] != NULL) {
        mgi_region_copy_coop(dst, h->ptrs[peer] + off, len, mgi_region_tid(),
                             mgi_region_nthreads());
        __syncthreads();
        return UCS_OK;
    }
    if (mgi_region_tid() == 0) {
        st = mgi_region_proxy_post(h, MGI_REGION_OP_GET, peer, off,
                                   (uint64_t)(uintptr_t)dst, len, 0, 0);
    }
    return mgi_region_block_bcast(st);
}

__device__ static inline ucs_status_t
mgi_dev_region_put_block(const mgi_dev_region_t *h, uint32_t peer,
                         uint64_t off, const void *src, uint64_t len)
{
    ucs_status_t st = mgi_dev_region_check(h, peer, off, len);

    if ((st != UCS_OK) || (len == 0)) {
        return st;
    }
    __syncthreads();    /* the threads' writes of src, before it is read */
    if (h->ptrs[peer] != NULL) {
        mgi_region_copy_coop(h->ptrs[peer] + off, src, len, mgi_region_tid(),
                             mgi_region_nthreads());
        __syncthreads();
        return UCS_OK;
    }
    if (mgi_region_tid() == 0) {
        st = mgi_region_proxy_post(h, MGI_REGION_OP_PUT, peer, off,
                                   (uint64_t)(uintptr_t)src, len, 0, 0);
    }
    return mgi_region_block_bcast(st);
}

/* As the warp's: the threads' stores, a barrier, then thread 0's fence
 * and release at system scope (cumulative over what the barrier
 * ordered before it). */
__device__ static inline ucs_status_t
mgi_dev_region_put_signal_block(const mgi_dev_region_t *h, uint32_t peer,
                                uint64_t off, const void *src, uint64_t len,
                                uint64_t sig_off, uint64_t value)
{
    ucs_status_t st = mgi_dev_region_check(h, peer, off, len);

    if (st == UCS_OK) {
        st = mgi_dev_region_check_sig(h, peer, sig_off);
    }
    if (st != UCS_OK) {
        return st;
    }
    __syncthreads();    /* the threads' writes of src, before it is read */
    if (h->ptrs[peer] != NULL) {
        mgi_region_copy_coop(h->ptrs[peer] + off, src, len, mgi_region_tid(),
                             mgi_region_nthreads());
    }
    __syncthreads();
    if (mgi_region_tid() == 0) {
        st = (h->ptrs[peer] != NULL) ?
             mgi_dev_region_signal(h, peer, sig_off, value) :
             mgi_region_proxy_post(h, MGI_REGION_OP_PUT_SIGNAL, peer, off,
                                   (uint64_t)(uintptr_t)src, len, sig_off,
                                   value);
    }
    return mgi_region_block_bcast(st);
}

__device__ static inline ucs_status_t
mgi_dev_region_wait_signal_block(const mgi_dev_region_t *h, uint64_t sig_off,
                                 int cmp, uint64_t value, uint64_t timeout_ns)
{
    ucs_status_t st = UCS_OK;

    if (mgi_region_tid() == 0) {
        st = mgi_dev_region_wait_signal(h, sig_off, cmp, value, timeout_ns,
                                        NULL);
    }
    return mgi_region_block_bcast(st);  /* the barrier orders the other
                                           threads' later loads after
                                           thread 0's acquire */
}

__device__ static inline ucs_status_t
mgi_dev_region_quiet_block(const mgi_dev_region_t *h)
{
    ucs_status_t st = UCS_OK;

    __syncthreads();
    if (mgi_region_tid() == 0) {
        st = mgi_dev_region_quiet(h);
    }
    return mgi_region_block_bcast(st);
}

#endif

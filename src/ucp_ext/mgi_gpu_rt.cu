/**
 * The GPU runtime of libmgi's GPU endpoints: the CUDA calls that know no
 * sorter and no channel. Device memory of an endpoint's GPU (run on its
 * device, the caller's device given back after), freed at once or, while
 * the endpoint's persistent sorter runs, queued until it stopped
 * (cudaFree would wait for the kernel); writes of device tables on the
 * endpoint's control stream; rings loaded from host images; mapped host
 * memory; device memory kept for reuse (pools); peer access between GPUs
 * and CUDA IPC mappings of other processes' memory. The sorter
 * (mgi_sorter.cu) and the direct rings (mgi_gpu_direct.cu) build on it;
 * the host state is in mgi_gpu.h.
 */
#include "mgi_gpu.h"

#include <cuda_runtime.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* Free the device memory a pool kept (the device current, the sorter
 * stopped); its array goes with the endpoint. */
void mgi_gpu_pool_drop(mgi_gpu_mpool_t *pool)
{
    unsigned i;

    for (i = 0; i < pool->n; ++i) {
        cudaFree(pool->e[i].mem);
    }
    pool->n = 0;
}

ucs_status_t mgi_gpu_enter(mgi_ep_t *ep, mgi_gpu_dev_guard_t *g)
{
    if (cudaGetDevice(&g->prev) != cudaSuccess) {
        g->prev = -1;
    }
    return MGI_CUDA_CALL(cudaSetDevice(ep->device), "ep %u", ep->id);
}

void mgi_gpu_leave(mgi_gpu_dev_guard_t *g)
{
    if (g->prev >= 0) {
        cudaSetDevice(g->prev);
    }
}

/* Queue a write of `len` bytes of a device table on the control stream
 * (src may go at once: a copy from pageable memory returns once staged);
 * the stream keeps the order of such writes, mgi_gpu_ctl_sync waits for
 * them. */
ucs_status_t mgi_gpu_poke_nb(mgi_ep_t *ep, void *dev, const void *src,
                             size_t len)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;
    ucs_status_t status;

    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaMemcpyAsync(dev, src, len,
                                               cudaMemcpyHostToDevice,
                                               g->ctl), "ep %u", ep->id);
    }
    mgi_gpu_leave(&guard);
    return status;
}

/* Wait, within MGI_TIMEOUT_MS, until the work before event ev is done
 * (UCS_ERR_TIMED_OUT, naming `what`, past it). The event is polled rather
 * than the stream synchronized: cudaStreamSynchronize has no bound, and
 * under compute-sanitizer it returns for a stream with a kernel only once
 * the whole device is idle, which it never is while a persistent sorter
 * runs; an event's query sees the stream's own progress. */
ucs_status_t mgi_gpu_event_wait(mgi_ep_t *ep, cudaEvent_t ev,
                                const char *what)
{
    const unsigned timeout_ms = ep->ctx->params.timeout_ms;
    const uint64_t deadline   = mgi_deadline_ns(ep->ctx);
    cudaError_t e;

    while ((e = cudaEventQuery(ev)) == cudaErrorNotReady) {
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi ep %u: %s not done within MGI_TIMEOUT_MS=%u; "
                      "raise it where the GPU runs slowed (a sanitizer, a "
                      "shared GPU)", ep->id, what, timeout_ms);
            return UCS_ERR_TIMED_OUT;
        }
        sched_yield();
    }
    if (e != cudaSuccess) {
        cudaGetLastError();
        ucs_error("mgi ep %u: %s failed: " MGI_CUDA_ERR_FMT, ep->id, what,
                  MGI_CUDA_ERR_ARGS(e));
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}

/* Wait, within MGI_TIMEOUT_MS, for the work queued on the endpoint's
 * control stream so far. */
ucs_status_t mgi_gpu_ctl_sync(mgi_ep_t *ep)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;
    ucs_status_t status;

    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaEventRecord(g->ctl_done, g->ctl),
                               "ep %u", ep->id);
    }
    if (status == UCS_OK) {
        status = mgi_gpu_event_wait(ep, g->ctl_done,
                                    "the control stream's table writes");
    }
    mgi_gpu_leave(&guard);
    return status;
}

/* Write `len` bytes of a device table while the sorter may run. */
ucs_status_t mgi_gpu_poke(mgi_ep_t *ep, void *dev, const void *src,
                          size_t len)
{
    ucs_status_t status = mgi_gpu_poke_nb(ep, dev, src, len);

    return (status == UCS_OK) ? mgi_gpu_ctl_sync(ep) : status;
}

void mgi_gpu_bind_thread(int device)
{
    if (device != MGI_EP_HOST) {
        MGI_CUDA_CALL(cudaSetDevice(device), "mover thread, device %d",
                      device);
    }
}

static ucs_status_t mgi_gpu_defer(mgi_gpu_ep_t *g, void *p)
{
    void **n;

    if (g->ndeferred == g->deferred_cap) {
        n = (void**)realloc(g->deferred, (g->deferred_cap * 2 + 16) *
                                         sizeof(*n));
        if (n == NULL) {
            return UCS_ERR_NO_MEMORY; /* leak rather than hang */
        }
        g->deferred     = n;
        g->deferred_cap = g->deferred_cap * 2 + 16;
    }
    g->deferred[g->ndeferred++] = p;
    return UCS_OK;
}

void mgi_gpu_dev_free(mgi_ep_t *ep, void *p)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;

    if (p == NULL) {
        return;
    }
    if (g->running) {
        /* cudaFree would wait for the persistent sorter */
        mgi_gpu_defer(g, p);
        return;
    }
    if (mgi_gpu_enter(ep, &guard) == UCS_OK) {
        MGI_CUDA_CALL(cudaFree(p), "ep %u", ep->id);
    }
    mgi_gpu_leave(&guard);
}

void *mgi_gpu_dev_alloc(mgi_ep_t *ep, size_t len)
{
    mgi_gpu_dev_guard_t guard;
    void *p = NULL;

    if ((mgi_gpu_enter(ep, &guard) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMalloc(&p, len), "ep %u: %zu bytes", ep->id,
                       len) != UCS_OK)) {
        p = NULL;
    }
    mgi_gpu_leave(&guard);
    return p;
}

/* Queue on the control stream (the caller is in the endpoint's device and
 * waits for the stream): host ring image img (made by mgi_ring_init) into
 * device ring dev. The device memory is zeroed there, then only the ring
 * header and the segment headers cross; a whole image (segments of data
 * that are all zero) took ~0.5 ms a ring. */
static ucs_status_t mgi_gpu_ring_load(mgi_ep_t *ep, void *dev,
                                      const mgi_ring_t *img)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    size_t len      = mgi_ring_mem_size(img->size, img->seg_size);
    ucs_status_t status;

    status = MGI_CUDA_CALL(cudaMemsetAsync(dev, 0, len, g->ctl),
                           "ep %u: %zu bytes", ep->id, len);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaMemcpyAsync(dev, img, MGI_RING_HDR_SIZE,
                                               cudaMemcpyHostToDevice,
                                               g->ctl), "ep %u", ep->id);
    }
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaMemcpy2DAsync(
                         (char*)dev + MGI_RING_HDR_SIZE, img->seg_size,
                         (const char*)img + MGI_RING_HDR_SIZE, img->seg_size,
                         MGI_SEG_HDR_SIZE, img->size,
                         cudaMemcpyHostToDevice, g->ctl), "ep %u", ep->id);
    }
    return status;
}

void *mgi_gpu_ring_create(mgi_ep_t *ep, const void *image, size_t len,
                          unsigned nrings)
{
    mgi_gpu_ep_t *g   = mgi_gpu_ep(ep);
    const size_t each = len / nrings;
    void *ring        = mgi_gpu_dev_alloc(ep, len);
    mgi_gpu_dev_guard_t guard;
    const mgi_ring_t *img;
    ucs_status_t status;
    unsigned k;

    if (ring == NULL) {
        return NULL;
    }
    status = mgi_gpu_enter(ep, &guard);
    for (k = 0; (status == UCS_OK) && (k < nrings); ++k) {
        img    = (const mgi_ring_t*)((const char*)image + k * each);
        status = mgi_gpu_ring_load(ep, (char*)ring + k * each, img);
    }
    if (status == UCS_OK) {
        status = mgi_gpu_ctl_sync(ep);
    }
    mgi_gpu_leave(&guard);
    if (status != UCS_OK) {
        mgi_gpu_dev_free(ep, ring);
        return NULL;
    }
    return ring;
}

ucs_status_t mgi_gpu_mem_free(mgi_ep_t *ep, size_t *free_p)
{
    mgi_gpu_dev_guard_t guard;
    ucs_status_t status;
    size_t total;

    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaMemGetInfo(free_p, &total), "ep %u",
                               ep->id);
    }
    mgi_gpu_leave(&guard);
    return status;
}

void mgi_gpu_ring_free(mgi_ep_t *ep, void *ring)
{
    mgi_gpu_dev_free(ep, ring);
}

void *mgi_gpu_host_alloc(mgi_ep_t *ep, size_t len)
{
    void *p = NULL;

    if (MGI_CUDA_CALL(cudaHostAlloc(&p, len, cudaHostAllocMapped |
                                             cudaHostAllocPortable),
                      "ep %u: %zu bytes of mapped host memory", ep->id,
                      len) != UCS_OK) {
        return NULL;
    }
    memset(p, 0, len);
    return p;
}

void mgi_gpu_host_free(void *p)
{
    if (p != NULL) {
        cudaFreeHost(p);
    }
}

void *mgi_gpu_host_dev_ptr(mgi_ep_t *ep, void *host)
{
    void *dev = NULL;

    if (MGI_CUDA_CALL(cudaHostGetDevicePointer(&dev, host, 0), "ep %u",
                      ep->id) != UCS_OK) {
        return NULL;
    }
    return dev;
}

int mgi_gpu_peer_enable(int dev, int peer)
{
    cudaError_t e;
    int can = 0;

    if ((cudaDeviceCanAccessPeer(&can, dev, peer) != cudaSuccess) || !can) {
        cudaGetLastError();
        return cudaErrorPeerAccessUnsupported;
    }
    e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e != cudaSuccess) {
        cudaGetLastError();
    }
    return (e == cudaErrorPeerAccessAlreadyEnabled) ? cudaSuccess : e;
}

/* Let ep's device reach memory `p` of another device (peer access). */
ucs_status_t mgi_gpu_peer_reach(mgi_ep_t *ep, const void *p,
                                mgi_ep_id_t hop)
{
    cudaPointerAttributes attr;
    cudaError_t e;

    if (MGI_CUDA_CALL(cudaPointerGetAttributes(&attr, p), "ep %u: the "
                      "receive ring of endpoint %u", ep->id, hop) != UCS_OK) {
        return UCS_ERR_IO_ERROR;
    }
    if ((attr.device < 0) || (attr.device == ep->device)) {
        return UCS_OK;
    }
    e = (cudaError_t)mgi_gpu_peer_enable(ep->device, attr.device);
    if (e == cudaErrorPeerAccessUnsupported) {
        ucs_error("mgi ep %u: MGI_DIRECT_RINGS=1, but GPU %d cannot "
                  "access GPU %d (endpoint %u's rings) as a peer: unset it", ep->id, ep->device, attr.device, hop);
        return UCS_ERR_UNREACHABLE;
    }
    return MGI_CUDA_CALL(e, "ep %u: peer access to GPU %d", ep->id,
                         attr.device);
}

void mgi_gpu_peer_unmap(void *p)
{
    cudaIpcCloseMemHandle(p);
    cudaGetLastError();
}

/* Zeroed device memory of ep's GPU, NULL on failure (said). */
void *mgi_gpu_dev_zalloc(mgi_ep_t *ep, size_t len)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;
    void *p = mgi_gpu_dev_alloc(ep, len);
    ucs_status_t status;

    if (p == NULL) {
        return NULL;
    }
    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaMemsetAsync(p, 0, len, g->ctl),
                               "ep %u", ep->id);
    }
    if (status == UCS_OK) {
        status = mgi_gpu_ctl_sync(ep);
    }
    mgi_gpu_leave(&guard);
    if (status != UCS_OK) {
        mgi_gpu_dev_free(ep, p);
        return NULL;
    }
    return p;
}

/* Kept device memory: mem (`len` bytes, its IPC handle ipc or NULL) into
 * the pool, or freed (deferred while the sorter runs) without room to
 * keep it; one of `len` bytes out of it (its handle into ipc), NULL if
 * none is kept. */
void mgi_gpu_pool_keep(mgi_ep_t *ep, mgi_gpu_mpool_t *pool,
                       void *mem, size_t len, const uint8_t *ipc)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_gpu_dpool_t *np;
    unsigned cap;

    pthread_mutex_lock(&g->pool_lock);
    if (pool->n == pool->cap) {
        cap = pool->cap * 2 + 4;
        np  = (mgi_gpu_dpool_t*)realloc(pool->e, cap * sizeof(*np));
        if (np != NULL) {
            pool->e   = np;
            pool->cap = cap;
        }
    }
    if (pool->n < pool->cap) {
        pool->e[pool->n].mem = mem;
        pool->e[pool->n].len = len;
        if (ipc != NULL) {
            memcpy(pool->e[pool->n].ipc, ipc, sizeof(pool->e[0].ipc));
        }
        ++pool->n;
        mem = NULL;
    }
    pthread_mutex_unlock(&g->pool_lock);
    mgi_gpu_dev_free(ep, mem);          /* NULL: kept */
}

void *mgi_gpu_pool_take(mgi_ep_t *ep, mgi_gpu_mpool_t *pool,
                        size_t len, uint8_t *ipc)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    void *mem       = NULL;
    unsigned k;

    pthread_mutex_lock(&g->pool_lock);
    for (k = 0; (k < pool->n) && (pool->e[k].len != len); ++k) {
    }
    if (k < pool->n) {
        mem = pool->e[k].mem;
        if (ipc != NULL) {
            memcpy(ipc, pool->e[k].ipc, sizeof(pool->e[0].ipc));
        }
        pool->e[k] = pool->e[--pool->n];
    }
    pthread_mutex_unlock(&g->pool_lock);
    return mem;
}

ucs_status_t mgi_gpu_direct_map(mgi_ep_t *ep, const void *ipc, void **base_p)
{
    mgi_gpu_dev_guard_t guard;
    cudaIpcMemHandle_t hd;
    ucs_status_t status;

    memcpy(&hd, ipc, sizeof(hd));
    *base_p = NULL;
    status  = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaIpcOpenMemHandle(
                                       base_p, hd,
                                       cudaIpcMemLazyEnablePeerAccess),
                               "ep %u: a destination's direct rings "
                               "(MGI_DIRECT_RINGS=1; every process needs "
                               "to see every GPU of the channel)", ep->id);
    }
    mgi_gpu_leave(&guard);
    return status;
}

/* Can this endpoint's GPU add atomically to memory at p (another GPU's:
 * native peer atomics, NVLink)? */
int mgi_gpu_peer_atomics(mgi_ep_t *ep, const void *p)
{
    cudaPointerAttributes attr;
    int v = 0;

    if ((cudaPointerGetAttributes(&attr, p) != cudaSuccess) ||
        (attr.device < 0)) {
        cudaGetLastError();
        return 0;
    }
    if (attr.device == ep->device) {
        return 1;
    }
    if (cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported,
                                  ep->device, attr.device) != cudaSuccess) {
        cudaGetLastError();
        return 0;
    }
    return v;
}

mgi_mem_range_fn_t mgi_gpu_mem_range_fn(void)
{
    static mgi_mem_range_fn_t fn;
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_once(&once, [] {
        cudaDriverEntryPointQueryResult q;
        void *p = NULL;

        if ((cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p,
                                              12000, cudaEnableDefault,
                                              &q) == cudaSuccess) &&
            (q == cudaDriverEntryPointSuccess)) {
            fn = (mgi_mem_range_fn_t)p;
        }
        cudaGetLastError();
    });
    return fn;
}

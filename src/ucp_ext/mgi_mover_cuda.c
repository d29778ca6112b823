/**
 * The mover's CUDA side: copies between endpoints of this process when
 * either side is GPU memory go on a stream of the mover's own (created
 * the first time one is needed, kept until the context goes), each flush
 * completing with an event; peer access between the devices involved is
 * tried once a pair; a flush's copies are posted together at its close,
 * as one cudaMemcpyBatchAsync where the runtime has it. Below the mover
 * thread (mgi_mover.c), which decides what to copy.
 */
#include "mgi_mover_int.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ CUDA */

ucs_status_t mgi_mover_cuda_get(mgi_mover_t *m,
                                mgi_mover_cuda_t **cu_p)
{
    mgi_context_t *ctx = m->ctx;
    mgi_mover_cuda_t *cu = ctx->mover_cuda;
    ucs_status_t status;
    unsigned i;

    if (cu != NULL) {
        *cu_p = cu;
        return UCS_OK;
    }
    if (ctx->mover_device == MGI_EP_HOST) {
        ucs_error("mgi context %p mover: a copy of GPU memory without a GPU "
                  "endpoint", ctx);
        return UCS_ERR_NO_DEVICE;
    }
    cu = calloc(1, sizeof(*cu));
    if (cu == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    cu->device = ctx->mover_device;
    status = MGI_CUDA_CALL(cudaSetDevice(cu->device),
                           "context %p mover: device %d", ctx, cu->device);
    if (status != UCS_OK) {
        goto err_free;
    }
    status = MGI_CUDA_CALL(cudaStreamCreateWithFlags(&cu->stream,
                                                     cudaStreamNonBlocking),
                           "context %p mover: device %d", ctx, cu->device);
    if (status != UCS_OK) {
        goto err_free;
    }
    for (i = 0; i < MGI_MOVER_FLUSHES_MAX; ++i) {
        status = MGI_CUDA_CALL(cudaEventCreateWithFlags(&cu->done[i],
                                       cudaEventDisableTiming),
                               "context %p mover: device %d", ctx,
                               cu->device);
        if (status != UCS_OK) {
            goto err_events;
        }
    }
    ucs_debug("mgi context %p mover: copies inside the process on a stream "
              "of device %d", ctx, cu->device);
    ctx->mover_cuda = cu;
    *cu_p           = cu;
    return UCS_OK;

err_events:
    while (i-- > 0) {
        cudaEventDestroy(cu->done[i]);
    }
    cudaStreamDestroy(cu->stream);
err_free:
    free(cu);
    return status;
}

void mgi_mover_cuda_fini(mgi_context_t *ctx)
{
    mgi_mover_cuda_t *cu = ctx->mover_cuda;
    unsigned i;

    if (cu == NULL) {
        return;
    }
    cudaSetDevice(cu->device);
    for (i = 0; i < MGI_MOVER_FLUSHES_MAX; ++i) {
        cudaEventDestroy(cu->done[i]);
    }
    cudaStreamDestroy(cu->stream);
    free(cu);
    ctx->mover_cuda = NULL;
}

/* Device a may read and write device b's memory: peer copies go straight
 * over NVLink / PCIe instead of through host memory. Tried once a pair. */
static void mgi_mover_cuda_peer(mgi_context_t *ctx, mgi_mover_cuda_t *cu,
                                int a, int b)
{
    cudaError_t e;

    if ((a < 0) || (b < 0) || (a == b) || (a >= MGI_MOVER_MAX_DEVS) ||
        (b >= MGI_MOVER_MAX_DEVS) || (cu->peer_tried[a] & (1ull << b))) {
        return;
    }
    cu->peer_tried[a] |= 1ull << b;
    if (MGI_CUDA_CALL(cudaSetDevice(a), "context %p mover: device %d", ctx,
                      a) != UCS_OK) {
        return;
    }
    e = (cudaError_t)mgi_gpu_peer_enable(a, b);
    if (e == cudaErrorPeerAccessUnsupported) {
        ucs_warn("mgi context %p mover: device %d cannot access device %d: "
                 "copies between them go through host memory", ctx, a, b);
    } else if (e != cudaSuccess) {
        ucs_warn("mgi context %p mover: peer access of device %d to %d: "
                 MGI_CUDA_ERR_FMT, ctx, a, b, MGI_CUDA_ERR_ARGS(e));
    } else {
        ucs_debug("mgi context %p mover: peer access of device %d to %d",
                  ctx, a, b);
    }
    MGI_CUDA_CALL(cudaSetDevice(cu->device), "context %p mover: device %d",
                  ctx, cu->device);
}

void mgi_mover_cuda_peers(mgi_context_t *ctx, mgi_mover_cuda_t *cu,
                          int src, int dst)
{
    int devs[3] = {cu->device, src, dst};
    int i, j;

    if ((src == MGI_EP_HOST) || (dst == MGI_EP_HOST) || (src == dst)) {
        return;
    }
    for (i = 0; i < 3; ++i) {
        for (j = 0; j < 3; ++j) {
            mgi_mover_cuda_peer(ctx, cu, devs[i], devs[j]);
        }
    }
}

/* The CUDA 13 runtime's batch call (CUDA 12.8 gave it another signature,
 * with a failure index; a runtime before 13 posts the copies one by one) */
static cudaError_t mgi_mover_copy_batch(mgi_mover_epoch_t *e,
                                        cudaStream_t stream)
{
#if CUDART_VERSION >= 13000
    struct cudaMemcpyAttributes attr;
    size_t attr_idx = 0;

    memset(&attr, 0, sizeof(attr));
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    return cudaMemcpyBatchAsync(e->cdst, e->csrc, e->csize, e->ncopies,
                                &attr, &attr_idx, 1, stream);
#else
    return cudaErrorNotSupported;
#endif
}

/* The copies of flush e inside the process, on
 * its stream before its event: several in one cudaMemcpyBatchAsync, which
 * the copy engine runs back to back; one alone, or a batch the runtime
 * refuses, with cudaMemcpyAsync each. Copies of about 10 MB one after the
 * other on a stream move ~350 GB/s between two H100 and ~390 as a batch
 * (mgi_gpu_test copy_sizes). */
ucs_status_t mgi_mover_post_copies(mgi_mover_t *m,
                                   mgi_mover_epoch_t *e,
                                   cudaStream_t stream)
{
    mgi_context_t *ctx = m->ctx;
    cudaError_t ce     = cudaErrorNotSupported;
    ucs_status_t status = UCS_OK;
    uint64_t t0        = mgi_time_ns();
    unsigned i;

    if (e->ncopies > 1) {
        ce = mgi_mover_copy_batch(e, stream);
        if (ce != cudaSuccess) {
            /* not sticky: these go one by one below, and the later ones
             * too (a runtime or driver without it refuses every batch) */
            (void)cudaGetLastError();
            ucs_diag("context %p mover: cudaMemcpyBatchAsync refused a "
                     "batch of %u copies (" MGI_CUDA_ERR_FMT "); the mover "
                     "posts its copies one by one from now on", ctx,
                     e->ncopies, MGI_CUDA_ERR_ARGS(ce));
            ctx->mover_copy_one = 1;
        }
    }
    for (i = 0; (ce != cudaSuccess) && (i < e->ncopies) &&
                (status == UCS_OK); ++i) {
        status = MGI_CUDA_CALL(cudaMemcpyAsync(e->cdst[i], e->csrc[i],
                                               e->csize[i],
                                               cudaMemcpyDefault, stream),
                               "context %p mover: copy of %zu bytes", ctx,
                               e->csize[i]);
    }
    m->copy_ns += mgi_time_ns() - t0;
    e->ncopies  = 0;
    return status;
}

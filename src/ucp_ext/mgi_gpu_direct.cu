/**
 * Direct rings and landing buffers of channels at GPU endpoints
 * (MGI_DIRECT_RINGS=1): a destination's rings, one a user block of each
 * source, in its GPU's memory with a CUDA IPC handle for the sources
 * (mgi_gpu_ch_direct_in), the check at a delete that each was flushed
 * and read; a source's records of every destination's rings and landing
 * buffers in device memory (mgi_gpu_ch_direct_out); a destination's
 * landing buffer (mgi_gpu_ch_land_in) and its count. A deleted channel's
 * rings and records are kept for the next channel of their size. Built
 * on the GPU runtime (mgi_gpu_rt.cu); the sorter (mgi_sorter.cu) hands
 * its channels' device handles the records laid out here.
 */
#include "mgi_gpu.h"

#include <algorithm>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* A destination's direct rings: each flushed (EOF) and read to its end?
 * Their headers are read MGI_GPU_DHDR_RINGS at a time into the
 * endpoint's pinned buffer. */
ucs_status_t mgi_gpu_ch_direct_done(mgi_ep_t *ep, mgi_channel_t *ch,
                                    const mgi_gpu_ch_t *gc)
{
    const size_t hlen = offsetof(mgi_dring_t, head) + sizeof(uint64_t);
    mgi_gpu_ep_t *g   = mgi_gpu_ep(ep);
    const mgi_dring_t *hdr = g->dhdr;
    ucs_status_t status = UCS_OK;
    mgi_gpu_dev_guard_t guard;
    unsigned k, m, i, open = 0;
    uint64_t unread = 0;

    pthread_mutex_lock(&g->dhdr_lock);
    for (k = 0; (status == UCS_OK) && (k < gc->nin); k += m) {
        m      = std::min(gc->nin - k, (unsigned)MGI_GPU_DHDR_RINGS);
        status = mgi_gpu_enter(ep, &guard);
        if (status == UCS_OK) {
            status = MGI_CUDA_CALL(cudaMemcpy2DAsync(
                                       g->dhdr, sizeof(*hdr),
                                       (char*)gc->din + k * gc->dstride,
                                       gc->dstride, hlen, m,
                                       cudaMemcpyDeviceToHost, g->ctl),
                                   "channel %u ep %u: direct ring headers",
                                   ch->id, ep->id);
        }
        if (status == UCS_OK) {
            status = mgi_gpu_ctl_sync(ep);
        }
        mgi_gpu_leave(&guard);
        for (i = 0; (status == UCS_OK) && (i < m); ++i) {
            open   += (hdr[i].eof == 0);
            unread += hdr[i].tail - hdr[i].head;
        }
    }
    pthread_mutex_unlock(&g->dhdr_lock);
    if ((status == UCS_OK) && ((open > 0) || (unread > 0))) {
        ucs_error("mgi channel %u: busy, GPU endpoint %u: %u of its %u "
                  "direct rings (one a source block) not flushed, %llu "
                  "tuples unread", ch->id, ep->id, open, gc->nin,
                  (unsigned long long)unread);
        return UCS_ERR_BUSY;
    }
    return status;
}

void mgi_gpu_dout_layout(unsigned ndst, unsigned nblocks,
                         size_t at[MGI_DOUT_WORDS + 1])
{
    at[MGI_DOUT_BASE]  = 0;
    at[MGI_DOUT_PROD]  = ndst;
    at[MGI_DOUT_LAND]  = at[MGI_DOUT_PROD] +
                         (size_t)ndst * nblocks * MGI_DRING_PROD_WORDS;
    at[MGI_DOUT_CAP]   = at[MGI_DOUT_LAND] + ndst;
    at[MGI_DOUT_WORDS] = at[MGI_DOUT_CAP] + ndst;
}

/* A deleted channel's direct rings back to the endpoint's pool (its
 * sources flushed and its consumers read them: mgi_ch_delete checked; or
 * the context goes). Without room to keep them, they are freed. */
void mgi_gpu_dpool_put(mgi_ep_t *ep, mgi_gpu_ch_t *gc)
{
    if (gc->din == NULL) {
        return;
    }
    mgi_gpu_pool_keep(ep, &mgi_gpu_ep(ep)->dpool, gc->din, gc->din_len,
                      gc->din_ipc);
    gc->din = NULL;
}

/* A deleted channel's source records back to the endpoint, and one of
 * `len` bytes for a new channel, NULL if none is kept. */
void mgi_gpu_opool_put(mgi_ep_t *ep, void *p, size_t len)
{
    if (p != NULL) {
        mgi_gpu_pool_keep(ep, &mgi_gpu_ep(ep)->opool, p, len, NULL);
    }
}

static void *mgi_gpu_opool_get(mgi_ep_t *ep, size_t len)
{
    return mgi_gpu_pool_take(ep, &mgi_gpu_ep(ep)->opool, len, NULL);
}

ucs_status_t mgi_gpu_ch_direct_in(mgi_ep_t *ep, mgi_channel_t *ch,
                                  unsigned nin, uint32_t cap, size_t stride,
                                  void *ipc)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_ep_t *g  = mgi_gpu_ep(ep);
    /* the rings, the landing control, the consumers' cursors */
    const size_t len = (size_t)nin * stride + sizeof(mgi_dland_t) +
                       ep->nblocks * sizeof(uint32_t);
    mgi_gpu_dev_guard_t guard;
    cudaIpcMemHandle_t hd;
    ucs_status_t status;

    MGI_STATIC_ASSERT(sizeof(hd) <= sizeof(gc->din_ipc), "IPC handle size");
    gc->direct    = 1;
    gc->dcap      = cap;
    gc->dstride   = stride;
    gc->nin       = nin;
    gc->din_len   = len;
    gc->dland_off = (uint64_t)nin * stride;
    gc->din = mgi_gpu_pool_take(ep, &g->dpool, len, gc->din_ipc);
    if (gc->din != NULL) {
        /* a pooled one: its rings' headers, the landing control and the
         * cursors zeroed */
        gc->dcur = (uint32_t*)((char*)gc->din + gc->dland_off +
                               sizeof(mgi_dland_t));
        status   = mgi_gpu_enter(ep, &guard);
        if (status == UCS_OK) {
            status = MGI_CUDA_CALL(cudaMemset2DAsync(gc->din, stride, 0,
                                                     sizeof(mgi_dring_t),
                                                     nin, g->ctl),
                                   "channel %u ep %u: direct ring headers",
                                   ch->id, ep->id);
        }
        if (status == UCS_OK) {
            status = MGI_CUDA_CALL(cudaMemsetAsync((char*)gc->din +
                                                   gc->dland_off, 0,
                                                   sizeof(mgi_dland_t) +
                                                   ep->nblocks *
                                                   sizeof(uint32_t), g->ctl),
                                   "channel %u ep %u", ch->id, ep->id);
        }
        if (status == UCS_OK) {
            status = mgi_gpu_ctl_sync(ep);
        }
        mgi_gpu_leave(&guard);
        memcpy(ipc, gc->din_ipc, sizeof(hd));
        return status;
    }
    gc->din = mgi_gpu_dev_zalloc(ep, len);
    if (gc->din == NULL) {
        ucs_error("mgi channel %u: endpoint %u: no GPU memory for %u direct "
                  "rings of %zu bytes (one per user block of each source): "
                  "lower mgi_context_params_t.direct_ring_kb or the "
                  "sources' user blocks, or unset MGI_DIRECT_RINGS", ch->id, ep->id, nin, stride);
        return UCS_ERR_NO_MEMORY;
    }
    gc->dcur = (uint32_t*)((char*)gc->din + gc->dland_off +
                           sizeof(mgi_dland_t));
    status   = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaIpcGetMemHandle(&hd, gc->din),
                               "channel %u ep %u: the direct rings", ch->id,
                               ep->id);
    }
    mgi_gpu_leave(&guard);
    if (status == UCS_OK) {
        memcpy(gc->din_ipc, &hd, sizeof(hd));
        memcpy(ipc, &hd, sizeof(hd));
    }
    return status;
}

void *mgi_gpu_ch_direct_base(mgi_ep_t *ep, mgi_channel_t *ch)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];

    return (gc != NULL) ? gc->din : NULL;
}

ucs_status_t mgi_gpu_ch_direct_out(mgi_ep_t *ep, mgi_channel_t *ch,
                                   char *const *bases, char *const *lands,
                                   const uint64_t *land_cap, uint32_t dfirst,
                                   unsigned nin, uint32_t cap, size_t stride)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_dev_guard_t guard;
    size_t at[MGI_DOUT_WORDS + 1], len;
    ucs_status_t status;
    char **lv = NULL;
    uint64_t *img;
    unsigned i;

    MGI_STATIC_ASSERT(sizeof(char*) == sizeof(uint64_t), "8-byte pointers");
    mgi_gpu_dout_layout(ch->ndst, ep->nblocks, at);
    len = at[MGI_DOUT_WORDS] * sizeof(uint64_t);

    /* peer access from this endpoint's GPU (the current device) */
    status = mgi_gpu_enter(ep, &guard);
    for (i = 0; (status == UCS_OK) && (i < ch->ndst); ++i) {
        status = mgi_gpu_peer_reach(ep, bases[i], ch->dst[i]);
    }
    if ((status == UCS_OK) && (lands != NULL)) {
        lv = (char**)calloc(ch->ndst, sizeof(*lv));
        status = (lv != NULL) ? UCS_OK : UCS_ERR_NO_MEMORY;
    }
    for (i = 0; (status == UCS_OK) && (lv != NULL) && (i < ch->ndst); ++i) {
        if (lands[i] == NULL) {
            continue;
        }
        if (!mgi_gpu_peer_atomics(ep, lands[i])) {
            ucs_info("mgi channel %u: ep %u lands nothing at endpoint %u: "
                     "its GPU has no native atomics to that GPU; through "
                     "the ring", ch->id, ep->id, ch->dst[i]);
            continue;
        }
        lv[i]    = lands[i];
        gc->land = 1;
    }
    mgi_gpu_leave(&guard);
    if (status != UCS_OK) {
        free(lv);
        return status;
    }
    gc->direct    = 1;
    gc->dcap      = cap;
    gc->dstride   = stride;
    gc->dfirst    = dfirst;
    gc->dland_off = (uint64_t)nin * stride;
    /* its image here, then one copy: the records zeroed with it */
    img = (uint64_t*)calloc(1, len);
    gc->dout = (img != NULL) ? mgi_gpu_opool_get(ep, len) : NULL;
    if ((img != NULL) && (gc->dout == NULL)) {
        gc->dout = mgi_gpu_dev_alloc(ep, len);
    }
    gc->dout_len = len;
    if (gc->dout == NULL) {
        free(img);
        free(lv);
        return UCS_ERR_NO_MEMORY;
    }
    memcpy(img + at[MGI_DOUT_BASE], bases, ch->ndst * sizeof(char*));
    if (gc->land) {
        memcpy(img + at[MGI_DOUT_LAND], lv, ch->ndst * sizeof(char*));
        memcpy(img + at[MGI_DOUT_CAP], land_cap,
               ch->ndst * sizeof(uint64_t));
    }
    status = mgi_gpu_poke(ep, gc->dout, img, len);
    free(img);
    free(lv);
    return status;
}

ucs_status_t mgi_gpu_ch_land_in(mgi_ep_t *ep, mgi_channel_t *ch, void *buf,
                                uint64_t tuples, void *ipc, uint64_t *off_p)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    const uint64_t bytes = tuples * ch->tuple_size;
    mgi_mem_range_fn_t range = mgi_gpu_mem_range_fn();
    unsigned long long base = 0;
    cudaPointerAttributes attr;
    mgi_gpu_dev_guard_t guard;
    cudaIpcMemHandle_t hd;
    ucs_status_t status;
    size_t size = 0;

    if (((uintptr_t)buf % MGI_DLAND_ALIGN) != 0) {
        ucs_error("mgi channel %u: the landing buffer %p of endpoint %u is "
                  "not %d-byte aligned: pass an address from cudaMalloc, "
                  "or one a multiple of %d bytes into it", ch->id, buf,
                  ep->id, MGI_DLAND_ALIGN, MGI_DLAND_ALIGN);
        return UCS_ERR_INVALID_PARAM;
    }
    status = mgi_gpu_enter(ep, &guard);
    if (status != UCS_OK) {
        return status;
    }
    if ((cudaPointerGetAttributes(&attr, buf) != cudaSuccess) ||
        (attr.type != cudaMemoryTypeDevice) || (attr.device != ep->device)) {
        cudaGetLastError();
        ucs_error("mgi channel %u: the landing buffer %p of endpoint %u is "
                  "not device memory of its GPU %d (cudaMalloc there)",
                  ch->id, buf, ep->id, ep->device);
        status = UCS_ERR_INVALID_PARAM;
    } else if ((range == NULL) ||
               (range(&base, &size, (unsigned long long)buf) != 0)) {
        ucs_error("mgi channel %u: ep %u: no allocation found for the "
                  "landing buffer %p (cuMemGetAddressRange): pass memory "
                  "from cudaMalloc on GPU %d", ch->id, ep->id, buf,
                  ep->device);
        status = UCS_ERR_INVALID_PARAM;
    } else if ((uintptr_t)buf - base + bytes > size) {
        ucs_error("mgi channel %u: the landing buffer %p of endpoint %u "
                  "is said to hold %llu tuples of %zu bytes (%llu bytes), "
                  "but its allocation ends %zu bytes after it: lower "
                  "land_tuples to %zu or allocate more", ch->id, buf,
                  ep->id, (unsigned long long)tuples, ch->tuple_size,
                  (unsigned long long)bytes,
                  size - (size_t)((uintptr_t)buf - base),
                  (size - (size_t)((uintptr_t)buf - base)) /
                  ch->tuple_size);
        status = UCS_ERR_INVALID_PARAM;
    } else {
        status = MGI_CUDA_CALL(cudaIpcGetMemHandle(&hd, (void*)base),
                               "channel %u ep %u: the landing buffer",
                               ch->id, ep->id);
    }
    mgi_gpu_leave(&guard);
    if (status == UCS_OK) {
        memcpy(ipc, &hd, sizeof(hd));
        *off_p      = (uint64_t)((uintptr_t)buf - base);
        gc->land_in = 1;
    }
    return status;
}

ucs_status_t mgi_gpu_ch_landed(mgi_ep_t *ep, mgi_channel_t *ch,
                               uint64_t *tuples_p)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_ep_t *g  = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;
    ucs_status_t status;
    mgi_dland_t l;

    *tuples_p = 0;
    if ((gc == NULL) || !gc->land_in || (gc->din == NULL)) {
        return UCS_OK;
    }
    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaMemcpyAsync(&l, (char*)gc->din +
                                               gc->dland_off, sizeof(l),
                                               cudaMemcpyDeviceToHost, g->ctl),
                               "channel %u ep %u: the landing count", ch->id,
                               ep->id);
    }
    if (status == UCS_OK) {
        status = mgi_gpu_ctl_sync(ep);
    }
    mgi_gpu_leave(&guard);
    if (status == UCS_OK) {
        *tuples_p = mgi_dland_count(l.cur, l.fail);
    }
    return status;
}

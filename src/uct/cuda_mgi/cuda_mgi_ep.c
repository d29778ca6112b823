/**
 * cuda_mgi: MGI multi-GPU transport for UCX.
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "cuda_mgi_ep.h"

#include <uct/base/uct_log.h>
#include <uct/base/uct_iov.inl>
#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/profile/profile.h>
#include <ucs/type/class.h>
#include <string.h>


/* A flush waiting for the endpoint's copies posted before it to land */
typedef struct {
    ucs_queue_elem_t queue;
    uct_completion_t *comp;
    uint64_t         seq;   /* the endpoint's copies posted before it */
} uct_cuda_mgi_flush_req_t;


/* Where one operation goes: the remote memory, mapped into this process */
typedef struct {
    const uct_cuda_mgi_rkey_t *key;
    uct_cuda_mgi_mapping_t    *mapping; /* of the whole allocation, held */
    CUdeviceptr               remote;   /* remote_addr in that mapping */
} uct_cuda_mgi_target_t;


static UCS_CLASS_INIT_FUNC(uct_cuda_mgi_ep_t, const uct_ep_params_t *params)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(params->iface,
                                                 uct_cuda_mgi_iface_t);

    UCT_EP_PARAMS_CHECK_DEV_IFACE_ADDRS(params);
    UCS_CLASS_CALL_SUPER_INIT(uct_base_ep_t, &iface->super);

    self->remote_pid  = *(const pid_t*)params->iface_addr;
    self->outstanding = 0;
    self->posted      = 0;
    self->fenced      = 0;
    ucs_queue_head_init(&self->flush_q);
    return uct_ep_keepalive_init(&self->keepalive, self->remote_pid);
}


static UCS_CLASS_CLEANUP_FUNC(uct_cuda_mgi_ep_t)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(self->super.super.iface,
                                                 uct_cuda_mgi_iface_t);
    uct_cuda_mgi_event_desc_t *desc;
    uct_cuda_mgi_flush_req_t *flush;

    uct_cuda_mgi_ep_pending_purge(&self->super.super, NULL, NULL);
    uct_cuda_mgi_iface_post_waiting(iface);

    if (self->outstanding > 0) {
        ucs_debug("cuda_mgi ep %p: destroyed with %u copies to pid %d in "
                  "flight; they complete without it", self, self->outstanding,
                  self->remote_pid);
        ucs_queue_for_each(desc, &iface->outstanding_q, queue) {
            if (desc->ep == self) {
                desc->ep = NULL;
            }
        }
    }

    ucs_queue_for_each_extract(flush, &self->flush_q, queue, 1) {
        uct_invoke_completion(flush->comp, UCS_ERR_CANCELED);
        ucs_free(flush);
    }

    /* mappings of the peer's memory that nothing holds any more */
    uct_cuda_mgi_ipc_forget_peer(self->remote_pid);
}


UCS_CLASS_DEFINE(uct_cuda_mgi_ep_t, uct_base_ep_t)
UCS_CLASS_DEFINE_NEW_FUNC(uct_cuda_mgi_ep_t, uct_ep_t, const uct_ep_params_t*);
UCS_CLASS_DEFINE_DELETE_FUNC(uct_cuda_mgi_ep_t, uct_ep_t);


/* The number of the endpoint's oldest copy in flight: the interface's
 * queue is in posting order (the completed one already left it) */
static uint64_t uct_cuda_mgi_ep_oldest(uct_cuda_mgi_ep_t *ep)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                                 uct_cuda_mgi_iface_t);
    uct_cuda_mgi_event_desc_t *desc;

    ucs_queue_for_each(desc, &iface->outstanding_q, queue) {
        if (desc->ep == ep) {
            return desc->seq;
        }
    }
    return UINT64_MAX;
}


/* A copy of ep completed: its completion, then the flushes whose copies
 * have all landed, the oldest first. A flush waits only for the copies
 * posted before it: while a mover keeps posting, waiting for no copy in
 * flight at all held flushes until the endpoint drained (about 250 us
 * between two H200) */
void uct_cuda_mgi_ep_op_done(uct_cuda_mgi_ep_t *ep, uct_completion_t *comp,
                             ucs_status_t status)
{
    uct_cuda_mgi_flush_req_t *flush;
    uint64_t oldest;

    if (comp != NULL) {
        uct_invoke_completion(comp, status);
    }

    if (ep == NULL) {
        return;
    }

    --ep->outstanding;
    if (ucs_queue_is_empty(&ep->flush_q)) {
        return;
    }

    oldest = (ep->outstanding == 0) ? UINT64_MAX : uct_cuda_mgi_ep_oldest(ep);
    ucs_queue_for_each_extract(flush, &ep->flush_q, queue,
                               flush->seq < oldest) {
        uct_invoke_completion(flush->comp, UCS_OK);
        ucs_free(flush);
    }
}


/* Map the remote allocation for the interface's context (the key's own
 * mapping when it was unpacked in that context) and check that
 * [remote_addr, +length) is in it */
static ucs_status_t
uct_cuda_mgi_ep_target(uct_cuda_mgi_ep_t *ep, uct_rkey_t rkey,
                       uint64_t remote_addr, size_t length,
                       uct_cuda_mgi_target_t *target)
{
    uct_cuda_mgi_iface_t *iface   = ucs_derived_of(ep->super.super.iface,
                                                   uct_cuda_mgi_iface_t);
    uct_cuda_mgi_remote_t *remote = (uct_cuda_mgi_remote_t*)rkey;
    const uct_cuda_mgi_rkey_t *key;
    uint64_t base;
    ucs_status_t status;

    if ((rkey == UCT_INVALID_RKEY) || (remote == NULL)) {
        ucs_error("cuda_mgi ep %p: %zu bytes at 0x%"PRIx64" with no remote "
                  "key (memory this transport did not register)", ep, length,
                  remote_addr);
        return UCS_ERR_INVALID_PARAM;
    }

    key  = &remote->key;
    base = key->base;
    if ((remote_addr < base) || (length > key->length) ||
        (remote_addr - base > key->length - length)) {
        ucs_error("cuda_mgi ep %p: %zu bytes at 0x%"PRIx64" fall outside the "
                  "remote allocation 0x%"PRIx64"..0x%"PRIx64" of pid %d", ep,
                  length, remote_addr, base, base + key->length, key->pid);
        return UCS_ERR_INVALID_PARAM;
    }

    if ((remote->mapping != NULL) && (remote->ctx == iface->cuda_context)) {
        uct_cuda_mgi_ipc_map_ref(remote->mapping);
        target->mapping = remote->mapping;
    } else {
        status = uct_cuda_mgi_ipc_map(key, iface->cuda_context,
                                      &target->mapping);
        if (status != UCS_OK) {
            ucs_error("cuda_mgi ep %p: cannot map GPU memory of pid %d "
                      "(0x%"PRIx64", %s handle): %s", ep, key->pid, base,
                      uct_cuda_mgi_handle_type_name(key->handle_type),
                      ucs_status_string(status));
            return UCS_ERR_IO_ERROR;
        }
    }

    target->key    = key;
    target->remote = target->mapping->ptr + (remote_addr - base);
    return UCS_OK;
}


static void uct_cuda_mgi_ep_target_release(const uct_cuda_mgi_target_t *target)
{
    uct_cuda_mgi_ipc_unmap(target->mapping);
}


/* Whether the fences before now have passed: an ep or an iface fence
 * holds every later operation until the copies before it completed (they
 * may complete out of order: several streams per peer, striping). A fence
 * whose copies all completed is cleared here. */
static UCS_F_ALWAYS_INLINE int
uct_cuda_mgi_ep_fences_passed(uct_cuda_mgi_ep_t *ep,
                              uct_cuda_mgi_iface_t *iface)
{
    if (iface->fenced && (iface->outstanding == 0)) {
        iface->fenced = 0;
    }
    if (ep->fenced && (ep->outstanding == 0)) {
        ep->fenced = 0;
    }
    return !iface->fenced && !ep->fenced;
}


/* Whether an asynchronous copy may start now: the fences passed and a copy
 * slot is free */
static UCS_F_ALWAYS_INLINE int
uct_cuda_mgi_ep_may_post(uct_cuda_mgi_ep_t *ep, uct_cuda_mgi_iface_t *iface)
{
    return uct_cuda_mgi_ep_fences_passed(ep, iface) &&
           uct_cuda_mgi_iface_has_resources(iface);
}


ucs_status_t uct_cuda_mgi_ep_fence(uct_ep_h tl_ep, unsigned flags)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                 uct_cuda_mgi_iface_t);

    uct_cuda_mgi_iface_post_waiting(iface);
    ep->fenced = (ep->outstanding > 0);
    UCT_TL_EP_STAT_FENCE(&ep->super);
    return UCS_OK;
}


/* A copy the caller waits for: short and bcopy operations */
static ucs_status_t
uct_cuda_mgi_ep_copy_sync(uct_cuda_mgi_ep_t *ep, CUdeviceptr dst,
                          CUdeviceptr src, size_t length, const char *what)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                                 uct_cuda_mgi_iface_t);
    CUresult cu_err;

    cu_err = cuMemcpyAsync(dst, src, length, iface->sync_stream);
    if (cu_err == CUDA_SUCCESS) {
        cu_err = cuStreamSynchronize(iface->sync_stream);
    }

    if (cu_err != CUDA_SUCCESS) {
        ucs_error("cuda_mgi ep %p: %s of %zu bytes with pid %d failed: %s", ep,
                  what, length, ep->remote_pid, uct_cuda_mgi_cu_error(cu_err));
        return UCS_ERR_IO_ERROR;
    }

    return UCS_OK;
}


/* The route to stripe over, or NULL for a single direct copy: striping
 * needs GPU memory on both sides and a size above the threshold (any size
 * when the direct path is switched off). An operation with nothing else
 * in flight goes direct below UCT_CUDA_MGI_LONE_STRIPE thresholds: alone,
 * the staged paths' pipeline fill costs it more than their bandwidth
 * brings, where beside other operations they take bytes the direct path
 * would queue. */
static UCS_F_ALWAYS_INLINE uct_cuda_mgi_route_t *
uct_cuda_mgi_ep_route(uct_cuda_mgi_iface_t *iface, int local_cuda,
                      const uct_cuda_mgi_rkey_t *rkey, size_t length)
{
    int direct_ok = !!(iface->config.paths &
                       UCS_BIT(UCT_CUDA_MGI_PATH_DIRECT));
    uct_cuda_mgi_route_t *route;

    if ((direct_ok && (length < iface->config.multipath_thresh)) ||
        !local_cuda) {
        return NULL;
    }
    if (direct_ok && (iface->outstanding == 0) &&
        (length < UCT_CUDA_MGI_LONE_STRIPE * iface->config.multipath_thresh)) {
        return NULL;
    }

    route = uct_cuda_mgi_stripe_route(iface, rkey);
    return ((route != NULL) && (route->num_staged > 0)) ? route : NULL;
}


static UCS_F_ALWAYS_INLINE ucs_status_t
uct_cuda_mgi_ep_copy_async(uct_cuda_mgi_ep_t *ep, const uct_iov_t *iov,
                           size_t iovcnt, uint64_t remote_addr,
                           uct_rkey_t rkey, uct_completion_t *comp, int is_put)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                                 uct_cuda_mgi_iface_t);
    size_t length               = uct_iov_total_length(iov, iovcnt);
    uct_cuda_mgi_route_t *route;
    int queued = 0;
    int local_cuda;
    unsigned stream_idx;
    uct_cuda_mgi_event_desc_t *desc;
    uct_cuda_mgi_target_t target;
    ucs_status_t status;
    CUstream stream;
    CUresult cu_err;
    CUdeviceptr local;

    if (length == 0) {
        return UCS_OK;
    }

    if (!uct_cuda_mgi_ep_may_post(ep, iface)) {
        return UCS_ERR_NO_RESOURCE;
    }

    status = uct_cuda_mgi_iface_init_cuda(iface);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_cuda_mgi_ep_target(ep, rkey, remote_addr, length, &target);
    if (status != UCS_OK) {
        return status;
    }

    desc = ucs_mpool_get(&iface->event_mp);
    if (ucs_unlikely(desc == NULL)) {
        ucs_error("cuda_mgi ep %p: out of event descriptors", ep);
        status = UCS_ERR_NO_MEMORY;
        goto err_release;
    }

    stream_idx        = uct_cuda_mgi_iface_peer_stream(iface,
                                                       &target.key->uuid);
    stream            = iface->streams[stream_idx];
    local             = (CUdeviceptr)iov[0].buffer;
    /* the buffer itself says whether it is GPU memory: iov[0].memh is not
     * read, since the MD does not ask for one (no UCT_MD_FLAG_NEED_MEMH)
     * and UCP 1.13 then passes whatever its request held before */
    local_cuda        = uct_cuda_mgi_is_device_ptr(iov[0].buffer, NULL);
    desc->num_events  = 1;
    desc->done_mask   = 0;
    desc->waiting     = 0;
    desc->stream_bit  = UCS_BIT(stream_idx);
    desc->status      = UCS_OK;
    desc->stripe.route = NULL;
    route             = uct_cuda_mgi_ep_route(iface, local_cuda, target.key,
                                              length);
    if (route != NULL) {
        status = uct_cuda_mgi_stripe_post(iface, route, target.key, local,
                                          target.remote, remote_addr, length,
                                          is_put, stream, desc->event,
                                          &desc->stripe);
        if (status != UCS_OK) {
            goto err_put_desc;
        }
        desc->num_events = desc->stripe.num_parts;
        if (desc->stripe.length[0] == 0) {
            /* no direct part: its event was not recorded */
            desc->done_mask  = UCS_BIT(0);
            desc->stream_bit = 0;
        } else if (desc->num_events > 1) {
            desc->stream_bit = 0;     /* its parts are on several streams */
        }
        cu_err           = CUDA_SUCCESS;
    } else if (local_cuda && uct_cuda_mgi_iface_batching(iface)) {
        /* posted with the next ones, its event after them */
        uct_cuda_mgi_iface_enqueue(iface, stream,
                                   is_put ? target.remote : local,
                                   is_put ? local : target.remote, length,
                                   desc);
        queued = 1;
        cu_err = CUDA_SUCCESS;
    } else if (local_cuda) {
        /* the common case; cuMemcpyAsync would look both pointers up */
        cu_err = uct_cuda_mgi_copy_d2d(is_put, local, target.remote, length,
                                       stream);
    } else {
        cu_err = is_put ? cuMemcpyAsync(target.remote, local, length, stream) :
                          cuMemcpyAsync(local, target.remote, length, stream);
    }
    if ((cu_err == CUDA_SUCCESS) && (route == NULL) && !queued) {
        cu_err = cuEventRecord(desc->event[0], stream);
    }

    if (cu_err != CUDA_SUCCESS) {
        ucs_error("cuda_mgi ep %p: %s of %zu bytes with pid %d failed: %s", ep,
                  is_put ? "put" : "get", length, ep->remote_pid,
                  uct_cuda_mgi_cu_error(cu_err));
        status = UCS_ERR_IO_ERROR;
        goto err_put_desc;
    }

    desc->comp        = comp;
    desc->ep          = ep;
    desc->mapping     = target.mapping;
    desc->seq         = ++ep->posted;
    ucs_queue_push(&iface->outstanding_q, &desc->queue);
    ++iface->outstanding;
    ++ep->outstanding;
    ucs_trace_data("cuda_mgi ep %p: %s %zu bytes local %p remote 0x%"PRIx64
                   " (pid %d)", ep, is_put ? "put" : "get", length,
                   iov[0].buffer, remote_addr, ep->remote_pid);
    return UCS_INPROGRESS;

err_put_desc:
    ucs_mpool_put(desc);
err_release:
    uct_cuda_mgi_ep_target_release(&target);
    return status;
}


UCS_PROFILE_FUNC(ucs_status_t, uct_cuda_mgi_ep_put_zcopy,
                 (tl_ep, iov, iovcnt, remote_addr, rkey, comp),
                 uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                 uint64_t remote_addr, uct_rkey_t rkey,
                 uct_completion_t *comp)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);
    ucs_status_t status;

    status = uct_cuda_mgi_ep_copy_async(ep, iov, iovcnt, remote_addr, rkey,
                                        comp, 1);
    if (!UCS_STATUS_IS_ERR(status)) {
        UCT_TL_EP_STAT_OP(&ep->super, PUT, ZCOPY,
                          uct_iov_total_length(iov, iovcnt));
    }
    return status;
}


UCS_PROFILE_FUNC(ucs_status_t, uct_cuda_mgi_ep_get_zcopy,
                 (tl_ep, iov, iovcnt, remote_addr, rkey, comp),
                 uct_ep_h tl_ep, const uct_iov_t *iov, size_t iovcnt,
                 uint64_t remote_addr, uct_rkey_t rkey,
                 uct_completion_t *comp)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);
    ucs_status_t status;

    status = uct_cuda_mgi_ep_copy_async(ep, iov, iovcnt, remote_addr, rkey,
                                        comp, 0);
    if (!UCS_STATUS_IS_ERR(status)) {
        UCT_TL_EP_STAT_OP(&ep->super, GET, ZCOPY,
                          uct_iov_total_length(iov, iovcnt));
    }
    return status;
}


/* Short and bcopy operations complete before they return.  The local buffer
 * may be host or GPU memory (unified addressing tells the copy engine which):
 * UCP hands CUDA buffers to them too. */
static ucs_status_t
uct_cuda_mgi_ep_short(uct_cuda_mgi_ep_t *ep, void *buffer, size_t length,
                      uint64_t remote_addr, uct_rkey_t rkey, int is_put)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                                 uct_cuda_mgi_iface_t);
    uct_cuda_mgi_target_t target;
    ucs_status_t status;

    if (length == 0) {
        return UCS_OK;
    }

    if (!uct_cuda_mgi_ep_fences_passed(ep, iface)) {
        return UCS_ERR_NO_RESOURCE;
    }

    status = uct_cuda_mgi_iface_init_cuda(iface);
    if (status != UCS_OK) {
        return status;
    }

    status = uct_cuda_mgi_ep_target(ep, rkey, remote_addr, length, &target);
    if (status != UCS_OK) {
        return status;
    }

    status = is_put ?
             uct_cuda_mgi_ep_copy_sync(ep, target.remote, (CUdeviceptr)buffer,
                                       length, "put") :
             uct_cuda_mgi_ep_copy_sync(ep, (CUdeviceptr)buffer, target.remote,
                                       length, "get");
    uct_cuda_mgi_ep_target_release(&target);
    return status;
}


ucs_status_t uct_cuda_mgi_ep_put_short(uct_ep_h tl_ep, const void *buffer,
                                       unsigned length, uint64_t remote_addr,
                                       uct_rkey_t rkey)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                 uct_cuda_mgi_iface_t);
    ucs_status_t status;

    UCT_CHECK_LENGTH(length, 0, iface->config.max_short, "put_short");
    status = uct_cuda_mgi_ep_short(ep, (void*)buffer, length, remote_addr,
                                   rkey, 1);
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_OP(&ep->super, PUT, SHORT, length);
    }
    return status;
}


ucs_status_t uct_cuda_mgi_ep_get_short(uct_ep_h tl_ep, void *buffer,
                                       unsigned length, uint64_t remote_addr,
                                       uct_rkey_t rkey)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                 uct_cuda_mgi_iface_t);
    ucs_status_t status;

    UCT_CHECK_LENGTH(length, 0, iface->config.max_short, "get_short");
    status = uct_cuda_mgi_ep_short(ep, buffer, length, remote_addr, rkey, 0);
    if (status == UCS_OK) {
        UCT_TL_EP_STAT_OP(&ep->super, GET, SHORT, length);
    }
    return status;
}


ssize_t uct_cuda_mgi_ep_put_bcopy(uct_ep_h tl_ep, uct_pack_callback_t pack_cb,
                                  void *arg, uint64_t remote_addr,
                                  uct_rkey_t rkey)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                 uct_cuda_mgi_iface_t);
    ucs_status_t status;
    size_t length;

    if (!uct_cuda_mgi_ep_fences_passed(ep, iface)) {
        return UCS_ERR_NO_RESOURCE;
    }

    status = uct_cuda_mgi_iface_init_cuda(iface);
    if (status != UCS_OK) {
        return status;
    }

    length = pack_cb(iface->bounce, arg);
    UCT_CHECK_LENGTH(length, 0, iface->config.max_bcopy, "put_bcopy");
    status = uct_cuda_mgi_ep_short(ep, iface->bounce, length, remote_addr,
                                   rkey, 1);
    if (status != UCS_OK) {
        return status;
    }

    UCT_TL_EP_STAT_OP(&ep->super, PUT, BCOPY, length);
    return length;
}


ucs_status_t uct_cuda_mgi_ep_get_bcopy(uct_ep_h tl_ep,
                                       uct_unpack_callback_t unpack_cb,
                                       void *arg, size_t length,
                                       uint64_t remote_addr, uct_rkey_t rkey,
                                       uct_completion_t *comp)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                 uct_cuda_mgi_iface_t);
    ucs_status_t status;

    UCT_CHECK_LENGTH(length, 0, iface->config.max_bcopy, "get_bcopy");

    /* UCP unpacks RMA gets with plain memcpy into the user's buffer, which
     * may be GPU memory that the CPU cannot write: then arg is the
     * destination by memcpy's definition, and the copy engine writes it. */
    if (unpack_cb == (uct_unpack_callback_t)memcpy) {
        status = uct_cuda_mgi_ep_short(ep, arg, length, remote_addr, rkey, 0);
    } else {
        status = uct_cuda_mgi_iface_init_cuda(iface);
        if (status != UCS_OK) {
            return status;
        }

        status = uct_cuda_mgi_ep_short(ep, iface->bounce, length, remote_addr,
                                       rkey, 0);
        if (status == UCS_OK) {
            unpack_cb(arg, iface->bounce, length);
        }
    }

    if (status == UCS_OK) {
        UCT_TL_EP_STAT_OP(&ep->super, GET, BCOPY, length);
    }
    return status;
}


ucs_status_t uct_cuda_mgi_ep_pending_add(uct_ep_h tl_ep,
                                         uct_pending_req_t *req,
                                         unsigned flags)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                 uct_cuda_mgi_iface_t);
    uct_cuda_mgi_pending_priv_t *priv;

    UCS_STATIC_ASSERT(sizeof(*priv) <= UCT_PENDING_REQ_PRIV_LEN);

    if (uct_cuda_mgi_ep_may_post(ep, iface)) {
        return UCS_ERR_BUSY;
    }

    priv     = (uct_cuda_mgi_pending_priv_t*)&req->priv;
    priv->ep = ep;
    uct_pending_req_queue_push(&iface->pending_q, req);
    UCT_TL_EP_STAT_PEND(&ep->super);
    return UCS_OK;
}


void uct_cuda_mgi_ep_pending_purge(uct_ep_h tl_ep,
                                   uct_pending_purge_callback_t cb, void *arg)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                 uct_cuda_mgi_iface_t);
    uct_cuda_mgi_pending_priv_t *priv;
    ucs_queue_iter_t iter;

    ucs_queue_for_each_safe(priv, iter, &iface->pending_q, super.queue_elem) {
        if (priv->ep != ep) {
            continue;
        }

        ucs_queue_del_iter(&iface->pending_q, iter);
        if (cb != NULL) {
            cb(ucs_container_of(priv, uct_pending_req_t, priv), arg);
        }
    }
}


static int uct_cuda_mgi_ep_has_pending(uct_cuda_mgi_ep_t *ep)
{
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(ep->super.super.iface,
                                                 uct_cuda_mgi_iface_t);
    uct_cuda_mgi_pending_priv_t *priv;

    ucs_queue_for_each(priv, &iface->pending_q, super.queue_elem) {
        if (priv->ep == ep) {
            return 1;
        }
    }
    return 0;
}


ucs_status_t uct_cuda_mgi_ep_flush(uct_ep_h tl_ep, unsigned flags,
                                   uct_completion_t *comp)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);
    uct_cuda_mgi_iface_t *iface = ucs_derived_of(tl_ep->iface,
                                                 uct_cuda_mgi_iface_t);
    uct_cuda_mgi_flush_req_t *flush;

    if (uct_cuda_mgi_ep_has_pending(ep)) {
        UCT_TL_EP_STAT_FLUSH_WAIT(&ep->super);
        return UCS_ERR_NO_RESOURCE;
    }

    if (ep->outstanding == 0) {
        UCT_TL_EP_STAT_FLUSH(&ep->super);
        return UCS_OK;
    }

    uct_cuda_mgi_iface_post_waiting(iface);

    if (comp != NULL) {
        flush = ucs_malloc(sizeof(*flush), "uct_cuda_mgi_flush_req");
        if (flush == NULL) {
            ucs_error("cuda_mgi ep %p: failed to allocate a flush request", ep);
            return UCS_ERR_NO_MEMORY;
        }
        flush->comp = comp;
        flush->seq  = ep->posted;
        ucs_queue_push(&ep->flush_q, &flush->queue);
    }

    UCT_TL_EP_STAT_FLUSH_WAIT(&ep->super);
    return UCS_INPROGRESS;
}


ucs_status_t uct_cuda_mgi_ep_check(uct_ep_h tl_ep, unsigned flags,
                                   uct_completion_t *comp)
{
    uct_cuda_mgi_ep_t *ep = ucs_derived_of(tl_ep, uct_cuda_mgi_ep_t);

    UCT_CUDA_MGI_EP_CHECK_PARAMS(flags, comp);
    uct_ep_keepalive_check(tl_ep, &ep->keepalive, ep->remote_pid, flags, comp);
    return UCS_OK;
}

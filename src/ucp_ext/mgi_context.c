/**
 * MGI context: parameters, bootstrap, UCP context / worker and the
 * connections to every process of the job; the delete of an endpoint,
 * which frees the deleted channels that still hold it first.
 */
#include "mgi_int.h"
#include "mgi_bootstrap.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/mman.h>

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int mgi_is_pow2(unsigned v)
{
    return (v != 0) && ((v & (v - 1)) == 0);
}

/* The parameters the context takes (the caller's fields, the others from
 * the MGI_* settings, their ranges checked) in *p, and its segment size. */
static ucs_status_t mgi_context_check_params(const mgi_context_params_t *params,
                                             mgi_context_params_t *p,
                                             size_t *seg_size_p)
{
    ucs_status_t status;
    size_t seg;

    status = mgi_params_resolve(params, p);
    if (status != UCS_OK) {
        return status;
    }
    seg = p->seg_size;

    if (!mgi_is_pow2(p->stage_depth) || !mgi_is_pow2(p->sort_depth) ||
        !mgi_is_pow2(p->recv_depth) || !mgi_is_pow2(p->final_depth)) {
        ucs_error("mgi context: ring depths must be powers of two "
                  "(MGI_STAGE_DEPTH %u MGI_SORT_DEPTH %u MGI_RECV_DEPTH %u "
                  "MGI_FINAL_DEPTH %u)", p->stage_depth, p->sort_depth,
                  p->recv_depth, p->final_depth);
        return UCS_ERR_INVALID_PARAM;
    }
    if (seg == 0) {
        /* paper §5.3: |S| x producer threads per block x N; rings are
         * shared by the channels of an endpoint, so |S| is a hint */
        seg = MGI_SEG_HDR_SIZE + (size_t)mgi_msg_size(p->tuple_size) *
                                 p->producer_threads * p->batch;
    }
    seg = (seg + MGI_RING_LINE - 1) & ~(size_t)(MGI_RING_LINE - 1);
    if ((seg < 256) || (seg > (512u << 10))) {
        ucs_error("mgi context: segment size (MGI_SEG_SIZE) %zu out of "
                  "[256, 512K]", seg);
        return UCS_ERR_INVALID_PARAM;
    }
    *seg_size_p = seg;
    return UCS_OK;
}


static ucs_status_t mgi_context_connect(mgi_context_t *ctx)
{
    ucp_worker_attr_t wattr = {.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS};
    ucp_ep_params_t ep_params;
    uint64_t len, max_len = 0, *lens;
    char *addrs = NULL, errbuf[256];
    ucs_status_t status;
    int r;

    status = ucp_worker_query(ctx->worker, &wattr);
    if (status != UCS_OK) {
        ucs_error("mgi context %p: ucp_worker_query: %s", ctx,
                  ucs_status_string(status));
        return status;
    }

    lens = calloc(ctx->size, sizeof(*lens));
    if (lens == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out_release;
    }
    len    = wattr.address_length;
    status = mgi_bootstrap_allgather(&ctx->bs, &len, lens, sizeof(len));
    if (status != UCS_OK) {
        goto out_free_lens;
    }
    /* bounded before it sizes an allocation: only ranks that know the job
     * token (or the application's allgather) got here, but a rank that
     * runs other code must not make this one allocate terabytes */
    status = mgi_bootstrap_addr_lens_check(lens, ctx->size, &max_len, errbuf,
                                           sizeof(errbuf));
    if (status != UCS_OK) {
        ucs_error("mgi context %p: %s", ctx, errbuf);
        goto out_free_lens;
    }
    addrs = calloc(ctx->size + 1, max_len);
    if (addrs == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out_free_lens;
    }
    memcpy(addrs + ctx->size * max_len, wattr.address, len);
    status = mgi_bootstrap_allgather(&ctx->bs, addrs + ctx->size * max_len,
                                     addrs, max_len);
    if (status != UCS_OK) {
        goto out_free_addrs;
    }

    for (r = 0; r < ctx->size; ++r) {
        ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        ep_params.address    = (ucp_address_t*)(addrs + r * max_len);
        if (r != ctx->rank) {
            /* without peer error handling UCP aborts the process when a
             * transfer from a rank that ended fails */
            ep_params.field_mask    |= UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                                       UCP_EP_PARAM_FIELD_ERR_HANDLER;
            ep_params.err_mode       = UCP_ERR_HANDLING_MODE_PEER;
            ep_params.err_handler.cb = mgi_context_ep_failed;
            ep_params.err_handler.arg = ctx;
            status = ucp_ep_create(ctx->worker, &ep_params, &ctx->peers[r]);
            if (status == UCS_OK) {
                ctx->peer_err_mode[r] = 1;
                continue;
            }
            ucs_warn("mgi context %p rank %d: no transport of UCX_TLS "
                     "reaches rank %d with peer failure handling (%s): if "
                     "that rank ends, UCX may abort this one", ctx,
                     ctx->rank, r, ucs_status_string(status));
            ep_params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        }
        status = ucp_ep_create(ctx->worker, &ep_params, &ctx->peers[r]);
        if (status != UCS_OK) {
            ucs_error("mgi context %p rank %d: cannot connect to rank %d: %s",
                      ctx, ctx->rank, r, ucs_status_string(status));
            goto out_free_addrs;
        }
    }
    /* kept where ranks span hosts: rails connect to them (mgi_rail.c) */
    status = mgi_rails_init(ctx, addrs, lens, max_len);

out_free_addrs:
    free(addrs);
out_free_lens:
    free(lens);
out_release:
    ucp_worker_release_address(ctx->worker, wattr.address);
    return status;
}

/* The ring geometry every rank must share: movers address other ranks'
 * receive lanes by offset, and every rank makes the same direct rings. */
typedef struct {
    uint64_t seg_size;
    uint32_t recv_depth;
    uint32_t direct_rings;
    uint32_t direct_ring_kb;
    uint32_t gpu_defaults;
} mgi_ring_geometry_t;

/* One setting of rank r against rank 0's: an error naming its variable. */
static int mgi_context_differs(const mgi_ring_geometry_t *all, int r,
                               const char *var, uint64_t mine, uint64_t r0)
{
    if (mine == r0) {
        return 0;
    }
    ucs_error("mgi context: rank %d has %s=%llu, rank 0 %llu: set it alike "
              "on every rank%s", r, var, (unsigned long long)mine,
              (unsigned long long)r0,
              (all[r].gpu_defaults != all[0].gpu_defaults) ?
              " (their ring defaults differ too: those for GPU endpoints "
              "where the NVIDIA driver lists a GPU, else those for CPU "
              "endpoints; set the settings alike)" :
              "");
    return 1;
}

/* Collective: refused at every rank alike (each sees every rank's) when a
 * rank's ring geometry differs from rank 0's. */
static ucs_status_t mgi_context_agree(mgi_context_t *ctx)
{
    mgi_ring_geometry_t mine, *all;
    ucs_status_t status;
    int r;

    memset(&mine, 0, sizeof(mine));
    mine.seg_size       = ctx->seg_size;
    mine.recv_depth     = ctx->params.recv_depth;
    mine.direct_rings   = ctx->params.direct_rings;
    mine.direct_ring_kb = ctx->params.direct_ring_kb;
    mine.gpu_defaults   = ctx->params.gpu_defaults;
    all = calloc(ctx->size, sizeof(mine));
    if (all == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    status = mgi_bootstrap_allgather(&ctx->bs, &mine, all, sizeof(mine));
    for (r = 1; (status == UCS_OK) && (r < ctx->size); ++r) {
        if (mgi_context_differs(all, r, "MGI_SEG_SIZE (segment bytes)",
                                all[r].seg_size, all[0].seg_size) ||
            mgi_context_differs(all, r, "MGI_RECV_DEPTH",
                                all[r].recv_depth, all[0].recv_depth) ||
            mgi_context_differs(all, r, "MGI_DIRECT_RINGS",
                                all[r].direct_rings, all[0].direct_rings) ||
            mgi_context_differs(all, r, "mgi_context_params_t.direct_ring_kb",
                                all[r].direct_ring_kb,
                                all[0].direct_ring_kb)) {
            status = UCS_ERR_INVALID_PARAM;
        }
    }
    free(all);
    return status;
}

/* Close the UCP endpoints to the other ranks, each close waited for (it
 * needs the peer's progress), but not where `apart` (the ranks did not
 * meet at the destroy: some may have gone on and ended) or to a rank
 * whose process ended: they confirm no close (and a forced one needs peer
 * error handling); ucp_worker_destroy releases those endpoints. */
static void mgi_context_disconnect(mgi_context_t *ctx, int apart)
{
    int r;

    for (r = 0; r < ctx->size; ++r) {
        if (ctx->peers[r] != NULL) {
            mgi_context_ep_close(ctx, &ctx->peers[r], r, apart,
                                 (ctx->peer_err_mode != NULL) &&
                                 ctx->peer_err_mode[r]);
        }
    }
}

ucs_status_t mgi_context_create(const mgi_context_params_t *params,
                                mgi_context_h *ctx_p)
{
    mgi_context_t *ctx;
    ucs_status_t status;
    int dummy = 0, *all;
    size_t seg;

    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ctx->mover_device = MGI_EP_HOST;
    ctx->nic          = -1;
    status      = mgi_context_check_params(params, &ctx->params,
                                           &ctx->seg_size);
    if (status != UCS_OK) {
        goto err_free;
    }
    params           = &ctx->params;
    ctx->sort_mirror = mgi_config_test_hook("SORT_MIRROR");
    ctx->ctl_ucp     = mgi_config_test_hook("CTL_UCP");
    if (params->gpu_defaults && (params->seg_size == MGI_GPU_SEG_SIZE) &&
        !mgi_config_seg_size_set()) {
        /* the default for GPU endpoints, halved where a GPU's sorter
         * would not hold it in shared memory (one with less than H100's) */
        seg = mgi_gpu_seg_fit(ctx->seg_size);
        if (seg != ctx->seg_size) {
            ucs_info("mgi context: segments of %zu bytes (the GPU default "
                     "%zu does not fit a sorter block's shared memory on "
                     "every GPU here)", seg, ctx->seg_size);
            ctx->seg_size = seg;
        }
    }
    pthread_mutex_init(&ctx->lock, NULL);

    status = mgi_bootstrap_init(&ctx->bs, params);
    if (status != UCS_OK) {
        goto err_free;
    }
    ctx->rank = ctx->bs.oob.rank;
    ctx->size = ctx->bs.oob.size;
    if (ctx->size > MGI_MAX_RANKS) {
        ucs_error("mgi context: %d processes, at most %d", ctx->size,
                  MGI_MAX_RANKS);
        status = UCS_ERR_INVALID_PARAM;
        goto err_bootstrap;
    }

    ctx->peers    = calloc(ctx->size, sizeof(*ctx->peers));
    ctx->peer_err_mode = calloc(ctx->size, sizeof(*ctx->peer_err_mode));
    ctx->peer_eps = calloc(MGI_MAX_EPS, sizeof(*ctx->peer_eps));
    ctx->lanes    = calloc(MGI_MAX_EPS, sizeof(*ctx->lanes));
    ctx->chs      = calloc(params->max_channels, sizeof(*ctx->chs));
    if ((ctx->peers == NULL) || (ctx->peer_err_mode == NULL) ||
        (ctx->peer_eps == NULL) ||
        (ctx->chs == NULL) || (ctx->lanes == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_arrays;
    }

    /* who shares this host decides the transports the context needs */
    status = mgi_context_hosts(ctx);
    if (status != UCS_OK) {
        goto err_arrays;
    }
    status = mgi_ucp_open(ctx, NULL, &ctx->ucp, &ctx->worker);
    if (status != UCS_OK) {
        goto err_arrays;
    }

    ctx->has_cuda_mgi = mgi_ucp_has(ctx->ucp, "cuda_mgi", NULL);
    status = mgi_context_agree(ctx);
    if (status != UCS_OK) {
        goto err_worker;
    }
    status = mgi_context_connect(ctx);
    if (status != UCS_OK) {
        goto err_worker;
    }

    status = mgi_mover_start(ctx);
    if (status != UCS_OK) {
        goto err_disconnect;
    }

    /* nobody returns before every rank is connected and moving */
    all = calloc(ctx->size, sizeof(int));
    if (all == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_mover;
    }
    status = mgi_bootstrap_allgather(&ctx->bs, &dummy, all, sizeof(int));
    free(all);
    if (status != UCS_OK) {
        goto err_mover;
    }

    ucs_info("mgi context %p: rank %d of %d, segment %zu bytes, stage/sort/"
             "recv/final depth %u/%u/%u/%u, %u sorter block(s); ring "
             "defaults sized for %s endpoints (gpu_defaults %u)", ctx,
             ctx->rank, ctx->size, ctx->seg_size, params->stage_depth,
             params->sort_depth, params->recv_depth, params->final_depth,
             params->sorter_blocks, params->gpu_defaults ? "GPU" : "CPU",
             params->gpu_defaults);
    *ctx_p = ctx;
    return UCS_OK;

err_mover:
    mgi_mover_stop(ctx);
err_disconnect:
    mgi_context_disconnect(ctx, 0);
err_worker:
    mgi_rails_fini(ctx);
    ucp_worker_destroy(ctx->worker);
    ucp_cleanup(ctx->ucp);
err_arrays:
    mgi_route_fini(ctx);   /* the host graph the NIC choice loaded */
    free(ctx->lanes);
    free(ctx->chs);
    free(ctx->peer_eps);
    free(ctx->peers);
    free(ctx->peer_err_mode);
    free(ctx->peer_procs);
err_bootstrap:
    mgi_bootstrap_fini(&ctx->bs);
err_free:
    free(ctx);
    return status;
}

void mgi_context_destroy(mgi_context_h ctx)
{
    mgi_channel_t *ch;
    unsigned i;
    int dummy = 0, apart = 0, *all;

    /* peers may still read our rings: leave together (and once they
     * passed this, they may end before the mover stops) */
    ctx->leaving = 1;
    all = calloc(ctx->size, sizeof(int));
    if (all != NULL) {
        apart = (mgi_bootstrap_allgather(&ctx->bs, &dummy, all,
                                         sizeof(int)) != UCS_OK);
        free(all);
    }

    mgi_region_fini_all(ctx);   /* their proxies use the worker */
    for (i = 0; i < ctx->neps; ++i) {
        if (ctx->eps[i] != NULL) {
            mgi_sorter_stop(ctx->eps[i]);
        }
    }
    for (i = 0; i < ctx->params.max_channels; ++i) {
        if (ctx->chs[i] != NULL) {
            mgi_channel_free(ctx->chs[i]);
            ctx->chs[i] = NULL;
        }
    }
    while ((ch = ctx->dead) != NULL) {  /* deleted ones: no sorter runs */
        ctx->dead = ch->dead_next;
        mgi_channel_free(ch);
    }
    for (i = 0; i < ctx->ndmaps; ++i) { /* no sorter runs now */
        mgi_gpu_peer_unmap(ctx->dmaps[i].p);
    }
    free(ctx->dmaps);
    mgi_route_fini(ctx);
    ctx->dmaps  = NULL;
    ctx->ndmaps = 0;
    mgi_mover_quiesce(ctx);
    for (i = 0; i < MGI_MAX_EPS; ++i) {
        if (ctx->peer_eps[i].valid) {
            ucp_rkey_destroy(ctx->peer_eps[i].rkey);
            if (ctx->peer_eps[i].ctl_map != NULL) {
                munmap(ctx->peer_eps[i].ctl_map, ctx->peer_eps[i].ctl_map_len);
                ctx->peer_eps[i].ctl_map = NULL;
            }
            if (ctx->peer_eps[i].has_ctl) {
                ucp_rkey_destroy(ctx->peer_eps[i].ctl_rkey);
            }
            if (ctx->peer_eps[i].nic_rkey != NULL) {
                ucp_rkey_destroy(ctx->peer_eps[i].nic_rkey);
                ctx->peer_eps[i].nic_rkey = NULL;
            }
            ctx->peer_eps[i].valid = 0;
        }
    }
    /* the mover, idle now, keeps progressing the worker until every peer
     * closed too: a TCP close completes only with the peer's progress */
    mgi_context_disconnect(ctx, apart);
    mgi_rails_disconnect(ctx, apart);
    all = calloc(ctx->size, sizeof(int));
    if ((all != NULL) && !apart) {
        mgi_bootstrap_allgather(&ctx->bs, &dummy, all, sizeof(int));
    }
    free(all);
    mgi_mover_stop(ctx);
    for (i = 0; i < ctx->neps; ++i) {
        if (ctx->eps[i] != NULL) {
            mgi_ep_destroy(ctx->eps[i]);
        }
    }
    /* after the sorter kernels: its pinned memory is freed here */
    mgi_mover_cuda_fini(ctx);
    mgi_gpu_host_free(ctx->fail_word);
    mgi_rails_fini(ctx);   /* after the endpoints' registrations there */
    ucp_worker_destroy(ctx->worker);
    ucp_cleanup(ctx->ucp);
    mgi_bootstrap_fini(&ctx->bs);
    for (i = 0; i < MGI_MAX_EPS; ++i) {
        free(ctx->lanes[i]);
    }
    free(ctx->lanes);
    free(ctx->chs);
    free(ctx->peer_eps);
    free(ctx->peers);
    free(ctx->peer_err_mode);
    free(ctx->peer_procs);
    free(ctx);
}

/* An endpoint's delete lives here, above the channels: it frees the
 * deleted ones first (mgi_ch_reap). */
ucs_status_t mgi_ep_delete(mgi_context_h ctx, mgi_ep_id_t id)
{
    ucs_status_t status;
    mgi_ep_t *ep;

    /* deleted channels hold their endpoints until their sorters moved on */
    status = mgi_ch_reap(ctx, 1);
    if (status != UCS_OK) {
        return status;
    }
    pthread_mutex_lock(&ctx->lock);
    ep = mgi_ep_lookup(ctx, id);
    if (ep == NULL) {
        pthread_mutex_unlock(&ctx->lock);
        ucs_error("mgi context %p: delete of unknown endpoint %u", ctx, id);
        return UCS_ERR_NO_ELEM;
    }
    if (ep->refcount > 0) {
        pthread_mutex_unlock(&ctx->lock);
        ucs_error("mgi ep %u: still used by %u channel(s); delete them first",
                  id, ep->refcount);
        return UCS_ERR_BUSY;
    }
    /* the mover may be walking our routes: stop it while we go */
    pthread_mutex_unlock(&ctx->lock);
    mgi_mover_stop(ctx);
    pthread_mutex_lock(&ctx->lock);
    mgi_ep_destroy(ep);
    pthread_mutex_unlock(&ctx->lock);
    return mgi_mover_start(ctx);
}

ucs_status_t mgi_params_seg_size(const mgi_context_params_t *params,
                                 size_t *seg_size_p)
{
    mgi_context_params_t p;

    return mgi_context_check_params(params, &p, seg_size_p);
}

size_t mgi_context_seg_size(mgi_context_h ctx)
{
    return ctx->seg_size;
}

int mgi_context_rank(mgi_context_h ctx)
{
    return ctx->rank;
}

int mgi_context_size(mgi_context_h ctx)
{
    return ctx->size;
}

ucs_status_t mgi_context_allgather(mgi_context_h ctx, const void *sbuf,
                                   void *rbuf, size_t len)
{
    return mgi_bootstrap_allgather(&ctx->bs, sbuf, rbuf, len);
}

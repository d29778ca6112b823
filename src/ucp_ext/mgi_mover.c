/**
 * MGI mover: a host thread that moves full segments of the sort rings to
 * the next hop's receive ring with UCP RMA (paper §5.4, stage (4)/(5)).
 *
 * For each route (sort ring -> lane `rank` of the next hop's receive ring):
 *   1. ucp_put_nbx of up to `credits` full segments into free lane slots;
 *   2. flush (remote completion), then put the new RTail of the lane;
 *   3. flush again, then release the sort segments (the sorter's flush
 *      bookkeeping reads that as "delivered").
 * Credits are the lane's free slots: RTail we published minus the RHead we
 * last read with ucp_get_nbx; a route without credit refreshes it.
 * Dynamic buffer selection: in every round the routes are served by
 * occupancy of their sort rings, fullest first, within a budget of
 * `mover_batch` segments, so skewed (popular) destinations get served
 * first while no route starves.
 */
#include "mgi_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct mgi_mover_cand {
    mgi_route_t *route;
    uint32_t    occupancy;
    uint32_t    ready;
} mgi_mover_cand_t;

typedef struct mgi_mover {
    mgi_context_t    *ctx;
    mgi_mover_cand_t *cand;
    unsigned         ncand_max;
    mgi_route_t      **refresh;
    void             **reqs;
    unsigned         rr;               /* round-robin tie breaker */
    uint64_t         moved_segs, last_moved, last_log_ns, credit_stalls;
} mgi_mover_t;

static ucs_status_t mgi_mover_put(mgi_context_t *ctx, mgi_route_t *route,
                                  void *buf, size_t len, uint64_t raddr,
                                  void **req_p)
{
    mgi_peer_ep_t *peer = &ctx->peer_eps[route->next_hop];
    ucp_request_param_t param;
    ucs_status_ptr_t req;

    memset(&param, 0, sizeof(param));
    req = ucp_put_nbx(ctx->peers[peer->rank], buf, len, raddr, peer->rkey,
                      &param);
    if (UCS_PTR_IS_ERR(req)) {
        ucs_error("mgi ep %u: put of %zu bytes to endpoint %u failed: %s",
                  route->ep->id, len, route->next_hop,
                  ucs_status_string(UCS_PTR_STATUS(req)));
        return UCS_PTR_STATUS(req);
    }
    *req_p = req;
    return UCS_OK;
}

static ucs_status_t mgi_mover_wait_all(mgi_mover_t *m, unsigned nreqs)
{
    ucs_status_t status = UCS_OK, st;
    unsigned i;

    for (i = 0; i < nreqs; ++i) {
        st = mgi_ucp_wait(m->ctx, m->reqs[i], "mover request", m->ctx);
        if (st != UCS_OK) {
            status = st;
        }
    }
    return status;
}

static ucs_status_t mgi_mover_flush(mgi_mover_t *m)
{
    ucp_request_param_t param;

    memset(&param, 0, sizeof(param));
    return mgi_ucp_wait(m->ctx, ucp_worker_flush_nbx(m->ctx->worker, &param),
                        "mover flush", m->ctx);
}

static uint64_t mgi_mover_lane_addr(mgi_context_t *ctx, mgi_route_t *route)
{
    size_t lane_bytes = mgi_ring_mem_size(ctx->params.recv_depth,
                                          ctx->seg_size);

    return ctx->peer_eps[route->next_hop].rbase +
           (uint64_t)ctx->rank * lane_bytes;
}

/* Refresh the credits of routes that have data but no free remote slot. */
static ucs_status_t mgi_mover_refresh(mgi_mover_t *m, unsigned n)
{
    mgi_context_t *ctx = m->ctx;
    ucp_request_param_t param;
    mgi_peer_ep_t *peer;
    mgi_route_t *route;
    ucs_status_ptr_t req;
    unsigned i;

    memset(&param, 0, sizeof(param));
    for (i = 0; i < n; ++i) {
        route = m->refresh[i];
        peer  = &ctx->peer_eps[route->next_hop];
        req   = ucp_get_nbx(ctx->peers[peer->rank], &route->head_buf,
                            sizeof(route->head_buf),
                            mgi_mover_lane_addr(ctx, route) +
                            offsetof(mgi_ring_t, cons_tail),
                            peer->rkey, &param);
        if (UCS_PTR_IS_ERR(req)) {
            ucs_error("mgi ep %u: credit read from endpoint %u failed: %s",
                      route->ep->id, route->next_hop,
                      ucs_status_string(UCS_PTR_STATUS(req)));
            return UCS_PTR_STATUS(req);
        }
        m->reqs[i] = req;
    }
    if (mgi_mover_wait_all(m, n) != UCS_OK) {
        return UCS_ERR_IO_ERROR;
    }
    for (i = 0; i < n; ++i) {
        m->refresh[i]->lane_head = m->refresh[i]->head_buf;
    }
    return UCS_OK;
}

static int mgi_mover_cand_cmp(const void *a, const void *b)
{
    const mgi_mover_cand_t *x = a, *y = b;

    return (x->occupancy < y->occupancy) - (x->occupancy > y->occupancy);
}

/* One round; returns segments moved, or a negative status. */
static int mgi_mover_round(mgi_mover_t *m)
{
    mgi_context_t *ctx = m->ctx;
    uint32_t depth     = ctx->params.recv_depth;
    unsigned budget    = ctx->params.mover_batch;
    unsigned ncand = 0, nrefresh = 0, nreqs = 0, moved = 0;
    unsigned e, i, k, n, neps, nroutes;
    mgi_mover_cand_t *c;
    mgi_route_t *route;
    uint32_t credits, ready;
    uint64_t laddr;
    ucs_status_t status;

    neps = __atomic_load_n(&ctx->neps, __ATOMIC_ACQUIRE);
    for (e = 0; e < neps; ++e) {
        mgi_ep_t *ep = ctx->eps[e];
        if (ep == NULL) {
            continue;
        }
        nroutes = __atomic_load_n(&ep->nroutes, __ATOMIC_ACQUIRE);
        for (i = 0; i < nroutes; ++i) {
            route = ep->route_list[i];
            ready = mgi_ring_ready(route->ring, budget);
            if ((ready == 0) || (ncand >= m->ncand_max)) {
                continue;
            }
            credits = depth - (route->lane_tail - route->lane_head);
            if (credits == 0) {
                m->refresh[nrefresh++] = route;
                route->stalls++;
                continue;
            }
            c            = &m->cand[ncand++];
            c->route     = route;
            c->ready     = (ready < credits) ? ready : credits;
            c->occupancy = mgi_ring_count(route->ring);
        }
    }

    if (nrefresh > 0) {
        m->credit_stalls += nrefresh;
        status = mgi_mover_refresh(m, nrefresh);
        if (status != UCS_OK) {
            return status;
        }
    }
    if (ncand == 0) {
        return 0;
    }

    /* fullest sort rings first; rotate the start among equals */
    if (ncand > 1) {
        m->rr = (m->rr + 1) % ncand;
        for (i = 0; i < m->rr; ++i) {
            mgi_mover_cand_t tmp = m->cand[0];
            memmove(&m->cand[0], &m->cand[1], (ncand - 1) * sizeof(tmp));
            m->cand[ncand - 1] = tmp;
        }
        qsort(m->cand, ncand, sizeof(*m->cand), mgi_mover_cand_cmp);
    }

    for (i = 0; (i < ncand) && (budget > 0); ++i) {
        c     = &m->cand[i];
        route = c->route;
        n     = (c->ready < budget) ? c->ready : budget;
        laddr = mgi_mover_lane_addr(ctx, route);
        for (k = 0; k < n; ++k) {
            status = mgi_mover_put(ctx, route,
                                   mgi_ring_seg(route->ring,
                                                route->ring->cons_tail + k),
                                   ctx->seg_size,
                                   laddr + MGI_RING_HDR_SIZE +
                                   (uint64_t)((route->lane_tail + k) &
                                              (depth - 1)) * ctx->seg_size,
                                   &m->reqs[nreqs]);
            if (status != UCS_OK) {
                return status;
            }
            ++nreqs;
        }
        c->ready = n;
        budget  -= n;
    }
    ncand = i;

    status = mgi_mover_wait_all(m, nreqs);
    if (status == UCS_OK) {
        status = mgi_mover_flush(m);
    }
    if (status != UCS_OK) {
        return status;
    }

    /* publish RTail of each lane after its segments landed */
    nreqs = 0;
    for (i = 0; i < ncand; ++i) {
        route           = m->cand[i].route;
        route->tail_buf = route->lane_tail + m->cand[i].ready;
        status = mgi_mover_put(ctx, route, &route->tail_buf,
                               sizeof(route->tail_buf),
                               mgi_mover_lane_addr(ctx, route) +
                               offsetof(mgi_ring_t, prod_tail),
                               &m->reqs[nreqs++]);
        if (status != UCS_OK) {
            return status;
        }
    }
    status = mgi_mover_wait_all(m, nreqs);
    if (status == UCS_OK) {
        status = mgi_mover_flush(m);
    }
    if (status != UCS_OK) {
        return status;
    }

    for (i = 0; i < ncand; ++i) {
        route             = m->cand[i].route;
        route->lane_tail += m->cand[i].ready;
        route->moved_segs += m->cand[i].ready;
        mgi_ring_release(route->ring, m->cand[i].ready);
        moved += m->cand[i].ready;
    }
    return moved;
}

static void mgi_mover_log(mgi_mover_t *m)
{
    mgi_context_t *ctx = m->ctx;
    uint64_t now       = mgi_time_ns();
    double dt          = (now - m->last_log_ns) / 1e9;
    double segs;

    if ((ctx->params.log_interval_ms == 0) ||
        (dt * 1000 < ctx->params.log_interval_ms) ||
        !ucs_log_is_enabled(UCS_LOG_LEVEL_INFO)) {
        return;
    }
    segs = (m->moved_segs - m->last_moved) / dt;
    ucs_info("mgi context %p mover (rank %d): %.0f segments/s, %.1f MB/s, "
             "%lu rounds without credit", ctx, ctx->rank, segs,
             segs * ctx->seg_size / 1e6, m->credit_stalls);
    m->last_log_ns = now;
    m->last_moved  = m->moved_segs;
}

static void *mgi_mover_thread(void *arg)
{
    mgi_mover_t *m     = arg;
    mgi_context_t *ctx = m->ctx;
    unsigned idle      = 0;
    int moved;

    m->last_log_ns = mgi_time_ns();
    while (!ctx->mover_stop) {
        ucp_worker_progress(ctx->worker);
        moved = mgi_mover_round(m);
        if (moved < 0) {
            ucs_error("mgi context %p mover (rank %d): stopped on error %s",
                      ctx, ctx->rank, ucs_status_string(moved));
            ctx->mover_status = (ucs_status_t)moved;
            break;
        }
        m->moved_segs += moved;
        mgi_mover_log(m);
        if (moved > 0) {
            idle = 0;
        } else {
            mgi_idle(ctx, &idle);
        }
    }
    return NULL;
}

ucs_status_t mgi_mover_start(mgi_context_t *ctx)
{
    unsigned n = MGI_MAX_LOCAL_EPS * 1024;
    mgi_mover_t *m;
    int ret;

    if (ctx->mover_running) {
        return UCS_OK;
    }
    m = calloc(1, sizeof(*m));
    if (m == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    m->ctx       = ctx;
    m->ncand_max = n;
    m->cand      = calloc(n, sizeof(*m->cand));
    m->refresh   = calloc(n, sizeof(*m->refresh));
    m->reqs      = calloc(n + ctx->params.mover_batch, sizeof(*m->reqs));
    if ((m->cand == NULL) || (m->refresh == NULL) || (m->reqs == NULL)) {
        goto err_free;
    }
    ctx->mover_stop   = 0;
    ctx->mover_status = UCS_OK;
    ret = pthread_create(&ctx->mover, NULL, mgi_mover_thread, m);
    if (ret != 0) {
        ucs_error("mgi context %p: cannot start the mover thread: %s", ctx,
                  strerror(ret));
        goto err_free;
    }
    ctx->mover_state   = m;
    ctx->mover_running = 1;
    return UCS_OK;

err_free:
    free(m->reqs);
    free(m->refresh);
    free(m->cand);
    free(m);
    return UCS_ERR_NO_RESOURCE;
}

void mgi_mover_stop(mgi_context_t *ctx)
{
    mgi_mover_t *m = ctx->mover_state;

    if (!ctx->mover_running) {
        return;
    }
    ctx->mover_stop = 1;
    pthread_join(ctx->mover, NULL);
    ctx->mover_running = 0;
    if (m != NULL) {
        free(m->reqs);
        free(m->refresh);
        free(m->cand);
        free(m);
        ctx->mover_state = NULL;
    }
}

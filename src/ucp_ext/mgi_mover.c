/**
 * MGI mover: a host thread that moves full segments of the sort rings to
 * the next hop's receive ring with UCP RMA (paper §5.4, stage (4)/(5)).
 *
 * Our lane in a next hop's receive ring is lane number `rank`; the mover
 * is its only producer, shared by the sort rings (routes) of every local
 * endpoint towards that next hop. In each round:
 *   1. ucp_put_nbx of full sort segments into free lane slots;
 *   2. flush (remote completion), then put the lanes' new RTail;
 *   3. flush again, then release the sort segments (the sorter's flush
 *      bookkeeping reads that as "delivered").
 * Sort rings of GPU endpoints live in GPU memory: the mover never touches
 * their control words there. It reads `ready` and writes `released` of the
 * ring's mirror (mgi_ring_mirror_t, pinned host memory mapped into the
 * GPU), which the sorter kernel publishes and applies; ucp_put_nbx reads
 * the segments in place, so UCX's CUDA transports (cuda_mgi) carry them
 * GPU to GPU. CPU endpoints use the same path with MGI_SORT_MIRROR=1.
 * Credits are a lane's free slots: the RTail we published minus the RHead
 * we last read; a lane without credit is re-read with ucp_get_nbx.
 * Dynamic buffer selection: in every round the routes are served by
 * occupancy of their sort rings, fullest first, within a budget of
 * `mover_batch` segments, so skewed (popular) destinations get served
 * first while no route starves.
 */
#include "mgi_int.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct mgi_mover_cand {
    mgi_route_t *route;
    uint32_t    occupancy;
    uint32_t    ready;
} mgi_mover_cand_t;

typedef struct mgi_mover {
    mgi_context_t    *ctx;
    mgi_mover_cand_t *cand;
    unsigned         ncand_max;
    mgi_lane_t       **refresh;
    mgi_lane_t       **lanes;         /* lanes written in this round */
    void             **reqs;
    unsigned         rr;               /* round-robin tie breaker */
    uint64_t         moved_segs, last_moved, last_log_ns, credit_stalls;
} mgi_mover_t;

/* mtype: of the local buffer, said explicitly (UCP's detection would
 * need the CUDA allocation hooks to have seen cudaMalloc). */
static ucs_status_t mgi_mover_put(mgi_context_t *ctx, mgi_ep_id_t hop,
                                  void *buf, size_t len, uint64_t raddr,
                                  ucs_memory_type_t mtype, void **req_p)
{
    mgi_peer_ep_t *peer = &ctx->peer_eps[hop];
    ucp_request_param_t param;
    ucs_status_ptr_t req;

    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    param.memory_type  = mtype;
    req = ucp_put_nbx(ctx->peers[peer->rank], buf, len, raddr, peer->rkey,
                      &param);
    if (UCS_PTR_IS_ERR(req)) {
        ucs_error("mgi context %p mover: put of %zu bytes to endpoint %u "
                  "failed: %s", ctx, len, hop,
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

/* Address of our lane (number `rank`) in the next hop's receive ring. */
static uint64_t mgi_mover_lane_addr(mgi_context_t *ctx, mgi_ep_id_t hop)
{
    size_t lane_bytes = mgi_ring_mem_size(ctx->params.recv_depth,
                                          ctx->seg_size);

    return ctx->peer_eps[hop].rbase + (uint64_t)ctx->rank * lane_bytes;
}

/* Refresh the credits of lanes that have data waiting but no free slot. */
static ucs_status_t mgi_mover_refresh(mgi_mover_t *m, unsigned n)
{
    mgi_context_t *ctx = m->ctx;
    ucp_request_param_t param;
    mgi_peer_ep_t *peer;
    mgi_lane_t *lane;
    ucs_status_ptr_t req;
    unsigned i;

    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    param.memory_type  = UCS_MEMORY_TYPE_HOST;
    for (i = 0; i < n; ++i) {
        lane = m->refresh[i];
        peer = &ctx->peer_eps[lane->next_hop];
        req  = ucp_get_nbx(ctx->peers[peer->rank], &lane->head_buf,
                           sizeof(lane->head_buf),
                           mgi_mover_lane_addr(ctx, lane->next_hop) +
                           offsetof(mgi_ring_t, cons_tail),
                           peer->rkey, &param);
        if (UCS_PTR_IS_ERR(req)) {
            ucs_error("mgi context %p mover: credit read from endpoint %u "
                      "failed: %s", ctx, lane->next_hop,
                      ucs_status_string(UCS_PTR_STATUS(req)));
            return UCS_PTR_STATUS(req);
        }
        m->reqs[i] = req;
    }
    if (mgi_mover_wait_all(m, n) != UCS_OK) {
        return UCS_ERR_IO_ERROR;
    }
    for (i = 0; i < n; ++i) {
        m->refresh[i]->head    = m->refresh[i]->head_buf;
        m->refresh[i]->refresh = 0;
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
    unsigned ncand = 0, nrefresh = 0, nreqs = 0, nlanes = 0, moved = 0;
    unsigned e, i, k, n, neps, nroutes;
    mgi_mover_cand_t *c;
    mgi_route_t *route;
    mgi_lane_t *lane;
    uint32_t credits, ready, occupancy, cons;
    uint64_t laddr;
    ucs_status_t status;

    neps = __atomic_load_n(&ctx->neps, __ATOMIC_ACQUIRE);
    for (e = 0; e < neps; ++e) {
        mgi_ep_t *ep = ctx->eps[e];
        if (ep == NULL) {
            continue;
        }
        nroutes = __atomic_load_n(&ep->nroutes, __ATOMIC_ACQUIRE);
        for (i = 0; (i < nroutes) && (ncand < m->ncand_max); ++i) {
            route = ep->route_list[i];
            if (route->mirror != NULL) {
                occupancy = mgi_ring_mirror_ready(route->mirror, route->cons);
                ready     = (occupancy < budget) ? occupancy : budget;
            } else {
                ready     = mgi_ring_ready(route->ring, budget);
                occupancy = mgi_ring_count(route->ring);
            }
            if (ready == 0) {
                continue;
            }
            c            = &m->cand[ncand++];
            c->route     = route;
            c->ready     = ready;
            c->occupancy = occupancy;
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

    for (i = 0; i < ncand; ++i) {
        c     = &m->cand[i];
        route = c->route;
        lane  = route->lane;
        credits = depth - (lane->tail + lane->round - lane->head);
        n       = c->ready;
        n       = (n < credits) ? n : credits;
        n       = (n < budget) ? n : budget;
        if (credits == 0) {
            lane->stalls++;
            if (!lane->refresh) {
                lane->refresh          = 1;
                m->refresh[nrefresh++] = lane;
            }
        }
        if (n == 0) {
            c->ready = 0;
            continue;
        }
        if (lane->round == 0) {
            m->lanes[nlanes++] = lane;
        }
        laddr = mgi_mover_lane_addr(ctx, lane->next_hop);
        /* mirror mode: the ring is in GPU memory, never read its header */
        cons  = (route->mirror != NULL) ? route->cons :
                route->ring->cons_tail;
        for (k = 0; k < n; ++k) {
            status = mgi_mover_put(ctx, lane->next_hop,
                                   (char*)route->ring + MGI_RING_HDR_SIZE +
                                   (size_t)((cons + k) &
                                            (ctx->params.sort_depth - 1)) *
                                   ctx->seg_size,
                                   ctx->seg_size,
                                   laddr + MGI_RING_HDR_SIZE +
                                   (uint64_t)((lane->tail + lane->round + k) &
                                              (depth - 1)) * ctx->seg_size,
                                   mgi_ep_is_gpu(route->ep) ?
                                   UCS_MEMORY_TYPE_CUDA :
                                   UCS_MEMORY_TYPE_HOST,
                                   &m->reqs[nreqs]);
            if (status != UCS_OK) {
                return status;
            }
            ++nreqs;
        }
        lane->round += n;
        c->ready     = n;
        budget      -= n;
    }

    if (nreqs > 0) {
        status = mgi_mover_wait_all(m, nreqs);
        if (status == UCS_OK) {
            status = mgi_mover_flush(m);
        }
        if (status != UCS_OK) {
            return status;
        }

        /* publish RTail of each lane after its segments landed */
        nreqs = 0;
        for (i = 0; i < nlanes; ++i) {
            lane           = m->lanes[i];
            lane->tail_buf = lane->tail + lane->round;
            status = mgi_mover_put(ctx, lane->next_hop, &lane->tail_buf,
                                   sizeof(lane->tail_buf),
                                   mgi_mover_lane_addr(ctx, lane->next_hop) +
                                   offsetof(mgi_ring_t, prod_tail),
                                   UCS_MEMORY_TYPE_HOST, &m->reqs[nreqs++]);
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
        for (i = 0; i < nlanes; ++i) {
            m->lanes[i]->tail += m->lanes[i]->round;
            m->lanes[i]->round = 0;
        }
        for (i = 0; i < ncand; ++i) {
            if (m->cand[i].ready > 0) {
                route              = m->cand[i].route;
                route->moved_segs += m->cand[i].ready;
                if (route->mirror != NULL) {
                    route->cons += m->cand[i].ready;
                    mgi_ring_mirror_release(route->mirror, route->cons);
                } else {
                    mgi_ring_release(route->ring, m->cand[i].ready);
                }
                moved += m->cand[i].ready;
            }
        }
    }

    if (nrefresh > 0) {
        m->credit_stalls += nrefresh;
        status = mgi_mover_refresh(m, nrefresh);
        if (status != UCS_OK) {
            return status;
        }
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
    int bound          = MGI_EP_HOST;
    int moved;

    m->last_log_ns = mgi_time_ns();
    while (!ctx->mover_stop) {
        if (ctx->mover_device != bound) {
            /* UCX's CUDA transports copy in the calling thread's context */
            bound = ctx->mover_device;
            mgi_gpu_bind_thread(bound);
        }
        ucp_worker_progress(ctx->worker);
        if (ctx->mover_quiet) {
            ctx->mover_quiet_ack = 1;
            mgi_idle(ctx, &idle);
            continue;
        }
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
    m->lanes     = calloc(n, sizeof(*m->lanes));
    m->reqs      = calloc(n + ctx->params.mover_batch, sizeof(*m->reqs));
    if ((m->cand == NULL) || (m->refresh == NULL) || (m->reqs == NULL) ||
        (m->lanes == NULL)) {
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
    free(m->lanes);
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
        free(m->lanes);
        free(m->reqs);
        free(m->refresh);
        free(m->cand);
        free(m);
        ctx->mover_state = NULL;
    }
}

/* Stop moving (the worker is still progressed), e.g. before rkeys go. */
void mgi_mover_quiesce(mgi_context_t *ctx)
{
    uint64_t deadline = mgi_time_ns() +
                        (uint64_t)ctx->params.timeout_ms * 1000000ull;

    ctx->mover_quiet = 1;
    while (ctx->mover_running && !ctx->mover_quiet_ack &&
           (ctx->mover_status == UCS_OK)) {
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi context %p: mover did not go quiet within %u ms",
                      ctx, ctx->params.timeout_ms);
            return;
        }
        usleep(10);
    }
}

/**
 * MGI mover: a host thread that moves full segments of the sort rings to
 * the next hop's receive ring (paper §5.4, stage (4)/(5)).
 *
 * Our lane in a next hop's receive ring is lane number `rank`; the mover
 * is its only producer, shared by the sort rings (routes) of every local
 * endpoint towards that next hop. The mover works in flushes ("epochs"),
 * up to `mover_flushes` of them in flight, so that the next batch is on
 * the wire while the previous one completes. In each round:
 *   1. completed flushes, oldest first: release their sort segments (their
 *      data is complete at the next hop; the sorter's flush bookkeeping
 *      reads that as "delivered") and advance the lanes' `done`;
 *   2. credit reads (RHead of a lane) that completed update the credits;
 *      never waited for;
 *   3. publish RTail of lanes whose data is done: one tail put per lane in
 *      flight, so tails never land out of order;
 *   4. up to `mover_batch` segments, the fullest sort rings first: one
 *      ucp_put_nbx per run of segments contiguous in both the sort ring and
 *      the lane (a run ends at a wrap of either ring);
 *   5. ucp_ep_flush_nbx of each process this round put to (not waited
 *      for; a worker flush over emulated RMA would wait for a moment with
 *      no RMA of the worker outstanding, which a busy mover never gives).
 *
 * Where RTail and RHead of a lane are: a next hop with lane control words
 * (mgi_lane_ctl_t: every GPU endpoint, CPU endpoints with
 * MGI_SORT_MIRROR=1) keeps them in host memory, apart from the lane ring,
 * whose header its sorter updates from them; other next hops in the lane
 * ring's header. Either way RTail is a 4-byte put (ucp_put_nbx, host
 * memory on both sides) issued only once the data it covers is complete
 * there, and RHead a 4-byte get.
 *
 * Next hops in this process (ctx->rank) are not reached through UCP: its
 * `self` transport would memcpy GPU memory on the host. Segments are
 * copied with cudaMemcpyAsync on the mover's own streams
 * (mgi_mover_cuda.c) when either side is GPU memory (a peer copy between
 * two GPUs), with memcpy when both are host memory. A flush's copies are
 * complete when its event is; RTail is then a release store into host
 * memory (the lane control words of a GPU endpoint) and RHead an acquire
 * load: no CUDA copy of a control word.
 *
 * Sort rings of GPU endpoints live in GPU memory: the mover never touches
 * their control words there. It reads `ready` and writes `released` of the
 * ring's mirror (mgi_ring_mirror_t, pinned host memory mapped into the
 * GPU), which the sorter kernel publishes and applies; ucp_put_nbx reads
 * the segments in place, so UCX's CUDA transports (cuda_mgi) carry them
 * GPU to GPU. CPU endpoints use the same path with MGI_SORT_MIRROR=1.
 * Dynamic buffer selection: in every round the routes are served by
 * occupancy of their sort rings, fullest first, within a budget of
 * `mover_batch` segments, so skewed (popular) destinations get served
 * first while no route starves.
 */
#include "mgi_mover_int.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int mgi_mover_grow(void *arr_p, unsigned *cap, unsigned n,
                          size_t elem)
{
    void **arr = (void**)arr_p;
    unsigned ncap;
    void *p;

    if (n < *cap) {
        return 0;
    }
    ncap = (*cap * 2) + 16;
    p    = realloc(*arr, (size_t)ncap * elem);
    if (p == NULL) {
        return -1;
    }
    *arr = p;
    *cap = ncap;
    return 0;
}

/* Room for one more copy of flush e in its three arrays (the capacity
 * counts once all three have it) */
static int mgi_mover_copies_grow(mgi_mover_epoch_t *e)
{
    unsigned cd = e->copies_cap, cs = cd, cz = cd;

    if (mgi_mover_grow(&e->cdst, &cd, e->ncopies, sizeof(*e->cdst)) ||
        mgi_mover_grow(&e->csrc, &cs, e->ncopies, sizeof(*e->csrc)) ||
        mgi_mover_grow(&e->csize, &cz, e->ncopies, sizeof(*e->csize))) {
        return -1;
    }
    e->copies_cap = cd;
    return 0;
}

static inline int mgi_mover_ahead(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

static inline mgi_mover_epoch_t *mgi_mover_open(mgi_mover_t *m)
{
    return &m->epochs[(m->first + m->nepochs) % MGI_MOVER_FLUSHES_MAX];
}

static ucs_status_t mgi_mover_add_req(mgi_mover_t *m, mgi_mover_epoch_t *e,
                                      ucs_status_ptr_t req)
{
    if (req == NULL) {
        return UCS_OK;
    }
    if (mgi_mover_grow(&e->reqs, &e->reqs_cap, e->nreqs, sizeof(void*))) {
        /* nobody would free it otherwise */
        mgi_ucp_wait(m->ctx, req, "mover request", m->ctx);
        return UCS_ERR_NO_MEMORY;
    }
    e->reqs[e->nreqs++] = req;
    return UCS_OK;
}

/* A put to `rank` in the open flush: that endpoint gets flushed. */
static ucs_status_t mgi_mover_add_rank(mgi_mover_t *m, mgi_mover_epoch_t *e,
                                      int rank)
{
    if (m->rank_seq[rank] == m->seq) {
        return UCS_OK;
    }
    if (mgi_mover_grow(&e->ranks, &e->ranks_cap, e->nranks,
                       sizeof(*e->ranks))) {
        return UCS_ERR_NO_MEMORY;
    }
    e->ranks[e->nranks++] = rank;
    m->rank_seq[rank]     = m->seq;
    return UCS_OK;
}

static ucs_status_t mgi_mover_add_mark(mgi_mover_epoch_t *e,
                                       mgi_lane_t *lane, uint32_t value,
                                       int tail)
{
    if (mgi_mover_grow(&e->marks, &e->marks_cap, e->nmarks,
                       sizeof(*e->marks))) {
        return UCS_ERR_NO_MEMORY;
    }
    e->marks[e->nmarks].lane  = lane;
    e->marks[e->nmarks].value = value;
    e->marks[e->nmarks].tail  = tail;
    ++e->nmarks;
    return UCS_OK;
}

/* ------------------------------------------------------------------ lanes */

/* Address of our lane (number `rank`) in the next hop's receive ring. */
static uint64_t mgi_mover_lane_addr(mgi_mover_t *m, mgi_ep_id_t hop)
{
    return m->ctx->peer_eps[hop].rbase + (uint64_t)m->ctx->rank *
                                         m->lane_bytes;
}

/* Address and rkey of our lane's RTail (`tail`) or RHead in a next hop of
 * another process: its lane control words, or the lane ring's header. */
static uint64_t mgi_mover_ctl_addr(mgi_mover_t *m, mgi_lane_t *lane,
                                   int tail, ucp_rkey_h *rkey_p)
{
    mgi_peer_ep_t *peer = &m->ctx->peer_eps[lane->next_hop];

    if (peer->has_ctl) {
        *rkey_p = peer->ctl_rkey;
        return peer->ctl_rbase +
               (uint64_t)m->ctx->rank * sizeof(mgi_lane_ctl_t) +
               (tail ? offsetof(mgi_lane_ctl_t, prod_tail) :
                       offsetof(mgi_lane_ctl_t, cons_tail));
    }
    *rkey_p = peer->rkey;
    return mgi_mover_lane_addr(m, lane->next_hop) +
           (tail ? offsetof(mgi_ring_t, prod_tail) :
                   offsetof(mgi_ring_t, cons_tail));
}

static ucs_status_t mgi_mover_list_lane(mgi_mover_t *m, mgi_lane_t *lane)
{
    mgi_context_t *ctx = m->ctx;
    mgi_peer_ep_t *peer = &ctx->peer_eps[lane->next_hop];
    mgi_ep_t *dst;

    if (lane->listed) {
        return UCS_OK;
    }
    lane->local     = (peer->rank == ctx->rank);
    lane->local_dev = MGI_EP_HOST;
    lane->local_gpu = 0;
    if (lane->local) {
        dst = mgi_ep_lookup(ctx, lane->next_hop);
        if (dst == NULL) {
            ucs_error("mgi context %p mover: next hop %u of this process has "
                      "no endpoint", ctx, lane->next_hop);
            return UCS_ERR_NO_ELEM;
        }
        lane->local_dev  = dst->device;
        lane->local_gpu  = mgi_ep_is_gpu(dst);
        lane->local_ring = (mgi_ring_t*)(uintptr_t)mgi_mover_lane_addr(
                                   m, lane->next_hop);
        if (dst->lane_ctl != NULL) {
            lane->local_tail = &dst->lane_ctl[ctx->rank].prod_tail;
            lane->local_head = &dst->lane_ctl[ctx->rank].cons_tail;
        } else if (!lane->local_gpu) {
            lane->local_tail = &lane->local_ring->prod_tail;
            lane->local_head = &lane->local_ring->cons_tail;
        } else {
            /* the mover never copies control words to or from the GPU */
            ucs_error("mgi context %p mover: GPU endpoint %u has no lane "
                      "control words: %s", ctx, lane->next_hop,
                      ucs_status_string(UCS_ERR_INVALID_PARAM));
            return UCS_ERR_INVALID_PARAM;
        }
    }
    lane->shm_ctl = 0;
    if (!lane->local && (peer->ctl_map != NULL)) {
        /* same host: the words are mapped here, stores and loads do */
        lane->shm_ctl    = 1;
        lane->local_tail = &peer->ctl_map[ctx->rank].prod_tail;
        lane->local_head = &peer->ctl_map[ctx->rank].cons_tail;
    }
    lane->mark_seq        = 0;
    lane->listed          = 1;
    m->lanes[m->nlanes++] = lane;
    return UCS_OK;
}

/* Copies of this route's segments go through CUDA: a lane inside the
 * process with a GPU on either side */
static inline int mgi_mover_route_cuda(const mgi_route_t *route)
{
    return route->lane->local &&
           (mgi_ep_is_gpu(route->ep) || route->lane->local_gpu);
}

/* A route this mover has not seen (its channel was just created, or the
 * mover restarted): the lane, and for copies inside the process through
 * CUDA the mover's streams and events and the peer access between the
 * route's GPUs (a lane's routes may come from endpoints on several GPUs:
 * each route's pair). Done when the route appears, not at its first
 * segment: there, enabling peer access and creating the streams had held
 * a channel's first tuples ~0.2 ms (device send between two H100). The
 * CUDA state and peer
 * access outlive a restart of the mover (ctx->mover_cuda). */
static ucs_status_t mgi_mover_route_setup(mgi_mover_t *m, mgi_route_t *route)
{
    mgi_lane_t *lane = route->lane;
    mgi_mover_cuda_t *cu;
    ucs_status_t status;

    status = mgi_mover_list_lane(m, lane);
    if ((status == UCS_OK) && mgi_mover_route_cuda(route)) {
        status = mgi_mover_cuda_get(m, &cu);
        if (status == UCS_OK) {
            mgi_mover_cuda_peers(m->ctx, cu, route->ep->device,
                                 lane->local_dev);
        }
    }
    return status;
}

/* Endpoint ep's routes from the first this mover has not set up to
 * nroutes (those it moves through: a direct route's sorter appends to the
 * lane itself), before any of them is a candidate: the issue loop then
 * finds every route set up. */
static ucs_status_t mgi_mover_new_routes(mgi_mover_t *m, const mgi_ep_t *ep,
                                         uint32_t nroutes)
{
    uint32_t *set = &m->routes_set[ep->index];
    ucs_status_t status;

    for (; *set < nroutes; ++*set) {
        status = mgi_mover_route_setup(m, ep->route_list[*set]);
        if (status != UCS_OK) {
            return status;  /* tried again at the next issue */
        }
    }
    return UCS_OK;
}

static void mgi_mover_set_head(mgi_lane_t *lane, uint32_t head)
{
    if (mgi_mover_ahead(head, lane->head)) {
        lane->head = head;
    }
}

/* Start a read of the lane's RHead; never waits. */
static ucs_status_t mgi_mover_credit_read(mgi_mover_t *m, mgi_lane_t *lane)
{
    mgi_context_t *ctx = m->ctx;
    ucp_request_param_t param;
    mgi_peer_ep_t *peer;
    ucs_status_ptr_t req;
    ucp_rkey_h rkey;
    uint64_t addr;

    if (lane->credit_busy) {
        return UCS_OK;
    }
    if (lane->local || lane->shm_ctl) {
        /* host memory: the ring header, or the words the sorter kernel
         * publishes after its reads of the slots */
        mgi_mover_set_head(lane, mgi_ld_acq32(lane->local_head));
        return UCS_OK;
    }
    peer = &ctx->peer_eps[lane->next_hop];
    addr = mgi_mover_ctl_addr(m, lane, 0, &rkey);
    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    param.memory_type  = UCS_MEMORY_TYPE_HOST;
    req = ucp_get_nbx(ctx->peers[peer->rank], &lane->head_buf,
                      sizeof(lane->head_buf), addr, rkey, &param);
    if (UCS_PTR_IS_ERR(req)) {
        ucs_error("mgi context %p mover: credit read from endpoint %u "
                  "failed: %s", ctx, lane->next_hop,
                  ucs_status_string(UCS_PTR_STATUS(req)));
        return UCS_PTR_STATUS(req);
    }
    if (req == NULL) {
        mgi_mover_set_head(lane, lane->head_buf);
        return UCS_OK;
    }
    lane->credit_req      = req;
    lane->credit_busy     = 1;
    lane->credit_deadline = mgi_deadline_ns(ctx);
    m->refresh[m->nrefresh++] = lane;
    return UCS_OK;
}

/* Credit reads that completed; returns how many, or a negative status. */
static int mgi_mover_credit_check(mgi_mover_t *m)
{
    mgi_context_t *ctx = m->ctx;
    uint64_t now       = mgi_time_ns();
    int n              = 0;
    ucs_status_t status;
    mgi_lane_t *lane;
    unsigned i;

    for (i = 0; i < m->nrefresh;) {
        lane   = m->refresh[i];
        status = ucp_request_check_status(lane->credit_req);
        if (status == UCS_INPROGRESS) {
            if (now > lane->credit_deadline) {
                ucs_error("mgi context %p mover (rank %d): credit read from "
                          "endpoint %u not complete after %u ms", ctx,
                          ctx->rank, lane->next_hop, ctx->params.timeout_ms);
                return UCS_ERR_TIMED_OUT;
            }
            ++i;
            continue;
        }
        ucp_request_free(lane->credit_req);
        lane->credit_req = NULL;
        if (status != UCS_OK) {
            ucs_error("mgi context %p mover: credit read from endpoint %u: "
                      "%s", ctx, lane->next_hop, ucs_status_string(status));
            return status;
        }
        mgi_mover_set_head(lane, lane->head_buf);
        lane->credit_busy = 0;
        m->refresh[i]     = m->refresh[--m->nrefresh];
        ++n;
    }
    return n;
}

/* ---------------------------------------------------------------- flushes */

/* n segments side by side at `src` (a run of the route's sort ring, or
 * the stage segments a reference of it stands for) into slots [slot,
 * slot + n) of its lane, contiguous. */
static ucs_status_t mgi_mover_copy(mgi_mover_t *m, mgi_mover_epoch_t *e,
                                   mgi_route_t *route, const void *src,
                                   uint32_t slot, uint32_t n)
{
    mgi_context_t *ctx = m->ctx;
    mgi_lane_t *lane   = route->lane;
    size_t len         = (size_t)n * ctx->seg_size;
    size_t roff        = MGI_RING_HDR_SIZE +
                         (size_t)(slot & (ctx->params.recv_depth - 1)) *
                         ctx->seg_size;
    mgi_peer_ep_t *peer;
    mgi_mover_cuda_t *cu;
    ucp_request_param_t param;
    ucs_status_ptr_t req;
    ucs_status_t status;
    ucp_rkey_h rkey;
    ucp_ep_h uep;
    uint64_t t0;
    int flush;

    if (!lane->local) {
        /* mtype: of the local buffer, said explicitly (UCP's detection
         * would need the CUDA allocation hooks to have seen cudaMalloc) */
        peer = &ctx->peer_eps[lane->next_hop];
        memset(&param, 0, sizeof(param));
        param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
        param.memory_type  = mgi_ep_is_gpu(route->ep) ? UCS_MEMORY_TYPE_CUDA :
                             UCS_MEMORY_TYPE_HOST;
        /* through the NIC of the endpoint's and the peer's number where
         * both have one (a rail, mgi_rail.c), else the contexts' own */
        uep = mgi_rail_put_ep(ctx, route->ep, peer, &rkey, &flush);
        t0  = mgi_time_ns();
        req = ucp_put_nbx(uep, src, len,
                          mgi_mover_lane_addr(m, lane->next_hop) + roff,
                          rkey, &param);
        m->put_ns    += mgi_time_ns() - t0;
        m->puts      += 1;
        m->put_bytes += len;
        e->gpu       |= mgi_ep_is_gpu(route->ep);
        if (UCS_PTR_IS_ERR(req)) {
            ucs_error("mgi context %p mover: put of %zu bytes to endpoint %u "
                      "failed: %s", ctx, len, lane->next_hop,
                      ucs_status_string(UCS_PTR_STATUS(req)));
            return UCS_PTR_STATUS(req);
        }
        status = mgi_mover_add_rank(m, e, flush);
        if (status != UCS_OK) {
            mgi_ucp_wait(ctx, req, "mover put", ctx);
            return status;
        }
        return mgi_mover_add_req(m, e, req);
    }

    if (!mgi_mover_route_cuda(route)) {
        memcpy((char*)lane->local_ring + roff, src, len);
        return UCS_OK;
    }
    /* the route was set up before it became a candidate
     * (mgi_mover_new_routes): CUDA state and peer access are there */
    cu             = ctx->mover_cuda;
    e->cuda        = 1;
    m->copies     += 1;
    m->copy_bytes += len;
    if (!ctx->mover_copy_one) {
        /* posted with the flush's other copies at its close */
        if (mgi_mover_copies_grow(e)) {
            ucs_error("context %p mover: no memory for the copies of a "
                      "flush", ctx);
            return UCS_ERR_NO_MEMORY;
        }
        e->cdst[e->ncopies]  = (char*)lane->local_ring + roff;
        e->csrc[e->ncopies]  = src;
        e->csize[e->ncopies] = len;
        ++e->ncopies;
        return UCS_OK;
    }
    t0     = mgi_time_ns();
    status = MGI_CUDA_CALL(cudaMemcpyAsync((char*)lane->local_ring + roff,
                                           src, len, cudaMemcpyDefault,
                                           mgi_mover_stream(cu,
                                                   mgi_mover_slot(m, e))),
                           "context %p mover: copy of %zu bytes to endpoint "
                           "%u", ctx, len, lane->next_hop);
    m->copy_ns    += mgi_time_ns() - t0;
    return status;
}

/* The reference that sort segment `pos` of the route is (MGI_SEND_ZCOPY:
 * the mirror's table, which the sorter fills before it publishes the
 * segment), or NULL: its data is in the sort ring's slot. */
static const mgi_ring_mirror_ref_t *mgi_mover_ref(const mgi_route_t *route,
                                                  uint32_t pos)
{
    const mgi_ring_mirror_ref_t *r;

    if ((route->mirror == NULL) || (route->mirror->nrefs == 0)) {
        return NULL;
    }
    r = &mgi_ring_mirror_refs(route->mirror)[pos &
                                             (route->mirror->nrefs - 1)];
    return (r->addr != 0) ? r : NULL;
}

/* n segments side by side at `src` into the route's lane from
 * lane->issued on: a put each side of the lane's wrap. */
static ucs_status_t mgi_mover_put_lane(mgi_mover_t *m, mgi_mover_epoch_t *e,
                                       mgi_route_t *route, const char *src,
                                       uint32_t n)
{
    const uint32_t depth = m->ctx->params.recv_depth;
    mgi_lane_t *lane     = route->lane;
    ucs_status_t status;
    uint32_t run;

    for (; n > 0; n -= run) {
        run    = depth - (lane->issued & (depth - 1));
        run    = (run < n) ? run : n;
        status = mgi_mover_copy(m, e, route, src, lane->issued, run);
        if (status != UCS_OK) {
            return status;
        }
        lane->issued += run;
        src          += (size_t)run * m->ctx->seg_size;
    }
    return UCS_OK;
}

/* Move the route's next sort segments into its lane: up to `nsort` of
 * them, filling up to `nlane` lane slots (from lane->issued on). Runs of
 * segments in the sort ring go in one put (up to its wrap or the next
 * reference); a reference (MGI_SEND_ZCOPY) stands for stage segments side
 * by side, put from there in one go (all of them, or it waits), and fills
 * as many lane slots. Returns the sort segments taken in *nsort and the
 * lane slots filled in *nlane. */
static ucs_status_t mgi_mover_move(mgi_mover_t *m, mgi_mover_epoch_t *e,
                                   mgi_route_t *route, uint32_t *nsort,
                                   uint32_t *nlane)
{
    const uint32_t sdepth = m->ctx->params.sort_depth;
    const mgi_ring_mirror_ref_t *ref;
    uint32_t ns = 0, nl = 0, ks, kl;
    const char *src;
    ucs_status_t status;

    while ((ns < *nsort) && (nl < *nlane)) {
        ref = mgi_mover_ref(route, route->sent);
        if (ref != NULL) {
            /* one sort segment, ref->nseg lane slots */
            src = (const char*)(uintptr_t)ref->addr;
            ks  = 1;
            kl  = ref->nseg;
            if (nl + kl > *nlane) {
                break;
            }
            m->ref_segs += kl;
        } else {
            kl = sdepth - (route->sent & (sdepth - 1));
            kl = (kl < *nsort - ns) ? kl : *nsort - ns;
            kl = (kl < *nlane - nl) ? kl : *nlane - nl;
            ks = 1;
            while ((ks < kl) &&
                   (mgi_mover_ref(route, route->sent + ks) == NULL)) {
                ++ks;
            }
            kl  = ks;
            src = (const char*)route->ring + MGI_RING_HDR_SIZE +
                  (size_t)(route->sent & (sdepth - 1)) * m->ctx->seg_size;
        }
        status = mgi_mover_put_lane(m, e, route, src, kl);
        if (status != UCS_OK) {
            return status;
        }
        route->sent += ks;
        ns          += ks;
        nl          += kl;
    }
    *nsort = ns;
    *nlane = nl;
    return UCS_OK;
}

/* Lane slots that the route's next `ready` sort segments fill, up to
 * `budget` (at least the first one's: a reference takes no more than a
 * flush does, mgi_gpu_sorter_start). */
static uint32_t mgi_mover_want(const mgi_route_t *route, uint32_t ready,
                               uint32_t budget)
{
    const mgi_ring_mirror_ref_t *ref;
    uint32_t i, n = 0;

    for (i = 0; (i < ready) && (n < budget); ++i) {
        ref = mgi_mover_ref(route, route->sent + i);
        n  += (ref != NULL) ? ref->nseg : 1;
    }
    return n;
}

static int mgi_mover_cand_cmp(const void *a, const void *b)
{
    const mgi_mover_cand_t *x = a, *y = b;

    return (x->occupancy < y->occupancy) - (x->occupancy > y->occupancy);
}

/* Move up to `mover_batch` ready segments into the open flush. */
static int mgi_mover_issue(mgi_mover_t *m, mgi_mover_epoch_t *e)
{
    mgi_context_t *ctx = m->ctx;
    uint32_t depth     = ctx->params.recv_depth;
    unsigned budget    = ctx->params.mover_batch;
    unsigned ncand = 0, moved = 0;
    uint32_t backlog   = 0;
    unsigned i, j, neps, nroutes;
    uint32_t credits, ready, occupancy, inflight, want, n, nlan;
    mgi_mover_cand_t *c;
    mgi_route_t *route;
    mgi_lane_t *lane;
    ucs_status_t status;

    neps = __atomic_load_n(&ctx->neps, __ATOMIC_ACQUIRE);
    for (i = 0; i < neps; ++i) {
        mgi_ep_t *ep = ctx->eps[i];
        if (ep == NULL) {
            continue;
        }
        nroutes = __atomic_load_n(&ep->nroutes, __ATOMIC_ACQUIRE);
        if (m->routes_set[i] < nroutes) {
            status = mgi_mover_new_routes(m, ep, nroutes);
            if (status != UCS_OK) {
                return status;
            }
        }
        for (j = 0; (j < nroutes) && (ncand < m->ncand_max); ++j) {
            route    = ep->route_list[j];
            inflight = route->sent - route->cons;
            if (route->mirror != NULL) {
                /* mirror mode: the ring may be GPU memory, never read it */
                occupancy = mgi_ring_mirror_ready(route->mirror,
                                                  route->sent);
                ready     = (occupancy < budget) ? occupancy : budget;
            } else {
                ready     = mgi_ring_ready(route->ring, inflight + budget) -
                            inflight;
                occupancy = mgi_ring_count(route->ring) - inflight;
            }
            if (ready == 0) {
                continue;
            }
            c            = &m->cand[ncand++];
            c->route     = route;
            c->ready     = ready;
            c->occupancy = occupancy;
            backlog     += occupancy;
        }
    }
    if (ncand == 0) {
        return 0;
    }
    /* how far behind the sorters the mover is: the sort segments waiting
     * for it when it finds any (ready ones where the sorter publishes
     * them in a mirror; else committed and not in flight) */
    m->looks       += 1;
    m->backlog     += backlog;
    m->backlog_max  = (backlog > m->backlog_max) ? backlog : m->backlog_max;

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
        c       = &m->cand[i];
        route   = c->route;
        lane    = route->lane;
        credits = depth - (lane->issued - lane->head);
        want    = mgi_mover_want(route, c->ready, budget);
        if (credits < want) {
            if (credits == 0) {
                lane->stalls++;
                m->credit_stalls++;
            }
            status = mgi_mover_credit_read(m, lane);
            if (status != UCS_OK) {
                return status;
            }
            credits = depth - (lane->issued - lane->head);
            if (!lane->credit_busy) {
                /* where the lane's slots are: in flight, or at the next
                 * hop not yet read */
                m->short_reads  += 1;
                m->short_flight += lane->issued - lane->done;
                m->short_held   += lane->tail - lane->head;
            }
        }
        /* sort segments: what is ready; lane slots: the budget and the
         * credits (a reference fills several) */
        n    = c->ready;
        nlan = (budget < credits) ? budget : credits;
        if (nlan == 0) {
            continue;
        }
        status = mgi_mover_move(m, e, route, &n, &nlan);
        if (status != UCS_OK) {
            return status;
        }
        if (n == 0) {
            continue;   /* a reference larger than the credits: wait */
        }
        if (mgi_mover_grow(&e->rel, &e->rel_cap, e->nrel, sizeof(*e->rel))) {
            return UCS_ERR_NO_MEMORY;
        }
        e->rel[e->nrel].route = route;
        e->rel[e->nrel].n     = n;
        e->rel[e->nrel].nlane = nlan;
        ++e->nrel;
        e->segs += nlan;
        budget  -= nlan;
        moved   += nlan;
        if (lane->mark_seq != m->seq) {
            status = mgi_mover_add_mark(e, lane, lane->issued, 0);
            if (status != UCS_OK) {
                return status;
            }
            lane->mark_seq = m->seq;
            lane->mark     = e->nmarks - 1;
        } else {
            e->marks[lane->mark].value = lane->issued;
        }
    }
    return moved;
}

/* RTail of lanes whose data is done (complete at the next hop: its flush
 * or CUDA event completed); at most one tail put per remote lane in flight
 * (two could land out of order). Lanes of this process get a release
 * store into host memory. `local_only`: only lanes of this process (no
 * flush `e` needed). */
static int mgi_mover_publish(mgi_mover_t *m, mgi_mover_epoch_t *e,
                             int local_only)
{
    mgi_context_t *ctx = m->ctx;
    ucp_request_param_t param;
    mgi_peer_ep_t *peer;
    ucs_status_ptr_t req;
    ucs_status_t status;
    mgi_lane_t *lane;
    ucp_rkey_h rkey;
    uint64_t addr;
    unsigned i;
    int n = 0;

    memset(&param, 0, sizeof(param));
    param.op_attr_mask = UCP_OP_ATTR_FIELD_MEMORY_TYPE;
    param.memory_type  = UCS_MEMORY_TYPE_HOST;
    for (i = 0; i < m->nlanes; ++i) {
        lane = m->lanes[i];
        if (lane->tail_busy || (lane->done == lane->tail) ||
            (local_only && !lane->local)) {
            continue;
        }
        ++n;
        if (lane->local || lane->shm_ctl) {
            /* after the data: a memcpy of this thread, or copies whose
             * event completed (GPU lanes: the sorter kernel loads this
             * with acquire before it reads the slots) */
            mgi_st_rel32(lane->local_tail, lane->done);
            lane->tail = lane->done;
            continue;
        }
        peer           = &ctx->peer_eps[lane->next_hop];
        addr           = mgi_mover_ctl_addr(m, lane, 1, &rkey);
        lane->tail_buf = lane->done;
        req = ucp_put_nbx(ctx->peers[peer->rank], &lane->tail_buf,
                          sizeof(lane->tail_buf), addr, rkey, &param);
        if (UCS_PTR_IS_ERR(req)) {
            ucs_error("mgi context %p mover: RTail put to endpoint %u "
                      "failed: %s", ctx, lane->next_hop,
                      ucs_status_string(UCS_PTR_STATUS(req)));
            return UCS_PTR_STATUS(req);
        }
        lane->tail_busy = 1;
        status = mgi_mover_add_req(m, e, req);
        if (status == UCS_OK) {
            status = mgi_mover_add_rank(m, e, peer->rank);
        }
        if (status == UCS_OK) {
            status = mgi_mover_add_mark(e, lane, lane->tail_buf, 1);
        }
        if (status != UCS_OK) {
            return status;
        }
    }
    return n;
}

/* Issue the open flush: the CUDA event behind the copies of this process,
 * the UCP flushes. */
static ucs_status_t mgi_mover_close(mgi_mover_t *m, mgi_mover_epoch_t *e)
{
    mgi_context_t *ctx = m->ctx;
    unsigned slot      = mgi_mover_slot(m, e);
    ucp_request_param_t param;
    mgi_mover_cuda_t *cu;
    ucs_status_ptr_t req;
    ucs_status_t status;
    unsigned i;

    ++m->seq;
    if ((e->nrel == 0) && (e->nmarks == 0)) {
        return UCS_OK;
    }
    if (e->cuda) {
        cu     = ctx->mover_cuda;
        status = mgi_mover_post_copies(m, e, mgi_mover_stream(cu, slot));
        if (status != UCS_OK) {
            return status;
        }
        status = MGI_CUDA_CALL(cudaEventRecord(cu->done[slot],
                                               mgi_mover_stream(cu, slot)),
                               "context %p mover: flush of %u segments", ctx,
                               e->segs);
        if (status != UCS_OK) {
            return status;
        }
    }
    /* per endpoint, not ucp_worker_flush_nbx: a worker flush over
     * emulated RMA completes only at an instant when no RMA operation of
     * the worker is outstanding, which a mover that keeps putting and
     * reading credits may never give it */
    memset(&param, 0, sizeof(param));
    for (i = 0; i < e->nranks; ++i) {
        req = ucp_ep_flush_nbx(mgi_rail_flush_ep(ctx, e->ranks[i]), &param);
        if (UCS_PTR_IS_ERR(req)) {
            ucs_error("mgi context %p mover: flush of %u segments to rank "
                      "%d: %s", ctx, e->segs, e->ranks[i] % ctx->size,
                      ucs_status_string(UCS_PTR_STATUS(req)));
            return UCS_PTR_STATUS(req);
        }
        status = mgi_mover_add_req(m, e, req);
        if (status != UCS_OK) {
            return status;
        }
    }
    e->issued   = mgi_time_ns();
    e->deadline = e->issued + (uint64_t)ctx->params.timeout_ms * 1000000ull;
    ++m->nepochs;
    return UCS_OK;
}

/* 1: the oldest flush is complete, 0: not yet, else a negative status. */
static int mgi_mover_test(mgi_mover_t *m, mgi_mover_epoch_t *e)
{
    mgi_context_t *ctx = m->ctx;
    ucs_status_t status;
    cudaError_t ce;

    while (e->nreqs > 0) {
        status = ucp_request_check_status(e->reqs[e->nreqs - 1]);
        if (status == UCS_INPROGRESS) {
            goto busy;
        }
        ucp_request_free(e->reqs[--e->nreqs]);
        if (status != UCS_OK) {
            ucs_error("mgi context %p mover: flush of %u segments: %s", ctx,
                      e->segs, ucs_status_string(status));
            return status;
        }
    }
    if (e->cuda) {
        ce = cudaEventQuery(((mgi_mover_cuda_t*)ctx->mover_cuda)->done[
                                    mgi_mover_slot(m, e)]);
        if (ce == cudaErrorNotReady) {
            goto busy;
        }
        if (ce != cudaSuccess) {
            ucs_error("mgi context %p mover: copies of %u segments inside "
                      "the process: " MGI_CUDA_ERR_FMT, ctx, e->segs,
                      MGI_CUDA_ERR_ARGS(ce));
            return UCS_ERR_IO_ERROR;
        }
    }
    return 1;

busy:
    if (mgi_time_ns() > e->deadline) {
        ucs_error("mgi context %p mover (rank %d): flush of %u segments to "
                  "%u lane(s) (first: endpoint %d) not complete after %u ms",
                  ctx, ctx->rank, e->segs, e->nmarks,
                  (e->nmarks > 0) ? (int)e->marks[0].lane->next_hop : -1,
                  ctx->params.timeout_ms);
        return UCS_ERR_TIMED_OUT;
    }
    return 0;
}

/* Apply the oldest flush: its data is complete at the next hops. */
static void mgi_mover_retire(mgi_mover_t *m, mgi_mover_epoch_t *e)
{
    mgi_mover_mark_t *mk;
    mgi_route_t *route;
    unsigned i;

    for (i = 0; i < e->nrel; ++i) {
        route              = e->rel[i].route;
        route->cons       += e->rel[i].n;
        route->moved_segs += e->rel[i].nlane;
        m->moved_segs     += e->rel[i].nlane;
        if (route->mirror != NULL) {
            mgi_ring_mirror_release(route->mirror, route->cons);
        } else {
            mgi_ring_release(route->ring, e->rel[i].n);
        }
    }
    for (i = 0; i < e->nmarks; ++i) {
        mk = &e->marks[i];
        if (!mk->tail) {
            if (mgi_mover_ahead(mk->value, mk->lane->done)) {
                mk->lane->done = mk->value;
            }
            continue;
        }
        if (mgi_mover_ahead(mk->value, mk->lane->tail)) {
            mk->lane->tail = mk->value;
        }
        if (!mk->lane->local) {
            mk->lane->tail_busy = 0;
        }
    }
    m->flushes  += 1;
    m->flush_ns += mgi_time_ns() - e->issued;
    e->nrel   = 0;
    e->nmarks = 0;
    e->nranks = 0;
    e->cuda   = 0;
    e->gpu    = 0;
    e->segs   = 0;
    m->first  = (m->first + 1) % MGI_MOVER_FLUSHES_MAX;
    --m->nepochs;
}

/* Retire the flushes that completed, oldest first. */
static int mgi_mover_retire_done(mgi_mover_t *m)
{
    mgi_mover_epoch_t *e;
    int ret, n = 0;

    while (m->nepochs > 0) {
        e   = &m->epochs[m->first];
        ret = mgi_mover_test(m, e);
        if (ret <= 0) {
            return (ret < 0) ? ret : n;
        }
        mgi_mover_retire(m, e);
        ++n;
    }
    return n;
}

/* One round; `move`: take new segments. Returns the number of things that
 * happened (0: idle), or a negative status. */
static int mgi_mover_round(mgi_mover_t *m, int move)
{
    mgi_mover_epoch_t *e;
    ucs_status_t status;
    int ret, progress;

    progress = mgi_mover_retire_done(m);
    if (progress < 0) {
        return progress;
    }
    ret = mgi_mover_credit_check(m);
    if (ret < 0) {
        return ret;
    }
    progress += ret;

    if (m->nepochs == m->ctx->params.mover_flushes) {
        m->epochs_full++;
    } else {
        e   = mgi_mover_open(m);
        ret = mgi_mover_publish(m, e, 0);
        if (ret < 0) {
            return ret;
        }
        progress += ret;
        if (move) {
            ret = mgi_mover_issue(m, e);
            if (ret < 0) {
                return ret;
            }
            progress += ret;
        }
        status = mgi_mover_close(m, e);
        if (status != UCS_OK) {
            return status;
        }
        /* copies between host memory of this process are done already
         * (and CUDA copies may be): their RTail need not wait for the next
         * round */
        ret = mgi_mover_retire_done(m);
        if (ret > 0) {
            ret = mgi_mover_publish(m, NULL, 1);
        }
        if (ret < 0) {
            return ret;
        }
    }
    return progress;
}

/* A flush in flight that a copy engine completes: its own CUDA copies, or
 * puts of GPU memory (cuda_mgi's copy engines; their completion needs
 * progress calls, and a sleep between them cost every flush its length) */
static int mgi_mover_cuda_busy(mgi_mover_t *m)
{
    unsigned i;
    mgi_mover_epoch_t *e;

    for (i = 0; i < m->nepochs; ++i) {
        e = &m->epochs[(m->first + i) % MGI_MOVER_FLUSHES_MAX];
        if (e->cuda || e->gpu) {
            return 1;
        }
    }
    return 0;
}

/* Wait between rounds: a copy engine needs no core, a peer process that
 * serves emulated RMA does (mgi_ucp_wait). */
static void mgi_mover_idle(mgi_mover_t *m, unsigned *idle)
{
    if (mgi_mover_cuda_busy(m)) {
        mgi_cpu_relax();
    } else {
        mgi_idle(m->ctx, idle);
    }
}

static int mgi_mover_pending(mgi_mover_t *m)
{
    unsigned i;

    if ((m->nepochs > 0) || (m->nrefresh > 0)) {
        return 1;
    }
    for (i = 0; i < m->nlanes; ++i) {
        if (m->lanes[i]->done != m->lanes[i]->tail) {
            return 1;
        }
    }
    return 0;
}

/* Complete what is in flight and publish every tail; nothing new. */
static ucs_status_t mgi_mover_drain(mgi_mover_t *m, const char *why)
{
    mgi_context_t *ctx = m->ctx;
    uint64_t deadline  = mgi_deadline_ns(ctx);
    unsigned idle      = 0;
    unsigned nprog;
    int ret;

    while (mgi_mover_pending(m)) {
        nprog = ucp_worker_progress(ctx->worker) + mgi_rails_progress(ctx);
        ret   = mgi_mover_round(m, 0);
        if (ret < 0) {
            return (ucs_status_t)ret;
        }
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi context %p mover (rank %d): %s: %u flush(es) and "
                      "%u credit read(s) still in flight after %u ms", ctx,
                      ctx->rank, why, m->nepochs, m->nrefresh,
                      ctx->params.timeout_ms);
            return UCS_ERR_TIMED_OUT;
        }
        if ((ret == 0) && (nprog == 0)) {
            mgi_mover_idle(m, &idle);
        } else {
            idle = 0;
        }
    }
    return UCS_OK;
}

static void mgi_mover_log(mgi_mover_t *m)
{
    mgi_context_t *ctx = m->ctx;
    double dt, segs;

    if (!mgi_log_due(ctx, &m->last_log_ns, &dt)) {
        return;
    }
    segs = (m->moved_segs - m->last_moved) / dt;
    ucs_info("mgi context %p mover (rank %d): %.0f segments/s, %.1f MB/s, "
             "%lu rounds without credit, %lu with %d flushes in flight; %lu "
             "puts so far, %.0f KB and %.1f us in ucp_put_nbx each; %lu "
             "copies inside the process, %.0f KB and %.1f us posting "
             "each; %lu flushes done %.1f us after their "
             "close on average; rounds of "
             "%.1f us, %.1f us of it in ucp_worker_progress; sort segments "
             "waiting when it found some %.1f on average, %u at most; %lu "
             "stage segments put by reference; %lu reads of a lane short of "
             "credits found %.1f of its %u slots in flushes and %.1f "
             "published, not released by the next hop", ctx,
             ctx->rank, segs, segs * ctx->seg_size / 1e6, m->credit_stalls,
             m->epochs_full, ctx->params.mover_flushes, m->puts,
             m->puts ? m->put_bytes / 1e3 / m->puts : 0.0,
             m->puts ? m->put_ns / 1e3 / m->puts : 0.0, m->copies,
             m->copies ? m->copy_bytes / 1e3 / m->copies : 0.0,
             m->copies ? m->copy_ns / 1e3 / m->copies : 0.0, m->flushes,
             m->flushes ? m->flush_ns / 1e3 / m->flushes : 0.0,
             m->rounds ? m->round_ns / 1e3 / m->rounds : 0.0,
             m->rounds ? m->prog_ns / 1e3 / m->rounds : 0.0,
             m->looks ? (double)m->backlog / m->looks : 0.0, m->backlog_max,
             m->ref_segs, m->short_reads,
             m->short_reads ? (double)m->short_flight / m->short_reads : 0.0,
             ctx->params.recv_depth,
             m->short_reads ? (double)m->short_held / m->short_reads : 0.0);
    m->short_reads  = 0;
    m->short_flight = 0;
    m->short_held   = 0;
    m->last_moved  = m->moved_segs;
    m->looks       = 0;
    m->backlog     = 0;
    m->backlog_max = 0;
}

static void *mgi_mover_thread(void *arg)
{
    mgi_mover_t *m     = arg;
    mgi_context_t *ctx = m->ctx;
    unsigned idle      = 0;
    int bound          = MGI_EP_HOST;
    ucs_status_t status;
    uint64_t t0, t1;
    unsigned nprog;
    int ret;

    m->last_log_ns = mgi_time_ns();
    while (!ctx->mover_stop) {
        if (ctx->mover_device != bound) {
            /* UCX's CUDA transports copy in the calling thread's context */
            bound = ctx->mover_device;
            mgi_gpu_bind_thread(bound);
        }
        status = mgi_context_peers_alive(ctx);
        if ((status == UCS_OK) &&
            __atomic_load_n(&ctx->ep_failed, __ATOMIC_ACQUIRE)) {
            status = UCS_ERR_CONNECTION_RESET;
        }
        if (status != UCS_OK) {
            ctx->mover_status = status;
            break;
        }
        t0    = mgi_time_ns();
        nprog = ucp_worker_progress(ctx->worker) + mgi_rails_progress(ctx);
        t1    = mgi_time_ns();
        if (ctx->mover_quiet) {
            if (!ctx->mover_quiet_ack) {
                status = mgi_mover_drain(m, "going quiet");
                if (status != UCS_OK) {
                    ctx->mover_status = status;
                    break;
                }
                ctx->mover_quiet_ack = 1;
            }
            mgi_idle(ctx, &idle);
            continue;
        }
        ret = mgi_mover_round(m, 1);
        if (ret < 0) {
            ret = mgi_context_error_cause(ctx, (ucs_status_t)ret);
            ucs_error("mgi context %p mover (rank %d): stopped on error %s",
                      ctx, ctx->rank, ucs_status_string(ret));
            ctx->mover_status = (ucs_status_t)ret;
            break;
        }
        if ((ret > 0) || (nprog > 0)) {
            /* busy rounds only are timed: an idle one sleeps */
            m->rounds   += 1;
            m->prog_ns  += t1 - t0;
            m->round_ns += mgi_time_ns() - t0;
            idle         = 0;
        } else {
            mgi_mover_idle(m, &idle);
        }
        mgi_mover_log(m);
    }
    if (ctx->mover_status == UCS_OK) {
        /* the routes' endpoints may go next: nothing may read them after */
        status = mgi_mover_drain(m, "stopping");
        if (status != UCS_OK) {
            ctx->mover_status = status;
        }
    }
    if (ctx->mover_status != UCS_OK) {
        /* the GPU endpoints' kernels learn it (mgi_dev_failed; a first GPU
         * endpoint made meanwhile looks at the status after its word is
         * out) */
        uint32_t *w;

        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        w = __atomic_load_n(&ctx->fail_word, __ATOMIC_SEQ_CST);
        if (w != NULL) {
            __atomic_store_n(w, 1, __ATOMIC_RELEASE);
        }
    }
    return NULL;
}

static void mgi_mover_free(mgi_mover_t *m)
{
    mgi_mover_epoch_t *e;
    unsigned i, j;

    for (i = 0; i < MGI_MOVER_FLUSHES_MAX; ++i) {
        e = &m->epochs[i];
        /* after an error only: released by UCP once complete */
        for (j = 0; j < e->nreqs; ++j) {
            ucp_request_free(e->reqs[j]);
        }
        free(e->reqs);
        free(e->ranks);
        free(e->rel);
        free(e->marks);
        free(e->cdst);
        free(e->csrc);
        free(e->csize);
    }
    for (i = 0; i < m->nrefresh; ++i) {
        if (m->refresh[i]->credit_req != NULL) {
            ucp_request_free(m->refresh[i]->credit_req);
            m->refresh[i]->credit_req = NULL;
        }
        m->refresh[i]->credit_busy = 0;
    }
    for (i = 0; i < m->nlanes; ++i) {
        m->lanes[i]->listed = 0;
    }
    free(m->rank_seq);
    free(m->lanes);
    free(m->refresh);
    free(m->cand);
    free(m);
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
    m->ctx        = ctx;
    m->ncand_max  = n;
    m->seq        = 1;
    m->lane_bytes = mgi_ring_mem_size(ctx->params.recv_depth, ctx->seg_size);
    m->cand       = calloc(n, sizeof(*m->cand));
    m->refresh    = calloc(MGI_MAX_EPS, sizeof(*m->refresh));
    m->lanes      = calloc(MGI_MAX_EPS, sizeof(*m->lanes));
    /* a rank through the contexts' own endpoint, or a link (mgi_rail.c) */
    m->rank_seq   = calloc((size_t)ctx->size * (MGI_NICS_MAX + 1),
                           sizeof(*m->rank_seq));
    if ((m->cand == NULL) || (m->refresh == NULL) || (m->lanes == NULL) ||
        (m->rank_seq == NULL)) {
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
    mgi_mover_free(m);
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
        mgi_mover_free(m);
        ctx->mover_state = NULL;
    }
}

/* Stop moving (the worker is still progressed), e.g. before rkeys go. */
void mgi_mover_quiesce(mgi_context_t *ctx)
{
    /* the mover's drain is bounded by timeout_ms itself */
    uint64_t deadline = mgi_time_ns() +
                        ((uint64_t)ctx->params.timeout_ms + 1000) * 1000000ull;

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

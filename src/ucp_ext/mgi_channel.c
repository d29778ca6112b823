/**
 * MGI channels: CreateCh, with the paper's semantics (§3.1): the
 * channel's local rings, the ranks' allgather of their endpoints and
 * their agreement on its id, its routes and, where every rank can, its
 * direct rings between GPUs. DeleteCh and the free of a channel are in
 * mgi_ch_delete.c, the data calls in mgi_ch_data.c.
 */
#include "mgi_ch_int.h"
#include "mgi_policy.h"

#include <ucs/sys/math.h>

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* What every rank contributes to the channel-creation allgather, per
 * endpoint: its receive ring and, where it has them, its lane control
 * words (ctl_rkey_len 0: none, the ring headers are the control words). */
typedef struct mgi_ch_wire_ep {
    uint16_t id;
    uint16_t rkey_len;
    uint16_t ctl_rkey_len;
    uint16_t flags;             /* MGI_WIRE_EP_* */
    uint32_t blocks;            /* its user blocks */
    int32_t  vertex;            /* in its host's graph (mgi_route.c), -1 */
    uint64_t rbase;
    uint64_t ctl_rbase;
    uint8_t  rkey[MGI_RKEY_MAX];
    uint8_t  ctl_rkey[MGI_RKEY_MAX];
    char     ctl_shm[MGI_SHM_NAME_MAX]; /* the same words in POSIX shared
                                         * memory, for movers on this host */
    /* the number of the NIC nearest it (-1: none named) and, where that is
     * not its context's NIC, its receive ring's rkey in the rail there
     * (mgi_rail.c; rail_rkey_len 0: none) */
    int32_t  nic;
    uint32_t rail_rkey_len;
    uint8_t  rail_rkey[MGI_RKEY_MAX];
} mgi_ch_wire_ep_t;

#define MGI_WIRE_EP_GPU     1u  /* a GPU endpoint */

/* Channel ids a create chooses from: the window from ctx->next_ch on
 * (every rank's next_ch is the same: creates are collective), cyclic
 * over MGI_MAX_CHANNELS. An id is free at a rank when no channel there
 * holds it, deleted or not: ids of deleted channels are reused once
 * freed. */
#define MGI_CH_ID_WINDOW 256

typedef struct mgi_ch_wire {
    uint32_t         ch_id;    /* the first id free here */
    int32_t          status;
    uint64_t         sig;
    uint32_t         nep;
    uint32_t         nrails;   /* this rank's rails (mgi_rail.c) */
    uint64_t         free_ids[MGI_CH_ID_WINDOW / 64]; /* bit k: next_ch + k */
    mgi_ch_wire_ep_t eps[MGI_MAX_LOCAL_EPS];
} mgi_ch_wire_t;



static uint64_t mgi_hash(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static ucs_status_t mgi_ch_check_params(mgi_context_t *ctx,
                                        const mgi_ch_params_t *p,
                                        size_t *tuple_p, size_t *max_p,
                                        size_t *key_off_p, size_t *key_size_p)
{
    size_t cap = ctx->seg_size - MGI_SEG_HDR_SIZE;
    size_t tuple = 0, key_off = 0, max_tuple;
    unsigned i, j;

    if ((p->nsrc == 0) || (p->ndst == 0) || (p->src == NULL) ||
        (p->dst == NULL)) {
        ucs_error("mgi context %p: a channel needs source and destination "
                  "endpoints", ctx);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->flags & ~MGI_CH_FLAGS_ALL) {
        ucs_error("mgi context %p: channel flags 0x%x: unknown bits 0x%x "
                  "(MGI_CH_FLAG_*, zero the params before setting them)",
                  ctx, p->flags, p->flags & ~MGI_CH_FLAGS_ALL);
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->nsrc > MGI_MAX_CH_SRC) {
        ucs_error("mgi context %p: %u sources, at most %d per channel", ctx,
                  p->nsrc, MGI_MAX_CH_SRC);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    for (i = 0; i < p->nsrc + p->ndst; ++i) {
        mgi_ep_id_t id = (i < p->nsrc) ? p->src[i] : p->dst[i - p->nsrc];
        if (MGI_EP_RANK(id) >= ctx->size) {
            ucs_error("mgi context %p: endpoint %u belongs to rank %d, the "
                      "job has %d", ctx, id, MGI_EP_RANK(id), ctx->size);
            return UCS_ERR_INVALID_PARAM;
        }
        if ((MGI_EP_RANK(id) == ctx->rank) &&
            (mgi_ep_lookup(ctx, id) == NULL)) {
            ucs_error("mgi context %p: endpoint %u is not an endpoint of "
                      "this process", ctx, id);
            return UCS_ERR_NO_ELEM;
        }
    }
    for (i = 0; i < p->ndst; ++i) {
        for (j = 0; j < i; ++j) {
            if (p->dst[i] == p->dst[j]) {
                ucs_error("mgi context %p: destination endpoint %u listed "
                          "twice", ctx, p->dst[i]);
                return UCS_ERR_INVALID_PARAM;
            }
        }
    }
    for (i = 0; i < p->nsrc; ++i) {
        for (j = 0; j < i; ++j) {
            if (p->src[i] == p->src[j]) {
                ucs_error("mgi context %p: source endpoint %u listed twice",
                          ctx, p->src[i]);
                return UCS_ERR_INVALID_PARAM;
            }
        }
    }

    if (p->schema != NULL) {
        if ((p->schema->nattrs == 0) || (p->schema->nattrs > MGI_MAX_ATTRS)) {
            ucs_error("mgi context %p: schema with %u attributes", ctx,
                      p->schema->nattrs);
            return UCS_ERR_INVALID_PARAM;
        }
        for (i = 0; i < p->schema->nattrs; ++i) {
            if (p->schema->attr_size[i] == 0) {
                ucs_error("mgi context %p: schema attribute %u has size 0",
                          ctx, i);
                return UCS_ERR_INVALID_PARAM;
            }
            if ((int)i == p->part_key) {
                key_off = tuple;
            }
            tuple += p->schema->attr_size[i];
        }
        if (p->part_key >= (int)p->schema->nattrs) {
            ucs_error("mgi context %p: partition key %d, schema has %u "
                      "attributes", ctx, p->part_key, p->schema->nattrs);
            return UCS_ERR_INVALID_PARAM;
        }
        if ((p->part_key >= 0) &&
            (p->schema->attr_size[p->part_key] != 1) &&
            (p->schema->attr_size[p->part_key] != 2) &&
            (p->schema->attr_size[p->part_key] != 4) &&
            (p->schema->attr_size[p->part_key] != 8)) {
            ucs_error("mgi context %p: partition key %d of %u bytes is not "
                      "an integer", ctx, p->part_key,
                      p->schema->attr_size[p->part_key]);
            return UCS_ERR_INVALID_PARAM;
        }
        max_tuple = tuple;
    } else {
        if (p->part_key >= 0) {
            ucs_error("mgi context %p: partition key %d without a schema",
                      ctx, p->part_key);
            return UCS_ERR_INVALID_PARAM;
        }
        max_tuple = p->max_tuple;
    }
    if ((max_tuple == 0) || (max_tuple > MGI_MSG_MAX_LEN) ||
        (mgi_msg_size(max_tuple) > cap)) {
        ucs_error("mgi context %p: tuples of %zu bytes do not fit a segment "
                  "of %zu bytes (MGI_SEG_SIZE)", ctx, max_tuple, cap);
        return UCS_ERR_INVALID_PARAM;
    }
    for (i = 0; (p->land != NULL) && (i < p->ndst); ++i) {
        const mgi_ep_t *ep;

        if ((p->land[i] == NULL) || (MGI_EP_RANK(p->dst[i]) != ctx->rank)) {
            continue;               /* another rank's entry is not read */
        }
        ep = mgi_ep_lookup(ctx, p->dst[i]);
        if (p->land_tuples == NULL) {
            ucs_error("mgi context %p: landing buffers without "
                      "land_tuples", ctx);
            return UCS_ERR_INVALID_PARAM;
        }
        if (tuple == 0) {
            ucs_error("mgi context %p: a landing buffer for endpoint %u on "
                      "a schemaless channel (landing needs a schema)", ctx,
                      p->dst[i]);
            return UCS_ERR_INVALID_PARAM;
        }
        if (p->land_tuples[i] == 0) {
            ucs_error("mgi context %p: the landing buffer of endpoint %u "
                      "has room for 0 tuples", ctx, p->dst[i]);
            return UCS_ERR_INVALID_PARAM;
        }
        if ((ep != NULL) && !mgi_ep_is_gpu(ep)) {
            ucs_error("mgi context %p: a landing buffer for endpoint %u, a "
                      "CPU endpoint (landing is for GPU endpoints)", ctx,
                      p->dst[i]);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    *tuple_p    = tuple;
    *max_p      = max_tuple;
    *key_off_p  = key_off;
    *key_size_p = (p->part_key >= 0) ? p->schema->attr_size[p->part_key] : 0;
    return UCS_OK;
}

static uint64_t mgi_ch_signature(mgi_context_t *ctx, const mgi_channel_t *ch)
{
    uint64_t h = 0;
    unsigned i;

    h = mgi_hash(h, ch->nsrc);
    for (i = 0; i < ch->nsrc; ++i) {
        h = mgi_hash(h, ch->src[i]);
    }
    h = mgi_hash(h, ch->ndst);
    for (i = 0; i < ch->ndst; ++i) {
        h = mgi_hash(h, ch->dst[i]);
    }
    h = mgi_hash(h, ch->tuple_size);
    h = mgi_hash(h, ch->max_tuple);
    h = mgi_hash(h, (uint64_t)(int64_t)ch->part_key);
    h = mgi_hash(h, ch->flags);     /* direct rings or not, alike */
    /* the ring geometry (segment size, receive depth, direct rings) is
     * the same at every rank: mgi_context_create checked it */
    return h;
}

static ucs_status_t mgi_ch_alloc(mgi_context_t *ctx, const mgi_ch_params_t *p,
                                 mgi_ch_id_t id, mgi_channel_t **ch_p)
{
    mgi_channel_t *ch;
    ucs_status_t status;
    mgi_ep_t *ep;
    unsigned i, nomem;

    ch = calloc(1, sizeof(*ch));
    if (ch == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    status = mgi_ch_check_params(ctx, p, &ch->tuple_size, &ch->max_tuple,
                                 &ch->key_off, &ch->key_size);
    if (status != UCS_OK) {
        goto err_free;
    }
    ch->nsrc     = p->nsrc;
    ch->ndst     = p->ndst;
    ch->part_key = p->part_key;
    ch->flags    = p->flags;
    memcpy(ch->src, p->src, p->nsrc * sizeof(*p->src));
    ch->dst  = calloc(p->ndst, sizeof(*ch->dst));
    ch->ldst = calloc(p->ndst, sizeof(*ch->ldst));
    ch->lsrc = calloc(p->nsrc, sizeof(*ch->lsrc));
    if ((ch->dst == NULL) || (ch->ldst == NULL) || (ch->lsrc == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    memcpy(ch->dst, p->dst, p->ndst * sizeof(*p->dst));

    for (i = 0; i < p->nsrc; ++i) {
        ch->lsrc[i].ep = mgi_ep_lookup(ctx, p->src[i]);
    }
    for (i = 0; i < p->ndst; ++i) {
        mgi_ch_dst_t *d = &ch->ldst[i];

        d->ep = mgi_ep_lookup(ctx, p->dst[i]);
        if (d->ep == NULL) {
            continue;
        }
        pthread_mutex_init(&d->recv_lock, NULL);
        if (mgi_ep_is_gpu(d->ep)) {
            continue; /* final rings per consuming block: mgi_gpu_ch_add */
        }
        d->final = mgi_ep_ring_create(d->ep, ctx->params.final_depth,
                                      MGI_RING_F_APPEND, "MGI_FINAL_DEPTH");
        if (d->final == NULL) {
            mgi_ep_final_nomem(d->ep, id, 0, 1);
            status = UCS_ERR_NO_MEMORY;
            goto err_free;
        }
    }
    ch->id = id;
    for (i = 0; (ep = mgi_ch_gpu_ep(ch, &i)) != NULL;) {
        if (ch->ndst > MGI_GPU_MAX_TARGETS) {
            ucs_error("mgi context %p: a channel of GPU endpoint %u has %u "
                      "destinations, at most %d", ctx, ep->id, ch->ndst,
                      MGI_GPU_MAX_TARGETS);
            status = UCS_ERR_EXCEEDS_LIMIT;
            goto err_free;
        }
        /* before the allgather: peers may send as soon as it ends */
        nomem  = UINT_MAX;
        status = mgi_gpu_ch_add(ep, ch, &nomem);
        if (status != UCS_OK) {
            if (nomem != UINT_MAX) {
                mgi_ep_final_nomem(ep, id, nomem, ep->nblocks);
            }
            goto err_free;
        }
    }
    *ch_p = ch;
    return UCS_OK;

err_free:
    mgi_channel_free(ch);
    return status;
}

/* A peer's lane control words, mapped here when it is on this host (its
 * shared-memory object opens): the mover then stores RTail and loads RHead
 * directly instead of a UCP put / get per word. Else UCP is used. */
static void mgi_ch_map_ctl(mgi_context_t *ctx, mgi_peer_ep_t *peer,
                           const mgi_ch_wire_ep_t *w)
{
    size_t len = (size_t)ctx->size * sizeof(mgi_lane_ctl_t);
    char name[MGI_SHM_NAME_MAX];
    void *p;
    int fd;

    memcpy(name, w->ctl_shm, sizeof(name));
    name[sizeof(name) - 1] = '\0';
    if (name[0] == '\0') {
        return;
    }
    fd = shm_open(name, O_RDWR, 0);
    if (fd < 0) {
        ucs_debug("mgi context %p: lane control words of endpoint %u "
                  "(%s) not on this host: %m; through UCP", ctx, w->id,
                  name);
        return;
    }
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        ucs_debug("mgi context %p: mmap of %s: %m; through UCP", ctx, name);
        return;
    }
    peer->ctl_map     = (mgi_lane_ctl_t*)p;
    peer->ctl_map_len = len;
}

/* The link to peer endpoint w on the NIC of its number (mgi_rail.c) */
static ucs_status_t mgi_ch_learn_nic(mgi_context_t *ctx, mgi_peer_ep_t *peer,
                                     const mgi_ch_wire_ep_t *w)
{
    int on_rail = (w->rail_rkey_len > 0) &&
                  (w->rail_rkey_len <= MGI_RKEY_MAX);

    return mgi_rail_peer_learn(ctx, peer, w->nic, on_rail,
                               on_rail ? w->rail_rkey : w->rkey);
}

static ucs_status_t mgi_ch_learn_rails(mgi_context_t *ctx,
                                       const mgi_ch_wire_t *all,
                                       unsigned mine)
{
    uint32_t *nrails;
    ucs_status_t status;
    int r;

    if (ctx->links == NULL) {
        return UCS_OK;   /* one host: no rails */
    }
    nrails = calloc(ctx->size, sizeof(*nrails));
    if (nrails == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    for (r = 0; r < ctx->size; ++r) {
        nrails[r] = all[r].nrails;
    }
    status = mgi_rails_exchange(ctx, nrails, mine);
    free(nrails);
    return status;
}

static ucs_status_t mgi_ch_learn_peers(mgi_context_t *ctx,
                                       const mgi_ch_wire_t *all)
{
    const mgi_ch_wire_ep_t *w;
    mgi_peer_ep_t *peer;
    ucs_status_t status;
    ucp_rkey_h rkey, ctl_rkey;
    int r;
    unsigned i;

    for (r = 0; r < ctx->size; ++r) {
        for (i = 0; i < all[r].nep; ++i) {
            w    = &all[r].eps[i];
            peer = &ctx->peer_eps[w->id];
            if (peer->valid && (peer->rbase == w->rbase)) {
                /* a link this process's rails made possible since */
                status = mgi_ch_learn_nic(ctx, peer, w);
                if (status != UCS_OK) {
                    return status;
                }
                continue;
            }
            status = ucp_ep_rkey_unpack(ctx->peers[r], w->rkey, &rkey);
            if (status != UCS_OK) {
                ucs_error("mgi context %p: rkey of endpoint %u (rank %d): %s",
                          ctx, w->id, r, ucs_status_string(status));
                return status;
            }
            ctl_rkey = NULL;
            if (w->ctl_rkey_len > 0) {
                status = ucp_ep_rkey_unpack(ctx->peers[r], w->ctl_rkey,
                                            &ctl_rkey);
                if (status != UCS_OK) {
                    ucs_error("mgi context %p: rkey of the lane control "
                              "words of endpoint %u (rank %d): %s", ctx,
                              w->id, r, ucs_status_string(status));
                    ucp_rkey_destroy(rkey);
                    return status;
                }
            }
            if (peer->valid) {
                /* a deleted endpoint's id is never reused: stale only if
                 * the peer re-created its rings; keep the old rkey alive */
                ucs_debug("mgi context %p: endpoint %u moved", ctx, w->id);
            }
            peer->rank      = r;
            peer->gpu       = !!(w->flags & MGI_WIRE_EP_GPU);
            peer->rbase     = w->rbase;
            peer->rkey      = rkey;
            peer->has_ctl   = (ctl_rkey != NULL);
            peer->ctl_rbase = w->ctl_rbase;
            peer->ctl_rkey  = ctl_rkey;
            /* a moved one's rkey stays alive, as its ring's above */
            __atomic_store_n(&peer->nic_rkey, NULL, __ATOMIC_RELEASE);
            peer->nic       = -1;
            status = mgi_ch_learn_nic(ctx, peer, w);
            if (status != UCS_OK) {
                return status;
            }
            if (peer->has_ctl && (r != ctx->rank) && !ctx->ctl_ucp &&
                (peer->ctl_map == NULL)) {
                mgi_ch_map_ctl(ctx, peer, w);
            }
            __atomic_store_n(&peer->valid, 1, __ATOMIC_RELEASE);
        }
    }
    return UCS_OK;
}

/* A sort ring from each local endpoint to each next hop it has: its
 * sources' (each of those a source spreads over) and, where the plan
 * makes it a relay, those of the tuples it forwards (under ctx->lock). */
static ucs_status_t mgi_ch_rings(mgi_context_t *ctx, mgi_channel_t *ch)
{
    ucs_status_t status = UCS_OK;
    const mgi_ch_split_t *sp;
    mgi_route_t *route;
    mgi_ep_id_t hop;
    mgi_ep_t *ep;
    unsigned i, j, k, n;

    for (i = 0; (status == UCS_OK) && (i < ctx->neps); ++i) {
        ep = ctx->eps[i];
        if ((ep == NULL) || ((mgi_ch_src_index(ch, ep->id) < 0) &&
                             (ch->relay_expect[i] == 0))) {
            continue;
        }
        for (j = 0; (status == UCS_OK) && (j < ch->ndst); ++j) {
            sp = mgi_route_split(ch, ep->id, j);
            n  = (sp != NULL) ? sp->n + 1 : 1;
            for (k = 0; (status == UCS_OK) && (k < n); ++k) {
                hop = (k == 0) ? mgi_route_next_hop(ctx, ch, ep->id,
                                                    ch->dst[j]) :
                                 sp->hop[k - 1];
                if (hop == ep->id) {
                    continue; /* loopback: the sorter writes the receive
                               * ring */
                }
                if (!ctx->peer_eps[hop].valid) {
                    ucs_error("mgi channel %u: next hop %u of %u -> %u has "
                              "no receive ring", ch->id, hop, ep->id,
                              ch->dst[j]);
                    return UCS_ERR_UNREACHABLE;
                }
                status = mgi_ep_route_get(ep, hop, &route);
            }
        }
    }
    return status;
}

/* The channel's next hops and sort rings (mgi_route.c), from each
 * endpoint's vertex in the allgather */
static ucs_status_t mgi_ch_make_routes(mgi_context_t *ctx, mgi_channel_t *ch,
                                       const mgi_ch_wire_t *all)
{
    int32_t *hvert  = malloc(MGI_MAX_EPS * sizeof(*hvert));
    uint8_t *gpu    = calloc(MGI_MAX_EPS, 1);
    uint32_t *nprod = calloc(MGI_MAX_EPS, sizeof(*nprod));
    ucs_status_t status = UCS_ERR_NO_MEMORY;
    const mgi_ch_wire_ep_t *w;
    unsigned i;
    int r;

    if ((hvert != NULL) && (gpu != NULL) && (nprod != NULL)) {
        memset(hvert, 0xff, MGI_MAX_EPS * sizeof(*hvert));
        for (r = 0; r < ctx->size; ++r) {
            for (i = 0, w = all[r].eps; i < all[r].nep; ++i, ++w) {
                hvert[w->id] = w->vertex;
                gpu[w->id]   = !!(w->flags & MGI_WIRE_EP_GPU);
                /* a GPU endpoint's every stage ring sends an EOF */
                nprod[w->id] = gpu[w->id] ?
                               w->blocks * ctx->params.stage_groups : 1;
            }
        }
        status = mgi_route_ch_plan(ctx, ch, hvert, gpu, nprod);
    }
    free(hvert);
    free(gpu);
    free(nprod);
    return (status == UCS_OK) ? mgi_ch_rings(ctx, ch) : status;
}



static unsigned mgi_ch_id_at(const mgi_context_t *ctx, unsigned k)
{
    return (ctx->next_ch + k) % ctx->params.max_channels;
}

/* The window's ids free here (bits), under ctx->lock; returns the first
 * one's place in the window, or -1. */
static int mgi_ch_free_ids(mgi_context_t *ctx, uint64_t *bits)
{
    const unsigned n = ucs_min(ctx->params.max_channels, MGI_CH_ID_WINDOW);
    const mgi_channel_t *d;
    int first = -1;
    unsigned k, id;

    memset(bits, 0, MGI_CH_ID_WINDOW / 8);
    for (k = 0; k < n; ++k) {
        id = mgi_ch_id_at(ctx, k);
        if (ctx->chs[id] != NULL) {
            continue;
        }
        for (d = ctx->dead; (d != NULL) && (d->id != id); d = d->dead_next) {
        }
        if (d == NULL) {
            bits[k / 64] |= 1ull << (k % 64);
            first         = (first < 0) ? (int)k : first;
        }
    }
    return first;
}

/* Every id a create looks at is held by a channel (at this rank, or at
 * some rank): say which and what to do. */
static ucs_status_t mgi_ch_out_of_ids(const mgi_context_t *ctx,
                                      const char *where)
{
    ucs_error("mgi context %p: out of channel ids: each of the %u ids from "
              "%u on (max_channels %u) is held %s by a channel not "
              "deleted, or deleted and not yet freed; delete the channels "
              "no longer used on every rank, or raise "
              "mgi_context_params_t.max_channels (up to 65535; a create looks at %u ids from the last one's on)",
              ctx, ucs_min(ctx->params.max_channels, MGI_CH_ID_WINDOW),
              ctx->next_ch, ctx->params.max_channels, where,
              MGI_CH_ID_WINDOW);
    return UCS_ERR_EXCEEDS_LIMIT;
}

/* The first place of the window free at every rank, or -1. */
static int mgi_ch_common_id(const mgi_context_t *ctx, const mgi_ch_wire_t *all)
{
    uint64_t w;
    unsigned i;
    int r;

    for (i = 0; i < MGI_CH_ID_WINDOW / 64; ++i) {
        w = ~0ull;
        for (r = 0; r < ctx->size; ++r) {
            w &= all[r].free_ids[i];
        }
        if (w != 0) {
            return (int)(i * 64 + __builtin_ctzll(w));
        }
    }
    return -1;
}

/* The ranks' first free ids differ (a rank still holds a channel that
 * another one deleted): publish ch under the first id free at every rank
 * and wait until every rank did, before any peer may send on it. */
static ucs_status_t mgi_ch_agree_id(mgi_context_t *ctx, mgi_channel_t *ch,
                                    const mgi_ch_wire_t *all)
{
    int k = mgi_ch_common_id(ctx, all);
    ucs_status_t status = UCS_OK;
    mgi_ch_id_t old = ch->id;
    int32_t mine, st[MGI_MAX_RANKS];    /* ctx->size <= MGI_MAX_RANKS */
    mgi_ep_t *ep;
    unsigned i;
    int r;

    if (k < 0) {
        return mgi_ch_out_of_ids(ctx, "at some rank");
    }
    if (mgi_ch_id_at(ctx, k) != old) {
        ucs_debug("mgi context %p: channel %u becomes %u, the first id free "
                  "at every rank", ctx, old, mgi_ch_id_at(ctx, k));
        __atomic_store_n(&ctx->chs[old], NULL, __ATOMIC_RELEASE);
        ch->id = mgi_ch_id_at(ctx, k);
        __atomic_store_n(&ctx->chs[ch->id], ch, __ATOMIC_RELEASE);
        for (i = 0; (status == UCS_OK) &&
                    ((ep = mgi_ch_gpu_ep(ch, &i)) != NULL);) {
            status = mgi_gpu_ch_rename(ep, ch, old);
        }
    }
    /* every rank takes part, whatever it found */
    mine   = status;
    status = mgi_bootstrap_allgather(&ctx->bs, &mine, st, sizeof(mine));
    for (r = 0; (status == UCS_OK) && (r < ctx->size); ++r) {
        status = (ucs_status_t)st[r];
    }
    return status;
}

/* What each rank tells the others of a channel with direct rings: per
 * local GPU destination endpoint, the IPC handle of its rings. */
typedef struct mgi_ch_dwire {
    int32_t  status;
    uint32_t n;
    struct {
        uint16_t id;
        uint16_t land;          /* 1: a landing buffer (land_*) */
        uint16_t reserved[2];
        uint8_t  ipc[64];
        uint8_t  land_ipc[64];  /* its allocation's IPC handle */
        uint64_t land_off;      /* the buffer in that allocation */
        uint64_t land_tuples;
    } eps[MGI_MAX_LOCAL_EPS];
} mgi_ch_dwire_t;

/* The wire entry of endpoint id, or NULL; its rank in *r. */
static const mgi_ch_wire_ep_t *mgi_ch_wire_find(const mgi_context_t *ctx,
                                                const mgi_ch_wire_t *all,
                                                mgi_ep_id_t id, int *r)
{
    unsigned i;

    for (*r = 0; *r < ctx->size; ++*r) {
        for (i = 0; i < all[*r].nep; ++i) {
            if (all[*r].eps[i].id == id) {
                return &all[*r].eps[i];
            }
        }
    }
    return NULL;
}

/* Does the channel get direct rings (mgi_direct_why_not: by default
 * where every endpoint is a GPU endpoint and every rank on this host)?
 * The same answer at every rank (the allgather's entries, the same
 * parameters). *nin: the source blocks. */
static int mgi_ch_direct_wanted(const mgi_context_t *ctx,
                                const mgi_channel_t *ch,
                                const mgi_ch_wire_t *all, unsigned *nin)
{
    mgi_direct_in_t in;
    const mgi_ch_wire_ep_t *w;
    const char *why;
    unsigned i;
    int r;

    in.ctx_direct = ctx->params.direct_rings;
    in.opt_out    = !!(ch->flags & MGI_CH_FLAG_NO_DIRECT);
    in.tuple_size = ch->tuple_size;
    in.ndst       = ch->ndst;
    in.one_host   = (ctx->host_peers == ctx->size - 1);
    in.relayed    = ch->relayed_pairs;
    in.all_gpu    = 1;
    *nin          = 0;
    for (i = 0; i < ch->nsrc + ch->ndst; ++i) {
        w = mgi_ch_wire_find(ctx, all, (i < ch->nsrc) ? ch->src[i] :
                                       ch->dst[i - ch->nsrc], &r);
        if ((w == NULL) || !(w->flags & MGI_WIRE_EP_GPU)) {
            in.all_gpu = 0;
        } else if (i < ch->nsrc) {
            *nin += w->blocks;
        }
    }
    why = mgi_direct_why_not(&in);
    if (why != NULL) {
        /* a channel of CPU endpoints never has them: no news there */
        ucs_log(in.all_gpu ? UCS_LOG_LEVEL_INFO : UCS_LOG_LEVEL_DEBUG,
                "mgi channel %u: no direct rings: %s; through stage rings, "
                "sorters and movers", ch->id, why);
        *nin = 0;
        return 0;
    }
    return 1;
}

/* Another process's direct rings (their CUDA IPC handle) mapped here,
 * through ep's GPU: once per handle for the context (its endpoint pools
 * the rings for the next channel of their size, with the same handle). */
static ucs_status_t mgi_ch_dmap(mgi_context_t *ctx, mgi_ep_t *ep,
                                const uint8_t *ipc, char **base_p)
{
    struct mgi_dmap *a;
    ucs_status_t status;
    unsigned k, cap;
    void *p;

    pthread_mutex_lock(&ctx->lock);
    for (k = 0; k < ctx->ndmaps; ++k) {
        if (memcmp(ctx->dmaps[k].ipc, ipc, sizeof(ctx->dmaps[k].ipc)) == 0) {
            *base_p = (char*)ctx->dmaps[k].p;
            pthread_mutex_unlock(&ctx->lock);
            return UCS_OK;
        }
    }
    status = UCS_OK;
    if (ctx->ndmaps == ctx->dmaps_cap) {
        cap    = ctx->dmaps_cap * 2 + 8;
        a      = realloc(ctx->dmaps, cap * sizeof(*a));
        status = (a != NULL) ? UCS_OK : UCS_ERR_NO_MEMORY;
        if (a != NULL) {
            ctx->dmaps     = a;
            ctx->dmaps_cap = cap;
        }
    }
    if (status == UCS_OK) {
        status = mgi_gpu_direct_map(ep, ipc, &p);
    }
    if (status == UCS_OK) {
        memcpy(ctx->dmaps[ctx->ndmaps].ipc, ipc, sizeof(ctx->dmaps[0].ipc));
        ctx->dmaps[ctx->ndmaps++].p = p;
        *base_p = (char*)p;
    }
    pthread_mutex_unlock(&ctx->lock);
    return status;
}

/* A channel that takes direct rings (mgi_ch_direct_wanted):
 * each local GPU destination endpoint makes its rings, the ranks trade
 * their IPC handles (a collective: every rank takes part whatever
 * `status` it brings), and each local source endpoint is given where its
 * rings at every destination are. Returns the status of the channel. */
static ucs_status_t mgi_ch_direct(mgi_context_t *ctx, mgi_channel_t *ch,
                                  const mgi_ch_params_t *params,
                                  const mgi_ch_wire_t *all,
                                  ucs_status_t status)
{
    const size_t kb = (size_t)ctx->params.direct_ring_kb * 1024;
    mgi_ch_dwire_t *mine = NULL, *dall = NULL;
    const mgi_ch_wire_ep_t *w;
    char **bases = NULL, **lands = NULL;
    uint64_t *lcap = NULL;
    mgi_ep_t *ep, *dep;
    unsigned nin, i, j, e, nland = 0;
    uint32_t cap, first;
    ucs_status_t st;
    size_t stride;
    uint64_t t[5];
    char *p;
    int r;

    t[0] = mgi_time_ns();
    if (!mgi_ch_direct_wanted(ctx, ch, all, &nin)) {
        for (i = 0; (params->land != NULL) && (i < ch->ndst); ++i) {
            if ((params->land[i] != NULL) && (ch->ldst[i].ep != NULL)) {
                ucs_warn("mgi channel %u: no direct rings, so the landing "
                         "buffer of endpoint %u is not used: its tuples "
                         "arrive through the receive", ch->id, ch->dst[i]);
            }
        }
        return status;
    }
    for (cap = 1; (uint64_t)cap * 2 * ch->tuple_size <= kb; cap *= 2) {
    }
    stride = sizeof(mgi_dring_t) + (size_t)cap * ch->tuple_size;
    stride = (stride + MGI_RING_LINE * 2 - 1) / (MGI_RING_LINE * 2) *
             (MGI_RING_LINE * 2);
    mine  = calloc(1, sizeof(*mine));
    dall  = calloc(ctx->size, sizeof(*dall));
    bases = calloc(ch->ndst, sizeof(*bases));
    lands = calloc(ch->ndst, sizeof(*lands));
    lcap  = calloc(ch->ndst, sizeof(*lcap));
    if ((mine == NULL) || (dall == NULL) || (bases == NULL) ||
        (lands == NULL) || (lcap == NULL)) {
        status = (status == UCS_OK) ? UCS_ERR_NO_MEMORY : status;
    }
    for (i = 0; (status == UCS_OK) && (i < ch->ndst); ++i) {
        ep = ch->ldst[i].ep;
        if ((ep == NULL) || (mgi_ch_dst_index(ch, ep->id) != (int)i)) {
            continue;               /* not here, or named twice */
        }
        status = mgi_gpu_ch_direct_in(ep, ch, nin, cap, stride,
                                      mine->eps[mine->n].ipc);
        if ((status == UCS_OK) && (params->land != NULL) &&
            (params->land[i] != NULL)) {
            status = mgi_gpu_ch_land_in(ep, ch, params->land[i],
                                        params->land_tuples[i],
                                        mine->eps[mine->n].land_ipc,
                                        &mine->eps[mine->n].land_off);
            mine->eps[mine->n].land        = 1;
            mine->eps[mine->n].land_tuples = params->land_tuples[i];
        }
        mine->eps[mine->n++].id = ep->id;
    }
    t[1] = mgi_time_ns();
    if (mine != NULL) {
        mine->status = status;
        st = (dall != NULL) ?
             mgi_bootstrap_allgather(&ctx->bs, mine, dall, sizeof(*mine)) :
             UCS_ERR_NO_MEMORY;
        status = (status == UCS_OK) ? st : status;
    }
    for (r = 0; (status == UCS_OK) && (r < ctx->size); ++r) {
        if (dall[r].status != UCS_OK) {
            ucs_error("mgi channel %u: rank %d failed to make its direct "
                      "rings (%s)", ch->id, r,
                      ucs_status_string((ucs_status_t)dall[r].status));
            status = (ucs_status_t)dall[r].status;
        }
    }
    t[2] = mgi_time_ns();
    /* where each destination's rings are, for the local sources */
    for (i = 0; (status == UCS_OK) && (i < ch->nsrc); ++i) {
        ep = ch->lsrc[i].ep;
        if (ep == NULL) {
            continue;
        }
        for (j = 0; (status == UCS_OK) && (j < ch->ndst); ++j) {
            if (bases[j] != NULL) {
                continue;
            }
            w = mgi_ch_wire_find(ctx, all, ch->dst[j], &r);
            for (e = 0; (e < dall[r].n) && (dall[r].eps[e].id != ch->dst[j]);
                 ++e) {
            }
            if (e == dall[r].n) {
                status = UCS_ERR_NO_ELEM;
                break;
            }
            if (r == ctx->rank) {
                dep      = mgi_ep_lookup(ctx, ch->dst[j]);
                bases[j] = (dep != NULL) ?
                           (char*)mgi_gpu_ch_direct_base(dep, ch) : NULL;
                status   = (bases[j] != NULL) ? UCS_OK : UCS_ERR_NO_ELEM;
                lands[j] = dall[r].eps[e].land ? (char*)params->land[j] :
                                                 NULL;
            } else {
                status = mgi_ch_dmap(ctx, ep, dall[r].eps[e].ipc, &bases[j]);
                if ((status == UCS_OK) && dall[r].eps[e].land) {
                    status   = mgi_ch_dmap(ctx, ep, dall[r].eps[e].land_ipc,
                                           &p);
                    lands[j] = p + dall[r].eps[e].land_off;
                }
            }
            lcap[j] = dall[r].eps[e].land_tuples;
            nland  += (lands[j] != NULL);
        }
        break;                      /* mapped once, for every source */
    }
    t[3] = mgi_time_ns();
    for (i = 0, first = 0; (status == UCS_OK) && (i < ch->nsrc); ++i) {
        ep = ch->lsrc[i].ep;
        w  = mgi_ch_wire_find(ctx, all, ch->src[i], &r);
        if ((ep != NULL) && (mgi_ch_src_index(ch, ep->id) == (int)i)) {
            status = mgi_gpu_ch_direct_out(ep, ch, bases,
                                           (nland > 0) ? lands : NULL, lcap,
                                           first, nin, cap, stride);
        }
        first += w->blocks;
    }
    t[4] = mgi_time_ns();
    if (status == UCS_OK) {
        ucs_info("mgi channel %u: direct rings, %u into each destination, "
                 "%u tuples (%zu bytes) each; %u destination(s) with a "
                 "landing buffer here; in %.3f ms (rings %.3f, allgather "
                 "%.3f, mapped %.3f, sources' pointers %.3f)", ch->id, nin,
                 cap, stride, nland, (t[4] - t[0]) / 1e6, (t[1] - t[0]) / 1e6,
                 (t[2] - t[1]) / 1e6, (t[3] - t[2]) / 1e6,
                 (t[4] - t[3]) / 1e6);
    }
    free(lcap);
    free(lands);
    free(bases);
    free(dall);
    free(mine);
    return status;
}

ucs_status_t mgi_ch_create(mgi_context_h ctx, const mgi_ch_params_t *params,
                           mgi_ch_id_t *ch_p)
{
    mgi_ch_wire_t *mine, *all;
    mgi_channel_t *ch = NULL;
    ucs_status_t status, local_status;
    uint64_t t[6];
    int agreed = 1;
    mgi_ep_t *ep;
    unsigned i;
    int r, k;

    t[0] = mgi_time_ns();
    mine = calloc(1, sizeof(*mine));
    all  = calloc(ctx->size, sizeof(*all));
    if ((mine == NULL) || (all == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto out_free;
    }

    /* the GIG plan, at the first create (collective as the create) */
    if ((ctx->route == NULL) && (mgi_route_init(ctx) != UCS_OK)) {
        status = UCS_ERR_IO_ERROR;
        goto out_free;
    }
    /* the rings of deleted channels, for this one to reuse; a failure is
     * this rank's answer to the collective, as any other */
    local_status = mgi_ch_reap(ctx, 1);
    t[1] = mgi_time_ns();
    pthread_mutex_lock(&ctx->lock);
    k = mgi_ch_free_ids(ctx, mine->free_ids);
    mine->ch_id = (k >= 0) ? mgi_ch_id_at(ctx, k) : ctx->next_ch;
    if ((local_status == UCS_OK) && (k < 0)) {
        local_status = mgi_ch_out_of_ids(ctx, "here");
    } else if (local_status == UCS_OK) {
        local_status = mgi_ch_alloc(ctx, params, mine->ch_id, &ch);
    }
    if (local_status == UCS_OK) {
        ch->id    = mine->ch_id;
        mine->sig = mgi_ch_signature(ctx, ch);
        /* publish before the allgather: peers may send as soon as it ends */
        __atomic_store_n(&ctx->chs[ch->id], ch, __ATOMIC_RELEASE);
    }
    for (i = 0; i < ctx->neps; ++i) {
        mgi_ep_t *ep = ctx->eps[i];
        if (ep == NULL) {
            continue;
        }
        mine->eps[mine->nep].id       = ep->id;
        mine->eps[mine->nep].rkey_len = ep->rkey_len;
        mine->eps[mine->nep].rbase    = (uintptr_t)ep->recv_mem;
        mine->eps[mine->nep].blocks   = ep->nblocks;
        mine->eps[mine->nep].vertex   = mgi_route_ep_vertex(ctx, ep);
        mine->eps[mine->nep].flags    =
                mgi_ep_is_gpu(ep) ? MGI_WIRE_EP_GPU : 0;
        memcpy(mine->eps[mine->nep].rkey, ep->rkey_buf, ep->rkey_len);
        mine->eps[mine->nep].nic = ep->nic;
        if (ep->rail != NULL) {
            mine->eps[mine->nep].rail_rkey_len = ep->rail_rkey_len;
            memcpy(mine->eps[mine->nep].rail_rkey, ep->rail_rkey_buf,
                   ep->rail_rkey_len);
        }
        if (ep->lane_ctl != NULL) {
            mine->eps[mine->nep].ctl_rkey_len = ep->ctl_rkey_len;
            mine->eps[mine->nep].ctl_rbase    = (uintptr_t)ep->lane_ctl;
            memcpy(mine->eps[mine->nep].ctl_rkey, ep->ctl_rkey_buf,
                   ep->ctl_rkey_len);
            memcpy(mine->eps[mine->nep].ctl_shm, ep->ctl_shm,
                   sizeof(ep->ctl_shm));
        }
        ++mine->nep;
    }
    mine->status = local_status;
    mine->nrails = __atomic_load_n(&ctx->nrails, __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&ctx->lock);

    t[2]   = mgi_time_ns();
    status = mgi_bootstrap_allgather(&ctx->bs, mine, all, sizeof(*mine));
    t[3]   = mgi_time_ns();
    if (status != UCS_OK) {
        goto err_unpublish;
    }
    for (r = 0; r < ctx->size; ++r) {
        if (all[r].status != UCS_OK) {
            ucs_error("mgi context %p: channel %u: rank %d failed to create "
                      "it (%s)", ctx, mine->ch_id, r,
                      ucs_status_string((ucs_status_t)all[r].status));
            status = (ucs_status_t)all[r].status;
            goto err_unpublish;
        }
        if (all[r].sig != mine->sig) {
            ucs_error("mgi context %p: channel %u: rank %d created a channel "
                      "with other arguments; every rank must call "
                      "mgi_ch_create with the same arguments in the same "
                      "order", ctx, mine->ch_id, r);
            status = UCS_ERR_INVALID_PARAM;
            goto err_unpublish;
        }
        agreed &= (all[r].ch_id == mine->ch_id);
    }
    if (!agreed) {
        status = mgi_ch_agree_id(ctx, ch, all);
        if (status != UCS_OK) {
            goto err_unpublish;
        }
    }
    /* rails' addresses not known yet (collective: all saw the counts) */
    status = mgi_ch_learn_rails(ctx, all, mine->nrails);
    if (status != UCS_OK) {
        goto err_unpublish;
    }

    pthread_mutex_lock(&ctx->lock);
    status = mgi_ch_learn_peers(ctx, all);
    if (status == UCS_OK) {
        status = mgi_ch_make_routes(ctx, ch, all);
    }
    if (status == UCS_OK) {
        __atomic_store_n(&ch->routes_ready, 1, __ATOMIC_RELEASE);
    }
    for (i = 0; (status == UCS_OK) && ((ep = mgi_ch_gpu_ep(ch, &i)) != NULL);) {
        status = mgi_gpu_ch_routes(ep, ch);
    }
    pthread_mutex_unlock(&ctx->lock);
    t[4] = mgi_time_ns();
    /* collective when the channel takes direct rings: whatever status */
    status = mgi_ch_direct(ctx, ch, params, all, status);
    if (status == UCS_OK) {
        pthread_mutex_lock(&ctx->lock);
        mgi_ch_hold_eps(ch, 1);
        ctx->next_ch = (ch->id + 1) % ctx->params.max_channels;
        pthread_mutex_unlock(&ctx->lock);
    }
    if (status != UCS_OK) {
        goto err_unpublish;
    }

    t[5] = mgi_time_ns();
    ucs_info("mgi channel %u: %u source(s), %u destination(s), %s%s; created "
             "in %.3f ms (deleted channels freed %.3f, set-up %.3f, "
             "allgather %.3f, routes %.3f, direct rings %.3f)", ch->id,
             ch->nsrc, ch->ndst, ch->tuple_size ? "schema" : "schemaless",
             (ch->part_key >= 0) ? " + partition key" : "",
             (t[5] - t[0]) / 1e6, (t[1] - t[0]) / 1e6, (t[2] - t[1]) / 1e6,
             (t[3] - t[2]) / 1e6, (t[4] - t[3]) / 1e6, (t[5] - t[4]) / 1e6);
    *ch_p = ch->id;
    free(all);
    free(mine);
    return UCS_OK;

err_unpublish:
    if (ch != NULL) {
        __atomic_store_n(&ctx->chs[ch->id], NULL, __ATOMIC_RELEASE);
        if (status == UCS_OK) {
            status = local_status;
        }
        /* other ranks failed: no peer has data for it, free it now */
        usleep(1000);
        mgi_channel_free(ch);
    } else if (local_status != UCS_OK) {
        status = local_status;
    }
out_free:
    free(all);
    free(mine);
    return status;
}

/**
 * MGI channels: CreateCh / DeleteCh and the host data calls (Send, Flush,
 * Recv) of CPU endpoints, with the paper's semantics (§3.1).
 */
#include "mgi_int.h"
#include "mgi_policy.h"

#include <ucs/sys/math.h>

#include <fcntl.h>
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
    uint32_t         reserved;
    uint64_t         free_ids[MGI_CH_ID_WINDOW / 64]; /* bit k: next_ch + k */
    mgi_ch_wire_ep_t eps[MGI_MAX_LOCAL_EPS];
} mgi_ch_wire_t;

enum {
    MGI_SRC_OPEN        = 0,
    MGI_SRC_EOF_PENDING = 1,  /* EOF not yet in the stage ring */
    MGI_SRC_FLUSHING    = 2,  /* EOF in, waiting for delivery */
    MGI_SRC_FLUSHED     = 3
};

/* Local GPU endpoint number i of the channel (sources and destinations,
 * each once), or NULL past the end. */
static mgi_ep_t *mgi_ch_gpu_ep(const mgi_channel_t *ch, unsigned *i)
{
    mgi_ep_t *ep;
    unsigned j;

    for (; *i < ch->nsrc + ch->ndst; ++*i) {
        ep = (*i < ch->nsrc) ? ch->lsrc[*i].ep : ch->ldst[*i - ch->nsrc].ep;
        if ((ep == NULL) || !mgi_ep_is_gpu(ep)) {
            continue;
        }
        for (j = 0; j < ch->nsrc; ++j) {      /* a source first seen here? */
            if ((j < *i) && (ch->lsrc[j].ep == ep)) {
                break;
            }
        }
        if ((j < ch->nsrc) && (j < *i)) {
            continue;
        }
        ++*i;
        return ep;
    }
    return NULL;
}

void mgi_channel_free(mgi_channel_t *ch)
{
    unsigned i;
    mgi_ep_t *ep;


    if ((ch->lsrc != NULL) && (ch->ldst != NULL)) {
        for (i = 0; (ep = mgi_ch_gpu_ep(ch, &i)) != NULL;) {
            if (ch->gpu[ep->index] != NULL) {
                mgi_gpu_ch_remove(ep, ch);
            }
        }
    }

    if (ch->ldst != NULL) {
        for (i = 0; i < ch->ndst; ++i) {
            if (ch->ldst[i].ep != NULL) {
                pthread_mutex_destroy(&ch->ldst[i].recv_lock);
                if (ch->ldst[i].final != NULL) {
                    mgi_ep_ring_free(ch->ldst[i].ep, ch->ldst[i].final);
                }
            }
        }
    }
    mgi_route_ch_fini(ch);
    free(ch->ldst);
    free(ch->lsrc);
    free(ch->dst);
    free(ch);
}

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
    unsigned i;

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
        status = mgi_gpu_ch_add(ep, ch);
        if (status != UCS_OK) {
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
 * sources' and, where the plan makes it a relay, those of the tuples it
 * forwards (under ctx->lock). */
static ucs_status_t mgi_ch_rings(mgi_context_t *ctx, mgi_channel_t *ch)
{
    ucs_status_t status = UCS_OK;
    mgi_route_t *route;
    mgi_ep_id_t hop;
    mgi_ep_t *ep;
    unsigned i, j;

    for (i = 0; (status == UCS_OK) && (i < ctx->neps); ++i) {
        ep = ctx->eps[i];
        if ((ep == NULL) || ((mgi_ch_src_index(ch, ep->id) < 0) &&
                             (ch->relay_expect[i] == 0))) {
            continue;
        }
        for (j = 0; (status == UCS_OK) && (j < ch->ndst); ++j) {
            hop = mgi_route_next_hop(ctx, ch, ep->id, ch->dst[j]);
            if (hop == ep->id) {
                continue; /* loopback: the sorter writes the receive ring */
            }
            if (!ctx->peer_eps[hop].valid) {
                ucs_error("mgi channel %u: next hop %u of %u -> %u has no "
                          "receive ring", ch->id, hop, ep->id, ch->dst[j]);
                return UCS_ERR_UNREACHABLE;
            }
            status = mgi_ep_route_get(ep, hop, &route);
        }
    }
    return status;
}

/* The channel's next hops and sort rings (mgi_route.c), from each
 * endpoint's vertex in the allgather */
static ucs_status_t mgi_ch_make_routes(mgi_context_t *ctx, mgi_channel_t *ch,
                                       const mgi_ch_wire_t *all)
{
    int32_t *hvert = malloc(MGI_MAX_EPS * sizeof(*hvert));
    uint8_t *gpu   = calloc(MGI_MAX_EPS, 1);
    ucs_status_t status = UCS_ERR_NO_MEMORY;
    const mgi_ch_wire_ep_t *w;
    unsigned i;
    int r;

    if ((hvert != NULL) && (gpu != NULL)) {
        memset(hvert, 0xff, MGI_MAX_EPS * sizeof(*hvert));
        for (r = 0; r < ctx->size; ++r) {
            for (i = 0, w = all[r].eps; i < all[r].nep; ++i, ++w) {
                hvert[w->id] = w->vertex;
                gpu[w->id]   = !!(w->flags & MGI_WIRE_EP_GPU);
            }
        }
        status = mgi_route_ch_plan(ctx, ch, hvert, gpu);
    }
    free(hvert);
    free(gpu);
    return (status == UCS_OK) ? mgi_ch_rings(ctx, ch) : status;
}

/* Count the channel's local endpoints as used (delta 1, at its create)
 * or not (-1, when it is freed). Under ctx->lock. */
static void mgi_ch_hold_eps(mgi_channel_t *ch, int delta)
{
    unsigned i;

    for (i = 0; i < ch->nsrc; ++i) {
        if (ch->lsrc[i].ep != NULL) {
            ch->lsrc[i].ep->refcount += delta;
        }
    }
    for (i = 0; i < ch->ndst; ++i) {
        if (ch->ldst[i].ep != NULL) {
            ch->ldst[i].ep->refcount += delta;
        }
    }
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

/* Where an endpoint's sorter is, to tell later whether it went past
 * what left its tables before: a host sorter's epoch, a GPU sorter's
 * latest quiesce request (mgi_gpu_ch_unpublish made one). */
static uint32_t mgi_ch_sorter_mark(mgi_ep_t *ep)
{
    return mgi_ep_is_gpu(ep) ? mgi_gpu_quiesce_mark(ep) :
           __atomic_load_n(&ep->sorter_epoch, __ATOMIC_ACQUIRE);
}

static int mgi_ch_sorter_past(mgi_ep_t *ep, uint32_t mark)
{
    return mgi_ep_is_gpu(ep) ? mgi_gpu_quiesced(ep, mark) :
           (__atomic_load_n(&ep->sorter_epoch, __ATOMIC_ACQUIRE) - mark >=
            MGI_SORTER_QUIESCE_EPOCHS);
}

/* The local endpoint whose sorter has not gone through full rounds since
 * the deleted channel ch left its tables, or -1: ch is no sorter's. */
static int mgi_ch_busy_ep(mgi_context_t *ctx, const mgi_channel_t *ch)
{
    unsigned i;

    for (i = 0; i < ch->dead_neps; ++i) {
        if ((ctx->eps[i] != NULL) &&
            !mgi_ch_sorter_past(ctx->eps[i], ch->dead_mark[i])) {
            return (int)i;
        }
    }
    return -1;
}

/* Free the deleted channels that no sorter reads any more (their
 * endpoints' references go with them); wait: until none is left, bounded
 * by MGI_TIMEOUT_MS. A channel whose sorter never moved on stays (leaked
 * rather than freed in use). */
ucs_status_t mgi_ch_reap(mgi_context_t *ctx, int wait)
{
    const uint64_t deadline = mgi_time_ns() +
                              (uint64_t)ctx->params.timeout_ms * 1000000ull;
    mgi_channel_t **pp, *ch, *done;
    int busy, k;

    for (;;) {
        done = NULL;
        busy = -1;
        pthread_mutex_lock(&ctx->lock);
        for (pp = &ctx->dead; (ch = *pp) != NULL;) {
            k = mgi_ch_busy_ep(ctx, ch);
            if (k >= 0) {
                busy = k;
                pp   = &ch->dead_next;
                continue;
            }
            *pp           = ch->dead_next;
            ch->dead_next = done;
            done          = ch;
            mgi_ch_hold_eps(ch, -1);
        }
        pthread_mutex_unlock(&ctx->lock);
        while ((ch = done) != NULL) {
            done = ch->dead_next;
            ucs_debug("mgi channel %u: freed", ch->id);
            mgi_channel_free(ch);
        }
        if (!wait || (busy < 0)) {
            return UCS_OK;
        }
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi context %p: a deleted channel is still in the "
                      "tables of endpoint %u's sorter, which did not finish "
                      "a round within %u ms (MGI_TIMEOUT_MS): is a kernel "
                      "of the application keeping the sorter's blocks off "
                      "the GPU? The channel stays allocated", ctx,
                      ctx->eps[busy]->id, ctx->params.timeout_ms);
            return UCS_ERR_TIMED_OUT;
        }
        usleep(10);
    }
}

uint32_t mgi_context_device_error(mgi_context_h ctx, char *why, size_t len)
{
    const volatile uint32_t *w = ctx->fail_word;
    uint32_t code, at, block;

    code = (w != NULL) ? w[1] : MGI_DEV_ERR_NONE;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    at    = (w != NULL) ? w[2] : 0;
    block = (w != NULL) ? w[3] : 0;
    if ((why != NULL) && (len > 0)) {
        if (code == MGI_DEV_ERR_NONE) {
            snprintf(why, len, "%s", mgi_dev_err_string(code));
        } else {
            snprintf(why, len, "channel %u, GPU endpoint %u, block %u: %s",
                     at >> 16, at & 0xffffu, block, mgi_dev_err_string(code));
        }
    }
    return code;
}

ucs_status_t mgi_ch_delete(mgi_context_h ctx, mgi_ch_id_t id)
{
    char why[320];
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    ucs_status_t status;
    uint64_t t[4];
    mgi_ep_t *ep;
    unsigned i;

    t[0] = mgi_time_ns();
    if (ch == NULL) {
        ucs_error("mgi context %p: delete of unknown channel %u", ctx, id);
        return UCS_ERR_NO_ELEM;
    }
    for (i = 0; (ep = mgi_ch_gpu_ep(ch, &i)) != NULL;) {
        status = mgi_gpu_ch_check_done(ep, ch);
        if (status != UCS_OK) {
            if (mgi_context_device_error(ctx, why, sizeof(why)) !=
                MGI_DEV_ERR_NONE) {
                ucs_error("mgi channel %u: a device call gave up first: %s",
                          id, why);
            }
            return status;
        }
    }
    for (i = 0; i < ch->nsrc; ++i) {
        if ((ch->lsrc[i].ep != NULL) && !mgi_ep_is_gpu(ch->lsrc[i].ep) &&
            (__atomic_load_n(&ch->lsrc[i].flushed, __ATOMIC_ACQUIRE) !=
             MGI_SRC_FLUSHED)) {
            ucs_error("mgi channel %u: busy, source endpoint %u has not "
                      "flushed", id, ch->src[i]);
            return UCS_ERR_BUSY;
        }
    }
    for (i = 0; i < ch->ndst; ++i) {
        mgi_ch_dst_t *d = &ch->ldst[i];
        if ((d->ep == NULL) || mgi_ep_is_gpu(d->ep)) {
            continue;
        }
        if ((__atomic_load_n(&d->eof_sources, __ATOMIC_ACQUIRE) < ch->nsrc) ||
            (mgi_ring_count(d->final) != 0)) {
            ucs_error("mgi channel %u: busy, destination endpoint %u has not "
                      "received everything (%u of %u sources at EOF, %u "
                      "segments unread)", id, ch->dst[i], d->eof_sources,
                      ch->nsrc, mgi_ring_count(d->final));
            return UCS_ERR_BUSY;
        }
    }

    status = mgi_route_ch_busy(ctx, ch);
    if (status != UCS_OK) {
        return status;
    }

    t[1] = mgi_time_ns();
    __atomic_store_n(&ctx->chs[id], NULL, __ATOMIC_RELEASE);
    for (i = 0; (ep = mgi_ch_gpu_ep(ch, &i)) != NULL;) {
        mgi_gpu_ch_unpublish(ep, ch); /* and asks it to quiesce */
    }
    t[2] = mgi_time_ns();
    /* freed once every local sorter went through full rounds since
     * (mgi_ch_reap, from the next create or an endpoint's delete): a
     * sorter round may still hold it, and waiting here cost every
     * delete ~0.7 ms of a GPU sorter's rounds */
    pthread_mutex_lock(&ctx->lock);
    ch->dead_neps = ctx->neps;
    for (i = 0; i < ch->dead_neps; ++i) {
        if (ctx->eps[i] != NULL) {
            ch->dead_mark[i] = mgi_ch_sorter_mark(ctx->eps[i]);
        }
    }
    ch->dead_next = ctx->dead;
    ctx->dead     = ch;
    pthread_mutex_unlock(&ctx->lock);
    status = mgi_ch_reap(ctx, 0);
    t[3]   = mgi_time_ns();
    ucs_info("mgi channel %u: deleted in %.3f ms (checks %.3f, taken from "
             "the sorters %.3f, channels deleted before freed %.3f)", id,
             (t[3] - t[0]) / 1e6, (t[1] - t[0]) / 1e6, (t[2] - t[1]) / 1e6,
             (t[3] - t[2]) / 1e6);
    return status;
}

ucs_status_t mgi_ch_query(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t dst,
                          mgi_ch_attr_t *attr)
{
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    mgi_ch_dst_t *d;
    unsigned i;
    int di;

    if (ch == NULL) {
        ucs_error("mgi context %p: query of unknown channel %u", ctx, id);
        return UCS_ERR_NO_ELEM;
    }
    di = mgi_ch_dst_index(ch, dst);
    if ((di < 0) || (ch->ldst[di].ep == NULL)) {
        ucs_error("mgi channel %u: endpoint %u is not a local destination",
                  id, dst);
        return UCS_ERR_INVALID_PARAM;
    }
    d = &ch->ldst[di];
    memset(attr, 0, sizeof(*attr));
    if (mgi_ep_is_gpu(d->ep)) {
        attr->tuple_size = ch->tuple_size;
        attr->nsrc       = ch->nsrc;
        /* the other counters live on the GPU */
        return mgi_gpu_ch_landed(d->ep, ch, &attr->land_tuples);
    }
    attr->tuple_size = ch->tuple_size;
    attr->nsrc       = ch->nsrc;
    pthread_mutex_lock(&d->recv_lock);
    attr->recv_tuples = d->recv_tuples;
    attr->recv_bytes  = d->recv_bytes;
    attr->relayed_tuples = __atomic_load_n(&ch->relayed[d->ep->index],
                                           __ATOMIC_RELAXED);
    attr->relayed_eofs   = __atomic_load_n(&ch->relay_eofs[d->ep->index],
                                           __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&d->recv_lock);
    for (i = 0; i < ch->nsrc; ++i) {
        attr->eof_count[i] = __atomic_load_n(&d->eof_count[i],
                                             __ATOMIC_ACQUIRE);
    }
    return UCS_OK;
}

/* ------------------------------------------------------------ data calls */

static mgi_channel_t *mgi_ch_get_src(mgi_context_t *ctx, mgi_ch_id_t id,
                                     mgi_ep_id_t src, const char *what,
                                     mgi_ch_src_t **s_p)
{
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    int si;

    if (ch == NULL) {
        ucs_error("mgi %s: unknown channel %u", what, id);
        return NULL;
    }
    si = mgi_ch_src_index(ch, src);
    if ((si < 0) || (ch->lsrc[si].ep == NULL) ||
        mgi_ep_is_gpu(ch->lsrc[si].ep)) {
        ucs_error("mgi channel %u: %s from endpoint %u, not a local CPU "
                  "source of the channel (GPU endpoints: mgi_device.cuh)", id,
                  what, src);
        return NULL;
    }
    *s_p = &ch->lsrc[si];
    return ch;
}

static inline uint64_t mgi_load_key(const char *p, size_t size)
{
    uint8_t v8;
    uint16_t v16;
    uint32_t v32;
    uint64_t v64;

    switch (size) {
    case 1: memcpy(&v8, p, 1);  return v8;
    case 2: memcpy(&v16, p, 2); return v16;
    case 4: memcpy(&v32, p, 4); return v32;
    default: memcpy(&v64, p, 8); return v64;
    }
}

/* Destination groups of a batched send: every destination of a channel of
 * up to MGI_SEND_GROUPS - 1 and the broadcast; larger channels send a
 * message per tuple. */
#define MGI_SEND_GROUPS 65

/* The group of the tuple at p: its destination's index in ch->dst (an
 * explicit dst's is di, else the partition key's), or ch->ndst for a
 * broadcast (paper §3.1). */
static inline unsigned mgi_send_group(const mgi_channel_t *ch, const char *p,
                                      int dst, int di)
{
    if (dst != MGI_DST_AUTO) {
        return (unsigned)di;
    } else if (ch->part_key >= 0) {
        return (unsigned)(mgi_load_key(p + ch->key_off, ch->key_size) %
                          ch->ndst);
    }
    return ch->ndst;
}

/* The destination endpoint of a group. */
static inline mgi_ep_id_t mgi_send_group_dst(const mgi_channel_t *ch,
                                             unsigned g)
{
    return (g == ch->ndst) ? MGI_EP_ID_ALL : ch->dst[g];
}

/* mgi_send of a schema's tuples in chunks of up to msg_batch payload
 * bytes: a chunk's tuples are grouped by destination, in order within a
 * group, into one message per group, all of them in one reservation of
 * the stage ring, so a chunk is taken whole or not at all and what was
 * taken is a prefix of buf. Returns the bytes taken. */
static size_t mgi_send_batched(mgi_context_t *ctx, mgi_channel_t *ch,
                               mgi_ring_t *stage, mgi_ep_id_t src,
                               const char *buf, size_t len, int dst, int di)
{
    const size_t tuple = ch->tuple_size;
    const size_t cap   = mgi_ring_cap(stage);
    uint32_t cnt[MGI_SEND_GROUPS], at[MGI_SEND_GROUPS];
    uint8_t grp[MGI_MSG_MAX_LEN];
    size_t done = 0, n, i, max_n;
    uint32_t total, off, pos, key = MGI_SEG_MIXED, used;
    unsigned g, ngroups;
    mgi_seg_hdr_t *seg;
    mgi_msg_hdr_t *h;
    char *out;

    /* a chunk's messages fit a segment: payload + a header (and padding
     * to 8 bytes) per group */
    max_n = ucs_min(ctx->params.msg_batch,
                    cap - (size_t)(ch->ndst + 1) * 2 * MGI_MSG_ALIGN) / tuple;
    max_n = ucs_max(ucs_min(max_n, sizeof(grp)), 1);
    while (done < len) {
        n = ucs_min((len - done) / tuple, max_n);
        memset(cnt, 0, sizeof(cnt[0]) * (ch->ndst + 1));
        for (i = 0; i < n; ++i) {
            grp[i] = (uint8_t)mgi_send_group(ch, buf + done + i * tuple, dst,
                                             di);
            cnt[grp[i]]++;
        }
        total   = 0;
        ngroups = 0;
        for (g = 0; g <= ch->ndst; ++g) {
            at[g] = total;
            if (cnt[g] > 0) {
                total += mgi_msg_size(cnt[g] * tuple);
                ngroups++;
            }
        }
        if (mgi_ring_append_reserve(stage, total, &seg, &off, &pos) !=
            MGI_RING_OK) {
            break; /* the stage ring is full: the caller sends the rest */
        }
        out = mgi_seg_payload(seg) + off;
        for (g = 0; g <= ch->ndst; ++g) {
            if (cnt[g] > 0) {
                h      = (mgi_msg_hdr_t*)(out + at[g]);
                h->ch  = ch->id;
                h->dst = mgi_send_group_dst(ch, g);
                h->src = src;
                h->len = (uint16_t)(cnt[g] * tuple);
                at[g] += MGI_MSG_HDR_SIZE;
                key    = mgi_msg_key(h);
            }
        }
        for (i = 0; i < n; ++i) {
            used = at[grp[i]];
            memcpy(out + used, buf + done + i * tuple, tuple);
            at[grp[i]] = used + (uint32_t)tuple;
        }
        mgi_seg_mark(seg, (ngroups == 1) ? key : MGI_SEG_MIXED);
        mgi_ring_append_commit(stage, seg, off, total, pos);
        done += n * tuple;
    }
    return done;
}

ssize_t mgi_send(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t src,
                 const void *buf, size_t len, int dst)
{
    mgi_channel_t *ch;
    mgi_ch_src_t *s;
    mgi_msg_hdr_t hdr;
    mgi_ring_t *stage;
    size_t tuple, done;
    const char *p;
    int di;

    ch = mgi_ch_get_src(ctx, id, src, "send", &s);
    if (ch == NULL) {
        return (mgi_ch_lookup(ctx, id) == NULL) ? UCS_ERR_NO_ELEM :
               UCS_ERR_INVALID_PARAM;
    }
    if (s->flushed != MGI_SRC_OPEN) {
        ucs_error("mgi channel %u: send from endpoint %u after its flush", id,
                  src);
        return UCS_ERR_CANCELED;
    }
    if (ctx->mover_status != UCS_OK) {
        return mgi_context_failed(ctx, "send", id, src);
    }
    if (ch->tuple_size != 0) {
        tuple = ch->tuple_size;
        if ((len == 0) || (len % tuple) != 0) {
            ucs_error("mgi channel %u: send of %zu bytes from endpoint %u, "
                      "not a multiple of the %zu-byte tuple", id, len, src,
                      tuple);
            return UCS_ERR_INVALID_PARAM;
        }
    } else {
        tuple = len;
        if ((len == 0) || (len > ch->max_tuple)) {
            ucs_error("mgi channel %u: send of a %zu-byte tuple from endpoint "
                      "%u, the channel takes 1..%zu bytes", id, len, src,
                      ch->max_tuple);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    if ((dst != MGI_DST_AUTO) &&
        ((dst < 0) || (mgi_ch_dst_index(ch, (mgi_ep_id_t)dst) < 0))) {
        ucs_error("mgi channel %u: send from endpoint %u to endpoint %d, not "
                  "a destination of the channel", id, src, dst);
        return UCS_ERR_INVALID_PARAM;
    }

    /* a schema's tuples go as messages of several tuples of one
     * destination (paper §5.3): mgi_send_batched when it applies */
    stage = s->ep->stage[0];
    di    = (dst != MGI_DST_AUTO) ? mgi_ch_dst_index(ch, (mgi_ep_id_t)dst) :
                                    -1;
    if ((ch->tuple_size != 0) && (ctx->params.msg_batch >= 2 * tuple) &&
        (ch->ndst < MGI_SEND_GROUPS) &&
        (mgi_ring_cap(stage) >= (ch->ndst + 1) * 2 * MGI_MSG_ALIGN +
                                2 * tuple)) {
        return mgi_send_batched(ctx, ch, stage, src, buf, len, dst, di);
    }
    hdr.ch  = id;
    hdr.src = src;
    hdr.len = (uint16_t)tuple;
    for (done = 0, p = buf; done < len; done += tuple, p += tuple) {
        hdr.dst = mgi_send_group_dst(ch, mgi_send_group(ch, p, dst, di));
        if (mgi_ring_append(stage, &hdr, p, NULL) != MGI_RING_OK) {
            break;
        }
    }
    return done;
}

ucs_status_t mgi_flush_nb(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t src)
{
    mgi_ch_src_t *s;
    mgi_channel_t *ch;
    mgi_ring_t *stage;
    mgi_msg_hdr_t hdr;
    uint32_t payload[2];

    ch = mgi_ch_get_src(ctx, id, src, "flush", &s);
    if (ch == NULL) {
        return (mgi_ch_lookup(ctx, id) == NULL) ? UCS_ERR_NO_ELEM :
               UCS_ERR_INVALID_PARAM;
    }
    stage = s->ep->stage[0];

    switch (__atomic_load_n(&s->flushed, __ATOMIC_ACQUIRE)) {
    case MGI_SRC_OPEN:
        s->flush_seq      = __atomic_add_fetch(&stage->flush_seq, 1,
                                               __ATOMIC_ACQ_REL);
        s->flush_deadline = mgi_time_ns() +
                            (uint64_t)ctx->params.timeout_ms * 1000000ull;
        __atomic_store_n(&s->flushed, MGI_SRC_EOF_PENDING, __ATOMIC_RELEASE);
        /* fall through */
    case MGI_SRC_EOF_PENDING:
        hdr.ch     = id;
        hdr.dst    = MGI_EP_ID_ALL;
        hdr.src    = src;
        hdr.len    = MGI_MSG_LEN_EOF;
        payload[0] = s->ep->nstage;
        payload[1] = s->flush_seq;
        if (mgi_ring_append(stage, &hdr, payload, NULL) != MGI_RING_OK) {
            goto check_timeout; /* stage ring full: retry on the next call */
        }
        mgi_ring_append_close(stage); /* FULL: the EOF's segment is closed */
        __atomic_store_n(&s->flushed, MGI_SRC_FLUSHING, __ATOMIC_RELEASE);
        /* fall through */
    case MGI_SRC_FLUSHING:
        /* not flush_done >= seq: flushes of other channels through this
         * stage ring may have overtaken ours while the ring was full */
        if (__atomic_load_n(&s->delivered, __ATOMIC_ACQUIRE)) {
            __atomic_store_n(&s->flushed, MGI_SRC_FLUSHED, __ATOMIC_RELEASE);
            ucs_debug("mgi channel %u: endpoint %u flushed", id, src);
            return UCS_OK;
        }
        goto check_timeout;
    default:
        ucs_error("mgi channel %u: endpoint %u flushed twice", id, src);
        return UCS_ERR_CANCELED;
    }

check_timeout:
    if (ctx->mover_status != UCS_OK) {
        ucs_error("mgi channel %u: flush of endpoint %u cannot complete, the "
                  "mover stopped on %s", id, src,
                  ucs_status_string(ctx->mover_status));
        return ctx->mover_status;
    }
    if (mgi_time_ns() > s->flush_deadline) {
        ucs_error("mgi channel %u: flush of endpoint %u not delivered after "
                  "%u ms (stage ring %u/%u segments; is a destination not "
                  "receiving?)", id, src, ctx->params.timeout_ms,
                  mgi_ring_count(stage), stage->size);
        return UCS_ERR_TIMED_OUT;
    }
    return UCS_INPROGRESS;
}

ucs_status_t mgi_flush(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t src)
{
    unsigned idle = 0;
    ucs_status_t status;

    while ((status = mgi_flush_nb(ctx, id, src)) == UCS_INPROGRESS) {
        mgi_idle(ctx, &idle);
    }
    return status;
}

ssize_t mgi_recv(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t dst,
                 void *buf, size_t cap)
{
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    const mgi_msg_hdr_t *h;
    mgi_ch_dst_t *d;
    size_t done;
    int di, eof;

    if (ch == NULL) {
        ucs_error("mgi recv: unknown channel %u", id);
        return UCS_ERR_NO_ELEM;
    }
    di = mgi_ch_dst_index(ch, dst);
    if ((di < 0) || (ch->ldst[di].ep == NULL) ||
        mgi_ep_is_gpu(ch->ldst[di].ep)) {
        ucs_error("mgi channel %u: recv at endpoint %u, not a local CPU "
                  "destination of the channel", id, dst);
        return UCS_ERR_INVALID_PARAM;
    }
    if (cap < ((ch->tuple_size != 0) ? ch->tuple_size : 1)) {
        ucs_error("mgi channel %u: recv buffer of %zu bytes at endpoint %u is "
                  "smaller than a %zu-byte tuple", id, cap, dst,
                  ch->tuple_size);
        return UCS_ERR_INVALID_PARAM;
    }

    d = &ch->ldst[di];
    if (d->error) {
        return UCS_ERR_IO_ERROR;
    }
    pthread_mutex_lock(&d->recv_lock);
    eof  = (__atomic_load_n(&d->eof_sources, __ATOMIC_ACQUIRE) == ch->nsrc);
    done = mgi_ring_take(d->final, buf, cap, ch->tuple_size, &h);
    d->recv_tuples += (ch->tuple_size == 0) ? (done > 0) :
                      done / ch->tuple_size;
    d->recv_bytes += done;
    pthread_mutex_unlock(&d->recv_lock);

    if ((done == 0) && (h != NULL)) {
        ucs_error("mgi channel %u: recv buffer of %zu bytes at endpoint %u is "
                  "smaller than the next %u-byte tuple", id, cap, dst, h->len);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((done == 0) && eof) {
        return MGI_EOF;
    }
    if ((done == 0) && (ctx->mover_status != UCS_OK)) {
        /* what arrived was taken first; the rest never will */
        return mgi_context_failed(ctx, "recv", id, dst);
    }
    return done;
}

ucs_status_t mgi_ch_device_handle(mgi_context_h ctx, mgi_ch_id_t id,
                                  mgi_ep_id_t ep_id, mgi_dev_ch_t *h)
{
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    mgi_ep_t *ep      = mgi_ep_lookup(ctx, ep_id);

    if (ch == NULL) {
        ucs_error("mgi device handle: unknown channel %u", id);
        return UCS_ERR_NO_ELEM;
    }
    if ((ep == NULL) || !mgi_ep_is_gpu(ep) || (ch->gpu[ep->index] == NULL)) {
        ucs_error("mgi channel %u: device handle for endpoint %u, not a "
                  "local GPU endpoint of the channel", id, ep_id);
        return UCS_ERR_INVALID_PARAM;
    }
    return mgi_gpu_ch_handle(ep, ch, h);
}

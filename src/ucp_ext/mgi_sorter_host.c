/**
 * MGI sorter of a CPU endpoint: one host thread doing what the persistent
 * sorter kernel does on a GPU (paper §5.4, Fig. 9):
 *  - send side (2)(3)(8): take full segments of the stage rings, write each
 *    tuple to the sort ring of its next hop, or straight into the local
 *    receive ring (loopback lane) when the destination is this endpoint;
 *    broadcast tuples go to every destination of the channel;
 *  - receive side (5)(6): take full segments of the receive ring's lanes and
 *    distribute their tuples into the final rings of their channel;
 *  - flush: an EOF record is forwarded to every destination, the partial
 *    segments holding it are closed, and the flush completes once the
 *    mover delivered them.
 * Nothing here blocks: a full ring leaves a cursor and the thread moves on,
 * so the send and receive sides of one endpoint never wait on each other.
 * A message this endpoint relays and cannot pass on yet is parked (below)
 * rather than left in its lane.
 */
#include "mgi_int.h"

#include <stdlib.h>
#include <string.h>

#define MGI_SORTER_MAX_PENDING  16
/* Bytes of relayed messages a sorter parks at most (see
 * mgi_sorter_relay_or_park) */
#define MGI_SORTER_PARK_MAX     (64ull << 20)

/* A relayed message waiting for room in its next hop's sort ring */
typedef struct mgi_parked {
    struct mgi_parked *next;
    size_t            size;       /* header and payload */
    /* the message (mgi_msg_hdr_t, payload), 8-byte aligned */
    uint64_t          msg[];
} mgi_parked_t;

typedef struct mgi_flush_pending {
    mgi_ring_t   *stage;    /* the stage ring the EOF came from */
    mgi_ch_src_t *src;      /* the host flush waiting for it, or NULL */
    uint32_t     seq;
    unsigned     n;
    mgi_ring_t   **ring;    /* [ndst]: sort rings holding the EOF */
    uint32_t     *pos;      /* ring position of the EOF's segment */
} mgi_flush_pending_t;

typedef struct mgi_sorter {
    mgi_ep_t            *ep;
    unsigned            bcast_next;   /* next destination of a broadcast */
    unsigned            split_next;   /*   and its next hop, for an EOF */
    unsigned            relay_next;   /* next hop of a relayed EOF */
    uint32_t            npick;        /* mgi_split_pick's so far */
    /* EOF being forwarded (targets collected so far) */
    mgi_flush_pending_t cur;
    /* flushes waiting for delivery, FIFO */
    mgi_flush_pending_t pending[MGI_SORTER_MAX_PENDING];
    unsigned            npending;
    /* final rings written in this round, closed when the lanes run dry */
    mgi_ch_dst_t        **touched;
    unsigned            ntouched;
    /* sort rings that took relayed messages, closed likewise */
    mgi_ring_t          **relay_touched;
    unsigned            nrelay_touched;
    /* relayed messages parked, FIFO, and their bytes */
    mgi_parked_t        *park_head, *park_tail;
    size_t              park_bytes;
    int                 park_full_said;
    /* stats */
    uint64_t            sorted, dispatched, loopback;
    uint64_t            last_log_ns, last_sorted, last_dispatched;
} mgi_sorter_t;

static mgi_ring_t *mgi_sorter_hop_ring(mgi_ep_t *ep, mgi_ep_id_t hop)
{
    mgi_route_t *route = __atomic_load_n(&ep->routes[hop], __ATOMIC_ACQUIRE);

    return (route != NULL) ? route->ring : NULL;
}

/* The ring towards dst: the loopback lane, or the sort ring of the one
 * next hop the channel gives this endpoint (a relay's for every pair) */
static mgi_ring_t *mgi_sorter_target(mgi_sorter_t *s,
                                     const mgi_channel_t *ch, mgi_ep_id_t dst)
{
    mgi_ep_t *ep = s->ep;

    if (dst == ep->id) {
        return mgi_ep_lane(ep, ep->ctx->size);
    }
    return mgi_sorter_hop_ring(ep,
                               mgi_route_next_hop(ep->ctx, ch, ep->id, dst));
}

/* The ring that takes this endpoint's own tuple for dst, destination
 * number j (-1: not known yet): where it spreads over several next hops,
 * the sort ring of the one mgi_split_pick gives; else mgi_sorter_target's */
static mgi_ring_t *mgi_sorter_own_target(mgi_sorter_t *s,
                                         const mgi_channel_t *ch, int j,
                                         mgi_ep_id_t dst)
{
    mgi_ep_t *ep = s->ep;
    uint32_t used[MGI_ROUTE_MAX_SPLIT];
    mgi_ring_t *ring[MGI_ROUTE_MAX_SPLIT];
    const mgi_ch_split_t *sp;
    unsigned k;

    if ((dst == ep->id) || (ch->split[ep->id % MGI_MAX_LOCAL_EPS] == NULL)) {
        return mgi_sorter_target(s, ch, dst);
    }
    j = (j < 0) ? mgi_ch_dst_index(ch, dst) : j;
    if ((j < 0) || ((sp = mgi_route_split(ch, ep->id, (unsigned)j)) == NULL) ||
        (sp->n < 2)) {
        return mgi_sorter_target(s, ch, dst);
    }
    for (k = 0; k < sp->n; ++k) {
        ring[k] = mgi_sorter_hop_ring(ep, sp->hop[k]);
        if (ring[k] == NULL) {
            return NULL;
        }
        used[k] = mgi_ring_count(ring[k]);
    }
    return ring[mgi_split_pick(sp->n, used, sp->share, s->npick++)];
}

/* Forward one message; returns 0 when a target ring is full (retry). An
 * EOF goes through every next hop its destination's tuples spread over,
 * its count of records (the first word) multiplied by the walks it takes
 * there (mgi_ch_split_t::paths), as the destination counts every copy. */
static int mgi_sorter_forward(mgi_sorter_t *s, mgi_ring_t *stage,
                              mgi_channel_t *ch, mgi_msg_hdr_t *h)
{
    mgi_msg_hdr_t out = *h;
    void *payload     = (char*)h + MGI_MSG_HDR_SIZE;
    int eof           = (h->len == MGI_MSG_LEN_EOF);
    uint32_t eofp[MGI_MSG_EOF_PAYLOAD / sizeof(uint32_t)];
    const mgi_ch_split_t *sp;
    unsigned i, first, last, k, nk;
    mgi_ring_t *ring;
    uint32_t pos;

    if (eof || (h->dst == MGI_EP_ID_ALL)) {
        first = s->bcast_next;
        last  = ch->ndst;
    } else {
        first = 0;
        last  = 1;
    }

    for (i = first; i < last; ++i) {
        if (eof || (h->dst == MGI_EP_ID_ALL)) {
            out.dst = ch->dst[i];
        }
        sp = (eof && (out.dst != s->ep->id)) ?
             mgi_route_split(ch, s->ep->id, i) : NULL;
        nk = (sp != NULL) ? sp->n : 1;
        for (k = eof ? s->split_next : 0; k < nk; ++k) {
            if (sp != NULL) {
                ring = mgi_sorter_hop_ring(s->ep, sp->hop[k]);
                memcpy(eofp, payload, sizeof(eofp));
                eofp[0] *= sp->paths;
            } else {
                ring = eof ? mgi_sorter_target(s, ch, out.dst) :
                       mgi_sorter_own_target(s, ch,
                                             (h->dst == MGI_EP_ID_ALL) ?
                                             (int)i : -1, out.dst);
            }
            if (ring == NULL) {
                ucs_error("mgi ep %u: channel %u has no route to endpoint "
                          "%u; tuple dropped", s->ep->id, ch->id, out.dst);
                continue;
            }
            if (mgi_ring_append(ring, &out, (sp != NULL) ? eofp : payload,
                                &pos) != MGI_RING_OK) {
                s->bcast_next = i;
                s->split_next = k;
                return 0;
            }
            if (eof) {
                /* FULL means the segment with the EOF is closed already */
                mgi_ring_append_close(ring);
                if (out.dst != s->ep->id) {
                    s->cur.ring[s->cur.n] = ring;
                    s->cur.pos[s->cur.n]  = pos;
                    s->cur.n++;
                }
            } else if (out.dst == s->ep->id) {
                s->loopback++;
            }
        }
        s->split_next = 0;
        s->sorted++;
    }
    s->bcast_next = 0;
    if (eof) {
        mgi_flush_pending_t *p = &s->pending[s->npending++];
        mgi_ring_t **ring_tmp  = p->ring;
        uint32_t *pos_tmp      = p->pos;
        int si                 = mgi_ch_src_index(ch, h->src);

        /* swap the collected targets into the FIFO */
        p->stage   = stage;
        p->src     = ((si >= 0) && (ch->lsrc[si].ep == s->ep)) ?
                     &ch->lsrc[si] : NULL;
        p->seq     = ((uint32_t*)payload)[1];
        p->n       = s->cur.n;
        p->ring    = s->cur.ring;
        p->pos     = s->cur.pos;
        s->cur.ring = ring_tmp;
        s->cur.pos  = pos_tmp;
        s->cur.n    = 0;
    }
    return 1;
}

static int mgi_sorter_stage(mgi_sorter_t *s, mgi_ring_t *stage)
{
    uint32_t cap = mgi_ring_cap(stage);
    mgi_channel_t *ch;
    mgi_seg_hdr_t *seg;
    mgi_msg_hdr_t *h;
    uint32_t off;
    int progress = 0;

    while ((seg = mgi_ring_peek(stage, 0)) != NULL) {
        off = stage->cons_off;
        while ((h = mgi_seg_next(seg, cap, &off)) != NULL) {
            ch = mgi_ch_lookup(s->ep->ctx, h->ch);
            if (ch == NULL) {
                ucs_error("mgi ep %u: stage ring holds a tuple of unknown "
                          "channel %u; dropped", s->ep->id, h->ch);
            } else {
                if ((h->len == MGI_MSG_LEN_EOF) &&
                    (s->npending == MGI_SORTER_MAX_PENDING)) {
                    stage->cons_off = off;
                    return progress;
                }
                if (!mgi_sorter_forward(s, stage, ch, h)) {
                    stage->cons_off = off;
                    return progress;
                }
            }
            progress = 1;
            off     += mgi_msg_size(h->len);
        }
        mgi_ring_release(stage, 1);
        progress = 1;
    }
    return progress;
}

static void mgi_sorter_flush_check(mgi_sorter_t *s)
{
    mgi_flush_pending_t *p, tmp;
    unsigned i;

    while (s->npending > 0) {
        p = &s->pending[0];
        for (i = 0; i < p->n; ++i) {
            /* the mover releases a sort segment once it is delivered */
            if ((int32_t)(mgi_ld_acq32(&p->ring[i]->cons_tail) - p->pos[i])
                <= 0) {
                return;
            }
        }
        if ((int32_t)(p->seq - p->stage->flush_done) > 0) {
            mgi_st_rel32(&p->stage->flush_done, p->seq);
        }
        if (p->src != NULL) {
            __atomic_store_n(&p->src->delivered, 1, __ATOMIC_RELEASE);
        }
        tmp = *p;
        memmove(&s->pending[0], &s->pending[1],
                (s->npending - 1) * sizeof(*p));
        s->pending[--s->npending] = tmp; /* keep the arrays */
    }
}

static void mgi_sorter_touch(mgi_sorter_t *s, mgi_ch_dst_t *d)
{
    unsigned i;

    for (i = 0; i < s->ntouched; ++i) {
        if (s->touched[i] == d) {
            return;
        }
    }
    if (s->ntouched < MGI_MAX_EPS) {
        s->touched[s->ntouched++] = d;
    }
}

/* A message for another endpoint reached this one, its next hop (paper
 * Fig. 9: the relay's sorter forwards it): on to the next hop the
 * forwarding table gives here, in the order it came, or of several, the
 * one mgi_split_pick gives; an EOF through each of them (its count
 * unchanged: the source counted every walk). Returns 0 when a sort ring
 * is full (retry). */
static int mgi_sorter_relay(mgi_sorter_t *s, mgi_channel_t *ch,
                            mgi_msg_hdr_t *h)
{
    mgi_ep_t *ep = s->ep;
    const mgi_ch_split_t *sp = NULL;
    mgi_ring_t *ring         = NULL;
    unsigned i, k, nk;
    int j;

    if (!__atomic_load_n(&ch->routes_ready, __ATOMIC_ACQUIRE)) {
        return 0;   /* our create has not made its hops yet */
    }
    if ((h->len == MGI_MSG_LEN_EOF) && (h->dst != ep->id) &&
        ((j = mgi_ch_dst_index(ch, h->dst)) >= 0)) {
        sp = mgi_route_split(ch, ep->id, (unsigned)j);
    }
    nk = (sp != NULL) ? sp->n : 1;
    for (k = s->relay_next; k < nk; ++k) {
        ring = (sp != NULL) ? mgi_sorter_hop_ring(ep, sp->hop[k]) :
               (h->len == MGI_MSG_LEN_EOF) ?
               mgi_sorter_target(s, ch, h->dst) :
               mgi_sorter_own_target(s, ch, -1, h->dst);
        if ((ring == NULL) || (h->dst == ep->id)) {
            ucs_error("mgi ep %u: channel %u has no route on to endpoint %u "
                      "for a message from %u; dropped", ep->id, ch->id,
                      h->dst, h->src);
            s->relay_next = 0;
            return 1;
        }
        if (mgi_ring_append(ring, h, (char*)h + MGI_MSG_HDR_SIZE, NULL) !=
            MGI_RING_OK) {
            s->relay_next = k;
            return 0;
        }
        if (h->len == MGI_MSG_LEN_EOF) {
            mgi_ring_append_close(ring);
        }
    }
    s->relay_next = 0;
    if (h->len == MGI_MSG_LEN_EOF) {
        __atomic_add_fetch(&ch->relay_eofs[ep->index], 1, __ATOMIC_ACQ_REL);
        return 1;
    }
    __atomic_add_fetch(&ch->relayed[ep->index],
                       (ch->tuple_size > 0) ? h->len / ch->tuple_size : 1,
                       __ATOMIC_RELAXED);
    for (i = 0; i < s->nrelay_touched; ++i) {
        if (s->relay_touched[i] == ring) {
            return 1;
        }
    }
    if (s->nrelay_touched < MGI_MAX_EPS) {
        s->relay_touched[s->nrelay_touched++] = ring;
    }
    return 1;
}

/* Relay a message from a lane, or park it. A relay whose next hop's sort
 * ring is full would stop draining its lanes; where the channel's walks
 * form a cycle (relays that pass messages on to one another, as where a
 * destination's tuples spread over two next hops that also reach each
 * other) every relay on it can be waiting for the next one's lanes: a
 * deadlock. So the message is copied aside and the lane drains on. Parked
 * messages are passed on first, in the order they came, so a later one
 * never overtakes them (and the EOF after a source's tuples stays after
 * them). Returns 0 (retry, the lane waits) only once the parked bytes
 * reach MGI_SORTER_PARK_MAX, or no memory is left. */
static int mgi_sorter_relay_or_park(mgi_sorter_t *s, mgi_channel_t *ch,
                                    mgi_msg_hdr_t *h)
{
    size_t size = mgi_msg_size(h->len);
    mgi_parked_t *m;

    if ((s->park_head == NULL) && mgi_sorter_relay(s, ch, h)) {
        return 1;
    }
    /* (an EOF passed on to some of its next hops already: relay_next says
     * where it goes on, as the head of the park) */
    if (s->park_bytes + size > MGI_SORTER_PARK_MAX) {
        if (!s->park_full_said) {
            ucs_warn("mgi ep %u: %zu bytes of relayed messages wait for "
                     "their next hops; its lanes wait too", s->ep->id,
                     s->park_bytes);
            s->park_full_said = 1;
        }
        return 0;
    }
    m = malloc(sizeof(*m) + size);
    if (m == NULL) {
        return 0;
    }
    m->next = NULL;
    m->size = size;
    memcpy(m->msg, h, size);
    if (s->park_tail != NULL) {
        s->park_tail->next = m;
    } else {
        s->park_head = m;
    }
    s->park_tail   = m;
    s->park_bytes += size;
    return 1;
}

/* Pass parked messages on, oldest first, while their next hops take them */
static int mgi_sorter_unpark(mgi_sorter_t *s)
{
    mgi_context_t *ctx = s->ep->ctx;
    mgi_msg_hdr_t *h;
    mgi_channel_t *ch;
    mgi_parked_t *m;
    int progress = 0;

    while ((m = s->park_head) != NULL) {
        h  = (mgi_msg_hdr_t*)m->msg;
        ch = mgi_ch_lookup(ctx, h->ch);
        if (ch == NULL) {
            ucs_error("mgi ep %u: a relayed message of channel %u, which is "
                      "gone; dropped", s->ep->id, h->ch);
        } else if (!mgi_sorter_relay(s, ch, h)) {
            break;
        }
        s->park_head   = m->next;
        s->park_tail   = (m->next == NULL) ? NULL : s->park_tail;
        s->park_bytes -= m->size;
        free(m);
        progress = 1;
    }
    if (s->park_head == NULL) {
        s->park_full_said = 0;
    }
    return progress;
}

/* Lane control words (MGI_SORT_MIRROR=1, as a GPU endpoint's sorter
 * kernel does): RTail into the lane ring before it is read ... */
static void mgi_sorter_lane_pull(mgi_ep_t *ep, unsigned lane)
{
    mgi_ring_t *r = mgi_ep_lane(ep, lane);
    uint32_t t;

    if ((ep->lane_ctl == NULL) || (lane + 1 >= ep->nlanes)) {
        return;
    }
    t = mgi_ld_acq32(&ep->lane_ctl[lane].prod_tail);
    if (t != r->prod_tail) {
        r->prod_head = t;
        mgi_st_rel32(&r->prod_tail, t);
    }
}

/* ... and RHead out after: the producer may then reuse those slots. */
static void mgi_sorter_lane_push(mgi_ep_t *ep, unsigned lane)
{
    mgi_ring_t *r = mgi_ep_lane(ep, lane);
    uint32_t c;

    if ((ep->lane_ctl == NULL) || (lane + 1 >= ep->nlanes)) {
        return;
    }
    c = mgi_ld_acq32(&r->cons_tail);
    if (c != ep->lane_ctl[lane].cons_tail) {
        mgi_st_rel32(&ep->lane_ctl[lane].cons_tail, c);
    }
}

/* Returns 1 on progress; *dry set to 0 when the lane still has data. */
static int mgi_sorter_lane(mgi_sorter_t *s, mgi_ring_t *lane, int *dry)
{
    uint32_t cap = mgi_ring_cap(lane);
    mgi_context_t *ctx = s->ep->ctx;
    mgi_channel_t *ch;
    mgi_seg_hdr_t *seg;
    mgi_msg_hdr_t *h;
    mgi_ch_dst_t *d;
    uint32_t off, nprod;
    int progress = 0, di, si;

    while ((seg = mgi_ring_peek(lane, 0)) != NULL) {
        off = lane->cons_off;
        while ((h = mgi_seg_next(seg, cap, &off)) != NULL) {
            ch = mgi_ch_lookup(ctx, h->ch);
            di = (ch != NULL) ? mgi_ch_dst_index(ch, h->dst) : -1;
            if ((di >= 0) && (ch->ldst[di].ep != s->ep)) {
                if (!mgi_sorter_relay_or_park(s, ch, h)) {
                    lane->cons_off = off;
                    *dry           = 0;
                    return progress;
                }
                progress = 1;
                off     += mgi_msg_size(h->len);
                continue;
            }
            if (di < 0) {
                ucs_error("mgi ep %u: received a tuple of channel %u for "
                          "endpoint %u, which it does not serve; dropped",
                          s->ep->id, h->ch, h->dst);
                off += mgi_msg_size(h->len);
                continue;
            }
            d = &ch->ldst[di];
            if (h->len == MGI_MSG_LEN_EOF) {
                /* tuples before the EOF must be readable before it counts */
                mgi_ring_append_close(d->final);
                si    = mgi_ch_src_index(ch, h->src);
                nprod = *(uint32_t*)((char*)h + MGI_MSG_HDR_SIZE);
                if ((si < 0) || (d->eof_count[si] >= nprod)) {
                    ucs_error("mgi channel %u: endpoint %u got an extra EOF "
                              "from endpoint %u", ch->id, s->ep->id, h->src);
                    d->error = 1;
                } else if (__atomic_add_fetch(&d->eof_count[si], 1,
                                              __ATOMIC_ACQ_REL) == nprod) {
                    __atomic_add_fetch(&d->eof_sources, 1, __ATOMIC_ACQ_REL);
                    ucs_debug("mgi channel %u: endpoint %u has EOF from "
                              "endpoint %u", ch->id, s->ep->id, h->src);
                }
            } else {
                if (mgi_ring_append(d->final, h, (char*)h + MGI_MSG_HDR_SIZE,
                                    NULL) != MGI_RING_OK) {
                    lane->cons_off = off;
                    *dry           = 0;
                    return progress;
                }
                mgi_sorter_touch(s, d);
                d->dispatched++;
                s->dispatched++;
            }
            progress = 1;
            off     += mgi_msg_size(h->len);
        }
        mgi_ring_release(lane, 1);
        progress = 1;
    }
    return progress;
}

static void mgi_sorter_log(mgi_sorter_t *s)
{
    mgi_ep_t *ep  = s->ep;
    char usage[256];
    unsigned i, len = 0, nroutes, recv_used = 0;
    double dt;

    if (!mgi_log_due(ep->ctx, &s->last_log_ns, &dt)) {
        return;
    }
    nroutes = __atomic_load_n(&ep->nroutes, __ATOMIC_ACQUIRE);
    usage[0] = '\0';
    for (i = 0; (i < nroutes) && (len < sizeof(usage) - 32); ++i) {
        len += snprintf(usage + len, sizeof(usage) - len, " ->%u:%u/%u",
                        ep->route_list[i]->next_hop,
                        mgi_ring_count(ep->route_list[i]->ring),
                        ep->route_list[i]->ring->size);
    }
    for (i = 0; i < ep->nlanes; ++i) {
        recv_used += mgi_ring_count(mgi_ep_lane(ep, i));
    }
    ucs_info("mgi ep %u sorter: %.0f tuples/s sorted, %.0f tuples/s "
             "dispatched, %lu loopback; segments used: stage %u/%u, "
             "receive %u/%u, sort rings%s; %zu bytes relayed parked",
             ep->id, (s->sorted - s->last_sorted) / dt,
             (s->dispatched - s->last_dispatched) / dt, s->loopback,
             mgi_ring_count(ep->stage[0]), ep->stage[0]->size, recv_used,
             ep->nlanes * ep->ctx->params.recv_depth, usage, s->park_bytes);
    s->last_sorted     = s->sorted;
    s->last_dispatched = s->dispatched;
}

static void *mgi_sorter_thread(void *arg)
{
    mgi_sorter_t *s    = arg;
    mgi_ep_t *ep       = s->ep;
    mgi_context_t *ctx = ep->ctx;
    unsigned idle = 0, lane, i, nroutes;
    int progress, lane_progress, dry;

    s->last_log_ns = mgi_time_ns();
    while (!ep->stop) {
        progress = 0;
        for (i = 0; i < ep->nstage; ++i) {
            progress |= mgi_sorter_stage(s, ep->stage[i]);
        }
        /* mirror mode (MGI_SORT_MIRROR): recycle what the mover released
         * and publish full segments, as the sorter kernel does */
        nroutes = __atomic_load_n(&ep->nroutes, __ATOMIC_ACQUIRE);
        for (i = 0; i < nroutes; ++i) {
            if (ep->route_list[i]->mirror != NULL) {
                progress |= (mgi_ring_mirror_sync(ep->route_list[i]->ring,
                                                  ep->route_list[i]->mirror)
                             > 0);
            }
        }
        mgi_sorter_flush_check(s);
        dry           = 1;
        lane_progress = mgi_sorter_unpark(s);
        for (lane = 0; lane < ep->nlanes; ++lane) {
            mgi_sorter_lane_pull(ep, lane);
            lane_progress |= mgi_sorter_lane(s, mgi_ep_lane(ep, lane), &dry);
            mgi_sorter_lane_push(ep, lane);
        }
        progress |= lane_progress;
        /* make partial batches readable when the lanes ran dry, or when
         * they are stuck on a full final ring (its consumer may wait for
         * another channel's partial batch) */
        if (dry || !lane_progress) {
            for (i = 0; i < s->ntouched; ++i) {
                mgi_ring_append_close(s->touched[i]->final);
            }
            s->ntouched = 0;
            for (i = 0; i < s->nrelay_touched; ++i) {
                mgi_ring_append_close(s->relay_touched[i]);
            }
            s->nrelay_touched = 0;
        }
        __atomic_add_fetch(&ep->sorter_epoch, 1, __ATOMIC_RELEASE);
        mgi_sorter_log(s);
        if (progress) {
            idle = 0;
        } else {
            mgi_idle(ctx, &idle);
        }
    }
    return NULL;
}

static void mgi_sorter_free(mgi_sorter_t *s)
{
    mgi_parked_t *m;
    unsigned i;

    while ((m = s->park_head) != NULL) {
        s->park_head = m->next;
        free(m);
    }

    for (i = 0; i < MGI_SORTER_MAX_PENDING; ++i) {
        free(s->pending[i].ring);
        free(s->pending[i].pos);
    }
    free(s->cur.ring);
    free(s->cur.pos);
    free(s->touched);
    free(s->relay_touched);
    free(s);
}

ucs_status_t mgi_sorter_start(mgi_ep_t *ep)
{
    unsigned n = MGI_MAX_EPS, i;
    mgi_sorter_t *s;
    int ret;

    if (mgi_ep_is_gpu(ep)) {
        return mgi_gpu_sorter_start(ep);
    }

    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    s->ep       = ep;
    s->touched  = calloc(n, sizeof(*s->touched));
    s->relay_touched = calloc(n, sizeof(*s->relay_touched));
    s->cur.ring = calloc(n, sizeof(*s->cur.ring));
    s->cur.pos  = calloc(n, sizeof(*s->cur.pos));
    if ((s->touched == NULL) || (s->relay_touched == NULL) ||
        (s->cur.ring == NULL) ||
        (s->cur.pos == NULL)) {
        goto err_free;
    }
    for (i = 0; i < MGI_SORTER_MAX_PENDING; ++i) {
        s->pending[i].ring = calloc(n, sizeof(*s->pending[i].ring));
        s->pending[i].pos  = calloc(n, sizeof(*s->pending[i].pos));
        if ((s->pending[i].ring == NULL) || (s->pending[i].pos == NULL)) {
            goto err_free;
        }
    }

    ep->stop         = 0;
    ep->sorter_state = s;
    ret = pthread_create(&ep->sorter, NULL, mgi_sorter_thread, s);
    if (ret != 0) {
        ucs_error("mgi ep %u: cannot start the sorter thread: %s", ep->id,
                  strerror(ret));
        ep->sorter_state = NULL;
        mgi_sorter_free(s);
        return UCS_ERR_NO_RESOURCE;
    }
    ep->sorter_running = 1;
    return UCS_OK;

err_free:
    mgi_sorter_free(s);
    return UCS_ERR_NO_MEMORY;
}

void mgi_sorter_stop(mgi_ep_t *ep)
{
    if (mgi_ep_is_gpu(ep)) {
        mgi_gpu_sorter_stop(ep);
        return;
    }
    if (!ep->sorter_running) {
        return;
    }
    ep->stop = 1;
    pthread_join(ep->sorter, NULL);
    ep->sorter_running = 0;
    mgi_sorter_free(ep->sorter_state);
    ep->sorter_state = NULL;
}

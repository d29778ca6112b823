/**
 * MGI sorter of a GPU endpoint, device side: EOF records, forwarded on
 * the send side and counted on the receive side, and the final rings
 * closed as the lanes run dry.
 *
 * A part of mgi_sorter_dev.h, which includes its parts in order (each
 * uses those before it).
 */
#ifndef MGI_SORTER_DEV_EOF_H_
#define MGI_SORTER_DEV_EOF_H_

#ifndef MGI_SORTER_DEV_H_
#  error "a part of the sorter's device code: include mgi_sorter_dev.h"
#endif

MGI_SDEV void mgi_gpu_recv_eof(const mgi_gpu_dep_t *d,
                               const mgi_msg_hdr_t *h);

/* Thread 0: room for an EOF record in `ring`, with MGI_EOF_ALONE in a
 * segment of its own (MGI_SEG_EOFS: the tuples before it keep their
 * segment whole, and the next hop counts it without a walk). Returns 0
 * when there is none (try again). */
MGI_SDEV_INLINE int mgi_gpu_eof_reserve(const mgi_gpu_dep_t *d,
                                        mgi_ring_t *ring, mgi_seg_hdr_t **seg,
                                        uint32_t *off, uint32_t *pos)
{
    return (!d->eof_alone ||
            (mgi_ring_append_close(ring) == MGI_RING_OK)) &&
           (mgi_ring_append_reserve(ring, mgi_msg_size(MGI_MSG_LEN_EOF), seg,
                                    off, pos) == MGI_RING_OK);
}

/* Thread 0: the EOF record `h`, for `dst`, into the room that
 * mgi_gpu_eof_reserve found, committed, and its segment closed; its count
 * of records (the first word) times mult, where it is one of the copies
 * that go through each next hop a source spreads over */
MGI_SDEV_INLINE void mgi_gpu_eof_commit(const mgi_gpu_dep_t *d,
                                        mgi_ring_t *ring, mgi_seg_hdr_t *seg,
                                        uint32_t off, uint32_t pos,
                                        const mgi_msg_hdr_t *h, uint16_t dst,
                                        uint32_t mult)
{
    const uint32_t sz = mgi_msg_size(MGI_MSG_LEN_EOF);
    char *m           = mgi_seg_payload(seg) + off;

    mgi_ring_mark(ring, seg, d->eof_alone ? MGI_SEG_EOF_KEY : MGI_SEG_MIXED);
    memcpy(m, h, sz);
    ((mgi_msg_hdr_t*)m)->dst = dst;
    *(uint32_t*)(m + MGI_MSG_HDR_SIZE) *= mult;
    MGI_FENCE();
    mgi_ring_append_commit(ring, seg, off, sz, pos);
    /* FULL: the segment with the EOF is closed already */
    mgi_ring_append_close(ring);
}

/* Thread 0, send side: forward the EOF at `h` to every destination,
 * through each next hop its tuples spread over (mgi_gpu_nsplit), each copy
 * counting for as many records as the walks it takes there
 * (mgi_gpu_dch_t::eof_paths, mgi_gpu_eof_commit). With
 * MGI_LOOP_DIRECT, one for this endpoint whose stage ring has nothing left
 * in the loopback lane (mgi_gpu_lane_passed) is counted here at once, as
 * the lane's owner would count it: no lane segment, no walk, no wait for
 * the lane's whole moves in flight before it. Returns 0 when a target had
 * no room (try again), 2 when it counted the EOF for this endpoint, else
 * 1. */
MGI_SDEV int mgi_gpu_send_eof(const mgi_gpu_dep_t *d,
                                       mgi_gpu_block_t *b, mgi_ring_t *stage,
                                       const mgi_msg_hdr_t *h)
{
    const uint32_t sz = mgi_msg_size(MGI_MSG_LEN_EOF);
    mgi_gpu_dch_t *ch = mgi_gpu_ch(d, h->ch);
    mgi_ring_t *const lane = mgi_gpu_loopback(d);
    mgi_ring_t *ring[MGI_GPU_MAX_TARGETS];
    mgi_seg_hdr_t *seg[MGI_GPU_MAX_TARGETS];
    uint32_t off[MGI_GPU_MAX_TARGETS], pos[MGI_GPU_MAX_TARGETS];
    uint8_t tk[MGI_GPU_MAX_TARGETS];
    uint32_t mult[MGI_GPU_MAX_TARGETS];
    mgi_gpu_pending_t *pd;
    uint32_t k, i, ns, n = 0;
    int16_t slot;
    int direct = 0; /* 1: the lane's EOF is counted here */

    if (ch == NULL) {
        mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
        return 1;
    }
    if (b->count == MGI_GPU_MAX_PENDING) {
        return 0;
    }
    for (k = 0; k < ch->ndst; ++k) {
        ns = (ch->dst[k] == d->id) ? 1 : mgi_gpu_nsplit(ch, (int)k);
        for (i = 0; i < ns; ++i, ++n) {
            slot = (ch->dst[k] == d->id) ? (int16_t)MGI_GPU_SLOT_LOOPBACK :
                   mgi_gpu_hop_at(ch, (int)k, i, ns);
            if (n == MGI_GPU_MAX_TARGETS) {
                goto undo;  /* more than a pass's targets */
            }
            ring[n] = mgi_gpu_send_ring(d, ch->dst[k], slot);
            if (ring[n] == NULL) {
                goto undo;  /* no route */
            }
            tk[n]   = (uint8_t)k;
            mult[n] = (ch->dst[k] == d->id) ? 0 :
                      mgi_vld(&ch->eof_paths[k]);
            mult[n] = (mult[n] > 1) ? mult[n] : 1;
            if ((ring[n] == lane) && d->loop_direct && !direct &&
                mgi_gpu_lane_passed(d, stage)) {
                direct = 1;
                seg[n] = NULL;  /* nothing reserved */
                continue;
            }
            if (!mgi_gpu_eof_reserve(d, ring[n], &seg[n], &off[n],
                                     &pos[n])) {
                seg[n] = NULL;
                goto undo;
            }
        }
    }
    pd        = &b->pending[(b->head + b->count) % MGI_GPU_MAX_PENDING];
    pd->stage = stage;
    pd->seq   = ((const uint32_t*)((const char*)h + MGI_MSG_HDR_SIZE))[1];
    pd->n     = 0;
    for (i = 0; i < n; ++i) {
        if (seg[i] == NULL) {
            /* the receive side reads neither dst nor anything the lane
             * would add: the record as it is */
            mgi_gpu_recv_eof(d, h);
            continue;
        }
        mgi_gpu_eof_commit(d, ring[i], seg[i], off[i], pos[i], h,
                           ch->dst[tk[i]], mult[i]);
        mgi_gpu_lane_dep(d, stage, ring[i], pos[i]);
        if (ch->dst[tk[i]] != d->id) {
            pd->ring[pd->n] = ring[i];
            pd->pos[pd->n]  = pos[i];
            pd->n++;
        }
    }
    b->count++;
    return 1 + direct;

undo:
    /* the reservations before the one that failed go back */
    if ((n == MGI_GPU_MAX_TARGETS) || (ring[n] == NULL)) {
        mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
    }
    while (n-- > 0) {
        if (seg[n] != NULL) {
            mgi_ring_append_cancel(ring[n], seg[n], off[n], sz, pos[n]);
        }
    }
    return 0;
}

/* Thread 0, receive side, a relay: an EOF record for another endpoint on
 * to its next hop, or through each of several it spreads over (its count
 * unchanged: the source counted every walk), in a segment of its own
 * where the send side puts EOFs so; counted once. Returns 0 when a ring
 * had no room (try again: what it reserved is given back). */
MGI_SDEV int mgi_gpu_relay_eof(const mgi_gpu_dep_t *d, const mgi_msg_hdr_t *h)
{
    const uint32_t sz = mgi_msg_size(MGI_MSG_LEN_EOF);
    mgi_gpu_dch_t *ch = mgi_gpu_ch(d, h->ch);
    const int k       = mgi_gpu_dst_k(ch, h->dst);
    mgi_ring_t *ring[MGI_ROUTE_MAX_SPLIT];
    mgi_seg_hdr_t *seg[MGI_ROUTE_MAX_SPLIT];
    uint32_t off[MGI_ROUTE_MAX_SPLIT], pos[MGI_ROUTE_MAX_SPLIT];
    uint32_t i, j, n;

    if ((k < 0) || (h->dst == d->id)) {
        mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
        return 1;   /* none of the channel's, or no route */
    }
    if (mgi_vld(&ch->hop[k]) == MGI_GPU_SLOT_NONE) {
        return 0;   /* this relay's create has not made its hops yet */
    }
    n = mgi_gpu_nsplit(ch, k);
    for (i = 0; i < n; ++i) {
        ring[i] = mgi_gpu_send_ring(d, MGI_GPU_NO_DST,
                                    mgi_gpu_hop_at(ch, k, i, n));
        if ((ring[i] == NULL) ||
            !mgi_gpu_eof_reserve(d, ring[i], &seg[i], &off[i], &pos[i])) {
            for (j = 0; j < i; ++j) {
                mgi_ring_append_cancel(ring[j], seg[j], off[j], sz, pos[j]);
            }
            if (ring[i] == NULL) {
                mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
                return 1;
            }
            return 0;
        }
    }
    for (i = 0; i < n; ++i) {
        mgi_gpu_eof_commit(d, ring[i], seg[i], off[i], pos[i], h, h->dst, 1);
    }
    MGI_ATOMIC_ADD(&ch->relay_eofs, 1u);
    return 1;
}

/* Thread 0, receive side: account an EOF record at this destination. */
MGI_SDEV void mgi_gpu_recv_eof(const mgi_gpu_dep_t *d,
                                        const mgi_msg_hdr_t *h)
{
    mgi_gpu_dch_t *ch = mgi_gpu_ch(d, h->ch);
    uint32_t nprod, si, k;

    if ((ch == NULL) || (ch->nfinal == 0)) {
        mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
        return;
    }
    nprod = *(const uint32_t*)((const char*)h + MGI_MSG_HDR_SIZE);
    for (si = 0; (si < ch->nsrc) && (ch->src[si] != h->src); ++si) {
    }
    if ((si == ch->nsrc) || (ch->eof_count[si] >= nprod)) {
        mgi_gpu_count(&d->status->blk[MGI_BID].eof_errors);
        return;
    }
    if (MGI_ATOMIC_ADD(&ch->eof_count[si], 1u) + 1 == nprod) {
        /* the source's tuples must be readable before its EOF counts: its
         * last producer's EOF closes the final rings. Not each producer's:
         * a close reads a ring's tail, and nfinal of them per EOF of each
         * of nprod blocks held the lane's owner ~2 ms at 32 x 32 on one
         * H100 (65 us an EOF), the tuples behind them in the lane too */
        for (k = 0; k < ch->nfinal; ++k) {
            mgi_ring_append_close(ch->final[k]);
        }
        MGI_FENCE();
        for (k = 0; k < ch->nfinal; ++k) {
            MGI_ATOMIC_ADD(&ch->eof_sources[k], 1u);
        }
    }
}

/* Thread 0: final rings with partial segments, closed when lanes run dry */
MGI_SDEV void mgi_gpu_touch(mgi_gpu_pass_t *p)
{
    uint32_t t, k;

    for (t = 0; t < p->ntgt; ++t) {
        for (k = 0; k < p->ntouched; ++k) {
            if (p->touched[k] == p->tgt_ring[t]) {
                break;
            }
        }
        if (k < p->ntouched) {
            continue;
        }
        if (p->ntouched == MGI_GPU_MAX_TARGETS) {
            mgi_ring_append_close(p->tgt_ring[t]);
        } else {
            p->touched[p->ntouched++] = p->tgt_ring[t];
        }
    }
}

#endif

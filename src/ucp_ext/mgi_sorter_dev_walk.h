/**
 * MGI sorter of a GPU endpoint, device side: the pass over a segment,
 * its messages walked (by thread 0, or a run of like messages by the
 * block) and placed in their targets' rings.
 *
 * A part of mgi_sorter_dev.h, which includes its parts in order (each
 * uses those before it).
 */
#ifndef MGI_SORTER_DEV_WALK_H_
#define MGI_SORTER_DEV_WALK_H_

#ifndef MGI_SORTER_DEV_H_
#  error "a part of the sorter's device code: include mgi_sorter_dev.h"
#endif

/* Receive side: may a parallel run (mgi_gpu_walk_run) take a message
 * of the known channel ch for `dst`: one for this endpoint where the
 * channel has final rings here (self_ok), or one this relay has a hop
 * for? Not otherwise: mgi_gpu_walk drops it, or holds the lane (a relay
 * without its hops yet). */
MGI_SDEV_INLINE int mgi_gpu_recv_runs(const mgi_gpu_dep_t *d,
                                      const mgi_gpu_dch_t *ch, int self_ok,
                                      uint16_t dst)
{
    return (dst == d->id) ? self_ok : (mgi_gpu_hop_slot(ch, dst) >= 0);
}

MGI_SDEV_INLINE int mgi_gpu_self_ok(const mgi_gpu_dch_t *ch)
{
    return (ch != NULL) && (ch->self_dst != MGI_GPU_NO_DST) &&
           (ch->nfinal > 0);
}

/* Receive side, thread 0: the target of a run's messages for `dst`: a
 * final ring for this endpoint (consuming blocks take turns by run), a
 * relay's sort ring otherwise; NULL where none */
MGI_SDEV_INLINE mgi_ring_t *mgi_gpu_recv_target(const mgi_gpu_dep_t *d,
                                                mgi_gpu_dch_t *ch,
                                                uint16_t dst)
{
    if (dst != d->id) {
        return mgi_gpu_relay_target(d, ch, dst);
    }
    return mgi_gpu_self_ok(ch) ?
           ch->final[MGI_ATOMIC_ADD(&ch->rr, 1u) % ch->nfinal] : NULL;
}

/* Thread 0: walk the segment copy from p->start and place messages. */
MGI_SDEV void mgi_gpu_walk(const mgi_gpu_dep_t *d, mgi_gpu_pass_t *p,
                                    mgi_gpu_emit_t *e, const char *seg,
                                    uint32_t cap, int recv_side)
{
    uint32_t off = p->start, size, k, n, sum;
    const mgi_msg_hdr_t *h;
    mgi_gpu_dch_t *ch;
    mgi_ring_t *ring;
    uint16_t cache_id = 0xffff, ch_id = 0xffff;
    uint16_t prev_ch = MGI_MSG_CH_PAD, prev_len = MGI_MSG_LEN_EOF;
    mgi_ring_t *cache_final = NULL;
    /* the tables change only by appending: cache lookups for the walk,
     * a global load per message would cost more than the walk itself */
    uint16_t dc_dst[MGI_GPU_DST_CACHE];
    mgi_ring_t *dc_ring[MGI_GPU_DST_CACHE];
    int t;

    p->nemit      = 0;
    p->ntgt       = 0;
    p->at_end     = 0;
    p->stop_eof   = 0;
    p->relay_wait = 0;
    p->unif_words = 0;
    p->contig     = 0;
    ch          = NULL;
    for (k = 0; k < MGI_GPU_DST_CACHE; ++k) {
        dc_dst[k] = MGI_GPU_NO_DST;
    }
    for (;;) {
        if (off + MGI_MSG_HDR_SIZE > cap) {
            p->at_end = 1;
            break;
        }
        h = (const mgi_msg_hdr_t*)(seg + off);
        if (h->ch == MGI_MSG_CH_PAD) {
            off += MGI_MSG_HDR_SIZE + (uint32_t)h->len * MGI_MSG_ALIGN;
            continue;
        }
        if (h->len == MGI_MSG_LEN_EOF) {
            p->stop_eof = 1;
            break;
        }
        /* a like message after the one before: a run starts, leave it
         * to mgi_gpu_walk_run (small messages only, see there) */
        if ((h->ch == prev_ch) && (h->len == prev_len) &&
            (mgi_msg_size(h->len) <= MGI_GPU_RUN_MSG) &&
            (recv_side ?
             ((ch != NULL) &&
              mgi_gpu_recv_runs(d, ch, mgi_gpu_self_ok(ch), h->dst)) :
             (h->dst != MGI_EP_ID_ALL))) {
            break;
        }
        prev_ch  = h->ch;
        prev_len = h->len;
        size = mgi_msg_size(h->len);
        if (h->ch != ch_id) {
            ch_id = h->ch;
            ch    = mgi_gpu_ch(d, ch_id);
            /* the cached rings are a channel's: its own hops */
            for (k = 0; k < MGI_GPU_DST_CACHE; ++k) {
                dc_dst[k] = MGI_GPU_NO_DST;
            }
        }
        if (ch == NULL) {
            mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
            off += size;
            continue;
        }
        if (recv_side &&
            ((h->dst == d->id) || (h->dst == MGI_EP_ID_ALL))) {
            if ((ch->self_dst == MGI_GPU_NO_DST) || (h->dst != d->id) ||
                (ch->nfinal == 0)) {
                mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
                off += size;
                continue;
            }
            if (h->ch != cache_id) {
                /* one final ring per (segment, channel): consuming blocks
                 * take turns by segment */
                cache_id    = h->ch;
                cache_final = ch->final[MGI_ATOMIC_ADD(&ch->rr, 1u) %
                                        ch->nfinal];
            }
            t = mgi_gpu_tgt(p, cache_final);
            if ((t < 0) || (p->nemit == MGI_GPU_MAX_EMIT)) {
                break;
            }
            mgi_gpu_emit_add(p, e, t, off, size, MGI_GPU_NO_DST,
                             MGI_SEG_KEY(h->ch, h->dst));
        } else if (!recv_side && (h->dst == MGI_EP_ID_ALL)) {
            n = ch->ndst;
            if (p->nemit + n > MGI_GPU_MAX_EMIT) {
                break;
            }
            /* all targets must fit the pass before any is placed */
            sum = p->ntgt;
            for (k = 0; k < n; ++k) {
                ring = mgi_gpu_send_ring(d, ch->dst[k],
                                         mgi_vld(&ch->hop[k]));
                if ((ring != NULL) && (mgi_gpu_tgt(p, ring) < 0)) {
                    break;
                }
            }
            if (k < n) {
                p->ntgt = sum; /* undo the targets added above */
                break;
            }
            for (k = 0; k < n; ++k) {
                ring = mgi_gpu_send_ring(d, ch->dst[k],
                                         mgi_vld(&ch->hop[k]));
                if (ring == NULL) {
                    mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
                    continue;
                }
                mgi_gpu_emit_add(p, e, mgi_gpu_tgt(p, ring), off, size,
                                 ch->dst[k], MGI_SEG_KEY(h->ch, ch->dst[k]));
            }
        } else {
            /* one destination: the send side's target, or a relay's sort
             * ring towards h->dst (a lane's messages in order) */
            k = h->dst % MGI_GPU_DST_CACHE;
            if (dc_dst[k] != h->dst) {
                dc_dst[k]  = h->dst;
                dc_ring[k] = recv_side ?
                             mgi_gpu_relay_target(d, ch, h->dst) :
                             mgi_gpu_send_target(d, ch, h->dst);
            }
            ring = dc_ring[k];
            if ((ring == NULL) && recv_side &&
                mgi_gpu_relay_unset(ch, h->dst)) {
                /* a relay whose own create has not made its hops yet
                 * (other ranks send once the create's allgather is
                 * done): the lane waits */
                p->relay_wait = 1;
                break;
            }
            if (ring == NULL) {
                mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
                off += size;
                continue;
            }
            t = mgi_gpu_tgt(p, ring);
            if ((t < 0) || (p->nemit == MGI_GPU_MAX_EMIT)) {
                break;
            }
            mgi_gpu_emit_add(p, e, t, off, size, MGI_GPU_NO_DST,
                             MGI_SEG_KEY(h->ch, h->dst));
        }
        off += size;
    }
    p->end_off = off;

    /* group the emissions by target, keeping their order */
    p->tgt_first[0] = 0;
    p->tgt_word0[0] = 0;
    for (k = 0; k < p->ntgt; ++k) {
        p->tgt_first[k + 1] = p->tgt_first[k] + p->tgt_cnt[k];
        p->tgt_word0[k + 1] = p->tgt_word0[k] + p->tgt_bytes[k] / 8;
        p->tgt_cnt[k]       = 0;
    }
    for (k = 0; k < p->nemit; ++k) {
        t = e->tgt[k];
        e->order[p->tgt_first[t] + p->tgt_cnt[t]++] = (uint16_t)k;
    }
}

/* Lanes of this thread's warp with the same key: its rank among them and
 * their number. */
MGI_SDEV_INLINE void mgi_gpu_warp_group(uint32_t key, unsigned *rank,
                                        unsigned *size)
{
#if defined(__CUDACC__)
    const unsigned lane = threadIdx.x % 32;
    const unsigned m    = __match_any_sync(0xffffffffu, key);

    *rank = __popc(m & ((1u << lane) - 1));
    *size = __popc(m);
#else
    (void)key;
    *rank = 0;
    *size = 1;
#endif
}

/* Block: the parallel walk. From p->start, the longest run of messages of
 * one channel and one length (unicasts; on the receive side each for this
 * endpoint or for one this relay has a hop towards, so that a relay's
 * lanes, which interleave both, go in runs too) is placed without a
 * serial pass: the k-th header of the run is a message boundary because
 * the k-1 before it were messages of that size, so every thread checks
 * its own headers. Targets
 * come from a hash of the run's destinations, ranks inside a target from
 * warp groups and a prefix over warps, so messages keep their order per
 * target as in mgi_gpu_walk, whose outputs this fills the same way.
 * Returns 0 when the run is empty or unusual (pads, EOF, broadcast, a
 * message without route): mgi_gpu_walk takes that part. */
MGI_SDEV int mgi_gpu_walk_run(const mgi_gpu_dep_t *d, mgi_gpu_pass_t *p,
                              mgi_gpu_emit_t *e, const char *seg,
                              uint32_t cap, int recv_side)
{
    const unsigned tid = MGI_TID, nth = MGI_NTH;
    const unsigned nw = nth / MGI_WARP, w = tid / MGI_WARP;
    const mgi_msg_hdr_t *h;
    mgi_gpu_dch_t *ch;
    mgi_ring_t *ring;
    uint32_t i, k, s, off, msz, t, n, base, run_v;
    unsigned rank, size;
    int tt;
    /* each message's source, size and dst override: the copy in segment
     * order (coalesce 2) reads none of them, the other copies and the
     * self-check do */
#if !defined(__CUDACC__) && defined(MGI_SORTER_SELFCHECK)
    const int entries = 1;
#else
    const int entries = (d->coalesce != 2);
#endif

    if (tid == 0) {
        p->run     = 0;
        p->run_cut = 0;
        p->ntgt    = 0;
        p->contig  = 0;
        off        = p->start;
        h          = (const mgi_msg_hdr_t*)(seg + off);
        ch         = NULL;
        if ((off + MGI_MSG_HDR_SIZE <= cap) && (h->ch != MGI_MSG_CH_PAD) &&
            (h->len != MGI_MSG_LEN_EOF)) {
            ch = mgi_gpu_ch(d, h->ch);
        }
        /* runs of small messages (a tuple each): a pass per run of
         * batches (mgi_dev_send_block) would copy and walk the segment
         * once per message; mgi_gpu_walk takes those, serially */
        if ((ch != NULL) && (nw <= MGI_GPU_MAX_WARPS) &&
            (mgi_msg_size(h->len) <= MGI_GPU_RUN_MSG)) {
            p->run_ch  = h->ch;
            p->run_len = h->len;
            p->run_msz = mgi_msg_size(h->len);
            p->run_n   = (int)((cap - off) / p->run_msz);
            if (p->run_n > MGI_GPU_MAX_EMIT) {
                p->run_n = MGI_GPU_MAX_EMIT;
            }
            p->run_ndst = 0;
            p->run_dch  = ch;
            p->run_self = recv_side && mgi_gpu_self_ok(ch);
            p->run      = recv_side ?
                          mgi_gpu_recv_runs(d, ch, p->run_self, h->dst) :
                          (h->dst != MGI_EP_ID_ALL);
        }
    }
    MGI_SYNC();
    if (!p->run) {
        return 0;
    }
    msz = p->run_msz;
    ch  = p->run_dch;
    /* 1. how long is the run: on the receive side, up to a message it
     * cannot place (mgi_gpu_walk drops it or waits there); each thread
     * keeps its last answer, as a lane's run has few destinations */
    /* run_n read anew each time: a thread stops at another's end */
    k = MGI_GPU_NO_DST;
    t = 0;
    for (i = tid; i < (uint32_t)mgi_vld(&p->run_n); i += nth) {
        h = (const mgi_msg_hdr_t*)(seg + p->start + i * msz);
        if (recv_side && (h->dst != k)) {
            k = h->dst;
            t = mgi_gpu_recv_runs(d, ch, p->run_self, h->dst);
        }
        if ((h->ch != p->run_ch) || (h->len != p->run_len) ||
            (recv_side ? !t : (h->dst == MGI_EP_ID_ALL))) {
            MGI_ATOMIC_MIN(&p->run_n, (int)i);
        }
    }
    for (k = tid; k < nw * MGI_GPU_MAX_TARGETS; k += nth) {
        p->wcnt[k / MGI_GPU_MAX_TARGETS][k % MGI_GPU_MAX_TARGETS] = 0;
    }
    MGI_SYNC();
    n = (uint32_t)p->run_n; /* >= 1: the first header was checked */

    /* 2. destinations -> targets: the send side's rings towards them, on
     * the receive side this endpoint's final ring and a relay's sort
     * rings towards the others (the lane's messages in order per target,
     * so per source) */
    for (i = tid; i < n; i += nth) {
        h = (const mgi_msg_hdr_t*)(seg + p->start + i * msz);
        s = ((uint32_t)h->dst * 2654435761u) % MGI_GPU_DTAB;
        for (;;) {
            /* look before the CAS: a run usually has few destinations,
             * and a CAS per message on one shared word serializes the
             * block */
            k = mgi_vld(&p->dtab[s]);
            if (k == (uint32_t)h->dst + 1) {
                break;
            }
            if (k == 0) {
                k = MGI_ATOMIC_CAS(&p->dtab[s], 0u, (uint32_t)h->dst + 1);
            }
            if (k == 0) {
                k = MGI_ATOMIC_ADD(&p->run_ndst, 1u);
                if (k < MGI_GPU_MAX_TARGETS) {
                    p->dlist[k] = (uint8_t)s;
                }
                break;
            } else if (k == (uint32_t)h->dst + 1) {
                break;
            }
            s = (s + 1) % MGI_GPU_DTAB;
        }
        e->tgt[i] = (uint8_t)s; /* the slot, for now */
    }
    MGI_SYNC();
    if (tid == 0) {
        if (p->run_ndst > MGI_GPU_MAX_TARGETS) {
            p->run_cut = 1; /* cannot be: a channel has <= 64 dsts */
        }
        for (k = 0; !p->run_cut && (k < p->run_ndst); ++k) {
            s    = p->dlist[k];
            ring = recv_side ?
                   mgi_gpu_recv_target(d, ch, (uint16_t)(p->dtab[s] - 1)) :
                   mgi_gpu_send_target(d, ch, (uint16_t)(p->dtab[s] - 1));
            tt   = (ring == NULL) ? -1 : mgi_gpu_tgt(p, ring);
            if (tt < 0) {
                p->run_cut = 1; /* no route: mgi_gpu_walk counts it */
                break;
            }
            p->dtgt[s] = (uint8_t)tt;
            if (p->tgt_cnt[tt]++ == 0) {
                p->tgt_key[tt] = MGI_SEG_KEY(p->run_ch, p->dtab[s] - 1);
            } else {
                p->tgt_key[tt] = MGI_SEG_MIXED; /* dsts share a hop */
            }
        }
        for (k = 0; k < p->run_ndst && k < MGI_GPU_MAX_TARGETS; ++k) {
            p->dtab[p->dlist[k]] = 0;   /* clean for the next run */
        }
    }
    MGI_SYNC();
    if (p->run_cut) {
        return 0;
    }
    for (i = tid; i < n; i += nth) {
        e->tgt[i] = p->dtgt[e->tgt[i]];
    }
    /* tbase: the run's count per target, set here for a block copy, by
     * the prefix over the warps (3.) otherwise */
    if ((tid == 0) && (p->ntgt == 1) && d->coalesce) {
        /* one target: the run goes out as it is, in segment order, one
         * block copy (mgi_gpu_place); no ranks, no emission arrays */
        p->contig   = 1;
        p->tbase[0] = n;
    }
    MGI_SYNC();

    /* 3. rank in the target, in message order: warp w ranks a slice of
     * the run, its messages in order (warp groups and a running count per
     * target in its row of wcnt, no barrier), then a prefix over the warps
     * per target gives each slice its base. Two barriers for the run; a
     * round of warp groups and prefix per nth messages took four each */
    if (!p->contig) {
        const uint32_t per = (n + nw - 1) / nw;
        const uint32_t lane = tid % MGI_WARP;
        const uint32_t s_lo = (w * per < n) ? w * per : n;
        const uint32_t s_hi = (s_lo + per < n) ? s_lo + per : n;

        for (base = s_lo; base < s_hi; base += MGI_WARP) {
            i = base + lane;
            t = (i < s_hi) ? e->tgt[i] : 0xffu;
            mgi_gpu_warp_group(t, &rank, &size);
            if (t != 0xffu) {
                e->dst_off[i] = p->wcnt[w][t] + rank;  /* in the slice */
            }
            MGI_SYNCWARP();
            if ((t != 0xffu) && (rank == 0)) {
                p->wcnt[w][t] += (uint16_t)size;
            }
            MGI_SYNCWARP();
        }
        MGI_SYNC();
        for (k = tid; k < p->ntgt; k += nth) {
            run_v = 0;
            for (s = 0; s < nw; ++s) {
                size          = p->wcnt[s][k];
                p->wcnt[s][k] = (uint16_t)run_v;  /* < MGI_GPU_MAX_EMIT */
                run_v        += size;
            }
            p->tbase[k] = run_v;
        }
        MGI_SYNC();
        for (i = s_lo + lane; i < s_hi; i += MGI_WARP) {
            t             = e->tgt[i];
            e->dst_off[i] = (p->wcnt[w][t] + e->dst_off[i]) * msz;
            if (entries) {
                e->src[i]  = p->start + i * msz;
                e->words[i] = (uint16_t)(msz / 8);
                e->dst[i]  = MGI_GPU_NO_DST;
            }
        }
    }

    /* 4. what mgi_gpu_walk leaves: totals, groups, the end */
    if (tid == 0) {
        p->nemit        = n;
        p->unif_words   = msz / 8;
        /* the relayed ones, counted once the pass placed them
         * (mgi_gpu_ring): a blocked pass is walked again */
        p->run_relayed  = 0;
        for (k = 0; recv_side && (k < p->ntgt); ++k) {
            p->run_relayed +=
                (p->tgt_key[k] != MGI_SEG_KEY(p->run_ch, d->id)) ?
                p->tbase[k] : 0;
        }
        p->tgt_first[0] = 0;
        p->tgt_word0[0] = 0;
        for (k = 0; k < p->ntgt; ++k) {
            p->tgt_cnt[k]       = p->tbase[k];
            p->tgt_bytes[k]     = p->tbase[k] * msz;
            p->tgt_first[k + 1] = p->tgt_first[k] + p->tgt_cnt[k];
            p->tgt_word0[k + 1] = p->tgt_word0[k] + p->tgt_bytes[k] / 8;
        }
        off = p->start + n * msz;
        while ((off + MGI_MSG_HDR_SIZE <= cap) &&
               (((const mgi_msg_hdr_t*)(seg + off))->ch == MGI_MSG_CH_PAD)) {
            off += MGI_MSG_HDR_SIZE +
                   (uint32_t)((const mgi_msg_hdr_t*)(seg + off))->len *
                   MGI_MSG_ALIGN;
        }
        p->end_off  = off;
        p->at_end   = (off + MGI_MSG_HDR_SIZE > cap);
        p->stop_eof = 0;
    }
    MGI_SYNC();
    /* the grouped order, for the copy by target (coalesce 1) */
    for (i = tid; !p->contig && (d->coalesce == 1) && (i < n); i += nth) {
        t = e->tgt[i];
        e->order[p->tgt_first[t] + e->dst_off[i] / msz] = (uint16_t)i;
    }
    return 1;
}

/* A message header word with another dst (ch:16 dst:16 src:16 len:16,
 * little endian). */
MGI_SDEV_INLINE uint64_t mgi_gpu_set_dst(uint64_t v, uint16_t dst)
{
    return (v & ~(0xffffull << 16)) | ((uint64_t)dst << 16);
}

MGI_SDEV_INLINE char *mgi_payload_at(mgi_seg_hdr_t *seg, uint32_t off)
{
    return mgi_seg_payload(seg) + off;
}

/* Block, after the barrier that follows the targets' MGI_ATOMIC_MIN of
 * p->wait_t: whether a target had no room (none at the look, or the room
 * it saw went to another producer before the reserve). Every thread reads
 * wait_t; thread 0 alone records the first such target, which the caller
 * reads after its next barrier. */
MGI_SDEV_INLINE int mgi_gpu_blocked_on(mgi_gpu_pass_t *p)
{
    if (p->wait_t >= MGI_GPU_MAX_TARGETS) {
        return 0;
    }
    if (MGI_TID == 0) {
        p->blocked   = 1;
        p->wait_ring = p->tgt_ring[p->wait_t];
        p->wait_sz   = p->tgt_bytes[p->wait_t];
    }
    return 1;
}

/* Block: reserve per target, copy, commit. Returns 0 when blocked. */
MGI_SDEV int mgi_gpu_place(const mgi_gpu_dep_t *d,
                                    mgi_gpu_pass_t *p, mgi_gpu_emit_t *e,
                                    const char *seg)
{
    const unsigned tid = MGI_TID, nth = MGI_NTH;
    uint32_t t, w, lo, hi, mid, lw, k, i, words;
    uint64_t v;
    char *dst;

    const unsigned long long t0 = MGI_CLOCK();

    if (tid == 0) {
        p->blocked   = 0;
        p->wait_ring = NULL;
        p->wait_t    = MGI_GPU_MAX_TARGETS;
    }
    MGI_SYNC();
    /* every target must have room before any is reserved: a reservation
     * of a blocked pass turns into padding, which the mover carries and
     * the next hop walks (most passes were blocked, and the sort rings
     * filled with padding). The look's RTail is where the reserve adds
     * (one round trip each, where RTail's and STail's loads and the add
     * were three, after a look of two) */
    for (t = tid; t < p->ntgt; t += nth) {
        if (!mgi_ring_append_look(p->tgt_ring[t], p->tgt_bytes[t],
                                  &p->tgt_pos[t])) {
            MGI_ATOMIC_MIN(&p->wait_t, (int)t);
        }
    }
    MGI_SYNC();
    if (mgi_gpu_blocked_on(p)) {
        return 0;
    }
    for (t = tid; t < p->ntgt; t += nth) {
        p->tgt_ok[t] = (mgi_ring_append_reserve_at(p->tgt_ring[t],
                                                   p->tgt_bytes[t],
                                                   p->tgt_pos[t],
                                                   &p->tgt_seg[t],
                                                   &p->tgt_off[t],
                                                   &p->tgt_pos[t]) ==
                        MGI_RING_OK);
        if (!p->tgt_ok[t]) {
            MGI_ATOMIC_MIN(&p->wait_t, (int)t);
        }
    }
    MGI_SYNC();
    if (mgi_gpu_blocked_on(p)) {
#if !defined(__CUDACC__) && defined(MGI_SORTER_SELFCHECK)
        mgi_selfcheck_blocked += (tid == 0);
#endif
        for (t = tid; t < p->ntgt; t += nth) {
            if (p->tgt_ok[t]) {
                mgi_ring_append_cancel(p->tgt_ring[t], p->tgt_seg[t],
                                  p->tgt_off[t], p->tgt_bytes[t],
                                  p->tgt_pos[t]);
            }
        }
        return 0;
    }
    for (t = tid; t < p->ntgt; t += nth) {
        /* the CAS goes out now, its answer is read before the commit: the
         * copy runs meanwhile */
        p->tgt_mark[t] = mgi_ring_mark_begin(p->tgt_ring[t], p->tgt_seg[t],
                                             p->tgt_key[t]);
    }
    /* the warps together again before the copy: without a barrier, warp
     * 0's other threads ran their share of the copy while threads 0 and 1
     * waited for their marks, and those two ran theirs after, alone, as a
     * second pass of the warp over the loop (a walked pass placed 64-byte
     * tuples in 82 k cycles, 45 k with the barrier) */
    MGI_SYNC();
    if (tid == 0) {
        p->stat[MGI_GS_C_PRES] += MGI_CLOCK() - t0;
    }

    if (p->contig) {
        /* one target, the messages as they lie in the segment copy */
        const uint64_t *src = (const uint64_t*)(seg + p->start);
        uint64_t *out = (uint64_t*)(mgi_payload_at(p->tgt_seg[0],
                                                   p->tgt_off[0]));

        words = p->tgt_bytes[0] / 8;
        for (w = tid; w < words; w += nth) {
            out[w] = src[w];
        }
    } else if ((d->coalesce == 2) && (p->unif_words > 0)) {
        /* a run (mgi_gpu_walk_run): its words in segment order, each to
         * its message's place in the target. The reads are consecutive,
         * and a warp's messages of one target lie side by side there
         * (ranks in message order), so the writes coalesce too, without
         * the lookups per word of the copy by target */
        const uint64_t *src = (const uint64_t*)(seg + p->start);
        const uint32_t uw = p->unif_words;
        const uint32_t di = nth / uw, dk = nth % uw;

        words = p->nemit * uw;
        i     = tid / uw;
        k     = tid % uw;
        for (w = tid; w < words; w += nth) {
            t   = e->tgt[i];
            dst = mgi_seg_payload(p->tgt_seg[t]) + p->tgt_off[t] +
                  e->dst_off[i] + 8 * k;
            *(uint64_t*)dst = src[w];
            i += di;
            k += dk;
            if (k >= uw) {
                k -= uw;
                ++i;
            }
        }
    } else if (d->coalesce != 0) {
        /* word w of the output, grouped by target: consecutive threads
         * write consecutive words of one reservation */
        words = p->tgt_word0[p->ntgt];
        for (w = tid; w < words; w += nth) {
            lo = 0;
            hi = p->ntgt;
            while (hi - lo > 1) {             /* last target with word0<=w */
                mid = (lo + hi) / 2;
                if (p->tgt_word0[mid] <= w) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            t  = lo;
            lw = w - p->tgt_word0[t];
            lo = p->tgt_first[t];
            hi = p->tgt_first[t + 1];
            if (p->unif_words > 0) {          /* a run: one size */
                lo += lw / p->unif_words;
                hi  = lo + 1;
            }
            while (hi - lo > 1) {             /* its message */
                mid = (lo + hi) / 2;
                if (e->dst_off[e->order[mid]] / 8 <= lw) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            i = e->order[lo];
            k = lw - e->dst_off[i] / 8;
            v = *(const uint64_t*)(seg + e->src[i] + 8 * k);
            if ((k == 0) && (e->dst[i] != MGI_GPU_NO_DST)) {
                v = mgi_gpu_set_dst(v, e->dst[i]);
            }
            dst = mgi_seg_payload(p->tgt_seg[t]) + p->tgt_off[t] + 8 * lw;
            *(uint64_t*)dst = v;
        }
    } else {
        /* one message per thread: strided writes */
        for (i = tid; i < p->nemit; i += nth) {
            t   = e->tgt[i];
            dst = mgi_seg_payload(p->tgt_seg[t]) + p->tgt_off[t] +
                  e->dst_off[i];
            for (k = 0; k < e->words[i]; ++k) {
                v = *(const uint64_t*)(seg + e->src[i] + 8 * k);
                if ((k == 0) && (e->dst[i] != MGI_GPU_NO_DST)) {
                    v = mgi_gpu_set_dst(v, e->dst[i]);
                }
                ((uint64_t*)dst)[k] = v;
            }
        }
    }
    MGI_FENCE();
    MGI_SYNC();
#if !defined(__CUDACC__) && defined(MGI_SORTER_SELFCHECK)
    if ((tid == 0) && p->contig &&
        (memcmp(mgi_payload_at(p->tgt_seg[0], p->tgt_off[0]),
                seg + p->start, p->tgt_bytes[0]) != 0)) {
        fprintf(stderr, "selfcheck: block copy of %u bytes differs\n",
                p->tgt_bytes[0]);
        abort();
    }
    for (i = 0; (tid == 0) && !p->contig && (i < p->nemit); ++i) {
        t   = e->tgt[i];
        dst = mgi_seg_payload(p->tgt_seg[t]) + p->tgt_off[t] + e->dst_off[i];
        if (memcmp(dst + 8, seg + e->src[i] + 8, 8u * e->words[i] - 8) != 0) {
            fprintf(stderr, "selfcheck: entry %u of %u (tgt %u off %u size "
                    "%u src %u) differs\n", i, p->nemit, t, e->dst_off[i],
                    8u * e->words[i], e->src[i]);
            abort();
        }
    }
#endif
    for (t = tid; t < p->ntgt; t += nth) {
        mgi_seg_mark_end(p->tgt_seg[t], p->tgt_mark[t], p->tgt_key[t]);
        mgi_ring_append_commit(p->tgt_ring[t], p->tgt_seg[t], p->tgt_off[t],
                               p->tgt_bytes[t], p->tgt_pos[t]);
    }
    return 1;
}

#endif

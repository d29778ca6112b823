/**
 * MGI sorter of a GPU endpoint, device side: whole stage segments,
 * moved to a sort ring, the loopback lane or a final ring without a
 * walk, or passed on by reference.
 *
 * A part of mgi_sorter_dev.h, which includes its parts in order (each
 * uses those before it).
 */
#ifndef MGI_SORTER_DEV_STAGE_H_
#define MGI_SORTER_DEV_STAGE_H_

#ifndef MGI_SORTER_DEV_H_
#  error "a part of the sorter's device code: include mgi_sorter_dev.h"
#endif

/* Thread 0, send side: the ring that takes stage segment `seg` whole
 * (its producers marked every message as of one channel for one
 * destination, mgi_seg_mark): the destination's sort ring, or the
 * loopback lane for this endpoint, whose owner then moves the segment to
 * a final ring whole as well. NULL when it must be walked: mixed or
 * unmarked, an unknown channel or route (the walk counts those as
 * dropped), or a ring of another segment size. */
MGI_SDEV_INLINE mgi_ring_t *mgi_gpu_whole_route(const mgi_gpu_dep_t *d,
                                                mgi_seg_hdr_t *seg,
                                                uint32_t cap, uint32_t *key_p,
                                                mgi_gpu_dch_t **ch_p,
                                                int16_t *slot_p)
{
    uint32_t flag = mgi_ld_acq32(&seg->reserved), key = flag - 1;
    uint16_t dst  = (uint16_t)(key >> 16);
    mgi_ring_t *r;

    if ((flag == 0) || (flag == MGI_SEG_MIXED) || (dst >= MGI_MAX_EPS) ||
        ((*ch_p = mgi_gpu_ch(d, (uint16_t)key)) == NULL)) {
        return NULL;
    }
    r = mgi_gpu_send_target(d, *ch_p, dst, slot_p);
    if ((r == NULL) || (mgi_ring_cap(r) != cap)) {
        return NULL;
    }
    *key_p = key;
    return r;
}

/* Thread 0, send side, MGI_LOOP_DIRECT: the final ring that takes a whole
 * segment of stage ring `stage` for this endpoint instead of the loopback
 * lane, or NULL. Only once the lane released everything of that stage
 * ring (mgi_gpu_lane_passed): its earlier tuples for this endpoint are in
 * final rings already, so the segment does not overtake them; its EOF,
 * later in the stage ring, comes after it in any case. The final ring as
 * the lane's whole moves take them: in turn per segment. */
MGI_SDEV_INLINE mgi_ring_t *mgi_gpu_direct_final(const mgi_gpu_dep_t *d,
                                                 mgi_gpu_pass_t *p,
                                                 const mgi_gpu_dch_t *ch,
                                                 const mgi_ring_t *stage,
                                                 uint32_t cap)
{
    mgi_ring_t *f;

    if ((ch->nfinal == 0) || (ch->self_dst == MGI_GPU_NO_DST) ||
        !mgi_gpu_lane_passed(d, stage)) {
        return NULL;
    }
    /* in turn over the final rings from this block's own start, the
     * blocks' starts spread evenly over them: no atomic round trip on the
     * channel's counter per segment, and the blocks' moves of a moment
     * still go to rings all over (starts at consecutive rings fed a
     * window of them while the others waited) */
    f = ch->final[(MGI_BID * ch->nfinal / MGI_NBLK + p->w_rr++) %
                  ch->nfinal];
    return (mgi_ring_cap(f) == cap) ? f : NULL;
}

/* Thread 0, MGI_STAGE_ZCOPY: release the leading segments of stage ring
 * `ring` that are done with (a final ring's consumer read it where it
 * is, or it was passed behind such a one), in ring order, so the block
 * that fills the ring gets them back. cons_off stays: it is the offset
 * in the segment cons_held after RHead. Lanes hold none. */
MGI_SDEV_INLINE void mgi_gpu_stage_retire(mgi_ring_t *ring)
{
    uint32_t c;

    while (ring->cons_held > 0) {
        c = ring->cons_tail;
        if (mgi_ld_acq32(&mgi_ring_seg(ring, c)->commit) != MGI_SEG_READ) {
            return;
        }
        mgi_ring_seg_recycle(ring, c);
        ring->cons_held--;
        mgi_ring_pass_head(ring, 1);
    }
}

/* Thread 0: the segment `seg` being passed (cons_held after RHead; a
 * lane's, or a stage ring's with nothing held, is RHead's) is done with;
 * by_ref > 0: a reference stands for it and the by_ref - 1 segments after
 * it (a final ring's, whose consumer says when it read it, or a sort
 * ring's, MGI_SEND_ZCOPY, whose owner says so once the mover put them),
 * and they are held until then. Released at once where nothing is held
 * before it, else marked read and released in ring order
 * (mgi_gpu_stage_retire). */
MGI_SDEV_INLINE void mgi_gpu_stage_done(mgi_ring_t *ring, mgi_seg_hdr_t *seg,
                                        uint32_t by_ref)
{
    if (!by_ref && (ring->cons_held == 0)) {
        mgi_ring_release(ring, 1);
        return;
    }
    if (!by_ref) {
        mgi_st_rel32(&seg->commit, MGI_SEG_READ);
    }
    ring->cons_held += by_ref ? by_ref : 1;
    ring->cons_off  = 0;
    ring->cons_part = 0;
}

/* Thread 0, send side, MGI_SEND_ZCOPY: does a whole segment that goes to
 * route slot `slot` reach its next hop through a mover (a sort ring with
 * a mirror, not a peer's lane)? */
MGI_SDEV_INLINE int mgi_gpu_send_mirrored(const mgi_gpu_dep_t *d,
                                          int16_t slot)
{
    return (slot >= 0) &&
           (mgi_vld(&d->mirror[(d->sort_rings > 1) ?
                               slot + MGI_BID % d->sort_rings : slot]) !=
            NULL);
}

/* Block, send side, MGI_SEND_ZCOPY: how many stage segments a sort
 * segment refers to now, from the one being passed (cons_held after
 * RHead) on: those side by side after it that are ready and carry its
 * mark `flag` (one channel, one destination), at most d->send_zcopy, not
 * across the end of the ring's memory; the whole block checks them at once
 * (thread 0 alone paid a few dependent L2 round trips each). 0 while the
 * run waits to grow: up to d->send_wait_rounds rounds of this block,
 * unless it cannot (a segment of another mark or an EOF after it, the end
 * of the ring, its capacity, the most a reference takes). The answer in
 * p->w_nref. */
MGI_SDEV void mgi_gpu_send_run(const mgi_gpu_dep_t *d, mgi_gpu_pass_t *p,
                               mgi_ring_t *ring, uint32_t flag)
{
    const uint32_t cap = mgi_ring_cap(ring);
    uint32_t pos = 0, lim = 0, n, now;
    int more;

    if (MGI_TID == 0) {
        /* the run's bounds: the ring's end, its capacity, the most a
         * reference takes, and what RTail has published */
        pos = ring->cons_tail + ring->cons_held;
        lim = ring->size - (pos & ring->mask);
        lim = (lim < d->send_zcopy) ? lim : d->send_zcopy;
        lim = (lim < ring->cons_tail + ring->size - pos) ?
              lim : ring->cons_tail + ring->size - pos;
        p->w_lim   = lim;
        p->w_avail = mgi_ld_acq32(&ring->prod_tail) - pos;
        p->w_avail = (p->w_avail < lim) ? p->w_avail : lim;
        p->w_pos0  = pos;
    }
    MGI_SYNC();
    n = mgi_gpu_first(p, p->w_avail, [&](uint32_t k) {
        mgi_seg_hdr_t *seg = mgi_ring_seg(ring, p->w_pos0 + k);
        return (k > 0) && ((mgi_ld_acq32(&seg->commit) != cap) ||
                           (mgi_ld_acq32(&seg->reserved) != flag));
    });
    if (MGI_TID == 0) {
        /* it may grow: it ends below the bounds at a segment not published
         * or not full yet */
        lim  = p->w_lim;
        more = (n < lim) &&
               ((n == p->w_avail) ||
                (mgi_ld_acq32(&mgi_ring_seg(ring, p->w_pos0 + n)->commit) !=
                 cap));
        now  = (uint32_t)p->stat[MGI_GS_ROUNDS] + 1;
        if (more && (ring->cons_since == 0)) {
            ring->cons_since = now;
        }
        if (more && (now - ring->cons_since < d->send_wait_rounds)) {
            p->w_nref = 0;
        } else {
            ring->cons_since = 0;
            p->w_nref        = n;
        }
    }
}

enum {
    MGI_GPU_WHOLE_NO = 0,    /* walk the segment */
    MGI_GPU_WHOLE_DONE,      /* moved */
    MGI_GPU_WHOLE_FULL,      /* the sort ring has no free segment */
    MGI_GPU_WHOLE_WAIT       /* a run to refer to waits to grow */
};

/* Block, send side: move the RHead stage segment p->seg (read from its
 * start) to its sort ring (or the loopback lane, or with MGI_LOOP_DIRECT
 * a final ring: mgi_gpu_direct_final) whole, when mgi_gpu_whole_route
 * says so: one reservation of a fresh segment there, a block copy from
 * global to global memory in 16-byte lines, the mark, the commit. No copy
 * to shared memory, no walk, no per-message placing: the pass of a
 * segment of one destination costs its copy. With MGI_SEND_ZCOPY a sort
 * ring that a mover drains takes a reference instead, to this segment
 * and the ready ones of the same mark after it (mgi_gpu_send_run): no
 * copy; the stage ring holds them until the mover's put of them completed
 * (mgi_gpu_release marks them read). */
MGI_SDEV int mgi_gpu_stage_whole(const mgi_gpu_dep_t *d, mgi_gpu_pass_t *p,
                                 char *sseg, mgi_ring_t *ring)
{
    const uint32_t cap = mgi_ring_cap(ring);    /* a multiple of 16 */
    const unsigned long long t0 = MGI_CLOCK();
    unsigned long long t1;
    mgi_ring_t *f = NULL;   /* thread 0: the final ring it goes to */
    mgi_gpu_dch_t *ch = NULL;
    mgi_seg_ref_t *ref;
    int16_t slot = MGI_GPU_SLOT_OUT;
    int ret;

    if (MGI_TID == 0) {
        p->w_ring = mgi_gpu_whole_route(d, p->seg, cap, &p->w_key, &ch,
                                        &slot);
        if ((p->w_ring != NULL) && d->loop_direct &&
            (p->w_ring == mgi_gpu_loopback(d))) {
            f         = mgi_gpu_direct_final(d, p, ch, ring, cap);
            p->w_ring = (f != NULL) ? f : p->w_ring;
        }
        p->w_ref  = (f != NULL) && d->stage_zcopy;
        p->w_nref = 0;
        /* by reference (MGI_SEND_ZCOPY): to a sort ring a mover drains */
        p->w_send = (p->w_ring != NULL) && (f == NULL) && d->send_zcopy &&
                    (p->w_ring != mgi_gpu_loopback(d)) &&
                    mgi_gpu_send_mirrored(d, slot);
    }
    MGI_SYNC();
    if (p->w_send) {
        mgi_gpu_send_run(d, p, ring, p->w_key + 1);
    }
    if (MGI_TID == 0) {
        if (p->w_send && (p->w_nref == 0)) {
            p->w_ring = NULL;   /* waits: MGI_GPU_WHOLE_WAIT */
        }
        p->stat[MGI_GS_C_WROUTE] += MGI_CLOCK() - t0;
        /* a full segment's worth fits only a fresh segment, at 0 */
        p->w_res  = (p->w_ring != NULL) &&
                    (mgi_ring_append_reserve(p->w_ring, cap, &p->w_seg,
                                             &p->w_off, &p->w_pos) ==
                     MGI_RING_OK);
    }
    MGI_SYNC();
    if (p->w_ring == NULL) {
        return p->w_send ? MGI_GPU_WHOLE_WAIT : MGI_GPU_WHOLE_NO;
    }
    t1 = MGI_CLOCK();
    if (p->w_res && !p->w_ref && (p->w_nref == 0)) {
        mgi_gpu_copy_global(p, sseg, mgi_seg_payload(p->w_seg),
                            mgi_seg_payload(p->seg), cap);
        MGI_FENCE();
    }
    MGI_SYNC();
    ret = p->w_res ? MGI_GPU_WHOLE_DONE : MGI_GPU_WHOLE_FULL;
    if (MGI_TID == 0) {
        p->stat[MGI_GS_WHOLE_TRIES]++;
        p->stat[MGI_GS_C_WRES]  += t1 - t0;
        p->stat[MGI_GS_C_WCOPY] += MGI_CLOCK() - t1;
        if (p->w_res) {
            if (p->w_ref || (p->w_nref > 0)) {
                /* the reference before the commit that shows it; a final
                 * ring's consumer marks the stage segment read, a sort
                 * ring's owner once the mover put it (the mover learns
                 * of it from the mirror's table, mgi_gpu_mirror_refs) */
                ref       = (mgi_seg_ref_t*)mgi_seg_payload(p->w_seg);
                ref->seg  = p->seg;
                ref->done = &p->seg->commit;
                ref->nseg = p->w_ref ? 1 : p->w_nref;
                p->w_seg->reserved = MGI_SEG_REF;
            } else if (f == NULL) {
                /* before the commit; a final segment needs none (its
                 * consumer reads messages, and a mark there would say
                 * MGI_SEG_REF to it) */
                mgi_ring_mark(p->w_ring, p->w_seg, p->w_key);
            }
            mgi_ring_append_commit(p->w_ring, p->w_seg, p->w_off, cap,
                                   p->w_pos);
            mgi_gpu_lane_dep(d, ring, p->w_ring, p->w_pos);
            mgi_gpu_stage_done(ring, p->seg, p->w_ref ? 1 : p->w_nref);
            p->stat[MGI_GS_STAGE_REFS] += p->w_ref;
            p->stat[MGI_GS_SEND_REFS]  += p->w_nref;
            p->stat[MGI_GS_SEND_REF_SLOTS] += (p->w_nref > 0);
            p->stat[MGI_GS_STAGE_WHOLE] += (p->w_nref > 0) ? p->w_nref : 1;
            p->stat[MGI_GS_LOOP_WHOLE] += (p->w_ring == mgi_gpu_loopback(d));
            p->stat[MGI_GS_LOOP_DIRECT] += (f != NULL);
            ring->cons_wait = NULL;
        } else {
            p->stat[MGI_GS_SEND_FULL]++;
            ring->cons_wait    = p->w_ring;
            ring->cons_wait_sz = cap;
        }
    }
    MGI_SYNC(); /* p->w_* read by all before the next pass */
    return ret;
}

#endif

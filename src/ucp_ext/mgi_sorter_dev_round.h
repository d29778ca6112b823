/**
 * MGI sorter of a GPU endpoint, device side: the passes over one ring,
 * the flushes completed, one round of the sorter loop, and the shared
 * memory a sorter block needs.
 *
 * A part of mgi_sorter_dev.h, which includes its parts in order (each
 * uses those before it).
 */
#ifndef MGI_SORTER_DEV_ROUND_H_
#define MGI_SORTER_DEV_ROUND_H_

#ifndef MGI_SORTER_DEV_H_
#  error "a part of the sorter's device code: include mgi_sorter_dev.h"
#endif

/* Block: consume ready segments of one ring (stage ring or receive lane).
 * Returns 1 on progress. */
MGI_SDEV int mgi_gpu_ring(const mgi_gpu_dep_t *d, mgi_gpu_block_t *b,
                                   mgi_gpu_pass_t *p, mgi_gpu_emit_t *e,
                                   char *sseg, mgi_ring_t *ring,
                                   int recv_side)
{
    const unsigned tid = MGI_TID;
    int progress = 0, ok, k;
    uint32_t cap, n, a16, passes = 0, ti;
    unsigned long long t0, t1, t2;
    const mgi_msg_hdr_t *h;

    for (;; ++passes) {
        if (!recv_side && (d->stage_passes != 0) &&
            (passes == d->stage_passes)) {
            break;
        }
        MGI_SYNC(); /* everyone read the previous pass's decisions */
        if (tid == 0) {
            mgi_gpu_stage_retire(ring);
            /* the first segment not passed yet (a lane holds none) */
            p->seg       = mgi_ring_peek(ring, ring->cons_held);
            p->start     = ring->cons_off;
            p->wait_ring = NULL;
        }
        MGI_SYNC();
        if (p->seg == NULL) {
            break;
        }
        if (!recv_side) {
            /* the last pass over this segment found a target without
             * room: walk it again only once that target has some */
            if (tid == 0) {
                p->skip = (ring->cons_wait != NULL) &&
                          !mgi_ring_append_room(ring->cons_wait,
                                                ring->cons_wait_sz);
                p->stat[MGI_GS_SEND_WAIT] += p->skip;
            }
            MGI_SYNC();
            if (p->skip) {
                break;
            }
        }
        if (!recv_side && (p->start == 0)) {
            k = mgi_gpu_stage_whole(d, p, sseg, ring);
            if ((k == MGI_GPU_WHOLE_FULL) || (k == MGI_GPU_WHOLE_WAIT)) {
                break;
            }
            if (k == MGI_GPU_WHOLE_DONE) {
                progress = 1;
                /* the sort ring's owner publishes and recycles between
                 * passes, not once a round: a round can take many passes,
                 * and the mover waits for what it publishes */
                mgi_gpu_sync_routes(d, p);
                continue;
            }
        }
        if (recv_side) {
            /* a whole segment, or one of EOFs, at a segment's start:
             * mgi_gpu_lane_whole's */
            if (tid == 0) {
                p->whole = (p->start == 0) &&
                           (mgi_gpu_lane_job_ch(d, p->seg,
                                                mgi_ring_cap(ring)) != NULL);
            }
            MGI_SYNC();
            if (p->whole) {
                break;
            }
        }
        cap = mgi_ring_cap(ring);           /* a multiple of 16 */
        a16 = p->start & ~15u;
        n   = (cap - a16) / 16;
        t0  = MGI_CLOCK();
        mgi_gpu_copy_in(p, sseg + a16, mgi_seg_payload(p->seg) + a16,
                        16 * n);
        MGI_SYNC();
        t1 = MGI_CLOCK();
        if (!mgi_gpu_walk_run(d, p, e, sseg, cap, recv_side) &&
            (tid == 0)) {
            mgi_gpu_walk(d, p, e, sseg, cap, recv_side);
        }
        MGI_SYNC();
        t2 = MGI_CLOCK();
        ok = 1;
        if (p->nemit > 0) {
            ok = mgi_gpu_place(d, p, e, sseg);
        }
        if (tid == 0) {
            /* where a pass spends its time, in clock cycles */
            p->stat[MGI_GS_C_COPY]  += t1 - t0;
            p->stat[MGI_GS_C_WALK]  += t2 - t1;
            p->stat[MGI_GS_C_PLACE] += MGI_CLOCK() - t2;
            p->stat[MGI_GS_PASSES]++;
            p->stat[MGI_GS_LANE_PASSES] += (recv_side != 0);
            if (ok && (p->nemit > 0)) {
                if (p->run && !p->run_cut) {
                    p->stat[MGI_GS_RUN_MSGS]    += p->nemit;
                    p->stat[MGI_GS_RUN_RELAYED] += recv_side ?
                                                   p->run_relayed : 0;
                }
                if (recv_side) {
                    p->stat[MGI_GS_DISPATCHED] += p->nemit;
                    mgi_gpu_touch(p);
                } else {
                    p->stat[MGI_GS_SORTED] += p->nemit;
                    for (ti = 0; ti < p->ntgt; ++ti) {
                        mgi_gpu_lane_dep(d, ring, p->tgt_ring[ti],
                                         p->tgt_pos[ti]);
                    }
                }
            }
            if (p->relay_wait && (p->nemit == 0)) {
                ok = 0;     /* the lane waits for the relay's hops */
            }
            if (ok && (p->nemit == 0) && p->stop_eof) {
                h = (const mgi_msg_hdr_t*)(sseg + p->end_off);
                if (recv_side && (h->dst != d->id)) {
                    ok = mgi_gpu_relay_eof(d, h);
                } else if (recv_side) {
                    mgi_gpu_recv_eof(d, h);
                } else {
                    ok = mgi_gpu_send_eof(d, b, ring, h);
                    p->stat[MGI_GS_LOOP_EOF] += (ok == 2);
                }
                if (ok) {
                    p->end_off += mgi_msg_size(MGI_MSG_LEN_EOF);
                }
            }
            p->blocked      = !ok;
            p->stat[MGI_GS_SEND_FULL] += (!ok && !recv_side);
            if (!recv_side) {
                ring->cons_wait    = ok ? NULL : p->wait_ring;
                ring->cons_wait_sz = p->wait_sz;
            }
            if (ok) {
                ring->cons_off = p->end_off;
                if (p->at_end) {
                    mgi_gpu_stage_done(ring, p->seg, 0);
                }
            }
        }
        MGI_SYNC();
        if (p->blocked) {
            break;
        }
        progress = 1;
        if (!recv_side) {
            mgi_gpu_sync_routes(d, p);
        }
    }
    MGI_SYNC(); /* p->seg and p->blocked read by all before reuse */
    return progress;
}

/* Thread 0: complete flushes whose EOF segments the mover delivered. */
MGI_SDEV void mgi_gpu_flush_check(mgi_gpu_block_t *b)
{
    mgi_gpu_pending_t *pd;
    uint32_t k;

    while (b->count > 0) {
        pd = &b->pending[b->head];
        for (k = 0; k < pd->n; ++k) {
            if ((int32_t)(mgi_ld_acq32(&pd->ring[k]->cons_tail) -
                          pd->pos[k]) <= 0) {
                return;
            }
        }
        if ((int32_t)(pd->seq - mgi_ld_acq32(&pd->stage->flush_done)) > 0) {
            mgi_st_rel32(&pd->stage->flush_done, pd->seq);
        }
        b->head = (b->head + 1) % MGI_GPU_MAX_PENDING;
        b->count--;
    }
}

/* The stage rings of this block: sid + r * nsb for r < the number
 * returned, the blocks from d->stage_base on in turn. Every stage ring is
 * one block's. */
MGI_SDEV_INLINE uint32_t mgi_gpu_stage_share(const mgi_gpu_dep_t *d,
                                             uint32_t *sid, uint32_t *nsb)
{
    const uint32_t base = d->stage_base;

    *nsb = MGI_NBLK - base;
    *sid = MGI_BID - base;                  /* wraps below base: none */
    return ((MGI_BID >= base) && (d->nstage > *sid)) ?
           (d->nstage - *sid + *nsb - 1) / *nsb : 0;
}

/* Block: one round of the sorter loop over the rings this block owns.
 * Returns 1 on progress; p->stop is set when the host asked to stop. */
MGI_SDEV int mgi_gpu_round(const mgi_gpu_dep_t *d, mgi_gpu_block_t *b,
                           mgi_gpu_pass_t *p, mgi_gpu_emit_t *e, char *sseg)
{
    uint32_t sid, nsb;
    const uint32_t nown = mgi_gpu_stage_share(d, &sid, &nsb);
    int progress = 0, lane_progress = 0, k;
    unsigned long long t0 = MGI_CLOCK(), t1, t2, t3;
    unsigned i;

    if (MGI_TID == 0) {
        p->qseq = mgi_vld(&d->quiesce_seq); /* needed at the round's end */
    }
    /* the stage rings this block owns, from the first with a segment ready
     * or segments held to release (looked at by a thread each: most rounds
     * find them all empty) */
    i = mgi_gpu_first(p, nown, [&](uint32_t r) {
        mgi_ring_t *sr = d->stage[sid + r * nsb];
        return (sr->cons_held > 0) || (mgi_ring_peek(sr, 0) != NULL);
    });
    for (; i < nown; ++i) {
        progress |= mgi_gpu_ring(d, b, p, e, sseg,
                                 d->stage[sid + i * nsb], 0);
    }
    t1 = MGI_CLOCK();
    for (i = MGI_BID; i < d->nlanes; i += MGI_NBLK) {
        if (MGI_TID == 0) {
            unsigned long long tp = MGI_CLOCK();
            mgi_gpu_stat_max(p, MGI_GS_PULL_MAXJUMP, mgi_gpu_lane_pull(d, i));
            p->stat[MGI_GS_C_PULL] += MGI_CLOCK() - tp;
        }
        k = mgi_gpu_lane_whole(d, p, mgi_gpu_lane(d, i), &d->ljobs[i]);
        if (k == MGI_GPU_LANE_WALK) {
            k = mgi_gpu_ring(d, b, p, e, sseg, mgi_gpu_lane(d, i), 1);
        }
        if (MGI_TID == 0) {
            unsigned long long tp = MGI_CLOCK();
            mgi_gpu_lane_push(d, i);
            p->stat[MGI_GS_C_PUSH] += MGI_CLOCK() - tp;
        }
        lane_progress |= (k != MGI_GPU_LANE_IDLE);
    }
    /* a block whose lanes moved keeps its rounds short: its lanes' jobs
     * retire (and free lane slots) once a round, so the time from issue
     * to retire is its round's */
    t2 = MGI_CLOCK();
    lane_progress |= mgi_gpu_help(d, p, sseg,
                                  lane_progress ? d->owner_help :
                                                  MGI_GPU_HELP_JOBS);
    t3 = MGI_CLOCK();
    progress |= mgi_gpu_sync_routes(d, p);
    if (MGI_TID == 0) {
        mgi_gpu_flush_check(b);
        p->stat[MGI_GS_C_STAGE] += t1 - t0;
        p->stat[MGI_GS_C_LANE]  += t2 - t1;
        p->stat[MGI_GS_C_HELP]  += t3 - t2;
        p->stat[MGI_GS_C_REST]  += MGI_CLOCK() - t3;
        mgi_gpu_stat_max(p, MGI_GS_C_SMAX, t1 - t0);
        mgi_gpu_stat_max(p, MGI_GS_C_LMAX, t2 - t1);
        mgi_gpu_stat_max(p, MGI_GS_C_RMAX, MGI_CLOCK() - t0);
        if (!lane_progress) {
            /* make partial batches readable when the lanes ran dry */
            for (i = 0; i < p->ntouched; ++i) {
                mgi_ring_append_close(p->touched[i]);
            }
            p->ntouched = 0;
        }
        ++p->stat[MGI_GS_ROUNDS];
        if (p->qseq != p->qseq_pub) {
            /* the round began after the request, and every thread's work
             * of it is done (the barriers of mgi_gpu_sync_routes): what
             * the request took out of the tables is no longer this
             * block's (the routes it caches were read again there) */
            MGI_FENCE_SYSTEM();
            d->status->blk[MGI_BID].quiesced = p->qseq;
            p->qseq_pub                      = p->qseq;
        }
        if ((p->stat[MGI_GS_ROUNDS] % MGI_GPU_STOP_POLL) == 0) {
            p->stop = mgi_vld(&d->status->stop);
            for (i = 0; i < MGI_GS_COUNT; ++i) {
                d->status->blk[MGI_BID].stat[i] = p->stat[i];
            }
            MGI_FENCE_SYSTEM();
        }
        p->progress = progress | lane_progress;
    }
    MGI_SYNC();
    return p->progress;
}

/* Emission arrays behind the segment copy in shared memory. */
MGI_SDEV_INLINE void mgi_gpu_emit_init(mgi_gpu_emit_t *e, char *earr)
{
    e->src     = (uint32_t*)earr;
    e->dst_off = e->src + MGI_GPU_MAX_EMIT;
    e->words   = (uint16_t*)(e->dst_off + MGI_GPU_MAX_EMIT);
    e->dst     = e->words + MGI_GPU_MAX_EMIT;
    e->order   = e->dst + MGI_GPU_MAX_EMIT;
    e->tgt     = (uint8_t*)(e->order + MGI_GPU_MAX_EMIT);
}

/* Shared memory of a sorter block: segment copy + emission arrays. */
MGI_INLINE size_t mgi_gpu_smem(size_t seg_size)
{
    return ((seg_size + 15) & ~(size_t)15) +
           MGI_GPU_MAX_EMIT * (2 * sizeof(uint32_t) + 3 * sizeof(uint16_t) +
                               sizeof(uint8_t));
}

#endif

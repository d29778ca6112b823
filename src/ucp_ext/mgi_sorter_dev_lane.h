/**
 * MGI sorter of a GPU endpoint, device side: the receive lanes, whose
 * whole segments go to final rings as jobs that every sorter block
 * helps to copy, and the release of consumed segments and of the sort
 * rings' mirrors.
 *
 * A part of mgi_sorter_dev.h, which includes its parts in order (each
 * uses those before it).
 */
#ifndef MGI_SORTER_DEV_LANE_H_
#define MGI_SORTER_DEV_LANE_H_

#ifndef MGI_SORTER_DEV_H_
#  error "a part of the sorter's device code: include mgi_sorter_dev.h"
#endif

/* The channel of a job that carries a lane segment of EOF records only
 * (MGI_SEG_EOFS): no final segment, no copy; its EOFs count when it
 * retires. */
#define MGI_GPU_EOF_JOB ((mgi_gpu_dch_t*)(uintptr_t)1)

/* Thread 0, receive side: what a lane segment is as a job of
 * mgi_gpu_lane_whole: the channel it goes to whole (every message of one
 * channel and for this endpoint: the sender's sorter marked it),
 * MGI_GPU_EOF_JOB (EOF records only), or NULL when it must be walked. */
MGI_SDEV_INLINE mgi_gpu_dch_t *mgi_gpu_lane_job_ch(const mgi_gpu_dep_t *d,
                                                   mgi_seg_hdr_t *seg,
                                                   uint32_t cap)
{
    uint32_t flag = mgi_ld_acq32(&seg->reserved), key = flag - 1, off = 0;
    const mgi_msg_hdr_t *h;
    mgi_gpu_dch_t *ch;

    if (flag == MGI_SEG_EOFS) {
        /* a segment with an EOF for another endpoint is walked (each EOF
         * relayed or counted there): a source's EOFs for several
         * destinations through one next hop may share a segment */
        while ((h = mgi_seg_next(seg, cap, &off)) != NULL) {
            if (h->dst != d->id) {
                return NULL;
            }
            off += mgi_msg_size(h->len);
        }
        return MGI_GPU_EOF_JOB;
    }
    if ((flag == 0) || (flag == MGI_SEG_MIXED) || ((key >> 16) != d->id)) {
        return NULL;
    }
    ch = mgi_gpu_ch(d, (uint16_t)key);
    if ((ch == NULL) || (ch->nfinal == 0) ||
        (ch->self_dst == MGI_GPU_NO_DST)) {
        return NULL;
    }
    return ch;
}

/* Thread 0: a lane's RTail from its host control words into the ring,
 * before the lane is read (the lane's readers are thread 0 as well).
 * Returns the segments RTail moved by since the last pull. */
MGI_SDEV_INLINE uint32_t mgi_gpu_lane_pull(const mgi_gpu_dep_t *d,
                                           uint32_t lane)
{
    mgi_ring_t *r;
    uint32_t t, old;

    if ((d->lane_ctl == NULL) || (lane + 1 == d->nlanes)) {
        return 0; /* control words in the ring, or the loopback lane */
    }
    r   = mgi_gpu_lane(d, lane);
    old = r->prod_tail;
    t   = mgi_ld_acq32(&d->lane_ctl[lane].prod_tail);
    if (t != old) {
        /* the producer wrote the segments before it published t */
        r->prod_head = t;
        mgi_st_rel32(&r->prod_tail, t);
    }
    return t - old;
}

/* Thread 0: the ring's RHead out to the host control words, after the lane
 * was read: the producer may then overwrite those slots. */
MGI_SDEV_INLINE void mgi_gpu_lane_push(const mgi_gpu_dep_t *d, uint32_t lane)
{
    mgi_ring_t *r;
    uint32_t c;

    if ((d->lane_ctl == NULL) || (lane + 1 == d->nlanes)) {
        return;
    }
    r = mgi_gpu_lane(d, lane);
    c = r->cons_tail;
    /* the last value stored, kept in GPU memory: a load of the host word
     * would cross PCIe every round */
    if (c != d->ljobs[lane].pushed) {
        mgi_fence_publish(); /* our reads of the slots are done */
        *(volatile uint32_t*)&d->lane_ctl[lane].cons_tail = c;
        d->ljobs[lane].pushed = c;
    }
}

enum {
    MGI_GPU_LANE_IDLE = 0,   /* nothing to do */
    MGI_GPU_LANE_MOVED,      /* jobs retired or issued */
    MGI_GPU_LANE_WALK        /* the head segment must be walked */
};

/* Block: the first i < n (n the same in every thread) for which stop(i)
 * holds, or n; stop(i) runs once per i, on thread i % MGI_NTH, and may
 * keep per-slot results. The same answer to every thread. */
template <typename F>
MGI_SDEV uint32_t mgi_gpu_first(mgi_gpu_pass_t *p, uint32_t n, F stop)
{
    uint32_t i;

    MGI_SYNC();                      /* the last answer was read */
    if (MGI_TID == 0) {
        p->first = (int)n;
    }
    MGI_SYNC();
    for (i = MGI_TID; i < n; i += MGI_NTH) {
        if (stop(i)) {
            MGI_ATOMIC_MIN(&p->first, (int)i);
        }
    }
    MGI_SYNC();
    return (uint32_t)p->first;
}

/* Block: release n segments at a ring's RHead, their resets spread over
 * the threads; thread 0 then publishes RHead (single consumer). refs: a
 * sort ring's, whose MGI_SEG_REF segments (MGI_SEND_ZCOPY) tell the stage
 * segments they refer to that they were read (the mover released them
 * once its put of them completed); the stage ring's owner then recycles
 * them in ring order (mgi_gpu_stage_retire). */
MGI_SDEV void mgi_gpu_release(mgi_ring_t *r, uint32_t n, int refs = 0)
{
    const uint32_t c = r->cons_tail;
    const mgi_seg_ref_t *ref;
    mgi_seg_hdr_t *seg;
    uint32_t i, k;

    for (i = MGI_TID; i < n; i += MGI_NTH) {
        seg = mgi_ring_seg(r, c + i);
        if (refs && (seg->reserved == MGI_SEG_REF)) {
            ref = (const mgi_seg_ref_t*)mgi_seg_payload(seg);
            for (k = 0; k < ref->nseg; ++k) {
                mgi_st_rel32(&((mgi_seg_hdr_t*)((char*)ref->seg +
                                                (size_t)k *
                                                r->seg_size))->commit,
                             MGI_SEG_READ);
            }
        }
        mgi_ring_seg_recycle(r, c + i);
    }
    MGI_SYNC();
    if ((MGI_TID == 0) && (n > 0)) {
        MGI_FENCE(); /* every thread's resets before the new RHead */
        mgi_ring_advance(r, n);
    }
}

/* Block: the mirror's reference table for the n segments from `ready` on
 * about to be published (a thread each; thread 0 publishes after the
 * barrier, with a system-scope fence): the referred stage segments of a
 * MGI_SEG_REF, else none (the data is in the sort ring's slot). */
MGI_SDEV void mgi_gpu_mirror_refs(mgi_ring_t *r, mgi_ring_mirror_t *m,
                                  uint32_t ready, uint32_t n)
{
    mgi_ring_mirror_ref_t *t = mgi_ring_mirror_refs(m);
    const mgi_seg_ref_t *ref;
    mgi_seg_hdr_t *seg;
    uint32_t k;

    for (k = MGI_TID; k < n; k += MGI_NTH) {
        seg = mgi_ring_seg(r, ready + k);
        mgi_ring_mirror_ref_t e = {0, 0, 0};
        if (seg->reserved == MGI_SEG_REF) {
            ref    = (const mgi_seg_ref_t*)mgi_seg_payload(seg);
            e.addr = (uint64_t)(uintptr_t)ref->seg;
            e.nseg = ref->nseg;
        }
        t[(ready + k) & r->mask] = e;   /* the table has the ring's size */
    }
    MGI_SYNC();
}

/* Block: mgi_ring_mirror_sync with the block's threads (a sort ring's
 * owner): recycle what the mover released, publish the segments that
 * became ready. One thread checking and resetting a segment at a time (a
 * few dependent L2 round trips each) bound a sort ring to ~220k segments/s.
 * refs: the endpoint sends by reference (MGI_SEND_ZCOPY), and every mirror
 * of its sort rings has a table of the ring's size (the endpoint's
 * setting, not the mirror's word in host memory: no read across PCIe per
 * sync). Returns segments published + recycled (to every thread). */
MGI_SDEV uint32_t mgi_gpu_mirror_sync(mgi_gpu_pass_t *p, mgi_ring_t *r,
                                      mgi_ring_mirror_t *m, int refs)
{
    uint32_t i, n, ready;

    if (MGI_TID == 0) {
        n = mgi_ld_acq32(&m->released) - r->cons_tail;
        p->m_rel = ((int32_t)n > 0) ? n : 0;
    }
    MGI_SYNC();
    mgi_gpu_release(r, p->m_rel, refs); /* ends with a barrier */
    MGI_SYNC();
    if (MGI_TID == 0) {
        p->m_ready  = m->ready;      /* written by this thread alone */
        p->m_closed = mgi_ring_mirror_closed(r, m);
    }
    MGI_SYNC();
    /* segments from `ready` on: closed (below RTail) and fully committed */
    ready = p->m_ready;
    i     = mgi_gpu_first(p, p->m_closed, [&](uint32_t k) {
        return !mgi_ring_seg_full(r, ready + k);
    });
    n     = p->m_rel;
    if (refs && (i > 0)) {
        /* where each one's data is, for the mover (MGI_SEND_ZCOPY) */
        mgi_gpu_mirror_refs(r, m, ready, i);
    }
    if ((MGI_TID == 0) && (i > 0)) {
        mgi_fence_publish(); /* the mover puts them with a copy engine */
        mgi_st_rel32(&m->ready, ready + i);
    }
    MGI_SYNC();
    return i + n;
}

/* Block: the final-ring reservations of the n jobs about to be issued (job
 * k in slot base + k): job k takes ring rr + k of its channel's final rings,
 * and the jobs of one ring reserve in job order, a thread per ring when all
 * n are of one channel, else thread 0 one job after the other. (Reserving a
 * thread per job let two jobs of one ring swap places there, and a
 * source's tuples with them: the consumer reads a ring in reservation
 * order.) A full segment's worth fits only a fresh segment, at 0. Returns
 * the first job whose ring was full (n: none); p->jres[k] says which
 * reserved. */
/* A whole move's slot in final ring r of its channel (j->fring): with
 * this block's hint for r, passing RTail when it fills the slot, since
 * the commit comes only when the move was copied */
MGI_SDEV_INLINE int mgi_gpu_final_reserve(mgi_gpu_pass_t *p,
                                          mgi_gpu_job_t *j, uint32_t r,
                                          uint32_t cap)
{
    return mgi_ring_append_reserve_late(j->fring, cap,
                                        (r < MGI_GPU_FINAL_HINTS) ?
                                        &p->fhint[r] : NULL,
                                        &j->fseg, &j->foff, &j->fpos);
}

MGI_SDEV uint32_t mgi_gpu_lane_reserve(mgi_gpu_pass_t *p,
                                       mgi_gpu_lane_jobs_t *lj, uint32_t base,
                                       uint32_t off, uint32_t n, uint32_t cap)
{
    mgi_gpu_dch_t *ch;
    mgi_gpu_job_t *j;
    uint32_t k, r, nf, same;

    for (k = MGI_TID; k < n; k += MGI_NTH) {
        p->jres[off + k] = 0;
    }
    same = mgi_gpu_first(p, n, [&](uint32_t i) {
        return p->jch[off + i] != p->jch[off];
    });
    if (MGI_TID == 0) {
        p->rfirst = (int)n;
        if ((n > 0) && (same == n)) {
            p->j_rr = MGI_ATOMIC_ADD(&p->jch[off]->rr, n);
        }
    }
    MGI_SYNC();
    if ((n > 0) && (same == n)) {
        ch = p->jch[off];
        nf = ch->nfinal;
        for (r = MGI_TID; r < nf; r += MGI_NTH) {
            for (k = (r + nf - p->j_rr % nf) % nf; k < n; k += nf) {
                j        = &lj->job[(base + k) % MGI_GPU_LANE_JOBS];
                j->fring = ch->final[r];
                if (mgi_gpu_final_reserve(p, j, r, cap) != MGI_RING_OK) {
                    MGI_ATOMIC_MIN(&p->rfirst, (int)k);
                    break;
                }
                p->jres[off + k] = 1;
            }
        }
    } else if (MGI_TID == 0) {
        for (k = 0; k < n; ++k) {
            ch       = p->jch[off + k];
            j        = &lj->job[(base + k) % MGI_GPU_LANE_JOBS];
            r        = MGI_ATOMIC_ADD(&ch->rr, 1u) % ch->nfinal;
            j->fring = ch->final[r];
            if (mgi_gpu_final_reserve(p, j, r, cap) != MGI_RING_OK) {
                p->rfirst = (int)k;
                break;
            }
            p->jres[off + k] = 1;
        }
    }
    MGI_SYNC();
    return (uint32_t)p->rfirst;
}

/* Thread 0, receive side: count the EOF records of a lane segment marked
 * MGI_SEG_EOFS (mgi_gpu_recv_eof), once the jobs before it retired. */
MGI_SDEV void mgi_gpu_lane_eofs(const mgi_gpu_dep_t *d,
                                const mgi_seg_hdr_t *seg, uint32_t cap)
{
    const mgi_msg_hdr_t *h;
    uint32_t off = 0;

    while ((h = mgi_seg_next((mgi_seg_hdr_t*)seg, cap, &off)) != NULL) {
        if ((h->len == MGI_MSG_LEN_EOF) && (h->dst == d->id)) {
            mgi_gpu_recv_eof(d, h);
        } else {
            /* a tuple beside an EOF marks its segment MIXED */
            mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
        }
        off += mgi_msg_size(h->len);
    }
}

/* Thread 0, after an issue step of a lane from another rank: the busy
 * steps' counters (ready segments beyond the `count` jobs in flight) and
 * why the step's issue stopped, from the first segment not taken (n0 of
 * nfree free job slots), the whole and EOF ones before the EOF cut (n)
 * and the jobs issued (m) */
MGI_SDEV_INLINE void mgi_gpu_issue_stats(mgi_gpu_pass_t *p, uint32_t ready,
                                         uint32_t count, uint32_t nfree,
                                         uint32_t n0, uint32_t n, uint32_t m)
{
    const unsigned long long now = MGI_GTIME();
    const int busy               = (int32_t)ready > 0;

    if (busy) {
        p->stat[MGI_GS_BUSY_STEPS]  += 1;
        p->stat[MGI_GS_BUSY_ISSUED] += m;
        p->stat[MGI_GS_BUSY_HELD]   += count;
        p->stat[MGI_GS_BUSY_READY]  += ready;
        if (p->busy_prev) {
            p->stat[MGI_GS_BUSY_GAPS]  += 1;
            p->stat[MGI_GS_T_BUSY_GAP] += now - p->busy_ns;
        }
        if (m < n) {
            p->stat[MGI_GS_STOP_FINAL]++;
        } else if (n < n0) {
            p->stat[MGI_GS_STOP_EOF]++;
        } else if (n0 >= ready) {
            p->stat[MGI_GS_STOP_ALL]++;
        } else if (n0 == nfree) {
            p->stat[MGI_GS_STOP_WINDOW]++;
        } else if (p->jseg[n0] == NULL) {
            p->stat[MGI_GS_STOP_UNPUB]++;
        } else {
            p->stat[MGI_GS_STOP_MIXED]++;
        }
    }
    p->busy_prev = busy;
    p->busy_ns   = now;
}

/* Block, receive side: whole lane segments go to final rings as jobs that
 * every sorter block helps to copy, so one source's traffic is not bound
 * to the one block that owns its lane. The owner retires finished jobs in
 * lane order (commit the final segment, release the lane segment), then
 * issues jobs for the next ready segments while they are whole and the
 * final rings have room. Job slots are handled by a thread each: a
 * thread-0 loop paid a dozen dependent L2 round trips per segment, which
 * bound a lane to ~14 GB/s. A segment of EOF records only (a sender's
 * flush, MGI_SEG_EOFS) is a job too, without a copy: its EOFs count when
 * it retires, after the commits of every job before it, and the whole
 * moves behind it go on. A segment that must be walked waits until no job
 * of the lane is in flight: its EOF records then count after every tuple
 * before them. (Walked, each sender block's EOF held its lane's jobs for
 * a round or two: ~1 ms of an Exchange's end between two processes.) */
MGI_SDEV int mgi_gpu_lane_whole(const mgi_gpu_dep_t *d, mgi_gpu_pass_t *p,
                                mgi_ring_t *ring, mgi_gpu_lane_jobs_t *lj)
{
    const uint32_t cap = mgi_ring_cap(ring);
    const unsigned tid = MGI_TID, nth = MGI_NTH;
    /* by reference: any lane but the loopback lane */
    const int zcopy    = d->recv_zcopy &&
                         (ring != mgi_gpu_loopback(d));
    uint32_t t, head, count, nfree, n, nd, m, e, neof = 0, n0, ready = 0;
    uint32_t runs;
    mgi_seg_hdr_t *seg;
    mgi_seg_ref_t *ref;
    mgi_gpu_job_t *j;
    const int remote   = (d->lane_ctl != NULL) &&
                         (ring != mgi_gpu_loopback(d));
    unsigned long long c0 = MGI_CLOCK(), c1, cs, cc, cp, cr;
    int ret;

    /* retire the leading finished jobs, in lane order */
    if (tid == 0) {
        p->whole = MGI_GPU_LANE_IDLE;
    }
    MGI_SYNC();
    head  = lj->head;
    count = lj->count;
    n     = mgi_gpu_first(p, count, [&](uint32_t k) {
        j = &lj->job[(head + k) % MGI_GPU_LANE_JOBS];
        return mgi_ld_acq32(&j->done) == 0;
    });
    cs = MGI_CLOCK();
    for (t = tid; (t < n) && !zcopy; t += nth) {
        j = &lj->job[(head + t) % MGI_GPU_LANE_JOBS];
        if (j->fring != NULL) {
            mgi_ring_append_commit(j->fring, j->fseg, j->foff, cap, j->fpos);
        }
    }
    /* EOFs after the commits of every job before them: each thread's
     * commits fenced before the barrier in mgi_gpu_first, thread 0's
     * count after it (the count ends with a fence before the sources'
     * numbers) */
    if (n > 0) {
        MGI_FENCE();
    }
    cc = MGI_CLOCK();
    e = mgi_gpu_first(p, n, [&](uint32_t k) {
        return lj->job[(head + k) % MGI_GPU_LANE_JOBS].fring == NULL;
    });
    for (t = e; (tid == 0) && (t < n); ++t) {
        j = &lj->job[(head + t) % MGI_GPU_LANE_JOBS];
        if (j->fring == NULL) {
            mgi_gpu_lane_eofs(d, (const mgi_seg_hdr_t*)j->src, cap);
            ++neof;
        }
    }
    mgi_gpu_release(ring, n);
    if ((tid == 0) && (n > 0)) {
        p->stat[MGI_GS_JOB_RETIRES] += 1;
        p->stat[MGI_GS_T_JRETIRE]   += MGI_GTIME() -
                                       lj->job[head].issued_ns;
        p->stat[MGI_GS_WHOLE_SEGS] += n - neof;
        p->stat[MGI_GS_LANE_EOFS]  += neof;
        lj->head       = (head + n) % MGI_GPU_LANE_JOBS;
        lj->count      = count - n;
        lj->retired   += n;
        p->whole       = MGI_GPU_LANE_MOVED;
    }
    MGI_SYNC();

    /* issue: segment count + t for thread t, while whole and ready */
    c1    = MGI_CLOCK();
    head  = lj->head;
    count = lj->count;
    nfree = ((count > 0) || (ring->cons_off == 0)) ?
            MGI_GPU_LANE_JOBS - count : 0;
    if ((tid == 0) && remote) {
        /* a lane from another rank: what waits in it for its owner */
        p->stat[MGI_GS_LANE_LOOKS]   += 1;
        e = mgi_ring_count(ring);
        ready = e - count;
        p->stat[MGI_GS_LANE_HELD]    += count;
        p->stat[MGI_GS_LANE_WAITING] += ready;
        p->stat[MGI_GS_LANE_WINDOW]  += (count == MGI_GPU_LANE_JOBS);
        mgi_gpu_stat_max(p, MGI_GS_LANE_MAXRING, e);
    }
    n = mgi_gpu_first(p, nfree, [&](uint32_t k) {
        seg        = mgi_ring_peek(ring, count + k);
        p->jseg[k] = seg;
        p->jch[k]  = (seg != NULL) ? mgi_gpu_lane_job_ch(d, seg, cap) : NULL;
        return p->jch[k] == NULL;
    });
    n0 = n;
    cp = MGI_CLOCK();
    /* runs of whole segments, each followed by a run of EOF segments (a
     * source's flush): each run of whole ones reserves in final rings, up
     * to MGI_GPU_ISSUE_RUNS runs a step; jobs [0, m) issue, and a run
     * whose reservation stopped at a full final ring ends the step at n
     * with its reservations from m on given back. (One run a step had
     * made every whole segment behind an EOF wait a step: 40-48 of a
     * device send's busy steps at its end.) */
    n = 0;
    m = 0;
    for (runs = 0; (n < n0) && (runs < MGI_GPU_ISSUE_RUNS); ++runs) {
        nd = mgi_gpu_first(p, n0 - n, [&](uint32_t k) {
            return p->jch[n + k] == MGI_GPU_EOF_JOB;
        });
        e  = mgi_gpu_lane_reserve(p, lj, head + count + n, n, nd, cap);
        if (e < nd) {
            m  = n + e;
            n += nd;
            break;
        }
        n += nd;
        n += mgi_gpu_first(p, n0 - n, [&](uint32_t k) {
            return p->jch[n + k] != MGI_GPU_EOF_JOB;
        });
        m  = n;
    }
    cr = MGI_CLOCK();
    for (t = tid; t < n; t += nth) {
        j = &lj->job[(head + count + t) % MGI_GPU_LANE_JOBS];
        if ((t >= m) && (p->jch[t] == MGI_GPU_EOF_JOB)) {
            continue;   /* an EOF segment behind a full final ring */
        }
        if (p->jch[t] == MGI_GPU_EOF_JOB) {
            /* copied by nobody: a helper that claims it sets done (one
             * that finds it retired and its slot reused cannot: its avail
             * is another number's), and by reference no helper takes
             * jobs */
            j->src   = (const char*)p->jseg[t];
            j->dst   = NULL;
            j->fring = NULL;
            j->issued_ns = MGI_GTIME();
            j->bytes = 0;
            j->done  = zcopy;
            j->avail = lj->retired + count + t;
            continue;
        }
        if (t >= m) {
            /* jobs issue in lane order: a reservation behind a full final
             * ring is given back as padding */
            if (p->jres[t]) {
                mgi_ring_append_cancel(j->fring, j->fseg, j->foff, cap,
                                       j->fpos);
            }
            continue;
        }
        j->src   = mgi_seg_payload(p->jseg[t]);
        j->dst   = mgi_seg_payload(j->fseg);
        j->bytes = cap;
        j->done  = 0;
        j->avail = lj->retired + count + t;
        j->issued_ns = MGI_GTIME();
        if (zcopy) {
            /* the reference and the job's state before the commit that
             * shows the final segment to its consumer */
            ref            = (mgi_seg_ref_t*)j->dst;
            ref->seg       = p->jseg[t];
            ref->done      = &j->done;
            ref->nseg      = 1;
            j->fseg->reserved = MGI_SEG_REF;
            mgi_ring_append_commit(j->fring, j->fseg, j->foff, cap,
                                   j->fpos);
        }
    }
    MGI_FENCE();
    MGI_SYNC();
    if (tid == 0) {
        /* the jobs' fields before the number that lets helpers take them;
         * references are no helper's */
        mgi_st_rel32(&lj->issued, lj->issued + (zcopy ? 0 : m));
        lj->count  = count + m;
        p->stat[MGI_GS_JOBS] += m;
        if (m > 0) {
            p->whole = MGI_GPU_LANE_MOVED;
        }
        if (m < n) {
            /* final ring full: the consumers must read */
            p->stat[MGI_GS_FINAL_FULL]++;
        } else if ((n < nfree) && (p->jseg[n] == NULL)) {
            p->stat[MGI_GS_LANE_EMPTY] += (count == 0);
        } else if ((n < nfree) && (count + m == 0)) {
            p->whole = MGI_GPU_LANE_WALK;  /* the head segment is mixed */
        }
        if ((p->whole == MGI_GPU_LANE_IDLE) && (count == 0) &&
            (ring->cons_off != 0)) {
            p->whole = MGI_GPU_LANE_WALK;  /* a walk left a segment half done */
        }
    }
    MGI_SYNC();
    ret = p->whole;
    if ((tid == 0) && remote) {
        p->stat[MGI_GS_C_LRETIRE] += c1 - c0;
        p->stat[MGI_GS_C_LISSUE]  += MGI_CLOCK() - c1;
        p->stat[MGI_GS_C_RSCAN]   += cs - c0;
        p->stat[MGI_GS_C_RCOMMIT] += cc - cs;
        p->stat[MGI_GS_C_IPEEK]   += cp - c1;
        p->stat[MGI_GS_C_IRES]    += cr - cp;
        mgi_gpu_issue_stats(p, ready, count, nfree, n0, n, m);
    }
    MGI_SYNC();
    return ret;
}

/* Block: claim one issued job of lane jobs lj, or none (NULL in p->job).
 * Its threads look at the issued jobs not yet retired (a thread each,
 * from a job that depends on the block, so that helpers spread over them)
 * for the first whose avail still holds its number; thread 0 takes it
 * with a compare-and-swap to ~number, and on a lost race looks again, up
 * to MGI_GPU_CLAIM_TRIES times. The job's fields were written before the
 * owner's release of `issued`, which the look acquired. */
MGI_SDEV void mgi_gpu_claim(mgi_gpu_pass_t *p, mgi_gpu_lane_jobs_t *lj)
{
    uint32_t iss, lo, n, k, s, tries;
    mgi_gpu_job_t *j;

    if (MGI_TID == 0) {
        p->job  = NULL;
        iss     = mgi_ld_acq32(&lj->issued);
        lo      = mgi_vld(&lj->retired);
        /* a stale `retired` is behind: no slot holds a number below
         * issued - MGI_GPU_LANE_JOBS any more */
        if ((int32_t)(iss - lo) > MGI_GPU_LANE_JOBS) {
            lo = iss - MGI_GPU_LANE_JOBS;
        }
        p->h_lo = lo;
        p->h_n  = ((int32_t)(iss - lo) > 0) ? iss - lo : 0;
    }
    MGI_SYNC();
    lo = p->h_lo;
    n  = p->h_n;
    for (tries = 0; (tries < MGI_GPU_CLAIM_TRIES) && (n > 0); ++tries) {
        k = mgi_gpu_first(p, n, [&](uint32_t i) {
            s = lo + (MGI_BID + i) % n;
            return mgi_vld(&lj->job[s % MGI_GPU_LANE_JOBS].avail) == s;
        });
        if (k == n) {
            break;                   /* every one taken */
        }
        if (MGI_TID == 0) {
            s = lo + (MGI_BID + k) % n;
            j = &lj->job[s % MGI_GPU_LANE_JOBS];
            if (MGI_ATOMIC_CAS(&j->avail, s, ~s) == s) {
                p->job = j;
                MGI_ATOMIC_ADD(&lj->claimed, 1u);
            }
            MGI_FENCE(); /* the claim before the job's fields are read */
        }
        MGI_SYNC();
        if (p->job != NULL) {
            break;
        }
    }
}

/* Block: copy whole-segment jobs of any lane, at most max_jobs. The lanes
 * are looked at by a thread each (their counts are loads in parallel, one
 * after the other they were most of a round), then the block claims an
 * issued job of the first lane with one unclaimed, counting from a lane
 * that depends on the block (mgi_gpu_claim), and copies it. Returns 1
 * when it copied something. */
MGI_SDEV int mgi_gpu_help(const mgi_gpu_dep_t *d, mgi_gpu_pass_t *p,
                          char *sseg, uint32_t max_jobs)
{
    uint32_t l, tries, copied = 0;
    unsigned long long t0;
    mgi_gpu_lane_jobs_t *lj;
    mgi_gpu_job_t *j;

    for (tries = 0; tries < max_jobs; ++tries) {
        l = mgi_gpu_first(p, d->nlanes, [&](uint32_t k) {
            lj = &d->ljobs[(MGI_BID + k) % d->nlanes];
            return (int32_t)(mgi_ld_acq32(&lj->issued) -
                             mgi_ld_acq32(&lj->claimed)) > 0;
        });
        if (l == d->nlanes) {
            break;                   /* nothing issued and unclaimed */
        }
        mgi_gpu_claim(p, &d->ljobs[(MGI_BID + l) % d->nlanes]);
        j = p->job;
        if (j == NULL) {
            continue;                /* others took them: look again */
        }
        if (MGI_TID == 0) {
            p->stat[MGI_GS_JOB_CLAIMS] += 1;
            p->stat[MGI_GS_T_JWAIT]    += MGI_GTIME() - j->issued_ns;
        }
        t0 = MGI_CLOCK();
        if (j->bytes > 0) {
            mgi_gpu_copy_global(p, sseg, j->dst, j->src, j->bytes);
        }
        MGI_FENCE();
        MGI_SYNC();
        if (MGI_TID == 0) {
            mgi_st_rel32(&j->done, 1u);
            p->stat[MGI_GS_CHUNKS] += (j->bytes > 0);
            p->stat[MGI_GS_C_HCOPY] += MGI_CLOCK() - t0;
        }
        ++copied;
    }
    MGI_SYNC();
    return copied > 0;
}

/* Block: mgi_gpu_mirror_sync of the sort rings this block owns (index
 * BID - route_base modulo the grid). Returns 1 on progress. */
MGI_SDEV int mgi_gpu_sync_routes(const mgi_gpu_dep_t *d, mgi_gpu_pass_t *p)
{
    mgi_ring_mirror_t *m;
    uint32_t i, nroutes;
    int progress = 0;

    if (MGI_TID == 0) {
        p->nroutes = mgi_vld(&d->nroutes); /* the same bound for all */
    }
    MGI_SYNC();
    nroutes = p->nroutes;
    for (i = (MGI_BID + MGI_NBLK - d->route_base % MGI_NBLK) % MGI_NBLK;
         i < nroutes; i += MGI_NBLK) {
        m = mgi_vld(&d->mirror[i]);
        if ((m != NULL) &&  /* NULL: a peer's lane, read by its sorter */
            (mgi_gpu_mirror_sync(p, mgi_vld(&d->sort[i]), m,
                                 d->send_zcopy > 0) > 0)) {
            progress = 1;
        }
    }
    MGI_SYNC(); /* p->nroutes read by all before it is written again */
    return progress;
}

#endif

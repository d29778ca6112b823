/**
 * MGI sorter of a GPU endpoint, device side: a pass's shared state and
 * emission arrays, and what every stage uses: block copies (bulk
 * copies on sm_90 and later), the endpoint's lanes, channels and sort
 * rings by number, a pass's targets.
 *
 * A part of mgi_sorter_dev.h, which includes its parts in order (each
 * uses those before it).
 */
#ifndef MGI_SORTER_DEV_PASS_H_
#define MGI_SORTER_DEV_PASS_H_

#ifndef MGI_SORTER_DEV_H_
#  error "a part of the sorter's device code: include mgi_sorter_dev.h"
#endif

/* ------------------------------------------------------- device: helpers */

/* Block: copy n 16-byte lines, line i from src(i) to dst(i), with
 * MGI_GPU_COPY_ILP loads in flight per thread. */
template <typename S, typename D>
MGI_SDEV_INLINE void mgi_gpu_copy_lines(uint32_t n, S src, D dst)
{
    const unsigned tid = MGI_TID, nth = MGI_NTH;
    mgi_v16_t v[MGI_GPU_COPY_ILP];
    uint32_t base, i, u;

    for (base = tid; base < n; base += nth * MGI_GPU_COPY_ILP) {
#if defined(__CUDACC__)
#  pragma unroll
#endif
        for (u = 0; u < MGI_GPU_COPY_ILP; ++u) {
            i = base + u * nth;
            if (i < n) {
                v[u] = MGI_LD16(src(i));
            }
        }
#if defined(__CUDACC__)
#  pragma unroll
#endif
        for (u = 0; u < MGI_GPU_COPY_ILP; ++u) {
            i = base + u * nth;
            if (i < n) {
                MGI_ST16(dst(i), v[u]);
            }
        }
    }
}

/* A load of a word that other threads may write meanwhile (with atomics
 * or after a fence): volatile on the GPU, a relaxed atomic in the
 * emulation, where ThreadSanitizer checks it */
template <typename T>
MGI_SDEV_INLINE T mgi_vld(const T *p)
{
#if defined(__CUDACC__)
    return *(const volatile T*)p;
#else
    return __atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

/* The same for a float (the emulation's atomics take integers) */
MGI_SDEV_INLINE float mgi_vld(const float *p)
{
#if defined(__CUDACC__)
    return *(const volatile float*)p;
#else
    uint32_t v = __atomic_load_n((const uint32_t*)p, __ATOMIC_RELAXED);
    float f;

    memcpy(&f, &v, sizeof(f));
    return f;
#endif
}

/* Shared state of one pass over a segment. */
typedef struct mgi_gpu_pass {
    uint32_t      nemit, ntgt, end_off;
    int           at_end, stop_eof, blocked, progress;
    int           relay_wait;   /* the walk stopped at a message this
                                   relay has no hop for yet */
    int           wait_t;       /* mgi_gpu_place: the first target
                                 * without room (MGI_GPU_MAX_TARGETS:
                                 * none), one answer for all threads */
    mgi_ring_t    *wait_ring;   /* a target without room: the pass is
                                 * blocked on it (mgi_gpu_place) */
    uint32_t      wait_sz;
    int           skip;         /* mgi_gpu_ring: the stage ring still
                                 * waits for room there */
    mgi_ring_t    *tgt_ring[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_bytes[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_cnt[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_key[MGI_GPU_MAX_TARGETS]; /* MGI_SEG_KEY or MIXED */
    uint32_t      tgt_first[MGI_GPU_MAX_TARGETS + 1];
    uint32_t      tgt_word0[MGI_GPU_MAX_TARGETS + 1];
    mgi_seg_hdr_t *tgt_seg[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_off[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_pos[MGI_GPU_MAX_TARGETS];
    int           tgt_ok[MGI_GPU_MAX_TARGETS];
    uint32_t      tgt_mark[MGI_GPU_MAX_TARGETS]; /* mgi_seg_mark_begin's */
    /* final rings touched since the lanes last ran dry */
    mgi_ring_t    *touched[MGI_GPU_MAX_TARGETS];
    uint32_t      ntouched;
    mgi_seg_hdr_t *seg;
    uint32_t      start;
    int           whole;    /* mgi_gpu_lane_whole's decision */
    /* mgi_gpu_lane_whole: a thread per job slot */
    int           first;            /* mgi_gpu_first's answer */
    int           rfirst;           /* mgi_gpu_lane_reserve's answer: its
                                     * own word, as threads still read
                                     * mgi_gpu_first's when it starts */
    uint32_t      j_rr;             /* mgi_gpu_lane_reserve: first ring */
    uint32_t      m_rel, m_ready, m_closed; /* mgi_gpu_mirror_sync */
    uint32_t      nroutes;          /* routes this round, one view */
    mgi_seg_hdr_t *jseg[MGI_GPU_LANE_JOBS];
    mgi_gpu_dch_t *jch[MGI_GPU_LANE_JOBS];
    int           jres[MGI_GPU_LANE_JOBS];
    mgi_gpu_job_t *job;
    uint32_t      h_lo, h_n;        /* mgi_gpu_claim: the jobs looked at */
    /* the lane steps' reservations in final ring r of a channel
     * (mgi_ring_append_reserve_late; a hint of another channel's ring
     * r is no hint) */
    mgi_ring_hint_t fhint[MGI_GPU_FINAL_HINTS];
    unsigned long long busy_ns;     /* the last busy issue step's time */
    int           busy_prev;        /* the last issue step was busy */
    int           stop;
    uint32_t      qseq;         /* thread 0: quiesce_seq as the round began */
    uint32_t      qseq_pub;     /*   and as last published */
    unsigned long long stat[MGI_GS_COUNT];   /* MGI_GPU_STATS */
    /* mgi_gpu_stage_whole: the sort ring, key and reservation */
    mgi_ring_t    *w_ring;
    mgi_seg_hdr_t *w_seg;
    uint32_t      w_key, w_off, w_pos;
    uint32_t      w_rr;         /* thread 0: whole moves straight to a
                                 * final ring so far; the next one's ring
                                 * counts on from the block's start
                                 * (mgi_gpu_direct_final) */
    int           w_res;
    int           w_ref;        /* the final ring takes it by reference */
    uint32_t      w_nref;       /* a sort ring takes w_nref stage segments
                                 * by reference (MGI_SEND_ZCOPY), 0: not */
    int           w_send;       /* a sort ring may take it by reference */
    uint32_t      w_lim, w_avail, w_pos0; /* mgi_gpu_send_run */
    /* the parallel walk of a run of like messages (mgi_gpu_walk_run) */
    int           run, run_n, run_cut;
    uint32_t      run_relayed;  /* of the run, messages for other
                                 * endpoints (a relay's) */
    int           run_self;     /* the run's channel has final rings here */
    uint32_t      run_msz, run_len, run_ndst;
    int           contig;       /* one target, messages in segment order:
                                 * placed as one block copy, no emission
                                 * arrays (mgi_gpu_walk_run) */
    uint32_t      unif_words;   /* words of every message of the pass, 0:
                                 * sizes differ (mgi_gpu_walk) */
    uint16_t      run_ch;
    mgi_gpu_dch_t *run_dch;     /* the run's channel */
    uint32_t      dtab[MGI_GPU_DTAB];       /* dst + 1 of a slot, 0: free */
    uint8_t       dtgt[MGI_GPU_DTAB];       /* target of a slot */
    uint8_t       dlist[MGI_GPU_MAX_TARGETS]; /* slots in use */
    uint32_t      tbase[MGI_GPU_MAX_TARGETS];
    uint16_t      wcnt[MGI_GPU_MAX_WARPS][MGI_GPU_MAX_TARGETS];
    /* bulk copies (MGI_GPU_TMA): a barrier per chunk, their phases */
    uint64_t      tma_bar[MGI_GPU_TMA_BARS];
    uint32_t      tma_phase;
} mgi_gpu_pass_t;

/* Emission arrays, dynamic shared memory after the segment copy. */
typedef struct mgi_gpu_emit {
    uint32_t *src;      /* message offset in the payload */
    uint32_t *dst_off;  /* offset in its target's reservation */
    uint16_t *words;    /* message 8-byte words (a 65536-byte message,
                         * header included, did not fit 16 bits of bytes) */
    uint16_t *dst;      /* header dst to write, MGI_GPU_NO_DST: keep */
    uint16_t *order;    /* emissions grouped by target, in order */
    uint8_t  *tgt;
} mgi_gpu_emit_t;

#if MGI_GPU_TMA
MGI_SDEV_INLINE uint32_t mgi_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* Order this thread's generic accesses against its bulk copies (both
 * ways, shared and global memory). */
MGI_SDEV_INLINE void mgi_tma_fence(void)
{
    asm volatile("fence.proxy.async;" ::: "memory");
}

/* n bytes (a multiple of 16, both addresses 16-byte aligned) from global
 * memory into shared memory; completes on mbarrier bar. */
MGI_SDEV_INLINE void mgi_tma_load(void *sdst, const void *gsrc, uint32_t n,
                                  uint64_t *bar)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 :: "r"(mgi_smem_addr(bar)), "r"(n) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [%1], %2, [%3];"
                 :: "r"(mgi_smem_addr(sdst)), "l"(gsrc), "r"(n),
                    "r"(mgi_smem_addr(bar)) : "memory");
}

/* Wait for phase `phase` of bar to complete. A bulk copy that never
 * completes is a fault of the unit: after about 2^34 cycles (8 s) the
 * kernel traps, which the host sees as a CUDA error of the sorter. */
MGI_SDEV_INLINE void mgi_tma_wait(uint64_t *bar, uint32_t phase)
{
    const unsigned long long t0 = clock64();
    uint32_t ok;

    for (;;) {
        asm volatile("{\n\t.reg .pred P;\n\t"
                     "mbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;"
                     "\n\tselp.u32 %0, 1, 0, P;\n\t}"
                     : "=r"(ok) : "r"(mgi_smem_addr(bar)), "r"(phase)
                     : "memory");
        if (ok) {
            return;
        }
        if (clock64() - t0 > (1ull << 34)) {
            __trap();
        }
    }
}

/* n bytes from shared memory to global memory, in this thread's bulk
 * group (mgi_tma_store_wait). */
MGI_SDEV_INLINE void mgi_tma_store(void *gdst, const void *ssrc, uint32_t n)
{
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], "
                 "%2;" :: "l"(gdst), "r"(mgi_smem_addr(ssrc)), "r"(n)
                 : "memory");
}

/* Until every bulk store of this thread is complete (written). */
MGI_SDEV_INLINE void mgi_tma_store_wait(void)
{
    asm volatile("cp.async.bulk.commit_group;\n\t"
                 "cp.async.bulk.wait_group 0;" ::: "memory");
}
#endif

#if MGI_GPU_TMA
/* Bytes of a chunk of a bulk copy of `bytes`: whole 16-byte lines, at
 * most MGI_GPU_TMA_BARS chunks. */
MGI_SDEV_INLINE uint32_t mgi_tma_chunk(uint32_t bytes)
{
    return (bytes / 16 + MGI_GPU_TMA_BARS - 1) / MGI_GPU_TMA_BARS * 16;
}

/* Thread 0: the loads of `bytes` from global src into shared sdst, chunk
 * k completing on barrier k, after the generic accesses before them. */
MGI_SDEV_INLINE void mgi_tma_load_chunks(mgi_gpu_pass_t *p, char *sdst,
                                         const char *src, uint32_t bytes)
{
    const uint32_t per = mgi_tma_chunk(bytes);
    uint32_t off, k;

    mgi_tma_fence();
    for (off = 0, k = 0; off < bytes; off += per, ++k) {
        mgi_tma_load(sdst + off, src + off,
                     (bytes - off < per) ? bytes - off : per, &p->tma_bar[k]);
    }
}
#endif

/* Block, at the kernel's start: the bulk copies' barriers. */
MGI_SDEV_INLINE void mgi_gpu_tma_init(mgi_gpu_pass_t *p)
{
#if MGI_GPU_TMA
    unsigned k;

    if (MGI_TID == 0) {
        for (k = 0; k < MGI_GPU_TMA_BARS; ++k) {
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;"
                         :: "r"(mgi_smem_addr(&p->tma_bar[k])) : "memory");
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        p->tma_phase = 0;
    }
    MGI_SYNC();
#else
    (void)p;
#endif
}

/* Block: `bytes` (a multiple of 16, 16-byte aligned) from global memory at
 * src into shared memory at sdst. Every thread may read sdst after it. */
MGI_SDEV_INLINE void mgi_gpu_copy_in(mgi_gpu_pass_t *p, char *sdst,
                                     const char *src, uint32_t bytes)
{
#if MGI_GPU_TMA
    const uint32_t per   = mgi_tma_chunk(bytes);
    const uint32_t phase = p->tma_phase;
    uint32_t off, k;

    if (bytes == 0) {
        return;
    }
    if (MGI_TID == 0) {
        mgi_tma_load_chunks(p, sdst, src, bytes);
    }
    for (off = 0, k = 0; off < bytes; off += per, ++k) {
        mgi_tma_wait(&p->tma_bar[k], (phase >> k) & 1);
    }
    MGI_SYNC();                 /* every thread read the phase */
    if (MGI_TID == 0) {
        p->tma_phase = phase ^ ((1u << k) - 1);
    }
#else
    mgi_gpu_copy_lines(bytes / 16,
        [&](uint32_t i) -> const char* { return src + 16 * i; },
        [&](uint32_t i) -> char* { return sdst + 16 * i; });
    (void)p;
#endif
}

/* Block: `bytes` (a multiple of 16, 16-byte aligned) from global src to
 * global dst; with bulk copies through sseg (shared memory of at least
 * `bytes`, not in use by a pass). The bytes are written when it returns;
 * the caller fences before it publishes them. */
MGI_SDEV_INLINE void mgi_gpu_copy_global(mgi_gpu_pass_t *p, char *sseg,
                                         char *dst, const char *src,
                                         uint32_t bytes)
{
#if MGI_GPU_TMA
    const uint32_t per = mgi_tma_chunk(bytes);
    uint32_t off, k, n;

    if (MGI_TID == 0) {
        mgi_tma_load_chunks(p, sseg, src, bytes);
        for (off = 0, k = 0; off < bytes; off += per, ++k) {
            n = (bytes - off < per) ? bytes - off : per;
            mgi_tma_wait(&p->tma_bar[k], (p->tma_phase >> k) & 1);
            mgi_tma_store(dst + off, sseg + off, n);
        }
        p->tma_phase ^= (1u << k) - 1;
        mgi_tma_store_wait();
        mgi_tma_fence();        /* the writes before generic publication */
    }
    MGI_SYNC();
#else
    mgi_gpu_copy_lines(bytes / 16,
        [&](uint32_t i) -> const char* { return src + 16 * i; },
        [&](uint32_t i) -> char* { return dst + 16 * i; });
    (void)p;
    (void)sseg;
#endif
}

MGI_SDEV_INLINE void mgi_gpu_count(volatile uint32_t *c)
{
    *c = *c + 1;
}

/* Thread 0: a counter that keeps the largest value seen (the *MAX ones) */
MGI_SDEV_INLINE void mgi_gpu_stat_max(mgi_gpu_pass_t *p, mgi_gpu_stat_t k,
                                      unsigned long long v)
{
    if (v > p->stat[k]) {
        p->stat[k] = v;
    }
}

MGI_SDEV_INLINE mgi_ring_t *mgi_gpu_lane(const mgi_gpu_dep_t *d,
                                                  uint32_t lane)
{
    return (mgi_ring_t*)(d->recv_mem + lane * d->lane_bytes);
}

/* The loopback lane: the receive ring's last, for this endpoint's own
 * tuples. */
MGI_SDEV_INLINE mgi_ring_t *mgi_gpu_loopback(const mgi_gpu_dep_t *d)
{
    return mgi_gpu_lane(d, d->nlanes - 1);
}

/* The channel's table entry, or NULL. An acquire: an id's entry lives in
 * the same device memory for every channel that gets the id (one after
 * the other, the host rewrites it before it publishes the pointer), so
 * the fields read after it must not come from this SM's L1 as an earlier
 * channel of the id left them. */
MGI_SDEV_INLINE mgi_gpu_dch_t *mgi_gpu_ch(const mgi_gpu_dep_t *d,
                                                   uint16_t id)
{
    if (id >= d->max_channels) {
        return NULL;
    }
    return (mgi_gpu_dch_t*)(uintptr_t)mgi_ld_acq64(
            (const uint64_t*)&d->chs[id]);
}

/* Send side: this block's sort ring of the next hop whose first ring is
 * at `slot` (the block's tuples and EOFs for a destination all take one
 * ring, so they stay in order). */
MGI_SDEV_INLINE mgi_ring_t *mgi_gpu_sort_ring(const mgi_gpu_dep_t *d,
                                              int16_t slot)
{
    return mgi_vld(&d->sort[(d->sort_rings > 1) ?
                            slot + MGI_BID % d->sort_rings : slot]);
}

/* The number of `dst` among channel ch's destinations, or -1 (a user
 * kernel's send to another id, another rank's bytes in a lane: no route).
 * A channel has at most MGI_GPU_MAX_TARGETS destinations, and callers keep
 * the answer for a walk or a run. */
MGI_SDEV_INLINE int mgi_gpu_dst_k(const mgi_gpu_dch_t *ch, uint16_t dst)
{
    uint32_t k;

    for (k = 0; (ch != NULL) && (k < ch->ndst) &&
                (k < MGI_GPU_MAX_TARGETS); ++k) {
        if (ch->dst[k] == dst) {
            return (int)k;
        }
    }
    return -1;
}

/* The route slot of channel ch's one next hop towards `dst` at this
 * endpoint (mgi_gpu_dch_t::hop), or MGI_GPU_SLOT_OUT where dst is none of
 * the channel's destinations */
MGI_SDEV_INLINE int16_t mgi_gpu_hop_slot(const mgi_gpu_dch_t *ch,
                                         uint16_t dst)
{
    const int k = mgi_gpu_dst_k(ch, dst);

    return (k < 0) ? (int16_t)MGI_GPU_SLOT_OUT : mgi_vld(&ch->hop[k]);
}

/* Send side: the ring that takes a tuple for `dst` whose hop is at
 * `slot` (mgi_gpu_send_slot), or NULL. */
MGI_SDEV_INLINE mgi_ring_t *mgi_gpu_send_ring(const mgi_gpu_dep_t *d,
                                              uint16_t dst, int16_t slot)
{
    if ((dst == d->id) || (slot == MGI_GPU_SLOT_LOOPBACK)) {
        return mgi_gpu_loopback(d);
    }
    return (slot < 0) ? NULL : mgi_gpu_sort_ring(d, slot);
}

/* Thread 0: how many next hops this endpoint spreads what it sends or
 * relays for destination number k of channel ch over (1: hop[k]) */
MGI_SDEV_INLINE uint32_t mgi_gpu_nsplit(const mgi_gpu_dch_t *ch, int k)
{
    const uint32_t n = mgi_vld(&ch->nsplit[k]);

    return ((n < 2) || (n > MGI_ROUTE_MAX_SPLIT)) ? 1 : n;
}

/* Thread 0: the route slot of next hop i (< n = mgi_gpu_nsplit(ch, k))
 * of destination number k of channel ch */
MGI_SDEV_INLINE int16_t mgi_gpu_hop_at(const mgi_gpu_dch_t *ch, int k,
                                       uint32_t i, uint32_t n)
{
    return (n > 1) ? mgi_vld(&ch->split_slot[k][i]) : mgi_vld(&ch->hop[k]);
}

/* Thread 0: the route slot that takes this endpoint's tuples of channel
 * ch for its destination number k, its own or relayed (-1: none of its
 * destinations): the next hop's, or of several it spreads over, the one
 * mgi_split_pick gives by their shares and this block's sort rings'
 * occupancy. Asked once a pass, a run or a whole segment, so a pass's
 * tuples for one destination take one ring. */
MGI_SDEV_INLINE int16_t mgi_gpu_send_slot(const mgi_gpu_dep_t *d,
                                          const mgi_gpu_dch_t *ch, int k)
{
    uint32_t used[MGI_ROUTE_MAX_SPLIT];
    float share[MGI_ROUTE_MAX_SPLIT];
    uint32_t n, i;
    mgi_ring_t *r;

    if (k < 0) {
        return MGI_GPU_SLOT_OUT;
    }
    n = mgi_gpu_nsplit(ch, k);
    if (n == 1) {
        return mgi_gpu_hop_at(ch, k, 0, n);
    }
    for (i = 0; i < n; ++i) {
        r        = mgi_gpu_send_ring(d, MGI_GPU_NO_DST,
                                     mgi_gpu_hop_at(ch, k, i, n));
        used[i]  = (r != NULL) ? mgi_ring_count(r) : 0xffffu;
        share[i] = mgi_vld(&ch->split_share[k][i]);
    }
    return mgi_gpu_hop_at(ch, k, mgi_split_pick(n, used, share,
                                                d->blk[MGI_BID].npick++), n);
}

/* Thread 0, send side: the ring that takes a tuple of channel ch for
 * `dst`, or NULL; its route slot in *slot_p where not NULL */
MGI_SDEV_INLINE mgi_ring_t *mgi_gpu_send_target(const mgi_gpu_dep_t *d,
                                                const mgi_gpu_dch_t *ch,
                                                uint16_t dst,
                                                int16_t *slot_p = NULL)
{
    const int16_t slot = (dst == d->id) ? (int16_t)MGI_GPU_SLOT_LOOPBACK :
                         mgi_gpu_send_slot(d, ch, mgi_gpu_dst_k(ch, dst));

    if (slot_p != NULL) {
        *slot_p = slot;
    }
    return mgi_gpu_send_ring(d, dst, slot);
}

/* Receive side, a relay (paper Fig. 8): the ring that takes a message of
 * channel ch for another endpoint `dst` on to its next hop (this block's
 * sort ring of that hop, so a lane's messages stay in order), or NULL. */
MGI_SDEV_INLINE mgi_ring_t *mgi_gpu_relay_target(const mgi_gpu_dep_t *d,
                                                 const mgi_gpu_dch_t *ch,
                                                 uint16_t dst)
{
    int16_t slot;

    if (dst == d->id) {
        return NULL;
    }
    slot = mgi_gpu_send_slot(d, ch, mgi_gpu_dst_k(ch, dst));
    return (slot < 0) ? NULL : mgi_gpu_sort_ring(d, slot);
}

/* Receive side: has this relay no hop yet for `dst` in channel ch (its own
 * create has not made them: the lane waits), rather than none at all
 * (dropped)? */
MGI_SDEV_INLINE int mgi_gpu_relay_unset(const mgi_gpu_dch_t *ch,
                                        uint16_t dst)
{
    return (ch != NULL) && (mgi_gpu_hop_slot(ch, dst) == MGI_GPU_SLOT_NONE);
}

/* Thread 0, send side, MGI_LOOP_DIRECT: stage ring `stage` put something
 * into the loopback lane at slot `pos` (a whole segment, placed messages,
 * an EOF): its later input passes the lane by only once the lane's owner
 * released that slot. */
MGI_SDEV_INLINE void mgi_gpu_lane_dep(const mgi_gpu_dep_t *d,
                                      mgi_ring_t *stage, mgi_ring_t *target,
                                      uint32_t pos)
{
    if (target == mgi_gpu_loopback(d)) {
        stage->cons_dep = pos + 1;
    }
}

/* Thread 0, send side, MGI_LOOP_DIRECT: has the loopback lane released
 * everything stage ring `stage` put into it? Then the stage ring's earlier
 * tuples for this endpoint are in final rings (the lane's owner commits a
 * segment's final segments before it releases it), and its next whole
 * segment for this endpoint, or its EOF, may go there without the lane:
 * it overtakes none of them. Other stage rings' segments in the lane do
 * not matter (order is kept per source block); a lane that only took EOFs
 * and a few walked segments held every block's later ones up behind it
 * when all had to wait for the lane to be idle. The acquire orders the
 * owner's commits before what this block then commits. */
MGI_SDEV_INLINE int mgi_gpu_lane_passed(const mgi_gpu_dep_t *d,
                                        const mgi_ring_t *stage)
{
    const mgi_ring_t *lane = mgi_gpu_loopback(d);

    return (int32_t)(mgi_ld_acq32(&lane->cons_tail) - stage->cons_dep) >= 0;
}

/* Thread 0: target index of `ring` in this pass, or -1 when full. */
MGI_SDEV_INLINE int mgi_gpu_tgt(mgi_gpu_pass_t *p, mgi_ring_t *ring)
{
    uint32_t t;

    for (t = 0; t < p->ntgt; ++t) {
        if (p->tgt_ring[t] == ring) {
            return (int)t;
        }
    }
    if (p->ntgt == MGI_GPU_MAX_TARGETS) {
        return -1;
    }
    p->tgt_ring[p->ntgt]  = ring;
    p->tgt_bytes[p->ntgt] = 0;
    p->tgt_cnt[p->ntgt]   = 0;
    return (int)p->ntgt++;
}

MGI_SDEV_INLINE void mgi_gpu_emit_add(mgi_gpu_pass_t *p,
                                               mgi_gpu_emit_t *e, int t,
                                               uint32_t off, uint32_t size,
                                               uint16_t dst, uint32_t key)
{
    uint32_t i = p->nemit++;

    /* one (channel, destination) for all of the target's messages? */
    if (p->tgt_cnt[t] == 0) {
        p->tgt_key[t] = key;
    } else if (p->tgt_key[t] != key) {
        p->tgt_key[t] = MGI_SEG_MIXED;
    }

    e->src[i]      = off;
    e->words[i]    = (uint16_t)(size / 8);
    e->dst[i]      = dst;
    e->tgt[i]      = (uint8_t)t;
    e->dst_off[i]  = p->tgt_bytes[t];
    p->tgt_bytes[t] += size;
    p->tgt_cnt[t]++;
}

#endif

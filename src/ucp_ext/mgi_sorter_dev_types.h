/**
 * MGI sorter of a GPU endpoint, device side: the structures the kernel
 * reads and writes (its counters, the status block, the channels, the
 * blocks' flushes, the lane jobs, the endpoint) and where the sorter
 * blocks start on stage rings and sort rings.
 *
 * A part of mgi_sorter_dev.h, which includes its parts in order (each
 * uses those before it).
 */
#ifndef MGI_SORTER_DEV_TYPES_H_
#define MGI_SORTER_DEV_TYPES_H_

#ifndef MGI_SORTER_DEV_H_
#  error "a part of the sorter's device code: include mgi_sorter_dev.h"
#endif

/* ---------------------------------------------------- device structures */

/* A sorter block's counters, one list for the three places that hold
 * them: the block's pass state in shared memory (mgi_gpu_pass_t::stat),
 * the status block in mapped host memory (published every
 * MGI_GPU_STOP_POLL rounds) and the host's totals per endpoint when the
 * kernel ends (mgi_gpu_sorter_stop). C_* are clock cycles. */
#define MGI_GPU_STATS(_) \
    _(ROUNDS)       /* rounds of the block */ \
    _(SORTED)       /* tuples walked from stage rings */ \
    _(DISPATCHED)   /* tuples walked from lanes into final rings */ \
    _(LANE_EMPTY)   /* owned lanes with nothing ready */ \
    _(FINAL_FULL)   /* whole moves without room in a final ring */ \
    _(JOBS)         /* lane jobs issued: whole moves, EOF segments */ \
    _(CHUNKS)       /* whole moves copied */ \
    _(WHOLE_SEGS)   /* lane segments moved whole */ \
    _(LANE_EOFS)    /* lane segments of EOFs counted in lane order */ \
    _(LANE_PASSES)  /* walked passes over lanes (of PASSES) */ \
    _(SEND_FULL)    /* send passes blocked (target full) */ \
    _(SEND_WAIT)    /* stage rings left for a round: target still full */ \
    _(PASSES)       /* walked passes, and their cycles in: */ \
    _(C_COPY)       /*   the copy of the segment to shared memory, */ \
    _(C_WALK)       /*   the walk, */ \
    _(C_PLACE)      /*   placing, */ \
    _(C_PRES)       /*   of which reserving and marking the targets */ \
    _(RUN_MSGS)     /* messages placed by mgi_gpu_walk_run */ \
    _(RUN_RELAYED)  /*   of those, a relay's for other endpoints */ \
    _(STAGE_WHOLE)  /* stage segments moved whole (sort ring or loopback) */ \
    _(LOOP_WHOLE)   /*   of those, to the loopback lane */ \
    _(LOOP_DIRECT)  /*   of those, straight to a final ring */ \
    _(STAGE_REFS)   /*     of those, by reference (MGI_STAGE_ZCOPY) */ \
    _(SEND_REFS)    /*   of those, to sort rings by reference */ \
    _(SEND_REF_SLOTS) /*   the sort segments that refer to them */ \
    _(LOOP_EOF)     /* EOFs for this endpoint counted without the lane */ \
    _(WHOLE_TRIES)  /* whole stage moves tried, and their cycles in: */ \
    _(C_WRES)       /*   reserving (or not), */ \
    _(C_WROUTE)     /*     of which choosing the target ring, */ \
    _(C_WCOPY)      /*   copying and committing when it took */ \
    _(C_STAGE)      /* rounds' cycles in stage rings, */ \
    _(C_LANE)       /*   lanes, */ \
    _(C_HELP)       /*   helping whole moves, */ \
    _(C_HCOPY)      /*   of which copying, */ \
    _(C_REST)       /*   the rest (sort rings, flushes) */ \
    _(LANE_LOOKS)   /* owner's issue steps over lanes from other ranks, */ \
    _(LANE_HELD)    /*   their jobs in flight, summed, */ \
    _(LANE_WAITING) /*   their segments ready and not issued, summed, */ \
    _(LANE_WINDOW)  /*   of them, with every job slot taken */ \
    _(JOB_CLAIMS)   /* whole moves claimed by helpers, and the ns */ \
    _(T_JWAIT)      /*   from their issue to the claim */ \
    _(JOB_RETIRES)  /* owner's steps that retired jobs, and the ns */ \
    _(T_JRETIRE)    /*   from the issue of the oldest to its retire */ \
    _(C_RMAX)       /* the longest round's cycles (a maximum, not a sum) */ \
    _(LANE_MAXRING) /* the most segments in a lane at an issue step (as */ \
                    /*   LANE_LOOKS; a maximum) */ \
    _(PULL_MAXJUMP) /* the most RTail moved between two pulls (a max) */ \
    _(C_SMAX)       /* the longest stage-ring part of a round (a max) */ \
    _(C_LMAX)       /* the longest lane part of a round (a max) */ \
    _(C_LRETIRE)    /* issue steps (as LANE_LOOKS): cycles retiring (from */ \
    _(C_LISSUE)     /*   the lane step's start) and issuing */ \
    _(BUSY_STEPS)   /* of LANE_LOOKS, those with segments ready beyond the */ \
                    /*   jobs in flight (the steady state, not idle ones): */ \
    _(BUSY_ISSUED)  /*   jobs issued at them, */ \
    _(BUSY_HELD)    /*   jobs in flight at them, summed, */ \
    _(BUSY_READY)   /*   segments ready, not issued, summed, */ \
    _(BUSY_GAPS)    /*   those right after another busy step, and the ns */ \
    _(T_BUSY_GAP)   /*   between the two (the owner's cadence), */ \
    _(STOP_ALL)     /*   why the issue stopped: every ready one issued, */ \
    _(STOP_WINDOW)  /*   every job slot taken, */ \
    _(STOP_UNPUB)   /*   counted as published, its commit not seen yet, */ \
    _(STOP_MIXED)   /*   a segment that is not whole (walked), */ \
    _(STOP_EOF)     /*   EOF segments end the whole ones of a step, */ \
    _(STOP_FINAL)   /*   a final ring full */ \
    _(C_RSCAN)      /* issue steps (as LANE_LOOKS), cycles of the retire */ \
    _(C_RCOMMIT)    /*   finding the done jobs, their commits, and of the */ \
    _(C_IPEEK)      /*   issue finding the ready segments, reserving in */ \
    _(C_IRES)       /*   final rings; the rest is filling the jobs in */ \
    _(C_PULL)       /* rounds' cycles pulling RTail and pushing RHead of */ \
    _(C_PUSH)       /*   lanes from other ranks (host control words) */

#define MGI_GS_ENUM(_n) MGI_GS_##_n,
typedef enum {
    MGI_GPU_STATS(MGI_GS_ENUM)
    MGI_GS_COUNT
} mgi_gpu_stat_t;
#undef MGI_GS_ENUM

/* The first sorter block that takes stage rings, once at the sorter's
 * start (mgi_gpu_dep_t::stage_base): the blocks after the owners of the
 * lanes with control words (lane i is block i's) when those take none
 * (MGI_LANE_APART): asked for, lanes with control words, and either at
 * least twice as many sorter blocks as lanes and two stage rings a block
 * or more, or a block of its own for every stage ring after the lane
 * owners; else 0. A
 * lane's owner retires and issues its whole moves once a round; with
 * stage rings as well its rounds ran up to 300 us now and then on
 * 2 x H200, the lane filled behind them meanwhile and the mover found no
 * credit. With one stage ring a block, two blocks would serve two rings
 * each while the others serve one, and their user blocks would lag
 * (device send 64 B between two H200: 116 against 160 GB/s). */
MGI_INLINE uint32_t mgi_gpu_stage_first(uint32_t lane_apart, int lane_ctl,
                                        uint32_t nblocks, uint32_t nlanes,
                                        uint32_t nstage)
{
    return (lane_apart && lane_ctl &&
            (((nblocks >= 2 * nlanes) && (nstage >= 2 * nblocks)) ||
             (nstage + nlanes - 1 <= nblocks))) ? nlanes - 1 : 0;
}

/* The block that syncs sort ring 0's mirror, once at the sorter's start
 * (mgi_gpu_dep_t::route_base; route i is block (route_base + i) % grid's):
 * the first block after those that serve stage rings when there is one,
 * else the first that serves one ring fewer than the blocks before it
 * (mgi_gpu_stage_share), else 0. A mirror's sync reads `released` from
 * pinned host memory every round; a block that also served as many stage
 * rings as the others served them less often, and their user blocks sent
 * last (device send 64 B between two H100, one stage ring a block: the
 * user blocks of the four sort rings' blocks returned from their last
 * sends at 35-37 ms, the others by 26-29). */
MGI_INLINE uint32_t mgi_gpu_route_first(uint32_t stage_base,
                                        uint32_t nblocks, uint32_t nstage)
{
    const uint32_t nsb = (nblocks > stage_base) ? nblocks - stage_base : 0;

    if (nsb == 0) {
        return 0;
    }
    if (nstage < nsb) {
        return stage_base + nstage;
    }
    return (nstage % nsb) ? stage_base + nstage % nsb : 0;
}

/* Status block in mapped host memory. */
typedef struct mgi_gpu_status {
    volatile uint32_t stop;
    uint32_t          reserved[7];
    /* one writer each (thread 0 of the block): no atomics on host memory,
     * which PCIe may not offer */
    struct {
        volatile uint32_t           started;
        volatile uint32_t           dropped;    /* no channel or route */
        volatile uint32_t           eof_errors; /* extra EOF records */
        /* the quiesce request (mgi_gpu_dep_t::quiesce_seq) this block had
         * read when it began a round that it has since finished */
        volatile uint32_t           quiesced;
        volatile unsigned long long stat[MGI_GS_COUNT];
    } blk[MGI_GPU_MAX_SORTERS];
} mgi_gpu_status_t;

/* A channel at one GPU endpoint, in device memory. */
typedef struct mgi_gpu_dch {
    uint16_t   id;
    uint16_t   ndst;
    uint16_t   nsrc;
    uint16_t   self_dst;            /* index in dst, MGI_GPU_NO_DST */
    uint32_t   nfinal;              /* consuming blocks (0: not a dst) */
    uint32_t   rr;                  /* next final ring */
    uint16_t   dst[MGI_GPU_MAX_TARGETS];
    uint16_t   src[MGI_MAX_CH_SRC];
    uint32_t   eof_count[MGI_MAX_CH_SRC];
    uint32_t   relay_eofs;          /* EOF records forwarded as a relay */
    /* the route slot of this endpoint's next hop towards dst[k], this
     * channel's (two channels' plans may send one pair through different
     * hops): a sort ring's (>= 0), MGI_GPU_SLOT_LOOPBACK, or
     * MGI_GPU_SLOT_NONE until the create made its hops
     * (mgi_gpu_ch_routes); MGI_GPU_SLOT_OUT at an endpoint that neither
     * sends nor relays in the channel */
    int16_t    hop[MGI_GPU_MAX_TARGETS];
    /* where this endpoint spreads what it sends or relays for dst[k] over
     * several next hops (mgi_ch_split_t, mgi_gpu_send_slot): how many (0:
     * hop[k] alone), their route slots and shares; and a source's walks
     * to dst[k] (0: one), the count each copy of its EOF carries. Set
     * before hop[k], which a relay waits for, and before the channel's
     * sources send */
    uint8_t    nsplit[MGI_GPU_MAX_TARGETS];
    int16_t    split_slot[MGI_GPU_MAX_TARGETS][MGI_ROUTE_MAX_SPLIT];
    float      split_share[MGI_GPU_MAX_TARGETS][MGI_ROUTE_MAX_SPLIT];
    uint32_t   eof_paths[MGI_GPU_MAX_TARGETS];
    mgi_ring_t **final;             /* [nfinal], behind this struct */
    uint32_t   *final_lock;         /* [nfinal] */
    uint32_t   *eof_sources;        /* [nfinal] */
} mgi_gpu_dch_t;

typedef struct mgi_gpu_pending {
    mgi_ring_t *stage;
    uint32_t   seq;
    uint32_t   n;
    mgi_ring_t *ring[MGI_GPU_MAX_TARGETS];
    uint32_t   pos[MGI_GPU_MAX_TARGETS];
} mgi_gpu_pending_t;

/* Per sorter block, device memory, used by its thread 0 only. */
typedef struct mgi_gpu_block {
    uint32_t          head, count;
    uint32_t          npick;        /* mgi_split_pick's so far */
    mgi_gpu_pending_t pending[MGI_GPU_MAX_PENDING];
} mgi_gpu_block_t;

/* A whole lane segment on its way to a final ring: any sorter block that
 * claims it copies it (mgi_gpu_help), the lane's owner commits the final
 * segment and releases the lane segment once it is done, in lane order
 * (mgi_gpu_lane_whole). By reference (mgi_gpu_dep_t::recv_zcopy) the final
 * segment is committed at once as a MGI_SEG_REF to the lane segment, and
 * the consumer that drained it sets `done`. */
typedef struct mgi_gpu_job {
    const char    *src;
    char          *dst;
    mgi_ring_t    *fring;          /* final ring and its reservation */
    mgi_seg_hdr_t *fseg;
    uint32_t      foff, fpos;
    uint32_t      bytes;
    uint32_t      done;            /* 1: copied */
    /* s, the job's number, while a helper may claim it; ~s once one did
     * (mgi_gpu_claim). s and ~s differ in the lowest bit, so no number of
     * the slot, s + 128 k, is ever ~s */
    uint32_t      avail;
    unsigned long long issued_ns;  /* MGI_GTIME() at its issue (info log) */
} mgi_gpu_job_t;

/* The jobs of one receive lane, device memory. Job number s (free-running)
 * is in slot s % MGI_GPU_LANE_JOBS; head and count are the owner's, and
 * `retired` the number of the job at head. The owner publishes `issued`
 * after it wrote the jobs below it; a helper claims one of the issued jobs
 * with a compare-and-swap on that job's `avail` (mgi_gpu_claim), the
 * helpers starting at different jobs, and counts it in `claimed`, which
 * only tells helpers whether a lane has jobs left. One compare-and-swap on
 * `claimed` for the next job in order made the claims one at a time: each
 * round of them, every helper read the same count and one won, so a step's
 * 40 jobs waited about 22 us for their helpers (device send between two
 * H100). */
typedef struct mgi_gpu_lane_jobs {
    uint32_t      head, count;
    uint32_t      issued;          /* jobs issued, owner's release store */
    uint32_t      claimed;         /* jobs claimed by helpers (a count) */
    uint32_t      retired;         /* jobs retired (the owner's) */
    uint32_t      pushed;          /* RHead last stored to the host control
                                    * words (mgi_gpu_lane_push; 0 as they
                                    * start) */
    mgi_gpu_job_t job[MGI_GPU_LANE_JOBS];
} mgi_gpu_lane_jobs_t;

/* The endpoint as the sorter kernel sees it, device memory. */
typedef struct mgi_gpu_dep {
    uint16_t          id;
    uint16_t          reserved;
    uint32_t          nstage;
    uint32_t          nlanes;       /* the last one is the loopback lane */
    /* MGI_SORTER_COALESCE: 0 a thread per message; 1 grouped by target,
     * consecutive threads on consecutive words; 2 a run's words in
     * segment order (mgi_gpu_place), other passes as 1 */
    uint32_t          coalesce;
    /* 1: a whole segment of a lane from another endpoint goes to its final
     * ring by reference (MGI_SEG_REF): the consumer reads it in the lane,
     * and its job is done once the consumer released it (MGI_RECV_ZCOPY).
     * The loopback lane's are copied: a flush there waits for the lane,
     * and with references it would wait for its own endpoint's consumers */
    uint32_t          recv_zcopy;
    /* 1: a whole stage segment for this endpoint goes straight to a final
     * ring (one copy, no lane job), and its stage ring's EOF is counted
     * without the lane, once the loopback lane released everything of
     * that stage ring (mgi_gpu_lane_passed); 0: through the loopback lane
     * (MGI_LOOP_DIRECT) */
    uint32_t          loop_direct;
    /* 1 (with loop_direct): such a whole stage segment goes to its final
     * ring by reference (MGI_SEG_REF) instead of being copied there: the
     * consumer reads it in the stage ring, and the stage ring's slot is
     * released once it did (MGI_SEG_READ in the segment's commit word;
     * mgi_gpu_stage_retire), its RHead held meanwhile while the sorter
     * passes the segments behind it (ring->cons_held) (MGI_STAGE_ZCOPY) */
    uint32_t          stage_zcopy;
    /* 1: a block's EOF goes into a sort segment (or the loopback lane) of
     * its own, marked MGI_SEG_EOFS: the tuples before it keep their
     * segment whole, and the next hop counts it as a lane job, without a
     * walk; 0: into the open segment, marked MIXED and walked there
     * (MGI_EOF_ALONE) */
    uint32_t          eof_alone;
    /* > 0: a whole stage segment for a next hop reached through a mover
     * goes to its sort ring by reference (MGI_SEG_REF, with up to this
     * many stage segments side by side that follow it for the same
     * destination): the mover puts them from the stage ring, which holds
     * them until the sort segment is released (MGI_SEND_ZCOPY); 0:
     * copied into the sort ring */
    uint32_t          send_zcopy;
    /* rounds of its sorter block a run of stage segments shorter than
     * send_zcopy waits to grow before a reference takes it as it is
     * (MGI_SEND_WAIT_ROUNDS) */
    uint32_t          send_wait_rounds;
    /* the first sorter block that takes stage rings: above 0 the owners
     * of lanes with control words (from other processes, or another
     * endpoint's mover) take none (mgi_gpu_stage_first, MGI_LANE_APART) */
    uint32_t          stage_base;
    /* the block that syncs sort ring 0's mirror (mgi_gpu_route_first) */
    uint32_t          route_base;
    /* whole moves a block whose lanes moved copies in that round
     * (MGI_OWNER_HELP, at most MGI_GPU_HELP_JOBS) */
    uint32_t          owner_help;
    uint64_t          lane_bytes;
    char              *recv_mem;
    mgi_ring_t        **stage;      /* [nstage] */
    mgi_gpu_dch_t     **chs;        /* [max_channels] */
    uint32_t          max_channels;
    uint32_t          nroutes;
    uint32_t          sort_rings;   /* per next hop: block b writes the
                                     * one at its hop slot + b % sort_rings */
    uint32_t          stage_passes; /* most passes over one stage ring a
                                     * round, 0: until it is empty (the
                                     * host emulation test varies it) */
    /* the host's latest quiesce request: raised after it took a channel
     * out of the tables; a block that read it as it began a round
     * publishes it in mgi_gpu_status_t::blk[].quiesced once that round is
     * over, and then holds nothing of what the request took out
     * (mgi_gpu_round) */
    uint32_t          quiesce_seq;
    mgi_gpu_status_t  *status;
    mgi_gpu_block_t   *blk;         /* [sorter blocks] */
    mgi_gpu_lane_jobs_t *ljobs;     /* [nlanes] */
    mgi_lane_ctl_t    *lane_ctl;    /* [nlanes - 1], mapped host memory;
                                     * NULL: control words in the rings */
    mgi_ring_t        *sort[MGI_GPU_MAX_ROUTES];
    mgi_ring_mirror_t *mirror[MGI_GPU_MAX_ROUTES];
} mgi_gpu_dep_t;

#endif

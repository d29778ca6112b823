/**
 * MGI sorter of a GPU endpoint: the device side (structures the kernel
 * reads, the pass over a segment, EOF and flush handling, one round of the
 * loop), private to libmgi. Written for a CUDA block; compiled for the
 * host too, a block being a few host threads meeting at a barrier, so that
 * test_mgi_sorter runs this very code on the CPU (emulation macros below).
 */
#ifndef MGI_SORTER_DEV_H_
#define MGI_SORTER_DEV_H_

#include "mgi_int.h"

#include <string.h>

#define MGI_GPU_MAX_ROUTES      256    /* sort rings of one GPU endpoint */
#define MGI_GPU_MAX_EMIT        4096   /* messages placed in one pass */
#define MGI_GPU_MAX_PENDING     16     /* flushes in flight per block */
#define MGI_GPU_MAX_SORTERS     64     /* sorter blocks */
#define MGI_GPU_SLOT_NONE       (-1)
#define MGI_GPU_SLOT_LOOPBACK   (-2)
#define MGI_GPU_NO_DST          0xffffu
#define MGI_GPU_STOP_POLL       32     /* rounds between stop-flag reads */
#define MGI_GPU_DST_CACHE       16     /* route lookups cached per walk */
#define MGI_GPU_RUN_MSG         512    /* largest message of a parallel
                                          walk (mgi_gpu_walk_run) */

#if defined(__CUDACC__)
#  define MGI_SDEV             __device__ static
#  define MGI_SDEV_INLINE      __device__ static inline
#  define MGI_TID              threadIdx.x
#  define MGI_NTH              blockDim.x
#  define MGI_BID              blockIdx.x
#  define MGI_NBLK             gridDim.x
#  define MGI_SYNC()           __syncthreads()
#  define MGI_SYNCWARP()       __syncwarp()
#  define MGI_FENCE()          __threadfence()
#  define MGI_FENCE_SYSTEM()   __threadfence_system()
#  define MGI_ATOMIC_ADD(_p, _v) atomicAdd((_p), (_v))
#  define MGI_ATOMIC_CAS(_p, _e, _v) atomicCAS((_p), (_e), (_v))
#  define MGI_ATOMIC_EXCH(_p, _v) atomicExch((_p), (_v))
#  define MGI_ATOMIC_MIN(_p, _v) atomicMin((_p), (_v))
#  define MGI_WARP             32u
typedef uint4 mgi_v16_t;
/* L2 only: a ring slot held another generation before */
#  define MGI_LD16(_src)       __ldcg((const uint4*)(_src))
#else
/* host emulation: a block is mgi_emu_nth host threads (thread-local
 * mgi_emu_tid) meeting at mgi_emu_sync(); the test sets them up */
extern unsigned mgi_emu_bid, mgi_emu_nblk, mgi_emu_nth;
extern thread_local unsigned mgi_emu_tid;
void mgi_emu_sync(void);
#  if defined(MGI_SORTER_SELFCHECK)
#    include <stdio.h>
#    include <stdlib.h>
/* the test's counter of passes that found a target full */
extern unsigned long mgi_selfcheck_blocked;
#  endif
#  define MGI_SDEV             static
#  define MGI_SDEV_INLINE      static inline
#  define MGI_TID              mgi_emu_tid
#  define MGI_NTH              mgi_emu_nth
#  define MGI_BID              mgi_emu_bid
#  define MGI_NBLK             mgi_emu_nblk
#  define MGI_SYNC()           mgi_emu_sync()
#  define MGI_SYNCWARP()       ((void)0) /* a thread is its warp */
#  define MGI_FENCE()          __atomic_thread_fence(__ATOMIC_SEQ_CST)
#  define MGI_FENCE_SYSTEM()   __atomic_thread_fence(__ATOMIC_SEQ_CST)
#  define MGI_ATOMIC_ADD(_p, _v) \
    __atomic_fetch_add((_p), (_v), __ATOMIC_ACQ_REL)
static inline uint32_t mgi_emu_cas(uint32_t *p, uint32_t e, uint32_t v)
{
    __atomic_compare_exchange_n(p, &e, v, 0, __ATOMIC_ACQ_REL,
                                __ATOMIC_ACQUIRE);
    return e; /* the old value */
}
#  define MGI_ATOMIC_CAS(_p, _e, _v) mgi_emu_cas((_p), (_e), (_v))
#  define MGI_ATOMIC_EXCH(_p, _v) \
    __atomic_exchange_n((_p), (_v), __ATOMIC_ACQ_REL)
static inline void mgi_emu_min(int *p, int v)
{
    int old = __atomic_load_n(p, __ATOMIC_ACQUIRE);

    while ((v < old) &&
           !__atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
    }
}
#  define MGI_ATOMIC_MIN(_p, _v) mgi_emu_min((_p), (_v))
#  define MGI_WARP             1u   /* an emulated thread is its own warp */
typedef struct {
    uint64_t lo, hi;
} mgi_v16_t;
static inline mgi_v16_t mgi_emu_ld16(const void *p)
{
    mgi_v16_t v;
    memcpy(&v, p, sizeof(v));
    return v;
}
#  define MGI_LD16(_src)       mgi_emu_ld16(_src)
#endif
#define MGI_ST16(_dst, _v)     (*(mgi_v16_t*)(_dst) = (_v))
#if defined(__CUDACC__)
/* The SM's clock, read where it stands: a compiler barrier, so memory
 * operations are not moved across it and the info log's split of a pass
 * is the code's. clock64() is not one. */
MGI_SDEV_INLINE unsigned long long mgi_clock(void)
{
    unsigned long long c;

    asm volatile("mov.u64 %0, %%clock64;" : "=l"(c) :: "memory");
    return c;
}

/* The GPU's global timer (ns): times between SMs, whose clocks differ */
MGI_SDEV_INLINE unsigned long long mgi_gtime(void)
{
    unsigned long long t;

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t) :: "memory");
    return t;
}
#  define MGI_CLOCK()          mgi_clock()
#  define MGI_GTIME()          mgi_gtime()
#else
#  define MGI_CLOCK()          0ull  /* emulation: no cycle counts */
#  define MGI_GTIME()          0ull
#endif

/* Loads each thread keeps in flight in the block copies: one block moves
 * data at (bytes in flight / memory latency), so 16 bytes per thread at a
 * time would cap a 256-thread block near 4 GB/s. */
#ifndef MGI_GPU_COPY_ILP
#  define MGI_GPU_COPY_ILP      8
#endif

/* Copies of whole segments and of a pass's segment into shared memory go
 * through the bulk-copy (TMA) unit on Hopper and later (sm_90): thread 0
 * issues them in MGI_GPU_TMA_BARS chunks, each completing on its own
 * mbarrier, so a whole segment is in flight at once; the block's threads
 * copying 16-byte lines kept 32 KB in flight and moved a 128 KiB segment
 * in about 16 k cycles. Build with -DMGI_GPU_NO_TMA for the thread copies. */
#if defined(__CUDA_ARCH__) && (__CUDA_ARCH__ >= 900) && \
    !defined(MGI_GPU_NO_TMA)
#  define MGI_GPU_TMA           1
#else
#  define MGI_GPU_TMA           0
#endif
#define MGI_GPU_TMA_BARS        8

#define MGI_GPU_MAX_WARPS       32     /* 1024 threads */
#define MGI_GPU_DTAB            128    /* dst hash of a run: 2 x targets */
#ifndef MGI_GPU_LANE_JOBS
#  define MGI_GPU_LANE_JOBS     128    /* whole moves in flight per lane
                                        * (-D for trials: 256 measured no
                                        * faster between two GPUs) */
#endif
#define MGI_GPU_HELP_JOBS       8      /* whole moves a block copies a round */
#define MGI_GPU_CLAIM_TRIES     4      /* looks of a claim that lost its
                                        * compare-and-swap to another block
                                        * before it gives up for the round */
#define MGI_GPU_ISSUE_RUNS      8      /* runs of whole lane segments between
                                        * EOF segments a lane step issues */
#define MGI_GPU_FINAL_HINTS     128    /* final rings a block keeps a
                                        * reservation hint for (by index) */

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
    int16_t           *dst_slot;    /* [MGI_MAX_EPS]: route slot of a dst */
    mgi_gpu_dch_t     **chs;        /* [max_channels] */
    uint32_t          max_channels;
    uint32_t          nroutes;
    uint32_t          sort_rings;   /* per next hop: block b writes the
                                     * one at dst_slot + b % sort_rings */
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

template <typename T>
MGI_SDEV_INLINE T mgi_vld(const T *p)
{
    return *(const volatile T*)p;
}

/* Shared state of one pass over a segment. */
typedef struct mgi_gpu_pass {
    uint32_t      nemit, ntgt, end_off;
    int           at_end, stop_eof, blocked, progress;
    int           lost;         /* mgi_gpu_place: a reserve failed after
                                 * the look (the room went to another
                                 * producer) */
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
    uint32_t      run_msz, run_len, run_ndst;
    int           contig;       /* one target, messages in segment order:
                                 * placed as one block copy, no emission
                                 * arrays (mgi_gpu_walk_run) */
    uint32_t      unif_words;   /* words of every message of the pass, 0:
                                 * sizes differ (mgi_gpu_walk) */
    uint16_t      run_ch;
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

/* Send side: the ring that takes a tuple for `dst`, or NULL. */
MGI_SDEV_INLINE mgi_ring_t *mgi_gpu_send_target(
        const mgi_gpu_dep_t *d, uint16_t dst)
{
    int16_t slot;

    if (dst == d->id) {
        return mgi_gpu_loopback(d);
    }
    slot = mgi_vld(&d->dst_slot[dst]);
    if (slot == MGI_GPU_SLOT_LOOPBACK) {
        return mgi_gpu_loopback(d);
    }
    if (slot < 0) {
        return NULL;
    }
    return mgi_gpu_sort_ring(d, slot);
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
            (recv_side ? (h->dst == d->id) : (h->dst != MGI_EP_ID_ALL))) {
            break;
        }
        prev_ch  = h->ch;
        prev_len = h->len;
        size = mgi_msg_size(h->len);
        if (h->ch != ch_id) {
            ch_id = h->ch;
            ch    = mgi_gpu_ch(d, ch_id);
        }
        if (ch == NULL) {
            mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
            off += size;
            continue;
        }
        if (recv_side) {
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
        } else if (h->dst == MGI_EP_ID_ALL) {
            n = ch->ndst;
            if (p->nemit + n > MGI_GPU_MAX_EMIT) {
                break;
            }
            /* all targets must fit the pass before any is placed */
            sum = p->ntgt;
            for (k = 0; k < n; ++k) {
                ring = mgi_gpu_send_target(d, ch->dst[k]);
                if ((ring != NULL) && (mgi_gpu_tgt(p, ring) < 0)) {
                    break;
                }
            }
            if (k < n) {
                p->ntgt = sum; /* undo the targets added above */
                break;
            }
            for (k = 0; k < n; ++k) {
                ring = mgi_gpu_send_target(d, ch->dst[k]);
                if (ring == NULL) {
                    mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
                    continue;
                }
                mgi_gpu_emit_add(p, e, mgi_gpu_tgt(p, ring), off, size,
                                 ch->dst[k], MGI_SEG_KEY(h->ch, ch->dst[k]));
            }
        } else {
            k = h->dst % MGI_GPU_DST_CACHE;
            if (dc_dst[k] != h->dst) {
                dc_dst[k]  = h->dst;
                dc_ring[k] = mgi_gpu_send_target(d, h->dst);
            }
            ring = dc_ring[k];
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
 * one channel and one length (a unicast on the send side, for this
 * endpoint on the receive side) is placed without a serial pass: the k-th
 * header of the run is a message boundary because the k-1 before it were
 * messages of that size, so every thread checks its own headers. Targets
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
            if (recv_side) {
                if ((ch->self_dst != MGI_GPU_NO_DST) && (h->dst == d->id) &&
                    (ch->nfinal > 0)) {
                    p->tgt_ring[0] = ch->final[MGI_ATOMIC_ADD(&ch->rr, 1u) %
                                               ch->nfinal];
                    p->tgt_key[0]  = MGI_SEG_KEY(h->ch, h->dst);
                    p->ntgt        = 1;
                    p->run         = 1;
                }
            } else if (h->dst != MGI_EP_ID_ALL) {
                p->run = 1;
            }
        }
    }
    MGI_SYNC();
    if (!p->run) {
        return 0;
    }
    msz = p->run_msz;
    /* 1. how long is the run */
    for (i = tid; i < (uint32_t)p->run_n; i += nth) {
        h = (const mgi_msg_hdr_t*)(seg + p->start + i * msz);
        if ((h->ch != p->run_ch) || (h->len != p->run_len) ||
            (recv_side ? (h->dst != d->id) : (h->dst == MGI_EP_ID_ALL))) {
            MGI_ATOMIC_MIN(&p->run_n, (int)i);
        }
    }
    for (k = tid; k < nw * MGI_GPU_MAX_TARGETS; k += nth) {
        p->wcnt[k / MGI_GPU_MAX_TARGETS][k % MGI_GPU_MAX_TARGETS] = 0;
    }
    MGI_SYNC();
    n = (uint32_t)p->run_n; /* >= 1: the first header was checked */

    /* 2. send side: destinations -> targets */
    if (!recv_side) {
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
                ring = mgi_gpu_send_target(d, (uint16_t)(p->dtab[s] - 1));
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
    } else {
        for (i = tid; i < n; i += nth) {
            e->tgt[i] = 0;
        }
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
        p->stat[MGI_GS_RUN_MSGS] += n;
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
        p->lost      = 0;
        p->wait_ring = NULL;
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
            p->blocked   = 1;
            p->wait_ring = p->tgt_ring[t];   /* any one of them */
            p->wait_sz   = p->tgt_bytes[t];
        }
    }
    MGI_SYNC();
    if (p->blocked) {
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
            p->lost      = 1;   /* not blocked: others may still read it */
            p->wait_ring = p->tgt_ring[t];
            p->wait_sz   = p->tgt_bytes[t];
        }
    }
    MGI_SYNC();
    if (p->lost) {
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

MGI_SDEV void mgi_gpu_recv_eof(const mgi_gpu_dep_t *d,
                               const mgi_msg_hdr_t *h);

/* Thread 0, send side: forward the EOF at `h` to every destination. With
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
    mgi_gpu_pending_t *pd;
    uint32_t k, n;
    int direct = 0; /* 1: the lane's EOF is counted here */
    char *m;

    if (ch == NULL) {
        mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
        return 1;
    }
    if (b->count == MGI_GPU_MAX_PENDING) {
        return 0;
    }
    n = ch->ndst;
    for (k = 0; k < n; ++k) {
        ring[k] = mgi_gpu_send_target(d, ch->dst[k]);
        if ((ring[k] == lane) && d->loop_direct && !direct &&
            mgi_gpu_lane_passed(d, stage)) {
            direct  = 1;
            seg[k]  = NULL;     /* nothing reserved */
            continue;
        }
        /* the EOF in a segment of its own (MGI_SEG_EOFS): the tuples
         * before it keep their segment whole, and the next hop counts it
         * without a walk */
        if ((ring[k] == NULL) ||
            (d->eof_alone &&
             (mgi_ring_append_close(ring[k]) != MGI_RING_OK)) ||
            (mgi_ring_append_reserve(ring[k], sz, &seg[k], &off[k],
                                     &pos[k]) != MGI_RING_OK)) {
            break;
        }
    }
    if (k < n) {
        if (ring[k] == NULL) {
            mgi_gpu_count(&d->status->blk[MGI_BID].dropped);
        }
        while (k-- > 0) {
            if (seg[k] != NULL) {
                mgi_ring_append_cancel(ring[k], seg[k], off[k], sz, pos[k]);
            }
        }
        return 0;
    }
    pd        = &b->pending[(b->head + b->count) % MGI_GPU_MAX_PENDING];
    pd->stage = stage;
    pd->seq   = ((const uint32_t*)((const char*)h + MGI_MSG_HDR_SIZE))[1];
    pd->n     = 0;
    for (k = 0; k < n; ++k) {
        if (seg[k] == NULL) {
            /* the receive side reads neither dst nor anything the lane
             * would add: the record as it is */
            mgi_gpu_recv_eof(d, h);
            continue;
        }
        m = mgi_seg_payload(seg[k]) + off[k];
        mgi_ring_mark(ring[k], seg[k], d->eof_alone ? MGI_SEG_EOF_KEY :
                                                      MGI_SEG_MIXED);
        memcpy(m, h, sz);
        ((mgi_msg_hdr_t*)m)->dst = ch->dst[k];
        MGI_FENCE();
        mgi_ring_append_commit(ring[k], seg[k], off[k], sz, pos[k]);
        /* FULL: the segment with the EOF is closed already */
        mgi_ring_append_close(ring[k]);
        mgi_gpu_lane_dep(d, stage, ring[k], pos[k]);
        if (ch->dst[k] != d->id) {
            pd->ring[pd->n] = ring[k];
            pd->pos[pd->n]  = pos[k];
            pd->n++;
        }
    }
    b->count++;
    return 1 + direct;
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

/* The channel of a job that carries a lane segment of EOF records only
 * (MGI_SEG_EOFS): no final segment, no copy; its EOFs count when it
 * retires. */
#define MGI_GPU_EOF_JOB ((mgi_gpu_dch_t*)(uintptr_t)1)

/* Thread 0, receive side: what a lane segment is as a job of
 * mgi_gpu_lane_whole: the channel it goes to whole (every message of one
 * channel and for this endpoint: the sender's sorter marked it),
 * MGI_GPU_EOF_JOB (EOF records only), or NULL when it must be walked. */
MGI_SDEV_INLINE mgi_gpu_dch_t *mgi_gpu_lane_job_ch(const mgi_gpu_dep_t *d,
                                                   mgi_seg_hdr_t *seg)
{
    uint32_t flag = mgi_ld_acq32(&seg->reserved), key = flag - 1;
    mgi_gpu_dch_t *ch;

    if (flag == MGI_SEG_EOFS) {
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
        p->first = (int)n;
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
                    MGI_ATOMIC_MIN(&p->first, (int)k);
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
                p->first = (int)k;
                break;
            }
            p->jres[off + k] = 1;
        }
    }
    MGI_SYNC();
    return (uint32_t)p->first;
}

/* Thread 0, receive side: count the EOF records of a lane segment marked
 * MGI_SEG_EOFS (mgi_gpu_recv_eof), once the jobs before it retired. */
MGI_SDEV void mgi_gpu_lane_eofs(const mgi_gpu_dep_t *d,
                                const mgi_seg_hdr_t *seg, uint32_t cap)
{
    const mgi_msg_hdr_t *h;
    uint32_t off = 0;

    while ((h = mgi_seg_next((mgi_seg_hdr_t*)seg, cap, &off)) != NULL) {
        if (h->len == MGI_MSG_LEN_EOF) {
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
        p->jch[k]  = (seg != NULL) ? mgi_gpu_lane_job_ch(d, seg) : NULL;
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
                                                mgi_gpu_dch_t **ch_p)
{
    uint32_t flag = mgi_ld_acq32(&seg->reserved), key = flag - 1;
    uint16_t dst  = (uint16_t)(key >> 16);
    mgi_ring_t *r;

    if ((flag == 0) || (flag == MGI_SEG_MIXED) || (dst >= MGI_MAX_EPS) ||
        ((*ch_p = mgi_gpu_ch(d, (uint16_t)key)) == NULL)) {
        return NULL;
    }
    r = mgi_gpu_send_target(d, dst);
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

/* Thread 0, send side, MGI_SEND_ZCOPY: does a whole segment for `dst`
 * reach its next hop through a mover (a sort ring with a mirror, not a
 * peer's lane)? */
MGI_SDEV_INLINE int mgi_gpu_send_mirrored(const mgi_gpu_dep_t *d,
                                          uint16_t dst)
{
    const int16_t slot = mgi_vld(&d->dst_slot[dst]);

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
    int ret;

    if (MGI_TID == 0) {
        p->w_ring = mgi_gpu_whole_route(d, p->seg, cap, &p->w_key, &ch);
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
                    mgi_gpu_send_mirrored(d, (uint16_t)(p->w_key >> 16));
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
                           (mgi_gpu_lane_job_ch(d, p->seg) != NULL);
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
            if (ok && (p->nemit == 0) && p->stop_eof) {
                h = (const mgi_msg_hdr_t*)(sseg + p->end_off);
                if (recv_side) {
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

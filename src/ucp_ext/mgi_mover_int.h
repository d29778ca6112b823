/**
 * The mover's state (mgi_mover_t: its flushes, lanes and counters; its
 * CUDA state, ctx->mover_cuda), private to the mover's two files:
 * mgi_mover.c, the thread and its flushes, and mgi_mover_cuda.c below
 * it, the CUDA side of copies inside the process (stream, events, peer
 * access, posting a flush's copies).
 */
#ifndef MGI_MOVER_INT_H_
#define MGI_MOVER_INT_H_

#include "mgi_int.h"

#include <cuda_runtime.h>

/* Flushes in flight, at most `mover_flushes` (MGI_MOVER_FLUSHES, up to
 * MGI_MOVER_FLUSHES_MAX, the size of the epoch arrays): with two, the next batch is issued while the last completes;
 * more ride out uneven flushes. With GPU endpoints each takes a copy
 * engine's copy of up to MGI_MOVER_BATCH segments and the time to see it
 * done; four held a mover near 85 GB/s on H200 (rounds with every flush
 * slot taken are logged). The ring depths bound the data in flight too. */
#define MGI_MOVER_MAX_DEVS  64

typedef struct mgi_mover_cand {
    mgi_route_t *route;
    uint32_t    occupancy;
    uint32_t    ready;
} mgi_mover_cand_t;

/* Sort segments of a route that a flush carries, and the lane slots they
 * filled (more with references, MGI_SEND_ZCOPY). */
typedef struct mgi_mover_rel {
    mgi_route_t *route;
    uint32_t    n;
    uint32_t    nlane;
} mgi_mover_rel_t;

/* What a flush tells a lane when it completes. */
typedef struct mgi_mover_mark {
    mgi_lane_t  *lane;
    uint32_t    value;
    int         tail;       /* 0: data done up to value; 1: RTail = value */
} mgi_mover_mark_t;

typedef struct mgi_mover_epoch {
    void             **reqs;    /* puts and flushes not complete yet */
    unsigned         nreqs, reqs_cap;
    int              *ranks;    /* processes put to, flushed each: rank r
                                   through the contexts' own endpoint r, a
                                   link to r on NIC n (n + 1) * size + r */
    unsigned         nranks, ranks_cap;
    mgi_mover_rel_t  *rel;
    unsigned         nrel, rel_cap;
    mgi_mover_mark_t *marks;
    unsigned         nmarks, marks_cap;
    int              cuda;      /* CUDA copies issued: event recorded */
    /* its copies inside the process, posted together at its close
     * (mgi_mover_post_copies) */
    void             **cdst;
    const void       **csrc;
    size_t           *csize;
    unsigned         ncopies, copies_cap;
    int              gpu;       /* puts of GPU memory: a copy engine's */
    uint32_t         segs;
    uint64_t         issued;    /* mgi_time_ns() at its close */
    uint64_t         deadline;
} mgi_mover_epoch_t;

/* CUDA state of a context's mover (ctx->mover_cuda): created by the mover
 * the first time a local next hop or source is GPU memory, kept until the
 * context goes. */
typedef struct mgi_mover_cuda {
    int               device;
    cudaStream_t      stream;         /* the flushes' copies (more streams
                                         moved no faster) */
    cudaEvent_t       done[MGI_MOVER_FLUSHES_MAX];
    uint64_t          peer_tried[MGI_MOVER_MAX_DEVS];
} mgi_mover_cuda_t;

typedef struct mgi_mover {
    mgi_context_t     *ctx;
    mgi_mover_cand_t  *cand;
    unsigned          ncand_max;
    mgi_lane_t        **lanes;        /* every lane of a route seen */
    unsigned          nlanes;
    uint32_t          routes_set[MGI_MAX_LOCAL_EPS]; /* per endpoint: its
                                       * first routes, set up by this mover
                                       * (mgi_mover_new_routes; an
                                       * endpoint's routes are only ever
                                       * appended, its index not reused) */
    mgi_lane_t        **refresh;      /* credit reads in flight */
    unsigned          nrefresh;
    mgi_mover_epoch_t epochs[MGI_MOVER_FLUSHES_MAX];
    unsigned          first, nepochs; /* flushes in flight, oldest first */
    uint64_t          seq;            /* of the open flush */
    uint64_t          *rank_seq;      /* [size]: flush that put to a rank */
    size_t            lane_bytes;
    unsigned          rr;             /* round-robin tie breaker */
    uint64_t          moved_segs, last_moved, last_log_ns, credit_stalls;
    uint64_t          epochs_full;  /* rounds with every flush slot taken */
    uint64_t          puts, put_ns, put_bytes; /* data puts: calls, the time
                                                * inside ucp_put_nbx, bytes */
    uint64_t          copies, copy_ns, copy_bytes; /* the same of the CUDA
                                                    * copies in the process */
    uint64_t          ref_segs;     /* stage segments put by reference */
    uint64_t          flushes, flush_ns;  /* retired: how many, the time
                                           * from close to retire */
    uint64_t          rounds, round_ns, prog_ns; /* thread loop: rounds,
                                                  * their time, the time in
                                                  * ucp_worker_progress */
    uint64_t          looks, backlog;   /* since the last log: issues that
                                         * found sort segments waiting, and
                                         * how many they found */
    uint32_t          backlog_max;      /* the most one of them saw */
    uint64_t          short_reads;      /* since the last log: credit reads
                                         * of a lane short of credits, */
    uint64_t          short_flight;     /*   its slots in flushes then, */
    uint64_t          short_held;       /*   published and not released */
} mgi_mover_t;

static inline unsigned mgi_mover_slot(mgi_mover_t *m, mgi_mover_epoch_t *e)
{
    return (unsigned)(e - m->epochs);
}

/* The stream of flush slot `slot`'s copies: one for every flush, each
 * completing with its own event. */
static inline cudaStream_t mgi_mover_stream(const mgi_mover_cuda_t *cu,
                                            unsigned slot)
{
    (void)slot;
    return cu->stream;
}

/* mgi_mover_cuda.c */
ucs_status_t mgi_mover_cuda_get(mgi_mover_t *m, mgi_mover_cuda_t **cu_p);
void         mgi_mover_cuda_peers(mgi_context_t *ctx, mgi_mover_cuda_t *cu,
                                  int src, int dst);
ucs_status_t mgi_mover_post_copies(mgi_mover_t *m, mgi_mover_epoch_t *e,
                                   cudaStream_t stream);

#endif

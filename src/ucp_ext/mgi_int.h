/**
 * MGI channels: private structures shared by the library's files.
 *
 * Per local endpoint (CPU now; a GPU endpoint places the same rings in
 * device memory and runs the sorter as a kernel):
 *   stage rings   one per user block, append mode, fed by mgi_send
 *   sort rings    one per next hop, append mode, fed by the sorter
 *   receive ring  one per endpoint, registered with UCP; split in lanes:
 *                 lane r (r < nranks) is written by rank r's mover with
 *                 RMA (segment mode, credit = free slots), lane nranks is
 *                 the loopback lane written by the sorter (append mode)
 *   final rings   one per (channel, consuming block), append mode
 */
#ifndef MGI_INT_H_
#define MGI_INT_H_

#include "mgi/mgi.h"
#include "mgi/mgi_ring.h"
#include "mgi/mgi_dev_ch.h"

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>
#include <pthread.h>

#ifdef __cplusplus
extern "C" {   /* mgi_sorter.cu is C++ */
#endif

#define MGI_MAX_EPS         ((MGI_MAX_RANKS + 1) * MGI_MAX_LOCAL_EPS)
#define MGI_MAX_SORT_RINGS  16     /* sort rings per next hop */
#define MGI_MOVER_FLUSHES_MAX 64   /* flushes a mover keeps in flight */
#define MGI_OWNER_HELP_MAX  8      /* MGI_OWNER_HELP: MGI_GPU_HELP_JOBS */
#define MGI_RKEY_MAX        512
#define MGI_MAX_CH_SRC      64
#define MGI_GPU_MAX_BLOCKS  1024   /* user blocks of a GPU endpoint */
#define MGI_GPU_MAX_TARGETS 64     /* destinations of a GPU channel */
#define MGI_SHM_NAME_MAX    48     /* POSIX shared-memory object names */
#define MGI_HOST_NAME_MAX   64     /* host names compared at context create */
#define MGI_NICS_MAX        16     /* NICs of a host that rails number */
#define MGI_NET_DEVS_MAX    128    /* UCX_NET_DEVICES of one NIC */
/* Host sorter epochs after which it no longer looks at what was
 * unpublished before the first (a round in progress may still hold it):
 * mgi_ch_reap waits that long (a GPU sorter answers a quiesce request
 * instead, mgi_gpu_quiesce_request) */
#define MGI_SORTER_QUIESCE_EPOCHS 2

typedef struct mgi_context  mgi_context_t;
typedef struct mgi_ep       mgi_ep_t;
typedef struct mgi_channel  mgi_channel_t;
typedef struct mgi_route_ctx mgi_route_ctx_t;

/* A rail (mgi_rail.c): a UCP context and worker of its own whose network
 * devices are one NIC's, for the cross-host traffic of this process's
 * endpoints nearest that NIC where it is not the context's own */
typedef struct mgi_rail {
    int           nic;                    /* its NIC's number on this host */
    char          devs[MGI_NET_DEVS_MAX]; /* its UCX_NET_DEVICES */
    ucp_context_h ucp;
    ucp_worker_h  worker;
} mgi_rail_t;

/* ------------------------------------------------------------- settings */

/* The parameters a context takes: the caller's fields (params->field_mask),
 * the others from the MGI_* settings (mgi_config.c), every number in its
 * range; a removed setting in the environment refuses it. */
ucs_status_t mgi_params_resolve(const mgi_context_params_t *params,
                                mgi_context_params_t *p);
/* A test hook (MGI_TEST_<name>: "SORT_MIRROR", "CTL_UCP"), as read at the
 * last context create or params init. */
int          mgi_config_test_hook(const char *name);
/* Whether the environment sets MGI_SEG_SIZE (the GPU default may then not
 * be halved to fit a sorter's shared memory). */
int          mgi_config_seg_size_set(void);
/* UCX_CUDA_MGI_TOPO_FILE as the last context create read it (NULL: not
 * set), through a UCS table: read so, UCX counts it as used. */
const char  *mgi_config_topo_file(void);
/* Whether the NVIDIA driver lists a GPU this process may see (read from
 * /proc, without initializing CUDA) */
int          mgi_machine_has_gpu(void);

/* ------------------------------------------------------------- bootstrap */

typedef struct mgi_bootstrap {
    mgi_oob_t oob;        /* the application's, or the TCP one */
    void      *tcp;       /* TCP bootstrap state, NULL with an OOB */
} mgi_bootstrap_t;

ucs_status_t mgi_bootstrap_init(mgi_bootstrap_t *bs,
                                const mgi_context_params_t *params);
void         mgi_bootstrap_fini(mgi_bootstrap_t *bs);
ucs_status_t mgi_bootstrap_allgather(mgi_bootstrap_t *bs, const void *sbuf,
                                     void *rbuf, size_t len);

/* ------------------------------------------------------------- endpoints */

/* A remote (or local) endpoint's receive ring as seen by movers. */
/* A CUDA runtime call: on failure, log it with the call's text and the
 * caller's "mgi ..." context, clear the runtime's last error, and give
 * UCS_ERR_IO_ERROR (for files that include cuda_runtime.h). */
#define MGI_CUDA_CALL(_call, _fmt, ...) \
    ({ \
        cudaError_t _e = (_call); \
        if (_e != cudaSuccess) { \
            cudaGetLastError(); \
            ucs_error("mgi " _fmt ": %s failed: " MGI_CUDA_ERR_FMT, \
                      ##__VA_ARGS__, #_call, MGI_CUDA_ERR_ARGS(_e)); \
        } \
        (_e == cudaSuccess) ? UCS_OK : UCS_ERR_IO_ERROR; \
    })

/* A CUDA runtime error in a message: its name and the runtime's string
 * (both static strings, for every code) */
#define MGI_CUDA_ERR_FMT      "%s: %s"
#define MGI_CUDA_ERR_ARGS(_e) cudaGetErrorName(_e), cudaGetErrorString(_e)

/* Control words of a GPU endpoint's receive lane, in pinned host memory
 * that is mapped into the GPU and registered with UCP: the lane's producer
 * (a mover: ucp_put over UCP's host-memory transports, or a store in its
 * own process) publishes RTail in prod_tail; the sorter kernel copies it
 * into the lane ring in GPU memory, and publishes the ring's RHead back in
 * cons_tail, which the producer reads for credits. The segments stay in
 * GPU memory; only these words cross, without a copy engine round trip.
 * The loopback lane (the last) is the sorter's own and has none. */
typedef struct mgi_lane_ctl {
    uint32_t prod_tail;     /* RTail, written by the producer */
    uint8_t  prod_pad[MGI_RING_LINE - sizeof(uint32_t)];
    uint32_t cons_tail;     /* RHead, written by the sorter */
    uint8_t  cons_pad[MGI_RING_LINE - sizeof(uint32_t)];
} mgi_lane_ctl_t;

typedef struct mgi_peer_ep {
    int        valid;
    int        rank;
    uint64_t   rbase;           /* address of its receive ring region */
    ucp_rkey_h rkey;
    int        has_ctl;         /* its lanes' RTail / RHead are in lane
                                   control words, not the ring headers */
    uint64_t   ctl_rbase;       /* address of its mgi_lane_ctl_t array */
    ucp_rkey_h ctl_rkey;        /* host memory: sm / self transports */
    /* its lane control words mapped into this process (same host: the
     * mover stores RTail and loads RHead there), NULL: through UCP */
    mgi_lane_ctl_t *ctl_map;
    size_t     ctl_map_len;
    int        gpu;             /* a GPU endpoint */
    /* of another host: the number of the NIC nearest it (-1: none named)
     * and, where this process has a worker on the NIC of that number, its
     * ring's rkey on the link there (mgi_rail.c; NULL: through peers[]) */
    int        nic;
    ucp_rkey_h nic_rkey;
} mgi_peer_ep_t;

/* Our lane in a next hop's receive ring: the mover is its only producer,
 * shared by the routes of all local endpoints to that next hop. Slots are
 * issued (put or copy started), then done (data complete at the next hop),
 * then published (RTail written and complete there): done <= issued and
 * RTail never covers data that is not done. */
typedef struct mgi_lane {
    mgi_ep_id_t   next_hop;
    int           listed;       /* mover: in its lane list */
    int           local;        /* next hop in this process: no UCP */
    int           shm_ctl;      /* next hop of another process on this
                                 * host: data through UCP, RTail / RHead
                                 * stored / loaded at local_tail / head in
                                 * its lane control words mapped here */
    int           local_gpu;    /* local, receive ring in GPU memory */
    int           local_dev;    /* local: its device, or MGI_EP_HOST */
    mgi_ring_t    *local_ring;  /* local: our lane there, a pointer here */
    uint32_t      *local_tail;  /* local: where RTail is stored (the ring
                                   header or our lane control words) */
    uint32_t      *local_head;  /* local: where RHead is loaded from */
    uint32_t      issued;       /* slots written or being written */
    uint32_t      done;         /* slots whose data is complete there */
    uint32_t      tail;         /* published RTail */
    uint32_t      head;         /* last fetched remote RHead (credits) */
    int           tail_busy;    /* a put of tail_buf is in flight */
    uint32_t      tail_buf;     /* source buffer of the tail put */
    uint32_t      head_buf;     /* landing buffer of the credit get */
    int           credit_busy;  /* a credit read is in flight */
    void          *credit_req;  /* its UCP request */
    uint64_t      credit_deadline;
    unsigned      mark;         /* mover: its data mark in the open flush */
    uint64_t      mark_seq;     /* mover: flush that `mark` belongs to */
    uint64_t      stalls;       /* rounds without credit */
} mgi_lane_t;

/* One sort ring: tuples for one next hop, moved by the mover. */
typedef struct mgi_route {
    mgi_ep_t      *ep;          /* owning local endpoint */
    mgi_ep_id_t   next_hop;
    mgi_ring_t    *ring;        /* sort ring (GPU endpoint: device memory) */
    mgi_ring_mirror_t *mirror;  /* NULL: the mover reads the ring itself;
                                   else its control words (mgi_ring.h) */
    uint32_t      cons;         /* segments the mover released */
    uint32_t      sent;         /* segments the mover put (cons..sent are in
                                   flight) */
    unsigned      slot;         /* index in the endpoint's route_list; the
                                   sort rings of one next hop (GPU
                                   endpoints: MGI_SORT_RINGS) are
                                   consecutive, the first in routes[] */
    mgi_lane_t    *lane;
    uint64_t      moved_segs;
} mgi_route_t;

struct mgi_ep {
    mgi_context_t *ctx;
    mgi_ep_id_t   id;
    unsigned      index;        /* local index */
    int           device;
    unsigned      nblocks;      /* user blocks */
    unsigned      ngroups;      /* stage rings per user block (GPU) */
    unsigned      nstage;       /* nblocks x ngroups */
    mgi_ring_t    **stage;      /* [nstage]: block b's ring of group g at
                                   g * nblocks + b */
    void          *recv_mem;    /* receive ring region: nlanes lanes */
    size_t        lane_bytes;
    unsigned      nlanes;
    size_t        ring_bytes;   /* stage rings + receive ring */
    ucp_mem_h     recv_memh;
    void          *rkey_buf;
    size_t        rkey_len;
    /* GPU endpoints (and CPU endpoints with MGI_SORT_MIRROR=1): lane
     * control words (mgi_lane_ctl_t) in host memory registered with UCP,
     * [nlanes - 1]; GPU: pinned and mapped into the GPU. NULL: the lane
     * rings' headers are the control words. */
    mgi_lane_ctl_t *lane_ctl;     /* host address */
    char          ctl_shm[MGI_SHM_NAME_MAX]; /* its POSIX shared memory */
    size_t        ctl_len;
    mgi_lane_ctl_t *lane_ctl_dev; /* the same, mapped into the GPU */
    ucp_mem_h     ctl_memh;
    void          *ctl_rkey_buf;
    size_t        ctl_rkey_len;
    /* next hop -> route (sort ring), filled by mgi_ch_create */
    mgi_route_t   **routes;     /* [MGI_MAX_EPS], NULL where none */
    mgi_route_t   **route_list; /* dense list for the mover */
    unsigned      nroutes;      /* published with release */
    pthread_mutex_t route_lock;
    /* sorter */
    pthread_t     sorter;
    int           sorter_running;
    void          *sorter_state;
    volatile int  stop;
    uint32_t      sorter_epoch;
    unsigned      refcount;     /* channels using this endpoint */
    char          vertex[32];   /* mgi_ep_params_t.vertex, "" if none */
    /* the number of the NIC nearest it, which carries its cross-host
     * puts (-1: the context's choice); a rail where that is not the
     * context's own NIC, its receive ring registered there too */
    int           nic;
    mgi_rail_t    *rail;
    ucp_mem_h     rail_memh;
    void          *rail_rkey_buf;
    size_t        rail_rkey_len;
    void          *gpu;         /* GPU endpoint state (mgi_sorter.cu) */
};

static inline int mgi_ep_is_gpu(const mgi_ep_t *ep)
{
    return ep->device != MGI_EP_HOST;
}

/* Lane number `lane` of a receive ring at recv_mem (this process's address
 * of it); every endpoint's lanes have one size, lane_bytes. */
static inline mgi_ring_t *mgi_lane_at(void *recv_mem, size_t lane_bytes,
                                      unsigned lane)
{
    return (mgi_ring_t*)((char*)recv_mem + lane * lane_bytes);
}

static inline mgi_ring_t *mgi_ep_lane(mgi_ep_t *ep, unsigned lane)
{
    return mgi_lane_at(ep->recv_mem, ep->lane_bytes, lane);
}

/* -------------------------------------------------------------- channels */

typedef struct mgi_ch_dst {
    mgi_ep_t       *ep;
    mgi_ring_t     *final;      /* one consuming block on the host */
    uint32_t       eof_count[MGI_MAX_CH_SRC];
    uint32_t       eof_sources; /* sources complete; release-published */
    int            error;       /* duplicate EOF, ... */
    pthread_mutex_t recv_lock;
    uint64_t       recv_tuples;
    uint64_t       recv_bytes;
    uint64_t       dispatched;  /* by the sorter */
} mgi_ch_dst_t;

typedef struct mgi_ch_src {
    mgi_ep_t       *ep;
    int            flushed;        /* MGI_SRC_* of mgi_channel.c */
    int            delivered;      /* set by the sorter */
    uint32_t       flush_seq;
    uint64_t       flush_deadline;
} mgi_ch_src_t;

/* The most next hops one (source, destination) pair spreads over */
#define MGI_ROUTE_MAX_SPLIT 4

/* An endpoint's next hops towards one destination where the plan gives
 * it several (mgi_route.c): what it sends or forwards spreads over them by
 * their shares of the capacity and their sort rings' occupancy
 * (mgi_split_pick), and an EOF goes on through each. A source's EOF so
 * reaches the destination once for each of its walks there (paths), and
 * each copy says so (its count of records times paths). */
typedef struct mgi_ch_split {
    unsigned    n;                            /* next hops, 1 or more */
    mgi_ep_id_t hop[MGI_ROUTE_MAX_SPLIT];
    float       share[MGI_ROUTE_MAX_SPLIT];   /* of the capacity, sum 1 */
    uint32_t    paths;                        /* a source's walks to the
                                                 destination, 1 or more */
} mgi_ch_split_t;

/* Which of a pair's n next hops takes its next tuples (a CPU source: a
 * tuple; a GPU sorter block: a pass's or a whole segment's): the one whose
 * sort ring holds the fewest segments for its share, the open one and one
 * in flight not counted (used[k], share[k] > 0); among those alike, the
 * one whose share holds the point frac((c + 0.5) * 0.618...) of theirs, c
 * the caller's count of its picks. So while the rings keep up, the pair's
 * tuples spread in the plan's shares, and a path that falls behind (its
 * ring fills) takes less until it catches up. One function for the CPU
 * sorter and the GPU's, on both sides of the same channel. */
MGI_INLINE unsigned mgi_split_pick(unsigned n, const uint32_t *used,
                                   const float *share, uint32_t c)
{
    float best = 3.4e38f, load, total = 0, u;
    unsigned k, last = 0;

    for (k = 0; k < n; ++k) {
        load = (float)((used[k] > 2) ? used[k] - 2 : 0) / share[k];
        best = (load < best) ? load : best;
    }
    for (k = 0; k < n; ++k) {
        if ((float)((used[k] > 2) ? used[k] - 2 : 0) / share[k] <= best) {
            total += share[k];
        }
    }
    /* frac((c + 0.5) * 0.618...) in 32-bit fixed point */
    u = (float)(c * 0x9e3779b9u + 0x4f1bbcdcu) * (1.0f / 4294967296.0f) *
        total;
    for (k = 0; k < n; ++k) {
        if ((float)((used[k] > 2) ? used[k] - 2 : 0) / share[k] > best) {
            continue;
        }
        if (u < share[k]) {
            return k;
        }
        u   -= share[k];
        last = k;
    }
    return last;
}

struct mgi_channel {
    mgi_ch_id_t    id;
    unsigned       nsrc, ndst;
    mgi_ep_id_t    src[MGI_MAX_CH_SRC];
    mgi_ep_id_t    *dst;
    size_t         tuple_size;   /* 0: schemaless */
    size_t         max_tuple;
    int            part_key;
    unsigned       flags;        /* mgi_ch_params_t.flags */
    size_t         key_off, key_size;
    mgi_ch_dst_t   *ldst;        /* [ndst], ep == NULL where not local */
    mgi_ch_src_t   *lsrc;        /* [nsrc], ep == NULL where not local */
    void           *gpu[MGI_MAX_LOCAL_EPS]; /* per local GPU endpoint */
    /* deleted, not freed yet (mgi_ch_reap): the next in ctx->dead, and
     * where the local sorters were when it was taken from their tables
     * (a host sorter's epoch, a GPU sorter's quiesce request) */
    struct mgi_channel *dead_next;
    uint32_t       dead_mark[MGI_MAX_LOCAL_EPS];
    unsigned       dead_neps;    /* ctx->neps then: endpoint slots are not
                                    reused, so a later one never saw it */
    /* GIG next hops (mgi_route.c): per local endpoint (by its index) the
     * next hop towards each destination (in the order of dst), NULL where
     * every one is the destination itself */
    struct mgi_route_ch *route;
    mgi_ep_id_t    *hops[MGI_MAX_LOCAL_EPS];
    /* per local endpoint, [ndst]: the next hops it spreads over (n >= 2)
     * and a source's walks to each destination (paths >= 2), else both 0:
     * its hop above, one walk; NULL where none */
    mgi_ch_split_t *split[MGI_MAX_LOCAL_EPS];
    int            routes_ready; /* hops and sort rings made (release): a
                                    relay's sorter waits for it, as other
                                    ranks may send once the create's
                                    allgather is done */
    /* per local endpoint: tuples and EOFs it forwarded for other
     * endpoints (its sorter), EOFs it is to forward */
    uint64_t       relayed[MGI_MAX_LOCAL_EPS];
    uint32_t       relay_eofs[MGI_MAX_LOCAL_EPS];
    uint32_t       relay_expect[MGI_MAX_LOCAL_EPS];
    unsigned       relayed_pairs; /* (source, destination) pairs whose
                                     first hop is a relay: every rank alike */
};

/* ------------------------------------------------------------- context */

struct mgi_context {
    mgi_context_params_t params;
    mgi_bootstrap_t  bs;
    int              rank, size;
    size_t           seg_size;
    ucp_context_h    ucp;
    ucp_worker_h     worker;
    ucp_ep_h         *peers;       /* [size] */
    mgi_peer_ep_t    *peer_eps;    /* [MGI_MAX_EPS] */
    mgi_lane_t       **lanes;      /* [MGI_MAX_EPS], by next hop */
    mgi_ep_t         *eps[MGI_MAX_LOCAL_EPS];
    unsigned         neps;         /* local endpoints created so far */
    mgi_channel_t    **chs;        /* [max_channels], read by sorters */
    unsigned         next_ch;
    mgi_channel_t    *dead;        /* deleted channels that sorters may
                                      still read: freed by mgi_ch_reap */
    pthread_mutex_t  lock;
    int              host_peers;   /* other processes on this host */
    /* rails (mgi_rail.c): the number of the context's own NIC (-1: UCX's
     * choice) and its devices; the rails of this process's endpoints,
     * nrails published with release (the mover progresses them); every
     * rank's worker addresses (its own at r * (MGI_NICS_MAX + 1), its
     * rail of NIC n at r * (MGI_NICS_MAX + 1) + n + 1) and how many rails
     * of each are known; the links to rank r through NIC n at
     * n * size + r, with peer error handling */
    int              nic;
    char             net_devs[MGI_NET_DEVS_MAX];
    mgi_rail_t       rails[MGI_NICS_MAX];
    unsigned         nrails;
    uint32_t         nics_refused;     /* bit n: NIC n got no rail */
    void             **addrs;
    uint32_t         *rank_nrails;
    ucp_ep_h         *links;
    /* other processes' direct rings mapped here (CUDA IPC), by handle:
     * their endpoints pool them for the next channel of the same size,
     * whose sources here find them mapped; closed at mgi_context_destroy
     * once the sorters have stopped (cudaIpcCloseMemHandle waits for the
     * device to idle, which a persistent sorter never lets it do) */
    struct mgi_dmap {
        uint8_t ipc[64];
        void    *p;
    }                *dmaps;
    unsigned         ndmaps, dmaps_cap;
    int              has_cuda_mgi; /* cuda_mgi among the UCP's transports */
    /* test hooks (MGI_TEST_SORT_MIRROR, MGI_TEST_CTL_UCP): CPU endpoints'
     * sort rings read through a control-word mirror as GPU endpoints'
     * are; lane control words of this host through UCP, not shared
     * memory */
    int              sort_mirror;
    int              ctl_ucp;
    int              mover_copy_one; /* the runtime refused a batch of
                                        copies: one by one from then on */
    /* mover */
    pthread_t        mover;
    void             *mover_state;
    int              mover_running;
    volatile int     mover_stop;
    volatile int     mover_quiet;      /* progress only, move nothing */
    volatile int     mover_quiet_ack;
    ucs_status_t     mover_status;
    /* the processes of this host's other ranks, whose end the mover
     * notices (mgi_context_peers_alive): pid 0 where not watched (another
     * host, a pid namespace where that pid is another process) */
    struct mgi_peer_proc {
        int32_t  pid;
        int32_t  ended;                /* seen gone: its endpoint is closed
                                          without waiting for it */
        uint64_t start;                /* its start time, in clock ticks */
        int32_t  other_host;           /* runs on another host */
    }                *peer_procs;
    uint64_t         peers_seen_ns;    /* the mover's last look at them */
    volatile int     leaving;          /* mgi_context_destroy has begun */
    int              ep_failed;        /* UCP said an endpoint failed */
    uint8_t          *peer_err_mode;   /* [rank]: its endpoint has peer
                                          error handling */
    uint32_t         *fail_word;       /* mapped host memory, with the
                                          first GPU endpoint: 1 once the
                                          mover stopped on an error, for
                                          the device calls (mgi_dev_ch_t.
                                          failed) */
    int              failed_said;      /* the API said mover_status once */
    volatile int     mover_device;     /* CUDA device the mover binds, or
                                          MGI_EP_HOST */
    void             *mover_cuda;      /* the mover's CUDA streams for
                                          copies inside this process */
    struct mgi_region *regions;        /* registered, not deregistered
                                          (mgi_region.c), under lock */
    mgi_route_ctx_t  *route;           /* the GIG plan (mgi_route.c), made
                                          at the first mgi_ch_create */
    struct gig_graph *host_graph;      /* this host's graph where the NIC
                                          choice loaded it at the create;
                                          the plan takes it */
};

/* Whether the job's ranks span hosts (not every other rank shares this
 * one): the NIC choice and the rails apply */
static inline int mgi_context_spans_hosts(const mgi_context_t *ctx)
{
    return ctx->host_peers < ctx->size - 1;
}

/* Progress of the rails' workers (mgi_rail.c), beside the context's: the
 * mover's and every wait's */
static inline unsigned mgi_rails_progress(mgi_context_t *ctx)
{
    unsigned i, n = __atomic_load_n(&ctx->nrails, __ATOMIC_ACQUIRE);
    unsigned count = 0;

    for (i = 0; i < n; ++i) {
        count += ucp_worker_progress(ctx->rails[i].worker);
    }
    return count;
}

/* helpers for every layer (mgi_util.c) */
uint64_t     mgi_time_ns(void);
/* Now plus the context's bound on every wait (MGI_TIMEOUT_MS), in ns */
static inline uint64_t mgi_deadline_ns(const mgi_context_t *ctx)
{
    return mgi_time_ns() + (uint64_t)ctx->params.timeout_ms * 1000000ull;
}
/* Time for the next info-level speed log of a sorter or mover thread
 * (MGI_LOG_INTERVAL_MS since *last_ns)? If so, *dt_p is the seconds since
 * then and *last_ns is now. */
int          mgi_log_due(const mgi_context_t *ctx, uint64_t *last_ns,
                         double *dt_p);
/* Wait for UCP request `req` (progressing the worker) for at most
 * MGI_TIMEOUT_MS; its error is said naming `what` and `obj` */
ucs_status_t mgi_ucp_wait(mgi_context_t *ctx, ucs_status_ptr_t req,
                          const char *what, const void *obj);
/* One idle round of a polling loop: spin, then sleep MGI_IDLE_US or yield */
void         mgi_idle(mgi_context_t *ctx, unsigned *idle_rounds);

/* the context's peers (mgi_peers.c) */
/* Collective: which ranks run on this host, and which of their processes
 * the mover can watch */
ucs_status_t mgi_context_hosts(mgi_context_t *ctx);
/* UCP's error callback of the endpoints to other ranks (arg: the context) */
void         mgi_context_ep_failed(void *arg, ucp_ep_h ep, ucs_status_t status);
/* Close UCP endpoint *ep_p to rank r and clear it: waited for (a bounded
 * wait), forced where the rank is lost (apart: the ranks did not meet at
 * the destroy; the mover stopped on an error; its process ended) and the
 * endpoint has peer error handling (err_mode), left to ucp_worker_destroy
 * where lost without it */
void         mgi_context_ep_close(mgi_context_t *ctx, ucp_ep_h *ep_p, int r,
                                  int apart, int err_mode);
/* UCP's notice that a rank's endpoint failed, once the rank is known */
void         mgi_context_rank_failed(mgi_context_t *ctx, int r,
                                     ucs_status_t status);
/* A UCP context and worker with the context's transports and settings
 * (mgi_ucp.c), its own NIC choice (net_devs NULL) or a rail's devices */
ucs_status_t mgi_ucp_open(mgi_context_t *ctx, const char *net_devs,
                          ucp_context_h *ucp_p, ucp_worker_h *worker_p);
/* Whether UCP context ucp has transport tl (tl not NULL), else device dev,
 * among its resources (UCP has no query for them: its printed info) */
int          mgi_ucp_has(ucp_context_h ucp, const char *tl, const char *dev);
/* Register a region that movers of other processes reach with RMA in UCP
 * context ucp and pack its rkey (at most MGI_RKEY_MAX bytes) */
ucs_status_t mgi_ep_mem_publish(mgi_ep_t *ep, ucp_context_h ucp, void *addr,
                                size_t len, ucs_memory_type_t mtype,
                                const char *what, ucp_mem_h *memh_p,
                                void **rkey_buf_p, size_t *rkey_len_p);

/* Rails (mgi_rail.c): the NIC of each endpoint's cross-host traffic.
 * init keeps the ranks' worker addresses where they span hosts (at
 * connect); ep_nic gives a new local endpoint its NIC and, where that is
 * not the context's, the rail there (*rail_p, else NULL), where the
 * endpoint registers its receive ring too; exchange
 * (collective, at a channel create: every rank's rail count as the wire
 * said it, `mine` this one's) learns the rails not known yet;
 * peer_learn makes the link to a peer endpoint of another host on the
 * NIC of its number, where this process has a worker there; put_ep is the
 * UCP endpoint and rkey of a put from ep to peer and the number of what
 * the flush must flush (flush_ep's argument); disconnect closes the
 * links, fini the rails. */
ucs_status_t mgi_rails_init(mgi_context_t *ctx, const char *addrs,
                            const uint64_t *lens, size_t stride);
ucs_status_t mgi_rail_ep_nic(mgi_ep_t *ep, mgi_rail_t **rail_p);
ucs_status_t mgi_rails_exchange(mgi_context_t *ctx, const uint32_t *nrails,
                                unsigned mine);
ucs_status_t mgi_rail_peer_learn(mgi_context_t *ctx, mgi_peer_ep_t *peer,
                                 int nic, int on_rail, const void *rkey_buf);
ucp_ep_h     mgi_rail_put_ep(mgi_context_t *ctx, const mgi_ep_t *ep,
                             const mgi_peer_ep_t *peer, ucp_rkey_h *rkey_p,
                             int *flush_p);
ucp_ep_h     mgi_rail_flush_ep(mgi_context_t *ctx, int flush);
void         mgi_rails_disconnect(mgi_context_t *ctx, int apart);
void         mgi_rails_fini(mgi_context_t *ctx);
/* The mover, every MGI_PEER_WATCH_MS: UCS_ERR_CONNECTION_RESET, said,
 * once the process of another rank on this host has ended (before the
 * context's destroy began) */
ucs_status_t mgi_context_peers_alive(mgi_context_t *ctx);
/* The cause of a transfer's error `status`: UCS_ERR_CONNECTION_RESET,
 * said, where a rank ended or UCP reported its endpoint failed within a
 * short grace period (a process's memory goes before its exit shows),
 * else `status` */
ucs_status_t mgi_context_error_cause(mgi_context_t *ctx, ucs_status_t status);
/* UCS_OK, or the mover's error once it stopped: the context delivers
 * nothing any more (said once, naming the call) */
ucs_status_t mgi_context_failed(mgi_context_t *ctx, const char *what,
                                unsigned ch, mgi_ep_id_t ep);
/* This process's endpoint `id`, or NULL where it is another rank's or
 * unknown */
static inline mgi_ep_t *mgi_ep_lookup(mgi_context_t *ctx, mgi_ep_id_t id)
{
    unsigned idx = id % MGI_MAX_LOCAL_EPS;

    if ((MGI_EP_RANK(id) != ctx->rank) || (idx >= ctx->neps)) {
        return NULL;
    }
    return ctx->eps[idx];
}

/* channels */
ucs_status_t mgi_ch_reap(mgi_context_t *ctx, int wait);

/* endpoints */
/* A ring of `depth` segments for ep, checked against the memory there is
 * first (refused naming `var`, the setting of its depth) */
mgi_ring_t  *mgi_ep_ring_create(mgi_ep_t *ep, uint32_t depth, uint32_t flags,
                                const char *var);
/* Says that final ring `i` of `n` of channel `ch` at ep could not be had,
 * and what sets its size */
void         mgi_ep_final_nomem(mgi_ep_t *ep, unsigned ch, unsigned i,
                                unsigned n);
void         mgi_ep_ring_free(mgi_ep_t *ep, void *ring);
ucs_status_t mgi_ep_route_get(mgi_ep_t *ep, mgi_ep_id_t next_hop,
                              mgi_route_t **route_p);
void         mgi_ep_destroy(mgi_ep_t *ep);

/* routing (mgi_route.c): the GIG planner's graph and plan, collective at
 * the first mgi_ch_create; a local endpoint's vertex for the channel
 * allgather; a channel's next hops from the vertices of its endpoints
 * (hvert[id], gpu[id] by endpoint id); the next hop of a local src */
ucs_status_t mgi_route_init(mgi_context_t *ctx);
void         mgi_route_fini(mgi_context_t *ctx);
/* The UCX devices (UCX_NET_DEVICES) of the NIC nearest this process's GPU
 * (PCI bus id gpu_bus_id, else CUDA ordinal cuda_dev; neither: the CPU it
 * runs on) in this host's graph, sysfs under `sysfs` (NULL: /sys), into
 * buf; the choice, or why there is none, into why. Returns how many
 * devices were named (0: leave UCX's choice). The graph it loaded goes to
 * *graph_p where given (the caller destroys it), so that the plan does not
 * load it again. The NIC's number among this host's NICs (its rail,
 * mgi_rail.c) goes to *nic_p where given, -1 where none is named. */
int          mgi_route_net_devices(const char *gpu_bus_id, int cuda_dev,
                                   const char *sysfs, char *buf, size_t len,
                                   char *why, size_t wlen,
                                   struct gig_graph **graph_p, int *nic_p);
int32_t      mgi_route_ep_vertex(mgi_context_t *ctx, const mgi_ep_t *ep);
/* The same for local endpoint ep: the UCX devices of the NIC nearest its
 * vertex in the host graph the context's NIC choice loaded, the NIC's
 * number among this host's NICs (its rail) in *nic_p, -1 where none is
 * named (one host, UCX_NET_DEVICES set, no NIC with devices) */
int          mgi_route_ep_net_devices(mgi_context_t *ctx, const mgi_ep_t *ep,
                                      char *buf, size_t len, char *why,
                                      size_t wlen, int *nic_p);
ucs_status_t mgi_route_ch_plan(mgi_context_t *ctx, mgi_channel_t *ch,
                               const int32_t *hvert, const uint8_t *gpu,
                               const uint32_t *nprod);
void         mgi_route_ch_fini(mgi_channel_t *ch);
ucs_status_t mgi_route_ch_busy(mgi_context_t *ctx, const mgi_channel_t *ch);
/* Where ep (local) spreads what it sends or forwards for destination
 * number j over several next hops, or its EOF takes several walks there,
 * those; else NULL (its one next hop is mgi_route_next_hop's) */
const mgi_ch_split_t *mgi_route_split(const mgi_channel_t *ch,
                                      mgi_ep_id_t src, unsigned j);
mgi_ep_id_t  mgi_route_next_hop(mgi_context_t *ctx, const mgi_channel_t *ch,
                                mgi_ep_id_t src, mgi_ep_id_t dst);

/* sorter (host threads) */
ucs_status_t mgi_sorter_start(mgi_ep_t *ep);
void         mgi_sorter_stop(mgi_ep_t *ep);

/* GPU endpoints (mgi_sorter.cu): rings in device memory, the sorter as a
 * persistent kernel, sort-ring control words mirrored in pinned host
 * memory for the mover */
ucs_status_t mgi_gpu_ep_init(mgi_ep_t *ep);
/* The largest of seg_size, seg_size / 2, ... (down to
 * MGI_GPU_SEG_FIT_MIN) whose sorter fits the shared memory of every
 * visible CUDA device; seg_size without one. */
#define MGI_GPU_SEG_FIT_MIN (16u << 10)
size_t       mgi_gpu_seg_fit(size_t seg_size);
void         mgi_gpu_ep_fini(mgi_ep_t *ep);
void        *mgi_gpu_ring_create(mgi_ep_t *ep, const void *image, size_t len,
                                 unsigned nrings);
void         mgi_gpu_ring_free(mgi_ep_t *ep, void *ring);
/* Free memory of ep's GPU now (cudaMemGetInfo), said where it fails */
ucs_status_t mgi_gpu_mem_free(mgi_ep_t *ep, size_t *free_p);
void        *mgi_gpu_host_alloc(mgi_ep_t *ep, size_t len);
void         mgi_gpu_host_free(void *p);
ucs_status_t mgi_gpu_route_add(mgi_ep_t *ep, mgi_route_t *route);
/* Peer access of device `dev` (the current one) to device `peer`: a
 * cudaError_t, cudaSuccess once enabled (or already),
 * cudaErrorPeerAccessUnsupported where the pair cannot; the CUDA error
 * state left cleared (the mover's copies and peer lanes) */
int          mgi_gpu_peer_enable(int dev, int peer);
/* A mapping of another process's GPU memory (CUDA IPC), undone */
void         mgi_gpu_peer_unmap(void *p);
/* The channel's final rings at a GPU endpoint, in its sorter's table;
 * where no device memory was found for final ring i (of ep->nblocks),
 * UCS_ERR_NO_MEMORY and i into *nomem_p, left alone otherwise (the
 * caller reports it: mgi_ep_final_nomem) */
ucs_status_t mgi_gpu_ch_add(mgi_ep_t *ep, mgi_channel_t *ch,
                            unsigned *nomem_p);
ucs_status_t mgi_gpu_ch_routes(mgi_ep_t *ep, mgi_channel_t *ch);
ucs_status_t mgi_gpu_ch_check_done(mgi_ep_t *ep, mgi_channel_t *ch);
/* The EOF records ep's sorter forwarded for the channel as a relay */
ucs_status_t mgi_gpu_ch_relay_eofs(mgi_ep_t *ep, mgi_channel_t *ch,
                                   uint32_t *n_p);
/* MGI_DIRECT_RINGS=1: a destination's nin rings of `stride` bytes (cap
 * tuples each), zeroed, and their IPC handle (64 bytes at ipc); where they
 * are in this process; a mapping of another process's (cudaIpc, closed by
 * mgi_gpu_peer_unmap); a source's pointers to each destination's rings
 * (bases[ndst]), its first ring there dfirst */
ucs_status_t mgi_gpu_ch_direct_in(mgi_ep_t *ep, mgi_channel_t *ch,
                                  unsigned nin, uint32_t cap, size_t stride,
                                  void *ipc);
void        *mgi_gpu_ch_direct_base(mgi_ep_t *ep, mgi_channel_t *ch);
ucs_status_t mgi_gpu_direct_map(mgi_ep_t *ep, const void *ipc, void **base_p);
ucs_status_t mgi_gpu_ch_direct_out(mgi_ep_t *ep, mgi_channel_t *ch,
                                   char *const *bases, char *const *lands,
                                   const uint64_t *land_cap, uint32_t dfirst,
                                   unsigned nin, uint32_t cap, size_t stride);
/* A destination's landing buffer (mgi_ch_params_t.land, `tuples` of the
 * channel's): checked (device memory of its GPU, 16-byte aligned, inside
 * its allocation), and the IPC handle of that allocation (64 bytes at
 * ipc) and the buffer's offset in it; the tuples that landed in it
 * (mgi_ch_query). lands[ndst] of mgi_gpu_ch_direct_out: each
 * destination's buffer mapped here or NULL, with its tuples. */
ucs_status_t mgi_gpu_ch_land_in(mgi_ep_t *ep, mgi_channel_t *ch, void *buf,
                                uint64_t tuples, void *ipc, uint64_t *off_p);
ucs_status_t mgi_gpu_ch_landed(mgi_ep_t *ep, mgi_channel_t *ch,
                               uint64_t *tuples_p);
ucs_status_t mgi_gpu_ch_rename(mgi_ep_t *ep, mgi_channel_t *ch,
                               mgi_ch_id_t old);
void         mgi_gpu_ch_unpublish(mgi_ep_t *ep, mgi_channel_t *ch);
void         mgi_gpu_ch_remove(mgi_ep_t *ep, mgi_channel_t *ch);
ucs_status_t mgi_gpu_ch_handle(mgi_ep_t *ep, mgi_channel_t *ch,
                               mgi_dev_ch_t *h);
/* What a GPU endpoint's sorter kernel holds of each SM it runs on: its
 * blocks, threads a block, registers a thread, shared memory bytes a
 * block (mgi_context_user_blocks). */
void         mgi_gpu_sorter_use(mgi_context_t *ctx, unsigned *blocks,
                                unsigned *threads, unsigned *regs,
                                size_t *smem);
ucs_status_t mgi_gpu_sorter_start(mgi_ep_t *ep);
void         mgi_gpu_sorter_stop(mgi_ep_t *ep);
uint32_t     mgi_gpu_quiesce_request(mgi_ep_t *ep);
uint32_t     mgi_gpu_quiesce_mark(mgi_ep_t *ep);
int          mgi_gpu_quiesced(mgi_ep_t *ep, uint32_t mark);
void         mgi_gpu_bind_thread(int device);

/* mover */
ucs_status_t mgi_mover_start(mgi_context_t *ctx);
void         mgi_mover_stop(mgi_context_t *ctx);
void         mgi_mover_quiesce(mgi_context_t *ctx);
void         mgi_mover_cuda_fini(mgi_context_t *ctx);

/* regions: free those left at the context's destroy (before its
 * endpoints close) */
void           mgi_region_fini_all(mgi_context_t *ctx);

/* channels */
static inline mgi_channel_t *mgi_ch_lookup(mgi_context_t *ctx,
                                           mgi_ch_id_t id)
{
    if (id >= ctx->params.max_channels) {
        return NULL;
    }
    return __atomic_load_n(&ctx->chs[id], __ATOMIC_ACQUIRE);
}

/* The index of endpoint `ep` among the channel's destinations (sources),
 * or -1 */
static inline int mgi_ch_dst_index(const mgi_channel_t *ch, mgi_ep_id_t ep)
{
    unsigned i;

    for (i = 0; i < ch->ndst; ++i) {
        if (ch->dst[i] == ep) {
            return (int)i;
        }
    }
    return -1;
}

static inline int mgi_ch_src_index(const mgi_channel_t *ch, mgi_ep_id_t ep)
{
    unsigned i;

    for (i = 0; i < ch->nsrc; ++i) {
        if (ch->src[i] == ep) {
            return (int)i;
        }
    }
    return -1;
}
void           mgi_channel_free(mgi_channel_t *ch);

#ifdef __cplusplus
}
#endif

#endif

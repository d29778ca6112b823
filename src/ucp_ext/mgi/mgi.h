/**
 * MGI channels: host API (paper §3.1, Table 3) over UCP.
 *
 * A context joins the processes of one job (bootstrap: an out-of-band
 * allgather passed in by the application, or the built-in TCP bootstrap).
 * Endpoints are created locally; their ids are global and deterministic:
 * MGI_EP_ID(rank, n) is the n-th endpoint created by `rank`. Channels are
 * created collectively by every process of the context with the same
 * arguments, in the same order.
 *
 * Data calls (mgi_send / mgi_recv / mgi_flush) are non-blocking except
 * mgi_flush, which waits (bounded by the context timeout) until the tuples
 * of the calling endpoint were delivered.
 */
#ifndef MGI_H_
#define MGI_H_

#include <ucs/type/status.h>
#include "mgi_dev_ch.h"
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mgi_context *mgi_context_h;
typedef uint16_t            mgi_ep_id_t;
typedef uint16_t            mgi_ch_id_t;

#define MGI_MAX_LOCAL_EPS   16      /* endpoints per process */
#define MGI_EP_ID(_rank, _n) ((mgi_ep_id_t)((_rank) * MGI_MAX_LOCAL_EPS + (_n)))
#define MGI_EP_RANK(_id)    ((int)(_id) / MGI_MAX_LOCAL_EPS)
#define MGI_MAX_RANKS       1023
#define MGI_EP_HOST         (-1)    /* mgi_ep_params_t::device: CPU endpoint */
#define MGI_DST_AUTO        (-1)    /* mgi_send: partition key or broadcast */
#define MGI_EOF             (-1000) /* mgi_recv: every source flushed */
#define MGI_MAX_ATTRS       16

/* Out-of-band allgather: every rank passes len bytes in sbuf and receives
 * size * len bytes in rbuf, ordered by rank. Returns 0 on success. */
typedef int (*mgi_oob_allgather_fn_t)(const void *sbuf, void *rbuf,
                                      size_t len, void *arg);

typedef struct mgi_oob {
    mgi_oob_allgather_fn_t allgather;
    void                   *arg;
    int                    rank;
    int                    size;
} mgi_oob_t;

/**
 * Fields of mgi_context_params_t, for its field_mask (as UCX's params
 * structs have). A field whose bit is clear takes the value of its MGI_*
 * setting where the environment has one, else the default (`mgi_info -c`
 * lists the settings with their defaults and ranges); a field whose bit is
 * set is used as it is, whatever the environment says.
 */
#define MGI_CONTEXT_PARAM_FIELD_OOB               (1ull << 0)
#define MGI_CONTEXT_PARAM_FIELD_BOOTSTRAP_ADDR    (1ull << 1)
#define MGI_CONTEXT_PARAM_FIELD_RANK              (1ull << 2)
#define MGI_CONTEXT_PARAM_FIELD_SIZE              (1ull << 3)
#define MGI_CONTEXT_PARAM_FIELD_SEG_SIZE          (1ull << 4)
#define MGI_CONTEXT_PARAM_FIELD_TUPLE_SIZE        (1ull << 5)
#define MGI_CONTEXT_PARAM_FIELD_PRODUCER_THREADS  (1ull << 6)
#define MGI_CONTEXT_PARAM_FIELD_BATCH             (1ull << 7)
#define MGI_CONTEXT_PARAM_FIELD_MSG_BATCH         (1ull << 8)
#define MGI_CONTEXT_PARAM_FIELD_DEV_TILE_BATCH    (1ull << 9)
#define MGI_CONTEXT_PARAM_FIELD_STAGE_DEPTH       (1ull << 10)
#define MGI_CONTEXT_PARAM_FIELD_STAGE_GROUPS      (1ull << 11)
#define MGI_CONTEXT_PARAM_FIELD_SORT_DEPTH        (1ull << 12)
#define MGI_CONTEXT_PARAM_FIELD_RECV_DEPTH        (1ull << 13)
#define MGI_CONTEXT_PARAM_FIELD_FINAL_DEPTH       (1ull << 14)
#define MGI_CONTEXT_PARAM_FIELD_MAX_CHANNELS      (1ull << 15)
#define MGI_CONTEXT_PARAM_FIELD_MOVER_BATCH       (1ull << 16)
#define MGI_CONTEXT_PARAM_FIELD_MOVER_FLUSHES     (1ull << 17)
#define MGI_CONTEXT_PARAM_FIELD_TIMEOUT_MS        (1ull << 18)
#define MGI_CONTEXT_PARAM_FIELD_IDLE_US           (1ull << 19)
#define MGI_CONTEXT_PARAM_FIELD_LOG_INTERVAL_MS   (1ull << 20)
#define MGI_CONTEXT_PARAM_FIELD_SORTER_BLOCKS     (1ull << 21)
#define MGI_CONTEXT_PARAM_FIELD_SORTER_THREADS    (1ull << 22)
#define MGI_CONTEXT_PARAM_FIELD_SORT_RINGS        (1ull << 23)
#define MGI_CONTEXT_PARAM_FIELD_SEND_ZCOPY        (1ull << 24)
#define MGI_CONTEXT_PARAM_FIELD_SEND_WAIT_ROUNDS  (1ull << 25)
#define MGI_CONTEXT_PARAM_FIELD_DIRECT_RINGS      (1ull << 26)
#define MGI_CONTEXT_PARAM_FIELD_DIRECT_RING_KB    (1ull << 27)
#define MGI_CONTEXT_PARAM_FIELD_DIRECT_PUBLISH_KB (1ull << 28)
#define MGI_CONTEXT_PARAM_FIELD_UCX_TLS           (1ull << 29)
#define MGI_CONTEXT_PARAM_FIELD_GPU_DEFAULTS      (1ull << 30)
#define MGI_CONTEXT_PARAM_FIELD_PEER_WATCH_MS     (1ull << 31)
#define MGI_CONTEXT_PARAM_FIELDS_ALL ((1ull << 32) - 1)

/**
 * Context parameters. mgi_context_params_init() fills every field as the
 * context would take it (its MGI_* setting, else the default) and sets
 * every bit of field_mask; a caller then changes the fields it wants. The
 * fields marked "CPU / GPU" have two defaults, chosen by gpu_defaults: on
 * a machine whose NVIDIA driver lists a GPU (and CUDA_VISIBLE_DEVICES not
 * empty) those sized for GPU endpoints, else those sized for CPU
 * endpoints. [MGI_X] names a field's setting; the others have none.
 */
#define MGI_GPU_SEG_SIZE (128u << 10) /* seg_size of the GPU defaults */
typedef struct mgi_context_params {
    uint64_t    field_mask;       /* MGI_CONTEXT_PARAM_FIELD_*: the fields
                                     set by the caller */
    /* bootstrap: oob.allgather != NULL selects it, else TCP bootstrap */
    mgi_oob_t   oob;
    const char  *bootstrap_addr;  /* host:port of rank 0 [MGI_BOOTSTRAP] */
    int         rank;             /* TCP bootstrap rank [MGI_RANK] */
    int         size;             /* TCP bootstrap size [MGI_NRANKS] */
    /* rings */
    size_t      seg_size;         /* segment bytes; 0: header + message
                                     size of tuple_size x producer_threads
                                     x batch (paper §5.3); CPU / GPU: 0 /
                                     MGI_GPU_SEG_SIZE (halved where a GPU's
                                     sorter would not hold it in shared
                                     memory) [MGI_SEG_SIZE] */
    unsigned    tuple_size;       /* typical tuple bytes used to size
                                     segments (seg_size 0), 24 */
    unsigned    producer_threads; /* producer threads per user block, 32 */
    unsigned    batch;            /* batching degree N, 16 */
    unsigned    msg_batch;        /* mgi_send on a schema: payload bytes
                                     of a chunk of the buffer whose tuples
                                     go as one message per destination,
                                     4096; 0: a message per tuple */
    unsigned    dev_tile_batch;   /* the same for mgi_dev_send_block_tile
                                     (a tile's tuples of one destination);
                                     0: a message per tuple */
    unsigned    stage_depth;      /* segments per stage ring, CPU / GPU
                                     8 / 16 [MGI_STAGE_DEPTH] */
    unsigned    stage_groups;     /* GPU endpoints: stage rings per user
                                     block (1..8), destination i in ring
                                     i % stage_groups, 1 */
    unsigned    sort_depth;       /* segments per sort ring, CPU / GPU
                                     8 / 256 [MGI_SORT_DEPTH] */
    unsigned    recv_depth;       /* segments per receive lane (credits per
                                     sender), CPU / GPU 8 / 256
                                     [MGI_RECV_DEPTH] */
    unsigned    final_depth;      /* segments per final ring, CPU / GPU
                                     8 / 16 [MGI_FINAL_DEPTH] */
    unsigned    max_channels;     /* channels held at once (a deleted
                                     channel's id is reused), 256 */
    /* movers */
    unsigned    mover_batch;      /* segments moved per flush, CPU / GPU
                                     16 / 32 [MGI_MOVER_BATCH] */
    unsigned    mover_flushes;    /* flushes in flight at most, 16 (1..64) */
    /* waits and logs */
    unsigned    timeout_ms;       /* bound of every wait, 60000
                                     [MGI_TIMEOUT_MS] */
    unsigned    idle_us;          /* sleep of an idle sorter/mover, 50
                                     [MGI_IDLE_US] */
    unsigned    log_interval_ms;  /* info log of speeds and ring usage,
                                     1000 [MGI_LOG_INTERVAL_MS] */
    /* GPU endpoints */
    unsigned    sorter_blocks;    /* blocks of a GPU endpoint's sorter
                                     kernel, CPU / GPU 2 / 16
                                     [MGI_SORTER_BLOCKS] */
    unsigned    sorter_threads;   /* threads per sorter block, 256 */
    unsigned    sort_rings;       /* sort rings per next hop of a GPU
                                     endpoint, sorter block b writing ring
                                     b % sort_rings, CPU / GPU 1 / 4 */
    unsigned    send_zcopy;       /* 1: whole stage segments for another
                                     endpoint are put from the stage ring
                                     (faster for all-to-all); 0: copied
                                     into the sort ring first (faster
                                     point-to-point), 0 */
    unsigned    send_wait_rounds; /* with send_zcopy: rounds of its
                                     sorter block a run of stage segments
                                     that may still grow waits before a
                                     reference takes it, 16 */
    unsigned    direct_rings;     /* 1: a channel whose endpoints are all
                                     GPU endpoints of one host (a schema,
                                     at most 64 destinations) gets direct
                                     rings unless its creator opts out
                                     (MGI_CH_FLAG_NO_DIRECT): a user block
                                     stores its tuples in a ring of its
                                     own in each destination GPU's memory
                                     (no sorter, no mover); 0: no channel
                                     of the context gets them, 1
                                     [MGI_DIRECT_RINGS] */
    unsigned    direct_ring_kb;   /* KiB of tuples of a direct ring, 512 */
    unsigned    direct_publish_kb; /* KiB a user block may write to a
                                     direct ring before it publishes the
                                     ring's tail; 0: after every send,
                                     128 */
    /* UCP */
    const char  *ucx_tls;         /* transports of this context's UCP, in
                                     UCX_TLS syntax (e.g. "sm,self,cuda_mgi,
                                     cuda_copy"); NULL: UCX_TLS
                                     [MGI_UCX_TLS] */
    unsigned    gpu_defaults;     /* which defaults the "CPU / GPU"
                                     fields take: 0 those sized for CPU
                                     endpoints, 1 for GPU endpoints; from
                                     the machine (a GPU listed by the
                                     NVIDIA driver) */
    unsigned    peer_watch_ms;    /* period of the mover's look at the
                                     processes of the other ranks of this
                                     host (a rank that ended fails the
                                     context), 100; 0: none */
} mgi_context_params_t;

/* Fixed-size tuples: attributes packed in order, no padding. An attribute
 * of any other size (strings) is a byte array of that size. */
typedef struct mgi_schema {
    unsigned nattrs;
    unsigned attr_size[MGI_MAX_ATTRS];   /* bytes of each attribute */
} mgi_schema_t;

typedef struct mgi_ep_params {
    int      device;         /* CUDA device, or MGI_EP_HOST */
    unsigned blocks;         /* user blocks (stage / final rings), 1 */
    /* the vertex of this host's topology (UCX_CUDA_MGI_TOPO_FILE, else the
     * discovered one) where the endpoint sits, by name (under 32
     * characters); NULL: its GPU's, or a CPU endpoint the host's first
     * CPU. Channels follow the GIG planner's next hops between these
     * vertices (docs/routing.md). */
    const char *vertex;
} mgi_ep_params_t;

typedef struct mgi_ch_params {
    const mgi_ep_id_t  *src;
    unsigned           nsrc;
    const mgi_ep_id_t  *dst;
    unsigned           ndst;
    const mgi_schema_t *schema;      /* NULL: schemaless */
    int                part_key;     /* attribute index, or -1 */
    size_t             max_tuple;    /* schemaless: largest tuple, bytes */
    /* Landing buffers, for a channel that gets direct rings
     * (MGI_CH_FLAG_NO_DIRECT below): NULL, or [ndst] in the order of dst. Where
     * land[i] is set for a destination endpoint of this process (other
     * ranks' entries are not read), it is device memory of that
     * endpoint's GPU (cudaMalloc) with room for land_tuples[i] tuples, and
     * the sources' block and tile sends store the tuples for that
     * endpoint straight into it, each run at a place taken by an atomic
     * add: no ring, no receive copy, in no order. What does not fit goes
     * through the ring as without one and is received with
     * mgi_dev_recv_block_to / _each. Once every source flushed (the
     * destination's receives returned MGI_DEV_EOF), the first
     * mgi_ch_attr_t.land_tuples (mgi_ch_query) or mgi_dev_landed tuples
     * of the buffer hold what landed. The buffer must stay allocated
     * until the channel is deleted; other processes keep their mapping
     * of its allocation (CUDA IPC) until mgi_context_destroy, so a
     * buffer used for many channels is mapped once. A source GPU without
     * native peer atomics to the destination's GPU (PCIe) does not land
     * there. */
    void *const        *land;
    const uint64_t     *land_tuples;
    unsigned           flags;        /* MGI_CH_FLAG_*, 0 by default; the
                                        same at every rank */
} mgi_ch_params_t;

/* mgi_ch_params_t.flags. A channel whose endpoints are all GPU endpoints
 * of one host (every rank on it), with a schema and at most 64
 * destinations, gets direct rings by default: each user block of a
 * source stores its tuples in a ring of its own in each destination
 * GPU's memory, read there by the destination's user blocks (no sorter,
 * no mover). Every other channel goes through stage rings, sorters and
 * movers. The device calls of mgi_device.cuh serve both kinds. */
#define MGI_CH_FLAG_NO_DIRECT 1u    /* through the sorters and movers even
                                       where direct rings would serve */
/* Order. A destination gets each source's tuples in the order sent where
 * they take one path: every pair on one host without a topology file, and
 * every pair whose plan gives one next hop at each endpoint on the way
 * (docs/routing.md). Where the plan gives several (no direct link,
 * several relays), tuples spread over them, by their shares of the
 * capacity and the occupancy of their rings, and may arrive in another
 * order; the source's EOF still comes after every one of them. With
 * MGI_CH_FLAG_ORDERED each pair keeps to one path, and the pairs of one
 * place spread over the next hops instead. */
#define MGI_CH_FLAG_ORDERED   2u
#define MGI_CH_FLAGS_ALL      (MGI_CH_FLAG_NO_DIRECT | MGI_CH_FLAG_ORDERED)

typedef struct mgi_ch_attr {
    size_t   tuple_size;      /* 0: schemaless */
    uint64_t recv_tuples;     /* delivered to mgi_recv at this dst */
    uint64_t recv_bytes;
    unsigned nsrc;
    unsigned eof_count[64];   /* EOF records seen per source index (<= 64):
                                 a CPU source's one, a GPU source's one
                                 per producer, each through every next
                                 hop the pair spreads over
                                 (mgi_ch_next_hops) */
    uint64_t relayed_tuples;  /* tuples this endpoint forwarded for other
                                 destinations of the channel (the planner
                                 made it their next hop); a CPU endpoint */
    unsigned relayed_eofs;    /* EOF records it forwarded (a GPU endpoint:
                                 as of mgi_ch_delete's last check) */
    uint64_t land_tuples;     /* a GPU destination with a landing buffer
                                 (mgi_ch_params_t.land): tuples that
                                 landed at its start (all of them once
                                 every source flushed) */
} mgi_ch_attr_t;

void         mgi_context_params_init(mgi_context_params_t *params);
/* The MGI_* settings with the values this process would take, as
 * `mgi_info -c` prints them: doc bit 0 with each one's help (its range
 * and default), bit 1 the test hooks (MGI_TEST_*) too. What the
 * environment holds that a context would refuse (a removed setting, a
 * value out of range) is logged and returned as UCS_ERR_INVALID_PARAM. */
ucs_status_t mgi_config_print(FILE *stream, int doc);
ucs_status_t mgi_context_create(const mgi_context_params_t *params,
                                mgi_context_h *ctx_p);
void         mgi_context_destroy(mgi_context_h ctx);
/* Segment bytes (header included) of every ring: what mgi_context_create
 * makes of these parameters (UCS_ERR_INVALID_PARAM, with a message, for
 * parameters it would refuse), and of a context. A block-level send of
 * more than a segment's payload never fits. */
ucs_status_t mgi_params_seg_size(const mgi_context_params_t *params,
                                 size_t *seg_size_p);
size_t       mgi_context_seg_size(mgi_context_h ctx);
int          mgi_context_rank(mgi_context_h ctx);
int          mgi_context_size(mgi_context_h ctx);
/* Allgather over the context's bootstrap (for applications and tests). */
ucs_status_t mgi_context_allgather(mgi_context_h ctx, const void *sbuf,
                                   void *rbuf, size_t len);

ucs_status_t mgi_ep_create(mgi_context_h ctx, const mgi_ep_params_t *params,
                           mgi_ep_id_t *ep_p);
ucs_status_t mgi_ep_delete(mgi_context_h ctx, mgi_ep_id_t ep);

/* Collective over all processes of the context. The id is the first one
 * (from the last create's on, cyclic over MGI_MAX_CHANNELS) that no
 * channel holds at any rank: ids of deleted channels are reused, and a
 * channel one rank has not deleted yet keeps its id. */
ucs_status_t mgi_ch_create(mgi_context_h ctx, const mgi_ch_params_t *params,
                           mgi_ch_id_t *ch_p);
/* Local: fails with UCS_ERR_BUSY until every local source flushed and
 * every local destination saw EOF and drained the channel. The id leaves
 * the tables at once; it and the channel's memory (its final rings go to
 * the next channel) are freed once the local sorters have gone through
 * their rounds since, by the next mgi_ch_create or mgi_ep_delete, which
 * wait for that. */
ucs_status_t mgi_ch_delete(mgi_context_h ctx, mgi_ch_id_t ch);
ucs_status_t mgi_ch_query(mgi_context_h ctx, mgi_ch_id_t ch, mgi_ep_id_t dst,
                          mgi_ch_attr_t *attr);
/* The endpoints a tuple of the channel visits from src to dst, both
 * included (src, dst when it goes directly): the same at every rank.
 * Returns how many it wrote into path, or -1 (unknown channel or
 * destination, more than max). */
int          mgi_ch_path(mgi_context_h ctx, mgi_ch_id_t ch, mgi_ep_id_t src,
                         mgi_ep_id_t dst, mgi_ep_id_t *path, int max);
/* The next hops endpoint ep of the channel spreads the tuples it sends or
 * forwards for dst over (see MGI_CH_FLAG_ORDERED), the same at every
 * rank: returns how many it wrote into hops (1: one, the one mgi_ch_path
 * takes), or -1 (unknown channel or endpoint, more than max). */
int          mgi_ch_next_hops(mgi_context_h ctx, mgi_ch_id_t ch,
                              mgi_ep_id_t ep, mgi_ep_id_t dst,
                              mgi_ep_id_t *hops, int max);

/**
 * Send tuples from a local CPU endpoint. Schema channels: len is a multiple
 * of the tuple size (several tuples at once). Schemaless: one tuple.
 * dst: an endpoint of the channel, or MGI_DST_AUTO (partition key, else
 * broadcast). Returns bytes accepted (whole tuples), 0 when the stage ring
 * is full, or a negative ucs_status_t.
 */
ssize_t      mgi_send(mgi_context_h ctx, mgi_ch_id_t ch, mgi_ep_id_t src,
                      const void *buf, size_t len, int dst);
/**
 * Receive at a local CPU endpoint: whole tuples, as many as fit in cap
 * (schemaless: one tuple). Returns bytes, 0 when nothing is ready, MGI_EOF
 * when every source flushed and all was received, or a negative
 * ucs_status_t.
 */
ssize_t      mgi_recv(mgi_context_h ctx, mgi_ch_id_t ch, mgi_ep_id_t dst,
                      void *buf, size_t cap);
/**
 * Append EOF for `src` on the channel and wait until the endpoint's tuples
 * were delivered to their destinations' receive rings (bounded by
 * timeout_ms: UCS_ERR_TIMED_OUT). A second flush, or a send after it,
 * fails with UCS_ERR_CANCELED. Delivery needs the destinations to keep
 * receiving: call mgi_recv on another thread, or use mgi_flush_nb.
 */
ucs_status_t mgi_flush(mgi_context_h ctx, mgi_ch_id_t ch, mgi_ep_id_t src);
/* Non-blocking flush: the first call appends EOF (when the stage ring has
 * room), later calls return UCS_INPROGRESS until delivered, then UCS_OK.
 * Not to be called concurrently for the same (ch, src). */
ucs_status_t mgi_flush_nb(mgi_context_h ctx, mgi_ch_id_t ch,
                          mgi_ep_id_t src);

/**
 * Why a device call of this context gave up (mgi_device.cuh: a flush or
 * send that passed MGI_TIMEOUT_MS, or a kernel's own mgi_dev_report):
 * the first report's MGI_DEV_ERR_* code, MGI_DEV_ERR_NONE if none, and
 * in why (may be NULL) a sentence naming its channel, GPU endpoint and
 * block. mgi_ch_delete logs it too when it finds a channel busy.
 */
uint32_t     mgi_context_device_error(mgi_context_h ctx, char *why,
                                      size_t len);

/**
 * Before the endpoint's create and the kernel's launch: how many blocks
 * of `threads` threads of `kernel` (a __global__ function, with `smem`
 * bytes of dynamic shared memory) are resident at once on CUDA device
 * `device` beside a GPU endpoint's sorter kernel there (an SM for each of
 * its MGI_SORTER_BLOCKS blocks at worst, with what such a block leaves of
 * its SM; the rest as cudaOccupancyMaxActiveBlocksPerMultiprocessor
 * counts). Every user block of a channel's kernel must be resident: they
 * wait for each other's tuples and EOFs. Give the endpoint at most that
 * many user blocks (mgi_ep_params_t.blocks) and launch that many;
 * divide by the endpoints where several share the device.
 * UCS_ERR_INVALID_PARAM for a kernel that cannot run with these threads.
 */
ucs_status_t mgi_context_user_blocks(mgi_context_h ctx, int device,
                                     const void *kernel, unsigned threads,
                                     size_t smem, unsigned *blocks_p);

/**
 * Before a kernel's launch: can the typed tile send
 * (mgi_dev_send_block_tile_of<tuple_size, slots>, slots MGI_DEV_TILE_ANY
 * 0, _ONE 1 or _MANY 2) send channel ch's tiles from GPU endpoint ep to
 * dst (an endpoint or MGI_DST_AUTO)? 1 yes, 0 no (the generic
 * mgi_dev_send_block_tile then serves), with a debug line that says
 * why. The same answer as mgi_dev_tile_of_fits on the device handle.
 */
int          mgi_ch_tile_fits(mgi_context_h ctx, mgi_ch_id_t ch,
                              mgi_ep_id_t ep, unsigned tuple_size,
                              unsigned slots, int dst);

/**
 * Device handle of a channel at a local GPU endpoint (a source or a
 * destination of the channel), for the device calls of mgi_device.cuh.
 * Valid until the channel is deleted. UCS_ERR_INVALID_PARAM for a CPU
 * endpoint or one that is not in the channel.
 */
ucs_status_t mgi_ch_device_handle(mgi_context_h ctx, mgi_ch_id_t ch,
                                  mgi_ep_id_t ep, mgi_dev_ch_t *h);

#ifdef __cplusplus
}
#endif

/* regions: one-sided access (needs the declarations above) */
#include "mgi_region.h"

#endif

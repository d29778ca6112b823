/**
 * cuda_mgi: the striping engine.  One large put or get is split across the
 * paths to the peer GPU in proportion to their shares (horizontal), and each
 * staged path's part is cut into chunks that flow through a two-stage
 * pipeline of bounce buffers (vertical).
 *
 *   direct  local GPU <-> peer GPU, one copy-engine copy
 *   host    local GPU -> pinned host buffer -> peer GPU (and back for get);
 *           the hop on the peer's side is issued in the peer GPU's context so
 *           that the peer's copy engine moves it over the peer's own PCIe link
 *   gpu     local GPU -> staging buffer on relay GPU k -> peer GPU
 *
 * Each part writes a disjoint range of the destination; the operation
 * completes when every part has landed.  Each operation is split so that
 * every path would finish what it already has queued and its new part at
 * the same time, at the rates the paths were measured to move
 * (cuda_mgi_share.h): a slow or busy path (the host path while both GPUs
 * send) gets less, and many operations in flight do not pile up on it.
 *
 * See file LICENSE for terms.
 */

#ifndef UCT_CUDA_MGI_STRIPE_H
#define UCT_CUDA_MGI_STRIPE_H

#include "cuda_mgi_share.h"

#include <uct/api/uct.h>
#include <ucs/type/status.h>
#include <cuda.h>
#include <sys/types.h>


/* Paths one operation may use: direct + staged ones */
#define UCT_CUDA_MGI_MAX_PATHS     4
#define UCT_CUDA_MGI_MAX_STAGED    (UCT_CUDA_MGI_MAX_PATHS - 1)
#define UCT_CUDA_MGI_MAX_GPUS      32
#define UCT_CUDA_MGI_MAX_STAGE_BUFS 64

/* Striped operations of a route left out of its timing log: the first
 * ones open contexts, map memory and allocate staging */
#define UCT_CUDA_MGI_WARMUP_OPS    16

/* An operation with nothing else in flight is striped only from this many
 * times MULTIPATH_THRESH: Open MPI's one message at a time moved 2-5 %
 * more at 16-64 MiB direct than striped, between two H200 */
#define UCT_CUDA_MGI_LONE_STRIPE   4

/* What a staged path adds to an operation before its first byte lands:
 * the first chunk's copy out and copy in, each launched on its own
 * stream, and the cross-context wait between them */
#define UCT_CUDA_MGI_STAGED_LATENCY 10e-6


typedef enum {
    UCT_CUDA_MGI_PATH_DIRECT,
    UCT_CUDA_MGI_PATH_HOST,
    UCT_CUDA_MGI_PATH_GPU,
    UCT_CUDA_MGI_PATH_LAST
} uct_cuda_mgi_path_kind_t;


extern const char *uct_cuda_mgi_path_kind_names[];


typedef struct uct_cuda_mgi_iface uct_cuda_mgi_iface_t;
typedef struct uct_cuda_mgi_ep    uct_cuda_mgi_ep_t;
typedef struct uct_cuda_mgi_rkey  uct_cuda_mgi_rkey_t;
typedef struct uct_cuda_mgi_mapping uct_cuda_mgi_mapping_t;


/* A GPU of this host, seen from this process */
typedef struct uct_cuda_mgi_gpu {
    CUdevice  dev;
    CUuuid    uuid;
    char      pci[16];    /* PCI bus id, as the topology names it */
    CUcontext ctx;        /* its primary context, retained on first use */
    CUstream  stream;     /* the far hops issued on this GPU */
} uct_cuda_mgi_gpu_t;


/* Bounce buffers of one staged path in one direction, used in turn:
 * buffer b is refilled only after its previous contents left (freed[b]) */
typedef struct uct_cuda_mgi_stage_ring {
    int       initialized;
    CUcontext ctx[2];                           /* of hop 1 and hop 2 */
    CUstream  stream[2];                        /* hop 1, hop 2 */
    void      *buf[UCT_CUDA_MGI_MAX_STAGE_BUFS];
    CUevent   filled[UCT_CUDA_MGI_MAX_STAGE_BUFS]; /* hop 1 done (ctx[0]) */
    CUevent   freed[UCT_CUDA_MGI_MAX_STAGE_BUFS];  /* hop 2 done (ctx[1]) */
    CUstream  join;       /* local stream: completion of a put's far hop */
    unsigned  next;
} uct_cuda_mgi_stage_ring_t;


/* A staged path to one peer GPU */
typedef struct uct_cuda_mgi_stage_path {
    uct_cuda_mgi_path_kind_t  kind;
    uct_cuda_mgi_gpu_t        *far;      /* GPU whose context issues the
                                            far hop: the peer (host path)
                                            or the relay (gpu path) */
    double                    capacity;  /* bytes/s, from the topology */
    uct_cuda_mgi_stage_ring_t ring[2];   /* [0] put, [1] get */
} uct_cuda_mgi_stage_path_t;


/* Everything known about the way to one peer GPU */
typedef struct uct_cuda_mgi_route {
    CUuuid                    uuid;
    uct_cuda_mgi_gpu_t        *peer;      /* NULL: not visible here */
    double                    direct_capacity;
    unsigned                  num_staged;
    uct_cuda_mgi_stage_path_t staged[UCT_CUDA_MGI_MAX_STAGED];
    /* [0] the direct path, [1 + i] staged[i]: rates and queues for the
     * split (cuda_mgi_share.h) */
    uct_cuda_mgi_lane_t       lane[UCT_CUDA_MGI_MAX_PATHS];
    unsigned long             num_striped; /* operations striped so far */
    /* where striped operations spent their time, for the info log at
     * cleanup: seconds summed over num_timed operations */
    unsigned long             num_timed;
    double                    sum_issue;   /* posting, on the CPU */
    double                    sum_direct;  /* until the direct part landed */
    unsigned long             num_direct_timed; /* those with a direct part */
    double                    sum_staged[UCT_CUDA_MGI_MAX_STAGED];
    unsigned long             num_staged_timed[UCT_CUDA_MGI_MAX_STAGED];
    double                    sum_direct_len;
    double                    sum_staged_len[UCT_CUDA_MGI_MAX_STAGED];
} uct_cuda_mgi_route_t;


/* What one striped operation left behind for its completion */
typedef struct uct_cuda_mgi_stripe_op {
    unsigned                  num_parts;    /* events[0] is the direct part */
    uct_cuda_mgi_route_t      *route;
    double                    post_time;
    double                    issue_time;   /* when posting returned */
    double                    done_time[UCT_CUDA_MGI_MAX_PATHS];
    size_t                    length[UCT_CUDA_MGI_MAX_PATHS];
    unsigned                  path[UCT_CUDA_MGI_MAX_PATHS]; /* staged[] */
    uct_cuda_mgi_mapping_t    *far_map[UCT_CUDA_MGI_MAX_PATHS]; /* held */
} uct_cuda_mgi_stripe_op_t;


/* Per-interface state of the engine */
typedef struct uct_cuda_mgi_stripe {
    struct gig_graph     *graph;      /* the machine, for the planner */
    struct gig_plan      *plan;       /* NULL: capacities from NVML */
    int                  plan_tried;
    unsigned             num_gpus;
    uct_cuda_mgi_gpu_t   gpus[UCT_CUDA_MGI_MAX_GPUS];
    unsigned             num_routes;
    uct_cuda_mgi_route_t *routes[UCT_CUDA_MGI_MAX_GPUS];
    uct_cuda_mgi_gpu_t   *local;
} uct_cuda_mgi_stripe_t;


/* One copy-engine copy between local and remote GPU memory, in the
 * operation's direction */
static inline CUresult
uct_cuda_mgi_copy_d2d(int is_put, CUdeviceptr local, CUdeviceptr remote,
                      size_t length, CUstream stream)
{
    return is_put ? cuMemcpyDtoDAsync(remote, local, length, stream) :
                    cuMemcpyDtoDAsync(local, remote, length, stream);
}


ucs_status_t uct_cuda_mgi_stripe_init(uct_cuda_mgi_iface_t *iface);

void uct_cuda_mgi_stripe_cleanup(uct_cuda_mgi_iface_t *iface);

/* The route to the GPU that owns key, created on first use */
uct_cuda_mgi_route_t *
uct_cuda_mgi_stripe_route(uct_cuda_mgi_iface_t *iface,
                          const uct_cuda_mgi_rkey_t *key);

/* Split [local, +length) <-> [remote, +length) over the route's paths.
 * remote_mapped is the remote address mapped in the local context; the
 * direct part, if any, is issued on direct_stream.  Fills op and the
 * events (events[0] only when op->length[0] > 0). */
ucs_status_t
uct_cuda_mgi_stripe_post(uct_cuda_mgi_iface_t *iface,
                         uct_cuda_mgi_route_t *route,
                         const uct_cuda_mgi_rkey_t *key, CUdeviceptr local,
                         CUdeviceptr remote_mapped, uint64_t remote_addr,
                         size_t length, int is_put, CUstream direct_stream,
                         CUevent *events, uct_cuda_mgi_stripe_op_t *op);

/* Part i of op (events[i]) was seen landed at time t (seconds) */
void uct_cuda_mgi_stripe_part_done(uct_cuda_mgi_stripe_op_t *op, unsigned i,
                                   double t);

/* All parts of op have landed: release its mappings */
void uct_cuda_mgi_stripe_done(uct_cuda_mgi_iface_t *iface,
                              uct_cuda_mgi_stripe_op_t *op);

#endif

/**
 * cuda_mgi: MGI multi-GPU transport for UCX.
 * See file LICENSE for terms.
 */

#ifndef UCT_CUDA_MGI_IFACE_H
#define UCT_CUDA_MGI_IFACE_H

#include "cuda_mgi_md.h"
#include "cuda_mgi_post.h"
#include "cuda_mgi_stripe.h"

#include <uct/base/uct_iface.h>
#include <ucs/datastruct/mpool.h>
#include <ucs/datastruct/queue.h>
#include <cuda.h>
#include <limits.h>


/* Upper bound of UCX_CUDA_MGI_MAX_STREAMS (streams are an array; a set
 * of them is a 32-bit mask) */
#define UCT_CUDA_MGI_MAX_STREAMS 32

/* cuMemcpyBatchAsync as CUDA 12.8 drivers and later give it (looked up at
 * run time: older drivers have none) */
typedef CUresult (*uct_cuda_mgi_memcpy_batch_func_t)(
        CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
        CUmemcpyAttributes *attrs, size_t *attr_idxs, size_t num_attrs,
        size_t *fail_idx, CUstream stream);




typedef struct uct_cuda_mgi_iface_config {
    uct_iface_config_t super;
    unsigned           max_poll;
    unsigned           max_streams;
    unsigned           max_outstanding;
    size_t             max_short;
    size_t             max_bcopy;
    double             bandwidth;
    double             latency;
    unsigned           paths;           /* bit per uct_cuda_mgi_path_kind_t */
    size_t             multipath_thresh;
    size_t             chunk_size;
    unsigned           stage_bufs;
    double             host_bandwidth;
    ucs_config_names_array_t relays;
    char               *topo_file;
    int                batch;
} uct_cuda_mgi_iface_config_t;

/* Every range check of the settings, naming the variable (no CUDA call:
 * make check runs it without a GPU) */
ucs_status_t
uct_cuda_mgi_iface_config_check(const uct_cuda_mgi_iface_config_t *config);


/**
 * One asynchronous copy in flight: completes when its event has fired.
 */
typedef struct uct_cuda_mgi_event_desc {
    CUevent           event[UCT_CUDA_MGI_MAX_PATHS]; /* one per part */
    unsigned          num_events;
    unsigned          done_mask;    /* parts seen complete */
    uint32_t          stream_bit;   /* UCS_BIT(its index in streams[])
                                     * for a single copy; 0 when striped
                                     * (its parts are on several) */
    uct_cuda_mgi_stripe_op_t stripe; /* when num_events > 1 */
    ucs_status_t      status;       /* UCS_OK, or a post that failed */
    int               waiting;      /* its copy waits to be posted */
    uint64_t          seq;          /* its number among its ep's copies */
    ucs_queue_elem_t  queue;
    uct_completion_t  *comp;
    uct_cuda_mgi_ep_t *ep;
    uct_cuda_mgi_mapping_t *mapping; /* of the remote allocation, held */
} uct_cuda_mgi_event_desc_t;


/**
 * Private part of a pending request (fits uct_pending_req_t::priv).
 */
typedef struct uct_cuda_mgi_pending_priv {
    uct_pending_req_priv_queue_t super;
    uct_cuda_mgi_ep_t            *ep;
} uct_cuda_mgi_pending_priv_t;


struct uct_cuda_mgi_iface {
    uct_base_iface_t super;
    ucs_mpool_t      event_mp;       /* uct_cuda_mgi_event_desc_t */
    ucs_queue_head_t outstanding_q;  /* events in flight, oldest first */
    ucs_queue_head_t pending_q;      /* requests waiting for a free slot */
    unsigned         outstanding;    /* length of outstanding_q */
    CUcontext        cuda_context;   /* context of the first operation */
    int              streams_initialized;
    CUstream         streams[UCT_CUDA_MGI_MAX_STREAMS];
    CUstream         sync_stream;    /* short/bcopy, waited for at once */
    void             *bounce;        /* pinned host buffer for bcopy */
    CUuuid           peer_uuid[UCT_CUDA_MGI_MAX_STREAMS];
    unsigned         num_peers;      /* known peer GPUs, a stream each */
    int              fenced;         /* an iface fence waits for the copies
                                      * in flight before it */
    struct {                         /* copies not posted yet (in order) */
        unsigned     count;
        CUstream     stream[UCT_CUDA_MGI_BATCH_MAX];
        CUdeviceptr  dst[UCT_CUDA_MGI_BATCH_MAX];
        CUdeviceptr  src[UCT_CUDA_MGI_BATCH_MAX];
        size_t       size[UCT_CUDA_MGI_BATCH_MAX];
        struct uct_cuda_mgi_event_desc *desc[UCT_CUDA_MGI_BATCH_MAX];
        uct_cuda_mgi_memcpy_batch_func_t func; /* NULL: one by one */
        unsigned long batches, batched;        /* for the close log */
    } post;
    uct_cuda_mgi_stripe_t stripe;    /* multi-path state */
    struct {
        unsigned     max_poll;
        unsigned     max_streams;
        unsigned     max_outstanding;
        size_t       max_short;
        size_t       max_bcopy;
        double       bandwidth;
        double       latency;
        unsigned     paths;
        size_t       multipath_thresh;
        size_t       chunk_size;
        unsigned     stage_bufs;
        double       host_bandwidth;
        int          relays[UCT_CUDA_MGI_MAX_GPUS];
        unsigned     num_relays;
        int          batch;
        int          host_bandwidth_auto;
        char         topo_file[PATH_MAX];
    } config;
};


ucs_status_t uct_cuda_mgi_iface_init_cuda(uct_cuda_mgi_iface_t *iface);

unsigned uct_cuda_mgi_iface_peer_stream(uct_cuda_mgi_iface_t *iface,
                                        const CUuuid *peer_uuid);

int uct_cuda_mgi_iface_has_resources(uct_cuda_mgi_iface_t *iface);

ucs_status_t uct_cuda_mgi_iface_fence(uct_iface_h tl_iface, unsigned flags);

void uct_cuda_mgi_iface_post(uct_cuda_mgi_iface_t *iface);


/* Whether a direct copy waits to be posted with others: only while copies
 * are in flight (the copy engine is busy anyway, so waiting until a
 * progress call finds it short of work or enough copies wait, or until a
 * flush or fence, costs no time; an idle interface posts at once) */
static UCS_F_ALWAYS_INLINE int
uct_cuda_mgi_iface_batching(uct_cuda_mgi_iface_t *iface)
{
    return (iface->post.func != NULL) &&
           ((iface->post.count > 0) || (iface->outstanding > 0));
}


/* Post the copies that wait, if any: before anything that waits for them
 * (flush, fence, close) */
static UCS_F_ALWAYS_INLINE void
uct_cuda_mgi_iface_post_waiting(uct_cuda_mgi_iface_t *iface)
{
    if (iface->post.count > 0) {
        uct_cuda_mgi_iface_post(iface);
    }
}


/* Post the copies that wait, if they are due (above) */
static UCS_F_ALWAYS_INLINE void
uct_cuda_mgi_iface_post_due(uct_cuda_mgi_iface_t *iface)
{
    if (uct_cuda_mgi_post_is_due(iface->post.count, iface->outstanding)) {
        uct_cuda_mgi_iface_post(iface);
    }
}


static UCS_F_ALWAYS_INLINE void
uct_cuda_mgi_iface_enqueue(uct_cuda_mgi_iface_t *iface, CUstream stream,
                           CUdeviceptr dst, CUdeviceptr src, size_t size,
                           uct_cuda_mgi_event_desc_t *desc)
{
    unsigned k;

    if (iface->post.count == UCT_CUDA_MGI_BATCH_MAX) {
        uct_cuda_mgi_iface_post(iface);
    }
    desc->waiting         = 1;
    k                     = iface->post.count++;
    iface->post.stream[k] = stream;
    iface->post.dst[k]    = dst;
    iface->post.src[k]    = src;
    iface->post.size[k]   = size;
    iface->post.desc[k]   = desc;
}

#endif

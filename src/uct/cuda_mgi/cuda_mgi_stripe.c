/**
 * cuda_mgi: the striping engine (see cuda_mgi_stripe.h).
 * See file LICENSE for terms.
 */

#ifdef HAVE_CONFIG_H
#  include "config.h"
#endif

#include "cuda_mgi_stripe.h"
#include "cuda_mgi_iface.h"
#include "cuda_mgi_ep.h"
#include "cuda_mgi_plan.h"
#include "cuda_mgi_share.h"

#include <ucs/debug/log.h>
#include <ucs/debug/memtrack_int.h>
#include <ucs/sys/math.h>
#include <ucs/time/time.h>
#include <string.h>


const char *uct_cuda_mgi_path_kind_names[] = {
    [UCT_CUDA_MGI_PATH_DIRECT] = "direct",
    [UCT_CUDA_MGI_PATH_HOST]   = "host",
    [UCT_CUDA_MGI_PATH_GPU]    = "gpu",
    [UCT_CUDA_MGI_PATH_LAST]   = NULL
};



#define UCT_CUDA_MGI_CU(_iface, _call) \
    ({ \
        CUresult _r = (_call); \
        if (_r != CUDA_SUCCESS) { \
            ucs_error("cuda_mgi iface %p: %s failed: %s", (_iface), #_call, \
                      uct_cuda_mgi_cu_error(_r)); \
        } \
        (_r == CUDA_SUCCESS) ? UCS_OK : UCS_ERR_IO_ERROR; \
    })


static ucs_status_t uct_cuda_mgi_ctx_push(uct_cuda_mgi_iface_t *iface,
                                          CUcontext ctx)
{
    return UCT_CUDA_MGI_CU(iface, cuCtxPushCurrent(ctx));
}


static void uct_cuda_mgi_ctx_pop(void)
{
    CUcontext ctx;
    cuCtxPopCurrent(&ctx);
}


ucs_status_t uct_cuda_mgi_stripe_init(uct_cuda_mgi_iface_t *iface)
{
    uct_cuda_mgi_stripe_t *st = &iface->stripe;
    CUdevice local_dev;
    int i, count;

    memset(st, 0, sizeof(*st));
    if ((cuCtxGetDevice(&local_dev) != CUDA_SUCCESS) ||
        (cuDeviceGetCount(&count) != CUDA_SUCCESS)) {
        ucs_error("cuda_mgi iface %p: cannot list the CUDA devices", iface);
        return UCS_ERR_IO_ERROR;
    }

    for (i = 0; (i < count) && (i < UCT_CUDA_MGI_MAX_GPUS); ++i) {
        uct_cuda_mgi_gpu_t *gpu = &st->gpus[st->num_gpus];
        if ((cuDeviceGet(&gpu->dev, i) != CUDA_SUCCESS) ||
            (cuDeviceGetUuid(&gpu->uuid, gpu->dev) != CUDA_SUCCESS)) {
            continue;
        }
        if (cuDeviceGetPCIBusId(gpu->pci, sizeof(gpu->pci), gpu->dev) !=
            CUDA_SUCCESS) {
            gpu->pci[0] = '\0';
        }
        if (gpu->dev == local_dev) {
            /* the interface's own context serves the local GPU; staged
             * paths give its hops streams of their own */
            gpu->ctx  = iface->cuda_context;
            st->local = gpu;
        }
        ++st->num_gpus;
    }

    if (st->local == NULL) {
        ucs_error("cuda_mgi iface %p: the current GPU is not among the %d "
                  "listed", iface, count);
        return UCS_ERR_IO_ERROR;
    }
    return UCS_OK;
}


static ucs_status_t uct_cuda_mgi_gpu_open(uct_cuda_mgi_iface_t *iface,
                                          uct_cuda_mgi_gpu_t *gpu)
{
    ucs_status_t status;

    if (gpu->ctx != NULL) {
        return UCS_OK;
    }

    /* The far hop of a staged path runs on this GPU's copy engine, so this
     * process needs a context there: its primary one, as the runtime uses */
    status = UCT_CUDA_MGI_CU(iface, cuDevicePrimaryCtxRetain(&gpu->ctx,
                                                             gpu->dev));
    if (status != UCS_OK) {
        gpu->ctx = NULL;
        return status;
    }

    status = uct_cuda_mgi_ctx_push(iface, gpu->ctx);
    if (status == UCS_OK) {
        status = UCT_CUDA_MGI_CU(iface, cuStreamCreate(&gpu->stream,
                                                       CU_STREAM_NON_BLOCKING));
        uct_cuda_mgi_ctx_pop();
    }

    if (status != UCS_OK) {
        cuDevicePrimaryCtxRelease(gpu->dev);
        gpu->ctx = NULL;
        return status;
    }

    ucs_debug("cuda_mgi iface %p: opened a context on CUDA device %d for "
              "staged copies", iface, (int)gpu->dev);
    return UCS_OK;
}


/* Context `from` may read and write the memory of context `to`'s device.
 * Without it a copy between the two (cuMemcpyPeerAsync) still works, but
 * the driver stages it through host memory: a relay's first hop then ran
 * at 24-30 GB/s instead of the link's rate (4 x H100 on NVSwitch). */
static void uct_cuda_mgi_peer_enable(uct_cuda_mgi_iface_t *iface,
                                     uct_cuda_mgi_gpu_t *from,
                                     uct_cuda_mgi_gpu_t *to)
{
    CUresult cu_err;
    int can = 0;

    if ((cuDeviceCanAccessPeer(&can, from->dev, to->dev) != CUDA_SUCCESS) ||
        !can) {
        ucs_warn("cuda_mgi iface %p: CUDA device %d cannot access device "
                 "%d: copies between them on a GPU relay go through host "
                 "memory (leave `gpu` out of UCX_CUDA_MGI_PATHS, or this "
                 "relay out of UCX_CUDA_MGI_RELAY_GPUS)", iface,
                 (int)from->dev, (int)to->dev);
        return;
    }
    if (uct_cuda_mgi_ctx_push(iface, from->ctx) != UCS_OK) {
        return;
    }
    cu_err = cuCtxEnablePeerAccess(to->ctx, 0);
    uct_cuda_mgi_ctx_pop();
    if ((cu_err != CUDA_SUCCESS) &&
        (cu_err != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)) {
        ucs_warn("cuda_mgi iface %p: peer access of CUDA device %d to %d: "
                 "%s; copies between them go through host memory (leave "
                 "`gpu` out of UCX_CUDA_MGI_PATHS, or this relay out of "
                 "UCX_CUDA_MGI_RELAY_GPUS)", iface, (int)from->dev,
                 (int)to->dev, uct_cuda_mgi_cu_error(cu_err));
    }
}


static uct_cuda_mgi_gpu_t *
uct_cuda_mgi_stripe_find_gpu(uct_cuda_mgi_stripe_t *st, const CUuuid *uuid)
{
    unsigned i;

    for (i = 0; i < st->num_gpus; ++i) {
        if (!memcmp(&st->gpus[i].uuid, uuid, sizeof(*uuid))) {
            return &st->gpus[i];
        }
    }
    return NULL;
}


static void uct_cuda_mgi_route_add(uct_cuda_mgi_iface_t *iface,
                                   uct_cuda_mgi_route_t *route,
                                   uct_cuda_mgi_path_kind_t kind,
                                   uct_cuda_mgi_gpu_t *far, double capacity)
{
    uct_cuda_mgi_stage_path_t *path;

    if (route->num_staged >= UCT_CUDA_MGI_MAX_STAGED) {
        ucs_debug("cuda_mgi iface %p: more than %d staged paths, %s path "
                  "dropped", iface, UCT_CUDA_MGI_MAX_STAGED,
                  uct_cuda_mgi_path_kind_names[kind]);
        return;
    }

    path           = &route->staged[route->num_staged++];
    memset(path, 0, sizeof(*path));
    path->kind     = kind;
    path->far      = far;
    path->capacity = capacity;
}


/* The staged paths the GIG planner finds between the two GPUs (from
 * UCX_CUDA_MGI_TOPO_FILE or this machine); 0 if it cannot say */
static int uct_cuda_mgi_route_from_plan(uct_cuda_mgi_iface_t *iface,
                                        uct_cuda_mgi_route_t *route)
{
    uct_cuda_mgi_stripe_t *st = &iface->stripe;
    uct_cuda_mgi_plan_path_t paths[UCT_CUDA_MGI_MAX_STAGED];
    uct_cuda_mgi_gpu_t *far;
    unsigned i, n, g;
    double direct;
    int src, dst;

    if (!st->plan_tried) {
        st->plan_tried = 1;
        if (uct_cuda_mgi_plan_open(iface->config.topo_file, &st->graph,
                                   &st->plan) != UCS_OK) {
            st->plan = NULL;
        }
    }

    if ((st->plan == NULL) || (route->peer == NULL) ||
        (route->peer == st->local)) {
        return 0;
    }

    src = uct_cuda_mgi_plan_find_gpu(st->graph, st->local->pci,
                                     (int)st->local->dev);
    dst = uct_cuda_mgi_plan_find_gpu(st->graph, route->peer->pci,
                                     (int)route->peer->dev);
    if ((src == GIG_NONE) || (dst == GIG_NONE) ||
        (uct_cuda_mgi_plan_route(st->plan, src, dst, iface->config.paths,
                                 &direct, paths, UCT_CUDA_MGI_MAX_STAGED,
                                 &n) != UCS_OK)) {
        ucs_debug("cuda_mgi iface %p: the topology does not know GPUs %s "
                  "and %s", iface, st->local->pci, route->peer->pci);
        return 0;
    }

    if (direct > 0) {
        route->direct_capacity = direct;
    }

    for (i = 0; i < n; ++i) {
        if (paths[i].kind == UCT_CUDA_MGI_PATH_HOST) {
            uct_cuda_mgi_route_add(iface, route, UCT_CUDA_MGI_PATH_HOST,
                                   route->peer,
                                   iface->config.host_bandwidth_auto ?
                                   paths[i].capacity :
                                   iface->config.host_bandwidth);
            continue;
        }

        /* a relay GPU must be visible here to stage on it */
        far = NULL;
        for (g = 0; g < st->num_gpus; ++g) {
            if (uct_cuda_mgi_plan_find_gpu(st->graph, st->gpus[g].pci,
                                           (int)st->gpus[g].dev) ==
                paths[i].via) {
                far = &st->gpus[g];
            }
        }
        if (far == NULL) {
            ucs_debug("cuda_mgi iface %p: relay %s of the topology is not "
                      "visible here", iface,
                      st->graph->v[paths[i].via].name);
            continue;
        }
        uct_cuda_mgi_route_add(iface, route, UCT_CUDA_MGI_PATH_GPU, far,
                               paths[i].capacity);
    }
    return 1;
}


uct_cuda_mgi_route_t *
uct_cuda_mgi_stripe_route(uct_cuda_mgi_iface_t *iface,
                          const uct_cuda_mgi_rkey_t *key)
{
    uct_cuda_mgi_stripe_t *st = &iface->stripe;
    uct_cuda_mgi_route_t *route;
    unsigned i;

    for (i = 0; i < st->num_routes; ++i) {
        if (!memcmp(&st->routes[i]->uuid, &key->uuid,
                    sizeof(key->uuid))) {
            return st->routes[i];
        }
    }

    if (st->num_routes >= UCT_CUDA_MGI_MAX_GPUS) {
        return NULL;
    }

    route = ucs_calloc(1, sizeof(*route), "uct_cuda_mgi_route");
    if (route == NULL) {
        ucs_error("cuda_mgi iface %p: failed to allocate a route", iface);
        return NULL;
    }

    route->uuid            = key->uuid;
    route->peer            = uct_cuda_mgi_stripe_find_gpu(st, &key->uuid);
    route->direct_capacity = iface->config.bandwidth;

    if (uct_cuda_mgi_route_from_plan(iface, route)) {
        /* the planner chose the paths */
    } else if ((iface->config.paths & UCS_BIT(UCT_CUDA_MGI_PATH_HOST)) &&
        (route->peer != NULL) && (route->peer != st->local)) {
        uct_cuda_mgi_route_add(iface, route, UCT_CUDA_MGI_PATH_HOST,
                               route->peer, iface->config.host_bandwidth);
    } else if (iface->config.paths & UCS_BIT(UCT_CUDA_MGI_PATH_HOST)) {
        ucs_debug("cuda_mgi iface %p: no host path to GPU of pid %d: that "
                  "GPU is not visible in this process (CUDA_VISIBLE_DEVICES)",
                  iface, key->pid);
    }

    if (iface->config.paths & UCS_BIT(UCT_CUDA_MGI_PATH_GPU)) {
        for (i = 0; i < iface->config.num_relays; ++i) {
            int ordinal = iface->config.relays[i];
            if ((ordinal < 0) || (ordinal >= (int)st->num_gpus)) {
                ucs_warn("cuda_mgi iface %p: UCX_CUDA_MGI_RELAY_GPUS names "
                         "CUDA device %d, but %u are visible", iface, ordinal,
                         st->num_gpus);
                continue;
            }
            if (&st->gpus[ordinal] == route->peer) {
                continue;
            }
            uct_cuda_mgi_route_add(iface, route, UCT_CUDA_MGI_PATH_GPU,
                                   &st->gpus[ordinal],
                                   iface->config.bandwidth);
        }
    }

    uct_cuda_mgi_lane_init(&route->lane[0], route->direct_capacity, 0);
    for (i = 0; i < route->num_staged; ++i) {
        uct_cuda_mgi_lane_init(&route->lane[1 + i], route->staged[i].capacity,
                               UCT_CUDA_MGI_STAGED_LATENCY);
        ucs_info("cuda_mgi iface %p: route to GPU %s of pid %d: direct %.1f "
                 "GB/s + %s path via CUDA device %d, %.1f GB/s", iface,
                 (route->peer != NULL) ? route->peer->pci : "?", key->pid,
                 route->direct_capacity / 1e9,
                 uct_cuda_mgi_path_kind_names[route->staged[i].kind],
                 (int)route->staged[i].far->dev,
                 route->staged[i].capacity / 1e9);
    }

    st->routes[st->num_routes++] = route;
    return route;
}


static ucs_status_t
uct_cuda_mgi_ring_init(uct_cuda_mgi_iface_t *iface,
                       uct_cuda_mgi_stage_path_t *path, int is_put)
{
    uct_cuda_mgi_stage_ring_t *ring = &path->ring[!is_put];
    uct_cuda_mgi_gpu_t *local       = iface->stripe.local;
    size_t chunk                    = iface->config.chunk_size;
    unsigned nbufs                  = iface->config.stage_bufs;
    ucs_status_t status;
    unsigned b, hop;

    if (ring->initialized) {
        return UCS_OK;
    }

    status = uct_cuda_mgi_gpu_open(iface, path->far);
    if (status != UCS_OK) {
        return status;
    }
    if ((path->kind == UCT_CUDA_MGI_PATH_GPU) && (path->far != local)) {
        /* the near hop copies between this GPU and the relay's staging */
        uct_cuda_mgi_peer_enable(iface, local, path->far);
        uct_cuda_mgi_peer_enable(iface, path->far, local);
    }

    /* a put goes local -> stage -> far side; a get the other way */
    ring->ctx[0] = is_put ? local->ctx : path->far->ctx;
    ring->ctx[1] = is_put ? path->far->ctx : local->ctx;

    for (hop = 0; hop < 2; ++hop) {
        status = uct_cuda_mgi_ctx_push(iface, ring->ctx[hop]);
        if (status != UCS_OK) {
            return status;
        }
        if (ring->ctx[hop] == path->far->ctx && path->far != local) {
            ring->stream[hop] = path->far->stream;
        } else {
            status = UCT_CUDA_MGI_CU(iface, cuStreamCreate(
                    &ring->stream[hop], CU_STREAM_NON_BLOCKING));
        }
        for (b = 0; (status == UCS_OK) && (b < nbufs); ++b) {
            status = UCT_CUDA_MGI_CU(iface, cuEventCreate(
                    hop ? &ring->freed[b] : &ring->filled[b],
                    CU_EVENT_DISABLE_TIMING));
        }
        uct_cuda_mgi_ctx_pop();
        if (status != UCS_OK) {
            return status;
        }
    }

    /* staging memory: pinned host memory, or memory on the relay GPU */
    if (path->kind == UCT_CUDA_MGI_PATH_HOST) {
        status = uct_cuda_mgi_ctx_push(iface, local->ctx);
        for (b = 0; (status == UCS_OK) && (b < nbufs); ++b) {
            status = UCT_CUDA_MGI_CU(iface, cuMemHostAlloc(
                    &ring->buf[b], chunk, CU_MEMHOSTALLOC_PORTABLE));
        }
    } else {
        status = uct_cuda_mgi_ctx_push(iface, path->far->ctx);
        for (b = 0; (status == UCS_OK) && (b < nbufs); ++b) {
            status = UCT_CUDA_MGI_CU(iface, cuMemAlloc(
                    (CUdeviceptr*)&ring->buf[b], chunk));
        }
    }
    if (status == UCS_OK) {
        uct_cuda_mgi_ctx_pop();
    } else {
        return status;
    }

    status = uct_cuda_mgi_ctx_push(iface, local->ctx);
    if (status == UCS_OK) {
        status = UCT_CUDA_MGI_CU(iface, cuStreamCreate(&ring->join,
                                                       CU_STREAM_NON_BLOCKING));
        uct_cuda_mgi_ctx_pop();
    }

    ring->initialized = (status == UCS_OK);
    ucs_info("cuda_mgi iface %p: %s path via CUDA device %d: %u x %zu "
              "bytes of staging for %s", iface,
              uct_cuda_mgi_path_kind_names[path->kind], (int)path->far->dev,
              nbufs, chunk, is_put ? "puts" : "gets");
    return status;
}


static void uct_cuda_mgi_ring_cleanup(uct_cuda_mgi_iface_t *iface,
                                      uct_cuda_mgi_stage_path_t *path,
                                      uct_cuda_mgi_stage_ring_t *ring)
{
    unsigned b, hop;

    if (!ring->initialized) {
        return;
    }

    for (hop = 0; hop < 2; ++hop) {
        if (uct_cuda_mgi_ctx_push(iface, ring->ctx[hop]) != UCS_OK) {
            continue;
        }
        cuStreamSynchronize(ring->stream[hop]);
        for (b = 0; b < iface->config.stage_bufs; ++b) {
            cuEventDestroy(hop ? ring->freed[b] : ring->filled[b]);
        }
        if (ring->stream[hop] != path->far->stream) {
            cuStreamDestroy(ring->stream[hop]);
        }
        uct_cuda_mgi_ctx_pop();
    }

    for (b = 0; b < iface->config.stage_bufs; ++b) {
        if (path->kind == UCT_CUDA_MGI_PATH_HOST) {
            cuMemFreeHost(ring->buf[b]);
        } else {
            cuMemFree((CUdeviceptr)ring->buf[b]);
        }
    }
    cuStreamDestroy(ring->join);
    ring->initialized = 0;
}


/* Add a striped operation's times to the route's sums */
static void uct_cuda_mgi_route_time(uct_cuda_mgi_route_t *route,
                                    const uct_cuda_mgi_stripe_op_t *op)
{
    unsigned i, p;

    route->num_timed++;
    route->sum_issue      += op->issue_time - op->post_time;
    route->sum_direct_len += op->length[0];
    if (op->length[0] > 0) {
        /* an operation the split gave wholly to staged paths has no
         * direct part to time */
        route->num_direct_timed++;
        route->sum_direct += op->done_time[0] - op->post_time;
    }
    for (i = 1; i < op->num_parts; ++i) {
        p = op->path[i];
        route->sum_staged[p]       += op->done_time[i] - op->post_time;
        route->sum_staged_len[p]   += op->length[i];
        route->num_staged_timed[p] += 1;
    }
}


/* Info: how the route's striped operations went, on average */
static void uct_cuda_mgi_route_log(uct_cuda_mgi_iface_t *iface,
                                   const uct_cuda_mgi_route_t *route)
{
    double n     = (double)route->num_timed;
    double nd    = (double)ucs_max(route->num_direct_timed, 1);
    double total = route->sum_direct_len;
    unsigned p;

    if (route->num_timed == 0) {
        return;
    }
    for (p = 0; p < route->num_staged; ++p) {
        total += route->sum_staged_len[p];
    }
    ucs_info("cuda_mgi iface %p: route to GPU %s: %lu striped operations; "
             "the last %lu moved %.0f KB on average, posting took %.1f us, "
             "the direct part (%.0f KB) landed after %.1f us in the %lu "
             "that had one; the direct path's rate now %.1f GB/s", iface,
             (route->peer != NULL) ? route->peer->pci : "?",
             route->num_striped, route->num_timed, total / n / 1e3,
             route->sum_issue / n * 1e6, route->sum_direct_len / nd / 1e3,
             route->sum_direct / nd * 1e6, route->num_direct_timed,
             route->lane[0].rate / 1e9);
    for (p = 0; p < route->num_staged; ++p) {
        if (route->num_staged_timed[p] == 0) {
            continue;
        }
        ucs_info("cuda_mgi iface %p: route to GPU %s: %s path via CUDA "
                 "device %d in %lu of them, %.0f KB landing after %.1f us "
                 "(%.1f GB/s); its rate now %.1f GB/s", iface,
                 (route->peer != NULL) ? route->peer->pci : "?",
                 uct_cuda_mgi_path_kind_names[route->staged[p].kind],
                 (int)route->staged[p].far->dev, route->num_staged_timed[p],
                 route->sum_staged_len[p] / route->num_staged_timed[p] / 1e3,
                 route->sum_staged[p] / route->num_staged_timed[p] * 1e6,
                 route->sum_staged_len[p] / route->sum_staged[p] / 1e9,
                 route->lane[1 + p].rate / 1e9);
    }
}


void uct_cuda_mgi_stripe_cleanup(uct_cuda_mgi_iface_t *iface)
{
    uct_cuda_mgi_stripe_t *st = &iface->stripe;
    unsigned r, p, i;

    for (r = 0; r < st->num_routes; ++r) {
        uct_cuda_mgi_route_log(iface, st->routes[r]);
        for (p = 0; p < st->routes[r]->num_staged; ++p) {
            uct_cuda_mgi_stage_path_t *path = &st->routes[r]->staged[p];
            uct_cuda_mgi_ring_cleanup(iface, path, &path->ring[0]);
            uct_cuda_mgi_ring_cleanup(iface, path, &path->ring[1]);
        }
        ucs_free(st->routes[r]);
    }

    for (i = 0; i < st->num_gpus; ++i) {
        uct_cuda_mgi_gpu_t *gpu = &st->gpus[i];
        if ((gpu != st->local) && (gpu->ctx != NULL)) {
            if (uct_cuda_mgi_ctx_push(iface, gpu->ctx) == UCS_OK) {
                cuStreamDestroy(gpu->stream);
                uct_cuda_mgi_ctx_pop();
            }
            cuDevicePrimaryCtxRelease(gpu->dev);
        }
    }
    st->num_routes = 0;
    st->num_gpus   = 0;

    if (st->plan != NULL) {
        gig_plan_destroy(st->plan);
        gig_graph_destroy(st->graph);
        st->plan  = NULL;
        st->graph = NULL;
    }
    st->plan_tried = 0;
}


/* One hop of one chunk.  Host staging memory is reachable from every
 * context; device staging memory lives in the relay GPU's context. */
static CUresult
uct_cuda_mgi_hop_copy(uct_cuda_mgi_stage_path_t *path, int local_side,
                      CUcontext local_ctx, CUdeviceptr dst, CUdeviceptr src,
                      int to_stage, size_t len, CUstream stream)
{
    if ((path->kind == UCT_CUDA_MGI_PATH_HOST) || !local_side) {
        return cuMemcpyAsync(dst, src, len, stream);
    }

    return to_stage ?
           cuMemcpyPeerAsync(dst, path->far->ctx, src, local_ctx, len,
                             stream) :
           cuMemcpyPeerAsync(dst, local_ctx, src, path->far->ctx, len,
                             stream);
}


/* Issue one staged part: chunks through the ring, hop 1 then hop 2, a batch
 * of at most one ring's worth at a time so that every wait on freed[b] sees
 * the record of that buffer's previous use */
static ucs_status_t
uct_cuda_mgi_stage_post(uct_cuda_mgi_iface_t *iface,
                        uct_cuda_mgi_stage_path_t *path, int is_put,
                        CUdeviceptr local, CUdeviceptr far_remote,
                        size_t length, CUevent done_event)
{
    uct_cuda_mgi_stage_ring_t *ring = &path->ring[!is_put];
    CUcontext local_ctx             = iface->stripe.local->ctx;
    size_t chunk                    = iface->config.chunk_size;
    unsigned nbufs                  = iface->config.stage_bufs;
    size_t offset, batch_start, len;
    unsigned b, first, hop, last = 0;
    ucs_status_t status;
    CUresult cu_err     = CUDA_SUCCESS;

    status = uct_cuda_mgi_ring_init(iface, path, is_put);
    if (status != UCS_OK) {
        return status;
    }

    for (batch_start = 0; batch_start < length;
         batch_start += (size_t)nbufs * chunk) {
        first = ring->next;
        for (hop = 0; hop < 2; ++hop) {
            /* hop 0 is on the local side for a put, hop 1 for a get */
            int local_side = (hop == 0) == !!is_put;

            status = uct_cuda_mgi_ctx_push(iface, ring->ctx[hop]);
            if (status != UCS_OK) {
                return status;
            }

            b = first;
            for (offset = batch_start;
                 (offset < length) &&
                 (offset < batch_start + (size_t)nbufs * chunk);
                 offset += chunk, b = (b + 1) % nbufs) {
                CUdeviceptr stage = (CUdeviceptr)ring->buf[b];
                CUdeviceptr near  = is_put ? local + offset :
                                             far_remote + offset;
                CUdeviceptr far   = is_put ? far_remote + offset :
                                             local + offset;

                len = ucs_min(chunk, length - offset);
                if (hop == 0) {
                    cu_err = cuStreamWaitEvent(ring->stream[0],
                                               ring->freed[b], 0);
                    if (cu_err == CUDA_SUCCESS) {
                        cu_err = uct_cuda_mgi_hop_copy(path, local_side,
                                                       local_ctx, stage, near,
                                                       1, len,
                                                       ring->stream[0]);
                    }
                    if (cu_err == CUDA_SUCCESS) {
                        cu_err = cuEventRecord(ring->filled[b],
                                               ring->stream[0]);
                    }
                } else {
                    cu_err = cuStreamWaitEvent(ring->stream[1],
                                               ring->filled[b], 0);
                    if (cu_err == CUDA_SUCCESS) {
                        cu_err = uct_cuda_mgi_hop_copy(path, local_side,
                                                       local_ctx, far, stage,
                                                       0, len,
                                                       ring->stream[1]);
                    }
                    if (cu_err == CUDA_SUCCESS) {
                        cu_err = cuEventRecord(ring->freed[b],
                                               ring->stream[1]);
                    }
                    last = b;
                }
                if (cu_err != CUDA_SUCCESS) {
                    break;
                }
            }
            uct_cuda_mgi_ctx_pop();
            if (cu_err != CUDA_SUCCESS) {
                ucs_error("cuda_mgi iface %p: %s path via CUDA device %d: "
                          "hop %u of %zu bytes failed: %s", iface,
                          uct_cuda_mgi_path_kind_names[path->kind],
                          (int)path->far->dev, hop + 1, len,
                          uct_cuda_mgi_cu_error(cu_err));
                return UCS_ERR_IO_ERROR;
            }
        }
        ring->next = b;
    }
    /* the part has landed when its last hop 2 is done; tell it with an
     * event of the interface's context */
    if (is_put) {
        cu_err = cuStreamWaitEvent(ring->join, ring->freed[last], 0);
        if (cu_err == CUDA_SUCCESS) {
            cu_err = cuEventRecord(done_event, ring->join);
        }
    } else {
        cu_err = cuEventRecord(done_event, ring->stream[1]);
    }
    return (cu_err == CUDA_SUCCESS) ? UCS_OK : UCS_ERR_IO_ERROR;
}


/* Record staged part i of length len, its far end mapped at mapped, in
 * op; returns its index there (its event's) */
static unsigned uct_cuda_mgi_op_add_part(uct_cuda_mgi_stripe_op_t *op,
                                         unsigned i,
                                         uct_cuda_mgi_mapping_t *map,
                                         size_t len)
{
    unsigned n = op->num_parts++;

    op->path[n]       = i;
    op->far_map[n]    = map;
    op->length[n]     = len;
    op->done_time[n]  = 0;
    return n;
}


/* Release the far ends of op's staged parts */
static void uct_cuda_mgi_op_unmap_far(const uct_cuda_mgi_stripe_op_t *op)
{
    unsigned i;

    for (i = 1; i < op->num_parts; ++i) {
        uct_cuda_mgi_ipc_unmap(op->far_map[i]);
    }
}


/* A part failed to issue: wait for what the others already issued (the
 * caller releases the memory they use), then unmap the far mappings */
static void uct_cuda_mgi_stripe_abort(uct_cuda_mgi_iface_t *iface,
                                      uct_cuda_mgi_stripe_op_t *op,
                                      CUstream direct_stream, int is_put)
{
    uct_cuda_mgi_stage_ring_t *ring;
    unsigned i, hop;

    cuStreamSynchronize(direct_stream);
    for (i = 1; i < op->num_parts; ++i) {
        ring = &op->route->staged[op->path[i]].ring[!is_put];
        for (hop = 0; ring->initialized && (hop < 2); ++hop) {
            if (uct_cuda_mgi_ctx_push(iface, ring->ctx[hop]) == UCS_OK) {
                cuStreamSynchronize(ring->stream[hop]);
                uct_cuda_mgi_ctx_pop();
            }
        }
    }
    uct_cuda_mgi_op_unmap_far(op);
    op->num_parts = 1;
}


/* The far hop needs the remote memory mapped in the far context */
static ucs_status_t uct_cuda_mgi_map_far(uct_cuda_mgi_iface_t *iface,
                                         uct_cuda_mgi_stage_path_t *path,
                                         const uct_cuda_mgi_rkey_t *key,
                                         uct_cuda_mgi_mapping_t **map_p)
{
    ucs_status_t status;

    status = uct_cuda_mgi_gpu_open(iface, path->far);
    if (status != UCS_OK) {
        return status;
    }
    return uct_cuda_mgi_ipc_map(key, path->far->ctx, map_p);
}


ucs_status_t
uct_cuda_mgi_stripe_post(uct_cuda_mgi_iface_t *iface,
                         uct_cuda_mgi_route_t *route,
                         const uct_cuda_mgi_rkey_t *key, CUdeviceptr local,
                         CUdeviceptr remote_mapped, uint64_t remote_addr,
                         size_t length, int is_put, CUstream direct_stream,
                         CUevent *events, uct_cuda_mgi_stripe_op_t *op)
{
    int direct_ok = !!(iface->config.paths & UCS_BIT(UCT_CUDA_MGI_PATH_DIRECT));
    size_t part[UCT_CUDA_MGI_MAX_PATHS];
    size_t offset;
    ucs_status_t status;
    unsigned i, n;
    uct_cuda_mgi_mapping_t *map;
    CUresult cu_err;

    /* horizontal split (see uct_cuda_mgi_share_split) */
    op->num_parts = 1;
    op->route     = route;
    op->post_time = ucs_time_to_sec(ucs_get_time());
    uct_cuda_mgi_share_split(length, route->lane, 1 + route->num_staged,
                             direct_ok, iface->config.chunk_size, part);
    op->length[0]    = part[0];
    op->far_map[0]   = NULL;
    op->done_time[0] = 0;

    offset = part[0];
    if (part[0] > 0) {
        cu_err = uct_cuda_mgi_copy_d2d(is_put, local, remote_mapped, part[0],
                                       direct_stream);
        if (cu_err == CUDA_SUCCESS) {
            cu_err = cuEventRecord(events[0], direct_stream);
        }
        if (cu_err != CUDA_SUCCESS) {
            ucs_error("cuda_mgi iface %p: direct part of %zu bytes failed: %s",
                      iface, part[0], uct_cuda_mgi_cu_error(cu_err));
            return UCS_ERR_IO_ERROR;
        }
    }

    for (i = 0; i < route->num_staged; ++i) {
        uct_cuda_mgi_stage_path_t *path = &route->staged[i];

        if (part[i + 1] == 0) {
            continue;
        }

        status = uct_cuda_mgi_map_far(iface, path, key, &map);
        if (status != UCS_OK) {
            /* this part cannot go staged: send it directly after all */
            ucs_debug("cuda_mgi iface %p: %s path unavailable (%s), %zu bytes "
                      "go direct", iface,
                      uct_cuda_mgi_path_kind_names[path->kind],
                      ucs_status_string(status), part[i + 1]);
            route->lane[1 + i].rate = route->lane[1 + i].capacity *
                                      UCT_CUDA_MGI_RATE_FLOOR;
            cu_err      = uct_cuda_mgi_copy_d2d(is_put, local + offset,
                                                remote_mapped + offset,
                                                part[i + 1], direct_stream);
            if ((cu_err != CUDA_SUCCESS) ||
                (cuEventRecord(events[0], direct_stream) != CUDA_SUCCESS)) {
                return UCS_ERR_IO_ERROR;
            }
            op->length[0] += part[i + 1];
            offset        += part[i + 1];
            continue;
        }

        n      = uct_cuda_mgi_op_add_part(op, i, map, part[i + 1]);
        status = uct_cuda_mgi_stage_post(
                iface, path, is_put, local + offset,
                map->ptr + (remote_addr - key->base) + offset,
                part[i + 1], events[n]);
        if (status != UCS_OK) {
            uct_cuda_mgi_stripe_abort(iface, op, direct_stream, is_put);
            return status;
        }
        offset += part[i + 1];
    }

    uct_cuda_mgi_lane_post(&route->lane[0], op->length[0]);
    for (i = 1; i < op->num_parts; ++i) {
        uct_cuda_mgi_lane_post(&route->lane[1 + op->path[i]], op->length[i]);
    }
    ++route->num_striped;
    op->issue_time = ucs_time_to_sec(ucs_get_time());
    return UCS_OK;
}


void uct_cuda_mgi_stripe_part_done(uct_cuda_mgi_stripe_op_t *op, unsigned i,
                                   double t)
{
    uct_cuda_mgi_route_t *route = op->route;

    op->done_time[i] = t;
    uct_cuda_mgi_lane_done(&route->lane[(i == 0) ? 0 : (1 + op->path[i])],
                           op->length[i], op->post_time, t);
}


void uct_cuda_mgi_stripe_done(uct_cuda_mgi_iface_t *iface,
                              uct_cuda_mgi_stripe_op_t *op)
{
    uct_cuda_mgi_route_t *route = op->route;

    uct_cuda_mgi_op_unmap_far(op);
    if ((op->num_parts > 1) &&
        (route->num_striped > UCT_CUDA_MGI_WARMUP_OPS)) {
        uct_cuda_mgi_route_time(route, op);
    }
}

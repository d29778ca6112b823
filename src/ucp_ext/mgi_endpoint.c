/**
 * MGI endpoints: the rings of one endpoint and its sorter.
 *
 * Ring memory comes from mgi_ep_ring_create(): host memory for CPU
 * endpoints. A GPU endpoint is this same layout in device memory (the
 * receive region registered with ucp_mem_map as CUDA memory) with the
 * sorter launched as a persistent kernel instead of a host thread, its
 * sort rings seen by the mover through mirrors (mgi_ring_mirror_t) and
 * the RTail / RHead of its receive lanes kept in lane control words
 * (mgi_lane_ctl_t) in host memory.
 */
#include "mgi_int.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

/* The one place ring memory of an endpoint comes from: host memory for a
 * CPU endpoint; device memory for a GPU endpoint, initialized from a host
 * image (mgi_ring_init() runs on the host only). A GPU endpoint's image
 * need not be zeroed: only the headers mgi_ring_init writes are copied
 * (mgi_gpu_ring_create) and the device memory is zeroed on the device. */
static void *mgi_ep_host_alloc(size_t len, int zero)
{
    void *p;

    if (posix_memalign(&p, 4096, len) != 0) {
        return NULL;
    }
    if (zero) {
        memset(p, 0, len);
    }
    return p;
}

void mgi_ep_ring_free(mgi_ep_t *ep, void *p)
{
    if (p == NULL) {
        return;
    }
    if (mgi_ep_is_gpu(ep)) {
        mgi_gpu_ring_free(ep, p);
    } else {
        free(p);
    }
}

/* Host image of `len` bytes in `image`, `nrings` rings of equal size made
 * by mgi_ring_init -> the endpoint's ring memory. */
static void *mgi_ep_ring_place(mgi_ep_t *ep, void *image, size_t len,
                               unsigned nrings)
{
    void *ring;

    if (!mgi_ep_is_gpu(ep)) {
        return image;
    }
    ring = mgi_gpu_ring_create(ep, image, len, nrings);
    free(image);
    return ring;
}

static size_t mgi_host_mem_avail(void);

/* Whether a ring of `len` bytes fits the memory ep's rings come from,
 * checked before it is allocated: a CPU endpoint's rings are zeroed, so
 * more than the machine has available would end in the OOM killer; a GPU
 * endpoint's against its GPU's free memory. Said naming the setting `var`
 * (its depth) where not. */
static int mgi_ep_ring_fits(mgi_ep_t *ep, size_t len, uint32_t depth,
                            const char *var)
{
    const size_t mib = 1ul << 20;
    const int gpu    = mgi_ep_is_gpu(ep);
    size_t avail;

    if (gpu) {
        if (mgi_gpu_mem_free(ep, &avail) != UCS_OK) {
            return 0;
        }
    } else {
        avail = mgi_host_mem_avail();
    }
    if (len <= avail) {
        return 1;
    }
    ucs_error("mgi ep %u: a ring of %u segments (%s) of %zu bytes "
              "(MGI_SEG_SIZE) would take %zu MiB of %s memory, %s has %zu "
              "MiB %s: lower them", ep->id, depth, var, ep->ctx->seg_size,
              len / mib, gpu ? "device" : "host",
              gpu ? "its GPU" : "this machine", avail / mib,
              gpu ? "free" : "available");
    return 0;
}

mgi_ring_t *mgi_ep_ring_create(mgi_ep_t *ep, uint32_t depth, uint32_t flags,
                               const char *var)
{
    size_t seg  = ep->ctx->seg_size;
    size_t len  = mgi_ring_mem_size(depth, seg);
    void *image;

    if (!mgi_ep_ring_fits(ep, len, depth, var)) {
        return NULL;
    }
    image = mgi_ep_host_alloc(len, !mgi_ep_is_gpu(ep));
    if (image == NULL) {
        return NULL;
    }
    mgi_ring_init(image, depth, seg, flags);
    return mgi_ep_ring_place(ep, image, len, 1);
}

/* The end of an error about ring memory: the smaller ring defaults, where
 * the context took the larger ones */
static const char *mgi_ep_defaults_hint(const mgi_context_t *ctx)
{
    return ctx->params.gpu_defaults ?
           ", or set mgi_context_params_t.gpu_defaults to 0 for the smaller "
           "defaults sized for CPU endpoints" : "";
}

void mgi_ep_final_nomem(mgi_ep_t *ep, unsigned ch, unsigned i, unsigned n)
{
    const mgi_context_t *ctx = ep->ctx;

    ucs_error("mgi ep %u: channel %u: no %s memory for final ring %u of %u "
              "(%zu bytes: MGI_FINAL_DEPTH=%u segments of MGI_SEG_SIZE=%zu "
              "bytes; one such ring a user block of the destination): lower "
              "them%s", ep->id, ch, mgi_ep_is_gpu(ep) ? "device" : "host",
              i + 1, n, mgi_ring_mem_size(ctx->params.final_depth,
                                          ctx->seg_size),
              ctx->params.final_depth, ctx->seg_size,
              mgi_ep_defaults_hint(ctx));
}

/* Register a region movers of other processes reach with UCP RMA and pack
 * its rkey (at most MGI_RKEY_MAX bytes: it travels in the channel-creation
 * allgather). `what` names the region in errors. */
ucs_status_t mgi_ep_mem_publish(mgi_ep_t *ep, ucp_context_h ucp, void *addr,
                                size_t len, ucs_memory_type_t mtype,
                                const char *what, ucp_mem_h *memh_p,
                                void **rkey_buf_p, size_t *rkey_len_p)
{
    ucp_mem_map_params_t mparams;
    ucs_status_t status;

    memset(&mparams, 0, sizeof(mparams));
    mparams.field_mask  = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                          UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                          UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    mparams.address     = addr;
    mparams.length      = len;
    mparams.memory_type = mtype;
    status = ucp_mem_map(ucp, &mparams, memh_p);
    if (status != UCS_OK) {
        ucs_error("mgi ep %u: ucp_mem_map of the %s: %s", ep->id, what,
                  ucs_status_string(status));
        return status;
    }
    status = ucp_rkey_pack(ucp, *memh_p, rkey_buf_p, rkey_len_p);
    if (status != UCS_OK) {
        ucs_error("mgi ep %u: ucp_rkey_pack of the %s: %s", ep->id, what,
                  ucs_status_string(status));
        goto err_unmap;
    }
    if ((*rkey_len_p == 0) || (*rkey_len_p > MGI_RKEY_MAX)) {
        ucs_error("mgi ep %u: packed rkey of the %s of %zu bytes, 1..%d: "
                  "raise MGI_RKEY_MAX (mgi_int.h) for these transports",
                  ep->id, what, *rkey_len_p, MGI_RKEY_MAX);
        status = UCS_ERR_EXCEEDS_LIMIT;
        goto err_release_rkey;
    }
    return UCS_OK;

err_release_rkey:
    ucp_rkey_buffer_release(*rkey_buf_p);
err_unmap:
    ucp_mem_unmap(ucp, *memh_p);
    return status;
}

static void mgi_ep_mem_unpublish(ucp_context_h ucp, ucp_mem_h memh,
                                 void *rkey_buf)
{
    ucp_rkey_buffer_release(rkey_buf);
    ucp_mem_unmap(ucp, memh);
}

/* The receive ring's registrations: the context's and its rail's */
static void mgi_ep_recv_unpublish(mgi_ep_t *ep)
{
    if (ep->rail != NULL) {
        mgi_ep_mem_unpublish(ep->rail->ucp, ep->rail_memh, ep->rail_rkey_buf);
        ep->rail = NULL;
    }
    mgi_ep_mem_unpublish(ep->ctx->ucp, ep->recv_memh, ep->rkey_buf);
}

static ucs_status_t mgi_ep_recv_ring_create(mgi_ep_t *ep)
{
    mgi_context_t *ctx = ep->ctx;
    mgi_rail_t *rail;
    ucs_status_t status;
    unsigned lane;
    void *image;

    ep->nlanes     = ctx->size + 1;
    ep->lane_bytes = mgi_ring_mem_size(ctx->params.recv_depth,
                                       ctx->seg_size);
    image          = mgi_ep_host_alloc(ep->lane_bytes * ep->nlanes,
                                       !mgi_ep_is_gpu(ep));
    if (image == NULL) {
        ucs_error("mgi ep %u: no memory for a %u-lane receive ring", ep->id,
                  ep->nlanes);
        return UCS_ERR_NO_MEMORY;
    }
    /* lane r is rank r's mover's (segment mode); the last, the loopback
     * lane, our sorter's */
    for (lane = 0; lane < ep->nlanes; ++lane) {
        mgi_ring_init((mgi_ring_t*)((char*)image + lane * ep->lane_bytes),
                      ctx->params.recv_depth, ctx->seg_size,
                      (lane == (unsigned)ctx->size) ? MGI_RING_F_APPEND : 0);
    }
    ep->recv_mem = mgi_ep_ring_place(ep, image, ep->lane_bytes * ep->nlanes,
                                     ep->nlanes);
    if (ep->recv_mem == NULL) {
        return UCS_ERR_NO_MEMORY;
    }

    /* movers of other GPUs put into a GPU endpoint's ring: UCX's CUDA
     * transports (cuda_mgi) pack IPC handles of this region into the rkey */
    status = mgi_ep_mem_publish(ep, ctx->ucp, ep->recv_mem,
                                ep->lane_bytes * ep->nlanes,
                                mgi_ep_is_gpu(ep) ? UCS_MEMORY_TYPE_CUDA :
                                                    UCS_MEMORY_TYPE_HOST,
                                "receive ring", &ep->recv_memh,
                                &ep->rkey_buf, &ep->rkey_len);
    if (status != UCS_OK) {
        mgi_ep_ring_free(ep, ep->recv_mem);
        return status;
    }
    /* and in its rail's, where its NIC is not the context's (mgi_rail.c) */
    status = mgi_rail_ep_nic(ep, &rail);
    if ((status == UCS_OK) && (rail != NULL)) {
        status = mgi_ep_mem_publish(ep, rail->ucp, ep->recv_mem,
                                    ep->lane_bytes * ep->nlanes,
                                    mgi_ep_is_gpu(ep) ? UCS_MEMORY_TYPE_CUDA :
                                                        UCS_MEMORY_TYPE_HOST,
                                    "receive ring (its rail's)",
                                    &ep->rail_memh, &ep->rail_rkey_buf,
                                    &ep->rail_rkey_len);
        ep->rail = (status == UCS_OK) ? rail : NULL;
    }
    if (status != UCS_OK) {
        mgi_ep_mem_unpublish(ep->ctx->ucp, ep->recv_memh, ep->rkey_buf);
        mgi_ep_ring_free(ep, ep->recv_mem);
    }
    return status;
}

/* a * b + c, or SIZE_MAX where that does not fit */
static size_t mgi_size_mad(size_t a, size_t b, size_t c)
{
    size_t r;

    if (__builtin_mul_overflow(a, b, &r) || __builtin_add_overflow(r, c, &r)) {
        return SIZE_MAX;
    }
    return r;
}

/* Bytes of memory this machine has available now (MemAvailable of
 * /proc/meminfo, else its physical memory, else SIZE_MAX). */
static size_t mgi_host_mem_avail(void)
{
    unsigned long long kb;
    char line[128];
    long pages;
    FILE *f;

    f = fopen("/proc/meminfo", "r");
    if (f != NULL) {
        while (fgets(line, sizeof(line), f) != NULL) {
            if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
                fclose(f);
                return mgi_size_mad(kb, 1024, 0);
            }
        }
        fclose(f);
    }
    pages = sysconf(_SC_PHYS_PAGES);
    return (pages > 0) ? mgi_size_mad(pages, sysconf(_SC_PAGESIZE), 0) :
                         SIZE_MAX;
}

/* The ring memory an endpoint takes at its create (its stage rings and
 * receive lanes; sort rings come with its next hops, final rings with its
 * channels) against what there is: a CPU endpoint's rings are zeroed, so
 * more than the machine has available would end in the OOM killer; a GPU
 * endpoint's against its GPU's free memory, before cudaMalloc fails. */
static ucs_status_t mgi_ep_ring_budget(mgi_ep_t *ep)
{
    mgi_context_t *ctx = ep->ctx;
    const size_t mib   = 1ul << 20;
    const int gpu      = mgi_ep_is_gpu(ep);
    const unsigned nlanes = (unsigned)ctx->size + 1;
    size_t avail;
    ucs_status_t status;

    ep->ring_bytes = mgi_size_mad(
            ep->nstage, mgi_ring_mem_size(ctx->params.stage_depth,
                                          ctx->seg_size),
            mgi_size_mad(nlanes, mgi_ring_mem_size(ctx->params.recv_depth,
                                                   ctx->seg_size), 0));
    if (gpu) {
        status = mgi_gpu_mem_free(ep, &avail);
        if (status != UCS_OK) {
            return status;
        }
    } else {
        avail = mgi_host_mem_avail();
    }
    if (ep->ring_bytes <= avail) {
        return UCS_OK;
    }
    ucs_error("mgi ep %u: its rings would take %zu MiB of %s memory, %s "
              "has %zu MiB %s: %u stage ring(s) of %u segments "
              "(MGI_STAGE_DEPTH) and %u receive lane(s) of %u "
              "(MGI_RECV_DEPTH), segments of %zu bytes (MGI_SEG_SIZE): lower "
              "them%s", ep->id, ep->ring_bytes / mib, gpu ? "device" : "host",
              gpu ? "its GPU" : "this machine", avail / mib,
              gpu ? "free" : "available", ep->nstage, ctx->params.stage_depth,
              nlanes, ctx->params.recv_depth, ctx->seg_size,
              mgi_ep_defaults_hint(ctx));
    return UCS_ERR_NO_MEMORY;
}

static void mgi_ep_lane_ctl_free(mgi_ep_t *ep)
{
    if (mgi_ep_is_gpu(ep) && (ep->lane_ctl_dev != NULL)) {
        cudaHostUnregister(ep->lane_ctl);
    }
    munmap(ep->lane_ctl, ep->ctl_len);
    shm_unlink(ep->ctl_shm);
    ep->lane_ctl     = NULL;
    ep->lane_ctl_dev = NULL;
}

/* Zeroed POSIX shared memory for the lane control words, so that movers of
 * other processes on this host store and load them directly. */
static void *mgi_ep_ctl_shm_create(mgi_ep_t *ep, size_t len)
{
    static uint32_t seq;
    void *p;
    int fd;

    snprintf(ep->ctl_shm, sizeof(ep->ctl_shm), "/mgi-ctl-%d-%u-%u",
             (int)getpid(), ep->id, __atomic_fetch_add(&seq, 1,
                                                       __ATOMIC_RELAXED));
    fd = shm_open(ep->ctl_shm, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        ucs_error("mgi ep %u: shm_open(%s) for the lane control words: %m "
                  "(is /dev/shm mounted and writable?)", ep->id,
                  ep->ctl_shm);
        return NULL;
    }
    if (ftruncate(fd, (off_t)len) != 0) {
        ucs_error("mgi ep %u: ftruncate(%s, %zu): %m", ep->id, ep->ctl_shm,
                  len);
        close(fd);
        shm_unlink(ep->ctl_shm);
        return NULL;
    }
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        ucs_error("mgi ep %u: mmap of %s: %m", ep->id, ep->ctl_shm);
        shm_unlink(ep->ctl_shm);
        return NULL;
    }
    ep->ctl_len = len;
    return p;
}

/* Lane control words (mgi_lane_ctl_t): movers put RTail and get RHead of
 * a GPU endpoint's lanes here, in host memory (UCP's host transports or a
 * store in this process), instead of in the ring headers in GPU memory,
 * where each 4-byte word cost a copy-engine round trip. The sorter kernel
 * copies them from and to the rings. CPU endpoints have them only with
 * MGI_SORT_MIRROR=1, so that tests run this protocol (the host sorter
 * copies them too). Created before the sorter starts: it reads them from
 * its first pass. */
static ucs_status_t mgi_ep_lane_ctl_create(mgi_ep_t *ep)
{
    mgi_context_t *ctx = ep->ctx;
    size_t len         = (ep->nlanes - 1) * sizeof(*ep->lane_ctl);
    ucs_status_t status;
    void *dev;

    if (!mgi_ep_is_gpu(ep) && !ctx->sort_mirror) {
        /* a CPU endpoint's mover uses the ring headers */
        return UCS_OK;
    }
    /* zeroed: RTail and RHead 0, as in a fresh lane ring */
    ep->lane_ctl = mgi_ep_ctl_shm_create(ep, len);
    if (ep->lane_ctl == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    if (mgi_ep_is_gpu(ep)) {
        status = MGI_CUDA_CALL(cudaHostRegister(ep->lane_ctl, len,
                                                cudaHostRegisterMapped |
                                                cudaHostRegisterPortable),
                               "ep %u: lane control words", ep->id);
        if (status != UCS_OK) {
            goto err_free;
        }
        status = MGI_CUDA_CALL(cudaHostGetDevicePointer(&dev, ep->lane_ctl,
                                                        0),
                               "ep %u: lane control words", ep->id);
        if (status != UCS_OK) {
            cudaHostUnregister(ep->lane_ctl);
            goto err_free;
        }
        ep->lane_ctl_dev = dev;
    }

    /* host memory even for a GPU endpoint: UCP reaches it with its
     * host-memory transports (sm, self), not CUDA ones */
    status = mgi_ep_mem_publish(ep, ep->ctx->ucp, ep->lane_ctl, len,
                                UCS_MEMORY_TYPE_HOST,
                                "lane control words", &ep->ctl_memh,
                                &ep->ctl_rkey_buf, &ep->ctl_rkey_len);
    if (status != UCS_OK) {
        goto err_free;
    }
    return UCS_OK;

err_free:
    mgi_ep_lane_ctl_free(ep);
    return status;
}

/* After the sorter stopped: nothing reads the words any more. */
static void mgi_ep_lane_ctl_destroy(mgi_ep_t *ep)
{
    if (ep->lane_ctl == NULL) {
        return;
    }
    mgi_ep_mem_unpublish(ep->ctx->ucp, ep->ctl_memh, ep->ctl_rkey_buf);
    mgi_ep_lane_ctl_free(ep);
}

ucs_status_t mgi_ep_create(mgi_context_h ctx, const mgi_ep_params_t *params,
                           mgi_ep_id_t *ep_p)
{
    mgi_ep_t *ep;
    ucs_status_t status;
    unsigned i, blocks;

    blocks = (params->blocks == 0) ? 1 : params->blocks;
    if ((params->vertex != NULL) && (strlen(params->vertex) >= 32)) {
        ucs_error("mgi context %p: vertex name '%.40s...' longer than 31",
                  ctx, params->vertex);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((params->device == MGI_EP_HOST) && (blocks > 1)) {
        ucs_error("mgi context %p: a CPU endpoint has one user block, not %u",
                  ctx, params->blocks);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((params->device != MGI_EP_HOST) &&
        ((params->device < 0) || (blocks > MGI_GPU_MAX_BLOCKS))) {
        ucs_error("mgi context %p: GPU endpoint on device %d with %u user "
                  "blocks (at most %d)", ctx, params->device, blocks,
                  MGI_GPU_MAX_BLOCKS);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((params->device != MGI_EP_HOST) && (ctx->host_peers > 0) &&
        !ctx->has_cuda_mgi) {
        /* the movers put GPU memory to the processes of this host: with
         * UCX 1.13's other transports UCP emulates those puts over shared
         * memory with memcpy of GPU pointers, and the process dies */
        ucs_error("mgi context %p: a GPU endpoint with %d other process(es) "
                  "on this host needs cuda_mgi among the context's "
                  "transports (MGI_UCX_TLS=%s, UCX_TLS=%s): add cuda_mgi, "
                  "e.g. sm,self,cuda_mgi,cuda_copy", ctx, ctx->host_peers,
                  (ctx->params.ucx_tls != NULL) ? ctx->params.ucx_tls : "",
                  (getenv("UCX_TLS") != NULL) ? getenv("UCX_TLS") : "");
        return UCS_ERR_UNSUPPORTED;
    }

    pthread_mutex_lock(&ctx->lock);
    if (ctx->neps >= MGI_MAX_LOCAL_EPS) {
        pthread_mutex_unlock(&ctx->lock);
        ucs_error("mgi context %p: already %d endpoints in this process", ctx,
                  MGI_MAX_LOCAL_EPS);
        return UCS_ERR_EXCEEDS_LIMIT;
    }

    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_unlock;
    }
    ep->ctx    = ctx;
    ep->index  = ctx->neps;
    ep->id     = MGI_EP_ID(ctx->rank, ep->index);
    ep->device = params->device;
    if (params->vertex != NULL) {
        strcpy(ep->vertex, params->vertex);
    }
    ep->nblocks = blocks;
    ep->ngroups = (params->device == MGI_EP_HOST) ? 1 :
                  ctx->params.stage_groups;
    ep->nstage  = ep->nblocks * ep->ngroups;
    pthread_mutex_init(&ep->route_lock, NULL);
    if (mgi_ep_is_gpu(ep)) {
        status = mgi_gpu_ep_init(ep);
        if (status != UCS_OK) {
            free(ep);
            goto err_unlock;
        }
    }

    status = mgi_ep_ring_budget(ep);
    if (status != UCS_OK) {
        goto err_free;
    }

    ep->routes     = calloc(MGI_MAX_EPS, sizeof(*ep->routes));
    ep->route_list = calloc(MGI_MAX_EPS * MGI_MAX_SORT_RINGS,
                            sizeof(*ep->route_list));
    ep->stage      = calloc(ep->nstage, sizeof(*ep->stage));
    if ((ep->routes == NULL) || (ep->route_list == NULL) ||
        (ep->stage == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    for (i = 0; i < ep->nstage; ++i) {
        ep->stage[i] = mgi_ep_ring_create(ep, ctx->params.stage_depth,
                                          MGI_RING_F_APPEND,
                                          "MGI_STAGE_DEPTH");
        if (ep->stage[i] == NULL) {
            status = UCS_ERR_NO_MEMORY;
            goto err_free;
        }
    }

    status = mgi_ep_recv_ring_create(ep);
    if (status != UCS_OK) {
        goto err_free;
    }

    status = mgi_ep_lane_ctl_create(ep);
    if (status != UCS_OK) {
        goto err_recv_ring;
    }

    status = mgi_sorter_start(ep);
    if (status != UCS_OK) {
        goto err_lane_ctl;
    }
    if (mgi_ep_is_gpu(ep) && (ctx->mover_device == MGI_EP_HOST)) {
        ctx->mover_device = ep->device;
    }

    ctx->eps[ep->index] = ep;
    __atomic_store_n(&ctx->neps, ctx->neps + 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ctx->lock);
    ucs_info("mgi ep %u: %s endpoint (device %d), %u stage ring(s) (%u "
             "block(s) x %u group(s)), receive ring of %u lanes x %u "
             "segments x %zu bytes, %.1f MiB of rings%s", ep->id,
             mgi_ep_is_gpu(ep) ? "GPU" : "CPU", ep->device, ep->nstage,
             ep->nblocks, ep->ngroups,
             ep->nlanes, ctx->params.recv_depth, ctx->seg_size,
             ep->ring_bytes / 1048576.0,
             (ep->lane_ctl != NULL) ? ", lane control words in host memory" :
             "");
    *ep_p = ep->id;
    return UCS_OK;

err_lane_ctl:
    mgi_ep_lane_ctl_destroy(ep);
err_recv_ring:
    mgi_ep_recv_unpublish(ep);
    mgi_ep_ring_free(ep, ep->recv_mem);
err_free:
    if (ep->stage != NULL) {
        for (i = 0; i < ep->nstage; ++i) {
            mgi_ep_ring_free(ep, ep->stage[i]);
        }
    }
    free(ep->stage);
    free(ep->route_list);
    free(ep->routes);
    if (mgi_ep_is_gpu(ep)) {
        mgi_gpu_ep_fini(ep);
    }
    free(ep);
err_unlock:
    pthread_mutex_unlock(&ctx->lock);
    return status;
}

static void mgi_ep_route_free(mgi_ep_t *ep, mgi_route_t *route)
{
    mgi_ep_ring_free(ep, route->ring);
    if (route->mirror != NULL) {
        if (mgi_ep_is_gpu(ep)) {
            mgi_gpu_host_free(route->mirror);
        } else {
            free(route->mirror);
        }
    }
    free(route);
}

ucs_status_t mgi_ep_route_get(mgi_ep_t *ep, mgi_ep_id_t next_hop,
                              mgi_route_t **route_p)
{
    mgi_context_t *ctx = ep->ctx;
    mgi_route_t *route, *r;
    mgi_lane_t *lane;
    ucs_status_t status;
    unsigned k, nrings, nrefs;

    /* caller holds ctx->lock: lanes are shared by the context's routes */
    lane = ctx->lanes[next_hop];
    if (lane == NULL) {
        lane = calloc(1, sizeof(*lane));
        if (lane == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        lane->next_hop       = next_hop;
        ctx->lanes[next_hop] = lane;
    }

    pthread_mutex_lock(&ep->route_lock);
    route = ep->routes[next_hop];
    k     = 0;
    /* GPU endpoints: sort_rings rings to the hop, sorter block b writing
     * ring b % sort_rings; consecutive slots, published together */
    nrings = mgi_ep_is_gpu(ep) ? ctx->params.sort_rings : 1;
    for (; (route == NULL) && (k < nrings); ++k) {
        r = calloc(1, sizeof(*r));
        if (r == NULL) {
            status = UCS_ERR_NO_MEMORY;
            goto err_unlock;
        }
        r->lane     = lane;
        r->ep       = ep;
        r->next_hop = next_hop;
        r->slot     = ep->nroutes + k;
        r->ring     = mgi_ep_ring_create(ep, ctx->params.sort_depth,
                                         MGI_RING_F_APPEND,
                                         "MGI_SORT_DEPTH");
        if (r->ring == NULL) {
            free(r);
            status = UCS_ERR_NO_MEMORY;
            goto err_unlock;
        }
        if (mgi_ep_is_gpu(ep) || ctx->sort_mirror) {
            /* a fresh ring: RHead 0, nothing ready, nothing released */
            nrefs     = (mgi_ep_is_gpu(ep) && ctx->params.send_zcopy) ?
                        ctx->params.sort_depth : 0;
            r->mirror = mgi_ep_is_gpu(ep) ?
                        mgi_gpu_host_alloc(ep, mgi_ring_mirror_size(nrefs)) :
                        mgi_ep_host_alloc(sizeof(*r->mirror), 1);
            if (r->mirror != NULL) {
                /* zeroed: nothing ready, nothing released, no reference
                 * (MGI_SEND_ZCOPY: the sorter fills the table) */
                r->mirror->nrefs = nrefs;
            }
            status = (r->mirror == NULL) ? UCS_ERR_NO_MEMORY :
                     mgi_ep_is_gpu(ep) ? mgi_gpu_route_add(ep, r) : UCS_OK;
            if (status != UCS_OK) {
                mgi_ep_route_free(ep, r);
                goto err_unlock;
            }
        }
        ep->route_list[r->slot] = r;
        if (k + 1 == nrings) {
            route = ep->route_list[ep->nroutes];
            __atomic_store_n(&ep->routes[next_hop], route, __ATOMIC_RELEASE);
            __atomic_store_n(&ep->nroutes, ep->nroutes + nrings,
                             __ATOMIC_RELEASE);
            ucs_debug("mgi ep %u: %u sort ring(s) to next hop %u%s", ep->id,
                      nrings, next_hop, (r->mirror != NULL) ?
                      ", moved through their mirrors" : "");
        }
    }
    pthread_mutex_unlock(&ep->route_lock);
    *route_p = route;
    return UCS_OK;

err_unlock:
    /* the rings of this hop made before the failure are known to the
     * running sorter kernel already (mgi_gpu_route_add): keep them, unused,
     * in the list, freed with the endpoint */
    __atomic_store_n(&ep->nroutes, ep->nroutes + k, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&ep->route_lock);
    ucs_error("mgi ep %u: sort ring %u of %u to next hop %u: %s (each is "
              "MGI_SORT_DEPTH x MGI_SEG_SIZE bytes: lower MGI_SORT_DEPTH, "
              "MGI_SEG_SIZE or mgi_context_params_t.sort_rings)", ep->id, k + 1, nrings,
              next_hop, ucs_status_string(status));
    return status;
}

void mgi_ep_destroy(mgi_ep_t *ep)
{
    mgi_context_t *ctx = ep->ctx;
    unsigned i;

    mgi_sorter_stop(ep);
    for (i = 0; i < ep->nroutes; ++i) {
        mgi_ep_route_free(ep, ep->route_list[i]);
    }
    for (i = 0; i < ep->nstage; ++i) {
        mgi_ep_ring_free(ep, ep->stage[i]);
    }
    mgi_ep_recv_unpublish(ep);
    mgi_ep_ring_free(ep, ep->recv_mem);
    mgi_ep_lane_ctl_destroy(ep);
    ctx->eps[ep->index] = NULL;
    free(ep->stage);
    free(ep->route_list);
    free(ep->routes);
    if (mgi_ep_is_gpu(ep)) {
        mgi_gpu_ep_fini(ep);
    }
    free(ep);
}

/**
 * MGI sorter of a GPU endpoint (paper §5.4, Fig. 9) and the host side of
 * GPU endpoints: the endpoint's device tables of routes and channels,
 * the channels' final rings, the persistent sorter kernel. Below it, in
 * their own files: the GPU runtime (mgi_gpu_rt.cu: device memory,
 * pools, peer access, CUDA IPC) and the channels' direct rings and
 * landing buffers (mgi_gpu_direct.cu); the host state they share is in
 * mgi_gpu.h.
 *
 * The sorter kernel runs `sorter_blocks` blocks for the endpoint's whole
 * life. Block b owns the stage rings, receive lanes and sort rings whose
 * index is b modulo the grid (the stage rings counted from stage_base and
 * the sort rings from route_base: mgi_gpu_stage_first,
 * mgi_gpu_route_first), so every ring has one consumer and the hot
 * path has no grid-wide atomics: a block copies a full segment into
 * shared memory, one thread walks its messages and assigns each to a
 * target ring (a sort ring by the route of its destination, the loopback
 * lane of the receive ring for this endpoint, or a final ring on the
 * receive side), counting bytes per target (shared memory, in message
 * order). Then the block reserves once per target (one device atomic on
 * that ring's STail per segment and target) and writes the tuples grouped
 * by target, consecutive threads writing consecutive 8-byte words
 * (coalesced) or a thread per message (MGI_SORTER_COALESCE: 1, 0, or 2,
 * the default: a run of like messages word by word in segment order, each
 * word to its message's place). A pass is all or nothing: it reserves only
 * once every target ring has room; when one has none, the stage ring waits
 * (its consumer line names the ring) until it has, and the segment is
 * walked again. A reservation lost to a race is committed as padding. A
 * receive segment whose messages are all of one (channel, destination)
 * moves to a final ring
 * whole. The device code is in mgi_sorter_dev.h (also built for the host
 * by test_mgi_sorter); this file holds the kernel and the host side.
 *
 * Host and device meet in three places only:
 *  - tables (routes, channels) written by the host with cudaMemcpyAsync
 *    on a control stream while the kernel runs, read with volatile loads;
 *  - sort-ring mirrors (mgi_ring_mirror_t, pinned host memory mapped into
 *    the GPU): the kernel publishes full segments there and recycles what
 *    the host mover released (mgi_ring_mirror_sync), so the mover never
 *    reads or writes control words in device memory;
 *  - a status block in mapped host memory: stop flag, epoch, counters.
 *
 * A persistent kernel makes every device-wide synchronization hang:
 * cudaFree and cudaDeviceSynchronize on the endpoint's device wait for it.
 * So device memory freed while the sorter runs is only queued
 * (mgi_gpu_dev_free) and freed once it stopped (mgi_ep_delete,
 * mgi_context_destroy), and applications use streams
 * (cudaStreamSynchronize) and CUDA_MODULE_LOADING=EAGER (lazy loading of
 * a later kernel may wait for the sorter too). libmgi's own waits poll an
 * event recorded on the stream, with a bound (mgi_gpu_event_wait): under
 * compute-sanitizer a stream's synchronization returns for a stream with
 * a kernel only once the device is idle, and an event's query does not
 * wait for that.
 */
#include "mgi_int.h"
#include "mgi_gpu.h"

#include <algorithm>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mgi_sorter_dev.h"

static_assert(MGI_OWNER_HELP_MAX == MGI_GPU_HELP_JOBS,
              "MGI_OWNER_HELP is bounded by the jobs a block helps a round");

__global__ void mgi_sorter_kernel(const mgi_gpu_dep_t *d, uint32_t seg_cap)
{
    extern __shared__ uint4 mgi_smem[];
    __shared__ mgi_gpu_pass_t p;
    mgi_gpu_block_t *b = &d->blk[blockIdx.x];
    char *sseg         = (char*)mgi_smem;
    mgi_gpu_emit_t e;
    unsigned idle = 0;

    mgi_gpu_emit_init(&e, sseg + ((seg_cap + 15) & ~15u));
    if (threadIdx.x == 0) {
        p.ntouched = 0;
        p.stop     = 0;
        p.w_rr     = 0;
        p.qseq_pub = d->quiesce_seq;    /* as the host published it */
        d->status->blk[blockIdx.x].started = 1;
        __threadfence_system();
    }
    for (unsigned k = threadIdx.x; k < MGI_GS_COUNT; k += blockDim.x) {
        p.stat[k] = 0;
    }
    for (unsigned k = threadIdx.x; k < MGI_GPU_DTAB; k += blockDim.x) {
        p.dtab[k] = 0;
    }
    __syncthreads();
    mgi_gpu_tma_init(&p);

    while (!p.stop) {
        if (mgi_gpu_round(d, b, &p, &e, sseg)) {
            idle = 0;
        } else if (idle < 8) {
            ++idle;
        } else {
            __nanosleep(1000);
        }
        __syncthreads(); /* p.stop read by all before thread 0 writes */
    }
}

/* --------------------------------------------------------------- host */

/* The endpoint's events (either may be unmade after a partial create). */
static void mgi_gpu_events_destroy(mgi_gpu_ep_t *g)
{
    if (g->ctl_done != NULL) {
        cudaEventDestroy(g->ctl_done);
    }
    if (g->sorter_done != NULL) {
        cudaEventDestroy(g->sorter_done);
    }
}

/* The endpoint's device tables (cudaFree of NULL is a no-op: also after a
 * partial allocation). Only with no sorter running on them. */
static void mgi_gpu_ep_free_tables(mgi_gpu_ep_t *g)
{
    cudaFree(g->stage);
    cudaFree(g->ljobs);
    cudaFree(g->blk);
    cudaFree(g->chs);
    cudaFree(g->dep);
}

/* Whether a sorter block with segments of seg_size bytes fits a device
 * with this much opt-in shared memory a block. */
static int mgi_gpu_seg_fits(size_t seg_size, size_t smem_optin)
{
    return mgi_gpu_smem(seg_size) + sizeof(mgi_gpu_pass_t) + 1024 <=
           smem_optin;
}

size_t mgi_gpu_seg_fit(size_t seg_size)
{
    int d, ndev, smem;

    if (cudaGetDeviceCount(&ndev) != cudaSuccess) {
        (void)cudaGetLastError();
        return seg_size;
    }
    for (d = 0; d < ndev; ++d) {
        if (cudaDeviceGetAttribute(&smem,
                                   cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                   d) != cudaSuccess) {
            (void)cudaGetLastError();
            continue;
        }
        while ((seg_size > MGI_GPU_SEG_FIT_MIN) &&
               !mgi_gpu_seg_fits(seg_size, (size_t)smem)) {
            seg_size /= 2;
        }
    }
    return seg_size;
}

ucs_status_t mgi_gpu_ep_init(mgi_ep_t *ep)
{
    mgi_context_t *ctx = ep->ctx;
    const char *loading = getenv("CUDA_MODULE_LOADING");
    mgi_gpu_dev_guard_t guard;
    cudaDeviceProp prop;
    cudaFuncAttributes fattr;
    ucs_status_t status;
    mgi_gpu_ep_t *g;
    int ndev;

    if (cudaGetDeviceCount(&ndev) != cudaSuccess) {
        ndev = 0;
        cudaGetLastError();
    }
    if (ep->device >= ndev) {
        ucs_error("mgi ep %u: no CUDA device %d (%d found)", ep->id,
                  ep->device, ndev);
        return UCS_ERR_NO_DEVICE;
    }
    g = (mgi_gpu_ep_t*)calloc(1, sizeof(*g));
    if (g == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    g->dch_slot = (mgi_gpu_dch_t**)calloc(ctx->params.max_channels,
                                          sizeof(*g->dch_slot));
    if (g->dch_slot == NULL) {
        free(g);
        return UCS_ERR_NO_MEMORY;
    }
    g->device   = ep->device;
    g->nblocks  = ctx->params.sorter_blocks;
    g->nthreads = ctx->params.sorter_threads;
    g->nlanes   = ctx->size + 1;   /* as mgi_ep_recv_ring_create */
    g->smem     = mgi_gpu_smem(ctx->seg_size);
    pthread_mutex_init(&g->pool_lock, NULL);
    pthread_mutex_init(&g->dhdr_lock, NULL);
    ep->gpu     = g;

    status = mgi_gpu_enter(ep, &guard);
    if (status != UCS_OK) {
        goto err_free;
    }
    status = MGI_CUDA_CALL(cudaGetDeviceProperties(&prop, ep->device),
                           "ep %u", ep->id);
    if (status != UCS_OK) {
        goto err_leave;
    }
    if ((g->nblocks == 0) || (g->nblocks > MGI_GPU_MAX_SORTERS) ||
        (g->nthreads < 64) || (g->nthreads > 1024) ||
        (g->nthreads % 32) != 0) {
        ucs_error("mgi ep %u: sorter of %u blocks x %u threads; blocks "
                  "1..%d, threads a multiple of 32 in 64..1024 "
                  "(MGI_SORTER_BLOCKS, mgi_context_params_t.sorter_threads)", ep->id,
                  g->nblocks, g->nthreads, MGI_GPU_MAX_SORTERS);
        status = UCS_ERR_INVALID_PARAM;
        goto err_leave;
    }
    status = MGI_CUDA_CALL(cudaFuncGetAttributes(&fattr, mgi_sorter_kernel),
                           "ep %u", ep->id);
    if (status != UCS_OK) {
        goto err_leave;
    }
    if (g->nthreads > (unsigned)fattr.maxThreadsPerBlock) {
        /* the kernel's registers decide it, not the device's limit */
        ucs_error("mgi ep %u: sorter blocks of %u threads; the sorter kernel "
                  "(%d registers a thread) runs at most %d on device %d: "
                  "lower mgi_context_params_t.sorter_threads", ep->id, g->nthreads,
                  fattr.numRegs, fattr.maxThreadsPerBlock, ep->device);
        status = UCS_ERR_INVALID_PARAM;
        goto err_leave;
    }
    if (!mgi_gpu_seg_fits(ctx->seg_size, prop.sharedMemPerBlockOptin)) {
        ucs_error("mgi ep %u: segments of %zu bytes need %zu bytes of shared "
                  "memory in the sorter, device %d has %zu; lower "
                  "MGI_SEG_SIZE", ep->id, ctx->seg_size, g->smem, ep->device,
                  prop.sharedMemPerBlockOptin);
        status = UCS_ERR_INVALID_PARAM;
        goto err_leave;
    }
    if ((loading == NULL) || (strcmp(loading, "EAGER") != 0)) {
        ucs_warn("mgi ep %u: CUDA_MODULE_LOADING is not EAGER: a kernel "
                 "loaded lazily while the persistent sorter runs may wait "
                 "for it forever", ep->id);
    }
    status = MGI_CUDA_CALL(cudaStreamCreateWithFlags(&g->ctl,
                                                     cudaStreamNonBlocking),
                           "ep %u", ep->id);
    if (status != UCS_OK) {
        goto err_leave;
    }
    status = MGI_CUDA_CALL(cudaStreamCreateWithFlags(&g->stream,
                                                     cudaStreamNonBlocking),
                           "ep %u", ep->id);
    if (status != UCS_OK) {
        goto err_ctl;
    }
    /* waits poll these (mgi_gpu_event_wait), with a bound */
    if ((MGI_CUDA_CALL(cudaEventCreateWithFlags(&g->ctl_done,
                                                cudaEventDisableTiming),
                       "ep %u", ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaEventCreateWithFlags(&g->sorter_done,
                                                cudaEventDisableTiming),
                       "ep %u", ep->id) != UCS_OK)) {
        status = UCS_ERR_NO_RESOURCE;
        goto err_stream;
    }
    g->status = (mgi_gpu_status_t*)mgi_gpu_host_alloc(ep, sizeof(*g->status));
    g->dhdr   = (mgi_dring_t*)mgi_gpu_host_alloc(ep, MGI_GPU_DHDR_RINGS *
                                                     sizeof(*g->dhdr));
    if ((ctx->fail_word == NULL) && (g->status != NULL)) {
        /* the context's failure word (under ctx->lock, as every endpoint's
         * create): set already where the mover stopped before */
        uint32_t *w = (uint32_t*)mgi_gpu_host_alloc(ep, MGI_DEV_ERR_WORDS *
                                                    sizeof(*w));
        if (w != NULL) {
            /* the mover sets its status, then reads this pointer: looked
             * at after the pointer is out, a stop at any time is seen by
             * one side or both */
            __atomic_store_n(&ctx->fail_word, w, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&ctx->mover_status, __ATOMIC_SEQ_CST) !=
                UCS_OK) {
                __atomic_store_n(w, 1, __ATOMIC_RELEASE);
            }
        }
    }
    if ((g->status == NULL) || (g->dhdr == NULL)) {
        mgi_gpu_host_free(g->status);
        mgi_gpu_host_free(g->dhdr);
        status = UCS_ERR_NO_MEMORY;
        goto err_stream;
    }
    if ((MGI_CUDA_CALL(cudaMalloc(&g->dep, sizeof(*g->dep)), "ep %u",
                       ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMalloc(&g->chs, ctx->params.max_channels *
                                  sizeof(*g->chs)), "ep %u",
                       ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMalloc(&g->blk, g->nblocks * sizeof(*g->blk)),
                       "ep %u", ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMalloc(&g->ljobs, g->nlanes * sizeof(*g->ljobs)),
                       "ep %u", ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMemsetAsync(g->ljobs, 0, g->nlanes *
                                       sizeof(*g->ljobs), g->ctl),
                       "ep %u", ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMalloc(&g->stage,
                                  ep->nstage * sizeof(*g->stage)),
                       "ep %u", ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMemsetAsync(g->dep, 0, sizeof(*g->dep), g->ctl),
                       "ep %u", ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMemsetAsync(g->chs, 0, ctx->params.max_channels *
                                       sizeof(*g->chs), g->ctl), "ep %u",
                       ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaMemsetAsync(g->blk, 0, g->nblocks *
                                       sizeof(*g->blk), g->ctl), "ep %u",
                       ep->id) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaFuncSetAttribute(
                           mgi_sorter_kernel,
                           cudaFuncAttributeMaxDynamicSharedMemorySize,
                           (int)g->smem), "ep %u", ep->id) != UCS_OK) ||
        /* never cudaDeviceSynchronize: another endpoint's persistent
         * sorter may run on this device */
        (mgi_gpu_ctl_sync(ep) != UCS_OK)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_mem;
    }
    mgi_gpu_leave(&guard);
    return UCS_OK;

err_mem:
    mgi_gpu_ep_free_tables(g);
    mgi_gpu_host_free(g->status);
    mgi_gpu_host_free(g->dhdr);
err_stream:
    mgi_gpu_events_destroy(g);
    cudaStreamDestroy(g->stream);
err_ctl:
    cudaStreamDestroy(g->ctl);
err_leave:
    mgi_gpu_leave(&guard);
err_free:
    pthread_mutex_destroy(&g->pool_lock);
    pthread_mutex_destroy(&g->dhdr_lock);
    free(g->dch_slot);
    free(g);
    ep->gpu = NULL;
    return status;
}

void mgi_gpu_ep_fini(mgi_ep_t *ep)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;
    unsigned i;

    if (g == NULL) {
        return;
    }
    mgi_gpu_sorter_stop(ep);
    if (g->finals_new + g->finals_reused > 0) {
        ucs_info("mgi ep %u: final rings of channels: %lu allocated, %lu "
                 "reused from deleted channels", ep->id, g->finals_new,
                 g->finals_reused);
    }
    if (mgi_gpu_enter(ep, &guard) == UCS_OK) {
        for (i = 0; i < g->ndeferred; ++i) {
            cudaFree(g->deferred[i]);
        }
        for (i = 0; i < g->npool; ++i) {
            cudaFree(g->pool[i].ring);
        }
        mgi_gpu_pool_drop(&g->dpool);
        mgi_gpu_pool_drop(&g->opool);
        for (i = 0; i < ep->ctx->params.max_channels; ++i) {
            cudaFree(g->dch_slot[i]); /* NULL: nothing */
        }
        mgi_gpu_ep_free_tables(g);
        mgi_gpu_events_destroy(g);
        cudaStreamDestroy(g->stream);
        cudaStreamDestroy(g->ctl);
    }
    mgi_gpu_leave(&guard);
    mgi_gpu_host_free(g->status);
    mgi_gpu_host_free(g->dhdr);
    pthread_mutex_destroy(&g->dhdr_lock);
    free(g->deferred);
    free(g->pool);
    free(g->dpool.e);
    free(g->opool.e);
    free(g->dch_slot);
    pthread_mutex_destroy(&g->pool_lock);
    free(g);
    ep->gpu = NULL;
}

static unsigned mgi_gpu_started(mgi_gpu_ep_t *g)
{
    unsigned i, n = 0;

    for (i = 0; i < g->nblocks; ++i) {
        n += g->status->blk[i].started;
    }
    return n;
}

ucs_status_t mgi_gpu_sorter_start(mgi_ep_t *ep)
{
    mgi_context_t *ctx = ep->ctx;
    mgi_gpu_ep_t *g    = mgi_gpu_ep(ep);
    mgi_gpu_dev_guard_t guard;
    mgi_gpu_dep_t dep;
    ucs_status_t status;
    uint64_t deadline;
    unsigned i, started;
    cudaError_t e;

    memset(&dep, 0, sizeof(dep));
    dep.id           = ep->id;
    dep.nstage       = ep->nstage;
    dep.nlanes       = ep->nlanes;
    dep.coalesce     = 2;
    dep.recv_zcopy   = 0;
    dep.loop_direct  = 1;
    dep.stage_zcopy  = 1;
    dep.eof_alone    = 1;
    /* a reference's stage segments go in one put: no more than a flush
     * takes, a lane holds or a stage ring has */
    dep.send_zcopy   = 0;
    if (ctx->params.send_zcopy) {
        dep.send_zcopy = ctx->params.mover_batch;
        if (dep.send_zcopy > ctx->params.stage_depth) {
            dep.send_zcopy = ctx->params.stage_depth;
        }
        if (dep.send_zcopy > ctx->params.recv_depth) {
            dep.send_zcopy = ctx->params.recv_depth;
        }
    }
    dep.send_wait_rounds = ctx->params.send_wait_rounds;
    dep.stage_base       = mgi_gpu_stage_first(1,
                                               ep->lane_ctl_dev != NULL,
                                               g->nblocks, dep.nlanes,
                                               dep.nstage);
    dep.route_base       = mgi_gpu_route_first(dep.stage_base, g->nblocks,
                                               dep.nstage);
    dep.owner_help       = 0;
    dep.lane_bytes   = ep->lane_bytes;
    dep.recv_mem     = (char*)ep->recv_mem;
    dep.stage        = g->stage;
    dep.chs          = g->chs;
    dep.max_channels = ctx->params.max_channels;
    dep.sort_rings   = ctx->params.sort_rings;
    dep.status       = (mgi_gpu_status_t*)mgi_gpu_host_dev_ptr(ep, g->status);
    dep.blk          = g->blk;
    dep.ljobs        = g->ljobs;
    dep.lane_ctl     = ep->lane_ctl_dev; /* NULL: in the lane rings */
    dep.quiesce_seq  = g->qseq;         /* nothing to quiesce yet */
    if (dep.status == NULL) {
        return UCS_ERR_IO_ERROR;
    }
    status = mgi_gpu_poke(ep, g->stage, ep->stage,
                          ep->nstage * sizeof(*ep->stage));
    if (status == UCS_OK) {
        status = mgi_gpu_poke(ep, g->dep, &dep, sizeof(dep));
    }
    if (status != UCS_OK) {
        return status;
    }
    g->status->stop = 0;
    for (i = 0; i < g->nblocks; ++i) {
        g->status->blk[i].started  = 0;
        g->status->blk[i].quiesced = g->qseq;
    }
    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        mgi_sorter_kernel<<<g->nblocks, g->nthreads, g->smem, g->stream>>>(
                g->dep, (uint32_t)(ctx->seg_size - MGI_SEG_HDR_SIZE));
        status = MGI_CUDA_CALL(cudaGetLastError(), "ep %u: sorter launch",
                               ep->id);
    }
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaEventRecord(g->sorter_done, g->stream),
                               "ep %u: after the sorter launch", ep->id);
    }
    mgi_gpu_leave(&guard);
    if (status != UCS_OK) {
        return status;
    }
    g->running = 1;
    /* every block must be resident: a persistent kernel that only partly
     * started would leave rings without a consumer */
    deadline = mgi_deadline_ns(ctx);
    while ((started = mgi_gpu_started(g)) < g->nblocks) {
        if ((e = cudaEventQuery(g->sorter_done)) != cudaErrorNotReady) {
            ucs_error("mgi ep %u: sorter kernel ended at start: "
                      MGI_CUDA_ERR_FMT, ep->id, MGI_CUDA_ERR_ARGS(e));
            g->running = 0;
            return UCS_ERR_IO_ERROR;
        }
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi ep %u: only %u of %u sorter blocks started within "
                      "%u ms (device busy?)", ep->id, started,
                      g->nblocks, ctx->params.timeout_ms);
            mgi_gpu_sorter_stop(ep);
            return UCS_ERR_TIMED_OUT;
        }
        usleep(10);
    }
    ep->sorter_running = 1;
    ucs_info("mgi ep %u: sorter kernel on device %d, %u blocks x %u threads, "
             "%zu bytes of shared memory, whole segments to other "
             "endpoints %s", ep->id, ep->device,
             g->nblocks, g->nthreads, g->smem,
             ctx->params.send_zcopy ? "put from the stage rings "
             "(by reference)" : "copied into sort rings");
    if (dep.stage_base > 0) {
        ucs_info("mgi ep %u: sorter blocks 0..%u own the receive lanes with "
                 "control words and take no stage rings",
                 ep->id, dep.stage_base - 1);
    }
    if (dep.route_base > 0) {
        ucs_info("mgi ep %u: sorter blocks from %u on sync the sort rings' "
                 "mirrors (blocks with the fewest stage rings)", ep->id,
                 dep.route_base);
    }
    return UCS_OK;
}

/* The sorter blocks' counters added up (info log), after the kernel. */
static void mgi_gpu_sorter_report(mgi_ep_t *ep)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    unsigned long long t[MGI_GS_COUNT] = {0}, n;
    unsigned i, k;

    for (i = 0; i < g->nblocks; ++i) {
        for (k = 0; k < MGI_GS_COUNT; ++k) {
            t[k] += g->status->blk[i].stat[k];
        }
    }
    ucs_info("mgi ep %u: sorter totals: %llu rounds, %llu tuples sorted and "
             "%llu stage segments moved whole (%llu of them to the loopback "
             "lane, %llu straight to final rings, %llu of those by "
             "reference), %llu EOFs for this "
             "endpoint counted without the lane, %llu send passes blocked "
             "(target full) and %llu left "
             "waiting for it, %llu lane jobs (%llu whole moves copied, "
             "%llu segments of EOFs counted in lane order), %llu lane "
             "rounds with nothing ready, %llu with the final ring full",
             ep->id, t[MGI_GS_ROUNDS], t[MGI_GS_SORTED],
             t[MGI_GS_STAGE_WHOLE], t[MGI_GS_LOOP_WHOLE],
             t[MGI_GS_LOOP_DIRECT], t[MGI_GS_STAGE_REFS], t[MGI_GS_LOOP_EOF],
             t[MGI_GS_SEND_FULL],
             t[MGI_GS_SEND_WAIT], t[MGI_GS_JOBS], t[MGI_GS_CHUNKS],
             t[MGI_GS_LANE_EOFS], t[MGI_GS_LANE_EMPTY],
             t[MGI_GS_FINAL_FULL]);
    if (t[MGI_GS_ROUNDS] > 0) {
        n = t[MGI_GS_ROUNDS];
        ucs_info("mgi ep %u: sorter rounds: %.0f cycles each on average: "
                 "%.0f in stage rings, %.0f in lanes, %.0f helping whole "
                 "moves (%.0f copying), %.0f in sort rings and flushes",
                 ep->id, (double)(t[MGI_GS_C_STAGE] + t[MGI_GS_C_LANE] +
                                  t[MGI_GS_C_HELP] + t[MGI_GS_C_REST]) / n,
                 (double)t[MGI_GS_C_STAGE] / n, (double)t[MGI_GS_C_LANE] / n,
                 (double)t[MGI_GS_C_HELP] / n, (double)t[MGI_GS_C_HCOPY] / n,
                 (double)t[MGI_GS_C_REST] / n);
    }
    if (t[MGI_GS_LANE_LOOKS] > 0) {
        n = t[MGI_GS_LANE_LOOKS];
        ucs_info("mgi ep %u: lanes from other ranks: at %llu issue steps of "
                 "their owners %.1f whole moves in flight (of %u) and %.1f "
                 "segments ready, not issued, on average; every job slot "
                 "taken at %.1f %% of them; a whole move waited %.2f us for "
                 "a helper, the oldest of a retire %.2f us from its issue",
                 ep->id, n, (double)t[MGI_GS_LANE_HELD] / n,
                 MGI_GPU_LANE_JOBS, (double)t[MGI_GS_LANE_WAITING] / n,
                 100.0 * t[MGI_GS_LANE_WINDOW] / n,
                 t[MGI_GS_JOB_CLAIMS] ?
                 1e-3 * t[MGI_GS_T_JWAIT] / t[MGI_GS_JOB_CLAIMS] : 0.0,
                 t[MGI_GS_JOB_RETIRES] ?
                 1e-3 * t[MGI_GS_T_JRETIRE] / t[MGI_GS_JOB_RETIRES] : 0.0);
    }
    for (i = 0; i < g->nblocks; ++i) {
        /* the owners of lanes from other ranks that moved something */
        const volatile unsigned long long *b = g->status->blk[i].stat;
        if ((b[MGI_GS_LANE_LOOKS] == 0) || (b[MGI_GS_JOBS] == 0) ||
            (b[MGI_GS_ROUNDS] == 0)) {
            continue;
        }
        n = b[MGI_GS_ROUNDS];
        ucs_info("mgi ep %u: sorter block %u (a lane's owner): %llu rounds "
                 "of %.0f cycles on average (%.0f in stage rings, %.0f in "
                 "lanes, %.0f helping), the longest %llu (its stage rings "
                 "at most %llu, its lanes %llu); %llu jobs issued "
                 "at %llu issue steps, %.1f in flight and %.1f segments "
                 "ready, not issued, on average (%.0f cycles retiring, %.0f "
                 "issuing; at most %llu "
                 "segments in the lane, RTail moved by at most %llu between "
                 "two pulls); the oldest "
                 "of a retire %.2f us from its issue", ep->id, i, n,
                 (double)(b[MGI_GS_C_STAGE] + b[MGI_GS_C_LANE] +
                          b[MGI_GS_C_HELP] + b[MGI_GS_C_REST]) / n,
                 (double)b[MGI_GS_C_STAGE] / n, (double)b[MGI_GS_C_LANE] / n,
                 (double)b[MGI_GS_C_HELP] / n, b[MGI_GS_C_RMAX],
                 b[MGI_GS_C_SMAX], b[MGI_GS_C_LMAX],
                 b[MGI_GS_JOBS], b[MGI_GS_LANE_LOOKS],
                 (double)b[MGI_GS_LANE_HELD] / b[MGI_GS_LANE_LOOKS],
                 (double)b[MGI_GS_LANE_WAITING] / b[MGI_GS_LANE_LOOKS],
                 (double)b[MGI_GS_C_LRETIRE] / b[MGI_GS_LANE_LOOKS],
                 (double)b[MGI_GS_C_LISSUE] / b[MGI_GS_LANE_LOOKS],
                 b[MGI_GS_LANE_MAXRING], b[MGI_GS_PULL_MAXJUMP],
                 b[MGI_GS_JOB_RETIRES] ?
                 1e-3 * b[MGI_GS_T_JRETIRE] / b[MGI_GS_JOB_RETIRES] : 0.0);
        if (b[MGI_GS_BUSY_STEPS] > 0) {
            /* the steady state: steps with segments waiting for jobs */
            n = b[MGI_GS_BUSY_STEPS];
            ucs_info("mgi ep %u: sorter block %u: %llu busy issue steps "
                     "(segments ready beyond the jobs in flight), %.2f us "
                     "apart, issuing %.1f jobs each with %.1f in flight and "
                     "%.1f ready; the issue stopped at: every ready one "
                     "%llu, every job slot taken %llu, a commit not seen "
                     "yet %llu, a segment to walk %llu, EOFs %llu, a final "
                     "ring full %llu", ep->id, i, n,
                     b[MGI_GS_BUSY_GAPS] ?
                     1e-3 * b[MGI_GS_T_BUSY_GAP] / b[MGI_GS_BUSY_GAPS] : 0.0,
                     (double)b[MGI_GS_BUSY_ISSUED] / n,
                     (double)b[MGI_GS_BUSY_HELD] / n,
                     (double)b[MGI_GS_BUSY_READY] / n, b[MGI_GS_STOP_ALL],
                     b[MGI_GS_STOP_WINDOW], b[MGI_GS_STOP_UNPUB],
                     b[MGI_GS_STOP_MIXED], b[MGI_GS_STOP_EOF],
                     b[MGI_GS_STOP_FINAL]);
        }
        n = b[MGI_GS_LANE_LOOKS];
        ucs_info("mgi ep %u: sorter block %u: a lane step's cycles: retire "
                 "%.0f finding the done jobs, %.0f committing them, %.0f "
                 "releasing; issue %.0f finding ready segments, %.0f "
                 "reserving in final rings, %.0f filling the jobs in; a "
                 "round's %.0f pulling RTail and %.0f pushing RHead", ep->id,
                 i, (double)b[MGI_GS_C_RSCAN] / n,
                 (double)b[MGI_GS_C_RCOMMIT] / n,
                 (double)(b[MGI_GS_C_LRETIRE] - b[MGI_GS_C_RSCAN] -
                          b[MGI_GS_C_RCOMMIT]) / n,
                 (double)b[MGI_GS_C_IPEEK] / n, (double)b[MGI_GS_C_IRES] / n,
                 (double)(b[MGI_GS_C_LISSUE] - b[MGI_GS_C_IPEEK] -
                          b[MGI_GS_C_IRES]) / n,
                 (double)b[MGI_GS_C_PULL] / b[MGI_GS_ROUNDS],
                 (double)b[MGI_GS_C_PUSH] / b[MGI_GS_ROUNDS]);
    }
    if (t[MGI_GS_PASSES] > 0) {
        n = t[MGI_GS_PASSES];
        ucs_info("mgi ep %u: sorter passes: %llu walked (%llu over lanes), "
                 "per pass %.0f cycles copying the segment to shared memory, "
                 "%.0f walking, %.0f placing", ep->id, n,
                 t[MGI_GS_LANE_PASSES], (double)t[MGI_GS_C_COPY] / n,
                 (double)t[MGI_GS_C_WALK] / n, (double)t[MGI_GS_C_PLACE] / n);
        ucs_info("mgi ep %u: sorter passes: of the placing, %.0f cycles "
                 "reserving and marking the targets; %llu messages placed "
                 "in runs by the whole block, %llu of them relayed", ep->id,
                 (double)t[MGI_GS_C_PRES] / n, t[MGI_GS_RUN_MSGS],
                 t[MGI_GS_RUN_RELAYED]);
    }
    if (t[MGI_GS_SEND_REF_SLOTS] > 0) {
        ucs_info("mgi ep %u: %llu stage segments sent by reference in %llu "
                 "sort segments (%.2f each; the mover puts each one's in one "
                 "go)", ep->id, t[MGI_GS_SEND_REFS], t[MGI_GS_SEND_REF_SLOTS],
                 (double)t[MGI_GS_SEND_REFS] / t[MGI_GS_SEND_REF_SLOTS]);
    }
    if (t[MGI_GS_WHOLE_TRIES] > 0) {
        n = t[MGI_GS_WHOLE_TRIES];
        ucs_info("mgi ep %u: whole stage moves: %llu tries, %.0f cycles "
                 "each to reserve (or not; %.0f choosing the target ring), "
                 "%.0f copying and committing", ep->id, n,
                 (double)t[MGI_GS_C_WRES] / n, (double)t[MGI_GS_C_WROUTE] / n,
                 (double)t[MGI_GS_C_WCOPY] / n);
    }
}

void mgi_gpu_sorter_stop(mgi_ep_t *ep)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    ucs_status_t status;
    unsigned i;

    if ((g == NULL) || !g->running) {
        return;
    }
    g->status->stop = 1;
    __sync_synchronize();
    status = mgi_gpu_event_wait(ep, g->sorter_done,
                                "the sorter kernel's stop");
    if (status == UCS_ERR_TIMED_OUT) {
        ucs_error("mgi ep %u: the sorter's device memory is not freed",
                  ep->id);
        return; /* leave running = 1: nothing is freed under it */
    }
    mgi_gpu_sorter_report(ep);
    for (i = 0; i < g->nblocks; ++i) {
        if (g->status->blk[i].dropped || g->status->blk[i].eof_errors) {
            ucs_error("mgi ep %u: sorter block %u dropped %u message(s) "
                      "without a channel or route, saw %u extra EOF(s)",
                      ep->id, i, g->status->blk[i].dropped,
                      g->status->blk[i].eof_errors);
        }
        ucs_debug("mgi ep %u: sorter block %u sorted %llu, dispatched %llu",
                  ep->id, i, g->status->blk[i].stat[MGI_GS_SORTED],
                  g->status->blk[i].stat[MGI_GS_DISPATCHED]);
    }
    g->running         = 0;
    ep->sorter_running = 0;
}

/* After the host took something out of the sorter's tables: a new
 * quiesce request, which every sorter block answers once it finished a
 * round that began after it (mgi_gpu_round); returns its number, for
 * mgi_gpu_quiesced. Was 64 rounds of block 0 (its round count published
 * every MGI_GPU_STOP_POLL rounds, two of those): an idle sorter sleeps a
 * microsecond a round, so each channel create waited 0.24-0.27 ms for the
 * deleted channel before it on one H100. */
uint32_t mgi_gpu_quiesce_request(mgi_ep_t *ep)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    uint32_t seq;

    /* channels come and go in any thread: one request at a time, so the
     * sorter never sees the number go back, nor one request answer for
     * another's later unpublish */
    pthread_mutex_lock(&g->pool_lock);
    seq = g->qseq + 1;
    /* a failure is logged; the request then stays unanswered, so what it
     * covers is never reused (mgi_ch_reap says so at its bound) */
    if (!g->running ||
        (mgi_gpu_poke(ep, &g->dep->quiesce_seq, &seq, sizeof(seq)) ==
         UCS_OK)) {
        g->qseq = seq;
    }
    pthread_mutex_unlock(&g->pool_lock);
    return seq;
}

/* The latest quiesce request. */
uint32_t mgi_gpu_quiesce_mark(mgi_ep_t *ep)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    uint32_t seq;

    pthread_mutex_lock(&g->pool_lock);
    seq = g->qseq;
    pthread_mutex_unlock(&g->pool_lock);
    return seq;
}

/* Has every sorter block answered quiesce request `mark` (or a later one),
 * or is the sorter not running? */
int mgi_gpu_quiesced(mgi_ep_t *ep, uint32_t mark)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    unsigned i;

    if (!g->running) {
        return 1;
    }
    for (i = 0; i < g->nblocks; ++i) {
        if ((int32_t)(g->status->blk[i].quiesced - mark) < 0) {
            return 0;
        }
    }
    return 1;
}

ucs_status_t mgi_gpu_route_add(mgi_ep_t *ep, mgi_route_t *route)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_ring_mirror_t *mdev;
    uint32_t n;
    ucs_status_t status;

    if (route->slot >= MGI_GPU_MAX_ROUTES) {
        ucs_error("mgi ep %u: more than %d next hops", ep->id,
                  MGI_GPU_MAX_ROUTES);
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    /* no mirror: a peer GPU endpoint's receive lane (MGI_PEER_DIRECT),
     * which no mover reads */
    mdev = NULL;
    if ((route->mirror != NULL) &&
        ((mdev = (mgi_ring_mirror_t*)mgi_gpu_host_dev_ptr(
                  ep, route->mirror)) == NULL)) {
        return UCS_ERR_IO_ERROR;
    }
    n      = route->slot + 1;
    status = mgi_gpu_poke(ep, &g->dep->sort[route->slot], &route->ring,
                          sizeof(route->ring));
    if (status == UCS_OK) {
        status = mgi_gpu_poke(ep, &g->dep->mirror[route->slot], &mdev,
                              sizeof(mdev));
    }
    if (status == UCS_OK) {
        status = mgi_gpu_poke(ep, &g->dep->nroutes, &n, sizeof(n));
    }
    return status;
}

/* Keep the final rings of a deleted channel for the next one (the
 * sorter stops looking at them once it answered quiesce request `mark`,
 * made when the channel was unpublished); memory that cannot be pooled is
 * freed. */
static void mgi_gpu_finals_put(mgi_ep_t *ep, mgi_ring_t **final, unsigned n,
                               uint32_t mark)
{
    mgi_gpu_ep_t *g = mgi_gpu_ep(ep);
    mgi_gpu_pooled_t *np;
    unsigned i;

    pthread_mutex_lock(&g->pool_lock);
    for (i = 0; i < n; ++i) {
        if (final[i] == NULL) {
            continue;
        }
        if (g->npool == g->pool_cap) {
            np = (mgi_gpu_pooled_t*)realloc(g->pool, (g->pool_cap * 2 + 16) *
                                                     sizeof(*np));
            if (np == NULL) {
                mgi_gpu_dev_free(ep, final[i]);
                continue;
            }
            g->pool     = np;
            g->pool_cap = g->pool_cap * 2 + 16;
        }
        g->pool[g->npool].ring  = final[i];
        g->pool[g->npool].mark  = mark;
        ++g->npool;
    }
    pthread_mutex_unlock(&g->pool_lock);
}

#define MGI_GPU_INIT_RINGS 128  /* final rings per launch of the kernel */

typedef struct mgi_gpu_rings_arg {
    mgi_ring_t *r[MGI_GPU_INIT_RINGS];
} mgi_gpu_rings_arg_t;

/* Fresh final rings, a one-thread block each: mgi_ring_init in place (the
 * header, every segment's header). Their payload is left as it is, as in
 * a pooled ring: nothing reads a segment's bytes before a producer
 * committed them. */
__global__ void mgi_gpu_finals_init_kernel(mgi_gpu_rings_arg_t a,
                                           uint32_t depth, uint32_t seg_size)
{
    mgi_ring_init(a.r[blockIdx.x], depth, seg_size, MGI_RING_F_APPEND);
}

/* n fresh final rings: pooled ones the sorter went past (it answered
 * their quiesce request, as mgi_ch_reap waits for), else new device
 * memory; all initialized by one kernel launch per MGI_GPU_INIT_RINGS on
 * the control stream. Loaded from a host image each (a memset of the
 * ring and two copies), they cost a channel ~35 us a final ring on one
 * H100 (1.5-1.8 ms of a one-GPU Exchange's 6.5 ms, 48 rings). Without
 * device memory for one, its index into *nomem_p (the caller says so:
 * mgi_ep_final_nomem, above). */
static ucs_status_t mgi_gpu_finals_get(mgi_ep_t *ep, mgi_ring_t **final,
                                       unsigned n, unsigned *nomem_p)
{
    mgi_context_t *ctx = ep->ctx;
    mgi_gpu_ep_t *g    = mgi_gpu_ep(ep);
    size_t len         = mgi_ring_mem_size(ctx->params.final_depth,
                                           ctx->seg_size);
    mgi_gpu_dev_guard_t guard;
    mgi_gpu_rings_arg_t arg;
    ucs_status_t status = UCS_OK;
    unsigned i, k, m;

    if (n == 0) {
        return UCS_OK;
    }
    for (i = 0; i < n; ++i) {
        pthread_mutex_lock(&g->pool_lock);
        for (k = g->npool; (final[i] == NULL) && (k-- > 0);) {
            if (mgi_gpu_quiesced(ep, g->pool[k].mark)) {
                final[i]   = (mgi_ring_t*)g->pool[k].ring;
                g->pool[k] = g->pool[--g->npool];
                ++g->finals_reused;
            }
        }
        pthread_mutex_unlock(&g->pool_lock);
        if (final[i] == NULL) {
            final[i] = (mgi_ring_t*)mgi_gpu_dev_alloc(ep, len);
            if (final[i] == NULL) {
                *nomem_p = i;
                status = UCS_ERR_NO_MEMORY;
                goto out;
            }
            ++g->finals_new;
        }
    }
    status = mgi_gpu_enter(ep, &guard);
    for (i = 0; (status == UCS_OK) && (i < n); i += m) {
        m = (n - i < MGI_GPU_INIT_RINGS) ? n - i : MGI_GPU_INIT_RINGS;
        memcpy(arg.r, final + i, m * sizeof(*final));
        mgi_gpu_finals_init_kernel<<<m, 1, 0, g->ctl>>>(
                arg, ctx->params.final_depth, ctx->seg_size);
        status = MGI_CUDA_CALL(cudaGetLastError(), "ep %u: initializing "
                               "%u final rings", ep->id, m);
    }
    /* no wait here: the channel's blob and table entry follow on the same
     * stream (mgi_gpu_ch_load), which waits for all of it */
    mgi_gpu_leave(&guard);
out:
    if (status != UCS_OK) {
        /* never in a table */
        mgi_gpu_finals_put(ep, final, n, mgi_gpu_quiesce_mark(ep));
        memset(final, 0, n * sizeof(*final));
    }
    return status;
}

/* Bytes of a channel's device blob with nfinal final rings: the struct,
 * then final[], final_lock[], eof_sources[] (mgi_gpu_ch_load's layout). */
static size_t mgi_gpu_dch_len(unsigned nfinal)
{
    return sizeof(mgi_gpu_dch_t) +
           nfinal * (sizeof(mgi_ring_t*) + 2 * sizeof(uint32_t));
}

/* The channel's device blob (its table entry) in the slot of its id,
 * published in the sorter's table. The slot's size is that of a
 * destination's blob, whatever this channel is. */
static ucs_status_t mgi_gpu_ch_load(mgi_ep_t *ep, mgi_channel_t *ch)
{
    mgi_gpu_ch_t *gc    = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_ep_t *g     = mgi_gpu_ep(ep);
    const unsigned nfin = gc->nfinal;
    const size_t len    = mgi_gpu_dch_len(nfin);
    mgi_gpu_dch_t *img, *dev = g->dch_slot[ch->id];
    ucs_status_t status;
    unsigned k;

    if (dev == NULL) {
        dev = (mgi_gpu_dch_t*)mgi_gpu_dev_alloc(ep,
                                                mgi_gpu_dch_len(ep->nblocks));
        if (dev == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        g->dch_slot[ch->id] = dev;
    }
    img = (mgi_gpu_dch_t*)calloc(1, len);
    if (img == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    img->id          = ch->id;
    img->ndst        = ch->ndst;
    img->nsrc        = ch->nsrc;
    img->self_dst    = (nfin > 0) ? mgi_ch_dst_index(ch, ep->id) :
                                    MGI_GPU_NO_DST;
    img->nfinal      = nfin;
    memcpy(img->dst, ch->dst, ch->ndst * sizeof(*ch->dst));
    for (k = 0; k < MGI_GPU_MAX_TARGETS; ++k) {
        img->hop[k] = MGI_GPU_SLOT_NONE;    /* mgi_gpu_ch_routes sets them */
    }
    memcpy(img->src, ch->src, ch->nsrc * sizeof(*ch->src));
    img->final       = (mgi_ring_t**)(dev + 1);
    img->final_lock  = (uint32_t*)(img->final + nfin);
    img->eof_sources = img->final_lock + nfin;
    memcpy(img + 1, gc->final, nfin * sizeof(*gc->final));
    gc->dch = dev;
    /* the blob, then its pointer in the table: in the stream's order */
    status  = mgi_gpu_poke_nb(ep, dev, img, len);
    free(img);
    if (status == UCS_OK) {
        status = mgi_gpu_poke(ep, &g->chs[ch->id], &dev, sizeof(dev));
    }
    return status;
}

ucs_status_t mgi_gpu_ch_add(mgi_ep_t *ep, mgi_channel_t *ch,
                            unsigned *nomem_p)
{
    int di          = mgi_ch_dst_index(ch, ep->id);
    unsigned nfinal = (di >= 0) ? ep->nblocks : 0;
    mgi_gpu_ch_t *gc;
    ucs_status_t status;

    gc = (mgi_gpu_ch_t*)calloc(1, sizeof(*gc));
    if ((gc == NULL) ||
        ((nfinal > 0) &&
         ((gc->final = (mgi_ring_t**)calloc(nfinal, sizeof(*gc->final))) ==
          NULL))) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    gc->nfinal = nfinal;
    status     = mgi_gpu_finals_get(ep, gc->final, nfinal, nomem_p);
    if (status != UCS_OK) {
        goto err_free;
    }
    ch->gpu[ep->index] = gc;
    status = mgi_gpu_ch_load(ep, ch);
    if (status != UCS_OK) {
        ch->gpu[ep->index] = NULL;
        goto err_free;
    }
    return UCS_OK;

err_free:
    if (gc != NULL) {
        if (gc->final != NULL) {
            /* the load may have got as far as the table */
            mgi_gpu_finals_put(ep, gc->final, gc->nfinal,
                               mgi_gpu_quiesce_request(ep));
        }
        free(gc->final);
    }
    free(gc);
    return status;
}

/* The ranks agreed on another id than the one ch was published under
 * (old): out of the sorter's table there, into it under ch->id. No tuple
 * of ch came yet: a peer sends once every rank is past the create. */
ucs_status_t mgi_gpu_ch_rename(mgi_ep_t *ep, mgi_channel_t *ch,
                               mgi_ch_id_t old)
{
    mgi_gpu_ep_t *g     = mgi_gpu_ep(ep);
    mgi_gpu_dch_t *none = NULL;
    ucs_status_t status;

    status = mgi_gpu_poke(ep, &g->chs[old], &none, sizeof(none));
    return (status == UCS_OK) ? mgi_gpu_ch_load(ep, ch) : status;
}

/* The route slot of this endpoint's sort ring to next hop `hop` */
static ucs_status_t mgi_gpu_hop_slot_of(mgi_ep_t *ep, mgi_channel_t *ch,
                                        mgi_ep_id_t hop, int16_t *slot_p)
{
    mgi_route_t *route;

    if (hop == ep->id) {
        *slot_p = MGI_GPU_SLOT_LOOPBACK;
        return UCS_OK;
    }
    route = ep->routes[hop];
    if (route == NULL) {
        ucs_error("mgi channel %u: endpoint %u has no sort ring to next hop "
                  "%u", ch->id, ep->id, hop);
        return UCS_ERR_UNREACHABLE;
    }
    *slot_p = (int16_t)route->slot;
    return UCS_OK;
}

/* Where this endpoint spreads what it sends or relays for destination
 * number i over several next hops: their slots and shares, then their
 * number; and a source's walks there, into its device entry */
static ucs_status_t mgi_gpu_ch_split(mgi_ep_t *ep, mgi_channel_t *ch,
                                     mgi_gpu_dch_t *dev, unsigned i)
{
    const mgi_ch_split_t *sp = mgi_route_split(ch, ep->id, i);
    ucs_status_t status      = UCS_OK;
    int16_t slot[MGI_ROUTE_MAX_SPLIT];
    uint8_t n;
    unsigned k;

    if (sp == NULL) {
        return UCS_OK;
    }
    n = (uint8_t)sp->n;
    if (n > 1) {
        for (k = 0; (status == UCS_OK) && (k < n); ++k) {
            status = mgi_gpu_hop_slot_of(ep, ch, sp->hop[k], &slot[k]);
        }
        if (status == UCS_OK) {
            status = mgi_gpu_poke_nb(ep, dev->split_slot[i], slot,
                                     n * sizeof(*slot));
        }
        if (status == UCS_OK) {
            status = mgi_gpu_poke_nb(ep, dev->split_share[i], sp->share,
                                     n * sizeof(*sp->share));
        }
        if (status == UCS_OK) {
            status = mgi_gpu_poke_nb(ep, &dev->nsplit[i], &n, sizeof(n));
        }
    }
    if (status == UCS_OK) {
        status = mgi_gpu_poke_nb(ep, &dev->eof_paths[i], &sp->paths,
                                 sizeof(sp->paths));
    }
    return status;
}

/* The channel's row of this endpoint's forwarding table into its device
 * entry (mgi_gpu_dch_t::hop, and where it spreads its own tuples over
 * several next hops, nsplit and split_*): each channel its own, as the
 * plans of two channels may send one pair through different hops. An
 * endpoint that neither sends nor relays in the channel gets
 * MGI_GPU_SLOT_OUT: a message of the channel for another endpoint is
 * dropped there, not held in its lane. */
ucs_status_t mgi_gpu_ch_routes(mgi_ep_t *ep, mgi_channel_t *ch)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    const int none   = (mgi_ch_src_index(ch, ep->id) < 0) &&
                       (ch->relay_expect[ep->index] == 0);
    ucs_status_t status;
    mgi_ep_id_t hop;
    int16_t slot;
    unsigned i;

    if ((gc == NULL) || (gc->dch == NULL)) {
        return UCS_OK;  /* not loaded at this endpoint */
    }
    for (i = 0; i < ch->ndst; ++i) {
        /* the spread first: a relay forwards once hop[i] is set, and its
         * EOFs then go through every next hop (the pokes land in order) */
        hop    = mgi_route_next_hop(ep->ctx, ch, ep->id, ch->dst[i]);
        slot   = MGI_GPU_SLOT_OUT;
        status = none ? UCS_OK : mgi_gpu_ch_split(ep, ch, gc->dch, i);
        if ((status == UCS_OK) && !none) {
            status = mgi_gpu_hop_slot_of(ep, ch, hop, &slot);
        }
        if (status == UCS_OK) {
            status = mgi_gpu_poke_nb(ep, &gc->dch->hop[i], &slot,
                                     sizeof(slot));
        }
        if (status != UCS_OK) {
            return status;
        }
    }
    return mgi_gpu_ctl_sync(ep);
}

ucs_status_t mgi_gpu_ch_check_done(mgi_ep_t *ep, mgi_channel_t *ch)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_ep_t *g  = mgi_gpu_ep(ep);
    uint32_t eof     = 0;
    mgi_gpu_dev_guard_t guard;
    ucs_status_t status;

    if ((gc == NULL) || (gc->nfinal == 0)) {
        return UCS_OK; /* a source: its kernels flushed, or they are late */
    }
    if (gc->direct) {
        return mgi_gpu_ch_direct_done(ep, ch, gc);
    }
    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaMemcpyAsync(&eof,
                                           (char*)gc->dch +
                                           sizeof(mgi_gpu_dch_t) +
                                           gc->nfinal * (sizeof(mgi_ring_t*) +
                                                         sizeof(uint32_t)),
                                           sizeof(eof),
                                           cudaMemcpyDeviceToHost, g->ctl),
                           "channel %u ep %u", ch->id, ep->id);
    }
    if (status == UCS_OK) {
        status = mgi_gpu_ctl_sync(ep);
    }
    mgi_gpu_leave(&guard);
    if (status != UCS_OK) {
        return status;
    }
    if (eof < ch->nsrc) {
        ucs_error("mgi channel %u: busy, GPU endpoint %u has EOF from %u of "
                  "%u sources", ch->id, ep->id, eof, ch->nsrc);
        return UCS_ERR_BUSY;
    }
    return UCS_OK;
}

ucs_status_t mgi_gpu_ch_relay_eofs(mgi_ep_t *ep, mgi_channel_t *ch,
                                   uint32_t *n_p)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_dev_guard_t guard;
    ucs_status_t status;
    uint32_t n = 0;

    if ((gc == NULL) || gc->direct) {
        return UCS_OK;
    }
    status = mgi_gpu_enter(ep, &guard);
    if (status == UCS_OK) {
        status = MGI_CUDA_CALL(cudaMemcpyAsync(&n, &gc->dch->relay_eofs,
                                               sizeof(n),
                                               cudaMemcpyDeviceToHost,
                                               mgi_gpu_ep(ep)->ctl),
                               "channel %u ep %u", ch->id, ep->id);
    }
    if (status == UCS_OK) {
        status = mgi_gpu_ctl_sync(ep);
    }
    mgi_gpu_leave(&guard);
    if (status == UCS_OK) {
        __atomic_store_n(n_p, n, __ATOMIC_RELEASE);
    }
    return status;
}

/* Take the channel from the sorter's table; its rings are the sorter's
 * until it answered the quiesce request noted here. */
void mgi_gpu_ch_unpublish(mgi_ep_t *ep, mgi_channel_t *ch)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_ep_t *g  = mgi_gpu_ep(ep);
    mgi_gpu_dch_t *none = NULL;

    if ((gc == NULL) || gc->unpublished) {
        return;
    }
    mgi_gpu_poke(ep, &g->chs[ch->id], &none, sizeof(none));
    gc->unpublished = 1;
    gc->unpub_mark  = mgi_gpu_quiesce_request(ep);
}

/* Unpublished before mgi_ch_delete's quiesce, the final rings are free for
 * the next channel at once: unpublished after it, they were not yet when
 * the next channel came, and every other channel took new memory. */
void mgi_gpu_ch_remove(mgi_ep_t *ep, mgi_channel_t *ch)
{
    mgi_gpu_ch_t *gc = (mgi_gpu_ch_t*)ch->gpu[ep->index];

    if (gc == NULL) {
        return;
    }
    mgi_gpu_ch_unpublish(ep, ch);
    mgi_gpu_finals_put(ep, gc->final, gc->nfinal, gc->unpub_mark);
    mgi_gpu_dpool_put(ep, gc);
    mgi_gpu_opool_put(ep, gc->dout, gc->dout_len);
    free(gc->final); /* gc->dch stays in its id's slot */
    free(gc);
    ch->gpu[ep->index] = NULL;
}

ucs_status_t mgi_gpu_ch_handle(mgi_ep_t *ep, mgi_channel_t *ch,
                               mgi_dev_ch_t *h)
{
    mgi_gpu_ch_t *gc  = (mgi_gpu_ch_t*)ch->gpu[ep->index];
    mgi_gpu_ep_t *g   = mgi_gpu_ep(ep);
    mgi_gpu_dch_t *dc = gc->dch;

    memset(h, 0, sizeof(*h));
    h->ch         = ch->id;
    h->self       = ep->id;
    h->ndst       = ch->ndst;
    h->nsrc       = ch->nsrc;
    h->dst        = dc->dst;        /* address arithmetic only */
    h->tuple_size = ch->tuple_size;
    h->msg_batch  = 0;
    h->tile_batch = ep->ctx->params.dev_tile_batch;
    h->part_key   = ch->part_key;
    h->key_off    = ch->key_off;
    h->key_size   = ch->key_size;
    h->nblocks    = ep->nblocks;
    h->ngroups    = ep->ngroups;
    h->stage      = g->stage;
    h->failed     = (ep->ctx->fail_word == NULL) ? NULL :
                    (const volatile uint32_t*)mgi_gpu_host_dev_ptr(
                            ep, ep->ctx->fail_word);
    h->dev_err    = (h->failed == NULL) ? NULL :
                    (volatile uint32_t*)h->failed + 1;
    h->timeout_ns = (uint64_t)ep->ctx->params.timeout_ms * 1000000ull;
    if (gc->nfinal > 0) {
        h->final       = (mgi_ring_t**)(dc + 1);
        h->final_lock  = (uint32_t*)(h->final + gc->nfinal);
        h->eof_sources = h->final_lock + gc->nfinal;
    }
    if (gc->direct) {
        h->direct  = 1;
        h->dcap    = gc->dcap;
        h->dstride = gc->dstride;
        h->dfirst  = gc->dfirst;
        h->nin     = gc->nin;
        /* at most half a ring unpublished: the other half takes the
         * next sends while the consumer reads the first */
        h->dpub    = (uint32_t)std::min<uint64_t>(
                         (uint64_t)ep->ctx->params.direct_publish_kb *
                         1024 / ch->tuple_size, gc->dcap / 2);
        h->din       = (char*)gc->din;
        h->dcur      = gc->dcur;
        h->dland_off = gc->dland_off;
        if (gc->dout != NULL) {
            uint64_t *w = (uint64_t*)gc->dout;
            size_t at[MGI_DOUT_WORDS + 1];

            mgi_gpu_dout_layout(ch->ndst, ep->nblocks, at);
            h->dbase = (char* const*)(w + at[MGI_DOUT_BASE]);
            h->dprod = w + at[MGI_DOUT_PROD];
            if (gc->land) {
                h->dland     = (char* const*)(w + at[MGI_DOUT_LAND]);
                h->dland_cap = w + at[MGI_DOUT_CAP];
            }
        }
    }
    return UCS_OK;
}

void mgi_gpu_sorter_use(mgi_context_t *ctx, unsigned *blocks,
                        unsigned *threads, unsigned *regs, size_t *smem)
{
    cudaFuncAttributes fa;

    if (cudaFuncGetAttributes(&fa, mgi_sorter_kernel) != cudaSuccess) {
        cudaGetLastError();
        fa.numRegs         = 255;  /* at worst */
        fa.sharedSizeBytes = 0;
    }
    /* as mgi_gpu_ep_create makes them */
    *blocks  = ctx->params.sorter_blocks;
    *threads = ctx->params.sorter_threads;
    *regs    = (unsigned)fa.numRegs;
    *smem    = mgi_gpu_smem(ctx->seg_size) + fa.sharedSizeBytes;
}

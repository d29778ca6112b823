/**
 * MGI regions (mgi/mgi_region.h): registration and exchange over the
 * context's bootstrap, host RMA over the context's UCP worker, the device
 * handle (CUDA IPC / peer mappings of the parts of this host's GPUs) and
 * the proxy thread that carries a kernel's requests to the other parts out
 * with UCP RMA.
 */
#include "mgi_int.h"
#include "mgi/mgi_region.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Requests the proxy starts before it waits for their completion and
 * advances `done`: enough to keep a link busy, few enough that a quiet
 * does not wait behind many later requests. */
#define MGI_REGION_PROXY_BATCH 64u
/* How long the proxy polls a request, or its queue after its last request,
 * before it waits the way the context's other threads do (mgi_idle's
 * sleeps): a GPU's warps wait for it, and a copy completes in microseconds,
 * well within a sleep. */
#define MGI_REGION_SPIN_NS     1000000ull
#define MGI_REGION_RKEY_MAX    4096u   /* a packed rkey, at most */

typedef struct mgi_region mgi_region_t;

/* What each rank says about its part at registration. */
typedef struct mgi_region_rec {
    uint64_t addr;
    uint64_t len;
    uint64_t ipc_off;        /* the part's offset in its allocation */
    int32_t  refused;        /* this rank refused its parameters */
    int32_t  cuda;           /* device memory */
    int32_t  has_ipc;
    uint32_t rkey_len;
    uint8_t  ipc[64];        /* cudaIpcMemHandle_t of the allocation */
    uint8_t  uuid[16];       /* its GPU */
    char     host[MGI_HOST_NAME_MAX];
} mgi_region_rec_t;

typedef struct mgi_region_peer {
    uint64_t   addr;
    uint64_t   len;
    ucp_rkey_h rkey;         /* NULL where len is 0 */
    void       *ipc_map;     /* its allocation opened here, NULL: none */
    char       *dptr;        /* its part for this rank's GPU, NULL: proxy */
    int        dirty;        /* host calls outstanding: flushed at quiet */
} mgi_region_peer_t;

struct mgi_region {
    mgi_context_t      *ctx;
    struct mgi_region  *next;        /* ctx->regions */
    void               *addr;
    size_t             len;
    unsigned           flags;
    int                cuda;         /* this part in device memory */
    int                device;
    ucp_mem_h          memh;
    mgi_region_peer_t  *peers;       /* [size] */
    pthread_mutex_t    lock;         /* host calls: reqs, dirty */
    void               **reqs;       /* outstanding UCP requests */
    unsigned           nreqs, reqs_cap;
    /* the device handle's arrays (device memory for a part on a GPU,
     * host memory otherwise) and proxy */
    mgi_dev_region_t   h;
    int                has_h;
    char               **h_ptrs;
    uint64_t           *h_lens;
    mgi_region_proxy_t *proxy;       /* host address */
    uint64_t           *ticket_dev;  /* the GPU's ticket counter */
    cudaStream_t       stream;       /* reads of it (never waits for the
                                        application's kernels) */
    pthread_mutex_t    stream_lock;
    pthread_t          proxy_thread;
    int                proxy_running;
    volatile int       proxy_stop;
};

/* ---------------------------------------------------------------- helpers */

static int mgi_region_cuda_attr(const void *p, int *device_p, int *managed_p)
{
    struct cudaPointerAttributes attr;

    *managed_p = 0;
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
        cudaGetLastError();     /* no CUDA device, or plain host memory */
        return 0;
    }
    *managed_p = (attr.type == cudaMemoryTypeManaged);
    *device_p  = attr.device;
    return attr.type == cudaMemoryTypeDevice;
}

typedef int (*mgi_region_range_fn_t)(unsigned long long*, size_t*,
                                     unsigned long long);

/* cuMemGetAddressRange through the runtime (no link to libcuda) */
static mgi_region_range_fn_t mgi_region_range_fn(void)
{
    static mgi_region_range_fn_t fn;
    static int looked;
    enum cudaDriverEntryPointQueryResult q;
    void *p = NULL;

    if (!looked) {
        if ((cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &p,
                                              12000, cudaEnableDefault,
                                              &q) == cudaSuccess) &&
            (q == cudaDriverEntryPointSuccess)) {
            fn = (mgi_region_range_fn_t)p;
        }
        cudaGetLastError();
        looked = 1;
    }
    return fn;
}

/* Fill the CUDA fields of rec for a device part: its GPU's UUID and the
 * IPC handle of its allocation with the part's offset in it. Without
 * them the part is still registered, and reached through UCP. */
static void mgi_region_cuda_rec(mgi_region_t *reg, mgi_region_rec_t *rec)
{
    mgi_region_range_fn_t range = mgi_region_range_fn();
    struct cudaDeviceProp prop;
    unsigned long long base = 0;
    cudaIpcMemHandle_t hd;
    size_t size = 0;

    if (cudaGetDeviceProperties(&prop, reg->device) == cudaSuccess) {
        memcpy(rec->uuid, &prop.uuid, sizeof(rec->uuid));
    }
    if ((range != NULL) &&
        (range(&base, &size, (unsigned long long)(uintptr_t)reg->addr) ==
         0) &&
        (cudaIpcGetMemHandle(&hd, (void*)(uintptr_t)base) == cudaSuccess)) {
        memcpy(rec->ipc, &hd, sizeof(hd));
        rec->has_ipc = 1;
        rec->ipc_off = (uintptr_t)reg->addr - base;
    } else {
        ucs_info("mgi region %p: no CUDA IPC handle for %p (not from "
                 "cudaMalloc?): kernels of other processes reach it "
                 "through their proxy", reg, reg->addr);
    }
    cudaGetLastError();
}

/* The local device with this UUID, -1 where none. */
static int mgi_region_uuid_device(const uint8_t *uuid)
{
    struct cudaDeviceProp prop;
    int n = 0, d;

    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    for (d = 0; d < n; ++d) {
        if ((cudaGetDeviceProperties(&prop, d) == cudaSuccess) &&
            (memcmp(&prop.uuid, uuid, 16) == 0)) {
            return d;
        }
    }
    cudaGetLastError();
    return -1;
}

/* Rank r's part mapped for this part's GPU: its own, or another process's
 * on this host whose GPU this one reaches by peer access. NULL: not
 * mapped (the proxy serves it). */
static char *mgi_region_map_peer(mgi_region_t *reg, int r,
                                 const mgi_region_rec_t *rec,
                                 const char *host)
{
    mgi_context_t *ctx = reg->ctx;
    cudaIpcMemHandle_t hd;
    int dev, can = 0;
    void *p = NULL;

    if (r == ctx->rank) {
        return (char*)reg->addr;
    }
    if (!rec->cuda || !rec->has_ipc || (rec->len == 0) ||
        (strncmp(rec->host, host, MGI_HOST_NAME_MAX) != 0)) {
        return NULL;
    }
    dev = mgi_region_uuid_device(rec->uuid);
    if (dev < 0) {
        return NULL;        /* a GPU this process does not see */
    }
    if ((dev != reg->device) &&
        ((cudaDeviceCanAccessPeer(&can, reg->device, dev) != cudaSuccess) ||
         !can)) {
        cudaGetLastError();
        return NULL;
    }
    if (dev != reg->device) {
        mgi_gpu_peer_enable(reg->device, dev);
    }
    memcpy(&hd, rec->ipc, sizeof(hd));
    if (MGI_CUDA_CALL(cudaIpcOpenMemHandle(&p, hd,
                                           cudaIpcMemLazyEnablePeerAccess),
                      "region %p: rank %d's part", reg, r) != UCS_OK) {
        return NULL;
    }
    reg->peers[r].ipc_map = p;
    return (char*)p + rec->ipc_off;
}

static ucs_status_t mgi_region_add_req(mgi_region_t *reg, void *req)
{
    void **n;

    if (reg->nreqs == reg->reqs_cap) {
        n = realloc(reg->reqs, (reg->reqs_cap * 2 + 16) * sizeof(*n));
        if (n == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        reg->reqs     = n;
        reg->reqs_cap = reg->reqs_cap * 2 + 16;
    }
    reg->reqs[reg->nreqs++] = req;
    return UCS_OK;
}

static ucs_status_t mgi_region_check(mgi_region_t *reg, const char *what,
                                     int peer, size_t off, size_t len)
{
    if (reg == NULL) {
        ucs_error("mgi region: %s on a NULL region", what);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((peer < 0) || (peer >= reg->ctx->size)) {
        ucs_error("mgi region %p: %s to rank %d, the context has ranks 0.."
                  "%d", reg, what, peer, reg->ctx->size - 1);
        return UCS_ERR_INVALID_PARAM;
    }
    if (!mgi_region_in_range(off, len, reg->peers[peer].len)) {
        ucs_error("mgi region %p: %s of %zu bytes at offset %zu of rank "
                  "%d's part, which has %llu bytes", reg, what, len, off,
                  peer, (unsigned long long)reg->peers[peer].len);
        return UCS_ERR_INVALID_PARAM;
    }
    return UCS_OK;
}

static ucs_status_t mgi_region_check_sig(mgi_region_t *reg, const char *what,
                                         int peer, size_t sig_off)
{
    if ((reg != NULL) && ((sig_off % MGI_REGION_SIG_ALIGN) != 0)) {
        ucs_error("mgi region %p: %s: signal word at offset %zu is not "
                  "%u-byte aligned", reg, what, sig_off,
                  MGI_REGION_SIG_ALIGN);
        return UCS_ERR_INVALID_PARAM;
    }
    return mgi_region_check(reg, what, peer, sig_off, sizeof(uint64_t));
}

/* An RMA call of UCP on rank peer's part: its request kept until quiet. */
static ucs_status_t mgi_region_rma(mgi_region_t *reg, int is_put, int peer,
                                   size_t off, void *buf, size_t len)
{
    mgi_region_peer_t *p = &reg->peers[peer];
    ucp_request_param_t param = {.op_attr_mask = 0};
    ucs_status_ptr_t req;
    ucs_status_t status = UCS_OK;

    if (len == 0) {
        return UCS_OK;
    }
    pthread_mutex_lock(&reg->lock);
    if (is_put) {
        req = ucp_put_nbx(reg->ctx->peers[peer], buf, len, p->addr + off,
                          p->rkey, &param);
    } else {
        req = ucp_get_nbx(reg->ctx->peers[peer], buf, len, p->addr + off,
                          p->rkey, &param);
    }
    p->dirty = 1;
    if (UCS_PTR_IS_ERR(req)) {
        status = UCS_PTR_STATUS(req);
        ucs_error("mgi region %p: %s of %zu bytes at offset %zu of rank %d: "
                  "%s", reg, is_put ? "put" : "get", len, off, peer,
                  ucs_status_string(status));
    } else if (req != NULL) {
        status = mgi_region_add_req(reg, req);
        if (status != UCS_OK) {
            pthread_mutex_unlock(&reg->lock);
            return mgi_ucp_wait(reg->ctx, req, "region put/get", reg);
        }
    }
    pthread_mutex_unlock(&reg->lock);
    return status;
}

/* Wait for a request: polled first (MGI_REGION_SPIN_NS), then through
 * mgi_ucp_wait, which bounds the wait and names it. */
static ucs_status_t mgi_region_wait(mgi_region_t *reg, ucs_status_ptr_t req,
                                    const char *what)
{
    const uint64_t until = mgi_time_ns() + MGI_REGION_SPIN_NS;
    ucs_status_t status;

    if ((req == NULL) || UCS_PTR_IS_ERR(req)) {
        return mgi_ucp_wait(reg->ctx, req, what, reg);
    }
    while ((status = ucp_request_check_status(req)) == UCS_INPROGRESS) {
        if ((ucp_worker_progress(reg->ctx->worker) == 0) &&
            (mgi_time_ns() > until)) {
            return mgi_ucp_wait(reg->ctx, req, what, reg);
        }
    }
    ucp_request_free(req);
    if (status != UCS_OK) {
        ucs_error("mgi %s %p: %s", what, (void*)reg,
                  ucs_status_string(status));
    }
    return status;
}

/* Flush the endpoint of every rank in `dirty` (remote completion). */
static ucs_status_t mgi_region_flush_peers(mgi_region_t *reg, int *dirty,
                                           const char *what)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    ucs_status_t status = UCS_OK, st;
    int r;

    for (r = 0; r < reg->ctx->size; ++r) {
        if (!dirty[r]) {
            continue;
        }
        st = mgi_region_wait(reg, ucp_ep_flush_nbx(reg->ctx->peers[r],
                                                   &param), what);
        status   = (status == UCS_OK) ? st : status;
        dirty[r] = 0;
    }
    return status;
}

/* ---------------------------------------------------------------- proxy */

/* Tickets taken so far (~0 where they cannot be read) */
static uint64_t mgi_region_tickets(mgi_region_t *reg)
{
    uint64_t t = ~0ull;

    if (!reg->cuda) {
        return mgi_region_ld_acq(&reg->proxy->head);
    }
    pthread_mutex_lock(&reg->stream_lock);
    if ((cudaMemcpyAsync(&t, reg->ticket_dev, sizeof(t),
                         cudaMemcpyDeviceToHost, reg->stream) !=
         cudaSuccess) || (cudaStreamSynchronize(reg->stream) != cudaSuccess)) {
        cudaGetLastError();
        t = ~0ull;
    }
    pthread_mutex_unlock(&reg->stream_lock);
    return t;
}

/* Wait for every request the proxy started, flush the ranks they went to
 * and publish `upto` as done. */
static ucs_status_t mgi_region_proxy_complete(mgi_region_t *reg,
                                              void **reqs, unsigned *nreqs,
                                              int *dirty, uint64_t upto)
{
    ucs_status_t status = UCS_OK, st;
    unsigned i;

    for (i = 0; i < *nreqs; ++i) {
        st     = mgi_region_wait(reg, reqs[i], "region proxy request");
        status = (status == UCS_OK) ? st : status;
    }
    *nreqs = 0;
    st     = mgi_region_flush_peers(reg, dirty, "region proxy flush");
    status = (status == UCS_OK) ? st : status;
    if (status == UCS_OK) {
        mgi_region_st_rel(&reg->proxy->done, upto);
    }
    return status;
}

/* Start one request (PUT_SIGNAL and SIGNAL complete what went before to
 * their rank first, FENCE everything). */
static ucs_status_t mgi_region_proxy_start(mgi_region_t *reg,
                                           mgi_region_req_t *r, void **reqs,
                                           unsigned *nreqs, int *dirty,
                                           uint64_t ticket)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    mgi_region_peer_t *p;
    ucs_status_ptr_t req = NULL;
    ucs_status_t status;

    if (r->op == MGI_REGION_OP_FENCE) {
        return mgi_region_proxy_complete(reg, reqs, nreqs, dirty, ticket);
    }
    if ((r->peer >= (uint32_t)reg->ctx->size) ||
        !mgi_region_in_range(r->roff, r->len, reg->peers[r->peer].len) ||
        (((r->op == MGI_REGION_OP_PUT_SIGNAL) ||
          (r->op == MGI_REGION_OP_SIGNAL)) &&
         !mgi_region_in_range(r->sig_off, 8, reg->peers[r->peer].len)) ||
        (r->op < MGI_REGION_OP_PUT) || (r->op > MGI_REGION_OP_SIGNAL)) {
        ucs_error("mgi region %p proxy: request %llu (op %u, rank %u, %llu "
                  "bytes at %llu) out of bounds", reg,
                  (unsigned long long)ticket, r->op, r->peer,
                  (unsigned long long)r->len, (unsigned long long)r->roff);
        return UCS_ERR_INVALID_PARAM;
    }
    p = &reg->peers[r->peer];
    if ((r->op != MGI_REGION_OP_SIGNAL) && (r->len > 0)) {
        if (r->op == MGI_REGION_OP_GET) {
            req = ucp_get_nbx(reg->ctx->peers[r->peer],
                              (void*)(uintptr_t)r->laddr, r->len,
                              p->addr + r->roff, p->rkey, &param);
        } else {
            req = ucp_put_nbx(reg->ctx->peers[r->peer],
                              (void*)(uintptr_t)r->laddr, r->len,
                              p->addr + r->roff, p->rkey, &param);
        }
        /* (a get is complete when its data is here: no flush) */
        dirty[r->peer] |= (r->op != MGI_REGION_OP_GET);
        if (UCS_PTR_IS_ERR(req)) {
            ucs_error("mgi region %p proxy: request %llu to rank %u: %s",
                      reg, (unsigned long long)ticket, r->peer,
                      ucs_status_string(UCS_PTR_STATUS(req)));
            return UCS_PTR_STATUS(req);
        }
        if (req != NULL) {
            reqs[(*nreqs)++] = req;
        }
    }
    if (r->op == MGI_REGION_OP_GET) {
        return UCS_OK;
    }
    if (r->op == MGI_REGION_OP_PUT) {
        return UCS_OK;
    }
    /* the data (and what went before) lands first, then the word, from
     * the slot, which stays until `done` passes this ticket */
    status = mgi_region_proxy_complete(reg, reqs, nreqs, dirty, ticket);
    if (status != UCS_OK) {
        return status;
    }
    req = ucp_put_nbx(reg->ctx->peers[r->peer], &r->sig_val, sizeof(uint64_t),
                      p->addr + r->sig_off, p->rkey, &param);
    dirty[r->peer] = 1;
    if (UCS_PTR_IS_ERR(req)) {
        return UCS_PTR_STATUS(req);
    }
    if (req != NULL) {
        reqs[(*nreqs)++] = req;
    }
    return UCS_OK;
}

static void *mgi_region_proxy_main(void *arg)
{
    mgi_region_t *reg = arg;
    mgi_region_proxy_t *q = reg->proxy;
    void *reqs[2 * MGI_REGION_PROXY_BATCH + 2];
    uint64_t next = 0, wait_since = 0, taken, active = 0;
    unsigned nreqs = 0, started = 0, idle = 0;
    ucs_status_t status = UCS_OK;
    mgi_region_req_t *r;
    int *dirty;

    dirty = calloc(reg->ctx->size, sizeof(*dirty));
    if (dirty == NULL) {
        mgi_region_st_rel(&q->status, (uint64_t)(int64_t)UCS_ERR_NO_MEMORY);
        return NULL;
    }
    if (reg->cuda) {
        mgi_gpu_bind_thread(reg->device);
    }
    while (!reg->proxy_stop) {
        r = &q->req[next & (MGI_REGION_PROXY_DEPTH - 1)];
        if (mgi_region_ld_acq(&r->seq) == next + 1) {
            status = mgi_region_proxy_start(reg, r, reqs, &nreqs, dirty,
                                            next);
            if (status != UCS_OK) {
                break;
            }
            ++next;
            wait_since = 0;
            idle       = 0;
            active     = 0;
            if (++started < MGI_REGION_PROXY_BATCH) {
                continue;
            }
        }
        if (mgi_region_ld_acq(&q->done) < next) {
            started = 0;
            status  = mgi_region_proxy_complete(reg, reqs, &nreqs, dirty,
                                                next);
            if (status != UCS_OK) {
                break;
            }
            continue;
        }
        taken = (idle % 1024 == 1023) ? mgi_region_tickets(reg) : 0;
        if ((taken > next) && (taken != ~0ull)) {
            /* a ticket taken but not filled yet (looked at now and then:
             * a GPU's counter is read with a copy) */
            if (wait_since == 0) {
                wait_since = mgi_time_ns();
            } else if (mgi_time_ns() - wait_since > reg->h.timeout_ns) {
                ucs_error("mgi region %p proxy: request %llu taken but not "
                          "posted within %llu ms (its thread gave up?): the "
                          "queue serves no more", reg,
                          (unsigned long long)next,
                          (unsigned long long)(reg->h.timeout_ns / 1000000));
                status = UCS_ERR_TIMED_OUT;
                break;
            }
        }
        if (active == 0) {
            active = mgi_time_ns();
        }
        if (mgi_time_ns() - active < MGI_REGION_SPIN_NS) {
            /* (the idle count still paces the ticket reads above) */
            ++idle;
            mgi_cpu_relax();
        } else {
            mgi_idle(reg->ctx, &idle);
        }
    }
    if (status != UCS_OK) {
        mgi_region_proxy_complete(reg, reqs, &nreqs, dirty, next);
        mgi_region_st_rel(&q->status, (uint64_t)(int64_t)status);
        ucs_error("mgi region %p proxy: stopped at request %llu: %s", reg,
                  (unsigned long long)next, ucs_status_string(status));
    }
    free(dirty);
    return NULL;
}

static ucs_status_t mgi_region_proxy_run(mgi_region_t *reg)
{
    if (reg->proxy_running) {
        return UCS_OK;
    }
    if (pthread_create(&reg->proxy_thread, NULL, mgi_region_proxy_main,
                       reg) != 0) {
        ucs_error("mgi region %p: cannot start its proxy thread", reg);
        return UCS_ERR_NO_RESOURCE;
    }
    reg->proxy_running = 1;
    return UCS_OK;
}

static void mgi_region_handle_fini(mgi_region_t *reg);

/* The handle's arrays and proxy queue: device and mapped host memory for
 * a part on a GPU, host memory for one in host memory. */
static ucs_status_t mgi_region_handle_init(mgi_region_t *reg,
                                           const mgi_region_rec_t *recs)
{
    mgi_context_t *ctx = reg->ctx;
    const size_t nptr  = ctx->size * sizeof(char*);
    const size_t nlen  = ctx->size * sizeof(uint64_t);
    char **ptrs, host[MGI_HOST_NAME_MAX] = "";
    uint64_t *lens;
    void *dq = NULL;
    int r, need_proxy = 0, prev_dev = -1;

    ptrs = calloc(ctx->size, sizeof(*ptrs));
    lens = calloc(ctx->size, sizeof(*lens));
    if ((ptrs == NULL) || (lens == NULL)) {
        free(ptrs);
        free(lens);
        ucs_error("mgi region %p: no memory for its handle", reg);
        return UCS_ERR_NO_MEMORY;
    }
    gethostname(host, sizeof(host) - 1);
    if (reg->cuda) {
        /* the handle's memory and peer access belong to the part's GPU */
        if ((cudaGetDevice(&prev_dev) != cudaSuccess) ||
            (MGI_CUDA_CALL(cudaSetDevice(reg->device), "region %p: device "
                           "%d", reg, reg->device) != UCS_OK)) {
            cudaGetLastError();
            free(ptrs);
            free(lens);
            return UCS_ERR_IO_ERROR;
        }
    }
    for (r = 0; r < ctx->size; ++r) {
        lens[r] = recs[r].len;
        if (r == ctx->rank) {
            ptrs[r] = (char*)reg->addr;
        } else if (reg->cuda && !(reg->flags & MGI_REGION_F_PROXY_ONLY)) {
            ptrs[r] = mgi_region_map_peer(reg, r, &recs[r], host);
        }
        reg->peers[r].dptr = ptrs[r];
        need_proxy |= (ptrs[r] == NULL) && (recs[r].len > 0);
    }
    need_proxy &= !(reg->flags & MGI_REGION_F_NO_PROXY);

    if (reg->cuda) {
        if ((MGI_CUDA_CALL(cudaMalloc((void**)&reg->h_ptrs, nptr + nlen),
                           "region %p: device handle", reg) != UCS_OK) ||
            (MGI_CUDA_CALL(cudaMemcpy(reg->h_ptrs, ptrs, nptr,
                                      cudaMemcpyHostToDevice),
                           "region %p: device handle", reg) != UCS_OK) ||
            (MGI_CUDA_CALL(cudaMemcpy((char*)reg->h_ptrs + nptr, lens, nlen,
                                      cudaMemcpyHostToDevice),
                           "region %p: device handle", reg) != UCS_OK)) {
            goto err;
        }
        reg->h_lens = (uint64_t*)((char*)reg->h_ptrs + nptr);
        if (need_proxy &&
            ((MGI_CUDA_CALL(cudaMalloc((void**)&reg->ticket_dev,
                                       sizeof(uint64_t)),
                            "region %p: ticket counter", reg) != UCS_OK) ||
             (MGI_CUDA_CALL(cudaMemset(reg->ticket_dev, 0, sizeof(uint64_t)),
                            "region %p: ticket counter", reg) != UCS_OK) ||
             (MGI_CUDA_CALL(cudaStreamCreateWithFlags(&reg->stream,
                                                      cudaStreamNonBlocking),
                            "region %p: stream", reg) != UCS_OK))) {
            goto err;
        }
        if (need_proxy &&
            ((MGI_CUDA_CALL(cudaHostAlloc((void**)&reg->proxy,
                                          sizeof(*reg->proxy),
                                          cudaHostAllocMapped |
                                          cudaHostAllocPortable),
                            "region %p: proxy queue", reg) != UCS_OK) ||
             (MGI_CUDA_CALL(cudaHostGetDevicePointer(&dq, reg->proxy, 0),
                            "region %p: proxy queue", reg) != UCS_OK))) {
            goto err;
        }
        free(ptrs);
        free(lens);
    } else {
        reg->h_ptrs = ptrs;     /* the handle's now */
        reg->h_lens = lens;
        if (need_proxy) {
            if (posix_memalign((void**)&reg->proxy, MGI_RING_LINE,
                               sizeof(*reg->proxy)) != 0) {
                reg->proxy = NULL;
                goto err;
            }
            dq = reg->proxy;
        }
    }
    if (reg->proxy != NULL) {
        memset(reg->proxy, 0, sizeof(*reg->proxy));
    }
    reg->h.rank       = ctx->rank;
    reg->h.nranks     = ctx->size;
    reg->h.base       = (char*)reg->addr;
    reg->h.len        = reg->len;
    reg->h.ptrs       = reg->h_ptrs;
    reg->h.lens       = reg->h_lens;
    reg->h.proxy      = (mgi_region_proxy_t*)dq;
    reg->h.ticket     = reg->cuda ? reg->ticket_dev :
                        ((reg->proxy != NULL) ? &reg->proxy->head : NULL);
    reg->h.timeout_ns = (uint64_t)ctx->params.timeout_ms * 1000000ull;
    reg->has_h        = 1;
    if (prev_dev >= 0) {
        cudaSetDevice(prev_dev);
    }
    return UCS_OK;

err:
    if (reg->cuda) {
        free(ptrs);
        free(lens);
    }
    if (prev_dev >= 0) {
        cudaSetDevice(prev_dev);
    }
    mgi_region_handle_fini(reg);  /* what was made of the handle */
    ucs_error("mgi region %p: no memory for its handle", reg);
    return UCS_ERR_NO_MEMORY;
}

static void mgi_region_handle_fini(mgi_region_t *reg)
{
    int r;

    if (reg->proxy_running) {
        reg->proxy_stop = 1;
        pthread_join(reg->proxy_thread, NULL);
        reg->proxy_running = 0;
    }
    if (reg->cuda) {
        for (r = 0; r < reg->ctx->size; ++r) {
            if (reg->peers[r].ipc_map != NULL) {
                cudaIpcCloseMemHandle(reg->peers[r].ipc_map);
                reg->peers[r].ipc_map = NULL;
            }
        }
        cudaFree(reg->h_ptrs);
        cudaFree(reg->ticket_dev);
        if (reg->stream != NULL) {
            cudaStreamDestroy(reg->stream);
        }
        if (reg->proxy != NULL) {
            cudaFreeHost(reg->proxy);
        }
        cudaGetLastError();
    } else {
        free(reg->h_ptrs);
        free(reg->h_lens);
        free(reg->proxy);
    }
    reg->h_ptrs     = NULL;
    reg->h_lens     = NULL;
    reg->proxy      = NULL;
    reg->ticket_dev = NULL;
    reg->stream     = NULL;
    reg->has_h  = 0;
}

/* ----------------------------------------------------------- registration */

static ucs_status_t mgi_region_map(mgi_region_t *reg, mgi_region_rec_t *rec,
                                   void **rkey_p)
{
    ucp_mem_map_params_t mp;
    ucs_status_t status;
    size_t rkey_len;

    memset(&mp, 0, sizeof(mp));
    mp.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                    UCP_MEM_MAP_PARAM_FIELD_LENGTH;
    mp.address    = reg->addr;
    mp.length     = reg->len;
    status = ucp_mem_map(reg->ctx->ucp, &mp, &reg->memh);
    if (status != UCS_OK) {
        ucs_error("mgi region %p: ucp_mem_map of %zu bytes at %p (%s "
                  "memory): %s", reg, reg->len, reg->addr,
                  reg->cuda ? "device" : "host", ucs_status_string(status));
        return status;
    }
    status = ucp_rkey_pack(reg->ctx->ucp, reg->memh, rkey_p, &rkey_len);
    if (status != UCS_OK) {
        ucs_error("mgi region %p: ucp_rkey_pack: %s", reg,
                  ucs_status_string(status));
        ucp_mem_unmap(reg->ctx->ucp, reg->memh);
        reg->memh = NULL;
        return status;
    }
    if (rkey_len > MGI_REGION_RKEY_MAX) {
        ucs_error("mgi region %p: a packed rkey of %zu bytes, more than "
                  "%u", reg, rkey_len, MGI_REGION_RKEY_MAX);
        ucp_rkey_buffer_release(*rkey_p);
        ucp_mem_unmap(reg->ctx->ucp, reg->memh);
        reg->memh = NULL;
        return UCS_ERR_EXCEEDS_LIMIT;
    }
    rec->rkey_len = rkey_len;
    return UCS_OK;
}

/* This rank's parameters, checked: UCS_OK or a refusal, said. */
static ucs_status_t mgi_region_check_params(mgi_region_t *reg,
                                            const mgi_region_params_t *p)
{
    int managed = 0;

    if ((p->addr == NULL) && (p->length != 0)) {
        ucs_error("mgi region: a part of %zu bytes at NULL: pass its "
                  "address, or length 0 to offer nothing", p->length);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((p->flags & ~(MGI_REGION_F_NO_PROXY | MGI_REGION_F_PROXY_ONLY)) !=
        0) {
        ucs_error("mgi region: unknown flags 0x%x (known: "
                  "MGI_REGION_F_NO_PROXY, MGI_REGION_F_PROXY_ONLY)",
                  p->flags);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((p->flags & MGI_REGION_F_NO_PROXY) &&
        (p->flags & MGI_REGION_F_PROXY_ONLY)) {
        ucs_error("mgi region: MGI_REGION_F_NO_PROXY and "
                  "MGI_REGION_F_PROXY_ONLY together leave kernels no path "
                  "to the other ranks");
        return UCS_ERR_INVALID_PARAM;
    }
    if (p->length != 0) {
        reg->cuda = mgi_region_cuda_attr(p->addr, &reg->device, &managed);
        if (managed) {
            ucs_error("mgi region: %p is managed (unified) memory: "
                      "register device memory (cudaMalloc) or host memory",
                      p->addr);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    return UCS_OK;
}

ucs_status_t mgi_region_register(mgi_context_h ctx,
                                 const mgi_region_params_t *params,
                                 mgi_region_h *reg_p)
{
    mgi_region_rec_t mine, *recs = NULL;
    uint32_t max_rkey = 0;
    void *rkey = NULL;
    char *rkeys = NULL;
    mgi_region_t *reg;
    ucs_status_t status;
    int r, refused = -1;

    if ((ctx == NULL) || (params == NULL) || (reg_p == NULL)) {
        ucs_error("mgi region register: NULL %s", (ctx == NULL) ? "context" :
                  (params == NULL) ? "parameters" : "region pointer");
        return UCS_ERR_INVALID_PARAM;
    }
    reg = calloc(1, sizeof(*reg));
    if (reg != NULL) {
        reg->peers = calloc(ctx->size, sizeof(*reg->peers));
    }
    recs = calloc(ctx->size, sizeof(*recs));
    if ((reg == NULL) || (reg->peers == NULL) || (recs == NULL)) {
        /* the others wait in the exchange: this rank's timeout ends it */
        ucs_error("mgi region: no memory to register");
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    reg->ctx    = ctx;
    reg->addr   = params->addr;
    reg->len    = params->length;
    reg->flags  = params->flags;
    reg->device = MGI_EP_HOST;
    pthread_mutex_init(&reg->lock, NULL);
    pthread_mutex_init(&reg->stream_lock, NULL);

    /* a rank that refuses its part still takes part in the exchange, so
     * that every rank returns the refusal instead of waiting */
    memset(&mine, 0, sizeof(mine));
    status = mgi_region_check_params(reg, params);
    if ((status == UCS_OK) && (reg->len > 0)) {
        status = mgi_region_map(reg, &mine, &rkey);
    }
    mine.refused = (status != UCS_OK);
    mine.addr    = (uintptr_t)reg->addr;
    mine.len     = reg->len;
    mine.cuda    = reg->cuda;
    if (reg->cuda && !mine.refused) {
        mgi_region_cuda_rec(reg, &mine);
    }
    gethostname(mine.host, sizeof(mine.host) - 1);
    status = mgi_bootstrap_allgather(&ctx->bs, &mine, recs, sizeof(mine));
    if (status != UCS_OK) {
        goto err_unmap;
    }
    for (r = 0; r < ctx->size; ++r) {
        if (recs[r].refused && (refused < 0)) {
            refused = r;
        }
        max_rkey = (recs[r].rkey_len > max_rkey) ? recs[r].rkey_len :
                   max_rkey;
    }
    if (refused >= 0) {
        if (refused != ctx->rank) {
            ucs_error("mgi region: rank %d refused its part: no region "
                      "registered", refused);
        }
        status = UCS_ERR_INVALID_PARAM;
        goto err_unmap;
    }

    rkeys = calloc(ctx->size + 1, max_rkey + 1);
    if (rkeys == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto err_unmap;
    }
    if (rkey != NULL) {
        memcpy(rkeys + ctx->size * (max_rkey + 1), rkey, mine.rkey_len);
    }
    status = mgi_bootstrap_allgather(&ctx->bs,
                                     rkeys + ctx->size * (max_rkey + 1),
                                     rkeys, max_rkey + 1);
    if (status != UCS_OK) {
        goto err_unmap;
    }
    for (r = 0; r < ctx->size; ++r) {
        reg->peers[r].addr = recs[r].addr;
        reg->peers[r].len  = recs[r].len;
        if (recs[r].len == 0) {
            continue;
        }
        status = ucp_ep_rkey_unpack(ctx->peers[r], rkeys + r * (max_rkey + 1),
                                    &reg->peers[r].rkey);
        if (status != UCS_OK) {
            ucs_error("mgi region %p: rank %d's rkey: %s", reg, r,
                      ucs_status_string(status));
            goto err_rkeys;
        }
    }
    status = mgi_region_handle_init(reg, recs);
    if (status != UCS_OK) {
        goto err_rkeys;
    }

    pthread_mutex_lock(&ctx->lock);
    reg->next    = ctx->regions;
    ctx->regions = reg;
    pthread_mutex_unlock(&ctx->lock);
    ucs_debug("mgi region %p: rank %d's part %zu bytes at %p (%s), %s", reg,
              ctx->rank, reg->len, reg->addr, reg->cuda ? "device" : "host",
              (reg->proxy != NULL) ? "with a proxy" : "no proxy");
    if (rkey != NULL) {
        ucp_rkey_buffer_release(rkey);
    }
    free(rkeys);
    free(recs);
    *reg_p = reg;
    return UCS_OK;

err_rkeys:
    for (r = 0; r < ctx->size; ++r) {
        if (reg->peers[r].rkey != NULL) {
            ucp_rkey_destroy(reg->peers[r].rkey);
        }
    }
err_unmap:
    free(rkeys);
    if (rkey != NULL) {
        ucp_rkey_buffer_release(rkey);
    }
    if (reg->memh != NULL) {
        ucp_mem_unmap(ctx->ucp, reg->memh);
    }
err_free:
    free(recs);
    if (reg != NULL) {
        free(reg->peers);
    }
    free(reg);
    return status;
}

/* Free what this rank holds of the region (no waiting for the others). */
static void mgi_region_free(mgi_region_t *reg)
{
    int r;

    mgi_region_handle_fini(reg);
    for (r = 0; r < reg->ctx->size; ++r) {
        if (reg->peers[r].rkey != NULL) {
            ucp_rkey_destroy(reg->peers[r].rkey);
        }
    }
    if (reg->memh != NULL) {
        ucp_mem_unmap(reg->ctx->ucp, reg->memh);
    }
    pthread_mutex_destroy(&reg->lock);
    pthread_mutex_destroy(&reg->stream_lock);
    free(reg->reqs);
    free(reg->peers);
    free(reg);
}

ucs_status_t mgi_region_deregister(mgi_region_h reg)
{
    mgi_context_t *ctx;
    mgi_region_t **pp;
    ucs_status_t status, st;
    int dummy = 0, *all;

    if (reg == NULL) {
        ucs_error("mgi region deregister: NULL region");
        return UCS_ERR_INVALID_PARAM;
    }
    ctx    = reg->ctx;
    status = mgi_region_quiet(reg);   /* the proxy's requests too */
    all = calloc(ctx->size, sizeof(int));
    st  = (all == NULL) ? UCS_ERR_NO_MEMORY :
          mgi_bootstrap_allgather(&ctx->bs, &dummy, all, sizeof(int));
    free(all);
    status = (status == UCS_OK) ? st : status;

    pthread_mutex_lock(&ctx->lock);
    for (pp = &ctx->regions; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == reg) {
            *pp = reg->next;
            break;
        }
    }
    pthread_mutex_unlock(&ctx->lock);
    mgi_region_free(reg);
    return status;
}

void mgi_region_fini_all(mgi_context_t *ctx)
{
    mgi_region_t *reg;

    while ((reg = ctx->regions) != NULL) {
        ucs_warn("mgi region %p: not deregistered before the context's "
                 "destroy: freed there", reg);
        ctx->regions = reg->next;
        mgi_region_free(reg);
    }
}

size_t mgi_region_length(mgi_region_h reg, int rank)
{
    if ((reg == NULL) || (rank < 0) || (rank >= reg->ctx->size)) {
        return 0;
    }
    return reg->peers[rank].len;
}

void *mgi_region_local(mgi_region_h reg)
{
    return (reg == NULL) ? NULL : reg->addr;
}

int mgi_region_direct(mgi_region_h reg, int rank)
{
    if ((reg == NULL) || (rank < 0) || (rank >= reg->ctx->size)) {
        return 0;
    }
    return reg->peers[rank].dptr != NULL;
}

void *mgi_region_peer_ptr(mgi_region_h reg, int rank)
{
    if ((reg == NULL) || (rank < 0) || (rank >= reg->ctx->size)) {
        return NULL;
    }
    return reg->peers[rank].dptr;
}

/* ---------------------------------------------------------- host RMA */

ucs_status_t mgi_region_put(mgi_region_h reg, int peer, size_t off,
                            const void *src, size_t len)
{
    ucs_status_t status = mgi_region_check(reg, "put", peer, off, len);

    if (status != UCS_OK) {
        return status;
    }
    return mgi_region_rma(reg, 1, peer, off, (void*)src, len);
}

ucs_status_t mgi_region_get(mgi_region_h reg, int peer, size_t off,
                            void *dst, size_t len)
{
    ucs_status_t status = mgi_region_check(reg, "get", peer, off, len);

    if (status != UCS_OK) {
        return status;
    }
    return mgi_region_rma(reg, 0, peer, off, dst, len);
}

ucs_status_t mgi_region_put_signal(mgi_region_h reg, int peer, size_t off,
                                   const void *src, size_t len,
                                   size_t sig_off, uint64_t value)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    ucs_status_t status;

    status = mgi_region_check(reg, "put_signal", peer, off, len);
    if (status == UCS_OK) {
        status = mgi_region_check_sig(reg, "put_signal", peer, sig_off);
    }
    if (status != UCS_OK) {
        return status;
    }
    status = mgi_region_rma(reg, 1, peer, off, (void*)src, len);
    if (status == UCS_OK) {
        status = mgi_region_quiet(reg);   /* the data landed */
    }
    if (status != UCS_OK) {
        return status;
    }
    /* the word's source lives here: wait for its local completion */
    pthread_mutex_lock(&reg->lock);
    reg->peers[peer].dirty = 1;
    pthread_mutex_unlock(&reg->lock);
    return mgi_ucp_wait(reg->ctx,
                        ucp_put_nbx(reg->ctx->peers[peer], &value,
                                    sizeof(value),
                                    reg->peers[peer].addr + sig_off,
                                    reg->peers[peer].rkey, &param),
                        "region signal", reg);
}

/* The proxy's requests posted so far complete (the queue read at its
 * host address), bounded. */
static ucs_status_t mgi_region_quiet_proxy(mgi_region_t *reg)
{
    const uint64_t upto = mgi_region_tickets(reg);
    uint64_t deadline = mgi_time_ns() + reg->h.timeout_ns, st;
    unsigned idle = 0;

    if (upto == ~0ull) {
        ucs_error("mgi region %p: its GPU's ticket counter cannot be read",
                  reg);
        return UCS_ERR_IO_ERROR;
    }
    while (mgi_region_ld_acq(&reg->proxy->done) < upto) {
        st = mgi_region_ld_acq(&reg->proxy->status);
        if (st != 0) {
            return (ucs_status_t)(int64_t)st;
        }
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi region %p: its proxy completed %llu of %llu "
                      "requests in %llu ms", reg,
                      (unsigned long long)reg->proxy->done,
                      (unsigned long long)upto,
                      (unsigned long long)(reg->h.timeout_ns / 1000000));
            return UCS_ERR_TIMED_OUT;
        }
        mgi_idle(reg->ctx, &idle);
    }
    return UCS_OK;
}

ucs_status_t mgi_region_quiet(mgi_region_h reg)
{
    ucs_status_t status = UCS_OK, st;
    unsigned n, i;
    void **reqs;
    int *dirty;
    int r;

    if (reg == NULL) {
        ucs_error("mgi region quiet: NULL region");
        return UCS_ERR_INVALID_PARAM;
    }
    dirty = calloc(reg->ctx->size, sizeof(*dirty));
    if (dirty == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    pthread_mutex_lock(&reg->lock);
    reqs       = reg->reqs;
    n          = reg->nreqs;
    reg->reqs  = NULL;
    reg->nreqs = reg->reqs_cap = 0;
    for (r = 0; r < reg->ctx->size; ++r) {
        dirty[r]              = reg->peers[r].dirty;
        reg->peers[r].dirty   = 0;
    }
    pthread_mutex_unlock(&reg->lock);
    for (i = 0; i < n; ++i) {
        st     = mgi_ucp_wait(reg->ctx, reqs[i], "region request", reg);
        status = (status == UCS_OK) ? st : status;
    }
    free(reqs);
    st     = mgi_region_flush_peers(reg, dirty, "region flush");
    status = (status == UCS_OK) ? st : status;
    free(dirty);
    if ((status == UCS_OK) && reg->proxy_running) {
        status = mgi_region_quiet_proxy(reg);
    }
    return status;
}

ucs_status_t mgi_region_fence(mgi_region_h reg)
{
    return mgi_region_quiet(reg);
}

/* ---------------------------------------------------------- signals */

static ucs_status_t mgi_region_load_word(mgi_region_t *reg, size_t sig_off,
                                         uint64_t *word_p)
{
    if (!reg->cuda) {
        *word_p = mgi_region_ld_acq((const volatile uint64_t*)
                                    ((char*)reg->addr + sig_off));
        return UCS_OK;
    }
    return MGI_CUDA_CALL(cudaMemcpy(word_p, (char*)reg->addr + sig_off,
                                    sizeof(*word_p), cudaMemcpyDeviceToHost),
                         "region %p: signal word at %zu", reg, sig_off);
}

ucs_status_t mgi_region_test_signal(mgi_region_h reg, size_t sig_off,
                                    int cmp, uint64_t value,
                                    uint64_t *word_p)
{
    ucs_status_t status;
    uint64_t w;

    if (reg == NULL) {
        ucs_error("mgi region test_signal: NULL region");
        return UCS_ERR_INVALID_PARAM;
    }
    status = mgi_region_check_sig(reg, "test_signal", reg->ctx->rank,
                                  sig_off);
    if (status != UCS_OK) {
        return status;
    }
    if (!mgi_region_cmp_valid(cmp)) {
        ucs_error("mgi region %p: test_signal: comparison %d, not one of "
                  "MGI_REGION_CMP_*", reg, cmp);
        return UCS_ERR_INVALID_PARAM;
    }
    status = mgi_region_load_word(reg, sig_off, &w);
    if (status != UCS_OK) {
        return status;
    }
    if (word_p != NULL) {
        *word_p = w;
    }
    return mgi_region_cmp(w, cmp, value) ? UCS_OK : UCS_INPROGRESS;
}

ucs_status_t mgi_region_wait_signal(mgi_region_h reg, size_t sig_off,
                                    int cmp, uint64_t value,
                                    unsigned timeout_ms, uint64_t *word_p)
{
    uint64_t deadline, w = 0;
    unsigned idle = 0;
    ucs_status_t status;

    if (reg == NULL) {
        ucs_error("mgi region wait_signal: NULL region");
        return UCS_ERR_INVALID_PARAM;
    }
    if (timeout_ms == 0) {
        timeout_ms = reg->ctx->params.timeout_ms;
    }
    deadline = mgi_time_ns() + (uint64_t)timeout_ms * 1000000ull;
    while ((status = mgi_region_test_signal(reg, sig_off, cmp, value,
                                            &w)) == UCS_INPROGRESS) {
        if (mgi_time_ns() > deadline) {
            ucs_error("mgi region %p: rank %d's signal word at %zu still "
                      "%llu after %u ms (waited for cmp %d with %llu)", reg,
                      reg->ctx->rank, sig_off, (unsigned long long)w,
                      timeout_ms, cmp, (unsigned long long)value);
            status = UCS_ERR_TIMED_OUT;
            break;
        }
        mgi_idle(reg->ctx, &idle);
    }
    if (word_p != NULL) {
        *word_p = w;
    }
    return status;
}

/* ---------------------------------------------------------- device handle */

ucs_status_t mgi_region_device_handle(mgi_region_h reg, mgi_dev_region_t *h)
{
    ucs_status_t status;

    if ((reg == NULL) || (h == NULL) || !reg->has_h) {
        ucs_error("mgi region device_handle: NULL %s",
                  (reg == NULL) ? "region" : "handle");
        return UCS_ERR_INVALID_PARAM;
    }
    if (reg->proxy != NULL) {
        status = mgi_region_proxy_run(reg);
        if (status != UCS_OK) {
            return status;
        }
    }
    *h = reg->h;
    return UCS_OK;
}

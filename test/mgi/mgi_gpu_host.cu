/**
 * mgi_gpu_test's host helpers every mode uses: a monotonic clock, a
 * bounded wait for a stream, an endpoint's GPU resources and endpoint,
 * the job's endpoint ids, a barrier, and a context whose segments take a
 * whole block's send.
 */

#include "mgi_gpu_test.h"

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for a stream, bounded, without cudaStreamSynchronize's unbounded
 * block (a lost tuple would hang it), through an event recorded on it (on
 * the stream's device): under compute-sanitizer a stream's
 * synchronization returns for a stream with a kernel only once the whole
 * device is idle, which it never is while a sorter runs. */
int wait_stream(cudaStream_t s, double timeout_s, const char *what)
{
    double t0 = now_s();
    int dev, prev, rc = 0;
    cudaEvent_t ev;
    cudaError_t e;

    CHECK_CUDA(cudaGetDevice(&prev));
    CHECK_CUDA(cudaStreamGetDevice(s, &dev));
    CHECK_CUDA(cudaSetDevice(dev));
    CHECK_CUDA(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    CHECK_CUDA(cudaEventRecord(ev, s));
    while ((e = cudaEventQuery(ev)) == cudaErrorNotReady) {
        if (now_s() - t0 > timeout_s) {
            fprintf(stderr, "rank %d: TIMEOUT: %s not done after %.0f s\n",
                    g_rank, what, timeout_s);
            rc = -1;
            break;
        }
        usleep(100);
    }
    if ((rc == 0) && (e != cudaSuccess)) {
        fprintf(stderr, "rank %d: %s: %s\n", g_rank, what,
                cudaGetErrorString(e));
        rc = -1;
    }
    cudaEventDestroy(ev);   /* a pending one is released once reached */
    CHECK_CUDA(cudaSetDevice(prev));
    return rc;
}

void ep_setup(mgi_context_h ctx, gpu_ep *e, int dev, unsigned blocks,
              size_t scratch, size_t land, const char *vertex)
{
    mgi_ep_params_t ep;

    e->dev = dev;
    CHECK_CUDA(cudaSetDevice(dev));
    /* before the endpoint: its sorter is a persistent kernel */
    e->scratch = NULL;
    e->land    = NULL;
    if (scratch > 0) {
        CHECK_CUDA(cudaMalloc(&e->scratch, scratch));
    }
    if (land > 0) {
        CHECK_CUDA(cudaMalloc(&e->land, land));
    }
    CHECK_CUDA(cudaStreamCreateWithFlags(&e->stream, cudaStreamNonBlocking));
    CHECK_CUDA(cudaHostAlloc(&e->res, sizeof(*e->res), cudaHostAllocMapped |
                                                       cudaHostAllocPortable));
    memset(e->res, 0, sizeof(*e->res));
    CHECK_CUDA(cudaMalloc(&e->dres, sizeof(*e->dres)));
    CHECK_CUDA(cudaEventCreate(&e->start));
    CHECK_CUDA(cudaEventCreate(&e->stop));
    memset(&ep, 0, sizeof(ep));
    ep.device = dev;
    ep.blocks = blocks;
    ep.vertex = vertex;
    CHECK_UCS(mgi_ep_create(ctx, &ep, &e->id));
}

int ngpus(void)
{
    int n = 0;
    CHECK_CUDA(cudaGetDeviceCount(&n));
    return n;
}

/* Endpoint ids of the job: `local` per rank, in rank order. */
std::vector<mgi_ep_id_t> all_eps(mgi_context_h ctx, int local)
{
    std::vector<mgi_ep_id_t> v;
    for (int r = 0; r < mgi_context_size(ctx); ++r) {
        for (int k = 0; k < local; ++k) {
            v.push_back(MGI_EP_ID(r, k));
        }
    }
    return v;
}

void barrier(mgi_context_h ctx)
{
    std::vector<int> all(mgi_context_size(ctx));
    int me = 0;
    CHECK_UCS(mgi_context_allgather(ctx, &me, all.data(), sizeof(int)));
}

/* Segments must take a whole block's send: tuple_size sizes them (as
 * MGI_TEST_TUPLE_SIZE would), unless MGI_SEG_SIZE says otherwise. */
mgi_context_h ctx_create(const opts &o, unsigned tuple_size)
{
    const unsigned threads = o.threads;
    mgi_context_params_t p;
    mgi_context_h ctx;

    mgi_context_params_init(&p);
    if (getenv("MGI_TEST_TUPLE_SIZE") == NULL) {
        p.tuple_size = tuple_size;
    }
    {
        size_t msg = mgi_msg_size(tuple_size), seg;
        CHECK_UCS(mgi_params_seg_size(&p, &seg));
        if (threads * msg > seg - MGI_SEG_HDR_SIZE) {
            fprintf(stderr, "%u threads x %zu-byte messages do not fit a "
                    "segment of %zu bytes: fewer threads (-t) or a larger "
                    "MGI_SEG_SIZE\n", threads, msg, seg);
            exit(2);
        }
    }
    CHECK_UCS(mgi_context_create(&p, &ctx));
    g_rank     = mgi_context_rank(ctx);
    return ctx;
}

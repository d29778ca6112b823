/**
 * mgi_gpu_test idle_copy and copy_sizes: the application's own copies,
 * within GPU 0 beside an idle endpoint, and the copy engine between GPU 0
 * and GPU 1 by copy size and issue pattern (figures, not checks).
 */

#include "mgi_gpu_test.h"

/* Copies within GPU 0 (cudaMemcpyAsync device to device, 4 MiB each,
 * `total` bytes), best of 3, GB/s; 0 when they did not end within 10 s. */
/* Waits for event e up to 10 s; 0 (and says so) if it did not complete */
static int wait_event(cudaEvent_t e, const char *what)
{
    double deadline = now_s() + 10;
    cudaError_t q;

    while ((q = cudaEventQuery(e)) == cudaErrorNotReady) {
        if (now_s() > deadline) {
            printf("%s not done within 10 s\n", what);
            return 0;
        }
        usleep(50);
    }
    CHECK_CUDA(q);
    return 1;
}

static double d2d_gbs(char *a, char *b, size_t total, cudaStream_t s)
{
    const size_t chunk = 4u << 20;
    cudaEvent_t e0, e1;
    float ms, best = 1e30f;

    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    for (int i = 0; i < 3; ++i) {
        CHECK_CUDA(cudaEventRecord(e0, s));
        for (size_t off = 0; off + chunk <= total; off += chunk) {
            CHECK_CUDA(cudaMemcpyAsync(b + off, a + off, chunk,
                                       cudaMemcpyDeviceToDevice, s));
        }
        CHECK_CUDA(cudaEventRecord(e1, s));
        if (!wait_event(e1, "idle_copy: copies")) {
            return 0;
        }
        CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        best = (ms < best) ? ms : best;
    }
    CHECK_CUDA(cudaEventDestroy(e0));
    CHECK_CUDA(cudaEventDestroy(e1));
    return total / (best / 1e3) / 1e9;
}

/* idle_copy: what an idle GPU endpoint (its sorter kernel resident, no
 * channel) costs the application's own copies within its GPU: the same
 * copies before the endpoint, beside it, and after it is deleted. */
int run_idle_copy(const opts &o)
{
    const size_t total = 1u << 30;
    mgi_context_h ctx;
    cudaStream_t s;
    gpu_ep e;
    char *a, *b;
    double before, beside, after;

    CHECK_CUDA(cudaSetDevice(0));
    /* every buffer before the endpoint: cudaFree waits for its sorter */
    CHECK_CUDA(cudaMalloc(&a, total));
    CHECK_CUDA(cudaMalloc(&b, total));
    CHECK_CUDA(cudaMemset(a, 1, total));
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_CUDA(cudaDeviceSynchronize());
    before = d2d_gbs(a, b, total, s);
    ctx    = ctx_create(o, o.size);
    ep_setup(ctx, &e, 0, o.blocks);
    usleep(50000); /* the sorter has idled a while */
    beside = d2d_gbs(a, b, total, s);
    CHECK_UCS(mgi_ep_delete(ctx, e.id));
    mgi_context_destroy(ctx);
    after = d2d_gbs(a, b, total, s);
    printf("idle_copy: cudaMemcpyAsync within GPU 0, 4 MiB x %zu: %.1f GB/s "
           "before the endpoint, %.1f beside it idle, %.1f after; ratio "
           "beside/before %.3f\n", total >> 22, before, beside, after,
           (before > 0) ? beside / before : 0);
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaFree(b));
    return (beside > 0) ? 0 : 1;
}

enum { COPY_ONE, COPY_EVENT, COPY_STREAMS, COPY_BATCH, COPY_BOTH, COPY_MODES };

/* A direction's events: a ring recorded after each copy (COPY_EVENT; its
 * first slots also join COPY_STREAMS's streams at the end), then the
 * run's start and end */
enum { COPY_EV_RING = 64, COPY_EV_START = COPY_EV_RING,
       COPY_EV_END = COPY_EV_RING + 1, COPY_EV_N = COPY_EV_RING + 2 };

/* total bytes in copies of `size` GPU0 -> GPU1 (COPY_BOTH: and GPU1 ->
 * GPU0 at the same time) by method `mode`; GB/s of all bytes moved */
static double copy_run(char *src[2], char *dst[2], size_t total, size_t size,
                       int mode, cudaStream_t st[2][4], cudaEvent_t ev[2][COPY_EV_N])
{
    const size_t n = total / size, batch = 32;
    const int ndir = (mode == COPY_BOTH) ? 2 : 1;
    const int nst  = (mode == COPY_STREAMS) ? 4 : 1;
    std::vector<void*> d(batch), sr(batch);
    std::vector<size_t> sz(batch, size);
    cudaMemcpyAttributes attr;
    size_t attr_idx = 0;
    float ms;

    memset(&attr, 0, sizeof(attr));
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    for (int g = 0; g < ndir; ++g) {
        CHECK_CUDA(cudaSetDevice(g));
        CHECK_CUDA(cudaEventRecord(ev[g][COPY_EV_START], st[g][0]));
        for (int k = 1; k < nst; ++k) {
            CHECK_CUDA(cudaStreamWaitEvent(st[g][k], ev[g][COPY_EV_START], 0));
        }
    }
    /* directions interleaved, so both are queued from the start */
    for (size_t i = 0; i < n; i += (mode == COPY_BATCH) ? batch : 1) {
        for (int g = 0; g < ndir; ++g) {
            cudaStream_t s = st[g][i % nst];
            if (ndir > 1) {
                CHECK_CUDA(cudaSetDevice(g));
            }
            if (mode == COPY_BATCH) {
                size_t m = (n - i < batch) ? n - i : batch;
                for (size_t j = 0; j < m; ++j) {
                    d[j]  = dst[g] + (i + j) * size;
                    sr[j] = src[g] + (i + j) * size;
                }
                CHECK_CUDA(cudaMemcpyBatchAsync(d.data(), sr.data(),
                                                sz.data(), m, &attr,
                                                &attr_idx, 1, s));
                continue;
            }
            CHECK_CUDA(cudaMemcpyAsync(dst[g] + i * size, src[g] + i * size,
                                       size, cudaMemcpyDefault, s));
            if (mode == COPY_EVENT) {
                CHECK_CUDA(cudaEventRecord(ev[g][i % COPY_EV_RING], s));
            }
        }
    }
    for (int g = 0; g < ndir; ++g) {
        CHECK_CUDA(cudaSetDevice(g));
        for (int k = 1; k < nst; ++k) {
            CHECK_CUDA(cudaEventRecord(ev[g][k], st[g][k]));
            CHECK_CUDA(cudaStreamWaitEvent(st[g][0], ev[g][k], 0));
        }
        CHECK_CUDA(cudaEventRecord(ev[g][COPY_EV_END], st[g][0]));
    }
    float worst = 0;
    for (int g = 0; g < ndir; ++g) {
        if (!wait_event(ev[g][COPY_EV_END], "copy_sizes: copies")) {
            return 0;
        }
        CHECK_CUDA(cudaEventElapsedTime(&ms, ev[g][COPY_EV_START], ev[g][COPY_EV_END]));
        worst = (ms > worst) ? ms : worst;
    }
    CHECK_CUDA(cudaSetDevice(0));
    return (double)n * size * ndir / (worst * 1e-3) / 1e9;
}

/* The copy engine between GPU 0 and GPU 1 by copy size: back to back on
 * one stream, with an event recorded after each copy (as cuda_mgi does),
 * in turn on four streams, in batches of 32 (cudaMemcpyBatchAsync), and
 * one stream each way at once (GB/s of both directions together). Best
 * of two runs of 512 MiB each. What a mover's puts of a given size can
 * move at most. */
int run_copy_sizes(const opts &o)
{
    const size_t total = 512u << 20;
    const size_t sizes[] = {128u << 10, 256u << 10, 512u << 10, 1u << 20,
                            2u << 20, 4u << 20, 8u << 20, 16u << 20,
                            64u << 20};
    const char *names[COPY_MODES] = {"one stream", "+ event each",
                                     "4 streams", "batches of 32",
                                     "both ways"};
    cudaStream_t st[2][4];
    cudaEvent_t ev[2][COPY_EV_N];
    char *src[2], *dst[2];
    int ndev = 0;

    (void)o;
    CHECK_CUDA(cudaGetDeviceCount(&ndev));
    if (ndev < 2) {
        printf("copy_sizes: SKIPPED, needs 2 GPUs (found %d)\n", ndev);
        return 0;
    }
    for (int g = 0; g < 2; ++g) {
        CHECK_CUDA(cudaSetDevice(g));
        cudaError_t pe = cudaDeviceEnablePeerAccess(1 - g, 0);
        if ((pe != cudaSuccess) && (pe != cudaErrorPeerAccessAlreadyEnabled)) {
            CHECK_CUDA(pe);
        }
        (void)cudaGetLastError();
        CHECK_CUDA(cudaMalloc(&src[g], total));
        CHECK_CUDA(cudaMemset(src[g], g + 1, total));
        for (int k = 0; k < 4; ++k) {
            CHECK_CUDA(cudaStreamCreateWithFlags(&st[g][k],
                                                 cudaStreamNonBlocking));
        }
        for (int k = 0; k < COPY_EV_N; ++k) {
            CHECK_CUDA(cudaEventCreateWithFlags(&ev[g][k],
                    (k >= COPY_EV_RING) ? cudaEventDefault :
                                          cudaEventDisableTiming));
        }
    }
    /* GPU g copies its src into the other GPU's buffer */
    for (int g = 0; g < 2; ++g) {
        CHECK_CUDA(cudaSetDevice(1 - g));
        CHECK_CUDA(cudaMalloc(&dst[g], total));
    }
    CHECK_CUDA(cudaSetDevice(0));
    CHECK_CUDA(cudaDeviceSynchronize());
    copy_run(src, dst, total, 4u << 20, COPY_ONE, st, ev); /* warm up */
    printf("copy_sizes: GPU0 -> GPU1, %zu MiB per run, best of 2 (GB/s)\n",
           total >> 20);
    for (size_t size : sizes) {
        printf("copy_sizes %8zu B:", size);
        for (int m = 0; m < COPY_MODES; ++m) {
            double best = 0, r;
            for (int k = 0; k < 2; ++k) {
                r    = copy_run(src, dst, total, size, m, st, ev);
                best = (r > best) ? r : best;
            }
            printf("  %s %.1f", names[m], best);
        }
        printf("\n");
        fflush(stdout);
    }
    for (int g = 0; g < 2; ++g) {
        CHECK_CUDA(cudaSetDevice(g));
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaFree(src[g]));
        CHECK_CUDA(cudaFree(dst[1 - g]));
    }
    return 0;
}

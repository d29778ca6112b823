/**
 * mgi_gpu_test peer_dies: two processes; rank 1 ends right after the
 * channel's create, and rank 0's kernel, waiting for its tuples, must see
 * mgi_dev_failed, its flush and its context's destroy return in bounded
 * time.
 */

#include "mgi_gpu_test.h"

/* peer_dies: one block's thread 0 sends a few tuples to endpoint dst,
 * then waits for tuples from it, which never come, until the context
 * failed (mgi_dev_failed); then the block flushes with no spin limit
 * (delivered before the failure: 0; else -2). out: the flush's answer,
 * mgi_dev_failed after it, the tuples taken, whether the wait ended by
 * the failure. */
__global__ void peer_dies_kernel(mgi_dev_ch_t h, int dst, int *out)
{
    __shared__ int sent, failed;

    if (threadIdx.x == 0) {
        const unsigned long long t[2] = {1, 2};
        unsigned long long buf[8];
        int r;

        sent = failed = 0;
        for (int i = 0; i < 16; ++i) {
            sent += (mgi_dev_send(&h, t, sizeof(t), dst) > 0);
        }
        for (;;) {
            r = mgi_dev_recv(&h, buf, sizeof(buf));
            if (r == MGI_DEV_EOF) {
                break;
            }
            if ((r == 0) && mgi_dev_failed(&h)) {
                failed = 1;
                break;
            }
        }
    }
    __syncthreads();
    int r = mgi_dev_flush(&h, 0);
    if (threadIdx.x == 0) {
        out[0] = r;
        out[1] = mgi_dev_failed(&h);
        out[2] = sent;
        out[3] = failed;
    }
}

/* Two processes: rank 1 ends (_exit, no destroy) right after the channel's
 * create; rank 0's kernel sends to it and waits for its tuples: the wait
 * must end by mgi_dev_failed once rank 0's mover saw rank 1 end, within
 * 20 s, the flush after it return (0 or -2), and rank 0's destroy return
 * within 10 s (all well under MGI_TIMEOUT_MS). */
int run_peer_dies(const opts &o)
{
    mgi_context_h ctx = ctx_create(o, 16);
    std::vector<mgi_ep_id_t> all;
    mgi_ch_params_t chp;
    mgi_ch_id_t ch;
    double t0, took, destroy;
    int *out, ok;
    gpu_ep e;

    if (mgi_context_size(ctx) != 2) {
        fprintf(stderr, "peer_dies: run it with 2 processes\n");
        return 2;
    }
    ep_setup(ctx, &e, g_rank % ngpus(), 1);
    all = all_eps(ctx, 1);
    memset(&chp, 0, sizeof(chp));
    chp.src       = all.data();
    chp.nsrc      = all.size();
    chp.dst       = all.data();
    chp.ndst      = all.size();
    chp.part_key  = -1;
    chp.max_tuple = 16;
    CHECK_UCS(mgi_ch_create(ctx, &chp, &ch));
    if (g_rank == 1) {
        printf("peer_dies rank 1: ending now, without a destroy\n");
        fflush(stdout);
        _exit(0);
    }
    CHECK_UCS(mgi_ch_device_handle(ctx, ch, e.id, &e.h));
    CHECK_CUDA(cudaHostAlloc(&out, 4 * sizeof(int), cudaHostAllocMapped |
                                                    cudaHostAllocPortable));
    out[0] = out[1] = out[2] = out[3] = 7;
    t0 = now_s();
    peer_dies_kernel<<<1, 32, 0, e.stream>>>(e.h, (int)MGI_EP_ID(1, 0), out);
    CHECK_CUDA(cudaGetLastError());
    if (wait_stream(e.stream, 20, "the kernel's wait for rank 1") != 0) {
        printf("peer_dies rank 0: the kernel still waits after 20 s: "
               "FAIL\n");
        fflush(stdout);
        _exit(1);
    }
    took = now_s() - t0;
    t0 = now_s();
    mgi_context_destroy(ctx);
    destroy = now_s() - t0;
    ok = (out[3] == 1) && (out[1] == 1) &&
         ((out[0] == 0) || (out[0] == -2)) && (destroy < 10);
    printf("peer_dies rank 0: the wait for rank 1 ended by mgi_dev_failed: "
           "%s; kernel %.2f s, flush %d, %d tuple(s) taken, destroy %.2f "
           "s: %s\n", (out[3] == 1) ? "yes" : "no", took, out[0], out[2],
           destroy, ok ? "OK" : "FAIL");
    return ok ? 0 : 1;
}

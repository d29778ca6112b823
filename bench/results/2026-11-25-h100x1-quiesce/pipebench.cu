// Calibration: the user blocks' data movement of a one-GPU Exchange
// without the rings' synchronization. 96 blocks x 1024 threads; each
// block sends its share of `in` as 64 KiB tiles (8 words a thread) into
// a 2 MiB circular "stage" buffer of its own, and (RECV) after every
// second tile copies 128 KiB of its neighbour's stage buffer to `out`.
// SYNC: per tile, thread 0 does 3 dependent atomics before the writes
// (a reservation) and a fence + atomic after (a commit), the block
// waiting at barriers as the real send does.
#include <cstdio>
#include <cstdint>
#define NT 1024
#define K 8
#define TILE_W (NT * K)              /* words: 64 KiB */
#define SLOTS 32                     /* 2 MiB of tiles */
template <int RECV, int SYNC, int ILP, int DIV = 0>
__global__ void __launch_bounds__(NT, 1)
k_pipe(const uint64_t *in, uint64_t *stage, uint64_t *out, size_t per_blk,
       unsigned *ctl)
{
    __shared__ unsigned s_v;
    const unsigned tid = threadIdx.x, b = blockIdx.x, nb = gridDim.x;
    const uint64_t *src = in + (size_t)b * per_blk;
    uint64_t *st = stage + (size_t)b * SLOTS * TILE_W;
    const uint64_t *nst = stage + (size_t)((b + 1) % nb) * SLOTS * TILE_W;
    uint64_t *dst = out + (size_t)b * per_blk;
    uint64_t v[K];
    size_t ntile = per_blk / TILE_W, t;
    for (t = 0; t < ntile; ++t) {
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = src[t * TILE_W + tid + k * NT];
        if (SYNC) {
            __syncthreads();
            if (tid == 0) {
                unsigned a = atomicAdd(&ctl[b * 32], 1);
                a = atomicAdd(&ctl[b * 32 + 1 + (a & 1)], a);
                s_v = atomicCAS(&ctl[b * 32 + 4], a, a + 1);
            }
            __syncthreads();
        }
        uint64_t *o = st + (t % SLOTS) * TILE_W + (SYNC ? (s_v & 0) : 0);
        if (DIV) {
            /* as mgi_dev_send_tile_one: a header word every wpm words,
             * wpm a run-time value */
            const uint32_t wpm = (uint32_t)(per_blk >> 40) + 8190u;
#pragma unroll
            for (int k = 0; k < K; ++k) {
                uint32_t w = tid + k * NT;
                if (w + w / wpm + 1 < TILE_W) o[w + w / wpm + 1] = v[k];
            }
        } else {
#pragma unroll
        for (int k = 0; k < K; ++k) o[tid + k * NT] = v[k];
        }
        if (SYNC) {
            __syncthreads();
            if (tid == 0) { __threadfence(); atomicAdd(&ctl[b * 32 + 8], 1); }
        }
        if (RECV && (t % 2) == 1) {
            const uint64_t *r = nst + ((t - 1) % SLOTS) * TILE_W;
            uint64_t *d = dst + (t - 1) * TILE_W;
            for (unsigned w = tid; w < 2 * TILE_W; w += NT * ILP) {
                uint64_t x[ILP];
#pragma unroll
                for (int u = 0; u < ILP; ++u)
                    x[u] = (w + u * NT < 2 * TILE_W) ? __ldcg(r + w + u * NT) : 0;
#pragma unroll
                for (int u = 0; u < ILP; ++u)
                    if (w + u * NT < 2 * TILE_W) d[w + u * NT] = x[u];
            }
            if (SYNC) __syncthreads();
        }
    }
}
int main()
{
    const int nb = 96;
    const size_t total = (size_t)1 << 26;          /* 64 M words = 512 MiB */
    const size_t per = total / nb / (2 * TILE_W) * (2 * TILE_W);
    uint64_t *in, *stage, *out; unsigned *ctl;
    cudaMalloc(&in, total * 8); cudaMalloc(&out, total * 8);
    cudaMalloc(&stage, (size_t)nb * SLOTS * TILE_W * 8);
    cudaMalloc(&ctl, nb * 32 * 4 * 2);
    cudaMemset(in, 1, total * 8); cudaMemset(ctl, 0, nb * 256);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    auto run = [&](auto kern, const char *name) {
        for (int it = 0; it < 2; ++it) kern<<<nb, NT>>>(in, stage, out, per, ctl);
        cudaEventRecord(e0);
        for (int it = 0; it < 5; ++it) kern<<<nb, NT>>>(in, stage, out, per, ctl);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1); ms /= 5;
        printf("%-28s %8.3f ms  %7.1f GB/s of tuples (%s)\n", name, ms,
               per * nb * 8 / ms / 1e6, cudaGetErrorString(cudaGetLastError()));
    };
    run(k_pipe<0, 0, 8>, "send only");
    run(k_pipe<0, 1, 8>, "send only, sync");
    run(k_pipe<1, 0, 8>, "send + recv copy");
    run(k_pipe<1, 1, 8>, "send + recv copy, sync");
    run(k_pipe<1, 0, 4>, "send + recv copy ILP4");
    run(k_pipe<0, 0, 8, 1>, "send only, header+div");
    run(k_pipe<1, 1, 8, 1>, "send+recv, sync, header+div");
    return 0;
}

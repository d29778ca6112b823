// Micro-benchmark: a block copying 128 KiB "segments" (payload after an
// 8-byte header: 8 mod 16 aligned) as the device receive does, against
// plainer copies. All blocks copy at once; cycles per segment per block.
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <vector>
#define SEG (128 * 1024)
#define PAY (SEG - 64)

struct runs1 { const char *msgs[4]; uint32_t msz[4], len[4], n[4], at[5]; };

__device__ __forceinline__ const char *item(const runs1 *rs, uint32_t x, uint32_t *e)
{
    const uint32_t *p = rs->at;
    uint32_t l, k, t = 0;
    unsigned u;
    while (p[*e + 1] <= 8 * x) ++*e;
    u = 8;
    l = x - p[*e] / 8;
    if (rs->n[*e] != 1) { k = rs->len[*e] / u; t = l / k; l = l - t * k; }
    return rs->msgs[*e] + (size_t)t * rs->msz[*e] + 8 + (size_t)l * u;
}

template <int V, int ILP>
__global__ void __launch_bounds__(1024, 1)
k_copy(const char *src, char *dst, int nseg, int pool, unsigned long long *cyc)
{
    __shared__ runs1 rs;
    const char *s0 = src + (size_t)blockIdx.x * pool * SEG;
    char *d0 = dst + (size_t)blockIdx.x * pool * SEG;
    unsigned long long t0 = clock64();
    for (int i = 0; i < nseg; ++i) {
        const char *seg = s0 + (size_t)(i % pool) * SEG;
        char *out = d0 + (size_t)(i % pool) * SEG;
        if (V == 1) {
            if (threadIdx.x == 0) {
                rs.msgs[0] = seg; rs.msz[0] = PAY + 8; rs.len[0] = PAY;
                rs.n[0] = 1; rs.at[0] = 0; rs.at[1] = PAY;
            }
            __syncthreads();
        }
        const uint32_t nw = PAY / 8;
        if (V == 0 || V == 1) {
            uint64_t v[ILP];
            uint32_t e = 0;
            for (uint32_t base = threadIdx.x; base < nw; base += blockDim.x * ILP) {
#pragma unroll
                for (int u = 0; u < ILP; ++u) {
                    uint32_t w = base + u * blockDim.x;
                    if (w < nw)
                        v[u] = __ldcg((const unsigned long long *)
                                      (V == 1 ? item(&rs, w, &e) : seg + 8 + 8 * (size_t)w));
                }
#pragma unroll
                for (int u = 0; u < ILP; ++u) {
                    uint32_t w = base + u * blockDim.x;
                    if (w < nw) ((uint64_t *)out)[w] = v[u];
                }
            }
        } else if (V == 2) {
            // 16-byte, aligned source (as if the payload were 16-aligned)
            const uint32_t nq = PAY / 16;
            uint4 v[ILP];
            for (uint32_t base = threadIdx.x; base < nq; base += blockDim.x * ILP) {
#pragma unroll
                for (int u = 0; u < ILP; ++u) {
                    uint32_t w = base + u * blockDim.x;
                    if (w < nq) v[u] = __ldcg((const uint4 *)(seg + 16 + 16 * (size_t)w));
                }
#pragma unroll
                for (int u = 0; u < ILP; ++u) {
                    uint32_t w = base + u * blockDim.x;
                    if (w < nq) ((uint4 *)out)[w] = v[u];
                }
            }
        } else if (V == 3) {
            // 16-byte loads of an 8-mod-16 source: aligned loads, each
            // output quad = high half of load w and low half of load w+1
            // (the neighbour's, by shuffle; lane 31 loads its own extra)
            const uint32_t nq = PAY / 16;
            const char *a = seg; // seg+8 is the payload; seg is 16-aligned
            uint4 v[ILP];
            uint2 nx[ILP];
            for (uint32_t base = threadIdx.x; base < nq; base += blockDim.x * ILP) {
#pragma unroll
                for (int u = 0; u < ILP; ++u) {
                    uint32_t w = base + u * blockDim.x;
                    v[u] = (w < nq) ? __ldcg((const uint4 *)(a + 16 * (size_t)w)) : make_uint4(0,0,0,0);
                }
#pragma unroll
                for (int u = 0; u < ILP; ++u) {
                    uint32_t w = base + u * blockDim.x;
                    nx[u].x = __shfl_down_sync(0xffffffff, v[u].x, 1);
                    nx[u].y = __shfl_down_sync(0xffffffff, v[u].y, 1);
                    if ((threadIdx.x & 31) == 31 && w < nq)
                        nx[u] = __ldcg((const uint2 *)(a + 16 * (size_t)(w + 1)));
                }
#pragma unroll
                for (int u = 0; u < ILP; ++u) {
                    uint32_t w = base + u * blockDim.x;
                    if (w < nq) ((uint4 *)out)[w] = make_uint4(v[u].z, v[u].w, nx[u].x, nx[u].y);
                }
            }
        }
        __syncthreads();
    }
    if (threadIdx.x == 0) cyc[blockIdx.x] = clock64() - t0;
}

template <int V, int ILP>
void run(const char *name, const char *src, char *dst, int nblk, int nseg, int pool,
         unsigned long long *cyc, int nth)
{
    cudaEvent_t a, b;
    cudaEventCreate(&a); cudaEventCreate(&b);
    k_copy<V, ILP><<<nblk, nth>>>(src, dst, 4, pool, cyc);
    cudaEventRecord(a);
    k_copy<V, ILP><<<nblk, nth>>>(src, dst, nseg, pool, cyc);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms; cudaEventElapsedTime(&ms, a, b);
    std::vector<unsigned long long> h(nblk);
    cudaMemcpy(h.data(), cyc, nblk * 8, cudaMemcpyDeviceToHost);
    double s = 0; for (auto x : h) s += x;
    printf("%-28s blocks %3d threads %4d: %7.0f cycles a segment, %7.1f GB/s all blocks (%s)\n",
           name, nblk, nth, s / nblk / nseg, (double)nblk * nseg * PAY / ms / 1e6,
           cudaGetErrorString(cudaGetLastError()));
}

int main()
{
    int pool = 32, nseg = 256;
    size_t bytes = (size_t)132 * pool * SEG;
    char *src, *dst; unsigned long long *cyc;
    cudaMalloc(&src, bytes); cudaMalloc(&dst, bytes); cudaMalloc(&cyc, 132 * 8);
    cudaMemset(src, 1, bytes);
    int blks[] = {1, 32, 96};
    for (int nb : blks) {
        run<0, 8>("plain 8B ilp8", src, dst, nb, nseg, pool, cyc, 1024);
        run<1, 8>("runs_item 8B ilp8", src, dst, nb, nseg, pool, cyc, 1024);
        run<0, 16>("plain 8B ilp16", src, dst, nb, nseg, pool, cyc, 1024);
        run<2, 4>("16B aligned ilp4", src, dst, nb, nseg, pool, cyc, 1024);
        run<2, 8>("16B aligned ilp8", src, dst, nb, nseg, pool, cyc, 1024);
        run<3, 4>("16B shifted ilp4", src, dst, nb, nseg, pool, cyc, 1024);
        run<3, 8>("16B shifted ilp8", src, dst, nb, nseg, pool, cyc, 1024);
        run<1, 8>("runs_item 8B ilp8 512t", src, dst, nb, nseg, pool, cyc, 512);
    }
    return 0;
}

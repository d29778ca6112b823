// D2D copies while persistent kernels hold k SMs: cudaMemcpyAsync against
// cudaMemcpyBatchAsync with cudaMemcpyFlagPreferOverlapWithCompute.
#include <unistd.h>
#include <cstdio>
#include <cuda_runtime.h>
__global__ void __launch_bounds__(1024) spin(volatile int *stop, volatile int *dev, int busy) {
    __shared__ int s_stop;
    unsigned long long it = 0;
    if (threadIdx.x == 0) s_stop = 0;
    __syncthreads();
    while (!s_stop) {
        if (busy == 1) { for (int i = 0; i < 64; ++i) (void)dev[(threadIdx.x + blockIdx.x * 1024) % 4096]; }
        else if (busy == 2) { if (threadIdx.x == 0) for (int i = 0; i < 64; ++i) (void)dev[(blockIdx.x * 64 + i) % 4096]; }
        else if (busy == 3) __nanosleep(64);
        else __nanosleep(1000);
        if (threadIdx.x == 0 && (++it % 32) == 0) s_stop = *stop;
        __syncthreads();
    }
}
#define CK(x) do { cudaError_t e = (x); if (e) { printf("%s: %s\n", #x, cudaGetErrorString(e)); return 1; } } while (0)
int main() {
    int *stop; CK(cudaHostAlloc(&stop, 4, cudaHostAllocMapped));
    int *dev; CK(cudaMalloc(&dev, 4096 * 4));
    int nsm; cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, 0);
    const size_t chunk = 4 << 20, total = 1ull << 30, n = total / chunk;
    char *a, *b; CK(cudaMalloc(&a, total)); CK(cudaMalloc(&b, total));
    cudaStream_t ks, cs; cudaStreamCreateWithFlags(&ks, cudaStreamNonBlocking); cudaStreamCreateWithFlags(&cs, cudaStreamNonBlocking);
    void **dsts = new void*[n]; const void **srcs = new const void*[n]; size_t *sizes = new size_t[n];
    for (size_t i = 0; i < n; ++i) { dsts[i] = b + i * chunk; srcs[i] = a + i * chunk; sizes[i] = chunk; }
    cudaMemcpyAttributes attr = {}; attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream; attr.flags = cudaMemcpyFlagPreferOverlapWithCompute;
    size_t idx0 = 0;
    int ks_list[] = {0, 64, 128, nsm};
    for (int busy = 0; busy < 4; ++busy)
    for (int k : ks_list) {
        *stop = 0;
        if (k > 0) spin<<<k, 1024, 0, ks>>>(stop, dev, busy);
        CK(cudaGetLastError());
        usleep(20000);
        for (int mode = 0; mode < 2; ++mode) {
            cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
            cudaEventRecord(e0, cs);
            cudaError_t err = cudaSuccess;
            if (mode == 0) {
                for (size_t i = 0; i < n; ++i) cudaMemcpyAsync(dsts[i], srcs[i], chunk, cudaMemcpyDeviceToDevice, cs);
            } else {
                err = cudaMemcpyBatchAsync(dsts, srcs, sizes, n, &attr, &idx0, 1, cs);
            }
            cudaEventRecord(e1, cs);
            cudaError_t q; long spins = 0;
            while ((q = cudaEventQuery(e1)) == cudaErrorNotReady && spins < 3000000) { ++spins; usleep(1); }
            float ms = 0; cudaEventElapsedTime(&ms, e0, e1);
            printf("%-34s blocks holding %3d of %d SMs: %-38s 4 MiB x %zu: %8.1f GB/s (%s%s%s)\n",
                   busy == 1 ? "all threads loading" : busy == 2 ? "thread 0 loading, rest at barrier" : busy == 3 ? "nanosleep(64)" : "nanosleep(1000)", k, nsm,
                   mode ? "cudaMemcpyBatchAsync(PreferOverlap)" : "cudaMemcpyAsync D2D", n,
                   q == cudaSuccess ? total / ms / 1e6 : 0.0, cudaGetErrorString(q),
                   err ? ", batch: " : "", err ? cudaGetErrorString(err) : "");
            if (q != cudaSuccess) break;
        }
        *stop = 1;
        CK(cudaStreamSynchronize(ks));
        CK(cudaStreamSynchronize(cs));
    }
    return 0;
}

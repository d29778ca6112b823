// Host cost of issuing copy-engine copies, by API: per copy cudaMemcpyAsync
// (+ an event record each, or one per 32), cuMemcpyDtoDAsync, and
// cudaMemcpyBatchAsync of B copies; GB/s of the whole. Same device, or
// GPU0 -> GPU1 with two GPUs.
// Build and run from the repository root (bench/RESULTS.md, copy-issue):
//   nvcc -O2 -o /tmp/copycost bench/copy_cost/copycost.cu -lcuda
//   /tmp/copycost
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
typedef std::chrono::steady_clock clk;
static double secs(clk::time_point a) { return std::chrono::duration<double>(clk::now() - a).count(); }
int main(int argc, char **argv)
{
    int ndev = 0; CK(cudaGetDeviceCount(&ndev));
    int peer = (ndev > 1);
    size_t pool = 512u << 20;
    char *src, *dst;
    CK(cudaSetDevice(0)); CK(cudaMalloc(&src, pool));
    if (peer) { CK(cudaSetDevice(1)); CK(cudaMalloc(&dst, pool));
        CK(cudaSetDevice(0)); cudaDeviceEnablePeerAccess(1, 0); cudaGetLastError(); }
    else CK(cudaMalloc(&dst, pool));
    CK(cudaMemset(src, 1, pool));
    cudaStream_t st; CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> ev(2048);
    for (auto &e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    printf("copycost: %s\n", peer ? "GPU0 -> GPU1 (peer)" : "GPU0 -> GPU0");
    const size_t sizes[] = {128u << 10, 1u << 20, 4u << 20};
    const char *names[] = {"memcpyAsync+record", "memcpyAsync, record/32", "cuMemcpyDtoDAsync+cuEventRecord",
                           "memcpyAsync Default+record", "batch 8 + record", "batch 32 + record"};
    for (size_t sz : sizes) {
        long n = ((size_t)4 << 30) / sz; if (n > 16384) n = 16384; n -= n % 32;
        std::vector<void*> d(n), s(n); std::vector<size_t> z(n, sz);
        for (long i = 0; i < n; ++i) { size_t off = ((size_t)i * sz) % (pool - sz + 1); off -= off % 4096;
            d[i] = dst + off; s[i] = src + off; }
        for (int v = 0; v < 6; ++v) for (int rep = 0; rep < 2; ++rep) {
            CK(cudaDeviceSynchronize());
            double host = 0; long issued = 0, records = 0;
            auto t0 = clk::now();
            for (long i = 0; i < n; ) {
                auto h0 = clk::now();
                int B = 1;
                if (v == 0 || v == 3) {
                    CK(cudaMemcpyAsync(d[i], s[i], sz, v == 0 ? cudaMemcpyDeviceToDevice : cudaMemcpyDefault, st));
                    CK(cudaEventRecord(ev[records++ % ev.size()], st));
                } else if (v == 1) {
                    CK(cudaMemcpyAsync(d[i], s[i], sz, cudaMemcpyDeviceToDevice, st));
                    if ((i % 32) == 31) CK(cudaEventRecord(ev[records++ % ev.size()], st));
                } else if (v == 2) {
                    if (cuMemcpyDtoDAsync((CUdeviceptr)d[i], (CUdeviceptr)s[i], sz, (CUstream)st) != CUDA_SUCCESS) { printf("cuMemcpyDtoDAsync failed\n"); return 1; }
                    cuEventRecord((CUevent)ev[records++ % ev.size()], (CUstream)st);
                } else {
                    B = (v == 4) ? 8 : 32;
                    cudaMemcpyAttributes at = {};
                    at.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
                    size_t ai = 0;
                    CK(cudaMemcpyBatchAsync(&d[i], &s[i], &z[i], B, &at, &ai, 1, st));
                    CK(cudaEventRecord(ev[records++ % ev.size()], st));
                }
                host += secs(h0);
                i += B; issued += B;
                if (records > 1024) cudaEventSynchronize(ev[(records - 1024) % ev.size()]);
            }
            CK(cudaDeviceSynchronize());
            double t = secs(t0);
            if (rep == 1)
                printf("size %8zu %-34s %7.1f GB/s, %.2f us host per copy\n", sz, names[v], n * sz / t / 1e9, host / n * 1e6);
        }
    }
    return 0;
}

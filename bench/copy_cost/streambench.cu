// Copy-engine copies of one size issued back to back, each followed by an
// event record (as a UCT put or a mover flush does), round robin over S
// streams: GB/s and host us per (copy + record). Same device, or peer
// (src device 0, dst device 1) when two GPUs are visible.
// Build and run from the repository root (bench/RESULTS.md, copy-issue):
//   nvcc -O2 -o /tmp/streambench bench/copy_cost/streambench.cu
//   /tmp/streambench [0]      (0: within GPU 0 where two GPUs are visible)
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
int main(int argc, char **argv)
{
    int ndev = 0; CK(cudaGetDeviceCount(&ndev));
    int peer = (ndev > 1) && (argc < 2 || atoi(argv[1]) != 0);
    size_t pool = 256u << 20;
    char *src, *dst;
    CK(cudaSetDevice(0)); CK(cudaMalloc(&src, pool));
    if (peer) { CK(cudaSetDevice(1)); CK(cudaMalloc(&dst, pool));
        CK(cudaSetDevice(0)); cudaDeviceEnablePeerAccess(1, 0); cudaGetLastError(); }
    else CK(cudaMalloc(&dst, pool));
    CK(cudaMemset(src, 1, pool));
    const size_t sizes[] = {128u << 10, 512u << 10, 1u << 20, 4u << 20, 16u << 20};
    const int streams[] = {1, 2, 4, 8};
    std::vector<cudaStream_t> st(8); std::vector<cudaEvent_t> ev(4096);
    for (auto &s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (auto &e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    printf("streambench: %s\n", peer ? "GPU0 -> GPU1 (peer)" : "GPU0 -> GPU0");
    for (size_t sz : sizes) {
        for (int S : streams) {
            size_t total = (size_t)4 << 30; long n = total / sz;
            if (n > 20000) n = 20000;
            for (int rep = 0; rep < 2; ++rep) {
                CK(cudaDeviceSynchronize());
                double host = 0;
                auto t0 = std::chrono::steady_clock::now();
                for (long i = 0; i < n; ++i) {
                    size_t off = (i * sz) % (pool - sz + 1);
                    off -= off % 4096;
                    cudaStream_t s = st[i % S];
                    auto h0 = std::chrono::steady_clock::now();
                    CK(cudaMemcpyAsync(dst + off, src + off, sz, cudaMemcpyDeviceToDevice, s));
                    CK(cudaEventRecord(ev[i % ev.size()], s));
                    host += std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count();
                    if (i >= 1024) {    // bounded in flight, as a transport's queue
                        cudaEventSynchronize(ev[(i - 1024) % ev.size()]);
                    }
                }
                CK(cudaDeviceSynchronize());
                double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                if (rep == 1)
                    printf("size %8zu streams %d: %7.1f GB/s, %.2f us host per copy+record, %ld copies\n",
                           sz, S, n * sz / s / 1e9, host / n * 1e6, n);
            }
        }
    }
    return 0;
}

// Do copy issues scale over host threads? T threads, each its own stream,
// issue copies of one size (an event record each); GB/s of the whole and
// host us per copy per thread. Same device, or GPU0 -> GPU1 with two GPUs.
// Build and run from the repository root (bench/RESULTS.md, copy-issue):
//   nvcc -O2 -o /tmp/copythreads bench/copy_cost/copythreads.cu
//   /tmp/copythreads
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <thread>
#include <vector>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
    printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)
typedef std::chrono::steady_clock clk;
int main()
{
    int ndev = 0; CK(cudaGetDeviceCount(&ndev));
    int peer = (ndev > 1);
    size_t pool = 1024u << 20;
    char *src, *dst;
    CK(cudaSetDevice(0)); CK(cudaMalloc(&src, pool));
    if (peer) { CK(cudaSetDevice(1)); CK(cudaMalloc(&dst, pool));
        CK(cudaSetDevice(0)); cudaDeviceEnablePeerAccess(1, 0); cudaGetLastError(); }
    else CK(cudaMalloc(&dst, pool));
    printf("copythreads: %s\n", peer ? "GPU0 -> GPU1 (peer)" : "GPU0 -> GPU0");
    for (size_t sz : {(size_t)1 << 20, (size_t)4 << 20}) for (int T : {1, 2, 4, 8}) for (int rep = 0; rep < 2; ++rep) {
        long n = ((size_t)8 << 30) / sz / T; if (n > 8192) n = 8192;
        std::vector<double> host(T);
        CK(cudaDeviceSynchronize());
        auto t0 = clk::now();
        std::vector<std::thread> th;
        for (int t = 0; t < T; ++t) th.emplace_back([&, t]() {
            cudaSetDevice(0);
            cudaStream_t st; cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
            std::vector<cudaEvent_t> ev(256);
            for (auto &e : ev) cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
            size_t part = pool / T;
            double h = 0;
            for (long i = 0; i < n; ++i) {
                size_t off = t * part + ((size_t)i * sz) % (part - sz + 1); off -= off % 4096;
                auto h0 = clk::now();
                cudaMemcpyAsync(dst + off, src + off, sz, cudaMemcpyDeviceToDevice, st);
                cudaEventRecord(ev[i % 256], st);
                h += std::chrono::duration<double>(clk::now() - h0).count();
                if (i >= 128) cudaEventSynchronize(ev[(i - 128) % 256]);
            }
            cudaStreamSynchronize(st);
            host[t] = h / n * 1e6;
        });
        for (auto &x : th) x.join();
        double s = std::chrono::duration<double>(clk::now() - t0).count();
        if (rep == 1) printf("size %8zu threads %d: %7.1f GB/s, %.2f us host per copy (thread 0)\n", sz, T, n * T * sz / s / 1e9, host[0]);
    }
    return 0;
}

/**
 * GPU side of the TPC-H-like generator: the row functions of mgi_tpch.h run
 * one thread per order, each GPU writing its own slice in place.
 */
#include "mgi_tpch.h"

#include <cub/device/device_scan.cuh>
#include <cuda_runtime.h>
#include <stdio.h>

#define MGI_TPCH_CUDA(_call) \
    do { \
        cudaError_t _e = (_call); \
        if (_e != cudaSuccess) { \
            fprintf(stderr, "mgi_tpch: %s failed: %s (%s:%d)\n", #_call, \
                    cudaGetErrorString(_e), __FILE__, __LINE__); \
            return -1; \
        } \
    } while (0)

#define MGI_TPCH_BLOCK 256

static unsigned mgi_tpch_grid(uint64_t n)
{
    uint64_t g = (n + MGI_TPCH_BLOCK - 1) / MGI_TPCH_BLOCK;

    return (g == 0) ? 1 : (unsigned)g;
}

static __global__ void mgi_tpch_lines_kernel(mgi_tpch_params_t p,
                                             uint64_t begin, uint64_t n,
                                             uint64_t *out)
{
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i == 0) {
        out[0] = 0;
    }
    if (i < n) {
        out[i + 1] = mgi_tpch_lines(p.seed, begin + i);
    }
}

static __global__ void mgi_tpch_lineitem_kernel(mgi_tpch_params_t p,
                                                const mgi_tpch_zipf_t *z,
                                                uint64_t begin, uint64_t n,
                                                const uint64_t *offsets,
                                                mgi_tpch_lineitem_t c)
{
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    uint64_t row;
    unsigned l, nl;

    if (i >= n) {
        return;
    }
    row = offsets[i];
    nl  = (unsigned)(offsets[i + 1] - row);
    for (l = 0; l < nl; ++l) {
        mgi_tpch_lineitem_row(&p, z, &c, begin + i, l, row + l);
    }
}

static __global__ void mgi_tpch_orders_kernel(mgi_tpch_params_t p,
                                              uint64_t begin, uint64_t n,
                                              mgi_tpch_orders_t c)
{
    uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;

    if (i < n) {
        mgi_tpch_orders_row(&p, &c, begin + i, i);
    }
}

int mgi_tpch_gpu_zipf_upload(const mgi_tpch_zipf_t *z, mgi_tpch_zipf_t **d_z)
{
    mgi_tpch_zipf_t *d;

    MGI_TPCH_CUDA(cudaMalloc((void**)&d, sizeof(*d)));
    if (cudaMemcpy(d, z, sizeof(*d), cudaMemcpyHostToDevice) != cudaSuccess) {
        fprintf(stderr, "mgi_tpch: cudaMemcpy of the Zipf table failed\n");
        cudaFree(d);
        return -1;
    }
    *d_z = d;
    return 0;
}

int mgi_tpch_gpu_lineitem_offsets(const mgi_tpch_params_t *p, uint64_t begin,
                                  uint64_t end, uint64_t **d_offsets,
                                  uint64_t *count, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    uint64_t n = end - begin, total;
    uint64_t *off = NULL;
    void *tmp = NULL;
    size_t tmp_size = 0;

    MGI_TPCH_CUDA(cudaMalloc((void**)&off, (n + 1) * sizeof(*off)));
    mgi_tpch_lines_kernel<<<mgi_tpch_grid(n), MGI_TPCH_BLOCK, 0, s>>>(
            *p, begin, n, off);
    MGI_TPCH_CUDA(cudaGetLastError());
    if (n > 0) {
        MGI_TPCH_CUDA(cub::DeviceScan::InclusiveSum(tmp, tmp_size, off + 1,
                                                    off + 1, n, s));
        MGI_TPCH_CUDA(cudaMallocAsync(&tmp, tmp_size + 1, s));
        MGI_TPCH_CUDA(cub::DeviceScan::InclusiveSum(tmp, tmp_size, off + 1,
                                                    off + 1, n, s));
        MGI_TPCH_CUDA(cudaFreeAsync(tmp, s));
    }
    MGI_TPCH_CUDA(cudaMemcpyAsync(&total, off + n, sizeof(total),
                                  cudaMemcpyDeviceToHost, s));
    MGI_TPCH_CUDA(cudaStreamSynchronize(s));
    *d_offsets = off;
    *count     = total;
    return 0;
}

int mgi_tpch_gpu_lineitem_gen(const mgi_tpch_params_t *p,
                              const mgi_tpch_zipf_t *d_z, uint64_t begin,
                              uint64_t end, const uint64_t *d_offsets,
                              const mgi_tpch_lineitem_t *c, void *stream)
{
    uint64_t n = end - begin;

    mgi_tpch_lineitem_kernel<<<mgi_tpch_grid(n), MGI_TPCH_BLOCK, 0,
                               (cudaStream_t)stream>>>(*p, d_z, begin, n,
                                                       d_offsets, *c);
    MGI_TPCH_CUDA(cudaGetLastError());
    return 0;
}

int mgi_tpch_gpu_orders_gen(const mgi_tpch_params_t *p, uint64_t begin,
                            uint64_t end, const mgi_tpch_orders_t *c,
                            void *stream)
{
    uint64_t n = end - begin;

    mgi_tpch_orders_kernel<<<mgi_tpch_grid(n), MGI_TPCH_BLOCK, 0,
                             (cudaStream_t)stream>>>(*p, begin, n, *c);
    MGI_TPCH_CUDA(cudaGetLastError());
    return 0;
}

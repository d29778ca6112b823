/**
 * Compile-only check of the region device API (mgi/mgi_region_device.cuh)
 * under nvcc: every thread-, warp- and block-level call, in the two
 * kernels of docs/regions.md (a producer that pushes tiles with
 * put_signal, a consumer that waits for them) and a gather of remote
 * rows. Not run here (no GPU); mgi_mgg.cu / mgi_proact.cu of
 * bench/workloads run them on the GPU machine.
 */
#include <mgi/mgi.h>
#include <mgi/mgi_region_device.cuh>

/* docs/regions.md: block b fills tile b, then pushes it to rank `peer`
 * and sets the tile's signal word there to `epoch` */
__global__ void produce(mgi_dev_region_t r, uint32_t peer, size_t tile,
                        uint64_t epoch, int *err)
{
    char *mine = r.base + (size_t)r.nranks * 8 + blockIdx.x * tile;
    ucs_status_t st;

    for (size_t i = threadIdx.x; i < tile; i += blockDim.x) {
        mine[i] = (char)(i + blockIdx.x);
    }
    __syncthreads();    /* the block's stores, before its push */
    st = mgi_dev_region_put_signal_block(&r, peer,
                                         (size_t)r.nranks * 8 +
                                         blockIdx.x * tile, mine, tile,
                                         8 * blockIdx.x, epoch);
    if ((st != UCS_OK) && (threadIdx.x == 0)) {
        atomicExch(err, (int)st);
    }
}

/* the consumer: tile b may be read once its word says `epoch` */
__global__ void consume(mgi_dev_region_t r, size_t tile, uint64_t epoch,
                        unsigned long long *sum, int *err)
{
    const char *t = r.base + (size_t)r.nranks * 8 + blockIdx.x * tile;
    unsigned long long s = 0;
    ucs_status_t st;

    st = mgi_dev_region_wait_signal_block(&r, 8 * blockIdx.x,
                                          MGI_REGION_CMP_GE, epoch, 0);
    if (st != UCS_OK) {
        if (threadIdx.x == 0) {
            atomicExch(err, (int)st);
        }
        return;
    }
    for (size_t i = threadIdx.x; i < tile; i += blockDim.x) {
        s += (unsigned char)t[i];
    }
    atomicAdd(sum, s);
}

/* every call once: warp gets of remote rows, thread puts, fences, quiets */
__global__ void every_call(mgi_dev_region_t r, const uint32_t *rows,
                           unsigned nrows, size_t row_bytes, char *out,
                           int *err)
{
    const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
    uint64_t w;
    ucs_status_t st = UCS_OK, s2;

    if (warp < nrows) {
        const uint32_t peer = rows[warp] % r.nranks;
        st = mgi_dev_region_get_warp(&r, out + warp * row_bytes, peer,
                                     (rows[warp] / r.nranks) * row_bytes,
                                     row_bytes);
        s2 = mgi_dev_region_put_warp(&r, peer, 0, out, 8);
        st = (st == UCS_OK) ? s2 : st;
        s2 = mgi_dev_region_put_signal_warp(&r, peer, 8, out, 8, 0, 1);
        st = (st == UCS_OK) ? s2 : st;
        s2 = mgi_dev_region_quiet_warp(&r);
        st = (st == UCS_OK) ? s2 : st;
        s2 = mgi_dev_region_wait_signal_warp(&r, 0, MGI_REGION_CMP_NE, 0,
                                             1000000);
        st = (st == UCS_OK) ? s2 : st;
    }
    s2 = mgi_dev_region_get_block(&r, out, 0, 0, 64);
    st = (st == UCS_OK) ? s2 : st;
    s2 = mgi_dev_region_put_block(&r, 0, 0, out, 64);
    st = (st == UCS_OK) ? s2 : st;
    s2 = mgi_dev_region_quiet_block(&r);
    st = (st == UCS_OK) ? s2 : st;
    if (threadIdx.x == 0) {
        s2 = mgi_dev_region_get(&r, out, 0, 0, 3);
        st = (st == UCS_OK) ? s2 : st;
        s2 = mgi_dev_region_put(&r, 0, 1, out, 5);
        st = (st == UCS_OK) ? s2 : st;
        s2 = mgi_dev_region_fence(&r);
        st = (st == UCS_OK) ? s2 : st;
        s2 = mgi_dev_region_signal(&r, 0, 8, 2);
        st = (st == UCS_OK) ? s2 : st;
        s2 = mgi_dev_region_put_signal(&r, 0, 16, out, 7, 8, 3);
        st = (st == UCS_OK) ? s2 : st;
        s2 = mgi_dev_region_test_signal(&r, 8, MGI_REGION_CMP_EQ, 3, &w);
        st = ((st == UCS_OK) && (s2 != UCS_INPROGRESS)) ? s2 : st;
        s2 = mgi_dev_region_quiet(&r);
        st = (st == UCS_OK) ? s2 : st;
    }
    if (st != UCS_OK) {
        atomicExch(err, (int)st);
    }
}

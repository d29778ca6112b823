/**
 * What a kernel's launch should know before it runs: how many of its
 * blocks fit beside an endpoint's sorter, and whether the typed tile send
 * serves a channel. Host code (nvcc for mgi_device.cuh's host-and-device
 * check).
 */
#include "mgi_int.h"

#include <algorithm>
#include <cuda_runtime.h>

#include <mgi/mgi_device.cuh>

/* Blocks of a kernel (regs registers and smem bytes of shared memory a
 * block, `threads` threads) that fit in what is left of an SM: threads,
 * registers, shared memory, block slots. Registers go to warps in units
 * of 256, shared memory to blocks with 1 KiB reserved each. */
static unsigned mgi_launch_fit(long thr, long regs, long smem, long slots,
                               unsigned threads, unsigned kregs,
                               size_t ksmem)
{
    const long warps = (threads + 31) / 32;
    const long r     = warps * (((long)kregs * 32 + 255) / 256 * 256);
    const long s     = (long)ksmem + 1024;
    long n           = std::min(thr / (long)threads, slots);

    if (r > 0) {
        n = std::min(n, regs / r);
    }
    n = std::min(n, smem / s);
    return (n > 0) ? (unsigned)n : 0u;
}

ucs_status_t mgi_context_user_blocks(mgi_context_h ctx, int device,
                                     const void *kernel, unsigned threads,
                                     size_t smem, unsigned *blocks_p)
{
    int old = -1, nsm, thr, regs, shm, slots, per_sm = 0;
    unsigned sb, st, sregs, sorter_sms, beside;
    cudaFuncAttributes fa;
    ucs_status_t status = UCS_OK;
    size_t ssmem;
    long srg;

    if ((device < 0) || (kernel == NULL) || (threads == 0) ||
        (threads > 1024)) {
        ucs_error("mgi context %p: user blocks asked for device %d, %s, %u "
                  "threads: a CUDA device, a kernel and 1..1024 threads",
                  ctx, device, (kernel == NULL) ? "no kernel" : "a kernel",
                  threads);
        return UCS_ERR_INVALID_PARAM;
    }
    mgi_gpu_sorter_use(ctx, &sb, &st, &sregs, &ssmem);
    cudaGetDevice(&old);
    status = MGI_CUDA_CALL(cudaSetDevice(device), "device %d", device);
    if (status != UCS_OK) {
        return status;
    }
    if ((MGI_CUDA_CALL(cudaDeviceGetAttribute(&nsm,
                       cudaDevAttrMultiProcessorCount, device),
                       "device %d", device) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaDeviceGetAttribute(&thr,
                       cudaDevAttrMaxThreadsPerMultiProcessor, device),
                       "device %d", device) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaDeviceGetAttribute(&regs,
                       cudaDevAttrMaxRegistersPerMultiprocessor, device),
                       "device %d", device) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaDeviceGetAttribute(&shm,
                       cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                       device), "device %d", device) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaDeviceGetAttribute(&slots,
                       cudaDevAttrMaxBlocksPerMultiprocessor, device),
                       "device %d", device) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaFuncGetAttributes(&fa, kernel), "device %d: "
                       "the user kernel", device) != UCS_OK) ||
        (MGI_CUDA_CALL(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                       &per_sm, kernel, (int)threads, smem), "device %d: "
                       "the user kernel, %u threads, %zu bytes of shared "
                       "memory", device, threads, smem) != UCS_OK)) {
        status = UCS_ERR_IO_ERROR;
    }
    if (old >= 0) {
        cudaSetDevice(old);
    }
    if (status != UCS_OK) {
        return status;
    }
    if (per_sm == 0) {
        ucs_error("mgi context %p: the kernel runs no block of %u threads "
                  "(%d registers a thread, %zu + %zu bytes of shared memory) "
                  "on device %d (a kernel declared __launch_bounds__(%u) keeps "
                  "to the registers that %u threads may have)", ctx, threads,
                  fa.numRegs, fa.sharedSizeBytes, smem, device, threads,
                  threads);
        return UCS_ERR_INVALID_PARAM;
    }
    /* an SM for each sorter block at worst (the scheduler spreads them),
     * with what that block leaves of it for the user's */
    sorter_sms = std::min(sb, (unsigned)nsm);
    srg        = (long)((st + 31) / 32) * (((long)sregs * 32 + 255) / 256 *
                                           256);
    beside     = std::min((unsigned)per_sm,
                          mgi_launch_fit(thr - (long)st, regs - srg,
                                         shm - (long)ssmem - 1024, slots - 1,
                                         threads, (unsigned)fa.numRegs,
                                         fa.sharedSizeBytes + smem));
    *blocks_p  = std::min((unsigned)(nsm - sorter_sms) * (unsigned)per_sm +
                          sorter_sms * beside, (unsigned)MGI_GPU_MAX_BLOCKS);
    ucs_debug("mgi context %p: %u blocks of %u threads fit beside a "
              "sorter's %u blocks of %u threads on device %d (%d SMs, %d of "
              "the user's an SM, %u beside a sorter block)", ctx, *blocks_p,
              threads, sb, st, device, nsm, per_sm, beside);
    return UCS_OK;
}

int mgi_ch_tile_fits(mgi_context_h ctx, mgi_ch_id_t ch, mgi_ep_id_t ep,
                     unsigned tuple_size, unsigned slots, int dst)
{
    mgi_dev_ch_t h;
    int fits;

    if (mgi_ch_device_handle(ctx, ch, ep, &h) != UCS_OK) {
        return 0;
    }
    fits = mgi_dev_tile_of_fits(&h, tuple_size, slots, dst);
    if (!fits) {
        ucs_debug("mgi channel %u: the typed tile send of %u-byte tuples "
                  "does not serve endpoint %u (schema %u bytes, %s, %u "
                  "destinations): the generic mgi_dev_send_block_tile does",
                  ch, tuple_size, ep, h.tuple_size,
                  h.direct ? "direct rings" : "through the sorters",
                  h.ndst);
    }
    return fits;
}

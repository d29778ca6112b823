/**
 * MGI device API: the deadlines of the device calls' waits, and the
 * reports that tell the host why a call or a kernel gave up
 * (mgi_context_device_error).
 *
 * A part of mgi/mgi_device.cuh, which includes its parts in order (each
 * uses those before it); kernels include <mgi/mgi_device.cuh>.
 */
#ifndef MGI_DEVICE_REPORT_CUH_
#define MGI_DEVICE_REPORT_CUH_

#ifndef MGI_DEVICE_CUH_
#  error "a part of the device API: include <mgi/mgi_device.cuh>"
#endif

/* ------------------------------------------------- bounds and reports
 * Every wait of a device call ends by h->timeout_ns (the context's
 * MGI_TIMEOUT_MS) and says why to the host (mgi_dev_report). A kernel's
 * own loops (send until taken, receive until EOF) bound themselves the
 * same way: take mgi_dev_deadline once, test mgi_dev_past in the loop,
 * and report MGI_DEV_ERR_KERNEL_TIMEOUT before it gives up; the host then
 * reads the reason with mgi_context_device_error. A device call that
 * gives up answers MGI_DEV_TIMED_OUT (mgi_dev_status_t, mgi_dev_ch.h). */

/* Nanoseconds of the GPU's global timer (the same on every SM). */
__device__ static inline uint64_t mgi_dev_now(void)
{
    uint64_t t;

    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* When a wait that starts now must end: the context's timeout from now. */
__device__ static inline uint64_t mgi_dev_deadline(const mgi_dev_ch_t *h)
{
    return mgi_dev_now() + ((h->timeout_ns != 0) ? h->timeout_ns :
                            60000000000ull);
}

__device__ static inline int mgi_dev_past(uint64_t deadline)
{
    return mgi_dev_now() > deadline;
}

/* Tell the host why a device call (or the kernel) gave up: the first
 * report of the context is kept, with the channel, endpoint and block
 * (mgi_context_device_error; mgi_ch_delete names it too). Plain stores
 * to mapped host memory: two reports at once keep one of them. */
__device__ static inline void mgi_dev_report(const mgi_dev_ch_t *h,
                                             uint32_t code)
{
    volatile uint32_t *e = h->dev_err;

    if ((e == NULL) || (e[0] != MGI_DEV_ERR_NONE)) {
        return;
    }
    e[1] = ((uint32_t)h->ch << 16) | h->self;
    e[2] = blockIdx.x;
    __threadfence_system();
    e[0] = code;
    __threadfence_system();
}

/* The code of the context's first report, MGI_DEV_ERR_NONE if none. */
__device__ static inline uint32_t mgi_dev_reported(const mgi_dev_ch_t *h)
{
    return (h->dev_err != NULL) ? h->dev_err[0] : MGI_DEV_ERR_NONE;
}

#endif

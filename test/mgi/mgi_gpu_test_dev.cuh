/**
 * mgi_gpu_test's device side shared by the GroupBy and the stream kernels:
 * the global timer, block receives and sends that keep receiving while a
 * stage ring is full, the flush and receive until EOF, and per-block sums
 * into mapped host memory. Each unit that includes it compiles its own
 * copy (whole-program device code, no -rdc): its file-scope __device__
 * and __shared__ variables are that unit's own, host shadows included
 * (g_send_backoff_ns: mgi_gpu_stream.cu sets its copy for its kernel; the
 * GroupBy's, never set, stays 0).
 */
#ifndef MGI_GPU_TEST_DEV_CUH
#define MGI_GPU_TEST_DEV_CUH

#include "mgi_gpu_test.h"

/* Bounded spins: the global timer, in ns. */
__device__ static inline unsigned long long dev_now(void)
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* Block: count the block as started in *started, the word in mapped
 * host memory that wait_resident reads while the kernel runs (res may be
 * device memory, copied back after the kernel), and its start in res. */
__device__ static inline void block_started(dev_result *res,
                                            unsigned *started)
{
    if (threadIdx.x == 0) {
        atomicAdd(started, 1u);
        atomicMin(&res->t_begin, dev_now());
    }
}

enum { PH_SEND = 1, PH_FLUSH = 2, PH_RECV = 4 };

/* Block: past the deadline? The same answer for every thread (the device
 * calls hold barriers: a thread leaving alone would hang the others). */
__device__ static inline int timed_out(unsigned long long deadline)
{
    return __syncthreads_or(dev_now() > deadline);
}

#define RECV_TUPLES 256
#define RECV_EACH_BYTES (1u << 20)

/* receive calls of this block (thread 0), for the benchmark's report */
__shared__ unsigned long long g_recv_calls, g_recv_empty;
/* when receive calls of this block first and last returned tuples
 * (%globaltimer, thread 0; 0: none yet) */
__shared__ unsigned long long g_t_recv0, g_t_recv1;
/* block sends of this block and those refused (thread 0) */
__shared__ unsigned long long g_send_calls, g_send_full;
/* receive with the thread-level mgi_dev_recv (thread 0) */
__shared__ int g_thread_recv;
/* clock cycles of this block in mgi_dev_send_block and in block_recv
 * (thread 0: every thread of the block is in the same call) */
__shared__ unsigned long long g_cyc_send, g_cyc_recv;

/* Block: receive what is there, apply f to every tuple. buf: through
 * mgi_dev_recv_block into buf (RECV_TUPLES tuples at most), or with
 * g_thread_recv through mgi_dev_recv by thread 0; NULL: in place,
 * mgi_dev_recv_block_each (RECV_EACH_BYTES at most). Returns bytes, 0 or
 * MGI_DEV_EOF. */
template <typename F>
__device__ static int block_recv(const mgi_dev_ch_t *h, char *buf,
                                 unsigned tsize, F f)
{
    __shared__ int s_n;
    const long long c0 = clock64();
    int n;

    if (buf == NULL) {
        n = mgi_dev_recv_block_each(h, RECV_EACH_BYTES,
                                    [&](const char *t, unsigned len) {
                                        f(t);
                                    });
    } else if (g_thread_recv) {
        if (threadIdx.x == 0) {
            s_n = mgi_dev_recv(h, buf, RECV_TUPLES * tsize);
        }
        __syncthreads();
        n = s_n;
        __syncthreads();    /* s_n read by all before the next call */
    } else {
        n = mgi_dev_recv_block(h, buf, RECV_TUPLES * tsize);
    }

    if (threadIdx.x == 0) {
        ++g_recv_calls;
        g_recv_empty += (n == 0);
        if (n > 0) {
            g_t_recv1 = dev_now();
            g_t_recv0 = g_t_recv0 ? g_t_recv0 : g_t_recv1;
        }
    }
    if ((buf != NULL) && (n > 0)) {
        for (unsigned i = threadIdx.x; i < n / tsize; i += blockDim.x) {
            f(buf + (size_t)i * tsize);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        g_cyc_recv += clock64() - c0;
    }
    return n;
}

/* Pause of a source block whose send found its stage ring full (-S). */
__device__ unsigned g_send_backoff_ns;

/* Block: send(), which returns nonzero in every thread once it took
 * something, until it takes, receiving meanwhile (block_send). */
template <typename S, typename F>
__device__ static int block_send_by(const mgi_dev_ch_t *h, S send,
                                    char *rbuf, unsigned rsize, F f,
                                    unsigned long long deadline)
{
    for (;;) {
        const long long c0 = clock64();
        int ok = send();
        if (threadIdx.x == 0) {
            ++g_send_calls;
            g_send_full += !ok;
            g_cyc_send  += clock64() - c0;
        }
        if (ok) {
            return 0;
        }
        if (rsize > 0) {
            block_recv(h, rbuf, rsize, f);
        } else if (g_send_backoff_ns > 0) {
            __nanosleep(g_send_backoff_ns);
        }
        if (timed_out(deadline)) {
            return -1;
        }
    }
}

/* Block: send one tuple per thread (len 0: none) until the block's
 * reservation takes, receiving meanwhile. Returns 0, or -1 on timeout. */
template <typename F>
__device__ static int block_send(const mgi_dev_ch_t *h, const void *t,
                                 unsigned len, int dst, char *rbuf,
                                 unsigned rsize, F f,
                                 unsigned long long deadline)
{
    return block_send_by(h, [&]() {
        return __syncthreads_or(mgi_dev_send_block(h, t, len, dst) > 0);
    }, rbuf, rsize, f, deadline);
}

/* Block: flush without blocking the receive side; then, if this endpoint
 * is a destination, receive until EOF. Returns 0 or a PH_* timeout bit. */
template <typename F>
__device__ static unsigned block_finish(const mgi_dev_ch_t *h, int flush,
                                        char *rbuf, unsigned rsize, F f,
                                        unsigned long long deadline)
{
    __shared__ uint32_t flush_state;
    int r;

    if (threadIdx.x == 0) {
        flush_state = 0;
    }
    __syncthreads();
    while (flush && !mgi_dev_flush_nb(h, &flush_state)) {
        if (rsize > 0) {
            block_recv(h, rbuf, rsize, f);
        }
        if (timed_out(deadline)) {
            return PH_FLUSH;
        }
    }
    if (rsize == 0) {
        return 0;
    }
    for (;;) {
        r = block_recv(h, rbuf, rsize, f);
        if (r == MGI_DEV_EOF) {
            return 0;
        }
        if (timed_out(deadline) && (r == 0)) {
            return PH_RECV;
        }
    }
}

/* global_ring: all blocks share one stage ring (one flush for it): block 0
 * flushes once every block is done sending; the others only receive. */
__device__ static int block_flushes(dev_result *res, int global_ring,
                                    unsigned long long deadline)
{
    __shared__ int s_wait;

    if (!global_ring) {
        return 1;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        __threadfence();
        atomicAdd(&res->done_sending, 1u);
        s_wait = 0;
        if (blockIdx.x == 0) {
            while (atomicAdd(&res->done_sending, 0u) < gridDim.x) {
                if (dev_now() > deadline) {
                    s_wait = 1;
                    break;
                }
            }
        }
    }
    __syncthreads();
    return (blockIdx.x == 0) && !s_wait;
}

/* Block: add every thread's v into *dst (mapped host memory) with one
 * atomic per block: per-tuple atomics over PCIe would cost more than the
 * whole transfer. */
__device__ static void block_add(unsigned long long *dst,
                                 unsigned long long v)
{
    __shared__ unsigned long long s_sum;

    __syncthreads();
    if (threadIdx.x == 0) {
        s_sum = 0;
    }
    __syncthreads();
    if (v != 0) {
        atomicAdd(&s_sum, v);
    }
    __syncthreads();
    if ((threadIdx.x == 0) && (s_sum != 0)) {
        atomicAdd(dst, s_sum);
    }
}

#endif

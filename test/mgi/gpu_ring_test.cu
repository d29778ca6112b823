/**
 * GPU check of the MGI ring protocol and the device send API
 * (mgi/mgi_ring.h, mgi/mgi_device.cuh): one kernel, block 0 consumes (as a
 * sorter would), the other blocks produce with mgi_dev_send,
 * mgi_dev_send_warp or mgi_dev_send_block into one shared stage ring in
 * device memory. The consumer checks every tuple's bytes, per-producer
 * FIFO order and the total count and checksum.
 *
 *   gpu_ring_test [thread|warp|block] [tuples per thread]
 *
 * Not part of `make check` (no GPU there); run on a GPU machine.
 */
#include <mgi/mgi_device.cuh>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(_call) \
    do { \
        cudaError_t _e = (_call); \
        if (_e != cudaSuccess) { \
            fprintf(stderr, "%s: %s\n", #_call, cudaGetErrorString(_e)); \
            exit(1); \
        } \
    } while (0)

struct tuple {
    uint32_t producer;   /* global thread id of the producer */
    uint32_t seq;
    uint64_t check;
};

enum { MODE_THREAD, MODE_WARP, MODE_BLOCK, MODE_BATCH };

struct result {
    unsigned long long count;
    unsigned long long sum;
    unsigned long long pads;
    unsigned           errors;
    unsigned           first_error;
    unsigned           timeout;
};

__device__ __host__ static uint64_t tuple_check(uint32_t p, uint32_t s)
{
    uint64_t x = ((uint64_t)p << 32) | s;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

__global__ void ring_kernel(mgi_dev_ch_t ch, mgi_ring_t *ring, int mode,
                            unsigned per_thread, unsigned long long total,
                            uint32_t *last_seq, result *res)
{
    const unsigned long long spin_limit = 1ull << 31;

    if (blockIdx.x == 0) {
        /* consumer: thread 0 walks segments, as a sorter's first thread */
        if (threadIdx.x != 0) {
            return;
        }
        const uint32_t cap = mgi_ring_cap(ring);
        unsigned long long spins = 0;

        while (res->count < total) {
            mgi_seg_hdr_t *seg = mgi_ring_peek(ring, 0);
            if (seg == NULL) {
                if (++spins > spin_limit) {
                    res->timeout = 1;
                    return;
                }
                continue;
            }
            spins = 0;
            uint32_t off = 0;
            mgi_msg_hdr_t *h;
            while ((h = mgi_seg_next(seg, cap, &off)) != NULL) {
                /* batch mode: a message holds the tuples of a block send */
                const uint32_t k = (mode == MODE_BATCH) ?
                                   h->len / sizeof(tuple) : 1;
                if ((k == 0) || (h->len != k * sizeof(tuple)) ||
                    (h->ch != 5) || (h->dst != 7)) {
                    if (res->errors++ == 0) {
                        res->first_error = off;
                    }
                }
                for (uint32_t i = 0; i < k; ++i) {
                    tuple t;
                    memcpy(&t, (char*)h + MGI_MSG_HDR_SIZE + i * sizeof(t),
                           sizeof(t));
                    if ((t.check != tuple_check(t.producer, t.seq)) ||
                        (t.seq != last_seq[t.producer])) {
                        if (res->errors++ == 0) {
                            res->first_error = off;
                        }
                    }
                    last_seq[t.producer] = t.seq + 1;
                    res->count++;
                    res->sum += t.check;
                }
                off += mgi_msg_size(h->len);
            }
            mgi_ring_release(ring, 1);
        }
        return;
    }

    /* producers */
    const uint32_t me = (blockIdx.x - 1) * blockDim.x + threadIdx.x;
    for (uint32_t s = 0; s < per_thread; ++s) {
        tuple t = {me, s, tuple_check(me, s)};
        unsigned long long spins = 0;
        int ret;

        for (;;) {
            if (mode == MODE_THREAD) {
                ret = mgi_dev_send(&ch, &t, sizeof(t), 7);
            } else if (mode == MODE_WARP) {
                ret = mgi_dev_send_warp(&ch, &t, sizeof(t), 7);
            } else {   /* block; batch: ch.tuple_size set */
                ret = mgi_dev_send_block(&ch, &t, sizeof(t), 7);
            }
            if (ret == (int)sizeof(t)) {
                break;
            }
            if (++spins > spin_limit) {
                res->timeout = 2;
                return;
            }
        }
    }
    /* the last partial segment: every producer closes (idempotent) */
    if (((mode != MODE_BLOCK) && (mode != MODE_BATCH)) ||
        (threadIdx.x == 0)) {
        while (mgi_ring_append_close(mgi_dev_stage(&ch)) != MGI_RING_OK) {
        }
    }
}

int main(int argc, char **argv)
{
    const char *mode_s  = (argc > 1) ? argv[1] : "thread";
    unsigned per_thread = (argc > 2) ? atoi(argv[2]) : 200;
    int mode = !strcmp(mode_s, "warp") ? MODE_WARP :
               !strcmp(mode_s, "block") ? MODE_BLOCK :
               !strcmp(mode_s, "batch") ? MODE_BATCH : MODE_THREAD;
    const unsigned blocks = 32, threads = 128;
    const uint32_t depth = 8, seg_size = 4096;
    unsigned long long total = (unsigned long long)blocks * threads *
                               per_thread, want_sum = 0;
    size_t ring_bytes = mgi_ring_mem_size(depth, seg_size);
    mgi_ring_t *h_ring, *d_ring, **d_stage;
    uint32_t *d_last;
    uint16_t *d_dst;
    result *d_res, res;
    mgi_dev_ch_t ch;
    cudaEvent_t t0, t1;
    float ms;

    /* the ring is initialized on the host and copied over: the same code */
    h_ring = (mgi_ring_t*)calloc(1, ring_bytes);
    mgi_ring_init(h_ring, depth, seg_size, MGI_RING_F_APPEND);
    CHECK(cudaMalloc(&d_ring, ring_bytes));
    CHECK(cudaMemcpy(d_ring, h_ring, ring_bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&d_stage, sizeof(*d_stage)));
    CHECK(cudaMemcpy(d_stage, &d_ring, sizeof(d_ring),
                     cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&d_last, sizeof(uint32_t) * blocks * threads));
    CHECK(cudaMemset(d_last, 0, sizeof(uint32_t) * blocks * threads));
    CHECK(cudaMalloc(&d_res, sizeof(result)));
    CHECK(cudaMemset(d_res, 0, sizeof(result)));
    CHECK(cudaMalloc(&d_dst, sizeof(uint16_t)));

    memset(&ch, 0, sizeof(ch));
    ch.ch       = 5;
    ch.self     = 1;
    ch.ndst     = 1;
    ch.nsrc     = 1;
    ch.dst      = d_dst;
    ch.part_key = -1;
    ch.nblocks  = 1;        /* every block shares one stage ring */
    ch.stage    = d_stage;
    /* batch: a schema, so mgi_dev_send_block batches a block's tuples
     * into one message; the others send one message per tuple */
    ch.tuple_size = (mode == MODE_BATCH) ? sizeof(tuple) : 0;
    ch.msg_batch  = MGI_MSG_BATCH_BYTES;
    ch.tile_batch = MGI_MSG_BATCH_BYTES;

    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    CHECK(cudaEventRecord(t0));
    ring_kernel<<<blocks + 1, threads>>>(ch, d_ring, mode, per_thread, total,
                                         d_last, d_res);
    CHECK(cudaGetLastError());
    CHECK(cudaEventRecord(t1));
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaEventElapsedTime(&ms, t0, t1));
    CHECK(cudaMemcpy(&res, d_res, sizeof(res), cudaMemcpyDeviceToHost));

    for (uint32_t p = 0; p < blocks * threads; ++p) {
        for (uint32_t s = 0; s < per_thread; ++s) {
            want_sum += tuple_check(p, s);
        }
    }
    printf("gpu_ring_test %s: %llu of %llu tuples, sum %s, %u errors "
           "(first at offset %u), timeout %u, %.3f ms, %.1f Mtuples/s\n",
           mode_s, res.count, total, (res.sum == want_sum) ? "OK" : "BAD",
           res.errors, res.first_error, res.timeout, ms,
           res.count / (ms * 1e3));
    return ((res.count == total) && (res.sum == want_sum) &&
            (res.errors == 0) && (res.timeout == 0)) ? 0 : 1;
}

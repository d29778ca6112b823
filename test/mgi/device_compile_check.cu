/**
 * Compile-only check of the MGI device API (mgi/mgi_device.cuh) and the
 * shared ring protocol under nvcc: a GroupBy kernel after the paper's
 * Fig. 3, using thread-, warp- and block-level calls (each of them
 * serves both channel kinds, direct rings and sorters), by the variants
 * named for their level and by the entry points that take the level as a
 * template argument. Not run (no GPU in CI); the GPU suite runs the real
 * thing.
 */
#include <mgi/mgi_device.cuh>

struct tuple {
    int  key;
    long val;
} __attribute__((packed));

/* tile_map's rule: destination number 1 for odd values, else 0 */
struct odd_val {
    __device__ uint32_t operator()(const void *t) const
    {
        return (uint32_t)(((const long*)t)[1] & 1);
    }
};

__global__ void group_by(mgi_dev_ch_t ch, const tuple *part, unsigned n,
                         unsigned long long *agg, unsigned nbuckets)
{
    __shared__ unsigned tot_send;
    __shared__ uint32_t sent_to[64];   /* per destination number */
    tuple buf[8];
    unsigned i;
    int ret;

    if (threadIdx.x == 0) {
        tot_send = 0;
    }
    __syncthreads();
    while (tot_send < n) {
        i = atomicAdd(&tot_send, 1);
        if (i < n) {
            while (mgi_dev_send(&ch, &part[i], sizeof(tuple),
                                MGI_DEV_DST_AUTO) == 0) {
                ret = mgi_dev_recv(&ch, buf, sizeof(buf));
                for (int k = 0; k < ret / (int)sizeof(tuple); ++k) {
                    atomicAdd(&agg[buf[k].key % nbuckets], buf[k].val);
                }
            }
        }
        __syncthreads();
    }
    /* warp- and block-level sends of one more tuple each */
    mgi_dev_send_warp(&ch, &part[0], sizeof(tuple), MGI_DEV_DST_AUTO);
    mgi_dev_send_block(&ch, &part[0], sizeof(tuple), 0);
    mgi_dev_send_block_tile(&ch, part, n, MGI_DEV_DST_AUTO);
    mgi_dev_send_block_tile(&ch, part, n, MGI_DEV_DST_AUTO, sent_to);
    /* the typed tile send: tuples of whole 8-byte words */
    mgi_dev_send_block_tile_of<2 * sizeof(long)>(&ch, buf, 4,
                                                 MGI_DEV_DST_AUTO, sent_to);
    mgi_dev_send_block_tile_of<2 * sizeof(long), MGI_DEV_TILE_MANY>(
            &ch, buf, 4, MGI_DEV_DST_AUTO, sent_to);
    /* a destination per tuple by the caller's rule, not the key modulo */
    mgi_dev_send_block_tile_map<2 * sizeof(long)>(&ch, buf, 4, odd_val(),
                                                  sent_to);
    if (mgi_dev_flush(&ch, 0) != 0) {
        return;     /* timed out or failed: the host learns why */
    }
    /* a receive loop with a bound: the kernel's own wait reports */
    const uint64_t dl = mgi_dev_deadline(&ch);
    do {
        ret = mgi_dev_recv(&ch, buf, sizeof(buf));
        for (int k = 0; k < ret / (int)sizeof(tuple); ++k) {
            atomicAdd(&agg[buf[k].key % nbuckets], buf[k].val);
        }
        if ((ret == 0) && mgi_dev_past(dl)) {
            mgi_dev_report(&ch, MGI_DEV_ERR_KERNEL_TIMEOUT);
            return;
        }
    } while ((ret != MGI_DEV_EOF) && (mgi_dev_reported(&ch) == 0));
    /* block-level receives: copied, and in place */
    ret = mgi_dev_recv_block(&ch, buf, sizeof(buf));
    ret = mgi_dev_recv_block_each(&ch, 1u << 20,
                                  [&](const char *t, unsigned len) {
                                      const tuple *x = (const tuple*)t;
                                      atomicAdd(&agg[x->key % nbuckets],
                                                x->val);
                                  });
}

/* The same calls through the entry points that take the level as a
 * template argument, and the flush's status as mgi_dev_status_t. */
__global__ void group_by_levels(mgi_dev_ch_t ch, const tuple *part,
                                unsigned n, unsigned long long *agg,
                                unsigned nbuckets, int *status)
{
    __shared__ uint32_t sent_to[64];
    __shared__ uint32_t flush_state;
    tuple buf[8];
    const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    const auto add = [&](const char *t, unsigned) {
        const tuple *x = (const tuple*)t;
        atomicAdd(&agg[x->key % nbuckets], x->val);
    };
    mgi_dev_status_t st;
    int ret;

    if (i < n) {
        while (mgi_dev_send<MGI_DEV_THREAD>(&ch, &part[i], sizeof(tuple),
                                            MGI_DEV_DST_AUTO) == 0) {
            ret = mgi_dev_recv<MGI_DEV_THREAD>(&ch, buf, sizeof(buf));
            for (int k = 0; k < ret / (int)sizeof(tuple); ++k) {
                atomicAdd(&agg[buf[k].key % nbuckets], buf[k].val);
            }
        }
    }
    mgi_dev_send<MGI_DEV_WARP>(&ch, &part[0], sizeof(tuple),
                               MGI_DEV_DST_AUTO);
    mgi_dev_send<MGI_DEV_BLOCK>(&ch, &part[0], sizeof(tuple), 0);
    mgi_dev_send_tile<MGI_DEV_BLOCK>(&ch, part, n, MGI_DEV_DST_AUTO);
    mgi_dev_send_tile<MGI_DEV_BLOCK>(&ch, part, n, MGI_DEV_DST_AUTO,
                                     sent_to);
    mgi_dev_send_tile_of<MGI_DEV_BLOCK, 2 * sizeof(long)>(
            &ch, buf, 4, MGI_DEV_DST_AUTO, sent_to);
    mgi_dev_send_tile_of<MGI_DEV_BLOCK, 2 * sizeof(long), MGI_DEV_TILE_ONE>(
            &ch, buf, 4, 0);
    mgi_dev_send_tile_map<MGI_DEV_BLOCK, 2 * sizeof(long)>(&ch, buf, 4,
                                                           odd_val());
    if (threadIdx.x == 0) {
        flush_state = 0;
    }
    __syncthreads();
    while (!mgi_dev_flush_nb<MGI_DEV_BLOCK>(&ch, &flush_state)) {
        mgi_dev_recv_each<MGI_DEV_BLOCK>(&ch, 1u << 20, add);
    }
    st = mgi_dev_flush<MGI_DEV_BLOCK>(&ch, 0);  /* again: done at once */
    switch (st) {
    case MGI_DEV_OK:
        break;
    case MGI_DEV_TIMED_OUT:     /* reported: the host learns why */
    case MGI_DEV_FAILED:        /* mgi_dev_failed(&ch) */
    case MGI_DEV_EOF:           /* not a flush's */
        if (threadIdx.x == 0) {
            status[blockIdx.x] = st;
        }
        return;
    }
    do {
        ret = mgi_dev_recv<MGI_DEV_BLOCK>(&ch, buf, sizeof(buf));
        if (ret == 0) {
            ret = mgi_dev_recv_to<MGI_DEV_BLOCK>(
                    &ch, sizeof(buf), [&](uint32_t, uint32_t done) {
                        return (char*)buf + done;
                    });
        }
    } while ((ret != MGI_DEV_EOF) && !mgi_dev_failed(&ch));
    if (threadIdx.x == 0) {
        status[blockIdx.x] = (ret < 0) ? ret : (int)MGI_DEV_OK;
    }
}

/* the ring protocol is the same code on both sides */
__global__ void ring_roundtrip(mgi_ring_t *r, unsigned *out)
{
    mgi_msg_hdr_t h = {1, 2, 3, 8};
    unsigned long long v = 42;
    unsigned pos;

    out[0] = mgi_ring_append(r, &h, &v, &pos);
    out[1] = mgi_ring_append_close(r);
    out[2] = mgi_ring_ready(r, 4);
    out[3] = mgi_ring_enqueue_bulk(r, r, 0);
}

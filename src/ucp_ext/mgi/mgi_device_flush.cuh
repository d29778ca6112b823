/**
 * MGI device API: a block's EOF records and the flushes that wait for
 * their delivery (mgi_dev_flush, mgi_dev_flush_nb).
 *
 * A part of mgi/mgi_device.cuh, which includes its parts in order (each
 * uses those before it); kernels include <mgi/mgi_device.cuh>.
 */
#ifndef MGI_DEVICE_FLUSH_CUH_
#define MGI_DEVICE_FLUSH_CUH_

#ifndef MGI_DEVICE_CUH_
#  error "a part of the device API: include <mgi/mgi_device.cuh>"
#endif

/* The EOF record of a block's flush number `seq`: to every destination,
 * counting the channel's producers of this endpoint (every stage ring of
 * every user block sends one). */
__device__ static inline void mgi_dev_eof_msg(const mgi_dev_ch_t *h,
                                              uint32_t seq,
                                              mgi_msg_hdr_t *hdr,
                                              uint32_t payload[2])
{
    hdr->ch    = h->ch;
    hdr->dst   = MGI_EP_ID_ALL;
    hdr->src   = h->self;
    hdr->len   = MGI_MSG_LEN_EOF;
    payload[0] = h->nblocks * mgi_dev_ngroups(h);
    payload[1] = seq;
}

#define MGI_DEV_FLUSH_STEP 256u   /* flush numbers apart: the low bits of
                                     a flush state say which groups' rings
                                     took its EOF */

/* Thread 0: one step of a flush, *state 0 before the first. The flush's
 * number is taken from group 0's ring once its EOF is in, rounded up to a
 * multiple of MGI_DEV_FLUSH_STEP, and every group's EOF carries it; a ring
 * without room is tried again on the next step. *state is the number plus
 * a bit per group whose ring took the EOF. Returns 1 once every ring took
 * it and the sorter reported each delivered. */
__device__ static inline int mgi_dev_flush_step(const mgi_dev_ch_t *h,
                                                uint32_t *state)
{
    const unsigned ng  = mgi_dev_ngroups(h);
    const uint32_t all = (1u << ng) - 1;
    uint32_t payload[2], seq, bits = *state % MGI_DEV_FLUSH_STEP;
    mgi_msg_hdr_t hdr;
    mgi_ring_t *r;
    unsigned g;

    seq = (bits == 0) ?
          (mgi_ld_acq32(&mgi_dev_stage(h)->flush_seq) + MGI_DEV_FLUSH_STEP) &
          ~(MGI_DEV_FLUSH_STEP - 1) :
          *state - bits;
    mgi_dev_eof_msg(h, seq, &hdr, payload);
    for (g = 0; (g < ng) && ((g == 0) || (bits != 0)); ++g) {
        r = mgi_dev_stage_of(h, g);
        /* the EOF in a segment of its own: the tuples before it keep a
         * segment of one destination, which the sorter moves whole (with
         * MGI_LOOP_DIRECT, for this endpoint, to a final ring), where an
         * EOF among them made it walked, its tuples for this endpoint
         * through the loopback lane */
        if (((bits >> g) & 1) || (mgi_ring_append_close(r) != MGI_RING_OK) ||
            (mgi_ring_append(r, &hdr, payload, NULL) != MGI_RING_OK)) {
            continue;
        }
        if (g == 0) {
            /* the number is taken only once its EOF is in */
            mgi_st_rel32(&r->flush_seq, seq);
        }
        mgi_ring_append_close(r);       /* FULL: the EOF's segment is closed */
        bits |= 1u << g;
    }
    if (bits != 0) {
        *state = seq | bits;
    }
    if (bits != all) {
        return 0;
    }
    for (g = 0; g < ng; ++g) {
        if ((int32_t)(mgi_ld_acq32(&mgi_dev_stage_of(h, g)->flush_done) -
                      seq) < 0) {
            return 0;
        }
    }
    return 1;
}

/* Whether the channel's context delivers nothing any more: a rank of its
 * host ended before its destroy, or its mover stopped on an error (the
 * host calls then fail with that error). Kernels whose loops wait for
 * sends to be taken or tuples to arrive check it to end. */
__device__ static inline int mgi_dev_failed(const mgi_dev_ch_t *h)
{
    return (h->failed != NULL) && (*h->failed != 0);
}

/* Block level: EOF for this block, then wait for delivery. Returns
 * MGI_DEV_OK (0), MGI_DEV_TIMED_OUT when it gave up after `spin_limit`
 * polls (0: at the context's timeout, MGI_TIMEOUT_MS, reported to the
 * host as MGI_DEV_ERR_FLUSH_TIMEOUT), or MGI_DEV_FAILED once the context
 * failed (mgi_dev_failed). The same in every thread. */
__device__ static inline mgi_dev_status_t
mgi_dev_flush(const mgi_dev_ch_t *h, unsigned long long spin_limit)
{
    __shared__ mgi_dev_status_t s_ret;
    unsigned long long spins = 0;
    uint32_t state = 0;

    if (h->direct) {
        mgi_dev_dring_flush(h);
        return MGI_DEV_OK;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        const uint64_t dl = mgi_dev_deadline(h);

        s_ret = MGI_DEV_OK;
        while (!mgi_dev_flush_step(h, &state)) {
            ++spins;
            if ((spin_limit != 0) ? (spins > spin_limit) :
                ((spins % 1024 == 0) && mgi_dev_past(dl))) {
                s_ret = MGI_DEV_TIMED_OUT;
                mgi_dev_report(h, MGI_DEV_ERR_FLUSH_TIMEOUT);
                break;
            }
            if ((spins % 1024 == 0) && mgi_dev_failed(h)) {
                s_ret = MGI_DEV_FAILED;
                break;
            }
            mgi_cpu_relax();
        }
    }
    __syncthreads();
    return s_ret;
}

/* Block level, non-blocking flush: *state is a __shared__ word the block
 * set to 0 before its first call. The calls append the EOF to each of the
 * block's stage rings as they find room; returns 1 once this block's
 * tuples were delivered, else 0 (keep receiving meanwhile: delivery may
 * need this endpoint to drain its final rings, as when every endpoint
 * flushes at once). A yes or no, not a status: it never waits, so it
 * never times out; the caller's loop bounds itself (mgi_dev_deadline)
 * and ends on mgi_dev_failed. */
__device__ static inline int mgi_dev_flush_nb(const mgi_dev_ch_t *h,
                                              uint32_t *state)
{
    __shared__ int s_done;

    if (h->direct) {
        mgi_dev_dring_flush(h);
        return 1;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        s_done = mgi_dev_flush_step(h, state);
    }
    __syncthreads();
    return s_done;
}

#endif

/**
 * mgi_gpu_test groupby: the paper's Fig. 3 GroupBy over the device API,
 * its kernel (send, receive and aggregate by key, then flush and receive
 * until EOF) and the host side that runs it on every endpoint, round after
 * round (-C, -H), and checks the aggregates against a CPU reference.
 */

#include "mgi_gpu_test_dev.cuh"

#pragma pack(push, 1)
struct gb_tuple {            /* schema {int32, int64}: 12 bytes */
    int32_t key;
    int64_t value;
};
#pragma pack(pop)

__host__ __device__ static inline uint32_t mix32(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return (uint32_t)x;
}

__host__ __device__ static inline gb_tuple gb_make(unsigned ep, long i,
                                                   unsigned keys)
{
    gb_tuple t;
    t.key   = (int32_t)(mix32(((uint64_t)ep << 40) ^ (uint64_t)i) % keys);
    t.value = (int64_t)(ep + 1) * 1000003 + i;
    return t;
}

/* Fig. 3: pipelined send, receive and GroupBy; then flush; then receive
 * until EOF. A direct table indexed by key (keys < KEYS) stands in for
 * the hash table: count and sum per key. */
__global__ void groupby_kernel(mgi_dev_ch_t ch, unsigned ep, long n,
                               unsigned keys, int dst_side,
                               unsigned *agg_cnt,
                               unsigned long long *agg_sum, dev_result *res,
                               unsigned long long timeout_ns, int global_ring,
                               int thread_recv)
{
    __shared__ __align__(8) char rbuf[RECV_TUPLES * sizeof(gb_tuple)];
    const mgi_dev_ch_t *h = &ch;
    const unsigned long long deadline = dev_now() + timeout_ns;
    const unsigned rsize = dst_side ? sizeof(gb_tuple) : 0;
    unsigned long long received = 0, sent = 0;  /* this thread's */

    block_started(res, &res->started);
    auto agg = [&](const char *p) {
        /* three 4-byte words (tuples lie 4-byte aligned: rbuf, and a
         * message's payload is 8-byte aligned); a memcpy of the packed
         * tuple is a byte loop */
        const uint32_t *w = (const uint32_t*)p;
        gb_tuple t;
        t.key   = (int32_t)w[0];
        t.value = (int64_t)(w[1] | ((uint64_t)w[2] << 32));
        if ((t.key >= 0) && ((unsigned)t.key < keys)) {
            atomicAdd(&agg_cnt[t.key], 1u);
            atomicAdd(&agg_sum[t.key], (unsigned long long)t.value);
        }
        ++received;
    };
    long per   = (n + gridDim.x - 1) / gridDim.x;
    long begin = per * blockIdx.x, end = min(n, begin + per);
    unsigned bad;

    if (threadIdx.x == 0) {
        g_recv_calls = g_recv_empty = 0; /* counted by block_recv */
        g_t_recv0 = g_t_recv1 = 0;
        g_send_calls = g_send_full = 0;  /* and block_send */
        g_cyc_send = g_cyc_recv = 0;
        g_thread_recv = thread_recv;
    }
    __syncthreads();
    for (long i = begin; i < end; i += blockDim.x) {
        long me    = i + threadIdx.x;
        gb_tuple t = gb_make(ep, me, keys);
        if (block_send(h, &t, (me < end) ? sizeof(t) : 0, MGI_DEV_DST_AUTO,
                       rbuf, rsize, agg, deadline) != 0) {
            if (threadIdx.x == 0) {
                atomicOr(&res->timeouts, (unsigned)PH_SEND);
            }
            return;
        }
        sent += (me < end);
    }
    bad = block_finish(h, block_flushes(res, global_ring, deadline), rbuf,
                       rsize, agg, deadline);
    block_add(&res->sent, sent);
    block_add(&res->received, received);
    if (threadIdx.x == 0) {
        if (bad) {
            atomicOr(&res->timeouts, bad);
        } else if (rsize > 0) {
            atomicAdd(&res->eof_blocks, 1u);
        }
    }
}

/* One GroupBy over channel ch: every endpoint's kernel, then each one's
 * aggregates against the CPU reference. 1 when all match. */
static int groupby_round(mgi_context_h ctx, const opts &o,
                         std::vector<gpu_ep> &eps,
                         std::vector<mgi_ep_id_t> &ids, mgi_ch_id_t ch)
{
    int local = (int)eps.size(), rank = g_rank, ok = 1;
    int nproc = mgi_context_size(ctx);
    unsigned long long total = 0;
    double t0, t1;

    for (int k = 0; k < local; ++k) {
        gpu_ep *e = &eps[k];
        CHECK_UCS(mgi_ch_device_handle(ctx, ch, e->id, &e->h));
        CHECK_CUDA(cudaSetDevice(e->dev));
        memset(e->res, 0, sizeof(*e->res)); /* the kernel adds to it */
        CHECK_CUDA(cudaMemsetAsync(e->cnt, 0, o.keys * sizeof(*e->cnt),
                                   e->stream));
        CHECK_CUDA(cudaMemsetAsync(e->sum, 0, o.keys * sizeof(*e->sum),
                                   e->stream));
        if (wait_stream(e->stream, 30, "zeroing the aggregates") != 0) {
            return 0;
        }
    }
    barrier(ctx);
    t0 = now_s();
    for (int k = 0; k < local; ++k) {
        gpu_ep *e = &eps[k];
        dev_result *rd;
        CHECK_CUDA(cudaSetDevice(e->dev));
        CHECK_CUDA(cudaHostGetDevicePointer((void**)&rd, e->res, 0));
        CHECK_CUDA(cudaEventRecord(e->start, e->stream));
        groupby_kernel<<<o.blocks, o.threads, 0, e->stream>>>(
                e->h, e->id, o.tuples, o.keys, 1, e->cnt, e->sum, rd,
                (unsigned long long)o.timeout_s * 1000000000ull, 0,
                o.thread_recv);
        CHECK_CUDA(cudaGetLastError());
        CHECK_CUDA(cudaEventRecord(e->stop, e->stream));
    }
    wait_resident(eps, o.blocks, o.threads, "groupby kernel");
    for (int k = 0; k < local; ++k) {
        if (wait_stream(eps[k].stream, o.timeout_s + 10,
                        "groupby kernel") != 0) {
            ok = 0;
        }
    }
    t1 = now_s();

    /* CPU reference: every tuple of every endpoint, keys of ours */
    {
        std::vector<mgi_ep_id_t> &all = ids;
        unsigned ndst = all.size();
        for (int k = 0; k < local && ok; ++k) {
            gpu_ep *e = &eps[k];
            unsigned me = 0;
            std::vector<unsigned> cnt(o.keys), rc(o.keys, 0);
            std::vector<unsigned long long> sum(o.keys), rs(o.keys, 0);
            unsigned long long expect = 0;
            long bad = 0;

            while (all[me] != e->id) {
                ++me;
            }
            for (unsigned src = 0; src < all.size(); ++src) {
                for (long i = 0; i < o.tuples; ++i) {
                    gb_tuple t = gb_make(all[src], i, o.keys);
                    if ((unsigned)t.key % ndst == me) {
                        rc[t.key]++;
                        rs[t.key] += (unsigned long long)t.value;
                        ++expect;
                    }
                }
            }
            CHECK_CUDA(cudaSetDevice(e->dev));
            CHECK_CUDA(cudaMemcpyAsync(cnt.data(), e->cnt,
                                       o.keys * sizeof(unsigned),
                                       cudaMemcpyDeviceToHost, e->stream));
            CHECK_CUDA(cudaMemcpyAsync(sum.data(), e->sum,
                                       o.keys * sizeof(unsigned long long),
                                       cudaMemcpyDeviceToHost, e->stream));
            if (wait_stream(e->stream, 30, "copy of the aggregates") != 0) {
                ok = 0;
                break;
            }
            for (unsigned key = 0; key < o.keys; ++key) {
                if ((cnt[key] != rc[key]) || (sum[key] != rs[key])) {
                    if (bad++ < 5) {
                        fprintf(stderr, "rank %d ep %u: key %u: count %u sum "
                                "%llu, expected %u %llu\n", rank, e->id, key,
                                cnt[key], sum[key], rc[key], rs[key]);
                    }
                }
            }
            printf("groupby rank %d ep %u (GPU %d): sent %llu, received %llu "
                   "of %llu, EOF in %u of %u blocks, timeouts 0x%x, %ld bad "
                   "keys: %s\n", rank, e->id, e->dev, e->res->sent,
                   e->res->received, expect, e->res->eof_blocks, o.blocks,
                   e->res->timeouts, bad,
                   (bad == 0 && e->res->received == expect &&
                    e->res->eof_blocks == o.blocks && !e->res->timeouts) ?
                   "OK" : "FAILED");
            if (bad || e->res->received != expect ||
                e->res->eof_blocks != o.blocks || e->res->timeouts) {
                ok = 0;
            }
            total += e->res->received;
        }
    }
    printf("json: {\"test\":\"groupby\",\"rank\":%d,\"procs\":%d,"
           "\"local_eps\":%d,\"tuples_per_ep\":%ld,\"blocks\":%u,"
           "\"keys\":%u,\"received\":%llu,\"seconds\":%.6f,"
           "\"mtuples_per_s\":%.3f,\"ok\":%s}\n", rank, nproc, local,
           o.tuples, o.blocks, o.keys, total, t1 - t0,
           total / (t1 - t0) / 1e6, ok ? "true" : "false");
    fflush(stdout);
    return ok;
}

int run_groupby(const opts &o)
{
    mgi_context_h ctx = ctx_create(o, sizeof(gb_tuple));
    int local = (o.local > 0) ? o.local : 1, rank = g_rank, ok = 1, dev0;
    std::vector<gpu_ep> eps(local);
    std::vector<mgi_ep_id_t> ids;
    mgi_schema_t schema = {2, {4, 8}};
    mgi_ch_params_t cp;
    mgi_ch_id_t ch;
    int held = -1;

    if (ngpus() < local) {
        printf("groupby: %d endpoints on %d GPU(s): endpoint k on GPU k %% "
               "%d\n", local, ngpus(), ngpus());
    }
    dev0 = (o.local > 0) ? 0 : rank % ngpus();
    for (int k = 0; k < local; ++k) {
        ep_setup(ctx, &eps[k], (dev0 + k) % ngpus(), o.blocks);
    }
    ids = all_eps(ctx, local);
    memset(&cp, 0, sizeof(cp));
    cp.src      = ids.data();
    cp.nsrc     = ids.size();
    cp.dst      = ids.data();
    cp.ndst     = ids.size();
    cp.schema   = &schema;
    cp.part_key = 0;
    for (int k = 0; k < local; ++k) {
        CHECK_CUDA(cudaSetDevice(eps[k].dev));
        CHECK_CUDA(cudaMalloc(&eps[k].cnt, o.keys * sizeof(*eps[k].cnt)));
        CHECK_CUDA(cudaMalloc(&eps[k].sum, o.keys * sizeof(*eps[k].sum)));
    }
    for (unsigned round = 0; ok && (round < o.rounds); ++round) {
        CHECK_UCS(mgi_ch_create(ctx, &cp, &ch));
        if (o.rounds > 1) {
            printf("groupby rank %d: round %u on channel %u%s\n", rank, round,
                   ch, (held >= 0) ? " (the first one held)" : "");
            if ((int)ch == held) {
                fprintf(stderr, "rank %d: channel %u created while rank 0 "
                        "holds it\n", rank, ch);
                ok = 0;
            }
        }
        ok = groupby_round(ctx, o, eps, ids, ch) && ok; /* peers wait */
        if (ok) {
            barrier(ctx);
            if (o.hold && (round == 0)) {    /* -H: 2 rounds or more */
                /* every rank keeps its number; rank 0 also the channel */
                held = (int)ch;
                if (rank == 0) {
                    continue;
                }
            }
            CHECK_UCS(mgi_ch_delete(ctx, ch));
        }
    }
    if (ok && (held >= 0) && (rank == 0)) {
        CHECK_UCS(mgi_ch_delete(ctx, (mgi_ch_id_t)held));
    }
    mgi_context_destroy(ctx);
    return ok ? 0 : 1;
}

/**
 * mgi_gpu_test bench, sorter and shuffle: the stream kernel (tuples of
 * 8-byte words sent per thread or in tiles, received in place and checked
 * word by word), the landing buffer's check, and the host side: the
 * endpoints' kernels timed between events, the copy engine's figure for
 * the same bytes, and the result lines.
 */

#include "mgi_gpu_test_dev.cuh"

/* the sorter's copy mode: runs in segment order (the others were
 * removed); kept in the output for its readers */
static const unsigned g_coalesce = 2;
static const char *const coalesce_name[] = {"per-tuple", "coalesced",
                                            "in segment order"};

/* One thread: the GPU's time into *t (the timed kernel's neighbours on
 * its stream, inside its start and stop events: what of the events' time
 * is not the kernel's blocks) */
__global__ void stamp_kernel(unsigned long long *t)
{
    *t = dev_now();
}

/* Generic tuples of the bench: `words` 8-byte words, word 0 the sequence
 * number, the others derived from it. */
__host__ __device__ static inline uint64_t bench_word(uint64_t seq, unsigned w)
{
    return w == 0 ? seq : (seq * 0x9e3779b97f4a7c15ull) ^ w;
}

/* A tuple of `words` 8-byte words (8-byte aligned) against its key, word
 * 0 (into *key): 1 where another word is not bench_word's. Every load is
 * issued before any test: a memcpy of the tuple was a byte loop through
 * local memory, and a test after each load kept one load in flight a
 * thread; either bound the receiving blocks. */
__device__ static __forceinline__ unsigned bench_tuple_bad(const uint64_t *v,
                                                           unsigned words,
                                                           uint64_t *key)
{
    uint64_t x[8];
    unsigned w, bad = 0;

#pragma unroll
    for (w = 0; w < 8; ++w) {
        x[w] = (w < words) ? v[w] : 0;
    }
#pragma unroll
    for (w = 1; w < 8; ++w) {
        bad |= (w < words) && (x[w] != bench_word(x[0], w));
    }
    *key = x[0];
    return bad;
}

__device__ unsigned g_recv_every;
/* -D: the source's tiles taken so far, in the GPU's own memory (an atomic
 * on the mapped host result crossed PCIe for every tile) */
__device__ unsigned long long g_next_tile;

/* Bench / sorter: tuples of `words` 8-byte words to `dst`; the receiving
 * side counts them and sums word 0 and checks the other words. TILE: the
 * source sends tiles (-K); a kernel of its own, as the tile path's
 * registers (113 against 64 per thread) halved the blocks an SM holds,
 * and the widest one-GPU step no longer had its blocks resident. TS: the
 * tuple size the tiles are sent with mgi_dev_send_block_tile_of for (16
 * and 64: the bench's sizes, where mgi_dev_tile_of_fits accepts the
 * channel), 0: any, mgi_dev_send_block_tile; SL: its kind of tile (one
 * destination: send_bw's; several: shuffle's). */
template <bool TILE, unsigned TS = 0, unsigned SL = MGI_DEV_TILE_ANY>
__global__ void stream_kernel(mgi_dev_ch_t ch, int send, int recv, long n,
                              long base, unsigned words, int dst,
                              dev_result *res, unsigned *started,
                              unsigned long long timeout_ns, int global_ring,
                              int blocking_flush, unsigned tile,
                              int dyn_tiles, char *scratch)
{
    char *const rbuf = NULL; /* receive in place: mgi_dev_recv_block_each */
    const long long c_start = clock64();
    const mgi_dev_ch_t *h = &ch;
    const unsigned long long deadline = dev_now() + timeout_ns;
    const unsigned tsize = words * 8;
    const unsigned rsize = recv ? tsize : 0;

    block_started(res, started);
    unsigned long long checksum = 0, received = 0;  /* this thread's */
    auto check = [&](const char *p) {
        uint64_t key;

        if (bench_tuple_bad((const uint64_t*)p, words, &key)) {
            atomicOr(&res->timeouts, 0x100u); /* corrupt tuple */
        }
        checksum += key;
        ++received;
    };
    long per   = (n + gridDim.x - 1) / gridDim.x;
    long begin = per * blockIdx.x, end = min(n, begin + per);
    unsigned bad;

    if (threadIdx.x == 0) {
        g_recv_calls = g_recv_empty = 0;
        g_t_recv0 = g_t_recv1 = 0;
        g_send_calls = g_send_full = 0;
        g_cyc_send = g_cyc_recv = 0;
        g_thread_recv = 0;
    }
    __syncthreads();
    if (TILE && send) {
        /* tiles of tile x blockDim.x tuples, written to the block's
         * scratch and sent from there (mgi_dev_send_block_tile_of for
         * 16 and 64-byte tuples, else mgi_dev_send_block_tile); with
         * dyn_tiles each block takes the next tile of all n from a shared
         * count, so a block the sorter serves less sends less */
        const long step = (long)tile * blockDim.x;
        char *const mine = scratch + (size_t)blockIdx.x * step * tsize;
        unsigned since_recv = 0;
        __shared__ long s_tile;

        if (dyn_tiles) {
            begin = 0;
            end   = n;
        }
        for (long i = begin; ; i += step) {
            if (dyn_tiles) {
                if (threadIdx.x == 0) {
                    s_tile = (long)atomicAdd(&g_next_tile, 1ull) * step;
                }
                __syncthreads();
                i = s_tile;
            }
            if (i >= end) {
                break;
            }
            const unsigned cnt = (unsigned)min(step, end - i);
            unsigned done = 0, took = 0;

            if ((rsize > 0) && (g_recv_every > 0) &&
                (++since_recv >= g_recv_every)) {
                since_recv = 0;
                block_recv(h, rbuf, rsize, check);
            }
            /* word by word, consecutive threads on consecutive words:
             * a tuple per thread stored 64-byte tuples as words 64 bytes
             * apart, and took a third of the source's time at 64 B */
            for (unsigned x = threadIdx.x; x < cnt * words;
                 x += blockDim.x) {
                ((uint64_t*)mine)[x] =
                        bench_word((uint64_t)(base + i + x / words),
                                   x % words);
            }
            __syncthreads();
            while (done < cnt) {
                if (block_send_by(h, [&]() {
                        const char *at = mine + (size_t)done * tsize;
                        if constexpr (TS != 0) {
                            took = mgi_dev_send_block_tile_of<TS, SL>(
                                    h, at, cnt - done, dst);
                        } else {
                            took = mgi_dev_send_block_tile(h, at, cnt - done,
                                                           dst);
                        }
                        return (int)(took > 0);
                    }, rbuf, rsize, check, deadline) != 0) {
                    if (threadIdx.x == 0) {
                        atomicOr(&res->timeouts, (unsigned)PH_SEND);
                    }
                    return;
                }
                done += took;
            }
        }
    } else if (send) {
        unsigned since_recv = 0;    /* block sends since a receive call */

        for (long i = begin; i < end; i += blockDim.x) {
            long me = i + threadIdx.x;
            if ((rsize > 0) && (g_recv_every > 0) &&
                (++since_recv >= g_recv_every)) {
                since_recv = 0;
                block_recv(h, rbuf, rsize, check);
            }
            uint64_t t[8];
            for (unsigned w = 0; w < words; ++w) {
                t[w] = bench_word((uint64_t)(base + me), w);
            }
            if (block_send(h, t, (me < end) ? tsize : 0, dst, rbuf, rsize,
                           check, deadline) != 0) {
                if (threadIdx.x == 0) {
                    atomicOr(&res->timeouts, (unsigned)PH_SEND);
                }
                return;
            }
        }
    }
    const long long c_tail = clock64();
    if (send && (threadIdx.x == 0) && (blockIdx.x < MAX_BLOCKS)) {
        res->t_sent[blockIdx.x] = dev_now();
    }
    if (send && blocking_flush && (rsize == 0) && !global_ring) {
        /* a source only: nothing to receive while the flush waits; a
         * poll is a 64 ns sleep or more, so this bounds it by timeout */
        bad = (mgi_dev_flush(h, timeout_ns / 64) == 0) ? 0 : PH_FLUSH;
    } else {
        bad = block_finish(h, send && block_flushes(res, global_ring,
                                                    deadline),
                           rbuf, rsize, check, deadline);
    }
    block_add(&res->checksum, checksum);
    block_add(&res->received, received);
    if (threadIdx.x == 0) {
        const unsigned long long t_end = dev_now();
        atomicMin(&res->t_end_first, t_end);
        atomicMax(&res->t_end_last, t_end);
        atomicAdd(&res->recv_calls, g_recv_calls);
        atomicAdd(&res->send_calls, g_send_calls);
        atomicAdd(&res->send_full, g_send_full);
        atomicAdd(&res->recv_empty, g_recv_empty);
        atomicAdd(&res->cyc_all, (unsigned long long)(clock64() - c_start));
        atomicAdd(&res->cyc_tail, (unsigned long long)(clock64() - c_tail));
        atomicAdd(&res->cyc_send, g_cyc_send);
        atomicAdd(&res->cyc_recv, g_cyc_recv);
        if (g_t_recv0 != 0) {
            atomicMin(&res->t_recv_first, g_t_recv0);
            atomicMax(&res->t_recv_last, g_t_recv1);
        }
        if (bad) {
            atomicOr(&res->timeouts, bad);
        } else if (rsize > 0) {
            atomicAdd(&res->eof_blocks, 1u);
        }
    }
}

/* Where the user blocks' time went: thread 0's clock cycles in block
 * sends (mgi_dev_send_block, refused ones too) and in receive calls, of
 * the whole kernel; the rest is making tuples, flushing and waiting. The
 * time after a block's last send (its flush, and receiving until EOF) is
 * given apart too: receive calls there wait for the last tuples. */
static void print_block_time(const char *test, int rank, unsigned ep,
                             const dev_result *r, unsigned blocks)
{
    double all = (double)r->cyc_all;

    if ((all <= 0) || (blocks == 0)) {
        return;
    }
    printf("%s rank %d ep %u: user blocks %.0f k cycles each, %.1f%% in "
           "block sends (%.1f k cycles per call), %.1f%% in receive calls "
           "(%.1f k per call, %llu of %llu found nothing); %.1f%% after "
           "the last send\n", test, rank,
           ep, all / blocks / 1e3, 100.0 * r->cyc_send / all,
           (r->send_calls > 0) ? r->cyc_send / 1e3 / r->send_calls : 0.0,
           100.0 * r->cyc_recv / all,
           (r->recv_calls > 0) ? r->cyc_recv / 1e3 / r->recv_calls : 0.0,
           r->recv_empty, r->recv_calls, 100.0 * r->cyc_tail / all);
}

/* When the source's user blocks returned from their last send, from the
 * first block's start: the spread is how unevenly the sorter served
 * their stage rings (with -D the blocks share the tiles, so it shows the
 * last tile's wait) */
static void print_send_ends(const char *test, int rank, unsigned ep,
                            const dev_result *r, unsigned blocks,
                            int dyn_tiles)
{
    std::vector<std::pair<double, unsigned>> t;
    unsigned b, n = (blocks < MAX_BLOCKS) ? blocks : MAX_BLOCKS;
    std::string slow;
    char buf[48];

    for (b = 0; b < n; ++b) {
        if (r->t_sent[b] >= r->t_begin) {
            t.push_back({(r->t_sent[b] - r->t_begin) / 1e6, b});
        }
    }
    if (t.empty()) {
        return;
    }
    std::sort(t.begin(), t.end());
    for (b = 0; (b < 6) && (b < t.size()); ++b) {
        snprintf(buf, sizeof(buf), "%s%u (%.2f)", b ? ", " : "",
                 t[t.size() - 1 - b].second, t[t.size() - 1 - b].first);
        slow += buf;
    }
    printf("%s rank %d ep %u: user blocks' last sends returned %.2f (first) "
           "%.2f (median) %.2f (last) ms after the first block began (%s "
           "tiles); the last blocks: %s\n", test, rank, ep, t[0].first,
           t[t.size() / 2].first, t.back().first,
           dyn_tiles ? "shared" : "a slice a block", slow.c_str());
}

/* When the user blocks finished (a source's: its flush delivered; a
 * destination's: EOF seen), from its first block's start, and that start
 * against endpoint 0's of this process (%globaltimer of each GPU) */
static void print_block_ends(const char *test, int rank, unsigned ep,
                             const dev_result *r, const dev_result *r0,
                             int dst)
{
    if ((r->t_end_last == 0) || (r->t_end_first < r->t_begin)) {
        return;
    }
    printf("%s rank %d ep %u: user blocks done (%s) from %.2f to %.2f ms "
           "after the first block began, which was %.3f ms after endpoint "
           "0's; the kernel's neighbours on its stream ran %.3f ms before "
           "its first block began and %.3f ms after its last block was "
           "done\n", test, rank, ep, dst ? "EOF seen" : "flush delivered",
           (r->t_end_first - r->t_begin) / 1e6,
           (r->t_end_last - r->t_begin) / 1e6,
           ((double)r->t_begin - (double)r0->t_begin) / 1e6,
           ((double)r->t_begin - (double)r->t_stamp[0]) / 1e6,
           ((double)r->t_stamp[1] - (double)r->t_end_last) / 1e6);
}

/* The copy engine's figure for `bytes`: cudaMemcpyPeerAsync GPU0 -> GPU1,
 * or with one GPU a copy within GPU 0 (both endpoints live there), best of
 * 5, GB/s. Before any endpoint exists: cudaFree would wait for a
 * persistent sorter. */
static double copy_engine_gbs(size_t bytes)
{
    const int dst_dev = (ngpus() > 1) ? 1 : 0;
    void *a, *b;
    cudaStream_t s;
    cudaEvent_t e0, e1;
    float ms, best = 1e30f;

    CHECK_CUDA(cudaSetDevice(dst_dev));
    CHECK_CUDA(cudaMalloc(&b, bytes));
    if (dst_dev != 0) {
        cudaDeviceEnablePeerAccess(0, 0);
        cudaGetLastError();
    }
    CHECK_CUDA(cudaSetDevice(0));
    if (dst_dev != 0) {
        cudaDeviceEnablePeerAccess(dst_dev, 0);
        cudaGetLastError();
    }
    CHECK_CUDA(cudaMalloc(&a, bytes));
    CHECK_CUDA(cudaMemset(a, 1, bytes));
    CHECK_CUDA(cudaDeviceSynchronize()); /* no sorter runs yet */
    CHECK_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK_CUDA(cudaEventCreate(&e0));
    CHECK_CUDA(cudaEventCreate(&e1));
    for (int i = 0; i < 6; ++i) {
        CHECK_CUDA(cudaEventRecord(e0, s));
        CHECK_CUDA(cudaMemcpyPeerAsync(b, dst_dev, a, 0, bytes, s));
        CHECK_CUDA(cudaEventRecord(e1, s));
        CHECK_CUDA(cudaEventSynchronize(e1));
        CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
        if (i > 0 && ms < best) {
            best = ms;
        }
    }
    CHECK_CUDA(cudaStreamDestroy(s));
    CHECK_CUDA(cudaFree(a));
    CHECK_CUDA(cudaSetDevice(dst_dev));
    CHECK_CUDA(cudaFree(b));
    return bytes / (best / 1e3) / 1e9;
}

/* How the user blocks sent, for the summary lines. */
static std::string send_how(const opts &o)
{
    char b[96];

    if (o.tile > 0) {
        snprintf(b, sizeof(b), "tile sends of %u x %u tuples", o.tile,
                 o.threads);
    } else {
        snprintf(b, sizeof(b), "a tuple per thread per block send");
    }
    return b;
}

/* shuffle -L, after the stream kernel on its stream (every source's
 * flush seen): the tuples that landed in this destination's landing
 * buffer, checked as the receive checks them (each tuple's words, its
 * key's destination: parity `par`) and added to the count and checksum. */
__global__ void land_check_kernel(mgi_dev_ch_t ch, const char *land,
                                  unsigned words, unsigned par,
                                  dev_result *res)
{
    const uint64_t n = mgi_dev_landed(&ch);
    unsigned long long checksum = 0, received = 0;
    uint64_t i, x0;
    unsigned bad = 0;

    for (i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < n;
         i += (uint64_t)gridDim.x * blockDim.x) {
        bad |= bench_tuple_bad((const uint64_t*)(land + i * words * 8),
                               words, &x0);
        bad |= ((x0 % 2) != par);
        checksum += x0;
        ++received;
    }
    if (bad) {
        atomicOr(&res->timeouts, 0x100u); /* corrupt or misrouted tuple */
    }
    block_add(&res->checksum, checksum);
    block_add(&res->received, received);
    block_add(&res->landed, received);
}

int run_stream(const opts &o, int mode)
{
    const int sorter  = (mode == STREAM_SORTER);
    const int shuffle = (mode == STREAM_SHUFFLE);
    const char *name  = sorter ? "sorter" : shuffle ? "shuffle" : "bench";
    unsigned words = o.size / 8;
    size_t bytes   = (size_t)o.tuples * o.size;
    int local, rank, nproc, ok = 1;
    double ce = 0, t0, t1, secs, max_ms = 0;
    mgi_context_h ctx;
    std::vector<gpu_ep> eps;
    std::vector<mgi_ep_id_t> src, dst;
    /* shuffle: word 0 the partition key */
    mgi_schema_t schema = shuffle ? mgi_schema_t{2, {8, o.size - 8}} :
                                    mgi_schema_t{1, {o.size}};
    mgi_ch_params_t cp;
    mgi_ch_id_t ch;
    std::vector<int> is_src, is_dst, didx;  /* didx: index in dst */
    std::vector<long> base;
    char vname[64];

    if ((o.size % 8) != 0 || words == 0 || words > 8 ||
        (shuffle && (words < 2))) {
        fprintf(stderr, "tuple size %u: a multiple of 8 up to 64%s\n",
                o.size, shuffle ? ", 16 or more" : "");
        return 1;
    }
    if ((mode == STREAM_BENCH) &&
        (getenv("MGI_RANK") == NULL || atoi(getenv("MGI_RANK")) == 0)) {
        ce = copy_engine_gbs(bytes);
    }
    ctx   = ctx_create(o, o.size);
    rank  = g_rank;
    nproc = mgi_context_size(ctx);
    local = sorter ? 1 : ((o.local > 0) ? o.local : 1);
    if (!sorter && !shuffle && (local * nproc != 2)) {
        fprintf(stderr, "%s: 2 endpoints: -l 2 in one process, or 2 "
                "processes\n", name);
        return 1;
    }
    if (shuffle && ((local * nproc < 2) || (local * nproc > 8) ||
                    ((local * nproc > 2) && (o.land_pct > 0)))) {
        fprintf(stderr, "shuffle: 2 to 8 endpoints (-l N in one process, "
                "or one a process), landing buffers (-L) with 2\n");
        return 1;
    }
    eps.resize(local);
    is_src.assign(local, 0);
    is_dst.assign(local, 0);
    didx.assign(local, 0);
    base.assign(local, 0);
    for (int k = 0; k < local; ++k) {
        /* one GPU: both endpoints on it (-l 2: one process, so its
         * kernels run side by side; two processes time-slice the GPU) */
        int dev = sorter ? 0 : ((o.local > 0) ? k % ngpus() :
                                                rank % ngpus());
        /* -L: a destination receives o.tuples tuples (shuffle) */
        eps[k].land_tuples = (uint64_t)o.tuples * o.land_pct / 100;
        snprintf(vname, sizeof(vname), o.vertex_fmt ? o.vertex_fmt : "",
                 rank * local + k);
        ep_setup(ctx, &eps[k], dev, o.global_ring ? 1 : o.blocks,
                 (size_t)o.tile * o.threads * o.blocks * o.size,
                 (shuffle && (o.land_pct > 0)) ?
                 (size_t)eps[k].land_tuples * o.size : 0,
                 o.vertex_fmt ? vname : NULL);
    }
    if (sorter) {
        src.push_back(MGI_EP_ID(rank, 0));
        dst.push_back(MGI_EP_ID(rank, 0));
        is_src[0] = is_dst[0] = 1;
    } else if (shuffle) {
        /* every endpoint sends and receives; source i numbers its tuples
         * from i * n, so the key (word 0) sends the numbers j mod N to
         * endpoint j */
        src = all_eps(ctx, local);
        dst = src;
        for (int k = 0; k < local; ++k) {
            is_src[k] = is_dst[k] = 1;
            didx[k]   = rank * local + k;
            base[k]   = (long)didx[k] * o.tuples;
        }
    } else {
        src.push_back(MGI_EP_ID(0, 0));
        dst.push_back((o.local > 0) ? MGI_EP_ID(0, 1) : MGI_EP_ID(1, 0));
        for (int k = 0; k < local; ++k) {
            is_src[k] = (eps[k].id == src[0]);
            is_dst[k] = (eps[k].id == dst[0]);
        }
    }
    memset(&cp, 0, sizeof(cp));
    cp.src      = src.data();
    cp.nsrc     = (unsigned)src.size();
    cp.dst      = dst.data();
    cp.ndst     = (unsigned)dst.size();
    cp.schema   = &schema;
    cp.part_key = shuffle ? 0 : -1;
    /* -L: this process's destinations' landing buffers, in dst's order */
    std::vector<void*> land(dst.size(), NULL);
    std::vector<uint64_t> land_tuples(dst.size(), 0);
    for (size_t i = 0; i < dst.size(); ++i) {
        for (int k = 0; k < local; ++k) {
            if ((eps[k].id == dst[i]) && (eps[k].land != NULL)) {
                land[i]        = eps[k].land;
                land_tuples[i] = eps[k].land_tuples;
            }
        }
    }
    if (shuffle && (o.land_pct > 0)) {
        cp.land        = land.data();
        cp.land_tuples = land_tuples.data();
    }
    cp.flags |= o.ordered ? MGI_CH_FLAG_ORDERED : 0;
    CHECK_UCS(mgi_ch_create(ctx, &cp, &ch));
    for (int k = 0; k < local; ++k) {
        CHECK_UCS(mgi_ch_device_handle(ctx, ch, eps[k].id, &eps[k].h));
    }
    barrier(ctx);
    t0 = now_s();
    for (int k = 0; k < local; ++k) {
        gpu_ep *e = &eps[k];
        dev_result *rd;
        CHECK_CUDA(cudaSetDevice(e->dev));
        CHECK_CUDA(cudaHostGetDevicePointer((void**)&rd, e->res, 0));
        e->res->started   = 0;
        e->res->t_begin   = ~0ull;
        e->res->t_recv_first = ~0ull;
        e->res->t_recv_last  = 0;
        e->res->t_end_first  = ~0ull;
        e->res->t_end_last   = 0;
        e->res->t_stamp[0]   = e->res->t_stamp[1] = 0;
        memset(e->res->t_sent, 0, sizeof(e->res->t_sent));
        CHECK_CUDA(cudaMemcpyAsync(e->dres, e->res, sizeof(*e->res),
                                   cudaMemcpyHostToDevice, e->stream));
        CHECK_CUDA(cudaMemcpyToSymbolAsync(g_send_backoff_ns,
                                           &o.send_backoff_ns,
                                           sizeof(o.send_backoff_ns), 0,
                                           cudaMemcpyHostToDevice,
                                           e->stream));
        CHECK_CUDA(cudaMemcpyToSymbolAsync(g_recv_every, &o.recv_every,
                                           sizeof(o.recv_every), 0,
                                           cudaMemcpyHostToDevice,
                                           e->stream));
        const unsigned long long zero_tiles = 0;
        CHECK_CUDA(cudaMemcpyToSymbolAsync(g_next_tile, &zero_tiles,
                                           sizeof(zero_tiles), 0,
                                           cudaMemcpyHostToDevice,
                                           e->stream));
        CHECK_CUDA(cudaEventRecord(e->start, e->stream));
        stamp_kernel<<<1, 1, 0, e->stream>>>(&e->dres->t_stamp[0]);
        /* the typed tile send where it serves the channel */
        const int kdst    = shuffle ? MGI_DEV_DST_AUTO : (int)dst[0];
        const unsigned sl = shuffle ? MGI_DEV_TILE_MANY : MGI_DEV_TILE_ONE;
        const int typed   = mgi_dev_tile_of_fits(&e->h, words * 8, sl, kdst);
        auto *kern = (o.tile == 0) ? stream_kernel<false> :
                     (typed && (words == 2) && shuffle) ?
                     stream_kernel<true, 16, MGI_DEV_TILE_MANY> :
                     (typed && (words == 2)) ?
                     stream_kernel<true, 16, MGI_DEV_TILE_ONE> :
                     (typed && (words == 8) && shuffle) ?
                     stream_kernel<true, 64, MGI_DEV_TILE_MANY> :
                     (typed && (words == 8)) ?
                     stream_kernel<true, 64, MGI_DEV_TILE_ONE> :
                     stream_kernel<true>;
        kern<<<o.blocks, o.threads, 0, e->stream>>>(
                e->h, is_src[k], is_dst[k], o.tuples, base[k], words,
                kdst, e->dres, &rd->started,
                (unsigned long long)o.timeout_s * 1000000000ull,
                o.global_ring, o.blocking_flush, o.tile, o.dyn_tiles,
                e->scratch);
        CHECK_CUDA(cudaGetLastError());
        stamp_kernel<<<1, 1, 0, e->stream>>>(&e->dres->t_stamp[1]);
        CHECK_CUDA(cudaEventRecord(e->stop, e->stream));
        if (e->land != NULL) {
            land_check_kernel<<<64, 256, 0, e->stream>>>(
                    e->h, e->land, words, (unsigned)didx[k], e->dres);
            CHECK_CUDA(cudaGetLastError());
        }
        CHECK_CUDA(cudaMemcpyAsync(e->res, e->dres, sizeof(*e->res),
                                   cudaMemcpyDeviceToHost, e->stream));
    }
    wait_resident(eps, o.blocks, o.threads, "stream kernel");
    for (int k = 0; k < local; ++k) {
        if (wait_stream(eps[k].stream, o.timeout_s + 10, "stream kernel")) {
            ok = 0;
        }
    }
    t1   = now_s();
    secs = t1 - t0;
    for (int k = 0; k < local; ++k) {
        gpu_ep *e = &eps[k];
        float ms = 0;
        unsigned long long expect_sum =
                (unsigned long long)o.tuples * (o.tuples - 1) / 2;
        unsigned long long expect_n = (unsigned long long)o.tuples;
        if (shuffle) {
            /* of 0 .. Nn - 1, those j mod N: N n (n - 1) / 2 + j n */
            expect_sum = (unsigned long long)dst.size() * o.tuples *
                         (o.tuples - 1) / 2 +
                         (unsigned long long)didx[k] * o.tuples;
        }
        if (ok) {
            CHECK_CUDA(cudaEventElapsedTime(&ms, e->start, e->stop));
        }
        max_ms = (ms > max_ms) ? ms : max_ms;
        if (!is_dst[k]) {
            printf("%s rank %d ep %u (GPU %d): source kernel %.3f ms, "
                   "timeouts 0x%x; %llu block sends, %llu found the stage "
                   "ring full\n", sorter ? "sorter" : "send_bw", rank,
                   e->id, e->dev, ms, e->res->timeouts, e->res->send_calls,
                   e->res->send_full);
            print_block_time(sorter ? "sorter" : "send_bw", rank, e->id,
                             e->res, o.blocks);
            print_send_ends(sorter ? "sorter" : "send_bw", rank, e->id,
                            e->res, o.blocks, o.dyn_tiles);
            print_block_ends(sorter ? "sorter" : "send_bw", rank, e->id,
                             e->res, eps[0].res, 0);
            ok = ok && !e->res->timeouts;
            continue;
        }
        int good = ok && (e->res->received == expect_n) &&
                   (e->res->checksum == expect_sum) && !e->res->timeouts &&
                   (e->res->eof_blocks == o.blocks);
        secs = ms / 1e3;
        if (sorter) {
            printf("sorter GPU %d: %s stage ring(s), %s writes, %ld tuples "
                   "of %u B, %.3f ms, %.2f Mtuples/s, %.2f GB/s: %s\n",
                   e->dev, o.global_ring ? "one global" : "per-block",
                   coalesce_name[g_coalesce], o.tuples, o.size,
                   ms, o.tuples / secs / 1e6, bytes / secs / 1e9,
                   good ? "OK" : "FAILED");
            printf("json: {\"test\":\"sorter\",\"stage\":\"%s\","
                   "\"coalesce\":%d,\"tuple_bytes\":%u,\"tuples\":%ld,"
                   "\"blocks\":%u,\"seconds\":%.6f,\"mtuples_per_s\":%.3f,"
                   "\"gbs\":%.3f,\"ok\":%s}\n",
                   o.global_ring ? "global" : "per-block", g_coalesce,
                   o.size, o.tuples, o.blocks, secs, o.tuples / secs / 1e6,
                   bytes / secs / 1e9, good ? "true" : "false");
        } else if (shuffle) {
            mgi_ch_attr_t at;
            CHECK_UCS(mgi_ch_query(ctx, ch, e->id, &at));
            if (at.land_tuples != e->res->landed) {
                printf("shuffle rank %d ep %u: mgi_ch_query says %llu "
                       "tuples landed, the device %llu: FAILED\n", rank,
                       e->id, (unsigned long long)at.land_tuples,
                       e->res->landed);
                good = 0;
            }
            if ((o.land_pct >= 100) && (e->res->landed != expect_n)) {
                printf("shuffle rank %d ep %u: room for all, but %llu of "
                       "%llu tuples landed: FAILED\n", rank, e->id,
                       e->res->landed, expect_n);
                good = 0;
            }
            printf("shuffle rank %d ep %u (GPU %d): %ld tuples of %u B sent "
                   "(%s), received %llu of %llu (%llu landed), checksum %s, "
                   "%.3f ms, %.2f GB/s received: %s; %llu block sends, %llu "
                   "found a stage ring full\n", rank, e->id, e->dev,
                   o.tuples, o.size,
                   o.local > 0 ? "one process" : "two processes",
                   e->res->received, expect_n, e->res->landed,
                   e->res->checksum == expect_sum ? "ok" : "BAD", ms,
                   expect_n * o.size / secs / 1e9, good ? "OK" : "FAILED",
                   e->res->send_calls, e->res->send_full);
        } else {
            printf("send_bw rank %d: %ld tuples of %u B GPU0 -> GPU%d (%s), "
                   "received %llu, checksum %s, %.3f ms, %.2f GB/s "
                   "payload: %s; %llu block receives, %llu found nothing\n",
                   rank, o.tuples, o.size, e->dev,
                   o.local > 0 ? "one process" : "two processes",
                   e->res->received,
                   e->res->checksum == expect_sum ? "ok" : "BAD", ms,
                   bytes / secs / 1e9, good ? "OK" : "FAILED",
                   e->res->recv_calls, e->res->recv_empty);
        }
        print_block_time(sorter ? "sorter" : shuffle ? "shuffle" : "send_bw",
                         rank, e->id, e->res, o.blocks);
        if ((e->res->t_recv_last > 0) &&
            (e->res->t_recv_first >= e->res->t_begin)) {
            /* of the kernel's time (its events), what passed before the
             * first tuples and after the last */
            printf("%s rank %d ep %u: tuples received from %.2f to %.2f ms "
                   "after the first block began; the kernel took %.2f ms\n",
                   sorter ? "sorter" : shuffle ? "shuffle" : "send_bw",
                   rank, e->id,
                   (e->res->t_recv_first - e->res->t_begin) / 1e6,
                   (e->res->t_recv_last - e->res->t_begin) / 1e6, ms);
        }
        print_block_ends(sorter ? "sorter" : shuffle ? "shuffle" : "send_bw",
                         rank, e->id, e->res, eps[0].res, 1);
        ok = good;
    }
    if (shuffle) {
        /* both endpoints' received bytes over the slower kernel's time */
        double mine = max_ms / 1e3, all[64] = {0}, sl = 0;
        CHECK_UCS(mgi_context_allgather(ctx, &mine, all, sizeof(mine)));
        for (int r = 0; r < nproc && r < 64; ++r) {
            sl = (all[r] > sl) ? all[r] : sl;
        }
        if (rank == 0) {
            double gbs = (sl > 0) ? (double)dst.size() * bytes / sl / 1e9 : 0;
            mgi_ep_id_t path[16];
            for (size_t i = 0; o.vertex_fmt && (i < src.size()); ++i) {
                for (size_t j = 0; j < dst.size(); ++j) {
                    int np = mgi_ch_path(ctx, ch, src[i], dst[j], path, 16);
                    printf("shuffle path %u -> %u:", src[i], dst[j]);
                    for (int q = 0; q < np; ++q) {
                        printf(" %u", path[q]);
                    }
                    np = mgi_ch_next_hops(ctx, ch, src[i], dst[j], path, 16);
                    if (np > 1) {
                        printf("; spread over next hops");
                        for (int q = 0; q < np; ++q) {
                            printf(" %u", path[q]);
                        }
                    }
                    printf("\n");
                }
            }
            if (o.expect_path != NULL) {
                std::vector<mgi_ep_id_t> want;
                for (const char *c = o.expect_path; *c != '\0';) {
                    char *end;
                    long i = strtol(c, &end, 10);
                    if ((end == c) || (i < 0) || (i >= (long)src.size())) {
                        want.clear();
                        break;
                    }
                    want.push_back(src[i]);
                    c = (*end == ',') ? end + 1 : end;
                }
                int np = (want.size() >= 2) ?
                         mgi_ch_path(ctx, ch, want.front(), want.back(), path,
                                     16) : -1;
                int same = (np == (int)want.size());
                for (int q = 0; same && (q < np); ++q) {
                    same = (path[q] == want[q]);
                }
                printf("shuffle path as expected (%s): %s\n", o.expect_path,
                       same ? "yes" : "NO: FAILED");
                ok = ok && same;
            }
            printf("shuffle %u B tuples: %zu endpoints (%s), %.2f GB/s "
                   "received in all, slowest kernel %.3f ms, %u stage "
                   "group(s) per user block, %s\n", o.size, dst.size(),
                   o.local > 0 ? "one process" : "processes", gbs,
                   sl * 1e3, eps[0].h.ngroups, send_how(o).c_str());
            printf("json: {\"test\":\"shuffle\",\"tuple_bytes\":%u,"
                   "\"tuples_per_ep\":%ld,\"procs\":%d,\"blocks\":%u,"
                   "\"stage_groups\":%u,\"tile\":%u,\"seconds\":%.6f,"
                   "\"gbs\":%.3f,\"ok\":%s}\n", o.size, o.tuples, nproc,
                   o.blocks, eps[0].h.ngroups, o.tile, sl, gbs,
                   ok ? "true" : "false");
        }
    }
    /* the copy-engine figure is in rank 0, the channel's in the dst's */
    if (mode == STREAM_BENCH) {
        double mine[2] = {ce, 0}, all[4] = {0, 0, 0, 0};
        for (int k = 0; k < local; ++k) {
            if (is_dst[k]) {
                float ms = 0;
                if (ok) {
                    cudaEventElapsedTime(&ms, eps[k].start, eps[k].stop);
                }
                mine[1] = ms / 1e3;
            }
        }
        CHECK_UCS(mgi_context_allgather(ctx, mine, all, sizeof(mine)));
        if (rank == 0) {
            double ce_gbs = all[0], s = (nproc > 1) ? all[3] : all[1];
            double gbs = (s > 0) ? bytes / s / 1e9 : 0;
            const int gpus = (ngpus() > 1) ? 2 : 1;
            printf("send_bw %u B tuples: MGI %.2f GB/s, copy engine %.2f "
                   "GB/s (%s), ratio %.3f, %s\n", o.size, gbs, ce_gbs,
                   (gpus > 1) ? "GPU0 -> GPU1" : "within GPU 0: one GPU",
                   ce_gbs > 0 ? gbs / ce_gbs : 0, send_how(o).c_str());
            printf("json: {\"test\":\"send_bw\",\"tuple_bytes\":%u,"
                   "\"gpus\":%d,"
                   "\"tuples\":%ld,\"bytes\":%zu,\"procs\":%d,"
                   "\"blocks\":%u,\"tile\":%u,\"seconds\":%.6f,"
                   "\"mgi_gbs\":%.3f,"
                   "\"copy_engine_gbs\":%.3f,\"ratio\":%.4f,\"ok\":%s}\n",
                   o.size, gpus, o.tuples, bytes, nproc, o.blocks, o.tile, s,
                   gbs,
                   ce_gbs,
                   ce_gbs > 0 ? gbs / ce_gbs : 0, ok ? "true" : "false");
        }
    }
    fflush(stdout);
    {
        int mine = ok, all[64] = {0};
        CHECK_UCS(mgi_context_allgather(ctx, &mine, all, sizeof(int)));
        for (int r = 0; r < nproc && r < 64; ++r) {
            ok = ok && all[r];
        }
    }
    if (ok) {
        CHECK_UCS(mgi_ch_delete(ctx, ch));
    }
    mgi_context_destroy(ctx);
    return ok ? 0 : 1;
}

/**
 * The MGI variant's host side: the context and GPU endpoints, a channel
 * per shuffle, the launch of the shuffle kernel (mgi_wl_mgi_kernel.cu),
 * the bounded waits, the checks every rank votes on, and the profile.
 */
#include "mgi_wl_int.h"

/* ---------------------------------------------------------------- MGI */

/*
 * MGI channels with GPU endpoints (src/ucp_ext, mgi/mgi.h): partition and
 * transfer as one pipelined step.  Per variant: one context over the
 * launcher's allgather and one GPU endpoint per rank (its sorter is a
 * persistent kernel, started once).  Per shuffle: a channel with every
 * rank's endpoint as source and destination, schema {key, val} with the
 * key as partition key, and one kernel: each block sends its slice of
 * t->in, in tiles of $MGI_WL_MGI_TILE tuples per thread straight from
 * t->in (mgi_dev_send_block_tile_of) where the channel tells each tuple's
 * destination (by key, or rank 1 for point-to-point), else a tuple per
 * thread (mgi_dev_send_block, many-to-one), receiving into t->recv
 * whenever its stage ring is full, flushes without blocking
 * (mgi_dev_flush_nb) while receiving, then receives until EOF; then the
 * channel is deleted (its ids are not reused: max_channels is raised to
 * what the run needs).  Tuples a rank keeps go through the channel too
 * (the loopback lane).  Every wait is bounded: the kernel by a device-side
 * deadline (MGI_TIMEOUT_MS), the host by cudaStreamQuery and a timeout.
 *
 * While the endpoint lives, nothing here may cudaFree or
 * cudaDeviceSynchronize on this GPU (they wait for the sorter): every
 * buffer is allocated in init, before the endpoint, and the hash table of
 * GroupBy / Join is reserved there for the expected tuples.
 */

/* Rank d's tuples go to eps[d]: the channel's destination of a key is
 * dst[key % ndst] (little-endian key at offset 0), with dst in rank order
 * that is mgi_wl_dest()'s key % G. */
static_assert((offsetof(mgi_wl_tuple_t, key) == 0) &&
              (sizeof(((mgi_wl_tuple_t*)0)->key) == 8) &&
              (sizeof(mgi_wl_tuple_t) == 16),
              "the MGI schema is {int64 key, int64 val}");

static int wl_mgi_oob_allgather(const void *sbuf, void *rbuf, size_t len,
                                void *arg)
{
    return mgi_wl_allgather((mgi_wl_boot_t*)arg, sbuf, len, rbuf);
}

/* Collective: did every rank get through `step`?  For steps that can fail
 * on one rank alone; the tag catches ranks that are at different steps
 * (the launcher's allgather only checks lengths). */
static int wl_mgi_vote(wl_rank_t *w, int ok, const char *step, int *all_ok)
{
    struct {
        char    tag[60];
        int32_t ok;
    } me, all[MGI_WL_MAX_RANKS];
    int r;

    memset(&me, 0, sizeof(me));
    snprintf(me.tag, sizeof(me.tag), "mgi_workloads mgi: %s", step);
    me.ok = ok;
    WL_CHECK(mgi_wl_allgather(w->boot, &me, sizeof(me), all));
    *all_ok = 1;
    for (r = 0; r < w->G; ++r) {
        if (strncmp(all[r].tag, me.tag, sizeof(me.tag)) != 0) {
            fprintf(stderr, "mgi_workloads rank %d: at '%s', rank %d is "
                    "elsewhere\n", w->me, step, r);
            return -1;
        }
        *all_ok &= (all[r].ok != 0);
    }
    return 0;
}

/* Every rank failed the variant at the same point (a vote or a collective
 * call said so): record why, since the run ends here; the channel left
 * behind is in no state to go on. */
static int wl_mgi_failed(wl_rank_t *w, const char *why)
{
    char buf[160];

    if (w->me == 0) {
        snprintf(buf, sizeof(buf), "FAILED: %s (see stderr)", why);
        mgi_wl_report_absent(&wl_report, "mgi", buf, stdout);
        wl_save(w);
    }
    return -1;
}

/* UCX drops a transport it cannot load with a warning only: check that
 * the ones asked for (cuda_mgi) load, as the ucx variants do. */
static int wl_mgi_check_tls(wl_rank_t *w, const char *tls)
{
    mgi_wl_ucx_t u;
    ucp_config_t *config;
    ucp_params_t params;
    ucs_status_t status;
    const char *missing;
    char buf[64];

    memset(&u, 0, sizeof(u));
    status = ucp_config_read(NULL, NULL, &config);
    if (status == UCS_OK) {
        status = ucp_config_modify(config, "TLS", tls);
        if (status == UCS_OK) {
            memset(&params, 0, sizeof(params));
            params.field_mask = UCP_PARAM_FIELD_FEATURES;
            params.features   = UCP_FEATURE_RMA;
            status = ucp_init(&params, config, &u.context);
        }
        ucp_config_release(config);
    }
    if (status != UCS_OK) {
        fprintf(stderr, "mgi_workloads rank %d: UCX with %s: %s\n", w->me,
                tls, ucs_status_string(status));
        return -1;
    }
    missing = mgi_wl_ucx_missing_tl(&u, tls, buf, sizeof(buf));
    ucp_cleanup(u.context);
    if (missing != NULL) {
        fprintf(stderr, "mgi_workloads rank %d: UCX did not load %s (of %s)"
                "\n", w->me, missing, tls);
        return -1;
    }
    return 0;
}

/* Tuples this rank receives in one table's shuffle, by the reference. */
static uint64_t wl_mgi_expected(const wl_rank_t *w, int orders)
{
    uint64_t n = 0;
    int s;

    for (s = 0; s < w->G; ++s) {
        n += orders ? w->ref.o_count[s][w->me] : w->ref.l_count[s][w->me];
    }
    return n;
}

/* How many user blocks of the rank's shuffle kernel fit at once beside
 * the sorters: the kernel's blocks an SM (the fewest of its variants, at
 * m->threads threads), on the SMs left once every rank on this GPU has an
 * SM for each sorter block (a sorter block's shared memory takes most of
 * one), shared among those ranks. */
static int wl_mgi_user_room(wl_rank_t *w, const mgi_context_params_t *p,
                            int nsm, unsigned *per_sm, unsigned *room)
{
    const long sorters = (long)w->on_dev * p->sorter_blocks;
    int p_, tiled, c, n, fewest = INT_MAX;
    unsigned sl;

    /* every kernel: profile flag, tiled, consumer, kind of tile send */
    for (p_ = 0; p_ < 2; ++p_) {
        for (tiled = 0; tiled < 2; ++tiled) {
            for (c = 0; c < WL_C_N; ++c) {
                for (sl = MGI_DEV_TILE_ONE; sl <= WL_SEND_GENERIC; ++sl) {
                    WL_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                            &n, (const void*)wl_mgi_kernel(p_, tiled, c, sl),
                            (int)w->mgi.threads, 0));
                    fewest = std::min(fewest, n);
                }
            }
        }
    }
    *per_sm = (unsigned)fewest;
    *room   = (sorters < nsm) ?
              (unsigned)((nsm - sorters) * fewest / w->on_dev) : 0;
    return 0;
}

/* Local setup before the endpoint: checks, buffers, the hash table. */
static int wl_mgi_prepare(wl_rank_t *w, const mgi_context_params_t *p,
                          const char *tls)
{
    wl_mgi_t *m = &w->mgi;
    size_t seg, msg = mgi_msg_size(sizeof(mgi_wl_tuple_t));
    unsigned per_sm, room;
    cudaDeviceProp prop;

    /* a block's send must fit a segment (mgi_dev_send_block refuses more) */
    if (mgi_params_seg_size(p, &seg) != UCS_OK) {
        fprintf(stderr, "mgi_workloads rank %d: libmgi refuses the MGI_* "
                "settings (see its message)\n", w->me);
        return -1;
    }
    if ((m->threads < 32) || (m->threads > WL_MGI_MAX_THREADS) ||
        (m->threads % 32 != 0)) {
        fprintf(stderr, "mgi_workloads rank %d: MGI_WL_MGI_THREADS=%u: a "
                "multiple of 32 from 32 to %d\n", w->me, m->threads,
                WL_MGI_MAX_THREADS);
        return -1;
    }
    if (m->threads * msg > seg - MGI_SEG_HDR_SIZE) {
        fprintf(stderr, "mgi_workloads rank %d: %u threads x %zu-byte "
                "messages do not fit a segment of %zu bytes: raise "
                "MGI_SEG_SIZE\n", w->me, m->threads, msg, seg);
        return -1;
    }
    /* the kernel's blocks wait for each other's EOF: all must be resident
     * beside the sorters (an SM each at worst), of every rank on this GPU
     * (MGI_WL_SHARE_GPUS, under MPS); the default gives way */
    WL_CUDA(cudaGetDeviceProperties(&prop, w->dev));
    WL_CHECK(wl_mgi_user_room(w, p, prop.multiProcessorCount, &per_sm,
                              &room));
    if ((getenv("MGI_WL_MGI_BLOCKS") == NULL) && (m->blocks > room) &&
        (room > 0)) {
        m->blocks = room;
    }
    if ((m->blocks < 1) || (m->blocks > room)) {
        fprintf(stderr, "mgi_workloads rank %d: %u user blocks of %u "
                "threads do not fit beside the sorters: %d SMs less %u "
                "sorter blocks for each of the %d rank(s) on this GPU leave "
                "room for %u blocks a rank (%u an SM): set MGI_WL_MGI_BLOCKS "
                "to at most %u, or MGI_SORTER_BLOCKS lower\n", w->me,
                m->blocks, m->threads, prop.multiProcessorCount,
                p->sorter_blocks, w->on_dev, room, per_sm, room);
        return -1;
    }
    WL_CHECK(wl_mgi_check_tls(w, tls));
    if (w->opts->op == WL_OP_GROUPBY) {
        WL_CHECK(wl_table_reserve(w, std::min<uint64_t>(
                wl_mgi_expected(w, 0), w->spec.tpch.n_orders)));
    } else if (w->opts->op == WL_OP_JOIN) {
        WL_CHECK(wl_table_reserve(w, wl_mgi_expected(w, 1)));
    }
    WL_CUDA(cudaMalloc((void**)&m->d_res, sizeof(*m->d_res)));
    WL_CUDA(cudaHostAlloc((void**)&m->h_res, sizeof(*m->h_res),
                          cudaHostAllocDefault));
    return 0;
}

static void wl_mgi_release(wl_rank_t *w)
{
    wl_mgi_t *m = &w->mgi;

    cudaFree(m->d_res);
    cudaFreeHost(m->h_res);
    m->d_res   = NULL;
    m->h_res = NULL;
}

/* $name as a whole number from 0 to max, def when unset. -1, with a
 * message that names it, when it is something else. */
int wl_env_uint(const wl_rank_t *w, const char *name, unsigned def,
                unsigned max, unsigned *out)
{
    const char *v = getenv(name);
    unsigned long x;
    char *end;

    if (v == NULL) {
        *out = def;
        return 0;
    }
    errno = 0;
    x     = strtoul(v, &end, 10);
    if ((v[0] < '0') || (v[0] > '9') || (*end != '\0') || (errno != 0) ||
        (x > max)) {
        fprintf(stderr, "mgi_workloads rank %d: %s=%s: set a whole number "
                "from 0 to %u, or unset it for %u\n", w->me, name, v, max,
                def);
        return -1;
    }
    *out = (unsigned)x;
    return 0;
}

int wl_mgi_init(wl_rank_t *w)
{
    wl_mgi_t *m      = &w->mgi;
    const char *tls  = getenv("MGI_WL_MGI_TLS");
    mgi_context_params_t p;
    mgi_ep_params_t ep;
    ucs_status_t status;
    unsigned need;
    int ok, all_ok;

    memset(m, 0, sizeof(*m));
    tls = (tls != NULL) ? tls : WL_MGI_TLS;
    mgi_context_params_init(&p);
    /* libmgi gives a channel between the GPU endpoints of one host direct
     * rings unless MGI_DIRECT_RINGS=0: every channel here is one */
    m->direct = (p.direct_rings != 0);
    if (m->direct && (getenv("MGI_SORTER_BLOCKS") == NULL)) {
        /* no tuple of ours goes through a sorter: one block holds the
         * endpoint's sorter, the SMs are the user blocks' */
        p.sorter_blocks = 1;
    }
    /* the blocks and threads are checked against the GPU and the
     * segments in wl_mgi_prepare */
    ok  = (wl_env_uint(w, "MGI_WL_MGI_BLOCKS",
                       m->direct ? WL_MGI_DIRECT_BLOCKS :
                       (w->G == 1) ? WL_MGI_BLOCKS_1 : WL_MGI_BLOCKS, 65535,
                       &m->blocks) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_THREADS",
                       m->direct ? WL_MGI_DIRECT_THREADS : WL_MGI_THREADS,
                       WL_MGI_MAX_THREADS, &m->threads) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_TILE", WL_MGI_TILE, WL_MGI_TILE_MAX,
                       &m->tile) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_RECV_EVERY", WL_MGI_RECV_EVERY,
                       1u << 20, &m->recv_every) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_RECV_TUPLES", WL_MGI_RECV,
                       WL_MGI_RECV_MAX, &m->recv_tuples) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_DYNAMIC", 1, 1, &m->dynamic) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_FUSE", WL_FUSE_JOIN, WL_FUSE_ALL,
                       &m->fuse) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_PROFILE", 0, 1, &m->profile) == 0) &&
          (wl_env_uint(w, "MGI_WL_MGI_LAND", 1, 1, &m->land) == 0);
    if (ok && (m->recv_tuples == 0)) {
        fprintf(stderr, "mgi_workloads rank %d: MGI_WL_MGI_RECV_TUPLES=0: "
                "a receive call must take at least one tuple\n", w->me);
        ok = 0;
    }
    if (getenv("MGI_TEST_TUPLE_SIZE") == NULL) {
        p.tuple_size = sizeof(mgi_wl_tuple_t);
    }
    if (getenv("MGI_TEST_DEV_TILE_BATCH") == NULL) {
        /* a tile's tuples of one destination in messages of up to 64 KB:
         * 1.10-1.15x on one H100 (bench/workloads/README.md) */
        p.dev_tile_batch = WL_MGI_TILE_BATCH;
    }
    if (getenv("MGI_TEST_STAGE_GROUPS") == NULL) {
        /* a stage ring per destination: segments of one destination,
         * moved whole instead of walked; on 2 x H200 the Exchange moved
         * 163.1-163.7 GB/s against 121.6-122.2 with one group, many-to-one
         * 40.3 against 27.6 and one-to-many 52.2 against 43.0 GB/s; not
         * point-to-point, whose one destination needs none (78.4 against
         * 143.0 GB/s) */
        p.stage_groups = (w->spec.pattern == MGI_WL_PATTERN_P2P) ? 1u :
                         (unsigned)std::min(w->G, MGI_STAGE_GROUPS_MAX);
    }
    /* two channels at once at most: a Join's lineitem channel is made
     * while the orders' kernel runs (ids come back after a delete) */
    need = 2;
    p.max_channels = std::max(p.max_channels, need);
    m->timeout_ms  = p.timeout_ms;
    ok = ok && (wl_mgi_prepare(w, &p, tls) == 0);
    WL_CHECK(wl_mgi_vote(w, ok, "setup", &all_ok));
    if (!all_ok) {
        wl_mgi_release(w);
        return -1;
    }

    p.ucx_tls       = tls;
    p.oob.allgather = wl_mgi_oob_allgather;
    p.oob.arg       = w->boot;
    p.oob.rank      = w->me;
    p.oob.size      = w->G;
    status = mgi_context_create(&p, &m->ctx);
    if (status != UCS_OK) {
        /* collective: the ranks are out of step now, the run ends */
        fprintf(stderr, "mgi_workloads rank %d: mgi_context_create: %s\n",
                w->me, ucs_status_string(status));
        m->ctx = NULL;
        wl_mgi_release(w);
        return -1;
    }
    memset(&ep, 0, sizeof(ep));
    ep.device = w->dev;
    ep.blocks = m->blocks;
    status    = mgi_ep_create(m->ctx, &ep, &m->ep);
    if (status != UCS_OK) {
        fprintf(stderr, "mgi_workloads rank %d: mgi_ep_create on GPU %d, %u "
                "blocks: %s\n", w->me, w->me, m->blocks,
                ucs_status_string(status));
    }
    WL_CHECK(wl_mgi_vote(w, status == UCS_OK, "endpoint", &all_ok));
    if (all_ok) {
        WL_CHECK(mgi_wl_allgather(w->boot, &m->ep, sizeof(m->ep), m->eps));
        return 0;
    }
    mgi_context_destroy(m->ctx);   /* every rank: collective */
    m->ctx = NULL;
    wl_mgi_release(w);
    return -1;
}

/* Where the user blocks' time went (MGI_WL_MGI_PROFILE=1), over every
 * shuffle of this rank: thread 0's clock cycles in send calls and in
 * receive calls (copying to the
 * output included); the time after a block's last send (its
 * flush, and receiving until EOF) is given apart too. */
static void wl_mgi_print_profile(const wl_rank_t *w)
{
    const wl_mgi_t *m = &w->mgi;
    const unsigned long long *f = m->prof;
    const double all = (f[WL_P_ALL] > 0) ? (double)f[WL_P_ALL] : 1.0;
    double us[2 * WL_T_N];
    int k;

    static_assert(WL_T_N == 5, "the second line prints five points");

    printf("# mgi profile rank %d: user blocks %.0f k cycles each per "
           "shuffle; %.1f%% in sends (%llu calls, %llu "
           "found the stage ring full, %.1f k cycles per call), %.1f%% in "
           "receives (%llu calls, %llu found nothing, %.1f k cycles per "
           "call, copying to the output included; %.1f%% in the calls that "
           "found nothing, %.1f k cycles each; the others %.1f k cycles "
           "each, %.2f rounds each); %.1f%% after the last send\n", w->me,
           all / 1e3 / m->blocks / m->shuffles,
           100.0 * f[WL_P_SEND] / all,
           f[WL_P_SENDS], f[WL_P_FULL],
           (f[WL_P_SENDS] > 0) ? f[WL_P_SEND] / 1e3 / f[WL_P_SENDS] : 0.0,
           100.0 * f[WL_P_RECV] / all, f[WL_P_RECVS], f[WL_P_EMPTY],
           (f[WL_P_RECVS] > 0) ? f[WL_P_RECV] / 1e3 / f[WL_P_RECVS] : 0.0,
           100.0 * f[WL_P_RECV_NONE] / all,
           (f[WL_P_EMPTY] > 0) ? f[WL_P_RECV_NONE] / 1e3 / f[WL_P_EMPTY] :
                                 0.0,
           (f[WL_P_RECVS] > f[WL_P_EMPTY]) ?
               (f[WL_P_RECV] - f[WL_P_RECV_NONE]) / 1e3 /
               (f[WL_P_RECVS] - f[WL_P_EMPTY]) : 0.0,
           (f[WL_P_RECVS] > f[WL_P_EMPTY]) ?
               (double)f[WL_P_ROUNDS] / (f[WL_P_RECVS] - f[WL_P_EMPTY]) :
               0.0,
           100.0 * f[WL_P_TAIL] / all);
    for (k = 0; k < 2 * WL_T_N; ++k) {
        us[k] = (m->when_n[k / 2] > 0) ? m->when_us[k] / m->when_n[k / 2] :
                                         -1.0;
    }
    printf("# mgi profile rank %d: after the first block started (us, "
           "means per shuffle, -1: never): blocks started %.0f-%.0f, ended "
           "sending %.0f-%.0f (having received %.1f%% of their tuples), "
           "their flushes delivered %.0f-%.0f, receives took tuples from "
           "%.0f to %.0f, read EOF %.0f-%.0f\n",
           w->me, us[0], us[1], us[2], us[3],
           100.0 * f[WL_P_GOT_SENT] / (f[WL_P_GOT] ? f[WL_P_GOT] : 1),
           us[4], us[5], us[6], us[7], us[8], us[9]);
    fflush(stdout);
}

void wl_mgi_fini(wl_rank_t *w, int sync)
{
    wl_mgi_t *m = &w->mgi;

    if (m->ctx != NULL) {
        if (!sync) {
            /* not reached: init fails on every rank or on none, and then
             * destroys the context itself (destroy is collective) */
            return;
        }
        if (m->profile && (m->shuffles > 0)) {
            wl_mgi_print_profile(w);
        }
        if ((w->me == 0) && (m->shuffles > 0)) {
            /* the first create apart: it allocates the final rings */
            printf("# mgi: %u blocks x %u threads per GPU; per shuffle on "
                   "rank 0: channel create %.2f ms (the first one %.2f "
                   "ms), kernel %.2f ms, delete %.2f ms (means)\n",
                   m->blocks, m->threads,
                   (m->shuffles > 1) ? (m->create_ms - m->first_create_ms) /
                                       (m->shuffles - 1) : 0.0,
                   m->first_create_ms, m->kernel_ms / m->shuffles,
                   m->delete_ms / m->shuffles);
            fflush(stdout);
        }
        mgi_context_destroy(m->ctx);
        m->ctx = NULL;
    }
    wl_mgi_release(w);
}

/* Wait for this rank's stream, bounded (cudaStreamSynchronize is not: a
 * lost tuple would hang it). */
static int wl_wait_stream(wl_rank_t *w, double timeout_ms, const char *what)
{
    double t0 = wl_now_ms();
    cudaError_t e;

    while ((e = cudaStreamQuery(w->stream)) == cudaErrorNotReady) {
        if (wl_now_ms() - t0 > timeout_ms) {
            fprintf(stderr, "mgi_workloads rank %d: TIMEOUT: %s not done "
                    "after %.0f s\n", w->me, what, timeout_ms / 1e3);
            return -1;
        }
        usleep(10);     /* 50: up to that much on every shuffle's time */
    }
    if (e != cudaSuccess) {
        fprintf(stderr, "mgi_workloads rank %d: %s: %s\n", w->me, what,
                cudaGetErrorString(e));
        return -1;
    }
    return 0;
}

/* What the shuffle's receives do with the tuples (WL_C_*): with tile
 * sends and MGI_WL_MGI_FUSE, the Join builds and probes there (orders
 * first, see wl_iteration), and at 2 GroupBy aggregates there; else they
 * copy. */
static int wl_mgi_consumer(const wl_rank_t *w, int tiled, int orders)
{
    if (!tiled) {
        return WL_C_COPY;
    }
    switch (w->opts->op) {
    case WL_OP_GROUPBY:
        return (w->mgi.fuse >= WL_FUSE_ALL) ? WL_C_GROUPBY : WL_C_COPY;
    case WL_OP_JOIN:
        return (w->mgi.fuse < WL_FUSE_JOIN) ? WL_C_COPY :
               orders ? WL_C_BUILD : WL_C_PROBE;
    default:
        return WL_C_COPY;
    }
}

/* Does table t's shuffle land its tuples in t->recv (MGI_WL_MGI_LAND,
 * direct rings, a consumer that copies them out)? */
static int wl_mgi_lands(const wl_rank_t *w, const wl_table_t *t)
{
    return w->mgi.land && w->mgi.direct &&
           (wl_mgi_consumer(w, 1, t == &w->o) == WL_C_COPY);
}

/* A channel for table t's shuffle (collective): every rank's endpoint
 * as source and destination, schema {int64 key, int64 val}, the key as
 * partition key; t->recv its landing buffer where wl_mgi_lands. */
static int wl_mgi_open(wl_rank_t *w, const wl_table_t *t, mgi_ch_id_t *ch,
                       mgi_dev_ch_t *h)
{
    wl_mgi_t *m = &w->mgi;
    void *land[MGI_WL_MAX_RANKS];
    uint64_t land_tuples[MGI_WL_MAX_RANKS];
    mgi_schema_t schema;
    mgi_ch_params_t cp;
    ucs_status_t status;
    int d;

    memset(&schema, 0, sizeof(schema));
    schema.nattrs       = 2;
    schema.attr_size[0] = sizeof(int64_t);      /* key: partition key */
    schema.attr_size[1] = sizeof(int64_t);      /* val */
    memset(&cp, 0, sizeof(cp));
    cp.src      = m->eps;
    cp.nsrc     = w->G;
    cp.dst      = m->eps;
    cp.ndst     = w->G;
    cp.schema   = &schema;
    cp.part_key = 0;
    if (wl_mgi_lands(w, t)) {
        /* only this rank's entry is read */
        for (d = 0; d < w->G; ++d) {
            land[d]        = (d == w->me) ? (void*)t->recv : NULL;
            land_tuples[d] = t->cap;
        }
        cp.land        = land;
        cp.land_tuples = land_tuples;
    }
    status = mgi_ch_create(m->ctx, &cp, ch);
    if (status != UCS_OK) {
        /* collective: every rank got the same answer */
        fprintf(stderr, "mgi_workloads rank %d: mgi_ch_create: %s\n", w->me,
                ucs_status_string(status));
        return wl_mgi_failed(w, "mgi_ch_create failed");
    }
    status = mgi_ch_device_handle(m->ctx, *ch, m->ep, h);
    if (status != UCS_OK) {
        fprintf(stderr, "mgi_workloads rank %d: mgi_ch_device_handle: %s\n",
                w->me, ucs_status_string(status));
        return -1;
    }
    return 0;
}

/* After a shuffle that landed (res->top): the tuples in the landing
 * buffer, at t->recv's start, and those received from the rings, at its
 * end, made one run from its start (the second part moved down, in pieces
 * that do not overlap); res->received counts both.  Both parts in the
 * buffer: WL_MGI_OVERFLOW otherwise. */
static int wl_mgi_landed(wl_rank_t *w, wl_table_t *t, mgi_ch_id_t ch,
                         wl_mgi_res_t *res)
{
    const uint64_t r = res->received;
    mgi_ch_attr_t attr;
    ucs_status_t status;
    uint64_t src, dst, k, c;

    status = mgi_ch_query(w->mgi.ctx, ch, w->mgi.ep, &attr);
    if (status != UCS_OK) {
        fprintf(stderr, "mgi_workloads rank %d: mgi_ch_query: %s\n", w->me,
                ucs_status_string(status));
        return -1;
    }
    if (attr.land_tuples + r > t->cap) {
        res->flags |= WL_MGI_OVERFLOW;
        return 0;
    }
    src = t->cap - r;
    dst = attr.land_tuples;
    for (k = 0; (k < r) && (src > dst); k += c) {
        c = std::min(r - k, src - dst);
        WL_CUDA(cudaMemcpyAsync(t->recv + dst + k, t->recv + src + k,
                                c * sizeof(*t->recv),
                                cudaMemcpyDeviceToDevice, w->stream));
    }
    WL_CUDA(cudaStreamSynchronize(w->stream));
    res->received = attr.land_tuples + r;
    return 0;
}

/* The `shuffle` hook (see the variant table).  transfer_ms is the whole
 * step, channel create to delete; partition_ms stays 0 (it overlaps).  A
 * Join's lineitem channel is created while the orders' kernel runs, so
 * its create is off the Join's path. */
int wl_mgi_shuffle(wl_rank_t *w, wl_table_t *t, wl_times_t *times)
{
    wl_mgi_t *m       = &w->mgi;
    wl_mgi_res_t *res = m->h_res;
    int orders        = (t == &w->o);
    mgi_wl_pattern_t pat = w->spec.pattern;
    int by_key = (pat == MGI_WL_PATTERN_EXCHANGE) ||
                 (pat == MGI_WL_PATTERN_ONE2MANY);
    mgi_dev_ch_t h;
    mgi_ch_id_t ch;
    wl_mgi_dsts_t dsts;
    ucs_status_t status;
    char why[160] = "";
    double t0, t1, t2, t3;
    uint64_t want;
    int all_ok, d;

    for (d = 0; d < w->G; ++d) {
        dsts.ep[d] = m->eps[d];
    }

    t0 = wl_now_ms();
    if (m->next_ready) {
        ch            = m->next_ch;
        h             = m->next_h;
        m->next_ready = 0;
    } else {
        WL_CHECK(wl_mgi_open(w, t, &ch, &h));
    }
    t1 = wl_now_ms();
    WL_CUDA(cudaMemsetAsync(m->d_res, 0, sizeof(*m->d_res), w->stream));
    res->top = (unsigned)wl_mgi_lands(w, t);
    WL_CUDA(cudaMemcpyAsync(&m->d_res->top, &res->top, sizeof(res->top),
                            cudaMemcpyHostToDevice, w->stream));
    /* tile sends where the channel tells each tuple's destination (the
     * key, or rank 1 for point-to-point), or the pattern's rule does
     * (many-to-one: mgi_dev_send_block_tile_map, where its channel fits
     * it); a kernel of its own, so the other one keeps its registers */
    const int map   = (pat == MGI_WL_PATTERN_MANY2ONE) &&
                      mgi_dev_tile_of_fits(&h, sizeof(mgi_wl_tuple_t),
                                           MGI_DEV_TILE_MANY,
                                           MGI_DEV_DST_MAP);
    const int tiled = (m->tile > 0) &&
                      (by_key || map || (pat == MGI_WL_PATTERN_P2P));
    const int c     = wl_mgi_consumer(w, tiled, orders);
    if ((c == WL_C_GROUPBY) || (c == WL_C_BUILD)) {
        /* sized at wl_mgi_init: nothing is allocated under the sorter */
        WL_CUDA(cudaMemsetAsync(w->table, 0,
                                w->table_size * sizeof(wl_slot_t),
                                w->stream));
    } else if (c == WL_C_PROBE) {
        WL_CUDA(cudaMemsetAsync(w->d_acc, 0, 2 * sizeof(*w->d_acc),
                                w->stream));
    }
    /* the tiles' destination (the kernel sends to it), and their kind: one
     * destination where it names one, or where the key has one to choose
     * from; the typed send where it serves the channel
     * (mgi_dev_tile_of_fits), else the generic one */
    const int tdst    = by_key ? MGI_DEV_DST_AUTO : map ? MGI_DEV_DST_MAP :
                        (int)dsts.ep[mgi_wl_dest(pat, 0, w->me, w->G)];
    const unsigned sl = (!by_key || (w->G == 1)) ? MGI_DEV_TILE_ONE :
                                                   MGI_DEV_TILE_MANY;
    wl_mgi_kernel(m->profile, tiled, c,
                  map ? WL_SEND_MAP :
                  mgi_dev_tile_of_fits(&h, sizeof(mgi_wl_tuple_t), sl,
                                       tdst) ? sl : WL_SEND_GENERIC)<<<
            m->blocks, m->threads, 0, w->stream>>>(
            h, t->in, t->n_in, pat, by_key, w->me, w->G, dsts, tdst,
            t->recv, t->cap, m->d_res,
            /* landing: only what does not fit comes through the rings,
             * and a send that finds its ring full receives */
            res->top ? 0u : m->recv_every,
            m->recv_tuples * (unsigned)sizeof(mgi_wl_tuple_t),
            (unsigned long long)m->timeout_ms * 1000000ull, m->tile,
            m->dynamic, w->table, w->table_size - 1, w->d_acc);
    WL_CUDA(cudaGetLastError());
    if (orders && (w->opts->op == WL_OP_JOIN)) {
        /* the lineitem channel, while this kernel runs (collective: every
         * rank shuffles its orders now) */
        WL_CHECK(wl_mgi_open(w, &w->l, &m->next_ch, &m->next_h));
        m->next_ready = 1;
    }
    WL_CUDA(cudaMemcpyAsync(res, m->d_res, sizeof(*res),
                            cudaMemcpyDeviceToHost, w->stream));
    /* the kernel gives up at its own deadline first */
    if (wl_wait_stream(w, m->timeout_ms + 10000.0, "the MGI shuffle kernel")
        != 0) {
        return -1;
    }
    t2   = wl_now_ms();
    want = wl_mgi_expected(w, orders);
    if (res->top && (res->flags == 0) &&
        (wl_mgi_landed(w, t, ch, res) != 0)) {
        /* said above; every rank hears of it in the vote below */
        snprintf(why, sizeof(why), " the landed tuples could not be "
                 "counted or moved");
    } else if (res->flags != 0) {
        snprintf(why, sizeof(why), "%s%s%s%s%s",
                 (res->flags & WL_MGI_LATE_SEND) ? " send timed out" : "",
                 (res->flags & WL_MGI_LATE_FLUSH) ? " flush timed out" : "",
                 (res->flags & WL_MGI_LATE_RECV) ? " receive timed out" : "",
                 (res->flags & WL_MGI_OVERFLOW) ? " more tuples than room" :
                                                  "",
                 (res->flags & WL_MGI_TABLE_FULL) ? " the hash table had "
                                                    "no slot left" : "");
    } else if (res->eof_blocks != m->blocks) {
        snprintf(why, sizeof(why), " EOF in %u of %u blocks",
                 res->eof_blocks, m->blocks);
    } else if (res->received > want) {
        /* GroupBy / Join would grow their table: cudaFree under the
         * sorter never returns */
        snprintf(why, sizeof(why), " %llu tuples received, the reference "
                 "says %llu", res->received, (unsigned long long)want);
    } else if ((status = mgi_ch_delete(m->ctx, ch)) != UCS_OK) {
        snprintf(why, sizeof(why), " mgi_ch_delete: %s",
                 ucs_status_string(status));
    }
    t3 = wl_now_ms();
    if (why[0] != '\0') {
        fprintf(stderr, "mgi_workloads rank %d: %s channel %u (timeout %u "
                "ms, MGI_TIMEOUT_MS):%s\n", w->me,
                orders ? "orders" : "lineitem", ch, m->timeout_ms, why);
    }
    WL_CHECK(wl_mgi_vote(w, why[0] == '\0', "shuffle", &all_ok));
    if (!all_ok) {
        return wl_mgi_failed(w, "the shuffle kernel or channel failed");
    }

    t->send_off[0] = 0;
    for (d = 0; d < w->G; ++d) {
        t->send_off[d + 1] = t->send_off[d] + res->sent[d];
    }
    memset(t->recv_off, 0, sizeof(t->recv_off));
    t->recv_off[w->G] = res->received;
    t->by_source      = 0;
    t->fused          = (c != WL_C_COPY);
    t->fused_sum      = res->rsum;
    times->transfer_ms += t3 - t0;
    m->create_ms += t1 - t0;
    if (m->shuffles == 0) {
        m->first_create_ms = t1 - t0;
    }
    m->kernel_ms += t2 - t1;
    for (d = 0; d < WL_P_N; ++d) {
        m->prof[d] += res->prof[d];
    }
    for (d = 0; m->profile && (d < WL_T_N); ++d) {
        if (res->first[d] == 0) {
            continue;       /* no block got there (took no tuples) */
        }
        ++m->when_n[d];
        m->when_us[2 * d]     += (double)(~res->first[d] -
                                          ~res->first[WL_T_START]) / 1e3;
        m->when_us[2 * d + 1] += (double)(res->last[d] -
                                          ~res->first[WL_T_START]) / 1e3;
    }
    m->delete_ms += t3 - t2;
    ++m->shuffles;
    return 0;
}

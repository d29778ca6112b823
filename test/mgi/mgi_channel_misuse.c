/**
 * mgi_channel_test misuse: calls libmgi must refuse (bad ids, sizes,
 * parameters, environment numbers, use after flush or delete) with the
 * right status and an error naming the setting, and the life cycle of
 * endpoints and channels: rounds of create, send, receive and delete over
 * a second endpoint while the first one is deleted.
 */

#include "mgi_channel_test.h"

static void drain(test_t *t, mgi_ch_id_t ch, mgi_ep_id_t ep)
{
    double deadline = now_s() + t->timeout_s;
    char buf[RECV_BUF];
    ssize_t n;

    while ((n = mgi_recv(t->ctx, ch, ep, buf, sizeof(buf))) != MGI_EOF) {
        if ((n < 0) || (now_s() > deadline)) {
            FAIL(t, "drain of channel %u at %u: %zd", ch, ep, n);
            return;
        }
        usleep(100);
    }
}

static ssize_t recv_nonzero(test_t *t, mgi_ch_id_t ch, mgi_ep_id_t ep,
                            void *buf, size_t cap)
{
    double deadline = now_s() + t->timeout_s;
    ssize_t n;

    while (((n = mgi_recv(t->ctx, ch, ep, buf, cap)) == 0) &&
           (now_s() < deadline)) {
        usleep(100);
    }
    return n;
}

/* One round over channel ch: every rank sends 64 keys by partition key,
 * receives what is its own, and the sums over all ranks match. 0 on
 * success. */
int channel_round(test_t *t, mgi_ch_id_t ch, mgi_ep_id_t ep1,
                  int round)
{
    uint64_t keys[64], got[64], sum_sent = 0, sum_got = 0, all[MAX_EPS];
    double deadline;
    ssize_t n;
    int r, i;

    for (i = 0; i < 64; ++i) {
        keys[i]   = t->rank * 1000 + round * 100 + i;
        sum_sent += keys[i];
    }
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, ep1, keys, sizeof(keys), -1),
                  sizeof(keys));
    EXPECT_STATUS(t, mgi_flush(t->ctx, ch, ep1), UCS_OK);
    deadline = now_s() + t->timeout_s;
    while ((n = mgi_recv(t->ctx, ch, ep1, got, sizeof(got))) != MGI_EOF) {
        if ((n < 0) || (now_s() > deadline)) {
            FAIL(t, "lifecycle: round %d: recv returned %zd", round, n);
            return -1;
        }
        for (i = 0; i < n / 8; ++i) {
            if ((int)(got[i] % t->size) != t->rank) {
                FAIL(t, "lifecycle: key %lu at rank %d",
                     (unsigned long)got[i], t->rank);
            }
            sum_got += got[i];
        }
    }
    /* every key arrived at key % size: the sums over all ranks match */
    mgi_context_allgather(t->ctx, &sum_sent, all, sizeof(uint64_t));
    for (sum_sent = 0, r = 0; r < t->size; ++r) {
        sum_sent += all[r];
    }
    mgi_context_allgather(t->ctx, &sum_got, all, sizeof(uint64_t));
    for (sum_got = 0, r = 0; r < t->size; ++r) {
        sum_got += all[r];
    }
    if (sum_got != sum_sent) {
        FAIL(t, "lifecycle: round %d: keys sum %lu received, %lu sent",
             round, (unsigned long)sum_got, (unsigned long)sum_sent);
        return -1;
    }
    return 0;
}

/* channel_round, then the channel is deleted. */
int lifecycle_round(test_t *t, mgi_ch_id_t ch, mgi_ep_id_t ep1,
                    int round)
{
    if (channel_round(t, ch, ep1, round) != 0) {
        return -1;
    }
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch), UCS_OK);
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch), UCS_ERR_NO_ELEM);
    return 0;
}

static void lifecycle(test_t *t)
{
    mgi_ep_params_t ep_params = {.device = MGI_EP_HOST, .blocks = 1};
    mgi_schema_t schema = {.nattrs = 1, .attr_size = {8}};
    mgi_ep_id_t eps[MAX_EPS], ep1;
    mgi_ch_params_t p   = {0};
    mgi_ch_id_t ch;
    int r, round;

    if ((mgi_ep_create(t->ctx, &ep_params, &ep1) != UCS_OK) ||
        (ep1 != MGI_EP_ID(t->rank, 1))) {
        FAIL(t, "lifecycle: second endpoint not created as %u",
             MGI_EP_ID(t->rank, 1));
        return;
    }
    for (r = 0; r < t->size; ++r) {
        eps[r] = MGI_EP_ID(r, 1);
    }
    p.src = eps; p.nsrc = t->size;
    p.dst = eps; p.ndst = t->size;
    p.schema = &schema; p.part_key = 0;
    if (mgi_ch_create(t->ctx, &p, &ch) != UCS_OK) {
        FAIL(t, "lifecycle: channel over the second endpoints failed");
        return;
    }
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, MGI_EP_ID(t->rank, 0)), UCS_OK);
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, MGI_EP_ID(t->rank, 0)),
                  UCS_ERR_NO_ELEM);
    t->eps_deleted = 1;

    /* rounds of create, send, receive, delete back to back: a deleted
     * channel is freed once the sorters moved on, and the next create
     * waits for that and takes its rings */
    for (round = 0; round < 8; ++round) {
        if ((round > 0) && (mgi_ch_create(t->ctx, &p, &ch) != UCS_OK)) {
            FAIL(t, "lifecycle: channel %d over the second endpoints "
                 "failed", round);
            return;
        }
        if (lifecycle_round(t, ch, ep1, round) != 0) {
            return;
        }
    }
    /* the last channel's references go before the endpoint does */
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, ep1), UCS_OK);
}

void misuse(test_t *t)
{
    mgi_schema_t schema = {.nattrs = 3, .attr_size = {8, 4, 4}};
    mgi_ep_id_t me      = MGI_EP_ID(t->rank, 0), id;
    /* a CUDA device that no machine has */
    mgi_ep_params_t ep_params = {.device = 9999, .blocks = 1};
    mgi_ch_params_t p   = {0};
    tuple_t tp          = {.key = 1, .src = me, .seq = 0};
    char big[512]       = {0}, small[8];
    const char *tls;
    mgi_ch_id_t ch, ch2, ch3;
    ucs_status_t status;

    p.src = t->all; p.nsrc = t->nall;
    p.dst = t->all; p.ndst = t->nall;
    p.schema = &schema; p.part_key = 0;
    if (mgi_ch_create(t->ctx, &p, &ch) != UCS_OK) {
        FAIL(t, "misuse: channel create failed");
        return;
    }

    tls = getenv("UCX_TLS");
    if (t->size == 1) {
        EXPECT_STATUS(t, mgi_ep_create(t->ctx, &ep_params, &id),
                      UCS_ERR_NO_DEVICE);
    } else if ((tls != NULL) && (strstr(tls, "cuda_mgi") == NULL)) {
        /* every rank of the test runs on this host and UCX has no
         * cuda_mgi: a GPU endpoint is refused before any device is looked
         * at (its movers' puts of GPU memory would crash UCP) */
        EXPECT_STATUS(t, mgi_ep_create(t->ctx, &ep_params, &id),
                      UCS_ERR_UNSUPPORTED);
    }
    {
        /* the segment size: the context's, and what parameters give */
        mgi_context_params_t cp;
        size_t seg = 0;
        mgi_context_params_init(&cp);
        cp.seg_size = 1000;                       /* rounded up to 128 */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        if (seg != 1024) {
            FAIL(t, "misuse: mgi_params_seg_size(1000) gave %zu, not 1024",
                 seg);
        }
        cp.stage_depth = 3;                       /* not a power of two */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.stage_depth   = 8;
        cp.mover_flushes = 0;                     /* none in flight */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.mover_flushes = 65;                    /* above the bound */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.mover_flushes = 64;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.stage_groups = 0;                      /* no stage ring */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.stage_groups = MGI_STAGE_GROUPS_MAX + 1;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.stage_groups = MGI_STAGE_GROUPS_MAX;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.direct_rings = 2;                      /* 0 or 1 */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.direct_rings = 1;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.direct_ring_kb = 2;                    /* below 4 KiB */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.direct_ring_kb = (1u << 20) + 1;       /* above 1 GiB */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.direct_ring_kb = 4;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.direct_publish_kb = (1u << 20) + 1;    /* above 1 GiB */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.direct_publish_kb = 0;                 /* after every send */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.send_zcopy = 2;                        /* 0 or 1 */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.send_zcopy = 1;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        cp.dev_tile_batch = MGI_MSG_MAX_LEN + 8;  /* above a message */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        cp.dev_tile_batch = MGI_MSG_MAX_LEN;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        /* every number has an upper bound, whether the caller set it or
         * the environment did: the refusal names the field and its
         * variable */
        {
            static const struct {
                size_t off;
                unsigned bad, good;
                const char *var;
            } b[] = {
                {offsetof(mgi_context_params_t, idle_us), 4294967295u, 100,
                 "MGI_IDLE_US"},
                {offsetof(mgi_context_params_t, mover_batch), 4294967295u,
                 64, "MGI_MOVER_BATCH"},
                {offsetof(mgi_context_params_t, timeout_ms), 0, 60000,
                 "MGI_TIMEOUT_MS"},
                {offsetof(mgi_context_params_t, sorter_blocks), 1025, 16,
                 "MGI_SORTER_BLOCKS"},
                {offsetof(mgi_context_params_t, sort_depth), (1u << 20) + 1,
                 1u << 20, "MGI_SORT_DEPTH"},
                {offsetof(mgi_context_params_t, log_interval_ms),
                 3600001, 0, "MGI_LOG_INTERVAL_MS"}
            };
            size_t i;

            for (i = 0; i < sizeof(b) / sizeof(b[0]); ++i) {
                unsigned *f = (unsigned*)((char*)&cp + b[i].off);

                *f = b[i].bad;
                log_catch();
                EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                              UCS_ERR_INVALID_PARAM);
                log_said(t, "misuse: a number out of range", b[i].var);
                *f = b[i].good;
                EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
            }
        }
        if ((mgi_context_seg_size(t->ctx) < 256) ||
            (mgi_context_seg_size(t->ctx) % 128 != 0)) {
            FAIL(t, "misuse: context segment size %zu",
                 mgi_context_seg_size(t->ctx));
        }
    }
    {
        /* the two sets of ring defaults (the test hook
         * MGI_TEST_GPU_DEFAULTS, read before the settings' own variables,
         * which still win); the harness runs with 0 */
        char *keep = env_keep("MGI_TEST_GPU_DEFAULTS");
        mgi_context_params_t cp;
        size_t seg = 0;

        setenv("MGI_TEST_GPU_DEFAULTS", "1", 1);
        mgi_context_params_init(&cp);
        if ((cp.gpu_defaults != 1) || (cp.seg_size != MGI_GPU_SEG_SIZE) ||
            (cp.stage_depth != 16) || (cp.sort_depth != 256) ||
            (cp.recv_depth != 256) || (cp.final_depth != 16) ||
            (cp.mover_batch != 32) || (cp.sorter_blocks != 16) ||
            (cp.sort_rings != 4)) {
            FAIL(t, "misuse: GPU defaults: gpu_defaults %u seg %zu depths "
                 "%u/%u/%u/%u mover batch %u sorter blocks %u sort rings %u",
                 cp.gpu_defaults, cp.seg_size, cp.stage_depth,
                 cp.sort_depth, cp.recv_depth, cp.final_depth,
                 cp.mover_batch, cp.sorter_blocks, cp.sort_rings);
        }
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        if (seg != MGI_GPU_SEG_SIZE) {
            FAIL(t, "misuse: GPU defaults: segment %zu", seg);
        }
        setenv("MGI_RECV_DEPTH", "64", 1);            /* its own wins */
        mgi_context_params_init(&cp);
        unsetenv("MGI_RECV_DEPTH");
        if ((cp.recv_depth != 64) || (cp.sort_depth != 256)) {
            FAIL(t, "misuse: GPU defaults with MGI_RECV_DEPTH=64: recv "
                 "%u sort %u", cp.recv_depth, cp.sort_depth);
        }
        setenv("MGI_TEST_GPU_DEFAULTS", "0", 1);
        mgi_context_params_init(&cp);
        if ((cp.gpu_defaults != 0) || (cp.seg_size != 0) ||
            (cp.recv_depth != 8) || (cp.sorter_blocks != 2) ||
            (cp.sort_rings != 1)) {
            FAIL(t, "misuse: CPU defaults: gpu_defaults %u seg %zu recv %u "
                 "sorter blocks %u sort rings %u", cp.gpu_defaults,
                 cp.seg_size, cp.recv_depth, cp.sorter_blocks,
                 cp.sort_rings);
        }
        setenv("MGI_TEST_GPU_DEFAULTS", "2", 1);      /* 0 or 1 */
        mgi_context_params_init(&cp);
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);
        {
            /* unset, from the machine: no GPU a process may see with
             * CUDA_VISIBLE_DEVICES empty, whatever the driver lists */
            char *vkeep = env_keep("CUDA_VISIBLE_DEVICES");

            unsetenv("MGI_TEST_GPU_DEFAULTS");
            setenv("CUDA_VISIBLE_DEVICES", "", 1);
            mgi_context_params_init(&cp);
            if ((cp.gpu_defaults != 0) || (cp.recv_depth != 8)) {
                FAIL(t, "misuse: CUDA_VISIBLE_DEVICES empty: gpu_defaults "
                     "%u recv depth %u", cp.gpu_defaults, cp.recv_depth);
            }
            env_restore("CUDA_VISIBLE_DEVICES", vkeep);
        }
        env_restore("MGI_TEST_GPU_DEFAULTS", keep);
    }
    {
        /* the MGI_* numbers of the environment: a value that is not one,
         * or one out of its range, is refused at the create, naming the
         * variable; so is a setting that was removed */
        static const char *const bad[][2] = {
            {"MGI_RECV_DEPTH", "abc"}, {"MGI_TIMEOUT_MS", "1x"},
            {"MGI_SORTER_BLOCKS", "-1"}, {"MGI_SEG_SIZE", "4294967296"},
            {"MGI_NRANKS", "2147483648"}, {"MGI_TEST_GPU_DEFAULTS", "yes"},
            {"MGI_IDLE_US", "4294967295"}, {"MGI_MOVER_BATCH", "4294967295"},
            {"MGI_TIMEOUT_MS", "0"}, {"MGI_STAGE_DEPTH", "0x20"},
            {"MGI_SORT_DEPTH", "inf"},
            {"MGI_PEER_DIRECT", "0"}, {"MGI_RECV_ZCOPY", "0"},
            {"MGI_DEV_MSG_BATCH", "0"}, {"MGI_OWNER_HELP", "0"},
            {"MGI_MOVER_STREAMS", "1"}, {"MGI_MOVER_COPY_BATCH", "1"},
            {"MGI_SORT_MIRROR", "0"}, {"MGI_CTL_SHM", "1"},
            {"MGI_LOOP_DIRECT", "1"}, {"MGI_STAGE_ZCOPY", "1"},
            {"MGI_EOF_ALONE", "1"}, {"MGI_LANE_APART", "1"},
            {"MGI_SORTER_COALESCE", "2"}, {"MGI_GPU_DEFAULTS", "1"},
            {"MGI_SORT_RINGS", "4"}, {"MGI_MAX_CHANNELS", "256"}
        };
        mgi_context_params_t cp;
        size_t seg = 0, i;
        char *keep;

        for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
            keep = env_keep(bad[i][0]);
            setenv(bad[i][0], bad[i][1], 1);
            mgi_context_params_init(&cp);
            log_catch();
            EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                          UCS_ERR_INVALID_PARAM);
            log_said(t, "misuse: a bad number", bad[i][0]);
            env_restore(bad[i][0], keep);
        }
        keep = env_keep("MGI_STAGE_DEPTH");   /* blanks around it */
        setenv("MGI_STAGE_DEPTH", " 32 ", 1);
        mgi_context_params_init(&cp);
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        if (cp.stage_depth != 32) {
            FAIL(t, "misuse: MGI_STAGE_DEPTH=\" 32 \" gave %u",
                 cp.stage_depth);
        }
        /* field_mask: a field whose bit is clear takes its setting from
         * the environment (else the default), one whose bit is set is the
         * caller's, whatever the environment says */
        setenv("MGI_STAGE_DEPTH", "64", 1);
        memset(&cp, 0, sizeof(cp));
        cp.field_mask  = MGI_CONTEXT_PARAM_FIELD_SEG_SIZE;
        cp.seg_size    = 4096;
        cp.stage_depth = 3;     /* not read: its bit is clear */
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg), UCS_OK);
        if (seg != 4096) {
            FAIL(t, "misuse: field_mask SEG_SIZE alone: segment %zu", seg);
        }
        cp.field_mask |= MGI_CONTEXT_PARAM_FIELD_STAGE_DEPTH;
        EXPECT_STATUS(t, mgi_params_seg_size(&cp, &seg),
                      UCS_ERR_INVALID_PARAM);    /* 3: its own, refused */
        mgi_context_params_init(&cp);
        if ((cp.field_mask != MGI_CONTEXT_PARAM_FIELDS_ALL) ||
            (cp.stage_depth != 64) || (cp.timeout_ms != 60000)) {
            FAIL(t, "misuse: params_init: field_mask %llx stage depth %u "
                 "timeout %u", (unsigned long long)cp.field_mask,
                 cp.stage_depth, cp.timeout_ms);
        }
        env_restore("MGI_STAGE_DEPTH", keep);
    }
    {
        /* device handles: GPU endpoints of the channel only */
        mgi_dev_ch_t h;
        EXPECT_STATUS(t, mgi_ch_device_handle(t->ctx, 999, me, &h),
                      UCS_ERR_NO_ELEM);
        EXPECT_STATUS(t, mgi_ch_device_handle(t->ctx, ch, me, &h),
                      UCS_ERR_INVALID_PARAM);
    }
    EXPECT_STATUS(t, mgi_send(t->ctx, 999, me, &tp, sizeof(tp), -1),
                  UCS_ERR_NO_ELEM);
    EXPECT_STATUS(t, mgi_recv(t->ctx, 999, me, big, sizeof(big)),
                  UCS_ERR_NO_ELEM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, sizeof(tp) - 1, -1),
                  UCS_ERR_INVALID_PARAM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, 0, -1),
                  UCS_ERR_INVALID_PARAM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, sizeof(tp), 4000),
                  UCS_ERR_INVALID_PARAM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, MGI_EP_ID(t->rank, 5), &tp,
                              sizeof(tp), -1), UCS_ERR_INVALID_PARAM);
    EXPECT_STATUS(t, mgi_recv(t->ctx, ch, me, small, sizeof(small)),
                  UCS_ERR_INVALID_PARAM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, sizeof(tp), -1),
                  sizeof(tp));
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch), UCS_ERR_BUSY);
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, me), UCS_ERR_BUSY);
    EXPECT_STATUS(t, mgi_flush(t->ctx, ch, me), UCS_OK);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, sizeof(tp), -1),
                  UCS_ERR_CANCELED);
    EXPECT_STATUS(t, mgi_flush(t->ctx, ch, me), UCS_ERR_CANCELED);
    drain(t, ch, me);
    mgi_context_allgather(t->ctx, &status, big, sizeof(status));
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch), UCS_OK);
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch), UCS_ERR_NO_ELEM);
    EXPECT_STATUS(t, mgi_send(t->ctx, ch, me, &tp, sizeof(tp), -1),
                  UCS_ERR_NO_ELEM);

    /* ranks disagreeing on the arguments: every rank gets the error */
    p.part_key = (t->rank == 0) ? 0 : -1;
    EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2),
                  (t->size > 1) ? UCS_ERR_INVALID_PARAM : UCS_OK);
    if (t->size == 1) {
        mgi_flush(t->ctx, ch2, me);
        drain(t, ch2, me);
        mgi_ch_delete(t->ctx, ch2);
    }
    /* bad schema / partition key */
    p.part_key = 3;
    EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2), UCS_ERR_INVALID_PARAM);
    p.part_key = 0;
    p.dst      = (mgi_ep_id_t[]){me, me};
    p.ndst     = 2;
    EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2), UCS_ERR_INVALID_PARAM);
    /* landing buffers (every rank names one for its own endpoint, so
     * every rank refuses): without their sizes, of 0 tuples, for a CPU
     * endpoint */
    {
        void *land[64];
        uint64_t land_tuples[64];
        unsigned i;

        for (i = 0; (i < t->nall) && (i < 64); ++i) {
            land[i]        = big;
            land_tuples[i] = 0;
        }
        p.dst         = t->all;
        p.ndst        = t->nall;
        p.land        = land;
        EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2),
                      UCS_ERR_INVALID_PARAM);
        p.land_tuples = land_tuples;
        EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2),
                      UCS_ERR_INVALID_PARAM);
        for (i = 0; (i < t->nall) && (i < 64); ++i) {
            land_tuples[i] = sizeof(big) / sizeof(tp);
        }
        EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch2),
                      UCS_ERR_INVALID_PARAM);
        p.land        = NULL;
        p.land_tuples = NULL;
    }

    /* schemaless: tuple sizes; a source that is not local */
    p.dst      = t->all;
    p.ndst     = t->nall;
    p.schema   = NULL;
    p.part_key = -1;
    p.max_tuple = 100;
    p.src      = t->all;
    p.nsrc     = 1;
    if (mgi_ch_create(t->ctx, &p, &ch3) != UCS_OK) {
        FAIL(t, "misuse: schemaless channel create failed");
        return;
    }
    if (t->rank == 0) {
        EXPECT_STATUS(t, mgi_send(t->ctx, ch3, me, big, 101, me),
                      UCS_ERR_INVALID_PARAM);
        EXPECT_STATUS(t, mgi_send(t->ctx, ch3, me, big, 100, me), 100);
        EXPECT_STATUS(t, mgi_flush(t->ctx, ch3, me), UCS_OK);
        /* the 100-byte tuple does not fit 50 bytes (once it arrived) */
        EXPECT_STATUS(t, recv_nonzero(t, ch3, me, big, 50),
                      UCS_ERR_INVALID_PARAM);
        EXPECT_STATUS(t, mgi_recv(t->ctx, ch3, me, big, 100), 100);
    } else {
        EXPECT_STATUS(t, mgi_send(t->ctx, ch3, me, big, 10, -1),
                      UCS_ERR_INVALID_PARAM);
    }
    drain(t, ch3, me);
    EXPECT_STATUS(t, mgi_ch_delete(t->ctx, ch3), UCS_OK);
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, 4000), UCS_ERR_NO_ELEM);

    /* endpoint life cycle: a second endpoint, a channel over it, the
     * first endpoint deleted while that channel is in use (the mover
     * restarts), then traffic on the new channel */
    lifecycle(t);
}

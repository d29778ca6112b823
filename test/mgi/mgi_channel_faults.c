/**
 * mgi_channel_test failure cases: peer_dies (a rank ends in the middle of
 * a shuffle; the others notice in bounded time, by name) and ring_budget
 * (rings larger than the memory there is, refused at the endpoint's and
 * the channel's create, naming the setting).
 */

#include "mgi_channel_test.h"

/* Channel parameters: endpoint 0 of every rank to every one of them, by
 * the schema's first attribute */
static void ch_all(test_t *t, mgi_ch_params_t *p, mgi_schema_t *schema)
{
    int r;

    for (r = 0, t->nall = 0; r < t->size; ++r) {
        t->all[t->nall++] = MGI_EP_ID(r, 0);
    }
    memset(p, 0, sizeof(*p));
    p->src = t->all; p->nsrc = t->nall;
    p->dst = t->all; p->ndst = t->nall;
    p->schema = schema; p->part_key = 0;
}

/* A rank that ended is noticed within this bound (a rank of this host by
 * the peer watch, of another host by UCP's keepalive, whose round libmgi
 * makes 2 s: at UCP's default of 20 s this fails) */
#define PEER_DIES_BOUND_S 10

/* The last rank (--victims N: the last N, every rank of one host of the
 * netns test) ends in the middle of a shuffle without a word (_exit, as
 * a crash would): at every other rank the calls fail with
 * UCS_ERR_CONNECTION_RESET, an error names the rank that ended, and
 * mgi_context_destroy returns well before MGI_TIMEOUT_MS (the TCP
 * bootstrap's broken star is closed at once, the ended rank's endpoint
 * not waited for). Every rank on this host. */
int peer_dies(test_t *t, const mgi_context_params_t *params,
              const mgi_ep_params_t *ep_params)
{
    mgi_schema_t schema = {.nattrs = 3, .attr_size = {8, 4, 4}};
    mgi_ch_params_t p;
    tuple_t tp[SEND_BATCH];
    char buf[RECV_BUF], who[64];
    double t0, deadline, took, noticed;
    ssize_t n = 0, m = 0;
    mgi_ep_id_t id, me;
    uint32_t seq = 0;
    mgi_ch_id_t ch;
    int victim, i;

    if (ctx_open(t, params, "peer_dies") != 0) {
        return 1;
    }
    victim = t->size - ((t->victims > 0) ? t->victims : 1);
    me     = MGI_EP_ID(t->rank, 0);
    if ((mgi_ep_create(t->ctx, ep_params, &id) != UCS_OK) ||
        (t->size < 2)) {
        fprintf(stderr, "peer_dies: endpoint (or fewer than 2 ranks)\n");
        return 1;
    }
    ch_all(t, &p, &schema);
    if (mgi_ch_create(t->ctx, &p, &ch) != UCS_OK) {
        fprintf(stderr, "peer_dies: mgi_ch_create failed\n");
        return 1;
    }
    log_catch();
    t0       = now_s();
    deadline = t0 + 30;
    while ((n >= 0) && ((m >= 0) || (m == MGI_EOF)) && (now_s() < deadline)) {
        if ((t->rank >= victim) && (now_s() > t0 + 0.2)) {
            _exit(0);           /* tuples sent, none flushed, nothing freed */
        }
        for (i = 0; i < SEND_BATCH; ++i) {
            tp[i] = (tuple_t){.key = seq * 2654435761u, .src = me,
                              .seq = seq};
            ++seq;
        }
        n = mgi_send(t->ctx, ch, me, tp, sizeof(tp), MGI_DST_AUTO);
        m = mgi_recv(t->ctx, ch, me, buf, sizeof(buf));
    }
    if (t->rank >= victim) {
        _exit(0);   /* another victim ended first: end as it did */
    }
    /* on this host its process is watched; on another, UCP's endpoint to
     * it fails */
    for (i = victim; i < t->size; ++i) {
        snprintf(who, sizeof(who), (t->victims > 0) ?
                 "endpoint to rank %d failed" : "rank %d (pid", i);
        if (strstr(log_text, who) != NULL) {
            break;
        }
    }
    log_said(t, "peer_dies", (i < t->size) ? who : "a rank that ended");
    if ((n != UCS_ERR_CONNECTION_RESET) && (m != UCS_ERR_CONNECTION_RESET)) {
        FAIL(t, "peer_dies: after %.1f s send gave %zd, recv %zd, not %d "
             "(%s)", now_s() - t0, n, m, UCS_ERR_CONNECTION_RESET,
             ucs_status_string(UCS_ERR_CONNECTION_RESET));
    }
    noticed = now_s() - t0;     /* the victims end 0.2 s after their t0 */
    if (noticed > PEER_DIES_BOUND_S) {
        FAIL(t, "peer_dies: the end of rank %d noticed after %.1f s, more "
             "than %d s", victim, noticed, PEER_DIES_BOUND_S);
    }
    EXPECT_STATUS(t, mgi_flush(t->ctx, ch, me), UCS_ERR_CONNECTION_RESET);
    t0 = now_s();
    mgi_context_destroy(t->ctx);
    took = now_s() - t0;
    if (took > 10) {
        FAIL(t, "peer_dies: mgi_context_destroy took %.1f s", took);
    }
    printf("rank %d: peer_dies: ranks %d..%d ended, noticed in %.2f s; send "
           "%zd, recv %zd, destroy %.2f s: %s\n", t->rank, victim,
           t->size - 1, noticed, n, m, took,
           t->failed ? "FAILED" : "OK");
    return t->failed;
}

/* A channel whose rings `params` make larger than the memory there is:
 * its create is refused with UCS_ERR_NO_MEMORY, naming `var`. 1: the
 * context could not be opened. */
static int ring_budget_channel(test_t *t, const mgi_context_params_t *params,
                               const mgi_ep_params_t *ep_params,
                               const char *rings, const char *var)
{
    mgi_schema_t schema = {.nattrs = 3, .attr_size = {8, 4, 4}};
    char what[64];
    mgi_ch_params_t p;
    mgi_ep_id_t id;
    mgi_ch_id_t ch;

    if (ctx_open(t, params, "ring_budget") != 0) {
        return 1;
    }
    snprintf(what, sizeof(what), "ring_budget: %s", rings);
    EXPECT_STATUS(t, mgi_ep_create(t->ctx, ep_params, &id), UCS_OK);
    ch_all(t, &p, &schema);
    log_catch();
    EXPECT_STATUS(t, mgi_ch_create(t->ctx, &p, &ch), UCS_ERR_NO_MEMORY);
    log_said(t, what, var);
    EXPECT_STATUS(t, mgi_ep_delete(t->ctx, MGI_EP_ID(t->rank, 0)), UCS_OK);
    mgi_context_destroy(t->ctx);
    return 0;
}

/* Rings larger than the memory there is: an endpoint's stage rings of 2^26
 * segments (terabytes) are refused at its create, before anything is
 * allocated or zeroed (before, the OOM killer ended the process); final
 * rings of 2^28 segments at the channel's create, at every rank; neither
 * hangs a rank. */
int ring_budget(test_t *t, const mgi_context_params_t *base,
                const mgi_ep_params_t *ep_params)
{
    mgi_context_params_t params = *base;
    mgi_ep_id_t id;

    params.seg_size    = 512u << 10;     /* 512 GiB a stage ring */
    params.stage_depth = 1u << 20;
    if (ctx_open(t, &params, "ring_budget") != 0) {
        return 1;
    }
    log_catch();
    EXPECT_STATUS(t, mgi_ep_create(t->ctx, ep_params, &id),
                  UCS_ERR_NO_MEMORY);
    log_said(t, "ring_budget: stage rings", "MGI_STAGE_DEPTH");
    mgi_context_destroy(t->ctx);

    /* final rings, one a consuming block, at the channel's create; sort
     * rings, one a next hop (2^20 segments of 512 KiB: 512 GiB) */
    params             = *base;
    params.seg_size    = 512u << 10;
    params.final_depth = 1u << 20;
    if (ring_budget_channel(t, &params, ep_params, "final rings",
                            "MGI_FINAL_DEPTH") != 0) {
        return 1;
    }
    params            = *base;
    params.seg_size   = 512u << 10;
    params.sort_depth = 1u << 20;
    if (ring_budget_channel(t, &params, ep_params, "sort rings",
                            "MGI_SORT_DEPTH") != 0) {
        return 1;
    }
    if (t->failed) {
        fprintf(stderr, "rank %d: ring_budget FAILED\n", t->rank);
    } else {
        printf("ring_budget: stage, final and sort rings refused at the "
               "endpoint's and the channel's create\n");
    }
    return t->failed;
}

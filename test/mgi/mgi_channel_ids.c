/**
 * mgi_channel_test ids: channel ids come back once their channels are
 * deleted everywhere, a channel one rank still holds keeps its id, and a
 * create with every id held fails at every rank.
 */

#include "mgi_channel_test.h"

/* A channel over every rank's endpoint 0 by partition key, whose id every
 * rank got the same; -1 when the create failed. */
static int ids_create(test_t *t, mgi_ch_id_t *ch)
{
    static mgi_schema_t schema = {.nattrs = 1, .attr_size = {8}};
    mgi_ch_params_t p = {0};
    mgi_ep_id_t eps[MAX_EPS];
    unsigned all[MAX_EPS], mine;
    ucs_status_t status;
    int r;

    for (r = 0; r < t->size; ++r) {
        eps[r] = MGI_EP_ID(r, 0);
    }
    p.src = eps; p.nsrc = t->size;
    p.dst = eps; p.ndst = t->size;
    p.schema = &schema; p.part_key = 0;
    status = mgi_ch_create(t->ctx, &p, ch);
    if (status != UCS_OK) {
        return -1;
    }
    mine = *ch;
    mgi_context_allgather(t->ctx, &mine, all, sizeof(mine));
    for (r = 0; r < t->size; ++r) {
        if (all[r] != mine) {
            FAIL(t, "ids: channel %u here is channel %u at rank %d", mine,
                 all[r], r);
        }
    }
    return 0;
}

/* Channel ids come back once their channels are deleted: a context
 * creates many more channels than MGI_TEST_MAX_CHANNELS; a channel one rank
 * still holds keeps its id from the others; with every id held, a create
 * says so at every rank. Run with a small MGI_TEST_MAX_CHANNELS. */
void channel_ids(test_t *t)
{
    const mgi_ep_id_t me = MGI_EP_ID(t->rank, 0);
    mgi_context_params_t cp;
    mgi_ch_id_t ch, held, chs[64];
    unsigned mx, round, n, seen_held = 0;

    mgi_context_params_init(&cp);   /* the context's MGI_TEST_MAX_CHANNELS */
    mx = cp.max_channels;

    if ((mx < 2) || (mx > 64)) {
        FAIL(t, "ids: run with MGI_TEST_MAX_CHANNELS in 2..64, not %u", mx);
        return;
    }
    /* 1. three times as many channels as ids, one after the other */
    for (round = 0; round < 3 * mx; ++round) {
        if (ids_create(t, &ch) != 0) {
            FAIL(t, "ids: create %u of %u failed (MGI_TEST_MAX_CHANNELS=%u)",
                 round, 3 * mx, mx);
            return;
        }
        if (ch != round % mx) {
            FAIL(t, "ids: create %u gave channel %u, expected %u", round,
                 ch, round % mx);
        }
        if (lifecycle_round(t, ch, me, round) != 0) {
            return;
        }
    }
    /* 2. rank 0 holds a drained channel the others deleted */
    if (ids_create(t, &held) != 0) {
        FAIL(t, "ids: create of the held channel failed");
        return;
    }
    if (channel_round(t, held, me, 100) != 0) {
        return;
    }
    if (t->rank != 0) {
        EXPECT_STATUS(t, mgi_ch_delete(t->ctx, held), UCS_OK);
    }
    for (round = 0; round < 2 * mx; ++round) {
        if (ids_create(t, &ch) != 0) {
            FAIL(t, "ids: create %u beside the held channel %u failed",
                 round, held);
            return;
        }
        if (ch == held) {
            FAIL(t, "ids: channel %u created while rank 0 holds it", ch);
        }
        if (lifecycle_round(t, ch, me, 200 + round) != 0) {
            return;
        }
    }
    if (t->rank == 0) {
        EXPECT_STATUS(t, mgi_ch_delete(t->ctx, held), UCS_OK);
    }
    for (round = 0; round < mx; ++round) {
        if (ids_create(t, &ch) != 0) {
            FAIL(t, "ids: create %u after the held channel went failed",
                 round);
            return;
        }
        seen_held |= (ch == held);
        if (lifecycle_round(t, ch, me, 300 + round) != 0) {
            return;
        }
    }
    if (!seen_held) {
        FAIL(t, "ids: id %u not reused in %u creates after its channel "
             "was deleted everywhere", held, mx);
    }
    /* 3. every id held: the next create fails at every rank, by name */
    for (n = 0; n < mx; ++n) {
        if ((ids_create(t, &chs[n]) != 0) ||
            (channel_round(t, chs[n], me, 400 + n) != 0)) {
            FAIL(t, "ids: channel %u of %u held at once failed", n, mx);
            return;
        }
    }
    if (ids_create(t, &ch) == 0) {
        FAIL(t, "ids: channel %u created with all %u ids held", ch, mx);
        return;
    }
    printf("rank %d: ids: create with all %u ids held failed, as it "
           "must\n", t->rank, mx);
    for (n = 0; n < mx; ++n) {
        EXPECT_STATUS(t, mgi_ch_delete(t->ctx, chs[n]), UCS_OK);
    }
    if ((ids_create(t, &ch) != 0) || (lifecycle_round(t, ch, me, 500) != 0)) {
        FAIL(t, "ids: create after the held channels were deleted failed");
        return;
    }
    printf("rank %d: ids: %u channels over %u ids, a held id kept, "
           "exhaustion reported\n", t->rank, 3 * mx + 1 + 3 * mx + mx + 1,
           mx);
}

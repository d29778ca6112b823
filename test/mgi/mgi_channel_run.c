/**
 * mgi_channel_test data scenarios (shuffle, zipf, broadcast, explicit,
 * many2one, one2many, two_channels): the channel made, its tuples sent and
 * received on threads or on one thread as a GPU block does, and what
 * arrived compared with what every source sent; with -V, the relays'
 * forwarding against the planner's paths. run() also picks the misuse and
 * ids cases by name.
 */

#include "mgi_channel_test.h"

static int setup_scenario(test_t *t, const char *name)
{
    unsigned i;

    t->nsrc = t->ndst = t->nall;
    memcpy(t->src, t->all, sizeof(t->all));
    memcpy(t->dst, t->all, sizeof(t->all));
    t->mode = MODE_PART;
    if (!strcmp(name, "shuffle")) {
        /* all to all by partition key */
    } else if (!strcmp(name, "zipf")) {
        t->use_zipf = 1; /* keys ~ Zipf(theta): skewed destinations */
    } else if (!strcmp(name, "broadcast")) {
        t->mode = MODE_BCAST;
    } else if (!strcmp(name, "explicit")) {
        t->mode = MODE_EXPLICIT;
    } else if (!strcmp(name, "many2one")) {
        t->ndst = 1;
    } else if (!strcmp(name, "one2many")) {
        t->nsrc = 1;
    } else {
        fprintf(stderr, "unknown scenario %s\n", name);
        t->failed = 1;
        return -1;
    }
    (void)i;
    return 0;
}

typedef struct chrun {
    test_t      *t;
    const char  *name;
    dst_state_t ds[MAX_EPS];
    src_state_t ss[MAX_EPS];
    unsigned    nsrcs, ndsts;
    double      t0;
} chrun_t;

/* The walks of a tuple from ep to dst over every next hop each endpoint
 * on the way spreads over (mgi_ch_next_hops), `depth` hops from its
 * source: their number, 0 on an error; the fewest and most relays on one
 * in *lo / *hi; the ranks of the relays on any in mark[] */
static unsigned walks(test_t *t, mgi_ep_id_t ep, mgi_ep_id_t dst, int depth,
                      int *lo, int *hi, uint8_t *mark)
{
    mgi_ep_id_t hops[MGI_MAX_LOCAL_EPS];
    unsigned n = 0;
    int k, nh;

    if (ep == dst) {
        *lo = ((*lo < 0) || (depth - 1 < *lo)) ? depth - 1 : *lo;
        *hi = (depth - 1 > *hi) ? depth - 1 : *hi;
        return 1;
    }
    if (depth > MAX_EPS) {
        return 0;
    }
    if (depth > 0) {
        mark[MGI_EP_RANK(ep)] = 1;
    }
    nh = mgi_ch_next_hops(t->ctx, t->ch, ep, dst, hops, MGI_MAX_LOCAL_EPS);
    for (k = 0; k < nh; ++k) {
        n += walks(t, hops[k], dst, depth + 1, lo, hi, mark);
    }
    return n;
}

static int chrun_create(chrun_t *c, test_t *t, const char *name)
{
    mgi_schema_t schema = {.nattrs = 3, .attr_size = {8, 4, 4}};
    mgi_ch_params_t p   = {0};
    unsigned i;

    c->t    = t;
    c->name = name;
    if (setup_scenario(t, name) != 0) {
        return -1;
    }
    if (t->use_zipf) {
        zipf_init(t);
    }
    p.src  = t->src;
    p.nsrc = t->nsrc;
    p.dst  = t->dst;
    p.ndst = t->ndst;
    if (t->mode == MODE_EXPLICIT) {
        p.schema    = NULL;
        p.part_key  = -1;
        p.max_tuple = 200;
    } else {
        p.schema   = &schema;
        p.part_key = (t->mode == MODE_PART) ? 0 : -1;
    }
    p.flags = t->ordered ? MGI_CH_FLAG_ORDERED : 0;
    if (mgi_ch_create(t->ctx, &p, &t->ch) != UCS_OK) {
        FAIL(t, "mgi_ch_create failed");
        return -1;
    }
    /* each pair's walks: its EOF comes through each, and where there are
     * several its tuples may come in any order */
    for (i = 0; i < t->nsrc * t->ndst; ++i) {
        uint8_t mark[MAX_EPS];
        int lo = -1, hi = -1;
        unsigned n = walks(t, t->src[i / t->ndst], t->dst[i % t->ndst], 0,
                           &lo, &hi, mark);
        if ((n < 1) || (n > 255)) {
            FAIL(t, "the walks of %u -> %u: %u", t->src[i / t->ndst],
                 t->dst[i % t->ndst], n);
            return -1;
        }
        t->spread[i / t->ndst][i % t->ndst] = (uint8_t)n;
    }
    c->t0    = now_s();
    c->nsrcs = c->ndsts = 0;
    for (i = 0; i < t->ndst; ++i) {
        if (is_local(t, t->dst[i])) {
            dst_init(t, &c->ds[c->ndsts++], t->dst[i]);
        }
    }
    for (i = 0; i < t->nsrc; ++i) {
        if (is_local(t, t->src[i])) {
            src_init(t, &c->ss[c->nsrcs++], t->src[i]);
        }
    }
    return 0;
}

/* Receivers on their own threads; sends, then a blocking flush. */
static void chrun_threaded(chrun_t *c)
{
    test_t *t = c->t;
    pthread_t thr[MAX_EPS];
    ucs_status_t st;
    unsigned i;
    int ret;

    for (i = 0; i < c->ndsts; ++i) {
        pthread_create(&thr[i], NULL, recv_thread, &c->ds[i]);
    }
    for (i = 0; i < c->nsrcs; ++i) {
        while ((ret = send_step(&c->ss[i])) == 0) {
            if (c->ss[i].stalled) {
                sched_yield();
            }
        }
        if (ret < 0) {
            break;
        }
    }
    for (i = 0; i < c->nsrcs; ++i) {
        st = mgi_flush(t->ctx, t->ch, c->ss[i].ep);
        if (st != UCS_OK) {
            FAIL(t, "endpoint %u: mgi_flush: %s", c->ss[i].ep,
                 ucs_status_string(st));
        }
    }
    for (i = 0; i < c->ndsts; ++i) {
        pthread_join(thr[i], NULL);
    }
}

/* One thread for all channels, as a GPU block does (paper Fig. 3):
 * interleave send and recv, flush_nb while receiving, recv until EOF. */
static void chrun_single_thread(chrun_t **cs, int k)
{
    int busy = 1, sent, eofs, j;
    ucs_status_t st;
    src_state_t *ss;
    unsigned i;

    while (busy) {
        busy = 0;
        for (j = 0; j < k; ++j) {
            chrun_t *c = cs[j];
            test_t *t  = c->t;

            if (t->failed) {
                return;
            }
            for (i = 0; i < c->nsrcs; ++i) {
                ss = &c->ss[i];
                if (ss->flushed) {
                    continue;
                }
                sent = send_step(ss);
                if (sent == 1) {
                    st = mgi_flush_nb(t->ctx, t->ch, ss->ep);
                    if (st == UCS_OK) {
                        ss->flushed = 1;
                    } else if (st != UCS_INPROGRESS) {
                        FAIL(t, "endpoint %u: mgi_flush_nb: %s", ss->ep,
                             ucs_status_string(st));
                        ss->flushed = 1;
                    }
                } else if (sent < 0) {
                    ss->flushed = 1;
                }
                busy |= !ss->flushed;
            }
            eofs = 0;
            for (i = 0; i < c->ndsts; ++i) {
                eofs += (recv_step(&c->ds[i]) != 0);
            }
            busy |= (eofs < (int)c->ndsts);
        }
    }
    for (j = 0; j < k; ++j) {
        for (i = 0; i < cs[j]->ndsts; ++i) {
            dst_finish(&cs[j]->ds[i]);
        }
    }
}

/* -V (one endpoint per rank): each destination here forwarded exactly
 * the tuples of the pairs whose path (mgi_ch_path) goes through it, and
 * of the pairs that take several walks (endpoints on the way spread over
 * several next hops, mgi_ch_next_hops) some share of those whose walks
 * pass it; all of those forwarded once per relay on the walk each took,
 * where every walk of a pair has as many relays; with --expect-split,
 * some pair takes several walks and each relay on them forwarded a
 * share. The path of --expect-path is the one the planner gave.
 * all_expect[r]: what rank r's source sent to each destination. */
static void relay_verify(chrun_t *c, const tally_t *all_expect)
{
    test_t *t = c->t;
    mgi_ep_id_t path[MAX_EPS];
    mgi_ch_attr_t attr;
    uint64_t want, spread, spread_all = 0, total = 0, sum[2] = {0};
    uint64_t all_sum[2 * MAX_EPS], cnt;
    uint8_t mark[MAX_EPS], on[MAX_EPS] = {0};
    unsigned i, j, k, nsplit = 0;
    int n, r, lo, hi, even = 1;

    for (i = 0; i < t->ndst; ++i) {
        if (!is_local(t, t->dst[i])) {
            continue;
        }
        want   = 0;
        spread = 0;
        for (k = 0; k < t->nsrc; ++k) {
            for (j = 0; j < t->ndst; ++j) {
                cnt = all_expect[MGI_EP_RANK(t->src[k]) * MAX_EPS + j].count;
                if (t->spread[k][j] > 1) {
                    /* what may pass this relay */
                    memset(mark, 0, sizeof(mark));
                    lo = hi = -1;
                    walks(t, t->src[k], t->dst[j], 0, &lo, &hi, mark);
                    spread += mark[MGI_EP_RANK(t->dst[i])] ? cnt : 0;
                    continue;
                }
                n = mgi_ch_path(t->ctx, t->ch, t->src[k], t->dst[j], path,
                                MAX_EPS);
                if (n < 1) {
                    FAIL(t, "mgi_ch_path %u -> %u: %d", t->src[k], t->dst[j],
                         n);
                    return;
                }
                for (r = 1; r < n - 1; ++r) {
                    if (path[r] == t->dst[i]) {
                        want += cnt;
                    }
                }
            }
        }
        if (mgi_ch_query(t->ctx, t->ch, t->dst[i], &attr) != UCS_OK) {
            FAIL(t, "mgi_ch_query of endpoint %u", t->dst[i]);
            return;
        }
        if ((attr.relayed_tuples < want) ||
            (attr.relayed_tuples > want + spread)) {
            FAIL(t, "endpoint %u forwarded %lu tuples, the plan's paths "
                 "give it %lu, and up to %lu more of pairs that spread",
                 t->dst[i], (unsigned long)attr.relayed_tuples,
                 (unsigned long)want, (unsigned long)spread);
        } else {
            printf("rank %d: endpoint %u forwarded %lu tuples and %u EOFs "
                   "for other endpoints: %lu as the plan's paths give, %lu "
                   "of pairs that spread over several next hops\n", t->rank,
                   t->dst[i], (unsigned long)attr.relayed_tuples,
                   attr.relayed_eofs, (unsigned long)want,
                   (unsigned long)(attr.relayed_tuples - want));
        }
        sum[0] += want;
        sum[1] += attr.relayed_tuples - want;
    }
    /* what passes relays in all of the pairs that spread, and which ranks
     * relay them */
    for (k = 0; k < t->nsrc; ++k) {
        for (j = 0; j < t->ndst; ++j) {
            if (t->spread[k][j] < 2) {
                continue;
            }
            ++nsplit;
            memset(mark, 0, sizeof(mark));
            lo = hi = -1;
            walks(t, t->src[k], t->dst[j], 0, &lo, &hi, mark);
            even        = even && (lo == hi);
            spread_all += all_expect[MGI_EP_RANK(t->src[k]) * MAX_EPS +
                                     j].count * (uint64_t)((hi > 0) ? hi : 0);
            for (r = 0; r < t->size; ++r) {
                on[r] |= mark[r];
            }
        }
    }    if (t->npath >= 2) {
        n = mgi_ch_path(t->ctx, t->ch, MGI_EP_ID(t->path[0], 0),
                        MGI_EP_ID(t->path[t->npath - 1], 0), path, MAX_EPS);
        for (r = 0; (n == t->npath) && (r < n); ++r) {
            if (path[r] != MGI_EP_ID(t->path[r], 0)) {
                break;
            }
        }
        if ((n != t->npath) || (r < n)) {
            FAIL(t, "the path from rank %d to rank %d is not the expected "
                 "one (%d hops)", t->path[0], t->path[t->npath - 1], n);
        } else if (t->rank == 0) {
            printf("path of rank %d -> rank %d:", t->path[0],
                   t->path[t->npath - 1]);
            for (r = 0; r < n; ++r) {
                printf(" %u", path[r]);
            }
            printf("\n");
        }
    }
    /* some tuple took a relay: the plan was followed, not only made */
    mgi_context_allgather(t->ctx, sum, all_sum, sizeof(sum));
    for (r = 0; r < t->size; ++r) {
        total += all_sum[2 * r];
    }
    if ((t->npath > 2) && (total == 0)) {
        FAIL(t, "no tuple was forwarded by a relay");
    }
    /* pairs that spread: every tuple forwarded once by each relay on the
     * walk it took */
    for (r = 0, total = 0; r < t->size; ++r) {
        total += all_sum[2 * r + 1];
    }
    if (even && (total != spread_all)) {
        FAIL(t, "the relays forwarded %lu tuples of the pairs that spread, "
             "their walks give %lu", (unsigned long)total,
             (unsigned long)spread_all);
    }
    if (t->expect_split) {
        if (nsplit == 0) {
            FAIL(t, "no pair takes several walks");
        }
        for (r = 0; r < t->size; ++r) {
            if (on[r] && (all_sum[2 * r + 1] == 0)) {
                FAIL(t, "rank %d, a relay on the walks of the pairs that "
                     "spread, forwarded none of their tuples", r);
            }
        }
        if (t->rank == 0) {
            printf("%u pair(s) take several walks; their relays forwarded "
                   "%lu of their tuples\n", nsplit, (unsigned long)total);
        }
    }
    /* several next hops: the relayed pairs towards one destination spread
     * over them (the plan's shares) */
    if (t->spread_dst >= 0) {
        mgi_ep_id_t hop[MAX_EPS];
        unsigned nhop = 0, relayed = 0;

        for (k = 0; k < t->nsrc; ++k) {
            n = mgi_ch_path(t->ctx, t->ch, t->src[k],
                            MGI_EP_ID(t->spread_dst, 0), path, MAX_EPS);
            if (n < 3) {
                continue;
            }
            ++relayed;
            for (j = 0; (j < nhop) && (hop[j] != path[1]); ++j) {
            }
            if (j == nhop) {
                hop[nhop++] = path[1];
            }
        }
        if (nhop < 2) {
            FAIL(t, "the %u relayed source(s) of rank %d take %u next "
                 "hop(s), not several", relayed, t->spread_dst, nhop);
        } else if (t->rank == 0) {
            printf("the %u relayed source(s) of rank %d take %u next hops\n",
                   relayed, t->spread_dst, nhop);
        }
    }
}

/* Compare what arrived with what every source sent. */
static void chrun_verify(chrun_t *c)
{
    test_t *t = c->t;
    tally_t *all_expect;
    unsigned i;
    int r;

    all_expect = calloc(t->size, sizeof(t->expect));
    mgi_context_allgather(t->ctx, t->expect, all_expect, sizeof(t->expect));
    for (i = 0; i < t->ndst; ++i) {
        tally_t want = {0};
        if (!is_local(t, t->dst[i])) {
            continue;
        }
        for (r = 0; r < t->size; ++r) {
            want.count += all_expect[r * MAX_EPS + i].count;
            want.bytes += all_expect[r * MAX_EPS + i].bytes;
            want.sum   += all_expect[r * MAX_EPS + i].sum;
        }
        if ((want.count != t->got[i].count) ||
            (want.bytes != t->got[i].bytes) || (want.sum != t->got[i].sum)) {
            FAIL(t, "%s endpoint %u: got %lu tuples / %lu bytes / sum %016lx,"
                 " sources sent %lu / %lu / %016lx", c->name, t->dst[i],
                 (unsigned long)t->got[i].count,
                 (unsigned long)t->got[i].bytes,
                 (unsigned long)t->got[i].sum, (unsigned long)want.count,
                 (unsigned long)want.bytes, (unsigned long)want.sum);
        } else {
            printf("rank %d: %s%s channel %u endpoint %u: %lu tuples, %lu "
                   "bytes, checksum %016lx OK (%.2f s)\n", t->rank, c->name,
                   t->use_zipf ? " (zipf)" : "", t->ch, t->dst[i],
                   (unsigned long)want.count, (unsigned long)want.bytes,
                   (unsigned long)want.sum, now_s() - c->t0);
        }
    }
    if (t->vertex_fmt != NULL) {
        relay_verify(c, all_expect);
    }
    free(all_expect);
}

/* Everybody is done before the channel goes. */
static void chrun_delete(chrun_t *c, int failed)
{
    int all[MAX_EPS * 4] = {0}, r, any_failed = 0;

    mgi_context_allgather(c->t->ctx, &failed, all, sizeof(int));
    for (r = 0; r < c->t->size; ++r) {
        any_failed |= all[r];
    }
    if (!any_failed && (mgi_ch_delete(c->t->ctx, c->t->ch) != UCS_OK)) {
        FAIL(c->t, "mgi_ch_delete of a drained channel failed");
    }
}

int run(test_t *t, const char *name)
{
    chrun_t *c[2];
    test_t *t2;

    if (!strcmp(name, "misuse")) {
        misuse(t);
        return 0;
    }
    if (!strcmp(name, "ids")) {
        channel_ids(t);
        return 0;
    }

    c[0] = calloc(1, sizeof(chrun_t));
    if (strcmp(name, "two_channels") != 0) {
        if (chrun_create(c[0], t, name) == 0) {
            if (t->single_thread) {
                chrun_single_thread(c, 1);
            } else {
                chrun_threaded(c[0]);
            }
            chrun_verify(c[0]);
            chrun_delete(c[0], t->failed);
        }
        free(c[0]);
        return 0;
    }

    /* a shuffle (schema, key) and a schemaless explicit-destination
     * channel at once over the same endpoints and rings */
    c[1] = calloc(1, sizeof(chrun_t));
    t2   = calloc(1, sizeof(*t2));
    *t2  = *t;
    if ((chrun_create(c[0], t, "shuffle") == 0) &&
        (chrun_create(c[1], t2, "explicit") == 0)) {
        chrun_single_thread(c, 2);
        chrun_verify(c[0]);
        chrun_verify(c[1]);
        t->failed |= t2->failed;
        chrun_delete(c[1], t->failed);
        chrun_delete(c[0], t->failed);
    }
    t->failed |= t2->failed;
    free(t2);
    free(c[1]);
    free(c[0]);
    return 0;
}

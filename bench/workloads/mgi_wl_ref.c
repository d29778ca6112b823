/**
 * CPU reference answers of the workloads, straight from the generator.
 */
#include "mgi_wl_ref.h"

#include <stdlib.h>
#include <string.h>

#define MGI_WL_REF_HOT 1024

void mgi_wl_ref_lineitem_tuple(const mgi_wl_spec_t *spec, uint64_t order,
                               unsigned line, mgi_wl_tuple_t *t)
{
    int64_t okey = 0, zkey = 0, price = 0;
    mgi_tpch_lineitem_t c;

    memset(&c, 0, sizeof(c));
    c.orderkey      = &okey;
    c.zkey          = (spec->zipf != NULL) ? &zkey : NULL;
    c.extendedprice = &price;
    mgi_tpch_lineitem_row(&spec->tpch, spec->zipf, &c, order, line, 0);
    t->key = (spec->zipf != NULL) ? zkey : okey;
    t->val = price;
}

void mgi_wl_ref_orders_tuple(const mgi_wl_spec_t *spec, uint64_t order,
                             mgi_wl_tuple_t *t)
{
    int64_t okey = 0;
    int32_t cust = 0;
    mgi_tpch_orders_t c = {&okey, &cust, NULL};

    mgi_tpch_orders_row(&spec->tpch, &c, order, 0);
    t->key = okey;
    t->val = cust;
}

static void mgi_wl_ref_add(mgi_wl_answer_t *to, const mgi_wl_answer_t *a)
{
    int s, d;

    for (s = 0; s < MGI_WL_MAX_GPUS; ++s) {
        for (d = 0; d < MGI_WL_MAX_GPUS; ++d) {
            to->l_count[s][d] += a->l_count[s][d];
            to->l_sum[s][d]   += a->l_sum[s][d];
            to->o_count[s][d] += a->o_count[s][d];
            to->o_sum[s][d]   += a->o_sum[s][d];
        }
        to->groups[s]    += a->groups[s];
        to->group_sum[s] += a->group_sum[s];
        to->matches[s]   += a->matches[s];
        to->join_sum[s]  += a->join_sum[s];
    }
}

int mgi_wl_ref_compute(const mgi_wl_spec_t *spec, unsigned what,
                       mgi_wl_answer_t *ans)
{
    const int G = spec->gpus;
    const uint64_t n_orders = spec->tpch.n_orders;
    int64_t *sums = NULL;

    if ((G < 1) || (G > MGI_WL_MAX_GPUS) ||
        (spec->pattern >= MGI_WL_PATTERN_LAST) ||
        ((what & (MGI_WL_REF_GROUPBY | MGI_WL_REF_JOIN)) &&
         (spec->pattern != MGI_WL_PATTERN_EXCHANGE))) {
        return -1;
    }
    memset(ans, 0, sizeof(*ans));
    ans->gpus = G;
    if ((what & MGI_WL_REF_GROUPBY) && (spec->zipf != NULL)) {
        /* Zipf keys repeat across orders: one sum per order rank */
        sums = (int64_t*)calloc(n_orders, sizeof(*sums));
        if (sums == NULL) {
            return -1;
        }
    }

#pragma omp parallel
    {
        mgi_wl_answer_t part, *mine = &part;   /* 8 KiB */
        /* the hottest Zipf ranks summed per thread: atomics on them from
         * every thread would serialize the threads on a few lines */
        int64_t hot[MGI_WL_REF_HOT];
        uint64_t rank;
        int h;
        mgi_wl_tuple_t t, ot;
        uint64_t b, e, o;
        int64_t gsum;
        unsigned l, nl;
        int s, d;

        memset(mine, 0, sizeof(*mine));
        memset(hot, 0, sizeof(hot));
        for (s = 0; s < G; ++s) {
            if (!mgi_wl_has_input(spec->pattern, s)) {
                continue;
            }
            mgi_tpch_slice(n_orders, s, G, &b, &e);
#pragma omp for schedule(static)
            for (o = b; o < e; ++o) {
                if (what & MGI_WL_REF_ORDERS) {
                    mgi_wl_ref_orders_tuple(spec, o, &t);
                    d = mgi_wl_dest(spec->pattern, t.key, s, G);
                    ++mine->o_count[s][d];
                    mine->o_sum[s][d] += mgi_wl_tuple_hash(t.key, t.val);
                }
                if (!(what & (MGI_WL_REF_EXCHANGE | MGI_WL_REF_GROUPBY |
                              MGI_WL_REF_JOIN))) {
                    continue;
                }
                nl   = mgi_tpch_lines(spec->tpch.seed, o);
                gsum = 0;
                for (l = 0; l < nl; ++l) {
                    mgi_wl_ref_lineitem_tuple(spec, o, l, &t);
                    d = mgi_wl_dest(spec->pattern, t.key, s, G);
                    if (what & MGI_WL_REF_EXCHANGE) {
                        ++mine->l_count[s][d];
                        mine->l_sum[s][d] += mgi_wl_tuple_hash(t.key, t.val);
                    }
                    if (what & MGI_WL_REF_JOIN) {
                        mgi_wl_ref_orders_tuple(spec,
                                                mgi_wl_order_of_key(t.key),
                                                &ot);
                        ++mine->matches[d];
                        mine->join_sum[d] += mgi_wl_join_hash(t.key, t.val,
                                                              ot.val);
                    }
                    if ((what & MGI_WL_REF_GROUPBY) && (sums != NULL)) {
                        rank = mgi_wl_order_of_key(t.key);
                        if (rank < MGI_WL_REF_HOT) {
                            hot[rank] += t.val;
                        } else {
#pragma omp atomic
                            sums[rank] += t.val;
                        }
                    }
                    gsum += t.val;
                }
                if ((what & MGI_WL_REF_GROUPBY) && (sums == NULL)) {
                    /* orderkey groups: an order's lines are one group */
                    t.key = mgi_tpch_orderkey(o);
                    d     = mgi_wl_dest(spec->pattern, t.key, s, G);
                    ++mine->groups[d];
                    mine->group_sum[d] += mgi_wl_group_hash(t.key, gsum);
                }
            }
        }
        if (sums != NULL) {
            for (h = 0; h < MGI_WL_REF_HOT; ++h) {
                if ((hot[h] != 0) && (h < (int)n_orders)) {
#pragma omp atomic
                    sums[h] += hot[h];
                }
            }
#pragma omp barrier
#pragma omp for schedule(static)
            for (o = 0; o < n_orders; ++o) {
                if (sums[o] != 0) {
                    t.key = mgi_tpch_orderkey(o);
                    d     = mgi_wl_dest(spec->pattern, t.key, 0, G);
                    ++mine->groups[d];
                    mine->group_sum[d] += mgi_wl_group_hash(t.key, sums[o]);
                }
            }
        }
#pragma omp critical
        mgi_wl_ref_add(ans, mine);
    }
    free(sums);
    return 0;
}

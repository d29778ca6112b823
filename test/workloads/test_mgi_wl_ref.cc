/**
 * The CPU reference answers against a brute-force computation over the
 * generated columns (std::map), for several GPU counts, with and without
 * the Zipf key, and for every communication pattern.
 */
#include "mgi_wl_ref.h"

#include <gtest/gtest.h>

#include <map>
#include <unordered_map>
#include <vector>

namespace {

struct brute {
    mgi_wl_answer_t a;

    brute(const mgi_wl_spec_t &spec)
    {
        const int G = spec.gpus;
        std::map<int64_t, int64_t> groups;
        std::unordered_map<int64_t, int64_t> cust_of;

        memset(&a, 0, sizeof(a));
        {
            std::vector<int64_t> okey(spec.tpch.n_orders);
            std::vector<int32_t> cust(spec.tpch.n_orders);
            mgi_tpch_orders_t c = {okey.data(), cust.data(), NULL};
            mgi_tpch_orders_gen(&spec.tpch, 0, spec.tpch.n_orders, &c);
            for (size_t i = 0; i < okey.size(); ++i) {
                cust_of[okey[i]] = cust[i];
            }
        }
        for (int s = 0; s < G; ++s) {
            if (!mgi_wl_has_input(spec.pattern, s)) {
                continue;
            }
            uint64_t b, e;
            mgi_tpch_slice(spec.tpch.n_orders, s, G, &b, &e);
            uint64_t n = mgi_tpch_lineitem_count(&spec.tpch, b, e);
            std::vector<int64_t> okey(n), zkey(n), price(n);
            mgi_tpch_lineitem_t c;
            memset(&c, 0, sizeof(c));
            c.orderkey      = okey.data();
            c.zkey          = zkey.data();
            c.extendedprice = price.data();
            mgi_tpch_lineitem_gen(&spec.tpch, spec.zipf, b, e, &c);
            for (uint64_t r = 0; r < n; ++r) {
                int64_t key = (spec.zipf != NULL) ? zkey[r] : okey[r];
                int d = mgi_wl_dest(spec.pattern, key, s, G);
                ++a.l_count[s][d];
                a.l_sum[s][d] += mgi_wl_tuple_hash(key, price[r]);
                groups[key] += price[r];
                ++a.matches[d];
                a.join_sum[d] += mgi_wl_join_hash(key, price[r],
                                                  cust_of.at(key));
            }
            std::vector<int64_t> ok(e - b);
            std::vector<int32_t> cu(e - b);
            mgi_tpch_orders_t oc = {ok.data(), cu.data(), NULL};
            mgi_tpch_orders_gen(&spec.tpch, b, e, &oc);
            for (size_t i = 0; i < ok.size(); ++i) {
                int d = mgi_wl_dest(spec.pattern, ok[i], s, G);
                ++a.o_count[s][d];
                a.o_sum[s][d] += mgi_wl_tuple_hash(ok[i], cu[i]);
            }
        }
        for (auto &kv : groups) {
            int d = mgi_wl_dest(spec.pattern, kv.first, 0, G);
            ++a.groups[d];
            a.group_sum[d] += mgi_wl_group_hash(kv.first, kv.second);
        }
    }
};

void expect_same(const mgi_wl_answer_t &x, const mgi_wl_answer_t &y, int G,
                 bool ops)
{
    for (int s = 0; s < G; ++s) {
        for (int d = 0; d < G; ++d) {
            EXPECT_EQ(x.l_count[s][d], y.l_count[s][d]) << s << "->" << d;
            EXPECT_EQ(x.l_sum[s][d], y.l_sum[s][d]) << s << "->" << d;
            EXPECT_EQ(x.o_count[s][d], y.o_count[s][d]) << s << "->" << d;
            EXPECT_EQ(x.o_sum[s][d], y.o_sum[s][d]) << s << "->" << d;
        }
        if (ops) {
            EXPECT_EQ(x.groups[s], y.groups[s]) << s;
            EXPECT_EQ(x.group_sum[s], y.group_sum[s]) << s;
            EXPECT_EQ(x.matches[s], y.matches[s]) << s;
            EXPECT_EQ(x.join_sum[s], y.join_sum[s]) << s;
        }
    }
}

const unsigned all_parts = MGI_WL_REF_EXCHANGE | MGI_WL_REF_ORDERS |
                           MGI_WL_REF_GROUPBY | MGI_WL_REF_JOIN;

} // namespace

class wl_ref : public ::testing::TestWithParam<std::tuple<int, double>> {
};

TEST_P(wl_ref, exchange_groupby_join_match_brute_force)
{
    mgi_wl_spec_t spec;
    mgi_tpch_zipf_t z;
    int G        = std::get<0>(GetParam());
    double theta = std::get<1>(GetParam());

    memset(&spec, 0, sizeof(spec));
    mgi_tpch_params_init(&spec.tpch, 5, 0.004);
    spec.gpus    = G;
    spec.pattern = MGI_WL_PATTERN_EXCHANGE;
    if (theta >= 0) {
        ASSERT_EQ(0, mgi_tpch_zipf_init(&z, spec.tpch.n_orders, theta));
        spec.zipf = &z;
    }
    mgi_wl_answer_t ref;
    ASSERT_EQ(0, mgi_wl_ref_compute(&spec, all_parts, &ref));
    brute b(spec);
    expect_same(ref, b.a, G, true);

    /* sanity: all rows arrive, keys partition cleanly */
    uint64_t rows = 0, orders = 0;
    for (int s = 0; s < G; ++s) {
        for (int d = 0; d < G; ++d) {
            rows   += ref.l_count[s][d];
            orders += ref.o_count[s][d];
        }
    }
    EXPECT_EQ(mgi_tpch_lineitem_count(&spec.tpch, 0, spec.tpch.n_orders),
              rows);
    EXPECT_EQ(spec.tpch.n_orders, orders);
    uint64_t matches = 0, groups = 0;
    for (int d = 0; d < G; ++d) {
        matches += ref.matches[d];
        groups  += ref.groups[d];
    }
    EXPECT_EQ(rows, matches);        /* a foreign key: one order per line */
    if (theta < 0) {
        EXPECT_EQ(spec.tpch.n_orders, groups);
    }
}

INSTANTIATE_TEST_SUITE_P(gpus_theta, wl_ref,
        ::testing::Combine(::testing::Values(1, 2, 3, 4),
                           ::testing::Values(-1.0, 0.0, 1.5)));

TEST(wl_ref_patterns, exchange_counts_match_brute_force)
{
    for (int pat = MGI_WL_PATTERN_MANY2ONE; pat < MGI_WL_PATTERN_LAST;
         ++pat) {
        mgi_wl_spec_t spec;
        memset(&spec, 0, sizeof(spec));
        mgi_tpch_params_init(&spec.tpch, 9, 0.004);
        spec.gpus    = 4;
        spec.pattern = (mgi_wl_pattern_t)pat;
        mgi_wl_answer_t ref;
        ASSERT_EQ(0, mgi_wl_ref_compute(&spec, MGI_WL_REF_EXCHANGE |
                                        MGI_WL_REF_ORDERS, &ref));
        brute b(spec);
        expect_same(ref, b.a, 4, false);
        for (int s = 1; s < 4; ++s) {
            for (int d = 0; d < 4; ++d) {
                if (pat == MGI_WL_PATTERN_MANY2ONE) {
                    if ((d != 0) && (d != s)) {
                        EXPECT_EQ(0u, ref.l_count[s][d]);
                    }
                } else {
                    EXPECT_EQ(0u, ref.l_count[s][d]);  /* no input */
                }
            }
        }
        if (pat == MGI_WL_PATTERN_MANY2ONE) {
            for (int d = 0; d < 4; ++d) {
                EXPECT_EQ(0u, ref.l_count[0][d]);       /* rank 0: none */
            }
            /* 1/G of each sender's tuples goes to rank 0 */
            for (int s = 1; s < 4; ++s) {
                double part = (double)ref.l_count[s][0] /
                              (ref.l_count[s][0] + ref.l_count[s][s]);
                EXPECT_NEAR(0.25, part, 0.02) << s;
            }
        }
        if (pat == MGI_WL_PATTERN_P2P) {
            EXPECT_EQ(0u, ref.l_count[0][0]);
            EXPECT_EQ(0u, ref.l_count[0][2]);
            EXPECT_GT(ref.l_count[0][1], 0u);
        }
        /* groupby / join are defined on the exchange pattern only */
        EXPECT_EQ(-1, mgi_wl_ref_compute(&spec, MGI_WL_REF_GROUPBY, &ref));
    }
}

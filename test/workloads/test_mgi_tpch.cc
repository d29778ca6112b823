/**
 * CPU tests of the TPC-H-like generator: determinism, dbgen's distributions,
 * slices that concatenate to the whole table, Zipf against theory.
 */
#include "mgi_tpch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <vector>

/* from the first run of this generator (seed 42, SF 0.01, theta 1) */
#define MGI_TPCH_GOLDEN_ROWS 60207u
#define MGI_TPCH_GOLDEN_SUM  0xee7ea124afdd6d84ull

namespace {

struct lineitem_cols {
    std::vector<int64_t> orderkey, zkey, extendedprice;
    std::vector<int32_t> partkey, quantity, discount, tax;
    std::vector<int8_t>  linenumber;

    explicit lineitem_cols(size_t n) :
        orderkey(n), zkey(n), extendedprice(n), partkey(n), quantity(n),
        discount(n), tax(n), linenumber(n) {}

    mgi_tpch_lineitem_t view(size_t at = 0)
    {
        mgi_tpch_lineitem_t c;
        c.orderkey      = orderkey.data() + at;
        c.zkey          = zkey.data() + at;
        c.partkey       = partkey.data() + at;
        c.linenumber    = linenumber.data() + at;
        c.quantity      = quantity.data() + at;
        c.extendedprice = extendedprice.data() + at;
        c.discount      = discount.data() + at;
        c.tax           = tax.data() + at;
        return c;
    }

    bool operator==(const lineitem_cols &o) const
    {
        return (orderkey == o.orderkey) && (zkey == o.zkey) &&
               (extendedprice == o.extendedprice) &&
               (partkey == o.partkey) && (quantity == o.quantity) &&
               (discount == o.discount) && (tax == o.tax) &&
               (linenumber == o.linenumber);
    }
};

class tpch : public ::testing::Test {
protected:
    void SetUp() override
    {
        mgi_tpch_params_init(&p, 42, 0.01);     /* 15000 orders */
        ASSERT_EQ(0, mgi_tpch_zipf_init(&z, p.n_orders, 1.0));
    }

    lineitem_cols whole(const mgi_tpch_params_t &q)
    {
        lineitem_cols c(mgi_tpch_lineitem_count(&q, 0, q.n_orders));
        mgi_tpch_lineitem_t v = c.view();
        EXPECT_EQ(c.orderkey.size(),
                  mgi_tpch_lineitem_gen(&q, &z, 0, q.n_orders, &v));
        return c;
    }

    mgi_tpch_params_t p;
    mgi_tpch_zipf_t   z;
};

/* sum k^-theta, k = 1..n, by brute force */
double harmonic(uint64_t n, double theta)
{
    double s = 0.0;
    for (uint64_t k = n; k >= 1; --k) {
        s += std::pow((double)k, -theta);
    }
    return s;
}

} // namespace

TEST_F(tpch, scale)
{
    EXPECT_EQ(15000u, p.n_orders);
    EXPECT_EQ(2000u, p.n_parts);
    EXPECT_EQ(1500u, p.n_custs);
    mgi_tpch_params_t q;
    mgi_tpch_params_init(&q, 1, 100.0);
    EXPECT_EQ(150000000u, q.n_orders);
}

TEST_F(tpch, deterministic_by_seed)
{
    lineitem_cols a = whole(p), b = whole(p);
    EXPECT_TRUE(a == b);

    mgi_tpch_params_t q = p;
    q.seed = 43;
    lineitem_cols c = whole(q);
    EXPECT_FALSE((a.orderkey.size() == c.orderkey.size()) &&
                 (a.extendedprice == c.extendedprice));
}

TEST_F(tpch, sparse_orderkeys)
{
    std::vector<int64_t> key(p.n_orders);
    mgi_tpch_orders_t o = {key.data(), NULL, NULL};
    mgi_tpch_orders_gen(&p, 0, p.n_orders, &o);
    EXPECT_EQ(1, key[0]);
    EXPECT_EQ(8, key[7]);
    EXPECT_EQ(33, key[8]);
    for (size_t i = 0; i < key.size(); ++i) {
        ASSERT_GE(key[i] % 32, 1);
        ASSERT_LE(key[i] % 32, 8);
        if (i > 0) {
            ASSERT_GT(key[i], key[i - 1]);
        }
    }
    /* 8 of every 32 keys used: the largest key is about 4 n_orders */
    EXPECT_NEAR(4.0, (double)key.back() / p.n_orders, 0.01);
}

TEST_F(tpch, lines_per_order_grouped_1_to_7)
{
    lineitem_cols c = whole(p);
    std::map<int64_t, int> lines;
    int64_t prev = 0;
    int expect_line = 1;

    for (size_t r = 0; r < c.orderkey.size(); ++r) {
        if (c.orderkey[r] != prev) {
            ASSERT_GT(c.orderkey[r], prev) << "rows not grouped by order";
            prev        = c.orderkey[r];
            expect_line = 1;
        }
        ASSERT_EQ(expect_line++, c.linenumber[r]);
        ++lines[c.orderkey[r]];
    }
    ASSERT_EQ(p.n_orders, lines.size());
    std::vector<int> hist(8, 0);
    for (auto &kv : lines) {
        ASSERT_GE(kv.second, 1);
        ASSERT_LE(kv.second, 7);
        ++hist[kv.second];
    }
    double mean = (double)c.orderkey.size() / p.n_orders;
    EXPECT_NEAR(4.0, mean, 0.05);       /* sd of the mean: 2/sqrt(15000) */
    for (int k = 1; k <= 7; ++k) {
        EXPECT_NEAR(1.0 / 7, (double)hist[k] / p.n_orders, 0.012) << k;
    }
}

TEST_F(tpch, value_ranges_like_dbgen)
{
    lineitem_cols c = whole(p);
    double qsum = 0, dsum = 0;

    for (size_t r = 0; r < c.orderkey.size(); ++r) {
        ASSERT_GE(c.quantity[r], 1);
        ASSERT_LE(c.quantity[r], 50);
        ASSERT_GE(c.discount[r], 0);
        ASSERT_LE(c.discount[r], 10);
        ASSERT_GE(c.tax[r], 0);
        ASSERT_LE(c.tax[r], 8);
        ASSERT_GE(c.partkey[r], 1);
        ASSERT_LE(c.partkey[r], (int64_t)p.n_parts);
        ASSERT_EQ(c.quantity[r] * mgi_tpch_retailprice(c.partkey[r]),
                  c.extendedprice[r]);
        /* dbgen: 901.00 .. 104949.50 (cents) per unit */
        ASSERT_GE(c.extendedprice[r], 90000);
        ASSERT_LE(c.extendedprice[r], 50 * 210000);
        qsum += c.quantity[r];
        dsum += c.discount[r];
    }
    EXPECT_NEAR(25.5, qsum / c.orderkey.size(), 0.3);
    EXPECT_NEAR(5.0, dsum / c.orderkey.size(), 0.1);

    std::vector<int32_t> cust(p.n_orders), date(p.n_orders);
    mgi_tpch_orders_t o = {NULL, cust.data(), date.data()};
    mgi_tpch_orders_gen(&p, 0, p.n_orders, &o);
    for (size_t i = 0; i < cust.size(); ++i) {
        ASSERT_GE(cust[i], 1);
        ASSERT_LE(cust[i], (int64_t)p.n_custs);
        ASSERT_GE(date[i], 0);
        ASSERT_LT(date[i], MGI_TPCH_DATE_DAYS);
    }
}

TEST_F(tpch, slices_concatenate_to_whole)
{
    lineitem_cols all = whole(p);
    std::vector<int64_t> okey_all(p.n_orders);
    std::vector<int32_t> cust_all(p.n_orders);
    mgi_tpch_orders_t oa = {okey_all.data(), cust_all.data(), NULL};
    mgi_tpch_orders_gen(&p, 0, p.n_orders, &oa);

    for (unsigned g : {1u, 2u, 3u, 4u, 7u, 8u}) {
        lineitem_cols cat(all.orderkey.size());
        std::vector<int64_t> okey(p.n_orders);
        std::vector<int32_t> cust(p.n_orders);
        size_t at = 0;
        uint64_t prev_end = 0;
        for (unsigned part = 0; part < g; ++part) {
            uint64_t b, e;
            mgi_tpch_slice(p.n_orders, part, g, &b, &e);
            ASSERT_EQ(prev_end, b);
            prev_end = e;
            mgi_tpch_lineitem_t v = cat.view(at);
            uint64_t n = mgi_tpch_lineitem_gen(&p, &z, b, e, &v);
            ASSERT_EQ(mgi_tpch_lineitem_count(&p, b, e), n);
            at += n;
            mgi_tpch_orders_t o = {okey.data() + b, cust.data() + b, NULL};
            mgi_tpch_orders_gen(&p, b, e, &o);
        }
        ASSERT_EQ(p.n_orders, prev_end);
        ASSERT_EQ(all.orderkey.size(), at);
        EXPECT_TRUE(cat == all) << g << " slices";
        EXPECT_EQ(okey_all, okey);
        EXPECT_EQ(cust_all, cust);
    }
}

TEST_F(tpch, zipf_table_matches_theory)
{
    for (double theta : {0.0, 0.5, 1.0, 1.5}) {
        for (uint64_t n : {10ull, 1000ull, 15000ull, 3000000ull}) {
            mgi_tpch_zipf_t t;
            ASSERT_EQ(0, mgi_tpch_zipf_init(&t, n, theta));
            double h = harmonic(n, theta);
            EXPECT_NEAR(1.0 / h, mgi_tpch_zipf_prob(&t, 0), 1e-9 / h)
                    << theta << " " << n;
            EXPECT_NEAR(std::pow(2.0, -theta) / h,
                        mgi_tpch_zipf_prob(&t, 1), 1e-9 / h);
            /* inside a bucket: off by at most (1+1/64)^theta */
            uint64_t k = n - 1;
            double ratio = mgi_tpch_zipf_prob(&t, k) /
                           (std::pow((double)(k + 1), -theta) / h);
            EXPECT_NEAR(1.0, ratio, std::pow(1.0 + 1.0 / 64, theta) - 1 +
                        1e-6) << theta << " " << n;
        }
    }
    mgi_tpch_zipf_t t;
    EXPECT_EQ(-1, mgi_tpch_zipf_init(&t, 0, 1.0));
    EXPECT_EQ(-1, mgi_tpch_zipf_init(&t, 10, -1.0));
    EXPECT_EQ(0, mgi_tpch_zipf_init(&t, 15000000000ull, 1.5));
}

TEST_F(tpch, zipf_top_key_frequency)
{
    const uint64_t samples = 1000000;

    for (double theta : {0.0, 0.5, 1.0, 1.5}) {
        mgi_tpch_zipf_t t;
        ASSERT_EQ(0, mgi_tpch_zipf_init(&t, p.n_orders, theta));
        std::vector<uint64_t> freq(p.n_orders, 0);
        for (uint64_t i = 0; i < samples; ++i) {
            uint64_t r = mgi_tpch_zipf_rank(&t,
                    mgi_tpch_rand(7, MGI_TPCH_S_ZIPF_BUCKET, i),
                    mgi_tpch_rand(7, MGI_TPCH_S_ZIPF_OFFSET, i));
            ASSERT_LT(r, p.n_orders);
            ++freq[r];
        }
        double h  = harmonic(p.n_orders, theta);
        for (uint64_t k : {0ull, 1ull, 9ull}) {
            double pk = std::pow((double)(k + 1), -theta) / h;
            double sd = std::sqrt(samples * pk * (1 - pk));
            EXPECT_NEAR(samples * pk, (double)freq[k], 5 * sd + 1)
                    << "theta " << theta << " rank " << k;
        }
        if (theta == 0.0) {
            /* uniform: every rank near samples / n */
            double mu = (double)samples / p.n_orders;
            uint64_t lo = *std::min_element(freq.begin(), freq.end());
            uint64_t hi = *std::max_element(freq.begin(), freq.end());
            EXPECT_GT((double)lo, mu - 6 * std::sqrt(mu));
            EXPECT_LT((double)hi, mu + 6 * std::sqrt(mu));
        }
    }
}

TEST_F(tpch, zkey_is_an_orderkey)
{
    lineitem_cols c = whole(p);
    std::set<int64_t> keys;
    std::vector<int64_t> okey(p.n_orders);
    mgi_tpch_orders_t o = {okey.data(), NULL, NULL};
    mgi_tpch_orders_gen(&p, 0, p.n_orders, &o);
    keys.insert(okey.begin(), okey.end());
    size_t hot = 0;
    for (int64_t k : c.zkey) {
        ASSERT_TRUE(keys.count(k)) << k;
        hot += (k == 1);
    }
    /* theta = 1: rank 0 (orderkey 1) takes 1/H(n,1) of the rows */
    double expect = c.zkey.size() / harmonic(p.n_orders, 1.0);
    EXPECT_NEAR(expect, (double)hot, 5 * std::sqrt(expect));
}

/* Pins the bytes: the GPU generator is checked against this host code, and
 * a change here would silently change every benchmark's data. */
TEST_F(tpch, golden_checksum)
{
    lineitem_cols c = whole(p);
    uint64_t h = 0;
    for (size_t r = 0; r < c.orderkey.size(); ++r) {
        h += mgi_tpch_mix64((uint64_t)c.orderkey[r] ^
                            mgi_tpch_mix64((uint64_t)c.extendedprice[r]) ^
                            ((uint64_t)c.zkey[r] << 20) ^
                            ((uint64_t)c.discount[r] << 8) ^
                            (uint64_t)c.tax[r]);
    }
    RecordProperty("rows", (int)c.orderkey.size());
    printf("rows %zu checksum 0x%016llx\n", c.orderkey.size(),
           (unsigned long long)h);
    EXPECT_EQ(MGI_TPCH_GOLDEN_ROWS, c.orderkey.size());
    EXPECT_EQ(MGI_TPCH_GOLDEN_SUM, h);
}

/**
 * Dividing a striped operation among paths and adapting the shares
 * (cuda_mgi_share.c), on the CPU.
 * See file LICENSE for terms.
 */

#include <gtest/gtest.h>

extern "C" {
#include "cuda_mgi_share.h"
}

#include <random>

namespace {
const size_t MiB = 1024 * 1024;
}


TEST(cuda_mgi_share, parts_add_up_and_staged_parts_are_whole_chunks) {
    std::mt19937_64 rng(7);
    for (int iter = 0; iter < 20000; ++iter) {
        unsigned n      = rng() % 4;
        size_t align    = (rng() % 2) ? 2 * MiB : 64 * 1024;
        size_t length   = rng() % (1ull << 31);
        int direct_ok   = rng() % 2;
        double shares[3];
        size_t parts[4];
        for (unsigned i = 0; i < n; ++i) {
            shares[i] = (rng() % 1000) / 2000.0;
        }
        uct_cuda_mgi_share_split(length, shares, n, direct_ok, align, parts);
        size_t sum = 0;
        for (unsigned i = 0; i <= n; ++i) {
            sum += parts[i];
        }
        ASSERT_EQ(length, sum) << "iteration " << iter;
        if (direct_ok) {
            for (unsigned i = 1; i <= n; ++i) {
                ASSERT_EQ(0u, parts[i] % align);
                ASSERT_LE(parts[i], (size_t)(length * shares[i - 1]));
            }
        } else if (n > 0) {
            ASSERT_EQ(0u, parts[0]) << "direct path used while switched off";
        }
    }
}

TEST(cuda_mgi_share, the_h200_split) {
    /* 10.3 % of 256 MiB through the host path in 2 MiB chunks */
    double shares[] = {55.0 / 533.0};
    size_t parts[2];
    uct_cuda_mgi_share_split(256 * MiB, shares, 1, 1, 2 * MiB, parts);
    EXPECT_EQ(26 * MiB, parts[1]);
    EXPECT_EQ(230 * MiB, parts[0]);

    /* below one chunk: all direct */
    uct_cuda_mgi_share_split(16 * MiB, shares, 1, 1, 2 * MiB, parts);
    EXPECT_EQ(0u, parts[1]);
    EXPECT_EQ(16 * MiB, parts[0]);
}

TEST(cuda_mgi_share, without_direct_everything_is_staged) {
    double shares[] = {0.1, 0.3};
    size_t parts[3];
    /* too small to split: all on the widest path */
    uct_cuda_mgi_share_split(7, shares, 2, 0, 2 * MiB, parts);
    EXPECT_EQ(0u, parts[0]);
    EXPECT_EQ(0u, parts[1]);
    EXPECT_EQ(7u, parts[2]);
    /* large: in proportion 1 : 3 */
    uct_cuda_mgi_share_split(64 * MiB, shares, 2, 0, 2 * MiB, parts);
    EXPECT_EQ(0u, parts[0]);
    EXPECT_EQ(16 * MiB, parts[1]);
    EXPECT_EQ(48 * MiB, parts[2]);
}

TEST(cuda_mgi_share, adapt_moves_towards_the_later_path) {
    EXPECT_LT(uct_cuda_mgi_share_adapt(0.1, 1.0, 2.0), 0.1);  /* host late */
    EXPECT_GT(uct_cuda_mgi_share_adapt(0.1, 2.0, 1.0), 0.1);  /* host early */
    EXPECT_DOUBLE_EQ(0.1, uct_cuda_mgi_share_adapt(0.1, 1.0, 1.0));
    /* one operation moves a share by at most the gain */
    EXPECT_DOUBLE_EQ(0.1 * (1 - UCT_CUDA_MGI_ADAPT_GAIN / 2),
                     uct_cuda_mgi_share_adapt(0.1, 1.0, 100.0));
    EXPECT_DOUBLE_EQ(0.1 * (1 + UCT_CUDA_MGI_ADAPT_GAIN),
                     uct_cuda_mgi_share_adapt(0.1, 100.0, 1.0));
    EXPECT_DOUBLE_EQ(UCT_CUDA_MGI_MAX_SHARE,
                     uct_cuda_mgi_share_adapt(0.45, 100.0, 1.0));
    /* zero times do not divide by zero */
    EXPECT_GT(uct_cuda_mgi_share_adapt(0.1, 0.0, 0.0), 0.0);
}

/* On a model of two paths (direct D GB/s, host H GB/s, each part's time its
 * bytes over its bandwidth) the share settles where both land together,
 * H / (D + H), from a start that is too high or too low, and it follows a
 * host path that slows down (both GPUs sending). */
TEST(cuda_mgi_share, adapt_converges_on_a_model) {
    const size_t length = 256 * MiB, align = 2 * MiB;
    auto run = [&](double share, double d_bw, double h_bw, int ops) {
        for (int i = 0; i < ops; ++i) {
            size_t parts[2];
            uct_cuda_mgi_share_split(length, &share, 1, 1, align, parts);
            double t_direct = parts[0] / d_bw;
            double t_host   = parts[1] / h_bw;
            if (parts[1] == 0) {
                share = 0.05; /* the probe brings an idle path back */
                continue;
            }
            share = uct_cuda_mgi_share_adapt(share, t_direct, t_host);
        }
        return share;
    };

    double ideal = 42.0 / (390.0 + 42.0);
    EXPECT_NEAR(ideal, run(0.30, 390e9, 42e9, 200), 0.015);
    EXPECT_NEAR(ideal, run(0.02, 390e9, 42e9, 200), 0.015);
    double slowed = 15.0 / (390.0 + 15.0);
    EXPECT_NEAR(slowed, run(ideal, 390e9, 15e9, 200), 0.015);
}

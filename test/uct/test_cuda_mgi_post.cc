/**
 * When copies that wait are posted (cuda_mgi_post.h), on the CPU: a caller
 * that keeps a window of operations in flight and progresses after each,
 * against a copy engine that completes posted copies in order.
 * See file LICENSE for terms.
 */

#include <gtest/gtest.h>

extern "C" {
#include "cuda_mgi_post.h"
}

#include <algorithm>

namespace {

/* What a window did: how often as many copies waited as were posted (or
 * more) after a progress call, the most that waited, and the mean copies
 * a post call carried */
struct window_run {
    unsigned short_moments = 0;
    unsigned most_waiting  = 0;
    double   mean_batch    = 0;
};

/* WINDOW operations in flight, OPS in all. A copy started on an idle
 * interface is posted at once (uct_cuda_mgi_iface_batching); others wait
 * until they are due. The engine completes one posted copy at a time */
window_run run_window(unsigned window, unsigned ops)
{
    unsigned waiting = 0, outstanding = 0, started = 0;
    unsigned posts = 0, posted_copies = 0;
    window_run r;

    auto post_due = [&]() {
        if (uct_cuda_mgi_post_is_due(waiting, outstanding)) {
            ++posts;
            posted_copies += waiting;
            waiting        = 0;
        }
        r.most_waiting = std::max(r.most_waiting, waiting);
        if ((waiting > 0) && (waiting >= outstanding - waiting)) {
            ++r.short_moments;
        }
    };

    while ((started < ops) || (outstanding > 0)) {
        while ((started < ops) && (outstanding < window)) {
            if (outstanding == 0) {
                ++posts;
                ++posted_copies;
            } else {
                ++waiting;
            }
            ++outstanding;
            ++started;
            post_due();
        }
        if (outstanding == waiting) {
            /* nothing posted: a flush posts what waits */
            ++posts;
            posted_copies += waiting;
            waiting        = 0;
        }
        --outstanding; /* the engine completes a posted copy */
        post_due();
    }
    r.mean_batch = (double)posted_copies / posts;
    return r;
}

} // namespace

/* A copy that waits while fewer than it are posted leaves the engine
 * short: with windows from 2 to 64, never more wait than are posted */
TEST(cuda_mgi_post, never_more_waiting_than_posted) {
    for (unsigned window = 2; window <= 64; ++window) {
        window_run r = run_window(window, 100000);
        EXPECT_EQ(r.short_moments, 0u) << "window " << window;
        EXPECT_LE(r.most_waiting, (window - 1) / 2) << "window " << window;
        EXPECT_LT(r.most_waiting, (unsigned)UCT_CUDA_MGI_BATCH_PART)
                << "window " << window;
    }
}

/* The hold's purpose: a window of 32 (ucx_perftest's) posts half a window
 * a call, and a window of 4 two copies a call, not one */
TEST(cuda_mgi_post, windows_are_posted_in_batches) {
    EXPECT_GE(run_window(32, 100000).mean_batch,
              UCT_CUDA_MGI_BATCH_PART - 0.1);
    EXPECT_GE(run_window(4, 100000).mean_batch, 1.9);
    EXPECT_GE(run_window(8, 100000).mean_batch, 3.9);
}

/* An idle interface posts the one copy it has; a lone copy that waits
 * behind one posted copy is posted */
TEST(cuda_mgi_post, lone_copies_are_not_held) {
    EXPECT_TRUE(uct_cuda_mgi_post_is_due(1, 1));
    EXPECT_TRUE(uct_cuda_mgi_post_is_due(1, 2));
    EXPECT_FALSE(uct_cuda_mgi_post_is_due(0, 5));
    EXPECT_FALSE(uct_cuda_mgi_post_is_due(1, 4));
    EXPECT_TRUE(uct_cuda_mgi_post_is_due(UCT_CUDA_MGI_BATCH_PART, 64));
}

/**
 * Dividing a striped operation among paths by their rates and queues, and
 * measuring the rates (cuda_mgi_share.c), on the CPU: the arithmetic, and
 * a model of paths as servers with many operations in flight.
 * See file LICENSE for terms.
 */

#include <gtest/gtest.h>

extern "C" {
#include "cuda_mgi_share.h"
}

#include <algorithm>
#include <random>
#include <vector>

namespace {

const size_t MiB = 1024 * 1024;
const double GB  = 1e9;

/* Lanes of these capacities; the staged ones (all but the first) with
 * latency staged_latency */
std::vector<uct_cuda_mgi_lane_t> lanes_of(std::vector<double> capacities,
                                          double staged_latency = 0)
{
    std::vector<uct_cuda_mgi_lane_t> lanes(capacities.size());
    for (size_t i = 0; i < capacities.size(); ++i) {
        uct_cuda_mgi_lane_init(&lanes[i], capacities[i],
                               (i > 0) ? staged_latency : 0);
    }
    return lanes;
}

} // namespace


TEST(cuda_mgi_share, parts_add_up_and_staged_parts_are_whole_chunks) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> rate(1 * GB, 400 * GB);
    std::uniform_real_distribution<double> queue(0, 512.0 * MiB);

    for (int round = 0; round < 2000; ++round) {
        unsigned n     = 1 + round % 4;
        int direct_ok  = (round / 4) % 2;
        size_t align   = (round % 3) ? 2 * MiB : 64 * 1024;
        size_t length  = (size_t)(rng() % (1024 * MiB)) + 1;
        auto lanes     = lanes_of(std::vector<double>(n, 1 * GB));
        size_t parts[8];
        size_t sum     = 0;

        for (auto &l : lanes) {
            l.rate   = rate(rng);
            l.queued = (round % 5) ? queue(rng) : 0;
        }
        uct_cuda_mgi_share_split(length, lanes.data(), n, direct_ok, align,
                                 parts);
        for (unsigned i = 0; i < n; ++i) {
            sum += parts[i];
        }
        ASSERT_EQ(length, sum) << "round " << round;
        if (direct_ok) {
            for (unsigned i = 1; i < n; ++i) {
                ASSERT_EQ(0u, parts[i] % align) << "round " << round;
            }
        } else if (n > 1) {
            ASSERT_EQ(0u, parts[0]) << "round " << round;
        }
    }
}


/* Nothing in flight: a split in proportion to the rates, the H200 pair's
 * direct 397 GB/s and host path 55 GB/s: 256 MiB leaves 30 MiB (whole 2 MiB
 * chunks) to the host path; 4 MiB is too small to give it a chunk */
TEST(cuda_mgi_share, idle_paths_split_by_rate) {
    auto lanes = lanes_of({397 * GB, 55 * GB});
    size_t parts[2];

    uct_cuda_mgi_share_split(256 * MiB, lanes.data(), 2, 1, 2 * MiB, parts);
    EXPECT_EQ(30 * MiB, parts[1]);
    EXPECT_EQ(226 * MiB, parts[0]);

    uct_cuda_mgi_share_split(2 * MiB + 5, lanes.data(), 2, 1, 2 * MiB, parts);
    EXPECT_EQ(0u, parts[1]);
}


/* A path whose queue alone outlasts what the others need gets nothing */
TEST(cuda_mgi_share, a_long_queue_gets_nothing) {
    auto lanes = lanes_of({397 * GB, 55 * GB});
    size_t parts[2];

    lanes[1].queued = 64.0 * MiB;      /* 1.2 ms of host path work */
    uct_cuda_mgi_share_split(64 * MiB, lanes.data(), 2, 1, 2 * MiB, parts);
    EXPECT_EQ(0u, parts[1]);
    EXPECT_EQ(64 * MiB, parts[0]);

    /* and the direct path's own queue pushes work to the staged path */
    lanes[1].queued = 0;
    lanes[0].queued = 1024.0 * MiB;
    uct_cuda_mgi_share_split(64 * MiB, lanes.data(), 2, 1, 2 * MiB, parts);
    EXPECT_EQ(64 * MiB, parts[1]);
}


TEST(cuda_mgi_share, without_direct_everything_is_staged) {
    auto lanes = lanes_of({397 * GB, 55 * GB, 300 * GB});
    size_t parts[3];

    /* too small to split: all on the fastest staged path */
    uct_cuda_mgi_share_split(7, lanes.data(), 3, 0, 2 * MiB, parts);
    EXPECT_EQ(0u, parts[0]);
    EXPECT_EQ(0u, parts[1]);
    EXPECT_EQ(7u, parts[2]);

    uct_cuda_mgi_share_split(64 * MiB, lanes.data(), 3, 0, 2 * MiB, parts);
    EXPECT_EQ(0u, parts[0]);
    EXPECT_EQ(64 * MiB, parts[1] + parts[2]);
    EXPECT_GT(parts[2], parts[1]);
}


TEST(cuda_mgi_share, rates_follow_what_landed) {
    uct_cuda_mgi_lane_t lane;

    uct_cuda_mgi_lane_init(&lane, 55 * GB, 0);
    uct_cuda_mgi_lane_post(&lane, 64 * MiB);
    /* it moved at 25 GB/s: the rate moves a quarter of the way there */
    uct_cuda_mgi_lane_done(&lane, 64 * MiB, 1.0, 1.0 + 64.0 * MiB / (25 * GB));
    EXPECT_NEAR(55 * GB + UCT_CUDA_MGI_RATE_GAIN * (25 * GB - 55 * GB),
                lane.rate, 1e6);
    EXPECT_DOUBLE_EQ(0, lane.queued);

    /* the next part waited for the first: timed from when the lane freed */
    double t = lane.last_done;
    uct_cuda_mgi_lane_done(&lane, 55 * MiB, 1.0, t + 55.0 * MiB / (55 * GB));
    EXPECT_GT(lane.rate, 47.5 * GB);

    /* never below the floor, nor above the ceiling */
    for (int i = 0; i < 100; ++i) {
        t = lane.last_done;
        uct_cuda_mgi_lane_done(&lane, 1, t, t + 100.0);
    }
    EXPECT_DOUBLE_EQ(55 * GB * UCT_CUDA_MGI_RATE_FLOOR, lane.rate);
    for (int i = 0; i < 100; ++i) {
        t = lane.last_done;
        uct_cuda_mgi_lane_done(&lane, 64 * MiB, t,
                               t + 64.0 * MiB / (0.99 * UCT_CUDA_MGI_RATE_CEIL *
                                                 55 * GB));
    }
    EXPECT_NEAR(55 * GB * 0.99 * UCT_CUDA_MGI_RATE_CEIL, lane.rate, 1e6);
    /* a sample beyond the ceiling is no path's rate: not taken */
    double rate = lane.rate;
    t = lane.last_done;
    uct_cuda_mgi_lane_done(&lane, 64 * MiB, t, t + 1e-6);
    EXPECT_DOUBLE_EQ(rate, lane.rate);
}


TEST(cuda_mgi_share, a_starved_lane_is_probed_again) {
    auto lanes = lanes_of({397 * GB, 55 * GB});
    size_t parts[2];
    int probed = -1;

    lanes[1].rate = 55 * GB * UCT_CUDA_MGI_RATE_FLOOR;
    for (int i = 0; i < 2 * UCT_CUDA_MGI_PROBE_INTERVAL; ++i) {
        uct_cuda_mgi_share_split(16 * MiB, lanes.data(), 2, 1, 2 * MiB, parts);
        if ((parts[1] > 0) && (probed < 0)) {
            probed = i;
        }
    }
    EXPECT_EQ(UCT_CUDA_MGI_PROBE_INTERVAL, probed);
}


namespace {

/* Paths as FIFO servers of true rates; `window` operations of `length`
 * bytes kept in flight; every part's landing fed back.  Returns the bytes
 * per second delivered over `ops` operations. */
double model(std::vector<double> planned, std::vector<double> truth,
             size_t length, unsigned window, unsigned ops,
             std::vector<uct_cuda_mgi_lane_t> *out_lanes = nullptr,
             double latency = 0, std::vector<double> cost = {},
             std::vector<uct_cuda_mgi_lane_t> *in_lanes = nullptr)
{
    struct part_ev { double t; unsigned op, lane; size_t len; double post; };
    auto lanes = (in_lanes != nullptr) ? *in_lanes : lanes_of(planned, latency);
    unsigned n = (unsigned)planned.size();
    std::vector<double> free_at(n, 0.0);
    std::vector<part_ev> events;          /* parts not landed yet */
    std::vector<unsigned> left(ops, 0);   /* parts of an op not landed */
    unsigned posted = 0, done = 0, in_flight = 0;
    double now = 0;

    auto post = [&](double t) {
        size_t parts[8] = {};
        uct_cuda_mgi_share_split(length, lanes.data(), n, 1, 2 * MiB, parts);
        for (unsigned i = 0; i < n; ++i) {
            if (parts[i] == 0) {
                continue;
            }
            uct_cuda_mgi_lane_post(&lanes[i], parts[i]);
            free_at[i] = std::max(free_at[i], t + ((i > 0) ? latency : 0)) +
                         ((i < cost.size()) ? cost[i] : 0) +
                         parts[i] / truth[i];
            events.push_back({free_at[i], posted, i, parts[i], t});
            ++left[posted];
        }
        ++posted;
        ++in_flight;
    };

    while (done < ops) {
        while ((in_flight < window) && (posted < ops)) {
            post(now);
        }
        auto it = std::min_element(events.begin(), events.end(),
                                   [](const part_ev &a, const part_ev &b) {
                                       return a.t < b.t;
                                   });
        part_ev ev = *it;
        events.erase(it);
        now = ev.t;
        uct_cuda_mgi_lane_done(&lanes[ev.lane], ev.len, ev.post, ev.t);
        if (--left[ev.op] == 0) {
            ++done;
            --in_flight;
        }
    }
    if (out_lanes != nullptr) {
        *out_lanes = lanes;
    }
    return (double)length * ops / now;
}

} // namespace


/* One operation at a time and 32 in flight (ucx_perftest's put_bw window),
 * with the planner's capacities right or wrong: the paths add up */
TEST(cuda_mgi_share, many_in_flight_do_not_collapse) {
    const double direct = 390 * GB, host = 50 * GB;
    struct { unsigned window; double planned_host; } cases[] = {
        {1, 55 * GB}, {16, 55 * GB}, {32, 55 * GB},
        {32, 110 * GB}, {32, 10 * GB}
    };

    for (auto c : cases) {
        double bw = model({397 * GB, c.planned_host}, {direct, host},
                          256 * MiB, c.window, 400);
        EXPECT_GT(bw, 0.97 * (direct + host))
                << "window " << c.window << ", host planned at "
                << c.planned_host / GB << " GB/s: " << bw / GB << " GB/s";
        EXPECT_GT(bw, 1.08 * direct)
                << "window " << c.window << ": " << bw / GB << " GB/s";
    }
}


/* The host path busy with the other direction (it moves 8 GB/s for us):
 * it must not hold the operations; they run at the direct path's rate */
TEST(cuda_mgi_share, a_busy_path_backs_off) {
    std::vector<uct_cuda_mgi_lane_t> lanes;
    double bw = model({397 * GB, 55 * GB}, {390 * GB, 8 * GB}, 64 * MiB, 32,
                      2000, &lanes);

    EXPECT_GT(bw, 0.97 * 390 * GB) << bw / GB << " GB/s";
    EXPECT_LT(lanes[1].rate, 20 * GB);
}


/* The staged path's latency keeps it out of an operation that finds
 * nothing in flight and would end sooner direct, and lets it in once the
 * direct path has a queue that hides it */
TEST(cuda_mgi_share, latency_keeps_small_idle_operations_direct) {
    auto lanes = lanes_of({397 * GB, 55 * GB}, 10e-6);
    size_t parts[2];

    uct_cuda_mgi_share_split(4 * MiB, lanes.data(), 2, 1, 64 * 1024, parts);
    EXPECT_EQ(0u, parts[1]);

    lanes[0].queued = 31.0 * MiB;
    uct_cuda_mgi_share_split(4 * MiB, lanes.data(), 2, 1, 64 * 1024, parts);
    EXPECT_GT(parts[1], 0u);
    EXPECT_EQ(4 * MiB, parts[0] + parts[1]);
}


/* 32 operations of 64 MiB in flight with the staged path's latency: the
 * rates still add up; one at a time, the latency costs little */
TEST(cuda_mgi_share, latency_and_many_in_flight) {
    double bw = model({397 * GB, 55 * GB}, {390 * GB, 50 * GB}, 64 * MiB, 32,
                      800, nullptr, 10e-6);
    EXPECT_GT(bw, 0.97 * 440 * GB) << bw / GB << " GB/s";

    bw = model({397 * GB, 55 * GB}, {390 * GB, 50 * GB}, 64 * MiB, 1, 200,
               nullptr, 10e-6);
    EXPECT_GT(bw, 1.05 * 390 * GB) << bw / GB << " GB/s";
}


/* Each part costs its path a few microseconds besides its bytes (a
 * copy-engine copy about 3 us, a staged one 10 us), which the rates take
 * in. After a spell that left the direct path's rate at the floor (its
 * completions seen late), operations one at a time must find the direct
 * path again: a small direct part looks slow, and the next split must
 * still give the direct path more, not less. */
TEST(cuda_mgi_share, one_at_a_time_finds_the_direct_path_again) {
    const std::vector<double> planned = {397 * GB, 55 * GB, 55 * GB};
    const std::vector<double> truth   = {390 * GB, 50 * GB, 50 * GB};
    const std::vector<double> cost    = {3e-6, 10e-6, 10e-6};
    auto lanes = lanes_of(planned, 10e-6);
    std::vector<uct_cuda_mgi_lane_t> after;

    lanes[0].rate = planned[0] * UCT_CUDA_MGI_RATE_FLOOR;
    model(planned, truth, 16 * MiB, 1, 40, &after, 10e-6, cost, &lanes);
    double bw = model(planned, truth, 16 * MiB, 1, 20, nullptr, 10e-6, cost,
                      &after);
    /* the direct path alone: 16 MiB in 3 us + 43 us */
    double direct = 16.0 * MiB / (3e-6 + 16.0 * MiB / truth[0]);
    EXPECT_GT(bw, 0.95 * direct) << bw / GB << " GB/s against "
                                 << direct / GB << " direct";
    EXPECT_GT(after[0].rate, 0.5 * planned[0]) << after[0].rate / GB;
}


/* Parts of one path seen complete by one progress call are timed a few
 * nanoseconds apart: such a part moved at no measurable rate, and must not
 * drive the path's rate to its ceiling */
TEST(cuda_mgi_share, parts_seen_together_do_not_raise_the_rate) {
    uct_cuda_mgi_lane_t lane;
    double t = 1.0;

    uct_cuda_mgi_lane_init(&lane, 55 * GB, 10e-6);
    uct_cuda_mgi_lane_done(&lane, 2 * MiB, t, t + 2.0 * MiB / (50 * GB));
    double rate = lane.rate;
    for (int i = 0; i < 8; ++i) {
        uct_cuda_mgi_lane_done(&lane, 2 * MiB, t, lane.last_done + 20e-9);
    }
    EXPECT_DOUBLE_EQ(rate, lane.rate) << lane.rate / GB;
}

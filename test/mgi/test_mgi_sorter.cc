/**
 * The GPU sorter's device code (src/ucp_ext/mgi_sorter_dev.h) run on the
 * CPU as one-thread "blocks": an endpoint with two stage rings, two sort
 * rings (next hops 16 and 32) seen through mirrors, a receive ring of three
 * lanes (lane 1 fed with whole segments as a remote mover would, lane 2
 * the loopback lane) and two final rings. Producers append unicast and
 * broadcast tuples of many sizes and one EOF per stage ring; a "mover"
 * drains the sort rings through their mirrors only; a consumer drains the
 * final rings. Checks: every tuple once, intact, in order per (stage ring,
 * destination); broadcast copies carry their destination; flush_done set
 * only once the mover released the EOF segments; EOF counted per source;
 * small rings force full targets (reservations turned into padding).
 * Lane 1's whole segments reach the final rings by reference
 * (MGI_RECV_ZCOPY=1: read in the lane, released through the final ring),
 * or copied by helpers in the copied_* cases.
 */
#include "test_mgi_sorter.h"

unsigned mgi_emu_bid = 0, mgi_emu_nblk = 1, mgi_emu_nth = 1;
thread_local unsigned mgi_emu_tid = 0;
emu_barrier mgi_emu_barrier;

void mgi_emu_sync(void)
{
    if (mgi_emu_nth > 1) {
        mgi_emu_barrier.wait();
    }
}
#if defined(MGI_SORTER_SELFCHECK)
unsigned long mgi_selfcheck_blocked = 0;
#endif


TEST(mgi_sorter, coalesced_one_block)
{
    run_sorter(1024, 4, 4, 1, 1, 3000);
}

TEST(mgi_sorter, per_tuple_one_block)
{
    run_sorter(1024, 4, 4, 0, 1, 3000);
}

TEST(mgi_sorter, coalesced_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000);
}

/* tiny rings: targets full all the time, passes wait for room and are
 * walked again */
TEST(mgi_sorter, tiny_rings_two_blocks)
{
    run_sorter(256, 2, 2, 1, 2, 1500);
}

/* MGI_SORTER_COALESCE=2 (the default): a thread per message for passes of
 * like small messages, coalesced for the others */
TEST(mgi_sorter, by_size_two_blocks_4_threads)
{
    run_sorter(1024, 4, 4, 2, 2, 3000, 4);
}

TEST(mgi_sorter, by_size_tiny_rings_two_blocks_8_threads)
{
    run_sorter(256, 2, 2, 2, 2, 1500, 8);
}

/* large segments: passes stop at MGI_GPU_MAX_EMIT messages */
TEST(mgi_sorter, large_segments)
{
    run_sorter(256 * 1024, 2, 2, 1, 1, 40000);
}

/* blocks of several threads: the barriers, the strided loops, the
 * per-target reservations by different threads */
TEST(mgi_sorter, coalesced_two_blocks_4_threads)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 4);
}

TEST(mgi_sorter, per_tuple_one_block_3_threads)
{
    run_sorter(1024, 4, 4, 0, 1, 3000, 3);
}

TEST(mgi_sorter, tiny_rings_two_blocks_8_threads)
{
    run_sorter(256, 2, 2, 1, 2, 1500, 8);
}

TEST(mgi_sorter, large_segments_32_threads)
{
    run_sorter(64 * 1024, 2, 2, 1, 1, 5000, 32);
}

/* like messages: the parallel walk of runs, 1 and 32 threads a block */
TEST(mgi_sorter, runs_one_thread)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 24);
}

TEST(mgi_sorter, runs_32_threads)
{
    run_sorter(4096, 4, 4, 1, 2, 6000, 32, 24);
}

TEST(mgi_sorter, runs_per_tuple_8_threads)
{
    run_sorter(1024, 4, 4, 0, 1, 3000, 8, 40);
}

/* MGI_SORTER_COALESCE=2: a run's words copied in segment order, each to
 * its message's place; words per message (3, 5, 8) against threads (3,
 * 8, 32) so a thread's word steps across messages unevenly */
TEST(mgi_sorter, runs_in_order_3_threads)
{
    run_sorter(1024, 4, 4, 2, 2, 3000, 3, 16);
}

TEST(mgi_sorter, runs_in_order_8_threads)
{
    run_sorter(1024, 4, 4, 2, 2, 3000, 8, 32);
}

TEST(mgi_sorter, runs_in_order_32_threads_lane_ctl)
{
    run_sorter(4096, 4, 4, 2, 2, 6000, 32, 56, 1);
}

/* like messages above MGI_GPU_RUN_MSG (batches of tuples, as block sends
 * write them): walked one after the other in one pass, not a pass each */
TEST(mgi_sorter, batches_one_thread)
{
    run_sorter(16 * 1024, 4, 4, 1, 2, 1500, 1, 1000);
}

TEST(mgi_sorter, batches_32_threads)
{
    run_sorter(16 * 1024, 4, 4, 1, 2, 1500, 32, 1000);
}

TEST(mgi_sorter, unlike_batches_8_threads)
{
    run_sorter(16 * 1024, 4, 4, 1, 2, 1500, 8, -600);
}

/* the largest messages (a payload of MGI_MSG_MAX_LEN, 65536 bytes with the
 * header: a batch of 8191 8-byte tuples), a thread per message
 * (MGI_SORTER_COALESCE=0) and coalesced: the emission arrays hold a
 * message's size in 16 bits */
TEST(mgi_sorter, largest_messages_per_tuple_4_threads)
{
    run_sorter(256 * 1024, 2, 2, 0, 1, 120, 4, MGI_MSG_MAX_LEN);
}

TEST(mgi_sorter, largest_messages_coalesced_4_threads)
{
    run_sorter(256 * 1024, 2, 2, 1, 1, 120, 4, MGI_MSG_MAX_LEN);
}

/* MGI_RECV_ZCOPY=0: every whole lane segment copied into its final ring
 * by a helper, as before references */
TEST(mgi_sorter, copied_whole_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 0, 0, 1, 0, 0);
}

TEST(mgi_sorter, copied_whole_lane_ctl_32_threads)
{
    run_sorter(4096, 4, 4, 1, 2, 6000, 32, 0, 1, 200, 1, 0, 0);
}

/* MGI_OWNER_HELP (0 by default, as above): a block whose lanes moved in
 * a round copies no whole move in it; the other blocks copy them, and a
 * lone block copies its own in the rounds its lanes did not move (none
 * stalls). 1, as before: the owner copies one too */
TEST(mgi_sorter, copied_whole_owner_helps_none_one_block_lane_ctl)
{
    run_sorter(4096, 4, 4, 1, 1, 3000, 32, 0, 1, 200, 1, 0, 0, 0, 0, 1, 0,
               0, 0, 0);
}

TEST(mgi_sorter, copied_whole_owner_helps_one_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0,
               0, 1);
}

TEST(mgi_sorter, copied_whole_owner_helps_one_lane_ctl_32_threads)
{
    run_sorter(4096, 4, 4, 1, 2, 6000, 32, 0, 1, 200, 1, 0, 0, 0, 0, 1, 0,
               0, 0, 1);
}

/* Helpers claim issued whole moves in parallel (mgi_gpu_claim): every
 * issued, unclaimed job once, whatever block asks; none that is claimed
 * already, retired or not issued yet; with a stale `retired`, only the
 * last MGI_GPU_LANE_JOBS numbers (the slots' current ones) */
TEST(mgi_sorter, claims_each_issued_move_once)
{
    const unsigned saved_bid = mgi_emu_bid, saved_nblk = mgi_emu_nblk;
    std::unique_ptr<mgi_gpu_pass_t> p(new mgi_gpu_pass_t());
    std::unique_ptr<mgi_gpu_lane_jobs_t> lj(new mgi_gpu_lane_jobs_t());
    /* issued, retired as the helpers read it, first number really not
     * retired, numbers claimed before */
    struct {
        uint32_t issued, retired, live;
        std::vector<uint32_t> taken;
    } cases[] = {
        {10, 3, 3, {}},
        {10, 3, 3, {4, 7}},
        {300, 100, 172, {}},                  /* `retired` stale */
        {0x10, 0x10, 0x10, {}},               /* nothing issued */
        {0xfffffff0u + 40, 0xfffffff0u, 0xfffffff0u, {0xfffffff5u, 3}}
    };

    mgi_emu_nblk = 7;
    for (auto &c : cases) {
        std::set<uint32_t> want, got;
        memset(lj.get(), 0, sizeof(*lj));
        for (uint32_t s = c.live; s != c.issued; ++s) {
            lj->job[s % MGI_GPU_LANE_JOBS].avail = s;
            want.insert(s);
        }
        for (uint32_t s : c.taken) {
            lj->job[s % MGI_GPU_LANE_JOBS].avail = ~s;
            want.erase(s);
        }
        /* a retired generation's slot holds another number: skipped */
        lj->issued  = c.issued;
        lj->retired = c.retired;
        lj->claimed = (uint32_t)c.taken.size();
        for (unsigned k = 0; k <= want.size(); ++k) {
            mgi_emu_bid = (k * 3) % mgi_emu_nblk;
            mgi_gpu_claim(p.get(), lj.get());
            if (k == want.size()) {
                EXPECT_EQ(nullptr, p->job) << "a job claimed beyond the "
                                           << want.size() << " open";
                break;
            }
            ASSERT_NE(nullptr, p->job) << "claim " << k << " of "
                                       << want.size() << " found none";
            const uint32_t slot = (uint32_t)(p->job - lj->job);
            const uint32_t s    = ~p->job->avail;
            EXPECT_EQ(slot, s % MGI_GPU_LANE_JOBS);
            EXPECT_TRUE(want.count(s)) << "job " << s << " was not open";
            EXPECT_TRUE(got.insert(s).second) << "job " << s
                                              << " claimed twice";
        }
        EXPECT_EQ(want, got);
        EXPECT_EQ(c.taken.size() + want.size(), lj->claimed);
    }
    mgi_emu_bid  = saved_bid;
    mgi_emu_nblk = saved_nblk;
}

/* MGI_LANE_APART: every stage ring is served by exactly one sorter block;
 * with the lane owners apart (lane control words, and blocks >= 2 x lanes
 * with stage rings >= 2 x blocks, or a block for every stage ring after
 * the lane owners) blocks 0 .. nlanes - 2 serve none and the others at
 * most one ring more than an even share; otherwise every block serves its
 * even share, as before. Where the shares differ, the sort rings' mirrors
 * are synced from a block with the fewest stage rings on
 * (mgi_gpu_route_first). */
TEST(mgi_sorter, stage_rings_shared_lane_owners_apart)
{
    mgi_gpu_dep_t d;
    mgi_lane_ctl_t ctl[8];
    const unsigned saved_bid = mgi_emu_bid, saved_nblk = mgi_emu_nblk;

    memset(&d, 0, sizeof(d));
    for (unsigned apart = 0; apart < 2; ++apart) {
        for (unsigned with_ctl = 0; with_ctl < 2; ++with_ctl) {
            for (unsigned nlanes = 2; nlanes <= 5; ++nlanes) {
                for (unsigned nblk = 1; nblk <= 64; nblk += 3) {
                    for (unsigned nstage = 1; nstage <= 300; nstage += 7) {
                        std::vector<unsigned> owner(nstage, ~0u);
                        unsigned most = 0, fewest = ~0u;
                        d.lane_ctl   = with_ctl ? ctl : NULL;
                        d.nlanes     = nlanes;
                        d.nstage     = nstage;
                        d.stage_base = mgi_gpu_stage_first(apart, with_ctl,
                                                           nblk, nlanes,
                                                           nstage);
                        mgi_emu_nblk = nblk;
                        const bool away = apart && with_ctl &&
                                          (((nblk >= 2 * nlanes) &&
                                            (nstage >= 2 * nblk)) ||
                                           (nstage + nlanes - 1 <= nblk));
                        const unsigned rb = mgi_gpu_route_first(
                                d.stage_base, nblk, nstage);
                        std::vector<unsigned> nring(nblk, 0);
                        for (unsigned b = 0; b < nblk; ++b) {
                            uint32_t sid, nsb, n, r;
                            mgi_emu_bid = b;
                            n = mgi_gpu_stage_share(&d, &sid, &nsb);
                            for (r = 0; r < n; ++r) {
                                ASSERT_LT(sid + r * nsb, nstage);
                                ASSERT_EQ(~0u, owner[sid + r * nsb])
                                    << "stage ring " << sid + r * nsb
                                    << " served by blocks "
                                    << owner[sid + r * nsb] << " and " << b;
                                owner[sid + r * nsb] = b;
                            }
                            nring[b] = n;
                            if (away && (b < nlanes - 1)) {
                                ASSERT_EQ(0u, n) << "lane owner " << b;
                                continue;
                            }
                            most   = std::max(most, n);
                            fewest = std::min(fewest, n);
                        }
                        for (unsigned i = 0; i < nstage; ++i) {
                            ASSERT_NE(~0u, owner[i])
                                << "stage ring " << i << " of " << nstage
                                << " served by no block of " << nblk;
                        }
                        ASSERT_LE(most - fewest, 1u);
                        /* the sort rings' mirrors go to a block with the
                         * fewest stage rings, where the counts differ */
                        ASSERT_LT(rb, nblk);
                        if (most != fewest) {
                            ASSERT_EQ(fewest, nring[rb])
                                << "sort ring 0 synced by block " << rb
                                << " with " << nring[rb] << " stage "
                                << "rings, others have " << fewest;
                            ASSERT_GE(rb, d.stage_base);
                        }
                    }
                }
            }
        }
    }
    mgi_emu_bid  = saved_bid;
    mgi_emu_nblk = saved_nblk;
}

/* lanes with host control words (GPU endpoints): RTail pulled, RHead
 * pushed by the sorter */
TEST(mgi_sorter, lane_ctl_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 1);
}

/* the sort rings' mirrors synced from another block than the stage
 * rings' (mgi_gpu_route_first): of two blocks, route i is block
 * (1 + i) % 2's, two sort rings a hop; copied, and put by reference
 * (MGI_SEND_ZCOPY, whose stage segments the mirror's owner marks read) */
TEST(mgi_sorter, mirrors_synced_from_block_one)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 8, 0, 0, 64, 2, 0, 1, 0, 0, 1, 0, 0,
               0, 0, 1);
    run_sorter(4096, 8, 4, 1, 2, 6000, 32, 0, 1, 200, 2, 2, 0, 1, 0, 1, 0,
               0, 8, 0, 1);
}

TEST(mgi_sorter, lane_ctl_runs_8_threads)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 8, 24, 1);
}

/* stretches of one destination: stage segments moved whole to the sort
 * rings beside walked ones, their order kept per source and destination */
TEST(mgi_sorter, stage_whole_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 0, 64);
}

TEST(mgi_sorter, stage_whole_tiny_rings_8_threads)
{
    run_sorter(256, 2, 2, 1, 2, 1500, 8, 0, 0, 16);
}

TEST(mgi_sorter, stage_whole_lane_ctl_32_threads)
{
    run_sorter(4096, 4, 4, 1, 2, 6000, 32, 0, 1, 200);
}

/* two sort rings per next hop (MGI_SORT_RINGS=2): sorter block b writes
 * ring b % 2 of a hop, tuples and EOFs of a stage ring all in one */
TEST(mgi_sorter, two_rings_per_hop_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 0, 0, 2);
}

TEST(mgi_sorter, two_rings_per_hop_stage_whole_8_threads)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 8, 0, 0, 64, 2);
}

/* two passes over a stage ring a round: whole moves of the loopback lane
 * come several a round, and must take their final rings in lane order
 * (reserved a thread per job, two of one ring swapped places there) */
TEST(mgi_sorter, stage_whole_lane_ctl_32_threads_2_passes)
{
    for (int run = 0; run < 3; ++run) {
        run_sorter(4096, 4, 4, 1, 2, 6000, 32, 0, 1, 200, 1, 2);
    }
}

/* MGI_PEER_DIRECT=1: the routes to the other endpoints are their receive
 * lanes (append mode, system scope), no mirror, no mover: the hops' own
 * sorters take the segments. Walked segments, whole ones (tiny rings,
 * two routes of a hop on one lane), and runs of like messages; every
 * tuple once and in order per stage ring and hop, both flushes done once
 * the hops took the EOFs. */
TEST(mgi_sorter, peer_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1);
}

TEST(mgi_sorter, peer_stage_whole_tiny_rings_8_threads)
{
    run_sorter(1024, 2, 2, 1, 2, 3000, 8, 0, 0, 64, 2, 0, 1, 1, 0, 1, 1, 1);
}

TEST(mgi_sorter, peer_runs_32_threads)
{
    run_sorter(4096, 4, 4, 2, 2, 6000, 32, 24, 0, 0, 1, 0, 1, 1, 0, 1, 1, 1);
}

/* MGI_LOOP_DIRECT=1: whole stage segments for this endpoint go straight
 * to final rings once the loopback lane holds nothing of their stage
 * ring, beside walked ones that go through the lane; each source's tuples
 * stay in order at a final ring and arrive once, and some segments did go
 * straight (counted) */
TEST(mgi_sorter, loop_direct_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 0, 64, 1, 0, 1, 1);
}

TEST(mgi_sorter, loop_direct_tiny_rings_8_threads)
{
    run_sorter(256, 2, 2, 1, 2, 1500, 8, 0, 0, 16, 1, 0, 1, 1);
}

TEST(mgi_sorter, loop_direct_lane_ctl_32_threads_2_passes)
{
    run_sorter(4096, 4, 4, 1, 2, 6000, 32, 0, 1, 200, 1, 2, 0, 1);
}

/* every tuple to this endpoint, as in a one-GPU exchange: with
 * MGI_LOOP_DIRECT the stage segments go straight to final rings and the
 * EOFs are counted without the loopback lane (mgi_gpu_send_eof), after
 * every tuple of their stage ring; without it, all through the lane */
TEST(mgi_sorter, loop_direct_self_only_8_threads)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 8, 0, 0, -1, 1, 0, 1, 1);
}

TEST(mgi_sorter, self_only_through_lane_8_threads)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 8, 0, 0, -1, 1, 0, 1, 0);
}

/* MGI_STAGE_ZCOPY=1: those whole stage segments reach the final rings by
 * reference; the consumer reads them in the stage ring, whose slots come
 * back in ring order once read, while the sorter passes (walks, moves,
 * counts the EOF of) the segments behind them */
/* MGI_SEND_ZCOPY: whole stage segments for the hops go to the sort rings
 * by reference, up to 4 (2 in tiny rings) side by side in one; the test's
 * mover checks them in the stage ring through the mirrors' tables, and
 * every stage slot comes back once it released them */
TEST(mgi_sorter, send_zcopy_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 0, 64, 1, 0, 1, 1, 0, 1, 1, 0,
               4);
}

TEST(mgi_sorter, send_zcopy_tiny_rings_8_threads)
{
    run_sorter(256, 2, 2, 1, 2, 1500, 8, 0, 0, 16, 1, 0, 1, 1, 0, 1, 1, 0,
               2);
}

TEST(mgi_sorter, send_zcopy_rings_per_hop_32_threads_2_passes)
{
    run_sorter(4096, 8, 4, 1, 2, 6000, 32, 0, 1, 200, 2, 2, 0, 1, 0, 1, 0,
               0, 8);
}

TEST(mgi_sorter, send_zcopy_eof_own_through_lane_8_threads)
{
    run_sorter(256, 4, 2, 1, 2, 1500, 8, 0, 0, 16, 1, 0, 1, 0, 1, 1, 1, 0,
               4);
}

TEST(mgi_sorter, stage_zcopy_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 0, 64, 1, 0, 1, 1, 0, 1, 1);
}

TEST(mgi_sorter, stage_zcopy_tiny_rings_8_threads)
{
    run_sorter(256, 2, 2, 1, 2, 1500, 8, 0, 0, 16, 1, 0, 1, 1, 0, 1, 1);
}

TEST(mgi_sorter, stage_zcopy_lane_ctl_32_threads_2_passes)
{
    run_sorter(4096, 4, 4, 1, 2, 6000, 32, 0, 1, 200, 1, 2, 0, 1, 0, 1, 1);
}

TEST(mgi_sorter, stage_zcopy_self_only_8_threads)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 8, 0, 0, -1, 1, 0, 1, 1, 0, 1, 1);
}

TEST(mgi_sorter, stage_zcopy_eof_own_tiny_rings_8_threads)
{
    run_sorter(256, 2, 2, 1, 2, 1500, 8, 0, 0, 16, 1, 0, 1, 1, 1, 1, 1);
}

/* without MGI_LOOP_DIRECT nothing goes by reference: it only takes the
 * direct moves */
TEST(mgi_sorter, stage_zcopy_through_lane_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 0, 64, 1, 0, 1, 0, 0, 1, 1);
}

/* the remote source's EOF in a segment of its own (MGI_SEG_EOFS), as a GPU
 * sorter forwards a flush: counted when its job retires, after the whole
 * moves before it (by reference and copied), never before its tuples are
 * readable at the final rings */
TEST(mgi_sorter, eof_own_two_blocks)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 1, 0, 0, 0, 1, 0, 1, 0, 1);
}

TEST(mgi_sorter, eof_own_copied_lane_ctl_32_threads)
{
    run_sorter(4096, 4, 4, 1, 2, 6000, 32, 0, 1, 200, 1, 0, 0, 0, 1);
}

TEST(mgi_sorter, eof_own_loop_direct_tiny_rings_8_threads)
{
    run_sorter(256, 2, 2, 1, 2, 1500, 8, 0, 0, 16, 1, 0, 1, 1, 1);
}

/* MGI_EOF_ALONE=0: EOFs in the segments of the tuples before them,
 * walked at the next hop */
TEST(mgi_sorter, eof_walked_two_blocks_4_threads)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 4, 0, 0, 0, 1, 0, 1, 0, 0, 0);
}

TEST(mgi_sorter, eof_walked_copied_lane_ctl_8_threads)
{
    run_sorter(1024, 4, 4, 1, 2, 3000, 8, 0, 1, 64, 1, 0, 0, 0, 0, 0);
}

/* The quiesce request of a GPU endpoint (mgi_gpu_quiesce_request): a block
 * answers the request it read as a round began once that round is over,
 * never before, and a channel taken out of the table is not read after the
 * answer: its blob is poisoned, and a segment of that channel's id sent
 * then is dropped (counted), not routed through the blob. */
TEST(mgi_sorter, quiesce_answer_two_blocks_4_threads)
{
    sorter_fixture f(1024, 4, 4, 1);
    std::vector<uint8_t> buf;
    unsigned b;

    f.start_threads(4);
    f.round(2);
    for (b = 0; b < 2; ++b) {
        EXPECT_EQ(0u, f.status.blk[b].quiesced);
    }

    /* the host takes the channel out, then asks */
    f.chs[CH]         = NULL;
    f.dep.quiesce_seq = 1;
    for (b = 0; b < 2; ++b) {
        EXPECT_EQ(0u, f.status.blk[b].quiesced) << "answered unasked";
    }
    f.round(2);
    for (b = 0; b < 2; ++b) {
        EXPECT_EQ(1u, f.status.blk[b].quiesced) << "block " << b;
    }
    memset(f.dch, 0xa5, sizeof(*f.dch)); /* the next channel's, say */

    gen_tuple(buf, 0, 0, SELF, 40);
    mgi_msg_hdr_t h = {CH, SELF, SELF, 40};
    ASSERT_EQ(MGI_RING_OK, mgi_ring_append(f.dep.stage[0], &h, buf.data(),
                                           NULL));
    mgi_ring_append_close(f.dep.stage[0]);
    for (int k = 0; k < 8; ++k) {
        f.round(2);
    }
    EXPECT_EQ(1u, f.status.blk[0].dropped + f.status.blk[1].dropped);
    EXPECT_EQ(0u, f.stat(MGI_GS_STAGE_WHOLE));

    /* a later request, answered in turn; the answer stays */
    f.dep.quiesce_seq = 2;
    f.round(2);
    f.round(2);
    for (b = 0; b < 2; ++b) {
        EXPECT_EQ(2u, f.status.blk[b].quiesced) << "block " << b;
    }
    f.stop_threads();
}

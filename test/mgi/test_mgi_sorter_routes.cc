/**
 * The GPU sorter's device code run on the CPU (test_mgi_sorter.h): routes.
 * A destination none of its channel's, each channel's own next hops, a
 * source and a relay that spread over several next hops, and a relay
 * that forwards a remote source's tuples and EOF (paper Fig. 8).
 */
#include "test_mgi_sorter.h"

/* n messages of header h and payload `payload` into ring r, the segment
 * then closed: what a producer's flush leaves there */
static void put_msgs(mgi_ring_t *r, const mgi_msg_hdr_t &h,
                     const void *payload, unsigned n = 1)
{
    for (unsigned k = 0; k < n; ++k) {
        ASSERT_EQ(MGI_RING_OK, mgi_ring_append(r, &h, payload, NULL));
    }
    mgi_ring_append_close(r);
}

/* A message whose dst is none of its channel's destinations (a user
 * kernel's mgi_dev_send to an id beyond every endpoint, or another rank's
 * bytes in a lane) has no route: it is dropped and counted, on the send
 * side and at a relay, and goes to no sort ring. */
TEST(mgi_sorter, dst_of_no_destination_dropped_4_threads)
{
    sorter_fixture f(1024, 4, 4, 1);
    const uint16_t bad = (uint16_t)(MGI_MAX_EPS + 3);
    std::vector<uint8_t> buf;
    mgi_ring_t *lane = mgi_gpu_lane(&f.dep, 1);
    int k;

    ASSERT_LT(bad, MGI_EP_ID_ALL);
    f.start_threads(4);
    gen_tuple(buf, 0, 0, bad, 40);
    mgi_msg_hdr_t h = {CH, bad, SELF, 40};
    /* a stage segment of one such message, and one of a run of them */
    put_msgs(f.dep.stage[0], h, buf.data());
    put_msgs(f.dep.stage[1], h, buf.data(), 4);
    /* a lane segment from the remote source with one */
    h.src = REMOTE_SRC;
    put_msgs(lane, h, buf.data());
    for (k = 0; k < 8; ++k) {
        f.round(2);
    }
    EXPECT_EQ(6u, f.status.blk[0].dropped + f.status.blk[1].dropped);
    for (unsigned r = 0; r < f.dep.nroutes; ++r) {
        EXPECT_EQ(0u, mgi_ring_count(f.dep.sort[r])) << "sort ring " << r;
    }
    f.stop_threads();
}

/* The (channel, dst) of every message in sort ring r's segments (the
 * fixture's rings start zeroed and nothing consumes them here) */
static std::vector<std::pair<uint16_t, uint16_t>>
sort_ring_msgs(sorter_fixture &f, unsigned r)
{
    std::vector<std::pair<uint16_t, uint16_t>> v;
    mgi_ring_t *ring = f.dep.sort[r];
    mgi_msg_hdr_t *h;
    uint32_t off;

    for (uint32_t k = 0; k < ring->size; ++k) {
        mgi_seg_hdr_t *seg = mgi_ring_seg(ring, k);
        for (off = 0; (h = mgi_seg_next(seg, seg->commit, &off)) != NULL;
             off += mgi_msg_size(h->len)) {
            v.push_back(std::make_pair(h->ch, h->dst));
        }
    }
    return v;
}

/* Two channels whose plans send this endpoint's tuples for one
 * destination through different next hops (the second reaches A through
 * B's sort ring, and B through A's): each channel's tuples take that
 * channel's hop, on the send side, whole or walked, and at a relay. One
 * table of hops per endpoint, which the last channel's create wrote,
 * sent both through the same one. */
TEST(mgi_sorter, hops_are_each_channels_own_4_threads)
{
    sorter_fixture f(1024, 4, 4, 1);
    const uint16_t CH2 = CH + 1;
    mgi_gpu_dch_t *dch2 = (mgi_gpu_dch_t*)f.alloc(sizeof(*dch2));
    mgi_ring_t *lane = mgi_gpu_lane(&f.dep, 1);
    std::vector<uint8_t> buf;
    const unsigned rb = f.rings_per_hop;
    int k;

    ASSERT_LT(CH2, f.dep.max_channels);
    *dch2        = *f.dch;
    dch2->id     = CH2;
    dch2->hop[1] = (int16_t)rb;   /* A through B's ring */
    dch2->hop[2] = 0;             /* B through A's */
    f.chs[CH2]   = dch2;
    f.start_threads(4);
    gen_tuple(buf, 0, 0, HOP_A, 40);
    /* stage 0: one tuple of each channel for A (walked); stage 1: a
     * segment of channel 2's tuples for A alone (whole, when marked) */
    mgi_msg_hdr_t h = {CH, HOP_A, SELF, 40}, h2 = {CH2, HOP_A, SELF, 40};
    ASSERT_EQ(MGI_RING_OK, mgi_ring_append(f.dep.stage[0], &h, buf.data(),
                                           NULL));
    put_msgs(f.dep.stage[0], h2, buf.data());
    put_msgs(f.dep.stage[1], h2, buf.data(), 3);
    /* lane 1, as a relay: a tuple of each channel for B */
    h.src  = h2.src = REMOTE_SRC;
    h.dst  = h2.dst = HOP_B;
    ASSERT_EQ(MGI_RING_OK, mgi_ring_append(lane, &h, buf.data(), NULL));
    put_msgs(lane, h2, buf.data());
    for (k = 0; k < 8; ++k) {
        f.round(2);
    }
    f.stop_threads();
    EXPECT_EQ(0u, f.status.blk[0].dropped + f.status.blk[1].dropped);

    typedef std::pair<uint16_t, uint16_t> cd;
    std::vector<cd> a = sort_ring_msgs(f, 0), b = sort_ring_msgs(f, rb);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    /* A's ring: channel 1's tuple for A, channel 2's relayed one for B */
    EXPECT_EQ((std::vector<cd>{cd(CH, HOP_A), cd(CH2, HOP_B)}), a);
    /* B's ring: channel 2's four for A, channel 1's relayed one for B */
    EXPECT_EQ((std::vector<cd>{cd(CH, HOP_B), cd(CH2, HOP_A), cd(CH2, HOP_A),
                               cd(CH2, HOP_A), cd(CH2, HOP_A)}), b);
}

/* A message in a sort ring: channel, dst, and an EOF's count of records */
struct ring_msg {
    uint16_t ch, dst;
    int      eof;
    uint32_t nprod;
};

static unsigned count_msgs(const std::vector<ring_msg> &v, uint16_t ch,
                           uint16_t dst, int eof)
{
    unsigned n = 0;

    for (const ring_msg &m : v) {
        n += (m.ch == ch) && (m.dst == dst) && (m.eof == eof);
    }
    return n;
}

/* The endpoint spreads what it sends or relays for A (destination 1)
 * over A's first sort ring, with `share` of the capacity, and B's */
static void spread_a(sorter_fixture &f, float share)
{
    f.dch->nsplit[1]         = 2;
    f.dch->split_slot[1][0]  = 0;
    f.dch->split_slot[1][1]  = (int16_t)f.rings_per_hop;
    f.dch->split_share[1][0] = share;
    f.dch->split_share[1][1] = 1 - share;
}

/* The mover of sort ring r, as run_sorter's: the segments its mirror
 * shows ready, their messages into v, then released */
static void drain_sort_ring(sorter_fixture &f, unsigned r,
                            std::vector<ring_msg> &v)
{
    mgi_ring_t *ring = f.dep.sort[r];
    const uint32_t n = mgi_ring_mirror_ready(f.dep.mirror[r],
                                             f.mover_cons[r]);
    mgi_msg_hdr_t *h;
    uint32_t off;

    for (uint32_t k = 0; k < n; ++k) {
        mgi_seg_hdr_t *seg = mgi_ring_seg(ring, f.mover_cons[r] + k);
        for (off = 0;
             (h = mgi_seg_next(seg, mgi_ring_cap(ring), &off)) != NULL;
             off += mgi_msg_size(h->len)) {
            const int eof = (h->len == MGI_MSG_LEN_EOF);
            v.push_back({h->ch, h->dst, eof,
                         eof ? *(uint32_t*)((char*)h + MGI_MSG_HDR_SIZE) :
                               0});
        }
    }
    f.mover_cons[r] += n;
    mgi_ring_mirror_release(f.dep.mirror[r], f.mover_cons[r]);
}

/* n rounds of both sorter blocks, A's and B's first sort rings drained
 * after each into a and b */
static void rounds_drained(sorter_fixture &f, std::vector<ring_msg> &a,
                           std::vector<ring_msg> &b, int n)
{
    for (int k = 0; k < n; ++k) {
        f.round(2);
        drain_sort_ring(f, 0, a);
        drain_sort_ring(f, f.rings_per_hop, b);
    }
}

/* A source that spreads its own tuples for one destination over two next
 * hops (the plan gave several, mgi_ch_split_t: A's ring with 3/4 of the
 * capacity, B's with 1/4). While both rings keep up its passes go in
 * those shares (mgi_split_pick): a stage segment of one tuple for A moves
 * whole to the ring picked. Once A's mover stops, walked passes (a tuple
 * for A and one for B) fill A's ring only until it holds the segments
 * that count as behind (3 waiting, and the open one), then send A's
 * tuples to B's ring; by the shares alone A's ring would take 3/4. Its
 * EOF goes through both, each copy counting for two records, while B,
 * reached through one hop, gets one copy that counts for one. Every tuple
 * arrives once. */
TEST(mgi_sorter, split_over_next_hops_by_share_and_occupancy_4_threads)
{
    sorter_fixture f(1024, 16, 4, 1);
    const unsigned rb = f.rings_per_hop;
    std::vector<ring_msg> a, b;
    std::vector<uint8_t> buf;
    mgi_msg_hdr_t h = {CH, HOP_A, SELF, 40}, hb = {CH, HOP_B, SELF, 40};
    uint32_t payload[2] = {1, 1};
    unsigned a1, b1;
    int k;

    spread_a(f, 0.75f);
    f.dch->eof_paths[1] = 2;   /* one walk through each */
    f.start_threads(4);
    gen_tuple(buf, 0, 0, HOP_A, 40);
    /* 8 passes of one tuple each, both rings drained after each */
    for (k = 0; k < 8; ++k) {
        put_msgs(f.dep.stage[0], h, buf.data());
        rounds_drained(f, a, b, 1);
    }
    a1 = count_msgs(a, CH, HOP_A, 0);
    b1 = count_msgs(b, CH, HOP_A, 0);
    printf("one-tuple passes for A: %u to A's ring, %u to B's\n", a1, b1);
    EXPECT_EQ(8u, a1 + b1);
    EXPECT_GE(a1, 5u);      /* 6 : 2 by the shares, a pick or so either */
    EXPECT_GE(b1, 1u);      /* way as the two blocks share the passes */

    /* A's mover stops: 150 walked passes, a tuple for A and one for B */
    for (k = 0; k < 150; ++k) {
        ASSERT_EQ(MGI_RING_OK, mgi_ring_append(f.dep.stage[1], &h,
                                               buf.data(), NULL));
        put_msgs(f.dep.stage[1], hb, buf.data());
        f.round(2);
        drain_sort_ring(f, rb, b);
    }
    /* the EOF of stage ring 0, then every ring drained */
    mgi_msg_hdr_t e = {CH, MGI_EP_ID_ALL, SELF, MGI_MSG_LEN_EOF};
    put_msgs(f.dep.stage[0], e, payload);
    rounds_drained(f, a, b, 4);
    f.stop_threads();
    EXPECT_EQ(0u, f.status.blk[0].dropped + f.status.blk[1].dropped);
    printf("walked passes with A's mover stopped: %u of A's tuples to A's "
           "ring, %u to B's\n", count_msgs(a, CH, HOP_A, 0) - a1,
           count_msgs(b, CH, HOP_A, 0) - b1);
    EXPECT_EQ(158u,
              count_msgs(a, CH, HOP_A, 0) + count_msgs(b, CH, HOP_A, 0));
    EXPECT_LE(count_msgs(a, CH, HOP_A, 0) - a1,
              4 * (mgi_ring_cap(f.dep.sort[0]) / mgi_msg_size(40)));
    EXPECT_EQ(150u, count_msgs(b, CH, HOP_B, 0));
    EXPECT_EQ(0u, count_msgs(a, CH, HOP_B, 0));
    /* one EOF for A in each of its rings, counting for two; B's one */
    EXPECT_EQ(1u, count_msgs(a, CH, HOP_A, 1));
    EXPECT_EQ(1u, count_msgs(b, CH, HOP_A, 1));
    EXPECT_EQ(1u, count_msgs(b, CH, HOP_B, 1));
    EXPECT_EQ(0u, count_msgs(a, CH, HOP_B, 1));
    for (const ring_msg &m : a) {
        if (m.eof) {
            EXPECT_EQ(2u, m.nprod);
        }
    }
    for (const ring_msg &m : b) {
        if (m.eof) {
            EXPECT_EQ((m.dst == HOP_A) ? 2u : 1u, m.nprod) << m.dst;
        }
    }
}

/* A relay that spreads what it forwards towards A over two next hops
 * (A's ring and B's, half each): lane 1 brings 40 segments of a relayed
 * tuple for A each, then the remote source's EOF for A; the tuples spread
 * over both rings, and the EOF goes on through both with its count as it
 * came (the source counted every walk), counted once as relayed. */
TEST(mgi_sorter, relay_spreads_over_next_hops_4_threads)
{
    sorter_fixture f(1024, 16, 4, 1);
    mgi_ring_t *lane = mgi_gpu_lane(&f.dep, 1);
    std::vector<ring_msg> a, b;
    std::vector<uint8_t> buf;
    mgi_msg_hdr_t h = {CH, HOP_A, REMOTE_SRC, 40};
    uint32_t payload[2] = {3, 1};
    int k;

    spread_a(f, 0.5f);
    f.start_threads(4);
    gen_tuple(buf, 9, 0, HOP_A, 40);
    for (k = 0; k < 40; ++k) {
        put_msgs(lane, h, buf.data());
        rounds_drained(f, a, b, 1);
    }
    mgi_msg_hdr_t e = {CH, HOP_A, REMOTE_SRC, MGI_MSG_LEN_EOF};
    put_msgs(lane, e, payload);
    rounds_drained(f, a, b, 4);
    f.stop_threads();
    EXPECT_EQ(0u, f.status.blk[0].dropped + f.status.blk[1].dropped);
    printf("relayed tuples for A: %u through A's ring, %u through B's\n",
           count_msgs(a, CH, HOP_A, 0), count_msgs(b, CH, HOP_A, 0));
    EXPECT_EQ(40u, count_msgs(a, CH, HOP_A, 0) + count_msgs(b, CH, HOP_A, 0));
    EXPECT_GE(count_msgs(a, CH, HOP_A, 0), 10u);
    EXPECT_GE(count_msgs(b, CH, HOP_A, 0), 10u);
    EXPECT_EQ(1u, count_msgs(a, CH, HOP_A, 1));
    EXPECT_EQ(1u, count_msgs(b, CH, HOP_A, 1));
    for (const ring_msg &m : a) {
        EXPECT_TRUE(!m.eof || (m.nprod == 3u));
    }
    for (const ring_msg &m : b) {
        EXPECT_TRUE(!m.eof || (m.nprod == 3u));
    }
    EXPECT_EQ(1u, f.dch->relay_eofs);
}

/* A relay (paper Fig. 8): lane 1 brings tuples for this endpoint and for
 * hop B, which this endpoint forwards into its sort ring of B in lane
 * order, and the remote source's EOF for B after them (run_sorter's
 * relay stretches), the other settings at their defaults */
static void run_relay(uint32_t seg, uint32_t depth, int coalesce, unsigned nblk,
               int per_stage, unsigned nth, int lane_ctl, int zcopy)
{
    run_sorter(seg, depth, depth, coalesce, nblk, per_stage, nth, 0,
               lane_ctl, 0, 1, 0, zcopy, 0, 0, 1, 0, 0, 0, 0, 0, 1);
}

TEST(mgi_sorter, relay_one_block)
{
    run_relay(1024, 4, 1, 1, 3000, 1, 0, 1);
}

TEST(mgi_sorter, relay_tiny_rings_two_blocks_8_threads)
{
    run_relay(1024, 2, 1, 2, 2000, 8, 0, 1);
}

TEST(mgi_sorter, relay_per_tuple_lane_ctl_32_threads)
{
    run_relay(4096, 4, 0, 2, 3000, 32, 1, 1);
}

TEST(mgi_sorter, relay_in_order_copied_8_threads)
{
    run_relay(1024, 4, 2, 2, 3000, 8, 0, 0);
}

/**
 * Unit tests of the MGI ring protocol (mgi/mgi_ring.h) on the host:
 * layout, append mode (STail reservation, pads, closing, wrap-around of
 * the free-running indices), bulk enqueue/dequeue, and multi-threaded
 * producer/consumer stress tests that check every message arrives once,
 * intact and, per producer, in order.
 */
#include <mgi/mgi_ring.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <thread>
#include <vector>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

namespace {

/* a protocol bug shows as a spin that never ends: fail it with a message */
const unsigned test_timeout_s = 120;

void on_timeout(int)
{
    static const char msg[] = "test_mgi_ring: TIMEOUT: a ring test hung\n";
    ssize_t r = write(2, msg, sizeof(msg) - 1);
    (void)r;
    _exit(2);
}

struct watchdog {
    watchdog()
    {
        signal(SIGALRM, on_timeout);
        alarm(test_timeout_s);
    }
} watchdog_instance;

struct ring_mem {
    std::vector<uint64_t> buf;
    mgi_ring_t *r;

    ring_mem(uint32_t size, uint32_t seg, uint32_t flags) :
        buf(mgi_ring_mem_size(size, seg) / 8 + 1)
    {
        r = reinterpret_cast<mgi_ring_t*>(buf.data());
        EXPECT_EQ(0, mgi_ring_init(r, size, seg, flags));
    }

    /* move every index to `start` (to cross 2^32 soon) */
    void start_at(uint32_t start)
    {
        r->prod_head = r->prod_tail = start;
        r->cons_head = r->cons_tail = start;
        for (uint32_t i = 0; i < r->size; ++i) {
            mgi_ring_seg(r, start + i)->stail = (uint64_t)(start + i) << 32;
        }
    }
};

uint8_t pat(uint32_t a, uint32_t b, uint32_t k)
{
    return (uint8_t)(a * 13 + b * 7 + k);
}

/* append one message carrying (producer, seq) and a pattern */
int append_msg(mgi_ring_t *r, uint16_t prod, uint32_t seq, uint16_t len)
{
    uint8_t payload[MGI_MSG_MAX_LEN];
    mgi_msg_hdr_t h = {7, 3, prod, len};

    memcpy(payload, &seq, sizeof(seq));
    for (uint32_t k = 4; k < len; ++k) {
        payload[k] = pat(prod, seq, k);
    }
    return mgi_ring_append(r, &h, payload, NULL);
}

/* append_msg through mgi_ring_append_reserve_hint, as the device block
 * send does it: the mark's two halves around the write, then the commit */
int append_msg_hint(mgi_ring_t *r, uint16_t prod, uint32_t seq, uint16_t len,
                    mgi_ring_hint_t *hint)
{
    uint8_t payload[MGI_MSG_MAX_LEN];
    mgi_msg_hdr_t h = {7, 3, prod, len};
    const uint32_t sz = mgi_msg_size(len);
    mgi_seg_hdr_t *seg;
    uint32_t off, pos, old;
    char *p;

    if (mgi_ring_append_reserve_hint(r, sz, hint, &seg, &off, &pos) !=
        MGI_RING_OK) {
        return MGI_RING_FULL;
    }
    memcpy(payload, &seq, sizeof(seq));
    for (uint32_t k = 4; k < len; ++k) {
        payload[k] = pat(prod, seq, k);
    }
    old = mgi_seg_mark_begin(seg, mgi_msg_key(&h));
    p   = mgi_seg_payload(seg) + off;
    memcpy(p, &h, sizeof(h));
    memcpy(p + MGI_MSG_HDR_SIZE, payload, len);
    mgi_seg_mark_end(seg, old, mgi_msg_key(&h));
    mgi_ring_append_commit(r, seg, off, sz, pos);
    return MGI_RING_OK;
}

void check_msg(const mgi_msg_hdr_t *h, uint16_t *prod, uint32_t *seq)
{
    const uint8_t *p = reinterpret_cast<const uint8_t*>(h) + MGI_MSG_HDR_SIZE;

    ASSERT_EQ(7, h->ch);
    ASSERT_EQ(3, h->dst);
    memcpy(seq, p, sizeof(*seq));
    *prod = h->src;
    for (uint32_t k = 4; k < h->len; ++k) {
        ASSERT_EQ(pat(h->src, *seq, k), p[k]) << "byte " << k;
    }
}

/* Check the messages of one full segment: (producer, seq) must follow
 * last[] by one. Returns the messages. */
long check_seg_in_order(mgi_seg_hdr_t *seg, uint32_t cap,
                        std::vector<int64_t> &last)
{
    uint32_t off = 0;
    mgi_msg_hdr_t *h;
    long got = 0;

    while ((h = mgi_seg_next(seg, cap, &off)) != NULL) {
        uint16_t prod;
        uint32_t seq;
        check_msg(h, &prod, &seq);
        EXPECT_LT(prod, last.size());
        if (prod >= last.size()) {
            break;
        }
        EXPECT_EQ(last[prod] + 1, (int64_t)seq) << "producer " << prod;
        last[prod] = seq;
        ++got;
        off += mgi_msg_size(h->len);
    }
    return got;
}

/* Read every message of the ready segments (at most max_segs), in order,
 * releasing them (check_seg_in_order); returns the messages read. */
long drain_in_order(mgi_ring_t *r, std::vector<int64_t> &last,
                    uint32_t max_segs = UINT32_MAX)
{
    const uint32_t cap = mgi_ring_cap(r);
    mgi_seg_hdr_t *seg;
    long got = 0;

    for (; (max_segs > 0) && ((seg = mgi_ring_peek(r, 0)) != NULL);
         --max_segs) {
        got += check_seg_in_order(seg, cap, last);
        mgi_ring_release(r, 1);
    }
    return got;
}

/* nprod producers append per_prod messages each (sizes varying from
 * minlen, a close now and then), with hinted reserves from producer 1 on
 * when `hints` (each its own hint, starting as garbage); one consumer
 * checks that every message arrives once, intact and, per producer, in
 * order. */
void run_append_stress(int nprod, int per_prod, bool hints,
                       uint16_t minlen = 4)
{
    ring_mem m(4, 1024, MGI_RING_F_APPEND);
    std::atomic<int> done(0);
    std::vector<std::thread> th;
    std::vector<int64_t> last(nprod, -1);
    long got = 0, n;

    if (hints) {
        m.start_at(0xffffff00u);
    }
    for (int p = 0; p < nprod; ++p) {
        th.emplace_back([&, p]() {
            mgi_ring_hint_t hint;                    /* garbage */
            hint.ring = (p == 1) ? m.r : NULL;
            hint.t    = 0x9e3779b9u * (p + 1);
            for (int i = 0; i < per_prod;) {
                uint16_t len = minlen +
                               (uint16_t)((i * 29 + p * 11) % 180);
                int ret = (!hints || (p == 0)) ?
                          append_msg(m.r, p, i, len) :
                          append_msg_hint(m.r, p, i, len, &hint);
                if (ret == MGI_RING_OK) {
                    ++i;
                    if ((i % 997) == 0) {
                        mgi_ring_append_close(m.r);
                    }
                } else {
                    sched_yield();
                }
            }
            while (mgi_ring_append_close(m.r) != MGI_RING_OK) {
                sched_yield();
            }
            done++;
        });
    }
    for (;;) {
        got += (n = drain_in_order(m.r, last));
        if (n > 0) {
            continue;
        }
        if (done.load() == nprod) {
            /* the last closes may race with each other: close again */
            mgi_ring_append_close(m.r);
            if ((n = drain_in_order(m.r, last)) == 0) {
                break;
            }
            got += n;
        } else {
            sched_yield();
        }
    }
    for (auto &t : th) {
        t.join();
    }
    EXPECT_EQ((long)nprod * per_prod, got);
    for (int p = 0; p < nprod; ++p) {
        EXPECT_EQ(per_prod - 1, last[p]);
    }
}

} // namespace

TEST(mgi_ring, layout)
{
    EXPECT_EQ(0u, offsetof(mgi_ring_t, prod_tail) / MGI_RING_LINE);
    EXPECT_EQ(1u, offsetof(mgi_ring_t, cons_tail) / MGI_RING_LINE);
    EXPECT_EQ(2u, offsetof(mgi_ring_t, seg_size) / MGI_RING_LINE);
    EXPECT_EQ(384u, sizeof(mgi_ring_t));
    EXPECT_EQ(16u, mgi_msg_size(5));
    EXPECT_EQ(24u, mgi_msg_size(16));
    EXPECT_EQ(16u, mgi_msg_size(MGI_MSG_LEN_EOF));

    std::vector<uint64_t> buf(4096);
    mgi_ring_t *r = reinterpret_cast<mgi_ring_t*>(buf.data());
    EXPECT_NE(0, mgi_ring_init(r, 3, 256, 0));   /* not a power of two */
    EXPECT_NE(0, mgi_ring_init(r, 4, 200, 0));   /* not 128-aligned */
    EXPECT_NE(0, mgi_ring_init(r, 0, 256, 0));
    EXPECT_EQ(0, mgi_ring_init(r, 4, 256, 0));
    EXPECT_EQ(240u, mgi_ring_cap(r));
}

TEST(mgi_ring, append_fill_close_wrap)
{
    ring_mem m(4, 256, MGI_RING_F_APPEND);
    mgi_ring_t *r = m.r;
    const uint32_t cap = mgi_ring_cap(r);
    std::vector<int64_t> last(2, -1);
    uint32_t seq_in = 0;

    m.start_at(0xfffffff0u);
    for (int round = 0; round < 200; ++round) {
        /* fill until full: a 40-byte message takes 48 bytes, 5 per segment */
        int n = 0;
        while (append_msg(r, 1, seq_in, 40) == MGI_RING_OK) {
            ++seq_in;
            ++n;
        }
        /* 4 segments: the 4th full closes nothing more (ring full) */
        EXPECT_EQ(4u * (cap / 48), (unsigned)n);
        EXPECT_EQ(4u, mgi_ring_ready(r, 8));
        EXPECT_EQ(MGI_RING_FULL, append_msg(r, 1, seq_in, 40));

        /* drain two segments, append three messages, close, drain all */
        EXPECT_EQ(2 * (long)(cap / 48), drain_in_order(r, last, 2));
        for (int k = 0; k < 3; ++k) {
            ASSERT_EQ(MGI_RING_OK, append_msg(r, 1, seq_in++, 40));
        }
        EXPECT_EQ(2u, mgi_ring_ready(r, 8));  /* partial one not ready */
        EXPECT_EQ(MGI_RING_OK, mgi_ring_append_close(r));
        EXPECT_EQ(3u, mgi_ring_ready(r, 8));
        EXPECT_EQ(MGI_RING_OK, mgi_ring_append_close(r)); /* empty: no-op */
        EXPECT_EQ(3u, mgi_ring_ready(r, 8));
        drain_in_order(r, last);           /* producer 1: 0, 1, ... */
        EXPECT_EQ(0u, mgi_ring_count(r));
    }
    EXPECT_EQ((int64_t)seq_in - 1, last[1]);
    /* the indices crossed 2^32 */
    EXPECT_LT(r->cons_tail, 0x1000u);
}

TEST(mgi_ring, append_exact_fill_advances)
{
    ring_mem m(2, 256, MGI_RING_F_APPEND);
    /* cap 240 = 10 messages of 24 bytes: the last one fills exactly */
    for (uint32_t i = 0; i < 10; ++i) {
        ASSERT_EQ(MGI_RING_OK, append_msg(m.r, 2, i, 16));
    }
    EXPECT_EQ(1u, mgi_ring_ready(m.r, 4));
    EXPECT_EQ(1u, m.r->prod_tail);
}

/* mgi_ring_append_room says what a reservation would find, and never
 * reserves or pads anything itself */
TEST(mgi_ring, append_room_agrees_with_reserve)
{
    ring_mem m(2, 256, MGI_RING_F_APPEND);
    mgi_ring_t *r = m.r;
    uint32_t cap  = mgi_ring_cap(r);   /* 240: 10 messages of 24 bytes */
    uint32_t seq  = 0;

    EXPECT_TRUE(mgi_ring_append_room(r, cap));
    for (uint32_t i = 0; i < 10; ++i) {  /* segment 0 full, 1 is RTail */
        ASSERT_EQ(MGI_RING_OK, append_msg(r, 1, seq++, 16));
    }
    EXPECT_TRUE(mgi_ring_append_room(r, cap)); /* the last free segment */
    for (uint32_t i = 0; i < 6; ++i) {        /* 144 of 240 bytes used */
        ASSERT_EQ(MGI_RING_OK, append_msg(r, 1, seq++, 16));
    }
    EXPECT_TRUE(mgi_ring_append_room(r, 96));
    EXPECT_FALSE(mgi_ring_append_room(r, 97)); /* would need a third */
    EXPECT_EQ(1u, r->prod_tail);               /* the look changed nothing */
    EXPECT_EQ(144u, (uint32_t)mgi_ring_seg(r, 1)->stail);
    EXPECT_EQ(MGI_RING_FULL, append_msg(r, 1, seq, 96)); /* 104 bytes */

    /* the consumer frees segment 0: room for a whole segment again */
    ASSERT_NE(nullptr, mgi_ring_peek(r, 0));
    mgi_ring_release(r, 1);
    EXPECT_TRUE(mgi_ring_append_room(r, cap));
    EXPECT_EQ(MGI_RING_OK, append_msg(r, 1, seq, 96));
}

TEST(mgi_ring, stress_append_mp_sc)
{
    run_append_stress(3, 40000, false);
}

/* Large messages (300-480 bytes in 1 KiB segments): most reservations
 * find their slot closed by another producer's or cross its end, and go
 * on at the next slot; the ring of 4 segments is often full. */
TEST(mgi_ring, stress_append_large_mp_sc)
{
    run_append_stress(6, 20000, false, 300);
}

/* Producers reserving with hints beside one producer without. */
TEST(mgi_ring, stress_append_hint_mp_sc)
{
    run_append_stress(4, 30000, true);
}

TEST(mgi_ring, bulk_enqueue_dequeue)
{
    const uint32_t seg = 128;
    ring_mem m(8, seg, 0);
    std::vector<uint8_t> in(seg * 8), out(seg * 8);

    m.start_at(0xfffffffcu);
    for (int round = 0; round < 100; ++round) {
        for (uint32_t i = 0; i < in.size(); ++i) {
            in[i] = (uint8_t)(round + i);
        }
        EXPECT_EQ(5u, mgi_ring_enqueue_bulk(m.r, in.data(), 5));
        EXPECT_EQ(0u, mgi_ring_enqueue_bulk(m.r, in.data(), 4)); /* 3 free */
        EXPECT_EQ(3u, mgi_ring_enqueue_bulk(m.r, in.data() + 5 * seg, 3));
        EXPECT_EQ(8u, mgi_ring_count(m.r));
        EXPECT_EQ(0u, mgi_ring_dequeue_bulk(m.r, out.data(), 9));
        EXPECT_EQ(8u, mgi_ring_dequeue_bulk(m.r, out.data(), 8));
        EXPECT_EQ(in, out);
        EXPECT_EQ(0u, mgi_ring_dequeue(m.r, out.data()));
    }
}

TEST(mgi_ring, stress_bulk_mpmc)
{
    const int nprod = 3, ncons = 2, per_prod = 30000;
    const uint32_t seg = 128;
    ring_mem m(16, seg, 0);
    std::vector<std::atomic<int>> seen(nprod * per_prod);
    std::atomic<int> consumed(0);
    std::vector<std::thread> th;

    for (auto &s : seen) {
        s = 0;
    }
    for (int p = 0; p < nprod; ++p) {
        th.emplace_back([&, p]() {
            uint32_t buf[4 * 32];
            for (int i = 0; i < per_prod;) {
                uint32_t n = 1 + (i % 4);
                if (i + (int)n > per_prod) {
                    n = per_prod - i;
                }
                for (uint32_t k = 0; k < n; ++k) {
                    buf[k * 32]     = p;
                    buf[k * 32 + 1] = i + k;
                    buf[k * 32 + 2] = ~(uint32_t)(p * per_prod + i + k);
                }
                if (mgi_ring_enqueue_bulk(m.r, buf, n) == n) {
                    i += n;
                } else {
                    sched_yield();
                }
            }
        });
    }
    for (int c = 0; c < ncons; ++c) {
        th.emplace_back([&]() {
            uint32_t buf[2 * 32];
            while (consumed.load() < nprod * per_prod) {
                uint32_t n = mgi_ring_dequeue_bulk(m.r, buf, 2);
                if (n == 0) {
                    n = mgi_ring_dequeue_bulk(m.r, buf, 1);
                }
                if (n == 0) {
                    sched_yield();
                    continue;
                }
                for (uint32_t k = 0; k < n; ++k) {
                    uint32_t id = buf[k * 32] * per_prod + buf[k * 32 + 1];
                    ASSERT_EQ(~id, buf[k * 32 + 2]);
                    seen[id]++;
                }
                consumed += n;
            }
        });
    }
    for (auto &t : th) {
        t.join();
    }
    for (int i = 0; i < nprod * per_prod; ++i) {
        ASSERT_EQ(1, seen[i].load()) << "item " << i;
    }
}

/* Many producers append (with occasional flush-like closes), one consumer
 * drains: every message once, intact, in order per producer. */
/* The hinted reserve: one atomic on the hinted slot while RTail stays
 * there, the next slot once a reservation fills it; a stale or garbage
 * hint costs padding, never a message, an order or a full slot. */
TEST(mgi_ring, append_hint_fast_stale_garbage)
{
    ring_mem m(4, 256, MGI_RING_F_APPEND);
    mgi_ring_t *r = m.r;
    std::vector<int64_t> last(1, -1);
    mgi_ring_hint_t hint = {NULL, 0};
    uint32_t seq = 0, i;
    long got = 0;

    m.start_at(0xfffffff0u);           /* indices cross 2^32 on the way */
    /* cap 240 = 10 messages of 24 bytes: the first reserve looks, the
     * hint then stays on the slot, and moves on when it fills */
    for (i = 0; i < 9; ++i) {
        ASSERT_EQ(MGI_RING_OK, append_msg_hint(r, 0, seq++, 16, &hint));
        EXPECT_EQ(r, hint.ring);
        EXPECT_EQ(0xfffffff0u, hint.t);
    }
    ASSERT_EQ(MGI_RING_OK, append_msg_hint(r, 0, seq++, 16, &hint));
    EXPECT_EQ(0xfffffff1u, hint.t);
    EXPECT_EQ(0xfffffff1u, r->prod_tail);
    got += drain_in_order(r, last);
    EXPECT_EQ(10, got);

    /* stale: a slot of an older generation (released, recycled for
     * 0xfffffff4): padding there, the message goes to RTail's slot */
    hint.t = 0xfffffff0u;
    ASSERT_EQ(MGI_RING_OK, append_msg_hint(r, 0, seq++, 16, &hint));
    EXPECT_EQ(0xfffffff1u, hint.t);
    /* garbage: a free slot ahead of RTail (its generation matches: the
     * message must not land there, the next ones would come before it),
     * far away, another ring */
    for (uint32_t g : {0xfffffff3u, 12345u, 0x7fffffffu, 0xfffffff1u + 4}) {
        hint.t = g;
        ASSERT_EQ(MGI_RING_OK, append_msg_hint(r, 0, seq++, 16, &hint));
        EXPECT_EQ(0xfffffff1u, hint.t) << "hint " << g;
    }
    hint.ring = reinterpret_cast<mgi_ring_t*>(&hint);
    ASSERT_EQ(MGI_RING_OK, append_msg_hint(r, 0, seq++, 16, &hint));
    EXPECT_EQ(r, hint.ring);
    /* fill up: every segment full */
    while (append_msg_hint(r, 0, seq, 16, &hint) == MGI_RING_OK) {
        ++seq;
    }
    EXPECT_EQ(nullptr, hint.ring);     /* a full ring drops the hint */
    /* a producer retrying on the full ring adds to no slot's STail: its
     * 32-bit offset would carry into the generation */
    for (i = 0; i < 100000; ++i) {
        ASSERT_EQ(MGI_RING_FULL, append_msg_hint(r, 0, seq, 16, &hint));
    }
    for (i = 0; i < r->size; ++i) {
        EXPECT_GE(mgi_ring_cap(r) + 24u,
                  (uint32_t)mgi_ring_seg(r, r->cons_tail + i)->stail)
            << "slot " << i;
    }
    got += drain_in_order(r, last);
    ASSERT_EQ(MGI_RING_OK, mgi_ring_append_close(r));
    got += drain_in_order(r, last);
    EXPECT_EQ((long)seq, got);
    EXPECT_EQ((int64_t)seq - 1, last[0]);
}

/* A whole-segment reservation committed later (a GPU sorter's whole
 * moves: reserved at their issue, committed once copied), through
 * mgi_ring_append_reserve_late with one hint: it passes RTail at once, so
 * the next one lands in the next slot by the hint while the first is still
 * uncommitted, nothing padded; the plain reserve leaves RTail at the
 * filled slot. A small message of another producer between them goes to
 * RTail's slot, and the next whole reservation then closes that slot with
 * a pad and takes the one after. Every message once, in order per
 * producer, across the 2^32 wrap. */
TEST(mgi_ring, append_late_whole_slots)
{
    ring_mem m(4, 256, MGI_RING_F_APPEND);
    mgi_ring_t *r = m.r;
    const uint32_t cap = mgi_ring_cap(r);       /* 240: one 232-byte msg */
    const uint16_t whole = (uint16_t)(cap - MGI_MSG_HDR_SIZE);
    const uint32_t t0 = 0xfffffffeu;
    std::vector<int64_t> last(2, -1);
    mgi_ring_hint_t hint = {NULL, 0, 0};
    mgi_seg_hdr_t *seg[3];
    uint32_t off[3], pos[3], seq = 0, i;

    ASSERT_EQ(cap, mgi_msg_size(whole));
    m.start_at(t0);
    auto write_whole = [&](int k, uint32_t sq) {
        mgi_msg_hdr_t h = {7, 3, 0, whole};
        char *p = mgi_seg_payload(seg[k]) + off[k];
        memcpy(p, &h, sizeof(h));
        memcpy(p + MGI_MSG_HDR_SIZE, &sq, sizeof(sq));
        for (uint32_t b = 4; b < whole; ++b) {
            p[MGI_MSG_HDR_SIZE + b] = (char)pat(0, sq, b);
        }
    };

    /* two whole reservations, neither committed yet */
    for (i = 0; i < 2; ++i) {
        ASSERT_EQ(MGI_RING_OK,
                  mgi_ring_append_reserve_late(r, cap, &hint, &seg[i],
                                               &off[i], &pos[i]));
        EXPECT_EQ(0u, off[i]);
        EXPECT_EQ(t0 + i, pos[i]);
        EXPECT_EQ(t0 + i + 1, r->prod_tail) << "RTail passed at once";
        EXPECT_EQ(t0 + i + 1, hint.t);
        write_whole(i, seq + i);
    }
    EXPECT_EQ(0u, mgi_ring_ready(r, 8));   /* nothing committed */
    /* commit in order; their passes find RTail on already */
    for (i = 0; i < 2; ++i) {
        mgi_ring_append_commit(r, seg[i], off[i], cap, pos[i]);
    }
    seq += 2;
    EXPECT_EQ(t0 + 2, r->prod_tail);
    EXPECT_EQ(2, drain_in_order(r, last));

    /* another producer's small message takes part of RTail's slot (t0+2) */
    ASSERT_EQ(MGI_RING_OK, append_msg(r, 1, 0, 16));
    /* the hinted whole reservation at t0+2 closes it with a pad (the
     * message stays), and lands in t0+3 */
    ASSERT_EQ(MGI_RING_OK,
              mgi_ring_append_reserve_late(r, cap, &hint, &seg[2], &off[2],
                                           &pos[2]));
    EXPECT_EQ(t0 + 3, pos[2]);
    EXPECT_EQ(0u, off[2]);
    EXPECT_EQ(t0 + 4, r->prod_tail);
    write_whole(2, seq);
    EXPECT_EQ(1u, mgi_ring_ready(r, 8));   /* the padded slot */
    mgi_ring_append_commit(r, seg[2], off[2], cap, pos[2]);
    ++seq;
    EXPECT_EQ(2, drain_in_order(r, last));
    EXPECT_EQ((int64_t)seq - 1, last[0]);
    EXPECT_EQ(0, last[1]);
    EXPECT_EQ(0u, mgi_ring_count(r));

    /* the plain reserve of a whole slot leaves RTail there until the
     * commit */
    ASSERT_EQ(MGI_RING_OK,
              mgi_ring_append_reserve(r, cap, &seg[0], &off[0], &pos[0]));
    EXPECT_EQ(pos[0], r->prod_tail);
    write_whole(0, seq);
    mgi_ring_append_commit(r, seg[0], off[0], cap, pos[0]);
    EXPECT_EQ(pos[0] + 1, r->prod_tail);
    EXPECT_EQ(1, drain_in_order(r, last));
    EXPECT_LT(r->cons_tail, 0x10u);        /* the indices crossed 2^32 */
}

/* Mirror protocol (GPU endpoints' sort rings): producers append (the
 * sorter kernel's blocks), a "sorter" thread publishes and recycles with
 * mgi_ring_mirror_sync() (the kernel's thread 0), a "mover" thread sees
 * only the mirror: it reads segments in place and releases them there.
 * Host memory stands in for device and mapped memory. Every message once,
 * intact, in order per producer; the mover never sees a segment before it
 * is full, and the ring never hands it a slot it still reads. */
TEST(mgi_ring, mirror_sorter_mover)
{
    const int nprod = 3, per_prod = 30000;
    ring_mem m(4, 512, MGI_RING_F_APPEND);
    uint32_t cap = mgi_ring_cap(m.r);
    mgi_ring_mirror_t *mir;
    std::atomic<int> done(0), stop(0);
    std::vector<std::thread> th;
    std::vector<int64_t> last(nprod, -1);
    long got = 0;

    ASSERT_EQ(0, posix_memalign((void**)&mir, MGI_RING_LINE, sizeof(*mir)));
    m.start_at(0xfffffff0u); /* cross 2^32 on the way */
    mgi_ring_mirror_init(mir, m.r, 0);

    for (int p = 0; p < nprod; ++p) {
        th.emplace_back([&, p]() {
            for (int i = 0; i < per_prod;) {
                uint16_t len = 4 + (uint16_t)((i * 13 + p * 7) % 100);
                if (append_msg(m.r, p, i, len) == MGI_RING_OK) {
                    ++i;
                } else {
                    sched_yield();
                }
            }
            done++;
        });
    }
    std::thread sorter([&]() {
        while (!stop.load()) {
            if (done.load() == nprod) {
                mgi_ring_append_close(m.r); /* flush the last partial one */
            }
            if (mgi_ring_mirror_sync(m.r, mir) == 0) {
                sched_yield();
            }
        }
    });

    uint32_t cons = m.r->cons_tail; /* the mover's own count */
    for (;;) {
        uint32_t n = mgi_ring_mirror_ready(mir, cons);
        if (n == 0) {
            if ((done.load() == nprod) && (mgi_ring_count(m.r) == 0) &&
                (mgi_ring_mirror_ready(mir, cons) == 0) &&
                (got == (long)nprod * per_prod)) {
                break;
            }
            sched_yield();
            continue;
        }
        ASSERT_LE(n, m.r->size);
        for (uint32_t k = 0; k < n; ++k) {
            mgi_seg_hdr_t *seg = mgi_ring_seg(m.r, cons + k);
            ASSERT_EQ(cap, seg->commit) << "published before it was full";
            got += check_seg_in_order(seg, cap, last);
            ASSERT_FALSE(::testing::Test::HasFailure());
        }
        cons += n;
        mgi_ring_mirror_release(mir, cons);
    }
    stop = 1;
    sorter.join();
    for (auto &t : th) {
        t.join();
    }
    EXPECT_EQ((long)nprod * per_prod, got);
    /* the sorter recycled everything the mover released */
    EXPECT_EQ(cons, m.r->cons_tail);
    free(mir);
}

/* Messages of several tuples taken in parts (mgi_msg_take / mgi_msg_taken):
 * a consumer with room for k tuples at a time gets every tuple once, in
 * order, whole; cons_part returns to 0 at each message's end, and a
 * schemaless message is taken whole or not at all. */
TEST(mgi_ring, take_messages_in_parts)
{
    const uint32_t tuple = 12, per_msg[] = {1, 5, 40, 3, 17};
    ring_mem m(4, 1024, MGI_RING_F_APPEND);
    mgi_ring_t *r = m.r;
    uint8_t payload[40 * 12];
    uint32_t next = 0, sent = 0;

    for (uint32_t n : per_msg) {
        mgi_msg_hdr_t h = {7, 3, 1, (uint16_t)(n * tuple)};
        for (uint32_t i = 0; i < n * tuple; ++i) {
            payload[i] = (uint8_t)((sent * tuple + i) * 31 + 5);
        }
        ASSERT_EQ(MGI_RING_OK, mgi_ring_append(r, &h, payload, NULL));
        sent += n;
    }
    ASSERT_EQ(MGI_RING_OK, mgi_ring_append_close(r));

    for (size_t room : {(size_t)tuple * 2 + 7, (size_t)tuple}) {
        /* walk the segment again with another buffer size */
        r->cons_off  = 0;
        r->cons_part = 0;
        next         = 0;
        mgi_seg_hdr_t *seg = mgi_ring_peek(r, 0);
        ASSERT_NE(nullptr, seg);
        uint32_t off = 0;
        mgi_msg_hdr_t *h;
        while ((h = mgi_seg_next(seg, mgi_ring_cap(r), &off)) != NULL) {
            uint32_t part = r->cons_part;
            uint32_t take = mgi_msg_take(h, part, tuple, room);
            ASSERT_GT(take, 0u);
            ASSERT_EQ(0u, take % tuple);
            ASSERT_LE(take, room);
            const uint8_t *p = reinterpret_cast<const uint8_t*>(h) +
                               MGI_MSG_HDR_SIZE + part;
            for (uint32_t i = 0; i < take; ++i) {
                ASSERT_EQ((uint8_t)((next * tuple + i) * 31 + 5), p[i])
                        << "tuple " << next << " byte " << i;
            }
            next += take / tuple;
            mgi_msg_taken(r, h, off, take);
            EXPECT_LT(r->cons_part, (uint32_t)h->len);
            off = r->cons_off;
        }
        EXPECT_EQ(sent, next) << "room " << room;
        EXPECT_EQ(0u, r->cons_part);
    }

    /* schemaless: a message that does not fit is not split */
    mgi_msg_hdr_t big = {7, 3, 1, 100};
    EXPECT_EQ(0u, mgi_msg_take(&big, 0, 0, 99));
    EXPECT_EQ(100u, mgi_msg_take(&big, 0, 0, 100));
    /* a tuple's worth of room less than a tuple: nothing */
    EXPECT_EQ(0u, mgi_msg_take(&big, 0, 12, 11));
    /* the rest of a message after a part */
    EXPECT_EQ(40u, mgi_msg_take(&big, 60, 20, 1000));
    /* release resets the part with the offset */
    r->cons_part = 24;
    mgi_ring_release(r, 1);
    EXPECT_EQ(0u, r->cons_part);
    EXPECT_EQ(0u, r->cons_off);
}

/* A final-ring segment by reference (MGI_SEG_REF, what the GPU sorter
 * commits for a whole receive-lane segment with MGI_RECV_ZCOPY=1):
 * mgi_ring_take reads the messages where they are, in parts when the
 * buffer is small, and sets the reference's `done` only once the referred
 * segment is drained, when it releases the final segment; a plain segment
 * behind it is read as before. */
TEST(mgi_ring, take_by_reference)
{
    const uint32_t tuple = 8;
    ring_mem lane(2, 512, MGI_RING_F_APPEND), fin(4, 512, MGI_RING_F_APPEND);
    const uint32_t cap = mgi_ring_cap(fin.r);
    uint8_t payload[64];
    uint32_t done = 7, n = 0, pos = 0, off = 0;
    mgi_seg_hdr_t *fseg = NULL;
    std::vector<uint8_t> want, got(4096);

    /* a full lane segment of 4-tuple messages */
    for (;;) {
        mgi_msg_hdr_t h = {7, 3, 1, 4 * tuple};
        for (uint32_t i = 0; i < h.len; ++i) {
            payload[i] = (uint8_t)(n * 4 * tuple + i + 1);
        }
        uint32_t before = lane.r->prod_tail;
        ASSERT_EQ(MGI_RING_OK, mgi_ring_append(lane.r, &h, payload, NULL));
        if (lane.r->prod_tail != before) {
            break;   /* this one went into the next segment */
        }
        want.insert(want.end(), payload, payload + h.len);
        ++n;
    }
    ASSERT_GT(n, 10u);
    mgi_seg_hdr_t *lseg = mgi_ring_peek(lane.r, 0);
    ASSERT_NE(nullptr, lseg);

    /* the reference, committed as the sorter does */
    ASSERT_EQ(MGI_RING_OK, mgi_ring_append_reserve(fin.r, cap, &fseg, &off,
                                                   &pos));
    ASSERT_EQ(0u, off);
    mgi_seg_ref_t *ref = reinterpret_cast<mgi_seg_ref_t*>(
            mgi_seg_payload(fseg));
    ref->seg       = lseg;
    ref->done      = &done;
    done           = 0;
    fseg->reserved = MGI_SEG_REF;
    mgi_ring_append_commit(fin.r, fseg, 0, cap, pos);
    /* and a plain message behind it */
    mgi_msg_hdr_t h2 = {7, 3, 1, tuple};
    memset(payload, 0xab, tuple);
    ASSERT_EQ(MGI_RING_OK, mgi_ring_append(fin.r, &h2, payload, NULL));
    ASSERT_EQ(MGI_RING_OK, mgi_ring_append_close(fin.r));

    EXPECT_EQ(lseg, mgi_ring_peek_data(fin.r));
    size_t total = 0, k;
    /* 3 tuples at a time: messages split, the reference held meanwhile */
    while (total < want.size()) {
        k = mgi_ring_take(fin.r, got.data() + total, 3 * tuple, tuple, NULL);
        ASSERT_GT(k, 0u);
        total += k;
        if (total < want.size()) {
            EXPECT_EQ(0u, done) << "released before drained, at " << total;
        }
    }
    ASSERT_EQ(want.size(), total);
    EXPECT_EQ(0, memcmp(want.data(), got.data(), total));
    /* released by the take that drained it, or the next, which moves on */
    k = mgi_ring_take(fin.r, got.data(), 64, tuple, NULL);
    EXPECT_EQ(1u, done);
    EXPECT_EQ((size_t)tuple, k);
    EXPECT_EQ(0xab, got[0]);
    /* the final slot was recycled: no mark left on it */
    EXPECT_EQ(0u, mgi_ring_seg(fin.r, 0)->reserved);
    EXPECT_EQ(nullptr, mgi_ring_peek_data(fin.r));
}

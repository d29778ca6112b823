/**
 * The GPU sorter's device code run on the CPU (test_mgi_sorter.cc, whose
 * comment says what the fixture is): the fixture, the producers' tuples,
 * the checks of what reached the hops and final rings, and run_sorter,
 * shared by test_mgi_sorter.cc and test_mgi_sorter_routes.cc. The
 * emulated block's globals are defined in test_mgi_sorter.cc.
 */
#ifndef TEST_MGI_SORTER_H_
#define TEST_MGI_SORTER_H_

#include "mgi_sorter_dev.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <sched.h>
#include <map>
#include <memory>
#include <set>
#include <vector>

/* A barrier of n threads that waits by yielding the CPU, not by sleeping
 * in the kernel: a block's emulated threads (up to 32) outnumber the CPUs,
 * and meet at every __syncthreads, so a sleeping barrier's wake-ups cost
 * most of the run (a yielding one is 3-6 x faster on 2 cores). The
 * release store of the generation, read with acquire by the waiters,
 * orders every thread's writes before the barrier before every read
 * after it (the arrivals' read-modify-writes form one release sequence),
 * which ThreadSanitizer follows. */
struct emu_barrier {
    std::atomic<unsigned> arrived{0};
    std::atomic<unsigned> gen{0};
    unsigned n = 1;

    void wait()
    {
        unsigned g = gen.load(std::memory_order_acquire);

        if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == n) {
            arrived.store(0, std::memory_order_relaxed);
            gen.store(g + 1, std::memory_order_release);
            return;
        }
        while (gen.load(std::memory_order_acquire) == g) {
            sched_yield();
        }
    }
};

extern emu_barrier mgi_emu_barrier;

namespace {

const uint16_t SELF = 0, HOP_A = 16, HOP_B = 32, REMOTE_SRC = 16;
const uint16_t CH   = 3;

struct tuple_hdr {
    uint32_t stage;     /* producing stage ring, 9: the remote source */
    uint32_t seq;       /* per (stage, destination) */
    uint16_t dst;       /* intended destination, 0xffff: broadcast */
    uint16_t len;
    uint32_t check;
};

uint32_t tuple_check(const tuple_hdr &t)
{
    return t.stage * 2654435761u ^ t.seq * 40503u ^ t.dst ^ ((uint32_t)t.len << 20);
}

struct sorter_fixture {
    uint32_t seg, depth, final_depth;
    std::vector<void*> mem;
    mgi_gpu_dep_t dep;
    mgi_gpu_status_t status;
    mgi_gpu_block_t blk[2];
    mgi_gpu_dch_t *dch;
    mgi_ring_t *final_rings[2];
    uint32_t final_lock[2], eof_sources[2];
    mgi_gpu_dch_t *chs[8];
    mgi_gpu_pass_t pass[2];
    mgi_gpu_emit_t emit[2];
    std::vector<char> smem[2];
    uint32_t mover_cons[4];
    unsigned rings_per_hop;     /* sort rings per hop (MGI_SORT_RINGS) */

    /* a sorter counter (MGI_GPU_STATS) of both blocks */
    unsigned long long stat(mgi_gpu_stat_t k) const
    {
        return pass[0].stat[k] + pass[1].stat[k];
    }

    void *alloc(size_t len)
    {
        void *p = NULL;
        EXPECT_EQ(0, posix_memalign(&p, 128, len));
        memset(p, 0, len);
        mem.push_back(p);
        return p;
    }

    mgi_ring_t *ring(uint32_t d, uint32_t flags)
    {
        mgi_ring_t *r = (mgi_ring_t*)alloc(mgi_ring_mem_size(d, seg));
        EXPECT_EQ(0, mgi_ring_init(r, d, seg, flags));
        return r;
    }

    sorter_fixture(uint32_t seg_, uint32_t depth_, uint32_t final_depth_,
                   int coalesce, unsigned rings_per_hop_ = 1,
                   int peer = 0, int send_refs = 0) :
        seg(seg_), depth(depth_), final_depth(final_depth_),
        rings_per_hop(rings_per_hop_)
    {
        memset(&dep, 0, sizeof(dep));
        memset(&status, 0, sizeof(status));
        memset(blk, 0, sizeof(blk));
        memset(chs, 0, sizeof(chs));
        dep.id           = SELF;
        dep.nstage       = 2;
        dep.nlanes       = 3;
        dep.coalesce     = coalesce;
        dep.lane_bytes   = mgi_ring_mem_size(depth, seg);
        dep.recv_mem     = (char*)alloc(3 * dep.lane_bytes);
        /* peer: lane 1 is appended to by the remote source's sorter */
        for (unsigned l = 0; l < 3; ++l) {
            mgi_ring_init((mgi_ring_t*)(dep.recv_mem + l * dep.lane_bytes),
                          depth, seg, (l == 2) ? MGI_RING_F_APPEND :
                          ((l == 1) && peer) ?
                          (MGI_RING_F_APPEND | MGI_RING_F_SYS) : 0);
        }
        dep.stage    = (mgi_ring_t**)alloc(2 * sizeof(mgi_ring_t*));
        dep.stage[0] = ring(depth, MGI_RING_F_APPEND);
        dep.stage[1] = ring(depth, MGI_RING_F_APPEND);
        /* peer (MGI_PEER_DIRECT): a hop's routes all are its receive lane,
         * a ring the test consumes as that hop's sorter would, no mirror */
        for (unsigned r = 0; r < 2 * rings_per_hop; ++r) {
            mover_cons[r] = 0;
            if (peer) {
                dep.sort[r]   = ((r % rings_per_hop) == 0) ?
                                ring(depth, MGI_RING_F_APPEND |
                                            MGI_RING_F_SYS) :
                                dep.sort[r - r % rings_per_hop];
                dep.mirror[r] = NULL;
                continue;
            }
            /* send_refs (MGI_SEND_ZCOPY): with the table of where each
             * segment's data is */
            const uint32_t nrefs = send_refs ? depth : 0;
            dep.sort[r]   = ring(depth, MGI_RING_F_APPEND);
            dep.mirror[r] = (mgi_ring_mirror_t*)alloc(
                    mgi_ring_mirror_size(nrefs));
            mgi_ring_mirror_init(dep.mirror[r], dep.sort[r], nrefs);
        }
        dep.nroutes        = 2 * rings_per_hop;
        dep.sort_rings     = rings_per_hop;
        dep.chs            = chs;
        dep.max_channels   = 8;
        dep.status         = &status;
        dep.blk            = blk;
        dep.ljobs          = (mgi_gpu_lane_jobs_t*)alloc(
                3 * sizeof(mgi_gpu_lane_jobs_t));

        dch = (mgi_gpu_dch_t*)alloc(sizeof(*dch));
        dch->id       = CH;
        dch->ndst     = 3;
        dch->nsrc     = 2;
        dch->self_dst = 0;
        dch->nfinal   = 2;
        dch->dst[0]   = SELF;
        dch->dst[1]   = HOP_A;
        dch->dst[2]   = HOP_B;
        dch->src[0]   = SELF;
        dch->src[1]   = REMOTE_SRC;
        /* the channel's hops here: A's first ring, B's, this endpoint */
        for (unsigned k = 0; k < MGI_GPU_MAX_TARGETS; ++k) {
            dch->hop[k] = MGI_GPU_SLOT_OUT;
        }
        dch->hop[0]   = MGI_GPU_SLOT_LOOPBACK;
        dch->hop[1]   = 0;
        dch->hop[2]   = (int16_t)rings_per_hop;
        for (unsigned k = 0; k < 2; ++k) {
            final_rings[k] = ring(final_depth, MGI_RING_F_APPEND);
            final_lock[k]  = eof_sources[k] = 0;
        }
        dch->final       = final_rings;
        dch->final_lock  = final_lock;
        dch->eof_sources = eof_sources;
        chs[CH]          = dch;

        for (unsigned b = 0; b < 2; ++b) {
            smem[b].resize(mgi_gpu_smem(seg) + 16);
            mgi_gpu_emit_init(&emit[b], smem[b].data() +
                                        ((seg - MGI_SEG_HDR_SIZE + 15) &
                                         ~15u));
            memset(&pass[b], 0, sizeof(pass[b]));
        }
    }

    ~sorter_fixture()
    {
        stop_threads();
        for (void *p : mem) {
            free(p);
        }
    }

    /* threads 1..nth-1 of the emulated block; the caller is thread 0 */
    std::vector<std::thread> workers;
    emu_barrier go;
    std::atomic<int> quit{0};

    void start_threads(unsigned nth)
    {
        mgi_emu_nth = nth;
        if (nth == 1) {
            return;
        }
        mgi_emu_barrier.n = nth;
        go.n              = nth;
        for (unsigned t = 1; t < nth; ++t) {
            workers.emplace_back([this, t]() {
                mgi_emu_tid = t;
                for (;;) {
                    go.wait();
                    if (quit.load()) {
                        return;
                    }
                    mgi_gpu_round(&dep, &blk[mgi_emu_bid],
                                  &pass[mgi_emu_bid], &emit[mgi_emu_bid],
                                  smem[mgi_emu_bid].data());
                    go.wait();
                }
            });
        }
    }

    void stop_threads()
    {
        if (workers.empty()) {
            return;
        }
        quit = 1;
        go.wait();
        for (auto &w : workers) {
            w.join();
        }
        workers.clear();
        mgi_emu_nth = 1;
    }

    /* one round of every sorter block */
    int round(unsigned nblk)
    {
        int progress = 0;
        mgi_emu_nblk = nblk;
        mgi_emu_tid  = 0;
        for (unsigned b = 0; b < nblk; ++b) {
            mgi_emu_bid = b;
            if (!workers.empty()) {
                go.wait();
            }
            progress |= mgi_gpu_round(&dep, &blk[b], &pass[b], &emit[b],
                                      smem[b].data());
            if (!workers.empty()) {
                go.wait();
            }
        }
        return progress;
    }
};

void gen_tuple(std::vector<uint8_t> &buf, uint32_t stage, uint32_t seq,
                uint16_t dst, uint16_t len)
{
    tuple_hdr t = {stage, seq, dst, len, 0};
    t.check = tuple_check(t);
    buf.assign(len, 0);
    memcpy(buf.data(), &t, sizeof(t));
    for (uint16_t i = sizeof(t); i < len; ++i) {
        buf[i] = (uint8_t)(t.check + i);
    }
}

/* Checks one received message. strict: key (stage, dst) -> next seq;
 * else (a final ring: consuming blocks take segments in turn) sequence
 * numbers only grow per key in this ring and each arrives once. */
struct order_check {
    std::map<std::pair<uint32_t, uint16_t>, uint32_t> next;
    std::map<std::pair<uint32_t, uint16_t>, std::set<uint32_t>> seen;
};

void check_tuple(const mgi_msg_hdr_t *h, uint16_t expect_dst,
                 order_check &oc, int strict, long *count)
{
    tuple_hdr t;
    const uint8_t *p = (const uint8_t*)h + MGI_MSG_HDR_SIZE;

    ASSERT_EQ(CH, h->ch);
    ASSERT_EQ(expect_dst, h->dst) << "destination of a copy";
    ASSERT_GE(h->len, sizeof(t));
    memcpy(&t, p, sizeof(t));
    ASSERT_EQ(t.len, h->len);
    ASSERT_EQ(tuple_check(t), t.check);
    for (uint16_t i = sizeof(t); i < h->len; ++i) {
        ASSERT_EQ((uint8_t)(t.check + i), p[i]) << "byte " << i;
    }
    auto key = std::make_pair(t.stage, t.dst);
    if (strict) {
        ASSERT_EQ(oc.next[key], t.seq) << "order of stage " << t.stage
                                       << " dst " << t.dst;
        oc.next[key]++;
    } else {
        ASSERT_TRUE(oc.seen[key].insert(t.seq).second) << "twice: stage "
                << t.stage << " seq " << t.seq;
        ASSERT_GE(t.seq + 1, oc.next[key]) << "order of stage " << t.stage;
        oc.next[key] = t.seq + 1;
    }
    (*count)++;
}

/* A full segment for hop hi (0: A, 1: B) as the mover or the hop's sorter
 * takes it: every tuple checked in order, EOFs counted. The remote
 * source's EOF for hop B, which this endpoint relays (relayed != NULL:
 * that source's tuples for B so far), comes after all its tuples for B. */
void check_hop_seg(mgi_seg_hdr_t *seg, uint32_t cap, unsigned hi,
                   order_check &oc, long *eof_seen, long *got,
                   const long *relayed = NULL, long *remote_eofs = NULL)
{
    const uint16_t hop = hi ? HOP_B : HOP_A;
    uint32_t off = 0;
    mgi_msg_hdr_t *h;

    ASSERT_EQ(cap, seg->commit);
    while ((h = mgi_seg_next(seg, cap, &off)) != NULL) {
        if (h->len == MGI_MSG_LEN_EOF) {
            ASSERT_EQ(hop, h->dst);
            if (h->src == REMOTE_SRC) {
                ASSERT_TRUE(relayed != NULL) << "a relayed EOF, no relay";
                ASSERT_EQ(HOP_B, hop);
                ASSERT_EQ((uint32_t)*relayed,
                          oc.next[std::make_pair(9u, HOP_B)])
                    << "the relayed EOF overtook its source's tuples";
                (*remote_eofs)++;
            }
            (*eof_seen)++;
        } else {
            check_tuple(h, hop, oc, 1, got);
            if (::testing::Test::HasFatalFailure()) {
                return;
            }
        }
        off += mgi_msg_size(h->len);
    }
}

void run_sorter(uint32_t seg, uint32_t depth, uint32_t final_depth,
                int coalesce, unsigned nblk, int per_stage, unsigned nth = 1,
                int fixed_len = 0, int lane_ctl = 0, int stretch = 0,
                unsigned rings_per_hop = 1, uint32_t stage_passes = 0,
                int zcopy = 1, int loop_direct = 0, int eof_own = 0,
                int eof_alone = 1, int stage_zcopy = 0, int peer = 0,
                uint32_t send_zcopy = 0, uint32_t owner_help = 0,
                uint32_t route_base = 0, int relay = 0)
{
    sorter_fixture f(seg, depth, final_depth, coalesce, rings_per_hop, peer,
                     send_zcopy > 0);
    long refs_read = 0, stage_refs_read = 0, send_refs_put = 0;
    long send_ref_slots = 0;

    f.dep.stage_passes = stage_passes;
    f.dep.recv_zcopy   = zcopy; /* MGI_RECV_ZCOPY */
    f.dep.loop_direct  = loop_direct; /* MGI_LOOP_DIRECT */
    f.dep.stage_zcopy  = stage_zcopy; /* MGI_STAGE_ZCOPY */
    f.dep.eof_alone    = eof_alone;   /* MGI_EOF_ALONE */
    f.dep.send_zcopy   = send_zcopy;  /* MGI_SEND_ZCOPY: segments a ref */
    f.dep.send_wait_rounds = 16;      /* MGI_SEND_WAIT_ROUNDS's default */
    f.dep.owner_help   = owner_help;  /* MGI_OWNER_HELP, 0 by default */
    f.dep.route_base   = route_base;  /* mgi_gpu_route_first */

    /* lane_ctl: lanes 0 and 1 publish their control words through host
     * control words, as GPU endpoints' lanes do (mgi_lane_ctl_t) */
    if (lane_ctl) {
        f.dep.lane_ctl = (mgi_lane_ctl_t*)f.alloc(2 * sizeof(mgi_lane_ctl_t));
    }

    f.start_threads(nth);
    const uint16_t dsts[4] = {SELF, HOP_A, HOP_B, MGI_EP_ID_ALL};
    std::map<std::pair<uint32_t, uint16_t>, uint32_t> seq_out;
    order_check next_mover[2], next_final[2];
    std::vector<uint8_t> buf;
    int sent[2] = {0, 0}, eof_in[2] = {0, 0};
    long expect_final = 0, expect_hop[2] = {0, 0};
    long got_final = 0, got_hop[2] = {0, 0}, eof_seen_hop[2] = {0, 0};
    uint32_t flush_seq[2] = {0, 0};
    int remote_sent = 0, remote_eof = 0, remote_closed = 0;
    int remote_eof_b = 0;
    long remote_relayed = 0, remote_eofs = 0;
    long ring_segs[4] = {0, 0, 0, 0};      /* moved per sort ring */
    /* relay: the remote source sends to hop B through this endpoint too,
     * in four stretches: for this endpoint only; every third tuple for B;
     * the same with one length (the parallel walk's runs, mixed); all for
     * B in one length (segments keyed to B, a run of one target) */
    const int remote_n = relay ? 1200 : 300;
    const long *relayed = relay ? &remote_relayed : NULL;
    std::map<std::pair<uint32_t, uint16_t>, uint32_t> remote_seq;
    mgi_ring_t *tmp = f.ring(1, MGI_RING_F_APPEND); /* remote segments */
    mgi_ring_t *lane1 = (mgi_ring_t*)(f.dep.recv_mem + f.dep.lane_bytes);

    for (long it = 0; it < 2000000; ++it) {
        /* producers: a few tuples per stage ring per step */
        for (unsigned s = 0; s < 2; ++s) {
            for (int k = 0; k < 3 && sent[s] < per_stage; ++k) {
                /* fixed_len: long runs of like messages (the parallel
                 * walk), a broadcast now and then */
                /* stretch: `stretch` tuples in a row to one destination,
                 * so that many stage segments hold one (the sorter moves
                 * those whole, mgi_gpu_stage_whole); < 0: every tuple to
                 * this endpoint (as in a one-GPU exchange) */
                uint16_t dst = fixed_len ?
                        dsts[((sent[s] % 50) == 49) ? 3 :
                             (sent[s] * 7 + s) % 3] :
                        (stretch < 0) ? SELF :
                        stretch ? dsts[((sent[s] / stretch) * 7 + s) % 4] :
                        dsts[(sent[s] * 7 + s) % 4];
                /* fixed_len < 0: lengths from -fixed_len up, one
                 * unlike the next (batches of a block send) */
                uint16_t len = (fixed_len > 0) ? (uint16_t)fixed_len :
                        (fixed_len < 0) ?
                        (uint16_t)(-fixed_len +
                                   (sent[s] * 13 + s * 5) % 600) :
                        16 + (uint16_t)((sent[s] * 13 + s * 5) % 60);
                auto key = std::make_pair((uint32_t)s, dst);
                gen_tuple(buf, s, seq_out[key], dst, len);
                mgi_msg_hdr_t h = {CH, dst, SELF, len};
                if (mgi_ring_append(f.dep.stage[s], &h, buf.data(), NULL) !=
                    MGI_RING_OK) {
                    break;
                }
                seq_out[key]++;
                sent[s]++;
                if (dst == SELF || dst == MGI_EP_ID_ALL) {
                    expect_final++;
                }
                if (dst == HOP_A || dst == MGI_EP_ID_ALL) {
                    expect_hop[0]++;
                }
                if (dst == HOP_B || dst == MGI_EP_ID_ALL) {
                    expect_hop[1]++;
                }
            }
            if (sent[s] == per_stage && !eof_in[s]) {
                /* the device flush: close, EOF (nprod = 2 stage rings),
                 * close: the EOF in a segment of its own */
                uint32_t payload[2] = {2, flush_seq[s] = 1};
                mgi_msg_hdr_t h = {CH, MGI_EP_ID_ALL, SELF, MGI_MSG_LEN_EOF};
                if ((mgi_ring_append_close(f.dep.stage[s]) == MGI_RING_OK) &&
                    (mgi_ring_append(f.dep.stage[s], &h, payload, NULL) ==
                     MGI_RING_OK)) {
                    f.dep.stage[s]->flush_seq = 1;
                    mgi_ring_append_close(f.dep.stage[s]);
                    eof_in[s] = 1;
                }
            }
        }
        /* a remote source's segments into lane 1, as its mover would */
        uint32_t lane1_used = lane_ctl ?
                f.dep.lane_ctl[1].prod_tail -
                __atomic_load_n(&f.dep.lane_ctl[1].cons_tail,
                                __ATOMIC_ACQUIRE) :
                mgi_ring_count(lane1);
        if (remote_eof == 0 && lane1_used < lane1->size) {
            mgi_seg_hdr_t *seg;
            while (remote_sent < remote_n) {
                const int part = relay ? remote_sent / 300 : 0;
                uint16_t len = (part >= 2) ? 24 :
                               16 + (uint16_t)(remote_sent % 40);
                uint16_t rdst = ((part == 3) ||
                                 ((part >= 1) && (remote_sent % 3 == 0))) ?
                                HOP_B : SELF;
                auto key = std::make_pair(9u, rdst);
                gen_tuple(buf, 9, remote_seq[key], rdst, len);
                mgi_msg_hdr_t h = {CH, rdst, REMOTE_SRC, len};
                uint32_t before = tmp->prod_tail;
                if (mgi_ring_append(tmp, &h, buf.data(), NULL) !=
                    MGI_RING_OK) {
                    break;
                }
                remote_seq[key]++;
                remote_sent++;
                if (rdst == SELF) {
                    expect_final++;
                } else {
                    expect_hop[1]++;
                    remote_relayed++;
                }
                if (tmp->prod_tail != before) {
                    break; /* a segment closed */
                }
            }
            if (remote_sent == remote_n && mgi_ring_count(tmp) == 0 &&
                eof_own && !remote_closed) {
                /* as a GPU sorter forwards a flush: the tuples' segment
                 * closed first (it keeps its mark), then the EOF alone */
                ASSERT_EQ(MGI_RING_OK, mgi_ring_append_close(tmp));
                remote_closed = 1;
            } else if (remote_sent == remote_n &&
                       mgi_ring_count(tmp) == 0 && eof_own) {
                uint32_t payload[2] = {1, 1};
                mgi_msg_hdr_t h = {CH, SELF, REMOTE_SRC, MGI_MSG_LEN_EOF};
                const uint32_t sz = mgi_msg_size(MGI_MSG_LEN_EOF);
                mgi_seg_hdr_t *es;
                uint32_t eoff, epos;
                if (mgi_ring_append_reserve(tmp, sz, &es, &eoff, &epos) ==
                    MGI_RING_OK) {
                    char *m = mgi_seg_payload(es) + eoff;
                    memcpy(m, &h, sizeof(h));
                    memcpy(m + MGI_MSG_HDR_SIZE, payload, sizeof(payload));
                    mgi_seg_mark(es, MGI_SEG_EOF_KEY);
                    mgi_ring_append_commit(tmp, es, eoff, sz, epos);
                    mgi_ring_append_close(tmp);
                    remote_eof = 1;
                }
            } else if (remote_sent == remote_n && mgi_ring_count(tmp) == 0) {
                uint32_t payload[2] = {1, 1};
                mgi_msg_hdr_t hb = {CH, HOP_B, REMOTE_SRC, MGI_MSG_LEN_EOF};
                mgi_msg_hdr_t h = {CH, SELF, REMOTE_SRC, MGI_MSG_LEN_EOF};
                /* relay: its EOF for hop B first, beside the other */
                if (relay && !remote_eof_b &&
                    (mgi_ring_append(tmp, &hb, payload, NULL) ==
                     MGI_RING_OK)) {
                    remote_eof_b = 1;
                }
                if ((!relay || remote_eof_b) &&
                    (mgi_ring_append(tmp, &h, payload, NULL) ==
                     MGI_RING_OK)) {
                    mgi_ring_append_close(tmp);
                    remote_eof = 1;
                }
            }
            mgi_seg_hdr_t *ls;
            uint32_t loff, lpos, cap1 = mgi_ring_cap(lane1);
            if (peer && ((seg = mgi_ring_peek(tmp, 0)) != NULL) &&
                (mgi_ring_append_reserve(lane1, cap1, &ls, &loff, &lpos) ==
                 MGI_RING_OK)) {
                /* as the remote sorter's whole move: a fresh segment, the
                 * payload, its mark, the commit */
                ASSERT_EQ(0u, loff);
                memcpy(mgi_seg_payload(ls), mgi_seg_payload(seg), cap1);
                if (seg->reserved != 0) {
                    mgi_seg_mark(ls, (seg->reserved == MGI_SEG_MIXED) ?
                                     MGI_SEG_MIXED : seg->reserved - 1);
                }
                mgi_ring_append_commit(lane1, ls, 0, cap1, lpos);
                mgi_ring_release(tmp, 1);
            } else if (!peer && ((seg = mgi_ring_peek(tmp, 0)) != NULL)) {
                if (lane_ctl) {
                    /* the mover writes the slot, then publishes RTail in
                     * the control words only: the sorter must pull it */
                    uint32_t t = f.dep.lane_ctl[1].prod_tail;
                    memcpy(mgi_ring_seg(lane1, t), seg, lane1->seg_size);
                    __atomic_store_n(&f.dep.lane_ctl[1].prod_tail, t + 1,
                                     __ATOMIC_RELEASE);
                } else {
                    ASSERT_EQ(1u, mgi_ring_enqueue_bulk(lane1, seg, 1));
                }
                mgi_ring_release(tmp, 1);
            }
        }

        f.round(nblk);

        /* peer: the hops' sorters take their lanes' full segments in
         * order and release them, every third step */
        for (unsigned hi = 0; peer && (hi < 2) && (it % 3 == 0); ++hi) {
            mgi_ring_t *lr = f.dep.sort[hi * rings_per_hop];
            const uint32_t cap = mgi_ring_cap(lr);
            mgi_seg_hdr_t *seg;
            while ((seg = mgi_ring_peek(lr, 0)) != NULL) {
                check_hop_seg(seg, cap, hi, next_mover[hi],
                              &eof_seen_hop[hi], &got_hop[hi], relayed,
                              &remote_eofs);
                if (::testing::Test::HasFatalFailure()) {
                    return;
                }
                mgi_ring_release(lr, 1);
                ring_segs[hi * rings_per_hop]++;
            }
        }
        /* the mover: through the mirrors only, every third step */
        if (!peer && (it % 3 == 0)) {
            for (unsigned r = 0; r < 2 * rings_per_hop; ++r) {
                const unsigned hi = r / rings_per_hop; /* 0: A, 1: B */
                uint32_t n = mgi_ring_mirror_ready(f.dep.mirror[r],
                                                   f.mover_cons[r]);
                ASSERT_LE(n, depth);
                for (uint32_t k = 0; k < n; ++k) {
                    mgi_seg_hdr_t *seg = mgi_ring_seg(f.dep.sort[r],
                                                      f.mover_cons[r] + k);
                    uint32_t nseg = 1;
                    if (send_zcopy) {
                        /* what the mover puts: the sort segment, or the
                         * stage segments side by side its reference
                         * stands for, still held by their stage ring */
                        const mgi_ring_mirror_ref_t &ref =
                                mgi_ring_mirror_refs(f.dep.mirror[r])
                                [(f.mover_cons[r] + k) & (depth - 1)];
                        ASSERT_EQ(ref.addr != 0,
                                  seg->reserved == MGI_SEG_REF);
                        if (ref.addr != 0) {
                            seg  = (mgi_seg_hdr_t*)(uintptr_t)ref.addr;
                            nseg = ref.nseg;
                            ASSERT_GE(nseg, 1u);
                            ASSERT_LE(nseg, send_zcopy);
                            send_refs_put += nseg;
                            send_ref_slots++;
                        }
                    }
                    for (uint32_t j = 0; j < nseg; ++j) {
                        mgi_seg_hdr_t *sj = (mgi_seg_hdr_t*)
                                ((char*)seg + (size_t)j *
                                              f.dep.sort[r]->seg_size);
                        check_hop_seg(sj, mgi_ring_cap(f.dep.sort[r]), hi,
                                      next_mover[hi], &eof_seen_hop[hi],
                                      &got_hop[hi], relayed, &remote_eofs);
                        if (::testing::Test::HasFatalFailure()) {
                            return;
                        }
                    }
                }
                f.mover_cons[r] += n;
                ring_segs[r]    += n;
                mgi_ring_mirror_release(f.dep.mirror[r], f.mover_cons[r]);
            }
        }
        /* the consumer of the final rings: once both sources' EOFs
         * counted at a final ring, every tuple for this endpoint must be
         * readable (an EOF counted without the loopback lane, or a
         * segment passing it by, must not overtake its source's tuples) */
        const bool all_eof = (__atomic_load_n(&f.eof_sources[0],
                                              __ATOMIC_ACQUIRE) == 2) &&
                             (__atomic_load_n(&f.eof_sources[1],
                                              __ATOMIC_ACQUIRE) == 2);
        for (unsigned k = 0; k < 2; ++k) {
            mgi_ring_t *fr = f.final_rings[k];
            mgi_seg_hdr_t *seg;
            while ((seg = mgi_ring_peek_data(fr)) != NULL) {
                uint32_t off = 0, cap = mgi_ring_cap(fr);
                mgi_msg_hdr_t *h;
                int in_stage = -1;
                for (unsigned s = 0; s < 2; ++s) {
                    const char *r0 = (const char*)f.dep.stage[s] +
                                     MGI_RING_HDR_SIZE;
                    if (((const char*)seg >= r0) &&
                        ((const char*)seg < r0 + (size_t)f.dep.stage[s]->size *
                                                 f.dep.stage[s]->seg_size)) {
                        in_stage = (int)s;
                    }
                }
                if (in_stage >= 0) {
                    /* a whole stage segment by reference: full, not yet
                     * read, and its stage ring not past it */
                    mgi_ring_t *sr = f.dep.stage[in_stage];
                    ASSERT_TRUE(stage_zcopy && loop_direct);
                    ASSERT_EQ(mgi_ring_cap(sr), seg->commit);
                    ASSERT_LT((uint32_t)(((const char*)seg -
                                          ((const char*)sr +
                                           MGI_RING_HDR_SIZE)) /
                                         sr->seg_size -
                                         (sr->cons_tail & sr->mask)) &
                              sr->mask, sr->cons_held);
                    stage_refs_read++;
                } else if (seg != mgi_ring_seg(fr, fr->cons_tail)) {
                    /* a reference: into lane 1, never the loopback lane */
                    ASSERT_TRUE(zcopy);
                    ASSERT_GE((char*)seg, (char*)lane1);
                    ASSERT_LT((char*)seg, (char*)lane1 + f.dep.lane_bytes);
                    refs_read++;
                }
                while ((h = mgi_seg_next(seg, cap, &off)) != NULL) {
                    check_tuple(h, SELF, next_final[k], 0, &got_final);
                    off += mgi_msg_size(h->len);
                }
                mgi_ring_release_data(fr);
            }
        }
        if (all_eof) {
            ASSERT_EQ(expect_final, got_final)
                << "both sources' EOFs counted before all their tuples "
                   "reached the final rings";
        }
        if (eof_in[0] && eof_in[1] && remote_eof &&
            f.eof_sources[0] == 2 && f.eof_sources[1] == 2 &&
            f.dep.stage[0]->flush_done == 1 &&
            f.dep.stage[1]->flush_done == 1 && got_final == expect_final &&
            got_hop[0] == expect_hop[0] && got_hop[1] == expect_hop[1] &&
            remote_eofs == relay) {
            break;
        }
        /* a stage ring's flush is done only once the mover released the
         * sort segments with its EOF on both hops */
        {
            long done = (f.dep.stage[0]->flush_done == 1) +
                        (f.dep.stage[1]->flush_done == 1);
            ASSERT_LE(done, std::min(eof_seen_hop[0],
                                     eof_seen_hop[1] - remote_eofs));
        }
    }
    /* a few more rounds: every stage segment released, references read
     * included (MGI_STAGE_ZCOPY retires them in ring order) */
    for (int k = 0; k < 8; ++k) {
        f.round(nblk);
    }
    for (unsigned s = 0; s < 2; ++s) {
        EXPECT_EQ(0u, f.dep.stage[s]->cons_held) << "stage ring " << s;
        EXPECT_EQ(f.dep.stage[s]->prod_tail, f.dep.stage[s]->cons_tail)
            << "stage ring " << s;
    }
    printf("stage segments read by reference: %ld (%llu sent so)\n",
           stage_refs_read, f.stat(MGI_GS_STAGE_REFS));
    printf("stage segments put by reference: %ld in %ld sort segments "
           "(%llu in %llu sent so)\n", send_refs_put, send_ref_slots,
           f.stat(MGI_GS_SEND_REFS), f.stat(MGI_GS_SEND_REF_SLOTS));
    EXPECT_EQ((unsigned long long)send_refs_put, f.stat(MGI_GS_SEND_REFS));
    EXPECT_EQ((unsigned long long)send_ref_slots,
              f.stat(MGI_GS_SEND_REF_SLOTS));
    if (send_zcopy && stretch > 0) {
        /* runs of them side by side in one reference (a short run waits
         * a few rounds to grow) */
        EXPECT_GT(send_refs_put, send_ref_slots);
    } else if (!send_zcopy) {
        EXPECT_EQ(0, send_refs_put);
    }
    EXPECT_EQ((unsigned long long)stage_refs_read, f.stat(MGI_GS_STAGE_REFS));
    if (stage_zcopy && loop_direct && stretch) {
        EXPECT_GT(stage_refs_read, 0);
        EXPECT_EQ(f.stat(MGI_GS_LOOP_DIRECT), f.stat(MGI_GS_STAGE_REFS));
    } else if (!stage_zcopy) {
        EXPECT_EQ(0, stage_refs_read);
    }
    EXPECT_EQ(expect_final, got_final);
    EXPECT_EQ(expect_hop[0], got_hop[0]);
    EXPECT_EQ(expect_hop[1], got_hop[1]);
    EXPECT_EQ(2, eof_seen_hop[0]);
    EXPECT_EQ(2 + relay, eof_seen_hop[1]);
    EXPECT_EQ(relay, remote_eofs);
    EXPECT_EQ((uint32_t)relay, f.dch->relay_eofs);
    if (relay) {
        /* the relayed tuples of one length went in runs: a lane mixing
         * tuples for this endpoint with relayed ones is not walked
         * message by message */
        printf("relayed tuples: %ld, of them placed by the parallel "
               "walk: %llu\n", remote_relayed, f.stat(MGI_GS_RUN_RELAYED));
        EXPECT_GE(f.stat(MGI_GS_RUN_RELAYED), 350ull);
        /* placements, each counted once: a blocked pass walks again */
        EXPECT_LE(f.stat(MGI_GS_RUN_RELAYED),
                  (unsigned long long)remote_relayed);
    }
    EXPECT_EQ(2u, f.eof_sources[0]);
    EXPECT_EQ(2u, f.eof_sources[1]);
    EXPECT_EQ(2u, f.dch->eof_count[0]);
    EXPECT_EQ(1u, f.dch->eof_count[1]);
    EXPECT_EQ(1u, f.dep.stage[0]->flush_done);
    EXPECT_EQ(1u, f.dep.stage[1]->flush_done);
#if defined(MGI_SORTER_SELFCHECK)
    printf("passes that found a target full so far: %lu\n",
           mgi_selfcheck_blocked);
#endif
    /* loopback segments hold one (channel, destination) but for EOFs:
     * most go to the final rings whole */
    printf("lane segments moved whole: %llu\n", f.stat(MGI_GS_WHOLE_SEGS));
    EXPECT_GT(f.stat(MGI_GS_WHOLE_SEGS), 0ull);
    /* lane 1's whole segments: read by the consumer where they are, or
     * copied by a helper (the loopback lane's are always copied) */
    printf("references read: %ld, whole moves copied %llu of %llu\n",
           refs_read, f.stat(MGI_GS_CHUNKS), f.stat(MGI_GS_JOBS));
    if (zcopy) {
        if (seg <= 4096) {
            /* the remote source's 300 tuples fill many such segments (in
             * larger ones they share one with its EOF: walked) */
            EXPECT_GT(refs_read, 0);
        }
        EXPECT_EQ((unsigned long long)refs_read,
                  f.stat(MGI_GS_JOBS) - f.stat(MGI_GS_CHUNKS) -
                  f.stat(MGI_GS_LANE_EOFS));
    } else {
        EXPECT_EQ(0, refs_read);
        EXPECT_EQ(f.stat(MGI_GS_JOBS),
                  f.stat(MGI_GS_CHUNKS) + f.stat(MGI_GS_LANE_EOFS));
    }
    /* every job issued has retired (copied: its final segment is
     * committed only then); a reference retires a round after its
     * consumer read it */
    if (zcopy) {
        EXPECT_GE(f.stat(MGI_GS_JOBS),
                  f.stat(MGI_GS_WHOLE_SEGS) + f.stat(MGI_GS_LANE_EOFS));
    } else {
        EXPECT_EQ(f.stat(MGI_GS_JOBS),
                  f.stat(MGI_GS_WHOLE_SEGS) + f.stat(MGI_GS_LANE_EOFS));
    }
    /* segments of EOFs only (a GPU sorter forwards each EOF so) are jobs
     * without a copy, counted as they retire: the loopback lane's, and
     * the remote source's when it sent its EOF alone */
    printf("EOF segments counted in lane order: %llu, lane passes "
           "walked: %llu\n", f.stat(MGI_GS_LANE_EOFS),
           f.stat(MGI_GS_LANE_PASSES));
    if (!loop_direct) {
        /* both stage rings' EOFs through the loopback lane (alone, or
         * walked with the tuples before them), and the remote one when
         * it came alone */
        EXPECT_EQ((eof_alone ? 2ull : 0ull) + (eof_own ? 1 : 0),
                  f.stat(MGI_GS_LANE_EOFS));
    } else if (eof_own) {
        EXPECT_GT(f.stat(MGI_GS_LANE_EOFS), 0ull);
    }
    for (unsigned r = 0; r < 2 * rings_per_hop; ++r) {
        /* every sort ring of a hop carried segments: a block each (peer:
         * one ring, the hop's lane) */
        if (!peer || ((r % rings_per_hop) == 0)) {
            EXPECT_GT(ring_segs[r], 0) << "sort ring " << r;
        }
    }
    printf("stage segments moved whole: %llu\n", f.stat(MGI_GS_STAGE_WHOLE));
    printf("of those, to the loopback lane: %llu, straight to final "
           "rings: %llu; EOFs counted without the lane: %llu\n",
           f.stat(MGI_GS_LOOP_WHOLE), f.stat(MGI_GS_LOOP_DIRECT),
           f.stat(MGI_GS_LOOP_EOF));
    if (!loop_direct) {
        EXPECT_EQ(0ull, f.stat(MGI_GS_LOOP_EOF));
    } else if (stretch < 0) {
        /* nothing of theirs went through the lane: both stage rings'
         * EOFs counted at once */
        EXPECT_EQ(0ull, f.stat(MGI_GS_LOOP_WHOLE));
        EXPECT_EQ(2ull, f.stat(MGI_GS_LOOP_EOF));
    }
    if (stretch) {
        EXPECT_GT(f.stat(MGI_GS_STAGE_WHOLE), 0ull);
        /* stretches for this endpoint go whole to the loopback lane, or
         * with loop_direct straight to final rings once the lane holds
         * nothing of their stage ring */
        EXPECT_GT(f.stat(MGI_GS_LOOP_WHOLE) + f.stat(MGI_GS_LOOP_DIRECT),
                  0ull);
        if (loop_direct) {
            EXPECT_GT(f.stat(MGI_GS_LOOP_DIRECT), 0ull);
        }
    } else {
        /* every stage segment holds several destinations, but for a
         * stage ring's last one, which its flush closes before the EOF:
         * in tiny segments it may hold one */
        EXPECT_LE(f.stat(MGI_GS_STAGE_WHOLE), 2ull);
    }
    if (!loop_direct) {
        EXPECT_EQ(0ull, f.stat(MGI_GS_LOOP_DIRECT));
    }
    printf("messages placed by the parallel walk: %llu\n",
           f.stat(MGI_GS_RUN_MSGS));
    printf("passes: %llu\n", f.stat(MGI_GS_PASSES));
    if ((fixed_len > 0) && (mgi_msg_size(fixed_len) <= MGI_GPU_RUN_MSG)) {
        EXPECT_GT(f.stat(MGI_GS_RUN_MSGS), (unsigned long long)per_stage);
    } else if (fixed_len &&
               (mgi_msg_size((uint16_t)abs(fixed_len)) * 8 <= seg)) {
        /* batches: walked one after the other, many in a pass */
        EXPECT_LT(f.stat(MGI_GS_RUN_MSGS), (unsigned long long)per_stage);
        EXPECT_LT(f.stat(MGI_GS_PASSES),
                  (unsigned long long)per_stage / 2);
    }
    for (unsigned b = 0; b < 2; ++b) {
        EXPECT_EQ(0u, f.status.blk[b].dropped);
        EXPECT_EQ(0u, f.status.blk[b].eof_errors);
    }
}

} /* namespace */

#endif

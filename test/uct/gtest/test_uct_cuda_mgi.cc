/**
 * cuda_mgi GPU tests at the UCT level: put/get between the GPUs of two
 * processes, every byte checked.
 * See file LICENSE for terms.
 */

#include "pair.h"
#include "uct_side.h"

#include <uct/api/uct.h>
#include <ucs/async/async_fwd.h>
#include <ucs/config/global_opts.h>
#include <ucs/debug/log_def.h>
#include <gig/gig.h>

#include <algorithm>
#include <cstdarg>
#include <memory>
#include <cerrno>
#include <cstring>
#include <unistd.h>

using namespace mgi_test;

namespace {

/* Sizes that cross every threshold: short, bcopy, zcopy, chunking */
const std::vector<size_t> all_sizes = {
    1, 2, 7, 8, 63, 64, 65, 4095, 4096, 8191, 16 * KiB - 1, 16 * KiB,
    16 * KiB + 1, 64 * KiB + 3, 1 * MiB, 1 * MiB + 5, 4 * MiB + 7, 16 * MiB,
    64 * MiB + 1, 256 * MiB, 1 * GiB
};

/* Guard bytes around every target window, and the odd offsets */
const size_t guard = 16, src_offset = 3, dst_offset = 5;


enum class op_kind { zcopy, shortop, bcopy };


struct put_get_case {
    bool                put;
    op_kind             kind;
    std::vector<size_t> sizes;
};


/* rank 0 puts into / gets from rank 1's GPU, one size at a time; the target
 * window sits at an odd offset with guard bytes around it. */
void run_put_get(int rank, peer_link &link, const put_get_case &tc)
{
    size_t buf_size = max_size(tc.sizes) + 2 * guard + dst_offset;
    uct_side side(rank, link, buf_size);
    uint8_t *dbuf   = (uint8_t*)side.buf();

    for (size_t len : tc.sizes) {
        uint64_t seed = len * 2 + tc.put;
        size_t window = len + 2 * guard;

        /* rank 1 lays out [guard | window | guard], rank 0 the source */
        if (rank == 1) {
            fill_device_pattern(dbuf, window + dst_offset, 1000 + seed);
            if (!tc.put) {
                fill_device_pattern(dbuf + guard + dst_offset, len, seed);
            }
        } else {
            fill_device_pattern(dbuf, window + src_offset, 2000 + seed);
            if (tc.put) {
                fill_device_pattern(dbuf + src_offset, len, seed);
            }
        }
        link.barrier();

        if (rank == 0) {
            uint8_t *local  = dbuf + src_offset;
            uint64_t remote = side.remote_buf() + guard + dst_offset;
            ucs_status_t status;

            if (tc.kind == op_kind::zcopy) {
                uct_completion_t comp = make_comp(1);
                side.zcopy(tc.put, local, len, remote, &comp);
                side.wait(&comp, tc.put ? "put_zcopy" : "get_zcopy");
            } else if (tc.kind == op_kind::shortop) {
                /* the short API takes a host buffer or a GPU buffer */
                status = tc.put ?
                         uct_ep_put_short(side.ep(), local, len, remote,
                                          side.rkey()) :
                         uct_ep_get_short(side.ep(), local, len, remote,
                                          side.rkey());
                MGI_CHECK(status == UCS_OK, "%s_short(%zu): %s",
                          tc.put ? "put" : "get", len,
                          ucs_status_string(status));
            } else if (tc.put) {
                /* bcopy packs from host memory */
                std::vector<uint8_t> host(len);
                fill_pattern(host.data(), len, seed);
                struct ctx_t { uint8_t *p; size_t n; } ctx = {host.data(), len};
                ssize_t n = uct_ep_put_bcopy(
                        side.ep(),
                        [](void *dest, void *arg) -> size_t {
                            ctx_t *c = (ctx_t*)arg;
                            memcpy(dest, c->p, c->n);
                            return c->n;
                        }, &ctx, remote, side.rkey());
                MGI_CHECK(n == (ssize_t)len, "put_bcopy(%zu) returned %zd",
                          len, n);
            } else {
                std::vector<uint8_t> host(len);
                uct_completion_t comp = make_comp(1);
                status = uct_ep_get_bcopy(
                        side.ep(),
                        [](void *arg, const void *data, size_t length) {
                            memcpy(arg, data, length);
                        }, host.data(), len, remote, side.rkey(), &comp);
                if (status == UCS_INPROGRESS) {
                    side.wait(&comp, "get_bcopy");
                } else {
                    MGI_CHECK(status == UCS_OK, "get_bcopy(%zu): %s", len,
                              ucs_status_string(status));
                }
                MGI_CUDA(cudaMemcpy(local, host.data(), len,
                                    cudaMemcpyHostToDevice));
            }
            side.flush();

            if (!tc.put) {
                MGI_CHECK(check_device_pattern(local, len, seed, "get data"),
                          "get of %zu bytes delivered wrong bytes", len);
                MGI_CHECK(check_device_pattern(dbuf, src_offset, 2000 + seed,
                                               "guard before get target"),
                          "get of %zu bytes wrote before its target", len);
            }
        }
        link.barrier();

        if ((rank == 1) && tc.put) {
            MGI_CHECK(check_device_pattern(dbuf + guard + dst_offset, len,
                                           seed, "put data"),
                      "put of %zu bytes delivered wrong bytes", len);
            MGI_CHECK(check_device_pattern(dbuf, guard + dst_offset,
                                           1000 + seed, "guard before"),
                      "put of %zu bytes wrote before its target", len);
            std::vector<uint8_t> after(guard);
            MGI_CUDA(cudaMemcpy(after.data(), dbuf + guard + dst_offset + len,
                                guard, cudaMemcpyDeviceToHost));
            for (size_t i = 0; i < guard; ++i) {
                MGI_CHECK(after[i] == pattern_byte(1000 + seed,
                                                   guard + dst_offset + len + i),
                          "put of %zu bytes wrote past its target", len);
            }
        }
        link.barrier();
    }

    if (rank == 0) {
        printf("  %s %s: %zu sizes (%zu B .. %zu B) byte-exact\n",
               tc.put ? "put" : "get",
               (tc.kind == op_kind::zcopy) ? "zcopy" :
               (tc.kind == op_kind::shortop) ? "short" : "bcopy",
               tc.sizes.size(), tc.sizes.front(), tc.sizes.back());
    }
}


std::vector<size_t> sizes_up_to(size_t max)
{
    std::vector<size_t> out;
    for (size_t s : all_sizes) {
        if (s <= max) {
            out.push_back(s);
        }
    }
    return out;
}

} // namespace


/* Every path kind alone and all together: the striping engine's settings
 * for one test process pair */
struct path_config {
    const char                                       *name;
    std::vector<std::pair<std::string, std::string>> env;
    /* what the transport's route line (an info message) must name for
     * the sender's route: e.g. "gpu path via CUDA device 2"; a case that
     * forces a path kind checks that it was taken, not only the bytes */
    std::vector<std::string>                         route = {};
};

/* The sender's route lines, caught with a UCS log handler while a case
 * runs (they are logged once, when the route is first used) */
static std::string route_log;

static ucs_log_func_rc_t
route_log_handler(const char *file, unsigned line, const char *function,
                  ucs_log_level_t level,
                  const ucs_log_component_config_t *comp_conf,
                  const char *message, va_list ap)
{
    char buf[512];
    va_list aq;

    va_copy(aq, ap);
    vsnprintf(buf, sizeof(buf), message, aq);
    va_end(aq);
    if (strstr(buf, "route to GPU") != NULL) {
        route_log += buf;
        route_log += "\n";
    }
    return UCS_LOG_FUNC_RC_CONTINUE;
}

/* Rank 0 (the sender) checks that its route took every expected path */
class route_watch {
public:
    route_watch(int rank, const std::vector<std::string> &expect) :
        m_expect((rank == 0) ? expect : std::vector<std::string>()) {
        if (!m_expect.empty()) {
            /* the children inherit UCS's log level, read before the fork:
             * raise it here for the route lines (ucs_info) */
            m_level = ucs_global_opts.log_component.log_level;
            if (m_level < UCS_LOG_LEVEL_INFO) {
                ucs_global_opts.log_component.log_level = UCS_LOG_LEVEL_INFO;
            }
            route_log.clear();
            ucs_log_push_handler(route_log_handler);
        }
    }
    void check() {
        if (m_expect.empty()) {
            return;
        }
        ucs_log_pop_handler();
        ucs_global_opts.log_component.log_level = m_level;
        for (const auto &e : m_expect) {
            MGI_CHECK(route_log.find(e) != std::string::npos,
                      "the sender's route does not take the %s (its route "
                      "lines: \"%s\")", e.c_str(),
                      route_log.empty() ? "none" : route_log.c_str());
        }
        printf("  route: %s", route_log.c_str());
    }
private:
    std::vector<std::string> m_expect;
    ucs_log_level_t          m_level = UCS_LOG_LEVEL_WARN;
};

void PrintTo(const path_config &c, std::ostream *os) { *os << c.name; }

/* A path config's value MESH4_TOPO stands for a topology file that
 * declares four GPUs in a direct NVLink mesh (the planner's synthetic
 * "h100-mesh4", as `mgi_topo --synthetic h100-mesh4 --write` saves it):
 * the planner then adds relays through the other two GPUs to every pair,
 * which it never chooses on an NVSwitch host. GPUs are matched by CUDA
 * ordinal (it has no PCI ids). Written once per test process, before the
 * pair forks, and removed when the process that wrote it exits. */
#define MESH4_TOPO "@mesh4-topology"

static struct mesh4_file {
    std::string path;
    pid_t       owner = 0;
    ~mesh4_file() {
        if (!path.empty() && (owner == getpid())) {
            unlink(path.c_str());
        }
    }
} mesh4_file;

static std::string mesh4_topology_file()
{
    std::string &path = mesh4_file.path;
    char tmpl[] = "/tmp/cuda_mgi-gtest-mesh4-XXXXXX";
    gig_graph_t *graph;
    ucs_status_t status;
    int fd;

    if (!path.empty()) {
        return path;
    }
    fd = mkstemp(tmpl);
    if (fd < 0) {
        ADD_FAILURE() << "cannot create a topology file " << tmpl << ": "
                      << strerror(errno);
        return path;
    }
    close(fd);
    mesh4_file.owner = getpid();
    path             = tmpl;
    status           = gig_synth_create("h100-mesh4", &graph);
    if (status == UCS_OK) {
        status = gig_topofile_save(graph, tmpl);
        gig_graph_destroy(graph);
    }
    if (status != UCS_OK) {
        ADD_FAILURE() << "cannot write the mesh topology to " << tmpl << ": "
                      << ucs_status_string(status);
    }
    return path;
}

class uct_cuda_mgi_paths : public ::testing::TestWithParam<path_config> {
protected:
    std::vector<std::pair<std::string, std::string>>
    env(std::vector<std::pair<std::string, std::string>> more = {}) const {
        auto e = GetParam().env;
        e.insert(e.end(), more.begin(), more.end());
        for (auto &kv : e) {
            if (kv.second == MESH4_TOPO) {
                kv.second = mesh4_topology_file();
            }
        }
        return e;
    }
};

TEST_P(uct_cuda_mgi_paths, put_zcopy_all_sizes) {
    const std::vector<std::string> expect = GetParam().route;
    MGI_RUN_PAIR([expect](int rank, peer_link &link) {
        route_watch watch(rank, expect);
        run_put_get(rank, link, {true, op_kind::zcopy, all_sizes});
        watch.check();
    }, env());
}

TEST_P(uct_cuda_mgi_paths, get_zcopy_all_sizes) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        run_put_get(rank, link, {false, op_kind::zcopy, all_sizes});
    }, env());
}

/* The harness's own check, which every case's verdict rests on: over a
 * buffer that its threads check in chunks, it finds a wrong byte in the
 * first, a middle and the last chunk, and the first of two */
TEST(uct_cuda_mgi, pattern_check_finds_wrong_bytes) {
    const size_t len = 64 * MiB + 7;
    std::unique_ptr<uint8_t[]> buf(new uint8_t[len]);

    fill_pattern(buf.get(), len, 11);
    ASSERT_EQ(find_wrong_byte(buf.get(), len, 11), SIZE_MAX);
    ASSERT_NE(find_wrong_byte(buf.get(), len, 12), SIZE_MAX);
    for (size_t at : {(size_t)0, len / 2 + 1, len - 1}) {
        buf[at] ^= 0x40;
        EXPECT_EQ(find_wrong_byte(buf.get(), len, 11), at);
        buf[at] ^= 0x40;
    }
    buf[len - 1] ^= 1;
    buf[3 * len / 4] ^= 1;
    EXPECT_EQ(find_wrong_byte(buf.get(), len, 11), 3 * len / 4);
}

TEST(uct_cuda_mgi, put_get_short) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        run_put_get(rank, link, {true, op_kind::shortop,
                                 sizes_up_to(16 * KiB)});
        run_put_get(rank, link, {false, op_kind::shortop,
                                 sizes_up_to(16 * KiB)});
    });
}

TEST(uct_cuda_mgi, put_get_bcopy) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        run_put_get(rank, link, {true, op_kind::bcopy, sizes_up_to(64 * KiB)});
        run_put_get(rank, link, {false, op_kind::bcopy,
                                 sizes_up_to(64 * KiB)});
    });
}

/* Many operations in flight at once, more than the interface admits
 * (UCX_CUDA_MGI_MAX_OUTSTANDING=8): NO_RESOURCE, pending, then all land. */
TEST_P(uct_cuda_mgi_paths, many_outstanding) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        const size_t count = 512, chunk = 64 * KiB + 3;
        const size_t total = count * chunk;
        uct_side side(rank, link, total + 64);
        uint8_t *dbuf = (uint8_t*)side.buf();

        if (rank == 0) {
            fill_device_pattern(dbuf, total, 42);
        } else {
            fill_device_pattern(dbuf, total, 7);
        }
        link.barrier();

        if (rank == 0) {
            uct_completion_t comp = make_comp((int)count);
            for (size_t i = 0; i < count; ++i) {
                side.zcopy(true, dbuf + i * chunk, chunk,
                           side.remote_buf() + i * chunk, &comp);
            }
            side.wait(&comp, "512 outstanding puts");
            side.flush();
        }
        link.barrier();

        if (rank == 1) {
            MGI_CHECK(check_device_pattern(dbuf, total, 42, "many puts"),
                      "512 outstanding puts delivered wrong bytes");
            printf("  512 puts of %zu B in flight (8 admitted at a time): "
                   "byte-exact\n", chunk);
        }
        link.barrier();
    }, env({{"UCX_CUDA_MGI_MAX_OUTSTANDING", "8"}}));
}

/* count windows of chunk bytes, window i at offset + i * stride of the
 * buffer, moved by puts and then by gets: the data (pattern seed + 2 * i
 * + put) on the side it comes from, other bytes on the side it lands on;
 * rank 0 calls post(side, put, op) and waits for them, op(i, comp)
 * posting window i's put or get; the side they land on checks every window */
template <typename P>
static void run_windows(int rank, peer_link &link, size_t count,
                        size_t chunk, size_t stride, size_t offset, int seed,
                        const char *what, P post)
{
    const size_t total = count * stride + offset;
    uct_side side(rank, link, total + 64);
    uint8_t *dbuf = (uint8_t*)side.buf();
    auto window = [&](size_t i) { return dbuf + offset + i * stride; };
    auto data   = [&](size_t i, bool put) { return seed + 2 * (int)i + put; };

    for (bool put : {true, false}) {
        if ((rank == 0) == put) {
            for (size_t i = 0; i < count; ++i) {
                fill_device_pattern(window(i), chunk, data(i, put));
            }
        } else {
            fill_device_pattern(dbuf, total, seed - 1 - rank);
        }
        link.barrier();
        if (rank == 0) {
            post(side, put, [&](size_t i, uct_completion_t *comp) {
                side.zcopy(put, window(i), chunk,
                           side.remote_buf() + (window(i) - dbuf), comp);
            });
            side.flush();
        }
        link.barrier();
        if ((rank == 1) == put) {
            for (size_t i = 0; i < count; ++i) {
                MGI_CHECK(check_device_pattern(window(i), chunk,
                                               data(i, put), what),
                          "%s: %s %zu of %zu B delivered wrong bytes", what,
                          put ? "put" : "get", i, chunk);
            }
            printf("  %s: %zu %s of %zu B byte-exact\n", what, count,
                   put ? "puts" : "gets", chunk);
        }
        link.barrier();
    }
}

/* Many puts and gets of mid sizes in flight without a limit, each into
 * its own window at an odd offset; with UCX_CUDA_MGI_BATCH=y (the default)
 * the transport posts the copies that arrive while others are in flight
 * together, and with n (the "unbatched" paths) one by one: each operation
 * still completes on its own and lands byte for byte */
TEST_P(uct_cuda_mgi_paths, batched_ops) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        const size_t count = 256, chunk = 256 * KiB + 3;

        run_windows(rank, link, count, chunk, chunk + 13, 1, 300,
                    "all in flight at once",
                    [&](uct_side &side, bool put, auto op) {
            uct_completion_t comp = make_comp((int)count);

            for (size_t i = 0; i < count; ++i) {
                op(i, &comp);
            }
            side.wait(&comp, put ? "256 puts" : "256 gets");
        });
    }, env());
}

/* A window of operations with a progress call after each, as
 * ucx_perftest and UCP's rendezvous drive a transport: the copies that
 * arrive while others are in flight wait to be posted together, and a
 * progress call posts them once enough wait or the engine runs short.
 * Every operation completes on its own completion and lands byte for
 * byte; none is left waiting when the window drains. */
TEST_P(uct_cuda_mgi_paths, window_progressed) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        const size_t count = 384, window = 32, chunk = 1 * MiB + 5;

        run_windows(rank, link, count, chunk, chunk + 11, 3, 900,
                    "32 in flight, progress after each",
                    [&](uct_side &side, bool, auto op) {
            std::vector<uct_completion_t> comp(count);
            size_t done = 0, posted = 0;
            double deadline = now_sec() + MGI_TEST_TIMEOUT_SEC;
            auto landed = [&]() {
                while ((done < posted) && (comp[done].count == 0)) {
                    MGI_CHECK(comp[done].status == UCS_OK,
                              "operation %zu completed with %s", done,
                              ucs_status_string(comp[done].status));
                    ++done;
                }
            };

            for (size_t i = 0; i < count; ++i) {
                while (i - done >= window) {
                    side.progress();
                    landed();
                    MGI_CHECK(now_sec() < deadline, "a window of %zu "
                              "operations did not drain in %.0f s", window,
                              MGI_TEST_TIMEOUT_SEC);
                }
                comp[i] = make_comp(1);
                op(i, &comp[i]);
                posted = i + 1;
                side.progress();
                landed();
            }
            while (done < count) {
                side.progress();
                landed();
                MGI_CHECK(now_sec() < deadline, "%zu of %zu operations left "
                          "after %.0f s of progress", count - done, count,
                          MGI_TEST_TIMEOUT_SEC);
            }
        });
    }, env());
}

/* Both GPUs put into each other at the same time */
TEST_P(uct_cuda_mgi_paths, both_directions_at_once) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        std::vector<size_t> sizes = {1, 4097, 1 * MiB + 1, 64 * MiB + 3,
                                     256 * MiB};
        size_t half = max_size(sizes) + 64;
        uct_side side(rank, link, 2 * half);
        uint8_t *dbuf = (uint8_t*)side.buf();

        for (size_t len : sizes) {
            /* source: the first half; target of the peer: the second */
            fill_device_pattern(dbuf + 1, len, len * 10 + rank);
            link.barrier();

            uct_completion_t comp = make_comp(1);
            side.zcopy(true, dbuf + 1, len, side.remote_buf() + half + 7,
                       &comp);
            side.wait(&comp, "bidirectional put");
            side.flush();
            link.barrier();

            MGI_CHECK(check_device_pattern(dbuf + half + 7, len,
                                           len * 10 + (1 - rank),
                                           "bidirectional"),
                      "bidirectional put of %zu bytes delivered wrong bytes",
                      len);
            link.barrier();
        }
        if (rank == 0) {
            printf("  both directions at once: %zu sizes byte-exact\n",
                   sizes.size());
        }
    }, env());
}

/* A fence orders copies that striping lets complete in any order: a
 * large put (striped where two GPUs allow), a fence, a small put over the
 * start of the same window; the small one's bytes must win. Without the
 * fence the small direct copy may land before the large one's staged
 * chunks, which then overwrite it. The put after the fence waits
 * (UCS_ERR_NO_RESOURCE) while the large copy is in flight. Once with
 * uct_ep_fence, once with uct_iface_fence. */
TEST(uct_cuda_mgi, fence_orders_streams) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        const size_t big = 64 * MiB, small = 1 * MiB + 3;
        const unsigned rounds = 8;
        uct_side side(rank, link, big + small + 64);
        uint8_t *dbuf = (uint8_t*)side.buf();

        for (unsigned r = 0; r < 2 * rounds; ++r) {
            bool iface_fence = (r >= rounds);
            /* source: [big pattern A][small pattern B] */
            if (rank == 0) {
                fill_device_pattern(dbuf, big, 500 + r);
                fill_device_pattern(dbuf + big, small, 900 + r);
            } else {
                fill_device_pattern(dbuf, big, 1);
            }
            link.barrier();

            if (rank == 0) {
                uct_completion_t comp = make_comp(2);
                side.zcopy(true, dbuf, big, side.remote_buf(), &comp);
                MGI_UCS(iface_fence ? uct_iface_fence(side.iface(), 0) :
                                      uct_ep_fence(side.ep(), 0));
                unsigned waited = side.zcopy(true, dbuf + big, small,
                                             side.remote_buf(), &comp);
                side.wait(&comp, "fenced puts");
                side.flush();
                MGI_CHECK(waited > 0, "round %u: the put after a%s fence "
                          "started while the put before it was in flight", r,
                          iface_fence ? "n iface" : "n ep");
            }
            link.barrier();

            if (rank == 1) {
                MGI_CHECK(check_device_pattern(dbuf, small, 900 + r,
                                               "put after the fence"),
                          "round %u (%s fence): the put before the fence "
                          "overwrote the one after it", r,
                          iface_fence ? "iface" : "ep");
            }
            link.barrier();
        }
        if (rank == 1) {
            printf("  %u rounds of put, fence, put over it (ep and iface "
                   "fences): the later put's bytes won\n", 2 * rounds);
        }
    });
}

/* A flush completes once the operations posted before it have, not when
 * the endpoint has nothing in flight: a put of 1 MiB, a flush with a
 * completion, then 64 puts of 64 MiB (tens of ms of copies) before any
 * progress. The flush's completion must come while later puts are still
 * in flight; then every byte is checked. */
struct flush_probe {
    uct_completion_t comp;
    uct_completion_t *later;
    int              later_left = -1;   /* later puts in flight then */
};

static void flush_probe_cb(uct_completion_t *self)
{
    flush_probe *p = (flush_probe*)self;
    p->later_left  = p->later->count;
}

TEST(uct_cuda_mgi, flush_waits_only_for_earlier) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        const size_t small = 1 * MiB, big = 64 * MiB;
        const int nbig = 64;
        uct_side side(rank, link, small + big + 64);
        uint8_t *dbuf = (uint8_t*)side.buf();

        fill_device_pattern(dbuf, small + big, (rank == 0) ? 61 : 62);
        link.barrier();
        if (rank == 0) {
            uct_completion_t first = make_comp(1), later = make_comp(nbig);
            flush_probe probe;
            ucs_status_t status;

            probe.comp.func   = flush_probe_cb;
            probe.comp.count  = 1;
            probe.comp.status = UCS_OK;
            probe.later       = &later;
            side.zcopy(true, dbuf, small, side.remote_buf(), &first);
            status = uct_ep_flush(side.ep(), 0, &probe.comp);
            MGI_CHECK(status == UCS_INPROGRESS, "flush after a put in flight: "
                      "%s (want UCS_INPROGRESS)", ucs_status_string(status));
            for (int i = 0; i < nbig; ++i) {
                side.zcopy(true, dbuf + small, big, side.remote_buf() + small,
                           &later);
            }
            side.wait(&probe.comp, "the flush after the first put");
            MGI_CHECK(probe.later_left > 0, "the flush completed only once "
                      "all %d later puts had landed (it waits for the put "
                      "before it alone)", nbig);
            side.wait(&first, "the first put");
            side.wait(&later, "the later puts");
            side.flush();
            printf("  a flush completed with %d of %d later puts of %zu MiB "
                   "still in flight\n", probe.later_left, nbig, big >> 20);
        }
        link.barrier();
        if (rank == 1) {
            MGI_CHECK(check_device_pattern(dbuf, small + big, 61, "puts"),
                      "the puts around a flush delivered wrong bytes");
        }
        link.barrier();
    });
}

/* The MD does not ask for local memory handles (no UCT_MD_FLAG_NEED_MEMH),
 * and UCP 1.13's RMA then hands put_zcopy / get_zcopy whatever memh its
 * request object held before: a stale pointer, or garbage that is no
 * address at all. The transport must not read it. Puts and gets with
 * UCT_MEM_HANDLE_NULL and with a non-canonical memh, direct and striped
 * sizes, every byte checked. */
TEST(uct_cuda_mgi, zcopy_ignores_memh) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        const std::vector<size_t> sizes = {4096, 1 * MiB + 1, 64 * MiB + 3};
        const uct_mem_h bad[] = {UCT_MEM_HANDLE_NULL,
                                 (uct_mem_h)(uintptr_t)0xdead5eedbadc0ffeull};
        size_t total    = max_size(sizes) + 64;
        uct_side side(rank, link, total);
        uint8_t *dbuf   = (uint8_t*)side.buf();
        unsigned checks = 0;

        for (uct_mem_h memh : bad) {
            for (size_t len : sizes) {
                for (bool put : {true, false}) {
                    uint64_t seed = len * 4 + put * 2 + (memh != NULL);
                    /* the data: rank 0's buffer for a put, rank 1's for a
                     * get; the other side starts with other bytes */
                    fill_device_pattern(dbuf, len, ((rank == 0) == put) ?
                                                   seed : 77 + rank);
                    link.barrier();
                    if (rank == 0) {
                        uct_completion_t comp = make_comp(1);
                        side.zcopy(put, dbuf, len, side.remote_buf(), &comp,
                                   memh);
                        side.wait(&comp, put ? "put_zcopy" : "get_zcopy");
                        side.flush();
                        if (!put) {
                            MGI_CHECK(check_device_pattern(dbuf, len, seed,
                                                           "get"),
                                      "get of %zu bytes with memh %p "
                                      "delivered wrong bytes", len, memh);
                        }
                    }
                    link.barrier();
                    if ((rank == 1) && put) {
                        MGI_CHECK(check_device_pattern(dbuf, len, seed, "put"),
                                  "put of %zu bytes with memh %p delivered "
                                  "wrong bytes", len, memh);
                    }
                    link.barrier();
                    ++checks;
                }
            }
        }
        if (rank == 0) {
            printf("  %u puts and gets with a null and a garbage memh: "
                   "byte-exact\n", checks);
        }
    });
}

/* Relays go through CUDA device 0: for the sender on GPU 0 that is its own
 * GPU (the two hops of the relay executor, as far as 2 GPUs allow) */
INSTANTIATE_TEST_SUITE_P(
    paths, uct_cuda_mgi_paths,
    ::testing::Values(
        path_config{"default", {}},
        path_config{"direct", {{"UCX_CUDA_MGI_PATHS", "direct"}}},
        /* direct copies that arrive while others are in flight posted
         * one by one, not together as by default */
        path_config{"unbatched", {{"UCX_CUDA_MGI_BATCH", "n"}}},
        /* the striped cases need two GPUs: between processes of one GPU
         * every copy is direct (MGI_TEST_NEEDS_GPUS) */
        path_config{"host_alone", {{"UCX_CUDA_MGI_PATHS", "host"},
                                   {MGI_TEST_NEEDS_GPUS, "2"}},
                    {"host path via CUDA device 1"}},
        path_config{"gpu_relay_alone", {{"UCX_CUDA_MGI_PATHS", "gpu"},
                                        {"UCX_CUDA_MGI_RELAY_GPUS", "0"},
                                        {MGI_TEST_NEEDS_GPUS, "2"}},
                    {"gpu path via CUDA device 0"}},
        path_config{"all_paths", {{"UCX_CUDA_MGI_PATHS", "direct,host,gpu"},
                                  {MGI_TEST_NEEDS_GPUS, "2"},
                                  {"UCX_CUDA_MGI_RELAY_GPUS", "0"},
                                  {"UCX_CUDA_MGI_MULTIPATH_THRESH", "1"},
                                  {"UCX_CUDA_MGI_CHUNK_SIZE", "64k"},
                                  {"UCX_CUDA_MGI_STAGE_BUFS", "4"}},
                    {"host path via CUDA device 1",
                     "gpu path via CUDA device 0"}},
        /* a real relay through a third GPU: GPU 0 -> GPU 2 -> GPU 1,
         * nothing else (without `direct` every byte takes the relay) */
        path_config{"gpu_relay_third", {{"UCX_CUDA_MGI_PATHS", "gpu"},
                                        {"UCX_CUDA_MGI_RELAY_GPUS", "2"},
                                        {MGI_TEST_NEEDS_GPUS, "3"}},
                    {"gpu path via CUDA device 2"}},
        /* the planner's own relays: a topology that declares a direct mesh
         * of four GPUs gives every pair relays through the other two,
         * striped between them alone, then with every path kind */
        path_config{"mesh_relays_alone", {{"UCX_CUDA_MGI_PATHS", "gpu"},
                                          {"UCX_CUDA_MGI_TOPO_FILE",
                                           MESH4_TOPO},
                                          {"UCX_CUDA_MGI_MULTIPATH_THRESH",
                                           "1"},
                                          {MGI_TEST_NEEDS_GPUS, "4"}},
                    {"gpu path via CUDA device 2",
                     "gpu path via CUDA device 3"}},
        path_config{"mesh_all_paths", {{"UCX_CUDA_MGI_PATHS",
                                        "direct,host,gpu"},
                                       {"UCX_CUDA_MGI_TOPO_FILE", MESH4_TOPO},
                                       {"UCX_CUDA_MGI_MULTIPATH_THRESH", "1"},
                                       {"UCX_CUDA_MGI_CHUNK_SIZE", "64k"},
                                       {"UCX_CUDA_MGI_STAGE_BUFS", "4"},
                                       {MGI_TEST_NEEDS_GPUS, "4"}},
                    {"host path via CUDA device 1",
                     "gpu path via CUDA device 2",
                     "gpu path via CUDA device 3"}},
        /* the default paths (direct + host) striped from the first byte,
         * many chunks a part through a ring of four buffers */
        path_config{"host_chunks", {{"UCX_CUDA_MGI_MULTIPATH_THRESH", "1"},
                                    {MGI_TEST_NEEDS_GPUS, "2"},
                                    {"UCX_CUDA_MGI_CHUNK_SIZE", "64k"},
                                    {"UCX_CUDA_MGI_STAGE_BUFS", "4"}},
                    {"host path via CUDA device 1"}}),
    [](const ::testing::TestParamInfo<path_config> &info) {
        return std::string(info.param.name);
    });

/* The MD's mem_query (UCP's memory detection may ask it): CUDA memory with
 * its allocation and device; host memory refused, for the next MD */
TEST(uct_cuda_mgi, md_mem_query) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        const size_t size = 1 * MiB;
        uct_side side(rank, link, size);
        uct_md_mem_attr_t attr = {};
        std::vector<char> host(4096);

        attr.field_mask = UCT_MD_MEM_ATTR_FIELD_MEM_TYPE |
                          UCT_MD_MEM_ATTR_FIELD_BASE_ADDRESS |
                          UCT_MD_MEM_ATTR_FIELD_ALLOC_LENGTH |
                          UCT_MD_MEM_ATTR_FIELD_SYS_DEV;
        MGI_UCS(side.mem_query((char*)side.buf() + 100, 1000, &attr));
        MGI_CHECK((attr.mem_type == UCS_MEMORY_TYPE_CUDA) &&
                  (attr.base_address == side.buf()) &&
                  (attr.alloc_length >= size) &&
                  (attr.sys_dev != UCS_SYS_DEVICE_ID_UNKNOWN),
                  "mem_query of GPU%d memory: type %s, base %p (want %p), "
                  "length %zu, sys_dev %u", rank,
                  ucs_memory_type_names[attr.mem_type], attr.base_address,
                  side.buf(), attr.alloc_length, (unsigned)attr.sys_dev);
        MGI_CHECK(side.mem_query(host.data(), host.size(), &attr) ==
                  UCS_ERR_INVALID_ADDR, "mem_query took host memory");
        link.barrier();
    });
}

/* Bad input: a put outside the peer's allocation is refused, nothing sent */
TEST(uct_cuda_mgi, out_of_range_is_refused) {
    MGI_RUN_PAIR([](int rank, peer_link &link) {
        const size_t size = 1 * MiB;
        uct_side side(rank, link, size);
        if (rank == 0) {
            uct_completion_t comp = make_comp(1);
            uct_iov_t iov = {side.buf(), 4096, nullptr, 0, 1};
            ucs_status_t status = uct_ep_put_zcopy(
                    side.ep(), &iov, 1, side.remote_buf() + size - 100,
                    side.rkey(), &comp);
            MGI_CHECK(status == UCS_ERR_INVALID_PARAM,
                      "put past the end returned %s",
                      ucs_status_string(status));
            status = uct_ep_put_short(side.ep(), side.buf(), 8,
                                      side.remote_buf() - 8, side.rkey());
            MGI_CHECK(status == UCS_ERR_INVALID_PARAM,
                      "put before the start returned %s",
                      ucs_status_string(status));
        }
        link.barrier();
    }, {{"UCX_LOG_LEVEL", "fatal"}});
}

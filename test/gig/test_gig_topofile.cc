/*
 * Topology files: round trip of every synthetic topology, a table of
 * malformed files each rejected with its line and reason, and random
 * mutations of a valid file that must never crash the parser, merged links
 * held to the limits of one, a write of whatever was read that reads back
 * to the same text, loading in linear time, and only regular files read.
 */
#include <gig.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace {

std::string to_text(const gig_graph_t *g)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    EXPECT_EQ(UCS_OK, gig_topofile_write(g, f));
    fclose(f);
    std::string s(buf, len);
    free(buf);
    return s;
}

ucs_status_t parse(const std::string &text, gig_graph_t **g, std::string *err)
{
    char errbuf[512] = "";
    ucs_status_t st = gig_topofile_parse(text.data(), text.size(), "t.topo",
                                         g, errbuf, sizeof(errbuf));
    *err = errbuf;
    return st;
}

const char *valid =
    "gig-topology 1\n"
    "# two GPUs on an NVSwitch\n"
    "vertex cpu0 cpu server=0 numa=0\n"
    "vertex nvsw nvswitch server=0\n"
    "vertex gpu0 gpu server=0 cuda=0 pci=0000:18:00.0 model=H200\n"
    "vertex gpu1 gpu server=0 cuda=1 pci=0000:2a:00.0 model=H200\n"
    "vertex nic0 nic server=0\n"
    "vertex net net\n"
    "link gpu0 nvsw nvlink 18 478\n"
    "link gpu1 nvsw nvlink 18 478\n"
    "link gpu0 cpu0 pcie 1 55 52.5\n"
    "link gpu1 cpu0 pcie 1 55\n"
    "link nic0 cpu0 pcie 1 26\n"
    "link nic0 net net 1 50\n";

} // namespace

TEST(gig_topofile, valid_file_parses)
{
    gig_graph_t *g;
    std::string err;

    ASSERT_EQ(UCS_OK, parse(valid, &g, &err)) << err;
    EXPECT_EQ(6, g->nv);
    EXPECT_EQ(12, g->ne);
    EXPECT_EQ(1, gig_graph_find_cuda(g, 1) - gig_graph_find_cuda(g, 0));
    EXPECT_EQ(gig_graph_find_name(g, "gpu1"),
              gig_graph_find_pci(g, "2a:00.0"));
    EXPECT_DOUBLE_EQ(52.5, g->e[gig_graph_edge(g, gig_graph_find_name(g,
                     "cpu0"), gig_graph_find_name(g, "gpu0"))].capacity);
    EXPECT_STREQ("H200", g->v[gig_graph_find_name(g, "gpu0")].model);
    gig_graph_destroy(g);
}

/* A NIC's declared UCX devices (dev=): taken as they are, whatever sysfs
 * holds, and written back */
TEST(gig_topofile, nic_dev_declared)
{
    const std::string text = "gig-topology 1\n"
        "vertex cpu0 cpu server=0 numa=0\n"
        "vertex nic0 nic server=0 pci=0000:18:00.0 dev=mgi0\n"
        "vertex nic1 nic server=0 dev=mlx5_0:1,mlx5_1:1\n"
        "vertex nic2 nic server=0\n"
        "vertex net net\n"
        "link nic0 cpu0 pcie 1 26\nlink nic1 cpu0 pcie 1 26\n"
        "link nic2 cpu0 pcie 1 26\nlink nic0 net net 1 50\n"
        "link nic1 net net 1 50\nlink nic2 net net 1 50\n";
    gig_graph_t *g, *g2;
    std::string err;
    char buf[64];

    ASSERT_EQ(UCS_OK, parse(text, &g, &err)) << err;
    int n0 = gig_graph_find_name(g, "nic0"), n1 = gig_graph_find_name(g,
        "nic1"), n2 = gig_graph_find_name(g, "nic2");
    EXPECT_EQ(1, gig_nic_ucx_devices(g, n0, "/nonexistent-sysfs", buf,
                                     sizeof(buf)));
    EXPECT_STREQ("mgi0", buf) << "dev= before the PCI function's devices";
    EXPECT_EQ(2, gig_nic_ucx_devices(g, n1, NULL, buf, sizeof(buf)));
    EXPECT_STREQ("mlx5_0:1,mlx5_1:1", buf);
    EXPECT_EQ(0, gig_nic_ucx_devices(g, n1, NULL, buf, 8))
        << "a buffer too short for the declaration takes none of it";
    EXPECT_EQ(0, gig_nic_ucx_devices(g, n2, "/nonexistent-sysfs", buf,
                                     sizeof(buf)));
    std::string out = to_text(g);
    EXPECT_NE(std::string::npos, out.find("pci=0000:18:00.0 dev=mgi0\n"))
        << out;
    ASSERT_EQ(UCS_OK, parse(out, &g2, &err)) << err;
    EXPECT_EQ(out, to_text(g2));
    gig_graph_destroy(g2);
    gig_graph_destroy(g);
}

class gig_topofile_roundtrip : public ::testing::TestWithParam<std::string> {};

TEST_P(gig_topofile_roundtrip, write_parse_same_graph_same_plan)
{
    gig_graph_t *g, *h;
    gig_plan_t *pg, *ph;
    const gig_pathset_t *a, *b;
    std::string err;

    ASSERT_EQ(UCS_OK, gig_synth_create(GetParam().c_str(), &g));
    std::string text = to_text(g);
    ASSERT_EQ(UCS_OK, parse(text, &h, &err)) << err;
    ASSERT_EQ(g->nv, h->nv);
    ASSERT_EQ(g->ne, h->ne);
    for (int i = 0; i < g->nv; ++i) {
        EXPECT_STREQ(g->v[i].name, h->v[i].name);
        EXPECT_EQ(g->v[i].type, h->v[i].type);
        EXPECT_EQ(g->v[i].server, h->v[i].server);
        EXPECT_EQ(g->v[i].cuda_dev, h->v[i].cuda_dev);
    }
    for (int i = 0; i < g->ne; ++i) {
        int e = gig_graph_edge(h, g->e[i].src, g->e[i].dst);
        ASSERT_NE(GIG_NONE, e);
        EXPECT_NEAR(g->e[i].capacity, h->e[e].capacity, 1e-6);
        EXPECT_EQ(g->e[i].link, h->e[e].link);
    }
    EXPECT_EQ(text, to_text(h).replace(0, 0, ""))
        << "second write differs";
    ASSERT_EQ(UCS_OK, gig_plan_create(g, &pg));
    ASSERT_EQ(UCS_OK, gig_plan_create(h, &ph));
    int g0 = gig_graph_find_cuda(g, 0), n = 0;
    for (int t = 0; (t < g->nv) && (n < 40); ++t) {
        if ((g->v[t].type == GIG_VTX_GPU) && (t != g0)) {
            ASSERT_EQ(UCS_OK, gig_plan_paths(pg, g0, t, &a));
            ASSERT_EQ(UCS_OK, gig_plan_paths(ph, g0, t, &b));
            EXPECT_NEAR(a->total, b->total, 1e-6);
            EXPECT_EQ(a->npaths, b->npaths);
            ++n;
        }
    }
    gig_plan_destroy(pg);
    gig_plan_destroy(ph);
    gig_graph_destroy(g);
    gig_graph_destroy(h);
}

INSTANTIATE_TEST_SUITE_P(synthetic, gig_topofile_roundtrip,
                         ::testing::Values("pcie-2sw", "2socket-xpi", "dgx1",
                                           "h100-mesh4", "dgx-a100",
                                           "pcie-nvbridge", "ac922",
                                           "2socket-nvbridge",
                                           "hgx-h100", "hgx-h200", "h200x2",
                                           "multi-eth", "multi-rdma",
                                           "multi-nvswitch-rdma",
                                           "cluster100"));

/* ------------------------------------------------------ malformed files */

struct bad_case {
    const char *what;
    std::string text;
    unsigned    line;
    const char  *reason;
};

static const std::string H = "gig-topology 1\n";
static const std::string VV = H + "vertex a gpu server=0\n"
                                  "vertex b gpu server=0\n";

static std::vector<bad_case> bad_cases()
{
    return {
        {"empty file", "", 1, "empty file"},
        {"only comments", "# nothing\n\n", 2, "empty file"},
        {"no header", "vertex a gpu server=0\n", 1, "expected 'gig-topology"},
        {"wrong version", "gig-topology 2\n", 1, "unsupported version"},
        {"header only", H, 1, "no vertices"},
        {"unknown keyword", VV + "edge a b pcie 1 10\n", 4,
         "unknown keyword 'edge'"},
        {"unknown vertex type", H + "vertex a tpu server=0\n", 2,
         "unknown type 'tpu'"},
        {"vertex missing type", H + "vertex a\n", 2, "missing type"},
        {"vertex missing name", H + "vertex\n", 2, "missing name"},
        {"vertex missing server", H + "vertex a gpu\n", 2,
         "missing server"},
        {"bad server number", H + "vertex a gpu server=x1\n", 2,
         "bad server 'x1'"},
        {"negative server", H + "vertex a gpu server=-3\n", 2,
         "bad server '-3'"},
        {"huge server", H + "vertex a gpu server=99999999999999999999\n", 2,
         "bad server"},
        {"bad cuda", H + "vertex a gpu server=0 cuda=1.5\n", 2, "bad cuda"},
        {"cuda on a cpu", H + "vertex a cpu server=0 cuda=0\n", 2,
         "cuda= on a cpu"},
        {"duplicate cuda", H + "vertex a gpu server=0 cuda=0\n"
                               "vertex b gpu server=0 cuda=0\n", 3,
         "cuda=0 already"},
        {"unknown attribute", H + "vertex a gpu server=0 color=red\n", 2,
         "unknown attribute 'color=red'"},
        {"attribute not key=value", H + "vertex a gpu server=0 fast\n", 2,
         "not key=value"},
        {"duplicate id", VV + "vertex a cpu server=0\n", 4,
         "duplicate name"},
        {"name too long", H + "vertex " + std::string(40, 'n') +
         " gpu server=0\n", 2, "name longer"},
        {"net with server", H + "vertex n net server=0\n", 2,
         "takes no server"},
        {"two networks", H + "vertex n net\nvertex m net\n", 3,
         "second network"},
        {"link unknown vertex", VV + "link a c pcie 1 10\n", 4,
         "unknown vertex 'c'"},
        {"link to itself", VV + "link a a pcie 1 10\n", 4, "to itself"},
        {"link unknown type", VV + "link a b qpi 1 10\n", 4,
         "unknown type 'qpi'"},
        {"link missing capacity", VV + "link a b pcie 1\n", 4,
         "missing capacity"},
        {"truncated link line", VV + "link a b", 4, "missing link type"},
        {"link missing everything", VV + "link\n", 4, "missing first end"},
        {"bad count", VV + "link a b pcie many 10\n", 4, "bad count 'many'"},
        {"zero count", VV + "link a b pcie 0 10\n", 4, "bad count '0'"},
        {"bad capacity", VV + "link a b pcie 1 10GB\n", 4,
         "bad capacity '10GB'"},
        {"negative capacity", VV + "link a b pcie 1 -5\n", 4,
         "negative capacity"},
        {"negative back capacity", VV + "link a b pcie 1 5 -1\n", 4,
         "negative capacity '-1'"},
        {"nan capacity", VV + "link a b pcie 1 nan\n", 4, "bad capacity"},
        {"inf capacity", VV + "link a b pcie 1 inf\n", 4, "out of range"},
        {"huge capacity", VV + "link a b pcie 1 1e300\n", 4, "out of range"},
        {"very long number", VV + "link a b pcie 1 " + std::string(60, '9') +
         "\n", 4, "out of range"},
        {"extra field", VV + "link a b pcie 1 5 5 5\n", 4, "unexpected '5'"},
        {"across servers", H + "vertex a gpu server=0\n"
                               "vertex b gpu server=1\nlink a b pcie 1 5\n",
         4, "servers meet only through the network"},
        {"net to a gpu", VV + "vertex n net\nlink a n net 1 5\n", 5,
         "links only to NICs"},
        {"dev on a gpu", H + "vertex a gpu server=0 dev=eth0\n", 2,
         "dev= on a gpu (NICs only)"},
        {"empty dev", H + "vertex n nic server=0 dev=\n", 2, "bad dev ''"},
        {"dev with a slash", H + "vertex n nic server=0 dev=../eth0\n", 2,
         "bad dev '../eth0'"},
        {"dev too long", H + "vertex n nic server=0 dev=" +
         std::string(64, 'e') + "\n", 2, "under 64 characters"},
        {"binary garbage", H + std::string("vertex \x01\x02\xff", 10) + "\n",
         2, "binary byte"},
        {"NUL byte", H + std::string("vertex a\0 gpu", 13) + "\n", 2,
         "binary byte 0x00"},
        {"too many fields", VV + "link a b pcie 1 1 1 1 1 1 1 1 1 1 1 1 1 1 "
         "1\n", 4, "more than 16 fields"},
        {"line too long", VV + std::string(2000, 'x') + "\n", 4,
         "line longer"},
    };
}

void PrintTo(const bad_case &c, std::ostream *os)
{
    *os << c.what;
}

class gig_topofile_bad : public ::testing::TestWithParam<bad_case> {};

TEST_P(gig_topofile_bad, rejected_with_line_and_reason)
{
    const bad_case &c = GetParam();
    gig_graph_t *g = (gig_graph_t*)0x1;
    std::string err;

    EXPECT_EQ(UCS_ERR_INVALID_PARAM, parse(c.text, &g, &err));
    EXPECT_EQ((gig_graph_t*)0x1, g) << "output written on failure";
    std::string where = "t.topo:" + std::to_string(c.line) + ": ";
    EXPECT_EQ(0u, err.find(where)) << c.what << ": got '" << err << "'";
    EXPECT_NE(std::string::npos, err.find(c.reason))
        << c.what << ": got '" << err << "'";
    /* the table printed by make check */
    printf("  %-26s -> %s\n", c.what, err.c_str());
}

INSTANTIATE_TEST_SUITE_P(cases, gig_topofile_bad,
                         ::testing::ValuesIn(bad_cases()),
                         [](const ::testing::TestParamInfo<bad_case> &i) {
                             std::string s = i.param.what;
                             for (char &c : s) {
                                 if (!isalnum((unsigned char)c)) {
                                     c = '_';
                                 }
                             }
                             return s;
                         });

TEST(gig_topofile, load_missing_file_and_save)
{
    gig_graph_t *g = NULL, *h = NULL;
    char path[] = "/tmp/gig_topo_XXXXXX";
    int fd = mkstemp(path);

    ASSERT_GE(fd, 0);
    close(fd);
    EXPECT_EQ(UCS_ERR_NO_ELEM,
              gig_topofile_load("/nonexistent/gig.topo", &g));
    EXPECT_EQ(NULL, g);
    ASSERT_EQ(UCS_OK, gig_synth_create("dgx1", &g));
    ASSERT_EQ(UCS_OK, gig_topofile_save(g, path));
    ASSERT_EQ(UCS_OK, gig_topofile_load(path, &h));
    EXPECT_EQ(g->ne, h->ne);
    gig_graph_destroy(h);
    ASSERT_EQ(UCS_OK, gig_graph_load(path, "dgx-9000", &h));
    EXPECT_EQ(g->nv, h->nv);
    gig_graph_destroy(g);
    gig_graph_destroy(h);
    unlink(path);
}

/* Random mutations of a valid file: never a crash, and either a graph or a
 * "<name>:<line>: reason" message */
TEST(gig_topofile, fuzz_mutations_never_crash)
{
    gig_graph_t *g0;
    ASSERT_EQ(UCS_OK, gig_synth_create("multi-rdma", &g0));
    const std::string base = to_text(g0) + valid + "\n";
    gig_graph_destroy(g0);
    const char alphabet[] = " \t\n#=.-+e0123456789abcdefxyz:";
    std::mt19937 rng(12345);
    int ok = 0, rejected = 0;

    for (int it = 0; it < 20000; ++it) {
        std::string s = base;
        int nmut = 1 + rng() % 6;
        for (int m = 0; m < nmut && !s.empty(); ++m) {
            size_t pos = rng() % s.size();
            switch (rng() % 7) {
            case 0: s[pos] = (char)(rng() & 0xff); break;
            case 1: s[pos] = alphabet[rng() % (sizeof(alphabet) - 1)]; break;
            case 2: s.erase(pos, 1 + rng() % 20); break;
            case 3: s.insert(pos, 1, alphabet[rng() % (sizeof(alphabet) - 1)]);
                    break;
            case 4: s.resize(pos); break;
            case 5: { size_t p2 = rng() % s.size();
                      s.insert(pos, s.substr(p2, rng() % 80)); break; }
            default: s.insert(pos, std::string(rng() % 3000, 'x')); break;
            }
        }
        gig_graph_t *g = NULL;
        std::string err;
        if (parse(s, &g, &err) == UCS_OK) {
            ASSERT_NE((gig_graph_t*)NULL, g);
            gig_plan_t *p;
            ASSERT_EQ(UCS_OK, gig_plan_create(g, &p));
            const gig_pathset_t *ps;
            if (g->nv >= 2) {
                ASSERT_EQ(UCS_OK, gig_plan_paths(p, 0, g->nv - 1, &ps));
            }
            gig_plan_destroy(p);
            gig_graph_destroy(g);
            ++ok;
        } else {
            ASSERT_EQ(0u, err.find("t.topo:")) << err;
            ++rejected;
        }
    }
    printf("  fuzz: 20000 mutated files, %d parsed, %d rejected\n", ok,
           rejected);
    EXPECT_GT(rejected, 1000);
}

/* ------------------------------------- merged links and the round trip */

/* Parallel links add up; their sums are held to one line's limits, so that
 * the writer never writes a merged link the reader refuses */
TEST(gig_topofile, merged_links_held_to_one_lines_limits)
{
    const std::string two = H + "vertex g0 gpu server=0\n"
                                "vertex g1 gpu server=0\n";
    gig_graph_t *g = NULL, *h = NULL;
    std::string err;

    /* 2 x 1e9 GB/s: the sum is beyond the limit of one line */
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              parse(two + "link g0 g1 nvlink 1 1e9\n"
                          "link g0 g1 nvlink 1 1e9\n", &g, &err));
    EXPECT_NE(std::string::npos, err.find("t.topo:5:")) << err;
    EXPECT_NE(std::string::npos, err.find("capacity")) << err;

    /* counts that would wrap a 32-bit count: refused at the second line */
    std::string many = two;
    for (int i = 0; i < 42950; ++i) {
        many += "link g0 g1 nvlink 100000 1\n";
    }
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, parse(many, &g, &err));
    EXPECT_NE(std::string::npos, err.find("t.topo:5:")) << err;
    EXPECT_NE(std::string::npos, err.find("count")) << err;

    /* within the limits: merged, written as one line, read back */
    ASSERT_EQ(UCS_OK, parse(two + "link g0 g1 nvlink 1 4e8\n"
                                  "link g0 g1 nvlink 2 5e8 1\n", &g, &err))
        << err;
    std::string text = to_text(g);
    ASSERT_EQ(UCS_OK, parse(text, &h, &err)) << err << "\n" << text;
    int e = gig_graph_edge(h, 0, 1);
    ASSERT_NE(GIG_NONE, e);
    EXPECT_EQ(3u, h->e[e].count);
    EXPECT_DOUBLE_EQ(9e8, h->e[e].capacity);
    EXPECT_EQ(text, to_text(h));
    gig_graph_destroy(g);
    gig_graph_destroy(h);

    /* the two directions of different types or counts: written apart, read
     * back the same */
    ASSERT_EQ(UCS_OK, parse(two + "link g0 g1 nvlink 1 5 0\n"
                                  "link g1 g0 pcie 2 7 0\n"
                                  "link g0 g1 nvlink 3 0 4\n", &g, &err))
        << err;
    text = to_text(g);
    ASSERT_EQ(UCS_OK, parse(text, &h, &err)) << err << "\n" << text;
    for (int i = 0; i < g->ne; ++i) {
        e = gig_graph_edge(h, g->e[i].src, g->e[i].dst);
        ASSERT_NE(GIG_NONE, e);
        EXPECT_EQ(g->e[i].link, h->e[e].link);
        EXPECT_EQ(g->e[i].count, h->e[e].count);
        EXPECT_DOUBLE_EQ(g->e[i].capacity, h->e[e].capacity);
    }
    EXPECT_EQ(text, to_text(h));
    gig_graph_destroy(g);
    gig_graph_destroy(h);
}

/* Random files of a few vertices and many parallel links, near the limits:
 * whatever parses is written, read back, and written again to the same
 * text */
TEST(gig_topofile, random_files_round_trip)
{
    static const char *caps[] = {"0", "1", "1e9", "5e8", "999999999.5",
                                 "0.1", "3.3333333333", "1e-300", "7e8"};
    static const char *counts[] = {"1", "2", "99999", "100000", "50000"};
    static const char *types[] = {"nvlink", "pcie", "xpi", "gpudirect"};
    std::mt19937 rng(4242);
    int ok = 0, rejected = 0;

    for (int it = 0; it < 20000; ++it) {
        std::string s = H;
        int nv = 2 + rng() % 4;
        for (int v = 0; v < nv; ++v) {
            s += "vertex v" + std::to_string(v) + " gpu server=0\n";
        }
        int nl = 1 + rng() % 6;
        for (int l = 0; l < nl; ++l) {
            int a = rng() % nv, b = (a + 1 + rng() % (nv - 1)) % nv;
            s += "link v" + std::to_string(a) + " v" + std::to_string(b) +
                 " " + types[rng() % 4] + " " + counts[rng() % 5] + " " +
                 caps[rng() % 9];
            if (rng() % 2) {
                s += std::string(" ") + caps[rng() % 9];
            }
            s += "\n";
        }
        gig_graph_t *g = NULL, *h = NULL;
        std::string err;
        if (parse(s, &g, &err) != UCS_OK) {
            ++rejected;
            continue;
        }
        std::string text = to_text(g);
        ASSERT_EQ(UCS_OK, parse(text, &h, &err)) << err << "\nread:\n" << s
                                                 << "written:\n" << text;
        ASSERT_EQ(text, to_text(h)) << s;
        gig_graph_destroy(g);
        gig_graph_destroy(h);
        ++ok;
    }
    printf("  round trip: 20000 random files, %d read back, %d rejected\n",
           ok, rejected);
    EXPECT_GT(ok, 1000);
}

/* 100000 vertices and 100000 links load in linear time: a name lookup that
 * scanned every vertex took minutes here */
TEST(gig_topofile, large_file_loads_in_linear_time)
{
    const int n = 100000;
    std::string s = H;
    s.reserve(n * 64);
    s += "vertex cpu cpu server=0\n";
    for (int i = 0; i < n; ++i) {
        s += "vertex g" + std::to_string(i) + " gpu server=" +
             std::to_string(i / 8) + " cuda=" + std::to_string(i % 8) + "\n";
    }
    for (int i = 0; i < n; ++i) {
        s += "link g" + std::to_string(i) + " g" +
             std::to_string(i ^ 1) + " nvlink 1 25 0\n";
    }
    gig_graph_t *g = NULL;
    std::string err;
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(UCS_OK, parse(s, &g, &err)) << err;
    double sec = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - t0).count();
    printf("  %d vertices and %d links parsed in %.2f s\n", n + 1, n, sec);
    EXPECT_EQ(n + 1, g->nv);
    EXPECT_EQ(n, g->ne);
    EXPECT_LT(sec, 10.0);
    gig_graph_destroy(g);
}

/* A device, a FIFO or an oversized file is refused at once, not read */
TEST(gig_topofile, only_regular_files_of_bounded_size)
{
    char dir[] = "/tmp/gig_topo_XXXXXX";
    gig_graph_t *g = NULL;

    ASSERT_NE((char*)NULL, mkdtemp(dir));
    std::string fifo = std::string(dir) + "/fifo";
    std::string big  = std::string(dir) + "/big";
    ASSERT_EQ(0, mkfifo(fifo.c_str(), 0600));
    int fd = open(big.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(0, ftruncate(fd, (off_t)65 << 20)); /* sparse: no disk used */
    close(fd);

    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, gig_topofile_load("/dev/zero", &g));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, gig_topofile_load(fifo.c_str(), &g));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, gig_topofile_load(dir, &g));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, gig_topofile_load(big.c_str(), &g));
    EXPECT_EQ(NULL, g);
    EXPECT_LT(std::chrono::duration<double>(
                  std::chrono::steady_clock::now() - t0).count(), 2.0);
    unlink(fifo.c_str());
    unlink(big.c_str());
    rmdir(dir);
}

/*
 * Same answers as before: digests of every path set and forwarding table the
 * planner gives on the synthetic topologies and on random graphs, compared
 * with gig_golden.h, recorded by the planner before the channel-creation
 * speed-up (branch gig at b848fe5).  Exact: vertex ids, path order, kinds,
 * and the bits of every double (capacity, share, bottleneck, route sums).
 *
 * Also: the shape cache against the reference mode that runs Edmonds-Karp
 * on every server (GIG_PLAN_F_NO_SHAPES), on more random graphs.
 *
 * GIG_GOLDEN_PRINT=1  prints the table for gig_golden.h instead of checking
 * GIG_GOLDEN_DUMP=DIR writes each case as text (DIR/<case>.txt), to diff a
 * failing case against the same dump from an older build
 */
#include "gig_golden.h"

#include <gig.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace {

/* FNV-1a, 64 bits, over the serialized answer; optionally also as text */
class digest {
public:
    explicit digest(FILE *text) : m_h(14695981039346656037ull), m_f(text) {}

    void i(long x, const char *sep = " ")
    {
        mix(&x, sizeof(x));
        if (m_f != NULL) {
            fprintf(m_f, "%ld%s", x, sep);
        }
    }

    void d(double x, const char *sep = " ")
    {
        uint64_t bits;
        memcpy(&bits, &x, sizeof(bits));
        mix(&bits, sizeof(bits));
        if (m_f != NULL) {
            fprintf(m_f, "%a%s", x, sep);
        }
    }

    void nl()
    {
        if (m_f != NULL) {
            fputc('\n', m_f);
        }
    }

    uint64_t value() const { return m_h; }

private:
    void mix(const void *p, size_t n)
    {
        const unsigned char *c = (const unsigned char*)p;
        for (size_t k = 0; k < n; ++k) {
            m_h = (m_h ^ c[k]) * 1099511628211ull;
        }
    }

    uint64_t m_h;
    FILE     *m_f;
};

void add_pathset(digest &h, const gig_pathset_t *ps)
{
    h.i(ps->src);
    h.i(ps->dst);
    h.i(ps->npaths);
    h.d(ps->total, "\n");
    for (int i = 0; i < ps->npaths; ++i) {
        const gig_path_t &p = ps->paths[i];
        h.i(p.kind);
        h.i(p.via);
        h.i(p.nrelays);
        h.i(p.nvlink);
        h.d(p.capacity);
        h.d(p.bottleneck);
        h.d(p.share);
        h.i(p.nvert, ":");
        for (int j = 0; j < p.nvert; ++j) {
            h.i(p.vert[j]);
        }
        h.nl();
    }
}

void add_fwd(digest &h, const gig_fwd_t *f)
{
    h.i(gig_fwd_ntables(f), "\n");
    for (int t = 0; t < gig_fwd_ntables(f); ++t) {
        const gig_fwd_table_t *tb = gig_fwd_table(f, t);
        h.i(tb->vertex);
        h.i(tb->nentries, "\n");
        for (int e = 0; e < tb->nentries; ++e) {
            const gig_fwd_entry_t &en = tb->entries[e];
            h.i(en.dst);
            h.i(en.nnext, ":");
            for (int n = 0; n < en.nnext; ++n) {
                h.i(en.next[n].next);
                h.i(en.next[n].nroutes, "{");
                for (int r = 0; r < en.next[n].nroutes; ++r) {
                    const gig_fwd_route_t &rt = en.next[n].routes[r];
                    h.i(rt.nvia, "[");
                    for (int k = 0; k < rt.nvia; ++k) {
                        h.i(rt.via[k]);
                    }
                    h.d(rt.capacity, "] ");
                }
                h.i(-1, "} ");
            }
            h.nl();
        }
    }
}

/* Vertices that may be channel ends: all but NICs and the network */
std::vector<int> endpoints(const gig_graph_t *g)
{
    std::vector<int> v;
    for (int i = 0; i < g->nv; ++i) {
        if ((g->v[i].type != GIG_VTX_NIC) && (g->v[i].type != GIG_VTX_NET)) {
            v.push_back(i);
        }
    }
    return v;
}

std::vector<int> of_type(const gig_graph_t *g, gig_vertex_type_t type)
{
    std::vector<int> v;
    for (int i = 0; i < g->nv; ++i) {
        if (g->v[i].type == type) {
            v.push_back(i);
        }
    }
    return v;
}

gig_plan_t *plan_of(const gig_graph_t *g, unsigned flags)
{
    gig_plan_t *p = NULL;
    EXPECT_EQ(UCS_OK, gig_plan_create_flags(g, flags, &p));
    return p;
}

void add_channel(digest &h, gig_plan_t *plan, const std::vector<int> &s,
                 const std::vector<int> &d)
{
    gig_fwd_t *f = NULL;
    ASSERT_EQ(UCS_OK, gig_fwd_create(plan, s.data(), s.size(), d.data(),
                                     d.size(), &f));
    add_fwd(h, f);
    gig_fwd_destroy(f);
}

/* Path sets of the pairs of srcs x dsts (s != d), every stride-th source */
void add_pairs(digest &h, gig_plan_t *plan, const std::vector<int> &srcs,
               const std::vector<int> &dsts, size_t stride)
{
    const gig_pathset_t *ps;
    for (size_t i = 0; i < srcs.size(); i += stride) {
        for (int t : dsts) {
            if (srcs[i] != t) {
                ASSERT_EQ(UCS_OK, gig_plan_paths(plan, srcs[i], t, &ps));
                add_pathset(h, ps);
            }
        }
    }
}

/* Path sets translated between servers of one shape by the pair cases, of
 * synthetic [0] and random [1] graphs: both must exercise that */
unsigned long shape_copies[2];

/* The cases: a name and what goes into its digest */
typedef std::function<void(digest&)> golden_case_t;

void graph_cases(const std::string &name, const gig_graph_t *g,
                 std::vector<std::pair<std::string, golden_case_t>> &cases)
{
    std::vector<int> gp = of_type(g, GIG_VTX_GPU);
    std::vector<int> ep = endpoints(g);
    std::vector<int> ep_net = ep;
    size_t big = 400;

    if (g->net != GIG_NONE) {
        ep_net.push_back(g->net);
    }
    /* every pair of channel ends and the halves through the network; large
     * graphs: every k-th source, all destinations */
    cases.push_back({name + "/pairs", [=](digest &h) {
        gig_plan_t *p = plan_of(g, 0);
        gig_plan_stats_t st;
        add_pairs(h, p, ep_net, ep_net,
                  (ep_net.size() > big) ? ep_net.size() / 20 : 1);
        gig_plan_get_stats(p, &st);
        shape_copies[name.compare(0, 6, "random") == 0] += st.shape_copies;
        gig_plan_destroy(p);
    }});
    /* the benchmark's channels, cold; then the same planner again (warm) */
    cases.push_back({name + "/gpu-all-to-all", [=](digest &h) {
        gig_plan_t *p = plan_of(g, 0);
        add_channel(h, p, gp, gp);
        add_channel(h, p, gp, gp);
        gig_plan_destroy(p);
    }});
    cases.push_back({name + "/gpu-half", [=](digest &h) {
        std::vector<int> s(gp.begin(), gp.begin() + gp.size() / 2);
        std::vector<int> d(gp.begin() + gp.size() / 2, gp.end());
        gig_plan_t *p = plan_of(g, 0);
        add_channel(h, p, s, d);
        gig_plan_destroy(p);
    }});
    if (!ep.empty() && (ep.size() <= big)) {
        /* CPUs and switches as ends too, in a scrambled order with a
         * duplicate; then with some pairs planned (cached) beforehand, so
         * that cached and split pairs mix in one channel */
        cases.push_back({name + "/ends-all-to-all", [=](digest &h) {
            std::vector<int> s(ep.rbegin(), ep.rend()), d = ep;
            std::mt19937 rng(7);
            std::shuffle(d.begin(), d.end(), rng);
            d.push_back(d[0]);
            gig_plan_t *p = plan_of(g, 0);
            add_channel(h, p, s, d);
            add_pairs(h, p, ep, ep, 3);
            add_channel(h, p, ep, ep);
            gig_plan_destroy(p);
        }});
    }
    if ((g->net != GIG_NONE) && !ep.empty() && (ep.size() <= big)) {
        /* the network vertex as a channel end (whole halves as paths) */
        cases.push_back({name + "/net-ends", [=](digest &h) {
            gig_plan_t *p = plan_of(g, 0);
            add_channel(h, p, ep_net, ep_net);
            gig_plan_destroy(p);
        }});
    }
    if (gp.size() <= 100) {
        /* the baseline planner */
        cases.push_back({name + "/plain", [=](digest &h) {
            gig_plan_t *p = plan_of(g, GIG_PLAN_F_PLAIN);
            add_channel(h, p, gp, gp);
            add_pairs(h, p, ep, ep, (ep.size() > 40) ? 7 : 1);
            gig_plan_destroy(p);
        }});
    }
}

/* A random multi-server graph, as in test_gig_plan.cc, with some servers
 * copied so that identical servers occur; near: some copies with one
 * capacity changed, which must not count as the same shape */
gig_graph_t *random_graph(unsigned seed, int nservers, bool near = false)
{
    std::mt19937 rng(seed);
    gig_graph_t *g;
    char name[32];
    std::vector<std::pair<int, int>> nics;   /* id, index in server */
    std::vector<std::pair<int, int>> links;
    std::vector<std::pair<double, double>> caps;
    std::vector<int> types;
    int id, net, n = 0, ne = 0;

    EXPECT_EQ(UCS_OK, gig_graph_create("random", &g));
    for (int s = 0; s < nservers; ++s) {
        bool copy = (s > 0) && (rng() % 2 == 0);
        std::vector<int> vs;
        if (copy && near && !caps.empty() && (rng() % 2 == 0)) {
            caps[rng() % caps.size()].first += 1;
        }
        if (!copy) {
            n     = 3 + rng() % 8;
            ne    = n + rng() % (2 * n);
            types.clear();
            links.clear();
            caps.clear();
            for (int i = 0; i < n; ++i) {
                types.push_back(rng() % 5);
            }
            for (int k = 0; k < ne; ++k) {
                links.push_back({(int)(rng() % n), (int)(rng() % n)});
                double c1 = rng() % 100;
                double c2 = (rng() % 3 == 0) ? 0 : rng() % 100;
                caps.push_back({c1, c2});
            }
        }
        for (int i = 0; i < n; ++i) {
            snprintf(name, sizeof(name), "s%d.v%d", s, i);
            EXPECT_EQ(UCS_OK, gig_graph_add_vertex(g,
                      (gig_vertex_type_t)types[i], name, s, &id));
            vs.push_back(id);
            if (types[i] == GIG_VTX_NIC) {
                nics.push_back({id, i});
            }
        }
        for (int k = 0; k < ne; ++k) {
            if (links[k].first != links[k].second) {
                EXPECT_EQ(UCS_OK, gig_graph_add_link(g, vs[links[k].first],
                          vs[links[k].second], (gig_link_type_t)(k % 3), 1,
                          caps[k].first, caps[k].second));
            }
        }
    }
    if (nservers > 1) {
        EXPECT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_NET, "net",
                                               GIG_NONE, &net));
        for (auto &nic : nics) {
            EXPECT_EQ(UCS_OK, gig_graph_add_link(g, nic.first, net,
                      GIG_LINK_NET, 1, 1 + (nic.second * 7) % 13,
                      1 + (nic.second * 5) % 11));
        }
    }
    EXPECT_EQ(UCS_OK, gig_graph_finalize(g));
    return g;
}

struct graphs {
    std::vector<gig_graph_t*> g;
    ~graphs()
    {
        for (gig_graph_t *x : g) {
            gig_graph_destroy(x);
        }
    }
};

std::vector<std::pair<std::string, golden_case_t>> all_cases(graphs &keep)
{
    std::vector<std::pair<std::string, golden_case_t>> cases;
    const char *const *n = gig_synth_names();
    std::vector<std::string> names;

    for (int i = 0; n[i] != NULL; i += 2) {
        if (strchr(n[i], '<') == NULL) {
            names.push_back(n[i]);
        }
    }
    /* odd server sizes of the generated clusters */
    names.push_back("cluster:12:3");
    names.push_back("cluster:40:8");
    names.push_back("cluster:6:1");
    for (const std::string &name : names) {
        gig_graph_t *g = NULL;
        EXPECT_EQ(UCS_OK, gig_synth_create(name.c_str(), &g)) << name;
        if (g == NULL) {
            continue;
        }
        keep.g.push_back(g);
        graph_cases(name, g, cases);
    }
    for (unsigned seed = 1; seed <= 40; ++seed) {
        gig_graph_t *g = random_graph(7000 + seed, 1 + seed % 5);
        keep.g.push_back(g);
        graph_cases("random" + std::to_string(7000 + seed), g, cases);
    }
    return cases;
}

} // namespace

TEST(gig_golden, same_answers_as_before)
{
    graphs keep;
    std::vector<std::pair<std::string, golden_case_t>> cases =
        all_cases(keep);
    std::map<std::string, uint64_t> golden;
    const char *dump  = getenv("GIG_GOLDEN_DUMP");
    bool print        = (getenv("GIG_GOLDEN_PRINT") != NULL);

    for (size_t i = 0; i < sizeof(gig_golden) / sizeof(gig_golden[0]); ++i) {
        golden[gig_golden[i].name] = gig_golden[i].digest;
    }
    for (auto &c : cases) {
        FILE *f = NULL;
        if (dump != NULL) {
            std::string path = std::string(dump) + "/" + c.first + ".txt";
            for (size_t k = strlen(dump) + 1; k < path.size() - 4; ++k) {
                if (path[k] == '/' || path[k] == ':') {
                    path[k] = '_';
                }
            }
            f = fopen(path.c_str(), "w");
            ASSERT_TRUE(f != NULL) << path;
        }
        digest h(f);
        SCOPED_TRACE(c.first);
        c.second(h);
        if (f != NULL) {
            fclose(f);
        }
        if (print) {
            printf("    {\"%s\", 0x%016llxull},\n", c.first.c_str(),
                   (unsigned long long)h.value());
            continue;
        }
        ASSERT_TRUE(golden.count(c.first)) << "no golden digest";
        EXPECT_EQ(golden[c.first], h.value())
            << "answers changed; GIG_GOLDEN_DUMP=DIR shows them";
    }
    if (!print) {
        EXPECT_EQ(golden.size(), cases.size());
    }
    EXPECT_GT(shape_copies[0], 0ul);
    EXPECT_GT(shape_copies[1], 0ul);
}

namespace {

/* Path sets of all pairs (through the network too) and the channels of
 * all GPUs and of all ends, planned with flags */
uint64_t answers(const gig_graph_t *g, unsigned flags)
{
    std::vector<int> gp = of_type(g, GIG_VTX_GPU);
    std::vector<int> ep = endpoints(g);
    std::vector<int> ep_net = ep;
    gig_plan_t *p = plan_of(g, flags);
    digest h(NULL);

    if (g->net != GIG_NONE) {
        ep_net.push_back(g->net);
    }
    add_channel(h, p, gp, gp);
    add_pairs(h, p, ep_net, ep_net, (ep_net.size() > 400) ? 50 : 1);
    if (ep.size() <= 400) {
        add_channel(h, p, ep, ep);
    }
    gig_plan_destroy(p);
    return h.value();
}

} // namespace

TEST(gig_golden, shapes_match_reference_mode)
{
    graphs keep;
    const char *const *n = gig_synth_names();
    std::vector<std::string> names = {"cluster:12:3", "cluster:40:8",
                                      "cluster:6:1"};

    for (int i = 0; n[i] != NULL; i += 2) {
        if (strchr(n[i], '<') == NULL) {
            names.push_back(n[i]);
        }
    }
    for (const std::string &name : names) {
        gig_graph_t *g = NULL;
        ASSERT_EQ(UCS_OK, gig_synth_create(name.c_str(), &g)) << name;
        keep.g.push_back(g);
        EXPECT_EQ(answers(g, GIG_PLAN_F_NO_SHAPES), answers(g, 0)) << name;
    }
    for (unsigned seed = 1; seed <= 200; ++seed) {
        gig_graph_t *g = random_graph(9000 + seed, 2 + seed % 6, true);
        keep.g.push_back(g);
        EXPECT_EQ(answers(g, GIG_PLAN_F_NO_SHAPES), answers(g, 0))
            << "random graph, seed " << 9000 + seed;
    }
}

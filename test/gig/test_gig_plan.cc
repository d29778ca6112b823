/*
 * Planner tests: every synthetic topology against the reference max-flow,
 * known answers of the paper's and today's machines, forwarding tables
 * checked by hand, random graphs with fixed seeds.
 */
#include "gig_ref_maxflow.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace {

const double tol = 1e-6;

struct graph_deleter {
    void operator()(gig_graph_t *g) const { gig_graph_destroy(g); }
};
struct plan_deleter {
    void operator()(gig_plan_t *p) const { gig_plan_destroy(p); }
};
struct fwd_deleter {
    void operator()(gig_fwd_t *f) const { gig_fwd_destroy(f); }
};
typedef std::unique_ptr<gig_graph_t, graph_deleter> graph_ptr;
typedef std::unique_ptr<gig_plan_t, plan_deleter>   plan_ptr;
typedef std::unique_ptr<gig_fwd_t, fwd_deleter>     fwd_ptr;

graph_ptr synth(const std::string &name)
{
    gig_graph_t *g = NULL;
    EXPECT_EQ(UCS_OK, gig_synth_create(name.c_str(), &g)) << name;
    return graph_ptr(g);
}

plan_ptr make_plan(const gig_graph_t *g)
{
    gig_plan_t *p = NULL;
    EXPECT_EQ(UCS_OK, gig_plan_create(g, &p));
    return plan_ptr(p);
}

std::vector<int> gpus(const gig_graph_t *g)
{
    std::vector<int> v;
    for (int i = 0; i < g->nv; ++i) {
        if (g->v[i].type == GIG_VTX_GPU) {
            v.push_back(i);
        }
    }
    return v;
}

int V(const gig_graph_t *g, const char *name)
{
    int v = gig_graph_find_name(g, name);
    EXPECT_NE(GIG_NONE, v) << name;
    return v;
}

std::string path_str(const gig_graph_t *g, const gig_path_t &p)
{
    std::string s;
    for (int i = 0; i < p.nvert; ++i) {
        s += (i ? ">" : "") + std::string(g->v[p.vert[i]].name);
    }
    return s;
}

/* Reference for a pair: same server without the network (the planner keeps
 * a same-server pair on its server), else the whole graph */
double ref_pair(const gig_graph_t *g, int s, int t)
{
    std::vector<bool> skip;
    if ((g->net != GIG_NONE) && (g->v[s].server == g->v[t].server)) {
        skip.assign(g->nv, false);
        skip[g->net] = true;
    }
    return ref_maxflow(g, {s}, {t}, skip);
}

/* Structural checks of a path set, and its total against the reference */
void check_pathset(const gig_graph_t *g, const gig_pathset_t *ps)
{
    std::map<int, double> load;
    double sum = 0, shares = 0;

    ASSERT_GE(ps->npaths, 0);
    for (int i = 0; i < ps->npaths; ++i) {
        const gig_path_t &p = ps->paths[i];
        std::set<int> seen;
        double bn = 1e30;
        int managed = 0, first = GIG_NONE;
        bool net = false;

        SCOPED_TRACE(path_str(g, p));
        ASSERT_GE(p.nvert, 2);
        EXPECT_EQ(ps->src, p.vert[0]);
        EXPECT_EQ(ps->dst, p.vert[p.nvert - 1]);
        EXPECT_GT(p.capacity, 0);
        for (int j = 0; j < p.nvert; ++j) {
            EXPECT_TRUE(seen.insert(p.vert[j]).second) << "repeats a vertex";
            if ((j > 0) && (j + 1 < p.nvert)) {
                if (p.vert[j] == g->net) {
                    net = true;
                } else if (gig_graph_is_managed(g, p.vert[j])) {
                    managed++;
                    if (first == GIG_NONE) {
                        first = p.vert[j];
                    }
                }
            }
            if (j + 1 < p.nvert) {
                int e = gig_graph_edge(g, p.vert[j], p.vert[j + 1]);
                ASSERT_NE(GIG_NONE, e) << "no edge at " << j;
                bn = std::min(bn, g->e[e].capacity);
                load[e] += p.capacity;
            }
        }
        EXPECT_NEAR(bn, p.bottleneck, tol);
        EXPECT_LE(p.capacity, p.bottleneck + tol);
        EXPECT_EQ(first, p.via);
        EXPECT_EQ(managed, p.nrelays);
        if (net) {
            EXPECT_EQ(GIG_PATH_NETWORK, p.kind);
        } else if (first == GIG_NONE) {
            EXPECT_EQ(GIG_PATH_DIRECT, p.kind);
        } else if (g->v[first].type == GIG_VTX_CPU) {
            EXPECT_EQ(GIG_PATH_VIA_HOST, p.kind);
        } else {
            EXPECT_EQ(GIG_PATH_VIA_GPU, p.kind);
        }
        sum    += p.capacity;
        shares += p.share;
    }
    for (auto &l : load) {
        EXPECT_LE(l.second, g->e[l.first].capacity + tol)
            << "edge " << g->v[g->e[l.first].src].name << "->"
            << g->v[g->e[l.first].dst].name << " overloaded";
    }
    EXPECT_NEAR(sum, ps->total, tol);
    if (ps->npaths > 0) {
        EXPECT_NEAR(1.0, shares, 1e-9);
    }
    EXPECT_NEAR(ref_pair(g, ps->src, ps->dst), ps->total, 1e-3)
        << g->v[ps->src].name << " -> " << g->v[ps->dst].name;
}

std::vector<std::string> synthetic_names()
{
    std::vector<std::string> names;
    const char *const *n = gig_synth_names();
    for (int i = 0; n[i] != NULL; i += 2) {
        if (std::string(n[i]).find('<') == std::string::npos) {
            names.push_back(n[i]);
        }
    }
    return names;
}

} // namespace

/* ------------------------------------------------ all synthetic topologies */

class gig_synth_all : public ::testing::TestWithParam<std::string> {};

TEST_P(gig_synth_all, pairs_match_reference_maxflow)
{
    graph_ptr g = synth(GetParam());
    ASSERT_TRUE(g);
    plan_ptr plan = make_plan(g.get());
    std::vector<int> gp = gpus(g.get());
    std::mt19937 rng(42);
    size_t npairs = gp.size() * (gp.size() - 1);
    const gig_pathset_t *ps;

    /* all pairs up to 100 GPUs, 300 fixed random pairs beyond */
    for (size_t k = 0; k < std::min<size_t>(npairs, 10000); ++k) {
        int s, t;
        if (npairs <= 10000) {
            s = gp[k / (gp.size() - 1)];
            t = gp[k % (gp.size() - 1)];
            if (t >= s) {
                t = gp[k % (gp.size() - 1) + 1];
            }
        } else {
            if (k == 300) {
                break;
            }
            s = gp[rng() % gp.size()];
            do {
                t = gp[rng() % gp.size()];
            } while (t == s);
        }
        ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), s, t, &ps));
        ASSERT_NO_FATAL_FAILURE(check_pathset(g.get(), ps));
        EXPECT_GT(ps->npaths, 0) << g->v[s].name << "->" << g->v[t].name;
    }
}

TEST_P(gig_synth_all, channel_complete_against_msms_maxflow)
{
    graph_ptr g = synth(GetParam());
    ASSERT_TRUE(g);
    plan_ptr plan = make_plan(g.get());
    std::vector<int> gp = gpus(g.get());
    std::vector<int> S, D;
    std::vector<bool> used(g->ne, false), skip;
    const gig_pathset_t *ps;
    double lib;

    if (gp.size() > 100) {
        gp.resize(100);   /* 25 servers of cluster1000 */
    }
    /* a shuffle between the two halves of the GPUs */
    for (size_t i = 0; i < gp.size(); ++i) {
        ((i < gp.size() / 2) ? S : D).push_back(gp[i]);
    }
    if (g->v[S[0]].server == g->v[D.back()].server && (g->net != GIG_NONE)) {
        skip.assign(g->nv, false);
        skip[g->net] = true;
    }
    for (int s : S) {
        for (int t : D) {
            ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), s, t, &ps));
            for (int i = 0; i < ps->npaths; ++i) {
                for (int j = 0; j + 1 < ps->paths[i].nvert; ++j) {
                    used[gig_graph_edge(g.get(), ps->paths[i].vert[j],
                                        ps->paths[i].vert[j + 1])] = true;
                }
            }
        }
    }
    /* Completeness (§4.3): the multi-source multi-sink max-flow needs no
     * edge that the per-pair plans left out */
    double full  = ref_maxflow(g.get(), S, D, skip);
    double inuse = ref_maxflow(g.get(), S, D, skip, used);
    EXPECT_NEAR(full, inuse, 1e-3);
    /* the library's plain whole-graph Edmonds-Karp agrees with Dinic */
    if (skip.empty()) {
        ASSERT_EQ(UCS_OK, gig_maxflow_sets(g.get(), S.data(), S.size(),
                                           D.data(), D.size(), &lib));
        EXPECT_NEAR(full, lib, 1e-2);
    }
}

INSTANTIATE_TEST_SUITE_P(synthetic, gig_synth_all,
                         ::testing::ValuesIn(synthetic_names()),
                         [](const ::testing::TestParamInfo<std::string> &i) {
                             std::string s = i.param;
                             for (char &c : s) {
                                 if (!isalnum((unsigned char)c)) {
                                     c = '_';
                                 }
                             }
                             return s;
                         });

/* ---------------------------------------------------------- known answers */

/* NVSwitch hosts: the direct NVLink plus a host path; a relay through a
 * third GPU adds nothing since the switch port of the destination is full */
TEST(gig_known, nvswitch_hgx_h200_direct_plus_host_no_relay)
{
    for (const char *name : {"hgx-h200", "hgx-h100", "h200x2"}) {
        graph_ptr g = synth(name);
        plan_ptr plan = make_plan(g.get());
        std::vector<int> gp = gpus(g.get());
        const gig_pathset_t *ps;

        SCOPED_TRACE(name);
        for (int s : gp) {
            for (int t : gp) {
                if (s == t) {
                    continue;
                }
                ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), s, t, &ps));
                ASSERT_EQ(2, ps->npaths);
                EXPECT_EQ(GIG_PATH_DIRECT, ps->paths[0].kind);
                EXPECT_TRUE(ps->paths[0].nvlink);
                EXPECT_NEAR(478.0, ps->paths[0].capacity, 1e-3);
                EXPECT_EQ(3, ps->paths[0].nvert);   /* gpu > nvsw > gpu */
                EXPECT_EQ(GIG_PATH_VIA_HOST, ps->paths[1].kind);
                EXPECT_NEAR(55.0, ps->paths[1].capacity, 1e-3);
                EXPECT_NEAR(533.0, ps->total, 1e-3);
                EXPECT_NEAR(478.0 / 533.0, ps->paths[0].share, 1e-9);
            }
        }
    }
}

TEST(gig_known, h100_mesh4_direct_plus_two_relays)
{
    graph_ptr g = synth("h100-mesh4");
    plan_ptr plan = make_plan(g.get());
    const gig_pathset_t *ps;
    double nv4 = 6 * 478.0 / 18;

    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), V(g.get(), "gpu0"),
                                     V(g.get(), "gpu1"), &ps));
    ASSERT_EQ(4, ps->npaths);
    EXPECT_EQ(GIG_PATH_DIRECT, ps->paths[0].kind);
    EXPECT_NEAR(nv4, ps->paths[0].capacity, 1e-3);
    EXPECT_EQ(GIG_PATH_VIA_GPU, ps->paths[1].kind);
    EXPECT_EQ(V(g.get(), "gpu2"), ps->paths[1].via);
    EXPECT_NEAR(nv4, ps->paths[1].capacity, 1e-3);
    EXPECT_EQ(GIG_PATH_VIA_GPU, ps->paths[2].kind);
    EXPECT_EQ(V(g.get(), "gpu3"), ps->paths[2].via);
    EXPECT_NEAR(nv4, ps->paths[2].capacity, 1e-3);
    EXPECT_EQ(GIG_PATH_VIA_HOST, ps->paths[3].kind);
    EXPECT_NEAR(55.0, ps->paths[3].capacity, 1e-3);
    EXPECT_NEAR(3 * nv4 + 55.0, ps->total, 1e-3);
}

/* DGX-1 hybrid cube-mesh: every V100 pair gets all 6 NVLinks of the source
 * (150 GB/s) plus 12.5 GB/s of PCIe; NV1 neighbours 0-1: the direct link,
 * relays through 2, 3 and 4; NV2 neighbours 0-3: 50 GB/s direct */
TEST(gig_known, dgx1_v100_multipath_sets)
{
    graph_ptr g = synth("dgx1");
    plan_ptr plan = make_plan(g.get());
    std::vector<int> gp = gpus(g.get());
    const gig_pathset_t *ps;

    for (int s : gp) {
        for (int t : gp) {
            if (s == t) {
                continue;
            }
            ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), s, t, &ps));
            /* the source's out-links are the cut: all six NVLinks and
             * its PCIe link leave full */
            double nvl = 0, pci = 0;
            for (int i = 0; i < ps->npaths; ++i) {
                int e = gig_graph_edge(g.get(), ps->paths[i].vert[0],
                                       ps->paths[i].vert[1]);
                (g->e[e].link == GIG_LINK_NVLINK ? nvl : pci) +=
                    ps->paths[i].capacity;
            }
            EXPECT_NEAR(162.5, ps->total, 1e-3);
            EXPECT_NEAR(150.0, nvl, 1e-3);
            EXPECT_NEAR(12.5, pci, 1e-3);
        }
    }

    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), V(g.get(), "gpu0"),
                                     V(g.get(), "gpu1"), &ps));
    std::set<int> via;
    EXPECT_EQ(GIG_PATH_DIRECT, ps->paths[0].kind);
    EXPECT_TRUE(ps->paths[0].nvlink);
    EXPECT_NEAR(25.0, ps->paths[0].capacity, 1e-3);
    for (int i = 0; i < ps->npaths; ++i) {
        if (ps->paths[i].kind == GIG_PATH_VIA_GPU) {
            via.insert(ps->paths[i].via);
        }
    }
    EXPECT_EQ((std::set<int>{V(g.get(), "gpu2"), V(g.get(), "gpu3"),
                             V(g.get(), "gpu4")}), via);

    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), V(g.get(), "gpu0"),
                                     V(g.get(), "gpu3"), &ps));
    EXPECT_EQ(GIG_PATH_DIRECT, ps->paths[0].kind);
    EXPECT_NEAR(50.0, ps->paths[0].capacity, 1e-3);
    EXPECT_EQ(2u, ps->paths[0].nvert);
}

/* DGX A100 (Fig. 5b): v8 -> v9 takes the NVLink path via v14 and the PCIe
 * path via v3, no GPU relay */
TEST(gig_known, dgx_a100_nvlink_and_pcie_switch)
{
    graph_ptr g = synth("dgx-a100");
    plan_ptr plan = make_plan(g.get());
    const gig_pathset_t *ps;

    EXPECT_EQ(V(g.get(), "gpu2"), 8);
    EXPECT_EQ(V(g.get(), "nvsw"), 14);
    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), 8, 9, &ps));
    ASSERT_EQ(2, ps->npaths);
    EXPECT_EQ("gpu2>nvsw>gpu3", path_str(g.get(), ps->paths[0]));
    EXPECT_NEAR(300.0, ps->paths[0].capacity, 1e-3);
    EXPECT_EQ("gpu2>pcie1>gpu3", path_str(g.get(), ps->paths[1]));
    EXPECT_EQ(GIG_PATH_DIRECT, ps->paths[1].kind);
    EXPECT_FALSE(ps->paths[1].nvlink);
    EXPECT_NEAR(26.0, ps->paths[1].capacity, 1e-3);
}

TEST(gig_known, pcie_and_sockets_via_host)
{
    graph_ptr g = synth("pcie-2sw");
    plan_ptr plan = make_plan(g.get());
    const gig_pathset_t *ps;

    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), V(g.get(), "gpu0"),
                                     V(g.get(), "gpu1"), &ps));
    ASSERT_EQ(1, ps->npaths);
    EXPECT_EQ("gpu0>pcie0>gpu1", path_str(g.get(), ps->paths[0]));
    EXPECT_EQ(GIG_PATH_DIRECT, ps->paths[0].kind);
    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), V(g.get(), "gpu0"),
                                     V(g.get(), "gpu3"), &ps));
    ASSERT_EQ(1, ps->npaths);
    EXPECT_EQ("gpu0>pcie0>cpu0>pcie1>gpu3", path_str(g.get(), ps->paths[0]));
    EXPECT_EQ(GIG_PATH_VIA_HOST, ps->paths[0].kind);
    EXPECT_NEAR(12.5, ps->total, 1e-3);

    graph_ptr g2 = synth("2socket-xpi");
    plan_ptr plan2 = make_plan(g2.get());
    ASSERT_EQ(UCS_OK, gig_plan_paths(plan2.get(), V(g2.get(), "gpu0"),
                                     V(g2.get(), "gpu2"), &ps));
    ASSERT_EQ(1, ps->npaths);
    EXPECT_EQ("gpu0>pcie0>cpu0>cpu1>pcie1>gpu2",
              path_str(g2.get(), ps->paths[0]));
    EXPECT_EQ(V(g2.get(), "cpu0"), ps->paths[0].via);
    EXPECT_EQ(2, ps->paths[0].nrelays);
}

/* Fig. 5c: two servers, two RDMA NICs each: the NIC-direct path first, the
 * second NIC through the sockets, exactly the paper's two paths */
TEST(gig_known, multi_rdma_both_nics_nic_direct_first)
{
    graph_ptr g = synth("multi-rdma");
    plan_ptr plan = make_plan(g.get());
    const gig_pathset_t *ps;

    EXPECT_EQ(6, V(g.get(), "s0.gpu0"));
    EXPECT_EQ(14, V(g.get(), "s1.gpu0"));
    EXPECT_EQ(16, g->net);
    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), 6, 14, &ps));
    ASSERT_EQ(2, ps->npaths);
    EXPECT_EQ("s0.gpu0>s0.nic0>net>s1.nic0>s1.gpu0",
              path_str(g.get(), ps->paths[0]));
    EXPECT_EQ("s0.gpu0>s0.pcie0>s0.cpu0>s0.cpu1>s0.pcie1>s0.nic1>net>"
              "s1.nic1>s1.pcie1>s1.cpu1>s1.cpu0>s1.pcie0>s1.gpu0",
              path_str(g.get(), ps->paths[1]));
    EXPECT_EQ(GIG_NONE, ps->paths[0].via);
    EXPECT_EQ(V(g.get(), "s0.cpu0"), ps->paths[1].via);
    EXPECT_NEAR(25.0, ps->total, 1e-3);

    /* hierarchical: s -> net and net -> d were planned and cached */
    gig_plan_stats_t st;
    gig_plan_get_stats(plan.get(), &st);
    EXPECT_EQ(2u, st.maxflow_runs);
    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), 7, 14, &ps));
    gig_plan_get_stats(plan.get(), &st);
    EXPECT_EQ(3u, st.maxflow_runs);   /* net -> s1.gpu0 reused */
}

TEST(gig_known, multi_nvswitch_rdma_two_nics_each_side)
{
    graph_ptr g = synth("multi-nvswitch-rdma");
    plan_ptr plan = make_plan(g.get());
    const gig_pathset_t *ps;
    std::set<int> nics;

    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), V(g.get(), "s0.gpu0"),
                                     V(g.get(), "s1.gpu0"), &ps));
    for (int i = 0; i < ps->npaths; ++i) {
        for (int j = 0; j < ps->paths[i].nvert; ++j) {
            if (g->v[ps->paths[i].vert[j]].type == GIG_VTX_NIC) {
                nics.insert(ps->paths[i].vert[j]);
            }
        }
    }
    EXPECT_EQ(4u, nics.size()) << "both NICs of both servers";
    EXPECT_NEAR(50.0, ps->total, 1e-3);
    /* the first path is NIC-direct on both ends */
    EXPECT_EQ("s0.gpu0>s0.nic0>net>s1.nic0>s1.gpu0",
              path_str(g.get(), ps->paths[0]));
    EXPECT_EQ(GIG_LINK_GPUDIRECT,
              g->e[gig_graph_edge(g.get(), ps->paths[0].vert[0],
                                  ps->paths[0].vert[1])].link);
}

TEST(gig_known, no_network_vertex_unreachable)
{
    gig_graph_t *g;
    int a, b;

    ASSERT_EQ(UCS_OK, gig_graph_create("two islands", &g));
    graph_ptr gp(g);
    ASSERT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_GPU, "a", 0, &a));
    ASSERT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_GPU, "b", 1, &b));
    ASSERT_EQ(UCS_OK, gig_graph_finalize(g));
    plan_ptr plan = make_plan(g);
    const gig_pathset_t *ps;
    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), a, b, &ps));
    EXPECT_EQ(0, ps->npaths);
    EXPECT_EQ(0.0, ps->total);
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, gig_plan_paths(plan.get(), a, a, &ps));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, gig_plan_paths(plan.get(), a, 7, &ps));
}

/* ----------------------------------------------------------- graph basics */

/* 2 hosts x 8 GPUs x 4 NICs (test/gig/2x8x4.topo): GPU k and NIC k/2
 * under PCIe switch k/2; with GPUDirect edges and without, each GPU's NIC
 * is the one of its switch, on its own server */
static std::string topo_2x8x4(bool gpudirect)
{
    std::string t = "gig-topology 1\norigin 2x8x4\n";
    char l[160];
    int s, c, w, k;

    for (s = 0; s < 2; ++s) {
        for (c = 0; c < 2; ++c) {
            snprintf(l, sizeof(l), "vertex s%dcpu%d cpu server=%d\n", s, c, s);
            t += l;
        }
        snprintf(l, sizeof(l), "vertex s%dnvsw nvswitch server=%d\n", s, s);
        t += l;
        for (w = 0; w < 4; ++w) {
            snprintf(l, sizeof(l), "vertex s%dsw%d pcie server=%d\n"
                     "vertex s%dnic%d nic server=%d\n", s, w, s, s, w, s);
            t += l;
        }
        for (k = 0; k < 8; ++k) {
            snprintf(l, sizeof(l), "vertex s%dgpu%d gpu server=%d cuda=%d\n",
                     s, k, s, k);
            t += l;
        }
    }
    t += "vertex net net\n";
    for (s = 0; s < 2; ++s) {
        snprintf(l, sizeof(l), "link s%dcpu0 s%dcpu1 xpi 1 62.4\n", s, s);
        t += l;
        for (w = 0; w < 4; ++w) {
            snprintf(l, sizeof(l), "link s%dcpu%d s%dsw%d pcie 1 63\n"
                     "link s%dnic%d s%dsw%d pcie 1 63\n"
                     "link s%dnic%d net net 1 50\n", s, w / 2, s, w, s, w,
                     s, w, s, w);
            t += l;
        }
        for (k = 0; k < 8; ++k) {
            snprintf(l, sizeof(l), "link s%dgpu%d s%dsw%d pcie 1 63\n"
                     "link s%dgpu%d s%dnvsw nvlink 18 450\n", s, k, s, k / 2,
                     s, k, s);
            t += l;
            if (gpudirect) {
                snprintf(l, sizeof(l), "link s%dnic%d s%dgpu%d gpudirect 1 "
                         "50\n", s, k / 2, s, k);
                t += l;
            }
        }
    }
    return t;
}

TEST(gig_plan, nic_of_each_gpu_2x8x4)
{
    for (int gd = 0; gd < 2; ++gd) {
        std::string text = topo_2x8x4(gd != 0);
        gig_graph_t *gr  = NULL;
        gig_plan_t *pl   = NULL;
        char err[256], name[32];

        ASSERT_EQ(UCS_OK, gig_topofile_parse(text.c_str(), text.size(),
                                             "2x8x4", &gr, err, sizeof(err)))
            << err;
        graph_ptr g(gr);
        ASSERT_EQ(UCS_OK, gig_plan_create(g.get(), &pl));
        plan_ptr plan(pl);
        for (int s = 0; s < 2; ++s) {
            for (int k = 0; k < 8; ++k) {
                snprintf(name, sizeof(name), "s%dgpu%d", s, k);
                int nic = gig_plan_nic(plan.get(),
                                       gig_graph_find_name(g.get(), name));
                ASSERT_NE(GIG_NONE, nic) << name;
                snprintf(name, sizeof(name), "s%dnic%d", s, k / 2);
                EXPECT_STREQ(name, g->v[nic].name)
                    << "gpu " << k << " of server " << s << ", gpudirect "
                    << gd;
            }
        }
        EXPECT_EQ(GIG_NONE, gig_plan_nic(plan.get(), g->net));
    }
}

/* Hops from v to every vertex of its server, never through the network
 * vertex nor out of a NIC: how near each NIC is, counted independently of
 * the planner */
std::vector<int> hops_in_server(const gig_graph_t *g, int v)
{
    std::vector<int> d(g->nv, -1), q(1, v);

    d[v] = 0;
    for (size_t h = 0; h < q.size(); ++h) {
        int u = q[h];
        if ((u != v) && (g->v[u].type == GIG_VTX_NIC)) {
            continue;
        }
        for (int e = 0; e < g->ne; ++e) {
            int w = g->e[e].dst;
            if ((g->e[e].src != u) || (d[w] >= 0) || (w == g->net) ||
                (g->v[w].server != g->v[v].server)) {
                continue;
            }
            d[w] = d[u] + 1;
            q.push_back(w);
        }
    }
    return d;
}

/* The chosen NIC is one of the fewest hops from v on v's server */
void expect_nearest_nic(const gig_graph_t *g, int v, int nic)
{
    std::vector<int> d = hops_in_server(g, v);
    int best = -1;

    ASSERT_NE(GIG_NONE, nic) << g->v[v].name;
    for (int i = 0; i < g->nv; ++i) {
        if ((g->v[i].type == GIG_VTX_NIC) && (d[i] >= 0) &&
            ((best < 0) || (d[i] < best))) {
            best = d[i];
        }
    }
    EXPECT_EQ(g->v[v].server, g->v[nic].server) << g->v[v].name;
    EXPECT_EQ(best, d[nic]) << g->v[v].name << " -> " << g->v[nic].name
                            << ": a NIC " << best << " hop(s) away exists";
}

std::string read_topo(const char *name)
{
    const char *dir = getenv("srcdir");
    std::string path = std::string((dir != NULL) ? dir : ".") + "/" + name;
    std::string text;
    char buf[4096];
    size_t n;
    FILE *f = fopen(path.c_str(), "r");

    if (f == NULL) {
        ADD_FAILURE() << path << ": cannot open";
        return text;
    }
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
        text.append(buf, n);
    }
    fclose(f);
    return text;
}

/* libmgi's choice of the NIC for a rank's cross-host traffic
 * (gig_nic_nearest) on the 2 hosts x 8 GPUs x 4 NICs file: GPU k's is
 * NIC k/2 under its PCIe switch, and a CPU's is one nearest it */
TEST(gig_plan, nic_nearest_each_gpu_2x8x4_file)
{
    std::string text = read_topo("2x8x4.topo");
    gig_graph_t *gr  = NULL;
    char err[256], name[32];
    int from;

    ASSERT_EQ(UCS_OK, gig_topofile_parse(text.c_str(), text.size(),
                                         "2x8x4.topo", &gr, err, sizeof(err)))
        << err;
    graph_ptr g(gr);
    for (int s = 0; s < 2; ++s) {
        for (int k = 0; k < 8; ++k) {
            int nic = gig_nic_nearest(g.get(), s, NULL, k, -1, &from);
            snprintf(name, sizeof(name), "s%dgpu%d", s, k);
            ASSERT_NE(GIG_NONE, from) << name;
            EXPECT_STREQ(name, g->v[from].name);
            ASSERT_NE(GIG_NONE, nic) << name;
            snprintf(name, sizeof(name), "s%dnic%d", s, k / 2);
            EXPECT_STREQ(name, g->v[nic].name) << "GPU " << k << " of host "
                                               << s;
            expect_nearest_nic(g.get(), from, nic);
        }
        for (int numa = -1; numa < 2; ++numa) {
            int nic = gig_nic_nearest(g.get(), s, NULL, -1, numa, &from);
            snprintf(name, sizeof(name), "s%dcpu%d", s, (numa < 0) ? 0 : numa);
            ASSERT_NE(GIG_NONE, from);
            EXPECT_STREQ(name, g->v[from].name) << "NUMA " << numa;
            expect_nearest_nic(g.get(), from, nic);
        }
    }
    /* no such server: no vertex, no NIC */
    EXPECT_EQ(GIG_NONE, gig_nic_nearest(g.get(), 2, NULL, 0, 0, &from));
    EXPECT_EQ(GIG_NONE, from);
}

/* The NIC of each GPU endpoint's own cross-host traffic (libmgi's rails:
 * an endpoint whose NIC is not its process's): gig_nic_of from the GPU's
 * vertex, NIC k/2 for GPU k, with the UCX devices the file names for it */
TEST(gig_plan, nic_of_each_gpu_2x8x4_file_with_devices)
{
    std::string text = read_topo("2x8x4.topo");
    gig_graph_t *gr  = NULL;
    char err[256], name[32], devs[64], want[32];

    for (int s = 0; s < 2; ++s) {
        for (int n = 0; n < 4; ++n) {
            snprintf(name, sizeof(name), "vertex s%dnic%d nic server=%d", s,
                     n, s);
            size_t at = text.find(name);
            ASSERT_NE(std::string::npos, at) << name;
            snprintf(devs, sizeof(devs), " dev=mlx5_%d:1", n);
            text.insert(at + strlen(name), devs);
        }
    }
    ASSERT_EQ(UCS_OK, gig_topofile_parse(text.c_str(), text.size(),
                                         "2x8x4-dev", &gr, err, sizeof(err)))
        << err;
    graph_ptr g(gr);
    for (int s = 0; s < 2; ++s) {
        for (int k = 0; k < 8; ++k) {
            snprintf(name, sizeof(name), "s%dgpu%d", s, k);
            int v   = gig_graph_find_name(g.get(), name);
            int nic = gig_nic_of(g.get(), v);
            ASSERT_NE(GIG_NONE, nic) << name;
            snprintf(want, sizeof(want), "s%dnic%d", s, k / 2);
            EXPECT_STREQ(want, g->v[nic].name) << name;
            EXPECT_EQ(1, gig_nic_ucx_devices(g.get(), nic, "/nonexistent",
                                             devs, sizeof(devs)));
            snprintf(want, sizeof(want), "mlx5_%d:1", k / 2);
            EXPECT_STREQ(want, devs) << name;
        }
    }
    EXPECT_EQ(GIG_NONE, gig_nic_of(g.get(), GIG_NONE));
}

/* A GPU is found by its PCI bus id before its CUDA ordinal (another
 * process may number the GPUs otherwise) */
TEST(gig_plan, nic_nearest_by_pci_bus_id)
{
    std::string text = read_topo("2x8x4.topo");
    const std::string line = "vertex s0gpu6 gpu server=0 cuda=6";
    size_t at = text.find(line);
    gig_graph_t *gr = NULL;
    char err[256];
    int from;

    ASSERT_NE(std::string::npos, at);
    text.insert(at + line.size(), " pci=0000:9a:00.0");
    ASSERT_EQ(UCS_OK, gig_topofile_parse(text.c_str(), text.size(), "pci",
                                         &gr, err, sizeof(err)))
        << err;
    graph_ptr g(gr);
    int nic = gig_nic_nearest(g.get(), 0, "9a:00.0", 0, -1, &from);
    ASSERT_NE(GIG_NONE, from);
    EXPECT_STREQ("s0gpu6", g->v[from].name);
    ASSERT_NE(GIG_NONE, nic);
    EXPECT_STREQ("s0nic3", g->v[nic].name);
    /* a bus id not in the graph: the CUDA ordinal */
    nic = gig_nic_nearest(g.get(), 0, "0000:01:00.0", 1, -1, &from);
    ASSERT_NE(GIG_NONE, nic);
    EXPECT_STREQ("s0gpu1", g->v[from].name);
    EXPECT_STREQ("s0nic0", g->v[nic].name);
}

/* A graph without a network vertex has no NIC to choose */
TEST(gig_plan, nic_nearest_none_without_network)
{
    const char text[] = "gig-topology 1\n"
                        "vertex c0 cpu server=0 numa=0\n"
                        "vertex g0 gpu server=0 cuda=0\n"
                        "link c0 g0 pcie 1 16\n";
    gig_graph_t *gr = NULL;
    char err[256];
    int from;

    ASSERT_EQ(UCS_OK, gig_topofile_parse(text, sizeof(text) - 1, "nonet",
                                         &gr, err, sizeof(err)))
        << err;
    graph_ptr g(gr);
    EXPECT_EQ(GIG_NONE, gig_nic_nearest(g.get(), 0, NULL, 0, -1, &from));
    EXPECT_STREQ("g0", g->v[from].name);
}

TEST(gig_graph, parallel_links_merge_and_lookups)
{
    gig_graph_t *g;
    int a, b, e;

    ASSERT_EQ(UCS_OK, gig_graph_create("merge", &g));
    graph_ptr gp(g);
    ASSERT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_GPU, "a", 0, &a));
    ASSERT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_GPU, "b", 0, &b));
    snprintf(g->v[b].pci_bus_id, GIG_PCI_BUS_ID_MAX, "0000:1B:00.0");
    g->v[b].cuda_dev = 1;
    for (int i = 0; i < 4; ++i) {
        ASSERT_EQ(UCS_OK, gig_graph_add_link(g, a, b, GIG_LINK_NVLINK, 1,
                                             25, 20));
    }
    EXPECT_EQ(UCS_ERR_ALREADY_EXISTS,
              gig_graph_add_vertex(g, GIG_VTX_CPU, "a", 0, &e));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              gig_graph_add_link(g, a, b, GIG_LINK_PCIE, 1, -1, 0));
    ASSERT_EQ(UCS_OK, gig_graph_finalize(g));
    EXPECT_EQ(2, g->ne);
    e = gig_graph_edge(g, a, b);
    ASSERT_NE(GIG_NONE, e);
    EXPECT_EQ(4u, g->e[e].count);
    EXPECT_DOUBLE_EQ(100.0, g->e[e].capacity);
    EXPECT_DOUBLE_EQ(80.0, g->e[gig_graph_edge(g, b, a)].capacity);
    EXPECT_EQ(b, gig_graph_find_pci(g, "0000:1b:00.0"));
    EXPECT_EQ(b, gig_graph_find_pci(g, "00000000:1B:00.0"));
    EXPECT_EQ(b, gig_graph_find_pci(g, "1b:00.0"));
    EXPECT_EQ(GIG_NONE, gig_graph_find_pci(g, "1c:00.0"));
    EXPECT_EQ(GIG_NONE, gig_graph_find_pci(g, "junk"));
    EXPECT_EQ(b, gig_graph_find_cuda(g, 1));
    EXPECT_EQ(GIG_NONE, gig_graph_find_cuda(g, 0));
}

TEST(gig_graph, capacity_table)
{
    EXPECT_NEAR(478.0, gig_cap_nvlink(GIG_NVLINK_V4, 18), 1e-9);
    EXPECT_NEAR(150.0, gig_cap_nvlink(GIG_NVLINK_V2, 6), 1e-9);
    EXPECT_NEAR(300.0, gig_cap_nvlink(GIG_NVLINK_V3, 12), 1e-9);
    EXPECT_NEAR(55.0, gig_cap_pcie(5, 16), 1e-9);
    EXPECT_NEAR(27.5, gig_cap_pcie(5, 8), 1e-9);
    EXPECT_NEAR(25.0, gig_cap_nic(200), 1e-9);
}

TEST(gig_plan, cache_returns_same_paths)
{
    graph_ptr g = synth("dgx1");
    plan_ptr plan = make_plan(g.get());
    const gig_pathset_t *p1, *p2;
    gig_plan_stats_t st;

    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), 5, 9, &p1));
    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), 5, 9, &p2));
    EXPECT_EQ(p1, p2);
    gig_plan_get_stats(plan.get(), &st);
    EXPECT_EQ(1u, st.maxflow_runs);
    EXPECT_EQ(1u, st.cache_hits);
    double sh[16];
    int n = gig_pathset_shares(p1, sh, 16);
    EXPECT_EQ(p1->npaths, n);
    double sum = 0;
    for (int i = 0; i < n; ++i) {
        sum += sh[i];
    }
    EXPECT_NEAR(1.0, sum, 1e-9);
}

/* Same graph, same answer: plans are deterministic across plan objects */
TEST(gig_plan, deterministic)
{
    graph_ptr g = synth("cluster:24");
    plan_ptr p1 = make_plan(g.get()), p2 = make_plan(g.get());
    std::vector<int> gp = gpus(g.get());
    const gig_pathset_t *a, *b;

    for (int s : gp) {
        for (int t : {gp[0], gp[5], gp[23]}) {
            if (s == t) {
                continue;
            }
            ASSERT_EQ(UCS_OK, gig_plan_paths(p1.get(), s, t, &a));
            ASSERT_EQ(UCS_OK, gig_plan_paths(p2.get(), s, t, &b));
            ASSERT_EQ(a->npaths, b->npaths);
            for (int i = 0; i < a->npaths; ++i) {
                EXPECT_EQ(path_str(g.get(), a->paths[i]),
                          path_str(g.get(), b->paths[i]));
            }
        }
    }
}

/* ------------------------------------------------------ forwarding tables */

namespace {

std::string entry_str(const gig_graph_t *g, const gig_fwd_entry_t *e)
{
    std::string s;
    char buf[32];

    if (e == NULL) {
        return "(none)";
    }
    for (int n = 0; n < e->nnext; ++n) {
        s += std::string(n ? " " : "") + "(" + g->v[e->next[n].next].name +
             ",{";
        for (int r = 0; r < e->next[n].nroutes; ++r) {
            const gig_fwd_route_t &rt = e->next[n].routes[r];
            s += r ? "," : "";
            s += "[";
            for (int k = 0; k < rt.nvia; ++k) {
                s += std::string(k ? ">" : "") + g->v[rt.via[k]].name;
            }
            snprintf(buf, sizeof(buf), "]%.2f", rt.capacity);
            s += buf;
        }
        s += "})";
    }
    return s;
}

fwd_ptr make_fwd(gig_plan_t *plan, std::vector<int> s, std::vector<int> d)
{
    gig_fwd_t *f = NULL;
    EXPECT_EQ(UCS_OK, gig_fwd_create(plan, s.data(), s.size(), d.data(),
                                     d.size(), &f));
    return fwd_ptr(f);
}

} // namespace

/* §4.4's example, Fig. 5c: v6's entry for v14 is
 * (v14, {(v0, {v2}), (v14, {v4 -> v16 -> v12})}) */
TEST(gig_fwd, paper_fig5c_entry)
{
    graph_ptr g = synth("multi-rdma");
    plan_ptr plan = make_plan(g.get());
    fwd_ptr f = make_fwd(plan.get(), {6}, {14});
    const gig_graph_t *G = g.get();

    EXPECT_EQ("(s1.gpu0,{[s0.nic0>net>s1.nic0]12.50}) "
              "(s0.cpu0,{[s0.pcie0]12.50})",
              entry_str(G, gig_fwd_lookup(f.get(), 6, 14)));
    EXPECT_EQ("(s0.cpu1,{[]12.50})",
              entry_str(G, gig_fwd_lookup(f.get(), 0, 14)));
    EXPECT_EQ("(s1.cpu1,{[s0.pcie1>s0.nic1>net>s1.nic1>s1.pcie1]12.50})",
              entry_str(G, gig_fwd_lookup(f.get(), 1, 14)));
    EXPECT_EQ("(s1.cpu0,{[]12.50})",
              entry_str(G, gig_fwd_lookup(f.get(), 9, 14)));
    EXPECT_EQ("(s1.gpu0,{[s1.pcie0]12.50})",
              entry_str(G, gig_fwd_lookup(f.get(), 8, 14)));
    /* no entries for the destination itself */
    EXPECT_EQ(NULL, gig_fwd_find(f.get(), 14));
    EXPECT_EQ(5, gig_fwd_ntables(f.get()));
}

TEST(gig_fwd, h200x2_all_to_all)
{
    graph_ptr g = synth("h200x2");
    plan_ptr plan = make_plan(g.get());
    int g0 = V(g.get(), "gpu0"), g1 = V(g.get(), "gpu1");
    int c0 = V(g.get(), "cpu0");
    fwd_ptr f = make_fwd(plan.get(), {g0, g1}, {g0, g1});

    EXPECT_EQ(3, gig_fwd_ntables(f.get()));
    EXPECT_EQ("(gpu1,{[nvsw]478.00}) (cpu0,{[]55.00})",
              entry_str(g.get(), gig_fwd_lookup(f.get(), g0, g1)));
    EXPECT_EQ("(gpu0,{[nvsw]478.00}) (cpu0,{[]55.00})",
              entry_str(g.get(), gig_fwd_lookup(f.get(), g1, g0)));
    EXPECT_EQ("(gpu1,{[]55.00})",
              entry_str(g.get(), gig_fwd_lookup(f.get(), c0, g1)));
    EXPECT_EQ("(gpu0,{[]55.00})",
              entry_str(g.get(), gig_fwd_lookup(f.get(), c0, g0)));
    EXPECT_EQ(NULL, gig_fwd_lookup(f.get(), g0, g0));
}

/* Merge rule: gpu2 relays to gpu1 for both sources, and each source relays
 * for the other; identical routes merge and their capacities add up, next
 * hops merge per destination */
TEST(gig_fwd, h100_mesh4_merge)
{
    graph_ptr g = synth("h100-mesh4");
    plan_ptr plan = make_plan(g.get());
    int g0 = V(g.get(), "gpu0"), g1 = V(g.get(), "gpu1");
    int g2 = V(g.get(), "gpu2"), g3 = V(g.get(), "gpu3");
    fwd_ptr f = make_fwd(plan.get(), {g0, g3}, {g1});

    EXPECT_EQ("(gpu1,{[]318.67}) (gpu2,{[]159.33}) (gpu3,{[]159.33}) "
              "(cpu0,{[]55.00})",
              entry_str(g.get(), gig_fwd_lookup(f.get(), g0, g1)));
    EXPECT_EQ("(gpu1,{[]318.67})",
              entry_str(g.get(), gig_fwd_lookup(f.get(), g2, g1)));
    /* gpu3 is a source and relays for gpu0: one entry, merged */
    EXPECT_EQ("(gpu1,{[]318.67}) (gpu0,{[]159.33}) (gpu2,{[]159.33}) "
              "(cpu0,{[]55.00})",
              entry_str(g.get(), gig_fwd_lookup(f.get(), g3, g1)));
    EXPECT_EQ("(gpu1,{[]110.00})",
              entry_str(g.get(), gig_fwd_lookup(f.get(), V(g.get(), "cpu0"),
                                                g1)));
}

/* Invariants on every synthetic topology: per (v, d) the routes carry what
 * the paths through v toward d carry, next hops are managed, no entry at d */
TEST_P(gig_synth_all, fwd_tables_consistent)
{
    graph_ptr g = synth(GetParam());
    plan_ptr plan = make_plan(g.get());
    std::vector<int> gp = gpus(g.get());
    if (gp.size() > 16) {
        gp.resize(16);
    }
    fwd_ptr f = make_fwd(plan.get(), gp, gp);
    std::map<std::pair<int, int>, double> expect;
    const gig_pathset_t *ps;

    for (int s : gp) {
        for (int t : gp) {
            if (s == t) {
                continue;
            }
            ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), s, t, &ps));
            for (int i = 0; i < ps->npaths; ++i) {
                for (int j = 0; j + 1 < ps->paths[i].nvert; ++j) {
                    if (gig_graph_is_managed(g.get(), ps->paths[i].vert[j])) {
                        expect[{ps->paths[i].vert[j], t}] +=
                            ps->paths[i].capacity;
                    }
                }
            }
        }
    }
    size_t nent = 0;
    for (int i = 0; i < gig_fwd_ntables(f.get()); ++i) {
        const gig_fwd_table_t *t = gig_fwd_table(f.get(), i);
        EXPECT_TRUE(gig_graph_is_managed(g.get(), t->vertex));
        for (int j = 0; j < t->nentries; ++j) {
            const gig_fwd_entry_t &e = t->entries[j];
            double sum = 0;
            EXPECT_NE(t->vertex, e.dst);
            if (j > 0) {
                EXPECT_LT(t->entries[j - 1].dst, e.dst);
            }
            for (int n = 0; n < e.nnext; ++n) {
                EXPECT_TRUE(gig_graph_is_managed(g.get(), e.next[n].next));
                for (int r = 0; r < e.next[n].nroutes; ++r) {
                    sum += e.next[n].routes[r].capacity;
                    for (int k = 0; k < e.next[n].routes[r].nvia; ++k) {
                        EXPECT_FALSE(gig_graph_is_managed(
                            g.get(), e.next[n].routes[r].via[k]));
                    }
                }
            }
            EXPECT_NEAR((expect[std::make_pair(t->vertex, e.dst)]), sum, 1e-6);
            EXPECT_EQ(&e, gig_fwd_lookup(f.get(), t->vertex, e.dst));
            nent++;
        }
    }
    EXPECT_EQ(expect.size(), nent);
}

/* --------------------------------------------------------- random graphs */

namespace {

/* A random multi-server graph: servers of random GPUs, CPUs, switches and
 * NICs with random links and integer capacities, one network vertex */
graph_ptr random_graph(unsigned seed, int nservers)
{
    std::mt19937 rng(seed);
    gig_graph_t *g;
    char name[32];
    std::vector<int> nics;
    int id, net;

    EXPECT_EQ(UCS_OK, gig_graph_create("random", &g));
    for (int s = 0; s < nservers; ++s) {
        std::vector<int> vs;
        int n = 3 + rng() % 8;
        for (int i = 0; i < n; ++i) {
            gig_vertex_type_t t = (gig_vertex_type_t)(rng() % 5);
            snprintf(name, sizeof(name), "s%d.v%d", s, i);
            EXPECT_EQ(UCS_OK, gig_graph_add_vertex(g, t, name, s, &id));
            vs.push_back(id);
            if (t == GIG_VTX_NIC) {
                nics.push_back(id);
            }
        }
        int ne = n + rng() % (2 * n);
        for (int k = 0; k < ne; ++k) {
            int a = vs[rng() % n], b = vs[rng() % n];
            if (a == b) {
                continue;
            }
            double c1 = rng() % 100, c2 = (rng() % 3 == 0) ? 0 : rng() % 100;
            EXPECT_EQ(UCS_OK, gig_graph_add_link(g, a, b,
                      (gig_link_type_t)(rng() % 3), 1, c1, c2));
        }
    }
    if (nservers > 1) {
        EXPECT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_NET, "net",
                                               GIG_NONE, &net));
        for (int nic : nics) {
            EXPECT_EQ(UCS_OK, gig_graph_add_link(g, nic, net, GIG_LINK_NET,
                                                 1, 1 + rng() % 50,
                                                 1 + rng() % 50));
        }
    }
    EXPECT_EQ(UCS_OK, gig_graph_finalize(g));
    return graph_ptr(g);
}

/* Plans are asked for between GPUs and CPUs, maybe switches; never NICs */
bool endpoint(const gig_graph_t *g, int v)
{
    return (g->v[v].type != GIG_VTX_NIC) && (g->v[v].type != GIG_VTX_NET);
}

} // namespace

TEST(gig_random, pairs_match_reference_single_server)
{
    for (unsigned seed = 1; seed <= 300; ++seed) {
        graph_ptr g = random_graph(seed, 1);
        plan_ptr plan = make_plan(g.get());
        const gig_pathset_t *ps;
        SCOPED_TRACE("seed " + std::to_string(seed));
        for (int s = 0; s < g->nv; ++s) {
            for (int t = 0; t < g->nv; ++t) {
                if ((s != t) && endpoint(g.get(), s) &&
                    endpoint(g.get(), t)) {
                    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), s, t, &ps));
                    ASSERT_NO_FATAL_FAILURE(check_pathset(g.get(), ps));
                }
            }
        }
    }
}

TEST(gig_random, pairs_match_reference_multi_server)
{
    for (unsigned seed = 1; seed <= 100; ++seed) {
        graph_ptr g = random_graph(1000 + seed, 2 + seed % 4);
        plan_ptr plan = make_plan(g.get());
        const gig_pathset_t *ps;
        SCOPED_TRACE("seed " + std::to_string(1000 + seed));
        for (int s = 0; s < g->nv; ++s) {
            for (int t = 0; t < g->nv; ++t) {
                if ((s != t) && endpoint(g.get(), s) &&
                    endpoint(g.get(), t)) {
                    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), s, t, &ps));
                    ASSERT_NO_FATAL_FAILURE(check_pathset(g.get(), ps));
                }
            }
        }
    }
}

TEST(gig_random, library_msms_matches_reference)
{
    for (unsigned seed = 1; seed <= 200; ++seed) {
        graph_ptr g = random_graph(5000 + seed, 1 + seed % 3);
        std::vector<int> S, D;
        double lib;
        for (int v = 0; v < g->nv; ++v) {
            if (v == g->net) {
                continue;
            }
            ((v % 3 == 0) ? S : (v % 3 == 1) ? D : S).push_back(v);
        }
        if (S.empty() || D.empty()) {
            continue;
        }
        ASSERT_EQ(UCS_OK, gig_maxflow_sets(g.get(), S.data(), S.size(),
                                           D.data(), D.size(), &lib));
        EXPECT_NEAR(ref_maxflow(g.get(), S, D, {}, {}, true), lib, 1e-3)
            << "seed " << 5000 + seed;
    }
}

/* Duplicated sources and destinations count once; bad vertices fail */
TEST(gig_fwd, duplicates_and_bad_vertices)
{
    graph_ptr g = synth("h100-mesh4");
    plan_ptr plan = make_plan(g.get());
    int g0 = V(g.get(), "gpu0"), g1 = V(g.get(), "gpu1");
    fwd_ptr f1 = make_fwd(plan.get(), {g0}, {g1});
    fwd_ptr f2 = make_fwd(plan.get(), {g0, g0}, {g1, g1, g1});

    EXPECT_EQ(entry_str(g.get(), gig_fwd_lookup(f1.get(), g0, g1)),
              entry_str(g.get(), gig_fwd_lookup(f2.get(), g0, g1)));
    EXPECT_EQ(gig_fwd_ntables(f1.get()), gig_fwd_ntables(f2.get()));

    gig_fwd_t *f = NULL;
    int bad = g->nv;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM,
              gig_fwd_create(plan.get(), &g0, 1, &bad, 1, &f));
    EXPECT_EQ(NULL, f);
}

/* A cluster's tables are written out when first read: read first by four
 * threads at once, after the plan is gone, they are those of tables read
 * one by one */
TEST(gig_fwd, first_reads_from_threads_after_the_plan)
{
    graph_ptr g = synth("cluster:12:3");
    std::vector<int> gpus;
    for (int v = 0; v < g->nv; ++v) {
        if (g->v[v].type == GIG_VTX_GPU) {
            gpus.push_back(v);
        }
    }
    plan_ptr plan = make_plan(g.get());
    fwd_ptr ref   = make_fwd(plan.get(), gpus, gpus);
    fwd_ptr f     = make_fwd(plan.get(), gpus, gpus);
    plan.reset();
    ASSERT_GT(gig_fwd_ntables(f.get()), 0);

    std::vector<std::map<std::pair<int, int>, std::string> > seen(4);
    std::vector<std::thread> th;
    for (int t = 0; t < 4; ++t) {
        th.emplace_back([&, t]() {
            for (size_t k = 0; k < gpus.size(); ++k) {
                size_t n = gpus.size(), j = (k + t * n / 4) % n;
                int v    = gpus[(t % 2) ? n - 1 - j : j];
                for (int d : gpus) {
                    seen[t][{v, d}] = entry_str(g.get(),
                                                gig_fwd_lookup(f.get(), v, d));
                }
            }
        });
    }
    for (auto &x : th) {
        x.join();
    }
    int checked = 0;
    for (int t = 0; t < 4; ++t) {
        for (const auto &e : seen[t]) {
            ASSERT_EQ(entry_str(g.get(), gig_fwd_lookup(ref.get(),
                                                        e.first.first,
                                                        e.first.second)),
                      e.second) << g->v[e.first.first].name << " -> "
                                << g->v[e.first.second].name;
            checked += (e.second != "(none)");
        }
    }
    /* every GPU has an entry for every other GPU, in every thread */
    EXPECT_EQ(4 * (int)(gpus.size() * (gpus.size() - 1)), checked);
    for (int i = 0; i < gig_fwd_ntables(f.get()); ++i) {
        const gig_fwd_table_t *a = gig_fwd_table(f.get(), i);
        const gig_fwd_table_t *b = gig_fwd_table(ref.get(), i);
        ASSERT_TRUE((a != NULL) && (b != NULL));
        ASSERT_EQ(b->vertex, a->vertex);
        ASSERT_EQ(b->nentries, a->nentries);
        for (int e = 0; e < a->nentries; ++e) {
            EXPECT_EQ(b->entries[e].dst, a->entries[e].dst);
            EXPECT_EQ(entry_str(g.get(), &b->entries[e]),
                      entry_str(g.get(), &a->entries[e]));
        }
    }
}

/* CPU-GPU NVLink (IBM AC922): the host path is an NVLink path as fast as
 * the peer link; across sockets the X-Bus is the bottleneck */
TEST(gig_known, ac922_host_path_over_nvlink)
{
    graph_ptr g = synth("ac922");
    plan_ptr plan = make_plan(g.get());
    const gig_pathset_t *ps;

    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), V(g.get(), "gpu0"),
                                     V(g.get(), "gpu1"), &ps));
    ASSERT_EQ(2, ps->npaths);
    EXPECT_EQ(GIG_PATH_DIRECT, ps->paths[0].kind);
    EXPECT_NEAR(75.0, ps->paths[0].capacity, 1e-3);
    EXPECT_EQ("gpu0>cpu0>gpu1", path_str(g.get(), ps->paths[1]));
    EXPECT_EQ(GIG_PATH_VIA_HOST, ps->paths[1].kind);
    EXPECT_NEAR(75.0, ps->paths[1].capacity, 1e-3);
    ASSERT_EQ(UCS_OK, gig_plan_paths(plan.get(), V(g.get(), "gpu0"),
                                     V(g.get(), "gpu3"), &ps));
    EXPECT_NEAR(64.0, ps->total, 1e-3);
}

/* src reaches dst only through ra or rb; the pairs of src's vertex spread
 * over them in the entry's capacity shares (gig_fwd_pick), a direct next
 * hop is always taken */
TEST(gig_fwd, pairs_spread_over_next_hops_by_share)
{
    static const char text[] =
        "gig-topology 1\n"
        "vertex src cpu server=0 numa=0\n"
        "vertex ra cpu server=0 numa=1\n"
        "vertex rb cpu server=0 numa=2\n"
        "vertex dst cpu server=0 numa=3\n"
        "link src ra xpi 1 40\n"
        "link ra dst xpi 1 40\n"
        "link src rb xpi 1 20\n"
        "link rb dst xpi 1 20\n";
    gig_graph_t *gr = NULL;
    gig_plan_t *pl  = NULL;
    char err[256];

    ASSERT_EQ(UCS_OK, gig_topofile_parse(text, sizeof(text) - 1, "split",
                                         &gr, err, sizeof(err)))
        << err;
    graph_ptr g(gr);
    ASSERT_EQ(UCS_OK, gig_plan_create(g.get(), &pl));
    plan_ptr plan(pl);
    const int src = gig_graph_find_name(g.get(), "src");
    const int ra  = gig_graph_find_name(g.get(), "ra");
    const int dst = gig_graph_find_name(g.get(), "dst");
    std::vector<int> all = {src, ra, gig_graph_find_name(g.get(), "rb"), dst};
    fwd_ptr f = make_fwd(plan.get(), all, all);

    const gig_fwd_entry_t *ent = gig_fwd_lookup(f.get(), src, dst);
    ASSERT_NE(nullptr, ent);
    ASSERT_EQ(2, ent->nnext) << entry_str(g.get(), ent);
    double cap[2] = {0, 0}, total;
    for (int k = 0; k < 2; ++k) {
        for (int r = 0; r < ent->next[k].nroutes; ++r) {
            cap[k] += ent->next[k].routes[r].capacity;
        }
    }
    total = cap[0] + cap[1];
    ASSERT_GT(cap[0], 0);
    ASSERT_GT(cap[1], 0);
    for (unsigned n : {3u, 10u, 30u, 100u}) {
        int count[2] = {0, 0};
        for (unsigned rank = 0; rank < n; ++rank) {
            int k = gig_fwd_pick(ent, dst, rank);
            ASSERT_GE(k, 0);
            ASSERT_LT(k, 2);
            count[k]++;
        }
        for (int k = 0; k < 2; ++k) {
            /* the golden ratio's points: within 2 of the share, any n */
            EXPECT_NEAR(n * cap[k] / total, count[k], 2.0)
                << n << " pairs, next hop " << g->v[ent->next[k].next].name
                << " of " << entry_str(g.get(), ent);
        }
    }
    /* a direct next hop: every pair takes it */
    ent = gig_fwd_lookup(f.get(), src, ra);
    ASSERT_NE(nullptr, ent);
    ASSERT_EQ(ra, ent->next[0].next);
    ASSERT_GT(ent->nnext, 1) << entry_str(g.get(), ent);
    for (unsigned rank = 0; rank < 30; ++rank) {
        EXPECT_EQ(0, gig_fwd_pick(ent, ra, rank));
    }
}

/**
 * The striping engine's view of the GIG planner (cuda_mgi_plan.c): which
 * executors a pair of GPUs gets on the papers' topologies and from a
 * topology file.  CPU only.
 * See file LICENSE for terms.
 */

#include <gtest/gtest.h>

extern "C" {
#include "cuda_mgi_plan.h"
}

#include <cstdio>
#include <string>

namespace {

struct planned {
    double                   direct = 0;
    unsigned                 n      = 0;
    uct_cuda_mgi_plan_path_t staged[UCT_CUDA_MGI_MAX_STAGED];
};

class cuda_mgi_plan : public ::testing::Test {
protected:
    void TearDown() override {
        if (m_plan != nullptr) {
            gig_plan_destroy(m_plan);
        }
        if (m_graph != nullptr) {
            gig_graph_destroy(m_graph);
        }
    }

    void synth(const char *name) {
        ASSERT_EQ(UCS_OK, gig_synth_create(name, &m_graph)) << name;
        ASSERT_EQ(UCS_OK, gig_plan_create(m_graph, &m_plan));
    }

    planned route(int src_cuda, int dst_cuda, unsigned mask) {
        planned p;
        int src = uct_cuda_mgi_plan_find_gpu(m_graph, "", src_cuda);
        int dst = uct_cuda_mgi_plan_find_gpu(m_graph, "", dst_cuda);
        EXPECT_NE(GIG_NONE, src);
        EXPECT_NE(GIG_NONE, dst);
        EXPECT_EQ(UCS_OK, uct_cuda_mgi_plan_route(m_plan, src, dst, mask,
                                                  &p.direct, p.staged,
                                                  UCT_CUDA_MGI_MAX_STAGED,
                                                  &p.n));
        return p;
    }

    std::string name(int v) { return m_graph->v[v].name; }

    gig_graph_t *m_graph = nullptr;
    gig_plan_t  *m_plan  = nullptr;
};

const unsigned ALL = UCS_BIT(UCT_CUDA_MGI_PATH_DIRECT) |
                     UCS_BIT(UCT_CUDA_MGI_PATH_HOST) |
                     UCS_BIT(UCT_CUDA_MGI_PATH_GPU);

} // namespace


/* The GPU machine: NVLink through the NVSwitch plus the host path; a relay
 * through another GPU would add nothing and is not offered */
TEST_F(cuda_mgi_plan, h200x2_direct_and_host) {
    synth("h200x2");
    planned p = route(0, 1, ALL);
    EXPECT_DOUBLE_EQ(478e9, p.direct);
    ASSERT_EQ(1u, p.n);
    EXPECT_EQ(UCT_CUDA_MGI_PATH_HOST, p.staged[0].kind);
    EXPECT_DOUBLE_EQ(55e9, p.staged[0].capacity);
    EXPECT_EQ(GIG_VTX_CPU, m_graph->v[p.staged[0].via].type);
}

TEST_F(cuda_mgi_plan, hgx_h200_no_gpu_relays) {
    synth("hgx-h200");
    for (int dst = 1; dst < 8; ++dst) {
        planned p = route(0, dst, ALL);
        ASSERT_EQ(1u, p.n) << "gpu0 -> gpu" << dst;
        EXPECT_EQ(UCT_CUDA_MGI_PATH_HOST, p.staged[0].kind);
    }
}

/* A direct mesh: relays through the two other GPUs add bandwidth */
TEST_F(cuda_mgi_plan, h100_mesh_relays) {
    synth("h100-mesh4");
    planned p = route(0, 1, ALL);
    EXPECT_GT(p.direct, 0);
    ASSERT_EQ(3u, p.n);
    EXPECT_EQ(UCT_CUDA_MGI_PATH_HOST, p.staged[0].kind);
    std::set<std::string> relays;
    for (unsigned i = 1; i < p.n; ++i) {
        EXPECT_EQ(UCT_CUDA_MGI_PATH_GPU, p.staged[i].kind);
        EXPECT_EQ(GIG_VTX_GPU, m_graph->v[p.staged[i].via].type);
        EXPECT_GT(p.staged[i].capacity, 0);
        relays.insert(name(p.staged[i].via));
    }
    EXPECT_EQ((std::set<std::string>{"gpu2", "gpu3"}), relays);
}

/* UCX_CUDA_MGI_PATHS limits the kinds */
TEST_F(cuda_mgi_plan, paths_mask) {
    synth("h100-mesh4");
    EXPECT_EQ(0u, route(0, 1, UCS_BIT(UCT_CUDA_MGI_PATH_DIRECT)).n);

    planned host = route(0, 1, UCS_BIT(UCT_CUDA_MGI_PATH_HOST));
    ASSERT_EQ(1u, host.n);
    EXPECT_EQ(UCT_CUDA_MGI_PATH_HOST, host.staged[0].kind);

    planned gpu = route(0, 1, UCS_BIT(UCT_CUDA_MGI_PATH_GPU));
    ASSERT_EQ(2u, gpu.n);
    EXPECT_EQ(UCT_CUDA_MGI_PATH_GPU, gpu.staged[0].kind);
    EXPECT_EQ(UCT_CUDA_MGI_PATH_GPU, gpu.staged[1].kind);
}

/* DGX-1: a pair's NVLink direct path counts, its PCIe-switch direct path
 * does not (a peer copy takes the NVLink); relays are single GPUs */
TEST_F(cuda_mgi_plan, dgx1_nvlink_direct_single_relays) {
    synth("dgx1");
    planned p = route(0, 1, ALL);
    EXPECT_GT(p.direct, 0);
    ASSERT_GE(p.n, 2u);
    for (unsigned i = 0; i < p.n; ++i) {
        if (p.staged[i].kind == UCT_CUDA_MGI_PATH_GPU) {
            EXPECT_EQ(GIG_VTX_GPU, m_graph->v[p.staged[i].via].type);
        }
    }
}

/* UCX_CUDA_MGI_TOPO_FILE: the file of the GPU machine, GPUs found by PCI
 * bus id as the CUDA driver names them */
TEST_F(cuda_mgi_plan, topology_file) {
    std::string file = std::string(MGI_TOP_SRCDIR) + "/docs/h200x2.topo";
    ASSERT_EQ(UCS_OK, uct_cuda_mgi_plan_open(file.c_str(), &m_graph,
                                             &m_plan));
    int src = uct_cuda_mgi_plan_find_gpu(m_graph, "0000:00:06.0", -1);
    int dst = uct_cuda_mgi_plan_find_gpu(m_graph, "0000:00:07.0", -1);
    ASSERT_NE(GIG_NONE, src);
    ASSERT_NE(GIG_NONE, dst);
    planned p;
    ASSERT_EQ(UCS_OK, uct_cuda_mgi_plan_route(m_plan, src, dst, ALL,
                                              &p.direct, p.staged,
                                              UCT_CUDA_MGI_MAX_STAGED, &p.n));
    EXPECT_DOUBLE_EQ(478e9, p.direct);
    ASSERT_EQ(1u, p.n);
    EXPECT_EQ(UCT_CUDA_MGI_PATH_HOST, p.staged[0].kind);
    /* unknown bus id: found by ordinal instead */
    EXPECT_EQ(src, uct_cuda_mgi_plan_find_gpu(m_graph, "0000:99:00.0", 0));
}

TEST_F(cuda_mgi_plan, bad_topology_file_is_refused) {
    char path[] = "/tmp/cuda_mgi_bad_topoXXXXXX";
    int fd      = mkstemp(path);
    ASSERT_GE(fd, 0);
    const char text[] = "gig-topology 1\nvertex gpu0 gpu server=zero\n";
    ASSERT_EQ((ssize_t)sizeof(text) - 1, write(fd, text, sizeof(text) - 1));
    close(fd);
    EXPECT_NE(UCS_OK, uct_cuda_mgi_plan_open(path, &m_graph, &m_plan));
    EXPECT_EQ(nullptr, m_plan);
    unlink(path);
    EXPECT_NE(UCS_OK, uct_cuda_mgi_plan_open("/nonexistent/file.topo",
                                             &m_graph, &m_plan));
}

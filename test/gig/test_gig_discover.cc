/*
 * Discovery on the machine running the tests.  Without a CUDA driver (CI,
 * the CPU build machine) the graph must come out with its CPU/PCIe/NIC part
 * and no GPUs; with one, every GPU must carry a CUDA ordinal and bus id.
 */
#include <gig.h>

#include <gtest/gtest.h>

#include <cstdlib>

TEST(gig_discover, live_graph_is_consistent)
{
    gig_graph_t *g = NULL;
    gig_plan_t *plan;

    ASSERT_EQ(UCS_OK, gig_graph_load(NULL, "", &g));
    EXPECT_GE(gig_graph_count(g, GIG_VTX_CPU), 1);
    EXPECT_LE(gig_graph_count(g, GIG_VTX_NVSWITCH), 1);
    for (int i = 0; i < g->nv; ++i) {
        if (g->v[i].type == GIG_VTX_GPU) {
            EXPECT_EQ(i, gig_graph_find_cuda(g, g->v[i].cuda_dev));
            EXPECT_EQ(i, gig_graph_find_pci(g, g->v[i].pci_bus_id));
        }
    }
    ASSERT_EQ(UCS_OK, gig_plan_create(g, &plan));
    printf("  discovered: %d GPU, %d CPU, %d PCIe, %d NIC, %d edges\n",
           gig_graph_count(g, GIG_VTX_GPU), gig_graph_count(g, GIG_VTX_CPU),
           gig_graph_count(g, GIG_VTX_PCIE), gig_graph_count(g, GIG_VTX_NIC),
           g->ne);
    gig_plan_destroy(plan);
    gig_graph_destroy(g);
}

TEST(gig_discover, synthetic_by_name_and_unknown_name)
{
    gig_graph_t *g = NULL;

    ASSERT_EQ(UCS_OK, gig_graph_load("", "hgx-h200", &g));
    EXPECT_EQ(8, gig_graph_count(g, GIG_VTX_GPU));
    gig_graph_destroy(g);
    g = NULL;
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, gig_synth_create("dgx-9000", &g));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, gig_synth_create("cluster:10", &g));
    EXPECT_EQ(UCS_ERR_INVALID_PARAM, gig_synth_create("cluster:0", &g));
    EXPECT_EQ(NULL, g);
    ASSERT_EQ(UCS_OK, gig_synth_create("cluster:12:6", &g));
    EXPECT_EQ(12, gig_graph_count(g, GIG_VTX_GPU));
    EXPECT_EQ(2, g->nservers);
    gig_graph_destroy(g);
}

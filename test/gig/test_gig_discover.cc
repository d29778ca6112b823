/*
 * Discovery on the machine running the tests.  Without a CUDA driver (CI,
 * the CPU build machine) the graph must come out with its CPU/PCIe/NIC part
 * and no GPUs; with one, every GPU must carry a CUDA ordinal and bus id.
 */
#include <gig.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

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

namespace {

/* A fake sysfs root: class/<cls>/<name>/device -> the PCI function */
struct fake_sysfs {
    std::string root;

    fake_sysfs() {
        char tmpl[] = "/tmp/gig_sysfs_XXXXXX";
        root = (mkdtemp(tmpl) != NULL) ? tmpl : "";
    }
    ~fake_sysfs() {
        if (!root.empty()) {
            std::string cmd = "rm -rf '" + root + "'";
            (void)!system(cmd.c_str());
        }
    }
    void write(const std::string &rel, const std::string &text) {
        std::string path = root + "/" + rel;
        FILE *f = fopen(path.c_str(), "w");
        ASSERT_TRUE(f != NULL) << path;
        fputs(text.c_str(), f);
        fclose(f);
    }
    void mkdirs(const std::string &rel) {
        std::string cmd = "mkdir -p '" + root + "/" + rel + "'";
        ASSERT_EQ(0, system(cmd.c_str())) << cmd;
    }
    /* bus_id "": no device link (a veth, a bridge) */
    void dev(const std::string &cls, const std::string &name,
             const std::string &bus_id) {
        mkdirs("class/" + cls + "/" + name);
        if (!bus_id.empty()) {
            mkdirs("devices/pci0000:00/" + bus_id);
            std::string link = root + "/class/" + cls + "/" + name +
                               "/device";
            ASSERT_EQ(0, symlink(("../../../devices/pci0000:00/" +
                                  bus_id).c_str(), link.c_str()))
                << link;
        }
    }
};

}

/* A NIC vertex's UCX device names through a fake sysfs: IB ports
 * (dev:port) and netdevs of its PCI function, nothing for a virtual or
 * unknown one */
TEST(gig_discover, nic_ucx_devices_from_sysfs)
{
    fake_sysfs fs;
    gig_graph_t *g;
    char buf[128];
    int n0, n1, n2, n3, cpu;

    ASSERT_FALSE(fs.root.empty());
    fs.dev("infiniband", "mlx5_0", "0000:18:00.0");
    fs.mkdirs("class/infiniband/mlx5_0/ports/1");
    fs.dev("infiniband", "mlx5_1", "0000:3b:00.0");
    fs.mkdirs("class/infiniband/mlx5_1/ports/1");
    fs.mkdirs("class/infiniband/mlx5_1/ports/2");
    fs.dev("net", "ib0", "0000:18:00.0");
    fs.dev("net", "eth2", "0000:5e:00.1");
    fs.dev("net", "eth1", "0000:5e:00.0");
    fs.dev("net", "veth0", "");
    fs.dev("net", "lo", "");

    ASSERT_EQ(UCS_OK, gig_graph_create("sysfs", &g));
    ASSERT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_NIC, "n0", 0, &n0));
    ASSERT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_NIC, "n1", 0, &n1));
    ASSERT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_NIC, "n2", 0, &n2));
    ASSERT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_NIC, "n3", 0, &n3));
    ASSERT_EQ(UCS_OK, gig_graph_add_vertex(g, GIG_VTX_CPU, "c", 0, &cpu));
    snprintf(g->v[n0].pci_bus_id, GIG_PCI_BUS_ID_MAX, "18:00.0");
    snprintf(g->v[n1].pci_bus_id, GIG_PCI_BUS_ID_MAX, "0000:3B:00.0");
    snprintf(g->v[n2].pci_bus_id, GIG_PCI_BUS_ID_MAX, "0000:5e:00.0");
    snprintf(g->v[cpu].pci_bus_id, GIG_PCI_BUS_ID_MAX, "0000:18:00.0");

    const char *root = fs.root.c_str();
    EXPECT_EQ(2, gig_nic_ucx_devices(g, n0, root, buf, sizeof(buf)));
    EXPECT_STREQ("mlx5_0:1,ib0", buf);
    EXPECT_EQ(2, gig_nic_ucx_devices(g, n1, root, buf, sizeof(buf)));
    EXPECT_STREQ("mlx5_1:1,mlx5_1:2", buf);
    EXPECT_EQ(1, gig_nic_ucx_devices(g, n2, root, buf, sizeof(buf)));
    EXPECT_STREQ("eth1", buf) << "the function, not its sibling eth2";
    /* no PCI bus id (a host link of a veth), a CPU, no vertex */
    EXPECT_EQ(0, gig_nic_ucx_devices(g, n3, root, buf, sizeof(buf)));
    EXPECT_STREQ("", buf);
    EXPECT_EQ(0, gig_nic_ucx_devices(g, cpu, root, buf, sizeof(buf)));
    EXPECT_EQ(0, gig_nic_ucx_devices(g, 99, root, buf, sizeof(buf)));
    /* a function no device of the tree is on */
    snprintf(g->v[n3].pci_bus_id, GIG_PCI_BUS_ID_MAX, "0000:99:00.0");
    EXPECT_EQ(0, gig_nic_ucx_devices(g, n3, root, buf, sizeof(buf)));
    /* a short buffer keeps the names that fit, whole */
    EXPECT_EQ(1, gig_nic_ucx_devices(g, n0, root, buf, 10));
    EXPECT_STREQ("mlx5_0:1", buf);
    EXPECT_EQ(0, gig_nic_ucx_devices(g, n0, root, buf, 4));
    EXPECT_STREQ("", buf);
    /* ports and interfaces that sysfs says are down are left out; an
     * active port, "up" and "unknown" (virtual) are kept */
    fs.write("class/infiniband/mlx5_1/ports/1/state", "1: DOWN\n");
    fs.write("class/infiniband/mlx5_1/ports/2/state", "4: ACTIVE\n");
    EXPECT_EQ(1, gig_nic_ucx_devices(g, n1, root, buf, sizeof(buf)));
    EXPECT_STREQ("mlx5_1:2", buf);
    fs.write("class/net/ib0/operstate", "down\n");
    EXPECT_EQ(1, gig_nic_ucx_devices(g, n0, root, buf, sizeof(buf)));
    EXPECT_STREQ("mlx5_0:1", buf);
    fs.write("class/net/eth1/operstate", "unknown\n");
    EXPECT_EQ(1, gig_nic_ucx_devices(g, n2, root, buf, sizeof(buf)));
    fs.write("class/infiniband/mlx5_0/ports/1/state", "1: DOWN\n");
    EXPECT_EQ(0, gig_nic_ucx_devices(g, n0, root, buf, sizeof(buf)))
        << "every device of the NIC down: none, UCX chooses";
    /* no such root: nothing */
    EXPECT_EQ(0, gig_nic_ucx_devices(g, n0, "/nonexistent-sysfs", buf,
                                     sizeof(buf)));
    gig_graph_destroy(g);
}

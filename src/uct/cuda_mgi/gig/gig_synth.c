/*
 * Built-in synthetic topologies: the GPU infrastructures of the paper's
 * Fig. 2 (a-j), current HGX boards, the 2 x H200 machine of this project,
 * and generated clusters for the planner benchmark.  Capacities come from
 * the one table in gig_caps.c.
 */
#include "gig.h"

#include <ucs/debug/log_def.h>

#include <stdlib.h>
#include <string.h>

/* Builder with a sticky status, so topologies read as lists of parts */
typedef struct {
    gig_graph_t  *g;
    ucs_status_t status;
    int          multi;      /* prefix names with "s<server>." */
} gig_synth_t;

static int gig_synth_vertex(gig_synth_t *b, gig_vertex_type_t type,
                            const char *base, int idx, int server,
                            const char *model)
{
    char name[GIG_NAME_MAX];
    int id = GIG_NONE;

    if (b->status != UCS_OK) {
        return GIG_NONE;
    }
    if (type == GIG_VTX_NET) {
        snprintf(name, sizeof(name), "%s", base);
    } else if (b->multi) {
        snprintf(name, sizeof(name), "s%d.%s%d", server, base, idx);
    } else {
        snprintf(name, sizeof(name), "%s%d", base, idx);
    }
    if ((type == GIG_VTX_NVSWITCH) && (idx < 0)) {
        /* one merged NVSwitch per server */
        snprintf(name, sizeof(name), b->multi ? "s%d.nvsw" : "nvsw", server);
    }
    b->status = gig_graph_add_vertex(b->g, type, name, server, &id);
    if ((b->status == UCS_OK) && (model != NULL)) {
        snprintf(b->g->v[id].model, sizeof(b->g->v[id].model), "%s", model);
    }
    if ((b->status == UCS_OK) && (type == GIG_VTX_GPU)) {
        b->g->v[id].cuda_dev = idx;   /* GPUs are numbered per server */
    }
    return id;
}

static void gig_synth_link(gig_synth_t *b, int x, int y,
                           gig_link_type_t link, unsigned count, double cap)
{
    if (b->status == UCS_OK) {
        b->status = gig_graph_add_link(b->g, x, y, link, count, cap, cap);
    }
}

static void gig_synth_nvlink(gig_synth_t *b, int x, int y, int gen,
                             unsigned n)
{
    gig_synth_link(b, x, y, GIG_LINK_NVLINK, n, gig_cap_nvlink(gen, n));
}

static void gig_synth_pcie(gig_synth_t *b, int x, int y, int gen)
{
    gig_synth_link(b, x, y, GIG_LINK_PCIE, 1, gig_cap_pcie(gen, 16));
}

/* Fig. 2a / 5a: one CPU, two PCIe switches, four GPUs */
static void gig_synth_pcie_2sw(gig_synth_t *b)
{
    int cpu, sw[2], gpu, i;

    cpu   = gig_synth_vertex(b, GIG_VTX_CPU, "cpu", 0, 0, NULL);
    sw[0] = gig_synth_vertex(b, GIG_VTX_PCIE, "pcie", 0, 0, "PCIe3 switch");
    sw[1] = gig_synth_vertex(b, GIG_VTX_PCIE, "pcie", 1, 0, "PCIe3 switch");
    gig_synth_pcie(b, cpu, sw[0], 3);
    gig_synth_pcie(b, cpu, sw[1], 3);
    for (i = 0; i < 4; ++i) {
        gpu = gig_synth_vertex(b, GIG_VTX_GPU, "gpu", i, 0, "V100 PCIe");
        gig_synth_pcie(b, gpu, sw[i / 2], 3);
    }
}

/* Fig. 2c: two sockets joined by an XPI link, two GPUs under each */
static void gig_synth_2socket(gig_synth_t *b)
{
    int cpu[2], sw[2], gpu, i;

    for (i = 0; i < 2; ++i) {
        cpu[i] = gig_synth_vertex(b, GIG_VTX_CPU, "cpu", i, 0, NULL);
    }
    gig_synth_link(b, cpu[0], cpu[1], GIG_LINK_XPI, 2, gig_cap_xpi("qpi"));
    for (i = 0; i < 2; ++i) {
        sw[i] = gig_synth_vertex(b, GIG_VTX_PCIE, "pcie", i, 0, NULL);
        gig_synth_pcie(b, cpu[i], sw[i], 3);
    }
    for (i = 0; i < 4; ++i) {
        gpu = gig_synth_vertex(b, GIG_VTX_GPU, "gpu", i, 0, "V100 PCIe");
        gig_synth_pcie(b, gpu, sw[i / 2], 3);
    }
}

/* Fig. 2b/2d-like: PCIe GPUs bridged in pairs by NVLink (A100 PCIe with
 * three bridges: 12 NVLink3, 600 GB/s both ways), on one socket (2b) or
 * two sockets (2d) */
static void gig_synth_nvbridge(gig_synth_t *b, int nsockets)
{
    int cpu[2], sw[2], gpu[4], i;

    for (i = 0; i < nsockets; ++i) {
        cpu[i] = gig_synth_vertex(b, GIG_VTX_CPU, "cpu", i, 0, NULL);
    }
    if (nsockets == 2) {
        gig_synth_link(b, cpu[0], cpu[1], GIG_LINK_XPI, 1,
                       gig_cap_xpi("upi"));
    }
    for (i = 0; i < 2; ++i) {
        sw[i] = gig_synth_vertex(b, GIG_VTX_PCIE, "pcie", i, 0, NULL);
        gig_synth_pcie(b, cpu[(nsockets == 2) ? i : 0], sw[i], 4);
    }
    for (i = 0; i < 4; ++i) {
        gpu[i] = gig_synth_vertex(b, GIG_VTX_GPU, "gpu", i, 0, "A100 PCIe");
        gig_synth_pcie(b, gpu[i], sw[i / 2], 4);
    }
    gig_synth_nvlink(b, gpu[0], gpu[1], GIG_NVLINK_V3, 12);
    gig_synth_nvlink(b, gpu[2], gpu[3], GIG_NVLINK_V3, 12);
}

/* Fig. 2e-like: IBM AC922, two POWER9 sockets (X-Bus, 64 GB/s), each with
 * two V100 joined to each other and to their CPU by 3 NVLink2 links */
static void gig_synth_ac922(gig_synth_t *b)
{
    int cpu[2], gpu[4], i;

    for (i = 0; i < 2; ++i) {
        cpu[i] = gig_synth_vertex(b, GIG_VTX_CPU, "cpu", i, 0, "POWER9");
    }
    gig_synth_link(b, cpu[0], cpu[1], GIG_LINK_XPI, 1, gig_cap_xpi("xbus"));
    for (i = 0; i < 4; ++i) {
        gpu[i] = gig_synth_vertex(b, GIG_VTX_GPU, "gpu", i, 0, "V100");
        gig_synth_nvlink(b, gpu[i], cpu[i / 2], GIG_NVLINK_V2, 3);
    }
    gig_synth_nvlink(b, gpu[0], gpu[1], GIG_NVLINK_V2, 3);
    gig_synth_nvlink(b, gpu[2], gpu[3], GIG_NVLINK_V2, 3);
}

/* Fig. 2f: DGX-1 (V100) hybrid cube-mesh, NVLink2 link counts as in
 * nvidia-smi topo -m of a DGX-1V; PCIe Gen3 switches pair GPUs 2k, 2k+1 */
static const unsigned gig_dgx1_nvlinks[8][8] = {
    {0, 1, 1, 2, 2, 0, 0, 0},
    {1, 0, 2, 1, 0, 2, 0, 0},
    {1, 2, 0, 2, 0, 0, 1, 0},
    {2, 1, 2, 0, 0, 0, 0, 1},
    {2, 0, 0, 0, 0, 1, 1, 2},
    {0, 2, 0, 0, 1, 0, 2, 1},
    {0, 0, 1, 0, 1, 2, 0, 2},
    {0, 0, 0, 1, 2, 1, 2, 0},
};

static void gig_synth_dgx1(gig_synth_t *b)
{
    int cpu[2], sw[4], gpu[8], i, j;

    for (i = 0; i < 2; ++i) {
        cpu[i] = gig_synth_vertex(b, GIG_VTX_CPU, "cpu", i, 0, "Xeon E5");
    }
    gig_synth_link(b, cpu[0], cpu[1], GIG_LINK_XPI, 2, gig_cap_xpi("qpi"));
    for (i = 0; i < 4; ++i) {
        sw[i] = gig_synth_vertex(b, GIG_VTX_PCIE, "pcie", i, 0, NULL);
        gig_synth_pcie(b, cpu[i / 2], sw[i], 3);
    }
    for (i = 0; i < 8; ++i) {
        gpu[i] = gig_synth_vertex(b, GIG_VTX_GPU, "gpu", i, 0, "V100");
        gig_synth_pcie(b, gpu[i], sw[i / 2], 3);
        if (b->status == UCS_OK) {
            b->g->v[gpu[i]].cuda_dev = i;
            b->g->v[gpu[i]].numa     = i / 4;
        }
    }
    for (i = 0; i < 8; ++i) {
        for (j = i + 1; j < 8; ++j) {
            if (gig_dgx1_nvlinks[i][j] > 0) {
                gig_synth_nvlink(b, gpu[i], gpu[j], GIG_NVLINK_V2,
                                 gig_dgx1_nvlinks[i][j]);
            }
        }
    }
}

/* 4 x H100 SXM board: every pair joined by 6 NVLink4 links, no switch */
static void gig_synth_h100_mesh4(gig_synth_t *b)
{
    int cpu, gpu[4], i, j;

    cpu = gig_synth_vertex(b, GIG_VTX_CPU, "cpu", 0, 0, NULL);
    for (i = 0; i < 4; ++i) {
        gpu[i] = gig_synth_vertex(b, GIG_VTX_GPU, "gpu", i, 0, "H100");
        gig_synth_pcie(b, gpu[i], cpu, 5);
        if (b->status == UCS_OK) {
            b->g->v[gpu[i]].cuda_dev = i;
        }
    }
    for (i = 0; i < 4; ++i) {
        for (j = i + 1; j < 4; ++j) {
            gig_synth_nvlink(b, gpu[i], gpu[j], GIG_NVLINK_V4, 6);
        }
    }
}

/*
 * 8-GPU NVSwitch boards (Fig. 2g / 5b).  DGX A100: 2 sockets (xGMI), 4 PCIe
 * Gen4 switches with 2 GPUs each, 12 NVLink3 per GPU; vertex order as in
 * Fig. 5b.  HGX H100/H200: 2 sockets (UPI), one PCIe Gen5 switch per GPU,
 * 18 NVLink4 per GPU.
 */
static void gig_synth_nvswitch8(gig_synth_t *b, const char *model,
                                int nvgen, unsigned nvlinks, int pciegen,
                                int gpus_per_switch, const char *xpi)
{
    int nsw = 8 / gpus_per_switch;
    int cpu[2], sw[8], gpu[8], nvsw, i;

    for (i = 0; i < 2; ++i) {
        cpu[i] = gig_synth_vertex(b, GIG_VTX_CPU, "cpu", i, 0, NULL);
        if (b->status == UCS_OK) {
            b->g->v[cpu[i]].numa = i;
        }
    }
    gig_synth_link(b, cpu[0], cpu[1], GIG_LINK_XPI, 1, gig_cap_xpi(xpi));
    for (i = 0; i < nsw; ++i) {
        sw[i] = gig_synth_vertex(b, GIG_VTX_PCIE, "pcie", i, 0, NULL);
        gig_synth_pcie(b, cpu[i / (nsw / 2)], sw[i], pciegen);
    }
    for (i = 0; i < 8; ++i) {
        gpu[i] = gig_synth_vertex(b, GIG_VTX_GPU, "gpu", i, 0, model);
        gig_synth_pcie(b, gpu[i], sw[i / gpus_per_switch], pciegen);
        if (b->status == UCS_OK) {
            b->g->v[gpu[i]].cuda_dev = i;
            b->g->v[gpu[i]].numa     = i / 4;
        }
    }
    nvsw = gig_synth_vertex(b, GIG_VTX_NVSWITCH, "nvsw", -1, 0, "NVSwitch");
    for (i = 0; i < 8; ++i) {
        gig_synth_nvlink(b, gpu[i], nvsw, nvgen, nvlinks);
    }
}

static void gig_synth_dgx_a100(gig_synth_t *b)
{
    gig_synth_nvswitch8(b, "A100", GIG_NVLINK_V3, 12, 4, 2, "xgmi");
}

static void gig_synth_hgx_h100(gig_synth_t *b)
{
    gig_synth_nvswitch8(b, "H100", GIG_NVLINK_V4, 18, 5, 1, "upi");
}

static void gig_synth_hgx_h200(gig_synth_t *b)
{
    gig_synth_nvswitch8(b, "H200", GIG_NVLINK_V4, 18, 5, 1, "upi");
}

/* This project's GPU machine: 2 x H200, NV18 through NVSwitch, each GPU on
 * PCIe Gen5 x16 to the host.  The socket layout is a guess: mgi_topo on the
 * machine itself is the truth. */
static void gig_synth_h200x2(gig_synth_t *b)
{
    int cpu, gpu[2], nvsw, i;

    cpu  = gig_synth_vertex(b, GIG_VTX_CPU, "cpu", 0, 0, NULL);
    nvsw = gig_synth_vertex(b, GIG_VTX_NVSWITCH, "nvsw", -1, 0, "NVSwitch");
    for (i = 0; i < 2; ++i) {
        gpu[i] = gig_synth_vertex(b, GIG_VTX_GPU, "gpu", i, 0, "H200");
        gig_synth_pcie(b, gpu[i], cpu, 5);
        gig_synth_nvlink(b, gpu[i], nvsw, GIG_NVLINK_V4, 18);
        if (b->status == UCS_OK) {
            b->g->v[gpu[i]].cuda_dev = i;
        }
    }
}

/* Fig. 2h / 2i / 5c: servers with two sockets, one PCIe switch, NIC and GPU
 * per socket; with gpudirect the NIC reaches its GPU directly.  Vertex order
 * as in Fig. 5c (v0..v7 per server, the network last). */
static void gig_synth_multi(gig_synth_t *b, int nservers, int gpudirect,
                            double nic_gbit)
{
    int cpu[2], sw[2], nic[2], gpu[2], net, s, i;
    int nics[2 * nservers];

    b->multi = 1;
    for (s = 0; s < nservers; ++s) {
        for (i = 0; i < 2; ++i) {
            cpu[i] = gig_synth_vertex(b, GIG_VTX_CPU, "cpu", i, s, NULL);
        }
        gig_synth_link(b, cpu[0], cpu[1], GIG_LINK_XPI, 2,
                       gig_cap_xpi("qpi"));
        for (i = 0; i < 2; ++i) {
            sw[i] = gig_synth_vertex(b, GIG_VTX_PCIE, "pcie", i, s, NULL);
            gig_synth_pcie(b, cpu[i], sw[i], 3);
        }
        for (i = 0; i < 2; ++i) {
            nic[i] = gig_synth_vertex(b, GIG_VTX_NIC, "nic", i, s,
                                      gpudirect ? "RDMA NIC" : "Ethernet");
            gig_synth_pcie(b, nic[i], sw[i], 3);
            nics[2 * s + i] = nic[i];
        }
        for (i = 0; i < 2; ++i) {
            gpu[i] = gig_synth_vertex(b, GIG_VTX_GPU, "gpu", i, s, "V100");
            gig_synth_pcie(b, gpu[i], sw[i], 3);
            if (gpudirect) {
                gig_synth_link(b, nic[i], gpu[i], GIG_LINK_GPUDIRECT, 1,
                               gig_cap_pcie(3, 16));
            }
            if (b->status == UCS_OK) {
                b->g->v[gpu[i]].cuda_dev = i;
            }
        }
    }
    net = gig_synth_vertex(b, GIG_VTX_NET, "net", 0, GIG_NONE, NULL);
    for (i = 0; i < 2 * nservers; ++i) {
        gig_synth_link(b, nics[i], net, GIG_LINK_NET, 1,
                       gig_cap_nic(nic_gbit));
    }
}

/*
 * Fig. 2j and the generated clusters: servers of gps GPUs on an NVSwitch
 * (A100, NVLink3 x12), two sockets (UPI), one PCIe Gen4 switch and one
 * 200 Gb/s RDMA NIC per socket, the NIC reaching its socket's GPUs
 * directly.  11 vertices per 4-GPU server, close to the paper's N = 10.
 */
static void gig_synth_cluster(gig_synth_t *b, int ngpus, int gps)
{
    int nservers = ngpus / gps;
    int cpu[2], sw[2], nic[2], gpu, nvsw, net, s, i, k;

    b->multi = 1;
    net      = gig_synth_vertex(b, GIG_VTX_NET, "net", 0, GIG_NONE, NULL);
    for (s = 0; s < nservers; ++s) {
        for (i = 0; i < 2; ++i) {
            cpu[i] = gig_synth_vertex(b, GIG_VTX_CPU, "cpu", i, s, NULL);
        }
        gig_synth_link(b, cpu[0], cpu[1], GIG_LINK_XPI, 1,
                       gig_cap_xpi("upi"));
        for (i = 0; i < 2; ++i) {
            sw[i]  = gig_synth_vertex(b, GIG_VTX_PCIE, "pcie", i, s, NULL);
            nic[i] = gig_synth_vertex(b, GIG_VTX_NIC, "nic", i, s,
                                      "200G RDMA");
            gig_synth_pcie(b, cpu[i], sw[i], 4);
            gig_synth_pcie(b, nic[i], sw[i], 4);
            gig_synth_link(b, nic[i], net, GIG_LINK_NET, 1,
                           gig_cap_nic(200));
        }
        nvsw = gig_synth_vertex(b, GIG_VTX_NVSWITCH, "nvsw", -1, s,
                                "NVSwitch");
        for (k = 0; k < gps; ++k) {
            i   = k / ((gps + 1) / 2);
            gpu = gig_synth_vertex(b, GIG_VTX_GPU, "gpu", k, s, "A100");
            gig_synth_pcie(b, gpu, sw[i], 4);
            gig_synth_link(b, nic[i], gpu, GIG_LINK_GPUDIRECT, 1,
                           gig_cap_pcie(4, 16));
            gig_synth_nvlink(b, gpu, nvsw, GIG_NVLINK_V3, 12);
            if (b->status == UCS_OK) {
                b->g->v[gpu].cuda_dev = k;
            }
        }
    }
}

static const char *const gig_synth_list[] = {
    "pcie-2sw",            "Fig. 2a: 1 CPU, 2 PCIe switches, 4 GPUs",
    "pcie-nvbridge",       "Fig. 2b-like: 4 PCIe GPUs, NVLink-bridged pairs",
    "2socket-xpi",         "Fig. 2c: 2 sockets (QPI), 2 PCIe GPUs each",
    "2socket-nvbridge",    "Fig. 2d-like: 2 sockets, NVLink-bridged pairs",
    "ac922",               "Fig. 2e-like: IBM AC922, CPU-GPU NVLink2",
    "dgx1",                "Fig. 2f: DGX-1 V100 hybrid cube-mesh, NVLink2",
    "h100-mesh4",          "4 x H100 direct mesh, 6 NVLink4 per pair",
    "dgx-a100",            "Fig. 2g/5b: DGX A100, 8 GPUs on NVSwitch",
    "hgx-h100",            "HGX H100 8-GPU NVSwitch (NV18), PCIe Gen5",
    "hgx-h200",            "HGX H200 8-GPU NVSwitch (NV18), PCIe Gen5",
    "h200x2",              "2 x H200 on NVSwitch (NV18), the GPU machine",
    "multi-eth",           "Fig. 2h: 2 servers, Ethernet NICs, no GPUDirect",
    "multi-rdma",          "Fig. 2i/5c: 2 servers, 2 RDMA NICs each",
    "multi-nvswitch-rdma", "Fig. 2j: 2 servers x 4 NVSwitch GPUs, RDMA",
    "cluster100",          "100 GPUs: 25 Fig. 2j servers of 4 GPUs",
    "cluster1000",         "1000 GPUs: 250 Fig. 2j servers of 4 GPUs",
    "cluster:<N>[:<G>]",   "N GPUs in servers of G (default 4) GPUs",
    NULL
};

const char *const *gig_synth_names(void)
{
    return gig_synth_list;
}

const char *gig_synth_describe(const char *name)
{
    int i;

    for (i = 0; gig_synth_list[i] != NULL; i += 2) {
        if (strcmp(gig_synth_list[i], name) == 0) {
            return gig_synth_list[i + 1];
        }
    }
    return NULL;
}

ucs_status_t gig_synth_create(const char *name, gig_graph_t **graph_p)
{
    char origin[64], tail;
    gig_synth_t b = {NULL, UCS_OK, 0};
    int n, gps = 4;

    snprintf(origin, sizeof(origin), "synthetic %s", name);
    b.status = gig_graph_create(origin, &b.g);
    if (b.status != UCS_OK) {
        return b.status;
    }
    if (strcmp(name, "pcie-2sw") == 0) {
        gig_synth_pcie_2sw(&b);
    } else if (strcmp(name, "pcie-nvbridge") == 0) {
        gig_synth_nvbridge(&b, 1);
    } else if (strcmp(name, "2socket-nvbridge") == 0) {
        gig_synth_nvbridge(&b, 2);
    } else if (strcmp(name, "ac922") == 0) {
        gig_synth_ac922(&b);
    } else if (strcmp(name, "2socket-xpi") == 0) {
        gig_synth_2socket(&b);
    } else if (strcmp(name, "dgx1") == 0) {
        gig_synth_dgx1(&b);
    } else if (strcmp(name, "h100-mesh4") == 0) {
        gig_synth_h100_mesh4(&b);
    } else if (strcmp(name, "dgx-a100") == 0) {
        gig_synth_dgx_a100(&b);
    } else if (strcmp(name, "hgx-h100") == 0) {
        gig_synth_hgx_h100(&b);
    } else if (strcmp(name, "hgx-h200") == 0) {
        gig_synth_hgx_h200(&b);
    } else if (strcmp(name, "h200x2") == 0) {
        gig_synth_h200x2(&b);
    } else if (strcmp(name, "multi-eth") == 0) {
        gig_synth_multi(&b, 2, 0, 100);
    } else if (strcmp(name, "multi-rdma") == 0) {
        gig_synth_multi(&b, 2, 1, 100);
    } else if (strcmp(name, "multi-nvswitch-rdma") == 0) {
        gig_synth_cluster(&b, 8, 4);
    } else if (strcmp(name, "cluster100") == 0) {
        gig_synth_cluster(&b, 100, 4);
    } else if (strcmp(name, "cluster1000") == 0) {
        gig_synth_cluster(&b, 1000, 4);
    } else if (((sscanf(name, "cluster:%d%c", &n, &tail) == 1) ||
                (sscanf(name, "cluster:%d:%d%c", &n, &gps, &tail) == 2)) &&
               (gps >= 1) && (gps <= 64) && (n >= gps) && (n % gps == 0) &&
               (n <= 100000)) {
        gig_synth_cluster(&b, n, gps);
    } else {
        ucs_error("gig synthetic topology '%s' is unknown (mgi_topo --list "
                  "shows the names; cluster:N needs N a multiple of G)",
                  name);
        gig_graph_destroy(b.g);
        return UCS_ERR_INVALID_PARAM;
    }
    if (b.status == UCS_OK) {
        b.status = gig_graph_finalize(b.g);
    }
    if (b.status != UCS_OK) {
        ucs_error("gig synthetic topology '%s' failed: %s", name,
                  ucs_status_string(b.status));
        gig_graph_destroy(b.g);
        return b.status;
    }
    *graph_p = b.g;
    return UCS_OK;
}

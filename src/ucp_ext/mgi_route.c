/**
 * MGI next hops from the GIG planner (paper §4.3-4.4, src/uct/cuda_mgi/gig).
 *
 * At the context's first mgi_ch_create every rank contributes the graph of
 * its host (UCX_CUDA_MGI_TOPO_FILE where set, else discovery) and its host
 * name; the ranks of one host name are one server. Every rank merges the
 * same records into the same graph (one server per host, each host's NICs
 * joined to one network vertex; a host whose graph has no NIC gets one per
 * network interface, a "host link"), so every rank plans alike with no
 * further exchange. Each endpoint sits at a vertex of its host's graph
 * (mgi_ep_params_t.vertex, else its GPU, else the host's first CPU).
 *
 * A channel's forwarding tables (gig_fwd_create over its endpoints'
 * vertices) give each endpoint the next managed vertex towards each
 * destination (where several and none direct, one by the plan's shares:
 * gig_fwd_pick, at the endpoint's rank among the channel's endpoints at
 * its vertex); the next hop is the channel's CPU endpoint at that vertex
 * (the lowest id there), or the destination itself where the next vertex
 * is the destination's or holds no CPU endpoint of the channel (the hop
 * after it is taken then). A relay is the channel's endpoint at that vertex
 * (a CPU one first): a CPU endpoint's sorter thread forwards, a GPU
 * endpoint's sorter kernel does (the lanes it walks), each in the order
 * its lanes brought the messages. A GPU relay's lane waits for room in
 * its next hop's ring, so the waits of GPU relays are kept free of
 * cycles (mgi_route_deps.h): a destination on a cycle is reached
 * directly. A pair whose
 * hops do not reach the destination within as many hops as the channel has
 * endpoints is sent directly, for every source of that destination.
 *
 * NIC choice (mgi_route_net_devices, at mgi_context_create, before UCP
 * exists: its network devices are fixed at ucp_init): where ranks span
 * hosts, a rank's cross-host traffic leaves through the NIC nearest the
 * GPU current at context create (else the NUMA node of the CPU it runs
 * on) in this host's graph (server 0 of the same topology file or
 * discovery as above), by gig_nic_nearest; the context hands that NIC's
 * UCX device names (gig_nic_ucx_devices: IB ports, netdevs of its PCI
 * function, or those a topology file declares, dev=) to UCP as
 * NET_DEVICES unless UCX_NET_DEVICES is set. A NIC without a device
 * (a topology file's NIC without pci= or dev=, a veth) leaves UCX's
 * choice. An endpoint whose own nearest NIC (mgi_route_ep_net_devices,
 * from its vertex) is another sends through a rail there (mgi_rail.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* sched_getcpu */
#endif
#include "mgi_int.h"
#include "mgi_route_deps.h"
#include "gig.h"

#include <ucs/sys/math.h>
#include <dirent.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MGI_ROUTE_IFACES_MAX  8     /* host links taken per host */
#define MGI_ROUTE_IFACE_GBIT  10.0  /* a link whose speed sysfs does not
                                       say (veth, virtio): a 10 Gbit/s NIC */

typedef struct mgi_route_rec {
    char     host[MGI_HOST_NAME_MAX];
    uint32_t has_file;                 /* UCX_CUDA_MGI_TOPO_FILE is set */
    uint32_t len;                      /* topology text bytes (later) */
    uint32_t nif;
    char     ifname[MGI_ROUTE_IFACES_MAX][16];
    double   ifgbit[MGI_ROUTE_IFACES_MAX];
} mgi_route_rec_t;

struct mgi_route_ctx {
    gig_graph_t *host;       /* this host's graph, as contributed */
    gig_graph_t *graph;      /* all hosts; NULL: every hop direct */
    gig_plan_t  *plan;
    int         *rank_host;  /* [size] */
    int         **vmap;      /* [nhosts]: host vertex -> graph vertex */
    int         *vmap_len;
    int         nhosts;
};

/* The network interfaces of this host (its links to the other hosts),
 * loopback excluded, with their speed where sysfs has it. */
static void mgi_route_ifaces(mgi_route_rec_t *rec)
{
    char path[300];
    struct dirent *d;
    FILE *f;
    DIR *dir;
    long mbit;

    dir = opendir("/sys/class/net");
    if (dir == NULL) {
        return;
    }
    while (((d = readdir(dir)) != NULL) &&
           (rec->nif < MGI_ROUTE_IFACES_MAX)) {
        if ((d->d_name[0] == '.') || !strcmp(d->d_name, "lo") ||
            (strlen(d->d_name) >= sizeof(rec->ifname[0]))) {
            continue;
        }
        mbit = -1;
        snprintf(path, sizeof(path), "/sys/class/net/%s/speed", d->d_name);
        f = fopen(path, "r");
        if (f != NULL) {
            if (fscanf(f, "%ld", &mbit) != 1) {
                mbit = -1;
            }
            fclose(f);
        }
        strcpy(rec->ifname[rec->nif], d->d_name);
        rec->ifgbit[rec->nif] = (mbit > 0) ? mbit / 1000.0 :
                                MGI_ROUTE_IFACE_GBIT;
        rec->nif++;
    }
    closedir(dir);
}

/* This host's graph: the transport's topology file where set
 * (UCX_CUDA_MGI_TOPO_FILE, mgi_config_topo_file), else discovery */
static ucs_status_t mgi_route_host_graph(gig_graph_t **g)
{
    return gig_graph_load(mgi_config_topo_file(), NULL, g);
}

/* The NUMA node of the CPU this thread runs on (its cpuN/nodeM entry in
 * sysfs); -1 where unknown */
static int mgi_route_numa_here(void)
{
    char path[64];
    struct dirent *d;
    int cpu = sched_getcpu(), node = -1;
    DIR *dir;

    if (cpu < 0) {
        return -1;
    }
    snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d", cpu);
    dir = opendir(path);
    if (dir == NULL) {
        return -1;
    }
    while ((node < 0) && ((d = readdir(dir)) != NULL)) {
        if ((strncmp(d->d_name, "node", 4) != 0) ||
            (sscanf(d->d_name + 4, "%d", &node) != 1)) {
            node = -1;
        }
    }
    closedir(dir);
    return node;
}

/* NIC vertex nic's number among the NICs of its server, in the graph's
 * order: the same NIC of every host of one topology file has the same
 * number (a rail) */
static int mgi_route_nic_number(const gig_graph_t *g, int nic)
{
    int i, n = 0;

    for (i = 0; i < nic; ++i) {
        n += (g->v[i].type == GIG_VTX_NIC) &&
             (g->v[i].server == g->v[nic].server);
    }
    return n;
}

/* The UCX devices of NIC vertex nic (GIG_NONE: none) nearest vertex from
 * of g into buf, the choice or why there is none into why, the NIC's
 * number into *nic_p (-1: none named); returns how many were named */
static int mgi_route_nic_devices(const gig_graph_t *g, int from, int nic,
                                 const char *sysfs, char *buf, size_t len,
                                 char *why, size_t wlen, int *nic_p)
{
    int n = 0;

    buf[0] = '\0';
    *nic_p = -1;
    if (from == GIG_NONE) {
        snprintf(why, wlen, "no GPU or CPU of this process in this host's "
                 "graph (%s)", g->origin);
    } else if (nic == GIG_NONE) {
        snprintf(why, wlen, "no NIC on a path from %s to the network in "
                 "this host's graph (%s; an interface without a PCI "
                 "function, as a veth, is no NIC there unless a topology "
                 "file names its device, dev=)", g->v[from].name,
                 g->origin);
    } else {
        n = gig_nic_ucx_devices(g, nic, sysfs, buf, len);
        if (n > 0) {
            *nic_p = mgi_route_nic_number(g, nic);
            snprintf(why, wlen, "NIC %s (nearest %s %s)", g->v[nic].name,
                     (g->v[from].type == GIG_VTX_GPU) ? "GPU" : "CPU",
                     g->v[from].name);
        } else {
            snprintf(why, wlen, "NIC %s nearest %s has no UCX device (%s)",
                     g->v[nic].name, g->v[from].name,
                     (g->v[nic].pci_bus_id[0] == '\0') ? "no PCI bus id" :
                     "no device of its PCI function in sysfs that is not down");
        }
    }
    return n;
}

int mgi_route_net_devices(const char *gpu_bus_id, int cuda_dev,
                          const char *sysfs, char *buf, size_t len,
                          char *why, size_t wlen, gig_graph_t **graph_p,
                          int *nic_p)
{
    int numa = ((gpu_bus_id == NULL) && (cuda_dev < 0)) ?
               mgi_route_numa_here() : -1;
    int from, nic, n, number;
    gig_graph_t *g;

    buf[0] = '\0';
    if (nic_p != NULL) {
        *nic_p = -1;
    }
    if (mgi_route_host_graph(&g) != UCS_OK) {
        snprintf(why, wlen, "this host's graph did not load");
        return 0;
    }
    nic = gig_nic_nearest(g, 0, gpu_bus_id, cuda_dev, numa, &from);
    n   = mgi_route_nic_devices(g, from, nic, sysfs, buf, len, why, wlen,
                                &number);
    if (nic_p != NULL) {
        *nic_p = number;
    }
    if (graph_p != NULL) {
        *graph_p = g;
    } else {
        gig_graph_destroy(g);
    }
    return n;
}

/* Host h's graph (text) into g as server h: with one host, the graph as it
 * is; with several, its server 0, its NICs joined to g's network vertex
 * (net), or NICs of its interfaces where it has none. */
static ucs_status_t mgi_route_merge_host(mgi_route_ctx_t *rc, gig_graph_t *g,
                                         int h, const char *text, size_t len,
                                         const mgi_route_rec_t *rec, int net)
{
    char name[GIG_NAME_MAX + 16], err[256];
    int multi = (rc->nhosts > 1), i, id, a, b, cpu = GIG_NONE, nic = 0;
    const gig_vertex_t *v;
    const gig_edge_t *e;
    ucs_status_t status;
    gig_graph_t *hg;

    status = gig_topofile_parse(text, len, rec->host, &hg, err, sizeof(err));
    if (status != UCS_OK) {
        ucs_error("mgi routes: the topology of host %s: %s", rec->host, err);
        return status;
    }
    rc->vmap[h]     = malloc(hg->nv * sizeof(int));
    rc->vmap_len[h] = hg->nv;
    if (rc->vmap[h] == NULL) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0; i < hg->nv; ++i) {
        v             = &hg->v[i];
        rc->vmap[h][i] = GIG_NONE;
        if (multi && ((v->type == GIG_VTX_NET) || (v->server != 0))) {
            rc->vmap[h][i] = (v->type == GIG_VTX_NET) ? net : GIG_NONE;
            continue;
        }
        if (multi) {
            snprintf(name, sizeof(name), "h%d.%s", h, v->name);
        } else {
            snprintf(name, sizeof(name), "%s", v->name);
        }
        status = gig_graph_add_vertex(g, v->type, name,
                                      multi ? h : v->server, &id);
        if (status != UCS_OK) {
            goto out;
        }
        g->v[id].numa     = v->numa;
        g->v[id].cuda_dev = v->cuda_dev;
        memcpy(g->v[id].pci_bus_id, v->pci_bus_id, sizeof(v->pci_bus_id));
        memcpy(g->v[id].model, v->model, sizeof(v->model));
        rc->vmap[h][i] = id;
        nic           += (v->type == GIG_VTX_NIC);
        if ((cpu == GIG_NONE) && (v->type == GIG_VTX_CPU)) {
            cpu = id;
        }
    }
    for (i = 0; i < hg->ne; ++i) {
        e = &hg->e[i];
        a = rc->vmap[h][e->src];
        b = rc->vmap[h][e->dst];
        if ((a == GIG_NONE) || (b == GIG_NONE)) {
            continue;
        }
        /* one direction at a time: the reverse edge comes on its own */
        status = gig_graph_add_link(g, a, b, e->link, e->count, e->capacity,
                                    0);
        if (status != UCS_OK) {
            goto out;
        }
    }
    if (multi && (nic == 0) && (cpu != GIG_NONE)) {
        for (i = 0; (unsigned)i < rec->nif; ++i) {
            snprintf(name, sizeof(name), "h%d.%.15s", h, rec->ifname[i]);
            status = gig_graph_add_vertex(g, GIG_VTX_NIC, name, h, &id);
            if (status == UCS_OK) {
                status = gig_graph_add_link(g, cpu, id, GIG_LINK_PCIE, 1,
                                            gig_cap_pcie(3, 16),
                                            gig_cap_pcie(3, 16));
            }
            if (status == UCS_OK) {
                status = gig_graph_add_link(g, id, net, GIG_LINK_NET, 1,
                                            gig_cap_nic(rec->ifgbit[i]),
                                            gig_cap_nic(rec->ifgbit[i]));
            }
            if (status != UCS_OK) {
                goto out;
            }
        }
    }
out:
    gig_graph_destroy(hg);
    return status;
}

/* Every rank's records and texts into one graph and its plan. */
static ucs_status_t mgi_route_merge(mgi_context_t *ctx, mgi_route_ctx_t *rc,
                                    const mgi_route_rec_t *recs,
                                    const char *texts, size_t stride)
{
    ucs_status_t status;
    int r, h, net = GIG_NONE;
    gig_graph_t *g;

    rc->vmap     = calloc(rc->nhosts, sizeof(*rc->vmap));
    rc->vmap_len = calloc(rc->nhosts, sizeof(*rc->vmap_len));
    if ((rc->vmap == NULL) || (rc->vmap_len == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    status = gig_graph_create("mgi channels", &g);
    if (status != UCS_OK) {
        return status;
    }
    if (rc->nhosts > 1) {
        status = gig_graph_add_vertex(g, GIG_VTX_NET, "net", GIG_NONE, &net);
    }
    for (r = 0, h = 0; (status == UCS_OK) && (r < ctx->size); ++r) {
        if (rc->rank_host[r] == h) {   /* the first rank of host h */
            status = mgi_route_merge_host(rc, g, h, texts + r * stride,
                                          recs[r].len, &recs[r], net);
            ++h;
        }
    }
    if (status == UCS_OK) {
        status = gig_graph_finalize(g);
    }
    if (status == UCS_OK) {
        status = gig_plan_create(g, &rc->plan);
    }
    if (status != UCS_OK) {
        gig_graph_destroy(g);
        return status;
    }
    rc->graph = g;
    return UCS_OK;
}

/* Several hosts, or a topology file at some rank: a plan is worth its
 * discovery (tens of ms). On one host without a file none is made: every
 * endpoint sits at its GPU or the host's first CPU, where no pair of
 * CPU endpoints is anything but direct. */
static int mgi_route_wanted(mgi_context_t *ctx, const mgi_route_ctx_t *rc,
                            const mgi_route_rec_t *recs)
{
    int r;

    for (r = 0; r < ctx->size; ++r) {
        if (recs[r].has_file) {
            return 1;
        }
    }
    return rc->nhosts > 1;
}

/* The ranks of one host name are one host, numbered by their first rank */
static void mgi_route_hosts(mgi_context_t *ctx, mgi_route_ctx_t *rc,
                            const mgi_route_rec_t *recs)
{
    int r, q;

    for (r = 0; r < ctx->size; ++r) {
        for (q = 0; q < r; ++q) {
            if (!strncmp(recs[q].host, recs[r].host, MGI_HOST_NAME_MAX)) {
                break;
            }
        }
        rc->rank_host[r] = (q < r) ? rc->rank_host[q] : rc->nhosts++;
    }
}

/* This host's graph as topology text into *text_p (*len_p bytes): the
 * graph the context's create loaded where it did, else loaded now */
static ucs_status_t mgi_route_host_text(mgi_context_t *ctx,
                                        mgi_route_ctx_t *rc, char **text_p,
                                        size_t *len_p)
{
    ucs_status_t status = UCS_OK;
    FILE *f;

    if (ctx->host_graph != NULL) {
        rc->host        = ctx->host_graph;
        ctx->host_graph = NULL;
    } else {
        status = mgi_route_host_graph(&rc->host);
    }
    if (status != UCS_OK) {
        return status;
    }
    f = open_memstream(text_p, len_p);
    if (f == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    status = gig_topofile_write(rc->host, f);
    return ((fclose(f) == 0) && (status == UCS_OK)) ? UCS_OK :
           UCS_ERR_IO_ERROR;
}

/* Collective, at the context's first mgi_ch_create. A failure anywhere
 * but in the bootstrap leaves every rank without a plan (every hop
 * direct), said. */
ucs_status_t mgi_route_init(mgi_context_t *ctx)
{
    const char *file = mgi_config_topo_file();
    mgi_route_rec_t mine, *recs = NULL;
    struct {
        int32_t  status;
        uint32_t len;
    } got, *gots = NULL;
    char *text = NULL, *texts = NULL, *buf = NULL;
    size_t len = 0, stride = 0;
    uint64_t t0 = mgi_time_ns();
    mgi_route_ctx_t *rc;
    ucs_status_t status;
    int r;

    rc = calloc(1, sizeof(*rc));
    if (rc == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ctx->route    = rc;
    rc->rank_host = calloc(ctx->size, sizeof(int));
    recs          = calloc(ctx->size, sizeof(*recs));
    gots          = calloc(ctx->size, sizeof(*gots));
    memset(&mine, 0, sizeof(mine));
    gethostname(mine.host, sizeof(mine.host) - 1);
    mine.has_file = (file != NULL) && (file[0] != '\0');
    mgi_route_ifaces(&mine);
    if ((rc->rank_host == NULL) || (recs == NULL) || (gots == NULL)) {
        free(recs);
        free(gots);
        return UCS_ERR_NO_MEMORY;
    }
    status = mgi_bootstrap_allgather(&ctx->bs, &mine, recs, sizeof(mine));
    if (status != UCS_OK) {
        goto out;   /* a failed bootstrap fails the create too */
    }
    mgi_route_hosts(ctx, rc, recs);
    if (!mgi_route_wanted(ctx, rc, recs)) {
        goto out;
    }

    got.status = mgi_route_host_text(ctx, rc, &text, &len);
    got.len    = (got.status == UCS_OK) ? len : 0;
    status     = mgi_bootstrap_allgather(&ctx->bs, &got, gots, sizeof(got));
    if (status != UCS_OK) {
        goto out;
    }
    for (r = 0; r < ctx->size; ++r) {
        stride         = ucs_max(stride, gots[r].len + 1);
        recs[r].len    = gots[r].len;
        if (gots[r].status != UCS_OK) {
            ucs_error("mgi context %p: rank %d has no topology (%s): every "
                      "channel goes directly, without the GIG planner's "
                      "next hops", ctx, r,
                      ucs_status_string((ucs_status_t)gots[r].status));
            goto out;
        }
    }
    buf   = calloc(1, stride);
    texts = calloc(ctx->size, stride);
    if ((buf != NULL) && (text != NULL)) {
        memcpy(buf, text, len);
    }
    /* every rank takes part, whatever its memory said */
    status = mgi_bootstrap_allgather(&ctx->bs, (buf != NULL) ? buf : texts,
                                     texts, stride);
    if ((status == UCS_OK) &&
        ((buf == NULL) || (texts == NULL) ||
         (mgi_route_merge(ctx, rc, recs, texts, stride) != UCS_OK))) {
        ucs_error("mgi context %p: the hosts' topologies do not merge into "
                  "one graph: every channel goes directly", ctx);
    }
out:
    ucs_info("mgi context %p: GIG plan of %d host(s), %d vertices (%s) in "
             "%.3f ms", ctx, rc->nhosts,
             (rc->graph != NULL) ? rc->graph->nv : 0,
             (rc->host != NULL) ? rc->host->origin :
             "none: one host and no topology file, every hop direct",
             (mgi_time_ns() - t0) / 1e6);
    free(text);
    free(texts);
    free(buf);
    free(recs);
    free(gots);
    return status;
}

void mgi_route_fini(mgi_context_t *ctx)
{
    mgi_route_ctx_t *rc = ctx->route;
    int h;

    if (ctx->host_graph != NULL) {
        gig_graph_destroy(ctx->host_graph);
        ctx->host_graph = NULL;
    }
    if (rc == NULL) {
        return;
    }
    if (rc->plan != NULL) {
        gig_plan_destroy(rc->plan);
    }
    if (rc->graph != NULL) {
        gig_graph_destroy(rc->graph);
    }
    if (rc->host != NULL) {
        gig_graph_destroy(rc->host);
    }
    for (h = 0; (rc->vmap != NULL) && (h < rc->nhosts); ++h) {
        free(rc->vmap[h]);
    }
    free(rc->vmap);
    free(rc->vmap_len);
    free(rc->rank_host);
    free(rc);
    ctx->route = NULL;
}

/* The vertex of local endpoint ep in host graph hg: its named vertex
 * (one not in the graph is said, where `say`), its GPU's, else the host's
 * first CPU; -1 where there is none */
static int mgi_route_graph_ep_vertex(const gig_graph_t *hg,
                                     const mgi_ep_t *ep, int say)
{
    int i;

    if (ep->vertex[0] != '\0') {
        i = gig_graph_find_name(hg, ep->vertex);
        if ((i == GIG_NONE) && say) {
            ucs_error("mgi ep %u: vertex '%s' is not in the topology of this "
                      "host (%s); the endpoint is routed directly", ep->id,
                      ep->vertex, hg->origin);
        }
        return i;
    }
    if (mgi_ep_is_gpu(ep) &&
        ((i = gig_graph_find_cuda(hg, ep->device)) != GIG_NONE)) {
        return i;
    }
    for (i = 0; i < hg->nv; ++i) {
        if ((hg->v[i].type == GIG_VTX_CPU) && (hg->v[i].server == 0)) {
            return i;
        }
    }
    return -1;
}

/* The vertex of a local endpoint in this host's graph, for the channel
 * allgather; -1 where there is none (a name not in the graph is said). */
int32_t mgi_route_ep_vertex(mgi_context_t *ctx, const mgi_ep_t *ep)
{
    const gig_graph_t *hg = (ctx->route != NULL) ? ctx->route->host : NULL;

    return (hg == NULL) ? -1 : mgi_route_graph_ep_vertex(hg, ep, 1);
}

int mgi_route_ep_net_devices(mgi_context_t *ctx, const mgi_ep_t *ep,
                             char *buf, size_t len, char *why, size_t wlen,
                             int *nic_p)
{
    const gig_graph_t *g = ctx->host_graph;
    int from;

    buf[0] = '\0';
    *nic_p = -1;
    if (g == NULL) {
        snprintf(why, wlen, "no host graph (one host, or UCX_NET_DEVICES "
                 "set)");
        return 0;
    }
    from = mgi_route_graph_ep_vertex(g, ep, 0);
    if ((from >= 0) && (g->v[from].server != 0)) {
        from = GIG_NONE;
    }
    return mgi_route_nic_devices(g, (from < 0) ? GIG_NONE : from,
                                 (from < 0) ? GIG_NONE : gig_nic_of(g, from),
                                 NULL, buf, len, why, wlen, nic_p);
}

/* ---------------------------------------------------------- per channel */

typedef struct mgi_route_ch {
    gig_plan_t  *plan;       /* the context's */
    gig_fwd_t   *fwd;
    unsigned    neps;        /* the channel's endpoints, sources first */
    mgi_ep_id_t *ids;
    int         *slot;       /* [nslot]: ep id -> its number, -1 */
    unsigned    nslot;
    int         *vert;       /* graph vertex of each, or -1 */
    uint8_t     *cpu;        /* a CPU endpoint */
    unsigned    *vrank;      /* endpoints before it at its vertex */
    uint32_t    *nprod;      /* EOF records it sends each destination */
    uint8_t     *direct;     /* [ndst]: every source goes directly */
} mgi_route_ch_t;

static int mgi_route_ch_index(const mgi_route_ch_t *rt, mgi_ep_id_t id)
{
    return (id < rt->nslot) ? rt->slot[id] : -1;
}

/* The entry of endpoint number e's vertex for destination j, and d's
 * vertex in *dv; NULL where e goes to d directly (it is d, or at d's
 * vertex, either has no vertex, d is reached directly by all, the table
 * has no entry) */
static const gig_fwd_entry_t *mgi_route_ch_entry(const mgi_channel_t *ch,
                                                 const mgi_route_ch_t *rt,
                                                 unsigned e, unsigned j,
                                                 int *dv)
{
    mgi_ep_id_t d = ch->dst[j];
    int k         = mgi_route_ch_index(rt, d);
    const gig_fwd_entry_t *ent;

    if ((rt->ids[e] == d) || rt->direct[j] || (k < 0) ||
        (rt->vert[e] < 0) || (rt->vert[k] < 0) ||
        (rt->vert[e] == rt->vert[k])) {
        return NULL;
    }
    *dv = rt->vert[k];
    ent = gig_fwd_lookup(rt->fwd, rt->vert[e], *dv);
    return ((ent == NULL) || (ent->nnext == 0)) ? NULL : ent;
}

/* The endpoint that a tuple from endpoint number e for destination j
 * (at vertex dv) meets first from vertex v on: d where v is d's vertex,
 * else the channel's endpoint at v (a CPU endpoint first, then the lowest
 * id), else for a vertex without one the next vertex its own entry picks
 * at e's rank, and so on. */
static mgi_ep_id_t mgi_route_ch_via(const mgi_channel_t *ch,
                                    const mgi_route_ch_t *rt, unsigned e,
                                    unsigned j, int dv, int v)
{
    const gig_fwd_entry_t *ent;
    unsigned i, step;
    int k;

    for (step = 0; step < rt->neps; ++step) {
        if (v == dv) {
            return ch->dst[j];
        }
        for (i = 0, k = -1; i < rt->neps; ++i) {
            if ((rt->vert[i] == v) && ((k < 0) || (rt->cpu[i] && !rt->cpu[k]))) {
                k = (int)i;
            }
        }
        if (k >= 0) {
            return rt->ids[k];
        }
        ent = gig_fwd_lookup(rt->fwd, v, dv);
        if ((ent == NULL) || (ent->nnext == 0)) {
            break;
        }
        v = ent->next[gig_fwd_pick(ent, dv, rt->vrank[e])].next;
    }
    return ch->dst[j];
}

/* The next hop from endpoint number e of the channel to destination j:
 * the one its rank picks (a relay's for every pair it carries, a source's
 * in an ordered channel) */
static mgi_ep_id_t mgi_route_ch_next(const mgi_channel_t *ch,
                                     const mgi_route_ch_t *rt, unsigned e,
                                     unsigned j)
{
    const gig_fwd_entry_t *ent;
    int dv;

    ent = mgi_route_ch_entry(ch, rt, e, j, &dv);
    if (ent == NULL) {
        return ch->dst[j];
    }
    return mgi_route_ch_via(ch, rt, e, j, dv,
                            ent->next[gig_fwd_pick(ent, dv,
                                                   rt->vrank[e])].next);
}

/* The hops from endpoint number e to destination j along each
 * endpoint's one next hop (mgi_route_ch_next), or UINT_MAX where they do
 * not reach it within as many as the channel has endpoints */
static unsigned mgi_route_ch_dist(const mgi_channel_t *ch,
                                  const mgi_route_ch_t *rt, int e, unsigned j)
{
    unsigned steps;

    for (steps = 0; (e >= 0) && (rt->ids[e] != ch->dst[j]); ++steps) {
        if (steps > rt->neps) {
            return UINT_MAX;
        }
        e = mgi_route_ch_index(rt, mgi_route_ch_next(ch, rt, (unsigned)e, j));
    }
    return (e < 0) ? UINT_MAX : steps;
}

/* The next hops endpoint number e spreads what it sends or forwards for
 * destination j over, with their shares, into hop[] / share[] (at most
 * max); returns how many. One (its pick) where the entry has one next
 * hop, a direct one, or the channel is ordered, or max < 2; else every
 * next vertex's endpoint (mgi_route_ch_via) that is nearer to j than e
 * along the picks (mgi_route_ch_dist: so no walk comes back, as an
 * entry's paths that go round through another endpoint would), their
 * capacities added where two lead to one endpoint. */
static unsigned mgi_route_ch_nexts(const mgi_channel_t *ch,
                                   const mgi_route_ch_t *rt, unsigned e,
                                   unsigned j, unsigned max,
                                   mgi_ep_id_t *hop, float *share)
{
    const gig_fwd_entry_t *ent;
    double cap[MGI_ROUTE_MAX_SPLIT], total = 0, c;
    mgi_ep_id_t h;
    unsigned n = 0, i, de = 0;
    int dv, k;

    ent = mgi_route_ch_entry(ch, rt, e, j, &dv);
    if ((ent != NULL) && (ent->nnext > 1) && (ent->next[0].next != dv) &&
        !(ch->flags & MGI_CH_FLAG_ORDERED) && (max >= 2)) {
        de = mgi_route_ch_dist(ch, rt, (int)e, j);
    }
    if (de != UINT_MAX) {
        for (k = 0; (de > 0) && (k < ent->nnext); ++k) {
            c = gig_fwd_next_capacity(ent, k);
            if (!(c > 0)) {
                continue;
            }
            h = mgi_route_ch_via(ch, rt, e, j, dv, ent->next[k].next);
            if (mgi_route_ch_dist(ch, rt, mgi_route_ch_index(rt, h), j) >=
                de) {
                continue;
            }
            for (i = 0; (i < n) && (hop[i] != h); ++i) {
            }
            if (i < n) {
                cap[i] += c;
            } else if (n < ucs_min(max, MGI_ROUTE_MAX_SPLIT)) {
                hop[n]   = h;
                cap[n++] = c;
            } else {
                continue;
            }
            total += c;
        }
    }
    if (n < 2) {
        hop[0]   = mgi_route_ch_next(ch, rt, e, j);
        share[0] = 1;
        return 1;
    }
    for (i = 0; i < n; ++i) {
        share[i] = (float)(cap[i] / total);
    }
    return n;
}

/* Endpoint number e's next hops towards destination j (its own tuples
 * and those it forwards), as mgi_route_ch_nexts gives them: at most a
 * share of what its rows may hold over all destinations (a GPU sorter's
 * EOF and flush take one target per hop, MGI_GPU_MAX_TARGETS), so that
 * each destination's are known alone. Returns how many, into hop[] and
 * share[] (MGI_ROUTE_MAX_SPLIT each). */
static unsigned mgi_route_ch_hops(const mgi_channel_t *ch,
                                  const mgi_route_ch_t *rt, unsigned e,
                                  unsigned j, mgi_ep_id_t *hop, float *share)
{
    const unsigned cap = rt->cpu[e] ? MGI_MAX_EPS : MGI_GPU_MAX_TARGETS;

    return mgi_route_ch_nexts(ch, rt, e, j, ucs_max(1u, cap / ch->ndst), hop,
                              share);
}

/* The most paths one pair's tuples may take through relays that spread:
 * a destination where some source has more is reached directly */
#define MGI_ROUTE_MAX_PATHS 1024

/* The most waits of GPU relays looked at in one channel: beyond, its GPU
 * relays are left as planned, with a warning */
#define MGI_ROUTE_MAX_WAITS (1u << 22)

/* The waits of a channel's GPU relays (mgi_route_deps.h) between the
 * lanes they hold: endpoint r's lane that rank R's mover fills (lane R of
 * its receive ring, shared by every endpoint of rank R that sends to r),
 * named R * neps + r */
typedef struct {
    mgi_route_dep_t *w;
    unsigned        n;
    unsigned        cap;
} mgi_route_waits_t;

/* What mgi_route_ch_walks notes at each relay a walk passes, where not
 * NULL: nprod EOF records in expect[] (by endpoint number), and a GPU
 * relay's waits in waits */
typedef struct {
    uint32_t          *expect;
    uint32_t          nprod;
    mgi_route_waits_t *waits;
} mgi_route_walk_note_t;

/* Relay e (reached from prev) passes a walk towards destination j on to
 * next hop h: where e is a GPU endpoint, its lane from prev's rank waits
 * on h's lane from e's rank (through e's sort ring towards h). 0 where
 * there are too many waits. */
static int mgi_route_ch_wait(const mgi_route_ch_t *rt, int prev, int e,
                             int h, unsigned j, mgi_route_waits_t *ws)
{
    mgi_route_dep_t *w;

    if (rt->cpu[e]) {
        return 1;           /* a CPU relay parks: its lane does not wait */
    }
    if (ws->n == ws->cap) {
        if (ws->cap >= MGI_ROUTE_MAX_WAITS) {
            return 0;
        }
        ws->cap = ucs_max(1024u, 2 * ws->cap);
        w       = realloc(ws->w, ws->cap * sizeof(*w));
        if (w == NULL) {
            return 0;
        }
        ws->w = w;
    }
    w       = &ws->w[ws->n++];
    w->from = (uint64_t)MGI_EP_RANK(rt->ids[prev]) * rt->neps + (unsigned)e;
    w->to   = (uint64_t)MGI_EP_RANK(rt->ids[e]) * rt->neps + (unsigned)h;
    w->dst  = j;
    return 1;
}

/* The walks of a tuple from endpoint number e (reached from prev, -1 at
 * the source) to destination j over every next hop each endpoint on the
 * way spreads over: how many reach j (each brings one copy of the
 * source's EOF there), into *paths; each relay it passes noted in
 * *note where not NULL. Returns 0 where a walk does not reach j within as
 * many steps as the channel has endpoints, the walks are more than
 * MGI_ROUTE_MAX_PATHS, or the waits too many. */
static int mgi_route_ch_walks(const mgi_channel_t *ch,
                              const mgi_route_ch_t *rt, int e, unsigned j,
                              int prev, unsigned depth,
                              const mgi_route_walk_note_t *note,
                              uint32_t *paths)
{
    mgi_ep_id_t hop[MGI_ROUTE_MAX_SPLIT];
    float share[MGI_ROUTE_MAX_SPLIT];
    unsigned n, k;
    int h;

    if (e < 0) {
        return 0;
    }
    if (rt->ids[e] == ch->dst[j]) {
        return ++*paths <= MGI_ROUTE_MAX_PATHS;
    }
    if (depth > rt->neps) {
        return 0;
    }
    if ((prev >= 0) && (note != NULL) && (note->expect != NULL)) {
        note->expect[e] += note->nprod;
    }
    n = mgi_route_ch_hops(ch, rt, (unsigned)e, j, hop, share);
    for (k = 0; k < n; ++k) {
        h = mgi_route_ch_index(rt, hop[k]);
        if ((h >= 0) && (prev >= 0) && (note != NULL) &&
            (note->waits != NULL) &&
            !mgi_route_ch_wait(rt, prev, e, h, j, note->waits)) {
            return 0;
        }
        if (!mgi_route_ch_walks(ch, rt, h, j, e, depth + 1, note, paths)) {
            return 0;
        }
    }
    return 1;
}

/* The destination to reach directly so that a cycle among the
 * channel's GPU relays' waits goes (*dst, -1 where they have none): of
 * the cycle's waits, the one whose destination has the fewest waits in
 * all, so that the least relaying is lost; the wait that names it in
 * *wait */
static ucs_status_t mgi_route_ch_cycle(const mgi_route_waits_t *ws,
                                       unsigned ndst, int *dst,
                                       unsigned *wait)
{
    unsigned *count = calloc(ndst, sizeof(*count));
    unsigned *cycle = malloc((size_t)ws->n * sizeof(*cycle));
    ucs_status_t status = UCS_OK;
    unsigned i, d;
    int len;

    *dst = -1;
    if ((count == NULL) || (cycle == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0; i < ws->n; ++i) {
        ++count[ws->w[i].dst];
    }
    len = mgi_route_deps_cycle(ws->w, ws->n, cycle);
    if (len < 0) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    for (i = 0; i < (unsigned)len; ++i) {
        d = ws->w[cycle[i]].dst;
        if ((*dst < 0) || (count[d] < count[*dst]) ||
            ((count[d] == count[*dst]) && ((int)d < *dst))) {
            *dst  = (int)d;
            *wait = cycle[i];
        }
    }
out:
    free(count);
    free(cycle);
    return status;
}

/* Keep the waits of the channel's GPU relays free of cycles
 * (mgi_route_deps.h): while they have one, a destination of a wait on
 * it is reached directly by every source, as a destination the walks do
 * not reach is. The same at every rank. */
static ucs_status_t mgi_route_ch_acyclic(const mgi_channel_t *ch,
                                         mgi_route_ch_t *rt)
{
    mgi_route_waits_t ws         = {NULL, 0, 0};
    const mgi_route_walk_note_t note = {NULL, 0, &ws};
    ucs_status_t status          = UCS_OK;
    const mgi_route_dep_t *w;
    unsigned i, j, round, wait = 0;
    uint32_t paths;
    int dst, ok = 1;

    for (i = 0; (i < rt->neps) && rt->cpu[i]; ++i) {
    }
    if (i == rt->neps) {
        return UCS_OK;      /* CPU relays only: they park */
    }
    for (round = 0; round < ch->ndst; ++round) {
        ws.n = 0;
        for (j = 0; (j < ch->ndst) && ok; ++j) {
            for (i = 0; (i < ch->nsrc) && !rt->direct[j] && ok; ++i) {
                paths = 0;
                ok    = mgi_route_ch_walks(ch, rt,
                                           mgi_route_ch_index(rt, ch->src[i]),
                                           j, -1, 0, &note, &paths);
            }
        }
        if (!ok) {
            ucs_warn("mgi channel %u: more than %u waits between GPU relays "
                     "to check for cycles; if their rings fill they may wait "
                     "on each other", ch->id, MGI_ROUTE_MAX_WAITS);
            break;
        }
        if (ws.n == 0) {
            break;
        }
        status = mgi_route_ch_cycle(&ws, ch->ndst, &dst, &wait);
        if ((status != UCS_OK) || (dst < 0)) {
            break;
        }
        w = &ws.w[wait];
        ucs_diag("mgi channel %u: GPU relays would wait on each other in a "
                 "cycle (endpoint %u's lane from rank %u waits on its next "
                 "hop %u towards endpoint %u, and so on back to it): tuples "
                 "for endpoint %u go directly", ch->id,
                 rt->ids[w->from % rt->neps], (unsigned)(w->from / rt->neps),
                 rt->ids[w->to % rt->neps], ch->dst[dst], ch->dst[dst]);
        rt->direct[dst] = 1;
    }
    free(ws.w);
    return status;
}

static void mgi_route_ch_free(mgi_route_ch_t *rt)
{
    if (rt == NULL) {
        return;
    }
    if (rt->fwd != NULL) {
        gig_fwd_destroy(rt->fwd);
    }
    free(rt->ids);
    free(rt->slot);
    free(rt->vert);
    free(rt->cpu);
    free(rt->vrank);
    free(rt->nprod);
    free(rt->direct);
    free(rt);
}

void mgi_route_ch_fini(mgi_channel_t *ch)
{
    unsigned i;

    mgi_route_ch_free(ch->route);
    ch->route = NULL;
    for (i = 0; i < MGI_MAX_LOCAL_EPS; ++i) {
        free(ch->hops[i]);
        free(ch->split[i]);
        ch->hops[i]  = NULL;
        ch->split[i] = NULL;
    }
}

/* What the plan made of the channel: the pairs of different hosts (their
 * paths through the network vertex) and the pairs that take a relay */
static void mgi_route_ch_log(const mgi_channel_t *ch, const mgi_route_ch_t *rt,
                             unsigned relayed)
{
    gig_plan_t *plan = NULL;
    const gig_pathset_t *ps;
    unsigned i, j, nnet = 0, nics = 0;
    int sv, dv;

    for (i = 0; i < ch->nsrc; ++i) {
        for (j = 0; j < ch->ndst; ++j) {
            sv = rt->vert[mgi_route_ch_index(rt, ch->src[i])];
            dv = rt->vert[mgi_route_ch_index(rt, ch->dst[j])];
            plan = rt->plan;
            if ((sv < 0) || (dv < 0) || (sv == dv) ||
                (gig_plan_paths(plan, sv, dv, &ps) != UCS_OK) ||
                (ps->npaths == 0) ||
                (ps->paths[0].kind != GIG_PATH_NETWORK)) {
                continue;
            }
            ++nnet;
            nics = ucs_max(nics, (unsigned)ps->npaths);
        }
    }
    ucs_info("mgi channel %u: GIG plan: %u pair(s) of different hosts, "
             "through the network vertex (up to %u path(s), NIC to NIC), "
             "%u pair(s) through a relay", ch->id, nnet, nics, relayed);
}

/* ep id -> (vertex, cpu) from the channel allgather (vert[ep id]: the
 * rank's host vertex, or -1; gpu[ep id]) */
ucs_status_t mgi_route_ch_plan(mgi_context_t *ctx, mgi_channel_t *ch,
                               const int32_t *hvert, const uint8_t *gpu,
                               const uint32_t *nprod)
{
    mgi_route_ctx_t *rc = ctx->route;
    int *srcv = NULL, *dstv = NULL;
    unsigned *vcount = NULL;
    mgi_route_ch_t *rt;
    ucs_status_t status;
    unsigned i, j, e, n = 0, k;
    int h, lv;
    mgi_ep_id_t id, hop, hrow[MGI_ROUTE_MAX_SPLIT];
    float srow[MGI_ROUTE_MAX_SPLIT];
    uint32_t *expect = NULL, paths;
    mgi_route_walk_note_t note = {NULL, 0, NULL};
    unsigned relayed = 0;

    if ((rc == NULL) || (rc->plan == NULL)) {
        return UCS_OK;      /* no plan: every hop direct */
    }
    rt = calloc(1, sizeof(*rt));
    if (rt == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    ch->route  = rt;
    rt->plan   = rc->plan;
    rt->ids    = calloc(ch->nsrc + ch->ndst, sizeof(*rt->ids));
    rt->vert   = calloc(ch->nsrc + ch->ndst, sizeof(*rt->vert));
    rt->cpu    = calloc(ch->nsrc + ch->ndst, 1);
    rt->vrank  = calloc(ch->nsrc + ch->ndst, sizeof(*rt->vrank));
    rt->nprod  = calloc(ch->nsrc + ch->ndst, sizeof(*rt->nprod));
    rt->direct = calloc(ch->ndst, 1);
    for (i = 0; i < ch->nsrc + ch->ndst; ++i) {
        id        = (i < ch->nsrc) ? ch->src[i] : ch->dst[i - ch->nsrc];
        rt->nslot = ucs_max(rt->nslot, (unsigned)id + 1);
    }
    rt->slot   = malloc((rt->nslot + 1) * sizeof(*rt->slot));
    srcv       = calloc(ch->nsrc, sizeof(int));
    dstv       = calloc(ch->ndst, sizeof(int));
    vcount     = calloc(rc->graph->nv, sizeof(*vcount));
    expect     = calloc(ch->nsrc + ch->ndst, sizeof(*expect));
    note.expect = expect;
    if ((rt->ids == NULL) || (rt->vert == NULL) || (rt->cpu == NULL) ||
        (rt->vrank == NULL) || (rt->nprod == NULL) || (rt->direct == NULL) ||
        (rt->slot == NULL) || (srcv == NULL) || (dstv == NULL) ||
        (vcount == NULL) || (expect == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto out;
    }
    memset(rt->slot, 0xff, (rt->nslot + 1) * sizeof(*rt->slot));
    for (i = 0; i < ch->nsrc + ch->ndst; ++i) {
        id = (i < ch->nsrc) ? ch->src[i] : ch->dst[i - ch->nsrc];
        if (mgi_route_ch_index(rt, id) >= 0) {
            continue;
        }
        h  = rc->rank_host[MGI_EP_RANK(id)];
        lv = hvert[id];
        rt->slot[id] = (int)n;
        rt->ids[n]  = id;
        rt->cpu[n]  = !gpu[id];
        rt->nprod[n] = nprod[id];
        rt->vert[n] = ((lv >= 0) && (lv < rc->vmap_len[h])) ?
                      rc->vmap[h][lv] : -1;
        if (rt->vert[n] >= 0) {
            rt->vrank[n] = vcount[rt->vert[n]]++;
        }
        ++n;
    }
    rt->neps = n;
    for (i = 0; i < ch->nsrc; ++i) {
        srcv[i] = rt->vert[mgi_route_ch_index(rt, ch->src[i])];
    }
    for (j = 0; j < ch->ndst; ++j) {
        dstv[j] = rt->vert[mgi_route_ch_index(rt, ch->dst[j])];
    }
    /* endpoints without a vertex take no part in the tables */
    for (i = j = 0; i < ch->nsrc; ++i) {
        if (srcv[i] >= 0) {
            srcv[j++] = srcv[i];
        }
    }
    for (i = e = 0; i < ch->ndst; ++i) {
        if (dstv[i] >= 0) {
            dstv[e++] = dstv[i];
        }
    }
    status = gig_fwd_create(rc->plan, srcv, j, dstv, e, &rt->fwd);
    if (status != UCS_OK) {
        ucs_error("mgi channel %u: no forwarding tables (%s); every hop "
                  "direct", ch->id, ucs_status_string(status));
        mgi_route_ch_fini(ch);
        status = UCS_OK;
        goto out;
    }
    /* every source's walks must reach each destination, over every next
     * hop each endpoint on the way spreads over */
    for (j = 0; j < ch->ndst; ++j) {
        for (i = 0; (i < ch->nsrc) && !rt->direct[j]; ++i) {
            paths = 0;
            if (!mgi_route_ch_walks(ch, rt, mgi_route_ch_index(rt,
                                                               ch->src[i]),
                                    j, -1, 0, NULL, &paths)) {
                ucs_warn("mgi channel %u: the next hops towards endpoint %u "
                         "do not reach it within %u hops and %u paths; its "
                         "sources send directly", ch->id, ch->dst[j],
                         rt->neps, MGI_ROUTE_MAX_PATHS);
                rt->direct[j] = 1;
            }
        }
    }
    status = mgi_route_ch_acyclic(ch, rt);
    if (status != UCS_OK) {
        goto out;
    }
    /* the rows of the local endpoints: the one next hop of each pair
     * (mgi_route_next_hop: a source's in an ordered channel, a broadcast's),
     * and where one spreads what it sends or forwards over several, those;
     * a source's walks to each destination, as many copies of its EOF */
    for (e = 0; e < rt->neps; ++e) {
        if (MGI_EP_RANK(rt->ids[e]) != ctx->rank) {
            continue;
        }
        i = rt->ids[e] % MGI_MAX_LOCAL_EPS;
        for (j = 0; j < ch->ndst; ++j) {
            hop = mgi_route_ch_next(ch, rt, e, j);
            if ((hop != ch->dst[j]) && (ch->hops[i] == NULL)) {
                ch->hops[i] = malloc(ch->ndst * sizeof(mgi_ep_id_t));
                if (ch->hops[i] == NULL) {
                    status = UCS_ERR_NO_MEMORY;
                    goto out;
                }
                for (n = 0; n < ch->ndst; ++n) {
                    ch->hops[i][n] = ch->dst[n];
                }
            }
            if (hop != ch->dst[j]) {
                ch->hops[i][j] = hop;
                ucs_debug("mgi channel %u: endpoint %u reaches %u through %u",
                          ch->id, rt->ids[e], ch->dst[j], hop);
            }
            n     = mgi_route_ch_hops(ch, rt, e, j, hrow, srow);
            paths = 0;
            if (mgi_ch_src_index(ch, rt->ids[e]) >= 0) {
                mgi_route_ch_walks(ch, rt, (int)e, j, -1, 0, NULL, &paths);
            }
            if ((n < 2) && (paths < 2)) {
                continue;
            }
            if (ch->split[i] == NULL) {
                ch->split[i] = calloc(ch->ndst, sizeof(*ch->split[i]));
                if (ch->split[i] == NULL) {
                    status = UCS_ERR_NO_MEMORY;
                    goto out;
                }
            }
            ch->split[i][j].n     = n;
            ch->split[i][j].paths = ucs_max(paths, 1u);
            for (k = 0; k < n; ++k) {
                ch->split[i][j].hop[k]   = hrow[k];
                ch->split[i][j].share[k] = srow[k];
            }
            ucs_debug("mgi channel %u: endpoint %u spreads over %u next hops "
                      "towards %u (%u paths of its own)", ch->id, rt->ids[e],
                      n, ch->dst[j], paths);
        }
    }
    /* what each endpoint relays: the EOF records of each pair it carries,
     * once for each walk that passes it (a CPU source sends one, a GPU
     * source one per producer, each through every next hop it spreads
     * over, a relay's on through every one it spreads over) */
    for (i = 0; i < ch->nsrc; ++i) {
        e          = mgi_route_ch_index(rt, ch->src[i]);
        note.nprod = rt->nprod[e];
        for (j = 0; j < ch->ndst; ++j) {
            paths = 0;
            mgi_route_ch_walks(ch, rt, (int)e, j, -1, 0, &note, &paths);
            relayed += (paths > 1) ||
                       (mgi_route_ch_next(ch, rt, e, j) != ch->dst[j]);
        }
    }
    for (e = 0; e < rt->neps; ++e) {
        if (MGI_EP_RANK(rt->ids[e]) == ctx->rank) {
            ch->relay_expect[rt->ids[e] % MGI_MAX_LOCAL_EPS] += expect[e];
        }
    }
    ch->relayed_pairs = relayed;
    if (ucs_log_is_enabled(UCS_LOG_LEVEL_INFO)) {
        mgi_route_ch_log(ch, rt, relayed);
    }
out:
    free(srcv);
    free(dstv);
    free(vcount);
    free(expect);
    return status;
}

/* The hops of the channel from src to dst, both ends included: the same
 * at every rank */
int mgi_ch_path(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t src,
                mgi_ep_id_t dst, mgi_ep_id_t *path, int max)
{
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    const mgi_route_ch_t *rt;
    int j, e, n = 0;

    if ((ch == NULL) || (max < 1) || ((j = mgi_ch_dst_index(ch, dst)) < 0)) {
        return -1;
    }
    path[n++] = src;
    rt        = ch->route;
    if (src == dst) {
        return n;
    }
    if (rt == NULL) {
        if (max < 2) {
            return -1;
        }
        path[n++] = dst;
        return n;
    }
    e = mgi_route_ch_index(rt, src);
    while ((e >= 0) && (rt->ids[e] != dst)) {
        if (n == max) {
            return -1;
        }
        path[n] = mgi_route_ch_next(ch, rt, e, j);
        e       = mgi_route_ch_index(rt, path[n++]);
    }
    return (e < 0) ? -1 : n;
}

int mgi_ch_next_hops(mgi_context_h ctx, mgi_ch_id_t id, mgi_ep_id_t ep,
                     mgi_ep_id_t dst, mgi_ep_id_t *hops, int max)
{
    mgi_channel_t *ch = mgi_ch_lookup(ctx, id);
    mgi_ep_id_t hop[MGI_ROUTE_MAX_SPLIT];
    float share[MGI_ROUTE_MAX_SPLIT];
    const mgi_route_ch_t *rt;
    int j, e, k, n;

    if ((ch == NULL) || (max < 1) || ((j = mgi_ch_dst_index(ch, dst)) < 0) ||
        ((mgi_ch_src_index(ch, ep) < 0) && (mgi_ch_dst_index(ch, ep) < 0))) {
        return -1;
    }
    rt = ch->route;
    if ((rt == NULL) || ((e = mgi_route_ch_index(rt, ep)) < 0)) {
        hops[0] = dst;
        return 1;
    }
    n = (int)mgi_route_ch_hops(ch, rt, (unsigned)e, (unsigned)j, hop, share);
    if (n > max) {
        return -1;
    }
    for (k = 0; k < n; ++k) {
        hops[k] = hop[k];
    }
    return n;
}

const mgi_ch_split_t *mgi_route_split(const mgi_channel_t *ch,
                                      mgi_ep_id_t src, unsigned j)
{
    const mgi_ch_split_t *row = ch->split[src % MGI_MAX_LOCAL_EPS];

    return ((row == NULL) || (j >= ch->ndst) ||
            ((row[j].n < 2) && (row[j].paths < 2))) ? NULL : &row[j];
}

mgi_ep_id_t mgi_route_next_hop(mgi_context_t *ctx, const mgi_channel_t *ch,
                               mgi_ep_id_t src, mgi_ep_id_t dst)
{
    const mgi_ep_id_t *row;
    int j;

    (void)ctx;
    row = ch->hops[src % MGI_MAX_LOCAL_EPS];
    if ((row == NULL) || ((j = mgi_ch_dst_index(ch, dst)) < 0)) {
        return dst;
    }
    return row[j];
}

/* UCS_ERR_BUSY, said, while a local endpoint has EOFs of the channel still
 * to relay: its lanes may hold the channel's tuples */
ucs_status_t mgi_route_ch_busy(mgi_context_t *ctx, const mgi_channel_t *ch)
{
    unsigned i;

    for (i = 0; i < MGI_MAX_LOCAL_EPS; ++i) {
        if (__atomic_load_n(&ch->relay_eofs[i], __ATOMIC_ACQUIRE) <
            ch->relay_expect[i]) {
            ucs_error("mgi channel %u: busy, endpoint %u has forwarded %u "
                      "of the %u EOFs it relays", ch->id,
                      MGI_EP_ID(ctx->rank, i), ch->relay_eofs[i],
                      ch->relay_expect[i]);
            return UCS_ERR_BUSY;
        }
    }
    return UCS_OK;
}

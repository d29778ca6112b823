/*
 * GIG graph model (paper §4.1, Table 4): managed vertices (GPUs, one CPU per
 * NUMA node), unmanaged vertices (NVSwitch merged, PCIe switches, NICs, the
 * network), directed edges with per-direction capacity, parallel links
 * merged into one edge with the summed capacity.
 */
#include "gig.h"
#include "gig_int.h"

#include <ucs/debug/log_def.h>

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *gig_vertex_type_names[] = {
    [GIG_VTX_GPU]      = "gpu",
    [GIG_VTX_CPU]      = "cpu",
    [GIG_VTX_NVSWITCH] = "nvswitch",
    [GIG_VTX_PCIE]     = "pcie",
    [GIG_VTX_NIC]      = "nic",
    [GIG_VTX_NET]      = "net",
};

static const char *gig_link_type_names[] = {
    [GIG_LINK_NVLINK]    = "nvlink",
    [GIG_LINK_PCIE]      = "pcie",
    [GIG_LINK_XPI]       = "xpi",
    [GIG_LINK_NET]       = "net",
    [GIG_LINK_GPUDIRECT] = "gpudirect",
};

void gig_vertex_fprint_attrs(FILE *f, const gig_vertex_t *v)
{
    if (v->numa != GIG_NONE) {
        fprintf(f, " numa=%d", v->numa);
    }
    if (v->cuda_dev != GIG_NONE) {
        fprintf(f, " cuda=%d", v->cuda_dev);
    }
    if (v->pci_bus_id[0] != '\0') {
        fprintf(f, " pci=%s", v->pci_bus_id);
    }
    if (v->ucx_dev[0] != '\0') {
        fprintf(f, " dev=%s", v->ucx_dev);
    }
}

const char *gig_vertex_type_str(gig_vertex_type_t type)
{
    return (type < GIG_VTX_LAST) ? gig_vertex_type_names[type] : "?";
}

const char *gig_link_type_str(gig_link_type_t type)
{
    return (type < GIG_LINK_LAST) ? gig_link_type_names[type] : "?";
}

int gig_vertex_type_parse(const char *s)
{
    int i;

    for (i = 0; i < GIG_VTX_LAST; ++i) {
        if (strcmp(s, gig_vertex_type_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

int gig_link_type_parse(const char *s)
{
    int i;

    for (i = 0; i < GIG_LINK_LAST; ++i) {
        if (strcmp(s, gig_link_type_names[i]) == 0) {
            return i;
        }
    }
    return -1;
}

ucs_status_t gig_graph_create(const char *origin, gig_graph_t **graph_p)
{
    gig_graph_t *g = calloc(1, sizeof(*g));

    if (g == NULL) {
        ucs_error("gig graph '%s': out of memory", origin);
        return UCS_ERR_NO_MEMORY;
    }
    g->net = GIG_NONE;
    snprintf(g->origin, sizeof(g->origin), "%s", origin);
    *graph_p = g;
    return UCS_OK;
}

void gig_graph_destroy(gig_graph_t *g)
{
    if (g == NULL) {
        return;
    }
    free(g->v);
    free(g->e);
    free(g->out_start);
    free(g->out_edge);
    free(g->ehash);
    free(g->vhash);
    free(g);
}

static inline unsigned gig_graph_hash(int a, int b, int cap)
{
    uint64_t k = ((uint64_t)(unsigned)a << 32) | (unsigned)b;

    k *= 0x9e3779b97f4a7c15ull;
    return (unsigned)(k >> 32) & (unsigned)(cap - 1);
}

int gig_graph_edge(const gig_graph_t *g, int a, int b)
{
    unsigned h;
    int e;

    if (g->ehash_cap == 0) {
        return GIG_NONE;
    }
    for (h = gig_graph_hash(a, b, g->ehash_cap);; h = (h + 1) &
         (unsigned)(g->ehash_cap - 1)) {
        e = g->ehash[h];
        if (e < 0) {
            return GIG_NONE;
        }
        if ((g->e[e].src == a) && (g->e[e].dst == b)) {
            return e;
        }
    }
}

static void gig_graph_hash_insert(gig_graph_t *g, int e)
{
    unsigned h = gig_graph_hash(g->e[e].src, g->e[e].dst, g->ehash_cap);

    while (g->ehash[h] >= 0) {
        h = (h + 1) & (unsigned)(g->ehash_cap - 1);
    }
    g->ehash[h] = e;
}

static ucs_status_t gig_graph_grow_edges(gig_graph_t *g)
{
    gig_edge_t *e;
    int *hash;
    int cap, hcap, i;

    if (g->ne < g->e_cap) {
        return UCS_OK;
    }
    cap = (g->e_cap == 0) ? 64 : 2 * g->e_cap;
    e   = realloc(g->e, cap * sizeof(*e));
    if (e == NULL) {
        goto err_nomem;
    }
    g->e     = e;
    g->e_cap = cap;

    hcap = 4 * cap;
    hash = malloc(hcap * sizeof(*hash));
    if (hash == NULL) {
        goto err_nomem;
    }
    memset(hash, 0xff, hcap * sizeof(*hash));
    free(g->ehash);
    g->ehash     = hash;
    g->ehash_cap = hcap;
    for (i = 0; i < g->ne; ++i) {
        gig_graph_hash_insert(g, i);
    }
    return UCS_OK;

err_nomem:
    ucs_error("gig graph '%s': out of memory for %d edges", g->origin, cap);
    return UCS_ERR_NO_MEMORY;
}

static unsigned gig_graph_name_hash(const char *name, int cap)
{
    uint32_t h = 2166136261u;   /* FNV-1a */

    for (; *name != '\0'; ++name) {
        h = (h ^ (unsigned char)*name) * 16777619u;
    }
    return h & (unsigned)(cap - 1);
}

static void gig_graph_name_insert(gig_graph_t *g, int id)
{
    unsigned h = gig_graph_name_hash(g->v[id].name, g->vhash_cap);

    while (g->vhash[h] >= 0) {
        h = (h + 1) & (unsigned)(g->vhash_cap - 1);
    }
    g->vhash[h] = id;
}

/* A table at most half full, so that a topology file of n vertices loads
 * in O(n) instead of comparing every name with every other */
static ucs_status_t gig_graph_grow_names(gig_graph_t *g, int nv)
{
    int *hash, cap, i;

    if (2 * nv <= g->vhash_cap) {
        return UCS_OK;
    }
    cap = (g->vhash_cap == 0) ? 64 : 2 * g->vhash_cap;
    while (2 * nv > cap) {
        cap *= 2;
    }
    hash = malloc(cap * sizeof(*hash));
    if (hash == NULL) {
        ucs_error("gig graph '%s': out of memory for %d vertex names",
                  g->origin, nv);
        return UCS_ERR_NO_MEMORY;
    }
    memset(hash, 0xff, cap * sizeof(*hash));
    free(g->vhash);
    g->vhash     = hash;
    g->vhash_cap = cap;
    for (i = 0; i < g->nv; ++i) {
        gig_graph_name_insert(g, i);
    }
    return UCS_OK;
}

int gig_graph_find_name(const gig_graph_t *g, const char *name)
{
    unsigned h;
    int id;

    if (g->vhash_cap == 0) {
        return GIG_NONE;
    }
    for (h = gig_graph_name_hash(name, g->vhash_cap);;
         h = (h + 1) & (unsigned)(g->vhash_cap - 1)) {
        id = g->vhash[h];
        if (id < 0) {
            return GIG_NONE;
        }
        if (strcmp(g->v[id].name, name) == 0) {
            return id;
        }
    }
}

ucs_status_t gig_graph_add_vertex(gig_graph_t *g, gig_vertex_type_t type,
                                  const char *name, int server, int *id_p)
{
    gig_vertex_t *v;
    int cap;

    if (g->finalized) {
        ucs_error("gig graph '%s': vertex '%s' added after finalize",
                  g->origin, name);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((type >= GIG_VTX_LAST) || (name == NULL) || (name[0] == '\0') ||
        (strlen(name) >= GIG_NAME_MAX)) {
        ucs_error("gig graph '%s': invalid vertex '%s' (type %d)", g->origin,
                  (name != NULL) ? name : "(null)", type);
        return UCS_ERR_INVALID_PARAM;
    }
    if (gig_graph_find_name(g, name) != GIG_NONE) {
        ucs_error("gig graph '%s': duplicate vertex '%s'", g->origin, name);
        return UCS_ERR_ALREADY_EXISTS;
    }
    if ((type == GIG_VTX_NET) && (g->net != GIG_NONE)) {
        ucs_error("gig graph '%s': second network vertex '%s' (have '%s')",
                  g->origin, name, g->v[g->net].name);
        return UCS_ERR_ALREADY_EXISTS;
    }
    if ((type != GIG_VTX_NET) && (server < 0)) {
        ucs_error("gig graph '%s': vertex '%s' has no server", g->origin,
                  name);
        return UCS_ERR_INVALID_PARAM;
    }

    if (gig_graph_grow_names(g, g->nv + 1) != UCS_OK) {
        return UCS_ERR_NO_MEMORY;
    }
    if (g->nv == g->v_cap) {
        cap = (g->v_cap == 0) ? 32 : 2 * g->v_cap;
        v   = realloc(g->v, cap * sizeof(*v));
        if (v == NULL) {
            ucs_error("gig graph '%s': out of memory for %d vertices",
                      g->origin, cap);
            return UCS_ERR_NO_MEMORY;
        }
        g->v     = v;
        g->v_cap = cap;
    }

    v = &g->v[g->nv];
    memset(v, 0, sizeof(*v));
    v->type     = type;
    v->server   = (type == GIG_VTX_NET) ? GIG_NONE : server;
    v->numa     = GIG_NONE;
    v->cuda_dev = GIG_NONE;
    snprintf(v->name, sizeof(v->name), "%s", name);
    gig_graph_name_insert(g, g->nv);
    if (type == GIG_VTX_NET) {
        g->net = g->nv;
    } else if (server >= g->nservers) {
        g->nservers = server + 1;
    }
    *id_p = g->nv++;
    return UCS_OK;
}

static ucs_status_t gig_graph_add_arc(gig_graph_t *g, int a, int b,
                                      gig_link_type_t link, unsigned count,
                                      double cap)
{
    ucs_status_t status;
    int e;

    e = gig_graph_edge(g, a, b);
    if (e != GIG_NONE) {
        if (g->e[e].link != link) {
            ucs_debug("gig graph '%s': %s->%s merges %s into %s link",
                      g->origin, g->v[a].name, g->v[b].name,
                      gig_link_type_str(link),
                      gig_link_type_str(g->e[e].link));
        }
        g->e[e].count    += count;
        g->e[e].capacity += cap;
        return UCS_OK;
    }

    status = gig_graph_grow_edges(g);
    if (status != UCS_OK) {
        return status;
    }
    e = g->ne++;
    g->e[e].src      = a;
    g->e[e].dst      = b;
    g->e[e].link     = link;
    g->e[e].count    = count;
    g->e[e].capacity = cap;
    gig_graph_hash_insert(g, e);
    return UCS_OK;
}

ucs_status_t gig_graph_add_link(gig_graph_t *g, int a, int b,
                                gig_link_type_t link, unsigned count,
                                double cap_ab, double cap_ba)
{
    ucs_status_t status;

    if (g->finalized) {
        ucs_error("gig graph '%s': link added after finalize", g->origin);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((a < 0) || (a >= g->nv) || (b < 0) || (b >= g->nv) || (a == b) ||
        (link >= GIG_LINK_LAST)) {
        ucs_error("gig graph '%s': invalid link %d-%d type %d", g->origin,
                  a, b, link);
        return UCS_ERR_INVALID_PARAM;
    }
    /* the max-flow counts in MB/s on int64: 1e12 GB/s leaves ample room */
    if (!(cap_ab >= 0) || !(cap_ba >= 0) || (cap_ab > 1e12) ||
        (cap_ba > 1e12)) {
        ucs_error("gig graph '%s': link %s-%s has invalid capacity %g/%g",
                  g->origin, g->v[a].name, g->v[b].name, cap_ab, cap_ba);
        return UCS_ERR_INVALID_PARAM;
    }
    if (count == 0) {
        count = 1;
    }
    if (cap_ab > 0) {
        status = gig_graph_add_arc(g, a, b, link, count, cap_ab);
        if (status != UCS_OK) {
            return status;
        }
    }
    if (cap_ba > 0) {
        status = gig_graph_add_arc(g, b, a, link, count, cap_ba);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

ucs_status_t gig_graph_finalize(gig_graph_t *g)
{
    int *start, *list, *fill;
    int i;

    if (g->finalized) {
        return UCS_OK;
    }
    for (i = 0; i < g->ne; ++i) {
        if ((g->v[g->e[i].src].type == GIG_VTX_NET) ||
            (g->v[g->e[i].dst].type == GIG_VTX_NET)) {
            if ((g->v[g->e[i].src].type != GIG_VTX_NIC) &&
                (g->v[g->e[i].dst].type != GIG_VTX_NIC)) {
                ucs_error("gig graph '%s': network vertex linked to '%s', "
                          "not a NIC", g->origin,
                          g->v[(g->e[i].src == g->net) ? g->e[i].dst :
                               g->e[i].src].name);
                return UCS_ERR_INVALID_PARAM;
            }
        } else if (g->v[g->e[i].src].server != g->v[g->e[i].dst].server) {
            ucs_error("gig graph '%s': edge %s->%s joins servers %d and %d "
                      "(servers meet only through the network vertex)",
                      g->origin, g->v[g->e[i].src].name,
                      g->v[g->e[i].dst].name, g->v[g->e[i].src].server,
                      g->v[g->e[i].dst].server);
            return UCS_ERR_INVALID_PARAM;
        }
    }

    start = calloc(g->nv + 1, sizeof(*start));
    list  = malloc((g->ne + 1) * sizeof(*list));
    fill  = calloc(g->nv + 1, sizeof(*fill));
    if ((start == NULL) || (list == NULL) || (fill == NULL)) {
        free(start);
        free(list);
        free(fill);
        ucs_error("gig graph '%s': out of memory for adjacency", g->origin);
        return UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i < g->ne; ++i) {
        start[g->e[i].src + 1]++;
    }
    for (i = 0; i < g->nv; ++i) {
        start[i + 1] += start[i];
    }
    /* edges keep insertion order per vertex: deterministic BFS */
    for (i = 0; i < g->ne; ++i) {
        list[start[g->e[i].src] + fill[g->e[i].src]++] = i;
    }
    free(fill);
    g->out_start = start;
    g->out_edge  = list;
    g->finalized = 1;
    return UCS_OK;
}

int gig_graph_find_cuda(const gig_graph_t *g, int cuda_dev)
{
    int i;

    for (i = 0; i < g->nv; ++i) {
        if ((g->v[i].type == GIG_VTX_GPU) && (g->v[i].cuda_dev == cuda_dev)) {
            return i;
        }
    }
    return GIG_NONE;
}

/* "0000:18:00.0" -> domain 0, bus 0x18, dev 0, fn 0 */
static int gig_pci_parse(const char *s, unsigned *dom, unsigned *bus,
                         unsigned *dev, unsigned *fn)
{
    char tail;

    if (sscanf(s, "%x:%x:%x.%x%c", dom, bus, dev, fn, &tail) == 4) {
        return 1;
    }
    *dom = 0;
    return sscanf(s, "%x:%x.%x%c", bus, dev, fn, &tail) == 3;
}

int gig_pci_same(const char *a, const char *b)
{
    unsigned d1, b1, s1, f1, d2, b2, s2, f2;

    return gig_pci_parse(a, &d1, &b1, &s1, &f1) &&
           gig_pci_parse(b, &d2, &b2, &s2, &f2) && (d1 == d2) &&
           (b1 == b2) && (s1 == s2) && (f1 == f2);
}

int gig_graph_find_pci(const gig_graph_t *g, const char *bus_id)
{
    unsigned d1, b1, s1, f1, d2, b2, s2, f2;
    int i;

    if (!gig_pci_parse(bus_id, &d1, &b1, &s1, &f1)) {
        return GIG_NONE;
    }
    for (i = 0; i < g->nv; ++i) {
        if ((g->v[i].pci_bus_id[0] != '\0') &&
            gig_pci_parse(g->v[i].pci_bus_id, &d2, &b2, &s2, &f2) &&
            (d1 == d2) && (b1 == b2) && (s1 == s2) && (f1 == f2)) {
            return i;
        }
    }
    return GIG_NONE;
}

int gig_graph_is_managed(const gig_graph_t *g, int v)
{
    return (g->v[v].type == GIG_VTX_GPU) || (g->v[v].type == GIG_VTX_CPU);
}

int gig_graph_count(const gig_graph_t *g, gig_vertex_type_t type)
{
    int i, n = 0;

    for (i = 0; i < g->nv; ++i) {
        n += (g->v[i].type == type);
    }
    return n;
}

void gig_graph_print(const gig_graph_t *g, FILE *f)
{
    const gig_vertex_t *v;
    const gig_edge_t *e;
    int i;

    fprintf(f, "GIG '%s': %d vertices (%d GPU, %d CPU, %d NVSwitch, "
            "%d PCIe, %d NIC, %s network), %d edges, %d server(s)\n",
            g->origin, g->nv, gig_graph_count(g, GIG_VTX_GPU),
            gig_graph_count(g, GIG_VTX_CPU),
            gig_graph_count(g, GIG_VTX_NVSWITCH),
            gig_graph_count(g, GIG_VTX_PCIE), gig_graph_count(g, GIG_VTX_NIC),
            (g->net != GIG_NONE) ? "1" : "no", g->ne, g->nservers);
    for (i = 0; i < g->nv; ++i) {
        v = &g->v[i];
        fprintf(f, "  v%-4d %-16s %-8s %s server=%d", i, v->name,
                gig_vertex_type_str(v->type),
                gig_graph_is_managed(g, i) ? "managed  " : "unmanaged",
                v->server);
        gig_vertex_fprint_attrs(f, v);
        if (v->model[0] != '\0') {
            fprintf(f, " model=%s", v->model);
        }
        fprintf(f, "\n");
    }
    for (i = 0; i < g->ne; ++i) {
        e = &g->e[i];
        fprintf(f, "  %-16s -> %-16s %-9s x%-3u %9.2f GB/s\n",
                g->v[e->src].name, g->v[e->dst].name,
                gig_link_type_str(e->link), e->count, e->capacity);
    }
}

void gig_graph_print_dot(const gig_graph_t *g, FILE *f)
{
    static const char *shape[] = {
        [GIG_VTX_GPU]      = "shape=box,style=filled,fillcolor=palegreen",
        [GIG_VTX_CPU]      = "shape=box,style=filled,fillcolor=lightblue",
        [GIG_VTX_NVSWITCH] = "shape=ellipse,style=filled,fillcolor=khaki",
        [GIG_VTX_PCIE]     = "shape=ellipse",
        [GIG_VTX_NIC]      = "shape=hexagon",
        [GIG_VTX_NET]      = "shape=doublecircle",
    };
    static const char *color[] = {
        [GIG_LINK_NVLINK]    = "darkgreen",
        [GIG_LINK_PCIE]      = "black",
        [GIG_LINK_XPI]       = "blue",
        [GIG_LINK_NET]       = "purple",
        [GIG_LINK_GPUDIRECT] = "red",
    };
    const gig_edge_t *e;
    int i, s, back;

    fprintf(f, "digraph gig {\n  label=\"GIG %s\\nGB/s per direction; "
            "green NVLink, black PCIe, blue XPI, purple network, red "
            "GPUDirect\";\n  labelloc=t;\n"
            "  node [fontname=\"Helvetica\",fontsize=10];\n"
            "  edge [fontname=\"Helvetica\",fontsize=8];\n", g->origin);
    for (s = 0; s < g->nservers; ++s) {
        if (g->nservers > 1) {
            fprintf(f, "  subgraph cluster_s%d {\n    label=\"server %d\";\n",
                    s, s);
        }
        for (i = 0; i < g->nv; ++i) {
            if (g->v[i].server == s) {
                fprintf(f, "    v%d [label=\"%s\\n%s\",%s];\n", i,
                        g->v[i].name, (g->v[i].model[0] != '\0') ?
                        g->v[i].model : gig_vertex_type_str(g->v[i].type),
                        shape[g->v[i].type]);
            }
        }
        if (g->nservers > 1) {
            fprintf(f, "  }\n");
        }
    }
    if (g->net != GIG_NONE) {
        fprintf(f, "  v%d [label=\"%s\",%s];\n", g->net, g->v[g->net].name,
                shape[GIG_VTX_NET]);
    }
    for (i = 0; i < g->ne; ++i) {
        e    = &g->e[i];
        back = gig_graph_edge(g, e->dst, e->src);
        if ((back != GIG_NONE) && (back < i)) {
            continue;   /* drawn with its pair */
        }
        if ((back != GIG_NONE) && (g->e[back].capacity == e->capacity)) {
            fprintf(f, "  v%d -> v%d [dir=both,color=%s,label=\"%.4g\"];\n",
                    e->src, e->dst, color[e->link], e->capacity);
        } else if (back != GIG_NONE) {
            fprintf(f, "  v%d -> v%d [dir=both,color=%s,"
                    "label=\"%.4g / %.4g\"];\n", e->src, e->dst,
                    color[e->link], e->capacity, g->e[back].capacity);
        } else {
            fprintf(f, "  v%d -> v%d [color=%s,label=\"%.4g\"];\n", e->src,
                    e->dst, color[e->link], e->capacity);
        }
    }
    fprintf(f, "}\n");
}

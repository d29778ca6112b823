/*
 * Transfer Optimizer (paper §4.3, Fig. 6): paths for a (source, destination)
 * pair by Edmonds-Karp on the pair's server, or hierarchically through the
 * network vertex for ends on different servers; every result cached.  On
 * servers of one shape (gig_shape.c) Edmonds-Karp runs on the first only.
 */
#include "gig_int.h"

#include <ucs/debug/log_def.h>
#include <ucs/sys/compiler_def.h>

#include <stdlib.h>
#include <string.h>

/* A cached path set and what the forwarding tables derived from it */
typedef struct gig_pathset_ext {
    gig_pathset_t     ps;
    gig_cut_t         *cut[GIG_CUT_LAST];
} gig_pathset_ext_t;

struct gig_plan {
    const gig_graph_t *graph;
    gig_flownet_t     fn;
    int               *server;  /* vertex -> server, the BFS mask */
    unsigned char     *is_nic;
    gig_arena_t       arena;
    gig_frags_t       frags;    /* route fragments of the cuts */
    gig_shapes_t      shapes;   /* servers planned alike; unset if plain */
    gig_cache_t       cache;
    /* paths of the pair being planned */
    gig_path_t        *tmp;
    int               ntmp, tmp_cap;
    gig_plan_stats_t  stats;
    unsigned          flags;
};

static const char *gig_path_kind_names[] = {
    [GIG_PATH_DIRECT]   = "direct",
    [GIG_PATH_VIA_HOST] = "via-host",
    [GIG_PATH_VIA_GPU]  = "via-gpu",
    [GIG_PATH_NETWORK]  = "network",
};

const char *gig_path_kind_str(gig_path_kind_t kind)
{
    return (kind <= GIG_PATH_NETWORK) ? gig_path_kind_names[kind] : "?";
}

ucs_status_t gig_plan_create(const gig_graph_t *g, gig_plan_t **plan_p)
{
    return gig_plan_create_flags(g, 0, plan_p);
}

ucs_status_t gig_plan_create_flags(const gig_graph_t *g, unsigned flags,
                                   gig_plan_t **plan_p)
{
    ucs_status_t status;
    gig_plan_t *plan;
    int i;

    if (!g->finalized) {
        ucs_error("gig graph '%s': planning before gig_graph_finalize()",
                  g->origin);
        return UCS_ERR_INVALID_PARAM;
    }
    plan = calloc(1, sizeof(*plan));
    if (plan == NULL) {
        goto err_nomem;
    }
    plan->graph  = g;
    plan->server = malloc((g->nv + 1) * sizeof(int));
    plan->is_nic = malloc(g->nv + 1);
    if ((plan->server == NULL) || (plan->is_nic == NULL)) {
        goto err_free;
    }
    for (i = 0; i < g->nv; ++i) {
        plan->server[i] = g->v[i].server;
        plan->is_nic[i] = (g->v[i].type == GIG_VTX_NIC);
    }

    status = gig_flownet_init(&plan->fn, g, 0, 0);
    if (status != UCS_OK) {
        goto err_free;
    }
    gig_flownet_build_adj(&plan->fn);
    /* shapes number the vertices per server, which the cache uses too;
     * a plain plan translates nothing */
    status = gig_shapes_init(&plan->shapes, g, &plan->fn);
    if (status != UCS_OK) {
        goto err_flownet;
    }
    status = gig_cache_init(&plan->cache, g, &plan->shapes);
    if (status != UCS_OK) {
        goto err_shapes;
    }
    plan->flags     = flags;
    plan->fn.vmask  = (flags & GIG_PLAN_F_PLAIN) ? NULL : plan->server;
    plan->fn.is_nic = (flags & GIG_PLAN_F_PLAIN) ? NULL : plan->is_nic;
    *plan_p        = plan;
    return UCS_OK;

err_shapes:
    gig_shapes_cleanup(&plan->shapes);
err_flownet:
    gig_flownet_cleanup(&plan->fn);
err_free:
    free(plan->server);
    free(plan->is_nic);
    free(plan);
err_nomem:
    ucs_error("gig plan of '%s': out of memory", g->origin);
    return UCS_ERR_NO_MEMORY;
}

void gig_plan_destroy(gig_plan_t *plan)
{
    if (plan == NULL) {
        return;
    }
    gig_flownet_cleanup(&plan->fn);
    gig_cache_cleanup(&plan->cache);
    gig_shapes_cleanup(&plan->shapes);
    gig_arena_cleanup(&plan->arena);
    gig_frags_cleanup(&plan->frags);
    free(plan->server);
    free(plan->is_nic);
    free(plan->tmp);
    free(plan);
}

const gig_graph_t *gig_plan_graph(const gig_plan_t *plan)
{
    return plan->graph;
}

void gig_plan_get_stats(const gig_plan_t *plan, gig_plan_stats_t *stats)
{
    *stats = plan->stats;
}

static gig_pathset_t *gig_plan_cache_get(gig_plan_t *plan, int s, int t)
{
    return gig_cache_get(&plan->cache, s, t);
}

static ucs_status_t gig_plan_cache_put(gig_plan_t *plan, gig_pathset_t *ps)
{
    ucs_status_t status = gig_cache_put(&plan->cache, ps);

    if (status != UCS_OK) {
        ucs_error("gig plan of '%s': out of memory caching the paths %s -> "
                  "%s", plan->graph->origin, plan->graph->v[ps->src].name,
                  plan->graph->v[ps->dst].name);
    }
    return status;
}

/* A new zeroed path at the end of plan->tmp, and an array of nvert
 * vertices for it in the plan's arena (the caller fills both). */
static ucs_status_t gig_plan_tmp_push(gig_plan_t *plan, int nvert,
                                      gig_path_t **path_p, int **vert_p)
{
    gig_path_t *tmp;
    int cap;

    *vert_p = gig_arena_alloc(&plan->arena, nvert * sizeof(int));
    if (*vert_p == NULL) {
        ucs_error("gig plan of '%s': out of memory for a path",
                  plan->graph->origin);
        return UCS_ERR_NO_MEMORY;
    }
    if (plan->ntmp == plan->tmp_cap) {
        cap = (plan->tmp_cap == 0) ? 16 : 2 * plan->tmp_cap;
        tmp = realloc(plan->tmp, cap * sizeof(*tmp));
        if (tmp == NULL) {
            ucs_error("gig plan of '%s': out of memory for %d paths",
                      plan->graph->origin, cap);
            return UCS_ERR_NO_MEMORY;
        }
        plan->tmp     = tmp;
        plan->tmp_cap = cap;
    }
    *path_p = &plan->tmp[plan->ntmp++];
    memset(*path_p, 0, sizeof(**path_p));
    return UCS_OK;
}

/* Fills kind, via, nrelays, nvlink and bottleneck from the vertex list */
static void gig_path_classify(const gig_graph_t *g, gig_path_t *p)
{
    const int *vt = p->vert;
    int i, e, net = 0;
    double bn = -1;

    p->via     = GIG_NONE;
    p->nrelays = 0;
    p->nvlink  = 1;
    for (i = 0; i + 1 < p->nvert; ++i) {
        e = gig_graph_edge(g, vt[i], vt[i + 1]);
        if ((bn < 0) || (g->e[e].capacity < bn)) {
            bn = g->e[e].capacity;
        }
        if (((g->v[vt[i]].type == GIG_VTX_GPU) ||
             (g->v[vt[i + 1]].type == GIG_VTX_GPU)) &&
            (g->e[e].link != GIG_LINK_NVLINK)) {
            p->nvlink = 0;
        }
        if (i == 0) {
            continue;
        }
        if (vt[i] == g->net) {
            net = 1;
        } else if (gig_graph_is_managed(g, vt[i])) {
            if (p->via == GIG_NONE) {
                p->via = vt[i];
            }
            p->nrelays++;
        }
    }
    p->bottleneck = (bn < 0) ? 0 : bn;
    if (net || (vt[0] == g->net) || (vt[p->nvert - 1] == g->net)) {
        p->kind = GIG_PATH_NETWORK;
    } else if (p->via == GIG_NONE) {
        p->kind = GIG_PATH_DIRECT;
    } else if (g->v[p->via].type == GIG_VTX_CPU) {
        p->kind = GIG_PATH_VIA_HOST;
    } else {
        p->kind = GIG_PATH_VIA_GPU;
    }
}

typedef struct {
    gig_plan_t   *plan;
} gig_plan_cb_arg_t;

static ucs_status_t gig_plan_rawpath_cb(void *arg, const int *vert,
                                        int nvert, int64_t flow)
{
    gig_plan_t *plan = arg;
    ucs_status_t status;
    gig_path_t *p;
    int *copy;

    status = gig_plan_tmp_push(plan, nvert, &p, &copy);
    if (status != UCS_OK) {
        return status;
    }
    memcpy(copy, vert, nvert * sizeof(int));
    p->vert     = copy;
    p->nvert    = nvert;
    p->capacity = gig_gbps(flow);
    gig_path_classify(plan->graph, p);
    return UCS_OK;
}

static int gig_path_order(const gig_path_t *a, const gig_path_t *b)
{
    int da = (a->kind == GIG_PATH_DIRECT), db = (b->kind == GIG_PATH_DIRECT);

    if (da != db) {
        return db - da;
    }
    if (a->capacity != b->capacity) {
        return (a->capacity > b->capacity) ? -1 : 1;
    }
    return a->nvert - b->nvert;
}

/* Stable insertion sort: path sets are small */
static void gig_paths_sort(gig_path_t *p, int n)
{
    gig_path_t x;
    int i, j;

    for (i = 1; i < n; ++i) {
        x = p[i];
        for (j = i; (j > 0) && (gig_path_order(&x, &p[j - 1]) < 0); --j) {
            p[j] = p[j - 1];
        }
        p[j] = x;
    }
}

/* Moves plan->tmp into a new cached path set */
static ucs_status_t gig_plan_commit(gig_plan_t *plan, int s, int t,
                                    const gig_pathset_t **ps_p)
{
    gig_pathset_ext_t *ext;
    gig_pathset_t *ps;
    ucs_status_t status;
    int i;

    ext = gig_arena_alloc(&plan->arena, sizeof(*ext) +
                          plan->ntmp * sizeof(gig_path_t));
    if (ext == NULL) {
        ucs_error("gig plan of '%s': out of memory for a path set",
                  plan->graph->origin);
        return UCS_ERR_NO_MEMORY;
    }
    memset(ext->cut, 0, sizeof(ext->cut));
    ps = &ext->ps;
    gig_paths_sort(plan->tmp, plan->ntmp);
    ps->src    = s;
    ps->dst    = t;
    ps->npaths = plan->ntmp;
    ps->paths  = (gig_path_t*)(ext + 1);
    ps->total  = 0;
    if (plan->ntmp > 0) {      /* plan->tmp is NULL until a path is found */
        memcpy(ps->paths, plan->tmp, plan->ntmp * sizeof(gig_path_t));
    }
    for (i = 0; i < ps->npaths; ++i) {
        ps->total += ps->paths[i].capacity;
    }
    for (i = 0; i < ps->npaths; ++i) {
        ps->paths[i].share = ps->paths[i].capacity / ps->total;
    }
    plan->ntmp = 0;
    status     = gig_plan_cache_put(plan, ps);
    if (status != UCS_OK) {
        return status;
    }
    *ps_p = ps;
    return UCS_OK;
}

static ucs_status_t gig_plan_ekc(gig_plan_t *plan, int s, int t,
                                 const gig_pathset_t **ps_p);

/* The pair's path set as the same pair's on the first server of the same
 * shape (gig_shape.c), vertex ids translated */
static ucs_status_t gig_plan_translate(gig_plan_t *plan, int s, int t,
                                       int server, const gig_pathset_t **ps_p)
{
    const gig_graph_t *g   = plan->graph;
    const gig_shapes_t *sh = &plan->shapes;
    int rep                = sh->rep[server];
    const gig_pathset_t *ps;
    const gig_path_t *src;
    ucs_status_t status;
    gig_path_t *p;
    int i, j, *vert;

    status = gig_plan_ekc(plan, gig_shapes_map(sh, g, s, rep),
                          gig_shapes_map(sh, g, t, rep), &ps);
    if (status != UCS_OK) {
        return status;
    }
    plan->ntmp = 0;
    for (i = 0; i < ps->npaths; ++i) {
        src  = &ps->paths[i];
        status = gig_plan_tmp_push(plan, src->nvert, &p, &vert);
        if (status != UCS_OK) {
            return status;
        }
        *p = *src;
        for (j = 0; j < src->nvert; ++j) {
            vert[j] = gig_shapes_map(sh, g, src->vert[j], server);
        }
        p->vert = vert;
        if (p->via != GIG_NONE) {
            p->via = gig_shapes_map(sh, g, p->via, server);
        }
    }
    plan->stats.shape_copies++;
    return gig_plan_commit(plan, s, t, ps_p);
}

/* Edmonds-Karp-Cache of Fig. 6, restricted to one server (+ the network) */
static ucs_status_t gig_plan_ekc(gig_plan_t *plan, int s, int t,
                                 const gig_pathset_t **ps_p)
{
    const gig_graph_t *g = plan->graph;
    int server           = (s != g->net) ? g->v[s].server : g->v[t].server;
    const gig_pathset_t *ps;
    ucs_status_t status;

    ps = gig_plan_cache_get(plan, s, t);
    if (ps != NULL) {
        plan->stats.cache_hits++;
        *ps_p = ps;
        return UCS_OK;
    }
    plan->stats.cache_misses++;
    if (!(plan->flags & (GIG_PLAN_F_PLAIN | GIG_PLAN_F_NO_SHAPES)) &&
        (plan->shapes.rep[server] != server)) {
        return gig_plan_translate(plan, s, t, server, ps_p);
    }
    plan->stats.maxflow_runs++;

    plan->fn.mask_val = server;
    plan->fn.extra_v  = ((s == g->net) || (t == g->net)) ? g->net : GIG_NONE;
    plan->fn.nic_mode = (t == g->net) ? GIG_NIC_UP :
                        (s == g->net) ? GIG_NIC_DOWN : GIG_NIC_BLOCK;
    plan->ntmp        = 0;
    gig_flownet_maxflow(&plan->fn, s, t);
    status = gig_flownet_decompose(&plan->fn, s, t, gig_plan_rawpath_cb,
                                   plan);
    gig_flownet_reset(&plan->fn);
    if (status != UCS_OK) {
        return status;
    }
    return gig_plan_commit(plan, s, t, ps_p);
}

/* Pairs the paths s->net with net->d by capacity, splitting where needed */
static ucs_status_t gig_plan_concat(gig_plan_t *plan,
                                    const gig_pathset_t *up,
                                    const gig_pathset_t *down)
{
    double r1, r2, m;
    ucs_status_t status;
    gig_path_t *p;
    int i = 0, j = 0;
    int *vert;

    r1 = (up->npaths > 0) ? up->paths[0].capacity : 0;
    r2 = (down->npaths > 0) ? down->paths[0].capacity : 0;
    while ((i < up->npaths) && (j < down->npaths)) {
        m    = (r1 < r2) ? r1 : r2;
        status = gig_plan_tmp_push(plan, up->paths[i].nvert +
                                   down->paths[j].nvert - 1, &p, &vert);
        if (status != UCS_OK) {
            return status;
        }
        memcpy(vert, up->paths[i].vert, up->paths[i].nvert * sizeof(int));
        memcpy(vert + up->paths[i].nvert, down->paths[j].vert + 1,
               (down->paths[j].nvert - 1) * sizeof(int));
        p->vert     = vert;
        p->nvert    = up->paths[i].nvert + down->paths[j].nvert - 1;
        p->capacity = m;
        /* both halves are classified already: no edge lookups */
        p->kind       = GIG_PATH_NETWORK;
        p->via        = (up->paths[i].via != GIG_NONE) ? up->paths[i].via :
                        down->paths[j].via;
        p->nrelays    = up->paths[i].nrelays + down->paths[j].nrelays;
        p->nvlink     = up->paths[i].nvlink && down->paths[j].nvlink;
        p->bottleneck = (up->paths[i].bottleneck < down->paths[j].bottleneck) ?
                        up->paths[i].bottleneck : down->paths[j].bottleneck;
        r1 -= m;
        r2 -= m;
        /* capacities are whole MB/s: compare at half a unit */
        if (r1 < 0.5 / GIG_UNITS_PER_GBPS) {
            if (++i < up->npaths) {
                r1 = up->paths[i].capacity;
            }
        }
        if (r2 < 0.5 / GIG_UNITS_PER_GBPS) {
            if (++j < down->npaths) {
                r2 = down->paths[j].capacity;
            }
        }
    }
    return UCS_OK;
}

ucs_status_t gig_plan_paths(gig_plan_t *plan, int s, int t,
                            const gig_pathset_t **ps_p)
{
    const gig_graph_t *g = plan->graph;
    const gig_pathset_t *up, *down, *ps;
    ucs_status_t status;

    if ((s < 0) || (s >= g->nv) || (t < 0) || (t >= g->nv) || (s == t)) {
        ucs_error("gig plan of '%s': invalid pair %d -> %d (%d vertices)",
                  g->origin, s, t, g->nv);
        return UCS_ERR_INVALID_PARAM;
    }
    if ((s == g->net) || (t == g->net) ||
        (g->v[s].server == g->v[t].server) ||
        (plan->flags & GIG_PLAN_F_PLAIN)) {
        return gig_plan_ekc(plan, s, t, ps_p);
    }

    ps = gig_plan_cache_get(plan, s, t);
    if (ps != NULL) {
        plan->stats.cache_hits++;
        *ps_p = ps;
        return UCS_OK;
    }
    plan->stats.cache_misses++;
    if (g->net == GIG_NONE) {
        ucs_debug("gig plan of '%s': %s and %s are on servers %d and %d and "
                  "there is no network vertex", g->origin, g->v[s].name,
                  g->v[t].name, g->v[s].server, g->v[t].server);
        plan->ntmp = 0;
        return gig_plan_commit(plan, s, t, ps_p);
    }
    status = gig_plan_ekc(plan, s, g->net, &up);
    if (status != UCS_OK) {
        return status;
    }
    status = gig_plan_ekc(plan, g->net, t, &down);
    if (status != UCS_OK) {
        return status;
    }
    plan->ntmp = 0;
    status     = gig_plan_concat(plan, up, down);
    if (status != UCS_OK) {
        return status;
    }
    return gig_plan_commit(plan, s, t, ps_p);
}

const gig_pathset_t *gig_plan_cached(const gig_plan_t *plan, int s, int t)
{
    return gig_cache_get(&plan->cache, s, t);
}

int gig_plan_splits(const gig_plan_t *plan)
{
    return !(plan->flags & GIG_PLAN_F_PLAIN) && (plan->graph->net != GIG_NONE);
}

int gig_plan_ncross(const gig_plan_t *plan)
{
    return plan->cache.hn;
}

const gig_shapes_t *gig_plan_shapes(const gig_plan_t *plan)
{
    return (plan->flags & (GIG_PLAN_F_PLAIN | GIG_PLAN_F_NO_SHAPES)) ?
           NULL : &plan->shapes;
}

gig_frags_t *gig_plan_frags(gig_plan_t *plan)
{
    return &plan->frags;
}

ucs_status_t gig_plan_cut(gig_plan_t *plan, const gig_pathset_t *ps,
                          gig_cut_mode_t mode, const gig_cut_t **cut_p)
{
    gig_pathset_ext_t *ext = ucs_container_of(ps, gig_pathset_ext_t, ps);
    ucs_status_t status;

    if (ext->cut[mode] == NULL) {
        status = gig_cut_make(plan->graph, &plan->frags, &plan->arena, ps,
                              mode, &ext->cut[mode]);
        if (status != UCS_OK) {
            return status;
        }
    }
    *cut_p = ext->cut[mode];
    return UCS_OK;
}

int gig_plan_nic(gig_plan_t *plan, int v)
{
    const gig_graph_t *g = plan->graph;
    const gig_pathset_t *ps;
    const gig_path_t *p;
    int i;

    if ((g->net == GIG_NONE) || (v < 0) || (v >= g->nv) || (v == g->net) ||
        (gig_plan_paths(plan, v, g->net, &ps) != UCS_OK) ||
        (ps->npaths == 0)) {
        return GIG_NONE;
    }
    p = &ps->paths[0];
    for (i = p->nvert - 2; i > 0; --i) {
        if (g->v[p->vert[i]].type == GIG_VTX_NIC) {
            return p->vert[i];
        }
    }
    return GIG_NONE;
}

/* The process's vertex on server `server`: its GPU, else its NUMA node's
 * CPU, else the server's first CPU */
static int gig_nic_from(const gig_graph_t *g, int server,
                        const char *gpu_bus_id, int cuda_dev, int numa)
{
    int i, cpu = GIG_NONE;

    for (i = 0; (gpu_bus_id != NULL) && (gpu_bus_id[0] != '\0') &&
                (i < g->nv); ++i) {
        if ((g->v[i].type == GIG_VTX_GPU) && (g->v[i].server == server) &&
            (g->v[i].pci_bus_id[0] != '\0') &&
            gig_pci_same(g->v[i].pci_bus_id, gpu_bus_id)) {
            return i;
        }
    }
    for (i = 0; (cuda_dev >= 0) && (i < g->nv); ++i) {
        if ((g->v[i].type == GIG_VTX_GPU) && (g->v[i].server == server) &&
            (g->v[i].cuda_dev == cuda_dev)) {
            return i;
        }
    }
    for (i = 0; i < g->nv; ++i) {
        if ((g->v[i].type != GIG_VTX_CPU) || (g->v[i].server != server)) {
            continue;
        }
        if ((numa >= 0) && (g->v[i].numa == numa)) {
            return i;
        }
        if (cpu == GIG_NONE) {
            cpu = i;
        }
    }
    return cpu;
}

int gig_nic_of(const gig_graph_t *g, int v)
{
    int nic = GIG_NONE;
    gig_plan_t *plan;

    if ((v != GIG_NONE) && (g->net != GIG_NONE) &&
        (gig_plan_create(g, &plan) == UCS_OK)) {
        nic = gig_plan_nic(plan, v);
        gig_plan_destroy(plan);
    }
    return nic;
}

int gig_nic_nearest(const gig_graph_t *g, int server, const char *gpu_bus_id,
                    int cuda_dev, int numa, int *from_p)
{
    int from = gig_nic_from(g, server, gpu_bus_id, cuda_dev, numa);

    if (from_p != NULL) {
        *from_p = from;
    }
    return gig_nic_of(g, from);
}

int gig_pathset_shares(const gig_pathset_t *ps, double *shares, int max)
{
    int i;

    for (i = 0; (i < ps->npaths) && (i < max); ++i) {
        shares[i] = ps->paths[i].share;
    }
    return i;
}

void gig_pathset_print(const gig_graph_t *g, const gig_pathset_t *ps,
                       FILE *f)
{
    const gig_path_t *p;
    int i, j;

    fprintf(f, "paths %s -> %s: %d path(s), %.2f GB/s total\n",
            g->v[ps->src].name, g->v[ps->dst].name, ps->npaths, ps->total);
    for (i = 0; i < ps->npaths; ++i) {
        p = &ps->paths[i];
        fprintf(f, "  [%d] %-8s", i, gig_path_kind_str(p->kind));
        if (p->via != GIG_NONE) {
            fprintf(f, " via %-10s", g->v[p->via].name);
        } else {
            fprintf(f, "     %-10s", "");
        }
        fprintf(f, " %8.2f GB/s (share %5.1f%%, bottleneck %.2f%s) :",
                p->capacity, 100.0 * p->share, p->bottleneck,
                p->nvlink ? ", nvlink" : "");
        for (j = 0; j < p->nvert; ++j) {
            fprintf(f, "%s%s", (j == 0) ? " " : " > ", g->v[p->vert[j]].name);
        }
        fprintf(f, "\n");
    }
}

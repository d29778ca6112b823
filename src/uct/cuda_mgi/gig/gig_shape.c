/*
 * Server shapes: servers whose vertices, edges, capacities and adjacency
 * order are the same once vertex ids are numbered per server (the servers
 * of a cluster, the two halves of multi-rdma).  Edmonds-Karp on such a
 * server visits the same vertices in the same order as on its shape's
 * first server, so a pair's path set there is the first server's, vertex
 * ids translated (paper §4.3: plan per server type).  Every tie-break the
 * planner makes is compared, so a translated answer is the answer.
 */
#include "gig_int.h"

#include <stdlib.h>
#include <string.h>

/* The network vertex in a per-server description */
#define GIG_SHAPE_NET   (-2)

typedef struct {
    const gig_graph_t   *g;
    const gig_flownet_t *fn;
    gig_shapes_t        *sh;
    int                 *net_first; /* server -> its arcs in net_arcs */
    int                 *net_arcs;  /* the network's arcs, by server */
} gig_shape_ctx_t;

static int gig_shape_local(const gig_shape_ctx_t *c, int v)
{
    return (v == c->g->net) ? GIG_SHAPE_NET : c->sh->local[v];
}

/* An arc as the planner sees it: direction, far end, units, and the
 * link and GB/s of its edge (path classification reads them) */
static int gig_shape_arc_equal(const gig_shape_ctx_t *c, int a, int b)
{
    const gig_edge_t *ea = &c->g->e[c->g->out_edge[a >> 1]];
    const gig_edge_t *eb = &c->g->e[c->g->out_edge[b >> 1]];

    return ((a & 1) == (b & 1)) &&
           (gig_shape_local(c, c->fn->head[a]) ==
            gig_shape_local(c, c->fn->head[b])) &&
           (c->fn->cap[a] == c->fn->cap[b]) && (ea->link == eb->link) &&
           (ea->capacity == eb->capacity);
}

static uint64_t gig_shape_mix(uint64_t h, int64_t x)
{
    return (h ^ (uint64_t)x) * 1099511628211ull;   /* FNV-1a, 64 bits */
}

static uint64_t gig_shape_arc_hash(const gig_shape_ctx_t *c, uint64_t h,
                                   int a)
{
    const gig_edge_t *e = &c->g->e[c->g->out_edge[a >> 1]];

    h = gig_shape_mix(h, a & 1);
    h = gig_shape_mix(h, gig_shape_local(c, c->fn->head[a]));
    h = gig_shape_mix(h, c->fn->cap[a]);
    return gig_shape_mix(h, e->link);
}

static uint64_t gig_shape_hash(const gig_shape_ctx_t *c, int s)
{
    const gig_shapes_t *sh = c->sh;
    uint64_t h = 14695981039346656037ull;
    int i, v, k;

    for (i = sh->first[s]; i < sh->first[s + 1]; ++i) {
        v = sh->vert[i];
        h = gig_shape_mix(h, c->g->v[v].type);
        for (k = c->fn->start[v]; k < c->fn->start[v + 1]; ++k) {
            h = gig_shape_arc_hash(c, h, c->fn->arcs[k]);
        }
    }
    for (k = c->net_first[s]; k < c->net_first[s + 1]; ++k) {
        h = gig_shape_arc_hash(c, h, c->net_arcs[k]);
    }
    return h;
}

static int gig_shape_equal(const gig_shape_ctx_t *c, int r, int s)
{
    const gig_shapes_t *sh = c->sh;
    const gig_flownet_t *fn = c->fn;
    int n = sh->first[r + 1] - sh->first[r];
    int i, k, vr, vs, deg;

    if ((sh->first[s + 1] - sh->first[s] != n) ||
        (c->net_first[r + 1] - c->net_first[r] !=
         c->net_first[s + 1] - c->net_first[s])) {
        return 0;
    }
    for (i = 0; i < n; ++i) {
        vr  = sh->vert[sh->first[r] + i];
        vs  = sh->vert[sh->first[s] + i];
        deg = fn->start[vr + 1] - fn->start[vr];
        if ((c->g->v[vr].type != c->g->v[vs].type) ||
            (fn->start[vs + 1] - fn->start[vs] != deg)) {
            return 0;
        }
        for (k = 0; k < deg; ++k) {
            if (!gig_shape_arc_equal(c, fn->arcs[fn->start[vr] + k],
                                     fn->arcs[fn->start[vs] + k])) {
                return 0;
            }
        }
    }
    for (k = 0; k < c->net_first[r + 1] - c->net_first[r]; ++k) {
        if (!gig_shape_arc_equal(c, c->net_arcs[c->net_first[r] + k],
                                 c->net_arcs[c->net_first[s] + k])) {
            return 0;
        }
    }
    return 1;
}

ucs_status_t gig_shapes_init(gig_shapes_t *sh, const gig_graph_t *g,
                             const gig_flownet_t *fn)
{
    int ns = g->nservers, v, s, k, a, nreps = 0;
    gig_shape_ctx_t c = {g, fn, sh, NULL, NULL};
    uint64_t *hash    = NULL;
    int *reps         = NULL;
    int *fill         = NULL;

    memset(sh, 0, sizeof(*sh));
    sh->first   = calloc(ns + 2, sizeof(int));
    sh->vert    = malloc((g->nv + 1) * sizeof(int));
    sh->local   = malloc((g->nv + 1) * sizeof(int));
    sh->rep     = malloc((ns + 1) * sizeof(int));
    c.net_first = calloc(ns + 2, sizeof(int));
    c.net_arcs  = malloc((fn->na + 1) * sizeof(int));
    hash        = malloc((ns + 1) * sizeof(*hash));
    reps        = malloc((ns + 1) * sizeof(int));
    fill        = calloc(ns + 1, sizeof(int));
    if ((sh->first == NULL) || (sh->vert == NULL) || (sh->local == NULL) ||
        (sh->rep == NULL) || (c.net_first == NULL) || (c.net_arcs == NULL) ||
        (hash == NULL) || (reps == NULL) || (fill == NULL)) {
        goto err_nomem;
    }

    /* vertices per server in id order: the local numbering */
    for (v = 0; v < g->nv; ++v) {
        if (v != g->net) {
            sh->first[g->v[v].server + 1]++;
        }
    }
    for (s = 0; s < ns; ++s) {
        sh->first[s + 1] += sh->first[s];
    }
    for (v = 0; v < g->nv; ++v) {
        if (v != g->net) {
            s            = g->v[v].server;
            sh->local[v] = fill[s]++;
            sh->vert[sh->first[s] + sh->local[v]] = v;
        }
    }
    /* the network's arcs grouped by the server of their far end */
    if (g->net != GIG_NONE) {
        for (k = fn->start[g->net]; k < fn->start[g->net + 1]; ++k) {
            c.net_first[g->v[fn->head[fn->arcs[k]]].server + 1]++;
        }
        for (s = 0; s < ns; ++s) {
            c.net_first[s + 1] += c.net_first[s];
        }
        memset(fill, 0, ns * sizeof(int));
        for (k = fn->start[g->net]; k < fn->start[g->net + 1]; ++k) {
            a = fn->arcs[k];
            s = g->v[fn->head[a]].server;
            c.net_arcs[c.net_first[s] + fill[s]++] = a;
        }
    }

    for (s = 0; s < ns; ++s) {
        hash[s]    = gig_shape_hash(&c, s);
        sh->rep[s] = s;
        for (k = 0; k < nreps; ++k) {
            if ((hash[reps[k]] == hash[s]) && gig_shape_equal(&c, reps[k],
                                                              s)) {
                sh->rep[s] = reps[k];
                break;
            }
        }
        if (sh->rep[s] == s) {
            reps[nreps++] = s;
        }
    }
    sh->nshapes = nreps;
    free(c.net_first);
    free(c.net_arcs);
    free(hash);
    free(reps);
    free(fill);
    return UCS_OK;

err_nomem:
    free(c.net_first);
    free(c.net_arcs);
    free(hash);
    free(reps);
    free(fill);
    gig_shapes_cleanup(sh);
    return UCS_ERR_NO_MEMORY;
}

void gig_shapes_cleanup(gig_shapes_t *sh)
{
    free(sh->first);
    free(sh->vert);
    free(sh->local);
    free(sh->rep);
    memset(sh, 0, sizeof(*sh));
}

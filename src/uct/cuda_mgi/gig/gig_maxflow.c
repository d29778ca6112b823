/*
 * Edmonds-Karp max-flow (BFS augmenting paths) on a residual network, flow
 * decomposition into paths, and the plain multi-source multi-sink max-flow
 * over the whole graph (the completeness reference and benchmark baseline).
 */
#include "gig_int.h"

#include <ucs/debug/log_def.h>

#include <stdlib.h>
#include <string.h>

struct gig_arena_chunk {
    gig_arena_chunk_t *next;
    char              data[];
};

#define GIG_ARENA_CHUNK  (64 * 1024)

void *gig_arena_alloc(gig_arena_t *a, size_t size)
{
    gig_arena_chunk_t *c;
    size_t csize;
    void *p;

    size = (size + 15) & ~(size_t)15;
    if ((a->head == NULL) || (a->used + size > a->size)) {
        csize = (size > GIG_ARENA_CHUNK) ? size : GIG_ARENA_CHUNK;
        c     = malloc(sizeof(*c) + csize);
        if (c == NULL) {
            return NULL;
        }
        c->next = a->head;
        a->head = c;
        a->used = 0;
        a->size = csize;
    }
    p        = a->head->data + a->used;
    a->used += size;
    return p;
}

void gig_arena_cleanup(gig_arena_t *a)
{
    gig_arena_chunk_t *c;

    while (a->head != NULL) {
        c       = a->head;
        a->head = c->next;
        free(c);
    }
    a->used = a->size = 0;
}

ucs_status_t gig_flownet_init(gig_flownet_t *fn, const gig_graph_t *g,
                              int nextra_v, int nextra_a)
{
    int nv = g->nv + nextra_v;
    int na = 2 * (g->ne + nextra_a);
    int i, e;

    memset(fn, 0, sizeof(*fn));
    fn->start   = calloc(nv + 1, sizeof(int));
    fn->arcs    = malloc((na + 1) * sizeof(int));
    fn->tail    = malloc((na + 1) * sizeof(int));
    fn->head    = malloc((na + 1) * sizeof(int));
    fn->cap     = malloc((na + 1) * sizeof(int64_t));
    fn->flow    = calloc(na + 1, sizeof(int64_t));
    fn->touched = malloc((na + 1) * sizeof(int));
    fn->tmark   = calloc(na + 1, 1);
    fn->queue   = malloc((nv + 1) * sizeof(int));
    fn->parent  = malloc((nv + 1) * sizeof(int));
    fn->seen    = calloc(nv + 1, sizeof(int));
    if ((fn->start == NULL) || (fn->arcs == NULL) || (fn->tail == NULL) ||
        (fn->head == NULL) || (fn->cap == NULL) || (fn->flow == NULL) ||
        (fn->touched == NULL) || (fn->tmark == NULL) || (fn->queue == NULL) ||
        (fn->parent == NULL) || (fn->seen == NULL)) {
        gig_flownet_cleanup(fn);
        ucs_error("gig flow network of '%s': out of memory (%d arcs)",
                  g->origin, na);
        return UCS_ERR_NO_MEMORY;
    }
    fn->nv      = nv;
    fn->extra_v = GIG_NONE;
    /* graph edges in adjacency order, so BFS ties break like the graph */
    for (i = 0; i < g->nv; ++i) {
        for (e = g->out_start[i]; e < g->out_start[i + 1]; ++e) {
            gig_flownet_add_arc(fn, g->e[g->out_edge[e]].src,
                                g->e[g->out_edge[e]].dst,
                                gig_units(g->e[g->out_edge[e]].capacity));
        }
    }
    return UCS_OK;
}

void gig_flownet_cleanup(gig_flownet_t *fn)
{
    free(fn->start);
    free(fn->arcs);
    free(fn->tail);
    free(fn->head);
    free(fn->cap);
    free(fn->flow);
    free(fn->touched);
    free(fn->tmark);
    free(fn->queue);
    free(fn->parent);
    free(fn->seen);
    memset(fn, 0, sizeof(*fn));
}

void gig_flownet_add_arc(gig_flownet_t *fn, int u, int v, int64_t cap)
{
    int a = fn->na;

    fn->tail[a]     = u;
    fn->head[a]     = v;
    fn->cap[a]      = cap;
    fn->tail[a + 1] = v;
    fn->head[a + 1] = u;
    fn->cap[a + 1]  = 0;
    fn->na         += 2;
}

void gig_flownet_build_adj(gig_flownet_t *fn)
{
    int *fill;
    int a, v;

    memset(fn->start, 0, (fn->nv + 1) * sizeof(int));
    for (a = 0; a < fn->na; ++a) {
        fn->start[fn->tail[a] + 1]++;
    }
    for (v = 0; v < fn->nv; ++v) {
        fn->start[v + 1] += fn->start[v];
    }
    /* reuse parent[] as the fill counter; forward arcs first per vertex */
    fill = fn->parent;
    memset(fill, 0, fn->nv * sizeof(int));
    for (a = 0; a < fn->na; a += 2) {
        fn->arcs[fn->start[fn->tail[a]] + fill[fn->tail[a]]++] = a;
    }
    for (a = 1; a < fn->na; a += 2) {
        fn->arcs[fn->start[fn->tail[a]] + fill[fn->tail[a]]++] = a;
    }
}

void gig_flownet_reset(gig_flownet_t *fn)
{
    int i;

    for (i = 0; i < fn->ntouched; ++i) {
        fn->flow[fn->touched[i]]     = 0;
        fn->flow[fn->touched[i] ^ 1] = 0;
        fn->tmark[fn->touched[i]]    = 0;
    }
    fn->ntouched = 0;
}

static inline int gig_flownet_allowed(const gig_flownet_t *fn, int v)
{
    return (fn->vmask == NULL) || (fn->vmask[v] == fn->mask_val) ||
           (v == fn->extra_v);
}

static inline int gig_flownet_nic_ok(const gig_flownet_t *fn, int u, int v)
{
    switch (fn->nic_mode) {
    case GIG_NIC_BLOCK:
        return !fn->is_nic[v];
    case GIG_NIC_UP:
        return !fn->is_nic[u] || (v == fn->extra_v);
    default:
        return !fn->is_nic[v] || (u == fn->extra_v);
    }
}

/* BFS in the residual network (or, with on_flow, along positive flow) */
static int gig_flownet_bfs(gig_flownet_t *fn, int s, int t, int on_flow)
{
    int qh = 0, qt = 0;
    int u, v, i, a;
    int64_t r;

    if (++fn->epoch == 0x7fffffff) {
        memset(fn->seen, 0, fn->nv * sizeof(int));
        fn->epoch = 1;
    }
    fn->seen[s]    = fn->epoch;
    fn->parent[s]  = -1;
    fn->queue[qt++] = s;
    while (qh < qt) {
        u = fn->queue[qh++];
        for (i = fn->start[u]; i < fn->start[u + 1]; ++i) {
            a = fn->arcs[i];
            if (on_flow) {
                r = ((a & 1) == 0) ? fn->flow[a] : 0;
            } else {
                r = fn->cap[a] - fn->flow[a];
            }
            v = fn->head[a];
            if ((r <= 0) || (fn->seen[v] == fn->epoch) ||
                !gig_flownet_allowed(fn, v)) {
                continue;
            }
            if ((fn->is_nic != NULL) && ((a & 1) == 0) &&
                !gig_flownet_nic_ok(fn, u, v)) {
                continue;
            }
            fn->seen[v]   = fn->epoch;
            fn->parent[v] = a;
            if (v == t) {
                return 1;
            }
            fn->queue[qt++] = v;
        }
    }
    return 0;
}

int64_t gig_flownet_maxflow(gig_flownet_t *fn, int s, int t)
{
    int64_t total = 0, b;
    int v, a;

    if (s == t) {
        return 0;
    }
    while (gig_flownet_bfs(fn, s, t, 0)) {
        b = GIG_FLOW_INF;
        for (v = t; v != s; v = fn->tail[a]) {
            a = fn->parent[v];
            if (fn->cap[a] - fn->flow[a] < b) {
                b = fn->cap[a] - fn->flow[a];
            }
        }
        for (v = t; v != s; v = fn->tail[a]) {
            a = fn->parent[v];
            if (!fn->tmark[a & ~1]) {
                fn->tmark[a & ~1]           = 1;
                fn->touched[fn->ntouched++] = a & ~1;
            }
            fn->flow[a]     += b;
            fn->flow[a ^ 1] -= b;
        }
        total += b;
    }
    return total;
}

ucs_status_t gig_flownet_decompose(gig_flownet_t *fn, int s, int t,
                                   gig_rawpath_cb_t cb, void *arg)
{
    int vert[fn->nv + 1];
    ucs_status_t status;
    int64_t b;
    int i, n, v, a, j, tmp;

    /* antiparallel edges u->v, v->u both carrying flow: cancel the overlap
     * so no path goes there and back */
    for (i = 0; i < fn->ntouched; ++i) {
        a = fn->touched[i];
        if (fn->flow[a] <= 0) {
            continue;
        }
        for (j = fn->start[fn->head[a]]; j < fn->start[fn->head[a] + 1];
             ++j) {
            tmp = fn->arcs[j];
            if (((tmp & 1) == 0) && (fn->head[tmp] == fn->tail[a]) &&
                (fn->flow[tmp] > 0)) {
                b              = (fn->flow[tmp] < fn->flow[a]) ?
                                 fn->flow[tmp] : fn->flow[a];
                fn->flow[tmp] -= b;
                fn->flow[a]   -= b;
            }
        }
    }

    while (gig_flownet_bfs(fn, s, t, 1)) {
        b = GIG_FLOW_INF;
        n = 0;
        for (v = t; v != s; v = fn->tail[a]) {
            a = fn->parent[v];
            if (fn->flow[a] < b) {
                b = fn->flow[a];
            }
            vert[n++] = v;
        }
        vert[n++] = s;
        for (v = t; v != s; v = fn->tail[a]) {
            a            = fn->parent[v];
            fn->flow[a] -= b;
        }
        for (i = 0; i < n / 2; ++i) {
            tmp             = vert[i];
            vert[i]         = vert[n - 1 - i];
            vert[n - 1 - i] = tmp;
        }
        status = cb(arg, vert, n, b);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

ucs_status_t gig_maxflow_sets(const gig_graph_t *g, const int *srcs,
                              int nsrc, const int *dsts, int ndst,
                              double *flow_p)
{
    gig_flownet_t fn;
    ucs_status_t status;
    int ss, tt, i;

    if (!g->finalized) {
        ucs_error("gig graph '%s': max-flow before finalize", g->origin);
        return UCS_ERR_INVALID_PARAM;
    }
    for (i = 0; i < nsrc + ndst; ++i) {
        if (((i < nsrc) ? srcs[i] : dsts[i - nsrc]) < 0 ||
            ((i < nsrc) ? srcs[i] : dsts[i - nsrc]) >= g->nv) {
            ucs_error("gig graph '%s': max-flow vertex out of range",
                      g->origin);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    status = gig_flownet_init(&fn, g, 2, nsrc + ndst);
    if (status != UCS_OK) {
        return status;
    }
    ss = g->nv;
    tt = g->nv + 1;
    for (i = 0; i < nsrc; ++i) {
        gig_flownet_add_arc(&fn, ss, srcs[i], GIG_FLOW_INF);
    }
    for (i = 0; i < ndst; ++i) {
        gig_flownet_add_arc(&fn, dsts[i], tt, GIG_FLOW_INF);
    }
    gig_flownet_build_adj(&fn);
    *flow_p = gig_gbps(gig_flownet_maxflow(&fn, ss, tt));
    gig_flownet_cleanup(&fn);
    return UCS_OK;
}

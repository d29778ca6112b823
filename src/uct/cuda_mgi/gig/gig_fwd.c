/*
 * Forwarding tables (paper §4.4).  For every path P(s, d) of the channel and
 * every managed vertex v on it before d, the unmanaged vertices up to the
 * next managed vertex v' form a route, and v's table gets (d, (v', route)).
 * Entries merge by destination, then by next hop; identical routes merge
 * into one with the capacities added.  A table owns its memory: it may
 * outlive the plan.
 *
 * Built one destination at a time, in increasing order: every entry for d
 * is complete once the pairs (s, d) are added, so a small scratch (reused
 * for every d, in cache) collects them, and they are written out in the
 * final layout, each entry appended to its vertex's table.
 */
#include "gig_int.h"

#include <ucs/debug/log_def.h>

#include <stdlib.h>
#include <string.h>

/* The scratch of one destination: entries, next hops, routes */
typedef struct {
    int       v;
    int       first_next;   /* index into nxt, -1 */
    int       last_next;
    int       nnext;
} gig_fwd_sentry_t;

typedef struct {
    int       next;
    int       first_route;
    int       last_route;
    int       nroutes;
    int       link;         /* next hop after this one in its entry */
} gig_fwd_snext_t;

typedef struct {
    int       frag[2];      /* the route's vertices, as in gig_cut_seg_t */
    int       nvia[2];      /* their lengths */
    int       link;         /* route after this one in its next hop */
    double    capacity;
} gig_fwd_sroute_t;

struct gig_fwd {
    int               ntables;
    gig_fwd_table_t   *tables;   /* sorted by vertex; entries malloc'ed */
    gig_arena_t       arena;     /* next hops, routes and their vertices */
};

typedef struct {
    const gig_graph_t *g;
    const gig_frags_t *frags;
    gig_fwd_t         *fwd;
    int               dst;       /* destination being added */
    int               *slot;     /* vertex -> scratch entry, -1 */
    /* scratch of the destination */
    gig_fwd_sentry_t  *ent;
    gig_fwd_snext_t   *nxt;
    gig_fwd_sroute_t  *rte;
    int               nent, nnxt, nrte, nvia, cent, cnxt, crte;
    /* the tables so far, by vertex */
    gig_fwd_table_t   *tab;
    int               dsts_left; /* the current one and those after it */
} gig_fwd_build_t;

/* first size of the scratch arrays, then doubled */
#define GIG_FWD_INIT_ELEMS  256

static int gig_fwd_grow(void **arr, int *cap, size_t elem)
{
    int ncap = (*cap == 0) ? GIG_FWD_INIT_ELEMS : 2 * *cap;
    void *p  = realloc(*arr, (size_t)ncap * elem);

    if (p == NULL) {
        return 0;
    }
    *arr = p;
    *cap = ncap;
    return 1;
}

#define GIG_FWD_ROOM(_b, _arr, _n, _c) \
    (((_b)->_n < (_b)->_c) || \
     gig_fwd_grow((void**)&(_b)->_arr, &(_b)->_c, sizeof(*(_b)->_arr)))

/* v's entry for the current destination gets capacity on the route to next
 * over the fragments frag0, frag1: merged into an identical route, else a
 * new route (and next hop) after the existing ones */
static inline ucs_status_t gig_fwd_add(gig_fwd_build_t *b, int v, int next,
                                       int frag0, int frag1, double capacity)
{
    gig_fwd_sentry_t *e;
    gig_fwd_snext_t *n;
    gig_fwd_sroute_t *r;
    int ei, ni, ri;

    ei = b->slot[v];
    if (ei < 0) {
        if (!GIG_FWD_ROOM(b, ent, nent, cent)) {
            return UCS_ERR_NO_MEMORY;
        }
        ei            = b->nent++;
        e             = &b->ent[ei];
        e->v          = v;
        e->first_next = -1;
        e->last_next  = -1;
        e->nnext      = 0;
        b->slot[v]    = ei;
    }

    for (ni = b->ent[ei].first_next; ni >= 0; ni = b->nxt[ni].link) {
        if (b->nxt[ni].next == next) {
            break;
        }
    }
    if (ni < 0) {
        if (!GIG_FWD_ROOM(b, nxt, nnxt, cnxt)) {
            return UCS_ERR_NO_MEMORY;
        }
        ni             = b->nnxt++;
        n              = &b->nxt[ni];
        n->next        = next;
        n->first_route = -1;
        n->last_route  = -1;
        n->nroutes     = 0;
        n->link        = -1;
        e              = &b->ent[ei];
        /* next hops in insertion order */
        if (e->first_next < 0) {
            e->first_next = ni;
        } else {
            b->nxt[e->last_next].link = ni;
        }
        e->last_next = ni;
        e->nnext++;
    }

    for (ri = b->nxt[ni].first_route; ri >= 0; ri = b->rte[ri].link) {
        r = &b->rte[ri];
        if ((r->frag[0] == frag0) && (r->frag[1] == frag1)) {
            r->capacity += capacity;
            return UCS_OK;
        }
    }
    if (!GIG_FWD_ROOM(b, rte, nrte, crte)) {
        return UCS_ERR_NO_MEMORY;
    }
    ri          = b->nrte++;
    r           = &b->rte[ri];
    r->frag[0]  = frag0;
    r->frag[1]  = frag1;
    r->nvia[0]  = gig_frags_len(b->frags, frag0);
    r->nvia[1]  = gig_frags_len(b->frags, frag1);
    r->capacity = capacity;
    r->link     = -1;
    b->nvia    += r->nvia[0] + r->nvia[1];
    n           = &b->nxt[ni];
    if (n->first_route < 0) {
        n->first_route = ri;
    } else {
        b->rte[n->last_route].link = ri;
    }
    n->last_route = ri;
    n->nroutes++;
    return UCS_OK;
}

static ucs_status_t gig_fwd_add_segs(gig_fwd_build_t *b,
                                     const gig_cut_path_t *cp,
                                     double capacity)
{
    ucs_status_t status;
    int i;

    for (i = 0; i < cp->nseg; ++i) {
        status = gig_fwd_add(b, cp->seg[i].v, cp->seg[i].next,
                             cp->seg[i].frag[0], cp->seg[i].frag[1],
                             capacity);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

/* A pair on two servers: the pairing of s -> net with net -> d paths that
 * gig_plan_paths() would concatenate, added from the halves' cuts without
 * materializing (and caching) the pair's path set */
static ucs_status_t gig_fwd_add_split(gig_fwd_build_t *b,
                                      const gig_pathset_t *up,
                                      const gig_cut_t *ucut,
                                      const gig_pathset_t *down,
                                      const gig_cut_t *dcut)
{
    const gig_cut_path_t *cu, *cd;
    ucs_status_t status;
    double r1, r2, m;
    int i = 0, j = 0;

    r1 = (up->npaths > 0) ? up->paths[0].capacity : 0;
    r2 = (down->npaths > 0) ? down->paths[0].capacity : 0;
    while ((i < up->npaths) && (j < down->npaths)) {
        m      = (r1 < r2) ? r1 : r2;
        cu     = &ucut->path[i];
        cd     = &dcut->path[j];
        status = gig_fwd_add_segs(b, cu, m);
        if (status != UCS_OK) {
            return status;
        }
        /* the joining route: the s -> net fragment ends at the network */
        status = gig_fwd_add(b, cu->end, cd->end, cu->frag, cd->frag, m);
        if (status != UCS_OK) {
            return status;
        }
        status = gig_fwd_add_segs(b, cd, m);
        if (status != UCS_OK) {
            return status;
        }
        r1 -= m;
        r2 -= m;
        /* capacities are whole MB/s: compare at half a unit, as
         * gig_plan_paths() does */
        if ((r1 < 0.5 / GIG_UNITS_PER_GBPS) && (++i < up->npaths)) {
            r1 = up->paths[i].capacity;
        }
        if ((r2 < 0.5 / GIG_UNITS_PER_GBPS) && (++j < down->npaths)) {
            r2 = down->paths[j].capacity;
        }
    }
    return UCS_OK;
}

static ucs_status_t gig_fwd_add_pathset(gig_fwd_build_t *b, gig_plan_t *plan,
                                        const gig_pathset_t *ps)
{
    const gig_cut_t *cut;
    ucs_status_t status;
    int k;

    status = gig_plan_cut(plan, ps, GIG_CUT_WHOLE, &cut);
    for (k = 0; (status == UCS_OK) && (k < ps->npaths); ++k) {
        status = gig_fwd_add_segs(b, &cut->path[k], ps->paths[k].capacity);
    }
    return status;
}

static int *gig_fwd_copy_frag(const gig_frags_t *f, int id, int n, int *dst)
{
    const int *src;
    int i;

    if (n > 0) {
        src = gig_frags_seq(f, id);
        for (i = 0; i < n; ++i) {
            dst[i] = src[i];
        }
    }
    return dst + n;
}

/* Room for one more entry in v's table: on its first entry, room for the
 * rest of the destinations (a table has one entry per destination at
 * most), trimmed at the end */
static int gig_fwd_table_room(gig_fwd_build_t *b, int v)
{
    gig_fwd_table_t *t = &b->tab[v];

    if (t->entries == NULL) {
        t->entries = malloc(b->dsts_left * sizeof(*t->entries));
    }
    return t->entries != NULL;
}

/* The destination's entries, complete now, in the final layout; the
 * scratch is emptied for the next destination */
static ucs_status_t gig_fwd_flush(gig_fwd_build_t *b)
{
    const gig_fwd_sentry_t *se;
    const gig_fwd_snext_t *sn;
    const gig_fwd_sroute_t *sr;
    gig_fwd_entry_t *e;
    gig_fwd_next_t *nexts;
    gig_fwd_route_t *routes;
    int *vbuf;
    int i, ni, ri;

    if (b->nent == 0) {
        return UCS_OK;
    }
    nexts  = gig_arena_alloc(&b->fwd->arena, b->nnxt * sizeof(*nexts));
    routes = gig_arena_alloc(&b->fwd->arena, b->nrte * sizeof(*routes));
    vbuf   = gig_arena_alloc(&b->fwd->arena, (b->nvia + 1) * sizeof(int));
    if ((nexts == NULL) || (routes == NULL) || (vbuf == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i < b->nent; ++i) {
        se = &b->ent[i];
        if (!gig_fwd_table_room(b, se->v)) {
            return UCS_ERR_NO_MEMORY;
        }
        e              = &b->tab[se->v].entries[b->tab[se->v].nentries++];
        e->dst         = b->dst;
        e->nnext       = se->nnext;
        e->next        = nexts;
        b->slot[se->v] = -1;
        for (ni = se->first_next; ni >= 0; ni = sn->link) {
            sn              = &b->nxt[ni];
            nexts->next     = sn->next;
            nexts->nroutes  = sn->nroutes;
            nexts->routes   = routes;
            for (ri = sn->first_route; ri >= 0; ri = sr->link) {
                sr               = &b->rte[ri];
                routes->via      = vbuf;
                routes->nvia     = sr->nvia[0] + sr->nvia[1];
                routes->capacity = sr->capacity;
                vbuf = gig_fwd_copy_frag(b->frags, sr->frag[0], sr->nvia[0],
                                         vbuf);
                vbuf = gig_fwd_copy_frag(b->frags, sr->frag[1], sr->nvia[1],
                                         vbuf);
                ++routes;
            }
            ++nexts;
        }
    }
    b->nent = b->nnxt = b->nrte = b->nvia = 0;
    return UCS_OK;
}

/* The tables of the vertices that have entries, by vertex */
static ucs_status_t gig_fwd_finish(gig_fwd_build_t *b)
{
    gig_fwd_t *fwd = b->fwd;
    gig_fwd_entry_t *e;
    int v, n = 0;

    for (v = 0; v < b->g->nv; ++v) {
        n += (b->tab[v].nentries > 0);
    }
    fwd->tables = gig_arena_alloc(&fwd->arena,
                                  (n + 1) * sizeof(*fwd->tables));
    if (fwd->tables == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    for (v = 0; v < b->g->nv; ++v) {
        if (b->tab[v].nentries > 0) {
            /* trimmed in place */
            e = realloc(b->tab[v].entries,
                        b->tab[v].nentries * sizeof(*e));
            if (e != NULL) {
                b->tab[v].entries = e;
            }
            fwd->tables[fwd->ntables]        = b->tab[v];
            fwd->tables[fwd->ntables].vertex = v;
            fwd->ntables++;
            b->tab[v].entries = NULL;   /* the fwd's now */
        }
    }
    return UCS_OK;
}

static int gig_fwd_cmp_int(const void *a, const void *b)
{
    return *(const int*)a - *(const int*)b;
}

/* Sorted copy without duplicates: a vertex listed twice counts once */
static int *gig_fwd_unique(const int *v, int n, int *n_p)
{
    int *u = malloc((n + 1) * sizeof(int));
    int i, k = 0;

    if (u == NULL) {
        return NULL;
    }
    if (n > 0) {               /* v may be NULL for an empty list */
        memcpy(u, v, n * sizeof(int));
        qsort(u, n, sizeof(int), gig_fwd_cmp_int);
    }
    for (i = 0; i < n; ++i) {
        if ((k == 0) || (u[k - 1] != u[i])) {
            u[k++] = u[i];
        }
    }
    *n_p = k;
    return u;
}

static void gig_fwd_build_cleanup(gig_fwd_build_t *b)
{
    int v;

    free(b->ent);
    free(b->nxt);
    free(b->rte);
    free(b->slot);
    if (b->tab != NULL) {
        for (v = 0; v < b->g->nv; ++v) {
            free(b->tab[v].entries);
        }
    }
    free(b->tab);
}

/* The tables of every (s, d) pair toward the current destination d: pairs
 * through the network from the halves' cuts, others from their path set */
static ucs_status_t gig_fwd_add_dst(gig_fwd_build_t *b, gig_plan_t *plan,
                                    const int *srcs, int nsrc,
                                    const gig_pathset_t **ups,
                                    const gig_cut_t **ucuts)
{
    const gig_graph_t *g     = b->g;
    const gig_pathset_t *down = NULL, *ps;
    const gig_cut_t *dcut     = NULL;
    int d                     = b->dst;
    int split                 = gig_plan_splits(plan) && (d != g->net);
    ucs_status_t status;
    int i;

    for (i = 0; i < nsrc; ++i) {
        if (srcs[i] == d) {
            continue;   /* loopback never leaves the endpoint */
        }
        /* two servers: through the network, unless planned as a pair */
        if (split && (srcs[i] != g->net) &&
            (g->v[srcs[i]].server != g->v[d].server) &&
            ((gig_plan_ncross(plan) == 0) ||
             (gig_plan_cached(plan, srcs[i], d) == NULL))) {
            if (ups[i] == NULL) {
                status = gig_plan_paths(plan, srcs[i], g->net, &ups[i]);
                if (status == UCS_OK) {
                    status = gig_plan_cut(plan, ups[i], GIG_CUT_HALF,
                                          &ucuts[i]);
                }
                if (status != UCS_OK) {
                    return status;
                }
            }
            if (down == NULL) {
                status = gig_plan_paths(plan, g->net, d, &down);
                if (status == UCS_OK) {
                    status = gig_plan_cut(plan, down, GIG_CUT_HALF, &dcut);
                }
                if (status != UCS_OK) {
                    return status;
                }
            }
            status = gig_fwd_add_split(b, ups[i], ucuts[i], down, dcut);
        } else {
            status = gig_plan_paths(plan, srcs[i], d, &ps);
            if (status == UCS_OK) {
                status = gig_fwd_add_pathset(b, plan, ps);
            }
        }
        if (status != UCS_OK) {
            return status;
        }
    }
    return gig_fwd_flush(b);
}

ucs_status_t gig_fwd_create(gig_plan_t *plan, const int *srcs_in,
                            int nsrc_in, const int *dsts_in, int ndst_in,
                            gig_fwd_t **fwd_p)
{
    const gig_graph_t *g = gig_plan_graph(plan);
    const gig_pathset_t **ups = NULL;
    const gig_cut_t **ucuts   = NULL;
    int *srcs = NULL, *dsts = NULL;
    gig_fwd_build_t b;
    ucs_status_t status;
    int i, j, k, nsrc = 0, ndst = 0;

    memset(&b, 0, sizeof(b));
    for (i = 0; i < nsrc_in + ndst_in; ++i) {
        k = (i < nsrc_in) ? srcs_in[i] : dsts_in[i - nsrc_in];
        if ((k < 0) || (k >= g->nv)) {
            ucs_error("gig channel on '%s': vertex %d out of range (%d "
                      "vertices)", g->origin, k, g->nv);
            return UCS_ERR_INVALID_PARAM;
        }
    }
    srcs    = gig_fwd_unique(srcs_in, nsrc_in, &nsrc);
    dsts    = gig_fwd_unique(dsts_in, ndst_in, &ndst);
    ups     = calloc(nsrc + 1, sizeof(*ups));
    ucuts   = calloc(nsrc + 1, sizeof(*ucuts));
    b.g     = g;
    b.frags = gig_plan_frags(plan);
    b.slot    = malloc((g->nv + 1) * sizeof(int));
    b.tab     = calloc(g->nv + 1, sizeof(*b.tab));
    b.fwd     = calloc(1, sizeof(*b.fwd));
    if ((b.fwd == NULL) || (b.slot == NULL) || (b.tab == NULL) ||
        (srcs == NULL) ||
        (dsts == NULL) || (ups == NULL) || (ucuts == NULL)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
    memset(b.slot, 0xff, (g->nv + 1) * sizeof(int));
    for (j = 0; j < ndst; ++j) {
        b.dst       = dsts[j];
        b.dsts_left = ndst - j;
        status      = gig_fwd_add_dst(&b, plan, srcs, nsrc, ups, ucuts);
        if (status != UCS_OK) {
            goto err_free;
        }
    }
    status = gig_fwd_finish(&b);
    if (status != UCS_OK) {
        goto err_free;
    }
    *fwd_p = b.fwd;
    b.fwd  = NULL;

err_free:
    gig_fwd_destroy(b.fwd);
    gig_fwd_build_cleanup(&b);
    free(ups);
    free(ucuts);
    free(srcs);
    free(dsts);
    if (status != UCS_OK) {
        ucs_error("gig channel on '%s' (%d sources, %d destinations): "
                  "forwarding tables failed: %s", g->origin, nsrc_in,
                  ndst_in, ucs_status_string(status));
    }
    return status;
}

void gig_fwd_destroy(gig_fwd_t *fwd)
{
    int i;

    if (fwd == NULL) {
        return;
    }
    for (i = 0; i < fwd->ntables; ++i) {
        free(fwd->tables[i].entries);
    }
    gig_arena_cleanup(&fwd->arena);
    free(fwd);
}

int gig_fwd_ntables(const gig_fwd_t *fwd)
{
    return fwd->ntables;
}

const gig_fwd_table_t *gig_fwd_table(const gig_fwd_t *fwd, int i)
{
    return ((i >= 0) && (i < fwd->ntables)) ? &fwd->tables[i] : NULL;
}

const gig_fwd_table_t *gig_fwd_find(const gig_fwd_t *fwd, int vertex)
{
    int lo = 0, hi = fwd->ntables - 1, mid;

    while (lo <= hi) {
        mid = (lo + hi) / 2;
        if (fwd->tables[mid].vertex == vertex) {
            return &fwd->tables[mid];
        }
        if (fwd->tables[mid].vertex < vertex) {
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return NULL;
}

const gig_fwd_entry_t *gig_fwd_lookup(const gig_fwd_t *fwd, int vertex,
                                      int dst)
{
    const gig_fwd_table_t *t = gig_fwd_find(fwd, vertex);
    int lo, hi, mid;

    if (t == NULL) {
        return NULL;
    }
    lo = 0;
    hi = t->nentries - 1;
    while (lo <= hi) {
        mid = (lo + hi) / 2;
        if (t->entries[mid].dst == dst) {
            return &t->entries[mid];
        }
        if (t->entries[mid].dst < dst) {
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return NULL;
}

void gig_fwd_print(const gig_graph_t *g, const gig_fwd_t *fwd, FILE *f)
{
    const gig_fwd_table_t *t;
    const gig_fwd_entry_t *e;
    const gig_fwd_route_t *r;
    int i, j, n, k, m;

    for (i = 0; i < fwd->ntables; ++i) {
        t = &fwd->tables[i];
        fprintf(f, "forwarding table of %s (%d entries)\n",
                g->v[t->vertex].name, t->nentries);
        for (j = 0; j < t->nentries; ++j) {
            e = &t->entries[j];
            fprintf(f, "  %-12s:", g->v[e->dst].name);
            for (n = 0; n < e->nnext; ++n) {
                fprintf(f, " (%s, {", g->v[e->next[n].next].name);
                for (k = 0; k < e->next[n].nroutes; ++k) {
                    r = &e->next[n].routes[k];
                    fprintf(f, "%s[", (k == 0) ? "" : ", ");
                    for (m = 0; m < r->nvia; ++m) {
                        fprintf(f, "%s%s", (m == 0) ? "" : ">",
                                g->v[r->via[m]].name);
                    }
                    fprintf(f, "] %.1f", r->capacity);
                }
                fprintf(f, "})");
            }
            fprintf(f, "\n");
        }
    }
}

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
 *
 * Where a plan translates path sets between servers of one shape, the
 * sources of such servers, with the same sources in the channel, form a
 * class: toward d, the entries on one server of the class are those of
 * any other, vertex ids translated (the same path sets, cut alike, merged
 * in the same order).  They are merged on one server only, and written out
 * on every other with ids translated, which is most of an all-to-all
 * channel across a cluster.
 *
 * Those translations are written out when a table is first read
 * (gig_fwd_table, gig_fwd_find, gig_fwd_lookup), not at create: a rank
 * reads the tables of its own endpoints' vertices, a few of the channel's
 * thousands, and writing them all would cost most of the create (their
 * bytes, fresh memory).  The class's coded entries toward each destination
 * are kept instead, a few per destination.
 */
#include "gig_int.h"

#include <ucs/debug/log_def.h>

#include <pthread.h>
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

/* Capacity added to a route of the scratch */
typedef struct {
    int       route;
    double    capacity;
} gig_fwd_sadd_t;

/* Entries toward one destination being merged: by vertex, then next hop,
 * then route, each list in insertion order */
typedef struct {
    int               *slot;     /* vertex -> entry, -1 */
    gig_fwd_sentry_t  *ent;
    gig_fwd_snext_t   *nxt;
    gig_fwd_sroute_t  *rte;
    int               nent, nnxt, nrte, nvia, cent, cnxt, crte;
    /* while rec is set, every addition to a route, in order */
    int               rec;
    gig_fwd_sadd_t    *log;
    int               nlog, clog;
} gig_fwd_scratch_t;

/* A class's merged entries in the final layout, vertices coded: a vertex
 * of the server they were merged on as -1 - its index in the server (so
 * any server of the class can decode it), any other as itself */
typedef struct {
    int       *ent;      /* vertex, number of next hops: two ints each */
    int       *nxt;      /* next hop, number of routes: two ints each */
    gig_fwd_route_t *rte;  /* number of vertices and capacity */
    int       *via;
    int       nent, nnxt, nrte, nvia;
    int       cent, cnxt, crte, cvia;
} gig_fwd_tmpl_t;

/* An entry of a kept template: where its next hops, routes and vertices
 * start, and how many */
typedef struct {
    int               nnext, ni, ri, vi, nroutes, nvia;
} gig_fwd_tent_t;

/* A class's entries toward one destination, coded as in gig_fwd_tmpl_t:
 * those of each server of the class but the destination's */
typedef struct {
    int               dst;
    int               dserver;
    const int         *at;       /* index in a server -> entry, -1 */
    const gig_fwd_tent_t *ent;
    const int         *nxt;
    const gig_fwd_route_t *rte;  /* number of vertices and capacity */
    const int         *via;
} gig_fwd_tref_t;

typedef struct {
    gig_fwd_tref_t    *tref;     /* by destination */
    int               ntref, ctref;
} gig_fwd_class_t;

/* A table until it is first read: the entries written at create and the
 * class templates that hold the rest */
typedef struct {
    int               cls;       /* class of its server, -1: none */
    int               server;
    int               local;     /* its index in its server */
    int               nsc;       /* entries written at create, by dst */
    gig_fwd_entry_t   *sc;
    int               ready;     /* entries complete */
} gig_fwd_lazy_t;

struct gig_fwd {
    int               ntables;
    gig_fwd_table_t   *tables;   /* sorted by vertex; entries malloc'ed */
    gig_fwd_lazy_t    *lazy;     /* [ntables] */
    gig_arena_t       arena;     /* next hops, routes, their vertices,
                                    templates */
    int               nclasses;
    gig_fwd_class_t   *cls;
    const int         *sfirst;   /* the vertices of each server by index */
    const int         *svert;
    pthread_mutex_t   lock;      /* a table's first read */
};

typedef struct {
    const gig_graph_t *g;
    const gig_frags_t *frags;
    gig_fwd_t         *fwd;
    int               dst;       /* destination being added */
    gig_fwd_scratch_t sc;        /* its entries but those of classes */
    gig_fwd_scratch_t csc;       /* a class's, on the server merged on */
    gig_fwd_tmpl_t    tmpl;      /* the same, coded */
    /* the tables so far, by vertex */
    gig_fwd_table_t   *tab;
    int               dsts_left; /* the current one and those after it */
    /* classes of the sources' servers; sh NULL if there are none */
    const gig_shapes_t *sh;
    int               nclasses;
    int               *sclass;   /* server -> class, -1 */
    int               *ccnt;     /* class, index in a server -> entries of
                                    the class's templates there */
    int               *cbase;    /* class -> its first in ccnt */
    int               *csub;     /* vertex -> entries of its class's
                                    templates toward its own server */
    int               *cfirst;   /* class -> its servers in cserv */
    int               *cserv;    /* by class, in increasing order */
    int               *sfirst;   /* server -> its sources in ssrc */
    int               *ssrc;     /* indices into the sources, by server */
    /* a source's additions on the destination's server are those of any
     * source at the same index of a server of its class: key of each
     * source, and where the first of a key logged them (-1: none yet) */
    int               *skey;
    int               nkeys;
    int               *kfirst, *kend;
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

/* Room for _k more elements of _arr, each _per of its items */
#define GIG_FWD_ROOM_N(_t, _arr, _n, _c, _k, _per) \
    (((_t)->_n + (_k) <= (_t)->_c) || \
     gig_fwd_grow_to((void**)&(_t)->_arr, &(_t)->_c, (_t)->_n + (_k), \
                     (_per) * sizeof(*(_t)->_arr)))

static int gig_fwd_grow_to(void **arr, int *cap, int need, size_t elem)
{
    while (*cap < need) {
        if (!gig_fwd_grow(arr, cap, elem)) {
            return 0;
        }
    }
    return 1;
}

static inline ucs_status_t gig_fwd_log(gig_fwd_scratch_t *sc, int ri,
                                       double capacity)
{
    if (sc->rec) {
        if (!GIG_FWD_ROOM(sc, log, nlog, clog)) {
            return UCS_ERR_NO_MEMORY;
        }
        sc->log[sc->nlog].route      = ri;
        sc->log[sc->nlog++].capacity = capacity;
    }
    return UCS_OK;
}

/* v's entry for the current destination gets capacity on the route to next
 * over the fragments frag0, frag1: merged into an identical route, else a
 * new route (and next hop) after the existing ones */
static inline ucs_status_t gig_fwd_add(gig_fwd_scratch_t *sc,
                                       const gig_frags_t *frags, int v,
                                       int next, int frag0, int frag1,
                                       double capacity)
{
    gig_fwd_sentry_t *e;
    gig_fwd_snext_t *n;
    gig_fwd_sroute_t *r;
    int ei, ni, ri;

    ei = sc->slot[v];
    if (ei < 0) {
        if (!GIG_FWD_ROOM(sc, ent, nent, cent)) {
            return UCS_ERR_NO_MEMORY;
        }
        ei            = sc->nent++;
        e             = &sc->ent[ei];
        e->v          = v;
        e->first_next = -1;
        e->last_next  = -1;
        e->nnext      = 0;
        sc->slot[v]   = ei;
    }

    for (ni = sc->ent[ei].first_next; ni >= 0; ni = sc->nxt[ni].link) {
        if (sc->nxt[ni].next == next) {
            break;
        }
    }
    if (ni < 0) {
        if (!GIG_FWD_ROOM(sc, nxt, nnxt, cnxt)) {
            return UCS_ERR_NO_MEMORY;
        }
        ni             = sc->nnxt++;
        n              = &sc->nxt[ni];
        n->next        = next;
        n->first_route = -1;
        n->last_route  = -1;
        n->nroutes     = 0;
        n->link        = -1;
        e              = &sc->ent[ei];
        /* next hops in insertion order */
        if (e->first_next < 0) {
            e->first_next = ni;
        } else {
            sc->nxt[e->last_next].link = ni;
        }
        e->last_next = ni;
        e->nnext++;
    }

    for (ri = sc->nxt[ni].first_route; ri >= 0; ri = sc->rte[ri].link) {
        r = &sc->rte[ri];
        if ((r->frag[0] == frag0) && (r->frag[1] == frag1)) {
            r->capacity += capacity;
            return gig_fwd_log(sc, ri, capacity);
        }
    }
    if (!GIG_FWD_ROOM(sc, rte, nrte, crte)) {
        return UCS_ERR_NO_MEMORY;
    }
    ri          = sc->nrte++;
    r           = &sc->rte[ri];
    r->frag[0]  = frag0;
    r->frag[1]  = frag1;
    r->nvia[0]  = gig_frags_len(frags, frag0);
    r->nvia[1]  = gig_frags_len(frags, frag1);
    r->capacity = capacity;
    r->link     = -1;
    sc->nvia   += r->nvia[0] + r->nvia[1];
    n           = &sc->nxt[ni];
    if (n->first_route < 0) {
        n->first_route = ri;
    } else {
        sc->rte[n->last_route].link = ri;
    }
    n->last_route = ri;
    n->nroutes++;
    return gig_fwd_log(sc, ri, capacity);
}

static ucs_status_t gig_fwd_add_segs(gig_fwd_build_t *b,
                                     gig_fwd_scratch_t *sc,
                                     const gig_cut_path_t *cp,
                                     double capacity)
{
    ucs_status_t status;
    int i;

    for (i = 0; i < cp->nseg; ++i) {
        status = gig_fwd_add(sc, b->frags, cp->seg[i].v, cp->seg[i].next,
                             cp->seg[i].frag[0], cp->seg[i].frag[1],
                             capacity);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

/* Which entries of a pair on two servers gig_fwd_add_split() adds */
enum {
    GIG_FWD_UP   = 1,   /* on the source's server (joining route too) */
    GIG_FWD_DOWN = 2    /* on the destination's */
};

/* A pair on two servers: the pairing of s -> net with net -> d paths that
 * gig_plan_paths() would concatenate, added from the halves' cuts without
 * materializing (and caching) the pair's path set */
static ucs_status_t gig_fwd_add_split(gig_fwd_build_t *b,
                                      gig_fwd_scratch_t *sc, unsigned parts,
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
        if (parts & GIG_FWD_UP) {
            status = gig_fwd_add_segs(b, sc, cu, m);
            if (status != UCS_OK) {
                return status;
            }
            /* the joining route: the s -> net fragment ends at the
             * network */
            status = gig_fwd_add(sc, b->frags, cu->end, cd->end, cu->frag,
                                 cd->frag, m);
            if (status != UCS_OK) {
                return status;
            }
        }
        if (parts & GIG_FWD_DOWN) {
            status = gig_fwd_add_segs(b, sc, cd, m);
            if (status != UCS_OK) {
                return status;
            }
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
        status = gig_fwd_add_segs(b, &b->sc, &cut->path[k],
                                  ps->paths[k].capacity);
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
    gig_fwd_scratch_t *sc = &b->sc;
    const gig_fwd_sentry_t *se;
    const gig_fwd_snext_t *sn;
    const gig_fwd_sroute_t *sr;
    gig_fwd_entry_t *e;
    gig_fwd_next_t *nexts;
    gig_fwd_route_t *routes;
    int *vbuf;
    int i, ni, ri;

    if (sc->nent == 0) {
        return UCS_OK;
    }
    nexts  = gig_arena_alloc(&b->fwd->arena, sc->nnxt * sizeof(*nexts));
    routes = gig_arena_alloc(&b->fwd->arena, sc->nrte * sizeof(*routes));
    vbuf   = gig_arena_alloc(&b->fwd->arena, (sc->nvia + 1) * sizeof(int));
    if ((nexts == NULL) || (routes == NULL) || (vbuf == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i < sc->nent; ++i) {
        se = &sc->ent[i];
        if (!gig_fwd_table_room(b, se->v)) {
            return UCS_ERR_NO_MEMORY;
        }
        e              = &b->tab[se->v].entries[b->tab[se->v].nentries++];
        e->dst         = b->dst;
        e->nnext       = se->nnext;
        e->next        = nexts;
        sc->slot[se->v] = -1;
        for (ni = se->first_next; ni >= 0; ni = sn->link) {
            sn              = &sc->nxt[ni];
            nexts->next     = sn->next;
            nexts->nroutes  = sn->nroutes;
            nexts->routes   = routes;
            for (ri = sn->first_route; ri >= 0; ri = sr->link) {
                sr               = &sc->rte[ri];
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
    sc->nent = sc->nnxt = sc->nrte = sc->nvia = 0;
    return UCS_OK;
}

/* v as coded in a template merged on server t */
static inline int gig_fwd_tmpl_code(const gig_fwd_build_t *b, int t, int v)
{
    return (b->g->v[v].server == t) ? -1 - b->sh->local[v] : v;
}

/* The class's entries merged on server t (b->csc) into b->tmpl, coded;
 * the scratch is emptied */
static ucs_status_t gig_fwd_tmpl_make(gig_fwd_build_t *b, int t)
{
    gig_fwd_scratch_t *sc = &b->csc;
    gig_fwd_tmpl_t *tp    = &b->tmpl;
    const gig_fwd_sentry_t *se;
    const gig_fwd_snext_t *sn;
    const gig_fwd_sroute_t *sr;
    const int *seq;
    int i, k, f, ni, ri;

    tp->nent = tp->nnxt = tp->nrte = tp->nvia = 0;
    if (!GIG_FWD_ROOM_N(tp, ent, nent, cent, sc->nent, 2) ||
        !GIG_FWD_ROOM_N(tp, nxt, nnxt, cnxt, sc->nnxt, 2) ||
        !GIG_FWD_ROOM_N(tp, rte, nrte, crte, sc->nrte, 1) ||
        !GIG_FWD_ROOM_N(tp, via, nvia, cvia, sc->nvia, 1)) {
        return UCS_ERR_NO_MEMORY;
    }
    for (i = 0; i < sc->nent; ++i) {
        se                       = &sc->ent[i];
        tp->ent[2 * tp->nent]     = gig_fwd_tmpl_code(b, t, se->v);
        tp->ent[2 * tp->nent + 1] = se->nnext;
        tp->nent++;
        sc->slot[se->v]           = -1;
        for (ni = se->first_next; ni >= 0; ni = sn->link) {
            sn                        = &sc->nxt[ni];
            tp->nxt[2 * tp->nnxt]     = gig_fwd_tmpl_code(b, t, sn->next);
            tp->nxt[2 * tp->nnxt + 1] = sn->nroutes;
            tp->nnxt++;
            for (ri = sn->first_route; ri >= 0; ri = sr->link) {
                sr                        = &sc->rte[ri];
                tp->rte[tp->nrte].nvia     = sr->nvia[0] + sr->nvia[1];
                tp->rte[tp->nrte].capacity = sr->capacity;
                tp->nrte++;
                for (f = 0; f < 2; ++f) {
                    seq = (sr->nvia[f] > 0) ?
                          gig_frags_seq(b->frags, sr->frag[f]) : NULL;
                    for (k = 0; k < sr->nvia[f]; ++k) {
                        tp->via[tp->nvia++] = gig_fwd_tmpl_code(b, t,
                                                                seq[k]);
                    }
                }
            }
        }
    }
    sc->nent = sc->nnxt = sc->nrte = sc->nvia = 0;
    return UCS_OK;
}

/* A coded vertex on the server whose vertices by index are sv */
#define GIG_FWD_DECODE(_sv, _c)  (((_c) < 0) ? (_sv)[-1 - (_c)] : (_c))

/* The class's template toward the current destination (b->tmpl), kept
 * for its servers' tables, and their entries counted.  Its entries lie on
 * the server it was merged on (managed vertices of s -> net halves), so
 * each is coded by its index in a server. */
static ucs_status_t gig_fwd_tmpl_keep(gig_fwd_build_t *b, int c, int dserver)
{
    const gig_fwd_tmpl_t *tp = &b->tmpl;
    gig_fwd_class_t *cl      = &b->fwd->cls[c];
    const int *dv            = b->sh->vert + b->sh->first[dserver];
    int nloc                 = b->cbase[c + 1] - b->cbase[c];
    gig_arena_t *arena       = &b->fwd->arena;
    int i, n, r, li, ni = 0, ri = 0, vi = 0;
    gig_fwd_tent_t *ent;
    gig_fwd_tref_t *tr;
    gig_fwd_route_t *rte;
    int *at, *nxt, *via;

    if (!GIG_FWD_ROOM(cl, tref, ntref, ctref)) {
        return UCS_ERR_NO_MEMORY;
    }
    at  = gig_arena_alloc(arena, (nloc + 1) * sizeof(int));
    ent = gig_arena_alloc(arena, (tp->nent + 1) * sizeof(*ent));
    nxt = gig_arena_alloc(arena, (2 * tp->nnxt + 1) * sizeof(int));
    rte = gig_arena_alloc(arena, (tp->nrte + 1) * sizeof(*rte));
    via = gig_arena_alloc(arena, (tp->nvia + 1) * sizeof(int));
    if ((at == NULL) || (ent == NULL) || (nxt == NULL) || (rte == NULL) ||
        (via == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    memset(at, 0xff, (nloc + 1) * sizeof(int));
    /* the template's arrays are NULL until they first hold something */
    if (tp->nnxt > 0) {
        memcpy(nxt, tp->nxt, 2 * tp->nnxt * sizeof(int));
    }
    if (tp->nrte > 0) {
        memcpy(rte, tp->rte, tp->nrte * sizeof(*rte));
    }
    if (tp->nvia > 0) {
        memcpy(via, tp->via, tp->nvia * sizeof(int));
    }
    for (i = 0; i < tp->nent; ++i) {
        li = -1 - tp->ent[2 * i];
        if ((li < 0) || (li >= nloc)) {
            ucs_error("gig channel: a class entry of vertex %d is off its "
                      "server", tp->ent[2 * i]);
            return UCS_ERR_INVALID_PARAM;
        }
        at[li]         = i;
        ent[i].nnext   = tp->ent[2 * i + 1];
        ent[i].ni      = ni;
        ent[i].ri      = ri;
        ent[i].vi      = vi;
        ent[i].nroutes = 0;
        ent[i].nvia    = 0;
        for (n = 0; n < ent[i].nnext; ++n, ++ni) {
            for (r = 0; r < nxt[2 * ni + 1]; ++r, ++ri) {
                ent[i].nroutes++;
                ent[i].nvia += rte[ri].nvia;
            }
        }
        vi += ent[i].nvia;
        b->ccnt[b->cbase[c] + li]++;
        if (b->sclass[dserver] == c) {
            b->csub[dv[li]]++;
        }
    }
    tr          = &cl->tref[cl->ntref++];
    tr->dst     = b->dst;
    tr->dserver = dserver;
    tr->at      = at;
    tr->ent     = ent;
    tr->nxt     = nxt;
    tr->rte     = rte;
    tr->via     = via;
    return UCS_OK;
}

/* Room a table's template entries take: next hops, routes, vertices */
typedef struct {
    gig_fwd_next_t    *nexts;
    gig_fwd_route_t   *routes;
    int               *vbuf;
} gig_fwd_room_t;

/* Template entry te of tr written out for the server whose vertices by
 * index are sv, at e, from the room (advanced past it) */
static void gig_fwd_tref_decode(const gig_fwd_tref_t *tr,
                                const gig_fwd_tent_t *te, const int *sv,
                                gig_fwd_entry_t *e, gig_fwd_room_t *room)
{
    const int *tv                = tr->via + te->vi;
    const gig_fwd_route_t *tr_rt = tr->rte + te->ri;
    const int *tn                = tr->nxt + 2 * te->ni;
    gig_fwd_next_t *nx;
    gig_fwd_route_t *rt;
    int n, r, k;

    e->dst   = tr->dst;
    e->nnext = te->nnext;
    e->next  = room->nexts;
    for (n = 0; n < te->nnext; ++n, tn += 2) {
        nx          = room->nexts++;
        nx->next    = GIG_FWD_DECODE(sv, tn[0]);
        nx->nroutes = tn[1];
        nx->routes  = room->routes;
        for (r = 0; r < nx->nroutes; ++r, ++tr_rt) {
            rt           = room->routes++;
            rt->via      = room->vbuf;
            rt->nvia     = tr_rt->nvia;
            rt->capacity = tr_rt->capacity;
            for (k = 0; k < rt->nvia; ++k, ++tv) {
                *room->vbuf++ = GIG_FWD_DECODE(sv, *tv);
            }
        }
    }
}

/* Table i complete: the entries of its class's templates merged by
 * destination with those written at create (a template's first where both
 * have one, the order they were added in); 0 if it cannot be */
static int gig_fwd_read(const gig_fwd_t *cfwd, int i)
{
    gig_fwd_t *fwd     = (gig_fwd_t*)cfwd;   /* written once, locked */
    gig_fwd_table_t *t = &fwd->tables[i];
    gig_fwd_lazy_t *lz = &fwd->lazy[i];
    size_t nn = 0, nr = 0, nv = 0;
    const gig_fwd_class_t *cl;
    const gig_fwd_tref_t *tr;
    const gig_fwd_tent_t *te;
    gig_fwd_entry_t *ents;
    gig_fwd_room_t room;
    const int *sv;
    int k = 0, n = 0, m = 0;

    if (__atomic_load_n(&lz->ready, __ATOMIC_ACQUIRE)) {
        return 1;
    }
    pthread_mutex_lock(&fwd->lock);
    if (lz->ready) {
        pthread_mutex_unlock(&fwd->lock);
        return 1;
    }
    cl = &fwd->cls[lz->cls];
    sv = fwd->svert + fwd->sfirst[lz->server];
    for (tr = cl->tref; tr < cl->tref + cl->ntref; ++tr) {
        if ((tr->dserver != lz->server) && (tr->at[lz->local] >= 0)) {
            te  = &tr->ent[tr->at[lz->local]];
            nn += te->nnext;
            nr += te->nroutes;
            nv += te->nvia;
            ++m;
        }
    }
    ents         = malloc((t->nentries + 1) * sizeof(*ents));
    room.nexts   = gig_arena_alloc(&fwd->arena, (nn + 1) * sizeof(*room.nexts));
    room.routes  = gig_arena_alloc(&fwd->arena,
                                   (nr + 1) * sizeof(*room.routes));
    room.vbuf    = gig_arena_alloc(&fwd->arena, (nv + 1) * sizeof(int));
    if ((ents == NULL) || (room.nexts == NULL) || (room.routes == NULL) ||
        (room.vbuf == NULL) || (m + lz->nsc != t->nentries)) {
        free(ents);
        pthread_mutex_unlock(&fwd->lock);
        ucs_error("gig: the forwarding table of vertex %d (%d entries) "
                  "could not be written out: %s", t->vertex, t->nentries,
                  (m + lz->nsc != t->nentries) ? "its count is wrong" :
                  "out of memory");
        return 0;
    }
    for (tr = cl->tref; tr < cl->tref + cl->ntref; ++tr) {
        if ((tr->dserver == lz->server) || (tr->at[lz->local] < 0)) {
            continue;
        }
        while ((k < lz->nsc) && (lz->sc[k].dst < tr->dst)) {
            ents[n++] = lz->sc[k++];
        }
        gig_fwd_tref_decode(tr, &tr->ent[tr->at[lz->local]], sv, &ents[n++],
                            &room);
    }
    while (k < lz->nsc) {
        ents[n++] = lz->sc[k++];
    }
    free(lz->sc);
    lz->sc     = NULL;
    t->entries = ents;
    __atomic_store_n(&lz->ready, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&fwd->lock);
    return 1;
}

/* Entries of v's class templates (b->sh set, v on a server of a class) */
static int gig_fwd_tmpl_count(const gig_fwd_build_t *b, int v)
{
    int s = b->g->v[v].server;
    int c = ((s >= 0) && (b->sclass != NULL)) ? b->sclass[s] : -1;

    return (c < 0) ? 0 : (b->ccnt[b->cbase[c] + b->sh->local[v]] -
                          b->csub[v]);
}

/* The tables of the vertices that have entries, by vertex: those written
 * at create, and the class templates' entries counted (written when read) */
static ucs_status_t gig_fwd_finish(gig_fwd_build_t *b)
{
    gig_fwd_t *fwd         = b->fwd;
    const gig_shapes_t *sh = b->sh;
    const gig_graph_t *g   = b->g;
    gig_fwd_table_t *t;
    gig_fwd_lazy_t *lz;
    gig_fwd_entry_t *e;
    int *sfirst, *svert;
    int v, nt, n = 0;

    for (v = 0; v < g->nv; ++v) {
        n += ((b->tab[v].nentries + ((sh != NULL) ?
                                     gig_fwd_tmpl_count(b, v) : 0)) > 0);
    }
    fwd->tables = gig_arena_alloc(&fwd->arena, (n + 1) * sizeof(*fwd->tables));
    fwd->lazy   = gig_arena_alloc(&fwd->arena, (n + 1) * sizeof(*fwd->lazy));
    if ((fwd->tables == NULL) || (fwd->lazy == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    if (sh != NULL) {
        sfirst = gig_arena_alloc(&fwd->arena,
                                 (g->nservers + 1) * sizeof(int));
        svert  = gig_arena_alloc(&fwd->arena,
                                 (sh->first[g->nservers] + 1) * sizeof(int));
        if ((sfirst == NULL) || (svert == NULL)) {
            return UCS_ERR_NO_MEMORY;
        }
        memcpy(sfirst, sh->first, (g->nservers + 1) * sizeof(int));
        if (sh->first[g->nservers] > 0) {
            memcpy(svert, sh->vert, sh->first[g->nservers] * sizeof(int));
        }
        fwd->sfirst = sfirst;
        fwd->svert  = svert;
    }
    for (v = 0; v < g->nv; ++v) {
        nt = (sh != NULL) ? gig_fwd_tmpl_count(b, v) : 0;
        if (b->tab[v].nentries + nt == 0) {
            continue;
        }
        if (b->tab[v].nentries > 0) {
            /* trimmed in place */
            e = realloc(b->tab[v].entries,
                        b->tab[v].nentries * sizeof(*e));
            if (e != NULL) {
                b->tab[v].entries = e;
            }
        }
        t            = &fwd->tables[fwd->ntables];
        lz           = &fwd->lazy[fwd->ntables++];
        t->vertex    = v;
        t->nentries  = b->tab[v].nentries + nt;
        t->entries   = (nt == 0) ? b->tab[v].entries : NULL;
        lz->cls      = (nt == 0) ? -1 : b->sclass[g->v[v].server];
        lz->server   = g->v[v].server;
        lz->local    = (sh != NULL) ? sh->local[v] : -1;
        lz->nsc      = b->tab[v].nentries;
        lz->sc       = (nt == 0) ? NULL : b->tab[v].entries;
        lz->ready    = (nt == 0);
        b->tab[v].entries = NULL;   /* the fwd's now */
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

static ucs_status_t gig_fwd_scratch_init(gig_fwd_scratch_t *sc, int nv)
{
    sc->slot = malloc((nv + 1) * sizeof(int));
    if (sc->slot == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    memset(sc->slot, 0xff, (nv + 1) * sizeof(int));
    return UCS_OK;
}

static void gig_fwd_scratch_cleanup(gig_fwd_scratch_t *sc)
{
    free(sc->log);
    free(sc->ent);
    free(sc->nxt);
    free(sc->rte);
    free(sc->slot);
}

static void gig_fwd_build_cleanup(gig_fwd_build_t *b)
{
    int v;

    gig_fwd_scratch_cleanup(&b->sc);
    gig_fwd_scratch_cleanup(&b->csc);
    free(b->tmpl.ent);
    free(b->tmpl.nxt);
    free(b->tmpl.rte);
    free(b->tmpl.via);
    free(b->cfirst);
    free(b->cserv);
    free(b->sclass);
    free(b->ccnt);
    free(b->cbase);
    free(b->csub);
    free(b->sfirst);
    free(b->ssrc);
    free(b->skey);
    free(b->kfirst);
    free(b->kend);
    if (b->tab != NULL) {
        for (v = 0; v < b->g->nv; ++v) {
            free(b->tab[v].entries);
        }
    }
    free(b->tab);
}

/* Whether servers r and s have their sources at the same indices */
static int gig_fwd_same_srcs(const gig_fwd_build_t *b, const int *srcs,
                             int r, int s)
{
    int n = b->sfirst[r + 1] - b->sfirst[r];
    int i;

    if ((b->sh->rep[r] != b->sh->rep[s]) ||
        (b->sfirst[s + 1] - b->sfirst[s] != n)) {
        return 0;
    }
    for (i = 0; i < n; ++i) {
        if (b->sh->local[srcs[b->ssrc[b->sfirst[r] + i]]] !=
            b->sh->local[srcs[b->ssrc[b->sfirst[s] + i]]]) {
            return 0;
        }
    }
    return 1;
}

/* Classes of the servers with sources: the same shape, the sources at the
 * same indices.  Only where every pair on two servers is split (none is
 * cached as a pair) and the plan translates path sets between servers of
 * one shape: then the up halves of a class are translations of each
 * other.  Otherwise b->sh stays NULL and every pair is added as it is. */
static ucs_status_t gig_fwd_classes(gig_fwd_build_t *b, gig_plan_t *plan,
                                    const int *srcs, int nsrc)
{
    const gig_graph_t *g   = b->g;
    const gig_shapes_t *sh = gig_plan_shapes(plan);
    int ns                 = g->nservers;
    int *sclass, *fill;
    int i, s, c;

    if (!gig_plan_splits(plan) || (gig_plan_ncross(plan) != 0) ||
        (sh == NULL) || (ns <= 0)) {
        return UCS_OK;
    }
    sclass    = malloc(ns * sizeof(int));
    fill      = calloc(ns + 1, sizeof(int));
    b->sfirst = calloc(ns + 1, sizeof(int));
    b->cfirst = calloc(ns + 1, sizeof(int));
    b->cserv  = malloc(ns * sizeof(int));
    b->ssrc   = malloc((nsrc + 1) * sizeof(int));
    b->skey   = malloc((nsrc + 1) * sizeof(int));
    b->kfirst = malloc((nsrc + 1) * sizeof(int));
    b->kend   = malloc((nsrc + 1) * sizeof(int));
    if ((sclass == NULL) || (fill == NULL) || (b->sfirst == NULL) ||
        (b->cfirst == NULL) || (b->cserv == NULL) || (b->ssrc == NULL) ||
        (b->skey == NULL) || (b->kfirst == NULL) || (b->kend == NULL)) {
        free(sclass);
        free(fill);
        return UCS_ERR_NO_MEMORY;
    }
    b->sh     = sh;
    b->sclass = sclass;
    /* the sources by server, in increasing order (srcs is sorted) */
    for (i = 0; i < nsrc; ++i) {
        if (srcs[i] != g->net) {
            b->sfirst[g->v[srcs[i]].server + 1]++;
        }
    }
    for (s = 0; s < ns; ++s) {
        b->sfirst[s + 1] += b->sfirst[s];
    }
    for (i = 0; i < nsrc; ++i) {
        if (srcs[i] != g->net) {
            s = g->v[srcs[i]].server;
            b->ssrc[b->sfirst[s] + fill[s]++] = i;
        }
    }
    /* class of each server with sources: that of the first server alike */
    for (s = 0; s < ns; ++s) {
        sclass[s] = -1;
        if (b->sfirst[s + 1] == b->sfirst[s]) {
            continue;
        }
        for (c = 0; c < b->nclasses; ++c) {
            if (gig_fwd_same_srcs(b, srcs, b->cserv[c], s)) {
                break;
            }
        }
        if (c == b->nclasses) {
            b->cserv[b->nclasses++] = s;   /* first server of the class */
        }
        sclass[s] = c;
        b->cfirst[c + 1]++;
    }
    for (c = 0; c < b->nclasses; ++c) {
        b->cfirst[c + 1] += b->cfirst[c];
    }
    /* keys: a class's sources by their index in a server (fill: the
     * class's first key; cserv[c]: its first server, so far) */
    for (c = 0; c < b->nclasses; ++c) {
        s         = b->cserv[c];
        fill[c]   = b->nkeys;
        b->nkeys += b->sfirst[s + 1] - b->sfirst[s];
    }
    memset(b->skey, 0xff, (nsrc + 1) * sizeof(int));
    for (s = 0; s < ns; ++s) {
        for (i = b->sfirst[s]; (sclass[s] >= 0) && (i < b->sfirst[s + 1]);
             ++i) {
            b->skey[b->ssrc[i]] = fill[sclass[s]] + i - b->sfirst[s];
        }
    }
    memset(fill, 0, ns * sizeof(int));
    for (s = 0; s < ns; ++s) {
        if (sclass[s] >= 0) {
            c = sclass[s];
            b->cserv[b->cfirst[c] + fill[c]++] = s;
        }
    }
    free(fill);
    /* the templates' entries by class and index in a server */
    b->cbase      = calloc(b->nclasses + 1, sizeof(int));
    b->csub       = calloc(g->nv + 1, sizeof(int));
    b->fwd->cls   = calloc(b->nclasses + 1, sizeof(*b->fwd->cls));
    if ((b->cbase == NULL) || (b->csub == NULL) || (b->fwd->cls == NULL)) {
        return UCS_ERR_NO_MEMORY;
    }
    b->fwd->nclasses = b->nclasses;
    for (c = 0; c < b->nclasses; ++c) {
        s               = b->cserv[b->cfirst[c]];
        b->cbase[c + 1] = b->cbase[c] + sh->first[s + 1] - sh->first[s];
    }
    b->ccnt = calloc(b->cbase[b->nclasses] + 1, sizeof(int));
    return (b->ccnt != NULL) ? UCS_OK : UCS_ERR_NO_MEMORY;
}

/* Toward the current destination d, the entries of the sources of each
 * class on servers other than d's: merged on the first such server of the
 * class, kept for all of them (written out when their tables are read) */
static ucs_status_t gig_fwd_add_classes(gig_fwd_build_t *b, const int *srcs,
                                        const gig_pathset_t **ups,
                                        const gig_cut_t **ucuts,
                                        const gig_pathset_t *down,
                                        const gig_cut_t *dcut)
{
    int dserver = b->g->v[b->dst].server;
    ucs_status_t status;
    int c, k, i, t;

    for (c = 0; c < b->nclasses; ++c) {
        k = b->cfirst[c];
        if (b->cserv[k] == dserver) {
            ++k;
        }
        if (k == b->cfirst[c + 1]) {
            continue;
        }
        t = b->cserv[k];
        for (i = b->sfirst[t]; i < b->sfirst[t + 1]; ++i) {
            status = gig_fwd_add_split(b, &b->csc, GIG_FWD_UP,
                                       ups[b->ssrc[i]], ucuts[b->ssrc[i]],
                                       down, dcut);
            if (status != UCS_OK) {
                return status;
            }
        }
        status = gig_fwd_tmpl_make(b, t);
        if (status == UCS_OK) {
            status = gig_fwd_tmpl_keep(b, c, dserver);
        }
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

/* The additions of a source of a class on the destination's server: those
 * logged for the first source of its key toward this destination (the
 * same capacities on the same routes, so the same sums to the bit, without
 * looking the routes up), else added and logged */
static ucs_status_t gig_fwd_add_down(gig_fwd_build_t *b, int key,
                                     const gig_pathset_t *up,
                                     const gig_cut_t *ucut,
                                     const gig_pathset_t *down,
                                     const gig_cut_t *dcut)
{
    gig_fwd_scratch_t *sc = &b->sc;
    ucs_status_t status;
    int k;

    if (b->kfirst[key] >= 0) {
        for (k = b->kfirst[key]; k < b->kend[key]; ++k) {
            sc->rte[sc->log[k].route].capacity += sc->log[k].capacity;
        }
        return UCS_OK;
    }
    b->kfirst[key] = sc->nlog;
    sc->rec        = 1;
    status         = gig_fwd_add_split(b, sc, GIG_FWD_DOWN, up, ucut, down,
                                       dcut);
    sc->rec        = 0;
    b->kend[key]   = sc->nlog;
    return status;
}

/* The tables of every (s, d) pair toward the current destination d: pairs
 * through the network from the halves' cuts (the entries on a class's
 * servers by gig_fwd_add_classes), others from their path set */
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

    if (b->sh != NULL) {
        memset(b->kfirst, 0xff, b->nkeys * sizeof(int));
        b->sc.nlog = 0;
    }
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
            if (b->sh == NULL) {
                status = gig_fwd_add_split(b, &b->sc,
                                           GIG_FWD_UP | GIG_FWD_DOWN,
                                           ups[i], ucuts[i], down, dcut);
            } else {
                status = gig_fwd_add_down(b, b->skey[i], ups[i], ucuts[i],
                                          down, dcut);
            }
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
    if ((b->sh != NULL) && (down != NULL)) {
        status = gig_fwd_add_classes(b, srcs, ups, ucuts, down, dcut);
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
    b.tab   = calloc(g->nv + 1, sizeof(*b.tab));
    b.fwd   = calloc(1, sizeof(*b.fwd));
    if (b.fwd != NULL) {
        pthread_mutex_init(&b.fwd->lock, NULL);
    }
    if ((b.fwd == NULL) || (b.tab == NULL) || (srcs == NULL) ||
        (dsts == NULL) || (ups == NULL) || (ucuts == NULL) ||
        (gig_fwd_scratch_init(&b.sc, g->nv) != UCS_OK) ||
        (gig_fwd_scratch_init(&b.csc, g->nv) != UCS_OK) ||
        (gig_fwd_classes(&b, plan, srcs, nsrc) != UCS_OK)) {
        status = UCS_ERR_NO_MEMORY;
        goto err_free;
    }
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
        free(fwd->lazy[i].ready ? fwd->tables[i].entries : fwd->lazy[i].sc);
    }
    for (i = 0; (fwd->cls != NULL) && (i < fwd->nclasses); ++i) {
        free(fwd->cls[i].tref);
    }
    free(fwd->cls);
    pthread_mutex_destroy(&fwd->lock);
    gig_arena_cleanup(&fwd->arena);
    free(fwd);
}

int gig_fwd_ntables(const gig_fwd_t *fwd)
{
    return fwd->ntables;
}

const gig_fwd_table_t *gig_fwd_table(const gig_fwd_t *fwd, int i)
{
    return ((i >= 0) && (i < fwd->ntables) && gig_fwd_read(fwd, i)) ?
           &fwd->tables[i] : NULL;
}

const gig_fwd_table_t *gig_fwd_find(const gig_fwd_t *fwd, int vertex)
{
    int lo = 0, hi = fwd->ntables - 1, mid;

    while (lo <= hi) {
        mid = (lo + hi) / 2;
        if (fwd->tables[mid].vertex == vertex) {
            return gig_fwd_read(fwd, mid) ? &fwd->tables[mid] : NULL;
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
        t = gig_fwd_table(fwd, i);
        if (t == NULL) {
            continue;
        }
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

/* The capacity of the paths through one next hop of an entry */
static double gig_fwd_next_cap(const gig_fwd_next_t *next)
{
    double cap = 0;
    int r;

    for (r = 0; r < next->nroutes; ++r) {
        cap += next->routes[r].capacity;
    }
    return cap;
}

double gig_fwd_next_capacity(const gig_fwd_entry_t *ent, int k)
{
    return ((k >= 0) && (k < ent->nnext)) ? gig_fwd_next_cap(&ent->next[k]) :
                                            0;
}

int gig_fwd_pick(const gig_fwd_entry_t *ent, int dst_vertex, unsigned rank)
{
    double total = 0, u, cap;
    int k;

    if ((ent->nnext <= 1) || (ent->next[0].next == dst_vertex)) {
        return 0;          /* one next hop, or direct (it comes first) */
    }
    for (k = 0; k < ent->nnext; ++k) {
        total += gig_fwd_next_cap(&ent->next[k]);
    }
    if (!(total > 0)) {
        return 0;
    }
    u = (rank + 0.5) * 0.6180339887498949;
    u = (u - (double)(uint64_t)u) * total;
    for (k = 0; k < ent->nnext - 1; ++k) {
        cap = gig_fwd_next_cap(&ent->next[k]);
        if (u < cap) {
            break;
        }
        u -= cap;
    }
    return k;
}

/*
 * GIG internals shared by the planner files; not installed, not for users.
 */
#ifndef GIG_INT_H_
#define GIG_INT_H_

#include "gig.h"

#include <stdint.h>
#include <stdio.h>

/* Capacities on integers: 1 unit = 1 MB/s, exact and repeatable */
#define GIG_UNITS_PER_GBPS   1000.0
#define GIG_FLOW_INF         ((int64_t)1 << 60)

static inline int64_t gig_units(double gbps)
{
    return (int64_t)(gbps * GIG_UNITS_PER_GBPS + 0.5);
}

static inline double gig_gbps(int64_t units)
{
    return (double)units / GIG_UNITS_PER_GBPS;
}

/* Residual network: arc 2k is forward edge k, arc 2k+1 its reverse (cap 0) */
typedef struct gig_flownet {
    int         nv, na;
    int         *start;     /* nv + 1, arcs by tail */
    int         *arcs;      /* na, arc ids in adjacency order */
    int         *tail, *head;
    int64_t     *cap;
    int64_t     *flow;
    int         *touched;   /* forward arcs that carried flow, to reset */
    unsigned char *tmark;
    int         ntouched;
    /* BFS scratch */
    int         *queue, *parent, *seen;
    int         epoch;
    const int   *vmask;     /* vertex allowed iff vmask[v] == mask_val */
    int         mask_val;
    int         extra_v;    /* vertex always allowed (the network) */
    /* NICs bridge a server and the network, never two PCIe devices: with
     * is_nic set, forward arcs obey nic_mode (gig_nic_mode_t) */
    const unsigned char *is_nic;
    int         nic_mode;
} gig_flownet_t;

typedef enum {
    GIG_NIC_BLOCK = 0,    /* same-server pair: no arc into a NIC */
    GIG_NIC_UP,           /* towards the network: a NIC exits to it only */
    GIG_NIC_DOWN          /* from the network: a NIC is entered from it only */
} gig_nic_mode_t;

/* Builds the residual network of the graph plus nextra vertices and arcs */
ucs_status_t gig_flownet_init(gig_flownet_t *fn, const gig_graph_t *g,
                              int nextra_v, int nextra_a);
void         gig_flownet_cleanup(gig_flownet_t *fn);
void         gig_flownet_add_arc(gig_flownet_t *fn, int u, int v,
                                 int64_t cap);
void         gig_flownet_build_adj(gig_flownet_t *fn);
void         gig_flownet_reset(gig_flownet_t *fn);
/* Edmonds-Karp from s to t; returns the max-flow in units */
int64_t      gig_flownet_maxflow(gig_flownet_t *fn, int s, int t);

/* Servers of the same shape (gig_shape.c): vertices numbered per server in
 * id order; rep[s] is the first server of s's shape */
typedef struct gig_shapes {
    int         *first;     /* nservers + 1 offsets into vert */
    int         *vert;      /* the vertices of each server, by id */
    int         *local;     /* vertex -> its index in its server */
    int         *rep;       /* server -> first server of the same shape */
    int         nshapes;
} gig_shapes_t;

/* fn: the plan's residual network of g, as gig_flownet_init() built it */
ucs_status_t gig_shapes_init(gig_shapes_t *sh, const gig_graph_t *g,
                             const gig_flownet_t *fn);
void         gig_shapes_cleanup(gig_shapes_t *sh);

/* v (of any server, or the network) as the same vertex of server s */
static inline int gig_shapes_map(const gig_shapes_t *sh, const gig_graph_t *g,
                                 int v, int s)
{
    return (v == g->net) ? v : sh->vert[sh->first[s] + sh->local[v]];
}

/* The plan's path sets by pair (gig_cache.c) */
typedef struct gig_cache {
    const gig_graph_t  *g;
    const gig_shapes_t *sh;
    gig_pathset_t      ***rows;  /* [src]: its server's vertices, then the
                                    network; the network's: all vertices */
    int64_t            *hkey;    /* other pairs: src * nv + dst */
    gig_pathset_t      **hval;
    int                hcap, hn;
} gig_cache_t;

ucs_status_t   gig_cache_init(gig_cache_t *c, const gig_graph_t *g,
                              const gig_shapes_t *sh);
void           gig_cache_cleanup(gig_cache_t *c);
gig_pathset_t *gig_cache_get(const gig_cache_t *c, int s, int t);
ucs_status_t   gig_cache_put(gig_cache_t *c, gig_pathset_t *ps);

/* A decomposed s-t path, vertices in a caller-provided buffer */
typedef struct gig_rawpath {
    int         nvert;
    int         *vert;
    int64_t     flow;
} gig_rawpath_t;

/* Decomposes the current flow into s-t paths, shortest first; calls cb for
 * each (vert valid during the call only). Consumes the flow. */
typedef ucs_status_t (*gig_rawpath_cb_t)(void *arg, const int *vert,
                                         int nvert, int64_t flow);
ucs_status_t gig_flownet_decompose(gig_flownet_t *fn, int s, int t,
                                   gig_rawpath_cb_t cb, void *arg);

/* Interned vertex sequences (gig_frag.c): equal sequences, equal ids */
typedef struct gig_frags {
    int         n;          /* sequences */
    int         *start;     /* n + 1 offsets into vert */
    int         *vert;
    int         nvert;
    int         *slot;      /* open addressing: id or -1 */
    int         nslots, start_cap, vert_cap;
} gig_frags_t;

/* Id of the sequence v[0..n-1], added if new; GIG_NONE if out of memory */
int          gig_frags_intern(gig_frags_t *f, const int *v, int n);
void         gig_frags_cleanup(gig_frags_t *f);

static inline int gig_frags_len(const gig_frags_t *f, int id)
{
    return (id == GIG_NONE) ? 0 : f->start[id + 1] - f->start[id];
}

static inline const int *gig_frags_seq(const gig_frags_t *f, int id)
{
    return f->vert + f->start[id];
}

/*
 * A path cut at its managed vertices (gig_cut.c), what the forwarding
 * tables need (§4.4): a segment goes from a table's vertex v to the next
 * managed vertex over the unmanaged vertices between, as a pair of
 * interned fragments: the part up to and including the network vertex and
 * the part after it (GIG_NONE: the route does not cross the network).
 */
typedef struct gig_cut_seg {
    int         v, next;
    int         frag[2];
} gig_cut_seg_t;

typedef enum {
    GIG_CUT_WHOLE = 0,    /* the path as it is */
    GIG_CUT_HALF,         /* s -> net: up to the last managed vertex;
                             net -> d: from the first managed vertex on */
    GIG_CUT_LAST
} gig_cut_mode_t;

typedef struct gig_cut_path {
    int           nseg;
    gig_cut_seg_t *seg;     /* in path order */
    int           end;      /* half: last managed vertex before the
                               network, or first managed one after it */
    int           frag;     /* half: its unmanaged vertices towards the
                               network; s -> net ones end with the network */
} gig_cut_path_t;

typedef struct gig_cut {
    int            npaths;
    gig_cut_path_t path[];  /* the path set's paths, in order */
} gig_cut_t;

/* The path set's cut, made once and kept by the plan; pathset must come
 * from the plan.  The fragments are the plan's (gig_plan_frags). */
ucs_status_t gig_plan_cut(gig_plan_t *plan, const gig_pathset_t *ps,
                          gig_cut_mode_t mode, const gig_cut_t **cut_p);
gig_frags_t *gig_plan_frags(gig_plan_t *plan);
/* The cached path set of a pair, NULL if not planned yet */
const gig_pathset_t *gig_plan_cached(const gig_plan_t *plan, int s, int t);
/* Whether pairs on two servers are planned through the network
 * (gig_plan_paths), and how many such pairs are cached as pairs */
int          gig_plan_splits(const gig_plan_t *plan);
int          gig_plan_ncross(const gig_plan_t *plan);
/* The servers' shapes if path sets are translated between servers of one
 * shape, else NULL */
const gig_shapes_t *gig_plan_shapes(const gig_plan_t *plan);

/* Arena for results that live as long as their owner */
typedef struct gig_arena_chunk gig_arena_chunk_t;
typedef struct gig_arena {
    gig_arena_chunk_t *head;
    size_t            used, size;
} gig_arena_t;

void        *gig_arena_alloc(gig_arena_t *a, size_t size);
/* " numa=N cuda=N pci=BUS" for the attributes a vertex has (dump and
 * topology file write them alike) */
void         gig_vertex_fprint_attrs(FILE *f, const gig_vertex_t *v);
void         gig_arena_cleanup(gig_arena_t *a);

/* Cuts the paths of ps (gig_cut.c); memory from arena */
ucs_status_t gig_cut_make(const gig_graph_t *g, gig_frags_t *frags,
                          gig_arena_t *arena, const gig_pathset_t *ps,
                          gig_cut_mode_t mode, gig_cut_t **cut_p);

#endif

/*
 * GIG internals shared by the planner files; not installed, not for users.
 */
#ifndef GIG_INT_H_
#define GIG_INT_H_

#include "gig.h"

#include <stdint.h>

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

/* For a pair on two servers whose path set is not cached yet: the cached
 * halves s -> net and net -> d (planned if needed), so that a channel can
 * use the pairing without materializing it.  UCS_ERR_NO_ELEM otherwise:
 * then ask gig_plan_paths(). */
ucs_status_t gig_plan_halves(gig_plan_t *plan, int s, int t,
                             const gig_pathset_t **up_p,
                             const gig_pathset_t **down_p);

/* Arena for results that live as long as their owner */
typedef struct gig_arena_chunk gig_arena_chunk_t;
typedef struct gig_arena {
    gig_arena_chunk_t *head;
    size_t            used, size;
} gig_arena_t;

void        *gig_arena_alloc(gig_arena_t *a, size_t size);
void         gig_arena_cleanup(gig_arena_t *a);

#endif

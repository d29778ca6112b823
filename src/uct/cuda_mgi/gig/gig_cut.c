/*
 * Paths cut at their managed vertices for the forwarding tables (§4.4).
 * Cutting a path set once per plan, instead of walking every path of every
 * (source, destination) pair of every channel, is most of what makes
 * channel creation fast: a pair through the network is then the s -> net
 * half's segments, one joining segment, and the net -> d half's segments.
 */
#include "gig_int.h"

#include <ucs/debug/log_def.h>

#include <string.h>

static int gig_cut_managed(const gig_graph_t *g, int v)
{
    return g->v[v].type <= GIG_VTX_CPU;
}

/* The unmanaged vertices via[0..n-1] as interned fragments, split after
 * the network vertex (the same key however the route was found) */
static ucs_status_t gig_cut_via(const gig_graph_t *g, gig_frags_t *frags,
                                const int *via, int n, int frag[2])
{
    int k;

    for (k = 0; (k < n) && (via[k] != g->net); ++k) {
    }
    if (k == n) {
        frag[0] = gig_frags_intern(frags, via, n);
        frag[1] = GIG_NONE;
        return (frag[0] == GIG_NONE) ? UCS_ERR_NO_MEMORY : UCS_OK;
    }
    frag[0] = gig_frags_intern(frags, via, k + 1);
    frag[1] = gig_frags_intern(frags, via + k + 1, n - k - 1);
    return ((frag[0] == GIG_NONE) || (frag[1] == GIG_NONE)) ?
           UCS_ERR_NO_MEMORY : UCS_OK;
}

/* Segments of vert[from..to]: from and to are table vertices, and so is
 * every managed vertex between them */
static ucs_status_t gig_cut_segments(const gig_graph_t *g, gig_frags_t *frags,
                                     gig_arena_t *arena, const int *vert,
                                     int from, int to, gig_cut_path_t *cp)
{
    ucs_status_t status;
    int i, k, n = 0;

    for (i = from + 1; i <= to; ++i) {
        n += (i == to) || gig_cut_managed(g, vert[i]);
    }
    cp->nseg = n;
    cp->seg  = gig_arena_alloc(arena, (n + 1) * sizeof(*cp->seg));
    if (cp->seg == NULL) {
        return UCS_ERR_NO_MEMORY;
    }
    for (i = from, n = 0; i < to; i = k, ++n) {
        for (k = i + 1; (k < to) && !gig_cut_managed(g, vert[k]); ++k) {
        }
        cp->seg[n].v    = vert[i];
        cp->seg[n].next = vert[k];
        status = gig_cut_via(g, frags, vert + i + 1, k - i - 1,
                             cp->seg[n].frag);
        if (status != UCS_OK) {
            return status;
        }
    }
    return UCS_OK;
}

static ucs_status_t gig_cut_path(const gig_graph_t *g, gig_frags_t *frags,
                                 gig_arena_t *arena, const gig_path_t *p,
                                 gig_cut_mode_t mode, gig_cut_path_t *cp)
{
    const int *vt = p->vert;
    int n = p->nvert, x;

    cp->end  = GIG_NONE;
    cp->frag = GIG_NONE;
    if (mode == GIG_CUT_WHOLE) {
        return gig_cut_segments(g, frags, arena, vt, 0, n - 1, cp);
    }
    if (vt[n - 1] == g->net) {
        /* s -> net: the last managed vertex and the rest up to the network
         * (the source counts as managed, whatever its type) */
        for (x = n - 2; (x > 0) && !gig_cut_managed(g, vt[x]); --x) {
        }
        cp->end  = vt[x];
        cp->frag = gig_frags_intern(frags, vt + x + 1, n - x - 1);
        if (cp->frag == GIG_NONE) {
            return UCS_ERR_NO_MEMORY;
        }
        return gig_cut_segments(g, frags, arena, vt, 0, x, cp);
    }
    /* net -> d: the first managed vertex (or d) and the way to it */
    for (x = 1; (x < n - 1) && !gig_cut_managed(g, vt[x]); ++x) {
    }
    cp->end  = vt[x];
    cp->frag = gig_frags_intern(frags, vt + 1, x - 1);
    if (cp->frag == GIG_NONE) {
        return UCS_ERR_NO_MEMORY;
    }
    return gig_cut_segments(g, frags, arena, vt, x, n - 1, cp);
}

ucs_status_t gig_cut_make(const gig_graph_t *g, gig_frags_t *frags,
                          gig_arena_t *arena, const gig_pathset_t *ps,
                          gig_cut_mode_t mode, gig_cut_t **cut_p)
{
    ucs_status_t status;
    gig_cut_t *cut;
    int i;

    cut = gig_arena_alloc(arena, sizeof(*cut) +
                          ps->npaths * sizeof(cut->path[0]));
    if (cut == NULL) {
        goto err_nomem;
    }
    cut->npaths = ps->npaths;
    for (i = 0; i < ps->npaths; ++i) {
        status = gig_cut_path(g, frags, arena, &ps->paths[i], mode,
                              &cut->path[i]);
        if (status != UCS_OK) {
            goto err_nomem;
        }
    }
    *cut_p = cut;
    return UCS_OK;

err_nomem:
    ucs_error("gig plan of '%s': out of memory cutting the paths %s -> %s",
              g->origin, g->v[ps->src].name, g->v[ps->dst].name);
    return UCS_ERR_NO_MEMORY;
}

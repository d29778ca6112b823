/*
 * The plan's cache of path sets (Fig. 6, EKC).  Most pairs a channel plans
 * are on one server, or a half through the network: those go into a row
 * per source as long as its server (plus one for the network), so the
 * cache stays O(vertices) for a cluster instead of O(GPUs x vertices).
 * The network's own row spans the graph; other pairs (two servers,
 * materialized by gig_plan_paths) go into a hash table.
 */
#include "gig_int.h"

#include <stdlib.h>
#include <string.h>

/* first hash table size, then doubled at half full */
#define GIG_CACHE_INIT_SLOTS  64

ucs_status_t gig_cache_init(gig_cache_t *c, const gig_graph_t *g,
                            const gig_shapes_t *sh)
{
    memset(c, 0, sizeof(*c));
    c->g    = g;
    c->sh   = sh;
    c->rows = calloc(g->nv + 1, sizeof(*c->rows));
    return (c->rows == NULL) ? UCS_ERR_NO_MEMORY : UCS_OK;
}

void gig_cache_cleanup(gig_cache_t *c)
{
    int i;

    if (c->rows != NULL) {
        for (i = 0; i < c->g->nv; ++i) {
            free(c->rows[i]);
        }
    }
    free(c->rows);
    free(c->hkey);
    free(c->hval);
    memset(c, 0, sizeof(*c));
}

/* Size of s's row; the index of t in it, or -1 if the pair is hashed */
static int gig_cache_row_size(const gig_cache_t *c, int s)
{
    int server;

    if (s == c->g->net) {
        return c->g->nv;
    }
    server = c->g->v[s].server;
    return c->sh->first[server + 1] - c->sh->first[server] + 1;
}

static int gig_cache_index(const gig_cache_t *c, int s, int t)
{
    const gig_graph_t *g = c->g;

    if (s == g->net) {
        return t;
    } else if (t == g->net) {
        return gig_cache_row_size(c, s) - 1;
    } else if (g->v[s].server == g->v[t].server) {
        return c->sh->local[t];
    }
    return -1;
}

static unsigned gig_cache_hash(int64_t key, int cap)
{
    return (unsigned)((uint64_t)key * 11400714819323198485ull >> 32) &
           (cap - 1);
}

static gig_pathset_t *gig_cache_hget(const gig_cache_t *c, int64_t key)
{
    unsigned h;

    if (c->hn == 0) {
        return NULL;
    }
    for (h = gig_cache_hash(key, c->hcap); c->hval[h] != NULL;
         h = (h + 1) & (c->hcap - 1)) {
        if (c->hkey[h] == key) {
            return c->hval[h];
        }
    }
    return NULL;
}

static ucs_status_t gig_cache_hput(gig_cache_t *c, int64_t key,
                                   gig_pathset_t *ps)
{
    int cap = (c->hcap == 0) ? GIG_CACHE_INIT_SLOTS : 2 * c->hcap;
    gig_pathset_t **val;
    int64_t *hkey;
    unsigned h;
    int i;

    if (2 * (c->hn + 1) > c->hcap) {
        hkey = malloc(cap * sizeof(*hkey));
        val  = calloc(cap, sizeof(*val));
        if ((hkey == NULL) || (val == NULL)) {
            free(hkey);
            free(val);
            return UCS_ERR_NO_MEMORY;
        }
        for (i = 0; i < c->hcap; ++i) {
            if (c->hval[i] != NULL) {
                for (h = gig_cache_hash(c->hkey[i], cap); val[h] != NULL;
                     h = (h + 1) & (cap - 1)) {
                }
                hkey[h] = c->hkey[i];
                val[h]  = c->hval[i];
            }
        }
        free(c->hkey);
        free(c->hval);
        c->hkey = hkey;
        c->hval = val;
        c->hcap = cap;
    }
    for (h = gig_cache_hash(key, c->hcap); c->hval[h] != NULL;
         h = (h + 1) & (c->hcap - 1)) {
    }
    c->hkey[h] = key;
    c->hval[h] = ps;
    c->hn++;
    return UCS_OK;
}

gig_pathset_t *gig_cache_get(const gig_cache_t *c, int s, int t)
{
    int i = gig_cache_index(c, s, t);

    if (i < 0) {
        return gig_cache_hget(c, (int64_t)s * c->g->nv + t);
    }
    return (c->rows[s] != NULL) ? c->rows[s][i] : NULL;
}

ucs_status_t gig_cache_put(gig_cache_t *c, gig_pathset_t *ps)
{
    int i = gig_cache_index(c, ps->src, ps->dst);
    gig_pathset_t **row;

    if (i < 0) {
        return gig_cache_hput(c, (int64_t)ps->src * c->g->nv + ps->dst, ps);
    }
    row = c->rows[ps->src];
    if (row == NULL) {
        row = calloc(gig_cache_row_size(c, ps->src), sizeof(*row));
        if (row == NULL) {
            return UCS_ERR_NO_MEMORY;
        }
        c->rows[ps->src] = row;
    }
    row[i] = ps;
    return UCS_OK;
}

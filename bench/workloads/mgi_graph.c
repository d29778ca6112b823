/**
 * The MGG and PROACT workloads' data (mgi_graph.h): R-MAT, CSR, the split
 * by edges, neighbour partitions, the CPU references.
 */
#include "mgi_graph.h"

#include <stdlib.h>
#include <string.h>

/* the vertex id bijection: an odd multiplier and an offset mod 2^scale
 * spread R-MAT's hubs (all near id 0) over the id range, so a split by
 * edges does not put them all in the first part */
static uint32_t mgi_graph_scramble(uint32_t v, unsigned scale, uint64_t seed)
{
    const uint64_t mask = (scale >= 32) ? ~0ull : ((1ull << scale) - 1);
    const uint64_t mul  = (mgi_graph_mix(seed ^ 0x5bd1e995ull) | 1);
    const uint64_t add  = mgi_graph_mix(seed ^ 0x1b873593ull);

    return (uint32_t)((v * mul + add) & mask);
}

void mgi_graph_rmat_edge(unsigned scale, uint64_t seed, uint64_t e,
                         uint32_t *src, uint32_t *dst)
{
    const uint64_t ta = (uint64_t)(MGI_RMAT_A * 4294967296.0);
    const uint64_t tb = (uint64_t)((MGI_RMAT_A + MGI_RMAT_B) * 4294967296.0);
    const uint64_t tc = (uint64_t)((MGI_RMAT_A + MGI_RMAT_B + MGI_RMAT_C) *
                                   4294967296.0);
    uint64_t x = mgi_graph_mix(seed * 0x9e3779b97f4a7c15ull + e), r;
    uint32_t u = 0, v = 0;
    unsigned l;

    for (l = 0; l < scale; ++l) {
        if ((l % 2) == 0) {
            x = mgi_graph_mix(x);   /* two 32-bit draws per mix */
            r = x & 0xffffffffull;
        } else {
            r = x >> 32;
        }
        u <<= 1;
        v <<= 1;
        if (r < ta) {
            /* top left */
        } else if (r < tb) {
            v |= 1;
        } else if (r < tc) {
            u |= 1;
        } else {
            u |= 1;
            v |= 1;
        }
    }
    *src = mgi_graph_scramble(u, scale, seed);
    *dst = mgi_graph_scramble(v, scale, seed);
}

int mgi_graph_rmat(mgi_graph_t *g, unsigned scale, unsigned avg_deg,
                   uint64_t seed)
{
    uint64_t e, *fill = NULL;
    uint32_t *src = NULL, *dst = NULL, v;
    int64_t i;

    memset(g, 0, sizeof(*g));
    if ((scale < 1) || (scale > 30) || (avg_deg < 1)) {
        return -1;
    }
    g->nv  = 1u << scale;
    g->ne  = (uint64_t)g->nv * avg_deg;
    g->row = calloc((size_t)g->nv + 1, sizeof(*g->row));
    g->col = malloc(g->ne * sizeof(*g->col));
    src    = malloc(g->ne * sizeof(*src));
    dst    = malloc(g->ne * sizeof(*dst));
    fill   = malloc(((size_t)g->nv + 1) * sizeof(*fill));
    if ((g->row == NULL) || (g->col == NULL) || (src == NULL) ||
        (dst == NULL) || (fill == NULL)) {
        free(src);
        free(dst);
        free(fill);
        mgi_graph_free(g);
        return -1;
    }
#pragma omp parallel for schedule(static)
    for (i = 0; i < (int64_t)g->ne; ++i) {
        mgi_graph_rmat_edge(scale, seed, (uint64_t)i, &src[i], &dst[i]);
    }
    for (e = 0; e < g->ne; ++e) {
        ++g->row[dst[e] + 1];
    }
    for (v = 0; v < g->nv; ++v) {
        const uint64_t d = g->row[v + 1];
        g->max_deg  = (d > g->max_deg) ? (uint32_t)d : g->max_deg;
        g->row[v + 1] += g->row[v];
    }
    memcpy(fill, g->row, ((size_t)g->nv + 1) * sizeof(*fill));
    for (e = 0; e < g->ne; ++e) {   /* in edge order: deterministic */
        g->col[fill[dst[e]]++] = src[e];
    }
    free(src);
    free(dst);
    free(fill);
    return 0;
}

void mgi_graph_free(mgi_graph_t *g)
{
    free(g->row);
    free(g->col);
    memset(g, 0, sizeof(*g));
}

void mgi_graph_split(const mgi_graph_t *g, unsigned nparts, uint32_t *lo)
{
    uint32_t a, b, m;
    unsigned p;

    lo[0]      = 0;
    lo[nparts] = g->nv;
    for (p = 1; p < nparts; ++p) {
        /* the first vertex whose edges before it reach p / nparts of all:
         * a binary search kept within [lo[p - 1], nv] */
        const uint64_t want = g->ne * p / nparts;
        a = lo[p - 1];
        b = g->nv;
        while (a < b) {
            m = a + (b - a) / 2;
            if (g->row[m] < want) {
                a = m + 1;
            } else {
                b = m;
            }
        }
        lo[p] = a;
    }
}

unsigned mgi_graph_owner(const uint32_t *lo, unsigned nparts, uint32_t v)
{
    unsigned a = 0, b = nparts - 1, m;

    while (a < b) {             /* the last p with lo[p] <= v */
        m = (a + b + 1) / 2;
        if (lo[m] <= v) {
            a = m;
        } else {
            b = m - 1;
        }
    }
    return a;
}

int mgi_graph_work_build(const mgi_graph_t *g, const uint32_t *lo,
                         unsigned nparts, unsigned part, unsigned ps,
                         unsigned dist, mgi_graph_work_t *w)
{
    const uint32_t v0 = lo[part], v1 = lo[part + 1];
    mgi_graph_np_t *lnp = NULL, *rnp = NULL;
    uint64_t nl = 0, nr = 0, k = 0, il, ir, cap, e, s, pos;
    uint32_t v, u, c;

    memset(w, 0, sizeof(*w));
    if ((ps == 0) || (part >= nparts)) {
        return -1;
    }
    w->nnbr = g->row[v1] - g->row[v0];
    w->nbr  = malloc((w->nnbr + 1) * sizeof(*w->nbr));
    cap     = w->nnbr / ps + (uint64_t)(v1 - v0) * 2 + 1;
    lnp     = malloc(cap * sizeof(*lnp));
    rnp     = malloc(cap * sizeof(*rnp));
    w->np   = malloc(cap * sizeof(*w->np));
    if ((w->nbr == NULL) || (lnp == NULL) || (rnp == NULL) ||
        (w->np == NULL)) {
        free(lnp);
        free(rnp);
        mgi_graph_work_free(w);
        return -1;
    }
    pos = 0;
    for (v = v0; v < v1; ++v) {
        /* local neighbours, then remote ones, each cut in runs of ps */
        for (int remote = 0; remote < 2; ++remote) {
            s = pos;
            for (e = g->row[v]; e < g->row[v + 1]; ++e) {
                u = g->col[e];
                if (((u >= v0) && (u < v1)) == !remote) {
                    w->nbr[pos++] = u;
                }
            }
            for (; s < pos; s += c) {
                c = (uint32_t)((pos - s < ps) ? pos - s : ps);
                mgi_graph_np_t np = {v, c, s, (uint32_t)remote, 0};
                if (remote) {
                    rnp[nr++] = np;
                    w->nremote += c;
                } else {
                    lnp[nl++] = np;
                    w->nlocal += c;
                }
            }
        }
    }
    /* interleave: a remote partition, then up to dist local ones */
    for (il = 0, ir = 0; (il < nl) || (ir < nr);) {
        if (ir < nr) {
            w->np[k++] = rnp[ir++];
        }
        for (c = 0; (c < (dist ? dist : 1)) && (il < nl); ++c) {
            w->np[k++] = lnp[il++];
        }
    }
    w->nnp = k;
    free(lnp);
    free(rnp);
    return 0;
}

void mgi_graph_work_free(mgi_graph_work_t *w)
{
    free(w->nbr);
    free(w->np);
    memset(w, 0, sizeof(*w));
}

static int mgi_graph_u32_cmp(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t*)a, y = *(const uint32_t*)b;

    return (x > y) - (x < y);
}

/* The index of v in rows[0 .. n), which holds it */
static uint32_t mgi_graph_row_of(const uint32_t *rows, uint64_t n, uint32_t v)
{
    uint64_t lo = 0, hi = n;

    while (hi - lo > 1) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (rows[mid] <= v) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return (uint32_t)lo;
}

int mgi_graph_cache_build(const mgi_graph_work_t *w, const uint32_t *lo,
                          unsigned nparts, mgi_graph_cache_t *c)
{
    uint64_t k, i, n = 0;

    memset(c, 0, sizeof(*c));
    c->rows = malloc((w->nremote + 1) * sizeof(*c->rows));
    c->slot = malloc((w->nnbr + 1) * sizeof(*c->slot));
    c->run  = malloc((w->nremote + 1) * sizeof(*c->run));
    if ((c->rows == NULL) || (c->slot == NULL) || (c->run == NULL)) {
        mgi_graph_cache_free(c);
        return -1;
    }
    for (k = 0; k < w->nnp; ++k) {
        if (w->np[k].remote) {
            for (i = 0; i < w->np[k].cnt; ++i) {
                c->rows[n++] = w->nbr[w->np[k].start + i];
            }
        }
    }
    qsort(c->rows, n, sizeof(*c->rows), mgi_graph_u32_cmp);
    for (k = 0, i = 0; k < n; ++k) {
        if ((i == 0) || (c->rows[k] != c->rows[i - 1])) {
            c->rows[i++] = c->rows[k];
        }
    }
    c->nrows = i;
    for (k = 0; k < c->nrows; ++k) {
        if ((k == 0) || (k - c->run[c->nruns - 1] >= MGI_GRAPH_CACHE_RUN) ||
            (c->rows[k] != c->rows[k - 1] + 1) ||
            (mgi_graph_owner(lo, nparts, c->rows[k]) !=
             mgi_graph_owner(lo, nparts, c->rows[k - 1]))) {
            c->run[c->nruns++] = (uint32_t)k;
        }
    }
    c->run[c->nruns] = (uint32_t)c->nrows;
    for (k = 0; k < w->nnbr; ++k) {
        c->slot[k] = UINT32_MAX;
    }
    for (k = 0; k < w->nnp; ++k) {
        if (w->np[k].remote) {
            for (i = w->np[k].start; i < w->np[k].start + w->np[k].cnt; ++i) {
                c->slot[i] = mgi_graph_row_of(c->rows, c->nrows, w->nbr[i]);
            }
        }
    }
    return 0;
}

void mgi_graph_cache_free(mgi_graph_cache_t *c)
{
    free(c->rows);
    free(c->slot);
    free(c->run);
    memset(c, 0, sizeof(*c));
}

void mgi_graph_aggregate_ref(const mgi_graph_t *g, uint64_t seed,
                             unsigned dim, uint32_t v0, uint32_t v1,
                             float *out)
{
    int64_t v;

#pragma omp parallel for schedule(dynamic, 64)
    for (v = v0; v < (int64_t)v1; ++v) {
        float *o = out + (uint64_t)(v - v0) * dim;
        uint64_t e;
        unsigned d;

        for (d = 0; d < dim; ++d) {
            o[d] = 0;
        }
        for (e = g->row[v]; e < g->row[v + 1]; ++e) {
            for (d = 0; d < dim; ++d) {
                o[d] += mgi_graph_emb(seed, g->col[e], d);
            }
        }
    }
}

uint64_t mgi_graph_check(const mgi_graph_t *g, uint64_t seed, unsigned dim,
                         uint32_t v0, uint32_t v1, const float *out,
                         uint32_t *first_bad)
{
    const uint32_t chunk = 4096;
    float *ref = malloc((size_t)chunk * dim * sizeof(*ref));
    uint64_t bad = 0;
    uint32_t a, b, v;

    if (ref == NULL) {
        return (uint64_t)(v1 - v0);
    }
    *first_bad = v1;
    for (a = v0; a < v1; a = b) {
        b = (v1 - a > chunk) ? a + chunk : v1;
        mgi_graph_aggregate_ref(g, seed, dim, a, b, ref);
        for (v = a; v < b; ++v) {
            if (memcmp(ref + (uint64_t)(v - a) * dim,
                       out + (uint64_t)(v - v0) * dim,
                       dim * sizeof(float)) != 0) {
                *first_bad = (bad++ == 0) ? v : *first_bad;
            }
        }
    }
    free(ref);
    return bad;
}

void mgi_proact_unit_sums(uint64_t seed, unsigned work, uint64_t bytes,
                          uint64_t *sums)
{
    const uint64_t wpu = MGI_PROACT_UNIT / 8;
    int64_t u;

#pragma omp parallel for schedule(static)
    for (u = 0; u < (int64_t)(bytes / MGI_PROACT_UNIT); ++u) {
        uint64_t s = 0, k;

        for (k = 0; k < wpu; ++k) {
            s += mgi_proact_word(seed, (uint64_t)u * wpu + k, work);
        }
        sums[u] = s;
    }
}

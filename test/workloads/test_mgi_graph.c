/**
 * CPU test of the MGG / PROACT data (mgi_graph.h): the R-MAT graph is the
 * same for a seed and another for another seed, power-law (hubs far above
 * the mean), its CSR holds every edge; the split balances edges; the
 * neighbour partitions cover each vertex's neighbours exactly once, local
 * and remote apart, interleaved; the reference aggregation matches a
 * naive one edge by edge; PROACT's unit sums add up to a tile's.
 */
#include "mgi_graph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(_c, ...) \
    do { \
        if (!(_c)) { \
            printf("FAIL %s:%d: ", __FILE__, __LINE__); \
            printf(__VA_ARGS__); \
            printf("\n"); \
            ++failures; \
        } \
    } while (0)

static void test_rmat(void)
{
    mgi_graph_t a, b, c;
    uint64_t e, n;
    uint32_t s, d, v;
    int same;

    CHECK(mgi_graph_rmat(&a, 14, 8, 42) == 0, "rmat");
    CHECK(mgi_graph_rmat(&b, 14, 8, 42) == 0, "rmat");
    CHECK(mgi_graph_rmat(&c, 14, 8, 43) == 0, "rmat");
    CHECK((a.nv == 16384) && (a.ne == 16384 * 8), "sizes %u %llu", a.nv,
          (unsigned long long)a.ne);
    CHECK(memcmp(a.row, b.row, (a.nv + 1) * sizeof(*a.row)) == 0 &&
          memcmp(a.col, b.col, a.ne * sizeof(*a.col)) == 0,
          "same seed, another graph");
    same = (memcmp(a.col, c.col, a.ne * sizeof(*a.col)) == 0);
    CHECK(!same, "another seed, the same graph");
    CHECK(a.row[a.nv] == a.ne, "CSR holds %llu of %llu edges",
          (unsigned long long)a.row[a.nv], (unsigned long long)a.ne);
    /* power law: the largest in-degree far above the mean of 8 */
    CHECK(a.max_deg > 40 * 8, "max degree %u", a.max_deg);
    /* each edge where the generator put it */
    for (e = 0, n = 0; e < a.ne; e += 997) {
        mgi_graph_rmat_edge(14, 42, e, &s, &d);
        for (v = 0; v < a.row[d + 1] - a.row[d]; ++v) {
            if (a.col[a.row[d] + v] == s) {
                ++n;
                break;
            }
        }
    }
    CHECK(n == (a.ne + 996) / 997, "%llu edges found of %llu",
          (unsigned long long)n, (unsigned long long)((a.ne + 996) / 997));
    mgi_graph_free(&a);
    mgi_graph_free(&b);
    mgi_graph_free(&c);
}

/* The distinct remote rows of part p's work: increasing, each read by a
 * remote slot, every remote slot pointing at its own vertex's row, local
 * slots at none */
static void test_cache(const mgi_graph_work_t *w, const uint32_t *lo,
                       unsigned nparts, unsigned p)
{
    mgi_graph_cache_t c;
    uint64_t k, *used;

    CHECK(mgi_graph_cache_build(w, lo, nparts, &c) == 0, "cache");
    CHECK((c.nrows > 0) && (c.nrows <= w->nremote), "part %u: %llu rows for "
          "%llu remote neighbours", p, (unsigned long long)c.nrows,
          (unsigned long long)w->nremote);
    for (k = 1; k < c.nrows; ++k) {
        CHECK(c.rows[k - 1] < c.rows[k], "rows %llu, %llu not increasing",
              (unsigned long long)k - 1, (unsigned long long)k);
    }
    for (k = 0; k < c.nrows; ++k) {
        CHECK(mgi_graph_owner(lo, nparts, c.rows[k]) != p, "row of vertex "
              "%u is part %u's own", c.rows[k], p);
    }
    /* runs: cover the rows in order, consecutive vertices of one owner,
     * none longer than MGI_GRAPH_CACHE_RUN, and none that could have
     * gone on into the next */
    CHECK((c.nruns > 0) && (c.run[0] == 0) && (c.run[c.nruns] == c.nrows),
          "runs cover rows 0..%llu: %u..%u in %llu",
          (unsigned long long)c.nrows, c.run[0], c.run[c.nruns],
          (unsigned long long)c.nruns);
    for (k = 0; k < c.nruns; ++k) {
        const uint32_t a = c.run[k], b = c.run[k + 1];
        CHECK((a < b) && (b - a <= MGI_GRAPH_CACHE_RUN), "run %llu: %u..%u",
              (unsigned long long)k, a, b);
        for (uint32_t r = a + 1; r < b; ++r) {
            CHECK((c.rows[r] == c.rows[r - 1] + 1) &&
                  (mgi_graph_owner(lo, nparts, c.rows[r]) ==
                   mgi_graph_owner(lo, nparts, c.rows[a])),
                  "run %llu: rows %u, %u", (unsigned long long)k,
                  c.rows[r - 1], c.rows[r]);
        }
        if ((k + 1 < c.nruns) && (b - a < MGI_GRAPH_CACHE_RUN)) {
            CHECK((c.rows[b] != c.rows[b - 1] + 1) ||
                  (mgi_graph_owner(lo, nparts, c.rows[b]) !=
                   mgi_graph_owner(lo, nparts, c.rows[b - 1])),
                  "run %llu stops at vertex %u before %u", (unsigned long long)k,
                  c.rows[b - 1], c.rows[b]);
        }
    }
    used = calloc(c.nrows + 1, sizeof(*used));
    for (k = 0; k < w->nnp; ++k) {
        const mgi_graph_np_t *np = &w->np[k];
        for (uint64_t i = np->start; i < np->start + np->cnt; ++i) {
            if (!np->remote) {
                CHECK(c.slot[i] == UINT32_MAX, "local slot %llu has row %u",
                      (unsigned long long)i, c.slot[i]);
                continue;
            }
            CHECK((c.slot[i] < c.nrows) && (c.rows[c.slot[i]] == w->nbr[i]),
                  "remote slot %llu (vertex %u) points at row %u",
                  (unsigned long long)i, w->nbr[i], c.slot[i]);
            if (c.slot[i] < c.nrows) {
                ++used[c.slot[i]];
            }
        }
    }
    for (k = 0; k < c.nrows; ++k) {
        CHECK(used[k] > 0, "row %llu (vertex %u) read by no slot",
              (unsigned long long)k, c.rows[k]);
        if (used[k] == 0) {
            break;
        }
    }
    free(used);
    mgi_graph_cache_free(&c);
}

static void test_split_work(void)
{
    const unsigned nparts = 3, ps = 4, dist = 2;
    uint32_t lo[MGI_GRAPH_MAX_PARTS + 1], v;
    mgi_graph_work_t w;
    mgi_graph_t g;
    uint64_t edges, k, *seen, total = 0;
    unsigned p;

    CHECK(mgi_graph_rmat(&g, 13, 16, 7) == 0, "rmat");
    mgi_graph_split(&g, nparts, lo);
    for (p = 0; p < nparts; ++p) {
        edges = g.row[lo[p + 1]] - g.row[lo[p]];
        CHECK(lo[p] < lo[p + 1], "part %u empty", p);
        CHECK((edges + g.max_deg >= g.ne / nparts) &&
              (edges <= g.ne / nparts + g.max_deg),
              "part %u: %llu edges of %llu", p, (unsigned long long)edges,
              (unsigned long long)g.ne);
        for (v = lo[p]; v < lo[p + 1]; v += 101) {
            CHECK(mgi_graph_owner(lo, nparts, v) == p, "owner of %u", v);
        }
        CHECK(mgi_graph_work_build(&g, lo, nparts, p, ps, dist, &w) == 0,
              "work");
        CHECK(w.nlocal + w.nremote == edges, "part %u: %llu + %llu "
              "neighbours of %llu", p, (unsigned long long)w.nlocal,
              (unsigned long long)w.nremote, (unsigned long long)edges);
        /* every neighbour slot in exactly one partition, of its kind */
        seen = calloc(w.nnbr, sizeof(*seen));
        for (k = 0; k < w.nnp; ++k) {
            const mgi_graph_np_t *np = &w.np[k];
            CHECK((np->cnt >= 1) && (np->cnt <= ps), "partition size %u",
                  np->cnt);
            for (uint32_t i = 0; i < np->cnt; ++i) {
                const uint32_t u = w.nbr[np->start + i];
                ++seen[np->start + i];
                CHECK((mgi_graph_owner(lo, nparts, u) != p) == np->remote,
                      "neighbour %u of %u in a %s partition", u, np->v,
                      np->remote ? "remote" : "local");
                CHECK((np->v >= lo[p]) && (np->v < lo[p + 1]), "vertex");
            }
        }
        for (k = 0; k < w.nnbr; ++k) {
            CHECK(seen[k] == 1, "slot %llu seen %llu times",
                  (unsigned long long)k, (unsigned long long)seen[k]);
            if (seen[k] != 1) {
                break;
            }
        }
        /* interleaved: no run of more than dist local partitions while
         * remote ones are left */
        if (w.nremote > 0) {
            CHECK(w.np[0].remote, "the first partition is local");
        }
        free(seen);
        test_cache(&w, lo, nparts, p);
        total += edges;
        mgi_graph_work_free(&w);
    }
    CHECK(total == g.ne, "parts hold %llu of %llu edges",
          (unsigned long long)total, (unsigned long long)g.ne);
    mgi_graph_free(&g);
}

static void test_reference(void)
{
    const unsigned dim = 16;
    mgi_graph_t g;
    float *ref, *naive;
    uint32_t bad_v = 0, s, d;
    uint64_t e, bad;

    CHECK(mgi_graph_rmat(&g, 10, 8, 99) == 0, "rmat");
    ref   = malloc((size_t)g.nv * dim * sizeof(float));
    naive = calloc((size_t)g.nv * dim, sizeof(float));
    mgi_graph_aggregate_ref(&g, 5, dim, 0, g.nv, ref);
    for (e = 0; e < g.ne; ++e) {     /* from the edge list, in its order */
        mgi_graph_rmat_edge(10, 99, e, &s, &d);
        for (unsigned k = 0; k < dim; ++k) {
            naive[(uint64_t)d * dim + k] += mgi_graph_emb(5, s, k);
        }
    }
    CHECK(memcmp(ref, naive, (size_t)g.nv * dim * sizeof(float)) == 0,
          "reference differs from the edge-list sums");
    bad = mgi_graph_check(&g, 5, dim, 0, g.nv, naive, &bad_v);
    CHECK(bad == 0, "check: %llu bad rows", (unsigned long long)bad);
    naive[(uint64_t)77 * dim + 3] += 1;
    bad = mgi_graph_check(&g, 5, dim, 0, g.nv, naive, &bad_v);
    CHECK((bad == 1) && (bad_v == 77), "check missed a wrong row (%llu, "
          "%u)", (unsigned long long)bad, bad_v);
    /* embeddings in [-8, 8] */
    for (s = 0; s < 1000; ++s) {
        float x = mgi_graph_emb(5, s, s % 64);
        CHECK((x >= -8) && (x <= 8) && (x == (float)(int)x), "emb %f", x);
    }
    free(ref);
    free(naive);
    mgi_graph_free(&g);
}

static void test_proact(void)
{
    const uint64_t bytes = 8 * MGI_PROACT_UNIT;
    uint64_t sums[8], s = 0, t = 0, k;

    mgi_proact_unit_sums(3, 2, bytes, sums);
    for (k = 0; k < bytes / 8; ++k) {
        s += mgi_proact_word(3, k, 2);
    }
    for (k = 0; k < 8; ++k) {
        t += sums[k];
    }
    CHECK(s == t, "unit sums %llx, words %llx", (unsigned long long)t,
          (unsigned long long)s);
    CHECK(mgi_proact_word(3, 5, 2) != mgi_proact_word(3, 5, 3), "work");
}

int main(void)
{
    test_rmat();
    test_split_work();
    test_reference();
    test_proact();
    printf("test_mgi_graph: %s (%d failure(s))\n",
           failures ? "FAILED" : "passed", failures);
    return failures != 0;
}

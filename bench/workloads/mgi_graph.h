/**
 * The MGG and PROACT workloads' data, free of CUDA so it is tested on the
 * CPU (test/workloads/test_mgi_graph.c):
 *   - an R-MAT power-law graph, each edge a pure function of (seed, edge
 *     number), vertex ids scrambled by a bijection, in CSR by destination;
 *   - its partition over G GPUs into contiguous vertex ranges balanced by
 *     edges (MGG's range-constrained split, Algorithm 1);
 *   - each GPU's neighbour partitions (MGG §4-5): a vertex's neighbours
 *     split in local and remote runs of at most `ps`, interleaved so that
 *     `dist` local partitions come between remote ones; the distinct
 *     remote rows they read, for a GPU that fetches each once;
 *   - node embeddings as small integers (sums exact in float) and the CPU
 *     reference of sum aggregation;
 *   - PROACT's tile words and their checksums.
 */
#ifndef MGI_GRAPH_H_
#define MGI_GRAPH_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#  define MGI_GRAPH_HD __host__ __device__
#else
#  define MGI_GRAPH_HD
#endif

#define MGI_GRAPH_MAX_PARTS 64

/* R-MAT quadrant probabilities (Graph500's a, b, c; d = the rest) */
#define MGI_RMAT_A 0.57
#define MGI_RMAT_B 0.19
#define MGI_RMAT_C 0.19

MGI_GRAPH_HD static inline uint64_t mgi_graph_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* Embedding element d of vertex v: an integer in [-8, 8], so that every
 * partial sum of a vertex's neighbours (degree < 2^20) is exact in float
 * whatever the order. */
MGI_GRAPH_HD static inline float mgi_graph_emb(uint64_t seed, uint32_t v,
                                               uint32_t d)
{
    return (float)((int)(mgi_graph_mix(seed ^ ((uint64_t)v << 20) ^ d) %
                         17u) - 8);
}

typedef struct mgi_graph {
    uint32_t nv;          /* vertices, 2^scale */
    uint64_t ne;          /* edges */
    uint64_t *row;        /* [nv + 1]: in-edges of v are col[row[v]..] */
    uint32_t *col;        /* [ne]: source vertices */
    uint32_t max_deg;
} mgi_graph_t;

/* R-MAT graph of 2^scale vertices and 2^scale * avg_deg edges (self loops
 * and repeats kept: the aggregation counts them as they come). 0, or -1
 * (no memory, scale out of 1..30). */
int  mgi_graph_rmat(mgi_graph_t *g, unsigned scale, unsigned avg_deg,
                    uint64_t seed);
void mgi_graph_free(mgi_graph_t *g);

/* Edge e of the R-MAT graph: its source and destination (before CSR). */
void mgi_graph_rmat_edge(unsigned scale, uint64_t seed, uint64_t e,
                         uint32_t *src, uint32_t *dst);

/* Contiguous vertex ranges: part p owns [lo[p], lo[p + 1]), every part
 * within about one vertex's degree of ne / nparts edges. */
void mgi_graph_split(const mgi_graph_t *g, unsigned nparts, uint32_t *lo);
unsigned mgi_graph_owner(const uint32_t *lo, unsigned nparts, uint32_t v);

/* One neighbour partition: vertex v's neighbours nbr[start .. start+cnt),
 * all owned here (remote 0) or all owned elsewhere (remote 1). */
typedef struct mgi_graph_np {
    uint32_t v;
    uint32_t cnt;
    uint64_t start;
    uint32_t remote;
    uint32_t pad;
} mgi_graph_np_t;

/* Part p's work: its vertices' neighbours reordered (local first, then
 * remote, per vertex) in nbr, and the partitions in interleaved order. */
typedef struct mgi_graph_work {
    uint32_t       *nbr;     /* [edges of the part's vertices] */
    uint64_t       nnbr;
    mgi_graph_np_t *np;
    uint64_t       nnp;
    uint64_t       nlocal, nremote;   /* neighbours of each kind */
} mgi_graph_work_t;

int  mgi_graph_work_build(const mgi_graph_t *g, const uint32_t *lo,
                          unsigned nparts, unsigned part, unsigned ps,
                          unsigned dist, mgi_graph_work_t *w);
void mgi_graph_work_free(mgi_graph_work_t *w);

/* The remote rows part's work reads, each once: rows[0 .. nrows) the
 * distinct remote neighbours in increasing order (so grouped by owner),
 * and slot[i] for every neighbour slot i of a remote partition its row's
 * index there (UINT32_MAX in local partitions). What a GPU fetches into a
 * cache of its own before it aggregates the remote partitions from it. */
#define MGI_GRAPH_CACHE_RUN 16   /* most rows of one run */

typedef struct mgi_graph_cache {
    uint32_t *rows;
    uint64_t nrows;
    uint32_t *slot;     /* [w->nnbr] */
    /* runs of rows of consecutive vertices of one owner, each at most
     * MGI_GRAPH_CACHE_RUN: run k is rows[run[k] .. run[k + 1]), so one
     * get fetches it */
    uint32_t *run;      /* [nruns + 1] */
    uint64_t nruns;
} mgi_graph_cache_t;

int  mgi_graph_cache_build(const mgi_graph_work_t *w, const uint32_t *lo,
                           unsigned nparts, mgi_graph_cache_t *c);
void mgi_graph_cache_free(mgi_graph_cache_t *c);

/* out[(v - v0) * dim + d] = sum of emb(u, d) over v's in-neighbours u, for
 * v in [v0, v1) (OpenMP where built with it). */
void mgi_graph_aggregate_ref(const mgi_graph_t *g, uint64_t seed,
                             unsigned dim, uint32_t v0, uint32_t v1,
                             float *out);
/* Rows of out that differ from the reference (exact compare), the first
 * one at *first_bad. */
uint64_t mgi_graph_check(const mgi_graph_t *g, uint64_t seed, unsigned dim,
                         uint32_t v0, uint32_t v1, const float *out,
                         uint32_t *first_bad);

/* ------------------------------------------------------------- PROACT */

/* Word k of the produced buffer: `work` rounds of mixing from (seed, k),
 * the producer kernel's compute per word. */
MGI_GRAPH_HD static inline uint64_t mgi_proact_word(uint64_t seed,
                                                    uint64_t k,
                                                    unsigned work)
{
    uint64_t x = seed ^ (k * 0xd6e8feb86659fd93ull);
    unsigned i;

    for (i = 0; i <= work; ++i) {
        x = mgi_graph_mix(x);
    }
    return x;
}

#define MGI_PROACT_UNIT (16u << 10)   /* bytes of the smallest tile */

/* Checksums (sums of words mod 2^64) of each MGI_PROACT_UNIT of a buffer
 * of `bytes` (a multiple of the unit): sums[bytes / unit]. A tile's
 * checksum is the sum of its units'. */
void mgi_proact_unit_sums(uint64_t seed, unsigned work, uint64_t bytes,
                          uint64_t *sums);

#ifdef __cplusplus
}
#endif

#endif

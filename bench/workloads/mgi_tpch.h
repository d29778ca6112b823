/**
 * TPC-H-like `orders` and `lineitem` columns for the MGI workloads, generated
 * by a counter-based RNG so that any slice of rows can be produced on its own
 * (on the CPU by mgi_tpch.c, on a GPU in place by mgi_tpch.cu) and every
 * producer writes the same bytes.
 *
 * Every random value is a pure function of (seed, stream, index): the order
 * index for `orders` columns and the number of lines of an order, and
 * (order index, line number) for `lineitem` columns.  A slice therefore
 * needs no state from the rows before it, only the exclusive prefix sum of
 * the line counts inside the slice.
 *
 * Distributions follow dbgen where the workloads care:
 *   o_orderkey    sparse, 8 keys used of every 32: (i/8)*32 + i%8 + 1
 *   lines/order   uniform 1..7 (mean 4), lineitem rows grouped by order
 *   l_partkey     uniform 1 .. 200000*SF
 *   l_quantity    uniform 1..50
 *   l_extendedprice  quantity * p_retailprice(partkey), in cents, with
 *                 dbgen's retail price (90000 + (pk/10)%20001 + 100*(pk%1000))
 *   l_discount    uniform 0..10 (hundredths), l_tax uniform 0..8
 *   o_custkey     uniform 1 .. 150000*SF, o_orderdate uniform day 0..2405
 *                 (1992-01-01 .. 1998-08-02)
 * and one column that dbgen does not have:
 *   l_zkey        a partition key drawn from Zipf(theta) over the order
 *                 ranks and mapped to that order's o_orderkey, so that
 *                 lineitem ⋈ orders on it still matches exactly one order.
 *                 theta = 0 is uniform.
 *
 * The Zipf sampler inverts a table built on the host (mgi_tpch_zipf_init):
 * ranks 1..MGI_TPCH_ZIPF_EXACT one entry each, then buckets of width
 * ceil(a/64) (uniform inside, so within a bucket the probability is off by
 * at most a factor (1+1/64)^theta).  Sampling is integer-only (64-bit
 * thresholds, a multiply-high), hence identical on CPU and GPU.
 */
#ifndef MGI_TPCH_H_
#define MGI_TPCH_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#  define MGI_TPCH_HD __host__ __device__ __forceinline__
#else
#  define MGI_TPCH_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define MGI_TPCH_ORDERS_PER_SF    1500000ull
#define MGI_TPCH_PARTS_PER_SF     200000ull
#define MGI_TPCH_CUSTS_PER_SF     150000ull
#define MGI_TPCH_LINES_MIN        1
#define MGI_TPCH_LINES_MAX        7
#define MGI_TPCH_DATE_DAYS        2406      /* 1992-01-01 .. 1998-08-02 */
#define MGI_TPCH_ZIPF_EXACT       1024      /* ranks with an entry each */
#define MGI_TPCH_ZIPF_BUCKET_DIV  64        /* bucket width a/64 after that */
#define MGI_TPCH_ZIPF_MAX_BUCKETS 4096

/* RNG streams: one per random column, so columns are independent */
enum {
    MGI_TPCH_S_LINES = 1,
    MGI_TPCH_S_CUSTKEY,
    MGI_TPCH_S_ORDERDATE,
    MGI_TPCH_S_PARTKEY,
    MGI_TPCH_S_QUANTITY,
    MGI_TPCH_S_DISCOUNT,
    MGI_TPCH_S_TAX,
    MGI_TPCH_S_ZIPF_BUCKET,
    MGI_TPCH_S_ZIPF_OFFSET
};

typedef struct mgi_tpch_zipf {
    double   theta;
    uint64_t n;                                 /* ranks 0 .. n-1 */
    uint32_t nbuckets;
    uint64_t cum[MGI_TPCH_ZIPF_MAX_BUCKETS];    /* P(bucket <= b) * 2^64 */
    uint64_t first[MGI_TPCH_ZIPF_MAX_BUCKETS];  /* first rank (0-based) */
    uint64_t width[MGI_TPCH_ZIPF_MAX_BUCKETS];
} mgi_tpch_zipf_t;

typedef struct mgi_tpch_params {
    uint64_t seed;
    double   sf;
    uint64_t n_orders;       /* these three from sf: mgi_tpch_params_init */
    uint64_t n_parts;
    uint64_t n_custs;
} mgi_tpch_params_t;

/* Column sets: a NULL column is not generated. */
typedef struct mgi_tpch_orders {
    int64_t *orderkey;
    int32_t *custkey;
    int32_t *orderdate;
} mgi_tpch_orders_t;

typedef struct mgi_tpch_lineitem {
    int64_t *orderkey;
    int64_t *zkey;           /* needs a Zipf table */
    int32_t *partkey;
    int8_t  *linenumber;     /* 1..7 */
    int32_t *quantity;
    int64_t *extendedprice;  /* cents */
    int32_t *discount;       /* hundredths */
    int32_t *tax;            /* hundredths */
} mgi_tpch_lineitem_t;

/* ---------------------------------------------------------------- pure */

MGI_TPCH_HD uint64_t mgi_tpch_mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z  = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z  = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

MGI_TPCH_HD uint64_t mgi_tpch_rand(uint64_t seed, uint64_t stream,
                                   uint64_t index)
{
    return mgi_tpch_mix64(mgi_tpch_mix64(seed ^ (stream << 56)) ^
                          mgi_tpch_mix64(index));
}

MGI_TPCH_HD uint64_t mgi_tpch_mulhi(uint64_t a, uint64_t b)
{
#ifdef __CUDA_ARCH__
    return __umul64hi(a, b);
#else
    return (uint64_t)(((unsigned __int128)a * b) >> 64);
#endif
}

/* uniform integer in [lo, hi] */
MGI_TPCH_HD int64_t mgi_tpch_uniform(uint64_t r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)mgi_tpch_mulhi(r, (uint64_t)(hi - lo + 1));
}

/* dbgen's sparse keys: 8 used of every 32 */
MGI_TPCH_HD int64_t mgi_tpch_orderkey(uint64_t order)
{
    return (int64_t)((order / 8) * 32 + order % 8 + 1);
}

MGI_TPCH_HD unsigned mgi_tpch_lines(uint64_t seed, uint64_t order)
{
    return (unsigned)mgi_tpch_uniform(
            mgi_tpch_rand(seed, MGI_TPCH_S_LINES, order),
            MGI_TPCH_LINES_MIN, MGI_TPCH_LINES_MAX);
}

MGI_TPCH_HD int64_t mgi_tpch_retailprice(int64_t partkey)
{
    return 90000 + (partkey / 10) % 20001 + 100 * (partkey % 1000);
}

MGI_TPCH_HD uint64_t mgi_tpch_zipf_rank(const mgi_tpch_zipf_t *z,
                                        uint64_t u, uint64_t v)
{
    uint32_t lo = 0, hi = z->nbuckets - 1, mid;

    /* first bucket whose cumulative threshold exceeds u */
    while (lo < hi) {
        mid = (lo + hi) / 2;
        if (u < z->cum[mid]) {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    return z->first[lo] + mgi_tpch_mulhi(v, z->width[lo]);
}

/* Fill lineitem row `row` (index into the column arrays) for line `line`
 * (0-based) of order `order`. */
MGI_TPCH_HD void mgi_tpch_lineitem_row(const mgi_tpch_params_t *p,
                                       const mgi_tpch_zipf_t *z,
                                       const mgi_tpch_lineitem_t *c,
                                       uint64_t order, unsigned line,
                                       uint64_t row)
{
    uint64_t idx   = order * 8 + line;
    uint64_t seed  = p->seed;
    int64_t partkey, qty;

    if (c->orderkey != NULL) {
        c->orderkey[row] = mgi_tpch_orderkey(order);
    }
    if (c->linenumber != NULL) {
        c->linenumber[row] = (int8_t)(line + 1);
    }
    if ((c->zkey != NULL) && (z != NULL)) {
        c->zkey[row] = mgi_tpch_orderkey(mgi_tpch_zipf_rank(z,
                mgi_tpch_rand(seed, MGI_TPCH_S_ZIPF_BUCKET, idx),
                mgi_tpch_rand(seed, MGI_TPCH_S_ZIPF_OFFSET, idx)));
    }
    partkey = mgi_tpch_uniform(mgi_tpch_rand(seed, MGI_TPCH_S_PARTKEY, idx),
                               1, (int64_t)p->n_parts);
    qty     = mgi_tpch_uniform(mgi_tpch_rand(seed, MGI_TPCH_S_QUANTITY, idx),
                               1, 50);
    if (c->partkey != NULL) {
        c->partkey[row] = (int32_t)partkey;
    }
    if (c->quantity != NULL) {
        c->quantity[row] = (int32_t)qty;
    }
    if (c->extendedprice != NULL) {
        c->extendedprice[row] = qty * mgi_tpch_retailprice(partkey);
    }
    if (c->discount != NULL) {
        c->discount[row] = (int32_t)mgi_tpch_uniform(
                mgi_tpch_rand(seed, MGI_TPCH_S_DISCOUNT, idx), 0, 10);
    }
    if (c->tax != NULL) {
        c->tax[row] = (int32_t)mgi_tpch_uniform(
                mgi_tpch_rand(seed, MGI_TPCH_S_TAX, idx), 0, 8);
    }
}

MGI_TPCH_HD void mgi_tpch_orders_row(const mgi_tpch_params_t *p,
                                     const mgi_tpch_orders_t *c,
                                     uint64_t order, uint64_t row)
{
    if (c->orderkey != NULL) {
        c->orderkey[row] = mgi_tpch_orderkey(order);
    }
    if (c->custkey != NULL) {
        c->custkey[row] = (int32_t)mgi_tpch_uniform(
                mgi_tpch_rand(p->seed, MGI_TPCH_S_CUSTKEY, order), 1,
                (int64_t)p->n_custs);
    }
    if (c->orderdate != NULL) {
        c->orderdate[row] = (int32_t)mgi_tpch_uniform(
                mgi_tpch_rand(p->seed, MGI_TPCH_S_ORDERDATE, order), 0,
                MGI_TPCH_DATE_DAYS - 1);
    }
}

/* Orders [begin, end) of `part` out of `nparts`: contiguous slices that
 * concatenate to the whole table. */
MGI_TPCH_HD void mgi_tpch_slice(uint64_t n_orders, unsigned part,
                                unsigned nparts, uint64_t *begin,
                                uint64_t *end)
{
    *begin = (uint64_t)(((unsigned __int128)n_orders * part) / nparts);
    *end   = (uint64_t)(((unsigned __int128)n_orders * (part + 1)) / nparts);
}

/* ---------------------------------------------------------------- host */

/* n_orders = round(1.5M * sf), n_parts = round(200k * sf),
 * n_custs = round(150k * sf), each at least 1 */
void mgi_tpch_params_init(mgi_tpch_params_t *p, uint64_t seed, double sf);

/* Zipf(theta) over ranks 0 .. n-1; theta >= 0.  Returns 0 or -1 (bad
 * arguments, or n too large for the table). */
int mgi_tpch_zipf_init(mgi_tpch_zipf_t *z, uint64_t n, double theta);

/* Probability of rank k (0-based) that the table encodes. */
double mgi_tpch_zipf_prob(const mgi_tpch_zipf_t *z, uint64_t k);

/* Lineitem rows of orders [begin, end). */
uint64_t mgi_tpch_lineitem_count(const mgi_tpch_params_t *p, uint64_t begin,
                                 uint64_t end);

/* Generate orders [begin, end) into c (row 0 is order `begin`). */
void mgi_tpch_orders_gen(const mgi_tpch_params_t *p, uint64_t begin,
                         uint64_t end, const mgi_tpch_orders_t *c);

/* Generate the lineitems of orders [begin, end) into c; z may be NULL when
 * c->zkey is NULL.  Returns the number of rows written. */
uint64_t mgi_tpch_lineitem_gen(const mgi_tpch_params_t *p,
                               const mgi_tpch_zipf_t *z, uint64_t begin,
                               uint64_t end, const mgi_tpch_lineitem_t *c);

/* ----------------------------------------------------------------- GPU */
/* mgi_tpch.cu: the same rows, written in place on the current device.
 * Pointers in the column sets and d_zipf / d_offsets are device memory;
 * `stream` is a cudaStream_t.  Each returns 0, or -1 after printing the
 * failing CUDA call. */

/* Copy a Zipf table to the device (free with cudaFree). */
int mgi_tpch_gpu_zipf_upload(const mgi_tpch_zipf_t *z, mgi_tpch_zipf_t **d_z);

/* Exclusive prefix sum of the line counts of orders [begin, end): a device
 * array of end-begin+1 entries in *d_offsets (free with cudaFree); the last
 * one, the slice's lineitem count, also in *count. */
int mgi_tpch_gpu_lineitem_offsets(const mgi_tpch_params_t *p, uint64_t begin,
                                  uint64_t end, uint64_t **d_offsets,
                                  uint64_t *count, void *stream);

int mgi_tpch_gpu_lineitem_gen(const mgi_tpch_params_t *p,
                              const mgi_tpch_zipf_t *d_z, uint64_t begin,
                              uint64_t end, const uint64_t *d_offsets,
                              const mgi_tpch_lineitem_t *c, void *stream);

int mgi_tpch_gpu_orders_gen(const mgi_tpch_params_t *p, uint64_t begin,
                            uint64_t end, const mgi_tpch_orders_t *c,
                            void *stream);

#ifdef __cplusplus
}
#endif

#endif
